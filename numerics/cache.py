"""One on-disk cache of simulation runs, shared by ``verify`` and ``figures``.

A run is keyed by its frozen config (its ``repr``), a tag naming the function that computes
it, and a hash of the source of ``numerics/`` and ``theory/`` (the code version): change any
of them and the run is recomputed.  Results are pickled; a corrupt entry is recomputed.  A
cache with ``root=None`` is disabled and computes every time.

The CLI makes one ``RunCache`` (``--cache-dir``, ``--no-cache``) and hands it to the claims
through ``verify.claims.Context.cache`` and to the figure functions, so ``tdcheck figures``
right after ``tdcheck verify`` retrains nothing.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache as _memo
from pathlib import Path
from typing import TypeVar

__all__ = ["RunCache", "code_version", "default_cache_dir", "resolve"]

T = TypeVar("T")
_ROOT = Path(__file__).resolve().parent.parent


@_memo
def code_version() -> str:
    """SHA-256 (16 hex digits) of every ``.py`` file under ``numerics/`` and ``theory/``."""
    h = hashlib.sha256()
    for folder in ("numerics", "theory"):
        for path in sorted((_ROOT / folder).glob("*.py")):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def default_cache_dir() -> Path:
    """``$TDCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdcheck``, else ``~/.cache/tdcheck``."""
    env = os.environ.get("TDCHECK_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdcheck"


@dataclass(frozen=True)
class RunCache:
    """Pickled runs under ``root`` (``None``: disabled)."""

    root: Path | None = None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def key(self, config: object, tag: str) -> str:
        text = f"{tag}|{config!r}|{code_version()}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def path(self, config: object, tag: str) -> Path | None:
        if self.root is None:
            return None
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in tag)
        return Path(self.root) / f"{safe}-{self.key(config, tag)}.pkl"

    def get_or_compute(self, config: object, compute: Callable[[], T], tag: str) -> T:
        """The cached result for (``config``, ``tag``), computing and storing it if absent."""
        path = self.path(config, tag)
        if path is not None and path.exists():
            try:
                with path.open("rb") as fh:
                    return pickle.load(fh)
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                path.unlink(missing_ok=True)  # stale or corrupt: recompute below
        result = compute()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            with tmp.open("wb") as fh:
                pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            tmp.replace(path)
        return result


def resolve(cache: RunCache | None) -> RunCache:
    """``cache`` or a disabled one."""
    return cache if cache is not None else RunCache(None)
