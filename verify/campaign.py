"""A resumable verification campaign: ``tdcheck verify ... --resume DIR``.

A paper-scale claim can take hours on a CPU; a campaign lets it run on different days and
machines.  ``DIR`` holds two kinds of chunk:

- ``DIR/runs/``: the run cache (:class:`numerics.cache.RunCache`).  Every simulation run
  (one run function on one config: an example's stacked seeds and settings) is stored as
  soon as it finishes, keyed by its config and its code's source hash, so a claim stopped
  half-way resumes at its first run not yet stored, and a run of other code is never
  reused.
- ``DIR/claims/<claim id>.json``: a finished claim's report entry, keyed by what decides
  it: the claim id, the profile, the seed, the drawn-example override, the device kind, and
  the source hash of the claim's module with the ``numerics``/``theory`` modules it imports
  and of the engine (claims, runner, error models, report).  A claim whose entry matches is
  not run again; one whose entry does not match (other code, other seed) runs.

The report is assembled from the entries in the order of the claims asked for, so a
campaign stopped and resumed writes the same report as one uninterrupted run (the claims'
``seconds`` and the metadata's times aside).  A claim that raised is not stored: it runs
again on resume (the exception may have been the machine, not the check).  Several
machines may share ``DIR`` (the Ray backend's case): entries are written atomically, and
the run cache reads arrays and JSON only (:mod:`numerics.store`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numerics.cache import RunCache, code_digest, module_version
from verify.claims import Claim

#: bump when the stored entry's layout changes; entries of another schema are not reused
SCHEMA = 1

#: engine modules whose code decides a claim's verdict besides the claim's own module
ENGINE = ("verify.claims", "verify.runner", "verify.error_models", "verify.report")


def _source_version(names: Sequence[str]) -> str:
    """SHA-256 (16 hex digits) of the code (:func:`numerics.cache.code_digest`) of the
    modules ``names`` (a module that cannot be found contributes its name only)."""
    import hashlib
    import importlib.util

    h = hashlib.sha256()
    for name in names:
        spec = importlib.util.find_spec(name)
        path = Path(spec.origin) if spec is not None and spec.origin else None
        h.update(name.encode())
        if path is not None and path.exists():
            h.update(code_digest(path.read_text(), str(path)))
    return h.hexdigest()[:16]


def _engine_version() -> str:
    return _source_version(ENGINE)


def claim_version(claim: Claim) -> str:
    """Source hash of the module defining ``claim`` itself, of the ``numerics``/``theory``
    modules (:func:`numerics.cache.module_version`, which hashes those packages only), and
    of the engine.  Until stop 69 the claim's own module was left out (module_version skips
    a ``verify`` module), so a campaign resumed after a change to a check, a control or an
    allowance reused the entries of the old code."""
    module = getattr(claim.function, "__module__", None) or f"verify.{claim.paper}"
    return f"{module_version(module)}-{_source_version((module,))}-{_engine_version()}"


@dataclass(frozen=True)
class Campaign:
    """The folder of one campaign and the settings every stored entry must match."""

    root: Path
    profile: str
    seed: int = 0
    drawn: int | None = None
    device: str = "cpu"

    @property
    def runs(self) -> Path:
        return Path(self.root) / "runs"

    @property
    def claims_dir(self) -> Path:
        return Path(self.root) / "claims"

    def cache(self) -> RunCache:
        """The campaign's run cache (the finished runs of every claim)."""
        return RunCache(self.runs)

    def key(self, claim: Claim) -> dict:
        """What an entry must match to stand for ``claim`` in this campaign."""
        return {"schema": SCHEMA, "claim": claim.id, "profile": self.profile,
                "seed": int(self.seed), "drawn": self.drawn,
                "device": str(self.device).split(":")[0], "version": claim_version(claim)}

    def _path(self, claim_id: str) -> Path:
        return self.claims_dir / f"{claim_id}.json"

    def done(self, claim: Claim) -> dict | None:
        """The stored report entry of ``claim``, or None if absent, unreadable or keyed to
        other code or settings."""
        path = self._path(claim.id)
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(stored, dict) or stored.get("key") != self.key(claim):
            return None
        entry = stored.get("claim")
        return entry if isinstance(entry, dict) else None

    def record(self, claim: Claim, entry: Mapping[str, Any]) -> Path | None:
        """Store ``claim``'s report entry atomically (not one that raised)."""
        if entry.get("raised"):
            return None
        self.claims_dir.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"key": self.key(claim), "claim": dict(entry)}, indent=1,
                             allow_nan=False)
        fd, tmp = tempfile.mkstemp(dir=self.claims_dir, prefix=f".{claim.id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(payload)
            os.replace(tmp, self._path(claim.id))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return self._path(claim.id)

    def split(self, claims: Sequence[Claim]) -> tuple[dict[str, dict], list[Claim]]:
        """The stored entries by claim id, and the claims still to run (in order)."""
        done: dict[str, dict] = {}
        todo: list[Claim] = []
        for c in claims:
            entry = self.done(c)
            if entry is None:
                todo.append(c)
            else:
                done[c.id] = entry
        return done, todo
