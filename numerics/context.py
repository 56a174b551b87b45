"""What a claim or a figure needs besides its parameters: profile, device, run cache, seed.

One :class:`Context` is handed to every check (``verify``) and every figure function
(``figures``), so both pick their sizes from the same row table (:class:`SizeTable`) with
the same fallback rule and get their runs through the same cache: a figure drawn after
``tdcheck verify`` at the same profile trains nothing new.

Profiles, smallest first: ``test`` (the test suite's smoke sizes), ``quick`` (the default
verification), ``ci`` and ``thorough`` (the papers' own sizes).  The one fallback rule: a
table entry that does not name ``ci`` uses ``quick``'s value, one that does not name
``thorough`` uses ``ci``'s (so, transitively, ``quick``'s).  ``test`` and ``quick`` are
always named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from numerics.cache import RunCache

__all__ = ["FALLBACK", "PROFILES", "Context", "SizeTable", "pick"]

T = TypeVar("T")
PROFILES = ("test", "quick", "ci", "thorough")
FALLBACK = {"ci": "quick", "thorough": "ci"}


def pick(entry: Mapping[str, T], profile: str) -> T:
    """``entry[profile]`` under the fallback rule (``ci`` -> ``quick``, ``thorough`` -> ``ci``)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    missing = [p for p in ("test", "quick") if p not in entry]
    if missing:
        raise ValueError(f"a size entry must name test and quick, missing {missing}")
    unknown = sorted(set(entry) - set(PROFILES))
    if unknown:
        raise ValueError(f"unknown profile(s) in a size entry: {unknown}")
    name = profile
    while name not in entry:
        name = FALLBACK[name]
    return entry[name]


@dataclass(frozen=True)
class SizeTable:
    """A row's sizes by profile: ``name -> {profile: value}``, read with :meth:`Context.size`.

    Each row has one, in ``numerics/<paper>.py``; claims and figures read the same entries.
    Entries are validated when the table is made (``test`` and ``quick`` named, no unknown
    profile).
    """

    entries: Mapping[str, Mapping[str, Any]]

    def __post_init__(self) -> None:
        for name, entry in self.entries.items():
            try:
                pick(entry, "quick")
            except ValueError as exc:
                raise ValueError(f"size entry {name!r}: {exc}") from None

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        if name not in self.entries:
            raise KeyError(f"no size entry {name!r}; entries are {sorted(self.entries)}")
        return self.entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def at(self, name: str, profile: str) -> Any:
        """The value of entry ``name`` at ``profile`` (fallback rule of :func:`pick`)."""
        return pick(self[name], profile)


@dataclass(frozen=True)
class Context:
    """What a check or a figure may need besides its parameters.

    ``profile`` sets sizes as well as example counts; ``cache`` is the run cache shared by
    verify and figures (``None``: no caching); ``progress`` shows training progress inside
    long runs; ``seed`` shifts every simulation seed (``tdcheck verify --seed``).
    """

    device: str = "cpu"
    profile: str = "quick"
    cache: RunCache | None = None
    progress: bool = False
    seed: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {self.profile!r}")

    def pick(self, entry: Mapping[str, Any] | None = None, /, **by_profile: Any) -> Any:
        """A value by profile, from a size-table entry or from keywords
        (``ctx.pick(test=.., quick=..)``), under the one fallback rule."""
        if entry is not None and by_profile:
            raise ValueError("pick takes a table entry or keywords, not both")
        if entry is None:  # keywords given as None fall back, as if absent
            entry = {k: v for k, v in by_profile.items() if v is not None}
        return pick(entry, self.profile)

    def size(self, table: SizeTable, name: str) -> Any:
        """Entry ``name`` of a row's :class:`SizeTable` at this profile."""
        return table.at(name, self.profile)

    def seeded(self, seed: int) -> int:
        """A simulation seed shifted by ``--seed`` (the same run for ``seed = 0``)."""
        return int(seed) + int(self.seed)
