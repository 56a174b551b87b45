"""Drive each claim with hypothesis under a profile; run its negative control.

For a claim, the runner (1) runs the check on the pinned examples and on examples drawn
from the claim's strategy, stopping at the first failing one (which hypothesis shrinks for
fast claims), keeping the worst evidence (largest error/tolerance); (2) runs the control
the same way and records whether it was rejected (some example failed).  Outcomes:
``holds`` (no failing example), ``refuted`` (one failed), ``error`` (the check raised).

Profiles fix how many drawn examples each cost class gets; every profile is derandomised
with no example database, so a run is reproducible from its profile name.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, example, given, settings

from verify.claims import Claim, Context, Evidence

__all__ = ["PROFILES", "ClaimResult", "Profile", "run_claim", "run_claims"]


@dataclass(frozen=True)
class Profile:
    """Drawn examples per cost class (pinned examples always run in addition)."""

    name: str
    fast: int
    slow: int
    gpu: int


PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", fast=12, slow=0, gpu=0),
    "ci": Profile("ci", fast=25, slow=1, gpu=0),
    "thorough": Profile("thorough", fast=200, slow=6, gpu=6),
}


def get_profile(name: str) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {name!r}")
    return PROFILES[name]


@dataclass
class ClaimResult:
    """What one claim did under one profile (the rows of report.json)."""

    claim: Claim
    outcome: str
    control_rejected: bool
    worst: Evidence | None
    examples: int
    seconds: float
    falsifying_example: dict | None = None
    control_worst: Evidence | None = None
    control_example: dict | None = None
    error_message: str | None = None
    control_error: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def matches_expected(self) -> bool:
        """Outcome equals the expected one (an ``open`` claim accepts holds or refuted)."""
        if self.outcome == "error":
            return False
        if self.claim.expected == "open":
            return True
        return self.outcome == self.claim.expected

    @property
    def ok(self) -> bool:
        """What the suite's exit code is made of."""
        return self.matches_expected and self.control_rejected


class _Falsified(Exception):
    def __init__(self, params: dict, evidence: Evidence):
        super().__init__(f"falsified at {params}")
        self.params = params
        self.evidence = evidence


def _explore(
    fn: Callable[[dict, Context], Evidence],
    claim: Claim,
    ctx: Context,
    n_drawn: int,
    shrink: bool,
) -> tuple[list[tuple[dict, Evidence]], _Falsified | None]:
    """Run ``fn`` over pinned + drawn examples; return every evidence and the falsification."""
    seen: list[tuple[dict, Evidence]] = []
    phases = [Phase.explicit]
    if n_drawn > 0:
        phases += [Phase.generate] + ([Phase.shrink] if shrink else [])

    def test(params: dict) -> None:
        ev = fn(dict(params), ctx)
        seen.append((dict(params), ev))
        if not ev.passed:
            raise _Falsified(dict(params), ev)

    wrapped = given(claim.strategy)(test)
    for ex in reversed(claim.examples):
        wrapped = example(dict(ex))(wrapped)
    wrapped = settings(
        max_examples=max(1, n_drawn),
        derandomize=True,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )(wrapped)
    if not claim.examples and n_drawn == 0:
        return seen, None
    try:
        wrapped()
    except _Falsified as exc:
        return seen, exc
    return seen, None


def run_claim(claim: Claim, profile: Profile | str = "quick", ctx: Context | None = None) -> ClaimResult:
    """Run one claim and its control under ``profile``."""
    profile = get_profile(profile) if isinstance(profile, str) else profile
    ctx = ctx or Context(profile=profile.name)
    n_drawn = getattr(profile, claim.cost)
    shrink = claim.cost == "fast"
    start = time.perf_counter()
    outcome, worst, falsifying, message = "holds", None, None, None
    seen: list[tuple[dict, Evidence]] = []
    try:
        seen, fals = _explore(claim.check, claim, ctx, n_drawn, shrink)
        if fals is not None:
            outcome, worst, falsifying = "refuted", fals.evidence, fals.params
        elif seen:
            worst = max((ev for _, ev in seen), key=lambda ev: ev.ratio)
        else:
            outcome, message = "error", "no example was run (no pinned example and 0 drawn)"
    except Exception as exc:  # a check that raises is reported, never hidden
        outcome, message = "error", f"{type(exc).__name__}: {exc}"
        message += "\n" + traceback.format_exc(limit=3)
    control_rejected, control_worst, control_example, control_error = False, None, None, None
    try:
        cseen, cfals = _explore(claim.control, claim, ctx, max(n_drawn, 1 if not claim.examples else 0), shrink=False)
        if cfals is not None:
            control_rejected, control_worst, control_example = True, cfals.evidence, cfals.params
        elif cseen:
            control_worst = max((ev for _, ev in cseen), key=lambda ev: ev.ratio)
    except Exception as exc:
        control_error = f"{type(exc).__name__}: {exc}"
    return ClaimResult(
        claim=claim,
        outcome=outcome,
        control_rejected=control_rejected,
        worst=worst,
        examples=len(seen),
        seconds=time.perf_counter() - start,
        falsifying_example=falsifying,
        control_worst=control_worst,
        control_example=control_example,
        error_message=message,
        control_error=control_error,
    )


def run_claims(
    claims: Sequence[Claim],
    profile: Profile | str = "quick",
    ctx: Context | None = None,
    progress: bool = True,
) -> list[ClaimResult]:
    """Run several claims in order, with a progress bar."""
    profile = get_profile(profile) if isinstance(profile, str) else profile
    iterator: Iterable[Claim] = claims
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(claims, desc="verify", unit="claim")
        iterator = bar
    results = []
    for claim in iterator:
        if bar is not None:
            bar.set_postfix_str(claim.id)
        results.append(run_claim(claim, profile, ctx))
    return results


def finite(x: Any) -> Any:
    """JSON-safe float: inf/nan become strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x
