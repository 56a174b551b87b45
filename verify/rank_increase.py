"""Claims of Boix-Adserà, Littwin, Abbe, Bengio, Susskind, *Transformers learn through gradual
rank increase* (NeurIPS 2023): the ``rank_increase`` row.

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory`` is
the paper's (:data:`PAPER_THEORY`), ``control`` a near-miss wrong theory (memoryless clocks,
no switch-off in stage (B), a 2% wrong stationary point, Euclidean instead of sup-norm first
jump, the swapped invariant u² + v², the lazy/NTK limit of the learned update), so
the control runs the same function by construction; the check never asks which theory it
got.  Predictions come from :mod:`theory.rank_increase` at call time.  The paper's full text
was not available to us: Algorithm 1, the limit theorem and the assumptions are our
reconstruction (cited by content, not number), and the worked examples and tolerances are
ours, with their reasons next to each part.

Simulations (``numerics.rank_increase.standard_*`` configs, sized by its one table
``SIZES``; shared by the claims and the figures through the run cache):

* GD ladders, float64, all α stacked in ONE ensemble run each: the three-coordinate quadratic
  of our worked example and the diagonal softmax-head toy, θ_0 of the worked example and
  N(0, I) (numpy seed 1) respectively.
* The log-form flow (exact gradient flow) down to α = 1e-64 (quadratic) and 1e-24 (head).
* The full d×d head (our non-diagonal bridge test); a scale sweep 1e-3 … 1 for the Fig. 7
  analogue; an Adam ladder for the open question.

One member per α (θ_0 fixed); only the open Adam/SGD question's minibatch-SGD arm draws
data, one generator per α member (``--seed`` moves it), and none of its parts is a
statistic over seeds.

Jump times are the first crossing of the loss midpoint between consecutive predicted plateau
losses.  Richardson extrapolation in 1/L, L = log(1/α), uses the two smallest α of three
evenly spaced in L; its error bar is the change of the extrapolation when the pair moves one
rung up (the O(1/L²) remainder) plus the τ-grid resolution.  GD parts add the O(lr) shift of
T_k to the prediction, computed by running Algorithm 1 at the GD clock rates
log(1 + lr|γ|)/lr (:func:`theory.rank_increase.gd_escape_rate`, exact for s' = (1 - lr g) s).
Clocks and the staircase's L1 distance are Richardson-extrapolated the same way, at fixed τ
inside each plateau (the exact flows share one τ grid across α).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import rank_increase as nr
from numerics.ode import integrate
from theory import rank_increase as tr
from theory.flow import InadmissibleTheory
from verify.claims import (
    Claim,
    Context,
    Evidence,
    Example,
    Part,
    Positive,
    claim,
    combine,
    declared,
)
from verify.claims import tolerance_from_theory as declared_by_design
from verify.error_models import identically_zero, worst_member

__all__ = ["EXTRAPOLATION_MARGIN", "MEMORYLESS", "PAPER_THEORY", "PLATEAU_MARGIN", "Theory",
           "check_jump_times", "claims"]

#: Equivalence margin of the Richardson-extrapolated parts (jump times, first jump, clocks,
#: staircase), relative to the observed side's extrapolated value (absolute below 1).  What
#: these claims state is exact as alpha -> 0, and what a finite ladder leaves (the O(1/L^2)
#: remainder, estimated by the change of the extrapolation when its pair of rungs moves one
#: up, and the record grid) is in each part's interval, so no model mismatch is left to allow
#: for: the margin is not a bound but the relative error the parts are built to resolve (a
#: theory whose T_k is off by more than 1 % plus the interval fails; one within passes).
EXTRAPOLATION_MARGIN = 0.01

#: Equivalence margin of the single-alpha plateau parts (w mid-plateau against w^k: the
#: exact flow at alpha <= 1e-12 and torch GD at the ladder's smallest alpha), relative to
#: max(1, |w^k|).  There the finite-alpha offset is not extrapolated away: its first-order
#: part (the support's response to the off-support entries) is derived and added where the
#: GD parts measure it, and the 2 % stands for the rest (second-order and transient terms,
#: not bounded here) and is the relative error of w^k the parts resolve.
PLATEAU_MARGIN = 0.02


def _pinned(*examples):
    """A strategy drawing only the pinned examples (deterministic checks)."""
    return st.sampled_from([dict(e.params) if isinstance(e, Example) else dict(e)
                            for e in examples])


# ---------------------------------------------------------------------- theories
def _support(stage, lo: int = 0, hi: int | None = None) -> int:
    """Number of non-zero entries of a stage's plateau w^k in coordinates lo..hi-1."""
    return sum(1 for x in stage.plateau[lo:hi] if float(x) != 0)


def _max_added(stages) -> int:
    """Largest number of coordinates switched on together at one jump of the stages."""
    prev: set[int] = set()
    most = 0
    for s in stages:
        now = {i for i, x in enumerate(s.plateau) if float(x) != 0}
        most = max(most, len(now - prev))
        prev = now
    return most


def _block_stable_ranks(plateau, d: int) -> tuple[float, float]:
    """Stable ranks of diag(KQ block) and diag(VO block) of a head plateau w = (κ | ν)."""
    w = np.array([float(x) for x in plateau])
    return tuple(float(nr.stable_rank(np.diag(b))) for b in (w[:d], w[d:]))


def _plateau_stable_rank(stages, tau_end: float, d: int, G_M, G_P) -> tuple[float, float]:
    """The small-init limit: the stable ranks of Algorithm 1's plateau at ``tau_end``."""
    k = sum(1 for s in stages if float(s.jump_time) <= tau_end)
    if k == 0:
        return 0.0, 0.0
    return _block_stable_ranks(stages[k - 1].plateau, d)


def _lazy_stable_rank(stages, tau_end: float, d: int, G_M, G_P) -> tuple[float, float]:
    """Lazy/NTK near miss: the update keeps the direction of the first gradient, -G(0)."""
    return tuple(float(nr.stable_rank(np.asarray(G, float))) for G in (G_M, G_P))


def _l2_first_jump(gradient) -> sp.Expr:
    g = np.asarray([float(x) for x in np.ravel(np.asarray(gradient, dtype=object))])
    n = float(np.linalg.norm(g))
    return sp.oo if n == 0 else sp.Float(1 / n)


def _frobenius_first_jump(*gradients) -> sp.Expr:
    n = max(float(np.linalg.norm(np.asarray(G, dtype=float))) for G in gradients)
    return sp.oo if n == 0 else sp.Float(1 / n)


def _declared_invariant(system, i: int):
    """The invariant diagonal_flow declares for coordinate i."""
    return system.invariants[f"imbalance_{i}"]


def _swapped_invariant(system, i: int):
    p = len(system.state) // 2
    u, v = system.state[i], system.state[p + i]
    return u**2 + v**2


@dataclass(frozen=True)
class Theory:
    """What a check asks of a theory.  ``PAPER_THEORY`` uses theory.rank_increase as is."""

    name: str
    clock_memory: bool = True
    sign_constrained: bool = True
    plateau_scale: float = 1.0
    first_jump: Callable = tr.first_jump_time
    first_jump_full: Callable = tr.first_jump_time_full
    invariant: Callable = staticmethod(tr.imbalance)
    system_invariant: Callable = staticmethod(_declared_invariant)
    limit_stable_rank: Callable = staticmethod(_plateau_stable_rank)
    scale_trend: float = 1.0  # sign of the trend of |sr - limit| with the init scale

    def stages(self, problem: nr.Problem, lr: float = 0.0) -> tuple[tr.Stage, ...]:
        return nr.problem_stages(problem, clock_memory=self.clock_memory,
                                 sign_constrained=self.sign_constrained, lr=lr)

    def plateau(self, stage: tr.Stage) -> np.ndarray:
        return self.plateau_scale * np.array([float(x) for x in stage.plateau])


PAPER_THEORY = Theory("paper")
MEMORYLESS = Theory("memoryless clocks", clock_memory=False)
UNCONSTRAINED = Theory("no switch-off (unconstrained stage B)", sign_constrained=False)
SHIFTED_PLATEAU = Theory("stationary points scaled by 1.02", plateau_scale=1.02)
EUCLIDEAN_JUMP = Theory("first jump 1/||grad||_2, 1/||G||_F", first_jump=_l2_first_jump,
                        first_jump_full=_frobenius_first_jump)
SWAPPED_INVARIANT = Theory("u^2 + v^2 conserved", invariant=staticmethod(lambda u, v: u**2 + v**2),
                           system_invariant=staticmethod(_swapped_invariant))
SCALE_FREE = Theory("lazy/NTK: the update keeps the first gradient's direction, whatever "
                    "the init scale", limit_stable_rank=staticmethod(_lazy_stable_rank),
                    scale_trend=0.0)


# ---------------------------------------------------------------------- problems and runs
QUAD = nr.QUAD
HEAD = nr.HEAD


def _problem(name: str) -> nr.Problem:
    return {"quadratic": QUAD, "head": HEAD}[name]


def _loss0(problem: nr.Problem) -> float:
    return nr.problem_loss(problem)(np.zeros(problem.p))


def _richardson(L: np.ndarray, T: np.ndarray, dtau: float) -> tuple[float, float]:
    """(T_∞, error bar) from the two largest L; the bar is the shift of the estimate when the
    pair moves one rung up, plus the grid resolution amplified by L2/(L2 - L1)."""
    L1, L2 = L[-2], L[-1]
    est = (L2 * T[-1] - L1 * T[-2]) / (L2 - L1)
    bar = dtau * L2 / (L2 - L1)
    if len(L) >= 3 and np.isfinite(T[-3]):
        L0 = L[-3]
        prev = (L1 * T[-2] - L0 * T[-3]) / (L1 - L0)
        bar += abs(est - prev)
    else:
        bar += abs(est - T[-1])  # no third rung: the whole 1/L correction is the error bar
    return float(est), float(bar)


# ---------------------------------------------------------------------- 1. Algorithm 1 tables
TABLE_THREE_COORDINATE = {  # our three-coordinate worked example (Algorithm 1, exact)
    "T": (sp.Rational(40, 29), sp.Rational(185, 94), sp.Rational(185, 36), sp.Rational(595, 12)),
    "w": ((sp.Rational(145, 214), 0, 0), (sp.Rational(27, 58), sp.Rational(47, 145), 0),
          (0, sp.Rational(13, 20), sp.Rational(9, 20)), (sp.Rational(-1, 2), 1, sp.Rational(4, 5))),
    "events": ((0, 1, ()), (1, 1, ()), (2, 1, (0,)), (0, -1, ())),
    "w_star": (sp.Rational(-1, 2), 1, sp.Rational(4, 5)),
    "theta0": (0.9, -0.6, 0.7, 0.4, 0.8, -0.3),
    # g(w^k) of the four plateaus (exact Algorithm 1, recorded with T and w): the GD
    # plateau windows' detection levels, fixed here so that no theory under test moves them
    "loss": (sp.Rational(-841, 3424), sp.Rational(-6359, 23200), sp.Rational(-5, 16),
             sp.Rational(-259, 800)),
}
TABLE_TOY_HEAD = {  # our reference table of the toy head (printed to 5 decimals)
    "T": nr.HEAD_REFERENCE_T,  # the perturbation kicks' plan too
    "w": ((0, 0, 0, 1.51967, 0, 0), (2, 0, 0, 1, 0, 0), (2, 0, 0, 1, 0.5, 0)),
    "loss": (2.10633, 0.13530, 0.0),  # 2.10634 until the second session of 2026-12-05
    "events": ((3, 1, ()), (0, 1, ()), (4, 1, ())),
}


#: What a wrong theory's derivation may raise (a diverging stage (B), a non-symmetric H, a
#: failed integration): the check then fails a part with the message, it does not raise.
THEORY_ERRORS = (ValueError, RuntimeError, ArithmeticError, IndexError, np.linalg.LinAlgError)

#: What a theory output of the wrong type raises where it is used (a tuple where a Stage was
#: due, a number where a symbol was): caught only around the use of a theory output, never
#: around our own code (where it would pass a bug of ours off as a rejection).
MALFORMED = (TypeError, AttributeError)


def _raised(name: str, what: str, exc: Exception, kind: str = "symbolic") -> Part:
    """A failed part: ``what`` raised ``exc`` under the theory being checked."""
    return Part(name, math.nan, math.nan, math.inf, 0.0,
                f"{what} raised {type(exc).__name__}: {str(exc)[:200]}", kind=kind)


@st.composite
def _random_quadratic(draw):
    p = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 10_000))
    return {"kind": "random", "p": p, "seed": seed}


def _random_problem(p: int, seed: int) -> nr.Problem:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((p, p + 2))
    H = A @ A.T / (p + 2) + 0.2 * np.eye(p)
    beta = rng.standard_normal(p)
    return nr.quadratic_problem(np.round(H, 6), np.round(beta, 6))


def _events(stages) -> tuple:
    return tuple((s.coordinate, s.sign, s.deactivated) for s in stages)


_TWO_COORDINATE = ((1, (3, 5), (3, 10)), (1, (1, 5), (1, 2)), (2, (-1, 1), (-1, 5)),
                   ((7, 10), (1, 2), (5, 7)), (1, (-9, 10), (3, 5)))


@claim(
    statement="Algorithm 1 reproduces the exact three-coordinate table of our worked example "
              "(switch-off, sign-flipped re-entry), the two-coordinate closed form and the "
              "toy-head reference table; quadratic_stages and incremental_stages agree on "
              "quadratics",
    source="the paper's Algorithm 1 (our reconstruction); our three-coordinate worked "
           "example (exact rationals, re-derived independently), our two-coordinate closed "
           "form and toy-head table",
    kind="symbolic",
    strategy=_random_quadratic(),
    theory={"theory": PAPER_THEORY},
    control={"theory": MEMORYLESS},
    control_description=MEMORYLESS.name + ": clocks restart at 0 after every jump",
    examples=(Example({"kind": "three_coordinate"},
                      via="worked example with switch-off and sign-flipped re-entry"),
              Example({"kind": "two_coordinate"},
                      via="the two-coordinate closed form, both signs of the second entry"),
              Example({"kind": "head"}, via="the toy head of Figs. 2-3 (our stand-in)")),
    notes="The references are ours, not the paper's (its text was not available): the "
          "three-coordinate table in exact rationals and the toy-head table printed to 5 "
          "decimals.  The toy-head table's printed plateau losses are not pinned: its "
          "first-plateau loss is one printed unit off the loss of its own printed plateau, "
          "so the loss part compares Stage.loss with g at the printed plateau instead.",
)
def check_algorithm1_tables(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    kind = params["kind"]
    if kind == "two_coordinate":
        worst_T, branches = 0.0, set()
        for b1, b2, r in _TWO_COORDINATE:
            beta1, beta2, rho = (sp.Rational(*x) if isinstance(x, tuple) else sp.Integer(x)
                                 for x in (b1, b2, r))
            closed = tr.two_coordinate_jump_times(beta1, beta2, rho)
            stages = theory.stages(nr.quadratic_problem([[1, rho], [rho, 1]], [beta1, beta2]))
            alg = [s.jump_time for s in stages] + [sp.oo] * 2
            branches.add(bool(beta2 > rho * beta1))
            for c, a in zip(closed, alg[:2], strict=True):
                diff = 0.0 if c == a else (math.inf if sp.oo in (c, a) else abs(float(c - a)))
                worst_T = max(worst_T, diff)
        return Evidence((Part(
            "two_coordinate_closed_form", 0.0, worst_T, worst_T, 0.0,
            "exact rationals: T_1 = 1/beta1 and both branches of T_2 (our derivation) must "
            "equal Algorithm 1's jump times exactly", details={"branches": sorted(branches)},
            kind="symbolic"),),
            {"cases": len(_TWO_COORDINATE)})
    if kind == "random":
        prob = _random_problem(params["p"], params["seed"])
        try:
            exact = theory.stages(prob)
            numeric = tr.incremental_stages(nr.problem_loss(prob), prob.p,
                                            gradient=nr.problem_gradient(prob),
                                            clock_memory=theory.clock_memory)
        except THEORY_ERRORS as exc:  # a wrong theory's stage (B) can diverge
            return Evidence((_raised("stage_count_agree", "Algorithm 1 (exact or numeric) on "
                                     f"a random quadratic (p={prob.p})", exc),))
        scale = max(1.0, *(abs(float(s.jump_time)) for s in exact)) if exact else 1.0
        n = min(len(exact), len(numeric))
        dT = max((abs(float(a.jump_time) - float(b.jump_time)) for a, b in
                  zip(exact[:n], numeric[:n], strict=True)), default=0.0)
        dw = max((float(np.max(np.abs(np.array(a.plateau, float) - np.array(b.plateau, float))))
                  for a, b in zip(exact[:n], numeric[:n], strict=True)), default=0.0)
        model = ("exact sign-constrained stage (B) vs integrated limit flow + Newton polish; "
                 "agreement target 1e-6 relative (our choice: the flow's integration and "
                 "Newton polish are accurate far below it)")
        return Evidence((
            Part("stage_count_agree", len(exact), len(numeric), abs(len(exact) - len(numeric)),
                 0.0, "integer: both stage functions must find the same number of stages",
                 kind="symbolic"),
            Part("jump_times_agree", 0.0, dT / scale, dT / scale, 1e-6, model, kind="symbolic"),
            Part("plateaus_agree", 0.0, dw, dw, 1e-6 * max(1.0, *(abs(float(x)) for s in exact
                                                               for x in s.plateau)), model,
                                                               kind="symbolic"),
        ), {"stages": len(exact)})
    if kind == "three_coordinate":
        H, beta, u0, v0 = tr.three_coordinate_example()
        prob = nr.quadratic_problem(H, beta)
        try:
            stages = theory.stages(prob)
        except THEORY_ERRORS as exc:  # e.g. a wrong example whose H is not symmetric
            return Evidence((_raised("table31_example", "Algorithm 1 on the worked example",
                                     exc),))
        ref = TABLE_THREE_COORDINATE
        # the example's definition: w* = H^-1 beta and theta_0 as the table states them
        defn = [abs(float(x - y)) for x, y in zip(H.LUsolve(beta), ref["w_star"], strict=True)]
        defn += [abs(float(x) - y) for x, y in zip((*u0, *v0), ref["theta0"], strict=True)]
        exact_ok = all(isinstance(s.jump_time, sp.Rational) for s in stages)
        dT = max((abs(float(sp.nsimplify(s.jump_time) - t)) for s, t in
                  zip(stages, ref["T"], strict=False)), default=math.inf)
        dw = max((float(max(abs(sp.nsimplify(a) - b) for a, b in zip(s.plateau, w, strict=True)))
                  for s, w in zip(stages, ref["w"], strict=False)), default=math.inf)
        ev_err = float(_events(stages) != ref["events"]) + abs(len(stages) - len(ref["T"]))
        model = "exact rationals: any difference from the worked example's table is a mismatch"
        return Evidence((
            Part("table31_example", 0.0, max(defn), max(defn), 0.0,
                 "exact: the worked example's w* = (-1/2, 1, 4/5) and theta_0 as tabulated",
                 kind="symbolic"),
            Part("exact_rationals", 1.0, float(exact_ok), float(not exact_ok), 0.0, model,
            kind="symbolic"),
            Part("table31_jump_times", 0.0, dT, dT, 0.0, model, kind="symbolic"),
            Part("table31_plateaus", 0.0, dw, dw, 0.0, model, kind="symbolic"),
            Part("table31_events", 0.0, ev_err, ev_err, 0.0,
                 "integer: (coordinate, sign, switched-off) sequence must equal the table's",
                 kind="symbolic"),
        ), {"T": [str(s.jump_time) for s in stages]})
    stages = theory.stages(HEAD)
    ref = TABLE_TOY_HEAD  # our own table, not printed in the paper: the parts are symbolic
    half_ulp = 5e-6  # the table prints 5 decimals: rounding error <= 0.5e-5
    dT = max((abs(float(s.jump_time) - t) for s, t in zip(stages, ref["T"], strict=False)),
             default=math.inf)
    dw = max((float(np.max(np.abs(np.array(s.plateau, float) - np.array(w))))
              for s, w in zip(stages, ref["w"], strict=False)), default=math.inf)
    # Stage.loss against g at the printed plateau: by the mean-value theorem the two differ by
    # at most sum_i |dg/dw_i| * 5e-6 over the rounded (non-zero) printed entries, gradient at
    # the printed point (to first order; the plateau is stationary on its support)
    loss, grad = nr.problem_loss(HEAD), nr.problem_gradient(HEAD)
    dl, tol_l = 0.0, 0.0
    for s, w in zip(stages, ref["w"], strict=False):
        wp = np.array(w, dtype=float)
        dl = max(dl, abs(float(s.loss) - loss(wp)))
        rounded = wp != 0  # off the support the table's zeros are exact
        tol_l = max(tol_l, float(np.sum(np.abs(grad(wp)[rounded]))) * half_ulp + 1e-12)
    ev_err = float(_events(stages) != ref["events"]) + abs(len(stages) - len(ref["T"]))
    # the printed losses themselves (the jump and plateau claims' detection levels)
    dlp = max((abs(float(s.loss) - float(x)) for s, x in zip(stages, ref["loss"], strict=False)),
              default=math.inf)
    model = "the reference table prints 5 decimals: rounding <= 5e-6 (our stages are exact to ~1e-12)"
    return Evidence((
        Part("table32_jump_times", 0.0, dT, dT, half_ulp, model, kind="symbolic"),
        Part("table32_plateaus", 0.0, dw, dw, half_ulp, model, kind="symbolic"),
        Part("table32_losses", 0.0, dl, dl, tol_l,
             "Stage.loss vs g at the printed plateau: <= sum over the rounded entries of "
             "|grad g| x 5e-6 (mean-value bound, first order) + 1e-12 float",
             details={"losses": [float(s.loss) for s in stages], "printed": list(ref["loss"])},
             kind="symbolic"),
        Part("table32_printed_losses", 0.0, dlp, dlp, half_ulp, model, kind="symbolic"),
        Part("table32_events", 0.0, ev_err, ev_err, 0.0,
             "integer: (coordinate, sign, switched-off) sequence must equal the table's",
             kind="symbolic"),
    ), {"T": [float(s.jump_time) for s in stages]})


# ---------------------------------------------------------------------- 2. plateau values
def _plateau_values(theory: Theory, stage, p: int) -> np.ndarray:
    """The theory's plateau w^k as a float vector of length p (NaN where it has no finite
    value of the right length: a wrong theory then fails the part instead of raising)."""
    try:
        w = np.asarray(theory.plateau(stage), dtype=float).ravel()
    except (TypeError, ValueError, AttributeError):
        return np.full(p, np.nan)
    return w if w.shape == (p,) else np.full(p, np.nan)


def _hessian(prob: nr.Problem, w: np.ndarray) -> np.ndarray:
    """The Hessian of g at ``w`` from the model's own torch loss (autograd, u = w, v = 1:
    the loss of u * v is then g(u)), symmetrised: no theory/ in it, so a slip in theory's
    head loss cannot move the allowances built on it (the quadratic's is H exactly)."""
    u = torch.tensor(np.asarray(w, dtype=float), dtype=nr.DTYPE)
    loss = nr.torch_loss(prob, torch.device("cpu"))
    H = torch.autograd.functional.hessian(lambda x: loss({"u": x, "v": torch.ones_like(x)}),
                                          u).numpy()
    return 0.5 * (H + H.T)


def _support_response(prob: nr.Problem, w: np.ndarray, support: np.ndarray) -> float:
    """||H_SS^-1 H_SI||_inf at w: how far the stationary point on the support S moves, to
    first order, per unit of the off-support entries w_I (stationarity grad_S g = 0 gives
    dw_S = -H_SS^-1 H_SI w_I); H the Hessian of g (:func:`_hessian`).  inf when H_SS is
    singular or not finite."""
    S, Ic = np.nonzero(support)[0], np.nonzero(~support)[0]
    if S.size == 0 or Ic.size == 0:
        return 0.0
    H = _hessian(prob, w)
    try:
        R = np.linalg.solve(H[np.ix_(S, S)], H[np.ix_(S, Ic)])
    except np.linalg.LinAlgError:
        return math.inf
    r = float(np.max(np.sum(np.abs(R), axis=1)))
    return r if math.isfinite(r) else math.inf


def _gd_plateau_points(prob: nr.Problem, cfg: nr.LadderConfig, run: nr.LadderRun,
                       lr: float | None = None) -> list[tuple[int, float, int]]:
    """(k, tau, record index at the smallest alpha) at the midpoint of each whole plateau
    (T_k, T_{k+1}) of the paper's Algorithm 1 at the GD clock rates (``lr`` None: the
    run's; 0: the flow's), the same under every theory checked, the last one ending at 90 %
    of the run; a plateau shorter than 5/L or whose midpoint lies past that end (cut short
    by the run) is left out.  The window rule of the GD parts: the plateau parts take the
    GD-rate stages (``lr`` None), the clock parts the flow's (``lr`` 0).  The paper's stages
    come from theory.rank_increase, so a slip there can move a point or drop it (the 5/L and
    past-the-end filters); a dropped point is not compared.  (The plateau parts' GD windows
    are the model's own since 2026-12-05: :func:`_observed_plateau_points`.)"""
    i = int(np.argmin(cfg.alphas))
    L = math.log(1 / cfg.alphas[i])
    tau = run.tau[i]
    ends = [float(s_.jump_time) for s_ in PAPER_THEORY.stages(prob, cfg.lr if lr is None
                                                               else lr)] \
        + [0.9 * float(tau[-1])]
    out = []
    for k in range(len(ends) - 1):
        t = 0.5 * (ends[k] + ends[k + 1])
        if ends[k + 1] - ends[k] > 5 / L and t <= ends[-1]:
            out.append((k, t, min(int(np.searchsorted(tau, t)), len(tau) - 1)))
    return out


#: The row's reference tables by problem: jump times and plateau losses fixed in the row
#: (the GD plateau windows' plan and detection levels; no theory under test moves them).
_REFERENCE = {"quadratic": TABLE_THREE_COORDINATE, "head": TABLE_TOY_HEAD}


def _observed_plateau_points(name: str, cfg: nr.LadderConfig, run: nr.LadderRun
                             ) -> tuple[list[tuple[int, float, int]], list[tuple[int, str]]]:
    """The trained model's own plateaus at the smallest alpha: ``(k, tau, record)`` at the
    midpoint of each planned plateau, and ``(k, reason)`` for a planned plateau the model
    does not show within the run.

    Plan (fixed by the row's reference table, :data:`_REFERENCE`, before any run): plateau k
    is read when the table's next jump T_{k+1} (the run's end for the last stage) lies
    within 90 % of the run and the table's plateau is longer than 5/L.  Window: between the
    model's crossings of the detection levels, halfway between consecutive table plateau
    losses (the first from the model's own first recorded loss, g(0) to O(alpha^2)), as the
    jump_times claim detects jumps; the midpoint is read.  Neither the plan nor the levels
    come from theory/, so a slip in the theory's jump times, GD rates or losses cannot move
    a window (issue 35: with Algorithm 1's GD-rate stages as the windows, a 20 % slip in
    theory.gd_escape_rate moved a window off its plateau; the first version of this
    function, cbcbbe6, still took the levels from theory/, and a referee showed a 5 %
    slip in the quadratic's losses moved its second window past the run's end)."""
    ref = _REFERENCE[name]
    i = int(np.argmin(cfg.alphas))
    L = math.log(1 / cfg.alphas[i])
    tau = run.tau[i]
    stop = 0.9 * float(tau[-1])
    T_ref = [float(t) for t in ref["T"]]
    losses = [float(x) for x in ref["loss"]]
    levels = np.array([0.5 * (a + b) for a, b in zip([float(run.loss[i, 0]), *losses[:-1]],
                                                      losses, strict=True)])
    T = nr.jump_times(tau, run.loss[i], levels)
    points, missing = [], []
    for k in range(len(T_ref)):
        end_ref = T_ref[k + 1] if k + 1 < len(T_ref) else stop
        if not (end_ref <= stop and end_ref - T_ref[k] > 5 / L):
            continue  # not planned at this run's size
        start = float(T[k])
        end = float(T[k + 1]) if k + 1 < len(T) else stop
        if not (math.isfinite(start) and math.isfinite(end) and end <= stop):
            missing.append((k, f"planned plateau {k + 1} (table: tau {T_ref[k]:.3f} to "
                               f"{end_ref:.3f}) not observed within 90 % of the run: the model's "
                               f"crossings of the table's levels are {T.tolist()}"))
            continue
        t = 0.5 * (start + end)
        points.append((k, t, min(int(np.searchsorted(tau, t)), len(tau) - 1)))
    return points, missing


def _gd_value_part(name: str, k: int, prob: nr.Problem, loss_gd: float, w: np.ndarray,
                   where: str) -> Part:
    """The trained model's own loss mid-plateau k against the theory's g at the model's own
    w (``numerics.rank_increase.problem_loss``: theory.rank_increase.quadratic_value, or the
    theory's head loss): the reduction's premise that the network's loss is g(u * v), an
    identity at any state, so it tests that premise, not the dynamics.  The same function on
    both sides, so only float64 rounding of sums of O(100) terms separates them (about 100
    eps ~ 2e-14 relative; tolerance 1e-10); no theory moves the tolerance."""
    try:
        value = float(nr.problem_loss(prob)(np.asarray(w, dtype=float)))
    except THEORY_ERRORS + (TypeError,) as exc:
        return _raised(f"gd_{name}_plateau_{k + 1}_value: theory output usable",
                       "the theory's loss g at the trained w", exc)
    err = abs(loss_gd - value) / (1 + abs(loss_gd)) if math.isfinite(value) else math.inf
    return Part(f"gd_{name}_plateau_{k + 1}_value", value, loss_gd, err, 1e-10,
                "the trained model's loss (torch) against g at its own w, relative to "
                "1 + |loss|: float64 rounding only (an identity at any state: it tests the "
                "premise that the network's loss is g, not the dynamics); " + where,
                kind="simulation")


def _gd_plateau_parts(name: str, prob: nr.Problem, theory: Theory, ctx: Context,
                      details: dict) -> list[Part]:
    """Torch GD (the model trained by autograd on its own loss) at the smallest alpha of its
    ladder, mid-plateau, against the theory's w^k.

    At finite alpha the entries off the support of w^k are not 0 but ~ alpha^(2(1 - |b_i|))
    (the exact reduction s_i = alpha s_0i exp(-int g_i)), and the support's stationary
    point moves with them, to first order by H_SS^-1 H_SI w_I.  So the error on the
    support is allowed the 0.02 max(1, |w^k|) of the exact-flow part (our choice, for the
    second-order and transient remainder) plus that derived first-order response to the
    off-support entries this run measured; the off-support entries themselves must be
    within the 0.02 choice.  Both tolerance terms are taken at the row's reference table's
    w^k (since the second session of 2026-12-05; before, at the theory's own w^k, which let
    a wrong theory's larger w^k widen its tolerance).  Windows: the model's own plateaus
    (:func:`_observed_plateau_points`; until 2026-12-05 the paper's Algorithm 1 at the GD
    clock rates), each compared at its midpoint (the transient after a jump is not bounded
    here: at the test size the head's second plateau, cut at 90% of the run, was still
    converging, kappa_0 = 1.23 against 2)."""
    cfg = nr.standard_ladder(name, ctx.profile)
    run = nr.run_ladder(cfg, cache=ctx.cache)
    i = int(np.argmin(cfg.alphas))
    L = math.log(1 / cfg.alphas[i])
    try:
        predicted = theory.stages(prob)
    except (InadmissibleTheory, TypeError, *THEORY_ERRORS) as exc:
        return [_raised(f"gd_{name}_plateau_stages: theory output usable", "Algorithm 1",
                        exc)]
    points, missing = _observed_plateau_points(name, cfg, run)
    tau = run.tau[i]
    parts = [Part(f"gd_{name}_plateau_{k + 1}_support", math.nan, math.nan, math.inf, 0.0,
                  why, kind="simulation") for k, why in missing]
    # the midpoint of the whole plateau (T_k, T_{k+1}), the last one ending at 90% of the run,
    # as for the exact flow: a plateau cut short by the run is not compared at the cut
    for k, _t, j in points:
        w = run.w[i, j]
        pred = (_plateau_values(theory, predicted[k], prob.p) if k < len(predicted)
                else np.full(prob.p, np.nan))  # no stage predicted: an infinite error
        # the tolerance's terms at the reference table's w^k (a plan no theory under test
        # moves: a wrong theory's larger w^k must not widen its own tolerance)
        table_w = np.array([float(x) for x in _REFERENCE[name]["w"][k]])
        choice = PLATEAU_MARGIN * max(1.0, float(np.max(np.abs(table_w))))
        t_support = np.abs(table_w) > 0
        t_off = float(np.max(np.abs(w[~t_support]), initial=0.0))
        resp = _support_response(prob, table_w, t_support)
        support = np.abs(np.nan_to_num(pred)) > 0
        off = float(np.max(np.abs(w[~support]), initial=0.0))
        on_err = float(np.max(np.abs(w[support] - pred[support]), initial=0.0)) \
            if np.all(np.isfinite(pred)) else math.inf
        where = (f"torch GD at alpha = {cfg.alphas[i]:g} (L = {L:.1f}), lr {cfg.lr:g}, "
                 f"tau = {tau[j]:.3f} (mid-plateau)")
        parts.append(Part(
            f"gd_{name}_plateau_{k + 1}_support", float(np.nanmax(np.abs(pred)))
            if np.any(np.isfinite(pred)) else math.nan, float(np.max(np.abs(w))), on_err,
            choice + resp * t_off,
            "on the support of w^k: 0.02 max(1, |w^k|) (PLATEAU_MARGIN: the equivalence "
            "margin for the underived finite-alpha remainder, as for the exact flow) + "
            f"||H_SS^-1 H_SI||_inf = {resp:.3g} x the measured max off-support |w_i| = "
            f"{t_off:.3g} (the derived first-order move of the stationary point), both at "
            "the reference table's w^k; " + where,
            details={"w_gd": [float(x) for x in w], "w_pred": [float(x) for x in pred]},
            kind="simulation"))
        parts.append(Part(
            f"gd_{name}_plateau_{k + 1}_off_support", 0.0, off, off, choice,
            "off the support of w^k the entries are ~ alpha^(2(1 - |b_i|)), -> 0 as alpha -> 0; "
            "at this alpha within the 0.02 max(1, |w^k|) margin (PLATEAU_MARGIN); " + where,
            kind="simulation"))
        parts.append(_gd_value_part(name, k, prob, float(run.loss[i, j]), w, where))
        details[f"gd_{name}_w_{k + 1}"] = [float(x) for x in w]
    return parts


_EX_PLATEAU = (Example({"problem": "quadratic"}, via="worked example, incl. the switched-off stage"),
               Example({"problem": "head"}, via="the toy head of Fig. 2b"))


@claim(
    statement="mid-plateau w of the small-alpha flow equals Algorithm 1's stationary "
              "points w^k (quadratic incl. the switched-off stage; toy head)",
    source="the paper's limit theorem (our reconstruction): w(tau L) -> w^k between jumps",
    kind="reduced-vs-full",
    strategy=_pinned(*_EX_PLATEAU),
    theory={"theory": PAPER_THEORY},
    control={"theory": UNCONSTRAINED},
    control_description=UNCONSTRAINED.name,
    cost="slow",
    examples=_EX_PLATEAU,
    notes="Issue 35 (session of 2026-12-04): the gd_*_value parts compare the trained "
          "model's loss with g at its own w (an identity at any state).  They replace, before "
          "any mutate measurement, a first version that compared the loss with Stage.loss "
          "and g(w^k) under a Taylor allowance around the paper's w^k: a referee showed that "
          "allowance grew with a slip in theory/'s plateau values, "
          "so it could not judge them.  Session of 2026-12-05: the GD parts' windows are the "
          "model's own plateaus (_observed_plateau_points: the plateaus the row's reference "
          "table plans inside 90 % of the run, read between the model's crossings of levels "
          "halfway between the table's plateau losses), no longer Algorithm 1's at the GD "
          "rates; the reason is the mutate run at 76004b6, where a 20 % slip in "
          "gd_escape_rate moved a window off its plateau and set the claim's resolution "
          "(> 50 %).  A first version (cbcbbe6) took the levels from theory/, which a "
          "referee showed a 5 % slip in the quadratic's plateau losses could move past the "
          "run's end; a planned plateau the model does not show is now a failed part.  At "
          "quick the midpoints moved from tau = 1.683, 3.558 (quadratic) and 1.717 (head) "
          "to 1.799, 4.079 and 1.755 (the finite-alpha delay of the model's jumps), and "
          "every GD part still passes (largest: head support 0.0118 of 0.04); the "
          "quadratic's second plateau ends at tau 5.94 in the model, 0.18 inside the 6.12 "
          "cut.  The test profile's quadratic ladder was lengthened from tau 2.5 to 3.0 "
          "after a test run showed the model's second jump (2.35) past 90 % of 2.5.",
)
def check_plateaus(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    name = params["problem"]
    prob = _problem(name)
    run = nr.run_log_flow(nr.standard_log_flow(name, ctx.profile), cache=ctx.cache)
    k_alpha = run.config.alphas.index(1e-24)  # our tolerance needs alpha <= 1e-12; use 1e-24
    alpha = run.config.alphas[k_alpha]
    L = math.log(1 / alpha)
    # plateau windows (T_k, T_{k+1}) come from the paper's Algorithm 1 (theory-neutral)
    ends = [float(s.jump_time) for s in PAPER_THEORY.stages(prob)] + [float(run.tau[-1])]
    predicted = theory.stages(prob)
    parts, details = [], {}
    for k in range(len(ends) - 1):
        mid = 0.5 * (ends[k] + ends[k + 1])
        if not (ends[k + 1] - ends[k] > 5 / L and run.tau[0] <= mid <= run.tau[-1]):
            continue  # plateaus shorter than 5/L (or outside the run) are not resolved
        w_sim = run.w[k_alpha, min(int(np.searchsorted(run.tau, mid)), len(run.tau) - 1)]
        tol = PLATEAU_MARGIN * max(1.0, float(np.max(np.abs(w_sim))))
        why = ("equivalence margin (PLATEAU_MARGIN): |w_sim - w^k|_inf <= 0.02 max(1, |w^k|) "
               "at alpha <= 1e-12, not a derived bound (the finite-alpha offset mid-plateau is "
               f"not bounded here); log-form flow at alpha = {alpha:g}")
        if k >= len(predicted):  # the flow sits on a plateau the theory does not predict
            parts.append(Part(f"{name}_plateau_{k + 1}", math.nan, float(np.max(np.abs(w_sim))),
                              math.inf, tol, why + "; the theory predicts no stage here",
                              kind="symbolic"))
            continue
        pred = _plateau_values(theory, predicted[k], prob.p)
        err = float(np.max(np.abs(w_sim - pred)))
        parts.append(Part(
            f"{name}_plateau_{k + 1}", float(np.max(np.abs(pred))), float(np.max(np.abs(w_sim))),
            err, PLATEAU_MARGIN * max(1.0, float(np.max(np.abs(pred)))), why,
            kind="symbolic"))
        details[f"{name}_w_sim_{k + 1}"] = [float(x) for x in w_sim]
        details[f"{name}_w_pred_{k + 1}"] = [float(x) for x in pred]
    parts += _gd_plateau_parts(name, prob, theory, ctx, details)
    # the exact flow starts where GD starts: w(0) = alpha^2 u0 v0 through the log map
    u0, v0 = np.array(run.config.u0), np.array(run.config.v0)
    w0 = np.array(run.config.alphas)[:, None] ** 2 * (u0 * v0)[None, :]
    bound = [nr.initial_weight_bound(u0, v0, *tr.log_coordinates(u0, v0, a))
             for a in run.config.alphas]
    rel = float(np.max(np.abs(run.w[:, 0] - w0) / np.abs(w0) / np.array(bound)))
    parts.append(Part(
        f"{name}_initial_weights", 0.0, rel, rel, 1.0,
        "w(0) of the log-form flow = alpha^2 u0 v0 at every alpha: relative error in units "
        "of its float64 rounding bound eps (|2 sigma| + |2 kappa - 2 sigma| + 3) x the "
        "cancellation factor (u0^2 + v0^2)/(2|u0 v0|) of (s^2 - r^2)/4", kind="symbolic"))
    return Evidence(tuple(parts), details)


# ---------------------------------------------------------------------- 2b. the log flow is GD's limit
def _balanced_weights(sigma, kappa):
    """Control: the balanced read-out u = v, w = e^{2 sigma}/4 = (u + v)^2/4, which drops the
    conserved imbalance u^2 - v^2 = alpha^2 (u0^2 - v0^2) (a near miss of order alpha^2)."""
    del kappa  # the balanced reading has no imbalance term
    return np.exp(2 * np.asarray(sigma, dtype=float)) / 4


_EX_GD_LIMIT = (Example({"problem": "quadratic"},
                        via="the worked quadratic (diagonal linear network) from alpha theta_0"),
                Example({"problem": "head"}, via="the toy head of Fig. 2b from alpha theta_0"))


@claim(
    id="log_flow_is_gd_limit",
    statement="at one initialisation scale alpha, the log-form flow (sigma = log|u + v|, "
              "kappa = log|u^2 - v^2| conserved, w = (e^{2 sigma} - e^{2 kappa - 2 sigma})/4; "
              "our derivation: the diagonal network's gradient flow, exactly) is the "
              "small-step limit of the model's own GD from alpha theta_0: GD's w(t) "
              "extrapolated to step 0 equals the flow's w(t) at every recorded time t = "
              "lr steps (quadratic and toy head, alpha = 1e-2); for the quadratic, so is "
              "u ⊙ v of the (u, v) flow itself (theory.diagonal_flow)",
    source="the gradient flow the paper's limit theorem is about (GD with a small step, "
           "Section 2); theory.rank_increase.log_flow, log_coordinates, log_weight and, for "
           "the head, diagonal_head_problem's analytic gradient; diagonal_flow (our "
           "derivations)",
    kind="reduced-vs-full",
    strategy=_pinned(*_EX_GD_LIMIT),
    theory={"weights": tr.weights_from_log, "uv_flow": tr.diagonal_flow},
    control={"weights": _balanced_weights, "uv_flow": tr.diagonal_flow},
    control_description="the balanced read-out w = (u + v)^2/4 (imbalance dropped: of order "
                        "alpha^2 = 1e-4)",
    cost="slow",
    examples=_EX_GD_LIMIT,
    notes="Issue 35: the row's other log-flow parts compare theory with theory (the "
          "integrated log flow against Algorithm 1).  Here the model itself (numerics."
          "rank_increase.run_ladder: GD by torch autograd on the quadratic form or on the "
          "head's forward pass over its own labels) is the witness of the log flow the "
          "theory integrates (numerics.rank_increase.run_log_flow: theory.log_flow and "
          "log_coordinates; for the head, theory's analytic gradient), at the same alpha, "
          "so no alpha -> 0 limit enters the allowance.  GD is explicit Euler on the "
          "gradient flow in (u, v), so on common record times f_h(t) = f(t) + a(t) h + "
          "b(t) h^2 + O(h^3); steps h, h/2, h/4 (h the row's ladder step) and the "
          "Richardson allowance of markov.canonical_tracks_full.  Designed before any run "
          "of it; alpha = 1e-2 keeps the records' w above float64 rounding and the run "
          "short (tau L steps of h).  Two changes after runs, both to the harness: the "
          "first quick run compared the trainer's final-step records, which ceil(tau L/lr) "
          "puts at t = 12.9 for h and 12.895 for h/2 and h/4 (the head then sat at 0.99 of "
          "its allowance; 0.41 once that record is dropped); and, from the referee read, "
          "the Richardson term is the largest over each record and its neighbours, since "
          "it dips to 0 where b(t) changes sign.  The quadratic's second part (u ⊙ v of "
          "theory.diagonal_flow, the (u, v) flow itself, against the same step-0 limit) was "
          "added in the same stop so that the flow in the paper's own parameters is judged "
          "by the model too, not only its log form; the control (a read-out) does not reach "
          "it.  At quick after these changes: quadratic 0.337 of the allowance on both "
          "parts, head 0.335 (the second referee read of this stop).  Session of "
          "2026-12-05 (issue 35, before any run of the change): the flow now starts where "
          "theory.log_coordinates puts it (before, numerics refused any start that did not "
          "map back to the model's w(0), so a wrong map never reached this comparison), and "
          "a flow that diverges (a sign-flipped log_flow component: an ascent) is compared "
          "with GD on its records before the divergence, with a second failed part for the "
          "divergence, instead of refusing the run.",
)
def check_log_flow_is_gd_limit(params: dict, ctx: Context, *, weights: Callable,
                               uv_flow: Callable) -> Evidence:
    name = params["problem"]
    ladders = nr.gd_limit_ladders(name, ctx.profile)
    runs = [nr.run_ladder(cfg, cache=ctx.cache) for cfg in ladders]
    alpha = ladders[0].alphas[0]
    # the records the three runs share: every R-th step of h (the trainer also records the
    # final step, which ceil(tau L / lr) puts at slightly different times per step size:
    # the first run of this check compared t = 12.9 with 12.895 there, so such a record
    # is dropped)
    n = min(len(r.time) for r in runs)
    same = np.all([np.isclose(r.time[:n], runs[0].time[:n], rtol=1e-12, atol=0) for r in runs],
                  axis=0)
    n = int(np.argmin(same)) if not same.all() else n
    times = runs[0].time[:n]
    flows = [nr.run_log_flow(nr.gd_limit_flow(name, alpha, times, rtol), cache=ctx.cache)
             for rtol in (1e-10, 1e-12)]
    L = math.log(1 / alpha)
    sigma0, kappa = tr.log_coordinates(ladders[0].u0, ladders[0].v0, alpha)
    try:
        w_pred = np.asarray(weights(sigma0[None, :] + flows[0].b[0] * L, kappa[None, :]),
                            dtype=float)
    except (ArithmeticError, TypeError, ValueError) as e:
        w_pred, why = None, f"the theory's read-out w(sigma, kappa) raised {type(e).__name__}: {e}"
    else:
        why = (None if w_pred.shape == flows[0].w[0].shape else
               f"the theory's read-out w(sigma, kappa) has shape {w_pred.shape}, not "
               f"{flows[0].w[0].shape} (records x weights)")
    if why is not None:
        return Evidence((Part(f"{name} read-out: theory output usable", 0.0, math.nan, math.inf, 0.0,
                              why, kind="symbolic"),), {"invalid theory output": why})
    w_tight = flows[1].w[0]
    traj = [r.w[0, :n] for r in runs]
    # Richardson (as in markov.canonical_tracks_full): R_h = 2 f_{h/2} - f_h removes the O(h)
    # term and leaves -b h^2/2; R at the two smallest pairs differ by 3|b| h^2/8 while the
    # best is |b| h^2/8 from the flow, so |R_h - R_{h/2}| bounds its error with a 3x margin;
    # plus twice the flow solver's error (the change under 100-fold tighter tolerances) and
    # float64 rounding 1e-12 (1 + |w|)
    rich_prev, rich = 2 * traj[1] - traj[0], 2 * traj[2] - traj[1]
    allowance = (_local_max(np.linalg.norm(rich - rich_prev, axis=-1))
                 + 2 * np.linalg.norm(flows[0].w[0] - w_tight, axis=-1)
                 + 1e-12 * (1 + np.linalg.norm(rich, axis=-1)))
    # a flow that diverges (a wrong theory's ascent) is compared on its records before the
    # divergence, and the divergence itself is a failed part beside it (GD stays finite)
    live = np.all(np.isfinite(w_pred), axis=-1) & np.all(np.isfinite(w_tight), axis=-1)
    if not live.any():
        parts = [_diverged_flow_part(name, flows, rich, int(np.sum(~live)))]
        if name == "quadratic":
            parts.append(_uv_flow_part(ladders[0], times, rich, rich_prev, uv_flow))
        return Evidence(tuple(parts), {})
    part = declared_by_design(worst_member(
        f"{name}: w(t), GD extrapolated to step 0 (Richardson) vs the log flow",
        w_pred[live], rich[live], allowance[live],
        "per record time, |R(t) - w_flow(t)| (Euclidean over the p weights) with R = 2 "
        "f_{h/2} - f_h at the two smallest steps; allowance |R_h - R_{h/2}| (3x the O(h^2) "
        "remainder) + twice the flow solver's error + 1e-12 (1 + |R|); deterministic",
        details={"alpha": alpha, "steps": [c.lr for c in ladders], "records": int(n),
                 "t_end": float(times[-1]),
                 "max_abs_gap": float(np.max(np.linalg.norm(rich - w_pred, axis=-1))),
                 "w_motion": float(np.max(np.linalg.norm(w_pred - w_pred[0], axis=-1)))},
        kind="simulation"),
        "its main term |R_h - R_{h/2}| is the model's own; the theory enters only through "
        "twice its flow's solver error (the change under 100-fold tighter tolerances), of "
        "the order of the solver's rtol for any smooth flow, against a theory error that "
        "moves w by its share of w's motion over the run")
    parts = [part] if live.all() else [part, _diverged_flow_part(name, flows, rich,
                                                                 int(np.sum(~live)))]
    if name == "quadratic":
        parts.append(_uv_flow_part(ladders[0], times, rich, rich_prev, uv_flow))
    return Evidence(tuple(parts), {"w_flow_end": w_pred[-1].tolist(),
                                   "w_gd_end": rich[-1].tolist()})


def _diverged_flow_part(name: str, flows: list, rich: np.ndarray, dead: int = 0) -> Part:
    """A failed simulation part: the theory's log flow left every scale of the problem
    (numerics.rank_increase.ESCAPE_LOG) at a time where the trained model's step-0 limit is
    still finite, or (no divergence recorded) its read-out is not finite at ``dead``
    records."""
    t_div = [float(x) for f in flows for x in getattr(f, "diverged", ()) if math.isfinite(x)]
    top = float(np.max(np.abs(rich)))
    what = (f"the theory's log flow diverges (log|u +- v| reaches {nr.ESCAPE_LOG:g}) at "
            f"tau = {min(t_div):.4g}" if t_div else
            f"the theory's read-out w(sigma, kappa) is not finite at {dead} records")
    return Part(f"{name}: the log flow stays finite where the model does", math.inf, top,
                math.inf, 0.0,
                what + f", while GD extrapolated to step 0 stays within |w| <= {top:.3g} "
                "over the same records", kind="simulation")


def _local_max(a: np.ndarray) -> np.ndarray:
    """The largest of each record's value and its two neighbours': the Richardson estimate
    |R_h - R_{h/2}| is 3|b(t)| h^2/8 and dips to 0 where b(t) changes sign, while the error
    it bounds, |b(t)| h^2/8 plus O(h^3), need not (the referee read of this stop found a dip
    to 5.7e-6 between 3.9e-5 and 2.6e-5 on the head)."""
    padded = np.pad(a, 1, mode="edge")
    return np.maximum(np.maximum(padded[:-2], padded[1:-1]), padded[2:])


def _uv_flow_part(ladder: nr.LadderConfig, times: np.ndarray, rich: np.ndarray,
                  rich_prev: np.ndarray, uv_flow: Callable) -> Part:
    """The same limit against theory.diagonal_flow, the flow in (u, v) itself (quadratic:
    its loss is sympy), integrated from alpha theta_0 at rtol 1e-10 and 1e-12: u ⊙ v against
    GD's step-0 extrapolation, with the same Richardson allowance."""
    loss, w = _quadratic_symbolic(ladder.problem)
    a = ladder.alphas[0]
    y0 = np.concatenate([a * np.array(ladder.u0), a * np.array(ladder.v0)])
    p = ladder.problem.p
    try:
        system = uv_flow(loss, w)
        with np.errstate(over="ignore", invalid="ignore"):
            sols = [integrate(system, y0, float(times[-1]), t_eval=times, rtol=tol,
                              atol=tol * a * a) for tol in (1e-10, 1e-12)]
        if any(s_.y.shape[1] != len(times) for s_ in sols):
            raise RuntimeError("the (u, v) flow stopped before the last record")
    except (*THEORY_ERRORS, TypeError) as exc:
        return _raised("quadratic: u ⊙ v of the (u, v) diagonal flow vs GD extrapolated to "
                       "step 0", "theory.rank_increase.diagonal_flow", exc)
    uv = [s_.y[:p].T * s_.y[p:].T for s_ in sols]
    allowance = (_local_max(np.linalg.norm(rich - rich_prev, axis=-1))
                 + 2 * np.linalg.norm(uv[0] - uv[1], axis=-1)
                 + 1e-12 * (1 + np.linalg.norm(rich, axis=-1)))
    return worst_member(
        "quadratic: u ⊙ v of the (u, v) diagonal flow vs GD extrapolated to step 0",
        uv[1], rich, allowance,
        "as the log-flow part: |R_h - R_{h/2}| + twice the (u, v) flow's solver error (LSODA "
        "at rtol 1e-10 against 1e-12, atol scaled by alpha^2) + 1e-12 (1 + |R|)",
        details={"max_abs_gap": float(np.max(np.linalg.norm(rich - uv[1], axis=-1)))},
        kind="simulation")


# ---------------------------------------------------------------------- 3. jump times
def _jump_parts(prefix: str, problem: nr.Problem, L: np.ndarray, taus: list, losses: list,
                dtau: float, stages_pred, stages_lr, levels, lr_shift: bool, kind: str
                ) -> tuple[list[Part], dict]:
    Tm = np.array([nr.jump_times(t, loss, levels) for t, loss in zip(taus, losses, strict=True)])
    parts, pred, extr, gd_limit = [], [], [], []
    for k in _jump_window(problem, min(float(t[-1]) for t in taus[-2:])):
        Tk = float(stages_pred[k].jump_time) if k < len(stages_pred) else math.nan
        col = Tm[:, k] if k < Tm.shape[1] else np.full(len(L), np.nan)
        if not np.all(np.isfinite(col[-2:])):
            est, bar = math.nan, math.nan
        else:
            est, bar = _richardson(L, col, dtau)
        # GD: the O(lr) shift has a known sign and size (Algorithm 1 at the GD clock rates
        # log(1 + lr|gamma|)/lr, exact for s' = (1 - lr g) s), so it goes into the prediction,
        # not into the tolerance
        T_sim = (float(stages_lr[k].jump_time) if k < len(stages_lr) else math.nan) \
            if lr_shift else Tk
        err = abs(est - T_sim)
        # relative to the observed side's extrapolated T_k (the detection levels and the
        # window are the reference table's, so GD's est is the same under every theory; the
        # exact flow's is the theory's own, a symbolic part): a wrong theory's later T_k
        # cannot widen its own allowance
        tol = EXTRAPOLATION_MARGIN * max(1.0, abs(est)) if math.isfinite(est) \
            else EXTRAPOLATION_MARGIN
        parts.append(Part.bounded(
            f"{prefix}_T{k + 1}", T_sim, est, err, max(0.0, err - bar), err + bar, tol,
            "equivalence margin (EXTRAPOLATION_MARGIN): 1% of the extrapolated observed T_k "
            "or 0.01 absolute (theory-independent); Richardson removes the C/L term and the "
            "interval carries the O(1/L^2) remainder and the detection grid"
            + (f"; predicted: Algorithm 1 at the GD clock rates (gradient-flow T_k = {Tk:.5f}, "
               f"O(lr) shift {T_sim - Tk:+.4f})" if lr_shift else "")
            + "; interval: rung-to-rung change of the extrapolation plus grid resolution",
            confidence=0.99,
            details={"T_predicted": Tk, "T_predicted_this_simulation": T_sim,
                     "T_extrapolated": est, "T_measured": list(map(float, col)),
                     "L": list(map(float, L))}, kind=kind))
        pred.append(Tk)
        extr.append(est)
        gd_limit.append(float(stages_lr[k].jump_time) if k < len(stages_lr) else math.nan)
    return parts, {f"{prefix}_T_predicted": pred, f"{prefix}_T_extrapolated": extr,
                   f"{prefix}_T_limit_of_this_simulation": gd_limit}


_JUMP_RUNS = (("quadratic", "gd"), ("head", "gd"), ("quadratic", "ode"), ("head", "ode"))


def _jump_window(problem: nr.Problem, horizon: float) -> list[int]:
    """The stages compared: those whose jump time in the row's reference table lies within
    90% of ``horizon`` (the shorter tau range of the two smallest alphas): a plan no theory
    under test moves."""
    return [k for k, t in enumerate(_REFERENCE[problem.kind]["T"]) if float(t) <= 0.9 * horizon]


def _model_loss0(prob: nr.Problem, u0, v0, alpha: float) -> float:
    """The model's own torch loss at its start alpha theta_0 (g(0) to O(alpha^2))."""
    u = alpha * torch.tensor(u0, dtype=nr.DTYPE)
    v = alpha * torch.tensor(v0, dtype=nr.DTYPE)
    return float(nr.torch_loss(prob, torch.device("cpu"))({"u": u, "v": v}))


def _jump_failed(prefix: str, window: list[int], what: str, exc: Exception, kind: str,
                 alphas) -> Evidence:
    """Every compared stage's part failed under its own name: the theory (or its flow)
    raised or returned malformed stages."""
    return Evidence(tuple(_raised(f"{prefix}_T{k + 1}", what, exc, kind=kind) for k in window),
                    {f"{prefix}_T_predicted": [], f"{prefix}_T_extrapolated": [],
                     f"{prefix}_T_limit_of_this_simulation": [],
                     "alphas": [float(a) for a in alphas]})


def _usable_stages(theory: Theory, prob: nr.Problem, *rates: float) -> list[tuple]:
    """The theory's stages at each rate, with every jump time readable as a float (a
    malformed stage raises here, inside the caller's guard)."""
    out = []
    for lr in rates:
        stages = tuple(theory.stages(prob, lr))
        for s_ in stages:
            float(s_.jump_time)
        out.append(stages)
    return out


@claim(
    statement="jump times of GD and of the exact flow, Richardson-extrapolated in "
              "1/log(1/alpha), equal Algorithm 1's T_k",
    source="the paper's Algorithm 1, stage (A): T_{k+1} = T_k + Delta_k; Fig. 2a",
    kind="reduced-vs-full",
    strategy=_pinned(*({"problem": n, "sim": m} for n, m in _JUMP_RUNS)),
    theory={"theory": PAPER_THEORY},
    control={"theory": MEMORYLESS},
    control_description=MEMORYLESS.name,
    cost="slow",
    examples=(Example({"problem": "all"},
                      via="all four runs (GD and exact flow, both problems) in one evidence"),),
    notes="Detection levels (halfway between consecutive plateau losses, the first from the "
          "model's own torch loss at its start at the smallest alpha) and the window of "
          "compared stages come from the row's reference table (TABLE_THREE_COORDINATE, "
          "TABLE_TOY_HEAD), not from the paper's Algorithm 1 run at check time: the "
          "resolution run on c6b2f5b put this claim at 10 % through theory.quadratic_loss, "
          "which moved only the levels (second session of 2026-12-05; `verify --claim "
          "rank_increase.jump_times` at test and quick before and after the change gave the "
          "same parts to rounding).  The exact flow's parts (symbolic) read the theory's own "
          "flow and its loss g, so only the GD parts' observed side is theory-free.",
)
def check_jump_times(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    """All four simulations in one evidence, so that report.json's details carry every
    T_predicted next to its T_extrapolated (``{"problem": "all"}``), or one of them."""
    if params["problem"] == "all":
        evs = [check_jump_times({"problem": n, "sim": m}, ctx, theory=theory)
               for n, m in _JUMP_RUNS]
        side = {f"{m}_{n}": {"T_predicted": ev.details[f"{m}_{n}_T_predicted"],
                             "T_extrapolated": ev.details[f"{m}_{n}_T_extrapolated"],
                             "T_limit_of_this_simulation":
                                 ev.details[f"{m}_{n}_T_limit_of_this_simulation"],
                             "alphas": ev.details["alphas"]}
                for (n, m), ev in zip(_JUMP_RUNS, evs, strict=True)}
        return combine(*evs, details={"jump_times": side})
    name, sim = params["problem"], params["sim"]
    prob = _problem(name)
    # detection levels halfway between consecutive plateau losses of the row's reference
    # table, the first from the model's own loss at its start at the smallest alpha (g(0) to
    # O(alpha^2)), as the plateau claim's windows: a plan no theory under test moves (until
    # the second session of 2026-12-05 the paper's Algorithm 1 losses and theory's g(0),
    # through which a slip in theory.quadratic_loss moved the levels unseen)
    ref_losses = [float(x) for x in _REFERENCE[name]["loss"]]

    def table_levels(loss0: float) -> np.ndarray:
        return np.array([0.5 * (a + b) for a, b in zip([loss0, *ref_losses[:-1]], ref_losses,
                                                        strict=True)])

    errors = (InadmissibleTheory, *THEORY_ERRORS, *MALFORMED)
    if sim == "gd":
        cfg = nr.standard_ladder(name, ctx.profile)
        run = nr.run_ladder(cfg, cache=ctx.cache)
        keep = [i for i, a in enumerate(cfg.alphas) if a <= 1e-4 or len(cfg.alphas) <= 3]
        L = np.log(1 / np.asarray(cfg.alphas))[keep]
        levels = table_levels(float(run.loss[keep[-1], 0]))  # torch's loss at the start
        dtau = cfg.lr * cfg.record_every / L[-1]
        try:
            stages, stages_lr = _usable_stages(theory, prob, 0.0, cfg.lr)
        except errors as exc:
            return _jump_failed(f"gd_{name}", _jump_window(prob, min(
                float(run.tau[i][-1]) for i in keep[-2:])), "the theory's stages", exc,
                "simulation", np.exp(-L))
        parts, det = _jump_parts(f"gd_{name}", prob, L, [run.tau[i] for i in keep],
                                 [run.loss[i] for i in keep], dtau, stages, stages_lr, levels,
                                 True, "simulation")  # torch GD on the model's own loss
    else:
        cfg = nr.standard_log_flow(name, ctx.profile)
        use = [i for i, a in enumerate(cfg.alphas) if a >= 1e-16][-3:]  # three rungs <= L 36.8
        L = np.log(1 / np.asarray(cfg.alphas))[use]
        try:  # the theory's own flow (its loss is theory's g: symbolic parts)
            run = nr.run_log_flow(cfg, cache=ctx.cache)
            (stages,) = _usable_stages(theory, prob, 0.0)
        except errors as exc:
            return _jump_failed(f"ode_{name}", _jump_window(prob, cfg.tau_max),
                                "the theory's stages or log-form flow", exc, "symbolic",
                                np.exp(-L))
        levels = table_levels(_model_loss0(prob, cfg.u0, cfg.v0, cfg.alphas[use[-1]]))
        dtau = float(run.tau[1] - run.tau[0])
        parts, det = _jump_parts(f"ode_{name}", prob, L, [run.tau] * len(use),
                                 [run.loss[i] for i in use], dtau, stages, stages, levels, False,
                                 "symbolic")  # the theory's own log flow, integrated
    det["alphas"] = [float(a) for a in np.exp(-L)]
    return Evidence(tuple(parts), det)


# ---------------------------------------------------------------------- 4. clocks
_EX_CLOCK = (Example({"problem": "quadratic"}, via="worked example (switch-off, re-entry)"),
             Example({"problem": "head"}, via="the toy head of Figs. 2-3"))


def _stage_points(stages, tau_end: float, L_min: float, frac: float) -> list[tuple[int, float]]:
    """(k, tau) inside each plateau k of ``stages`` (0-based, ending at the next jump or at
    ``tau_end``): at ``frac`` of the plateau, for plateaus longer than 5/L_min (shorter ones
    are not resolved at that alpha)."""
    T = [float(s.jump_time) for s in stages] + [math.inf]
    out = []
    for k in range(len(stages)):
        end = min(T[k + 1], tau_end)
        if end - T[k] > 5.0 / L_min:
            out.append((k, T[k] + frac * (end - T[k])))
    return out


def _richardson_rungs(alphas) -> list[int]:
    """The three rungs of the exact-flow ladders used for Richardson: the last three with
    alpha >= 1e-16 (L <= 36.8), as for the jump times."""
    return [i for i, a in enumerate(alphas) if a >= 1e-16][-3:]


def _gd_clocks(run: nr.LadderRun, cfg: nr.LadderConfig) -> np.ndarray:
    """The trained model's clocks b_i(tau) = log|s_i(tau L) / s_i(0)| / L per rung,
    [K, T, p], from the recorded s = u + v alone (sigma = log|u + v|, the log form's
    coordinate, theory.rank_increase's module docstring)."""
    s = np.asarray(run.s, dtype=float)
    L = np.log(1 / np.asarray(cfg.alphas, dtype=float))
    return np.log(np.abs(s / s[:, :1, :])) / L[:, None, None]


def _log_coordinates_at_init(name: str, run: nr.LadderRun, cfg: nr.LadderConfig) -> Part:
    """theory.rank_increase.log_coordinates (the map the log flow starts from) of the init
    alpha (u0, v0) against the trained model's own first record, per rung: sigma = log|s(0)|
    and kappa = log|I(0)| with s = u + v and I = u^2 - v^2 as recorded.  The same
    quantities, so only float64 rounding separates them (1e-12 (1 + |x|))."""
    s0 = np.asarray(run.s, dtype=float)[:, 0, :]
    i0 = np.asarray(run.imbalance, dtype=float)[:, 0, :]
    try:
        coords = [tr.log_coordinates(cfg.u0, cfg.v0, a) for a in cfg.alphas]
        sigma = np.array([np.asarray(c[0], dtype=float) for c in coords])
        kappa = np.array([np.asarray(c[1], dtype=float) for c in coords])
        if sigma.shape != s0.shape or kappa.shape != i0.shape:
            raise ValueError(f"log_coordinates gave shapes {sigma.shape}, {kappa.shape}; "
                             f"want {s0.shape}")
    except THEORY_ERRORS + (TypeError,) as exc:
        return _raised(f"gd_{name}_log_coordinates_at_init", "theory.rank_increase."
                       "log_coordinates", exc)
    obs = np.concatenate([np.log(np.abs(s0)), np.log(np.abs(i0))])
    pred = np.concatenate([sigma, kappa])
    with np.errstate(invalid="ignore"):
        rel = np.abs(obs - pred) / (1 + np.abs(obs))
    err = float(np.max(rel)) if np.all(np.isfinite(rel)) else math.inf
    # symbolic: record 0 is taken before any update, so no training enters its observed side
    return Part(f"gd_{name}_log_coordinates_at_init", 0.0, err, err, 1e-12,
                "(sigma, kappa) of theory.log_coordinates at alpha (u0, v0), every rung, "
                "against (log|u + v|, log|u^2 - v^2|) of the model's first record (before any "
                "update); relative to 1 + |x|: float64 rounding only", kind="symbolic")


def _interpolated(tau: np.ndarray, b: np.ndarray, t: float) -> tuple[float, float]:
    """b at t by linear interpolation between records, and a bound on its error: a quarter
    of the largest second difference of the records around t (linear interpolation errs by
    at most h^2 |b''| / 8 and h^2 b'' is the second difference: a 2x margin)."""
    j = int(np.clip(np.searchsorted(tau, t), 2, len(tau) - 2))
    second = np.abs(np.diff(b[j - 2:j + 2], n=2))
    return float(np.interp(t, tau, b)), 0.25 * float(np.max(second))


def _falling_clock_drift(problem: nr.Problem, run: nr.LadderRun, cfg: nr.LadderConfig
                         ) -> np.ndarray:
    """Per rung, record and coordinate, a bound on how far the model's clock sigma = log|u + v|
    (divided by L) has drifted from the escape clock Algorithm 1 advances at GD's rates, from
    the run alone [K, T, p].  GD multiplies s = u + v by 1 - lr gamma and r = u - v by
    1 + lr gamma (gamma = dg/dw_i): while gamma_i < 0 the clock rises through s and sigma is
    the escape clock exactly; while gamma_i > 0 it falls, the escape goes through r (which
    float64 cannot read once |s| ~ 1: |r| ~ alpha^2/|s|), and sigma moves by log(1 - lr gamma)
    instead of -log(1 + lr gamma), log(1 - lr^2 gamma^2) apart per step.  The sum of those
    gaps over the steps with gamma_i > 0, each record interval taken at the larger gamma^2
    of its two ends, divided by L.  gamma is the model's own gradient (torch autograd of its
    loss at the recorded w), so no theory enters."""
    from torch.func import grad, vmap

    loss = nr.torch_loss(problem, "cpu")
    w = torch.tensor(np.asarray(run.w, dtype=float))
    flat = w.reshape(-1, w.shape[-1])
    g = vmap(grad(lambda x: loss({"u": x, "v": torch.ones_like(x)})))(flat)
    gamma = g.reshape(w.shape).numpy()
    step_gap = -np.log1p(-np.minimum((cfg.lr * gamma) ** 2, 1 - 1e-12)) * (gamma > 0)
    per_interval = np.maximum(step_gap[:, 1:], step_gap[:, :-1]) * cfg.record_every
    L = np.log(1 / np.asarray(cfg.alphas, dtype=float))
    cum = np.concatenate([np.zeros_like(per_interval[:, :1]), np.cumsum(per_interval, axis=1)],
                         axis=1)
    return cum / L[:, None, None]


def _gd_clock_parts(name: str, prob: nr.Problem, theory: Theory, ctx: Context,
                    details: dict) -> list[Part]:
    """The trained model's clocks (torch GD on the model's own loss, the alpha ladder of the
    jump-time claim) against the theory's clock path at the GD clock rates (Algorithm 1 at
    rates log(1 + lr |gamma|)/lr, as for GD's jump times), mid-plateau of the paper's flow
    stages (:func:`_gd_plateau_points` at lr = 0, so a slip in the GD rates cannot move the
    evaluation points; a slip in the flow's jump times can, and a point it drops is not
    compared).

    Per coordinate, b at the point is Richardson-extrapolated in 1/L over the rungs of
    :func:`check_jump_times` (alpha <= 1e-4; all of them when the ladder has three or fewer,
    as at the test size) with :func:`_richardson`: the last pair, and its change when the
    pair moves one rung down.  Allowance per coordinate, every term from the run alone (the
    same under every theory): that change; the interpolation bound and the falling-clock
    drift (:func:`_falling_clock_drift`), each carried through the Richardson weights
    (L2 x2 + L1 x1)/(L2 - L1); and 1e-9.  The first term is an asymptotic estimate, not a
    bound: if the remainder is c/L^2 from L0 on, the estimate from the pair (L1, L2) sits
    c/(L1 L2) from the limit and moves by c (L2 - L0)/(L0 L1 L2) from the previous pair's,
    so the change exceeds the remainder by (L2 - L0)/L0 (2 at quick's L = 9.2, 18.4, 27.6);
    a 1/L^3 term of the other sign would shrink that margin.  The part is the worst
    coordinate's error in units of its allowance (tolerance 1), over every coordinate."""
    cfg = nr.standard_ladder(name, ctx.profile)
    run = nr.run_ladder(cfg, cache=ctx.cache)
    keep = [i for i, a in enumerate(cfg.alphas) if a <= 1e-4 or len(cfg.alphas) <= 3]
    L = np.log(1 / np.asarray(cfg.alphas))[keep]
    b = _gd_clocks(run, cfg)
    drift = _falling_clock_drift(prob, run, cfg)
    parts = [_log_coordinates_at_init(name, run, cfg)]
    try:
        stages = theory.stages(prob, cfg.lr)
        points = _gd_plateau_points(prob, cfg, run, lr=0.0)
    except (InadmissibleTheory, TypeError, *THEORY_ERRORS) as exc:
        return [*parts, _raised(f"gd_{name}_clocks_stages: theory output usable",
                                "Algorithm 1 (the theory's at the GD clock rates, the "
                                "paper's for the windows)", exc)]
    weights = np.array([L[-2], L[-1]]) / (L[-1] - L[-2])
    for k, t, _j in points:
        try:
            pred = np.asarray(tr.clock_path(stages, t)[0], dtype=float)
            if pred.shape != (prob.p,):
                raise ValueError(f"clock_path gave shape {pred.shape}, want ({prob.p},)")
        except (TypeError, *THEORY_ERRORS) as exc:
            parts.append(_raised(f"gd_{name}_clocks_plateau_{k + 1}: theory output usable",
                                 "theory.clock_path", exc))
            continue
        est, allow = np.zeros(prob.p), np.zeros(prob.p)
        for c in range(prob.p):
            vals = [_interpolated(run.tau[i], b[i, :, c], t) for i in keep]
            est[c], bar = _richardson(L, np.array([v for v, _ in vals]), 0.0)
            fall = [float(np.interp(t, run.tau[i], drift[i, :, c])) for i in keep[-2:]]
            carried = weights @ np.array([vals[-2][1] + fall[0], vals[-1][1] + fall[1]])
            allow[c] = bar + carried + 1e-9
        with np.errstate(invalid="ignore"):
            ratio = np.abs(est - pred) / allow
        ratio = np.where(np.isfinite(ratio), ratio, math.inf)
        c = int(np.argmax(ratio))
        parts.append(Part(
            f"gd_{name}_clocks_plateau_{k + 1}", float(pred[c]), float(est[c]),
            float(ratio[c]), 1.0,
            "worst coordinate's |b_GD - b_theory| in units of its allowance: the Richardson "
            "estimate's change when the rung pair moves down (an asymptotic estimate of the "
            "c/L^2 remainder, margin (L2 - L0)/L0) + the interpolation bound and the "
            "falling-clock drift of sigma from the escape clock, through the Richardson "
            f"weights, + 1e-9; torch GD, alphas {[cfg.alphas[i] for i in keep]}, "
            f"lr {cfg.lr:g}, tau = {t:.3f} (mid-plateau); prediction: theory.clock_path of "
            "Algorithm 1 at the GD clock rates",
            details={"tau": t, "coordinate": c, "b_extrapolated": est.tolist(),
                     "b_predicted": pred.tolist(), "allowance": allow.tolist()},
            kind="simulation"))
        details[f"gd_{name}_b_extrapolated_{k + 1}"] = est.tolist()
    return parts


@claim(
    statement="the clocks b(tau), Richardson-extrapolated in 1/log(1/alpha) inside every "
              "plateau, equal the piecewise-linear path through Stage.clocks (incl. the "
              "switched-off coordinate moving back from +1)",
    source="the paper's limit theorem (our reconstruction): the clocks b_i tend to a "
           "piecewise-linear path with slope -grad g(w^k) on inactive coordinates",
    kind="reduced-vs-full",
    strategy=_pinned(*_EX_CLOCK),
    theory={"theory": PAPER_THEORY},
    control={"theory": MEMORYLESS},
    control_description=MEMORYLESS.name,
    cost="slow",
    examples=_EX_CLOCK,
    notes="Issue 35 (session of 2026-12-04): the gd_* parts make the trained model the "
          "witness (torch GD ladders of jump_times), beside the symbolic parts on the "
          "theory's own log flow, which are unchanged.  Design changes after runs, all in "
          "that session and before its mutate measurement: the first version read sigma(0) "
          "through theory.log_coordinates (a referee found the observed side then carried "
          "theory; it now reads the run alone, and log_coordinates is checked against the "
          "model's first record in a symbolic part); an allowance term made of the GD-rate "
          "correction's own size was dropped (a slip in gd_escape_rate could widen it); a "
          "probe with the quadratic's ladder run past quick's window showed the sigma clock "
          "of a switched-off coordinate leaving Algorithm 1's GD-rate clock, which led first "
          "to comparing only never-falling coordinates (a referee found that selection read "
          "theory/) and then to the derived falling-clock drift in the allowance, with every "
          "coordinate compared.  Limitation seen in a probe of the same session (head ladder "
          "run to tau 4.0, past quick's 2.8): plateau 3 failed at 2.31 allowances on an "
          "active coordinate (0.99976 against 1, allowance 1e-4), so the rung-change "
          "estimate can understate the remainder late in a run; quick's windows do not reach "
          "there.",
)
def check_clocks(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    """The integrated log flow's clocks (symbolic parts) and the trained model's (GD parts).
    A theory whose log flow is inadmissible (its start map or its flow out of its domain)
    fails a part with the reason, and the trained model's clocks are still compared."""
    name = params["problem"]
    prob = _problem(name)
    det: dict = {}
    gd = _gd_clock_parts(name, prob, theory, ctx, det)
    try:
        flow = _flow_clock_parts(name, prob, theory, ctx, det)
    except (InadmissibleTheory, *THEORY_ERRORS, TypeError) as exc:
        flow = [_raised(f"{name}_clocks_log_flow", "the theory's log flow "
                        "(theory.rank_increase.log_coordinates, log_flow)", exc)]
    return Evidence((*flow, *gd), det)


def _flow_clock_parts(name: str, prob: nr.Problem, theory: Theory, ctx: Context,
                      det: dict) -> list[Part]:
    """The clocks of the theory's own log flow (numerics.rank_increase.run_log_flow),
    Richardson-extrapolated in 1/L, against clock_path: symbolic parts."""
    run = nr.run_log_flow(nr.standard_log_flow(name, ctx.profile), cache=ctx.cache)
    use = _richardson_rungs(run.config.alphas)
    L = np.log(1 / np.asarray(run.config.alphas))[use]
    stages = theory.stages(prob)
    # evaluation points: mid-plateau of the paper's stages (theory-neutral, same for control)
    points = _stage_points(PAPER_THEORY.stages(prob), float(run.tau[-1]), float(L[0]), 0.5)
    parts = []
    for k, t in points:
        j = int(np.argmin(np.abs(run.tau - t)))
        pred = tr.clock_path(stages, run.tau[j])[0]
        errs, bars, ests = [], [], []
        for i in range(prob.p):
            est, bar = _richardson(L, run.b[use, j, i], 0.0)
            errs.append(abs(est - pred[i]))
            bars.append(bar)
            ests.append(est)
        errs, bars = np.array(errs), np.array(bars)
        i = int(np.argmax(errs))
        parts.append(Part.bounded(
            f"{name}_clocks_plateau_{k + 1}", float(pred[i]), float(ests[i]), float(errs[i]),
            float(np.max(np.maximum(errs - bars, 0.0))), float(np.max(errs + bars)),
            EXTRAPOLATION_MARGIN,
            "equivalence margin (EXTRAPOLATION_MARGIN, as for the jump times): 0.01 on clocks "
            "of size <= 1; Richardson in 1/L removes the C/L offset of b (for an active "
            "coordinate exactly log|s/s0|/L); worst coordinate; interval: rung-to-rung change "
            "of the extrapolation, the O(1/L^2) remainder's estimate (the same tau grid "
            "point for every alpha)",
            details={"tau": float(run.tau[j]), "coordinate": i,
                     "b_extrapolated": [float(x) for x in ests],
                     "b_predicted": [float(x) for x in pred]}, kind="symbolic"))
        det[f"{name}_b_extrapolated_{k + 1}"] = [float(x) for x in ests]
    det["alphas"] = [float(run.config.alphas[i]) for i in use]
    return parts


# ---------------------------------------------------------------------- 5. order and signs
def _sim_events(tau: np.ndarray, w: np.ndarray, threshold: float) -> tuple:
    """(coordinate, sign, switched-off) events: additions, with removals attached to the
    addition that precedes them."""
    active = np.abs(w) > threshold
    sign = np.sign(w)
    events: list[list] = []
    for t in range(1, len(tau)):
        added = np.nonzero(active[t] & ~active[t - 1])[0]
        removed = np.nonzero(~active[t] & active[t - 1])[0]
        for i in added:
            events.append([int(i), int(sign[t, i]), []])
        if events:
            events[-1][2].extend(int(j) for j in removed)
    return tuple((i, s, tuple(sorted(r))) for i, s, r in events)


def _model_gradient(prob: nr.Problem, w) -> np.ndarray:
    """grad g at ``w`` from the model's own torch loss by autograd (u = w, v = 1, so d/du of
    the loss of u * v is grad g(w)): no theory/ in it."""
    u = torch.tensor(np.asarray(w, dtype=float), dtype=nr.DTYPE, requires_grad=True)
    nr.torch_loss(prob, torch.device("cpu"))({"u": u, "v": torch.ones_like(u)}).backward()
    return u.grad.detach().numpy()


def _observable_switch_offs(events, ref: dict, prob: nr.Problem, L: float, horizon: float,
                            threshold: float) -> tuple:
    """``events`` with each switch-off kept only where a run at L = log(1/alpha) can see it
    cross ``threshold`` before ``horizon``: a coordinate j switched off at T_k decays from
    |w_j^(k-1)| as exp(-2 |g_j(w^k)| t) (s_j and r_j both shrink at the rate |g_j|), i.e.
    it crosses the threshold log(|w_j^(k-1)|/threshold)/(2 |g_j(w^k)| L) after T_k in tau.
    The plan: T_k and w^k from the row's reference table ``ref`` (:data:`_REFERENCE`), g_j
    from the model's own loss (:func:`_model_gradient`), so no theory under test moves it
    (until 2026-12-05 the paper's stages at the GD rate and theory's gradient, through which
    slips in theory.gd_escape_rate and quadratic_gradient moved the plan); an event whose
    switch-off cannot be timed keeps it."""
    out = []
    for k, (c, sign, off) in enumerate(events):
        keep = []
        for j in off:
            try:
                prev = abs(float(ref["w"][k - 1][j])) if k else 0.0
                gam = abs(float(_model_gradient(prob, [float(x) for x in ref["w"][k]])[j]))
                delay = (math.log(prev / threshold) / (2 * gam * L)
                         if prev > threshold and gam > 0 else 0.0)
                seen = float(ref["T"][k]) + delay <= horizon
            except (IndexError, TypeError, ValueError):
                seen = True
            if seen:
                keep.append(j)
        out.append((c, sign, tuple(keep)))
    return tuple(out)


_ORDER_PARTS = ({"kind": "symbolic", "N": 2, "d": 2}, {"kind": "sim", "problem": "quadratic"},
                {"kind": "sim", "problem": "head"})


def _are_symbols(*groups) -> bool:
    return all(isinstance(x, sp.Symbol) for g in groups for x in g)


def _symbolic_head(N: int, d: int, name: str, kind: str):
    """(g, kappa, nu) of theory.rank_increase.diagonal_head_loss_symbolic(N, d), or the
    failed part ``name`` when the theory raises, returns no triple, or returns KQ/VO
    variables that are not sympy symbols."""
    try:
        g, kappa, nu = tr.diagonal_head_loss_symbolic(N, d)
        ok = _are_symbols(kappa, nu) and isinstance(g, sp.Expr)
    except (*THEORY_ERRORS, *MALFORMED) as exc:
        return _raised(name, "the theory's symbolic head", exc, kind=kind)
    return (g, kappa, nu) if ok else _not_symbols(name, kappa, nu, kind=kind)


def _not_symbols(name: str, kappa, nu, kind: str = "symbolic") -> Part:
    """A failed part: the theory's symbolic head returned variables that are not symbols
    (nothing can be differentiated with respect to them, or substituted for)."""
    return Part(name, 0.0, math.nan, math.inf, 0.0,
                "the theory's symbolic head must return its KQ and VO variables as sympy "
                f"symbols; got {list(kappa)[:2]}..., {list(nu)[:2]}...", kind=kind)


def _symbolic_head_on_gd(prob: nr.Problem, gd: nr.LadderRun, i: int) -> Part:
    """The symbolic head the VO-first identity is derived from
    (theory.rank_increase.diagonal_head_loss_symbolic at the toy's N, d: one sample's loss
    in symbols), averaged over the toy's samples at the trained model's own (kappa, nu) at
    five records of its GD run, against the loss torch recorded there.  The same function,
    so only float64 rounding separates them (relative to 1 + |loss|, 1e-10): a slip in the
    symbolic head shows against the trained model.  A symbolic head that cannot be
    evaluated (variables that are not symbols, a lambdify or evaluation error) fails this
    part, under its own name: the trained model cannot be compared with it."""
    name = "gd_symbolic_head_loss"
    X, Y = nr._head_data(prob)
    N, d = X.shape[1], X.shape[2]
    head = _symbolic_head(N, d, name, "simulation")
    if isinstance(head, Part):
        return head
    g, kappa, nu = head
    xs = [sp.Symbol(f"x{a}{c}", real=True) for a in range(N) for c in range(d)]
    ys = [sp.Symbol(f"y{a}{c}", real=True) for a in range(N) for c in range(d)]
    try:
        f = sp.lambdify((*xs, *ys, *kappa, *nu), g, "numpy")
    except (NameError, TypeError, ValueError, SyntaxError) as exc:
        return _raised(name, "lambdify of the symbolic head", exc, kind="simulation")
    cols = [*X.reshape(X.shape[0], -1).T, *Y.reshape(Y.shape[0], -1).T]
    records = np.linspace(0, gd.w.shape[1] - 1, 5).astype(int)
    # the trained states visit kappa_1, kappa_2, nu_2 ~ 0 only: five random states too
    # (N(0, 0.7^2) entries, numpy seed 0), where the model's own torch loss is evaluated
    model_loss = nr.torch_loss(prob, torch.device("cpu"))
    rand = np.random.default_rng(0).normal(0.0, 0.7, (5, 2 * d))
    states = [(gd.w[i, j], float(gd.loss[i, j])) for j in records] + [
        (w, float(model_loss({"u": torch.tensor(w, dtype=nr.DTYPE),
                              "v": torch.ones(2 * d, dtype=nr.DTYPE)})))
        for w in rand]
    err, worst = 0.0, (math.nan, math.nan)
    for w, obs in states:
        try:
            with np.errstate(all="ignore"):
                sym = float(np.mean(f(*cols, *w[:d], *w[d:])))
        except (NameError, TypeError, ValueError, ArithmeticError) as exc:
            return _raised(name, "the lambdified symbolic head", exc, kind="simulation")
        e = abs(sym - obs) / (1 + abs(obs)) if math.isfinite(sym) else math.inf
        if e >= err:
            err, worst = e, (sym, obs)
    return Part(name, worst[0], worst[1], err, 1e-10,
                "the symbolic one-sample head (diagonal_head_loss_symbolic), averaged over the "
                "toy's samples, against the model's own torch loss: at the trained (kappa, nu) "
                "of five records of the GD run at its smallest alpha (torch's recorded loss) "
                "and at five random states (N(0, 0.7^2), seed 0; the trained ones leave "
                "kappa_1, kappa_2, nu_2 at ~0); the same function, so float64 rounding only "
                "(relative to 1 + |loss|, 1e-10; an identity at any state: it tests the "
                "symbolic head, not the dynamics)",
                details={"records": records.tolist()}, kind="simulation")


def _symbolic_head_agrees(N: int, d: int, seed: int = 0) -> Part:
    """The symbolic one-sample head (its loss and KQ/VO gradients, differentiated by sympy)
    against the numeric head loss and analytic gradient at a random point."""
    head = _symbolic_head(N, d, "symbolic_head_matches_numeric", "symbolic")
    if isinstance(head, Part):
        return head
    g, kappa, nu = head
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((1, N, d)), rng.standard_normal((1, N, d))
    w = rng.standard_normal(2 * d) * 0.7
    sub = {sp.Symbol(f"x{a}{i}", real=True): X[0, a, i] for a in range(N) for i in range(d)}
    sub.update({sp.Symbol(f"y{a}{i}", real=True): Y[0, a, i] for a in range(N) for i in range(d)})
    sub.update(dict(zip((*kappa, *nu), w, strict=True)))
    head = tr.HeadProblem(X, Y)
    try:  # a head in other symbols (no real=True, other names) does not evaluate to floats
        sym = np.array([float(g.subs(sub))]
                       + [float(sp.diff(g, x).subs(sub)) for x in (*kappa, *nu)])
        num = np.concatenate([[head.loss(w)], head.gradient(w)])
    except (*THEORY_ERRORS, *MALFORMED) as exc:
        return _raised("symbolic_head_matches_numeric", "evaluating the symbolic head", exc)
    err = float(np.max(np.abs(sym - num)) / max(1.0, float(np.max(np.abs(num)))))
    return Part("symbolic_head_matches_numeric", 0.0, err, err, 1e-10,
                "the symbolic head used for the identity is the numeric head: loss and "
                "gradient at a random point, float64 rounding (relative 1e-10)", kind="symbolic")


@claim(
    statement="coordinates switch on in Algorithm 1's order with its signs and "
              "switch-offs; VO before KQ since dg/dKQ = 0 at VO = 0",
    source="the paper's Algorithm 1 and Fig. 2b; our derivation of why VO comes first",
    kind="reduced-vs-full",
    strategy=_pinned({"kind": "all"}),
    theory={"theory": PAPER_THEORY},
    control={"theory": UNCONSTRAINED},
    control_description=UNCONSTRAINED.name + " (predicts no switch-off and no re-entry)",
    cost="slow",
    examples=(Example({"kind": "all"}, via="the symbolic identity (smallest generic head, "
                      "N = d = 2), the worked example (switch-off, sign-flipped re-entry) and "
                      "the toy head of Fig. 2b, in one evidence"),),
)
def check_order_and_signs(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    """All three parts in one evidence, so that the report shows the simulated event
    sequences beside the symbolic identity (``{"kind": "all"}``), or one of them."""
    kind = params["kind"]
    if kind == "all":
        return combine(*(check_order_and_signs(q, ctx, theory=theory) for q in _ORDER_PARTS))
    if kind == "symbolic":
        head = _symbolic_head(params["N"], params["d"], "kq_gradient_zero_at_nu0", "symbolic")
        if isinstance(head, Part):
            return Evidence((head,), {"N": params["N"], "d": params["d"]})
        g, kappa, nu = head
        at_zero = {n_: 0 for n_ in nu}
        drift = sp.Tuple(*(sp.diff(g, k).subs(at_zero) for k in kappa))
        return Evidence((
            identically_zero("kq_gradient_zero_at_nu0", sum(x**2 for x in drift),
                             "symbolic identity (exact): sum_i (dg/dkappa_i)^2 at nu = 0 "
                             "for a generic one-sample head must simplify to 0", kind="symbolic"),
            _symbolic_head_agrees(params["N"], params["d"])),
            {"N": params["N"], "d": params["d"]})
    name = params["problem"]
    prob = _problem(name)
    error = None  # a wrong theory's stages or flow fail the parts that need them
    try:
        pred = tuple(_events(theory.stages(prob)))
    except (InadmissibleTheory, *THEORY_ERRORS, *MALFORMED) as exc:
        pred, error = (), ("Algorithm 1", exc)
    try:
        run = nr.run_log_flow(nr.standard_log_flow(name, ctx.profile), cache=ctx.cache)
        k = len(run.config.alphas) - 1 if name == "head" else run.config.alphas.index(1e-16)
        sim = _sim_events(run.tau, run.w[k], 1e-3)
    except (InadmissibleTheory, *THEORY_ERRORS) as exc:
        sim, flow_error = (), ("the theory's log-form flow", exc)
    else:
        flow_error = None
    if error or flow_error:
        parts = [_raised(f"{name}_event_sequence", *(error or flow_error))]
    else:
        mismatch = sum(a != b for a, b in zip(sim, pred, strict=False)) \
            + abs(len(sim) - len(pred))
        parts = [Part(f"{name}_event_sequence", len(pred), len(sim), float(mismatch), 0.0,
                      "integer: activation order, signs and switch-offs must match "
                      f"exactly at alpha = {run.config.alphas[k]:g} (|w_i| > 1e-3 threshold)",
                      kind="symbolic")]
    # the full model: torch GD at the smallest alpha of its ladder; the events the row's
    # reference table puts within 90% of its tau range (a plan no theory under test moves)
    cfg = nr.standard_ladder(name, ctx.profile)
    gd = nr.run_ladder(cfg, cache=ctx.cache)
    i = int(np.argmin(cfg.alphas))
    horizon = 0.9 * float(gd.tau[i][-1])
    ref = _REFERENCE[name]
    n_in = sum(1 for t in ref["T"] if float(t) <= horizon)
    L_gd = math.log(1 / cfg.alphas[i])
    # a switch-off the plan puts past the horizon is dropped from both sides: the model is
    # read to the run's end, so one it shows there is no evidence against the theory
    sim_gd = _observable_switch_offs(_sim_events(gd.tau[i], gd.w[i], 1e-3)[:n_in], ref, prob,
                                     L_gd, horizon, 1e-3)
    if error:
        parts.append(_raised(f"gd_{name}_event_sequence", *error, kind="simulation"))
    else:
        want = _observable_switch_offs(pred[:n_in], ref, prob, L_gd, horizon, 1e-3)
        miss = sum(a != b for a, b in zip(sim_gd, want, strict=False)) \
            + abs(len(sim_gd) - len(want))
        parts.append(Part(
            f"gd_{name}_event_sequence", len(want), len(sim_gd), float(miss), 0.0,
            "integer: the first events of torch GD (autograd on the model's own loss) at "
            f"alpha = {cfg.alphas[i]:g}, lr {cfg.lr:g}, |w_i| > 1e-3: order, signs and "
            "switch-offs = Algorithm 1's, for its events within 90% of the run's tau range "
            "(the reference table's T_k); a switch-off is compared only when its derived "
            "crossing of the threshold, T_k + log(|w_j^(k-1)|/1e-3)/(2 |g_j(w^k)| L), lies in "
            "that range (T_k and w^k from the reference table, g from the model's own "
            "loss), on both sides", kind="simulation"))
    if name == "head":
        parts.append(_symbolic_head_on_gd(prob, gd, i))
        d = prob.d  # coordinates 0..d-1 are KQ, d..2d-1 are VO
        if error or flow_error:
            parts.append(_raised("head_vo_first", *(error or flow_error)))
        else:
            pred_vo = float(bool(pred) and pred[0][0] >= d)
            first_vo = float(bool(sim) and sim[0][0] >= d)  # the simulation's first
            parts.append(Part("head_vo_first", pred_vo, first_vo, abs(first_vo - pred_vo),
                              0.0, "integer: the simulation's first switched-on coordinate is "
                              "a VO entry exactly when the theory's first stage is (why VO "
                              "comes first)", kind="symbolic"))
    return Evidence(tuple(parts), {f"{name}_simulated": [list(e) for e in sim],
                                   f"{name}_predicted": [list(e) for e in pred],
                                   f"{name}_gd_simulated": [list(e) for e in sim_gd]})


# ---------------------------------------------------------------------- 6. first jump
def _first_crossing(tau: np.ndarray, x: np.ndarray, level: float) -> float:
    idx = np.nonzero(x >= level)[0]
    if idx.size == 0:
        return math.nan
    j = int(idx[0])
    if j == 0:
        return float(tau[0])
    f = (level - x[j - 1]) / (x[j] - x[j - 1])
    return float(tau[j - 1] + f * (tau[j] - tau[j - 1]))


def _gd_first_jump(T: float, lr: float) -> float:
    """A first jump at T = 1/|gamma| under gradient flow, seen by GD with step lr: the clock
    then runs at the GD escape rate (theory.rank_increase.gd_escape_rate), T_gd = 1/rate."""
    if not (math.isfinite(T) and T > 0):
        return T
    return float(1.0 / tr.gd_escape_rate(1.0 / T, lr))


def _full_head_gradients(cfg: nr.FullHeadConfig) -> tuple[np.ndarray, np.ndarray]:
    """(dg/dM, dg/dP) at theta = 0 (theory) on the data the run trained on."""
    X, Y = nr.full_head_data(cfg)
    d = cfg.problem.d
    return tr.full_head_gradients(X, Y, np.zeros((d, d)), np.zeros((d, d)))


def _autograd_vo_gradient(cfg: nr.FullHeadConfig) -> np.ndarray:
    """dg/dP at theta = 0 by torch autograd of the simulation's full-head loss (W_K = W_V =
    0, W_Q = W_O = I, so dg/dW_V = dg/dP there): theory-free."""
    import torch

    X, Y = nr.full_head_data(cfg)
    d = cfg.problem.d
    eye = torch.eye(d, dtype=nr.DTYPE)
    params = {"WK": torch.zeros((d, d), dtype=nr.DTYPE), "WQ": eye,
              "WV": torch.zeros((d, d), dtype=nr.DTYPE, requires_grad=True), "WO": eye}
    nr.full_head_loss_torch(torch.tensor(X), torch.tensor(Y))(params).backward()
    return params["WV"].grad.numpy().copy()


def _gradients_match_autograd(cfg: nr.FullHeadConfig, seed: int = 0) -> Part:
    """theory's (dg/dM, dg/dP) against torch autograd of the simulation's full-head loss at
    a random (M, P) (W_K = M, W_V = P, W_Q = W_O = I, so dg/dW_K = dg/dM, dg/dW_V = dg/dP)."""
    import torch

    X, Y = nr.full_head_data(cfg)
    d = cfg.problem.d
    rng = np.random.default_rng(seed)
    M, P = rng.standard_normal((d, d)) * 0.5, rng.standard_normal((d, d)) * 0.5
    params = {"WK": torch.tensor(M, requires_grad=True), "WQ": torch.eye(d, dtype=nr.DTYPE),
              "WV": torch.tensor(P, requires_grad=True), "WO": torch.eye(d, dtype=nr.DTYPE)}
    nr.full_head_loss_torch(torch.tensor(X), torch.tensor(Y))(params).backward()
    auto = np.concatenate([params["WK"].grad.numpy().ravel(), params["WV"].grad.numpy().ravel()])
    G_M, G_P = tr.full_head_gradients(X, Y, M, P)
    ours = np.concatenate([np.ravel(G_M), np.ravel(G_P)])
    err = float(np.max(np.abs(ours - auto)) / max(1.0, float(np.max(np.abs(auto)))))
    # symbolic: an untrained evaluation, the analytic gradient against autograd's derivation
    return Part("full_head_gradients_match_autograd", 0.0, err, err, 1e-10,
                "the theory's analytic gradients (softmax backward) vs torch autograd of the "
                "simulated loss at a random (M, P): float64 rounding, relative 1e-10",
                kind="symbolic")


_EX_FIRST = (Example({"problem": "quadratic"}, via="worked example's GD ladder"),
             Example({"problem": "head"}, via="the toy head's GD ladder"),
             Example({"problem": "full_head"}, via="our non-diagonal bridge test"),
             Example({"problem": "full_head_nonnormal"},
                     via="full head with a non-normal teacher VO matrix: 1/sigma_max, "
                         "1/spectral radius, 1/max diagonal and 1/Frobenius far apart"))


@claim(
    statement="first jump at 1/||grad g(0)||_inf (diagonal) and 1/sigma_max(dg/dP(0)) "
              "(full head), the full head's VO leaving 0 along -u_1 v_1^T, the top "
              "singular pair of dg/dP(0)",
    source="our derivation: the escape rate of the small-init linearisation (diagonal: "
           "max |g_i(0)|; full head: the top singular value, and its pair for the "
           "direction, theory.rank_increase.escape_direction)",
    kind="reduced-vs-full",
    strategy=_pinned(*_EX_FIRST),
    theory={"theory": PAPER_THEORY},
    control={"theory": EUCLIDEAN_JUMP},
    control_description=EUCLIDEAN_JUMP.name,
    cost="slow",
    examples=_EX_FIRST,
    notes="On the toy head's diagonal teacher the candidate full-head formulas (top singular "
          "value, spectral radius, largest diagonal entry) agree within the tolerance, so the "
          "full-head formula is decided by the non-normal teacher, where they differ by many "
          "tolerances (details list each candidate's prediction).  The escape-direction "
          "part (issue 35, session of 2026-12-05: a sign flip of dg/dP(0) left T_1 and "
          "every simulation part unchanged) reads the learned VO at sigma_max = 0.01 and "
          "0.03; those levels were chosen after a scratch look at the quick runs' overlaps "
          "at levels 0.01, 0.03, 0.1 and 0.3 (working tree of 76004b6, before the part was "
          "written: 1 - overlap at alpha = 1e-6 was 4.1e-8, 3.0e-7, 3.2e-6, 3.1e-5 for "
          "full_head and 3.7e-7, 9.2e-7, 6.2e-6, 5.3e-5 for the non-normal teacher, growing "
          "with the level as the nonlinear turn does).  Quick at 76004b6 (allowance without "
          "the later factor 2): |P̂ - D| 0.00029 of 0.0015 and 0.00086 of 0.0023, so a 1 % "
          "slip in the direction (error 0.01) is resolved at quick; not at test (smallest "
          "alpha 1e-3: 0.028 of 0.035).",
)
def check_first_jump(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    name = params["problem"]
    level = 0.1  # escape detected when the largest |w_i| (or sigma_max) first reaches 0.1
    alt = {}
    if name in ("full_head", "full_head_nonnormal"):
        cfg = (nr.standard_full_head(ctx.profile) if name == "full_head"
               else nr.standard_full_head_nonnormal(ctx.profile))
        run = nr.run_full_head(cfg, cache=ctx.cache)
        G_M, G_P = _full_head_gradients(cfg)
        pred = float(theory.first_jump_full(G_M, G_P))
        series = [run.sv_vo[k, :, 0] for k in range(len(cfg.alphas))]
        taus = [run.tau[k] for k in range(len(cfg.alphas))]
        alt = {"1/sigma_max": 1 / float(np.linalg.svd(G_P, compute_uv=False)[0]),
               "1/spectral_radius": 1 / float(np.max(np.abs(np.linalg.eigvals(G_P)))),
               "1/max_diagonal": 1 / float(np.max(np.abs(np.diag(G_P)))),
               "1/frobenius": 1 / float(np.linalg.norm(G_P))}
    else:
        prob = _problem(name)
        cfg = nr.standard_ladder(name, ctx.profile)
        run = nr.run_ladder(cfg, cache=ctx.cache)
        g0 = nr.problem_gradient(prob)(np.zeros(prob.p))
        pred = float(theory.first_jump(g0))
        series = [np.max(np.abs(run.w[k]), axis=-1) for k in range(len(cfg.alphas))]
        taus = [run.tau[k] for k in range(len(cfg.alphas))]
    lr, rec, alphas = cfg.lr, cfg.record_every, cfg.alphas
    T = np.array([_first_crossing(t, s, level) for t, s in zip(taus, series, strict=True)])
    L = np.log(1 / np.asarray(alphas))
    est, bar = _richardson(L, T, lr * rec / L[-1])
    pred_gd = _gd_first_jump(pred, lr)
    err = abs(est - pred_gd)
    alt_gd = {k: _gd_first_jump(v, lr) for k, v in alt.items()}
    # the 1% is relative to the observed side's extrapolated T_1 (0.01 absolute below 1, or
    # when nothing crossed): it does not move with the theory under test, so a wrong T_1
    # cannot buy a wider allowance (check and control share it)
    tol = EXTRAPOLATION_MARGIN * max(1.0, abs(est)) if math.isfinite(est) \
        else EXTRAPOLATION_MARGIN
    ev = Evidence((Part.bounded(
        f"{name}_first_jump", pred_gd, est, err, max(0.0, err - bar), err + bar, tol,
        "equivalence margin (EXTRAPOLATION_MARGIN): 1% of the extrapolated observed T_1 "
        "(0.01 absolute below 1; theory-independent); T_1 is exact up to O(1/L), removed by "
        "Richardson, and the interval carries the remainder and the grid; "
        f"predicted: the theory's T_1 = {pred:.5f} at its GD escape rate log(1 + lr/T_1)/lr "
        f"(O(lr) shift {pred_gd - pred:+.4f}); interval: rung-to-rung change + grid",
        details={"T_predicted": pred, "T_predicted_gd": pred_gd, "T_extrapolated": est,
                 "T_measured": T.tolist(), "candidates_gd": alt_gd}, kind="simulation"),),
        {"T_predicted": pred, "T_extrapolated": est})
    if alt:  # the full head: its gradients are the simulation's
        ev = Evidence((*ev.parts, _escape_direction_part(name, cfg, run, G_P),
                       _gradients_match_autograd(cfg)), ev.details)
    return ev


#: The VO level at which the escape direction is read (and three times it, for the
#: allowance): small against the plateau's O(1) VO, large against alpha^2.
DIRECTION_LEVEL = 0.01

#: A factor 2 on the escape direction's leading-order allowance: our choice, not a derived
#: bound.  The two error terms move in opposite senses between the levels (the other pairs'
#: share shrinks, the nonlinear turn grows), so their motions can partly cancel and the
#: motion then underestimates the error at the lower level (the referee read of 76004b6).
DIRECTION_MARGIN = 2.0


def _escape_direction_part(name: str, cfg: nr.FullHeadConfig, run: nr.FullHeadRun,
                           G_P: np.ndarray) -> Part:
    """The trained full head's learned VO, ΔW_V W_Oᵀ, at the first record where its top
    singular value reaches :data:`DIRECTION_LEVEL` (smallest alpha of the run), normalised,
    against theory.rank_increase.escape_direction of theory's dg/dP(0): the Frobenius
    distance.

    Allowance (to leading order, from the run and the spectrum of dg/dP(0) by autograd, not
    theory's): the unit VO P̂(l) differs from the small-init direction D by the other
    singular pairs' share, e_sub(l) ∝ (l/alpha^2)^{-(1 - r)/2} (r = sigma_2/sigma_1), and the
    nonlinear turn, e_nl(l) ∝ l.  Between the level l and the record l' >= 3 l the direction
    moves by (1 - rho^{-(1 - r)/2}) |e_sub| and about (rho - 1) |e_nl| (rho = l'/l), so
    K |P̂(l) - P̂(l')| with K = 1/(1 - rho^{-(1 - r)/2}) bounds |P̂(l) - D| to that order
    (K >= 1/(rho - 1) covers the nonlinear part); the two motions can partly cancel, so K is
    doubled (DIRECTION_MARGIN, our choice, not a bound); plus float64 rounding 1e-12.  The
    distance does not renormalise D: a theory direction of the wrong size is a wrong
    direction.  This part has no near-miss control of its own: the claim's control
    (EUCLIDEAN_JUMP) changes the jump time only and is rejected by the first-jump part."""
    k = int(np.argmin(cfg.alphas))
    where = f"torch GD on the full head at alpha = {cfg.alphas[k]:g}, lr {cfg.lr:g}"
    name_ = f"{name}_escape_direction"
    try:
        D = np.asarray(tr.escape_direction(G_P), dtype=float)
        if D.shape != G_P.shape or not np.all(np.isfinite(D)):
            raise ValueError(f"escape_direction gave shape {D.shape} or non-finite entries")
    except (*THEORY_ERRORS, TypeError) as exc:
        return _raised(name_, "theory.rank_increase.escape_direction", exc)
    if run.vo is None:
        return Part(name_, math.nan, math.nan, math.inf, 0.0,
                    "the run did not record the learned VO matrix", kind="simulation")
    top = run.sv_vo[k, :, 0]
    j = int(np.argmax(top >= DIRECTION_LEVEL))
    j3 = int(np.argmax(top >= 3 * DIRECTION_LEVEL))
    if top[j] < DIRECTION_LEVEL or top[j3] < 3 * DIRECTION_LEVEL:
        return Part(name_, 0.0, float(np.max(top)), math.inf, 0.0,
                    f"the learned VO never reaches {3 * DIRECTION_LEVEL:g} in the run; " + where,
                    kind="simulation")
    if j3 <= j:  # the record grid jumps past both levels at once: nothing to compare
        return Part(name_, 0.0, float(top[j]), math.inf, 0.0,
                    f"the first record at or above {DIRECTION_LEVEL:g} is already at or above "
                    f"{3 * DIRECTION_LEVEL:g}: the records are too coarse; " + where,
                    kind="simulation")
    unit = [run.vo[k, i] / np.linalg.norm(run.vo[k, i]) for i in (j, j3)]
    # sigma_2/sigma_1 of dg/dP(0) by torch autograd of the model's own loss (not theory's
    # gradient: a wrong theory must not widen its own allowance)
    sv = np.linalg.svd(_autograd_vo_gradient(cfg), compute_uv=False)
    r = float(sv[1] / sv[0]) if sv.size > 1 and sv[0] > 0 else 0.0
    rho = float(top[j3] / top[j])
    # leading-order factor, doubled (DIRECTION_MARGIN): e_sub shrinks and e_nl grows as the
    # level rises, so where they point the same way their motions partly cancel; for
    # (1 - r)/2 <= 1/2 it is >= 1/(rho - 1), the nonlinear term's factor
    K = DIRECTION_MARGIN / (1.0 - rho ** (-(1.0 - r) / 2))
    move = float(np.linalg.norm(unit[0] - unit[1]))
    err = float(np.linalg.norm(unit[0] - D))
    return Part(
        name_, 1.0, float(np.sum(unit[0] * D)), err, K * move + 1e-12,
        f"|P̂ - D|_F at the first record with sigma_max(ΔW_V W_O^T) >= {DIRECTION_LEVEL:g} "
        f"(tau = {run.tau[k, j]:.3f}); allowance K |P̂(l) - P̂(l')| = {K:.3g} x {move:.3g} "
        f"(l'/l = {rho:.3g}, sigma_2/sigma_1 = {r:.3g}: the direction still moving, to "
        "leading order, times DIRECTION_MARGIN = 2, our choice) + 1e-12; observed: the "
        "overlap <P̂, D>; " + where,
        details={"overlap_at_3l": float(np.sum(unit[1] * D)), "record": j, "record_3l": j3},
        kind="simulation")


# ---------------------------------------------------------------------- 7. rank +<= 1
_EX_RANK = (Example({"problem": "quadratic"}, via="worked example's GD ladder"),
            Example({"problem": "head"}, via="the toy head's GD ladder"),
            Example({"problem": "full_head"}, via="our non-diagonal bridge test"))


def _plateau_rank_parts(prefix: str, tau: np.ndarray, w_or_counts, stages, paper_stages,
                        L: float, blocks: Callable, counter: Callable, kind: str) -> list[Part]:
    """Per plateau (at its midpoint; plateaus shorter than 5/L are not resolved): the
    simulated rank (per block) against the support of Algorithm 1's w^k."""
    parts = []
    for k, t in _stage_points(paper_stages, float(np.nanmax(tau)), L, 0.5):
        j = int(np.argmin(np.abs(tau - t)))
        pred = blocks(stages[k]) if k < len(stages) else None
        obs = counter(j, paper_stages[k])
        err = (float(sum(abs(int(a) - int(b)) for a, b in zip(obs, pred, strict=True)))
               if pred is not None else math.inf)
        parts.append(Part(f"{prefix}_rank_plateau_{k + 1}",
                          float(sum(pred)) if pred is not None else math.nan, float(sum(obs)),
                          err, 0.0,
                          f"integer: ranks (per block) mid-plateau (tau = {tau[j]:.3f}) = the "
                          "support of Algorithm 1's w^k",
                          details={"observed": [int(x) for x in obs],
                                   "predicted": None if pred is None else [int(x) for x in pred]},
                          kind=kind))
    return parts


def _switch_off_time(prob: nr.Problem, before, after, thr: float) -> float:
    """Flow time for the coordinates the jump into plateau w^k (``after``) switches off to
    fall below ``thr`` from their values on the plateau before (``before``): off the support
    a coordinate of the balanced small-init flow obeys d|w_i|/dt = -2|grad_i g(w^k)| |w_i|
    (s_i' = -s_i grad_i g, w_i = s_i^2/4), so it needs ln(|w_i^(k-1)|/thr)/(2|grad_i g(w^k)|).
    0 when nothing switches off; inf when a switched-off coordinate has no restoring
    gradient."""
    w_prev = np.array([float(x) for x in before], dtype=float)
    w_k = np.array([float(x) for x in after], dtype=float)
    off = (w_prev != 0) & (w_k == 0) & (np.abs(w_prev) > thr)
    if not off.any():
        return 0.0
    g = np.abs(np.asarray(nr.problem_gradient(prob)(w_k), dtype=float)[off])
    if not np.all(np.isfinite(g)) or np.any(g == 0):
        return math.inf
    return float(np.max(np.log(np.abs(w_prev[off]) / thr) / (2 * g)))


def _gd_rank_points(prob: nr.Problem, cfg: nr.LadderConfig, run: nr.LadderRun
                    ) -> list[tuple[int, int, float]]:
    """(k, record index at the smallest alpha, threshold) for each plateau of the paper's
    Algorithm 1 at the GD rate that the run covers: from T_k + the derived switch-off time
    (:func:`_switch_off_time`, in tau: / L) to the next jump or 90 % of the run, compared at
    the middle of that window when it is longer than 5/L (a coordinate switched off at T_k
    is still decaying through the threshold before it: at alpha = 1e-32 the worked example's
    third plateau needs 0.48 in tau).  Windows and thresholds (0.05 max|w^k|) from the
    paper's stages, the same under every theory checked."""
    i = int(np.argmin(cfg.alphas))
    L = math.log(1 / cfg.alphas[i])
    tau = run.tau[i]
    stages = PAPER_THEORY.stages(prob, cfg.lr)
    ends = [float(s_.jump_time) for s_ in stages] + [0.9 * float(tau[-1])]
    out = []
    for k, st_ in enumerate(stages):
        thr = 0.05 * max(abs(float(x)) for x in st_.plateau)
        before = stages[k - 1].plateau if k else [0.0] * prob.p
        start = ends[k] + _switch_off_time(prob, before, st_.plateau, thr) / L
        end = min(ends[k + 1], ends[-1])
        if end - start > 5 / L:
            out.append((k, min(int(np.searchsorted(tau, 0.5 * (start + end))), len(tau) - 1),
                        thr))
    return out


def _switch_on_part(name: str, counts: np.ndarray, stages) -> Part:
    inc = int(np.max(np.diff(counts), initial=0))
    pred_inc = _max_added(stages)
    return Part(name, pred_inc, inc, abs(inc - pred_inc), 0.0,
                "integer: largest rise of the rank between records (grid << shortest "
                "plateau) = most coordinates Algorithm 1 switches on at one jump",
                kind="simulation")


@claim(
    statement="the rank grows by at most one per stage (one coordinate at a time), and on "
              "each plateau equals the support of Algorithm 1's w^k (diagonal models, full head)",
    source="the paper's corollary: rank dW_K W_Q^T + rank dW_V W_O^T grows by at most one "
           "per stage",
    kind="reduced-vs-full",
    strategy=_pinned(*_EX_RANK),
    theory={"theory": PAPER_THEORY},
    control={"theory": UNCONSTRAINED},
    control_description=UNCONSTRAINED.name + " (predicts rank 3 on the worked example's "
                        "third plateau)",
    cost="slow",
    examples=_EX_RANK,
    notes="Plateau ranks are read off the exact flow at the smallest alpha of its ladder, "
          "with the threshold 0.05 max|w^k| (above the plateau claim's 2% bound on the "
          "off-support entries): at the GD ladder's alphas a coordinate whose clock is near "
          "+-1 already exceeds a fixed threshold mid-plateau (|w_i| ~ alpha^(2(1-|b_i|))), "
          "which a quick run showed on the worked example's first and third plateaus.  The "
          "rise between records is read off the GD ladder (alpha <= 1e-4, |w_i| > 1e-3).  "
          "Issue 35 items 5 (session of 2026-12-05): the gd_*_rank parts count the trained "
          "model's active coordinates on the Fig. 2a ladder's smallest alpha (1e-32, the "
          "staircase claim's run) against the theory's supports, each plateau read after the "
          "derived switch-off time (_switch_off_time: 0.48 in tau for the worked example's "
          "third plateau, whose switched-off coordinate decays at 2|grad_0 g(w^3)|); on the "
          "quick ladder (1e-12) that time, 1.28, outlasts the run, and a first window at the "
          "plateau's midpoint counted the decaying coordinate (3 against 2) in a quick run.  "
          "The UNCONSTRAINED control differs from the paper only on that plateau, where "
          "quadratic_gd_rank_plateau_3 now rejects it (3 predicted, 2 counted).",
    qualitative="ranks and switch-on counts: integers, which a theory's scale moves only "
                "where it moves a support or a switch-on (the plateau values, jump times and "
                "clocks of the same runs are the plateaus, jump_times and clocks claims')",
)
def check_rank_plus_one(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    name = params["problem"]
    d = HEAD.d
    if name == "full_head":
        cfg = nr.standard_full_head(ctx.profile)
        run = nr.run_full_head(cfg, cache=ctx.cache)
        k = len(cfg.alphas) - 1
        counts = np.stack([nr.active_count(run.sv_kq[k], 0.05),
                           nr.active_count(run.sv_vo[k], 0.05)], axis=-1)
        stages = theory.stages(HEAD)
        parts = _plateau_rank_parts(
            "full_head", run.tau[k], None, stages, PAPER_THEORY.stages(HEAD),
            math.log(1 / cfg.alphas[k]), lambda s: (_support(s, 0, d), _support(s, d)),
            lambda j, _s: tuple(int(x) for x in counts[j]), "simulation")
        parts.append(_switch_on_part("full_head_max_switch_on", counts.sum(-1), stages))
        seq = [(0, 0)]
        for a, b in counts:
            if (int(a), int(b)) != seq[-1]:
                seq.append((int(a), int(b)))
        return Evidence(tuple(parts), {"rank_sequence": seq, "alpha": cfg.alphas[k],
                                       "thresholds": "singular values > 0.05"})
    prob = _problem(name)
    stages = theory.stages(prob)
    flow = nr.run_log_flow(nr.standard_log_flow(name, ctx.profile), cache=ctx.cache)
    kf = len(flow.config.alphas) - 1

    def count(j, paper_stage):
        thr = 0.05 * max(abs(float(x)) for x in paper_stage.plateau)
        return (int(nr.active_count(flow.w[kf, j], thr)),)

    parts = _plateau_rank_parts(f"{name}_exact_flow", flow.tau, None, stages,
                                PAPER_THEORY.stages(prob), math.log(1 / flow.config.alphas[kf]),
                                lambda s: (_support(s),), count,
                                "symbolic")  # read off the theory's own log flow
    cfg = nr.standard_ladder(name, ctx.profile)
    run = nr.run_ladder(cfg, cache=ctx.cache)
    det = {}
    # the trained model's rank on each plateau against the support of the theory's w^k, at
    # the smallest alpha of the Fig. 2a ladder (the staircase claim's GD run), threshold
    # 0.05 max|w^k| of the paper's plateau as for the exact flow, in the windows of
    # _gd_rank_points (after the derived switch-off time)
    scfg = nr.standard_staircase_ladder(name, ctx.profile)
    srun = nr.run_ladder(scfg, cache=ctx.cache)
    i = int(np.argmin(scfg.alphas))
    try:
        points = _gd_rank_points(prob, scfg, srun)
    except (InadmissibleTheory, TypeError, *THEORY_ERRORS) as exc:
        points = []
        parts.append(_raised(f"{name}_gd_rank: windows usable", "Algorithm 1's windows", exc,
                             kind="simulation"))
    for k, j, thr in points:
        obs = int(nr.active_count(srun.w[i, j][None], thr)[0])
        pred = _support(stages[k]) if k < len(stages) else None
        parts.append(Part(
            f"{name}_gd_rank_plateau_{k + 1}", math.nan if pred is None else float(pred),
            float(obs), math.inf if pred is None else float(abs(obs - pred)), 0.0,
            f"integer: #{{|w_i| > {thr:.3g}}} of the trained model (torch GD, alpha = "
            f"{scfg.alphas[i]:g}, lr {scfg.lr:g}) at tau = {srun.tau[i, j]:.3f} (the "
            "plateau's window after the derived switch-off time) = the support of the "
            "theory's w^k", kind="simulation"))
    # the largest rise between records against Algorithm 1's most coordinates switched on
    # at one jump (_max_added of the theory's stages): one except at exact ties, so on these
    # problems it tests the trained model against the paper's corollary more than theory/'s
    # numbers; the rank parts above read theory/'s supports
    for k, a in enumerate(cfg.alphas):
        if a > 1e-4:
            continue  # small init only: alpha <= 1e-4
        counts = nr.active_count(run.w[k], 1e-3)
        parts.append(_switch_on_part(f"{name}_max_switch_on_alpha_{a:g}", counts, stages))
        det[f"counts_alpha_{a:g}"] = sorted(set(counts.tolist()))
    det["exact_flow_alpha"] = flow.config.alphas[kf]
    return Evidence(tuple(parts), det)


# ---------------------------------------------------------------------- 8. invariants
def _quadratic_symbolic(prob: nr.Problem):
    w = sp.symbols(f"w0:{prob.p}", real=True)
    H = sp.Matrix(prob.H).applyfunc(sp.nsimplify)
    b = sp.Matrix(prob.beta).applyfunc(sp.nsimplify)
    return tr.quadratic_loss(H, b, w), w


@claim(
    statement="u_i^2 - v_i^2, the invariant diagonal_flow declares, is conserved by the flow "
              "(symbolic) and changes under GD only by the exact factor (1 - lr^2 g_i^2) per "
              "step; GD is the forward-Euler discretisation of diagonal_flow",
    source="conservation law of the diagonal flow (our derivation; theory.rank_increase."
           "imbalance, diagonal_flow, gd_imbalance_factor)",
    kind="symbolic",
    strategy=st.one_of(
        st.fixed_dictionaries({"kind": st.just("symbolic"), "p": st.integers(1, 3),
                               "seed": st.integers(0, 10_000)})),
    theory={"theory": PAPER_THEORY},
    control={"theory": SWAPPED_INVARIANT},
    control_description=SWAPPED_INVARIANT.name + " (sign swapped)",
    examples=(Example({"kind": "symbolic", "p": 3, "seed": 0},
                      via="a cubic-plus-quadratic loss in p = 3"),
              Example({"kind": "gd", "problem": "quadratic"},
                      via="GD's exact discrete law on the worked example"),
              Example({"kind": "gd", "problem": "head"},
                      via="GD's exact discrete law on the toy head"),
              Example({"kind": "euler", "problem": "quadratic"},
                      via="torch GD against Euler steps of diagonal_flow on the worked example")),
)
def check_imbalance(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    if params["kind"] == "symbolic":
        rng = np.random.default_rng(params["seed"])
        p = params["p"]
        w = sp.symbols(f"w0:{p}", real=True)
        coeffs = rng.integers(-3, 4, size=(p, p))
        g = sum(sp.Rational(int(coeffs[i, j]), 2) * w[i] * w[j] for i in range(p)
                for j in range(p)) + sum(sp.Rational(int(c), 3) * w[i] ** 3
                                         for i, c in enumerate(rng.integers(-2, 3, size=p)))
        system = tr.diagonal_flow(g, w)
        parts = []
        for i in range(p):
            inv = theory.system_invariant(system, i)
            drift = sum((sp.diff(inv, x) * r for x, r in zip(system.state, system.rhs,
                                                             strict=True)), sp.S.Zero)
            parts.append(identically_zero(
                f"symbolic_drift_{i}", drift,
                "symbolic identity (exact): d/dt of the declared invariant along diagonal_flow",
                kind="symbolic"))
        return Evidence(tuple(parts))
    name = params["problem"]
    prob = _problem(name)
    cfg = nr.standard_imbalance_run(name, ctx.profile)
    run = nr.run_ladder(cfg, cache=ctx.cache)
    a = cfg.alphas[0]
    u0, v0 = a * np.array(cfg.u0), a * np.array(cfg.v0)
    if params["kind"] == "euler":
        # GD's step u' = u - lr g(w) v is exactly one forward-Euler step of diagonal_flow's
        # right-hand side: iterate that rhs (theory) and compare with torch's autograd GD
        loss, w = _quadratic_symbolic(prob)
        rhs = tr.diagonal_flow(loss, w).lambdify()
        y = np.concatenate([u0, v0])
        s_obs, I_obs = run.s[0], run.imbalance[0]
        u_obs = 0.5 * (s_obs + I_obs / s_obs)  # I = (u - v)(u + v), so u - v = I/s
        v_obs = 0.5 * (s_obs - I_obs / s_obs)
        err = 0.0
        for n in range(len(run.time)):
            if n:
                y = y + cfg.lr * rhs(0.0, y)
            scale = np.maximum(np.abs(np.concatenate([u_obs[n], v_obs[n]])), a)
            err = max(err, float(np.max(np.abs(y - np.concatenate([u_obs[n], v_obs[n]]))
                                        / scale)))
        # simulation: the observed side is the torch GD run (the full model); the prediction
        # iterates the theory's diagonal_flow
        return Evidence((Part(
            f"{name}_gd_is_euler_of_diagonal_flow", 0.0, err, err, 1e-9,
            "GD = forward Euler of diagonal_flow, step lr: identical up to float64 rounding "
            "(~1e-16 per step, grown at most by the flow's expansion over the run; 1e-9 "
            "relative, floored at alpha)", details={"steps": cfg.steps, "lr": cfg.lr},
            kind="simulation"),),
            {"steps": cfg.steps})
    # GD: u' = u - lr g v, v' = v - lr g u  =>  I' = (1 - lr^2 g^2) I exactly
    # (gd_imbalance_factor), so I(n) = I(0) prod_{m<n} factor_m.  One member (alpha = 1e-2,
    # where I = O(alpha^2) is resolved in float64), recorded at every step.
    grad = nr.problem_gradient(prob)
    w, I_obs = run.w[0], run.imbalance[0]
    g = np.array([grad(x) for x in w])
    steps_log = np.log(tr.gd_imbalance_factor(g[:-1], cfg.lr))
    I0 = np.array(theory.invariant(u0, v0), dtype=float)
    pred = I0[None, :] * np.exp(np.concatenate([np.zeros((1, prob.p)),
                                                np.cumsum(steps_log, axis=0)]))
    err = float(np.max(np.abs(I_obs - pred) / np.abs(pred)))
    total = float(np.max(np.abs(np.log(np.abs(pred / pred[0])))))
    return Evidence((Part(
        f"{name}_gd_drift", 0.0, err, err, 1e-8,
        "relative error of I(n) = I(0) prod (1 - lr^2 g^2) over every step (I(0) the "
        "invariant at alpha theta_0); 1e-8 for float64 rounding of (u-v)(u+v) with "
        "|u-v| ~ 1e-4 |u+v| and of the cumulative product",
        details={"lr": cfg.lr, "alpha": a, "steps": cfg.steps, "total_log_drift": total},
        kind="simulation"),),
        {"total_log_drift": total})


# ---------------------------------------------------------------------- 9. staircase convergence
_EX_STAIR = (Example({"problem": "quadratic"}, via="Fig. 2a analogue on the worked example"),
             Example({"problem": "head"}, via="Fig. 2a (the toy head)"))


def _gd_staircase_part(name: str, prob: nr.Problem, theory: Theory, ctx: Context
                       ) -> tuple[Part, dict]:
    """The trained model's loss curves (torch GD, the whole ladder) against the theory's
    staircase at the GD rate (Algorithm 1's T_k with their O(lr) shift), as the exact-flow
    part: the L1 distance over the smallest alpha's tau window (each member's loss
    interpolated onto its records) Richardson-extrapolated in 1/L to 0, up to 1% of the
    observed L1 size (the loss curves' distance from their own final loss, extrapolated the
    same way: theory-independent)."""
    cfg = nr.standard_staircase_ladder(name, ctx.profile)
    run = nr.run_ladder(cfg, cache=ctx.cache)
    order = np.argsort(cfg.alphas)[::-1]  # L ascending
    i = int(order[-1])
    grid = run.tau[i]
    dtau = float(grid[1] - grid[0])
    L = np.log(1 / np.asarray(cfg.alphas))[order]
    try:
        stair = tr.staircase(theory.stages(prob, cfg.lr), grid, _loss0(prob))
    except (InadmissibleTheory, TypeError, *THEORY_ERRORS) as exc:
        return _raised(f"gd_{name}_l1_extrapolated: theory output usable", "Algorithm 1", exc,
                       kind="simulation"), {}
    loss = np.array([np.interp(grid, run.tau[k], run.loss[k]) for k in order])
    l1 = np.array([float(np.sum(np.abs(x - stair)) * dtau) for x in loss])
    est, bar = _richardson(L, l1, 0.0)
    # grid: a jump between records, <= dtau x the loss step per jump; the steps summed on
    # the observed side (the smallest alpha's loss curve's total variation: the staircase's
    # when the claim holds), so the interval does not move with the theory under test
    bar += dtau * float(np.sum(np.abs(np.diff(loss[-1])))) * L[-1] / (L[-1] - L[-2])
    sizes = np.array([float(np.sum(np.abs(x - x[-1])) * dtau) for x in loss])
    scale = abs(_richardson(L, sizes, 0.0)[0])
    part = Part.bounded(
        f"gd_{name}_l1_extrapolated", 0.0, est, abs(est), max(0.0, abs(est) - bar),
        abs(est) + bar, EXTRAPOLATION_MARGIN * scale,
        f"the trained model (torch GD, lr {cfg.lr:g}, alpha = "
        f"{', '.join(f'{a:g}' for a in np.asarray(cfg.alphas)[order])}): the L1 distance of "
        "its loss from the theory's staircase at the GD rate, over tau <= "
        f"{grid[-1]:.2f}, Richardson-extrapolated in 1/L (two largest L), is 0 up to 1% of "
        "the observed L1 size (the exact-flow part's tolerance); interval: rung-to-rung "
        "change + grid",
        details={"l1": l1.tolist(), "L": L.tolist(), "observed_l1_size": scale},
        kind="simulation")
    return part, {"gd_l1": l1.tolist(), "gd_L": L.tolist()}


@claim(
    statement="rescaled loss curves converge to Algorithm 1's staircase: the L1 distance "
              "falls with every smaller alpha and its Richardson extrapolation in "
              "1/log(1/alpha) is 0",
    source="the paper's Fig. 2a (the loss in rescaled time tends to a staircase)",
    kind="reduced-vs-full",
    strategy=_pinned(*_EX_STAIR),
    theory={"theory": PAPER_THEORY},
    control={"theory": MEMORYLESS},
    control_description=MEMORYLESS.name,
    cost="slow",
    examples=_EX_STAIR,
    notes="Issue 35 (session of 2026-12-05): the gd_*_l1_extrapolated part adds the trained "
          "model (torch GD ladder) to the exact flow.  It first ran on the quick GD ladder "
          "(alpha 1e-2 ... 1e-12, L <= 27.6): the quadratic's extrapolated distance was "
          "0.0077 with interval [0, 0.034] against 0.0068 (inconclusive; L1 x L still rising "
          "from 0.77 to 1.82, so not yet in the C/L regime), the head's 0.0002 [0, 0.022] "
          "against 0.031.  From quick on the part therefore runs on the paper's Fig. 2a alphas "
          "(down to 1e-32, L = 73.7; numerics.rank_increase.SIZES 'staircase_gd'), where "
          "the same code gave quadratic 0.0001 [0, 0.0057] against 0.0060 and head 0.0002 "
          "[0, 0.0044] against 0.031, and the memoryless control failed both.  Sensitivity "
          "(a referee's estimate from those numbers): an L1 part fails only when a theory's "
          "staircase moves the distance by more than its tolerance plus interval, about a "
          "5 % error in the quadratic's T_1 or a 25 % error in the head's T_3; the per-T_k "
          "tests are the jump_times claim's.  The grid term of the interval sums the observed "
          "loss curve's steps (not the predicted staircase's), so it does not move with the "
          "theory under test.",
)
def check_staircase(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    name = params["problem"]
    prob = _problem(name)
    run = nr.run_log_flow(nr.standard_log_flow(name, ctx.profile), cache=ctx.cache)
    try:
        stages = theory.stages(prob)
        stair = tr.staircase(stages, run.tau, _loss0(prob))  # the whole simulated range
    except (InadmissibleTheory, TypeError, *THEORY_ERRORS) as exc:
        return Evidence((_raised(f"{name}_l1_extrapolated: theory output usable",
                                 "Algorithm 1", exc),))
    alphas = np.asarray(run.config.alphas)
    L = np.log(1 / alphas)
    dtau = float(run.tau[1] - run.tau[0])
    l1 = np.array([float(np.sum(np.abs(run.loss[k] - stair)) * dtau) for k in range(len(L))])
    mono = int(np.sum(np.diff(l1) >= 0))
    # L1 = C/L + O(1/L^2) (jump delays and widths are O(1/L)): Richardson on the last two
    # rungs removes C/L; the interval is the change when the pair moves one rung up plus
    # the grid (a jump between grid points: <= dtau x the loss step, per jump; the steps
    # summed on the observed side, the smallest alpha's loss curve's total variation, so
    # the interval does not move with the theory under test)
    grid = dtau * float(np.sum(np.abs(np.diff(run.loss[-1]))))
    est, bar = _richardson(L, l1, 0.0)
    bar += grid * L[-1] / (L[-1] - L[-2])
    # the allowance's scale is the observed side's: each alpha's loss curve's L1 distance
    # from its own final loss, Richardson-extrapolated in 1/L like the distance itself (the
    # limit curve's size: the staircase's when the claim holds), the same under every
    # theory; the predicted staircase's own size moves with the theory under test (a
    # wrong theory's later jumps: a larger size, a wider allowance)
    sizes = np.array([float(np.sum(np.abs(x - x[-1])) * dtau) for x in run.loss])
    scale = abs(_richardson(L, sizes, 0.0)[0])
    stair_scale = float(np.sum(np.abs(stair - stair[-1])) * dtau)
    gd_part, gd_details = _gd_staircase_part(name, prob, theory, ctx)
    return Evidence((
        gd_part,
        Part(f"{name}_l1_monotone", 0.0, mono, float(mono), 0.0,
             "integer: the L1 distance must fall with every smaller alpha", kind="symbolic"),
        Part.bounded(f"{name}_l1_extrapolated", 0.0, est, abs(est), max(0.0, abs(est) - bar),
                     abs(est) + bar, EXTRAPOLATION_MARGIN * scale,
                     "equivalence margin (EXTRAPOLATION_MARGIN, as for the jump times): the "
                     "extrapolated L1 distance is 0 up to 1% of the observed L1 size (the loss curves' distance from "
                     "their final loss, Richardson-extrapolated in 1/L; theory-independent); "
                     "interval: rung-to-rung change + grid",
                     details={"observed_l1_size": scale, "observed_l1_sizes": sizes.tolist(),
                              "staircase_l1_size": stair_scale},
                     kind="symbolic"),
    ), {"l1": l1.tolist(), "L": L.tolist(), "l1_times_L": (l1 * L).tolist(), **gd_details})


# ---------------------------------------------------------------------- 10. perturbations
AITKEN_MAX_RATIO = 0.9
"""Largest ratio r = (x2 - x1)/(x1 - x0) at which Aitken's limit is taken: an approach with
r in [0, 0.9] is a decay that the three points resolve; r near 1 (a nearly linear drift),
above 1 (growth) or below 0 (an oscillation the records alias) is not an exponential return
the three points can extrapolate."""


def _aitken(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> tuple[np.ndarray, bool]:
    """(Aitken's delta-squared limit of three equally spaced samples of an exponential
    approach, entrywise; whether every entry is such an approach).  An entry whose two steps
    are both at rounding level (1e-12 relative) has converged: its limit is x2."""
    d1, d2 = x1 - x0, x2 - x1
    settled = (np.abs(d1) <= 1e-12 * (1 + np.abs(x2))) & (np.abs(d2) <= 1e-12 * (1 + np.abs(x2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(settled, 0.0, d2 / np.where(d1 == 0, np.nan, d1))
    ok = bool(np.all(settled | ((r >= 0) & (r <= AITKEN_MAX_RATIO))))
    r = np.nan_to_num(np.clip(r, -1.0, AITKEN_MAX_RATIO))  # only used where ok
    return np.where(settled, x2, x2 + d2 * r / (1 - r)), ok


RETURN_ALLOWANCE = 2e-3
"""The perturbation parts' allowance on |w - w^k|_inf after the return (our choice, not a
derived bound): 1e-3 for the return's remainder beyond the one-exponential extrapolation
(the quadratic terms of the flow at a kick of relative size 1e-2) + 1e-3 for the
finite-alpha offset of the plateau beyond its derived first-order part; the 2e-3 of the
exact-flow parts before issue 35."""


def _return_part(name: str, prob: nr.Problem, tau: np.ndarray, w: np.ndarray, j0: int, j: int,
                 theory: Theory, stage_index: int, where: str, kind: str) -> Part:
    """The plateau a kicked run returns to, extrapolated at record ``j``, against the
    theory's w^k.

    After a kick (or a jump) at record ``j0`` the trajectory approaches its stationary point
    exponentially: the linearised flow dw/dt = -diag(u^2 + v^2) H w has real rates, and on
    the toy head's second plateau the slowest is about 0.2 per unit of t against 11 for the
    other, so a finite-alpha run is still visibly converging when the plateau ends.  On the
    support of the paper's w^k, Aitken's delta-squared limit of the records j - 2h, j - h, j
    (h = n/4, n = j - j0: the points lie in the window's second half, where the fast modes
    have decayed) extrapolates the return; the interval is the spread of the limits over
    the spacings h = n/6, n/4 and n/3 (the latter reaching back to a third of the window), so
    a remaining fast mode or a nonlinear approach widens it.  Off the support the entries
    are not returning but drifting as alpha-small exponentials, so they are taken as
    recorded at ``j``.  An approach that is not an exponential decay at every spacing (ratio
    of steps outside [0, 0.9]) is not extrapolated: the part is unmeasured.  Tolerance:
    :data:`RETURN_ALLOWANCE` + the derived first-order move of the stationary point by the
    off-support entries (||H_SS^-1 H_SI||_inf at the reference table's w^k x the max off-support
    |w_i| recorded at ``j``, as for the plateau claim's GD parts)."""
    try:
        stages = theory.stages(prob)
        pred = (_plateau_values(theory, stages[stage_index], prob.p)
                if stage_index < len(stages) else np.full(prob.p, np.nan))
    except (InadmissibleTheory, *MALFORMED, *THEORY_ERRORS) as exc:
        return _raised(f"{name}: theory output usable", "Algorithm 1", exc, kind=kind)
    n = j - j0
    if n < 12:
        return Part(name, math.nan, math.nan, math.inf, RETURN_ALLOWANCE,
                    f"only {n} records in the window: too few to extrapolate; " + where,
                    kind=kind)
    # the allowance's terms at the reference table's w^k (the same under every theory, as
    # the windows): a wrong theory's w^k must not move its own tolerance
    paper = np.array([float(x) for x in _REFERENCE[prob.kind]["w"][stage_index]])
    support = np.abs(paper) > 0
    limits, fits = [], []
    for h in (n // 4, n // 6, n // 3):
        lim, ok = _aitken(w[j - 2 * h, support], w[j - h, support], w[j, support])
        limits.append(lim)
        fits.append(ok)
    off = float(np.max(np.abs(w[j, ~support]), initial=0.0))
    resp = _support_response(prob, paper, support)
    tol = RETURN_ALLOWANCE + resp * off
    if not all(fits):
        return Part.unmeasured(
            name, tol, "the return is not an exponential decay at the spacings n/6, n/4, "
            f"n/3 (a step ratio outside [0, {AITKEN_MAX_RATIO}]): a longer window or a "
            "smaller alpha would measure it; " + where, kind=kind)
    lim = w[j].copy()
    lim[support] = limits[0]
    if not np.all(np.isfinite(pred)):
        return Part(name, math.nan, float(np.max(np.abs(lim))), math.inf, tol,
                    "the theory gives no finite w^k here; " + where, kind=kind)
    err = float(np.max(np.abs(lim - pred)))
    bar = max(float(np.max(np.abs(a - b_))) for a in limits for b_ in limits)
    return Part.bounded(
        name, float(np.max(np.abs(pred))), float(np.max(np.abs(lim))), err,
        max(0.0, err - bar), err + bar, tol,
        f"Aitken limit of the return on the support (records {j - n // 2}, {j - n // 4}, {j} "
        f"after the window's start {j0}; interval: spread over the spacings n/6, n/4, n/3), "
        "off the support as recorded, vs w^k; tolerance "
        f"{RETURN_ALLOWANCE:g} (our choice: nonlinear remainder + finite-alpha offset) + "
        f"||H_SS^-1 H_SI||_inf = {resp:.3g} x max off-support |w_i| = {off:.3g} (derived "
        "first-order move of the stationary point); " + where,
        details={"w_limit": lim.tolist(), "w_pred": pred.tolist(),
                 "w_at_record": w[j].tolist(), "tau": float(tau[j]),
                 "error_at_record": float(np.max(np.abs(w[j] - pred)))},
        kind=kind)


def _jump_shift(prob: nr.Problem, tau: np.ndarray, w0: np.ndarray, wp: np.ndarray,
                level: float) -> float:
    """|difference| of the jump times through ``level`` of the unkicked and kicked runs."""
    loss = nr.problem_loss(prob)
    jt = [nr.jump_times(tau, np.array([loss(x) for x in arr]), np.array([level]))[0]
          for arr in (w0, wp)]
    return abs(jt[1] - jt[0])


@claim(
    statement="perturbations mid-plateau return to w^k; perturbations at a stage start "
              "keep the next plateaus and shift the jump by O(1/L) only",
    source="the paper's Fig. 3 (assumptions of strict local minima and of robust stage "
           "dynamics)",
    kind="reduced-vs-full",
    strategy=_pinned({"problem": "head"}),
    theory={"theory": PAPER_THEORY},
    control={"theory": SHIFTED_PLATEAU},
    control_description=SHIFTED_PLATEAU.name + " (a wrong stationary point)",
    cost="slow",
    examples=(Example({"problem": "head"}, via="Fig. 3 (the toy head)"),),
    notes="Issue 35 item 7 (session of 2026-12-05): the kicks are applied both to the "
          "theory's log-form flow at alpha = 1e-24 (symbolic parts) and to the toy head "
          "trained by torch GD at the head ladder's smallest alpha and rate (simulation "
          "parts: u and v scaled entrywise by 1 + 1e-2 xi).  Every plateau part compares "
          "with the theory's w^k; the earlier perturbed-vs-unperturbed plateau parts were "
          "replaced; each now extrapolates the return (Aitken, _return_part) because on the "
          "toy head's second plateau the slowest rate of the linearised flow is about 0.21 "
          "per unit of t (11.5 for the other mode), so a finite-alpha run is still "
          "converging when the plateau ends.  The jump shifts stay run-against-run: Fig. "
          "3b's O(1/L) statement is about the dynamics' robustness, which no formula of "
          "theory/ predicts.  Kicks and windows (second session of 2026-12-05): the kicks "
          "were at Algorithm 1's T_k at the GD rate and the windows and the jump-shift level "
          "came from theory/ too, so a slip in theory.gd_escape_rate or in the stages' "
          "jump times moved the experiment, not a comparison (resolution on 735207c: > 50 "
          "%).  The kicks are now planned on the row's reference table (numerics."
          "rank_increase.HEAD_REFERENCE_T), each run's next jump is where its unkicked "
          "member's own loss (torch's, for GD) crosses the table's level halfway between "
          "the second and third plateau losses, and theory/ enters only through the w^k the "
          "returns are compared with (and the allowance's response term, at the paper's "
          "w^k).  The GD "
          "kicks first ran at the test head ladder's size (alpha = 1e-8, L = 18.4, lr 0.02): "
          "gd_stage_start_next_plateau was 8.7e-3 [5.7e-3, 1.16e-2] against 2e-3 (Aitken "
          "limit 1.9913 of w^k's 2), a finite-alpha remainder of an alpha -> 0 claim.  At "
          "alpha = 1e-12 (the quick head ladder's) it was 9.6e-4 with interval [5.4e-4, "
          "1.4e-3] from two spacings; a referee read showed that interval vanishes for any "
          "single exponential, so it now spans three spacings (n/6, n/4, n/3) and Aitken is "
          "taken only where the steps decay (ratio in [0, 0.9]), which gave [0, 2.2e-3]: "
          "inconclusive.  The extrapolation's bias is quadratic in the deviation left a third "
          "of the window after the kick, ~ exp(-2 lambda dtau L/3) (lambda = 0.21, dtau = "
          "0.59): about 10x smaller per doubling of L, so the GD kicks run at alpha = 1e-24 "
          "(L = 55.3, the flow's alpha) at test and quick (numerics.rank_increase.SIZES "
          "'gd_perturbation'): there the eight parts pass (GD returns within 3e-5, upper "
          "8e-5) and the control fails all six plateau parts.  Sensitivity: RETURN_ALLOWANCE "
          "is 0.1 % of w^k's largest entry, so a 2 % error in a plateau value fails.",
)
def check_perturbations(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    # the kicks: mid-plateau of stage 2 of the head, and 0.1 after the start of stage 2,
    # planned on the row's reference table (numerics.rank_increase.HEAD_REFERENCE_T); each
    # run's windows from its own unkicked member's next jump, detected at the table's level
    # halfway between the second and third plateau losses: no theory/ in the kicks or the
    # windows, only in the w^k the returns are compared with
    ref = TABLE_TOY_HEAD
    level = 0.5 * (float(ref["loss"][1]) + float(ref["loss"][2]))
    flow_cfgs = nr.standard_perturbations(ctx.profile)
    gd_cfgs = nr.standard_gd_perturbations(ctx.profile)
    gd = {key: nr.run_gd_perturbation(cfg, cache=ctx.cache) for key, cfg in gd_cfgs.items()}
    cfg = gd["mid"].config
    L_gd = math.log(1 / cfg.alpha)
    alpha = flow_cfgs["mid"].alpha
    L = math.log(1 / alpha)
    names = ("mid_plateau_return", "stage_start_next_plateau", "stage_start_after_next_jump",
             "stage_start_jump_shift")
    try:  # the flow integrates theory's gradient and has no loss of its own: theory's g
        runs = {key: nr.run_perturbation(c, cache=ctx.cache) for key, c in flow_cfgs.items()}
        g = nr.problem_loss(HEAD)
        flow_loss = np.array([[g(x) for x in arr]
                              for arr in (runs["start"].w, runs["start"].w_perturbed)])
    except (InadmissibleTheory, *THEORY_ERRORS) as exc:
        parts = [_raised(n_, "the theory's log-form flow and g on the toy head", exc)
                 for n_ in names]
        rows = ()
    else:
        parts = []
        rows = (("", (runs["mid"], runs["start"]), flow_loss, "symbolic",
                 f"log-form flow at alpha = {alpha:g}", L),)
    jumps = {}
    # the same four parts on the flow (symbolic) and on the trained head (simulation)
    for prefix, (m, s), loss, kind, where, Lx in (
            *rows,
            ("gd_", (gd["mid"], gd["start"]), gd["start"].loss, "simulation",
             f"torch GD at alpha = {cfg.alpha:g} (L = {L_gd:.1f}), lr {cfg.lr:g}", L_gd)):
        parts.append(_return_part(f"{prefix}mid_plateau_return", HEAD, m.tau, m.w_perturbed,
                                  0, len(m.tau) - 1, theory, 1,
                                  where + f", kicked at tau = {m.tau[0]:.3f}", kind))
        T_own, T_kicked = (float(nr.jump_times(s.tau, x, np.array([level]))[0]) for x in loss)
        jumps[f"{prefix or 'flow_'}next_jump"] = {"unkicked": T_own, "kicked": T_kicked}
        if not (math.isfinite(T_own) and math.isfinite(T_kicked)):
            why = (f"the run's next jump (its loss through the table's level {level:.5g}) is "
                   f"not observed within the run (unkicked {T_own:.4g}, kicked "
                   f"{T_kicked:.4g}); " + where)
            parts.extend(Part(f"{prefix}{name}", math.nan, math.nan, math.inf, 0.0, why,
                              kind=kind)
                         for name in ("stage_start_next_plateau", "stage_start_after_next_jump",
                                      "stage_start_jump_shift"))
            continue
        j_next = min(int(np.searchsorted(s.tau, 0.5 * (float(ref["T"][1]) + T_own))),
                     len(s.tau) - 1)
        parts.append(_return_part(f"{prefix}stage_start_next_plateau", HEAD, s.tau,
                                  s.w_perturbed, 0, j_next, theory, 1,
                                  where + f", kicked at tau = {s.tau[0]:.3f}, read halfway "
                                  "between the table's second jump and the run's own next "
                                  f"jump (tau {T_own:.4f})", kind))
        j_jump = min(int(np.searchsorted(s.tau, T_own)), len(s.tau) - 1)
        parts.append(_return_part(f"{prefix}stage_start_after_next_jump", HEAD, s.tau,
                                  s.w_perturbed, j_jump, len(s.tau) - 1, theory, 2,
                                  where + f", from the run's own next jump (tau {T_own:.4f}) "
                                  "on", kind))
        shift = abs(T_kicked - T_own)
        parts.append(Part(f"{prefix}stage_start_jump_shift", 0.0, shift, shift, 1.0 / Lx,
                          "Fig. 3b: a perturbation at a stage start shifts the next jump by "
                          "O(1/L) only; allowance 1/L, the paper's O(1/L) with constant 1 "
                          "(our choice: a kick of relative size 1e-2 moves the log-clocks by "
                          "about 1e-2, i.e. the jump by about 1e-2/L, so the allowance is "
                          "about 100 times the expected shift and the part tests only that "
                          "the kick does not move the jump by O(1)); run against run, each "
                          f"jump where the run's loss crosses the table's level {level:.5g}: "
                          + where, kind=kind))
    return Evidence(tuple(parts), {"flow_alpha": alpha, "gd_alpha": cfg.alpha,
                                   "gd_lr": cfg.lr, "kicks": {k: (c.tau_perturb, c.tau_end)
                                                              for k, c in gd_cfgs.items()},
                                   "jump_level": level, **jumps})


# ---------------------------------------------------------------------- 11. full-head stable rank
def _goodman_kruskal(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """(gamma, C + D): (C - D)/(C + D) over pairs with x and y both untied (0.0 if none)."""
    conc = disc = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            s = np.sign(x[j] - x[i]) * np.sign(y[j] - y[i])
            conc += int(s > 0)
            disc += int(s < 0)
    n = conc + disc
    return (float(conc - disc) / n if n else 0.0), n


def _small_init_value_part(name: str, block: str, sv: np.ndarray, pred: np.ndarray,
                           margin: float, where: str) -> Part:
    """The learned block's sorted singular values against the sorted |entries| of Algorithm
    1's plateau block (its singular values: the block is diagonal), as the plateau claim's
    GD parts compare w with w^k.  ``margin`` = :data:`PLATEAU_MARGIN` x max(1, |block|)
    (the equivalence margin for the underived finite-alpha and finite-time remainder),
    taken by the caller at the reference table's plateau block, so a wrong theory cannot
    widen its own.  A theory without a finite plateau block fails the part."""
    obs = np.sort(np.abs(np.asarray(sv, dtype=float)))[::-1]
    want = np.sort(np.abs(np.asarray(pred, dtype=float)))[::-1]
    if want.shape != obs.shape or not np.all(np.isfinite(want)):
        return Part(name, math.nan, float(obs[0]), math.inf, margin,
                    f"the theory gives no finite {block} plateau block here; " + where,
                    kind="simulation")
    err = float(np.max(np.abs(obs - want)))
    return Part(name, float(want[0]), float(obs[0]), err, margin,
                f"sorted singular values of the learned {block} block against the sorted "
                "|entries| of Algorithm 1's plateau block, max abs difference; tolerance "
                f"0.02 max(1, |block|) = {margin:.3g} (PLATEAU_MARGIN at the reference table's "
                "plateau block: the underived finite-alpha, finite-time remainder); " + where,
                details={"singular_values": obs.tolist(), "plateau_block": want.tolist()},
                kind="simulation")


def _small_init_plateau_parts(cfg: nr.FullHeadConfig, run: nr.FullHeadRun, theory: Theory
                              ) -> list[Part]:
    """The small-init run's learned blocks mid-plateau, on every plateau the row's reference
    table plans at this run's size, against the theory's w^k (:func:`_small_init_value_part`).
    Windows: the run's own plateaus (:func:`_observed_plateau_points`: the table's levels
    crossed by the run's own loss), so no theory moves them; a planned plateau the run
    does not show fails its parts.  Every plateau, not only the last: the last one is the
    teacher (the global minimum any converging run reaches), the earlier ones are
    Algorithm 1's saddles."""
    d = HEAD.d
    points, missing = _observed_plateau_points("head", cfg, run)
    parts = [Part(f"small_init_plateau_{k + 1}_{b}", math.nan, math.nan, math.inf, 0.0, why,
                  kind="simulation") for k, why in missing for b in ("kq", "vo")]
    try:
        stages = tuple(theory.stages(HEAD))
    except (InadmissibleTheory, *THEORY_ERRORS, *MALFORMED) as exc:
        return parts + [_raised(f"small_init_plateau_{k + 1}_{b}", "Algorithm 1 on the toy "
                                "head", exc, kind="simulation")
                        for k, _t, _j in points for b in ("kq", "vo")]
    L = math.log(1 / cfg.alphas[0])
    for k, _t, j in points:
        pred = (_plateau_values(theory, stages[k], HEAD.p) if k < len(stages)
                else np.full(HEAD.p, np.nan))
        # the margin at the reference table's w^k: no theory under test widens it
        paper = np.array([float(x) for x in TABLE_TOY_HEAD["w"][k]])
        where = (f"torch GD at alpha = {cfg.alphas[0]:g} (L = {L:.1f}), lr {cfg.lr:g}, tau = "
                 f"{run.tau[0, j]:.3f} (mid-plateau {k + 1}, the run's own)")
        for b, sv, lo, hi in (("kq", run.sv_kq[0, j], 0, d), ("vo", run.sv_vo[0, j], d, 2 * d)):
            margin = PLATEAU_MARGIN * max(1.0, float(np.max(np.abs(paper[lo:hi]))))
            parts.append(_small_init_value_part(f"small_init_plateau_{k + 1}_{b}", b.upper(),
                                                sv, pred[lo:hi], margin, where))
    return parts


@claim(
    statement="post-training stable rank of dW_K W_Q^T grows with the init scale, towards "
              "Algorithm 1's small-init limit as the scale shrinks (small model, Fig. 7 "
              "analogue); at a small scale the learned blocks' stable ranks are those of "
              "Algorithm 1's last plateau and their singular values those of each plateau",
    source="the paper's Fig. 7 (ViT, Adam): smaller init, lower post-training stable rank; "
           "the limit theorem (our reconstruction) for the small-init values",
    kind="reduced-vs-full",
    strategy=_pinned({"model": "full_head"}),
    theory={"theory": PAPER_THEORY},
    control={"theory": SCALE_FREE},
    control_description=SCALE_FREE.name + " (limit: the stable rank of -grad g(0); trend 0)",
    cost="slow",
    examples=(Example({"model": "full_head"}, via="Fig. 7 analogue on the toy full head"),),
    notes="The trend is a fixed number of GD steps from each scale of the sweep (1e-3 ... "
          "1); its limit is Algorithm 1's plateau at the smallest scale's end time "
          "(rescaled), so a run that stops before the last stage is compared with the plateau "
          "it is on.  At init scale 1 rescaled time is undefined (log(1/alpha) = 0): that "
          "member enters only the trend, which needs no time axis.  Issue 35 item 4 "
          "(session of 2026-12-05): the small-init parts took the sweep's smallest member "
          "(alpha = 1e-3, L = 6.9, tau 2.17 at quick), which sat on the second plateau, "
          "where both blocks have rank one: prediction 1.0 against 1.0 whatever w^k's "
          "values, and a stable rank is blind to a common scale of them (the resolution "
          "run on 735207c: 50 %).  They now take their own run (numerics.rank_increase."
          "standard_small_init_head: alpha = 1e-24, trained to tau 3.2, past the last "
          "jump, where the VO block has rank two), and parts compare the blocks' "
          "singular values with w^k's entries mid-plateau on each plateau the reference "
          "table plans (the run's own windows, PLATEAU_MARGIN per block, as the plateau "
          "claim's GD parts): the last plateau is the teacher, which any converging run "
          "reaches, so the earlier ones (Algorithm 1's saddles) carry the test (a referee "
          "read of e0e95c1, which read the run's end only).  Design fixed before the run; "
          "the scratch run that sized it (quick: end-of-run singular values (1.9998; "
          "1.00001, 0.49998) against (2; 1, 0.5)) is not the claim's evidence.",
)
def check_stable_rank_scale(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    """Fig. 7 analogue: post-training stable rank of dW_K W_Q^T against the init scale; the
    small-init limit's stable ranks and singular values at alpha = 1e-24."""
    cfg = nr.standard_scale_sweep(ctx.profile)
    run = nr.run_full_head(cfg, cache=ctx.cache)
    small_cfg = nr.standard_small_init_head(ctx.profile)
    small = nr.run_full_head(small_cfg, cache=ctx.cache)
    d = HEAD.d
    sr = nr.stable_rank_from_singular_values(run.sv_kq[:, -1])
    i_min = int(np.argmin(cfg.alphas))
    tau_end = float(run.tau[i_min, -1])
    tau_small = float(small.tau[0, -1])
    where = (f"torch GD at alpha = {small_cfg.alphas[0]:g} (L = "
             f"{math.log(1 / small_cfg.alphas[0]):.1f}), lr {small_cfg.lr:g}, tau = "
             f"{tau_small:.3f} (the run's end)")
    values = _small_init_plateau_parts(small_cfg, small, theory)
    try:
        G_M, G_P = _full_head_gradients(cfg)
        stages = theory.stages(HEAD)
        kq_trend, _ = theory.limit_stable_rank(stages, tau_end, d, G_M, G_P)
        kq_pred, vo_pred = theory.limit_stable_rank(stages, tau_small, d, G_M, G_P)
        kq_trend, kq_pred, vo_pred = float(kq_trend), float(kq_pred), float(vo_pred)
    except (InadmissibleTheory, *MALFORMED, *THEORY_ERRORS) as exc:
        return Evidence(tuple(_raised(n_, "the theory's small-init limit on the toy head", exc,
                                      kind="simulation")
                              for n_ in ("stable_rank_order", "stable_rank_small_init_kq",
                                         "stable_rank_small_init_vo")) + tuple(values))
    # trend: Goodman-Kruskal gamma of |sr - limit| against the scale over all pairs (the
    # runs are deterministic: no rounding, every difference is an order)
    dist = np.abs(sr - kq_trend)
    rho, n_ordered = _goodman_kruskal(np.asarray(cfg.alphas), dist)
    sr_kq = float(nr.stable_rank_from_singular_values(small.sv_kq[:, -1])[0])
    sr_vo = float(nr.stable_rank_from_singular_values(small.sv_vo[:, -1])[0])
    model = ("the learned block differs from Algorithm 1's plateau by the untrained init "
             "directions (singular values ~ alpha^2) and the finite-alpha, finite-time "
             "offset of the plateau, assumed <= 2% of it (the plateau claim's tolerance, "
             "not a derived bound); a 2% error on the second singular value moves the "
             "stable rank by <= 0.01; " + where)
    return Evidence((
        Part("stable_rank_order", theory.scale_trend, rho, abs(rho - theory.scale_trend), 0.0,
             "Fig. 7 is qualitative: Goodman-Kruskal gamma of |stable rank - small-init "
             "limit| against the init scale over all pairs of scales (deterministic runs, "
             "no rounding) must be the predicted sign: smaller init, closer to the limit",
             details={"ordered_pairs": n_ordered, "distance": dist.tolist()}, kind="simulation"),
        Part("stable_rank_small_init_kq", kq_pred, sr_kq, abs(sr_kq - kq_pred), 0.01, model,
             kind="simulation"),
        Part("stable_rank_small_init_vo", vo_pred, sr_vo, abs(sr_vo - vo_pred), 0.01, model,
             kind="simulation"),
        *values,
    ), {"stable_rank_kq": sr.tolist(),
        "stable_rank_vo": nr.stable_rank_from_singular_values(run.sv_vo[:, -1]).tolist(),
        "alphas": list(cfg.alphas), "tau_end_smallest": tau_end,
        "final_loss": run.loss[:, -1].tolist(), "small_init_alpha": small_cfg.alphas[0],
        "small_init_tau": tau_small, "small_init_sv_kq": small.sv_kq[0, -1].tolist(),
        "small_init_sv_vo": small.sv_vo[0, -1].tolist()})


# ---------------------------------------------------------------------- 12. Adam (open)
@claim(
    id="adam",
    statement="open (a reviewer's question: are the same dynamics seen with SGD as with "
              "Adam?): from the same small alpha*theta_0, does Adam at lr 1e-3, or minibatch "
              "SGD at the GD arm's rate, still learn the toy head one coordinate at a time, in "
              "Algorithm 1's order?",
    source="the reviewers' questions 2-3 (the paper's large-scale runs use Adam, its theory "
           "is gradient flow; the paper's Adam and toy learning rates were not available to "
           "us: Adam 1e-3 and SGD 0.01, the GD ladder's rate, are our choices)",
    kind="open-question",
    strategy=_pinned({"optimizer": "adam"}, {"optimizer": "minibatch"}),
    theory={"theory": PAPER_THEORY},
    control={"theory": UNCONSTRAINED},
    control_description=UNCONSTRAINED.name,
    expected="open",
    cost="slow",
    examples=(Example({"optimizer": "adam"}, via="the reviewer's question"),
              Example({"optimizer": "minibatch"},
                      via="the reviewers' SGD arm: minibatch SGD, B = 4 of n = 16")),
    notes="Hypothesis tested: under Adam (lr 1e-3, betas (0.9, 0.999), eps 1e-8), at every "
          "alpha of the ladder, and under minibatch SGD (the GD ladder's alphas <= 1e-4, rate "
          "and window; 4 of the 16 samples per step, drawn without replacement), the "
          "active count (|w_i| > 1e-3) rises by at most the number of coordinates "
          "Algorithm 1 switches on together between records, and the switch-on order and "
          "signs are Algorithm 1's.  Full-batch GD is the positive control.  The SGD arm "
          "was added in the session of 2026-12-05 (issue 35 item 8).  Limits of this "
          "answer: Adam's ladder (alpha 1e-2 ... 1e-4) and the GD/SGD arms' (alpha <= 1e-4) "
          "share only alpha = 1e-4, so alpha and optimiser are confounded above it; the SGD "
          "arm is one draw per alpha at rate 0.01, where the batch noise averages over the "
          "~L/lr steps of a stage, and it does not compare SGD's jump times with GD's; the "
          "toy cannot answer the reviewers' question about ViTs.  The UNCONSTRAINED control "
          "predicts the paper's stages on the head (no switch-off there), so it is not "
          "informative for this open question.",
    positive=Positive({"optimizer": "sgd"},
                      "the same check under plain full-batch GD (the theory's setting, the "
                      "toy head's GD ladder) must hold"),
)
def check_optimizer(params: dict, ctx: Context, *, theory: Theory) -> Evidence:
    """Hypothesis: under the optimizer, coordinates switch on one at a time, in Algorithm 1's
    order and with its signs, at every alpha of the ladder."""
    opt = params["optimizer"]
    cfg = nr.standard_ladder("head", ctx.profile, optimizer=opt)
    if opt == "minibatch":  # --seed moves the batch draws
        cfg = dataclasses.replace(cfg, seed=cfg.seed + ctx.seed)
    run = nr.run_ladder(cfg, cache=ctx.cache)
    try:
        stages = tuple(theory.stages(HEAD))
        pred_inc = _max_added(stages)
        pred_order = [(c, s_) for c, s_, _ in _events(stages)]
    except (InadmissibleTheory, *THEORY_ERRORS, *MALFORMED) as exc:
        return Evidence(tuple(_raised(f"{opt}_{what}_alpha_{a:g}", "Algorithm 1 on the toy "
                                      "head", exc, kind="simulation")
                              for a in cfg.alphas if opt == "adam" or a <= 1e-4
                              for what in ("one_at_a_time", "order")), {"optimizer": opt})
    ref_T = [float(t) for t in TABLE_TOY_HEAD["T"]]
    parts, det = [], {}
    for k, a in enumerate(cfg.alphas):
        if opt != "adam" and a > 1e-4:
            continue  # GD and SGD: the small-init regime of the rank claim
        count = nr.active_count(run.w[k], 1e-3)
        inc = int(np.max(np.diff(count), initial=0))
        order = [(c, s_) for c, s_, _ in _sim_events(run.tau[k], run.w[k], 1e-3)]
        # GD and minibatch SGD: the events whose jump time in the row's reference table
        # lies in 90% of the member's tau range (a plan no theory under test moves); Adam:
        # all (rescaled time is not its clock; the run is sized in steps to finish the
        # staircase)
        horizon = math.inf if opt == "adam" else 0.9 * float(run.tau[k][-1])
        want = [e for e, t in zip(pred_order, ref_T, strict=False) if t <= horizon]
        miss = sum(x != y for x, y in zip(order, want, strict=False)) \
            + abs(len(order) - len(want))
        parts.append(Part(f"{opt}_one_at_a_time_alpha_{a:g}", pred_inc, inc,
                          abs(inc - pred_inc), 0.0,
                          "integer: largest rise of #{|w_i| > 1e-3} between records "
                          f"({cfg.record_every} steps) = most coordinates Algorithm 1 "
                          "switches on at one jump", kind="simulation"))
        parts.append(Part(f"{opt}_order_alpha_{a:g}", len(want), len(order),
                          float(miss), 0.0,
                          "integer: (coordinate, sign) switch-on sequence = Algorithm 1's",
                          kind="simulation"))
        det[f"order_alpha_{a:g}"] = order
        det[f"max_switch_on_alpha_{a:g}"] = inc
    det.update({"optimizer": opt, "lr": cfg.lr, "steps": cfg.steps,
                "predicted_order": pred_order})
    return Evidence(tuple(parts), det)


# ---------------------------------------------------------------------- claims
def claims() -> list[Claim]:
    """The rank_increase row's claims, in source order."""
    return declared(__name__)
