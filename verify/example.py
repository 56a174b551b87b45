"""Claims of the example row (``theory.example``): the template for a new paper.

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory``
and ``control`` are the keyword arguments that make the one check test the row's theory and
a near-miss wrong one, so the control runs the same code by construction.  Every prediction
comes from ``theory.example`` (closed forms, its reduced system, numeric twins); the
observations come from ``numerics.example``; tolerances are written next to each part with
their derivation.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from numerics import example as ne
from numerics.ode import integrate
from theory import example as te
from verify.claims import Claim, Context, Evidence, Example, claim, declared
from verify.error_models import exact, worst_member

__all__ = ["claims"]

_C = st.floats(0.25, 2.0).flatmap(lambda m: st.sampled_from([-m, m]))


def _halved_balance_end(a0, b0, c):
    """Control: the end point if the flow halved the balance (a dropped factor 1/2).
    ``end_point`` sees the start only through a0^2 - b0^2 and the sign of a0 +/- b0, so
    scaling the start by 1/sqrt(2) halves the balance and keeps the side."""
    return te.end_point(a0 / np.sqrt(2), b0 / np.sqrt(2), c)


def _wrong_saddle(c):
    """Control: the saddle's eigenvalues with a dropped factor, -|c|/2 and |c|/2."""
    return tuple(v / 2 for v in te.saddle_eigenvalues(c))


@claim(
    id="saddle",
    statement="off the minimum set a b = c the loss has one critical point, the origin, a "
              "strict saddle with Hessian eigenvalues -|c| and |c|",
    source="theory.example: Hessian of L at the origin",
    kind="symbolic",
    strategy=st.fixed_dictionaries({"c": _C, "seed": st.integers(0, 2**16)}),
    theory={"eigenvalues": te.saddle_eigenvalues},
    control={"eigenvalues": _wrong_saddle},
    control_description="the saddle's eigenvalues halved (a dropped factor 2)",
    examples=(Example({"c": 1.0, "seed": 0}, via="the figure's c"),),
)
def check_saddle(params: dict, ctx: Context, *, eigenvalues) -> Evidence:
    c = params["c"]
    sys = te.system()
    found = sys.stationary_points({te.C: c}, box=[(-3, 3), (-3, 3)],
                                  starts=ctx.pick(test=10, quick=40), seed=params["seed"])
    off = [(a, b) for a, b in found
           if abs(te.residual_twin(a, b, c)) > 1e-8 and np.hypot(a, b) > 1e-8]
    count = exact("critical points off a b = c other than the origin", 0.0, float(len(off)),
                  0.0, "exact count: roots accepted at |grad L| < 1e-9 by the root finder",
                  details={"found": len(found)}, kind="symbolic")
    hess = np.linalg.eigvalsh(sys.lambdify_hessian("numpy")(0.0, np.zeros(2), c))
    predicted = np.sort(np.array([float(v) for v in eigenvalues(c)]))
    spectrum = worst_member(
        "Hessian eigenvalues at the origin", predicted, np.sort(hess), 1e-12 * abs(c),
        "eigvalsh of a 2x2 symmetric matrix with entries of size |c|: rounding below "
        "1e-15 |c| per eigenvalue, 1000x margin", kind="symbolic")
    return Evidence((count, spectrum))


@claim(
    id="end_point",
    statement="SGD on the full model ends where the gradient flow of L ends: on a b = c, at "
              "the point that conserves a^2 - b^2, up to GD's own exact change of the balance",
    source="theory.example: balance invariant and end_point; one GD step multiplies the "
           "balance by 1 - s^2 (a b - c)^2",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"c": _C, "seed": st.integers(0, 10_000)}),
    theory={"end": te.end_point},
    control={"end": _halved_balance_end},
    control_description="the end point of a flow that halves the balance",
    cost="slow",
    examples=(Example({"c": 1.0, "seed": 0}, via="the figure's run"),),
)
def check_end_point(params: dict, ctx: Context, *, end) -> Evidence:
    c = params["c"]
    run = ne.run_fit(ne.FitConfig(c=c, seed=params["seed"], **ctx.size(ne.SIZES, "fit")),
                     cache=ctx.cache, device=ctx.device)
    a0, b0, a_t, b_t = run.a[:, 0], run.b[:, 0], run.a[:, -1], run.b[:, -1]
    # 1. GD's exact discrete balance law (theory.example.gd_balance_factor), at every step
    factors = te.gd_balance_factor_twin(run.rate, run.a[:, :-1], run.b[:, :-1], c)
    balance = te.balance_twin(run.a, run.b)  # [members, steps + 1]
    bal0, bal_t = balance[:, 0], balance[:, -1]
    law = bal0[:, None] * np.cumprod(factors, axis=1)
    step = np.argmax(np.abs(law - balance[:, 1:]), axis=1)  # each member's worst step
    rows = np.arange(law.shape[0])
    discrete = worst_member(
        "balance during training vs its GD law (worst step)", law[rows, step],
        balance[rows, step + 1], 1e-10 * (1 + np.abs(bal0)),
        "exact identity per step in float64: up to 2000 steps of relative rounding 1e-16 "
        "each, bounded by 1e-10 (1 + |balance|) (a 500x margin)",
        {"worst_step": int(step[np.argmax(np.abs(law[rows, step] - balance[rows, step + 1]))])},
        kind="simulation")
    # 2. the end point of the flow against where training ended
    predicted = np.array([[float(v) for v in end(x, y, c)] for x, y in zip(a0, b0, strict=True)])
    observed = np.stack([a_t, b_t], axis=1)
    a_end = np.abs(predicted[:, 0])
    # Allowance, per member: (i) GD changed the balance by |d| (part 1); the end point moves
    # by |d| |d end / d balance| <= |d| sqrt(1/(4 a^2) + c^2/(4 a^6)) (differentiate
    # a^2 = (balance + sqrt(balance^2 + 4c^2))/2 and b = c/a); (ii) a finite run stops off
    # the hyperbola by r = a b - c, a distance |r| / |grad(ab)| to first order; x2 for the
    # second-order terms of both.
    moved = np.abs(bal_t - bal0) * np.sqrt(1 / (4 * a_end**2) + c**2 / (4 * a_end**6))
    unconverged = np.abs(te.residual_twin(a_t, b_t, c)) / np.hypot(a_t, b_t)
    ending = worst_member(
        "end point: training vs the flow's", predicted, observed, 2 * (moved + unconverged),
        "deterministic (float64, noiseless data): twice the first-order effect of GD's "
        "balance change and of the distance left to the minimum set", kind="simulation")
    # 3. the reduced system itself ends there (integrated, independent of the closed form)
    ends = np.array([integrate(te.system(), (x, y), 200.0 / abs(c), {te.C: c}).y[:, -1]
                     for x, y in zip(a0[:4], b0[:4], strict=True)])
    left = np.abs(te.residual_twin(ends[:, 0], ends[:, 1], c)) / np.hypot(ends[:, 0], ends[:, 1])
    flow = worst_member(
        "end point: integrated reduced flow vs the closed form", predicted[:4], ends,
        2 * left + 1e-6,
        "LSODA (rtol 1e-10, atol 1e-12) to t = 200/|c|: twice the distance left to the "
        "minimum set (first order, as in the part above) plus 1e-6 for the accumulated "
        "integration error", kind="symbolic")
    return Evidence((discrete, ending, flow), {"members": int(a0.size)})


def claims() -> list[Claim]:
    """The row's claims, in source order."""
    return declared(__name__)
