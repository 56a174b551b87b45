"""Checkpoints inside a long training run, so that a killed run resumes where it stopped.

A paper-scale run can take hours on a CPU (markov's energy-figure runs: 16 seeds x 5000
Adam steps at N = 1024), longer than one sitting.  The run cache (:mod:`numerics.cache`)
stores a run only when it ends; this module lets the trainer (:func:`numerics.ensemble.
train`) store its whole state every so often *while* a cached run computes, and pick it up
when the same run is asked for again.

- The slot: :meth:`numerics.cache.RunCache.get_or_compute` opens a :class:`Slot` (the cache
  folder's ``checkpoints/`` subfolder and the run's key, which carries its config and its
  code's source hash) for the duration of the computation, and deletes the slot's files
  once the finished run is stored.  A run of other code or another config has another key,
  so a checkpoint is never taken up by a run it does not belong to.
- The trainer's state: step, parameters, optimiser slots, elapsed flow time, everything
  recorded so far, and the states of the generators the data is drawn from (declared by the
  caller: :func:`numerics.ensemble.train`'s ``generators``).  A run whose data comes from
  generators it did not declare is not checkpointed (its resumed data would differ).
- The format: arrays only, written as one ``.npz`` atomically and read back with
  ``allow_pickle=False`` (the cache folder may be shared: :mod:`numerics.store`), with a
  schema number and a fingerprint of the run (members, steps, parameter names, shapes and
  dtypes) that must match.
- When: every :data:`SECONDS` of training (``TDCHECK_CHECKPOINT_SECONDS``; 0 switches
  checkpoints off), or every ``steps`` steps when a slot says so (the tests).  A short run
  never writes one.  A resumed run gives the same numbers as an uninterrupted one, to the
  bit on the CPU (tests/test_checkpoint.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["CHECKPOINT", "SCHEMA", "Entry", "Slot", "clear", "entries", "progress", "prune",
           "seconds_between", "slot", "status"]

#: layout of a checkpoint file; a file of another schema is ignored (the run starts over)
SCHEMA = 1
#: default seconds of training between two checkpoints (``TDCHECK_CHECKPOINT_SECONDS``)
SECONDS = 600.0
_META = "__checkpoint__"
#: what reading a missing, truncated, corrupt or foreign file raises: the run starts over
_UNREADABLE = (OSError, ValueError, KeyError, UnicodeDecodeError, EOFError,
               zipfile.BadZipFile)


def seconds_between() -> float:
    """Seconds between checkpoints: ``TDCHECK_CHECKPOINT_SECONDS`` or :data:`SECONDS`
    (0 or less: no checkpoints)."""
    raw = os.environ.get("TDCHECK_CHECKPOINT_SECONDS")
    try:
        return float(raw) if raw not in (None, "") else SECONDS
    except ValueError as exc:
        raise ValueError(f"TDCHECK_CHECKPOINT_SECONDS must be a number, got {raw!r}") from exc


@dataclass
class Slot:
    """Where the checkpoints of one computing run go: ``root/<key>-<n>.npz`` for the n-th
    training of the run (a run may train more than once).  ``seconds``/``steps``: how
    often (see the module)."""

    root: Path
    key: str
    seconds: float = SECONDS
    steps: int | None = None
    trainings: int = field(default=0)

    def next_path(self) -> Path:
        """The file of the run's next training (counted in call order: deterministic)."""
        path = Path(self.root) / f"{self.key}-{self.trainings}.npz"
        self.trainings += 1
        return path

    def clear(self) -> None:
        """Delete every checkpoint of this run (it has been stored whole, or cannot end),
        half-written ones included."""
        clear(self.root, self.key)

    def due(self, step: int, start: int, since: float) -> bool:
        """Whether to write a checkpoint before ``step`` (the run started at ``start``,
        the last checkpoint was written at ``since``, a ``time.monotonic`` reading)."""
        if step <= start:
            return False
        if self.steps is not None:
            return step % self.steps == 0
        return self.seconds > 0 and time.monotonic() - since >= self.seconds


def clear(root: Path, key: str) -> None:
    """Delete the checkpoints of the run ``key`` under ``root`` (and their temporary files)."""
    root = Path(root)
    if not root.is_dir():
        return
    for pattern in (f"{key}-*.npz", f".{key}-*.tmp"):
        for path in root.glob(pattern):
            path.unlink(missing_ok=True)


CHECKPOINT: ContextVar[Slot | None] = ContextVar("tdcheck_checkpoint", default=None)


@contextlib.contextmanager
def slot(root: Path | None, key: str, *, seconds: float | None = None,
         steps: int | None = None) -> Iterator[Slot | None]:
    """Open the checkpoint slot of the run ``key`` under ``root`` (None, or seconds <= 0
    with no ``steps``: no checkpoints) for a ``with`` block."""
    seconds = seconds_between() if seconds is None else seconds
    if root is None or (seconds <= 0 and steps is None):
        token = CHECKPOINT.set(None)
        try:
            yield None
        finally:
            CHECKPOINT.reset(token)
        return
    s = Slot(Path(root), key, seconds, steps)
    token = CHECKPOINT.set(s)
    try:
        yield s
    finally:
        CHECKPOINT.reset(token)


def fingerprint(meta: dict) -> str:
    """A short hash of a run's shape (what a checkpoint must match to be taken up)."""
    return hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:16]


def write(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Write ``arrays`` with ``meta`` (JSON) to ``path`` atomically (a crash mid-write
    leaves the previous checkpoint)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = np.frombuffer(json.dumps({"schema": SCHEMA, **meta}).encode(), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **{_META: header}, **arrays)
            f.flush()
            os.fsync(f.fileno())  # on disk before it replaces the last good checkpoint
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read(path: Path, meta: dict) -> tuple[dict, dict[str, np.ndarray]] | None:
    """(stored meta, arrays) at ``path`` if it is a checkpoint of this schema whose meta
    contains ``meta``; None otherwise (missing, corrupt, a pickle, another run): start
    over."""
    try:
        with np.load(Path(path), allow_pickle=False) as f:
            stored = json.loads(bytes(f[_META]).decode())
            if (not isinstance(stored, dict) or stored.get("schema") != SCHEMA
                    or any(stored.get(k) != v for k, v in meta.items())):
                return None
            return stored, {k: np.array(f[k]) for k in f.files if k != _META}
    except _UNREADABLE:
        return None


def status(root: Path, key: str) -> tuple[float, float | None] | None:
    """(fraction of its steps checkpointed, wall seconds its training has taken so far, None
    when the checkpoint predates that record) of the first training of the run ``key`` under
    ``root``, or None when there is no readable checkpoint.  ``--plan`` costs the rest of a
    checkpointed run at the rate it measured (wall / fraction x the fraction left): the
    bench's rate is another model size, thread count and load.  Reads the JSON header
    only."""
    path = Path(root) / f"{key}-0.npz"
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(bytes(f[_META]).decode())
    except _UNREADABLE:
        return None
    if not isinstance(meta, dict):
        return None
    step, steps = meta.get("step"), meta.get("steps")
    if (meta.get("schema") != SCHEMA or not isinstance(step, int) or not isinstance(steps, int)
            or steps <= 0):
        return None
    wall = meta.get("wall")
    wall = float(wall) if isinstance(wall, (int, float)) and wall > 0 and step > 0 else None
    return min(max(step / steps, 0.0), 1.0), wall


def progress(root: Path, key: str) -> float | None:
    """The fraction of its steps the first training of the run ``key`` has checkpointed
    under ``root`` (``--plan`` counts only the rest), or None when there is no readable
    checkpoint (:func:`status`)."""
    found = status(root, key)
    return None if found is None else found[0]


@dataclass(frozen=True)
class Entry:
    """One checkpoint file: its run key and training index, the step it holds, the share of
    steps done (None if unreadable or not recorded), the wall seconds its training took (None if not recorded), age and size."""

    path: Path
    key: str
    index: int
    step: int | None
    done: float | None
    wall: float | None
    age_s: float
    size: int


def entries(root: Path, now: float | None = None) -> list[Entry]:
    """Every checkpoint file under ``root`` (a run cache's ``checkpoints`` folder), oldest
    first.  A run's checkpoints are cleared when it is stored; what stays is a campaign
    still under way, or an orphan: a run stopped and never asked for again, or one whose
    code changed (its key with it), which no later run resumes."""
    now = time.time() if now is None else now
    out = []
    for path in sorted(Path(root).glob("*-*.npz")):
        stem, _, idx = path.stem.rpartition("-")
        if not idx.isdigit():
            continue
        found = status(root, stem) if idx == "0" else None
        st = path.stat()
        out.append(Entry(path, stem, int(idx), _step(path), None if found is None else found[0],
                         None if found is None else found[1], now - st.st_mtime, st.st_size))
    return sorted(out, key=lambda e: -e.age_s)


def _step(path: Path) -> int | None:
    """The step a checkpoint file holds (its ``step`` array), None if unreadable."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return int(f["step"])
    except (*_UNREADABLE, KeyError, TypeError):
        return None


def prune(root: Path, older_than_s: float, now: float | None = None) -> list[Entry]:
    """Remove the checkpoints under ``root`` not written for ``older_than_s`` seconds (a
    campaign under way rewrites its file every :func:`seconds_between`); returns them."""
    gone = [e for e in entries(root, now) if e.age_s > older_than_s]
    for e in gone:
        e.path.unlink(missing_ok=True)
    return gone
