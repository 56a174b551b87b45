"""The one thread policy: how many intra-op threads torch uses for a run, a mutant, a task.

Stacked runs step many members of small tensors at once; intra-op threads then add
synchronisation more than they add speed, and on a loaded machine they can make a run many
times slower (a newcomer measured 51 s against 4 s on 2 loaded cores).  So every place that
trains or evaluates picks its thread count here, and one override reaches all of them:

- the environment variable ``TDCHECK_THREADS`` (an integer >= 1), which
  ``tdcheck --threads N`` sets for its own process and every process it starts (mutants,
  Ray tasks on this machine);
- without it, each caller's own default: a run computed through
  :func:`numerics.cache.run_function` keeps torch's setting (all cores), a row that knows
  its tensors are tiny asks for 1 (``scan_snap``), and parallel workers (``tdcheck mutate``'s
  mutants, Ray tasks) use 1 each, since they already fill the cores.

Results do not depend on the thread count beyond float rounding, but long float32
training can amplify a rounding difference, so every stored run records the count it ran
at with its other machine facts (:mod:`numerics.machine`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["ENV", "entered_count", "recording", "thread_count", "threads"]

ENV = "TDCHECK_THREADS"

#: the thread counts put in force by :func:`threads` blocks entered inside the innermost
#: :func:`recording` (None outside one): what a stored run records as its thread count
_ENTERED: ContextVar[list[int] | None] = ContextVar("tdcheck_threads_entered", default=None)


def thread_count(default: int | None = None) -> int | None:
    """``TDCHECK_THREADS`` when set, else ``default`` (``None``: leave torch's setting)."""
    raw = os.environ.get(ENV, "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            raise ValueError(f"{ENV} must be an integer >= 1, got {raw!r}") from None
        if n < 1:
            raise ValueError(f"{ENV} must be an integer >= 1, got {n}")
        return n
    if default is not None and default < 1:
        raise ValueError(f"default thread count must be >= 1, got {default}")
    return default


@contextlib.contextmanager
def threads(default: int | None = None) -> Iterator[int]:
    """Run torch's CPU ops inside with :func:`thread_count` threads, restoring the caller's
    setting after; yields the count in force."""
    import torch

    before = torch.get_num_threads()
    n = thread_count(default)
    if n is not None and n != before:
        torch.set_num_threads(n)
    entered = _ENTERED.get()
    if entered is not None:
        entered.append(torch.get_num_threads())
    try:
        yield torch.get_num_threads()
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


@contextlib.contextmanager
def recording() -> Iterator[list[int]]:
    """Record, into the yielded list, the thread count each :func:`threads` block entered
    inside puts in force (a run function that sets its own count, as scan_snap's runs do,
    trains at that count, not at its caller's)."""
    seen: list[int] = []
    token = _ENTERED.set(seen)
    try:
        yield seen
    finally:
        _ENTERED.reset(token)


def entered_count() -> int | None:
    """The count of the last :func:`threads` block entered inside the innermost
    :func:`recording` (None: none entered, or no recording)."""
    seen = _ENTERED.get()
    return seen[-1] if seen else None
