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

A claim whose size was set by a power calculation carries it as ``power``: a function of the
profile returning a :class:`PowerPlan` (what the design needs, what the profile runs, and
whether that decides).  The rule (README, "How to read a verdict"; ``tests/test_claims.py``
holds every claim to it): where a claim's plan says a profile cannot decide, its expected
outcome there is ``inconclusive`` ("not settled at this budget", as expected); where the plan
says it can, the expected outcome is the paper's, and an ``inconclusive`` there is a failure,
unless the plan states an indifference band (``PowerPlan.band``) and every undecided part's
interval lies inside it: then the run has decided that the truth is between the planning
values, where the design promised no decision on the paper's statement.  That is a finding,
reported as one (band, intervals), and as expected.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import partial
from types import ModuleType
from typing import Any, Literal

from hypothesis.strategies import SearchStrategy

from numerics.context import PROFILES, Context
from numerics.stats import normal_quantile, one_sided_quantile, t_quantile, upper_tail

__all__ = [
    "PART_KINDS",
    "ROLE",
    "Claim",
    "Context",
    "Evidence",
    "Example",
    "Kind",
    "Part",
    "PartKind",
    "Positive",
    "PositiveControl",
    "PowerPlan",
    "claim",
    "combine",
    "declared",
    "holm",
    "paper_of",
    "shift_seed",
    "tolerance_from_theory",
]

#: What a claim is: ``empirical`` is a paper's own measurement replicated, consuming no
#: theory (its control is the null a powered check must reject).
Kind = Literal["symbolic", "reduced-vs-full", "published-number", "empirical", "open-question"]
#: What a part's two sides are (``Part.kind``): ``symbolic``, a prediction against an
#: independent derivation or solver (sympy, quadrature, a root finder, or an ODE integration
#: of the theory itself); ``simulation``, the observed side comes from a full-model torch run
#: trained by autograd on the model's own loss (a run function declared ``full_model=True``,
#: :func:`numerics.cache.run_function`); ``published``, a number or curve printed in the
#: paper or its code.
PartKind = Literal["symbolic", "simulation", "published"]
PART_KINDS = ("symbolic", "simulation", "published")
Expected = Literal["holds", "refuted", "inconclusive", "open"]
Cost = Literal["fast", "slow", "gpu"]
Status = Literal["pass", "fail", "inconclusive"]
Outcome = Literal["holds", "refuted", "inconclusive"]
EXPECTED = ("holds", "refuted", "inconclusive", "open")


def _f(x: Any) -> float:
    """A part's number as a float; a complex one (a wrong theory's: the log of a negative
    probability) is NaN, so the part fails instead of the check raising."""
    x = x.item() if hasattr(x, "item") else x
    try:
        return float(x)
    except TypeError:
        c = complex(x)  # sympy, mpmath and Python complex numbers; anything else raises
        return c.real if c.imag == 0 else math.nan


@dataclass(frozen=True)
class Part:
    """One named comparison with an interval on its error.

    ``error`` is the measured distance between theory and observation; ``lower`` and
    ``upper`` bound the error the infinite-sample experiment would show, at ``confidence``
    (``None`` for a deterministic part, where both equal ``error``).  ``tolerance`` is the
    model-mismatch allowance; ``error_model`` says in words where both come from.
    ``kind`` says what the two sides are (:data:`PART_KINDS`); it is given where the part is
    built, and the registry test requires it of every part.
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
    se: float | None = None
    dof: int | None = None
    kind: PartKind | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a Part needs a name")
        if self.kind is not None and self.kind not in PART_KINDS:
            raise ValueError(f"part {self.name!r}: kind must be one of {', '.join(PART_KINDS)}, "
                             f"got {self.kind!r}")
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
                  dof: int | None = None, details: Mapping[str, Any] | None = None,
                  kind: PartKind | None = None) -> Part:
        """``error = |observed - predicted|`` with ``observed`` a noisy estimate of s.e. ``se``.

        The interval on the true deviation is ``error -/+ q se`` (clipped at 0), ``q`` the
        two-sided normal quantile, or Student-t with ``dof`` degrees of freedom.
        """
        if not se >= 0:
            raise ValueError(f"se must be >= 0, got {se}")
        q = normal_quantile(confidence) if dof is None else t_quantile(confidence, dof)
        err = abs(_f(observed) - _f(predicted))
        det = dict(details or {})
        det.setdefault("se", float(se))
        return cls(name, predicted, observed, err, tolerance, error_model,
                   lower=max(0.0, err - q * se), upper=err + q * se,
                   confidence=confidence, details=det, se=float(se), dof=dof, kind=kind)

    @classmethod
    def bounded(cls, name: str, predicted: float, observed: float, error: float,
                lower: float, upper: float, tolerance: float, error_model: str,
                confidence: float = 0.99, details: Mapping[str, Any] | None = None,
                se: float | None = None, dof: int | None = None,
                kind: PartKind | None = None) -> Part:
        """A part whose interval ``[lower, upper]`` on the error was computed by the caller.

        Give ``se`` (and ``dof`` for Student-t) when the interval is ``error -/+ q se``: the
        runner then controls the family-wise error of the claim's parts (:func:`holm`);
        without them the part is left as it is (a bootstrap interval, say)."""
        return cls(name, predicted, observed, error, tolerance, error_model, lower=lower,
                   upper=upper, confidence=confidence, details=dict(details or {}), se=se,
                   dof=dof, kind=kind)

    @classmethod
    def unmeasured(cls, name: str, tolerance: float, why: str,
                   kind: PartKind | None = None) -> Part:
        """A part this run could not measure (its budget stops short of what the claim is
        about): always inconclusive, never a pass or a failure; ``why`` says what would
        measure it."""
        nan = math.nan
        return cls(name, nan, nan, nan, tolerance, f"not measured: {why}", lower=0.0,
                   upper=math.inf, measured=False, kind=kind)

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


#: ``Part.details`` key by which a part declares that its tolerance depends on the theory
#: under test by design (a derived allowance), with the reason; see :func:`tolerance_from_theory`.
TOLERANCE_FROM_THEORY = "tolerance_from_theory"


def tolerance_from_theory(part: Part, why: str) -> Part:
    """``part``, declared to have a tolerance computed from the theory under test, with the
    reason (e.g. "the finite-step allowance is the theory's own curvature times lr^2").

    The runner compares each part's tolerance under the control with the check's on the same
    example: a tolerance that moves with the theory can grow under a wrong theory and let
    the control pass, so a part whose tolerance moves without this declaration is flagged in
    the report and fails the registry test."""
    if not why.strip():
        raise ValueError(f"part {part.name!r}: tolerance_from_theory needs a reason")
    return replace(part, details={**part.details, TOLERANCE_FROM_THEORY: why})


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


def _fail_p(part: Part) -> float:
    """One-sided p-value of "the true error exceeds the tolerance" (small: fails)."""
    z = (part.error - part.tolerance) / part.se if part.se > 0 else math.copysign(math.inf, part.error - part.tolerance)
    return upper_tail(z, part.dof)


def holm(evidence: Evidence) -> Evidence:
    """Family-wise error control over a claim's statistical parts (Holm's step-down).

    A part *fails* when the lower end of its interval exceeds the tolerance: a one-sided test
    at level (1 - confidence)/2.  With m statistical parts (those with an ``se``), each at
    that level, a claim would be refuted by chance with probability up to m times it; Holm
    keeps the family-wise level at (1 - confidence)/2: the parts' failure p-values are
    sorted, the k-th smallest (k = 0, 1, ...) is tested at level / (m - k), and testing stops
    at the first that is not rejected.  A part's lower end is recomputed at its Holm level
    (so a non-rejected part can no longer fail); upper ends are unchanged, since "holds"
    needs every part to pass (an intersection-union test, which needs no correction).
    Deterministic parts and parts without an ``se`` are untouched.
    """
    stat = [p for p in evidence.parts if p.measured and p.se is not None
            and p.confidence is not None and math.isfinite(p.error) and p.se >= 0]
    if len(stat) < 2:
        return evidence
    m = len(stat)
    ranked = sorted(stat, key=_fail_p)
    new: dict[str, Part] = {}
    stopped = False
    for k, part in enumerate(ranked):
        alpha = (1 - part.confidence) / 2 / (m - k)
        rejected = not stopped and _fail_p(part) <= alpha
        stopped = stopped or not rejected
        q = one_sided_quantile(alpha, part.dof)
        lower = part.error - q * part.se
        if part.lower >= 0 and part.error >= 0:  # the part's own interval was clipped at 0
            lower = max(0.0, lower)
        if not rejected:
            lower = min(lower, part.tolerance)
        lower = min(lower, part.lower) if part.lower is not None else lower
        details = {**part.details, "holm": {"parts": m, "rank": k, "level": alpha,
                                             "rejected": bool(rejected)}}
        new[part.name] = replace(part, lower=lower, details=details)
    return Evidence(tuple(new.get(p.name, p) for p in evidence.parts), evidence.details)


@dataclass(frozen=True)
class Example:
    """A pinned example: parameters the runner always tries first, and why (``via``: the
    paper's figure or table, the authors' run, a boundary of the region ...)."""

    params: Mapping[str, Any]
    via: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", dict(self.params))


def shift_seed(params: Mapping[str, Any], seed: int) -> dict:
    """``params`` with an integer ``seed`` entry shifted by ``seed`` (``tdcheck verify
    --seed``): every simulation seed of a claim moves, and ``seed = 0`` changes nothing."""
    out = dict(params)
    if seed and isinstance(out.get("seed"), int) and not isinstance(out["seed"], bool):
        out["seed"] = out["seed"] + int(seed)
    return out


# Which part of a claim is running (set by the runner): "check", "control" or "positive".
# ``tdcheck mutate`` reads it to record which claims consume a theory function, and how.
ROLE: ContextVar[str] = ContextVar("tdcheck_claim_role", default="none")


def _example(ex: Example | Mapping[str, Any]) -> Example:
    return ex if isinstance(ex, Example) else Example(ex)


@dataclass(frozen=True)
class PositiveControl:
    """The claim's check on a case where the effect is known to be present; must hold.

    Build it with :meth:`of` (or ``positive=Positive(...)`` in :func:`claim`) so it runs the
    claim's own check function: a positive control that runs other code proves nothing
    about the check's power.
    """

    description: str
    run: Callable[[Context], Evidence]
    params: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, check: Callable[..., Evidence], params: Mapping[str, Any], description: str,
           **theory: Any) -> PositiveControl:
        """``check(params, ctx, **theory)`` as a positive control."""
        frozen = dict(params)
        return cls(description, lambda ctx: check(shift_seed(frozen, ctx.seed), ctx, **theory),
                   frozen)


@dataclass(frozen=True)
class Positive:
    """What :func:`claim` needs to build a positive control from the decorated check:
    ``params``, the ``description``, and optionally ``theory`` (keyword arguments of the
    check; default: the claim's own theory)."""

    params: Mapping[str, Any]
    description: str
    theory: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PowerPlan:
    """What a claim's registered power calculation says of one profile.

    ``have`` is the size the profile runs (seeds, runs, members: ``unit``), ``needed`` the
    size the design needs to decide with its power (None: no size does at the planning
    values), ``decides`` the calculation's verdict on ``have`` (usually ``have >= needed``;
    a row whose rule is a power at ``have`` sets it from that, ``power``), and ``design``
    says in words what the size was planned for (effect, spread, confidence, power) and where
    the calculation lives.  The plan is computed from the registered design, never from an
    outcome.
    """

    decides: bool
    have: int
    needed: int | None
    unit: str
    design: str
    power: float | None = None
    #: the design's indifference band (lo, hi), on the scale of the deciding parts' error
    #: (their tolerance lies inside it): the two planning values the design's power is
    #: stated at.  The design promises a decision only for a truth outside the band; an
    #: inconclusive outcome whose every undecided part is a ``statistic`` part with its whole
    #: interval [lower, upper] strictly inside the band has decided something else: the
    #: truth lies between the planning values (:meth:`in_band`).  None: no band stated.
    band: tuple[float, float] | None = None
    #: the name prefix of the parts the band is about
    statistic: str | None = None

    def __post_init__(self) -> None:
        if (self.band is None) != (self.statistic is None):
            raise ValueError("a power plan's band and statistic go together")
        if self.band is not None and not self.band[0] < self.band[1]:
            raise ValueError(f"band must be (lo, hi) with lo < hi, got {self.band}")

    def in_band(self, evidence: Evidence | None) -> dict[str, dict[str, float]] | None:
        """For inconclusive ``evidence``: each undecided part's error and interval when every
        undecided part is a ``statistic`` part whose interval lies strictly inside
        :attr:`band`; else None (also for evidence with no undecided part)."""
        if self.band is None or evidence is None:
            return None
        lo, hi = self.band
        out = {}
        for p in evidence.parts:
            if p.status != "inconclusive":
                continue
            if not (p.name.startswith(self.statistic) and lo < p.lower and p.upper < hi):
                return None  # NaN bounds fail both comparisons
            out[p.name] = {"error": float(p.error), "lower": float(p.lower),
                           "upper": float(p.upper)}
        return out or None

    def describe(self) -> str:
        need = "no size decides" if self.needed is None else f"needs {self.needed} {self.unit}"
        out = f"{need}, this profile runs {self.have}"
        if self.power is not None:
            out += f" (power {self.power:.2f} there)"
        if self.band is not None:
            out += f" for a truth outside the band ({self.band[0]:g}, {self.band[1]:g})"
        return out + f"; {self.design}"

    def to_json(self) -> dict:
        return {"decides": bool(self.decides), "have": int(self.have),
                "needed": None if self.needed is None else int(self.needed),
                "unit": self.unit, "design": self.design,
                "power": None if self.power is None else float(self.power),
                "band": None if self.band is None else [float(x) for x in self.band],
                "statistic": self.statistic}


@dataclass(frozen=True)
class Claim:
    """A falsifiable statement from a paper, with its check and negative control.

    ``strategy`` draws parameter dicts from the region where the paper's assumptions hold;
    ``examples`` are pinned :class:`Example` s always run first (the paper's own settings).
    ``expected``: ``holds``; ``refuted`` (a documented finding); ``inconclusive`` (the
    budget cannot settle it: ``notes`` say what would); ``open`` (a reviewers' question, any
    outcome allowed).  ``expected_at`` overrides ``expected`` for named profiles.  Every
    claim not expected to hold carries a ``positive_control``.  ``measured_at`` names the
    smallest profile whose budget measures every part (a claim with parts unmeasured at
    ``quick`` must name it, with an expected outcome there taken from the paper).  ``power``
    (optional) is the claim's power calculation by profile (:class:`PowerPlan`; None at a
    profile it does not plan); where it says a profile cannot decide, ``expected_for`` that
    profile must be ``inconclusive``, elsewhere the paper's outcome.  ``qualitative`` (a
    reason) marks a claim whose simulation parts judge only signs or orderings: ``tdcheck
    mutate --resolution`` then reports "n/a: qualitative" for it.  ``shape_only`` maps a
    consumed theory function to the reason the claim holds its output only up to a free
    multiple (a statement of proportionality): a whole-output scale of it is then an
    equivalent mutant, and ``tdcheck mutate --resolution`` tilts it instead (its numeric
    leaves alternately times 1 + delta and 1 - delta).  ``placement_only`` maps a consumed
    theory function to the reason it only places the comparison (where a time window ends,
    where a grid lies) and the statement does not depend on it: ``tdcheck mutate
    --resolution`` still measures its rung but leaves it out of the claim's, as for a
    function that sizes an allowance, provided another claim of the row resolves it at 5 %.
    ``shape_approx`` is ``shape_only`` for a function the claim is only nearly blind to a
    multiple of (a clock the statement reads only late, say): tilted too, but its
    whole-output scale must then be resolved by another claim at 5 %, else the claim's
    resolution is "> 50 %".
    ``correction_only`` does what ``placement_only`` does, for a function whose output is a
    small correction to the compared prediction (a slip delta of it moves the prediction by
    a small fraction of delta), with the reason and the correction's size.

    Rows declare claims with :func:`claim` on the check function, which sets ``function``,
    ``theory`` and ``control_theory`` and builds ``check``/``control`` from them, so the
    control runs the same function by construction.
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
    examples: tuple[Example, ...] = ()
    notes: str = ""
    positive_control: PositiveControl | None = None
    expected_at: Mapping[str, Expected] = field(default_factory=dict)
    function: Callable[..., Evidence] | None = None
    theory: Mapping[str, Any] = field(default_factory=dict)
    control_theory: Mapping[str, Any] = field(default_factory=dict)
    measured_at: str | None = None
    qualitative: str | None = None
    shape_only: Mapping[str, str] = field(default_factory=dict)
    shape_approx: Mapping[str, str] = field(default_factory=dict)
    placement_only: Mapping[str, str] = field(default_factory=dict)
    correction_only: Mapping[str, str] = field(default_factory=dict)
    power: Callable[[str], PowerPlan | None] | None = None

    def plan(self, profile: str) -> PowerPlan | None:
        """The claim's power calculation at ``profile`` (None: the claim has none there)."""
        return None if self.power is None else self.power(profile)

    def settled_at(self, after: str | None = None) -> str | None:
        """The first profile (after ``after``, in the order test, quick, ci, thorough) whose
        expected outcome is settled (holds or refuted); None if none is."""
        names = list(PROFILES)
        start = names.index(after) + 1 if after in names else 0
        for name in names[start:]:
            if self.expected_for(name) in ("holds", "refuted"):
                return name
        return None

    def expected_for(self, profile: str) -> Expected:
        """``expected``, or the profile's own expectation where a budget changes it (e.g. a
        claim ``inconclusive`` at ``quick`` that ``ci`` is sized to settle)."""
        return self.expected_at.get(profile, self.expected)

    def __post_init__(self) -> None:
        object.__setattr__(self, "examples", tuple(_example(e) for e in self.examples))
        for exp in (self.expected, *self.expected_at.values()):
            if exp not in EXPECTED:
                raise ValueError(f"expected must be one of {', '.join(EXPECTED)}, got {exp!r}")
        if self.cost not in ("fast", "slow", "gpu"):
            raise ValueError(f"cost must be fast, slow or gpu, got {self.cost!r}")
        if self.measured_at is not None and self.measured_at not in PROFILES:
            raise ValueError(f"claim {self.id}: measured_at must be one of {PROFILES}, "
                             f"got {self.measured_at!r}")
        if (self.expected != "holds" or any(e != "holds" for e in self.expected_at.values())) \
                and self.positive_control is None:
            raise ValueError(f"claim {self.id}: expected {self.expected!r} needs a positive_control")

    @classmethod
    def paired(cls, function: Callable[..., Evidence], *, id: str, paper: str,
               theory: Mapping[str, Any], control: Mapping[str, Any],
               positive: Positive | PositiveControl | None = None, **fields: Any) -> Claim:
        """A claim whose check is ``function(params, ctx, **theory)`` and whose control is
        the same function with ``**control``: the pairing the runner relies on."""
        if set(theory) != set(control):
            raise ValueError(f"claim {id}: theory and control must set the same keywords, "
                             f"got {sorted(theory)} and {sorted(control)}")
        theory, control = dict(theory), dict(control)
        if isinstance(positive, Positive):
            positive = PositiveControl.of(function, positive.params, positive.description,
                                          **dict(positive.theory or theory))
        return cls(id=id, paper=paper, check=partial(function, **theory),
                   control=partial(function, **control), positive_control=positive,
                   function=function, theory=theory, control_theory=control, **fields)


_CLAIMS_ATTR = "__tdcheck_claims__"


def paper_of(module: str) -> str:
    """The paper id of a row module: ``verify.markov`` -> ``markov``."""
    return module.rsplit(".", 1)[-1]


def claim(*, statement: str, source: str, kind: Kind, strategy: SearchStrategy,
          theory: Mapping[str, Any], control: Mapping[str, Any], control_description: str,
          id: str | None = None, **fields: Any) -> Callable[[Callable[..., Evidence]],
                                                           Callable[..., Evidence]]:
    """Declare a claim on its check function ``check(params, ctx, **theory)``.

    The id is ``<paper>.<id>`` with the paper taken from the module (``verify.markov``) and
    ``id`` defaulting to the function's name without a leading ``check_``.  ``theory`` and
    ``control`` are the keyword arguments that make the check test the paper's theory and
    the near-miss wrong one.  Other fields are :class:`Claim` 's (``examples``,
    ``expected``, ``positive=Positive(...)``, ...).  Several ``@claim`` s may decorate one
    function (top to bottom is their order).  The function is returned unchanged; the
    row's ``claims()`` collects them with :func:`declared`.
    """

    def wrap(fn: Callable[..., Evidence]) -> Callable[..., Evidence]:
        paper = paper_of(fn.__module__)
        name = id or fn.__name__.removeprefix("_").removeprefix("check_")
        built = Claim.paired(fn, id=f"{paper}.{name}", paper=paper, statement=statement,
                             source=source, kind=kind, strategy=strategy, theory=theory,
                             control=control, control_description=control_description,
                             **fields)
        declared_here = getattr(fn, _CLAIMS_ATTR, None)
        if declared_here is None:
            declared_here = []
            setattr(fn, _CLAIMS_ATTR, declared_here)
        declared_here.insert(0, built)  # decorators apply bottom-up; keep top-down order
        return fn

    return wrap


def declared(module: str | ModuleType) -> list[Claim]:
    """Every claim declared with :func:`claim` in ``module``, in source order."""
    mod = importlib.import_module(module) if isinstance(module, str) else module
    found: list[tuple[int, int, Claim]] = []
    for obj in vars(mod).values():
        claims_here = getattr(obj, _CLAIMS_ATTR, None)
        if not claims_here or getattr(obj, "__module__", None) != mod.__name__:
            continue
        line = obj.__code__.co_firstlineno
        found.extend((line, i, c) for i, c in enumerate(claims_here))
    out = [c for _, _, c in sorted(found, key=lambda t: (t[0], t[1]))]
    ids = [c.id for c in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"claim ids declared twice in {mod.__name__}: {dup}")
    return out
