"""``Claim``, ``Evidence`` and ``Part``: one falsifiable sentence and what a check saw.

A check returns :class:`Evidence`, a tuple of named :class:`Part` s.  Each part is one
comparison of a prediction with an observation: an ``error`` with an interval
``[lower, upper]`` on it (sampling noise, at ``confidence``; a deterministic part has
``lower = upper = error``) and a ``tolerance`` (the model-mismatch allowance, with its reason
in ``error_model``).  The rule:

- a part **passes** if ``upper <= tolerance``, **fails** if ``lower > tolerance`` (or any of
  the numbers is not finite), and is **inconclusive** otherwise;
- evidence is ``refuted`` if a part fails, ``inconclusive`` if none fails and one is
  inconclusive, else ``holds``.

A claim's ``check`` and its negative ``control`` are the *same* check applied to two
theories (paper modules build both with ``functools.partial`` over one function).  Whether
the control is rejected is decided by the runner, part by part: only a part that passed
under the paper's theory and failed under the control on the same example counts.

A claim whose ``expected`` is not ``holds`` carries a :class:`PositiveControl`: the same
check on a case where the effect is known to be present, which must come out ``holds``;
without it a ``refuted`` finding could be a check with no power.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hypothesis.strategies import SearchStrategy

from numerics.cache import RunCache

__all__ = [
    "Claim",
    "Context",
    "Evidence",
    "Kind",
    "Part",
    "PositiveControl",
    "combine",
]

Kind = Literal["symbolic", "reduced-vs-full", "published-number", "open-question"]
Expected = Literal["holds", "refuted", "inconclusive", "open"]
Cost = Literal["fast", "slow", "gpu"]
Status = Literal["pass", "fail", "inconclusive"]
Outcome = Literal["holds", "refuted", "inconclusive"]
EXPECTED = ("holds", "refuted", "inconclusive", "open")


def _f(x: Any) -> float:
    return float(x.item() if hasattr(x, "item") else x)


@dataclass(frozen=True)
class Part:
    """One named comparison with an interval on its error.

    ``error`` is the measured distance between theory and observation; ``lower`` and
    ``upper`` bound the error the infinite-sample experiment would show, at ``confidence``
    (``None`` for a deterministic part, where both equal ``error``).  ``tolerance`` is the
    model-mismatch allowance; ``error_model`` says in words where both come from.
    """

    name: str
    predicted: float
    observed: float
    error: float
    tolerance: float
    error_model: str
    lower: float | None = None
    upper: float | None = None
    confidence: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    measured: bool = True

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a Part needs a name")
        for attr in ("predicted", "observed", "error", "tolerance"):
            object.__setattr__(self, attr, _f(getattr(self, attr)))
        lo = self.error if self.lower is None else _f(self.lower)
        hi = self.error if self.upper is None else _f(self.upper)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        if math.isfinite(lo) and math.isfinite(hi) and lo > hi:
            raise ValueError(f"part {self.name!r}: lower {lo} > upper {hi}")
        if self.confidence is not None and not 0 < self.confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {self.confidence}")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def deviation(cls, name: str, predicted: float, observed: float, se: float,
                  tolerance: float, error_model: str, confidence: float = 0.99,
                  dof: int | None = None, details: Mapping[str, Any] | None = None) -> Part:
        """``error = |observed - predicted|`` with ``observed`` a noisy estimate of s.e. ``se``.

        The interval on the true deviation is ``error -/+ q se`` (clipped at 0), ``q`` the
        two-sided normal quantile, or Student-t with ``dof`` degrees of freedom.
        """
        from numerics.stats import normal_quantile, t_quantile  # noqa: PLC0415

        if not se >= 0:
            raise ValueError(f"se must be >= 0, got {se}")
        q = normal_quantile(confidence) if dof is None else t_quantile(confidence, dof)
        err = abs(_f(observed) - _f(predicted))
        det = dict(details or {})
        det.setdefault("se", float(se))
        return cls(name, predicted, observed, err, tolerance, error_model,
                   lower=max(0.0, err - q * se), upper=err + q * se,
                   confidence=confidence, details=det)

    @classmethod
    def bounded(cls, name: str, predicted: float, observed: float, error: float,
                lower: float, upper: float, tolerance: float, error_model: str,
                confidence: float = 0.99, details: Mapping[str, Any] | None = None) -> Part:
        """A part whose interval ``[lower, upper]`` on the error was computed by the caller."""
        return cls(name, predicted, observed, error, tolerance, error_model, lower=lower,
                   upper=upper, confidence=confidence, details=dict(details or {}))

    @classmethod
    def unmeasured(cls, name: str, tolerance: float, why: str) -> Part:
        """A part this run could not measure (its budget stops short of what the claim is
        about): always inconclusive, never a pass or a failure; ``why`` says what would
        measure it."""
        nan = math.nan
        return cls(name, nan, nan, nan, tolerance, f"not measured: {why}", lower=0.0,
                   upper=math.inf, measured=False)

    # ------------------------------------------------------------------ verdict
    @property
    def status(self) -> Status:
        if not self.measured:
            return "inconclusive"
        vals = (self.error, self.lower, self.upper, self.tolerance)
        if not all(math.isfinite(v) for v in vals):
            return "fail"
        if self.upper <= self.tolerance:
            return "pass"
        if self.lower > self.tolerance:
            return "fail"
        return "inconclusive"

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def ratio(self) -> float:
        """error / tolerance (inf when the tolerance is 0 and the error is not)."""
        if not math.isfinite(self.error):
            return math.inf
        if self.tolerance > 0:
            return self.error / self.tolerance
        return math.inf if self.error > 0 else 0.0

    @property
    def margin(self) -> float:
        """tolerance - upper: how far the part is from becoming inconclusive (< 0: not passing)."""
        return self.tolerance - self.upper


@dataclass(frozen=True)
class Evidence:
    """What a check saw on one example: named parts (unique names) and extra details."""

    parts: tuple[Part, ...]
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = tuple(self.parts)
        if not parts:
            raise ValueError("Evidence needs at least one part")
        names = [p.name for p in parts]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"part names must be unique, repeated: {dup}")
        object.__setattr__(self, "parts", parts)

    @property
    def status(self) -> Outcome:
        statuses = {p.status for p in self.parts}
        if "fail" in statuses:
            return "refuted"
        if "inconclusive" in statuses:
            return "inconclusive"
        return "holds"

    @property
    def passed(self) -> bool:
        return self.status == "holds"

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"no part {name!r}; parts are {[p.name for p in self.parts]}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts)

    @property
    def worst(self) -> Part:
        """The part closest to failing: failing first, then the largest upper/tolerance."""
        order = {"fail": 2, "inconclusive": 1, "pass": 0}

        def key(p: Part) -> tuple[int, float]:
            r = p.upper / p.tolerance if p.tolerance > 0 else (math.inf if p.upper > 0 else 0.0)
            return order[p.status], r if math.isfinite(r) else math.inf

        return max(self.parts, key=key)


def combine(*evidences: Evidence | Sequence[Evidence], details: Mapping[str, Any] | None = None
            ) -> Evidence:
    """All parts of several evidences in order (names must stay unique), details merged."""
    flat: list[Evidence] = []
    for ev in evidences:
        flat.extend(ev if isinstance(ev, (list, tuple)) else [ev])
    parts = tuple(p for ev in flat for p in ev.parts)
    merged: dict[str, Any] = {}
    for ev in flat:
        merged.update(ev.details)
    merged.update(details or {})
    return Evidence(parts, merged)


@dataclass(frozen=True)
class Context:
    """What a check may need besides its parameters.

    ``profile`` sets sizes as well as example counts: ``test`` runs the same code at smoke
    size (the test suite), ``quick`` the default verification, ``ci`` and ``thorough`` more.
    ``cache`` is the run cache shared with the figures (``None``: no caching).
    ``progress`` shows training progress inside long claims.
    """

    device: str = "cpu"
    profile: str = "quick"
    cache: RunCache | None = None
    progress: bool = False

    def pick(self, *, test: Any, quick: Any, ci: Any = None, thorough: Any = None) -> Any:
        """A size by profile: ``ci`` falls back to ``quick``, ``thorough`` to ``ci``."""
        ci_v = quick if ci is None else ci
        table = {"test": test, "quick": quick, "ci": ci_v,
                 "thorough": ci_v if thorough is None else thorough}
        if self.profile not in table:
            raise ValueError(f"profile must be one of {', '.join(table)}, got {self.profile!r}")
        return table[self.profile]


@dataclass(frozen=True)
class PositiveControl:
    """The claim's check on a case where the effect is known to be present; must hold."""

    description: str
    run: Callable[[Context], Evidence]


@dataclass(frozen=True)
class Claim:
    """A falsifiable statement from a paper, with its check and negative control.

    ``strategy`` draws parameter dicts from the region where the paper's assumptions hold;
    ``examples`` are pinned parameter dicts always run first (the paper's own settings).
    ``expected``: ``holds``; ``refuted`` (a documented finding); ``inconclusive`` (the
    budget cannot settle it: ``notes`` say what would); ``open`` (a reviewers' question, any
    outcome allowed).  ``expected_at`` overrides ``expected`` for named profiles.  Every
    claim not expected to hold carries a ``positive_control``.
    """

    id: str
    paper: str
    statement: str
    source: str
    kind: Kind
    strategy: SearchStrategy
    check: Callable[[dict, Context], Evidence]
    control: Callable[[dict, Context], Evidence]
    control_description: str
    expected: Expected = "holds"
    cost: Cost = "fast"
    examples: tuple[Mapping[str, Any], ...] = ()
    notes: str = ""
    positive_control: PositiveControl | None = None
    expected_at: Mapping[str, Expected] = field(default_factory=dict)

    def expected_for(self, profile: str) -> Expected:
        """``expected``, or the profile's own expectation where a budget changes it (e.g. a
        claim ``inconclusive`` at ``quick`` that ``ci`` is sized to settle)."""
        return self.expected_at.get(profile, self.expected)

    def __post_init__(self) -> None:
        for exp in (self.expected, *self.expected_at.values()):
            if exp not in EXPECTED:
                raise ValueError(f"expected must be one of {', '.join(EXPECTED)}, got {exp!r}")
        if self.cost not in ("fast", "slow", "gpu"):
            raise ValueError(f"cost must be fast, slow or gpu, got {self.cost!r}")
        if (self.expected != "holds" or any(e != "holds" for e in self.expected_at.values())) \
                and self.positive_control is None:
            raise ValueError(f"claim {self.id}: expected {self.expected!r} needs a positive_control")
