"""Drive each claim with hypothesis under a profile; run its controls; decide the verdict.

For one claim the runner

1. runs the check on the pinned examples and on examples drawn from the claim's strategy
   (count by profile and cost), stopping at the first *refuted* example, which hypothesis
   shrinks for fast claims;
2. runs the negative control on the same examples, in the same order, and records which
   named parts **passed under the paper's theory and failed under the control** on the same
   example.  The control is rejected only if some part did; parts that fail under both, or
   are identical, prove nothing.  When no part of the check passed on any example (the check
   was refuted, or every part was inconclusive) nothing can discriminate: the control is
   *not applicable* and the positive control carries the burden;
3. runs the positive control, if the claim has one; it must come out ``holds``.

Outcome: ``refuted`` if an example was refuted, else ``inconclusive`` if one was, else
``holds``; ``error`` if the check raised.  A claim is *ok* (what the exit code is made of)
when its outcome matches ``expected``, its control was rejected (or is not applicable), and
its positive control passed.  A claim expected ``inconclusive`` at the profile (its power plan
or its ``measured_at`` says the profile cannot settle it) is *not settled at this budget*, as
expected, and the report names the profile (and, from the plan, the size) that would; a
claim expected to settle whose outcome is ``inconclusive`` is not as expected, unless its power
plan states an indifference band and every undecided part's interval, on every inconclusive
example, lies inside it: the run has then decided that the truth is between the planning
values the design was powered at (it promised no decision on the paper's statement there), a
finding that the report lists as one, with the band and the intervals.  Every profile
is derandomised with no example database, so a
run is reproducible from its profile name.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import seed as hypothesis_seed

from numerics.ensemble import SHOW_PROGRESS, DivergenceError
from theory.flow import InadmissibleTheory
from verify.claims import ROLE, Claim, Context, Evidence, Part, PowerPlan, holm, shift_seed

__all__ = ["PROFILES", "ClaimPlan", "ClaimResult", "Profile", "get_profile", "plan_claim",
           "run_claim", "run_claims"]


@dataclass(frozen=True)
class Profile:
    """Drawn examples per cost class (pinned examples always run in addition).

    The profile's name also sets simulation sizes through :meth:`Context.pick`.
    """

    name: str
    fast: int
    slow: int
    gpu: int


PROFILES: dict[str, Profile] = {
    "test": Profile("test", fast=3, slow=0, gpu=0),
    "quick": Profile("quick", fast=12, slow=0, gpu=0),
    "ci": Profile("ci", fast=25, slow=1, gpu=0),
    "thorough": Profile("thorough", fast=200, slow=6, gpu=6),
}


def get_profile(name: str | Profile) -> Profile:
    if isinstance(name, Profile):
        return name
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {name!r}")
    return PROFILES[name]


@dataclass
class ClaimResult:
    """What one claim did under one profile (a row of report.json)."""

    claim: Claim
    outcome: str  # holds | refuted | inconclusive | error
    worst: Evidence | None
    worst_example: dict | None
    examples_drawn: int
    examples_requested: int
    seconds: float
    control_rejected: bool | None  # None: not applicable (no part of the check passed)
    control_rejected_by: tuple[str, ...] = ()
    control_evidence: Evidence | None = None
    control_example: dict | None = None
    control_error: str | None = None
    positive: Evidence | None = None
    positive_error: str | None = None
    falsifying_example: dict | None = None
    error_message: str | None = None
    profile: str = "quick"
    extra: dict = field(default_factory=dict)
    examples_failed: int = 0
    #: every part of the check over the examples run: name -> {"kind", "status"} (the
    #: worst status over the examples: fail, then inconclusive, then pass)
    parts_seen: dict = field(default_factory=dict)
    #: tags of the full-model run functions the check asked for (``numerics.cache.RUNS``)
    full_model_runs: tuple[str, ...] = ()
    #: every simulation part's compared values per example run (in order): the part's
    #: ``member_values`` where it declares them (a worst-member part), else its (predicted,
    #: observed, error, lower, upper); ``tdcheck mutate --resolution`` reads them
    compared: dict = field(default_factory=dict)
    #: parts whose tolerance under the negative control differed from the check's on the
    #: same example: name -> {"check", "control", "declared" (the part's reason or None)}
    tolerance_drift: dict = field(default_factory=dict)
    #: set by the runner (:func:`_band_of`): see :attr:`in_band`
    band: dict | None = None

    @property
    def undeclared_drift(self) -> tuple[str, ...]:
        """Parts whose tolerance moved with the theory without declaring why."""
        return tuple(n for n, v in self.tolerance_drift.items() if not v["declared"])

    @property
    def expected(self) -> str:
        """What this profile expects of the claim (``Claim.expected_for``)."""
        return self.claim.expected_for(self.profile)

    @property
    def examples(self) -> int:
        return self.examples_drawn

    @property
    def plan(self) -> PowerPlan | None:
        """The claim's power calculation at this profile (``Claim.plan``)."""
        return self.claim.plan(self.profile)

    def settles_at(self) -> dict | None:
        """For a claim expected ``inconclusive`` here: the first later profile expected to
        settle it, with its plan's size where the claim has a power calculation; for one
        decided inside its plan's indifference band (:attr:`in_band`): no profile, the band
        and the intervals; else None."""
        band = self.in_band
        if band is not None:
            return {"profile": None, "band": list(self.plan.band), "intervals": band,
                    "expected": self.expected}
        if self.expected != "inconclusive":
            return None
        name = self.claim.settled_at(after=self.profile)
        if name is None:
            return {"profile": None}
        out: dict = {"profile": name, "expected": self.claim.expected_for(name)}
        plan = self.claim.plan(name)
        if plan is not None:
            out |= {"size": plan.have, "needed": plan.needed, "unit": plan.unit}
        return out

    @property
    def short(self) -> bool:
        """Fewer examples than the profile asked for, without a falsifying one to explain it."""
        return self.examples_drawn < self.examples_requested and self.outcome != "refuted"

    @property
    def in_band(self) -> dict[str, dict[str, float]] | None:
        """Undecided where the power plan decides, with every undecided part of every
        inconclusive example a statistic part whose interval lies inside the plan's
        indifference band (``PowerPlan.in_band``): the run decided that the truth is between
        the planning values, where the design promised no decision.  A finding, as expected;
        None otherwise."""
        return self.band

    @property
    def matches_expected(self) -> bool:
        if self.outcome == "error":
            return False
        if self.expected == "open":
            return True
        return self.outcome == self.expected or self.in_band is not None

    @property
    def control_ok(self) -> bool:
        if self.control_error is not None:
            return False
        return self.control_rejected is not False

    @property
    def positive_passed(self) -> bool | None:
        if self.claim.positive_control is None:
            return None
        return self.positive is not None and self.positive.status == "holds"

    @property
    def positive_ok(self) -> bool:
        return self.positive_passed is not False

    @property
    def ok(self) -> bool:
        return (self.matches_expected and self.control_ok and self.positive_ok
                and not self.simulation_without_run)

    @property
    def simulation_without_run(self) -> bool:
        """A part says ``simulation`` but the check asked for no full-model run."""
        return (any(v["kind"] == "simulation" for v in self.parts_seen.values())
                and not self.full_model_runs and self.outcome != "error")

    @property
    def raised(self) -> bool:
        """The check, its control or its positive control raised (``tdcheck verify``'s exit
        code 3): the run could not judge the claim."""
        return (self.outcome == "error" or self.control_error is not None
                or self.positive_error is not None)

    def problems(self) -> list[str]:
        """Why the claim is not ok, in words (empty when it is)."""
        out = []
        if self.simulation_without_run:
            out.append("a part says 'simulation' but the check called no full-model run "
                       "function (numerics.cache.run_function(full_model=True))")
        if self.outcome == "error":
            out.append("the check raised an error")
        elif not self.matches_expected:
            line = f"outcome {self.outcome} but expected {self.expected}"
            plan = self.plan
            if self.outcome == "inconclusive" and plan is not None and plan.decides:
                line += (f" (undecided although its power plan decides at this profile: "
                         f"{plan.describe()}; a powered design that does not decide points "
                         f"to a truth inside the band it leaves undecided)")
            out.append(line)
        if self.control_error is not None:
            out.append("the control raised an error")
        elif self.control_rejected is False:
            out.append("the control was not rejected by any part that passed under the "
                       "paper's theory: the check cannot tell the two apart")
        if self.positive_passed is False:
            out.append("the positive control did not pass: a 'refuted' here may be a check "
                       "without power")
        return out


class _Refuted(Exception):
    def __init__(self, params: dict, evidence: Evidence):
        super().__init__(f"refuted at {params}")
        self.params = params
        self.evidence = evidence


@dataclass
class _Seen:
    runs: list[tuple[dict, Evidence]] = field(default_factory=list)
    called: list[str] = field(default_factory=list)  # run tags the check asked for
    before_shrink: int = 0
    failed: int = 0
    refuted: _Refuted | None = None  # the first refuted example (shrunk for fast claims)


def _shifted(params: dict, ctx: Context) -> dict:
    """``params`` with its simulation ``seed`` shifted by ``ctx.seed`` (``--seed``)."""
    return shift_seed(params, ctx.seed)


def _without_local_constants() -> None:
    """Make hypothesis's draws independent of which modules are loaded.

    Hypothesis (6.1xx) mixes into its draws numeric constants it finds in the *local*
    modules loaded at the time (``hypothesis.internal.conjecture.providers``), so the same
    derandomised claim drew different examples when one row was verified alone and when all
    rows ran in one process (the test suite, ``tdcheck verify``).  A verification run must
    be reproducible from its profile and seed alone, so the local pool is kept empty; the
    global constants (0, 1, boundaries ...) stay.  A private API: if it moves, draws fall
    back to hypothesis's default behaviour.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        return
    if getattr(providers, "_tdcheck_frozen", False) or not hasattr(providers, "_get_local_constants"):
        return
    empty = type(providers._local_constants)()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    providers._tdcheck_frozen = True


#: what a check raises when the theory under test is inadmissible (a value outside its
#: domain, a derivation with no admissible solution) or the full model diverged at the
#: set-up the theory gave: read as a failed part with the message as its reason, never as
#: an error of the check (a wrong theory must fail a part).  The part is "symbolic": a
#: crash is not a simulation's rejection, and it has no twin in the check, so it cannot
#: reject a control either.
INADMISSIBLE = (InadmissibleTheory, DivergenceError)
INADMISSIBLE_PART = "theory admissible (values in their domain, full-model run finite)"


def _admissible(call: Callable[[], Evidence]) -> Evidence:
    """``call()``, or one failed part saying why the theory was inadmissible."""
    try:
        return call()
    except INADMISSIBLE as exc:
        why = f"{type(exc).__name__}: {exc}"
        return Evidence((Part(INADMISSIBLE_PART, 0.0, math.inf, math.inf, 0.0, why,
                              kind="symbolic"),), {"inadmissible": why})


def _hypothesis_run(claim: Claim, ctx: Context, n_drawn: int, phases: list,
                    test: Callable[[dict], None]) -> None:
    _without_local_constants()
    wrapped = given(claim.strategy)(test)
    for ex in reversed(claim.examples):
        wrapped = example(dict(ex.params))(wrapped)
    wrapped = settings(
        max_examples=max(1, n_drawn), derandomize=not ctx.seed, database=None, deadline=None,
        phases=phases, suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
        print_blob=False,
    )(wrapped)
    if ctx.seed:
        wrapped = hypothesis_seed(ctx.seed)(wrapped)
    wrapped()


def _explore(fn: Callable[[dict, Context], Evidence], claim: Claim, ctx: Context,
             n_drawn: int, shrink: bool, first_failure: bool = False) -> _Seen:
    """Run ``fn`` over every pinned and drawn example the profile asks for.

    A refuted example does not stop the run: the claim reports how many examples failed of
    how many were drawn.  For a fast claim the first refuted example is then shrunk by a
    second, raising pass of hypothesis over the same (derandomised) draws.  With
    ``first_failure`` the run stops at the first refuted example, unshrunk (``tdcheck
    mutate``: one refutation of a claim expected to hold is all a mutant needs).
    """
    seen = _Seen()
    if not claim.examples and n_drawn == 0:
        return seen
    phases = [Phase.explicit] + ([Phase.generate] if n_drawn > 0 else [])

    def evaluate(params: dict) -> Evidence:
        ev = _admissible(lambda: fn(_shifted(params, ctx), ctx))
        if not isinstance(ev, Evidence):
            raise TypeError(f"check of {claim.id} returned {type(ev).__name__}, not Evidence")
        return holm(ev)

    def collect(params: dict) -> None:
        ev = evaluate(params)
        seen.runs.append((_shifted(params, ctx), ev))
        seen.before_shrink += 1
        if ev.status == "refuted":
            seen.failed += 1
            if seen.refuted is None:
                seen.refuted = _Refuted(_shifted(params, ctx), ev)
            if first_failure:
                raise seen.refuted

    from numerics.cache import RUNS_CALLED

    token = ROLE.set("check")
    runs_token = RUNS_CALLED.set(seen.called)
    try:
        try:
            _hypothesis_run(claim, ctx, n_drawn, phases, collect)
        except _Refuted:
            if not first_failure:
                raise
        if seen.refuted is not None and shrink and n_drawn > 0 and not first_failure:
            def raising(params: dict) -> None:
                ev = evaluate(params)
                if ev.status == "refuted":
                    raise _Refuted(_shifted(params, ctx), ev)

            try:
                _hypothesis_run(claim, ctx, n_drawn, phases + [Phase.shrink], raising)
            except _Refuted as exc:
                seen.refuted = exc  # the shrunk example hypothesis re-raises last
    finally:
        RUNS_CALLED.reset(runs_token)
        ROLE.reset(token)
    return seen


_STATUS_ORDER = {"pass": 0, "inconclusive": 1, "fail": 2}


def _parts_seen(runs: Sequence[tuple[dict, Evidence]]) -> dict:
    """Every part of the check over ``runs``: name -> kind and worst status."""
    out: dict[str, dict] = {}
    for _, ev in runs:
        for p in ev.parts:
            had = out.get(p.name)
            if had is None or _STATUS_ORDER[p.status] > _STATUS_ORDER[had["status"]]:
                out[p.name] = {"kind": p.kind, "status": p.status}
    return out


def _compared(runs: Sequence[tuple[dict, Evidence]]) -> dict:
    """:attr:`ClaimResult.compared` of ``runs``."""
    out: dict[str, list] = {}
    for _, ev in runs:
        for p in ev.parts:
            if p.kind != "simulation":
                continue
            mv = p.details.get("member_values")
            point = p.lower == p.error == p.upper  # no interval a member list would drop
            vals = mv if isinstance(mv, list) and point else [p.predicted, p.observed,
                                                               p.error, p.lower, p.upper]
            out.setdefault(p.name, []).append(vals)
    return out


def _full_model_tags(called: Sequence[str]) -> tuple[str, ...]:
    from numerics.cache import RUNS

    return tuple(sorted({t for t in called if t in RUNS and RUNS[t].full_model}))


def _worst(runs: Sequence[tuple[dict, Evidence]]) -> tuple[dict | None, Evidence | None]:
    if not runs:
        return None, None
    order = {"refuted": 2, "inconclusive": 1, "holds": 0}

    def key(item: tuple[dict, Evidence]) -> tuple[int, float]:
        ev = item[1]
        w = ev.worst
        r = w.upper / w.tolerance if w.tolerance > 0 else (float("inf") if w.upper > 0 else 0.0)
        return order[ev.status], r

    params, ev = max(runs, key=key)
    return params, ev


def _drift(check_ev: Evidence, control_ev: Evidence, into: dict) -> None:
    """Record the parts whose tolerance differs between check and control (same example)."""
    from verify.claims import TOLERANCE_FROM_THEORY

    def equal(a: float, b: float) -> bool:
        return a == b or (math.isfinite(a) and math.isfinite(b)
                          and abs(a - b) <= 1e-9 * max(abs(a), abs(b)))

    names = set(control_ev.names)
    for p in check_ev.parts:
        if p.name not in names or p.name in into:
            continue
        c = control_ev.part(p.name)
        a, b = p.tolerance, c.tolerance
        same = equal(a, b)
        # a worst-member part (verify.error_models.worst_member) reports the member the
        # theory makes worst: its allowance moved only if some member's allowance did
        ma, mb = p.details.get("member_tolerances"), c.details.get("member_tolerances")
        if not same and isinstance(ma, list) and isinstance(mb, list) and len(ma) == len(mb):
            same = all(equal(float(x), float(y)) for x, y in zip(ma, mb, strict=True))
        if not same:
            into[p.name] = {"check": a, "control": b,
                            "declared": p.details.get(TOLERANCE_FROM_THEORY)}


def _discriminate(check_ev: Evidence, control_ev: Evidence) -> tuple[str, ...]:
    """Parts that passed under the paper's theory and failed under the control."""
    names = set(control_ev.names)
    return tuple(p.name for p in check_ev.parts
                 if p.passed and p.name in names and control_ev.part(p.name).failed)


def _band_of(result: ClaimResult, runs: Sequence[tuple[dict, Evidence]]) -> dict | None:
    """``ClaimResult.in_band``: for an inconclusive claim expected to settle where its plan
    decides, every inconclusive example's undecided parts and intervals when each lies
    inside the plan's band (``PowerPlan.in_band``); else None."""
    plan = result.plan
    if (result.outcome != "inconclusive" or result.expected not in ("holds", "refuted")
            or plan is None or not plan.decides or plan.band is None):
        return None
    out: dict = {}
    for _, ev in runs:
        if ev.status != "inconclusive":
            continue
        got = plan.in_band(ev)
        if got is None:
            return None
        for name, v in got.items():  # the widest interval of a part over the examples
            old = out.get(name)
            if old is None or v["upper"] - v["lower"] > old["upper"] - old["lower"]:
                out[name] = v
    return out or None


def run_claim(claim: Claim, profile: Profile | str = "quick", ctx: Context | None = None,
              first_failure: bool = False) -> ClaimResult:
    """Run one claim, its negative control and its positive control under ``profile``.

    ``first_failure`` (``tdcheck mutate``): for a claim expected to hold at this profile,
    stop at its first refuted example and skip its controls (the claim is then not as
    expected, whatever they would show).
    """
    profile = get_profile(profile)
    ctx = ctx or Context(profile=profile.name)
    token = SHOW_PROGRESS.set(bool(ctx.progress))  # training bars inside this claim
    try:
        return _run_claim(claim, profile, ctx, first_failure)
    finally:
        SHOW_PROGRESS.reset(token)


def _run_claim(claim: Claim, profile: Profile, ctx: Context,
               first_failure: bool = False) -> ClaimResult:
    n_drawn = getattr(profile, claim.cost)
    requested = len(claim.examples) + n_drawn
    start = time.perf_counter()
    outcome, message = "holds", None
    seen = _Seen()
    try:
        stop = first_failure and claim.expected_for(profile.name) == "holds"
        seen = _explore(claim.check, claim, ctx, n_drawn, shrink=claim.cost == "fast",
                        first_failure=stop)
        if seen.refuted is not None:
            outcome = "refuted"
        elif not seen.runs:
            outcome, message = "error", "no example was run (no pinned example and 0 drawn)"
        elif any(ev.status == "inconclusive" for _, ev in seen.runs):
            outcome = "inconclusive"
    except Exception as exc:  # a check that raises is reported, never hidden
        outcome = "error"
        message = f"{type(exc).__name__}: {exc}\n" + traceback.format_exc(limit=4)
    if seen.refuted is not None:
        worst_params, worst = seen.refuted.params, seen.refuted.evidence
    else:
        worst_params, worst = _worst(seen.runs)
    result = ClaimResult(
        claim=claim, outcome=outcome, worst=worst, worst_example=worst_params,
        examples_drawn=seen.before_shrink, examples_requested=requested, seconds=0.0,
        control_rejected=None, falsifying_example=seen.refuted.params if seen.refuted else None,
        error_message=message, profile=profile.name, examples_failed=seen.failed,
        parts_seen=_parts_seen(seen.runs), full_model_runs=_full_model_tags(seen.called),
        compared=_compared(seen.runs),
    )
    result.band = _band_of(result, seen.runs)
    if first_failure and outcome == "refuted" and claim.expected_for(profile.name) == "holds":
        result.seconds = time.perf_counter() - start
        return result  # not as expected already: the controls cannot change that
    # negative control: same examples, same order, part by part
    candidates = [(p, ev) for p, ev in seen.runs if any(part.passed for part in ev.parts)]
    if outcome in ("holds", "inconclusive") and candidates:
        result.control_rejected = False
        tried: set[str] = set()
        token = ROLE.set("control")
        try:
            for params, ev in candidates:
                key = repr(sorted(params.items()))
                if key in tried:
                    continue
                tried.add(key)
                cev = holm(_admissible(lambda p=params: claim.control(dict(p), ctx)))
                _drift(ev, cev, result.tolerance_drift)
                by = _discriminate(ev, cev)
                if result.control_evidence is None or by:
                    result.control_evidence, result.control_example = cev, dict(params)
                if by:
                    result.control_rejected, result.control_rejected_by = True, by
                    break
        except Exception as exc:
            result.control_error = f"{type(exc).__name__}: {exc}"
        finally:
            ROLE.reset(token)
    # positive control
    if claim.positive_control is not None:
        token = ROLE.set("positive")
        try:
            result.positive = holm(_admissible(lambda: claim.positive_control.run(ctx)))
        except Exception as exc:
            result.positive_error = f"{type(exc).__name__}: {exc}"
        finally:
            ROLE.reset(token)
    result.seconds = time.perf_counter() - start
    return result


def run_claims(claims: Sequence[Claim], profile: Profile | str = "quick",
               ctx: Context | None = None, progress: bool = True,
               on_result: Callable[[ClaimResult], None] | None = None) -> list[ClaimResult]:
    """Run several claims in order, with a progress bar naming the current claim;
    ``on_result`` is called with each result as it is in."""
    profile = get_profile(profile)
    iterator: Iterable[Claim] = claims
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(claims, desc="verify", unit="claim")
        iterator = bar
    results = []
    for claim in iterator:
        if bar is not None:
            bar.set_postfix_str(claim.id)
        results.append(run_claim(claim, profile, ctx))
        if on_result is not None:
            on_result(results[-1])
    return results


# ---------------------------------------------------------------------- --plan
@dataclass
class ClaimPlan:
    """What one claim would run under a profile: its examples and the runs they ask for."""

    claim: Claim
    examples: int
    runs: list = field(default_factory=list)  # numerics.cache.PlannedRun
    error: str | None = None
    drawn: int = 0  # drawn examples (hypothesis), of which the first ``drawn_probed`` ran
    drawn_probed: int = 0
    drawn_from: int | None = None  # index in ``runs`` of the first drawn example's run

    @property
    def drawn_factor(self) -> float:
        """What each run of a probed drawn example stands for: the drawn examples not run
        under ``--plan`` (:data:`PLAN_DRAWN`) are counted at the mean of those that were."""
        return self.drawn / self.drawn_probed if self.drawn_probed else 1.0

    def weight(self, index: int) -> float:
        """How many runs ``runs[index]`` stands for (:attr:`drawn_factor` for a drawn one)."""
        drawn = self.drawn_from is not None and index >= self.drawn_from
        return self.drawn_factor if drawn else 1.0

    @property
    def member_steps(self) -> float:
        return float(sum(r.member_steps or 0 for r in self.runs if not r.cached))

    @property
    def flops(self) -> float | None:
        todo = [r for r in self.runs if not r.cached]
        if any(r.flops is None for r in todo):
            return None
        return float(sum(r.flops for r in todo))


#: Drawn examples per claim that ``--plan`` runs up to their first run (``None``: all); the
#: others are drawn (so counted exactly) but not run, and costed at the mean of those that
#: were.  Off by default: with 1, thorough's plan took 32 s instead of 62 s but counted
#: 1.8x the member-steps of the plan that runs every example, since claims that share one
#: strategy share their drawn examples' runs, which an unrun draw cannot know.
PLAN_DRAWN: int | None = None


def plan_claim(claim: Claim, profile: Profile | str = "quick", ctx: Context | None = None
               ) -> ClaimPlan:
    """The runs ``claim`` would train under ``profile``, without training them.

    Every example the profile asks for is drawn as in :func:`run_claim`; inside each, the
    check runs until it asks for a run that is not cached (``numerics.cache.PLAN``): that run
    is recorded with its cost and the example stops there (a check that asks for several
    runs in sequence is counted up to its first uncached one; a resumed run, with the cache
    warm, counts only what is left).  The positive control is planned the same way; the
    negative control is not (it re-uses the check's runs).  Fast claims (symbolic and ODE
    checks, no simulation runs by their cost class) are not executed: they are listed with
    their example count only.  With :data:`PLAN_DRAWN` set, only that many drawn examples
    are run (up to their first run) and the rest drawn and counted (:attr:`ClaimPlan.weight`).
    """
    from numerics.cache import PLAN, PlanStop

    profile = get_profile(profile)
    ctx = ctx or Context(profile=profile.name)
    runs: list = []
    out = ClaimPlan(claim, 0, runs)
    token = PLAN.set(runs)
    try:
        pinned = len(claim.examples)

        def test(params: dict) -> None:
            out.examples += 1
            if out.examples > pinned:  # hypothesis runs the pinned examples first
                out.drawn += 1
                if PLAN_DRAWN is not None and out.drawn > PLAN_DRAWN:
                    return
                out.drawn_probed += 1
                if out.drawn_from is None:
                    out.drawn_from = len(runs)
            try:
                claim.check(_shifted(params, ctx), ctx)
            except PlanStop:
                pass

        n_drawn = getattr(profile, claim.cost)
        if claim.cost == "fast":
            out.examples = len(claim.examples) + n_drawn
            return out
        if claim.examples or n_drawn:
            phases = [Phase.explicit] + ([Phase.generate] if n_drawn > 0 else [])
            _hypothesis_run(claim, ctx, n_drawn, phases, test)
        if claim.positive_control is not None:
            try:
                claim.positive_control.run(ctx)
            except PlanStop:
                pass
    except Exception as exc:  # a check that fails before its first run: say so
        out.error = f"{type(exc).__name__}: {exc}"
    finally:
        PLAN.reset(token)
    return out
