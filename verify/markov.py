"""Claims of Makkuva et al., *Local to Global* (NeurIPS 2024): the ``markov`` row.

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory``
and ``control`` are the keyword arguments that make the one check test the paper's theory
and a near-miss wrong one, so the control runs the same code by construction; the check
returns named parts (``verify.claims.Part``), and the runner decides which parts reject the
control.  Sources name the paper's objects and figures, or the authors' code
(github.com/Bond1995/Markov) where the paper's own numbering was unavailable to us.  Every
prediction comes from ``theory.markov`` (closed forms, its reduced systems, float twins).

Full-model runs (numerics/markov.py) use the authors' optimiser exactly: AdamW, betas
(0.9, 0.95), weight decay 1e-3 on the decay group of the model they run (Markov-Simple2:
every Linear weight, wte included; Markov-Simple: wte exempt), and torch's
OneCycleLR(pct_start 0.02, div_factor 100, final_div_factor 0.05, cos).  Their sizes by
profile are the row's one table, ``numerics.markov.SIZES``, which says which of the
authors' folders each configuration reproduces: ``full`` is Markov-Simple2 (binary, x_n *
wte; thorough: its own defaults d = 4, N = 1024); ``fig4`` is the run behind Fig. 4 (that
linear model at d = 8, N = 1024, lr 1e-3 over a 5000-iteration schedule, to iteration 600:
the runs predate the commit that gave Markov-Simple its Embedding), ``fig5`` the Markov-Simple
run behind Fig. 5 (two-row Embedding, softmax head, d = 8, N = 1024).  A claim about a figure judges
only at the figure's configuration (thorough) and reports the smaller quick runs without
judging them.  The rank-one GD claims run deterministic GD on the exact population loss at
their own ``tracks`` / ``resemble`` sizes.

Evaluation uses the Rao-Blackwellised loss (expected loss given x_n) on shared evaluation
sequences; its standard error over sequences is added in quadrature to the seed-level
standard error, and intervals use Student-t with (seeds - 1) degrees of freedom
(``verify.error_models.over_seeds``).

Tolerances and why:

* exact symbolic / high-precision parts: rounding bounds, written next to each;
* "which level" parts (trap, escape): the paper's statements are qualitative
  (training ends at the unigram or at the bigram critical set), so the allowance is half
  the gap I = H(pi) - H_rate between the two candidate levels: an observation nearer the
  predicted level than the other is attributed to it (the decision boundary);
* multi-state: a three-way reading per seed (unigram, bigram, neither), with a band from
  the evaluation interval and the loss path (derived beside the check);
* low rank: the paper's rank-one structure quantified as the authors' saved weights show it
  (their random-init run at iteration 100): at most 10% of the squared singular values
  outside the top direction;
* full vs reduced: first-order convergence in the step for the exact rank-one restriction
  (an order test, not a threshold); for the paper's (e, w, b) ODE, which is a reparametrised
  flow, the basin and the end set: the ODE's end gap against u* or 0 within an allowance
  derived from its own solution (beside the check), the full run's end set read from its
  loss (below H(pi)) or its gap (|u| <= 0.05 on the unigram line, a read-out threshold);
  the path: the (e, w, b) model in the metric the full parameters induce against full GD
  projected onto the canonical family, an order test in time (order 2: same start and
  velocity), with the GD error from two steps and the solver's from tighter tolerances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import cache, lru_cache, partial

import numpy as np
import sympy as sp
from hypothesis import assume
from hypothesis import strategies as st

from numerics import markov as nm
from numerics.context import PROFILES
from numerics.ode import integrate
from theory import markov as tm
from theory.flow import InadmissibleTheory, ReducedSystem, lambdify_numeric, numeric
from verify.claims import (
    Claim,
    Context,
    Evidence,
    Example,
    Part,
    Positive,
    PowerPlan,
    claim,
    declared,
)
from verify.claims import tolerance_from_theory as declared_by_design
from verify.error_models import exact, identically_zero, log_slope, over_seeds, real, worst_member

__all__ = ["claims"]


def _capped_size(ctx: Context, entry: str, cap: str | None) -> nm.Budget:
    """Size-table entry ``entry`` at the running profile, or at profile ``cap`` where that
    is smaller: a positive control's design size (``size_profile``), which a larger profile
    must not inflate (at thorough, ``full`` is the authors' 1000-seed Markov-Simple2 run,
    sized for a GPU)."""
    profile = ctx.profile
    if cap is not None and PROFILES.index(cap) < PROFILES.index(profile):
        profile = cap
    return nm.SIZES.at(entry, profile)


def _adam(ctx: Context, p: float, q: float, init: str, seed: int = 0,
          states: int = 2) -> nm.FullRunResult:
    """The full-model AdamW run of the profile's size (``SIZES`` ``full`` / ``full_multi``)."""
    budget = ctx.size(nm.SIZES, "full" if states == 2 else "full_multi")
    config = nm.adam_run_config(p, q, init, budget, seed, states)
    return nm.run_full(config, cache=ctx.cache, device=ctx.device)


# ---------------------------------------------------------------------- shared helpers
_PROB = st.floats(0.02, 0.98, allow_nan=False)
_DPS = 50

# The chains the paper and the authors' code use, for pinned examples.
_FIG4 = "Fig. 4's chain p = 0.5, q = 0.8 (p + q > 1)"
_COMPARISON = "the authors' loss-comparison chain p = 0.2, q = 0.3 (p + q < 1)"


@st.composite
def _pq(draw, min_gap: float = 0.0):
    """(p, q) in [0.02, 0.98]^2 with |p + q - 1| >= min_gap."""
    p, q = draw(_PROB), draw(_PROB)
    assume(abs(p + q - 1) >= min_gap)
    return p, q


@st.composite
def _point(draw, min_gap: float = 0.0):
    p, q = draw(_pq(min_gap))
    e = draw(st.floats(-3, 3, allow_nan=False))
    w = draw(st.floats(-3, 3, allow_nan=False))
    return {"p": p, "q": q, "e": e, "w": w}


@cache
def _mp(key: str) -> Callable:
    """mpmath-lambdified derived expressions (cached)."""
    if key in ("dL/db", "d2L/db2"):
        order = 1 if key == "dL/db" else 2
        expr = sp.diff(tm.reduced_loss(tm.E, tm.W, tm.B, tm.P, tm.Q), tm.B, order)
        return lambdify_numeric((tm.E, tm.W, tm.B, tm.P, tm.Q), expr, "mpmath")
    if key == "profile":
        return lambdify_numeric((tm.U, tm.P, tm.Q), tm.profile_loss(tm.U, tm.P, tm.Q), "mpmath")
    if key == "profile'":
        d = sp.diff(tm.profile_loss(tm.U, tm.P, tm.Q), tm.U)
        return lambdify_numeric((tm.U, tm.P, tm.Q), d, "mpmath")
    raise KeyError(key)


@cache
def _float_loss() -> Callable:
    """L(e, w, b, p, q) in double precision (numpy), from theory.markov.reduced_loss."""
    expr = tm.reduced_loss(tm.E, tm.W, tm.B, tm.P, tm.Q)
    return lambdify_numeric((tm.E, tm.W, tm.B, tm.P, tm.Q), expr, "numpy")


def _hp(*values, dps: int = _DPS) -> list:
    """Exact decimal inputs (or sympy expressions evaluated to ``dps`` digits) as mpmath."""
    import mpmath

    return [mpmath.mpf(str(sp.N(v, dps))) if isinstance(v, sp.Basic) else mpmath.mpf(repr(float(v)))
            for v in values]


def _eval_hp(fn: Callable, *values, dps: int = _DPS) -> float:
    import mpmath

    with mpmath.workdps(dps):
        return real(fn(*_hp(*values, dps=dps)))


# ---------------------------------------------------------------------- 1. bias optimum
def _wrong_bias(e, w, p, q):
    """Control: b* with the e^2/2 coefficient perturbed to e^2/4: theory.markov's own b*
    shifted by -e^2/4, so the control stays a near miss of whatever the theory says."""
    return tm.optimal_bias(e, w, p, q) - e**2 / 4


@claim(
    id="bias_optimum",
    statement="the derived optimal bias b*(e, w) is the authors' closed form, the root of "
              "dL/db, and the numeric minimiser of L(e, w, b) over b",
    source="the paper's b*(e, w) (the authors' code, Markov-Fixed/energy/contour_plot.py); "
           "its derivation here is ours",
    kind="symbolic",
    strategy=_point(),
    theory={"bias": tm.optimal_bias},
    control={"bias": _wrong_bias},
    control_description="b* with e^2/2 replaced by e^2/4",
    examples=(Example({"p": 0.5, "q": 0.8, "e": 1.0, "w": -1.0},
                      via=f"{_FIG4}, at (e, w) = (1, -1)"),),
)
def _check_bias(params: dict, ctx: Context, *, bias: Callable) -> Evidence:
    # The closed form cancels ~|u|/ln 10 digits when e^u << 1 (p - q + sqrt(D) ~ 0), so
    # the working precision grows with |u| to keep 50 significant digits.
    u = abs(real(tm.gap(params["e"], params["w"])))
    dps = _DPS + int(u / math.log(10)) + 10
    p, q, e, w = (sp.Float(repr(params[k]), dps) for k in ("p", "q", "e", "w"))
    b_star = bias(e, w, p, q)
    grad = _eval_hp(_mp("dL/db"), e, w, b_star, p, q, dps=dps)
    curv = _eval_hp(_mp("d2L/db2"), e, w, b_star, p, q, dps=dps)
    # distance from b* to the true root, to first order (none when L is not convex at b*)
    newton = abs(grad) / curv if curv > 0 else math.inf
    # independent closed form: the authors' formula (typed from their code, not derived)
    import mpmath

    with mpmath.workdps(dps):
        authors = sp.N(tm.authors_optimal_bias(e, w, p, q), dps)
        closed_gap = abs(float(sp.N(b_star - authors, dps)))
    # numeric minimiser of the loss in b (double precision, bracket fixed, not centred on
    # any theory's b*): L is convex in b with curvature ``curv`` at the minimum
    from scipy.optimize import minimize_scalar

    loss_b = _float_loss()
    pf, qf, ef, wf = (float(params[k]) for k in ("p", "q", "e", "w"))
    res = minimize_scalar(lambda b: loss_b(ef, wf, b, pf, qf), bounds=(-250.0, 250.0),
                          method="bounded", options={"xatol": 1e-12})
    level = abs(float(loss_b(ef, wf, float(res.x), pf, qf)))
    # The allowances read only sides the theory under test cannot move (the same for check
    # and control): the magnitude of the authors' typed form, and the loss's own curvature
    # at its numeric argmin (the loss is the model's, not the theory's b*).
    scale = 1 + abs(real(authors))
    curv_min = _eval_hp(_mp("d2L/db2"), e, w, sp.Float(repr(float(res.x)), dps), p, q, dps=dps)
    # a flat minimum is located to sqrt(2 eps |L| / L_bb) (eps = 2.2e-16, double rounding
    # of L); 10x that plus the bracket's xatol 1e-12 and 1e-12 (1 + |b|) for b's rounding;
    # a loss that is not convex at its argmin (curvature <= 0) has no argmin tolerance and
    # the part fails on its NaN allowance (the curvature is in its details)
    argmin_tol = (10 * math.sqrt(2 * 2.2e-16 * max(level, 1e-300) / curv_min)
                  + 1e-12 * (1 + scale)) if curv_min > 0 else math.nan
    return Evidence((exact(
        "b* vs the authors' closed form", 0.0, closed_gap,
        1e-25 * scale,
        "both evaluated to the working precision (>= 60 digits) from the same decimal "
        "inputs; 1e-25 (1 + |b_authors|) bounds the evaluation of either form",
        details={"authors": real(authors)}, kind="symbolic"), exact(
        "numeric argmin of L over b vs b*", real(b_star), float(res.x), argmin_tol,
        "bounded Brent on the double-precision loss, bracket [-250, 250] (every b* on the "
        "drawn box lies inside: |b*| <= e^2/2 + |u| + ln 49 < 200): the argmin of a convex "
        "function rounded to double is located to sqrt(2 eps |L| / L_bb), L_bb at the "
        "argmin; allowance 10x that plus the bracket tolerance",
        details={"L_bb": curv, "L_bb_at_argmin": curv_min, "loss_at_argmin": level},
        kind="symbolic"), exact(
        "Newton distance from b* to the root of dL/db", 0.0, newton,
        tolerance=1e-25 * scale + (1e-45 / curv_min if curv_min > 0 else math.nan),
        error_model="|dL/db| / (d2L/db2) at b* (L is convex in b), in 50-digit arithmetic "
                    "from exact decimal inputs: the gradient's rounding (< 1e-45) divided "
                    "by the loss's curvature at its argmin, plus 1e-25 (1 + |b_authors|) "
                    "for the 50-digit evaluation of b* itself",
        details={"b_star": real(b_star), "dL_db": grad}, kind="symbolic")))


# ---------------------------------------------------------------------- 2. profile extremes
_ARGMIN_BRACKET = (-10.0, 10.0)


def _wrong_gap(p, q):
    """Control: u* with its sign swapped, ln[pq/((1-p)(1-q))] (the other regime's u*)."""
    return -tm.optimal_gap(p, q)


@claim(
    id="profile_extremes",
    statement="l(0) = H(pi) (unigram); l is minimised at u* = ln[(1-p)(1-q)/(pq)] "
              "where l(u*) = H_rate (bigram)",
    source="the paper's reduced loss L(e, w) = l(u) (the authors' code, contour_plot.py); "
           "the profile l and its extremes are our derivation",
    kind="symbolic",
    strategy=st.builds(lambda pq: {"p": pq[0], "q": pq[1]}, _pq()),
    theory={"u_star": tm.optimal_gap},
    control={"u_star": _wrong_gap},
    control_description="u* with its sign swapped (the other regime's u*)",
    examples=(Example({"p": 0.5, "q": 0.8}, via=_FIG4),
              Example({"p": 0.2, "q": 0.3}, via=_COMPARISON)),
)
def _check_profile(params: dict, ctx: Context, *, u_star: Callable) -> Evidence:
    from scipy.optimize import minimize_scalar

    p, q = params["p"], params["q"]
    us = real(u_star(p, q))
    ell, slope = _mp("profile"), _mp("profile'")
    at0, at_star = _eval_hp(ell, 0, p, q), _eval_hp(ell, us, p, q)
    uni, bi = real(tm.unigram_loss(p, q)), real(tm.bigram_loss(p, q))
    d_star = _eval_hp(slope, us, p, q)
    # The bracket is fixed, not centred on any theory's u*: on the drawn square
    # [0.02, 0.98]^2 every argmin lies in |u| <= 2 ln 49 < 7.8 (observation independent of
    # the theory under test).
    res = minimize_scalar(lambda u: _eval_hp(ell, u, p, q), bounds=_ARGMIN_BRACKET,
                          method="bounded", options={"xatol": 1e-9})
    return Evidence((
        exact("l(0) vs H(pi)", uni, at0, 1e-12,
              "50-digit evaluation compared in double precision: both sides rounded to "
              "double (< 1e-15) with a 1000x margin", kind="symbolic"),
        exact("l(u*) vs H_rate", bi, at_star, 1e-12,
              "50-digit evaluation at u* rounded to double: moves l by l'' * (1e-16)^2, far "
              "below the double rounding of the comparison (1e-15, 1000x margin)", kind="symbolic"),
        exact("l'(u*) = 0", 0.0, d_star, 1e-12,
              "u* rounded to double moves l' by l''(u*) * 1e-16 < 1e-16 (l'' <= 1/4)", kind="symbolic"),
        exact("numeric argmin of l vs u*", us, float(res.x), 1e-5,
              "bounded Brent (xatol 1e-9) on a flat bottom: with l rounded to double "
              "(eps 1.1e-16, |l| <= ln 2) the argmin is determined to sqrt(2 eps |l| / l'') "
              "< 7e-7, since l''(u*) >= 3.8e-4 on the drawn square (its minimum, at the "
              "corners p = 1 - q = 0.02); 1e-5 leaves a 10x margin", kind="symbolic"),
    ))


# ---------------------------------------------------------------------- 2b. plotted lines
# The reference lines the authors draw in their plot scripts (value as printed, to three
# decimals), and which level of which chain each names.
_PLOTTED_LINES = {
    "fig4_unigram": (0.665, "unigram", (2, 0.5, 0.8), "Fig. 4 (Markov-Simple/figures/loss.py)"),
    "fig4_bigram": (0.624, "bigram", (2, 0.5, 0.8), "Fig. 4 (Markov-Simple/figures/loss.py)"),
    "comparison_bigram": (0.545, "bigram", (2, 0.2, 0.3),
                          "loss-comparison.pdf (Markov-Simple/figures/loss-comparison.py)"),
    "states_bigram": (0.464, "bigram", (5, 0.1, None),
                      "loss01.pdf (Markov-Simple/figures/loss-states.py), S = 5, p = 0.1"),
}


def _paper_levels(states: int, p: float, q: float | None) -> dict:
    if states == 2:
        return {"unigram": real(tm.unigram_loss(p, q)), "bigram": real(tm.bigram_loss(p, q))}
    return {"unigram": real(tm.symmetric_unigram_loss(states)),
            "bigram": real(tm.symmetric_bigram_loss(p, states))}


def _swapped_levels(states: int, p: float, q: float | None) -> dict:
    """Control: unigram and bigram swapped (a line read as the other level)."""
    lv = _paper_levels(states, p, q)
    return {"unigram": lv["bigram"], "bigram": lv["unigram"]}


@claim(
    id="plotted_reference_lines",
    statement="the unigram and bigram lines the authors plot equal H(pi) and H_rate of "
              "the plotted chain (and h(p) + p ln(S - 1) for the S-state chain), to the "
              "three decimals printed",
    source="the authors' plot scripts: Markov-Simple/figures/loss.py (Fig. 4), "
           "loss-comparison.py, loss-states.py",
    kind="published-number",
    strategy=st.just({"lines": tuple(_PLOTTED_LINES)}),
    theory={"levels": _paper_levels},
    control={"levels": _swapped_levels},
    control_description="unigram and bigram levels swapped",
    expected="refuted",
    examples=(Example({"lines": tuple(_PLOTTED_LINES)}, via="every line the scripts draw"),),
    positive=Positive(
        {"lines": ("comparison_bigram", "states_bigram")},
        "the same check on the two lines of the authors' later scripts, so the check can "
        "pass where the plotted value is the level it names"),
    notes="Finding: both of Fig. 4's lines are off the chain's levels by more than the "
          "printed rounding, the bigram line (0.624 against H_rate of p = 0.5, q = 0.8) more "
          "than the unigram line (0.665 against H(pi)); the part's numbers.  The other lines "
          "match to the printed decimals.  A plotted line is a drawing aid, so this is a "
          "finding about the figure, not about the theory.",
)
def _check_lines(params: dict, ctx: Context, *, levels: Callable) -> Evidence:
    parts = []
    for key in params["lines"]:
        value, level, (states, p, q), where = _PLOTTED_LINES[key]
        theory_value = levels(states, p, q)[level]
        parts.append(exact(
            f"{key}: plotted {level} line vs theory", theory_value, value, 5e-4,
            "a value printed to three decimals is the true value rounded: |error| <= 5e-4",
            details={"where": where}, kind="published"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 2c. chain levels
def _kernel_entropies(states: int, p: float, q: float) -> tuple[float, float]:
    """(entropy of the stationary law, entropy rate) of the authors' kernel
    (numerics.markov.transition_matrix), in nats, from the matrix alone: the stationary law
    is its left eigenvector for the eigenvalue 1 (numpy), not theory.markov's closed form."""
    kernel = nm.transition_matrix(nm.MarkovConfig(p=p, q=q if q is not None else 0.5,
                                                  states=states)).numpy()
    vals, vecs = np.linalg.eig(kernel.T)
    pi = np.real(vecs[:, int(np.argmin(np.abs(vals - 1)))])
    pi = pi / pi.sum()
    unigram = -float(np.sum(pi * np.log(pi)))
    rate = -float(np.sum(pi[:, None] * kernel * np.log(kernel)))
    return unigram, rate


def _kernel_block_entropy(states: int, p: float, blocks: tuple[int, ...]) -> float:
    """H(x_{n+1} | block of x_n) of the symmetric S-state kernel
    (numerics.markov.transition_matrix) for the partition of the states into consecutive
    blocks of the given sizes, from the matrix alone: the stationary law as the left
    eigenvector for the eigenvalue 1, each block's next-token law as the stationary mixture
    of its rows (numpy), not theory.markov's closed form."""
    kernel = nm.transition_matrix(nm.MarkovConfig(p=p, q=0.5, states=states)).numpy()
    vals, vecs = np.linalg.eig(kernel.T)
    pi = np.real(vecs[:, int(np.argmin(np.abs(vals - 1)))])
    pi = pi / pi.sum()
    out, start = 0.0, 0
    for m in blocks:
        w = pi[start:start + m]
        row = (w[:, None] * kernel[start:start + m]).sum(axis=0) / w.sum()
        out -= float(w.sum() * np.sum(row * np.log(row)))
        start += m
    return out


@st.composite
def _chain_params(draw):
    # away from the i.i.d. chains (p + q = 1; p = (S - 1)/S for S states), where the two
    # levels coincide and the control (levels swapped) cannot be told apart
    states = draw(st.integers(2, 10))
    p = draw(_PROB)
    if states == 2:
        q = draw(_PROB)
        assume(abs(p + q - 1) >= 0.05)
        return {"states": 2, "p": p, "q": q}
    assume(abs(p - (states - 1) / states) >= 0.05)
    return {"states": states, "p": p, "q": None}


@claim(
    id="chain_levels",
    statement="the unigram and bigram levels the row uses are the entropy of the chain's "
              "stationary law and its entropy rate: H(pi) and [q h(p) + p h(q)]/(p+q) for "
              "the binary chain, ln S and h(p) + p ln(S - 1) for the symmetric S-state chain; "
              "the partial-solution levels of the S-state chain (theory.markov."
              "symmetric_partition_levels) are its entropies conditional on a partition",
    source="the paper's unigram and bigram losses; the S-state kernel of the authors' code "
           "(Markov-Simple: stay 1 - p, move to each other state with p/(S - 1))",
    kind="symbolic",
    strategy=_chain_params(),
    theory={"levels": _paper_levels},
    control={"levels": _swapped_levels},
    control_description="unigram and bigram levels swapped",
    examples=(Example({"states": 2, "p": 0.5, "q": 0.8}, via=_FIG4),
              Example({"states": 2, "p": 0.2, "q": 0.3}, via=_COMPARISON),
              Example({"states": 5, "p": 0.1, "q": None},
                      via="the authors' loss-states.py chain, S = 5, p = 0.1"),
              Example({"states": 5, "p": 0.9, "q": None},
                      via="markov.multi_state's trapped chain, S = 5, p = 0.9")),
)
def _check_levels(params: dict, ctx: Context, *, levels: Callable) -> Evidence:
    states, p, q = params["states"], params["p"], params["q"]
    theory = levels(states, p, q)
    unigram, rate = _kernel_entropies(states, p, q)
    why = ("closed form against the entropies of the kernel computed in double precision "
           "(an eigenvector and S^2 terms of O(1)): rounding < 1e-13; allowance 1e-10")
    parts = [
        exact("unigram level vs the entropy of the stationary law", unigram,
              theory["unigram"], 1e-10, why, kind="symbolic"),
        exact("bigram level vs the entropy rate of the kernel", rate, theory["bigram"],
              1e-10, why, kind="symbolic")]
    if states > 2:
        # the partial-solution levels markov.multi_state reads seeds against
        # (theory.markov.symmetric_partition_levels): the largest error over partitions
        levels = tm.symmetric_partition_levels(p, states)
        errs = {blocks: abs(float(v) - _kernel_block_entropy(states, p, blocks))
                for blocks, v in levels.items()}
        worst = max(errs, key=errs.get)
        parts.append(exact(
            "partial-solution levels vs the kernel's block-conditional entropies",
            float(levels[worst]), _kernel_block_entropy(states, p, worst), 1e-10, why,
            details={"partitions": len(levels), "worst_partition": list(worst)}, kind="symbolic"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 3. energy
def _perturbed_energy(e, w):
    """Control: the paper's energy with its e^2 coefficient perturbed from 1 to 9/10
    (theory.markov.energy at sqrt(9/10) e)."""
    return tm.energy(sp.sqrt(sp.Rational(9, 10)) * e, w)


@lru_cache(maxsize=8)
def _drift(energy: Callable) -> sp.Expr:
    base = tm.system(bias="optimal")
    candidate = energy(tm.E, tm.W)
    sys = ReducedSystem(base.state, base.params, base.rhs, base.loss,
                        {"candidate": candidate}, branches=base.branches)
    return sys.drift("candidate")


@cache
def _flow(kind: str) -> ReducedSystem:
    """The reduced systems with p, q (and N) symbolic: derived once, lambdified once."""
    if kind == "optimal":
        return tm.system(bias="optimal")
    if kind == "trained":
        return tm.system(bias="trained")
    if kind == "rank_one":
        return tm.rank_one_system()
    if kind == "metric":
        return tm.metric_system()
    raise KeyError(kind)


def _pq_values(p: float, q: float) -> dict:
    return {tm.P: p, tm.Q: q}


@st.composite
def _energy_point(draw):
    p, q = draw(_pq(0.0))
    e = draw(st.floats(-3, 3, allow_nan=False))
    w = draw(st.floats(0.05, 3, allow_nan=False)) * draw(st.sampled_from([-1, 1]))
    return {"p": p, "q": q, "e": e, "w": w}


@claim(
    id="energy_conserved",
    statement="E = e^2 - w^2 - sign(w) ln|w| has zero symbolic drift under the "
              "b*-flow and stays constant along integrated flows",
    source="the paper's energy (Fig. 1a/c contours; the authors' code, contour_plot.py, "
           "defines E); its conservation under the b*-flow is our derivation",
    kind="symbolic",
    strategy=_energy_point(),
    theory={"energy": tm.energy},
    control={"energy": _perturbed_energy},
    control_description="E with the e^2 coefficient 9/10 instead of 1",
    examples=(Example({"p": 0.5, "q": 0.8, "e": 1.0, "w": -1.0},
                      via=f"{_FIG4}, from (e, w) = (1, -1) in the global basin"),),
)
def _check_energy(params: dict, ctx: Context, *, energy: Callable) -> Evidence:
    drift = _drift(energy)
    bad = 0.0 if drift == 0 else 1.0
    symbolic = Part("symbolic drift dE/dt", 0.0, bad, bad, 0.0,
                    "exact: dE/dt simplified by sympy on both branches of sign(w) must be 0",
                    details={"drift": str(drift)}, kind="symbolic")
    e_fn = lambdify_numeric((tm.E, tm.W), energy(tm.E, tm.W), "numpy")
    sol = integrate(_flow("optimal"), (params["e"], params["w"]), 100.0,
                    _pq_values(params["p"], params["q"]), t_eval=np.linspace(0, 100, 201))
    values = e_fn(sol.y[0], sol.y[1])
    e0 = float(values[0])
    drift_num = float(np.max(np.abs(values - e0)))
    numeric = declared_by_design(Part("E along the integrated flow", e0, float(values[-1]), drift_num,
                   1e-6 * (1 + abs(e0)),
                   "LSODA rtol 1e-10 / atol 1e-12 over t in [0, 100]: accumulated local error "
                   "< 200 steps x 1e-10 relative, bounded by 1e-6 (1 + |E0|)",
                   details={"moved": float(np.hypot(*(sol.y[:, -1] - sol.y[:, 0])))}, kind="symbolic"),
        "the allowance is relative to E0, the energy under test at the init (a scale, not "
        "LSODA's error model: the solver integrates (e, w), and E's error is about |grad E| "
        "times the state's error): a wrong E moves it by (1 + |E0'|) / (1 + |E0|), up to "
        "about 2x for the control on the drawn box (a referee's sweep), while a "
        "non-conserved E drifts by O(0.1) along the flow, 1e4 times the allowance; the "
        "symbolic drift parts reject the control exactly")
    any_profile = identically_zero(
        "symbolic drift dE/dt, any profile l", _drift_structured(energy),
        "exact: along theory.markov.structured_system (L = l(u(e, w)), its l'(u) replaced by "
        "an arbitrary symbol), the squared drift summed over both branches of sign(w) must "
        "simplify to 0", kind="symbolic")
    return Evidence((symbolic, any_profile, numeric))


@lru_cache(maxsize=8)
def _drift_structured(energy: Callable) -> sp.Expr:
    """dE/dt along theory.markov.structured_system, with l'(u) (a derivative of the
    abstract profile) replaced by a free symbol, summed in squares over both branches."""
    base = tm.structured_system()
    slope = sp.Symbol("g", real=True)
    rhs = [r.replace(lambda x: isinstance(x, (sp.Derivative, sp.Subs)), lambda x: slope)
           for r in base.rhs]
    inv = energy(tm.E, tm.W)
    rate = sum((sp.diff(inv, x) * r for x, r in zip(base.state, rhs, strict=True)), sp.S.Zero)
    w_abs = sp.Symbol("w_abs", positive=True)
    return sum((numeric(rate.subs(tm.W, sgn * w_abs)) ** 2 for sgn in (1, -1)), sp.S.Zero)


# ---------------------------------------------------------------------- 3b. attention
# The (e, w, a) model (theory.markov.attention_system) is our reconstruction of the paper's
# L(e, w, a), unverified against the paper (its text was unavailable), so it is no claim
# of the paper: its invariants and its a = 0 slice are theory tests
# (tests/test_theory_markov.py), and theory.markov.UNJUDGED says why no claim judges it.


# ---------------------------------------------------------------------- 4. critical set
def _paper_critical(p: float, q: float) -> tuple[float, Callable, Callable, Callable]:
    """The paper's critical set: Gamma* = {u = u*}, the type rule on e = 0, and the non-zero
    Hessian eigenvalues there (theory.markov.unigram_curvature on e = 0,
    theory.markov.global_min_curvature on Gamma*)."""
    return (real(tm.optimal_gap(p, q)), lambda w: tm.critical_type(w, p, q),
            lambda w: real(tm.unigram_curvature(w, p, q)),
            lambda e, w: real(tm.global_min_curvature(e, w, p, q)))


def _other_regime_critical(p: float, q: float) -> tuple[float, Callable]:
    """Control: the critical set of the other regime (p, q) -> (1 - p, 1 - q): u* -> -u*
    and min <-> max on the unigram line."""
    return _paper_critical(1 - p, 1 - q)


# Points on the unigram line that every check classifies, away from the saddle w = -1/sqrt 2
# (|1 + 2w|w|| >= 0.28 there), so the type part always has points to classify.
_UNIGRAM_W = (-2.5, -1.5, -1.0, -0.3, 0.3, 1.0, 2.5)


@st.composite
def _critical_params(draw):
    # p + q = 1 collapses Gamma* onto the unigram line (the degenerate case): excluded.
    p, q = draw(_pq(0.05))
    return {"p": p, "q": q, "seed": draw(st.integers(0, 2**16))}


@claim(
    id="critical_set",
    statement="critical points lie on Gamma* = {u = u*} or on e = 0; on e = 0 the "
              "Hessian's non-zero eigenvalue is 2 l'(0)(1+2w|w|) (type: its sign), on "
              "Gamma* it is l''(u*) |grad u|^2",
    source="the paper's critical set (the Fig. 1a/c markers; the authors' code, "
           "energy_lines1/2.pdf); the classification is our derivation",
    kind="symbolic",
    strategy=_critical_params(),
    theory={"theory": _paper_critical},
    control={"theory": _other_regime_critical},
    control_description="the critical set of the other regime (p, q) -> (1-p, 1-q): "
                        "u* with its sign swapped and min/max swapped on e = 0",
    examples=(Example({"p": 0.5, "q": 0.8, "seed": 0}, via=_FIG4),
              Example({"p": 0.2, "q": 0.3, "seed": 0}, via=_COMPARISON)),
)
def _check_critical(params: dict, ctx: Context, *, theory: Callable) -> Evidence:
    p, q = params["p"], params["q"]
    us, type_rule, uni_curv, star_curv = theory(p, q)
    sys = _flow("optimal")
    vals = _pq_values(p, q)
    found = sys.stationary_points(vals, box=[(-3, 3), (-3, 3)],
                                  starts=ctx.size(nm.SIZES, "critical_starts"),
                                  seed=params["seed"])
    grid = np.array([(0.0, w) for w in _UNIGRAM_W])
    pts = np.vstack([found, grid]) if len(found) else grid
    f, hess = sys.lambdify("numpy"), sys.lambdify_hessian("numpy")
    # The first-order bound needs a non-degenerate transverse curvature: points in the band
    # |1 + 2w|w|| <= 0.05 around the degenerate saddle (0, -1/sqrt 2), where the Hessian's
    # non-zero eigenvalue 2 l'(0)(1 + 2w|w|) vanishes, are reported, not judged.
    near_saddle = np.abs(tm.ff_gain_twin(pts[:, 1])) <= 0.05
    ratios, dists = [], []
    for e, w in pts[~near_saddle]:
        # distance to the predicted set: to Gamma* along grad u (first order), or to e = 0
        gu = np.array(tm.gap_gradient_twin(e, w))
        d_star = abs(tm.gap_twin(e, w) - us) / max(float(np.linalg.norm(gu)), 1e-300)
        dist = min(d_star, abs(e))
        resid = float(np.linalg.norm(f(0.0, np.array([e, w]), p, q)))
        kappa = float(np.max(np.abs(np.linalg.eigvalsh(hess(0.0, np.array([e, w]), p, q)))))
        # a root with residual r lies r / kappa from the set to first order (kappa: the
        # transverse curvature).  Floor 1e-12: the double-precision resolution of the
        # distance itself (u rounded to ~1e-15 (1 + |u|), divided by |grad u| >= 1e-3 on
        # the box), so exact points (residual ~ 1e-17) are not judged on rounding noise
        ratios.append(dist / (resid / max(kappa, 1e-300) + 1e-12))
        dists.append(dist)
    location = Part(
        "location: distance to Gamma* or e = 0 / (residual / curvature)", 1.0,
        float(max(ratios)), float(max(ratios)), 2.0,
        "a root accepted at residual |grad L| = r < 1e-9 lies r / kappa from the critical set "
        "to first order (ratio 1; kappa the transverse Hessian eigenvalue, distance to "
        "Gamma* measured along grad u); the allowance 2 covers the second-order term, "
        "O(d |L'''| / kappa) < 1e-3 at these distances d < 1e-6, and rounding below the 1e-12 resolution floor",
        details={"points": len(pts), "found_by_root_finder": len(found),
                 "max_distance": float(max(dists)),
                 "near_saddle_points": int(near_saddle.sum()),
                 "near_saddle_max_abs_e": float(np.max(np.abs(pts[near_saddle, 0]), initial=0))}, kind="symbolic")
    mismatches, checked = 0, 0
    for e, w in pts:
        # classify only points on e = 0 away from the degenerate saddle: |1 + 2w|w|| > 0.05
        # keeps the non-zero Hessian eigenvalue 2 l'(0)(1 + 2w|w|) >= 1e-4 (|l'(0)| >= 1e-3
        # for |p + q - 1| >= 0.05), 1e5 times the classification threshold 1e-9
        if abs(e) < 1e-6 and abs(tm.ff_gain_twin(w)) > 0.05:
            checked += 1
            if sys.classify((0.0, w), vals).kind != type_rule(w):
                mismatches += 1
    err = float(mismatches) if checked else math.inf
    types = Part("type on e = 0: Hessian vs rule", 0.0, float(mismatches), err, 0.0,
                 "exact: the signs of Hessian eigenvalues >= 1e-4 are decided without error; "
                 "at least one point must be classified (else the part fails)",
                 details={"classified": checked}, kind="symbolic")
    # eigenvalue sizes: the Hessian's largest-|.| eigenvalue against the theory's non-zero
    # eigenvalue, relative error, on e = 0 (grid points, exact) and on Gamma* (roots)
    def size_part(name, rows, tol, why):
        if not rows:
            return Part(name, math.nan, math.nan, math.inf, tol, why + " (no point)", kind="symbolic")
        rel = [abs(obs - pred) / abs(pred) for pred, obs in rows]
        k = int(np.argmax(rel))
        return Part(name, rows[k][0], rows[k][1], rel[k], tol, why,
                    details={"points": len(rows), "relative_errors": rel}, kind="symbolic")

    def top_eig(e, w):
        ev = np.linalg.eigvalsh(hess(0.0, np.array([e, w]), p, q))
        return float(ev[np.argmax(np.abs(ev))])

    uni_rows = [(uni_curv(w), top_eig(0.0, w)) for w in _UNIGRAM_W]
    on_star = [(e, w) for e, w in found if abs(tm.gap_twin(e, w) - us) < 1e-9 and abs(e) > 1e-3]
    star_rows = [(star_curv(e, w), top_eig(e, w)) for e, w in on_star]
    # the direction of that eigenvalue: the Hessian on Gamma* is rank one along grad u
    # (theory.markov.global_min_curvature), so its top eigenvector is +-grad u / |grad u|
    sines = []
    for e, w in on_star:
        ev, vec = np.linalg.eigh(hess(0.0, np.array([e, w]), p, q))
        top = vec[:, int(np.argmax(np.abs(ev)))]
        gu = np.array(tm.gap_gradient_twin(e, w), float)
        cos = abs(float(top @ gu)) / float(np.linalg.norm(gu))
        sines.append(math.sqrt(max(0.0, 1.0 - cos * cos)))
    direction = (Part("eigenvector on Gamma* vs grad u: |sin angle|", 0.0, max(sines),
                      max(sines), 1e-5, "as for the eigenvalue: the term l'(u) Hess u, of "
                      "relative size < 6.2e-6 at these roots, turns the rank-one Hessian's "
                      "eigenvector by at most that ratio (Davis-Kahan, the other eigenvalue "
                      "~ 0); allowance 1e-5", details={"points": len(sines)}, kind="symbolic")
                 if sines else Part("eigenvector on Gamma* vs grad u: |sin angle|", math.nan,
                                    math.nan, math.inf, 1e-5, "no root on Gamma*", kind="symbolic"))
    return Evidence((location, types, direction, size_part(
        "eigenvalue on e = 0 vs 2 l'(0)(1 + 2w|w|), relative", uni_rows, 1e-6,
        "the lambdified exact Hessian at the fixed points (0, w), |1 + 2w|w|| >= 0.28: "
        "double rounding of closed-form expressions (< 1e-12 relative); allowance 1e-6 "
        "relative"), size_part(
        "eigenvalue on Gamma* vs l''(u*) |grad u|^2, relative", star_rows, 1e-5,
        "judged on roots with |u - u*| < 1e-9 and |e| > 1e-3: there l'(u) = l''(u*)(u - u*) "
        "to first order, so the Hessian's extra term l'(u) Hess u moves the eigenvalue by at "
        "most |u - u*| |Hess u| / |grad u|^2 relative, < 1e-9 * 110 / 0.0178 = 6.2e-6 on the "
        "box (|Hess u| <= 110, its spectral norm's maximum 109 at e = w = 3, for |e|, "
        "|w| <= 3; |grad u| >= 2|u*|/|e| >= 0.133 on Gamma* for "
        "|p + q - 1| >= 0.05); allowance 1e-5 relative")))


# ---------------------------------------------------------------------- 5. basins
_SEP_BAND = 1e-3  # closest approach to the separatrix level drawn (in E)


def _on_level(w: float, energy_level: float) -> float | None:
    """|e| of the point at ``w`` < 0 whose energy is ``energy_level``: E(e, w) = e^2 +
    E(0, w) (theory.markov.energy), or None where no such e exists."""
    e2 = energy_level - real(tm.energy(0, w))
    return math.sqrt(e2) if e2 > 0 else None


@st.composite
def _basin_params(draw):
    """Starts where the rule is easy and where it is hard.

    Away from p + q = 1 (degenerate) and from w = 0, e = 0 (invariant lines where E is
    undefined or the start already critical).  Half the draws are uniform on the box; the
    rest sit where the rule's answer changes: at an energy within 10^-3 .. 10^-1 of the
    separatrix level, on either side, at any w < 0 (the boundary of I_min for both
    regimes), or within 0.05 of w = -1/sqrt 2 (where the p + q > 1 rule switches on w
    alone).  The separatrix itself (|E - E_sep| < 1e-3) flows into the saddle: excluded."""
    p, q = draw(_pq(0.05))
    sign_e = draw(st.sampled_from([-1, 1]))
    where = draw(st.sampled_from(["box", "box", "separatrix", "saddle_w"]))
    e_sep = real(tm.separatrix_energy())
    if where == "separatrix":
        w = -draw(st.floats(0.05, 3))
        delta = 10 ** draw(st.floats(-3, -1)) * draw(st.sampled_from([-1, 1]))
        e = _on_level(w, e_sep + delta)
        assume(e is not None and 0.05 <= e <= 3)
        return {"p": p, "q": q, "e": sign_e * e, "w": w}
    if where == "saddle_w":
        w = real(tm.saddle_point()[1]) + draw(st.floats(-0.05, 0.05))
        e = sign_e * draw(st.floats(0.05, 3))
    else:
        e = sign_e * draw(st.floats(0.05, 3))
        w = draw(st.floats(0.05, 3)) * draw(st.sampled_from([-1, 1]))
    if w < 0:
        assume(abs(real(tm.energy(e, w)) - e_sep) >= _SEP_BAND)
    return {"p": p, "q": q, "e": e, "w": w}


# Pinned starts at an energy ``delta`` from the separatrix level: (p, q, w, delta, e), with
# e = _on_level(w, E_sep + delta) evaluated once and written out, so that a slip in
# theory.markov.energy moves the rule's answer, not the start (a start computed from the
# theory under test would move with it); tests/test_theory_markov.py recomputes each e.
# The last four sit below the separatrix on either side of the saddle w = -1/sqrt 2 (at
# w = -0.74 and -0.675), the only starts where the rule's w-boundary decides the basin.
_BASIN_PINS = (
    (0.5, 0.8, -0.4, 2e-3, 0.4813700671979743),
    (0.5, 0.8, -0.4, -2e-3, 0.4771971726594598),
    (0.2, 0.3, -1.5, 2e-3, 0.9999806506187322),
    (0.2, 0.3, -1.5, -2e-3, 0.9979786077927036),
    (0.5, 0.8, -0.74, -1.2e-3, 0.03052052594482787),
    (0.5, 0.8, -0.675, -1.2e-3, 0.029899796481491617),
    (0.2, 0.3, -0.74, -1.2e-3, 0.03052052594482787),
    (0.2, 0.3, -0.675, -1.2e-3, 0.029899796481491617),
)


def _near_separatrix(p: float, q: float, w: float, delta: float) -> dict:
    """The pinned start of ``_BASIN_PINS`` at (p, q, w, delta)."""
    (e,) = [pin[4] for pin in _BASIN_PINS if pin[:4] == (p, q, w, delta)]
    return {"p": p, "q": q, "e": e, "w": w}


def _integrated_basin(p: float, q: float, e0: float, w0: float) -> tuple[str, dict]:
    us = real(tm.optimal_gap(p, q))

    def at_global(t, y):
        return abs(tm.gap_twin(y[0], y[1]) - us) - 1e-6

    def at_local(t, y):
        return abs(y[0]) - 1e-6

    sol = integrate(_flow("optimal"), (e0, w0), 1e6, _pq_values(p, q), rtol=1e-9, atol=1e-12,
                    events=(at_global, at_local))
    e, w = sol.y[:, -1]
    u = tm.gap_twin(e, w)
    end = {"e_end": float(e), "w_end": float(w), "t_end": float(sol.t[-1])}
    if abs(u - us) <= 1.01e-6:
        return "global", end
    if abs(e) <= 1.01e-6:
        return "local", end
    return "undecided", end


def _swapped_basin(e, w, p, q):
    """Control: the basin rule of the other regime (p, q) -> (1 - p, 1 - q)."""
    return tm.basin(e, w, 1 - p, 1 - q)


@claim(
    id="basins",
    statement="the energy argument's basin (global / local) agrees with where the "
              "integrated b*-flow ends, for starts off the separatrix (|E - E_sep| >= 1e-3), "
              "drawn densely near it and near w = -1/sqrt 2",
    source="paper Fig. 1b/d (the authors' code, regions1/2.pdf); the energy rule is our "
           "derivation",
    kind="symbolic",
    strategy=_basin_params(),
    theory={"rule": tm.basin},
    control={"rule": _swapped_basin},
    control_description="the basin rule of the other regime (p+q > 1 <-> p+q < 1)",
    examples=(Example({"p": 0.5, "q": 0.8, "e": 0.5, "w": -0.5},
                      via=f"{_FIG4}: a start with w < 0 above the separatrix (global)"),
              Example({"p": 0.2, "q": 0.3, "e": 0.3, "w": -1.5},
                      via=f"{_COMPARISON}: a start below the separatrix (local)"),
              Example({"p": 0.5, "q": 0.8, "e": 0.1, "w": 0.1},
                      via=f"{_FIG4}: a small init near the origin, the trap of Fig. 1d"),
              Example(_near_separatrix(0.5, 0.8, -0.4, 2e-3),
                      via=f"{_FIG4}: 2e-3 above the separatrix level at w = -0.4 (global)"),
              Example(_near_separatrix(0.5, 0.8, -0.4, -2e-3),
                      via=f"{_FIG4}: 2e-3 below the separatrix level at w = -0.4 (local)"),
              Example(_near_separatrix(0.2, 0.3, -1.5, 2e-3),
                      via=f"{_COMPARISON}: 2e-3 above the separatrix level at w = -1.5 "
                          "(global)"),
              Example(_near_separatrix(0.2, 0.3, -1.5, -2e-3),
                      via=f"{_COMPARISON}: 2e-3 below the separatrix level at w = -1.5 "
                          "(local)"),
              Example({"p": 0.5, "q": 0.8, "e": 0.3, "w": -0.72},
                      via=f"{_FIG4}: just left of w = -1/sqrt 2 (global for p + q > 1)"),
              Example(_near_separatrix(0.5, 0.8, -0.74, -1.2e-3),
                      via=f"{_FIG4}: below the separatrix left of the saddle, w = -0.74 "
                          "(global: w <= -1/sqrt 2)"),
              Example(_near_separatrix(0.5, 0.8, -0.675, -1.2e-3),
                      via=f"{_FIG4}: below the separatrix right of the saddle, w = -0.675 "
                          "(local)"),
              Example(_near_separatrix(0.2, 0.3, -0.74, -1.2e-3),
                      via=f"{_COMPARISON}: below the separatrix left of the saddle, "
                          "w = -0.74 (local)"),
              Example(_near_separatrix(0.2, 0.3, -0.675, -1.2e-3),
                      via=f"{_COMPARISON}: below the separatrix right of the saddle, "
                          "w = -0.675 (global)")),
)
def _check_basin(params: dict, ctx: Context, *, rule: Callable) -> Evidence:
    p, q, e, w = params["p"], params["q"], params["e"], params["w"]
    predicted = rule(e, w, p, q)
    observed, end = _integrated_basin(p, q, e, w)
    code = {"global": 1.0, "local": 0.0, "undecided": math.nan}
    err = 0.0 if observed == predicted else (math.inf if observed == "undecided" else 1.0)
    return Evidence((Part(
        "basin: energy rule vs integrated flow", code[predicted], code[observed], err, 0.0,
        "discrete outcome: the flow is integrated until |u - u*| < 1e-6 or |e| < 1e-6 "
        "(LSODA, rtol 1e-9), deep inside either basin",
        details={"predicted": predicted, "observed": observed, **end}, kind="symbolic"),))


# ---------------------------------------------------------------------- levels (full model)
_LEVEL_MODEL = ("the claim is qualitative (which critical set training ends at), and the "
                "reduced landscape has exactly two critical values, H(pi) on e = 0 and "
                "H_rate on Gamma* (theory.markov: our classification of the critical set): "
                "a two-level decision, so the "
                "allowance is half the gap I = H(pi) - H_rate between them (nearer the "
                "predicted level than the other; it does not test how close training "
                "gets, see the margin).  Interval: Student-t "
                "over seeds (seeds - 1 dof) with the evaluation standard error (shared "
                "evaluation sequences) added in quadrature")


def _level_part(name: str, predicted: float, other: float, res: nm.FullRunResult,
                index: int = -1, **details) -> Part:
    losses = res.eval_loss[:, index]
    return over_seeds(
        name, predicted, losses, abs(other - predicted) / 2, _LEVEL_MODEL,
        extra_se=float(np.mean(res.eval_se[:, index])), extra_noise="evaluation",
        details={"iteration": int(res.steps[index]), "other_level": other, **details}, kind="simulation")


def _levels(states: int, p: float, q: float) -> tuple[float, float]:
    """(unigram, bigram) losses: binary chain or symmetric S-state chain (theory.markov)."""
    if states == 2:
        return real(tm.unigram_loss(p, q)), real(tm.bigram_loss(p, q))
    return real(tm.symmetric_unigram_loss(states)), real(tm.symmetric_bigram_loss(p, states))


@st.composite
def _distinguishable_pq(draw):
    # The claim can only be decided where unigram and bigram losses differ: mutual
    # information I = H(pi) - H_rate >= 0.03 nats (10x the quick run's interval half-width).
    p = draw(st.floats(0.05, 0.95))
    q = draw(st.floats(0.05, 0.95))
    assume(real(tm.unigram_loss(p, q) - tm.bigram_loss(p, q)) >= 0.03)
    return {"p": p, "q": q}


# ---------------------------------------------------------------------- 6. Gaussian trap
def _trapped(states: int, p: float, q: float) -> bool:
    """The paper's rule (binary) and its conjectured S-state analogue,
    theory.markov.small_init_trapped."""
    return tm.small_init_trapped(p, q, states)


def _not_trapped(states: int, p: float, q: float) -> bool:
    """Control: the regimes swapped (trapped iff tr P > 1)."""
    return not tm.small_init_trapped(p, q, states)


@claim(
    id="gaussian_init_trap",
    statement="from small Gaussian init (std 0.02) the full model ends at the unigram "
              "loss when p+q > 1 and at the bigram loss when p+q < 1",
    source="the paper's small-init trap (Fig. 1b/d: the origin lies in I_min for p+q > 1 "
           "and in I_* for p+q < 1), a prediction of its reduced model, which has no N or "
           "iteration count; Fig. 4 illustrates it for the full model at p = 0.5, q = 0.8 "
           "(so it is judged at every size: verify.markov._judged, about='theory')",
    kind="reduced-vs-full",
    strategy=_distinguishable_pq(),
    theory={"trapped": _trapped},
    control={"trapped": _not_trapped},
    control_description="regimes swapped: trapped iff p+q < 1",
    cost="slow",
    measured_at="quick",
    examples=(Example({"p": 0.5, "q": 0.8}, via=f"{_FIG4}: trapped"),
              Example({"p": 0.2, "q": 0.3}, via=f"{_COMPARISON}: not trapped")),
    notes="Issue 32 (session of 2026-12-03): the first part reads which of the two levels "
          "the seed mean is nearer (allowance half the gap), so a level wrong by a few per "
          "cent still passes it.  The second part asks each seed's band (the bands of "
          "markov.multi_state) to contain the predicted level itself.  It was added with "
          "its rule unchanged from multi_state's; the only run of these chains under that "
          "rule before it was multi_state's positive control at quick (seed 0: 8 of 8 seeds "
          "at the unigram level at p = 0.5, q = 0.8 and 8 of 8 at the bigram level at "
          "p = 0.2, q = 0.3, the same runs as this claim's pinned examples); drawn examples "
          "had not been run under it.  With quick's 8 seeds the part passes only at 8 of 8 "
          "and fails only at 0 of 8, so one seed outside its band leaves the claim "
          "inconclusive.  Its near misses are the levels' own slips: `tdcheck mutate markov "
          "--function bigram_loss --function unigram_loss` at quick (101 s) rejects their "
          "x 1.05 and x 0.95 mutants by this part (0 of 8 seeds' bands contain the slipped "
          "level); the first part, reading only the nearer level, passes three of those "
          "four (it fails unigram_loss x 0.95); the "
          "swapped-regime control is the far miss both parts reject.  Resolution "
          "(`tdcheck mutate markov --resolution` at quick, eb8da91): 2 %, held by the "
          "stationary law (stationary_distribution); the levels resolve at 1 % "
          "(bigram_loss, unigram_loss, binary_entropy).  optimal_logit0, profile_loss and "
          "profile_slope_at_zero enter its parts only through the trap rule's sign "
          "(small_init_trapped: l'(0) > 0), which no scale up to 50 % flips at the pinned "
          "chains, so they move no simulation part.  On 3f92409 the claim read > 50 %: "
          "optimal_logit0 scaled by 101/100 made the generic simplification in "
          "profile_slope_at_zero run past the mutant's time limit, and a mutant that "
          "cannot run keeps its function's rung; eb8da91 takes the derivative at the "
          "numeric p, q instead (the same values).",
)
def _check_trap(params: dict, ctx: Context, *, trapped: Callable) -> Evidence:
    p, q = params["p"], params["q"]
    res = _adam(ctx, p, q, "gaussian")
    uni, bi = _levels(2, p, q)
    pred, other = (uni, bi) if trapped(2, p, q) else (bi, uni)
    part = _level_part("final loss vs predicted level", pred, other, res,
                       unigram=uni, bigram=bi)
    part = _judge(part, ctx.size(nm.SIZES, "full"), params, about="theory")
    return Evidence((part, _at_level_part(res, pred)), {"seconds": res.seconds})


#: seeds below which a fraction part cannot pass: with n seeds all at the level, the 99 %
#: Clopper-Pearson lower end of the fraction is 0.005^(1/n), above 1/2 only for n >= 8
_FRACTION_SEEDS = 8


def _at_level_part(res: nm.FullRunResult, level: float) -> Part:
    """The fraction of seeds whose band (:func:`_seed_bands`: the 99 % evaluation interval,
    widened below by the loss drop over the run's second half and above to the previous
    record) contains the predicted ``level``: the level itself, not only which of the two
    levels is nearer, so an error of a few per cent in the level leaves it outside every
    band.  Reported, not judged, below :data:`_FRACTION_SEEDS` seeds (:func:`_fraction_part`),
    where the part cannot pass whatever the seeds do."""
    final = res.eval_loss[:, -1]
    lower, upper = _seed_bands(res)
    hits = np.array([lo <= level <= hi for lo, hi in zip(lower, upper, strict=True)])
    part = _fraction_part(
        "fraction of seeds whose band contains the predicted level", hits,
        "per seed, whether the predicted level lies in the seed's band (99 % evaluation "
        "interval, widened below by the loss drop over the run's second half and above to "
        "the previous record; the bands of markov.multi_state)",
        level=level, final_loss_per_seed=final.tolist(), band_lower=lower.tolist(),
        band_upper=upper.tolist())
    return part


# ---------------------------------------------------------------------- 7. authors' init
_CHECKPOINT = 600  # Fig. 4 (loss_avg.pdf) plots iterations 0-600


def _reported(part: Part, why: str) -> Part:
    """``part`` measured but not judged here (inconclusive), with the reason: the size is
    not the configuration the paper's statement is about."""
    return replace(part, measured=False,
                   error_model=f"reported, not judged: {why}.  {part.error_model}")


def _judged(budget: nm.Budget, params: dict, about: str = "figure") -> bool:
    """The one rule for every claim that cites a figure.

    ``about="figure"``: the statement is about what a figure draws (its level at a named
    iteration, the energies it plots over its own schedule), which depends on the figure's
    configuration (N, d, schedule), so it is judged only there (``paper`` in SIZES), or where
    the check is asked to judge the size it runs (a positive control); other sizes are
    reported (:func:`_reported`).  ``about="theory"``: the statement is the theory's
    prediction for the full model, which the paper's reduced model makes at every size (it
    has no N and no iteration count), so it is judged at every size, and the figure is cited
    as its illustration at the figure's size."""
    if about not in ("figure", "theory"):
        raise ValueError(f"about must be figure or theory, got {about!r}")
    return bool(about == "theory" or budget.paper or params.get("judge_reduced", False))


def _judge(part: Part, budget: nm.Budget, params: dict, about: str) -> Part:
    """``part`` judged or reported by the rule of :func:`_judged` (every figure claim)."""
    return part if _judged(budget, params, about) else _reported(part, _NOT_FIGURE)


_NOT_FIGURE = ("this size is not the figure's configuration (numerics.markov.SIZES says "
               "what it shrinks); the figure's own configuration is the thorough profile")


def _start_basins(rule: Callable, res: nm.FullRunResult, p: float, q: float) -> list[str]:
    """Each seed's basin by ``rule`` at its canonical start (e, w) read from the run's
    first record (numerics.markov.canonical: e on W_1's top direction, w from the
    logits).  A label other than global/local is the theory's failure, not the check's."""
    if res.canonical is None or int(res.steps[0]) != 0:
        raise ValueError("the run records no canonical start at iteration 0")
    labels = []
    for e0, w0 in res.canonical[:, 0, :2]:
        try:
            label = rule(float(e0), float(w0), p, q)
        except Exception as exc:  # any failure of a wrong rule is its failure, not ours
            raise InadmissibleTheory(f"the basin rule gave no label at (e, w) = ({e0:.4g}, "
                                     f"{w0:.4g}): {type(exc).__name__}: {exc}") from exc
        if label not in ("global", "local"):
            raise InadmissibleTheory(f"the basin rule gave {label!r}, not global or local")
        labels.append(label)
    return labels


def _swapped_rule(e, w, p, q):
    """Control: the basin rule of the other regime (p, q) -> (1 - p, 1 - q)."""
    return tm.basin(e, w, 1 - p, 1 - q)


@claim(
    id="good_init_escapes",
    statement="from the authors' initialisation the full model is at the bigram loss by "
              "iteration 600 (Fig. 4's range), p = 0.5, q = 0.8",
    source="paper Fig. 4 (the authors' code at commit f3a2ec1: Markov-Simple/figures/loss.py "
           "-> loss_avg.pdf, iterations 0-600; runs of src/schedule2.sh, lr 1e-3, 5000 "
           "iterations, on the linear-embedding model that commit replaced, kept as "
           "Markov-Simple2 at a76f965 with d = 8)",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"seed": st.integers(0, 10_000)}),
    theory={"rule": tm.basin},
    control={"rule": _swapped_rule},
    control_description="the basin rule of the other regime (p+q > 1 <-> p+q < 1), read at "
                        "the same canonical start: it puts the authors' init in the local "
                        "basin, so it predicts the unigram loss",
    expected="holds",
    expected_at={"test": "inconclusive", "quick": "inconclusive", "ci": "inconclusive"},
    measured_at="thorough",
    qualitative="a two-level decision: which critical set training reaches (the basin "
                "rule's label picks the bigram or the unigram level, and the allowance is "
                "half the gap between them), so a scale of a level moves the part only by "
                "how far it moves that midpoint",
    cost="slow",
    examples=(Example({"seed": 0}, via="Fig. 4's run"),),
    positive=Positive(
        {"seed": 0, "p": 0.2, "q": 0.3, "init": "gaussian", "size": "full",
         "size_profile": "quick", "judge_reduced": True},
        "the same check, judged at the size it runs (the quick Markov-Simple2 runs of "
        "markov.gaussian_init_trap), on standard Gaussian init at p = 0.2, q = 0.3, where "
        "training reaches the bigram loss well before iteration 600"),
    notes="Set up at Fig. 4's own configuration, read from the authors' repository history: "
          "loss_avg.pdf and its script were committed (f3a2ec1) when their good "
          "initialisation was wte = 0.5, wpe = -0.25, W_1 = 2, W_2 = -2 (numerics.markov."
          "GOOD_INIT['authors_fig4']; the constants in their repository today, -1 / 0.5 / "
          "2 / -2, came later), with the launch script's lr 1e-3 over a 5000-iteration "
          "one-cycle schedule, plotted to iteration 600.  The model is the linear-embedding "
          "one (wte = Linear(1, d), a tied scalar logit, d = 8): f3a2ec1 itself turned "
          "Markov-Simple into a two-row Embedding with a softmax head, but the figure's runs "
          "predate it.  Session 28 settled this side by side with the authors' code (their "
          "main run unchanged, CPU, 4 seeds, iterations 0-600): their Embedding model and ours "
          "agree (logits to 2.3e-13, gradients to 1.4e-14 on the same batch) and both stay on "
          "the unigram plateau at N = 1024 (0.6665 theirs, 0.6662 ours at 600), while their "
          "linear model at a76f965 and ours both draw the plotted curve (loss ~79 at 0, "
          "0.6226 theirs, 0.6223 ours at 600; the figure: above 0.9 until about 140, 0.627 at "
          "600).  So the session-27 refutation (16 seeds at 0.666, on the Embedding model) "
          "tested the wrong model and is withdrawn.  On the linear model the pinned example at "
          "thorough size (16 seeds, CPU, member_chunk 4, c9f62af, 620 s) holds: loss 0.6228 "
          "at iteration 600, distance to the bigram level 0.0037 [0.0007, 0.0068] against "
          "0.0236; the unigram control is rejected (0.0435 [0.0405, 0.0465]).  Under good init the attention's c_proj "
          "keeps std 0.02 (their rescale runs only for the base init).  quick runs the "
          "figure's model, d, constants, lr and schedule at N = 32 with 8 seeds and reports "
          "the result without judging it; thorough (N = 1024, 16 seeds) judges.  Issue 32: "
          "the registered thorough size (numerics.markov SIZES fig4 thorough) is that run's "
          "configuration but for member_chunk (16 there, 4 in the run), which bounds memory "
          "only (the same results up to the order of the batched sums), so `tdcheck verify "
          "markov --profile thorough --claim markov.good_init_escapes` reproduces it up to "
          "rounding.  Issue 37 (session of 2026-12-03): it did, on this project's 2-core CPU "
          "(one torch thread, 1658 s for the Fig. 4 run at member_chunk 16): 0.0037 [0.0007, "
          "0.0068] against 0.0236, the control rejected (results/thorough/markov/"
          "good_init_escapes.md).  That campaign's first attempt ran out of memory on the "
          "positive control, which at thorough asked for `full`'s thorough size (the "
          "authors' 1000-seed Markov-Simple2 run); it now runs at its stated design size, "
          "quick's (size_profile), as its description always said.  Issue 32 (stop 66, a "
          "referee read graded the claim defective: the target was the label 'bigram' and "
          "the control the label 'unigram', so no error in the theory could move the "
          "prediction): the predicted level is now the basin rule's (theory.markov.basin, "
          "Fig. 1b/d) at the run's canonical start, read from its first record "
          "(numerics.markov.canonical; the authors' Fig. 4 constants give e = 0.5 sqrt 8 = "
          "1.414 and w = -16 at every N, read so at the test and quick sizes: p + q > 1 and "
          "w below the saddle's w, so 'global', the bigram level, as the paper's "
          "placement of its initialisation inside I_* says), and the control is the other "
          "regime's rule at the same start (markov.canonical_ode_resembles_full's), which "
          "names the local basin and so the unigram level.  Both read the same levels as "
          "the labels did, so the thorough verdict above is unchanged by construction (not "
          "re-run).  Declared qualitative (a two-level decision).  What the thorough run "
          "resolves, from its report's numbers (observed 0.62276, interval half-width "
          "0.00301, levels 0.61901 and 0.66628; arithmetic, not a run): the part fails for "
          "the bigram level scaled by +3.3 % or more or by -7.4 % or more (the allowance "
          "moves with it), so a rung needing both directions is 10 %; a scale of the "
          "unigram level moves only the allowance (it fails the part only for scales "
          "between -6.9 % and -7.3 %, where no rung falls); the results/thorough/markov/"
          "good_init_escapes.* files are that run's, under the labels' definition.",
)
def _check_escape(params: dict, ctx: Context, *, rule: Callable) -> Evidence:
    """Fig. 4: from the authors' init the loss is at the bigram level by iteration 600.

    The level is the theory's: the basin ``rule`` (theory.markov.basin, Fig. 1b/d) at the
    run's canonical start names the critical set the flow reaches (global: the bigram
    level on Gamma*, local: the unigram line).  Every seed reads the same start under the
    authors' constant init; seeds whose starts the rule puts in different basins leave the
    part unmeasured (no single level for their mean).  ``params`` may name another (p, q,
    init, size) for the positive control."""
    p, q = params.get("p", 0.5), params.get("q", 0.8)
    budget = _capped_size(ctx, params.get("size", "fig4"), params.get("size_profile"))
    config = nm.adam_run_config(p, q, params.get("init", "authors_fig4"), budget,
                                params["seed"])
    res = nm.run_full(config, cache=ctx.cache, device=ctx.device)
    labels = _start_basins(rule, res, p, q)
    basin_label = labels[0]
    uni, bi = _levels(2, p, q)
    pred, other = (bi, uni) if basin_label == "global" else (uni, bi)
    at = int(np.searchsorted(res.steps, min(_CHECKPOINT, res.run.steps)))
    part = _judge(_level_part("loss at iteration 600 vs predicted level", pred, other, res, at,
                              basin=basin_label, start_basins=labels),
                  budget, params, about="figure")
    if len(set(labels)) > 1:
        # the seed mean is held to one level: where the seeds' starts lie in different
        # basins (a rule may split differing starts correctly) there is none to hold it to
        part = Part.unmeasured(part.name, part.tolerance,
                               f"the seeds' canonical starts lie in different basins ({labels}):"
                               " no single predicted level for the seed mean",
                               kind="simulation")
    return Evidence((part,), {"unigram": uni, "bigram": bi, "seconds": res.seconds,
                              "canonical_start": {
                                  "e": res.canonical[:, 0, 0].tolist(),
                                  "w": res.canonical[:, 0, 1].tolist()},
                              "model": "table" if not config.config.scalar_head else "linear",
                              "d": config.config.d, "N": config.config.seq_len,
                              "steps": res.steps.tolist(),
                              "mean_loss_curve": [float(x) for x in res.eval_loss.mean(0)]})


# ---------------------------------------------------------------------- 8/9. full vs reduced
@st.composite
def _rank_one_params(draw):
    # e0 > 0: the rank-one map is exact only for e > 0 (theory.markov.rank_one_logits);
    # away from p + q = 1, |w0| >= 0.05 (w = 0 is invariant) and e0 >= 0.5 (the first ReLU
    # kink, at distance e0/2 in the position scalar, then lies beyond the first few steps).
    p, q = draw(_pq(0.1))
    e = draw(st.floats(0.5, 1.5))
    w = draw(st.floats(0.05, 1.5)) * draw(st.sampled_from([-1, 1]))
    b = draw(st.floats(-1, 1))
    return {"p": p, "q": q, "e": e, "w": w, "b": b}


def _first_kink(p, q, e0, w0, b0, n_targets, t_cap, position_rate=True) -> float:
    """Time of the first ReLU kink (theory.markov.rank_one_kinks: s = 0 or e + s = 0) of the
    rank-one restriction from the rank-one image of (e0, w0, b0), or ``t_cap`` if none
    comes first.  Beyond it the flow is a sliding mode, not an ODE in the classical sense,
    and GD chatters across it."""
    def kink0(t, y):
        return tm.rank_one_kinks_twin(y[0], y[1])[0]

    def kink1(t, y):
        return tm.rank_one_kinks_twin(y[0], y[1])[1]

    values = {tm.P: p, tm.Q: q, tm.NPOS: float(n_targets) if position_rate else 1.0}
    probe = integrate(_flow("rank_one"), tm.rank_one_state(e0, w0, b0), t_cap, values,
                      events=(kink0, kink1))
    return float(probe.t_event) if probe.t_event is not None else float(t_cap)


def _grid(window: float, dt: float) -> np.ndarray:
    return dt * np.arange(int(np.floor(window / dt + 1e-9)) + 1)


def _rank_one_theory(p, q, e0, w0, b0, n_targets, t_cap, dt, *, position_rate=True):
    """(f0, f1) on the grid k dt of the exact rank-one restriction (theory.markov
    .rank_one_system), up to its first ReLU kink (:func:`_first_kink`).
    ``position_rate=False`` (control) moves the position scalar at rate 1, not 1/N'."""
    values = {tm.P: p, tm.Q: q, tm.NPOS: float(n_targets) if position_rate else 1.0}
    window = _first_kink(p, q, e0, w0, b0, n_targets, t_cap, position_rate)
    times = _grid(window, dt)
    sys = _flow("rank_one")
    y0 = tm.rank_one_state(e0, w0, b0)
    sol = integrate(sys, y0, max(times[-1], dt), values, t_eval=times)
    f0, f1 = tm.rank_one_logits_twin(*sol.y)
    # the solver's error, estimated as the change under 100-fold tighter tolerances
    tight = integrate(sys, y0, max(times[-1], dt), values, t_eval=times, rtol=1e-12,
                      atol=1e-14)
    f_tight = np.stack(tm.rank_one_logits_twin(*tight.y), axis=1)
    # the restriction's velocity at the init, for the first GD step
    rhs0 = sys.lambdify("numpy")(0.0, np.array(y0, float), *(values[x] for x in sys.params))
    return times, np.stack([f0, f1], axis=1), {"window": float(window),
                                               "rhs0": np.asarray(rhs0, float).ravel(),
                                               "f_tight": f_tight}


_TRACK_THEORIES: dict[str, Callable] = {
    "rank_one": _rank_one_theory,
    "rank_one_position_rate_1": partial(_rank_one_theory, position_rate=False),
}
_TRACKS_EXAMPLES = (
    Example({"p": 0.2, "q": 0.3, "e": 1.0, "w": -1.0, "b": 0.0},
            via=f"{_COMPARISON}, the setting of the authors' loss-comparison.pdf, from "
                "(e0, w0, b0) = (1, -1, 0)"),
    Example({"p": 0.5, "q": 0.8, "e": 1.0, "w": -1.0, "b": 0.0},
            via=f"{_FIG4}, from (1, -1, 0) in the global basin"),
    Example({"p": 0.5, "q": 0.8, "e": 0.5, "w": 0.3, "b": 0.5},
            via=f"{_FIG4}, from a start with w0 > 0 (the local basin) and b0 = 0.5 (the "
                "authors' rank-one init draws b ~ N(0, 1))"),
)
_TRACKS_WINDOW = ("Compared up to the first ReLU kink of the restriction (s = 0 or e + s = 0), "
                  "after which its flow is a sliding mode; see details.window.  At the init "
                  "the full model is also compared, to rounding, with the canonical logits "
                  "and loss of (e0, w0, b0), with the ReLU inputs the restriction's kinks "
                  "give, and its first GD step with the restriction's velocity.  The third "
                  "example starts at b0 = 0.5 (it was b0 = 0 in all three, where a slip in "
                  "the read-out or the map of b cannot show); w0 > 0 keeps it in the local "
                  "basin whatever b0 (sign(w) is invariant and u >= 0 > u* there).  "
                  "Resolution (`tdcheck mutate markov --resolution`, quick, ece1fba): 1 %.")


def _tracks_theory_on_ladder(theory: str, p, q, e0, w0, b0, size: dict):
    """The theory's logits on the grid of the largest GD step, with the step ladder halved
    until the theory's smooth window (up to its first ReLU kink) holds ``min_points`` grid
    steps (8; 4 at smoke size): the order test needs steps small against the window, else
    it sees the pre-asymptotic error.  Returns (lrs, times, f_theory, info), or an Evidence
    whose failed part says the window is too short (a wrong theory must fail a part)."""
    seq_len, t_cap, lrs = size["seq_len"], size["t_cap"], np.array(size["steps"])
    min_points = size["min_points"]
    for _ in range(8):
        dt = float(lrs[0])
        times, f_theory, info = _TRACK_THEORIES[theory](p, q, e0, w0, b0, seq_len - 1,
                                                        t_cap, dt)
        if len(times) >= min_points:
            return lrs, times, f_theory, info
        lrs = lrs / 2
    return Evidence((Part(
        "comparison window of the theory holds the step ladder", float(min_points),
        float(len(times)), math.inf, 0.0,
        f"the theory's smooth window {info['window']:.3g} (to its first ReLU kink, "
        f"theory.markov.rank_one_kinks) holds fewer than {min_points} grid points of "
        f"{dt:.3g} after halving the ladder 8 times: no order test is possible",
        details={"window": info["window"], "grid_step": dt}, kind="symbolic"),),
        {"window": info["window"]})


def _tracks_trajectory(times, f_theory, info: dict, runs: list) -> Part:
    """The trajectories themselves (issue 32, item 6).  GD is explicit Euler, so on the
    common grid f_h(t) = f(t) + a(t) h + b(t) h^2 + O(h^3) (smooth flow, inside the window).
    The Richardson combination R_h = 2 f_{h/2} - f_h removes the O(h) term and leaves
    -b h^2 / 2, so R at the two smallest pairs differ by 3 |b| h^2 / 8 while the best one is
    |b| h^2 / 8 from the flow: |R_h - R_{h/2}| bounds its error with a 3x margin.  Plus twice
    the solver's error (the change under 100-fold tighter tolerances) and float64 rounding,
    1e-12 (1 + |f|).  Designed before any run of it: a rate error delta in the restriction
    moves its logits by about delta times their motion over the window, O(h^2) smaller
    steps do not hide it, so this part, unlike the order test, sees it."""
    n_common = min([len(times)] + [len(r.time) for r in runs])
    traj = [r.logits[:n_common] for r in runs]
    rich_prev, rich = 2 * traj[-2] - traj[-3], 2 * traj[-1] - traj[-2]
    f_th = f_theory[:n_common]
    allowance = (np.linalg.norm(rich - rich_prev, axis=-1)
                 + 2 * np.linalg.norm(f_th - info["f_tight"][:n_common], axis=-1)
                 + 1e-12 * (1 + np.linalg.norm(f_th, axis=-1)))
    return declared_by_design(worst_member(
        "logit trajectory: full GD extrapolated to step 0 (Richardson) vs the theory",
        f_th, rich, allowance,
        "per recorded time t on the grid, |R(t) - f_theory(t)| (Euclidean over (f0, f1)) "
        "with R = 2 f_{h/2} - f_h at the two smallest steps; allowance |R_h - R_{h/2}| (3x "
        "the O(h^2) remainder Richardson leaves, from the two smallest pairs) + twice the "
        "solver's error + 1e-12 (1 + |f|); deterministic (exact population loss, float64)",
        details={"times": times[:n_common].tolist(),
                 "max_abs_gap": float(np.max(np.abs(rich - f_th))),
                 "logit_motion": float(np.max(np.linalg.norm(f_th - f_th[0], axis=-1)))},
        kind="simulation"),
        "its main term |R_h - R_{h/2}| is the full model's own; the theory enters only "
        "through twice its solver error (the change under 100-fold tighter tolerances) and "
        "the 1e-12 (1 + |f|) rounding, both of the order of the solver's rtol for any "
        "smooth theory, against a rate error that moves the logits by delta times their "
        "motion over the window")


def _tracks_order(lrs, errors) -> tuple[Part, Part]:
    """The logit error's observed order in the step (1 for the flow GD discretises) and its
    Richardson extrapolation to step 0 (0 for the flow, a constant for another theory)."""
    fit = log_slope("least-squares order", lrs, errors, 1.0, 0.5, "reported, not judged",
                    kind="simulation")
    # observed order between consecutive steps; the last pair estimates the asymptotic
    # order, and the change from the previous pair bounds what the higher-order terms can
    # still move it (they shrink at least geometrically along the ladder)
    local = np.log2(np.maximum(errors[:-1], 1e-300) / np.maximum(errors[1:], 1e-300))
    order, spread = float(local[-1]), float(abs(local[-1] - local[-2]))
    lo_s, hi_s = order - spread, order + spread
    dev = abs(order - 1)
    dev_lo = 0.0 if lo_s <= 1 <= hi_s else min(abs(lo_s - 1), abs(hi_s - 1))
    dev_hi = max(abs(lo_s - 1), abs(hi_s - 1))
    extrapolated = 2 * errors[-1] - errors[-2]
    return (
        Part.bounded(
            "logit error vs step: observed order", 1.0, order, dev, dev_lo, dev_hi, 0.5,
            "GD is explicit Euler on the gradient flow: global error first order in the step. "
            "Observed order log2(err(h)/err(h/2)) at the two smallest steps; interval: -/+ "
            "its change from the previous pair (the higher-order terms' reach).  Allowance "
            "0.5: half the distance to the neighbouring orders 0 (an error that does not "
            "shrink: the theory is not the flow) and 2",
            details={"steps": lrs.tolist(), "errors": errors.tolist(),
                     "local_orders": local.tolist(), "least_squares_slope": fit.observed,
                     "least_squares_slope_se": fit.details.get("se", math.inf),
                     "least_squares_slope_t99": fit.upper - fit.error}, kind="simulation"),
        declared_by_design(Part("logit error extrapolated to step 0", 0.0, extrapolated, abs(extrapolated),
             errors[-1] / 2,
             "Richardson for a first-order error: 2 err(h) - err(2h) removes the O(h) term "
             "and leaves O(h^2); allowance: half the error at the smallest step h (a "
             "theory that is the flow leaves only discretisation, a wrong one a constant)", kind="simulation"),
            "a relative criterion by design: a theory off by a constant C leaves "
            "err(h) = C + a h at the smallest step h (a h: GD's own discretisation error), "
            "so the extrapolation is C against an allowance (C + a h) / 2 and fails once "
            "C > a h; the allowance grows with C, the extrapolation twice as fast.  The "
            "errors are max-norms, so where C and a h have opposite signs (err = |C - a h|) "
            "a window near C = 1.3 a h passes; the trajectory part, signed and per time, "
            "covers it"))


def _tracks_init(runs: list, lrs, info: dict, off: float, p, q, e0, w0, b0) -> tuple[Part, ...]:
    """The full model at its init against the canonical model and the restriction's
    ingredients (runs[0]: the largest step, recorded every step), and the invariance of the
    rank-one manifold.  Kinds: every part's observed side is the full model of
    numerics.markov.run_rank_one (GD by torch autograd on its own population loss):
    "simulation".  The init parts read that run's first record (the full model's own
    logits, loss, ReLU inputs; the read-out of (w, b) passes them through
    theory.markov.canonical_from_logits) and are exact."""
    f0_init, f1_init = (float(v) for v in runs[-1].logits[0])
    w_read, b_read = (float(v) for v in tm.canonical_from_logits(
        float(runs[-1].state[0, 0]), f0_init, f1_init))
    read_err = max(abs(w_read - w0), abs(b_read - b0))
    first = runs[0]
    canon = np.array([float(v) for v in tm.logits(e0, w0, b0)])
    canon_loss = real(tm.reduced_loss(e0, w0, b0, p, q))
    e_i, s_i, c1_i = (float(v) for v in first.state[0, :3])
    kinks = c1_i * np.array([float(v) for v in tm.rank_one_kinks(e_i, s_i)])
    step = (first.state[1] - first.state[0]) / float(lrs[0])
    rhs0 = info["rhs0"]
    return (
        exact("rank-one manifold and inert attention preserved", 0.0, off, 1e-9,
              "exact invariance (every gradient stays in the rank-one directions, attention "
              "gradients vanish with W_V = W_O = 0): float64 rounding over <= 1e3 steps "
              "of O(1) parameters (< 1e-12) with a 1000x margin", kind="simulation"),
        exact("canonical read-out of the initial full model vs (w0, b0)", 0.0, read_err, 1e-9,
              "the rank-one init realises the canonical logits exactly (numerics.markov."
              "init_rank_one), so theory.markov.canonical_from_logits applied to the full "
              "model's e and logits at t = 0 returns (w0, b0): float64 rounding of O(1) "
              "values (< 1e-14), 1e5 margin",
              details={"w_read": w_read, "b_read": b_read}, kind="simulation"),
        exact("initial full-model logits vs the canonical logits of (e0, w0, b0)", 0.0,
              float(np.max(np.abs(first.logits[0] - canon))), 1e-9,
              "theory.markov.logits (the paper's canonical model) against the full model's "
              "logits at its rank-one init, which numerics.markov.init_rank_one builds "
              "without the theory's gap: float64 rounding of O(1) values (< 1e-14), 1e5 "
              "margin", details={"full": first.logits[0].tolist(), "canonical": canon.tolist()}, kind="simulation"),
        exact("initial full-model loss vs the canonical L(e0, w0, b0)", canon_loss,
              float(first.loss[0]), 1e-9,
              "theory.markov.reduced_loss against the full model's exact population loss "
              "at t = 0: float64 rounding (< 1e-14), 1e5 margin", kind="simulation"),
        exact("initial ReLU inputs vs c1 * rank_one_kinks(e, s)", 0.0,
              float(np.max(np.abs(first.relu_inputs[0] - kinks))), 1e-9,
              "the full model's input to the FF ReLU at x_n = 0, 1 along the hidden "
              "direction, against c1 times theory.markov.rank_one_kinks at the model's own "
              "(e, s, c1) read-outs: float64 rounding (< 1e-14), 1e5 margin",
              details={"full": first.relu_inputs[0].tolist(), "theory": kinks.tolist()}, kind="simulation"),
        exact("first GD step vs the restriction's velocity at the init", 0.0,
              float(np.max(np.abs(step - rhs0))), 1e-9 * (1 + float(np.max(np.abs(step)))),
              "GD's first step is exactly -lr grad L, and on the rank-one manifold its "
              "read-out (e, s, c1, c2, b) moves by lr times the restriction's right-hand side "
              "(theory.markov.rank_one_system): the difference quotient carries only float64 "
              "rounding of O(1) parameters divided by the step (< 1e-14); allowance 1e-9 "
              "(1 + |step|), the full model's side (the same for check and control)", details={"full": step.tolist(), "theory": rhs0.tolist()}, kind="simulation"),
    )


@claim(
    id="canonical_tracks_full",
    statement="from a rank-one init with inert attention, full-model GD (t = lr * "
              "steps) follows the exact rank-one restriction (e, s, c1, c2, b) of its "
              "gradient flow (the restriction is our derivation): the logit error is first order in the step, and the full "
              "model's logit trajectory extrapolated to step 0 is the restriction's",
    source="the reviewers' request for a full-vs-canonical comparison (the authors' answer: "
           "Markov-Simple/figures/loss-comparison.py); theory.markov.rank_one_system (our "
           "derivation)",
    kind="reduced-vs-full",
    strategy=_rank_one_params(),
    theory={"theory": "rank_one"},
    control={"theory": "rank_one_position_rate_1"},
    control_description="the restriction with the position scalar moving at rate 1 "
                        "instead of 1/N' (each of the N' position rows gets 1/N' of "
                        "the gradient)",
    cost="slow",
    examples=_TRACKS_EXAMPLES,
    notes=_TRACKS_WINDOW,
)
def _check_tracks(params: dict, ctx: Context, *, theory: str) -> Evidence:
    """Full-model GD from a rank-one init with inert attention vs a reduced theory.

    The full model's own logits (f0, f1) at x_n = 0, 1 are compared with the theory's on a
    common time grid t = lr * steps, at steps h, h/2, h/4, h/8 (h = 0.4 or smaller).  A theory that is the
    full model's gradient flow leaves only the discretisation error of GD (explicit Euler),
    first order in the step: the log-log slope is 1 and the error extrapolated to step 0
    (Richardson) vanishes.  A theory that is not leaves an error that does not shrink.
    """
    p, q, e0, w0, b0 = (params[k] for k in ("p", "q", "e", "w", "b"))
    size = ctx.size(nm.SIZES, "tracks")
    ladder = _tracks_theory_on_ladder(theory, p, q, e0, w0, b0, size)
    if isinstance(ladder, Evidence):
        return ladder
    lrs, times, f_theory, info = ladder
    dt = float(lrs[0])
    errors, off, runs = [], 0.0, []
    for lr in lrs:
        res = nm.run_rank_one(nm.RankOneRun(p, q, e0, w0, b0, lr=float(lr), t_end=times[-1],
                                            record_dt=dt, seq_len=size["seq_len"]),
                              cache=ctx.cache, device=ctx.device)
        n = min(len(times), len(res.time))
        errors.append(float(np.max(np.abs(res.logits[:n] - f_theory[:n]))))
        off = max(off, float(res.off_manifold.max()), float(res.attention.max()))
        runs.append(res)
    errors = np.array(errors)
    full_u = runs[-1].logits[: len(times), 1] - runs[-1].logits[: len(times), 0]
    theory_u = f_theory[:, 1] - f_theory[:, 0]
    order, extrapolated = _tracks_order(lrs, errors)
    return Evidence((order, extrapolated, _tracks_trajectory(times, f_theory, info, runs),
                     *_tracks_init(runs, lrs, info, off, p, q, e0, w0, b0)),
                    {"window": info["window"], "times": times.tolist(),
                     "u_full_smallest_step": full_u.tolist(), "u_theory": theory_u.tolist(),
                     "max_abs_u_gap_smallest_step": float(np.max(np.abs(full_u - theory_u))),
                     "u_star": real(tm.optimal_gap(p, q))})


# ---------------------------------------------------------------------- 9. canonical ODE
# The read-out threshold for a full run "on the unigram line" (gap 0): |u| <= 0.05, far
# below half of u* for every chain drawn, so it cannot confuse the line with Gamma*.
_END_GAP_TOL = 0.05
_ODE_T = 1e5  # the ODE is integrated to its limit (LSODA; cheap), full GD to SIZES t_end


@st.composite
def _resemble_params(draw):
    # the draws of the tracks claim, off a band of 0.1 around the separatrix level: the
    # (e, w, b) flow trains b from b0 != b*(e0, w0), so it does not conserve E while b
    # relaxes, and a start that close to the boundary may cross it (the model mismatch
    # between the b*-flow, whose basins the rule gives, and the trained-bias flow)
    params = draw(_rank_one_params())
    if params["w"] < 0:
        assume(abs(real(tm.energy(params["e"], params["w"]))
                   - real(tm.separatrix_energy())) >= 0.1)
    return params


def _end_set(u: float, u_star: float) -> str:
    """The critical set an end point is on: Gamma* (u = u*) or the unigram line (u = 0)."""
    return "global" if abs(u - u_star) < abs(u) else "local"


def _run_ended(time: np.ndarray, gap: np.ndarray, u_star: float, rounding: float
               ) -> tuple[float, float, float, bool, bool, float]:
    """Whether a full GD run of ``canonical_ode_resembles_full`` has ended, from its records of
    time and gap u: (u(T/4), u(T/2), |u(T) - u(T/2)|, premise, ended, largest |u(t) - u(T)| on
    [T/2, T]).  The premise of the end-gap allowance (a geometric approach): every record of
    [T/2, T] within half the motion over [T/4, T/2] of u(T) (an oscillating or
    still-escaping run moves more somewhere in that window).  Ended: the premise, and u(T)
    within its remaining motion |u(T) - u(T/2)| (+ rounding) of a critical set, u* or the
    unigram line u = 0; an ended run is read at the critical set nearest its gap."""
    i_q, i_h = (int(np.argmin(np.abs(time - f * time[-1]))) for f in (0.25, 0.5))
    u_end, u_q, u_h = float(gap[-1]), float(gap[i_q]), float(gap[i_h])
    moved = abs(u_end - u_h)
    window = float(np.max(np.abs(gap[i_h:] - u_end)))
    premise = window <= 0.5 * abs(u_h - u_q) + rounding
    ended = premise and min(abs(u_end), abs(u_end - u_star)) <= moved + rounding
    return u_q, u_h, moved, premise, ended, window


_END_CODE = {"global": 1.0, "local": 0.0, "undecided": math.nan}


def _resemble_ode(e0, w0, b0, p, q, u_star: float, target: float, predicted: str
                  ) -> tuple[Part, Part, Part, dict]:
    """The (e, w, b) ODE (b trained, theory.markov.system) integrated to its limit: its end
    set against the rule's basin, its end gap against the predicted set's, and the premise
    of that gap's allowance; kind "symbolic" (they integrate the theory).  Also returns the
    values the full model's parts share (u at the end, the rounding floor, the end state)."""
    sol = integrate(_flow("trained"), (e0, w0, b0), _ODE_T, _pq_values(p, q),
                    t_eval=(_ODE_T / 4, _ODE_T / 2, _ODE_T))
    u_ode = real(tm.gap_twin(sol.y[0, -1], sol.y[1, -1]))
    # The ODE's end-gap allowance, derived from the solution itself (the same for check and
    # control, which differ only in the target): (i) the motion left after T: for a
    # geometric approach u(t) - u_inf = C exp(-lam t) with lam T/2 >= ln 2 the distance
    # still to go, |u(T) - u_inf|, is at most the change over the second half,
    # |u(T) - u(T/2)|; (ii) the solver's own error, estimated a posteriori as twice the
    # change when the tolerances are tightened 100-fold (LSODA at rtol 1e-12, atol 1e-14).
    u_quarter, u_half = (real(tm.gap_twin(sol.y[0, i], sol.y[1, i])) for i in (0, 1))
    tight = integrate(_flow("trained"), (e0, w0, b0), _ODE_T, _pq_values(p, q),
                      t_eval=(_ODE_T,), rtol=1e-12, atol=1e-14)
    u_tight = real(tm.gap_twin(tight.y[0, -1], tight.y[1, -1]))
    # (iii) float64 rounding of the closed-form u* against the integrated state, 1e-12 (1 +
    # |u*|), a 1e3 margin on the ~1e-15 seen where the flow has converged.
    rounding = 1e-12 * (1 + abs(u_star))
    ode_tol = abs(u_ode - u_half) + 2 * abs(u_ode - u_tight) + rounding
    # The premise of (i), measured: a geometric approach with lam T/4 >= ln 2 moves u over
    # [T/2, T] at most half as much as over [T/4, T/2]; the excess over that (beyond the
    # rounding floor) is how far the premise fails.
    premise = max(0.0, abs(u_ode - u_half) - 0.5 * abs(u_half - u_quarter))
    seen = _end_set(u_ode, u_star)
    end_set = Part(
        "(e, w, b) ODE: end set vs the rule's basin", _END_CODE[predicted], _END_CODE[seen],
        0.0 if seen == predicted else 1.0, 0.0,
        "discrete outcome at the ODE's limit: the end point's gap is nearer u* (Gamma*) or "
        "0 (the unigram line)", details={"u_end": u_ode, "u_star": u_star}, kind="symbolic")
    end_gap = exact(
        "(e, w, b) ODE: end gap vs the predicted set's gap", target, u_ode, ode_tol,
        "the ODE integrated to T = 1e5 (the slowest approach, e -> 0 on the unigram line, "
        "is exponential at rate 4 l'(0)(1 + 2w|w|) in u); allowance from the solution: the "
        "change of u over [T/2, T] (what a geometric approach can still move) plus twice the "
        "change under 100-fold tighter solver tolerances (the solver's error), plus float64 "
        "rounding 1e-12 (1 + u*).  The full "
        "model's end gap is its own part (the same allowance, from its run)",
        details={"u_at_half_T": u_half, "u_tight_tolerances": u_tight}, kind="symbolic")
    geometric = exact(
        "(e, w, b) ODE: geometric-approach premise of the end-gap allowance", 0.0, premise,
        rounding,
        "the motion over [T/2, T] beyond half the motion over [T/4, T/2] (0 for a geometric "
        "approach at rate >= 4 ln 2 / T, which the remaining-motion bound assumes); "
        "allowance: the same float64 rounding floor",
        details={"u_at_quarter_T": u_quarter}, kind="symbolic")
    return end_set, end_gap, geometric, {"u_ode": u_ode, "rounding": rounding,
                                         "ode_end": sol.y[:, -1].tolist()}


def _resemble_full_end_set(res, predicted: str, p, q, u_star: float, u_full: float,
                           ended: bool) -> Part:
    """Full GD's end set against the rule's basin (kind "simulation": run_rank_one is GD by
    torch autograd).  Full GD at t_end need not have ended (the position scalar moves at
    rate 1/N'): a run that has ended is read at the critical set nearest its gap; otherwise
    from what it can still reach: GD descends (measured below), the unigram line has loss
    H(pi) everywhere, so a run below H(pi) can no longer end there ("global"); a run on the
    unigram line (|u| within the gap allowance, loss not below H(pi)) is "local"; anything
    else has not decided by t_end.  Where both readings are available they must agree (else:
    undecided, with both)."""
    unigram = real(tm.unigram_loss(p, q))
    loss_end = float(res.loss[-1])
    if loss_end < unigram - 1e-12:
        by_descent = "global"
    elif abs(u_full) <= _END_GAP_TOL:
        by_descent = "local"
    else:
        by_descent = "undecided"
    nearest = _end_set(u_full, u_star)
    if not ended:
        seen_full = by_descent
    elif by_descent in ("undecided", nearest):
        seen_full = nearest
    else:
        seen_full = "undecided"
    # The reading's premise, measured: GD descends over the records since the loss first fell
    # below H(pi) (the segment the "global" reading rests on).  Where it rose there, the
    # reading is not available: the part is not decided (inconclusive, with the rise), since
    # a failed premise of our reading refutes the reading, not the paper's statement.
    steps_up = np.diff(res.loss)
    below = np.flatnonzero(res.loss < unigram - 1e-12)
    after = steps_up[below[0]:] if below.size and below[0] < steps_up.size else steps_up[:0]
    rise_after = float(max(0.0, np.max(after))) if after.size else 0.0
    descent_holds = rise_after <= 1e-12
    end_err = 0.0 if seen_full == predicted else (math.inf if seen_full == "undecided" else 1.0)
    end_model = (
        "discrete outcome: where the run has ended (the end-gap part's premise over every "
        "record of [T/2, T], and u(T) within its remaining motion of a critical set), the "
        "critical set nearest its gap at t_end, as for the ODE, if the descent reading does "
        "not contradict it (else not decided); otherwise read from what it can still "
        "reach: below the unigram loss H(pi) at t_end "
        "(a descending run can no longer reach the unigram line, where the loss is H(pi)) is "
        "Gamma*'s basin; on the unigram line (|u| <= 0.05, loss >= H(pi)) the local one; "
        "neither: not decided.  "
        "A start already below H(pi) (details: below_unigram_at_start) settles a 'global' "
        "reading by the start and the descent alone, not by the dynamics")
    end_details = {"u_end": u_full, "loss_end": loss_end, "unigram_loss": unigram,
                   "u_star": u_star, "loss_start": float(res.loss[0]),
                   "largest_rise_after_below_unigram": rise_after,
                   "below_unigram_at_start": bool(res.loss[0] < unigram - 1e-12),
                   "ended": ended, "end_set_nearest": nearest, "end_set_by_descent": by_descent,
                   "read_from": "nearest critical set (run ended)" if ended else "descent"}
    name = "full-model GD: end set vs the rule's basin"
    if seen_full == "global" and not descent_holds and not ended:
        return Part.bounded(
            name, _END_CODE[predicted], _END_CODE[seen_full], end_err, 0.0,
            max(1.0, end_err), 0.0,
            end_model + ".  Not decided here: the descent premise fails (the loss rose by "
            f"{rise_after:.3g} after falling below H(pi)), so the 'global' reading is not "
            "available", details=end_details, kind="simulation")
    if (seen_full == "global" and predicted == "global" and not ended
            and end_details["below_unigram_at_start"]):
        # issue 32, item 6 (a referee read, stop 66): the descent reading of a start already
        # below H(pi) is 'global' whatever the dynamics do, so it confirms nothing; it still
        # refutes a 'local' prediction (a descending run below H(pi) cannot reach the line)
        return Part.bounded(
            name, _END_CODE[predicted], _END_CODE[seen_full], end_err, 0.0,
            max(1.0, end_err), 0.0,
            end_model + ".  Not decided here: the run has not ended by t_end and it started "
            "below H(pi), so its 'global' reading rests on the start alone",
            details=end_details, kind="simulation")
    return Part(name, _END_CODE[predicted], _END_CODE[seen_full], end_err, 0.0, end_model,
                details=end_details, kind="simulation")


@claim(
    id="canonical_ode_resembles_full",
    statement="from a rank-one init the paper's canonical (e, w, b) ODE and full-model GD "
              "closely resemble each other: both end in the basin the energy rule gives, "
              "on its critical set (u -> u* on Gamma*, u -> 0 on the unigram line; full GD's "
              "end gap judged where its run has reached its asymptotic approach)",
    source="the paper's canonical (e, w, b) model (the authors' code, Markov-Fixed) and its "
           "statement that the canonical dynamics closely resemble the full model's "
           "(loss-comparison.pdf, their rebuttal); the basin rule is Fig. 1b/d",
    kind="reduced-vs-full",
    strategy=_resemble_params(),
    theory={"rule": tm.basin},
    control={"rule": _swapped_rule},
    control_description="the basin rule of the other regime (p+q > 1 <-> p+q < 1)",
    cost="slow",
    examples=_TRACKS_EXAMPLES,
    notes="Replaces the order-of-convergence test of the (e, w, b) ODE against full GD, "
          "which failed by construction (the ODE is a reparametrised flow with another "
          "metric: it ties the position scalar to -e/2 and both FF factors to w, which full "
          "GD moves separately), so no error in the ODE could be caught by it.  What the "
          "paper says is that the two closely resemble each other: same basin, same end "
          "set.  The path is markov.canonical_metric_path's (the metric the full parameters "
          "induce is not a multiple of the identity, so no time change maps this ODE onto "
          "the full model's projected flow; that claim compares the metric flow).  "
          "Design fix (issue 18, after the quick run of main refuted it on the "
          "loss-comparison chain from (1, -1, 0)): the full model's end set was read as the "
          "critical set nearest its gap at t_end, but that run had not ended: its gap was "
          "still rising toward u* and its loss was already below the unigram loss, which a "
          "descending run cannot climb back to.  The start is inside the paper's region "
          "(Fig. 1's box, the authors' chain; GD, not the authors' AdamW, as the reviewers' "
          "like-for-like comparison asks), so the failure was the design's: the full run's "
          "end set is now read from what it can still reach (below H(pi): Gamma*'s basin; "
          "on the unigram line: the local one; neither: undecided, which fails), with the "
          "descent it rests on measured (a part then; since 3974efa in the end-set part's details).  The ODE, integrated to its limit, keeps "
          "the nearest-set reading.  Issue 32: a start already below H(pi) reads 'global' "
          "by the descent alone, so full GD's end gap is judged too, where its run shows a "
          "geometric approach (the ODE's allowance, from the run itself).  At quick (run of "
          "a13b844's code) it is judged from (1, -1, 0) at p = 0.5, q = 0.8 (u = -1.38629 "
          "against u* = -1.38629, error 2.1e-12 against 1.2e-6) and from (0.5, 0.3, 0.5) "
          "(0 against 0); from (1, -1, 0) at p = 0.2, q = 0.3 full GD has not reached its "
          "approach by t_end = 200 (u 0.339, 0.452, 0.776 at T/4, T/2, T against u* = 2.234), "
          "so no end gap is judged there (details.full_end_gap_undecided).  Recording every "
          "10 time units instead of every 20 (for the T/4 record) showed full GD's loss "
          "rising on that example by 2.0e-4 between t = 10 and t = 20 (loss 0.845 at t = 0, "
          "0.597 at t_end = 200; the rise, 0.64314 -> 0.64334, is after the loss fell below "
          "H(pi) = 0.673, so it is in the segment the reading rests on): as a failing part "
          "(allowance 1e-12) that premise refuted the claim at quick (verify quick at "
          "a13b844's code; it held at quick before, with records at t = 0, 20, ..., which "
          "do not sample that rise).  A failed premise of our reading refutes the reading, "
          "not the paper's statement, so the premise now leaves the full model's end-set "
          "part undecided there (inconclusive, the rise in its error model and details), "
          "and the claim is not settled at quick on that example: a finding about our "
          "reading (GD at lr 0.4 on that chain does not descend monotonically), not about "
          "the paper.  A reading that does not rest on descent (the end gap of a run long "
          "enough to reach its asymptotic approach) would settle it; no profile ran one.  "
          "Issue 39 (stop 43): that reading is now the claim's first.  A run that has "
          "ended (the geometric premise over every record of [T/2, T], and u(T) within its "
          "remaining motion of a critical set) is read at the critical set nearest its gap, "
          "as for the ODE (a contradicting descent reading leaves it undecided); a run that "
          "has not falls back on the descent reading.  quick's t_end is 1000 (was 200; 5x "
          "that claim's quick cost): the probe numerics.markov.run_rank_one(RankOneRun(0.2, "
          "0.3, 1, -1, 0, lr=0.4, t_end=1000, record_dt=50, seq_len=64)) at d4217d5 sat at u* "
          "from t = 400 on (u 0.4525, 0.7761, 1.1779, 2.2336 at t = 100, 200, 300, 400); the "
          "size was set from that trajectory, before the claim was run at it.  The probe was "
          "made because the claim was undecided at quick, so the size is not independent of "
          "that outcome; it was chosen to put T/4 past the approach, not from a verdict.  Resolution (`tdcheck mutate markov --resolution` at quick, 3f92409): "
          "> 50 %.  Its parts read the end gap against u* (optimal_gap, rejected at 1 %) "
          "and the end set against the basin rule.  energy, saddle_point, separatrix_energy, "
          "gap, ff_gain and logits change no simulation part's numbers up to 50 % "
          "(not_in_simulation_parts): the first three enter the full-model parts only "
          "through which basin the rule names (tm.basin reads the energy and the saddle), a "
          "label a scale does not change at the pinned starts (the two with w0 < 0 start at "
          "E = 0 against E_sep = -0.847; the one with w0 > 0 is in the local basin whatever "
          "E), and the last three enter the integrated (e, w, b) ODE (system -> reduced_loss "
          "-> logits -> gap -> ff_gain), which the symbolic parts read.  binary_entropy, "
          "unigram_loss and stationary_distribution move its numbers without failing a part.  "
          "Issue 32 asks <= 10 % at quick: out of reach for energy, saddle_point and "
          "separatrix_energy inside this claim's region, at any size.  saddle_point enters "
          "tm.basin only through the w-boundary w_saddle = -1/sqrt 2: a start below the "
          "separatrix by at least 0.1 with e0 >= 0.5 has |w0| <= 0.339 or >= 1.160, so a "
          "label changes only if w_saddle is scaled by at most 0.479 or at least 1.640 (> 50 "
          "%).  The region keeps starts "
          "at least 0.1 from E_sep = -(1 + ln 2)/2 (_resemble_params: the model mismatch "
          "between the b*-flow whose basins the rule gives and the trained bias), and from "
          "0.1 away a whole-output scale changes a start's label only beyond 10.6 % (E scaled "
          "down from E_sep - 0.1), 11.8 % (E_sep scaled, either side) or 13.4 % (E scaled up "
          "from E_sep + 0.1): for energy and separatrix_energy the ladder's next rung, 20 %, "
          "is the best any start in the region can give (arithmetic on the closed forms, "
          "not a run).  Stop 66 (a referee read): (1) the functions that hold the measured "
          "> 50 % (ece1fba's run) are not those three, which the engine leaves out "
          "(not_in_simulation_parts, with gap, ff_gain and logits), but unigram_loss and "
          "the two under it (binary_entropy, stationary_distribution): H(pi) is the "
          "threshold of the full model's descent reading (a run below H(pi) reads "
          "'global'), a label read-out whose scale changes a label only where it crosses a "
          "run's end loss or contradicts the nearest-set reading, so no size of run brings "
          "it to 5 %; the one quantitative prediction the simulation parts compare, the end "
          "gap against optimal_gap, is rejected at 1 %.  (2) A run that has not ended and "
          "started below H(pi) no longer reads 'global' by its start: its end-set part is "
          "not decided (inconclusive), so no example can hold by the descent alone (item 6 "
          "of the issue); at quick every pinned run has ended, so no verdict there changes.  "
          "(3) The 0.1 band and e0 >= 0.5 of the region are chosen (the band as the model "
          "mismatch of the b*-flow's basins against the trained bias; e0 from the tracks "
          "claim's window), not derived from a bound on E's drift; said so.",
)
def _check_resemble(params: dict, ctx: Context, *, rule: Callable) -> Evidence:
    """Integrate the (e, w, b) ODE (b trained, theory.markov.system) and run full-model GD
    from the same rank-one init to the same time; both must end on the critical set of the
    basin ``rule`` predicts."""
    p, q, e0, w0, b0 = (params[k] for k in ("p", "q", "e", "w", "b"))
    size = ctx.size(nm.SIZES, "resemble")
    t_end, lr = size["t_end"], size["lr"]
    predicted = rule(e0, w0, p, q)
    u_star = real(tm.optimal_gap(p, q))
    target = u_star if predicted == "global" else 0.0
    ode_set, ode_gap, ode_premise, ode = _resemble_ode(e0, w0, b0, p, q, u_star, target,
                                                       predicted)
    rounding = ode["rounding"]
    res = nm.run_rank_one(nm.RankOneRun(p, q, e0, w0, b0, lr=lr, t_end=t_end,
                                        record_dt=lr * max(1, math.floor(t_end / (20 * lr))),
                                        seq_len=size["seq_len"]),
                          cache=ctx.cache, device=ctx.device)
    u_full = float(res.logits[-1, 1] - res.logits[-1, 0])
    u_q, u_h, moved, full_premise, ended, window = _run_ended(
        res.time, res.logits[:, 1] - res.logits[:, 0], u_star, rounding)
    parts = [ode_set, _resemble_full_end_set(res, predicted, p, q, u_star, u_full, ended)]
    # The full model's end gap, judged (issue 32, item 6: a start already below H(pi) reads
    # "global" by the descent alone).  The same allowance as the ODE's, from the run itself:
    # for a geometric approach with rate lam, lam T/4 >= ln 2, the distance still to go at T
    # is at most the change over [T/2, T]; plus the target's float64 rounding.  GD at a
    # fixed step ends at a critical point of the full model, and on the rank-one manifold
    # with inert attention those are the critical set's (u = u* or the unigram line).  The
    # premise (the change over [T/2, T] at most half that over [T/4, T/2]) is measured; where
    # it fails the run has not reached its asymptotic approach by t_end, the remaining
    # motion is unbounded, and there is no end gap to judge: the part is not built and the
    # evidence says so (details.full_end_gap_undecided), rather than an unmeasured part that
    # no profile's budget would measure (no rate of full GD's approach is derived here).
    undecided = None
    if full_premise:
        parts.append(exact(
            "full-model GD: end gap vs the predicted set's gap", target, u_full,
            moved + rounding,
            "GD integrated to t_end (SIZES resemble); allowance from the run: the change of u "
            "over [T/2, T] (what a geometric approach can still move) plus float64 rounding "
            "1e-12 (1 + |u*|); judged only where the geometric premise holds (the change over "
            "[T/2, T] at most half that over [T/4, T/2]), else reported (the run has not "
            "reached its asymptotic approach)",
            details={"u_at_quarter_T": u_q, "u_at_half_T": u_h, "premise_holds": full_premise,
                     "largest_move_in_last_half": window,
                     "below_unigram_at_start": bool(res.loss[0] < real(tm.unigram_loss(p, q))
                                                    - 1e-12)},
            kind="simulation"))
    else:
        undecided = {"reason": "full GD has not reached a geometric approach by t_end (the "
                               "change of u over [T/2, T] is more than half that over "
                               "[T/4, T/2]): the remaining motion is not bounded",
                     "u_at_quarter_T": u_q, "u_at_half_T": u_h, "u_end": u_full,
                     "target": target}
    parts += [replace(ode_gap, details={"u_full_end": u_full,
                                        "full_gap_to_target": abs(u_full - target),
                                        **ode_gap.details}), ode_premise]
    return Evidence(tuple(parts), {"predicted": predicted, "t_end": t_end, "lr": lr,
                                   "full_end_gap_undecided": undecided,
                                   "ode_end": ode["ode_end"],
                                   "full_loss_end": float(res.loss[-1])})


# ---------------------------------------------------------------------- 9b. metric path
@cache
def _projection() -> Callable:
    """theory.markov.canonical_projection, lambdified: (e, s, c1, c2, b, N') -> (e, w, b)."""
    expr = sp.Matrix(tm.canonical_projection(tm.E, tm.S_POS, tm.C1, tm.C2, tm.B, tm.NPOS))
    return lambdify_numeric((tm.E, tm.S_POS, tm.C1, tm.C2, tm.B, tm.NPOS), expr, "numpy")


def _project(states: np.ndarray, n_targets: int) -> np.ndarray:
    """Rank-one states [T, 5] -> canonical (e, w, b) [T, 3] (orthogonal projection)."""
    f = _projection()
    return np.array([np.asarray(f(*row, float(n_targets)), float).ravel() for row in states])


@cache
def _image_jacobian() -> Callable:
    """d(e, s, c1, c2, b)/d(e, w, b) of theory.markov.rank_one_image, lambdified."""
    image = sp.Matrix(tm.rank_one_image(tm.E, tm.W, tm.B))
    return lambdify_numeric((tm.E, tm.W, tm.B), image.jacobian(sp.Matrix([tm.E, tm.W, tm.B])),
                       "numpy")


def _lstsq_project(delta: np.ndarray, at: tuple, n_targets: int) -> np.ndarray:
    """A rank-one displacement [5] -> its (e, w, b) coefficients on the family's tangent at
    ``at`` by least squares in the full parameters' metric M (theory.markov.rank_one_image's
    Jacobian and rank_one_metric): the orthogonal projection, computed without
    theory.markov.canonical_metric or canonical_projection."""
    jac = np.asarray(_image_jacobian()(*at), float)
    weights = np.array([real(m) for m in tm.rank_one_metric(n_targets)])
    if not (np.all(np.isfinite(weights)) and np.all(weights > 0) and np.all(np.isfinite(jac))):
        # a wrong theory's metric (a weight <= 0) is no metric: no projection, and the part
        # that reads it fails on the NaN (the weights are not a number a check could use)
        return np.full(jac.shape[1], np.nan)
    root = np.sqrt(weights)
    return np.linalg.lstsq(root[:, None] * jac, root * delta, rcond=None)[0]


# (reduced system, position rows the metric counts beyond the N' = N - 1 that carry a target)
_METRIC_THEORIES = {"metric": ("metric", 0), "all_rows": ("metric", 1)}


def _metric_norm(delta: np.ndarray, n_targets: int) -> np.ndarray:
    """|J delta|: the distance in the full parameters between two points of the canonical
    family, sqrt(delta^T G delta) with G = theory.markov.canonical_metric (the same norm
    for check and control)."""
    g = np.array([real(x) for x in tm.canonical_metric(n_targets)])
    with np.errstate(invalid="ignore"):  # a wrong theory's G < 0 gives NaN: the part fails
        return np.sqrt(np.einsum("ti,i,ti->t", delta, g, delta))


@claim(
    id="canonical_metric_path",
    statement="[our narrowing, not the paper's statement: narrowed to parameter space "
              "after its first quick run, beside the finding in notes] from a "
              "rank-one init, full-model GD read in the canonical coordinates (its "
              "orthogonal projection onto the canonical family, in parameter space) starts "
              "along the paper's (e, w, b) model in the metric G = J^T J that the full "
              "parameters induce, G = diag(1 + N'/4, 8, 1): the first step is the metric "
              "flow's velocity, and the distance between the two paths grows as t^2 (second "
              "order in time), before the first ReLU kink",
    source="the paper's statement that the canonical dynamics closely resemble the full "
           "model's (the authors' loss-comparison.pdf, their rebuttal) and its canonical "
           "(e, w, b) model (the authors' code, Markov-Fixed); theory.markov.canonical_metric "
           "and metric_system (our derivation)",
    kind="reduced-vs-full",
    strategy=_rank_one_params(),
    theory={"metric": "metric"},
    control={"metric": "all_rows"},
    control_description="the metric counting all N position rows instead of the N' = N - 1 "
                        "that carry a target (g_e = 1 + N/4 instead of 1 + N'/4: 1.5 % off "
                        "at N = 64), a near miss",
    cost="slow",
    examples=_TRACKS_EXAMPLES,
    notes="Issue 18, item 2 (the path part).  Our derivation: the canonical map (e, w, b) -> "
          "(e, s = -e/2, c1 = 2|w|, c2 = 2w, b) pulls the full parameters' Euclidean metric "
          "back to G = diag(1 + N'/4, 8, 1) (the N' position rows that carry a target each "
          "hold s alpha; the two FF factors each move by 2 dw).  G is not a multiple of the "
          "identity, so no single time change maps the paper's ODE onto the full model's "
          "projected flow; the full model's velocity at a point of the family, projected "
          "onto it, is -G^{-1} grad L (theory.markov.metric_system).  The full flow does not "
          "stay on the family: its FF factors stay balanced (c1 = |c2|, exact, a part), but "
          "its position scalar moves at rate 1/N' and does not follow -e/2 (reported: "
          "details.off_family).  So what the derivation predicts for the path is tangency "
          "(same point, same velocity at t = 0; the gap O(t^2)), not agreement over the "
          "whole window: the gap's size over the window is reported, not judged.  The "
          "identity metric (the paper's ODE in its own time) differs in velocity, so its "
          "gap is O(t).  The tangency is in parameter space, not in the function: the "
          "logits' gap u = f1 - f0 of full GD also moves with the velocity's part off the "
          "family (wte moves at rate 1, the position rows at 1/N'), which the projection "
          "does not see, so u's rate at the init differs between full GD and the metric "
          "flow at first order (details.u_rate_at_init, reported, not judged; the exact "
          "description of full GD in the function is markov.canonical_tracks_full's "
          "rank-one restriction).  That limit came from a run: the first quick run of this "
          "claim (session 27, before commit) showed full GD's u moving several times faster "
          "than the metric flow's over the ladder, while the paper's ODE in its own time "
          "(then the control) stayed near it, so the statement was narrowed to parameter space "
          "and u's rate at the init is reported beside it (check and control details).  The "
          "control was the identity metric (the paper's ODE in its own time) until the "
          "referee read of session 27: it differs from G by factors 16.75 and 8, so it "
          "could not show that the check sees a small slip in G; counting all N position "
          "rows is one.  Finding (issue 32): the statement registered before that first run "
          "(not kept in the history; in substance, that the metric flow describes full GD's "
          "path, which in the function is what 'closely resemble' is about) does not hold: at "
          "quick (N = 64; run of a13b844's code) the rate of u at the init under full GD is "
          "8.35x the metric flow's from (1, -1, 0) at p = 0.2, q = 0.3 (3.970 against 0.4755), "
          "11.3x at p = 0.5, q = 0.8 (0.2824 against 0.0249) and 25.2x from (0.5, 0.3, 0.5) at "
          "p = 0.5, q = 0.8 (-0.2142 against -0.00849); over the ladder to T = 0.4 full GD's "
          "u moves from -0.823 to -0.216 while the flow's moves from -0.977 to -0.830 (first "
          "example).  The statement above is our narrowing to parameter space, which "
          "the same run holds: path-gap order 1.887, 1.961, 1.980 against 2 (allowance 0.5), "
          "first step to 1e-13.  Stop 66 (a referee read): the word was 'strengthening'; "
          "the statement is narrower than the one it replaced, so it now says narrowing.  "
          "The function-space finding stays in details, not a part: the statement it "
          "refutes was not kept, and a refutation here must quote the statement it refutes "
          "(the paper's own 'closely resemble' is judged on end sets by "
          "markov.canonical_ode_resembles_full).  Resolution (`tdcheck mutate markov "
          "--resolution`, quick, ece1fba): 1 %.",
)
def _check_metric_path(params: dict, ctx: Context, *, metric: str) -> Evidence:
    """Full-model GD at steps h and h/2 from the rank-one image of (e0, w0, b0), projected
    onto the canonical family (theory.markov.canonical_projection), against the (e, w, b)
    flow in the metric ``metric`` on the ladder T/8, T/4, T/2, T."""
    p, q, e0, w0, b0 = (params[k] for k in ("p", "q", "e", "w", "b"))
    size = ctx.size(nm.SIZES, "metric_path")
    seq_len, n_targets = size["seq_len"], size["seq_len"] - 1
    window = _first_kink(p, q, e0, w0, b0, n_targets, size["t_max"])
    t_max = min(size["t_max"], window)
    rung = t_max / 8
    times = rung * np.array([1.0, 2.0, 4.0, 8.0])
    kind, extra_rows = _METRIC_THEORIES[metric]
    sys = _flow(kind)
    values = {tm.P: p, tm.Q: q, tm.NPOS: float(n_targets + extra_rows)}
    values = {k: v for k, v in values.items() if k in sys.params}
    sol = integrate(sys, (e0, w0, b0), t_max, values, t_eval=times)
    tight = integrate(sys, (e0, w0, b0), t_max, values, t_eval=times, rtol=1e-12, atol=1e-14)
    flow, flow_tight = sol.y.T, tight.y.T
    runs = []
    for per_rung in size["steps_per_rung"]:
        res = nm.run_rank_one(nm.RankOneRun(p, q, e0, w0, b0, lr=rung / per_rung,
                                            t_end=t_max, record_dt=rung, seq_len=seq_len),
                              cache=ctx.cache, device=ctx.device)
        runs.append(res)
    idx = [int(round(t / rung)) for t in times]
    proj = [_project(r.state[idx], n_targets) for r in runs]
    gaps = [_metric_norm(pr - flow, n_targets) for pr in proj]
    gap = gaps[-1]  # the smaller step
    # GD is explicit Euler: its error at h/2 is about the change from h to h/2 (first order
    # in the step); the solver's error is estimated as the change under 100-fold tighter
    # tolerances, counted twice
    spread = (_metric_norm(proj[-1] - proj[0], n_targets)
              + 2 * _metric_norm(flow - flow_tight, n_targets))
    local = np.log2(np.maximum(gap[1:], 1e-300) / np.maximum(gap[:-1], 1e-300))
    order = float(local[0])
    higher = float(abs(local[0] - local[1]))
    lo_g, hi_g = np.maximum(gap - spread, 1e-300), gap + spread
    gd_lo = float(np.log2(lo_g[1] / hi_g[0]))
    gd_hi = float(np.log2(hi_g[1] / lo_g[0]))
    lo_o, hi_o = min(gd_lo, order) - higher, max(gd_hi, order) + higher
    dev = abs(order - 2)
    dev_lo = 0.0 if lo_o <= 2 <= hi_o else min(abs(lo_o - 2), abs(hi_o - 2))
    dev_hi = max(abs(lo_o - 2), abs(hi_o - 2))
    # the first GD step (the larger step, recorded every rung: rebuild it from a one-step run)
    h = rung / size["steps_per_rung"][0]
    one = nm.run_rank_one(nm.RankOneRun(p, q, e0, w0, b0, lr=h, t_end=h, record_dt=h,
                                        seq_len=seq_len), cache=ctx.cache, device=ctx.device)
    # projected by least squares, not through canonical_projection: that one divides by the
    # same G as metric_system, so a slip in canonical_metric cancelled in this part
    step = _lstsq_project((one.state[1] - one.state[0]) / h, (e0, w0, b0), n_targets)
    velocity = np.asarray(sys.lambdify("numpy")(0.0, np.array([e0, w0, b0], float),
                                                *(values[x] for x in sys.params)),
                          float).ravel()
    # the logits' gap u at the init: its rate under full GD (the first step's difference
    # quotient) and under the flow (grad u . velocity, theory.markov.gap_gradient), reported
    u_rate_full = float((one.logits[1, 1] - one.logits[1, 0]) - (one.logits[0, 1] - one.logits[0, 0])) / h
    u_rate_flow = float(np.dot(np.asarray(tm.gap_gradient_twin(e0, w0), float).ravel(),
                               velocity[:2]))
    # Kinds: the observed side of all three parts is full-model GD (run_rank_one), projected
    # onto the canonical family; the path gap mixes it with the integrated metric flow, and
    # its kind is that of its observed side: "simulation".
    balance = max(float(np.max(np.abs(r.state[:, 2] - np.abs(r.state[:, 3])))) for r in runs)
    off_family = np.abs(runs[-1].state[idx, 1] + runs[-1].state[idx, 0] / 2)
    u_full = runs[-1].logits[idx, 1] - runs[-1].logits[idx, 0]
    u_flow = tm.gap_twin(flow[:, 0], flow[:, 1])
    return Evidence((
        exact("first GD step, projected, vs the flow's velocity at the init", 0.0,
              float(np.max(np.abs(step - velocity))), 1e-9 * (1 + float(np.max(np.abs(step)))),
              "GD's first step is exactly -lr grad L of the full model; projected onto the "
              "canonical family's tangent (least squares in the full parameters' metric, "
              "theory.markov.rank_one_image's Jacobian J and rank_one_metric M, so G enters "
              "this part only through metric_system) it is lr (J^T M J)^{-1} grad L(e0, w0, "
              "b0) by the chain rule: the difference quotient carries only float64 rounding "
              "of O(1) parameters divided by the step (< 1e-12); allowance 1e-9 "
              "(1 + |projected step|), the full model's side (the same for check and control)",
              details={"full_projected": step.tolist(), "flow": velocity.tolist()}, kind="simulation"),
        exact("FF factors balanced along full GD: max |c1 - |c2||", 0.0, balance, 1e-12,
              "the premise that the family's only off-direction is the position scalar: "
              "dL/dc1 = c2 g and dL/dc2 = c1 g (the logit depends on c1 c2), so a GD step "
              "maps c1^2 - c2^2 to (1 - lr^2 g^2)(c1^2 - c2^2): 0 stays 0 exactly; float64 "
              "rounding of O(1) values over <= 1e3 steps (< 1e-13)", kind="simulation"),
        Part.bounded(
            "path gap (full parameters' distance) vs time: observed order", 2.0, order, dev,
            dev_lo, dev_hi, 0.5,
            "same start and same velocity (the first part) leave a gap O(t^2): observed "
            "order log2(gap(2t)/gap(t)) at the two smallest times of the ladder T/8 .. T; "
            "interval: the gaps -/+ the GD error at step h/2 (the change from step h) and "
            "twice the solver's (the change under 100-fold tighter tolerances), widened by "
            "the change of the order to the next pair (the higher-order terms' reach).  "
            "Allowance 0.5: half the distance to the neighbouring orders 1 (a velocity "
            "mismatch: another metric) and 3",
            details={"times": times.tolist(), "gaps": gap.tolist(),
                     "gaps_step_h": gaps[0].tolist(), "uncertainty": spread.tolist(),
                     "local_orders": local.tolist(),
                     "steps": [rung / k for k in size["steps_per_rung"]]}, kind="simulation"),
    ), {"first_kink_or_t_max": window, "t_max": t_max, "metric": metric,
        "u_rate_at_init": {"full_gd_first_step": u_rate_full, "flow": u_rate_flow},
        "off_family_abs_s_plus_e_over_2": off_family.tolist(),
        "u_full": u_full.tolist(), "u_flow": np.asarray(u_flow, float).tolist(),
        "flow_end": flow[-1].tolist(), "full_projected_end": proj[-1][-1].tolist()})

# ---------------------------------------------------------------------- 10. low rank
def _figure_e1(start: float, d: int) -> float:
    """The E_1 the authors' energy figures draw for W_1 (from its first records) and W_V (at
    the end of training): rank one, E_1 = 1, the statement's "up to 10 %" being the part's
    allowance.  A reading of the figures, not a theory: on the canonical family W_1 is rank
    one by construction (E_1 = 1 identically) and W_V = 0, so nothing derived predicts
    whether training from a random init gets there."""
    return 1.0


def _e1_at_init(start: float, d: int) -> float:
    """Control: no structure emerges, E_1 stays at its value at init."""
    return start


@claim(
    id="low_rank_emerges",
    statement="empirical (the authors' energy figures): from random init W_1 is rank one "
              "up to 10% of its energy (E_1 >= 0.9) over the whole window from iteration 100 "
              "to the end, and W_V by the end of training (E_1 >= 0.9 at the last iteration)",
    source="the authors' energy figures (Markov-Simple/figures/energy1.py for W_V, "
           "energy2.py for W_1, committed at f3a2ec1; cited here as the paper's Fig. 5, a "
           "placement the paper text available to us does not confirm); the figures' "
           "reading, rank one, for both matrices: no theory of the paper or of ours predicts "
           "that a random init becomes rank one (the canonical model assumes it)",
    kind="empirical",
    strategy=_distinguishable_pq(),
    theory={"prediction": _figure_e1, "w_v": _figure_e1},
    control={"prediction": _e1_at_init, "w_v": _e1_at_init},
    control_description="no structure emerges: E_1 stays at its value at init",
    expected="holds",
    expected_at={"test": "inconclusive", "quick": "inconclusive", "ci": "inconclusive"},
    measured_at="thorough",
    cost="slow",
    examples=(Example({"p": 0.2, "q": 0.3}, via="Fig. 5's chain (the authors' schedule.sh, "
                                                "project markov-simple-init-energy)"),
              Example({"p": 0.5, "q": 0.8}, via=_FIG4)),
    positive=Positive(
        {"p": 0.2, "q": 0.3, "matrices": ("W_1",), "judge_reduced": True,
         "size_profile": "quick"},
        "the same check, judged at its design size (quick's: at thorough it would otherwise "
        "run the check's own run and statistic), on W_1 from the same standard Gaussian "
        "init at p = 0.2, q = 0.3 (random init: no matrix starts rank one), where W_1 "
        "concentrates on one direction by iteration 100 and stays there to the end of "
        "quick's 1000 iterations (the statistic: each seed's lowest E_1 from iteration 100)"),
    notes="The earlier refutation (W_V at p = 0.2, q = 0.3 dipping below 0.9 late in "
          "training at d = 4, N = 32) was at a size that is not Fig. 5's, and a size scan "
          "saw the dip shrink as N grows, so it was withdrawn.  Session 28 read the energy "
          "figures' provenance in the authors' history (no run): their runs (src/schedule.sh, "
          "3 seeds per init) predate f3a2ec1's Embedding model, so they are the linear-"
          "embedding model at d = 8, N = 1024, 5000 iterations, lr 2e-3 (numerics.markov."
          "SIZES fig5 thorough, 16 seeds, judged there); and in them W_V's E_1 starts near "
          "0.4 and passes 0.9 only late, so the statement, which held W_V to 0.9 from "
          "iteration 100 as W_1, was our misreading: W_V is now judged at the end of "
          "training (changed before any run at the figure's size).  Quick runs the Markov-Simple2 runs of markov.gaussian_init_trap and "
          "reports them without judging.  The earlier positive control started from the "
          "authors' constant initialisation, where W_1 is rank one by construction; it is "
          "replaced by W_1 from Gaussian init.  Issue 32: W_1's predicted E_1 was a "
          "function returning 1.0; a later session made it theory.markov.rank_one_energy, "
          "the E_1 of W_1 on the rank-one manifold the canonical solution lives on.  A "
          "referee read (stop 66) graded that defective: the E_1 of any rank-one matrix is "
          "1, so the function had no content a slip of the paper's theory could move, and "
          "W_V's value was the figure's reading anyway.  The claim is now what it always "
          "was, the authors' figures' observation: kind empirical, both predictions the "
          "figures' reading (E_1 = 1, allowance 0.1), the control the null (no structure "
          "emerges: E_1 stays at its init value), and rank_one_energy is removed from "
          "theory.markov (no claim consumed anything else of it).  With no theory consumed "
          "its resolution is n/a.  Judged only at the figures' configuration (the figure "
          "rule of verify.markov._judged): the thorough run below decided it with its 16 "
          "seeds (W_1's error interval [0.312, 0.370] against 0.1), so no other size is "
          "planned.  The positive control's description now says what it measures (each "
          "seed's lowest E_1 from iteration 100 to the end of quick's run; it said 'within "
          "the first 100 iterations'); the quick verify of stop 66 (9fd3671, empty cache) "
          "passed it: 0.9895, error 0.0105 [0.0066, 0.0144] against 0.1, 8 seeds, every "
          "seed's minimum at iteration 100.  "
          "Finding (thorough campaign from a clone at 5d7ea5d, judged 2026-12-05, "
          "results/thorough/markov/low_rank_emerges.md): refuted, not as expected.  W_V "
          "holds (end E_1 0.988 [0.985, 0.990] at p = 0.2, q = 0.3), but W_1 leaves the "
          "rank-one manifold late: at p = 0.2, q = 0.3 its seed-mean E_1 is 0.97 at "
          "iteration 100 and 0.99 at 200, 0.82 at 2000 and 0.67 at 5000 (each seed's "
          "minimum from 100: 0.657, error [0.312, 0.370] against 0.1); at p = 0.5, q = 0.8 "
          "the minimum is 0.815 (seed means 0.96 at 200, 0.91 at 5000).  That run also "
          "measured the per-seed spread the sizing above needs (minima 0.60-0.74 and "
          "0.77-0.88 over 16 seeds).  The positive control failed with the same numbers: "
          "it runs this check's statistic on this run, so it is not a separate control; "
          "its description (concentration within the first 100 iterations) is what it "
          "should measure (issue 32).  It now runs at its design size, quick's "
          "(size_profile, as good_init_escapes' positive control), so at thorough it no "
          "longer repeats the check; expected stays holds (set before the run), and the "
          "README's paper-scale table reports the refutation as a finding.",
)
def _check_low_rank(params: dict, ctx: Context, *, prediction: Callable,
                    w_v: Callable) -> Evidence:
    """From Gaussian init, E_1 of W_1 is near 1 (rank one) over the whole window from
    iteration 100 to the end of training, and E_1 of W_V by the end (the authors' energy
    figures).

    ``prediction(E_1 at init, d)`` and ``w_v(E_1 at init, d)`` are W_1's and W_V's E_1 as
    the authors' figures draw them (:func:`_figure_e1`; the control: the value at init).
    The
    statistic is seed-level: for W_1 each seed's lowest E_1 over the window (a run stays
    rank one only if its worst time does), for W_V each seed's last E_1, averaged over
    seeds with a Student-t interval.  One
    interval on one pre-declared statistic: picking the worst time of the seed-mean curve
    after seeing it, and then quoting a pointwise interval there, would not hold its
    stated confidence (a selection over the recorded times).
    """
    p, q = params["p"], params["q"]
    budget = _capped_size(ctx, "fig5", params.get("size_profile"))
    res = nm.run_full(nm.adam_run_config(p, q, "gaussian", budget), cache=ctx.cache,
                      device=ctx.device)
    window = res.steps >= 100
    judged = _judged(budget, params, about="figure")
    matrices = params.get("matrices", ("W_V", "W_1"))
    parts = []
    for name, spectra in (("W_V", res.spectrum_wv), ("W_1", res.spectrum_w1)):
        if name not in matrices:
            continue
        e1 = spectra[:, :, 0]  # [seed, time]
        predict = prediction if name == "W_1" else w_v
        pred = float(predict(float(e1[:, 0].mean()), res.run.config.d))
        if name == "W_1":  # per seed: the lowest E_1 in the window
            stat, what = e1[:, window].min(axis=1), "each seed's minimum from iteration 100"
            at = res.steps[window][e1[:, window].argmin(axis=1)]
        else:  # W_V: per seed, E_1 at the last record (the authors' figure: late)
            stat, what = e1[:, -1], "each seed's value at the end of training"
            at = np.full(e1.shape[0], res.steps[-1])
        parts.append(over_seeds(
            f"{name}: top singular-value energy E_1, {what}",
            pred, stat, 0.1,
            "rank one up to 10% of the squared singular values, as the authors' energy "
            "figures show for random init (W_1 near 0.93 from its first record on; W_V from "
            "about 0.4 to 0.94 at the end of training).  Interval: Student-t over seeds on "
            "each seed's statistic",
            details={"seed_argmin_iteration": at.tolist(),
                     "mean_E1_over_time": e1.mean(0).tolist()}, kind="simulation"))
        if not judged:
            parts[-1] = _reported(parts[-1], _NOT_FIGURE)
    return Evidence(tuple(parts), {"steps": res.steps.tolist()})


# ---------------------------------------------------------------------- 11. multi-state
# Which level a trained seed is at.  The two-way reading (nearer one level than the other)
# assumes the landscape has only the two critical values; for S > 2 that is not shown, and
# partial solutions (theory.markov.symmetric_partition_levels) lie between them.  So each
# seed gets a band from what can still move its final loss at the run's size, and is at a
# level only if the level lies in its band:
#
# * evaluation noise: the final loss is the mean over the shared evaluation sequences of the
#   Rao-Blackwellised per-sequence loss; its standard error over those sequences gives a
#   two-sided 99 % normal interval on the loss the same weights have on the chain (an
#   interval on the measurement, not an allowance);
# * finite-time gap: the run stops before the loss has settled.  Below the final loss the
#   band extends by the drop of the recorded loss over the second half of the run (the
#   loss at the middle record minus the final one, clipped at 0): the bound assumes the
#   loss would fall no further after the run than over its second half, over which the
#   schedule's rate is annealed down to its floor.  A single record interval is too short
#   for this: there the drop is of the order of the optimiser's fluctuation and can be
#   negative;
# * a seed leaving a level: above the final loss the band reaches the larger of the last
#   two recorded losses (each with its own evaluation interval), so a seed that has just
#   started to leave a plateau is credited with the level it was at one record before.
#
# A seed is at the unigram level or at the bigram level if that level lies in its band
# (both: the nearer), else at neither.  A seed at neither counts against the prediction.
_LEVEL_CONFIDENCE = 0.99


def _seed_bands(res: nm.FullRunResult) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) ends of each seed's band on the level its final loss is at (above)."""
    from numerics.stats import normal_quantile

    z = normal_quantile(_LEVEL_CONFIDENCE)
    loss, se = res.eval_loss, res.eval_se
    mid = int(np.searchsorted(res.steps, res.steps[-1] / 2))
    gap = np.clip(loss[:, mid] - loss[:, -1], 0.0, None)
    lower = loss[:, -1] - z * se[:, -1] - gap
    upper = (loss[:, -2:] + z * se[:, -2:]).max(axis=1)
    return lower, upper


def _classify(final: np.ndarray, lower: np.ndarray, upper: np.ndarray,
              levels: dict) -> list:
    """Per seed, the name of the level of ``levels`` ({name: loss}) inside its band, the
    nearer one if several, else None."""
    out = []
    for f, lo, hi in zip(final, lower, upper, strict=True):
        inside = [(abs(f - v), k) for k, v in levels.items() if lo <= v <= hi]
        out.append(min(inside)[1] if inside else None)
    return out


def _fraction_part(name: str, hits: np.ndarray, error_model: str, **details) -> Part:
    """The fraction of seeds with ``hits`` true, with a Clopper-Pearson interval (99 %);
    the hypothesis is that most do (fraction > 1/2, an error 1 - fraction below 1/2)."""
    from scipy.stats import beta

    n, k = int(hits.size), int(hits.sum())
    if n == 0:
        # nothing to judge is not a pass: the part is inconclusive, not held (it held
        # vacuously before, issue 18's multi_state review)
        part = Part.unmeasured(name, 0.5, "no seed to judge (" + error_model + ")", kind="simulation")
        return replace(part, details={"seeds": 0, **details})
    lo = float(beta.ppf(0.005, k, n - k + 1)) if k > 0 else 0.0
    hi = float(beta.ppf(0.995, k + 1, n - k)) if k < n else 1.0
    frac = k / n
    part = Part.bounded(
        name, 1.0, frac, 1.0 - frac, 1.0 - hi, 1.0 - lo, 0.5,
        error_model + "; the fraction with an exact Clopper-Pearson 99 % interval over "
        "seeds.  Allowance 0.5: it holds if most seeds do (an error 1 - fraction below 1/2)",
        details={"seeds": n, "hits": k, "fraction": frac, "fraction_interval": [lo, hi],
                 **details}, kind="simulation")
    if n < _FRACTION_SEEDS:
        # every caller's rule (a referee read, stop 66, found multi_state's positive control
        # judged at 4 seeds, where it could never pass)
        part = _reported(part, f"{n} seeds: below {_FRACTION_SEEDS} seeds the fraction's 99 "
                               "% Clopper-Pearson interval always contains 1/2, so the part "
                               "can neither pass nor fail")
    return part


def _partial_levels(states: int, p: float) -> dict:
    """The partial-solution levels strictly between unigram and bigram: the partitions of
    the symmetric S-state chain other than one block and S blocks (none for S = 2)."""
    if states == 2:
        return {}
    levels = tm.symmetric_partition_levels(p, states)
    return {str(k): float(v) for k, v in levels.items() if 1 < len(k) < states}


def _check_switching(params: dict, ctx: Context, *, trapped: Callable) -> Evidence:
    """Which level small Gaussian init ends at, for each chain in ``params["cases"]``
    ((states, p, q); q is used by the binary chain only): the three-way split of the seeds
    (unigram, bigram, neither; the bands above), and where the seeds at neither are."""
    parts = []
    for states, p, q in params["cases"]:
        res = _adam(ctx, p, q, "gaussian", seed=params["seed"], states=states)
        uni, bi = _levels(states, p, q)
        predicted = "unigram" if trapped(states, p, q) else "bigram"
        final = res.eval_loss[:, -1]
        lower, upper = _seed_bands(res)
        at = [k or "neither" for k in _classify(final, lower, upper,
                                                {"unigram": uni, "bigram": bi})]
        partial = _partial_levels(states, p)
        neither = np.array([a == "neither" for a in at])
        at_partial = _classify(final[neither], lower[neither], upper[neither], partial)
        label = f"S={states}, p={p}" + (f", q={q}" if states == 2 else "")
        common = {"unigram": uni, "bigram": bi, "iteration": int(res.steps[-1]),
                  "final_loss_per_seed": final.tolist(), "band_lower": lower.tolist(),
                  "band_upper": upper.tolist(), "level_per_seed": at}
        parts.append(_fraction_part(
            f"{label}: fraction of seeds at the level the rule predicts (three-way)",
            np.array([a == predicted for a in at]),
            "per seed a three-way decision: at the unigram level, at the bigram level (the "
            "level lies in the seed's band: 99 % evaluation interval, widened below by the "
            "loss drop over the run's second half and above to the previous record; "
            "verify/markov.py), or at neither, which counts against the prediction (the "
            "predicted level is in details: the part keeps one name under check and control, "
            "so a control predicting the other level is compared part for part)",
            predicted=predicted, predicted_level=uni if predicted == "unigram" else bi,
            E_S_minus_1={"W_V": float(np.median(res.spectrum_wv[:, -1, states - 2])),
                         "W_1": float(np.median(res.spectrum_w1[:, -1, states - 2]))},
            **common))
        if not partial:
            # S = 2: no partition lies between one block and S blocks, so there is no
            # partial level to find; a seed at neither already counts against the first part
            continue
        parts.append(_fraction_part(
            f"{label}: fraction of the seeds at neither level that are at a partial level",
            np.array([a is not None for a in at_partial]),
            "per seed at neither level, whether a partial-solution level (a partition of "
            "the states, theory.markov.symmetric_partition_levels) lies in its band (the "
            "same band); not measured when no seed is at neither",
            partial_levels=partial, partial_level_of_neither_seeds=at_partial, **common))
    return Evidence(tuple(parts))


NOTES_MULTI = (
    "Each case reports the three-way split of the seeds (unigram, bigram, neither) with an "
    "exact interval, not the seed-mean loss, and not a nearest-level reading, which would "
    "attribute a seed at a partial solution to one of the two levels.  The rule is "
    "theory.markov.small_init_trapped; the partial levels are "
    "theory.markov.symmetric_partition_levels.  The authors' multi-state runs are 5000 "
    "iterations (their loss-states.py): ci and thorough run that length, quick runs 1000.  "
    "The rank S - 1 question (the reviewers') is reported in details (E_S_minus_1), not "
    "tested.  Verdict change at quick: held under the two-way reading (nearest of the two "
    "levels), inconclusive under the three-way one (quick run of commit 6d47367): at S = 5, "
    "p = 0.9, 2 of 8 seeds at ln S and 6 at neither (final losses 1.6004 to 1.6017), each "
    "of the 6 with a partial level in its band, (1, 4) at 1.6006 or (2, 3) at 1.6015.  The "
    "partial-level part resolves little there: four of those bands are wider than 0.006, "
    "more than the 0.001 between those two levels, and five partial levels share the "
    "0.037 between ln S and the entropy rate.  At ci, the authors' 5000 iterations (run of "
    "commit 9c30adf, 8 seeds, d = 8, N = 32): refuted, 2 of 2 examples.  At p = 0.9, where "
    "the rule predicts ln S, no seed ends at ln S: at S = 5 all 8 are at a partial level "
    "((1, 1, 3) for 7, (1, 4) for 1), at S = 3 4 are at the bigram level and 4 at the (1, 2) "
    "partial level.  At S = 3, p = 0.2, 5 of 8 are at the bigram level and 3 just above it, "
    "at no level of the theory (within 4e-4 of the bigram loss, outside their bands).  So "
    "the carried-over rule fails where it predicts the unigram trap, and where it fails the "
    "seeds stop at partitions of the states.  A fraction with no seed to judge (the "
    "partial-level part of a case with no seed at neither) is not measured, so it leaves "
    "the claim inconclusive; it held vacuously before (issue 18).  S = 2 has no partial "
    "level, so that part is not made for the binary chains (their seeds at neither count "
    "against the first part).  Issue 32 (positive control): at the test profile (4 seeds) "
    "all 4 seeds of both binary chains are at the predicted level, and the part is "
    "inconclusive by construction: with n seeds all at the level, the 99 % Clopper-Pearson "
    "lower end of the fraction is 0.005^(1/n), above 1/2 only for n >= 8.  At quick (8 "
    "seeds; verify quick at a13b844's code) it passes: 8 of 8 at the unigram level at "
    "p = 0.5, q = 0.8 and 8 of 8 at the bigram level at p = 0.2, q = 0.3, fraction "
    "interval [0.516, 1].")


@claim(
    id="multi_state",
    statement="open (reviewers), one hypothesis: for the symmetric S-state chain, "
              "small Gaussian init ends at the unigram loss ln S iff tr(P) < 1 "
              "(p > (S-1)/S), the binary rule p + q > 1 written as tr(P) < 1; a seed at "
              "neither the unigram nor the bigram level counts against it, and the seeds "
              "at neither are expected at a partial-solution level (a partition of the "
              "states, theory.markov.symmetric_partition_levels)",
    source="the reviewers' question on S > 2 states (the paper's theory is binary and "
           "states no S-state rule: the rule is the binary one carried over, our "
           "conjecture); the authors' rebuttal Fig. 5 and their code, "
           "Markov-Simple/figures/loss-states.py (whose commented-out line at the level "
           "between ln S and the entropy rate is what the partial levels address)",
    kind="open-question",
    strategy=st.fixed_dictionaries({"seed": st.integers(0, 10_000)}),
    theory={"trapped": _trapped},
    control={"trapped": _not_trapped},
    control_description="the rule reversed: trapped iff tr(P) > 1",
    expected="open",
    cost="slow",
    examples=(Example({"seed": 0}, via="the chains of SIZES multi_cases, seed 0"),),
    positive=Positive(
        {"seed": 0, "cases": ((2, 0.5, 0.8), (2, 0.2, 0.3))},
        "the same check on the binary chains (S = 2) p, q = 0.5, 0.8 and 0.2, 0.3, "
        "where tr(P) < 1 is the paper's p + q > 1 (markov.gaussian_init_trap)"),
    notes=NOTES_MULTI,
)
def _check_multi(params: dict, ctx: Context, *, trapped: Callable) -> Evidence:
    """The chains of ``params["cases"]``, else the profile's (``SIZES`` ``multi_cases``)."""
    cases = params.get("cases") or ctx.size(nm.SIZES, "multi_cases")
    return _check_switching({**params, "cases": cases}, ctx, trapped=trapped)


# ---------------------------------------------------------------------- S-state levels
def _states_levels(states: int, p: float) -> dict:
    """The symmetric S-state chain's two levels (theory.markov): the unigram loss ln S and
    the bigram loss h(p) + p ln(S - 1)."""
    return {"unigram": real(tm.symmetric_unigram_loss(states)),
            "bigram": real(tm.symmetric_bigram_loss(p, states))}


def _states_levels_one_fewer(states: int, p: float) -> dict:
    """Control: the levels of the chain with one state fewer (S - 1), an off-by-one in the
    number of states a move can reach (the bigram level h(p) + p ln(S - 2), about 6 % low
    at S = 5, p = 0.1; ln(S - 1) for the unigram level)."""
    return _states_levels(states - 1, p)


@st.composite
def _states_chain(draw):
    # near the authors' chain (S = 5, p = 0.1), far from the conjectured trap
    # p > (S - 1)/S of markov.multi_state: our extension of the one chain they ran
    return {"states": draw(st.integers(3, 6)), "p": draw(st.floats(0.05, 0.15))}


#: a seed's chance of ending at the bigram level assumed by the power calculation (a seed
#: may not finish learning within the run, or stop at a partial level)
_STATES_SEED_SUCCESS = 0.95


def _fraction_pass_power(seeds: int, success: float) -> float:
    """Chance that a fraction part over ``seeds`` seeds passes (its 99 % Clopper-Pearson
    lower end above 1/2) when each seed is a hit with probability ``success``."""
    from scipy.stats import beta, binom

    need = next((k for k in range(1, seeds + 1)
                 if float(beta.ppf(0.005, k, seeds - k + 1)) > 0.5), None)
    return 0.0 if need is None else float(binom.sf(need - 1, seeds, success))


def _seeds_power(size: str, success: float, claim_id: str, profile: str
                 ) -> PowerPlan | None:
    """The power plan of a fraction-of-seeds claim run at SIZES ``size``: the fewest seeds
    whose fraction part passes with power 0.9 when each seed is a hit with probability
    ``success``; None at the smoke size (its part is reported)."""
    if profile == "test":
        return None
    have = int(nm.SIZES.at(size, profile).members)
    need = next(n for n in range(1, 400) if _fraction_pass_power(n, success) >= 0.9)
    return PowerPlan(decides=have >= need, have=have, needed=need, unit="seeds",
                     power=_fraction_pass_power(have, success),
                     design=f"verify.markov.{claim_id}_power: the fraction part passes "
                            "(99 % Clopper-Pearson lower end above 1/2) with power 0.9 "
                            f"if each seed ends at the level with probability {success}")


def states_levels_power(profile: str) -> PowerPlan | None:
    """markov.states_levels_full's power plan (:func:`_seeds_power`): each seed ends at the
    bigram level with probability :data:`_STATES_SEED_SUCCESS`."""
    return _seeds_power("states_levels", _STATES_SEED_SUCCESS, "states_levels", profile)


def _partition_of_seeds(res: nm.FullRunResult, states: int, p: float,
                        at_bigram: np.ndarray) -> dict:
    """Details only: for the seeds not at the bigram level, the partition level
    (theory.markov.symmetric_partition_levels) inside each one's band, as
    markov.multi_state reads them; the levels themselves are chain_levels' to check."""
    if at_bigram.all():
        return {}
    final = res.eval_loss[:, -1]
    lower, upper = _seed_bands(res)
    named = {str(list(k)): real(v)
             for k, v in tm.symmetric_partition_levels(p, states).items()}
    off = ~at_bigram
    return {"seeds_not_at_bigram": np.flatnonzero(off).tolist(),
            "their_partition_level": _classify(final[off], lower[off], upper[off], named)}


NOTES_STATES = (
    "Issue 32 (simulation score): the S-state levels (theory.markov.symmetric_unigram_loss, "
    "symmetric_bigram_loss) had no full-model witness in a claim expected to hold "
    "(markov.multi_state is open); chain_levels checks them against the kernel's entropies "
    "only.  The authors ran the S-state chain (Markov-Simple/src/schedule3.sh at their "
    "commit a76f965: wandb project markov-simple-states-new, S = 5, d = 8, p in {0.1, 0.3, "
    "0.6, 0.9}, three runs each, 5000 iterations at the config's default lr 2e-3; at their "
    "later commit 446eaa1 schedule3.sh runs S = 10 instead), and their loss-states.py (at "
    "9b3fed7) plots that project's p = 0.1 runs' validation loss (tied and untied weights; "
    "our model is tied; x up to 4000) with a line at 0.464, "
    "h(p) + p ln(S - 1) to the printed decimals (markov.plotted_reference_lines); the script "
    "reads the curve from the authors' wandb project, so where it ends is not in the code, "
    "and the claim does not rest on it.  Its commented-out 'unigram' line is at 1.601, not "
    "ln 5 = 1.609 (at a76f965 the script plotted the p = 0.9 runs with that line).  The "
    "levels are the chain's, with no N or iteration count, so the claim is judged at every "
    "size (verify.markov._judged, about='theory', as gaussian_init_trap): quick runs the "
    "authors' 5000 iterations at N = 32, thorough at their N = 1024.  Kind reduced-vs-full: the theory compared with the full model is the "
    "level formulae (no reduced dynamics).  The initial-loss part is an initial-condition "
    "check: any small-init softmax model starts near ln S whatever the chain, so it pins the "
    "value of the unigram level (ln S is the entropy of the chain's uniform stationary law "
    "and the loss of the uniform predictor), not a plateau of the dynamics.  Design: "
    "SIZES states_levels, the authors' S-state run at N = 32; quick's 16 seeds from a power "
    "calculation (states_levels_power): with 16 seeds the fraction part needs 14 at the "
    "level (99 % Clopper-Pearson lower end above 1/2), which happens with probability 0.957 "
    "if each seed ends there with probability 0.95 (_STATES_SEED_SUCCESS, an assumption); "
    "the fewest seeds with power 0.9 at 0.95 is 15.  The prior I had when choosing 0.95: "
    "the map run of `tdcheck mutate markov --profile quick` at f520c83 (2026-12-06) had "
    "multi_state's S = 5, p = 0.2 three-way part pass (1000 iterations).  A referee read "
    "after the first run pointed to NOTES_MULTI's ci record, which I had not weighed: S = 3, "
    "p = 0.2 at 5000 iterations put 5 of 8 seeds at the bigram level and 3 just above it "
    "(a per-seed rate near 0.625).  At that rate 16 seeds pass with probability 0.029 and "
    "power 0.9 needs 237 seeds; at 0.8, 0.352 and 39.  The registered design is kept (its "
    "outcome is known now, so a resize would be chosen after it).  First quick run (2026-12-06, "
    "`tdcheck verify markov --claim markov.states_levels_full --profile quick` on the code "
    "of 8b91a86, report not kept; the same command reruns the same seeds): holds, 15 of 16 seeds' bands contain the bigram level "
    "0.46371 (final losses 0.46386-0.46411, bands 2.0e-4 to 9.7e-4 wide); the one seed "
    "outside (seed 7: final 0.46402, band [0.46384, 0.46404]) is 1.3e-4 above the level "
    "and at no partition level, like NOTES_MULTI's S = 3 seeds just above it; initial loss 1.60714 "
    "against ln 5 = 1.60944 (error 0.0023, 99 % interval [0.0018, 0.0028], allowance "
    "0.0051); the S - 1 control rejected by both parts.  A referee read dropped its third "
    "part, the finest partition's level among every partition's: that level is the bigram "
    "level and the nearest coarser one is 0.21 above it at S = 5, p = 0.1 (0.16-0.37 over "
    "the drawn region), far outside every band, so it repeated the "
    "bigram part; which partition a seed off the bigram level is at is now in details.  "
    "The drawn region (S in 3..6, p in [0.05, 0.15]) is our extension of the one chain "
    "the authors ran (drawn at ci and thorough only).  Resolution (`tdcheck mutate markov "
    "--resolution`, quick, ece1fba): 1 % (symmetric_unigram_loss, symmetric_bigram_loss, "
    "binary_entropy).")


def _initial_level_part(run: nm.FullRun, res: nm.FullRunResult, level: float, name: str,
                        ctx: Context) -> Part:
    """The seeds' initial evaluation loss against ``level`` (the one-block level ln S) with
    the allowance the initial logits' range derives (numerics.markov.initial_logit_range)."""
    if int(res.steps[0]) != 0:
        raise ValueError(f"the run's first record is iteration {int(res.steps[0])}, not 0")
    spread = nm.initial_logit_range(run, device=ctx.device)
    return over_seeds(
        name, level, res.eval_loss[:, 0], float(np.mean(spread)),
        "the seed mean of the initial evaluation loss with a Student-t interval over seeds "
        "and the evaluation's standard error.  Allowance: the seeds' mean range of the "
        "initial logits (numerics.markov.initial_logit_range), a bound on |loss - ln S| at "
        "every position (the cross-entropy minus ln S is log(mean exp f) - sum_j q_j f_j, "
        "between mean f - max f and max f - min f for any target law q; our derivation).  "
        "An initial condition: a small-init softmax starts near ln S whatever the chain",
        extra_se=float(np.mean(res.eval_se[:, 0])), extra_noise="evaluation",
        details={"logit_range_per_seed": spread.tolist()}, kind="simulation")


@claim(
    id="states_levels_full",
    statement="the authors' S-state chain S = 5, p = 0.1 (stay with 1 - p, move to each "
              "other state with p/(S - 1)): the Markov-Simple model from small Gaussian init "
              "starts at the unigram level ln S and ends, after 5000 iterations (the "
              "authors' count), at the bigram level h(p) + p ln(S - 1); ours (a "
              "conjecture): the same for S in 3..6 and p in [0.05, 0.15]",
    source="the paper's unigram and bigram losses carried to S states by the authors' code "
           "(Markov-Simple, vocabulary S > 2: src/schedule3.sh at their commit a76f965 runs "
           "S = 5 for 5000 iterations; figures/loss-states.py at 9b3fed7 plots those p = 0.1 "
           "runs with the bigram line 0.464)",
    kind="reduced-vs-full",
    strategy=_states_chain(),
    theory={"levels": _states_levels},
    control={"levels": _states_levels_one_fewer},
    control_description="the levels of the chain with S - 1 states (an off-by-one in S)",
    cost="slow",
    power=states_levels_power,
    measured_at="quick",
    examples=(Example({"states": 5, "p": 0.1},
                      via="the authors' loss-states.py chain, S = 5, p = 0.1"),),
    notes=NOTES_STATES,
)
def _check_states_levels(params: dict, ctx: Context, *, levels: Callable) -> Evidence:
    states, p = params["states"], params["p"]
    budget = ctx.size(nm.SIZES, "states_levels")
    run = nm.adam_run_config(p, 0.5, "gaussian", budget, 0, states)
    res = nm.run_full(run, cache=ctx.cache, device=ctx.device)
    lv = levels(states, p)
    initial = _initial_level_part(
        run, res, lv["unigram"], "initial loss vs the unigram level ln S (initial condition)",
        ctx)
    final_part = _at_level_part(res, lv["bigram"])
    at_bigram = np.array([lo <= lv["bigram"] <= hi for lo, hi in
                          zip(final_part.details["band_lower"],
                              final_part.details["band_upper"], strict=True)])
    return Evidence((initial, final_part),
                    {"seconds": res.seconds, **_partition_of_seeds(res, states, p, at_bigram)})


# ---------------------------------------------------------------------- partial levels
#: markov.partial_levels_full's first init seed: its pilot (markov.multi_state at ci, run of
#: commit 9c30adf, seed 0, so init seeds 0-7 and data seeds 10 000-10 007) is disjoint
PARTIAL_FIRST_SEED = 8
#: a seed's chance of ending at a partial level assumed by the power calculation: the
#: pilot's 8 of 8 under a uniform prior, (8 + 1) / (8 + 2), the posterior mean
_PARTIAL_SEED_SUCCESS = 0.9


def partial_levels_power(profile: str) -> PowerPlan | None:
    """markov.partial_levels_full's power plan (:func:`_seeds_power`): each seed ends at a
    partial level with probability :data:`_PARTIAL_SEED_SUCCESS`."""
    return _seeds_power("partial_levels", _PARTIAL_SEED_SUCCESS, "partial_levels", profile)


def _partition_levels(states: int, p: float) -> dict:
    """{block sizes: level} of every partition of the symmetric S-state chain
    (theory.markov.symmetric_partition_levels), as floats."""
    return {k: real(v) for k, v in tm.symmetric_partition_levels(p, states).items()}


#: the control's misreading of the chain's move probability
_P_SLIP = 0.02


def _partition_levels_moved_p(states: int, p: float) -> dict:
    """Control: the partition levels of the chain with move probability p + 0.02 (a 2 %
    misreading of p = 0.9), a near miss through the same theory function: its partial
    levels sit 0.0035-0.013 below the true ones at S = 5, p = 0.9, more than a settled
    seed's band (about 1e-3), and its (1, 1, 3) level 3e-4 above the true (1, 1, 1, 2) one
    (the lattice again: a seed there holds both)."""
    return _partition_levels(states, p + _P_SLIP)


NOTES_PARTIAL = (
    "A claim of ours (issue 32: theory.markov.symmetric_partition_levels had no full-model "
    "witness in a claim that decides; markov.multi_state, open, reads it only for seeds at "
    "neither level).  The hypothesis comes from pilots, so it is tested on other seeds.  "
    "markov.multi_state at ci (run of commit 9c30adf, the authors' 5000 iterations, d = 8, "
    "N = 32, init seeds 0-7; NOTES_MULTI) put all 8 seeds of S = 5, p = 0.9 at a partial "
    "level ((1, 1, 3) for 7, (1, 4) for 1) and none at ln S, where the carried-over rule "
    "predicts ln S; at quick (1000 iterations, the same seeds, commit 6d47367) 2 of 8 were "
    "still at ln S and 6 at a partial level, so these levels are where the seeds sit at the "
    "authors' 5000 iterations, which need not be where they end after longer training (not "
    "tested).  The authors' own plot of these runs draws its 'Unigram loss' line at 1.601, "
    "which is the (1, 4) partition's level to the printed decimals (1.60058; ln 5 would "
    "print 1.609), so their curve may sit there too; the script reads the curve from wandb, "
    "so the claim does not rest on it, and 1.601 may be a slip for ln 5.  Design, fixed "
    "before this claim's first run: the chain, run length and model of states_levels_full "
    "(SIZES partial_levels); the seeds from PARTIAL_FIRST_SEED on, disjoint from the "
    "pilots' (init, data and evaluation seeds); 18 seeds from the power calculation "
    "(partial_levels_power: 18 is the fewest with power 0.9 when each seed ends at a "
    "partial level with probability 0.9, the pilot's posterior mean under a uniform prior; "
    "sized at that point estimate: averaged over the Beta(9, 1) posterior the power is "
    "0.83, and at a rate of 0.85 the calculation would ask 26).  The thorough size is the "
    "authors' N = 1024, where no pilot ran, so the rate assumed there is untested.  The "
    "bands are markov.multi_state's (_seed_bands: a 99 % evaluation interval, widened below "
    "by the loss drop over the run's second half, the finite-time allowance derived in the "
    "comment above _seed_bands, and above to the previous record); details give, per seed, "
    "whether the unwidened 99 % interval alone holds a partial level (at_partial_unwidened).  "
    "The partial levels sit 0.0008-0.009 apart at S = 5, p = 0.9, nearly a lattice of step "
    "0.009 from the bigram level to ln S, so the fraction part alone would not tell the true "
    "set from one shifted by a whole step; the initial-loss part anchors the set's top, the "
    "one-block level, at the model's initial loss (the states_levels_full part, allowance "
    "the initial logits' range, about half that step).  Which partition a seed is at is "
    "reported (details: level_per_seed), not judged: no theory here says which partition a "
    "seed stops at.  The control is the partition levels at p + 0.02, through the same "
    "function, whose partial levels sit 0.0035-0.013 below the true ones; its one-block level "
    "is ln S at every p, so only the fraction part can reject it, and a seed at the true "
    "(1, 1, 1, 2) level also holds its (1, 1, 3) level, 3e-4 away.  The other direction, p - 0.02, is not a usable control: its (1, 1, 1, 2) level, "
    "1.5928 at p = 0.88, lies within 4e-4 of the true (1, 2, 2) level, inside the bands "
    "of seeds there, so a slip of p downward is seen less well than upward.  Whether any "
    "seed is at ln S (the carried-over rule's level, markov.multi_state's hypothesis) or "
    "at the bigram level is in details (at_unigram, at_bigram).  Its region is the "
    "authors' one chain (drawn: the seeds only).  First quick run (2026-12-06, `tdcheck "
    "verify markov --claim markov.partial_levels_full --profile quick` on the code of "
    "1199a83, before a referee read added the initial-loss part and replaced the control "
    "ln S alone; 39 s; the same command reruns the same seeds): holds, 18 of 18 seeds' "
    "bands hold a partial level (fraction interval [0.745, 1]); nearest (1, 1, 3) for 14, "
    "(1, 1, 1, 2) for 3, (1, 2, 2) for 1 (final losses 1.5825-1.5921, bands 1.1e-3 to "
    "2.2e-3 wide, so several hold both (1, 1, 3) and (1, 2, 2), 8e-4 apart); no seed's band "
    "holds ln S or the bigram level; the control of then, ln S alone, rejected.  The same "
    "seeds after that read (its run cached, the same command): the initial loss 0.00031 "
    "[0.00026, 0.00036] from the one-block level against an allowance of 0.0048; every "
    "seed's unwidened 99 % interval holds a partial level too (18 of 18); the control's "
    "levels are in 3 of 18 bands (fraction interval [0.020, 0.488]): rejected.  "
    "Resolution (tdcheck mutate markov --resolution, quick, ece1fba): 1 % "
    "(symmetric_partition_levels and symmetric_partition_loss, whole-output scales).  The "
    "mutants that change one partition's level alone are seen only where most seeds sit: "
    "the (1, 1, 3) level's sign flip turns the claim inconclusive (weak), the one-block "
    "level's fails the initial-loss part, and the (1, 1, 1, 2) x 0.95, (1, 4) x 1.05, "
    "(2, 3) x 0.95 and bigram-level x 1.05 mutants pass (no theory here says which "
    "partition a seed stops at, and the bigram level is not a partial one).")


@claim(
    id="partial_levels_full",
    statement="ours, a conjecture from pilots: on the authors' S-state chain S = 5, "
              "p = 0.9 (tr(P) < 1, where the binary trap rule carried over to S states, "
              "markov.multi_state, predicts the unigram level ln S), the Markov-Simple model "
              "starts at the one-block level ln S and, after the authors' 5000 iterations "
              "from small Gaussian init, most seeds (more than half) are at a "
              "partial-solution level: the loss of the best predictor that tells apart only "
              "the blocks of a partition of the states (theory.markov."
              "symmetric_partition_levels, a partition other than one block and S blocks)",
    source="the authors' S-state runs (Markov-Simple/src/schedule3.sh at their commit "
           "a76f965: S = 5, p in {0.1, 0.3, 0.6, 0.9}, 5000 iterations) and their "
           "figures/loss-states.py at a76f965, which plots the p = 0.9 runs (loss09.pdf) with "
           "lines at 1.601 ('Unigram loss') and 1.573 ('Bigram loss'); the partition levels "
           "are our derivation; the S-state question is the reviewers'",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"states": st.just(5), "p": st.just(0.9),
                                    "seed": st.integers(PARTIAL_FIRST_SEED, 10_000)}),
    theory={"levels": _partition_levels},
    control={"levels": _partition_levels_moved_p},
    control_description="the partition levels of the chain at p + 0.02 (a 2 % slip in p)",
    cost="slow",
    power=partial_levels_power,
    measured_at="quick",
    examples=(Example({"states": 5, "p": 0.9, "seed": PARTIAL_FIRST_SEED},
                      via="the authors' loss-states.py chain at a76f965, S = 5, p = 0.9; "
                          "seeds after the pilots'"),),
    notes=NOTES_PARTIAL,
)
def _check_partial_levels(params: dict, ctx: Context, *, levels: Callable) -> Evidence:
    states, p, seed = params["states"], params["p"], int(params["seed"])
    run = nm.adam_run_config(p, 0.5, "gaussian", ctx.size(nm.SIZES, "partial_levels"), seed,
                             states)
    res = nm.run_full(run, cache=ctx.cache, device=ctx.device)
    lv = levels(states, p)
    one_block = lv[(int(states),)]
    partial = {str(k): v for k, v in lv.items() if 1 < len(k) < states}
    initial = _initial_level_part(
        run, res, one_block, "initial loss vs the one-block level (initial condition)", ctx)
    final = res.eval_loss[:, -1]
    lower, upper = _seed_bands(res)
    at = _classify(final, lower, upper, partial)
    from numerics.stats import normal_quantile

    half = normal_quantile(_LEVEL_CONFIDENCE) * res.eval_se[:, -1]
    unwidened = _classify(final, final - half, final + half, partial)
    ends = _states_levels(states, p)
    part = _fraction_part(
        "fraction of seeds whose band contains a partial level",
        np.array([a is not None for a in at]),
        "per seed, whether a partial level (a partition other than one block and S blocks) "
        "lies in the seed's band (99 % evaluation interval, widened below by the loss drop "
        "over the run's second half and above to the previous record; the bands of "
        "markov.multi_state); which level is in details (the nearer one where a band holds "
        "two)",
        levels=partial, level_per_seed=at, final_loss_per_seed=final.tolist(),
        band_lower=lower.tolist(), band_upper=upper.tolist(),
        at_partial_unwidened=[a is not None for a in unwidened],
        at_unigram=[bool(lo <= ends["unigram"] <= hi) for lo, hi in zip(lower, upper,
                                                                        strict=True)],
        at_bigram=[bool(lo <= ends["bigram"] <= hi) for lo, hi in zip(lower, upper,
                                                                      strict=True)],
        first_seed=seed, iteration=int(res.steps[-1]))
    return Evidence((initial, part), {"seconds": res.seconds})


# ---------------------------------------------------------------------- the claims
def claims() -> list[Claim]:
    """The markov row's claims, in source order."""
    return declared(__name__)
