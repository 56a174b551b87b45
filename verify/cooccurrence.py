"""Claims of Yang, Kailkhura, Wang, Liang (NeurIPS 2024): the ``cooccurrence`` row.

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory`` and
``control`` are the keyword arguments that make the one check test the paper's theory (the
module :mod:`theory.cooccurrence`, called at check time) and a near-miss wrong theory (the same
module with one function replaced, :class:`_Theory`), so the control runs the same code by
construction.  Sources cite the paper's numbering; "our derivation" marks what the paper does
not state (the canonical ODE, the four-class reduction, the max-margin constants).

Finite-time predictions come from the private-token class reduction
(:func:`theory.cooccurrence.private_system`), started from each member's own initial G; the
allowances for what it leaves out are computed per run: the spread of the samples' random-token
G(0) within a class (second order), GD's departure from the flow (step x curvature, and the
geometric step growth's lead g/2), the m1 M r preconditioner (tau_eff/tau - 1), record spacing.

Runs (our choices, Condition 1 respected): the *theory-scaled* configuration n = 60, L = 5,
private random tokens (Assumption 2.3(ii)), d = 3 + training + validation slots, m = 512,
m1 = 8, sigma1 = 1/sqrt(m1), sigma0 = 0.05/sqrt(L m) (small enough that |F(0)| << 1; at Condition 1's
sigma0 = 1/sqrt(L m) without its hidden logs |F(0)| is of order 1, see ``initial_output``), two
initialisations stacked in one float64 full-batch GD run (:func:`numerics.ensemble.train`)
with equal tau-steps 0.02 for 50 steps, then a step growing 1.5 % per step (the curvature
falls like 1/tau), reaching tau = int S dt ~ 2e4 in 700 steps.  m1 is small so that S drifts
little (Delta S / S ~ m1 |beta|^2 / S^2, Lemma F.10).  ``ratio_limit`` also runs n = 6, L = 12
(outside Condition 1, where the max-margin R_inf < 1); ``four_class_tracks`` runs n = 600
(test profile 120), m = 128, m1 = 8, equal tau-steps 0.025 to tau = 7 and a half-step twin
(many samples, so that the random tokens' share of the margins is small).  The Appendix A configuration (Fig. 1)
and the independent runs of ``appendix_a_hump`` are sized by profile in the row's one
table, :data:`numerics.cooccurrence.SIZES` (which also says what ``thorough`` runs: the paper's
own configuration where it has one, else the largest of our theory-scaled runs).  Every run
goes through :func:`numerics.cooccurrence.run` or :func:`numerics.cooccurrence.run_closure`,
the row's run functions (bounded in-process LRU over the shared run cache, device in the key).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st
from scipy.integrate import solve_ivp, trapezoid
from scipy.optimize import minimize

from numerics import cooccurrence as nc
from theory import cooccurrence as tc
from theory.flow import InadmissibleTheory
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
    tolerance_from_theory,
)
from verify.error_models import identically_zero, over_seeds

__all__ = ["claims", "hump_power"]

EPS = float(np.finfo(float).eps)
ROUND_ULPS = 4  # rounding units per GD step for an invariant of squared weights (see invariants)


# ---------------------------------------------------------------------- theories
@dataclass(frozen=True)
class _Theory:
    """:mod:`theory.cooccurrence` with some functions replaced: a near-miss wrong theory."""

    label: str
    overrides: tuple[tuple[str, Callable], ...] = ()

    def __getattr__(self, item: str):
        for name, fn in self.overrides:
            if name == item:
                return fn
        return getattr(tc, item)


def _weights_theory(weights: tuple[float, ...], label: str) -> _Theory:
    """The four-class reduction with other class proportions (everything else unchanged)."""
    rational = tuple(sp.nsimplify(w) for w in weights)
    return _Theory(label, (
        ("class_system", lambda w=None: tc.class_system(weights)),
        ("t_half", lambda G0=(0, 0, 0), w=None: tc.t_half(G0, weights)),
        ("class_velocity", lambda G, w=None: tc.class_velocity(G, weights)),
        ("class_trajectory",
         lambda taus, G0=(0.0, 0.0, 0.0), w=None: tc.class_trajectory(taus, G0, weights)),
        ("class_gamma", lambda G, L, m, w=None, margins=None:
         tc.class_gamma(G, L, m, weights, margins)),
        ("initial_rates", lambda w=None: tc.initial_rates(rational)),
        ("private_system", lambda n, L, w=None: tc.private_system(n, L, rational)),
        ("private_trajectory", lambda taus, n, L, w=None, Y0=None, kappa=0.0:
         tc.private_trajectory(taus, n, L, weights, Y0, kappa)),
        ("score_drift", lambda taus, Y, L, m, kappa, S, w=None, K=None, Q=None:
         tc.score_drift(taus, Y, L, m, kappa, S, weights, K=K, Q=Q)),
        ("WEIGHTS", rational),
    ))


#: uniform class proportions (1/4 each): no Lemma 4.2 cancellation, so no T_0.5 hump.
UNIFORM = _weights_theory((0.25, 0.25, 0.25, 0.25), "class proportions 1/4 each")
#: asymmetric single-target proportions: I2 and I3 no longer balanced by symmetry.
ASYMMETRIC = _weights_theory((0.5, 0.25, 1 / 12, 1 / 6), "proportions (1/2, 1/4, 1/12, 1/6)")


def _class_level_margin(tokens, labels, d=None) -> tc.MaxMargin:
    """Near miss: the class-level max margin (private tokens ignored) for any data set."""
    mm = tc.class_max_margin()
    return tc.MaxMargin(float(mm.gamma_sq), np.array([float(b) for b in mm.beta]),
                        float(mm.R_inf))


CLASS_LEVEL = _Theory("class-level max margin (private tokens ignored)",
                      (("sample_max_margin", _class_level_margin),))
SWAPPED = _Theory("Theorem 3.2 signs swapped (Gamma -> -Gamma)",
                  (("class_gamma", lambda G, L, m, w=None, margins=None:
                    -tc.class_gamma(G, L, m, margins=margins)),))


def _gamma_transposed(G, L, m, w=None, margins=None):
    return tc.class_gamma(G, L, m, margins=margins).T


def _gradients_transposed(*args, **kwargs):
    r, gam = tc.loss_gradients(*args, **kwargs)
    return r, np.asarray(gam).T


def _score_drift_transposed(taus, Y, L, m, kappa, S, w=None, K=None, Q=None):
    # int Gamma^T Q_G + K_G Gamma^T = (Q_G int Gamma + int Gamma K_G)^T (Gram blocks symmetric)
    return np.swapaxes(tc.score_drift(taus, Y, L, m, kappa, S, K=Q, Q=K), -1, -2)


#: a near miss of Theorem 3.2's signs through the theory: Gamma = -dL/dA read as [query, key]
#: (a key/query slip in the derivation).  It keeps the signs of A[mu2,mu1], A[mu1,mu2] and
#: turns those of A[mu3,mu1], A[mu3,mu2] (two of the four, against all four for SWAPPED).
#: The slip is in Gamma itself, so every function that returns it is transposed: the class
#: reduction's (class_gamma, score_drift) and the whole vocabulary's (loss_gradients, since
#: session 2026-12-06, when a referee read found magnitudes_whole_gram got the paper's)
KEY_QUERY = _Theory("Gamma read as [query, key] (key and query swapped in -dL/dA)",
                    (("class_gamma", _gamma_transposed),
                     ("score_drift", _score_drift_transposed),
                     ("loss_gradients", _gradients_transposed)))


#: a near miss of the balancing mechanism through the theory (balancing's control since stop
#: 69): the private-token reduction with I2's and I3's class proportions slipped by 5 % in
#: opposite directions, (1/2, 1/6 x 1.05, 1/6 x 0.95, 1/6), an error in the class
#: weights the reduction is built from; it breaks the I2 <-> I3 symmetry that Lemma 4.4's
#: balance rests on, while the data model and the run are the paper's
WEIGHT_SLIP = _weights_theory((0.5, 7 / 40, 19 / 120, 1 / 6),
                              "I2's and I3's class proportions slipped by 5 % in opposite "
                              "directions, (1/2, 1/6 x 1.05, 1/6 x 0.95, 1/6), in the reduction "
                              "(the data and the run are the paper's)")


def _preconditioner_dropped(n, L, weights=tc.WEIGHTS):
    """The private-token reduction with the kappa term removed but kappa still a parameter."""
    from theory.flow import ReducedSystem

    base = tc.private_system(n, L, weights)
    return ReducedSystem(base.state, (tc.PRECOND,), base.rhs, name=base.name + ", kappa ignored")


NO_PRECONDITIONER = _Theory("the reduction without its m1 M r term (kappa ignored: "
                            "theory.private_system in place of preconditioned_private_system)",
                            (("preconditioned_private_system", _preconditioner_dropped),))


def _no_m_term(state, tokens, labels, m, m1):
    return tc.canonical_velocity({**state, "M": np.zeros_like(np.asarray(state["M"]))},
                                 tokens, labels, m, m1)


NO_M_TERM = _Theory("canonical system without the m1 M r term (approximation (d) of our "
                    "four-class reduction)",
                    (("canonical_velocity", _no_m_term),))


def _swapped_invariants(state, m1):
    out = tc.invariants(state, m1)
    M = state["M"] if isinstance(state["M"], sp.MatrixBase) else np.asarray(state["M"], float)
    vb = state["S"] + m1 * M.trace()
    out["value_balance"] = vb if isinstance(vb, sp.Basic) else float(vb)
    return out


WRONG_INVARIANT = _Theory("S + m1 tr M (sign swapped) as the value invariant",
                          (("invariants", _swapped_invariants),))


def _cubic_law(t, S, gamma_sq, t1=0, loss1=sp.oo):
    """Near miss of Theorem F.8: dL/dt = -C L^3 (a wrong power) instead of -C L^2."""
    S, gamma_sq, t1, loss1 = (sp.sympify(x) for x in (S, gamma_sq, t1, loss1))
    return 1 / sp.sqrt(2 * S * gamma_sq * (sp.sympify(t) - t1) + 1 / loss1**2)


CUBIC_LAW = _Theory("loss law from dL/dt = -C L^3 (wrong power of L)",
                    (("loss_law", _cubic_law),))


def _sd_one_token(sigma0, sigma1, L, m, m1):
    return tc.initial_output_sd(sigma0, sigma1, 1, m, m1)


ONE_TOKEN = _Theory("Var F(0) without the factor L (one token per sample)",
                    (("initial_output_sd", _sd_one_token),))



# ---------------------------------------------------------------------- runs (shared)
def _main_config(ctx: Context, seed: int = 0, n: int = 60, L: int = 5) -> nc.CoConfig:
    """The theory-scaled run at ``ctx.profile`` (``SIZES["theory_scaled"]``) on data set and
    initialisations ``seed``."""
    base = ctx.size(nc.SIZES, "theory_scaled")
    return replace(base, data_seed=seed, seed=seed, n=n, L=L)


def _sized(ctx: Context, entry: str, seed: int) -> nc.CoConfig:
    """Size-table entry ``entry`` at ``ctx.profile`` on data set and initialisations ``seed``."""
    return replace(ctx.size(nc.SIZES, entry), seed=seed, data_seed=seed)


def _run(config: nc.CoConfig, ctx: Context) -> nc.CoRun:
    return nc.run(config, cache=ctx.cache, device=ctx.device)


def _classified(run: nc.CoRun, k: int) -> int:
    """First record with every training sample correctly classified (the paper's T1)."""
    i = nc.first_classified(run, k)
    if i is None:
        raise ValueError(f"member {k} never classified all samples (tau_end = "
                         f"{run.tau[k, -1]:.3g})")
    return i


def _rates(run: nc.CoRun, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(tau midpoints, dG/dtau) of mu1..mu3 from finite differences of the records."""
    G = run.beta[k, :, :3]
    tau = run.tau[k]
    dtau = np.diff(tau)
    return 0.5 * (tau[1:] + tau[:-1]), np.diff(G, axis=0) / dtau[:, None]


def _private(theory, cfg: nc.CoConfig, taus, Y0=None, kappa: float = 0.0) -> np.ndarray:
    """The theory's private-token class trajectory for the run's n, L (our reduction); with
    ``kappa`` > 0 the reduction with its dropped m1 M r term kept to first order."""
    taus = np.asarray(taus, float)
    if kappa:
        return np.asarray(theory.private_trajectory(taus, cfg.n, cfg.L, Y0=Y0, kappa=kappa))
    return np.asarray(theory.private_trajectory(taus, cfg.n, cfg.L, Y0=Y0))


#: sign patterns of the offsets of (P1..P4) in :func:`_g0_spread`
_SIGNS = ((1, 1, 1, 1), (-1, -1, -1, -1), (1, -1, -1, -1), (-1, 1, 1, 1), (1, -1, 1, -1),
          (-1, 1, -1, 1))


def _g_sd(run: nc.CoRun, k: int, data: nc.Dataset | None = None, record: int = 0) -> float:
    """sd of one random token's G in member k's own run at ``record`` (default its start):
    the root mean square of G over the random tokens of ``data`` (default the training set;
    G(0) has mean 0).  Measured, not theory.initial_output_sd's expectation sigma0 sigma1
    sqrt(m m1): an allowance for the run's own spread is the run's (initial_output checks
    the formula), so no error in the theory moves it; over the 200 training random tokens of
    a quick run its sampling error is about 5 %, over the 64 validation ones about 9 %."""
    tok = (run.data if data is None else data).tokens
    ids = np.unique(tok[tok >= 3])
    return float(np.sqrt(np.mean(run.beta[k, record, ids] ** 2)))


def _start(run: nc.CoRun, k: int, record: int = 0) -> np.ndarray:
    """Member k's initial point in the private-token reduction: its G(mu1..mu3) and, per
    class, the mean initial G of that class's random tokens (at ``record``: the run's beta
    there read in the reduction's form)."""
    b = run.beta[k, record]
    Y0 = np.zeros(7)
    Y0[:3] = b[:3]
    for c in range(4):
        rows = run.data.tokens[run.data.types == c]
        rand = rows[rows >= 3]
        Y0[3 + c] = float(b[rand].mean()) if rand.size else 0.0
    return Y0


def _clock(run: nc.CoRun, k: int, j: int | None = None, preconditioner: bool = True
           ) -> float:
    """How far member k's GD clock can sit from the flow's, relative, up to record j: a GD
    step h (in tau) departs from the flow by h lambda/2, lambda <= lambda_max(Z^T Z/n) max_i g_i
    (the Hessian of the mean logistic loss in beta, Z the token counts); plus the rate along
    r, which lies between S and S + m1 b^T M b (tau_eff/tau - 1).  ``preconditioner=False``
    leaves that second term out, for a claim that carries the m1 M r term through the
    reduction itself (:func:`_kappa`)."""
    j = run.tau.shape[1] - 1 if j is None else int(j)
    tok = run.data.tokens
    n = tok.shape[0]
    Z = np.zeros((n, run.config.vocabulary))
    np.add.at(Z, (np.repeat(np.arange(n), tok.shape[1]), tok.ravel()), 1.0)
    lam = float(np.linalg.eigvalsh(Z.T @ Z / n).max())
    steps = np.minimum(run.steps[: j + 1], run.lr_steps.shape[1] - 1)
    h = run.lr_steps[k, steps] * run.S[k, : j + 1]
    gmax = (1.0 / (1.0 + np.exp(np.clip(run.margin[k, : j + 1], -700, 700)))).max(axis=1)
    gd = float(np.max(h * lam * gmax) / 2)
    return gd + float(run.tau_eff[k, j] / run.tau[k, j] - 1) if preconditioner else gd


def _m0_eps(run: nc.CoRun, k: int) -> float:
    """eps0 = m1 lambda_max(M0) / S0 of member k, M0 = W_V^T W_V at the start: the largest
    relative rate error of the m1 M0 r / S0 term the preconditioned reduction drops (eps0 |r|
    bounds |m1 M0 r| / S0 in norm).  M0 is not isotropic (rank-deficient where d > m), so
    reading it as a clock change of eps0 is an estimate of its effect, not a bound on its
    direction; eps0 is of order 1e-5 in the row's theory-scaled quick run, far below the
    other terms (kept_preconditioner carries it as a rate perturbation instead;
    four_class_tracks, at m = 128, adds M's growth to it as a bound)."""
    WV = run.initial["WV"][k].detach().cpu().double()
    return run.config.m1 * float(torch.linalg.eigvalsh(WV.T @ WV).max()) / float(run.S[k, 0])


def _kept_second(run: nc.CoRun, k: int) -> float:
    """The relative size of what the preconditioned reduction leaves at second order: the
    term is first order in kappa |beta|^2, M = int d(beta beta^T)/S differs from beta
    beta^T/S by the relative S drift (theory.s_drift at the run's end) and by the dropped
    beta0 beta0^T/S: kappa0 (|beta|^2_max + |beta0|^2) + S drift (member k's run)."""
    beta_sq = np.sum(run.beta[k] ** 2, axis=1)
    kappa0 = _kappa(run, k)
    return (kappa0 * float(beta_sq.max() + beta_sq[0])
            + float(tc.s_drift(beta_sq[-1] - beta_sq[0], run.config.m1, float(run.S[k, 0]))))


def _kappa(run: nc.CoRun, k: int) -> float:
    """kappa = m1 / S0^2 of member k, the weight of the m1 M r term the private-token
    reduction drops (theory.preconditioned_private_system); S grows with |beta|
    (theory.s_drift), so S0 gives the largest kappa of the run."""
    return float(run.config.m1 / float(run.S[k, 0]) ** 2)


def _g0_spread(theory, run: nc.CoRun, k: int, taus,
               stat: Callable[[np.ndarray], float] | None, clock: float = 0.0, *,
               allowance=None, through_trajectory: bool = False,
               stat_of: Callable[[Any], Callable[[np.ndarray], float]] | None = None,
               reference: bool = False, kappa: float = 0.0, kept_second: float = 0.0
               ) -> tuple:
    """``stat`` on the reduced trajectory from member k's own start (:func:`_start`), and the
    allowance for what the reduction (one margin per class) leaves out: the spread of the
    samples' random-token G(0) around their class mean, of sd sd_G sqrt(L - s_k) in a margin.
    Its first-order effect on a class mean vanishes (the offsets sum to 0 within a class), so
    the allowance is second order: 3 x |stat(+x) + stat(-x) - 2 stat(0)|/2 at x = 1 sd (the
    class mean of x^2 scatters around sd^2 by sqrt(2/n_k); 3 covers it and the third order),
    largest over six sign patterns of the classes; plus the change of ``stat`` when the
    reduction's clock runs fast by ``clock`` (relative; :func:`_clock`).

    ``stat_of(th)``, in place of ``stat``: the statistic as computed under theory ``th`` (for
    a statistic that calls the theory itself); the prediction is ``stat_of(theory)`` on
    ``theory``'s trajectory, the allowance ``stat_of(allowance)`` on the allowance theory's,
    which then defaults to the paper's (``tc``), so check and control get one allowance.

    ``allowance``: the theory the allowance is computed under (default ``theory``, or ``tc``
    with ``stat_of``).  What the
    allowance covers (the run's random-token spread, GD's clock) is a property of the run and
    of the paper's reduction, not of the hypothesis under test, so a claim whose control must
    meet the check's own tolerance passes the paper's theory here: the prediction stays under
    ``theory``, the allowance is the same for check and control.

    ``through_trajectory``: take the second-order (even) part on the reduced trajectory,
    (Y(+x) + Y(-x))/2 - Y(0), and the allowance as the largest |stat(Y(0) +- 3 even) -
    stat(Y(0))|.  For a smooth ``stat`` this is the same to first order in the even part; for a
    stat with a kink (e.g. the later of two nearly equal crossing times, where opposite offsets
    on I2 and I3 move the maximum by their first-order effect) the stat-level difference counts
    that first-order kink as if it were the second-order effect of the within-class spread.

    ``reference``: also return the allowance theory's own value of the statistic (on its
    trajectory from the member's start), the scale for an allowance stated relative to the
    statistic (so that it does not scale with the theory's prediction).

    ``kappa`` (> 0): add the change of ``stat`` when the allowance theory's reduction keeps
    its dropped m1 M r term (theory.preconditioned_private_system at kappa, :func:`_kappa`):
    that term grows beta along itself, which moves ratios of class losses at first order, not
    only the clock; a claim that uses it passes ``_clock(..., preconditioner=False)``.  The
    change counts (1 + ``kept_second``) times, for what the kept term leaves at second order
    (:func:`_kept_second`)."""
    cfg = run.config
    if stat_of is not None:
        at = tc if allowance is None else allowance
        stat_th, stat = stat_of(theory), stat_of(at)
    else:
        at = theory if allowance is None else allowance
        stat_th = stat
    Y0 = _start(run, k)
    traj0 = _private(at, cfg, taus, Y0)
    base_at = np.asarray(stat(traj0), dtype=float)
    base = base_at if at is theory else np.asarray(stat_th(_private(theory, cfg, taus, Y0)),
                                                   dtype=float)
    sd = _g_sd(run, k)
    per = [cfg.L - 1 - sum(z[:2]) for z in tc.CLASS_TOKENS]
    worst = np.zeros_like(base)
    for signs in _SIGNS[::2]:  # +x and -x of a pattern are the pair (s, -s)
        trajs = []
        for sgn in (1, -1):
            Y = Y0.copy()
            for c in range(4):
                if per[c]:
                    Y[3 + c] += sgn * signs[c] * sd / math.sqrt(per[c])
            trajs.append(_private(at, cfg, taus, Y))
        if through_trajectory:
            even = 0.5 * (trajs[0] + trajs[1]) - traj0
            for s in (3.0, -3.0):
                alt = np.asarray(stat(traj0 + s * even), dtype=float)
                worst = np.maximum(worst, np.abs(alt - base_at))
        else:
            alts = [np.asarray(stat(t), dtype=float) for t in trajs]
            worst = np.maximum(worst, 1.5 * np.abs(alts[0] + alts[1] - 2 * base_at))
    if clock:
        fast = np.asarray(stat(_private(at, cfg, np.asarray(taus) * (1 + clock), Y0)),
                          dtype=float)
        worst = worst + np.abs(fast - base_at)
    if kappa:
        kept = np.asarray(stat(_private(at, cfg, taus, Y0, kappa)), dtype=float)
        worst = worst + (1.0 + kept_second) * np.abs(kept - base_at)
    if base.ndim == 0:
        out = (float(base), float(worst), float(base_at))
    else:
        out = (base, worst, base_at)
    return out if reference else out[:2]


#: a worst-member tuple (predicted, observed, error, tolerance) before any member is seen
_NONE_YET = (0.0, 0.0, -1.0, 1.0)


def _rank(error: float, tolerance: float) -> float:
    """error / tolerance for picking the worst member; a non-finite error or tolerance (a
    theory that gives no finite prediction here) ranks worst, so the part reports it and fails
    (a non-finite error fails a part) instead of keeping a finite member or the placeholder."""
    if not (math.isfinite(error) and math.isfinite(tolerance)):
        return math.inf
    if tolerance > 0:
        return error / tolerance
    return math.inf if error > 0 else 0.0


class _Picked(tuple):
    """A (predicted, observed, error, tolerance) tuple that also carries every member's
    (predicted, observed, error) seen by :func:`_worse`, in the order seen."""

    members: tuple = ()


def _worse(candidate: tuple, current: tuple) -> tuple:
    """Of two (predicted, observed, error, tolerance) tuples, the one with the larger
    :func:`_rank` (the candidate on a tie), carrying the members seen so far (_Picked)."""
    win = _Picked(candidate if _rank(*candidate[2:4]) >= _rank(*current[2:4]) else current)
    win.members = (*getattr(current, "members", ()), tuple(float(x) for x in candidate[:3]))
    return win


#: the declared reason (:func:`_worst_member_part`) of a part that reports its worst member
_WORST_MEMBER = (
    "a worst-member part: each member's allowance is computed from that member's run and the "
    "paper's reduction (theory.cooccurrence) alone, not from the theory the check is handed "
    "(theory= or control=), so it is the same under check and control member by member "
    "(details: member_tolerances); the part shows the member with the largest "
    "error/allowance (_worse), and which member that is moves with the prediction.  A wrong "
    "theory cannot pass by it: the part passes only if every member's error is within that "
    "member's own allowance")


def _worst_member_part(part: Part, tolerances=None, picked: tuple | None = None) -> Part:
    """``part`` (the worst member's) with every member's allowance in its details
    (:data:`_WORST_MEMBER`): the runner's drift test compares those, member by member, so
    a part whose allowances stay put while the theory picks another worst member is not
    read as drift, and one whose member allowance moved still is (not declared).  With
    ``picked`` (a :func:`_worse` result) also every member's (predicted, observed, error)
    as ``member_values``: ``tdcheck mutate --resolution`` reads those, so a tolerance that
    moves the worst member to another is not taken for a move of the compared values."""
    details = dict(part.details)
    if tolerances is not None:
        details["member_tolerances"] = [float(t) for t in tolerances]
    members = getattr(picked, "members", ())
    if members:
        details["member_values"] = [list(m) for m in members]
    return replace(part, details=details)


def _digest(pred: np.ndarray, obs: np.ndarray, err: np.ndarray) -> list[float]:
    """A member's compared values in three numbers, for a part whose error is read in units
    of a pointwise allowance (so its reported error moves with the allowance): the norms of
    the prediction and the observation and the largest raw error (``member_values``)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return [float(np.linalg.norm(np.nan_to_num(pred, nan=np.inf))),
                float(np.linalg.norm(obs)), float(np.max(err))]


def _first(taus: np.ndarray, ok: np.ndarray) -> float:
    """The first time from which ``ok`` holds to the end of the grid (inf if it fails last)."""
    bad = np.nonzero(~ok)[0]
    if bad.size and bad[-1] == ok.size - 1:
        return math.inf
    return float(taus[int(bad[-1]) + 1]) if bad.size else float(taus[0])


def _quadratic_weights(x: np.ndarray) -> np.ndarray:
    """Lagrange weights of the quadratic through three points at offsets ``x`` from the
    point where it is evaluated (its value there is ``weights @ values``)."""
    return np.array([x[1] * x[2] / ((x[0] - x[1]) * (x[0] - x[2])),
                     x[0] * x[2] / ((x[1] - x[0]) * (x[1] - x[2])),
                     x[0] * x[1] / ((x[2] - x[0]) * (x[2] - x[1]))])


def _held_from(taus: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``q`` [r, T]: the time from which it stays > 0 to the end of ``taus``,
    read linearly between the two records around its last sign change (taus[0] if it is
    positive throughout, inf if it is not positive at the end); and that reading's
    interpolation error: |the quadratic through three records around the change, at the
    linear reading| over the record slope there (largest of the two three-record stencils)."""
    q = np.asarray(q, dtype=float)
    out, err = np.full(q.shape[0], float(taus[0])), np.zeros(q.shape[0])
    for i, row in enumerate(q):
        bad = np.nonzero(~(row > 0))[0]
        if not bad.size:
            continue
        j = int(bad[-1])
        if j == row.size - 1 or not np.all(np.isfinite(row[j:j + 2])):
            out[i], err[i] = math.inf, math.inf
            continue
        slope = (row[j + 1] - row[j]) / (taus[j + 1] - taus[j])
        t = float(taus[j] - row[j] / slope)
        out[i] = t
        worst = 0.0
        for lo in (j - 1, j):
            if lo < 0 or lo + 3 > row.size:
                continue
            x = taus[lo:lo + 3] - t
            w = _quadratic_weights(x)
            worst = max(worst, abs(float(w @ row[lo:lo + 3])) / abs(slope))
        err[i] = worst
    return out, err


def _sign_changes(q: np.ndarray) -> np.ndarray:
    """The number of sign changes (> 0 against not) along each row of ``q`` [r, T]."""
    pos = np.asarray(q, dtype=float) > 0
    return np.sum(pos[:, 1:] != pos[:, :-1], axis=1)


def _extrapolated_onset(reads: list[tuple[np.ndarray, np.ndarray]], changes: list[np.ndarray]
                        ) -> tuple[float, float, float, str]:
    """An onset (the latest of several crossings) of GD extrapolated to the flow from its
    readings at step h and h/2 (``reads``: the (times, interpolation errors) of
    :func:`_held_from` on each run; ``changes``: each run's :func:`_sign_changes`): per
    crossing 2 t(h/2) - t(h), then the latest; GD's step dependence max |t(h) - t(h/2)| (to
    leading order the error of t(h/2) itself, allowed whole as in four_class_tracks); the
    interpolation errors carried through 2 t(h/2) - t(h); and a reason when the two runs do
    not show the same crossings (a different number of sign changes of some row: the
    difference would pair different events) or the extrapolation is not a positive time.
    Those give an infinite onset, which fails the part with the reason."""
    (th, eh), (t2, e2) = reads
    why = []
    same = np.asarray(changes[0]) == np.asarray(changes[1])
    if not np.all(same):
        why.append(f"GD at h and h/2 cross a different number of times (rows "
                   f"{np.nonzero(~same)[0].tolist()}: {np.asarray(changes[0]).tolist()} "
                   f"against {np.asarray(changes[1]).tolist()})")
    with np.errstate(invalid="ignore"):
        t0 = np.where(np.isfinite(th) & np.isfinite(t2) & same, 2 * t2 - th, math.inf)
        step = np.where(np.isfinite(t0), np.abs(th - t2), math.inf)
    i = int(np.argmax(t0))
    if not np.isfinite(t0[i]):
        if same.all():
            why.append("a crossing is never left behind by the end of the run")
        return math.inf, math.inf, math.inf, "; ".join(why)
    if not t0[i] > 0:
        why.append(f"the extrapolated onset {t0[i]:.4g} is not a positive time")
        return math.inf, math.inf, math.inf, "; ".join(why)
    return float(t0[i]), float(np.max(step)), float(2 * e2[i] + eh[i]), "; ".join(why)


def _spacing(tau: np.ndarray, i: int) -> float:
    """The record spacing in tau around record i (the resolution of a time read there)."""
    lo, hi = max(i - 1, 0), min(i + 1, tau.size - 1)
    return float(tau[hi] - tau[lo]) / max(hi - lo, 1)


def _wilson(k: int, n: int, confidence: float = 0.99) -> tuple[float, float]:
    """Wilson score interval of a binomial fraction k/n at ``confidence`` (two-sided)."""
    from numerics.stats import normal_quantile

    z = normal_quantile(confidence)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


#: a training-set size so large that the private-token reduction's random tokens stay frozen
#: over any run of the row (they move at rate 1/n_k): its special-token G is the four-class
#: system's (random tokens ignored) up to O(tau/n)
N_LIMIT = 6 * 10**10
#: accumulated rounding of two rtol 1e-10 LSODA integrations compared entry by entry
ODE_ROUND = 1e-8


def _four_class_gap(theory, L: int, taus) -> tuple[float, float]:
    """(relative gap, allowance) between the theory's four-class G(tau)
    (``theory.class_trajectory``) and the special-token G of the private-token reduction at
    n = N_LIMIT (``theory.private_trajectory``, a separate symbolic system on
    ``theory.private_margins``): the four-class system is that reduction's n -> infinity limit.
    The allowance extrapolates the O(1/n) gap from n and 10 n, (10/9) |Y(n) - Y(10 n)|,
    doubled, plus ODE_ROUND."""
    taus = np.asarray(taus, dtype=float)
    C = np.asarray(theory.class_trajectory(taus), dtype=float)[:, 1:]
    Y1 = np.asarray(theory.private_trajectory(taus, N_LIMIT, L), dtype=float)[:3, 1:]
    Y10 = np.asarray(theory.private_trajectory(taus, 10 * N_LIMIT, L), dtype=float)[:3, 1:]
    scale = np.abs(Y10).max(axis=0)
    gap = float(np.max(np.abs(C - Y10).max(axis=0) / scale))
    tail = float(np.max(np.abs(Y1 - Y10).max(axis=0) / scale))
    return gap, 2 * tail * 10 / 9 + ODE_ROUND


def _forward_dp(dA3, tokens, m: int) -> float:
    """max |P - 1/L| of the model's forward pass (numerics.cooccurrence.forward) with
    A = W_K^T W_Q equal to ``dA3`` on mu1..mu3 and 0 elsewhere (W_K = [I_3 0], W_Q = [dA3 0])."""
    d = int(np.max(tokens)) + 1
    WK = torch.zeros(m, d, dtype=torch.float64)
    WQ = torch.zeros(m, d, dtype=torch.float64)
    WK[:3, :3] = torch.eye(3, dtype=torch.float64)
    WQ[:3, :3] = torch.as_tensor(np.asarray(dA3, dtype=float))
    zeros = torch.zeros(m, d, dtype=torch.float64)
    p = {"WK": WK, "WQ": WQ, "WV": zeros, "W": torch.zeros(1, m, dtype=torch.float64),
         "a": torch.ones(1, dtype=torch.float64)}
    with torch.no_grad():
        _, P = nc.forward(p, torch.as_tensor(np.asarray(tokens)))
    return float((P - 1.0 / tokens.shape[1]).abs().max())


def _placed(data: nc.Dataset, d: int, Y, K: float = 0.0, Q: float = 0.0, S: float = 1.0
            ) -> dict:
    """A canonical state on the run's tokens carrying a private-token class state ``Y``
    (G1..G3 on mu1..mu3, P_k on every random token of class k), M = A = 0, K_G = K I,
    Q_G = Q I (with K = 0, Q = 1 the canonical dA/dt is Gamma = -dL/dA itself)."""
    b = np.zeros(d)
    b[:3] = np.asarray(Y, dtype=float)[:3]
    for c in range(4):
        rows = data.tokens[data.types == c]
        b[np.unique(rows[rows >= 3])] = float(Y[3 + c])
    z = np.zeros((d, d))
    return {"beta": b, "S": float(S), "M": z, "A": z, "K_G": K * np.eye(d), "Q_G": Q * np.eye(d)}


_SEEDS = st.fixed_dictionaries({"seed": st.integers(0, 1000)})
#: the pinned example of the claims on our own runs: the paper states no seed, and seed 0 is
#: the data set and initialisations on which the row's runs and figures are drawn.
_PIN = Example({"seed": 0}, via="seed 0: the data set and initialisations of the row's figures "
                               "(the paper states no seed)")


#: the second pinned data set of the run comparisons (issue 36: each on at least two): seed 1,
#: the data set phase1 and canonical_closure already run; added to the claims below in one
#: change, before their checks were run on it (validation_exponent's later, on 3f8f96c,
#: after a quick run of its first example; see its notes)
_PIN1 = Example({"seed": 1}, via="seed 1: a second data set and initialisations (issue 36: "
                                "each run comparison on at least two)")


# ---------------------------------------------------------------------- 1 canonical closure
@claim(
    statement="the canonical variables (beta, S, M, A, K_G, Q_G) of full-model GD follow the "
              "closed canonical ODE (theory.cooccurrence.canonical_velocity); the error halves "
              "with the step",
    source="Appendix B gradients; Eq. (4)-(7), Lemmas C.1-C.4, F.4, F.11 are entrywise forms "
           "of the canonical ODE (our derivation from them)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": NO_M_TERM},
    control_description=NO_M_TERM.label,
    cost="slow",
    examples=(_PIN, Example({"seed": 1}, via="a second data set and initialisation: the "
                                             "closure is exact for every one")),
    notes="sigma0 = sigma1 = 0.5, n = 12, L = 4, m = 16, m1 = 8 so that attention moves",
)
def check_canonical_closure(params: dict, ctx: Context, *, theory) -> Evidence:
    """Full GD at eta and eta/2 against the integrated canonical ODE
    (:func:`theory.cooccurrence.canonical_velocity`)."""
    seed = int(params.get("seed", 0))
    n, L, m, m1, sigma = 12, 4, 16, 8, 0.5
    # the closure is our construction (no paper configuration): time and step by profile,
    # SIZES["closure"]; two members from one initialisation, at eta and eta/2, and two ids
    # never seen in training
    size = ctx.size(nc.SIZES, "closure")
    t_end, eta = size["t_end"], size["eta"]
    N = int(round(t_end / eta))
    run = nc.run_closure(nc.ClosureConfig(lrs=(eta, eta / 2), steps=2 * N, record_every=N, n=n,
                                          L=L, m=m, m1=m1, sigma=sigma, unseen=2, seed=seed),
                         cache=ctx.cache, device=ctx.device)
    x_eta = run.state[0, 1]  # member lr eta after N steps
    x_half = run.state[1, 2]  # member lr eta/2 after 2N steps
    ode = nc.integrate_canonical(run.initial_state, run.data.tokens, run.data.labels, m, m1,
                                 [t_end], velocity=theory.canonical_velocity)[-1]
    x_ode = np.concatenate([np.asarray(ode[k], dtype=float).reshape(-1) for k in tc.STATE_KEYS])
    norm = float(np.linalg.norm(x_ode))
    e1 = float(np.linalg.norm(x_eta - x_ode)) / norm
    e2 = float(np.linalg.norm(x_half - x_ode)) / norm
    rich = float(np.linalg.norm(2 * x_half - x_eta - x_ode)) / norm
    moved = float(np.linalg.norm(x_ode - run.initial_flat)) / norm
    # the full model's own step dependence, relative: with X(h) = X + a h + b h^2 it is
    # |a eta/2 + 3 b eta^2/4| / |X|, e(eta/2) to leading order, from the two GD members alone
    # (no theory in it: the same under check and control)
    step_spread = float(np.linalg.norm(x_eta - x_half)) / float(np.linalg.norm(x_half))
    return Evidence((
        Part("first_order", 2.0, e1 / e2, abs(e1 / e2 - 2.0), 0.3,
             "GD's global error is c1 eta + c2 eta^2 against gradient flow; the eta^2 term moves "
             "the ratio e(eta)/e(eta/2) off 2 by ~ (c2/c1) eta (a few % at eta |H| ~ 1e-3); "
             "0.3 allowance", details={"e_eta": e1, "e_eta_half": e2, "eta": eta}, kind="simulation"),
        Part("richardson", 0.0, rich, rich, 0.25 * step_spread + 1e-8,
             "Richardson 2X(eta/2) - X(eta) cancels the O(eta) error and leaves -b eta^2/2 "
             "(X(h) = X + a h + b h^2); allowance a quarter of the run's own step dependence "
             "|X(eta) - X(eta/2)|/|X(eta/2)| (= |a| eta/2 to leading order, measured on the two "
             "GD members, no theory in it), which the remainder stays below when "
             "|b|/|a| eta < 1/4; 1e-8 for the ODE solver (rtol 1e-10)",
             details={"relative_motion": moved, "step_spread": step_spread},
             kind="simulation"),
    ), {"t_end": t_end, "relative_change_of_state": moved})


# ---------------------------------------------------------------------- 2 invariants
@claim(
    statement="S - m1 tr M, tr K_G - tr Q_G and tr K_G^2 + tr Q_G^2 - 2|A|^2 have zero drift; "
              "under GD they drift exactly by eta^2 (|g_1|^2 - |g_2|^2) per step; W_K = W_Q = 0 "
              "stays 0 and attention stays exactly 1/L",
    source="balancedness of adjacent linear factors and the invariant manifold W_K = W_Q = 0 "
           "(our derivation from Appendix B's gradients)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": WRONG_INVARIANT},
    control_description=WRONG_INVARIANT.label,
    cost="slow",
    examples=(_PIN,),
    notes="the symbolic parts differentiate theory.invariants along theory.canonical_rhs (the "
          "same right-hand side as the numeric canonical velocity), so a wrong invariant or a "
          "wrong ODE term shows there; the GD drift of tr K_G - tr Q_G is checked on a small "
          "model whose attention moves (SIZES['kq_drift']), where it stands far above rounding, "
          "unlike in the theory-scaled run.  One pinned data set suffices (issue 36): every "
          "part is an exact identity (symbolic, or GD's drift per step on the run's own "
          "gradients), with no statistic over data sets to decide",
)
def check_invariants(params: dict, ctx: Context, *, theory) -> Evidence:
    """Zero symbolic drift; exact GD drift eta^2 (|g_W|^2 - |g_V|^2); W_K = W_Q = 0 invariant."""
    seed = int(params.get("seed", 0))
    parts = []
    for name, drift in theory.invariant_drifts(2, theory.invariants).items():
        parts.append(identically_zero(f"symbolic_{name}", drift,
                                      "exact sympy identity: theory.invariants differentiated "
                                      "along theory.canonical_rhs; 0 if the drift simplifies "
                                      "to zero, else 1", kind="symbolic"))

    def gd_drift(run: nc.CoRun) -> dict:
        m1 = run.config.m1
        out = {"v": (0.0, 0.0, -1.0), "kq": (0.0, 0.0, -1.0)}
        for k in range(run.config.members):
            start = theory.invariants(nc.canonical_state(nc.member(run.initial, k)), m1)
            end = theory.invariants(nc.canonical_state(nc.member(run.final, k)), m1)
            lr2 = run.lr_steps[k] ** 2
            pv = m1 * float(np.sum(lr2 * (run.grad_sq["W"][k] - run.grad_sq["WV"][k])))
            pk = float(np.sum(lr2 * (run.grad_sq["WK"][k] - run.grad_sq["WQ"][k])))
            ov = end["value_balance"] - start["value_balance"]
            ok = end["kq_balance"] - start["kq_balance"]
            if abs(ov - pv) > out["v"][2]:
                out["v"] = (pv, ov, abs(ov - pv))
            if abs(ok - pk) > out["kq"][2]:
                out["kq"] = (pk, ok, abs(ok - pk))
        # float64 rounding: each GD step rounds every weight (relative eps), which moves an
        # invariant built from squared weights by ~ 2 eps x (sum of its terms' sizes); a worst
        # case adds these linearly: ROUND_ULPS eps x steps x size, ROUND_ULPS = 4 for the
        # factor 2 of the squares and the rounding of the update and of the trace sums.
        ends = [nc.canonical_state(nc.member(p, k)) for p in (run.initial, run.final)
                for k in range(run.config.members)]
        size_v = max(abs(float(c["S"])) + m1 * abs(float(np.trace(np.asarray(c["M"]))))
                     for c in ends)
        size_kq = max(float(np.trace(np.asarray(c["K_G"])) + np.trace(np.asarray(c["Q_G"])))
                      for c in ends)
        out["tol_v"] = ROUND_ULPS * EPS * run.config.steps * size_v
        out["tol_kq"] = ROUND_ULPS * EPS * run.config.steps * size_kq
        return out

    main = gd_drift(_run(_main_config(ctx, seed), ctx))
    moving = gd_drift(_run(_sized(ctx, "kq_drift", seed), ctx))
    for tag, res in (("", main), ("moving_", moving)):
        pv, ov, ev = res["v"]
        parts.append(Part(f"gd_{tag}value_balance", pv, ov, ev, res["tol_v"],
                          "exact GD identity: first-order terms cancel as in the flow, each "
                          "step adds m1 eta^2 (|dL/dW|^2 - |dL/dW_V|^2); float64 rounding of "
                          "S + m1 tr M (4 eps per step, linear accumulation)",
                          details={"predicted_drift_over_tolerance": abs(pv) / res["tol_v"]}, kind="simulation"))
    pk, ok, ek = moving["kq"]
    parts.append(Part("gd_kq_balance", pk, ok, ek, moving["tol_kq"],
                      "exact GD identity eta^2 (|dL/dW_K|^2 - |dL/dW_Q|^2) per step, on the "
                      "model whose attention moves (sigma0 = 0.5); float64 rounding of "
                      "tr K_G + tr Q_G (4 eps per step, linear accumulation)",
                      details={"predicted_drift_over_tolerance": abs(pk) / moving["tol_kq"],
                               "theory_scaled_run": {"predicted": main["kq"][0],
                                                     "observed": main["kq"][1],
                                                     "tolerance": main["tol_kq"]}}, kind="simulation"))
    zrun = _run(_sized(ctx, "zero_kq", seed), ctx)
    kq = max(float(zrun.final["WK"].abs().max()), float(zrun.final["WQ"].abs().max()))
    parts.append(Part("kq_stays_zero", 0.0, kq, kq, 0.0,
                      "W_K = W_Q = 0 is invariant: their gradients W_Q Gamma^T, W_K Gamma vanish "
                      "exactly (no rounding: products with exact zeros)", kind="simulation"))
    dp = float(np.max(zrun.max_dp))
    parts.append(Part("uniform_attention", 0.0, dp, dp, 0.0,
                      "softmax of all-zero scores is the same float 1/L at every step", kind="simulation"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 3 phase 1
def _log_ratio(a: float, b: float) -> float:
    """|log(a / b)|, or inf where either side is not a positive finite number (a theory that
    predicts no positive value here: the part fails on it instead of raising)."""
    a, b = float(a), float(b)
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(math.log(a / b))


def _quotient(a: float, b: float) -> float:
    """a / b in floating point (inf or nan on a zero b, never ZeroDivisionError)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))


def _phase1_timing(theory, run: nc.CoRun, taus: np.ndarray) -> Part:
    """t_cls: the first classification against the reduction's (Theorem 3.1)."""
    cfg = run.config

    def min_margin(th) -> np.ndarray:
        return np.array(th.private_margins(list(_private(th, cfg, taus)), cfg.L)).min(axis=0)

    def first_above(qmin: np.ndarray, level: float) -> float:  # inf: never gets there
        above = np.nonzero(qmin > level)[0]
        return float(taus[above[0]]) if above.size else math.inf

    qmin = min_margin(theory)
    t_pred = first_above(qmin, 0.0)
    # the allowance is the paper's reduction's (tc) for check and control alike: how long
    # the margins take to rise by the spread sd(F(0)) the run starts with is a property of
    # the run's initialisation and of the paper's dynamics, not of the hypothesis under test
    sdF = math.sqrt(cfg.L) * max(_g_sd(run, k) for k in range(cfg.members))
    q_tc = qmin if theory is tc else min_margin(tc)
    t0_tc, t_3sd = first_above(q_tc, 0.0), first_above(q_tc, 3 * sdF)
    obs_t, spacing = [], 0.0
    for k in range(cfg.members):
        i = _classified(run, k)
        obs_t.append(float(run.tau[k, i]))
        spacing = max(spacing, _spacing(run.tau[k], i) / obs_t[-1])
    t_obs = float(np.mean(obs_t))
    return Part("t_cls", t_pred, t_obs, _log_ratio(t_obs, t_pred),
                _log_ratio(t_3sd, t0_tc) + spacing,
                "Theorem 3.1: T1 = Theta(1/(sigma1^2 m m1)); predicted: the first tau with every "
                "private-token class margin > 0 (theory.private_margins); the full run's sample "
                "margins start spread by sd(F(0)) = sqrt(L) sd_G (sd_G the run's own, _g_sd): "
                "allowance log of "
                "tau(min margin > 3 sd F(0)) / tau(min margin > 0) on the paper's reduction (the "
                "same for check and control), plus the record spacing"
                + ("" if math.isfinite(t_pred) and t_pred > 0 else
                   f" (the reduction classifies no class set by tau = {taus[-1]:g}: no "
                   "predicted T1)"),
                details={"members": obs_t, "tau_3sd": t_3sd}, kind="simulation")


def _phase1_rates(theory, run: nc.CoRun, half: nc.CoRun) -> tuple[Part, ...]:
    """The initial rates dG1/dtau, dG3/dtau (Lemmas 4.1-4.2) against the run and against the
    exact canonical velocity on the run's training set.  Observed and allowed as in
    four_class_tracks (:func:`_initial_rate_observed` on the Richardson-extrapolated path,
    the allowance from :func:`_four_class_allowance`: the run's alone); predicted:
    theory.initial_rates carried to the member's G(0) by the four-class Jacobian
    (:func:`_initial_rate_predicted`)."""
    cfg = run.config
    worst = {0: _NONE_YET, 2: _NONE_YET}
    tols, why = [], []
    for k in range(cfg.members):
        path, gd = _richardson(run, half, k)
        _, rate_allow, _ = _four_class_allowance(run, k, gd, path)
        obs, allow = _initial_rate_observed(run, half, k, path, rate_allow)
        try:
            pred = _initial_rate_predicted(theory, run, k)
        except InadmissibleTheory as exc:
            pred = np.full(3, np.nan)
            why.append(f"member {k}: {exc}")
        tols.append(allow)
        for i in worst:
            e = abs(float(obs[i] - pred[i])) if np.isfinite(pred[i]) else math.inf
            worst[i] = _worse((float(pred[i]), float(obs[i]), e, allow), worst[i])
    reason = (" (" + "; ".join(why) + ")") if why else ""
    common = ("; predicted: theory.initial_rates carried to the member's G(0) by the "
              "four-class Jacobian (theory.class_system); observed: the three-point "
              "difference at tau = 0 of GD extrapolated to the flow from a half-step twin; "
              "allowance (_initial_rate_observed, the run's alone, as in four_class_tracks): "
              "the rate-error bound at 0 (random tokens, attention, the m1 M r term), the "
              "Taylor remainder, the difference formula's error and GD's step dependence, "
              "worst member" + reason)
    # the exact canonical velocity (theory.canonical_velocity, Appendix B's gradients) on the
    # run's own data at G = 0, S = 1, uniform attention: dbeta/dt on mu1..mu3 is dG/dtau
    v0 = theory.canonical_velocity(_placed(run.data, cfg.vocabulary, np.zeros(7)),
                                   run.data.tokens, run.data.labels, cfg.m, cfg.m1)["beta"][:3]
    try:  # a theory whose rates are not three numbers fails the exact part (inf), no raise
        rates = np.array([float(x) for x in theory.initial_rates()], dtype=float)
        rate_exact = float(np.max(np.abs(v0 - rates)))
    except (TypeError, ValueError, ArithmeticError, AttributeError):
        rate_exact = math.inf
    return (
        _worst_member_part(Part("initial_rate_mu1", *worst[0],
                                "Lemma 4.1: dG(mu1)/dtau -> (pi1 - pi2)/2 at G = 0" + common,
                                kind="simulation"), tols, worst[0]),
        _worst_member_part(Part("initial_rate_mu3", *worst[2],
                                "Lemma 4.2: positive and negative samples cancel, dG(mu3)/dtau "
                                "-> 0 at G = 0" + common, kind="simulation"), tols, worst[2]),
        Part("initial_rates_exact", 0.0, rate_exact, rate_exact, 64 * EPS,
             "Lemmas 4.1-4.2 (theory.initial_rates, all three) against the exact canonical "
             "velocity (theory.canonical_velocity) on the run's training set at G = 0, S = 1, "
             "M = A = 0 (exact proportions: the same numbers); largest absolute difference; "
             "allowance 64 eps (rounding of the mean over n samples)", kind="symbolic"),
    )


def _phase1_member(theory, run: nc.CoRun, half: nc.CoRun, k: int) -> dict:
    """Member k's Phase-1 drifts at its first classification T1 against the reduction's
    (each an (error, allowance, record) triple) and the exact identities behind them;
    ``half`` is the same run at half the step (:func:`_half_step`), for the paired parts
    (:func:`_phase1_paired`)."""
    cfg = run.config
    kappa = cfg.s0 ** 2 * cfg.m  # K_G ~ Q_G ~ sigma0^2 m I at initialisation
    i = _classified(run, k)
    t_i, S0 = float(run.tau[k, i]), float(run.S0[k])
    grid = np.linspace(0.0, t_i, 801)
    G = run.beta[k, i, :3]
    out: dict = {"wrong": int(not (G[0] > 0 and G[1] > 0 and G[2] < 0))}
    _, dA_spread, dA_ref = _g0_spread(
        theory, run, k, grid, None, _clock(run, k, i),
        stat_of=lambda th: lambda Yg: np.abs(th.score_drift(
            grid, Yg, cfg.L, cfg.m, kappa, S0)[-1]).max(), reference=True)
    Yi = _private(theory, cfg, grid, _start(run, k))
    dA = theory.score_drift(grid, Yi, cfg.L, cfg.m, kappa, S0)[-1]
    # K_G, Q_G diagonals are chi-square sums of m squares: relative sd sqrt(2/m) each,
    # 3 sd; plus the random-token G(0) spread, relative to the value of the reduction it is
    # computed on (the paper's, for check and control alike: not the prediction under test)
    rel_tol = 3 * math.sqrt(2 / cfg.m) + _quotient(dA_spread, dA_ref)
    obs_dA = run.A3[k, i] - run.A3[k, 0]
    e = _quotient(np.linalg.norm(obs_dA - dA), np.linalg.norm(dA))
    out["dA"] = (e, rel_tol, e)
    dp = float(theory.softmax_change(dA, run.data.tokens, cfg.m))
    out["sm"] = abs(dp - _forward_dp(dA, run.data.tokens, cfg.m))
    out["dp"] = (_log_ratio(run.max_dp[k, i], dp),
                 math.log(1 + rel_tol) if 1 + rel_tol > 0 else math.nan,
                 [float(run.max_dp[k, i]), dp])
    out.update(_phase1_paired(theory, run, half, k, i, grid, Yi, kappa))
    b2 = float(theory.private_beta_sq(Yi[:, -1], cfg.n, cfg.L))
    placed = _placed(run.data, cfg.vocabulary, Yi[:, -1])["beta"]
    out["b2"] = abs(_quotient(b2, placed @ placed) - 1)
    # score_drift against the exact canonical dA/dt = Gamma Q_G + K_G Gamma at
    # K_G = Q_G = kappa I (theory.canonical_velocity on the run's tokens), integrated by
    # the same trapezoid over dt = dtau/S0 on a sub-grid
    sub = np.arange(0, grid.size, 40)
    rate_A = np.array([theory.canonical_velocity(
        _placed(run.data, cfg.vocabulary, Yi[:, j], K=kappa, Q=kappa), run.data.tokens,
        run.data.labels, cfg.m, cfg.m1)["A"][:3, :3] for j in sub])
    ex_A = trapezoid(rate_A, grid[sub], axis=0) / S0
    sd_A = theory.score_drift(grid[sub], Yi[:, sub], cfg.L, cfg.m, kappa, S0)[-1]
    out["sd"] = _quotient(np.max(np.abs(sd_A - ex_A)), np.max(np.abs(ex_A)))
    # s_drift (the solution of dS/dt = 2 m1 beta.r, d|beta|^2/dt = 2 S beta.r) against the
    # exact canonical velocity's dS/d|beta|^2 = m1/S at M = 0 and S = S0 (1 + s_drift):
    # S0 d(s_drift)/d|beta|^2 (central difference, relative step 1e-4) equals it
    dS = float(theory.s_drift(b2, cfg.m1, S0))
    vel = theory.canonical_velocity(_placed(run.data, cfg.vocabulary, Yi[:, -1],
                                            S=S0 * (1 + dS)), run.data.tokens,
                                    run.data.labels, cfg.m, cfg.m1)
    ratio_ex = _quotient(vel["S"], 2 * placed @ vel["beta"])
    slope = S0 * float(theory.s_drift(b2 * 1.0001, cfg.m1, S0)
                       - theory.s_drift(b2 * 0.9999, cfg.m1, S0)) / (2e-4 * b2)
    out["ds"] = abs(_quotient(slope, ratio_ex) - 1)
    obs_S = float(run.S[k, i] / S0 - 1)
    # the observed Delta|beta|^2 carries the cross term 2 beta(0).Delta beta, of sd
    # 2 sd_G |Delta beta|: 3 sd relative to |Delta beta|^2 is 6 sd_G / |Delta beta|, |beta|
    # the paper's reduction's (tc) from the member's start and sd_G the member's own
    # (_g_sd), the same for check and control (the prediction under test is dS)
    b2_tc = b2 if theory is tc else float(tc.private_beta_sq(
        _private(tc, cfg, grid, _start(run, k))[:, -1], cfg.n, cfg.L))
    tol = _quotient(6 * _g_sd(run, k), math.sqrt(b2_tc)) if b2_tc > 0 else math.nan
    out["dS"] = (abs(_quotient(obs_S, dS) - 1), tol, [obs_S, dS])
    l_pred, l_spread = _g0_spread(
        theory, run, k, grid, None, _clock(run, k, i),
        stat_of=lambda th: lambda Yg: float(np.array([float(x) for x in th.WEIGHTS])
                                            @ th.private_losses(Yg, cfg.L)[:, -1]))
    out["loss"] = (abs(float(run.loss[k, i]) - l_pred), l_spread,
                   [float(run.loss[k, i]), l_pred])
    return out


def _half_step(config: nc.CoConfig) -> nc.CoConfig:
    """The same data, initialisations and tau-schedule at half the GD step: every step
    halved (dtau, and the growth per step the square root of the original's), twice the
    steps, records at the same tau up to the schedule's rounding (tau read by interpolation)."""
    return replace(config, dtau=config.dtau / 2, steps=2 * config.steps, warm=2 * config.warm,
                   growth=math.sqrt(1.0 + config.growth) - 1.0,
                   record_every=2 * config.record_every)


def _at_tau(run: nc.CoRun, k: int, tau: float, values: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Member k's recorded ``values`` [T, ...] at time ``tau``, linear in tau between the two
    records around it, and that interpolation's error estimate: |linear - the quadratic
    through the three nearest records| (entrywise)."""
    flat = np.asarray(values, dtype=float).reshape(values.shape[0], -1)
    taus = run.tau[k]
    lin = np.array([np.interp(tau, taus, flat[:, c]) for c in range(flat.shape[1])])
    j = int(np.clip(np.searchsorted(taus, tau), 1, taus.size - 2))
    near = slice(j - 1, j + 2)
    x = taus[near] - tau
    # the quadratic through three points, at x = 0: Lagrange weights
    w = _quadratic_weights(x)
    quad = w @ flat[near]
    shape = values.shape[1:]
    return lin.reshape(shape), np.abs(quad - lin).reshape(shape)


def _gram(run: nc.CoRun, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Member k's K_G = W_K^T W_K and Q_G = W_Q^T W_Q at initialisation [d, d], from its
    stored initial parameters (numerics.cooccurrence.canonical)."""
    can = nc.canonical({name: value[k] for name, value in run.initial.items()})
    return can["K_G"].double().cpu().numpy(), can["Q_G"].double().cpu().numpy()


def _gram_coupling(run: nc.CoRun, k: int, grid: np.ndarray, Y: np.ndarray, S0: float,
                   K: np.ndarray, Q: np.ndarray) -> float:
    """|what mu1..mu3's Delta A gets through the Gram entries between mu1..mu3 and the other
    tokens| (Frobenius): (int Gamma Q_G + K_G int Gamma) on mu1..mu3 with the full [d, d]
    Gamma and Gram matrices, minus the same with their mu1..mu3 blocks only.  Gamma is the
    exact canonical one (theory.canonical_velocity with K_G = 0, Q_G = I, on the paper's
    reduction ``Y`` placed on the run's tokens), integrated by the trapezoid over dt =
    dtau/S0 on every 40th point of ``grid``: the term the reduction's mu1..mu3 system leaves
    out, for this member's own draw."""
    cfg = run.config
    sub = np.arange(0, grid.size, 40)
    if sub[-1] != grid.size - 1:
        sub = np.append(sub, grid.size - 1)
    gam = np.array([tc.canonical_velocity(_placed(run.data, cfg.vocabulary, Y[:, j], K=0.0,
                                                  Q=1.0), run.data.tokens, run.data.labels,
                                          cfg.m, cfg.m1)["A"] for j in sub])
    gi = trapezoid(gam, grid[sub], axis=0) / S0
    full = (gi @ Q + K @ gi)[:3, :3]
    block = gi[:3, :3] @ Q[:3, :3] + K[:3, :3] @ gi[:3, :3]
    return float(np.linalg.norm(full - block))


def _gamma_mass(cfg: nc.CoConfig, grid: np.ndarray, Y: np.ndarray) -> float:
    """int ||Gamma||_F dtau along the paper's reduction ``Y`` (theory.class_gamma at its
    sample margins; trapezoid): what a change of the Gram blocks over the interval can
    multiply."""
    margins = np.array(tc.private_margins(list(Y), cfg.L))
    norms = np.array([np.linalg.norm(tc.class_gamma(Y[:3, j], cfg.L, cfg.m,
                                                    margins=margins[:, j]))
                      for j in range(grid.size)])
    return float(trapezoid(norms, grid))


def _usable(x, shape: tuple) -> np.ndarray | None:
    """``x`` as a float array of ``shape`` with finite entries, else None (a theory whose
    output cannot be compared: the part fails on it instead of raising)."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr if arr.shape == shape and np.all(np.isfinite(arr)) else None


def _phase1_paired(theory, run: nc.CoRun, half: nc.CoRun, k: int, i: int, grid: np.ndarray,
                   Yi: np.ndarray, kappa: float) -> dict:
    """The paired Phase-1 comparisons of member k at its T1 = tau[k, i] (each an (error,
    allowance, record) triple; the allowances are computed on the paper's reduction or the
    run, the same for check and control; the errors of ``dA_p`` and ``S_red`` are relative
    to the paper's reduction's value, that of ``S_law`` is its ratio's distance from 1):

    * ``dA_p``: Delta A on mu1..mu3 against theory.score_drift with the member's own
      K_G(0), Q_G(0) blocks (the draw the run and the prediction share);
    * ``S_law``: the balance law S^2 - S0^2 = 2 m1 Delta|beta|^2, S/S0 - 1 against
      theory.s_drift of the member's own observed growth of |beta|^2;
    * ``S_red``: S/S0 - 1 against theory.s_drift of the reduction's growth of |beta|^2
      (:func:`_s_reduced`).

    The observed side is GD's, Richardson-extrapolated to step 0 from the run and its
    half-step twin at the same tau (2 R_{h/2} - R_h; the O(h) error cancels), so the
    allowances carry |R_h - R_{h/2}| (the extrapolation's remainder in the asymptotic regime:
    a third of it for a first-order error with an O(h^2) rest), the twin's interpolation to
    tau and, as derived in each part, what the paper's reduction leaves out, computed on it
    (``tc``) or measured on the run."""
    cfg = run.config
    t1, S0 = float(run.tau[k, i]), float(run.S0[k])
    K, Q = _gram(run, k)
    K3, Q3 = K[:3, :3], Q[:3, :3]
    dropped = float(run.tau_eff[k, i] / run.tau[k, i] - 1.0)
    # Delta A: observed at h and h/2, extrapolated
    obs_h = run.A3[k, i] - run.A3[k, 0]
    a2, a2_interp = _at_tau(half, k, t1, half.A3[k])
    obs_2 = a2 - half.A3[k, 0]
    obs_0 = 2 * obs_2 - obs_h
    raw = np.asarray(theory.score_drift(grid, Yi, cfg.L, cfg.m, kappa, S0, K=K3, Q=Q3))
    pred = _usable(raw[-1] if raw.ndim == 3 else None, (3, 3))
    Y_tc = Yi if theory is tc else _private(tc, cfg, grid, _start(run, k))
    n_ref = float(np.linalg.norm(tc.score_drift(grid, Y_tc, cfg.L, cfg.m, kappa, S0, K=K3,
                                                Q=Q3)[-1]))
    # the spread on the paper's reduction alone (tc as the theory: the value under the theory
    # under test is not used, and a wrong theory's output is not evaluated here)
    _, spread = _g0_spread(tc, run, k, grid, None, 0.0, stat_of=lambda th: lambda Yg: (
        th.score_drift(grid, Yg, cfg.L, cfg.m, kappa, S0, K=K3, Q=Q3)[-1]))
    moved = max(float(np.linalg.norm(run.K3[k, j] - run.K3[k, 0])
                      + np.linalg.norm(run.Q3[k, j] - run.Q3[k, 0])) for j in range(i + 1))
    terms = {"gram_coupling": _gram_coupling(run, k, grid, Y_tc, S0, K, Q) / n_ref,
             "initial_G_spread": float(np.linalg.norm(spread)) / n_ref,
             "gram_blocks_moving": moved * _gamma_mass(cfg, grid, Y_tc) / S0 / n_ref,
             "S_not_constant": abs(float(run.S[k, i] / S0) - 1.0),
             "m1_M_r_dropped": abs(dropped),
             "richardson": float(np.linalg.norm(obs_h - obs_2)) / n_ref,
             "interpolation": 2 * float(np.linalg.norm(a2_interp)) / n_ref}
    e = (math.inf if pred is None else
         _quotient(np.linalg.norm(obs_0 - pred), n_ref))
    out = {"dA_p": (e, float(sum(terms.values())), {"error": e, **terms})}
    out.update(_phase1_full(theory, run, half, k, i, grid, Yi))
    out["S_law"] = _s_law(theory, run, half, k, i, dropped)
    out["S_red"] = _s_reduced(theory, run, half, k, i, grid, Yi, dropped)
    return out


#: points of the Phase-1 grid (801) at which _full_drift evaluates the canonical Gamma, and
#: the coarser set whose trapezoid bounds the integration error (every 20th and 40th point:
#: 41 and 21 points; the trapezoid term measures what that costs)
FULL_DRIFT_STRIDES = (20, 40)


def _placed_gammas(th, run: nc.CoRun, grid: np.ndarray, Y: np.ndarray, stride: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(times, Gamma [T, d, d]): th.canonical_velocity's exact Gamma (K_G = 0, Q_G = I, M =
    A = 0, S = 1) along the reduction ``Y`` [7, grid] placed on the run's tokens, every
    ``stride``-th point of ``grid`` and its last."""
    cfg = run.config
    sub = np.arange(0, grid.size, stride)
    if sub[-1] != grid.size - 1:
        sub = np.append(sub, grid.size - 1)
    gam = np.array([th.canonical_velocity(_placed(run.data, cfg.vocabulary, Y[:, j], K=0.0,
                                                  Q=1.0), run.data.tokens, run.data.labels,
                                          cfg.m, cfg.m1)["A"] for j in sub])
    return grid[sub], gam


def _full_drift(th, run: nc.CoRun, grid: np.ndarray, Y: np.ndarray, S0: float, K: np.ndarray,
                Q: np.ndarray, stride: int) -> np.ndarray:
    """``th``'s Delta A on the whole vocabulary at the end of ``grid`` [d, d]:
    th.attention_drift of :func:`_placed_gammas` with the member's whole Gram matrices K, Q at
    initialisation."""
    times, gam = _placed_gammas(th, run, grid, Y, stride)
    return np.asarray(th.attention_drift(times, gam, S0, K, Q, end_only=True), dtype=float)


def _gram_motion(run: nc.CoRun, k: int, i: int) -> float:
    """A bound on ||K_G(t) - K_G(0)||_F + ||Q_G(t) - Q_G(0)||_F up to record i, from the run's
    own steps: plain GD moves W by at most D = sum_s lr_s |dL/dW|_s before record i, and
    ||W^T W - W0^T W0||_F <= 2 ||W0||_2 D + D^2."""
    n = int(run.steps[i])
    out = 0.0
    for name in ("WK", "WQ"):
        D = float(np.sum(run.lr_steps[k, :n] * np.sqrt(run.grad_sq[name][k, :n])))
        W0 = run.initial[name][k].double().cpu().numpy()
        out += 2 * float(np.linalg.norm(W0, 2)) * D + D * D
    return out


#: at most this many records (evenly spaced, the first and the T1 one kept) carry
#: _phase1_full's state term: the two integrals it differences share their grid
STATE_RECORDS = 41


def _state_records(i: int) -> np.ndarray:
    """Record indices 0..i, thinned to at most STATE_RECORDS evenly spaced ones with 0 and i."""
    if i + 1 <= STATE_RECORDS:
        return np.arange(i + 1)
    return np.unique(np.round(np.linspace(0, i, STATE_RECORDS)).astype(int))


def _whole_prediction(theory, run: nc.CoRun, grid: np.ndarray, Yi: np.ndarray, S0: float,
                      K: np.ndarray, Q: np.ndarray) -> tuple:
    """(Delta A [d, d], softmax change, why): the theory's whole-vocabulary prediction, or
    (None, None, reason) when the theory gives no usable one (a failed part, not a raise)."""
    cfg = run.config
    try:
        raw = _full_drift(theory, run, grid, Yi, S0, K, Q, FULL_DRIFT_STRIDES[0])
        pred = _usable(raw, K.shape)
        if pred is None:
            return None, None, f"the predicted Delta A is not a finite {K.shape} array"
        dp = _usable(theory.softmax_change(pred, run.data.tokens, cfg.m), ())
        if dp is None:
            return pred, None, "theory.softmax_change gave no finite number"
        return pred, float(dp), ""
    except (InadmissibleTheory, TypeError, ValueError, ArithmeticError, IndexError, KeyError,
            AttributeError) as exc:
        return None, None, f"no whole-vocabulary prediction ({type(exc).__name__}: {exc})"


def _form_drifts(r: nc.CoRun, k: int, recs: np.ndarray, S) -> tuple:
    """On run ``r``'s records ``recs`` (member k), its own path, its initial Gram matrices and
    S (a number or its path on ``recs``): (tc.loss_gradients' Gamma at the run's beta
    [T, d, d]; Delta A of it [d, d]; Delta A of it minus Gamma at that beta in the
    reduction's form, [d, d], on ``recs`` and on every other of them).  The reduction's form
    (:func:`_start` at each record, :func:`_offsets`): G(mu1..mu3), every random token at its
    class's mean plus its initial offset; what it leaves out is the random tokens' own
    motion around their class mean.  No theory trajectory enters."""
    cfg = r.config
    d = cfg.vocabulary
    K, Q = _gram(r, k)
    offsets = _offsets(r, k)
    taus = r.tau[k, recs]
    S_ = np.asarray(S, dtype=float)
    g_run = np.array([tc.loss_gradients(r.beta[k, j], None, r.data.tokens, r.data.labels,
                                        cfg.m)[1] for j in recs])
    g_form = np.array([tc.loss_gradients(
        _placed(r.data, d, _start(r, k, j))["beta"] + offsets, None, r.data.tokens,
        r.data.labels, cfg.m)[1] for j in recs])
    every = np.arange(len(recs))
    half = np.unique(np.concatenate([every[::2], every[-1:]]))
    S_half = S_[half] if S_.ndim else S_
    at_run = tc.attention_drift(taus, g_run, S_, K, Q, end_only=True)
    form = tc.attention_drift(taus, g_run - g_form, S_, K, Q, end_only=True)
    form_c = tc.attention_drift(taus[half], (g_run - g_form)[half], S_half, K, Q,
                                end_only=True)
    return g_run, at_run, form, form_c


@dataclass(frozen=True)
class _FullPieces:
    """What :func:`_phase1_full`'s two comparisons share, all from the paper's theory (tc)
    or measured on the run: tc's whole-vocabulary Delta A at T1 on the placed-Gamma rule
    (``ref``) and its coarser twin (``ref_c``) at ``times`` with the Gammas ``gam``; tc's
    Delta A along its reduction with random tokens at their class mean (``base``), the
    initial offsets' change (``off``), the kept m1 M r term's change (``kept``), the
    non-uniform scores' Delta A on the run's own path (``scores``), the within-class
    spread's second order (``spread``); the reduction's form on the run and on its twin
    (``form_h``, ``form_2``: (A at the run, form, coarser form), :func:`_form_drifts`)."""

    times: np.ndarray
    gam: np.ndarray
    ref: np.ndarray
    ref_c: np.ndarray
    base: np.ndarray
    off: np.ndarray
    kept: np.ndarray
    scores: list
    spread: np.ndarray
    form_h: tuple
    form_2: tuple


def _full_pieces(run: nc.CoRun, half: nc.CoRun, k: int, i: int, grid: np.ndarray,
                 Y_tc: np.ndarray, S0: float, K: np.ndarray, Q: np.ndarray) -> _FullPieces:
    """The pieces of :func:`_phase1_full`'s allowance (:class:`_FullPieces`), none of them the
    run's difference from tc's trajectory (a mutant of the trajectory would move such a term
    with the prediction)."""
    cfg, tok = run.config, run.data.tokens
    t1 = float(run.tau[k, i])
    times, gam = _placed_gammas(tc, run, grid, Y_tc, FULL_DRIFT_STRIDES[0])
    ref = np.asarray(tc.attention_drift(times, gam, S0, K, Q, end_only=True), dtype=float)
    # the coarser rule on every other of those points (and the last): the 20-point stride
    coarse = np.arange(0, times.size, FULL_DRIFT_STRIDES[1] // FULL_DRIFT_STRIDES[0])
    if coarse[-1] != times.size - 1:
        coarse = np.append(coarse, times.size - 1)
    ref_c = np.asarray(tc.attention_drift(times[coarse], gam[coarse], S0, K, Q,
                                          end_only=True), dtype=float)
    # the form on the run's own path (the run and its twin at the same tau)
    _, at_run, form, form_c = _form_drifts(run, k, _state_records(i), S0)
    i2 = int(np.argmin(np.abs(half.tau[k] - t1)))
    _, at_run2, form2, form2_c = _form_drifts(half, k, _state_records(i2), float(half.S0[k]))
    sub = np.arange(0, grid.size, FULL_DRIFT_STRIDES[0])
    if sub[-1] != grid.size - 1:
        sub = np.append(sub, grid.size - 1)

    def drift_along(taus: np.ndarray, Y: np.ndarray) -> np.ndarray:
        # tc's Delta A along a reduction Y [7, len(taus)], random tokens at their class mean
        return np.asarray(tc.attention_drift(taus, np.array([tc.loss_gradients(
            _placed(run.data, cfg.vocabulary, Y[:, j])["beta"], None, tok, run.data.labels,
            cfg.m)[1] for j in range(taus.size)]), S0, K, Q, end_only=True), dtype=float)

    # every difference below is between two Delta A of the same functions (loss_gradients,
    # attention_drift): against ``ref`` (canonical_velocity's Gamma) a slip in
    # canonical_velocity or canonical_rhs would move the term with the prediction
    base = drift_along(times, Y_tc[:, sub])
    off = np.asarray(tc.attention_drift(times, _gammas_along(tc, run, k, Y_tc[:, sub]), S0, K,
                                        Q, end_only=True), dtype=float) - base
    kept = (1.0 + abs(_kept_second(run, k))) * (drift_along(times, _private(
        tc, cfg, times, _start(run, k), kappa=_kappa(run, k))) - base)
    # non-uniform attention on the run's own path: Gamma at the run's beta with its initial
    # scores A(0), and with A(0) plus tc's predicted change, against uniform attention
    recs = _state_records(i)
    g_uniform = np.array([tc.loss_gradients(run.beta[k, j], None, tok, run.data.labels,
                                            cfg.m)[1] for j in recs])
    scores = [np.asarray(tc.attention_drift(run.tau[k, recs], np.array(
        [tc.loss_gradients(run.beta[k, j], A, tok, run.data.labels, cfg.m)[1] for j in recs])
        - g_uniform, S0, K, Q, end_only=True), dtype=float)
        for A in (run.A_start[k], run.A_start[k] + base)]
    # the spread's second-order estimate on every other of those points (an estimate of a
    # term an order below the allowance: the coarser rule's error is of its own order)
    sparse = times[np.unique(np.concatenate([np.arange(0, times.size, 2), [times.size - 1]]))]
    _, spread = _g0_spread(tc, run, k, sparse, lambda Y: drift_along(sparse, Y),
                           through_trajectory=True)
    return _FullPieces(times, gam, ref, ref_c, base, off, kept, scores, spread,
                      (at_run, form, form_c), (at_run2, form2, form2_c))


def _full_block_terms(run: nc.CoRun, half: nc.CoRun, k: int, i: int, fd: _FullPieces,
                      n_ref: float) -> tuple[dict, np.ndarray]:
    """``dA_f``'s allowance terms (relative to n_ref, :func:`_phase1_full`) and the observed
    Delta A on mu1..mu3, Richardson-extrapolated from the twin (2 A(h/2) - A(h))."""
    t1, S0 = float(run.tau[k, i]), float(run.S0[k])
    blk = lambda A: float(np.linalg.norm(np.asarray(A)[:3, :3])) / n_ref  # noqa: E731
    motion = _gram_motion(run, k, i)
    block_mass = trapezoid([max(np.linalg.norm(g[:3, :]), np.linalg.norm(g[:, :3]))
                            for g in fd.gam], fd.times)
    obs_h = run.A3[k, i] - run.A3[k, 0]
    a2, a2_interp = _at_tau(half, k, t1, half.A3[k])
    obs_0 = 2 * (a2 - half.A3[k, 0]) - obs_h
    (_, form, form_c), (_, form2, form2_c) = fd.form_h, fd.form_2
    # the observed is extrapolated from the twin: the form term the same way, plus each
    # rule's quadrature estimate
    terms = {"class_form": (blk(2 * form2 - form) + blk(form - form_c)
                            + 2 * blk(form2 - form2_c)),
             "scores": max(blk(x) for x in fd.scores),
             "offsets": blk(fd.off),
             "within_class_spread": blk(fd.spread),
             "kept_m1_M_r": blk(fd.kept),
             "m1_M0_clock": _m0_eps(run, k),
             "trapezoid": float(np.linalg.norm((fd.ref - fd.ref_c)[:3, :3])) / n_ref,
             "gram_moving": motion * float(block_mass) / S0 / n_ref,
             "S_not_constant": abs(float(run.S[k, i] / S0) - 1.0),
             "richardson": float(np.linalg.norm(obs_h - (a2 - half.A3[k, 0]))) / n_ref,
             "interpolation": 2 * float(np.linalg.norm(a2_interp)) / n_ref}
    return terms, obs_0


def _full_softmax_terms(run: nc.CoRun, half: nc.CoRun, k: int, i: int, fd: _FullPieces,
                        dp_ref: float) -> tuple[dict, float]:
    """``dp_f``'s allowance terms (relative to dp_ref, :func:`_phase1_full`) and the observed
    max |P - P(0)|, Richardson-extrapolated from the twin."""
    cfg, tok = run.config, run.data.tokens
    t1, S0 = float(run.tau[k, i]), float(run.S0[k])
    sm = lambda A: float(tc.softmax_change(A, tok, cfg.m))  # noqa: E731
    lin = 2.0 / (cfg.L * math.sqrt(cfg.m))
    entry_mass = trapezoid([max(np.linalg.norm(g, axis=1).max(), np.linalg.norm(g, axis=0).max())
                            for g in fd.gam], fd.times)
    dp2, dp2_interp = _at_tau(half, k, t1, half.max_dp[k][:, None])
    dp_h, dp_2 = float(run.max_dp[k, i]), float(dp2[0])
    a = float(np.abs(run.A_start[k][tok[:, :, None], tok[:, None, :]]).max()) / math.sqrt(cfg.m)
    b = float(np.abs(fd.ref[tok[:, :, None], tok[:, None, :]]).max()) / math.sqrt(cfg.m)
    form_h, form_2 = (abs(sm(a_r) - sm(a_r - f)) + abs(sm(a_r - f) - sm(a_r - f_c))
                      for a_r, f, f_c in (fd.form_h, fd.form_2))
    # extrapolated as the observed: |2 f(h/2) - f(h)| <= 2 |f(h/2)| + |f(h)|
    terms = {"class_form": (2 * form_2 + form_h) / dp_ref,
             "offsets": abs(sm(fd.base + fd.off) - sm(fd.base)) / dp_ref,
             "within_class_spread": lin * float(np.max(np.abs(fd.spread))) / dp_ref,
             "kept_m1_M_r": abs(sm(fd.base + fd.kept) - sm(fd.base)) / dp_ref,
             "m1_M0_clock": _m0_eps(run, k),
             "trapezoid": abs(sm(fd.ref) - sm(fd.ref_c)) / dp_ref,
             "gram_moving": lin * _gram_motion(run, k, i) * float(entry_mass) / S0 / dp_ref,
             "S_not_constant": abs(float(run.S[k, i] / S0) - 1.0),
             "initial_scores": 3 * math.expm1(2 * a) * math.exp(2 * b) * b / cfg.L / dp_ref,
             "richardson": abs(dp_h - dp_2) / dp_ref,
             "interpolation": 2 * float(dp2_interp[0]) / dp_ref}
    return terms, 2 * dp_2 - dp_h


def _phase1_full(theory, run: nc.CoRun, half: nc.CoRun, k: int, i: int, grid: np.ndarray,
                 Yi: np.ndarray) -> dict:
    """Member k's Delta A and attention change at its T1 = tau[k, i] against the theory's
    whole-vocabulary prediction: theory.attention_drift of theory.canonical_velocity's exact
    Gamma along the theory's reduction ``Yi`` (on ``grid``), with the member's whole Gram
    matrices (score_change_paired keeps only their mu1..mu3 blocks and bounds the rest by
    its gram_coupling term, which was most of its allowance); two (error, allowance,
    record) triples, ``dA_f`` (Delta A on mu1..mu3, observed Richardson-extrapolated as in
    score_change_paired) and ``dp_f`` (max |P - P(0)| of the run, Richardson-extrapolated,
    against theory.softmax_change of the whole predicted Delta A).

    Each allowance term is computed with the paper's theory (tc) or measured on the run, the
    same for check and control, relative to tc's value (n_ref: the Frobenius norm of its
    mu1..mu3 block; dp_ref: its softmax change).  Scores are s = A/sqrt(m); on a sample's
    keys the softmax Jacobian J(0) = (I - 1 1^T/L)/L maps a score error e to at most
    (2/L) max|e| per entry (the ``lin`` factor below, 2/(L sqrt m) per unit of A).

    * ``class_form``: what the reduction's form (class means, each random token at its
      class mean plus its initial offset) leaves out on the run's own path
      (:func:`_form_drifts` to T1, at most STATE_RECORDS records, plus its change on every
      other record), the larger of the run and its half-step twin; for ``dp_f`` the change
      of the softmax change itself between the two (the observable's own change);
    * ``offsets``: the prediction places every random token at its class mean; tc's Delta A
      with the member's initial offsets added along tc's reduction, minus without;
    * ``within_class_spread``: an estimate of the spread's second-order effect on the class
      means' trajectory (:func:`_g0_spread`, through the trajectory; for ``dp_f`` through
      the Jacobian bound ``lin``);
    * ``kept_m1_M_r``: the plain reduction drops the m1 M r term; tc's prediction with the
      term kept (kappa = m1/S0^2) minus without, times 1 + its second-order share
      (:func:`_kept_second`); ``m1_M0_clock``: the isotropic m1 M0 r / S0 (:func:`_m0_eps`).
      None of these is the run's difference from tc's trajectory: a first version's
      ``class_reduction_state`` (the run's beta against tc's reduction) moved with any
      error of the trajectory under ``tdcheck mutate`` (a referee read, session of
      2026-12-06);
    * ``trapezoid``: tc's prediction on every 20th grid point minus on every 40th (three
      times the finer rule's error estimate), the same way;
    * ``gram_moving``: Delta A moves by int (Gamma dQ + dK Gamma) dtau / S0 when K_G, Q_G
      move by dK, dQ (bounded by _gram_motion to T1): on the block at most motion x int
      max(||Gamma[:3, :]||, ||Gamma[:, :3]||) dtau / S0, on any entry at most motion x int
      (largest row or column norm of Gamma) dtau / S0, times lin for ``dp_f`` (tc's whole
      Gamma along the reduction);
    * ``S_not_constant``: the reduction holds S at S0 (Delta A scales with 1/S);
    * ``initial_scores`` (``dp_f``): the prediction is the softmax around uniform attention,
      the run's around P(0) (scores s0 = A(0) on the samples, a = max|s0|, b = max|Delta s|
      of tc's prediction): integrating the Jacobian along the segment, |(J(s0 + t Delta s)
      - J(t Delta s)) Delta s| <= 3 (e^{2 a} - 1) e^{2 b} b / L, relative to dp_ref;
    * GD: |R_h - R_{h/2}| and twice the twin's interpolation error (of A3; of max_dp)."""
    cfg = run.config
    S0 = float(run.S0[k])
    K, Q = _gram(run, k)
    Y_tc = Yi if theory is tc else _private(tc, cfg, grid, _start(run, k))
    fd = _full_pieces(run, half, k, i, grid, Y_tc, S0, K, Q)
    if theory is tc:  # the same computation as _whole_prediction's, done once
        dp_tc = _usable(tc.softmax_change(fd.ref, run.data.tokens, cfg.m), ())
        pred, dp_pred, why = ((fd.ref, float(dp_tc), "") if dp_tc is not None and
                              _usable(fd.ref, K.shape) is not None
                              else _whole_prediction(theory, run, grid, Yi, S0, K, Q))
    else:
        pred, dp_pred, why = _whole_prediction(theory, run, grid, Yi, S0, K, Q)
    n_ref = float(np.linalg.norm(fd.ref[:3, :3]))
    # a sign slip must not flip terms
    dp_ref = abs(float(tc.softmax_change(fd.ref, run.data.tokens, cfg.m)))
    extra = {"why": why} if why else {}
    terms, obs_0 = _full_block_terms(run, half, k, i, fd, n_ref)
    e = math.inf if pred is None else _quotient(np.linalg.norm(obs_0 - pred[:3, :3]), n_ref)
    out = {"dA_f": (e, float(sum(terms.values())), {"error": e, **terms, **extra})}
    terms_p, dp_0 = _full_softmax_terms(run, half, k, i, fd, dp_ref)
    e_p = math.inf if dp_pred is None else abs(dp_0 - dp_pred) / dp_ref
    out["dp_f"] = (e_p, float(sum(terms_p.values())),
                   {"error": e_p, "observed": dp_0, "predicted": dp_pred, **terms_p, **extra})
    return out


def _s_law(theory, run: nc.CoRun, half: nc.CoRun, k: int, i: int, dropped: float) -> tuple:
    """The balance law on member k at T1: the ratio (S/S0 - 1) / s_drift(observed growth of
    |beta|^2) at h and h/2, extrapolated; an (error, allowance, record) triple."""
    cfg, t1 = run.config, float(run.tau[k, i])
    b2, b2_interp = _at_tau(half, k, t1, half.beta[k])
    s2, s2_interp = _at_tau(half, k, t1, half.S[k])

    def ratio(r: nc.CoRun, S_t: float, b_t: np.ndarray, th) -> float:
        grow = float(b_t @ b_t - r.beta[k, 0] @ r.beta[k, 0])
        pred = _usable(th.s_drift(grow, cfg.m1, float(r.S0[k])), ())
        return math.nan if pred is None else _quotient(S_t / float(r.S0[k]) - 1.0, pred)

    r_h = ratio(run, float(run.S[k, i]), run.beta[k, i], theory)
    r_2 = ratio(half, float(s2), b2, theory)
    rt_h = r_h if theory is tc else ratio(run, float(run.S[k, i]), run.beta[k, i], tc)
    rt_2 = r_2 if theory is tc else ratio(half, float(s2), b2, tc)
    # the interpolation moves S/S0 - 1 by s2_interp/S0 and |beta|^2 by 2 |beta||b2_interp|,
    # relative to the growths they enter
    grow2 = float(b2 @ b2 - half.beta[k, 0] @ half.beta[k, 0])
    interp = (_quotient(float(s2_interp) / float(half.S0[k]), float(s2) / float(half.S0[k]) - 1)
              + _quotient(2 * float(np.linalg.norm(b2)) * float(np.linalg.norm(b2_interp)),
                          grow2))
    e = abs(2 * r_2 - r_h - 1.0) if math.isfinite(r_h) and math.isfinite(r_2) else math.inf
    terms = {"richardson": abs(rt_h - rt_2), "interpolation": 2 * abs(interp),
             "m1_M_r_proxy": abs(dropped)}
    return e, float(sum(terms.values())), {"error": e, "observed_over_predicted_h": r_h,
                                           "h_over_2": r_2, **terms}


def _predicted_by(th, Y: np.ndarray, cfg: nc.CoConfig, S0: float):
    """theory ``th``'s S/S0 - 1 for the growth of |beta|^2 along the reduced trajectory ``Y``
    (th.private_beta_sq at its end minus at its start, through th.s_drift); None where the
    theory's output is not a usable number."""
    try:
        grow = (np.asarray(th.private_beta_sq(Y[:, -1], cfg.n, cfg.L), dtype=float)
                - np.asarray(th.private_beta_sq(Y[:, 0], cfg.n, cfg.L), dtype=float))
        return np.asarray(th.s_drift(grow, cfg.m1, S0), dtype=float)
    except (TypeError, ValueError, IndexError):
        return None


def _s_reduced(theory, run: nc.CoRun, half: nc.CoRun, k: int, i: int, grid: np.ndarray,
               Yi: np.ndarray, dropped: float) -> tuple:
    """S(T1)/S0 - 1 of member k, Richardson-extrapolated from the run and its half-step twin,
    against theory.s_drift of the growth of |beta|^2 along the reduction from the member's
    start (theory.private_beta_sq at T1 minus at 0): an (error, allowance, record) triple,
    all relative to the paper's reduction's prediction (the same for check and control)."""
    cfg, t1, S0 = run.config, float(run.tau[k, i]), float(run.S0[k])

    def predicted(th):
        return lambda Yg: float(_predicted_by(th, Yg, cfg, S0))

    _, spread, ref = _g0_spread(tc, run, k, grid, None, 0.0, stat_of=predicted,
                                reference=True)
    pred = _usable(_predicted_by(theory, _private(theory, cfg, grid, _start(run, k)), cfg, S0),
                   ())
    pred = math.nan if pred is None else float(pred)
    x_h = float(run.S[k, i]) / S0 - 1.0
    s2, s2_interp = _at_tau(half, k, t1, half.S[k])
    x_2 = float(s2) / float(half.S0[k]) - 1.0
    terms = {"richardson": abs(_quotient(x_h - x_2, ref)),
             "interpolation": 2 * abs(_quotient(float(s2_interp) / float(half.S0[k]), ref)),
             "initial_G_spread": abs(_quotient(spread, ref)),
             "m1_M_r_proxy": abs(dropped)}
    e = abs(_quotient(2 * x_2 - x_h - pred, ref))
    if not math.isfinite(e):
        e = math.inf
    return e, float(sum(terms.values())), {"error": e, "observed_h": x_h,
                                           "observed_h_over_2": x_2, "predicted": pred,
                                           **terms}


#: phase1's drift parts, each its worst member's: (member key, part name, details key, what
#: it compares and its allowance)
_PHASE1_DRIFT_PARTS = (
    ("dA", "score_change", "members",
     "Theorem E.28 (|Delta score| <= O~(m^-3/2)) sharpened: Delta A on mu1..mu3 at "
     "T1 = (2 kappa/S0) int Gamma dtau (theory.score_drift; relative Frobenius "
     "error); allowance 3 sqrt(2/m) (chi-square spread of K_G, Q_G diagonals) + the "
     "initial-G spread relative to the paper's reduction's value (the same for check "
     "and control)"),
    ("dp", "attention_frozen", "members_observed_predicted",
     "Proposition E.3 / Corollary E.24 (|p - p(0)| = O~(1/(L m))) sharpened: the "
     "softmax change of the predicted Delta A (theory.softmax_change) on the run's "
     "samples; |log(observed/predicted)|, same relative allowance as score_change"),
    ("dA_p", "score_change_paired", "members",
     "score_change paired and extrapolated: Delta A on mu1..mu3 at T1, GD's value "
     "Richardson-extrapolated to step 0 (2 R_{h/2} - R_h, the run and its half-step "
     "twin at the same tau), against theory.score_drift with the member's own "
     "K_G(0), Q_G(0) blocks (the draw the run and the prediction share; the "
     "chi-square spread of score_change's allowance is paired out): Delta A = (I Q_G "
     "+ K_G I)/S0, I = int Gamma dtau; Frobenius error relative to the paper's "
     "reduction's paired value.  Allowance, the same for check and control, the sum "
     "of what the reduction leaves out, each as a Frobenius norm relative to that "
     "value: the coupling through the Gram entries between mu1..mu3 and the other "
     "tokens (exact canonical Gamma on the paper's reduction, this member's Gram "
     "matrices); the initial-G spread (second order, entrywise largest over the sign "
     "patterns, then its norm); the Gram blocks' own motion up to T1 (recorded "
     "largest ||Delta K_G|| + ||Delta Q_G|| times int ||Gamma|| dtau / S0 on the "
     "paper's reduction); S's own change |S(T1)/S0 - 1| (the reduction's clock holds "
     "S at S0); the dropped m1 M r term's measured proxy (tau_eff/tau - 1 at T1: m1 "
     "beta^T M beta/|beta|^2 against S, not the exact m1 beta^T M r/(S beta.r)); "
     "|R_h - R_{h/2}| (the extrapolation's remainder in the asymptotic regime) and "
     "twice the twin's interpolation error (|linear - quadratic| through its nearest "
     "records)"),
    ("dA_f", "score_change_whole_gram", "members",
     "score_change_paired with the whole Gram matrices: Delta A on mu1..mu3 at T1, "
     "GD's value Richardson-extrapolated to step 0 (as score_change_paired), against "
     "theory.attention_drift of theory.canonical_velocity's exact Gamma along the "
     "theory's reduction placed on the run's tokens, with the member's whole K_G(0), "
     "Q_G(0) (score_change_paired's largest allowance term, the Gram coupling, is "
     "then part of the prediction); Frobenius error relative to the paper's "
     "reduction's value.  Allowance (_phase1_full; the same for check and control): "
     "what the reduction's form leaves out on the run's own path (its beta against "
     "that beta in the form, measured), the random tokens' initial offsets along the "
     "reduction, the within-class spread (second-order estimate), the m1 M r term "
     "(kept minus dropped) and the m1 M0 clock, the trapezoid's error (every 20th "
     "against every 40th grid point), the Gram matrices' motion to T1 (bounded from "
     "the run's own steps) times the whole Gamma's mass, S's change, GD's |R_h - "
     "R_{h/2}| and the twin's interpolation"),
    ("dp_f", "attention_frozen_whole_gram", "members",
     "attention_frozen on the whole-vocabulary prediction: the run's max |P - P(0)| "
     "at T1, Richardson-extrapolated to step 0 from the half-step twin, against "
     "theory.softmax_change of score_change_whole_gram's predicted Delta A on every "
     "token; |observed - predicted| relative to the paper's reduction's value.  "
     "Allowance (_phase1_full; the same for check and control): the softmax change's "
     "own change for the form, the offsets and the kept m1 M r term, the spread "
     "through the Jacobian, the m1 M0 clock, the same of the trapezoid's error, the "
     "Gram matrices' motion to T1 through the softmax's Jacobian (2/(L sqrt m) per "
     "unit of A, times the largest row or column norm of Gamma), S's change (the "
     "change is linear in the scores at these sizes), the initial scores' departure "
     "from uniform attention, GD's |R_h - R_{h/2}| and the twin's interpolation"),
    ("S_law", "S_law", "members",
     "the balance law behind Proposition E.12, on the member's own weights: S(T1)/S0 "
     "- 1 against theory.s_drift of the member's own observed growth of |beta|^2 "
     "(S^2 - S0^2 = 2 m1 Delta|beta|^2, conserved up to the m1 M r term); the ratio "
     "observed/predicted Richardson-extrapolated to step 0 from the run and its "
     "half-step twin; |ratio - 1|.  A check of theory.s_drift's law on the trained "
     "model, not of the Phase-1 dynamics (it does not depend on the class weights, "
     "so it cannot reject the control).  Allowance: |r_h - r_{h/2}| (the "
     "extrapolation's remainder), twice the twin's interpolation error, and the m1 M "
     "r term's measured proxy (tau_eff/tau - 1 at T1, not a derived bound), all with "
     "the paper's s_drift, the same for check and control"),
    ("S_red", "S_constant_extrapolated", "members",
     "S_constant with the observed side extrapolated and the growth read as growth: "
     "S(T1)/S0 - 1, GD's value Richardson-extrapolated to step 0 (the run and its "
     "half-step twin at the same tau), against theory.s_drift of the growth of "
     "|beta|^2 along the reduction from the member's start (theory.private_beta_sq "
     "at T1 minus at 0; S_constant passes |beta(T1)|^2, which is not the growth); "
     "error relative to the paper's reduction's prediction.  Allowance, relative to "
     "the same and the same for check and control: |R_h - R_{h/2}| (the "
     "extrapolation's remainder), twice the twin's interpolation error, the "
     "initial-G spread (second order, as in score_change) and the m1 M r term's "
     "measured proxy (tau_eff/tau - 1 at T1)"),
    ("dS", "S_constant", "members_observed_predicted",
     "(superseded by S_constant_extrapolated, kept as registered: this part passes "
     "|beta(T1)|^2 to s_drift, which takes the growth of |beta|^2) Proposition E.12 "
     "(S changes by O~(1/m)) sharpened: S^2 - S0^2 = 2 m1 Delta|beta|^2 "
     "(theory.s_drift, |beta|^2 from theory.private_beta_sq); relative error; "
     "allowance 6 sd_G/|beta| (3 sd of the cross term 2 beta(0).Delta beta; |beta| "
     "at T1 of the paper's reduction, sd_G the member's own (_g_sd), the same for "
     "check and control)"),
)


def _phase1_drifts(members: list[dict]) -> tuple[Part, ...]:
    """The worst member's drift parts (:data:`_PHASE1_DRIFT_PARTS`) and the exact parts
    (:func:`_phase1_exact_parts`)."""

    def worst_part(key: str, name: str, details_key: str, text: str) -> Part:
        # declared: _worst_member_part
        pick = _NONE_YET
        for m in members:
            pick = _worse((0.0, m[key][0], m[key][0], m[key][1]), pick)
        part = Part(name, 0.0, pick[2], pick[2], pick[3], text,
                    details={details_key: [m[key][2] for m in members]}, kind="simulation")
        return _worst_member_part(part, [m[key][1] for m in members], pick)

    return (*(worst_part(*row) for row in _PHASE1_DRIFT_PARTS),
            *_phase1_exact_parts(members))


def _phase1_exact_parts(members: list[dict]) -> tuple[Part, ...]:
    """phase1's loss and sign parts at T1 and the largest exact-identity errors."""
    pick = _NONE_YET
    for m in members:
        pick = _worse((0.0, m["loss"][0], m["loss"][0], m["loss"][1]), pick)
    l_err, l_tol, rec_l = pick[2], pick[3], [m["loss"][2] for m in members]
    top = {key: float(np.max([m[key] for m in members])) for key in ("b2", "sd", "ds", "sm")}
    wrong = sum(m["wrong"] for m in members)
    return (
        Part("loss_at_T1", 0.0, l_err, l_err, l_tol,
             "Theorem 3.1: L(T1) = Theta(1); predicted: the reduced loss at the observed T1 "
             "(theory.private_losses); allowance: its change when (G1, G2, G3) start at +-3 "
             "sd of G(0)", details={"members_observed_predicted": rec_l}, kind="simulation"),
        Part("signs_at_T1", 0.0, wrong, wrong, 0.0,
             "Theorem 3.1: G1, G2 >= Omega(1) > 0 > G3 at T1 (count of members violating)",
             kind="simulation"),
        Part("beta_sq_exact", 0.0, top["b2"], top["b2"], 64 * EPS,
             "theory.private_beta_sq at the reduction's state at T1 against |beta|^2 of that "
             "state placed on the run's tokens (each random token of class k carries P_k); "
             "relative; allowance 64 eps (rounding of a sum of squares)", kind="symbolic"),
        Part("score_drift_exact", 0.0, top["sd"], top["sd"], 1e-12,
             "theory.score_drift (the Delta A of score_change) against the trapezoid over "
             "dt = dtau/S0 of the exact canonical dA/dt (theory.canonical_velocity, "
             "Gamma Q_G + K_G Gamma at K_G = Q_G = kappa I) along the reduction to T1, on the "
             "run's tokens; relative; allowance 1e-12 (rounding of sums over samples and grid)",
             kind="symbolic"),
        Part("s_drift_exact", 0.0, top["ds"], top["ds"], 1e-7,
             "theory.s_drift's slope S0 d(Delta S/S0)/d|beta|^2 against the exact canonical "
             "velocity's dS/dt / d|beta|^2/dt = m1/S at M = 0, S = S0 (1 + s_drift) (the "
             "reduction's state at T1 on the run's tokens); relative; allowance 1e-7: the "
             "central difference's O(1e-8) and its rounding, eps/1e-4", kind="symbolic"),
        # softmax_exact (symbolic): the model's forward pass with constructed scores serves as
        # an independent evaluator of the softmax, not as a trained run
        Part("softmax_exact", 0.0, top["sm"], top["sm"], 8 * EPS,
             "theory.softmax_change of the predicted Delta A against the attention of the "
             "model's own forward pass (numerics.cooccurrence.forward, Eq. (1)) with those "
             "scores on mu1..mu3 and 0 elsewhere; absolute; allowance 8 eps (rounding of "
             "softmax entries of size 1/L and of 1/L)", kind="symbolic"),
    )


@claim(
    statement="all samples are classified at tau = S0 t = O(1) (t = O(1/m)); up to then S, the "
              "scores and the softmax move by the small amounts our reduction predicts "
              "(Delta S/S0, Delta A = (2 kappa/S0) int Gamma dtau, |p - p(0)|), G1, G2 > 0 > G3, "
              "L(T1) = Theta(1); initially dG1/dtau = 1/6, dG3/dtau = 0",
    source="Theorem 3.1 / E.28, Lemmas 4.1-4.2 (E.4, E.16), Propositions E.3, E.12; the "
           "magnitudes are our derivation (private-token class reduction)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": UNIFORM},
    control_description=UNIFORM.label,
    cost="slow",
    examples=(_PIN, Example({"seed": 1}, via="a second data set and initialisations (issue 36: "
                                             "each run comparison on at least two)")),
    notes="the paper bounds the Phase-1 drifts (|Delta p| = O~(1/(L m)), |Delta score| = "
          "O~(m^-3/2), Delta S/S = O~(1/m)); at sigma0 = 0.05/sqrt(L m) those bounds sit orders "
          "of magnitude above the drifts and cannot fail, so the parts compare the drifts with "
          "the reduction's predicted values instead (the paper's bounds are in the details).  "
          "Issue 36 (session of 2026-12-03): score_change and S_constant could not resolve a "
          "few-per-cent error in theory.score_drift, class_gamma, s_drift or private_beta_sq "
          "(allowances 0.22 and 0.09 at quick).  A pilot at quick's theory-scaled "
          "configuration with 16 members, seed 0 (a script, not a registered run), located "
          "the slack: the Gram blocks' chi-square spread (paired out by score_change_paired, "
          "which takes the member's own K_G(0), Q_G(0)), their entries between mu1..mu3 and "
          "the other tokens (now an allowance term computed on the paper's reduction), GD's "
          "step (the observed side is now Richardson-extrapolated from a half-step twin run "
          "instead of bounded by the clock term) and S_constant's |beta(T1)|^2 where s_drift "
          "takes the growth.  The three new parts (score_change_paired, S_law, "
          "S_constant_extrapolated) sit beside the registered ones, which are unchanged.  "
          "All three were run at quick on seeds 1-3 (--seed: other data sets and "
          "initialisations) as well as 0 before their first commit and held on each.  A "
          "referee read then added allowance terms the first version lacked (the m1 M r "
          "proxy in score_change_paired, the Gram blocks' motion, which the run now records, "
          "the twin's interpolation error, the initial-G spread as a Frobenius norm) and "
          "made score_change_paired's and S_constant_extrapolated's errors relative to the "
          "paper's reduction's value (S_law's is a ratio's distance from 1), before any "
          "further run; rerun after those fixes at quick, seeds 0-3, all three held (worst "
          "member: score_change_paired 0.0122/0.0186, 0.0218/0.0282, 0.0300/0.0358, "
          "0.0140/0.0201; S_law about 0.0003/0.004; S_constant_extrapolated 0.0016-0.0027 "
          "against 0.0081-0.0084).  A pilot with a quarter-step twin as well (quick, seed 0, both members) "
          "showed GD's error in the asymptotic first-order regime: successive differences "
          "R_h - R_{h/2}, R_{h/2} - R_{h/4} in a ratio of 2.01 for Delta A and for S, and "
          "the two extrapolations agreeing to 8e-6 of Delta A, against the allowance's "
          "|R_h - R_{h/2}| of about 2.7e-3 of it.  The uniform-proportions control is "
          "rejected by score_change_paired and by S_constant_extrapolated (through the "
          "reduction's |beta|^2 growth), not by S_law, which no class weight enters.  The "
          "new parts' resolution (5 % scale mutants rejected) was measured at seed 0 only; "
          "a drawn seed whose worst member sits nearer its allowance may pass a 5 % slip.  "
          "Seed 1 became a second pinned example after that check (issue 36's two data "
          "sets; its result under the three new parts was known to hold).  Session of "
          "2026-12-05: the initial-rate parts had a bare allowance of 20 % of the measured "
          "dG1/dtau (0.031-0.034 at quick), so a 10 % error in theory.initial_rates, "
          "class_system or class_loss passed them; they now take four_class_tracks' derived "
          "bound on this run (design fixed before the first run: the three-point rate of "
          "the Richardson-extrapolated path, the prediction carried to the member's G(0) by "
          "the four-class Jacobian).  First run (quick): errors 0.0010 and 0.0009 (mu1, "
          "mu3) against 0.0033 (seed 0), 0.0009 and 0.0008 against 0.0026 and 0.0017 "
          "(seed 1, worst members); the control 0.165 and 0.250 against 0.0033; test "
          "profile errors 0.0002-0.0011 against 0.0028-0.0030.  Second session of "
          "2026-12-05: the claim's resolution was held at 50 % by theory.softmax_change, "
          "which only attention_frozen (allowance 0.20-0.24 at quick, the Gram blocks' "
          "chi-square spread) consumed.  A quick verify of this claim showed "
          "score_change_paired's error equal to its gram_coupling term to 1 % (0.01919 "
          "against 0.01917, 0.02178 against 0.02194, seed 1), so the coupling is a part of "
          "the prediction, not noise.  Two parts were added beside the registered ones: "
          "score_change_whole_gram and attention_frozen_whole_gram predict with the "
          "member's whole Gram matrices (theory.attention_drift of "
          "theory.canonical_velocity's exact Gamma along the theory's reduction; "
          "theory.softmax_change now takes the whole [d, d] change).  A script on the "
          "cached quick runs of seeds 0 and 1, before the allowance was written, put the "
          "whole-Gram Delta A 0.0010-0.0015 and the softmax change 0.0004-0.0017 from the "
          "extrapolated observations; the allowance (_phase1_full) was then derived term by "
          "term, none fitted.  A referee read of the first version (commit df84824, no run "
          "prompted it) rebuilt three terms before any further run: the Gram matrices' "
          "motion is bounded to T1 from the run's own steps (it had been their motion to "
          "the run's end) and carried to the softmax through its Jacobian with the whole "
          "Gamma's row and column norms; the m1 M r proxy was dropped (the run's own beta, "
          "in the state term, carries it); one derived term replaces the initial scores' "
          "and the second order's.  Runs of the rebuilt parts (quick, a script calling "
          "this check on the cached runs of seeds 0 and 1, this session): "
          "score_change_whole_gram 0.0013 / 0.0048 and 0.0015 / 0.0051, "
          "attention_frozen_whole_gram 0.0016 / 0.0043 and 0.0007 / 0.0038 (worst "
          "members); +-2 % scale slips of theory.softmax_change and theory.attention_drift "
          "fail both seeds.  Test profile (seed 0): 0.0017 / 0.0088 and 0.0004 / 0.0073; the "
          "uniform-proportions control fails both there, 2.03 and 1.97.  max_dp's Richardson step (a maximum over entries: only "
          "piecewise smooth in the step) was checked with a quarter-step twin (quick, seeds "
          "0 and 1, both members, a script): successive differences R_h - R_{h/2}, "
          "R_{h/2} - R_{h/4} in a ratio of 2.004-2.007 and the two extrapolations agreeing "
          "to 5e-6-8e-6 of the value, against the allowance's |R_h - R_{h/2}| of "
          "2.2e-3-2.9e-3: no switch of the maximising entry between the steps.  GD's "
          "|R_h - R_{h/2}| and the reduction's state against the run's are the largest "
          "terms.  On four more data sets (quick, --seed 2 and --seed 4: data sets 2-5, "
          "commit 9d95c25) the worst examples are 0.0013 / 0.0050 and 0.0026 / 0.0057 "
          "(score_change_whole_gram), 0.0024 / 0.0056 and 0.0012 / 0.0057 "
          "(attention_frozen_whole_gram).  Resolution (mutate --resolution, quick, 9d95c25): "
          "5 %, softmax_change, attention_drift, canonical_velocity and canonical_rhs at 1 %, "
          "private_losses at 5 % (loss_at_T1).  For the test suite's time the whole-Gram "
          "parts then took every 20th and 40th grid point (not 10th and 20th) and at most "
          "41 records for the state term (commit after 9d95c25; a cost change, no outcome "
          "prompted it): quick, worst of seeds 0 and 1, 0.0014 / 0.0053 and 0.0008 / "
          "0.0041 (the trapezoid term 0.0005-0.0007, from 0.0001-0.0002), control 1.94 "
          "and 1.93; test profile 0.0018 / 0.0092 and 0.0003 / 0.0076.  Session of 2026-12-06: "
          "a referee read of attention_structure's like part found the state term "
          "(class_reduction_state: the run's beta against tc's reduction) circular under "
          "tdcheck mutate, which patches tc itself: an error in the trajectory moved it with "
          "the prediction.  Replaced, no failure prompting it, by class_form (the run's beta "
          "against that beta in the reduction's form, on the run's own path and its twin's), "
          "offsets (tc's prediction with the random tokens' initial offsets added, minus "
          "without), within_class_spread (second-order estimate) and kept_m1_M_r (the term "
          "the state term had carried), m1_M0_clock.  Quick, data sets 0 and 1, worst "
          "member: 0.0014 / 0.0054 (score_change_whole_gram), 0.0017 / 0.0050 "
          "(attention_frozen_whole_gram); the offsets term (0.0010-0.0016) is now the "
          "largest after GD's step dependence; test profile 0.0028 / 0.0104 and 0.0023 / "
          "0.0099 (the spread term then on every other of the 41 Gamma points, for the test "
          "suite's time; the allowances moved by under 1e-5).  A third referee read found the "
          "offsets and kept terms differenced against the prediction itself (canonical_"
          "velocity's Gamma) while built on loss_gradients, so a slip in canonical_velocity "
          "or canonical_rhs moved them with the error: both now difference two loss_gradients "
          "drifts; the same read added non-uniform scores on the run's path (scores), the "
          "form term extrapolated as the observed is, and |dp_ref|; quick worst members then "
          "0.0014 / 0.0054 and 0.0017 / 0.0051.  Its remark that the softmax-level terms "
          "(|sm(x + d) - sm(x)|, a maximum's change) are estimates, not bounds, stands.  Not "
          "re-measured by tdcheck mutate (the row's numbers are of fc6d470).")
def check_phase1(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem 3.1 / E.28 and Lemmas 4.1-4.2 in the theory-scaled run: the timing
    (:func:`_phase1_timing`), the initial rates (:func:`_phase1_rates`) and each member's
    drifts to T1 (:func:`_phase1_member`, :func:`_phase1_drifts`)."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    half = _run(_half_step(run.config), ctx)
    members = [_phase1_member(theory, run, half, k) for k in range(run.config.members)]
    rates, drifts = _phase1_rates(theory, run, half), _phase1_drifts(members)
    return Evidence((_phase1_timing(theory, run, np.linspace(0.0, 60.0, 6001)), *rates[:2],
                     *drifts[:10], rates[2], *drifts[10:]), {"S0": run.S0.tolist()})


# ---------------------------------------------------------------------- 4 hump
@claim(
    statement="the I2/I3 losses rise by the amount our reduction predicts, peak at its "
              "predicted time and fall within Phase 1",
    source="Fig. 1(b), Lemmas 4.2-4.3; the rise and peak time of the private-token class "
           "reduction (our derivation; the four-class T_0.5 and peak identity in the details)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": UNIFORM},
    control_description=UNIFORM.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="the windows are derived per run (random-token G(0) spread of the reduced system, record "
          "spacing), no longer calibrated to the four-class system's known shift",
)
def check_single_target_hump(params: dict, ctx: Context, *, theory) -> Evidence:
    """Fig. 1(b), Lemmas 4.2-4.3: I2/I3 losses rise, peak and fall within Phase 1."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    taus = np.linspace(0.0, 12.0, 2401)

    def rise(th):
        def stat(Y):
            loss = th.private_losses(Y, cfg.L)[1]
            return float(loss.max() - loss[0])
        return stat

    def peak(th):
        return lambda Y: _peak_of(th.private_losses(Y, cfg.L)[1])

    def _peak_of(loss):
        j = int(np.argmax(loss))
        if j == 0 or j == loss.size - 1:  # no interior maximum: no hump
            return math.log(float(taus[max(j, 1)]))
        a2, a1, _ = np.polyfit(taus[j - 1: j + 2] - taus[j], loss[j - 1: j + 2], 2)
        return math.log(float(taus[j] - a1 / (2 * a2)))

    # T_0.5 (theory.t_half, a root of the four-class rates) is the peak of the single-target
    # loss (the peak identity); computed independently on the private-token reduction at
    # n = N_LIMIT (the four-class system's limit): vertex of a parabola on a grid of step h
    grid = np.linspace(0.0, 12.0, 24001)
    l2 = theory.private_losses(theory.private_trajectory(grid, N_LIMIT, cfg.L), cfg.L)[1]
    jl = int(np.argmax(l2))
    if 0 < jl < grid.size - 1:
        a2, a1, _ = np.polyfit(grid[jl - 1: jl + 2] - grid[jl], l2[jl - 1: jl + 2], 2)
        peak_lim = float(grid[jl] - a1 / (2 * a2))
    else:  # no interior maximum: no hump, T_0.5 = 0 (or beyond the grid)
        peak_lim = 0.0 if jl == 0 else math.inf
    th = float(theory.t_half())
    h = float(grid[1] - grid[0])
    rises, peaks, falls, rise_tols = [], [], [], []
    rise_w = peak_w = _NONE_YET
    for k in range(cfg.members):
        i_cls = _classified(run, k)
        r_pred, r_spread, r_ref = _g0_spread(theory, run, k, taus, None,
                                             _clock(run, k, i_cls), stat_of=rise,
                                             reference=True)
        lp_pred, lp_spread = _g0_spread(theory, run, k, taus, None, _clock(run, k, i_cls),
                                        stat_of=peak)
        for c in (1, 2):
            curve = run.type_loss[k, : i_cls + 1, c]
            j = int(np.argmax(curve))
            rises.append(float(curve[j] - curve[0]))
            if 0 < j < curve.size - 1:
                tj = run.tau[k, j - 1: j + 2]
                a2, a1, _ = np.polyfit(tj - tj[1], curve[j - 1: j + 2], 2)
                peaks.append(float(tj[1] - a1 / (2 * a2)))  # vertex of a parabola, 3 records
            else:
                peaks.append(float(run.tau[k, max(j, 1)]))
            falls.append(float((curve[j] - curve[-1]) / curve[j]))
            # the rise is a difference of losses (no clock in it): GD's departure from the
            # flow, h lambda/2 relative (_clock), enters it as a relative error of the rise
            # of the paper's reduction (r_ref, the same for check and control: a theory that
            # predicts no rise does not shrink it)
            e, tol = abs(rises[-1] - r_pred), r_spread + abs(r_ref) * _clock(run, k, i_cls)
            rise_tols.append(tol)
            rise_w = _worse((r_pred, rises[-1], e, tol), rise_w)
            e = abs(math.log(peaks[-1]) - lp_pred)
            tol = lp_spread + (_spacing(run.tau[k], j) / peaks[-1]) ** 2
            peak_w = _worse((math.exp(lp_pred), peaks[-1], e, tol), peak_w)
    return Evidence((
        _worst_member_part(Part("rise", *rise_w,
             "peak minus initial I2/I3 loss of the private-token class reduction "
             "(theory.private_losses) from the member's own initial G; allowance: its change "
             "(second order) when the random tokens' G(0) spreads each class's margins (sd_G "
             "the member's own, _g_sd), plus GD's relative departure h lambda/2 times the "
             "rise (both on the paper's reduction: the same for check and control)",
             details={"rises": rises}, kind="simulation"), rise_tols, rise_w),
        _worst_member_part(Part("peak_time", *peak_w,
             "log peak time (vertex of a parabola through the three records at the maximum) "
             "against the reduction's (member's own start); allowance: the random-token G(0) "
             "spread plus the parabola's O(h^2) error, (record spacing / peak time)^2",
             details={"peaks": peaks}, kind="simulation"), picked=peak_w),
        Part("falls_in_phase1", 0.0, min(falls), max(0.0, 0.02 - min(falls)), 0.0,
             "Lemma 4.3: after T_0.5 the single-target losses fall before T1 (>= 2 % below peak)", kind="simulation"),
        Part("t_half_limit", peak_lim, th, abs(th - peak_lim), h ** 2 + ODE_ROUND,
             "Lemma 4.3's T_0.5 (theory.t_half, four-class system) against the peak of the "
             "I2 loss of the private-token reduction at n = 6e10 (its n -> infinity limit; "
             "the peak identity dq2 = -(dG1 + dG3) makes the two one time); allowance: the "
             "parabola vertex's O(h^2) on a grid of step h, plus ODE rounding", kind="symbolic"),
    ), {"t_half_four_class": th})


# ---------------------------------------------------------------------- 5 sandwich
SANDWICH_C = 0.05  # our choice of Lemma 4.3's constant C in (0, 1)


def _sandwich_ok(r: np.ndarray, c: float) -> np.ndarray:
    """(1+c) max(dG1, dG2) <= -dG3 <= (1-c)(dG1 + dG2), row by row of rates r [T, 3]."""
    low = -r[:, 2] / np.maximum(r[:, 0], r[:, 1]) - 1
    up = 1 + r[:, 2] / (r[:, 0] + r[:, 1])
    return (low >= c) & (up >= c)


def _sandwich_sides(taus: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 4.3's two sides at the record midpoints, for G [T, 3] on ``taus``
    (finite-difference rates r): -r3 - (1+C) max(r1, r2) and (1-C)(r1 + r2) + r3, both >= 0
    where the sandwich holds; (midpoints, sides [2, T - 1]).  Linear in the rates, so a
    rate's sign change is no pole (the ratio form -r3/max(r1, r2) - 1 - C has the same zeros
    where its denominator is positive)."""
    rate = np.diff(G, axis=0) / np.diff(taus)[:, None]
    low = -rate[:, 2] - (1 + SANDWICH_C) * np.maximum(rate[:, 0], rate[:, 1])
    up = (1 - SANDWICH_C) * (rate[:, 0] + rate[:, 1]) + rate[:, 2]
    return 0.5 * (taus[1:] + taus[:-1]), np.stack([low, up])


def _sandwich_onset(taus: np.ndarray, G: np.ndarray) -> tuple[float, float]:
    """The first tau from which both sides hold to the end (each side's last crossing read
    between the midpoints, :func:`_held_from`; the later of the two), and its interpolation
    error."""
    t, e = _held_from(*_sandwich_sides(taus, G))
    i = int(np.argmax(t))
    return float(t[i]), float(e[i])


def _t_half_detail(theory) -> float:
    """theory.t_half() for a claim's details only (no part reads it): nan when the theory
    gives none, so a wrong t_half cannot make the check raise."""
    try:
        return float(theory.t_half())
    except (InadmissibleTheory, TypeError, ValueError, ArithmeticError, AttributeError):
        return math.nan


def _slope_at(taus: np.ndarray, row: np.ndarray, t: float) -> float:
    """|d row/d tau| between the two records around ``t`` (inf-safe: 0 when not finite)."""
    j = int(np.clip(np.searchsorted(taus, t), 1, taus.size - 1))
    v = abs(float((row[j] - row[j - 1]) / (taus[j] - taus[j - 1])))
    return v if math.isfinite(v) else 0.0


def _sandwich_gd_onset(run: nc.CoRun, half: nc.CoRun, k: int
                       ) -> tuple[float, float, float, str, float]:
    """Member k's sandwich onset extrapolated to the flow from GD at h and h/2
    (:func:`_extrapolated_onset` of each side's last crossing), and the slope of the side
    that sets it (the half-step run's records), for the attention term."""
    sides = [_sandwich_sides(r.tau[k], r.beta[k, :, :3]) for r in (run, half)]
    on, step, interp, why = _extrapolated_onset([_held_from(*x) for x in sides],
                                                [_sign_changes(x[1]) for x in sides])
    if not math.isfinite(on):
        return on, step, interp, why, 0.0
    mid, rows = sides[1]
    slope = min(_slope_at(mid, row, on) for row in rows if _held_from(mid, row[None])[0][0] > 0)
    return on, step, interp, why, slope


def _onset_member(on: float, reading: float, lo_pred: float, rest: float) -> tuple:
    """One member's (predicted, observed, error, allowance) of a log onset: the observed
    onset ``on`` (GD extrapolated), ``reading`` its step dependence and interpolation error
    (relative to ``on``), ``lo_pred`` the predicted log onset, ``rest`` the other allowance
    terms (already relative: to the paper's reduction or the run, never to the prediction
    under test).  An onset that is no positive finite time errs infinitely."""
    seen = 0 < on < math.inf
    tol = rest + (reading / on if seen else 0.0)
    e = abs(math.log(on) - lo_pred) if seen and math.isfinite(lo_pred) else math.inf
    return (math.exp(lo_pred) if math.isfinite(lo_pred) else math.inf, on, e, tol)


def _onset_reference(t: float, e: float, what: str) -> tuple[float, str]:
    """The interpolation error ``e`` of the paper's reduction's onset ``t``, relative, and a
    reason when that onset is no positive finite time (then inf: the part fails with it)."""
    if 0 < t < math.inf:
        return e / t, ""
    return math.inf, f"the paper's reduction gives no positive finite {what} onset ({t:g})"


@claim(
    statement="from some T_0.5 <= T1 to the end of the run: (1+C) max(dG1, dG2) <= -dG3 <= "
              "(1-C)(dG1 + dG2), C = 0.05, with the onset where our reduction puts it",
    source="Lemma 4.3 / Theorem E.19, Lemma 4.5 / F.6; the onset of the private-token class "
           "reduction (our derivation)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": ASYMMETRIC},
    control_description=ASYMMETRIC.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="Session of 2026-12-05 (issue 36, resolution): the onset was the first rate record "
          "from which the sandwich held, against an allowance of G(0) spread + GD's clock "
          "lead + record spacing (0.184 in log onset at quick, error 0.061), through which a "
          "20 % error in theory.private_margins passed.  Design, fixed before this version's "
          "first run (as phase2_margins'): each side's last crossing read linearly between "
          "rate midpoints, GD at h and h/2 extrapolated to the flow per side, the reduction "
          "read on the member's own records (the finite differences common to both sides), "
          "GD's whole step dependence allowed and the m1 M r term carried by the kept "
          "reduction.  First run of this version: quick errors 0.00012 and 0.00012 against "
          "0.0049 and 0.0062 (seeds 0, 1; the interpolation error of the readings "
          "dominates), the control 1.64 and 1.64 against 0.0051 and 0.0050; test profile "
          "0.00061 / 0.0027 and 0.00078 / 0.0042.  onset_before_T1 still reads the first "
          "rate record (a 0-tolerance inequality).  A referee read of that version then "
          "asked for: the sides in linear form (-r3 - (1+C) max(r1, r2), (1-C)(r1 + r2) + "
          "r3: the same zeros, no pole where a rate changes sign), the attention and m1 M0 "
          "r / S0 terms, a reason (not a raise) when the two GD runs cross a different "
          "number of times or the paper's reduction gives no onset, and t_half (details "
          "only) guarded.  With them (quick): 0.00024 / 0.0072 and 0.00013 / 0.0077 "
          "(seeds 0, 1), control 1.54 and 1.64; test profile 0.0011 / 0.0043 and "
          "0.0012 / 0.0062.  The control (asymmetric proportions) is a far miss (about "
          "200 allowances); the resolution is measured by tdcheck mutate --resolution (1 % "
          "on 5b8d706).  A quarter-step pilot (quick, seeds 0 and 1, all four members): "
          "successive step differences in a ratio of 2.004-2.008, the two extrapolations "
          "agreeing to 1.1e-5-1.6e-5 against the allowed 0.0037-0.0053",
)
def check_sandwich(params: dict, ctx: Context, *, theory) -> Evidence:
    """Lemma 4.3 / E.19 (and F.6 in Phase 2): there is T_0.5 <= T1 such that
    (1+C) max(dG1, dG2) <= -dG3 <= (1-C)(dG1 + dG2) on [T_0.5, tau_end], C = 0.05.

    The onset is measured (the earliest record from which the sandwich holds to the end of the
    run); the lemma needs it before first classification, and the reduced system's onset
    (same C, same finite differences on a fine grid) predicts where it lies.
    """
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    half = _run(_half_step(run.config), ctx)
    cfg = run.config

    onsets, ratios, t1s, ups, tols, why = [], [], [], [], [], []
    worst_p = _NONE_YET
    for k in range(cfg.members):
        taus = run.tau[k]  # the reduction is read on the member's own records: the finite
        # differences (and their O(spacing^2) error) are then the same on both sides

        def onset(th, _taus=taus):
            def stat(Y):
                t = _sandwich_onset(_taus, np.asarray(Y[:3], dtype=float).T)[0]
                return math.log(t) if 0 < t < math.inf else math.inf
            return stat

        lo_pred, lo_spread = _g0_spread(theory, run, k, taus, None, _m0_eps(run, k),
                                        allowance=tc, through_trajectory=True, stat_of=onset,
                                        kappa=_kappa(run, k), kept_second=_kept_second(run, k))
        tm, r = _rates(run, k)
        on0 = _first(tm, _sandwich_ok(r, SANDWICH_C))
        on, step, interp, why_on, slope = _sandwich_gd_onset(run, half, k)
        ref, why_ref = _onset_reference(*_sandwich_onset(
            taus, _private(tc, cfg, taus, _start(run, k))[:3].T), "sandwich")
        t1 = float(run.tau[k, _classified(run, k)])
        onsets.append(on)
        t1s.append(t1)
        ratios.append(on0 / t1)
        seen = 0 < on < math.inf
        # non-uniform attention moves each rate by at most the attention forcing bound
        # (_attention_forcing, the run's alone), and so each side by at most 3 times that
        # ((2 + C) and (3 - C) rates at most): read as a shift of the crossing through the
        # side's slope there (up to the onset record: the running maximum)
        j = int(np.searchsorted(run.tau[k], on)) if seen else 0
        att = (3 * float(np.max(_attention_forcing(run, k)[: j + 1])) / slope / on
               if seen and slope > 0 else (math.inf if seen else 0.0))
        member = _onset_member(on, step + interp, lo_pred, lo_spread + ref + att)
        why += [f"member {k}: {w}" for w in (why_on, why_ref) if w]
        tols.append(member[3])
        worst_p = _worse(member, worst_p)
        # the upper side is read from the predicted onset on; a theory that puts the onset
        # past the last rate record (or gives none) contradicts T_0.5 <= T1 < tau_end itself:
        # the part fails with that reason (nan), it cannot be read on an empty window
        sel = tm >= math.exp(lo_pred)
        ups.append(float(np.min(1 + r[sel, 2] / (r[sel, 0] + r[sel, 1]))) if sel.any()
                   else math.nan)
    late = max(ratios)
    beyond = [k for k, u in enumerate(ups) if math.isnan(u)]
    up_min = float(np.min(ups))  # nan when a member's window is empty
    return Evidence((
        Part("onset_before_T1", 1.0, late, max(0.0, math.log(late)) if late > 0 else math.inf,
             0.0, "Lemma 4.3/E.19: the sandwich with C = 0.05 holds from some T_0.5 <= T1 to the "
             "end of the run (T1 = first classification; onset/T1, largest over members); "
             "finite differences of recorded G", details={"onsets": onsets, "T1": t1s}, kind="simulation"),
        _worst_member_part(Part(
            "onset_vs_reduction", *worst_p,
            "log onset (each side's last crossing of C read between record midpoints), full "
            "GD extrapolated to the flow from a half-step twin (2 t(h/2) - t(h)), against the "
            "private-token reduction's from the member's own start (theory.private_trajectory "
            "on the member's records: the same C and finite differences); allowance, the same "
            "for check and control (computed under the paper's reduction): the random-token "
            "G(0) spread (second order, on the trajectory), the m1 M r term the reduction "
            "drops (kept to first order, with its second-order remainder, and the m1 M0 r / "
            "S0 clock), non-uniform attention (3 x the run's attention rate bound over the "
            "side's slope at the crossing), GD's whole step dependence |t(h) - t(h/2)| and "
            "the interpolation errors of the three readings (summed: conservative)"
            + (" (" + "; ".join(why) + ")" if why else ""),
            kind="simulation"), tols, worst_p),
        Part("upper_side_margin", SANDWICH_C, up_min,
             max(0.0, SANDWICH_C - up_min) if not beyond else math.nan, 0.0,
             "Lemma 4.3/F.6 upper side -dG3 <= (1-C)(dG1 + dG2) from the predicted onset to "
             "tau_end: min (1 + dG3/(dG1 + dG2)) >= C" + (
                 f" (members {beyond}: the predicted onset lies past the run's last rate "
                 f"record, tau = {float(tm[-1]):.4g}, i.e. after T1: not the lemma's onset)"
                 if beyond else ""), kind="simulation"),
    ), {"t_half_four_class": _t_half_detail(theory)})


# ---------------------------------------------------------------------- 6 balancing
#: What balancing is only nearly blind to a multiple of (``Claim.shape_approx``).  Its parts
#: compare ratios of the four class losses, the largest after T1, which the reduction reaches
#: at the run's end along a slowly growing path.  The claim is about the balance between the
#: classes, which a tilt of these functions changes at first order; a common multiple changes
#: the reduction's clock (or its losses' common level), which the ratios follow only by
#: their slow drift along it.  tdcheck mutate --resolution tilts them and asks another claim
#: to resolve each one's whole-output slip at 5 % (module docstring of verify.mutate, 7.).
_BALANCING_SHAPE_APPROX = {
    "private_losses": "the parts are ratios of sums of g = 1 - exp(-loss) over classes, "
                      "largest at the run's end where I1-I3's losses are 3e-4 to 7e-4 (quick, "
                      "data sets 0 and 1; notes): g is nearly the loss there, so a common "
                      "multiple cancels to first order (x 1.05 moved the Lemma 4.5 ratios by "
                      "2e-5 to 3e-5 relative); mutate tilts it, and its scale must be "
                      "resolved elsewhere (loss_constant 2 %, phase1 5 % on 9a7c63b)",
    "private_system": "the reduction is autonomous with constant rates, so a positive multiple "
                      "c of its right-hand side gives exactly Y(c tau), a change of clock; "
                      "the statistics are the largest values after T1, at the run's end, "
                      "where the ratios grow slowly along tau (x 0.5 moved the Lemma 4.5 "
                      "ratios by 0.0018-0.0025 relative, x 1.5 by 0.0009-0.0012; notes): "
                      "against the worst example's allowance of 8.6e-4 (which carries GD's "
                      "own 22 % clock term) that is 1 to 2.9 allowances at +/- 50 % and "
                      "inside it below about 20 %.  Nothing in Lemmas 4.4-4.5 fixes the "
                      "clock (the I2 <-> I3 symmetry and the ratios' limits are invariant), "
                      "while a tilt changes the balance between the classes, the claim's "
                      "subject; phase1, sandwich, phase2_margins, kept_preconditioner and "
                      "attention_structure resolve the clock (1 % on f06bc5e)",
    "private_margins": "the margins are linear in the state and both the reduction's loss and "
                       "private_losses read them, so a multiple lambda of them is exactly the "
                       "paper's flow in U = lambda Y on a clock lambda^2 faster, from the "
                       "rescaled start lambda Y0: the statistics move only by their drift "
                       "along the clock (a 20 % slip is a 44 % / 36 % clock slip, hence its "
                       "earlier 20 % rung); the same claims as for private_system resolve "
                       "the margins (1 % on f06bc5e)",
}


@claim(
    statement="automatic balancing: after T1, sum_I2 g / sum_I3 g and the Lemma 4.5 ratios "
              "follow the values of our reduction (1 by symmetry, and the O(1) ratios' values)",
    source="Lemma 4.4 / F.5, Lemma 4.5 / F.6; the ratios' values are our derivation "
           "(private-token class reduction)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": WEIGHT_SLIP},
    control_description=WEIGHT_SLIP.label,
    shape_approx=_BALANCING_SHAPE_APPROX,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="History (issue 36 item 3).  Session of 2026-12-04: with the second pinned data set "
          "the test profile refuted the claim: lemma45_total_over_R_den exceeded its allowance "
          "on data sets 1 and 2 (0.00258 / 0.00207, 0.00247 / 0.00203; data set 0 passed at "
          "0.00188 / 0.00202); at quick both pinned data sets held (worst 0.000439 / 0.000464). "
          "The allowance was not widened and the smoke failure was listed as a known defect.  "
          "Session of 2026-12-05: the missing term is the m1 M r preconditioner, which the "
          "allowance took only as a clock change (tau_eff/tau - 1).  It grows beta along "
          "itself (dM/dt = beta r^T + r beta^T gives m1 M r ~ (m1/S) beta (beta.r)), which "
          "scales the margins' offsets and so moves this ratio of loss differences at first "
          "order.  The diagnosis, before any change: on the test profile's data sets 0-2 (six "
          "members) the run's margins sit above the reduction's by about (tau_eff/tau - 1) + "
          "g/2 in log time on every class, and the error of the stat is proportional to "
          "tau_eff/tau - 1 (0.048-0.052 of it per member); integrating the reduction with "
          "the term kept (theory.preconditioned_private_system at kappa = m1/S0^2) brings the "
          "six errors from 0.00144-0.00244 to at most 0.00015, and at quick from 0.00030-0.00043 "
          "to at most 0.00003.  The allowance now takes the reduction's change when that term "
          "is kept (on the paper's reduction, the same for check and control) in place of "
          "the tau_eff/tau - 1 clock term it replaces (the same effect; GD's step x curvature "
          "clock stays), and the reduction is read to each member's own last record (the "
          "ratio grows to the end, and a common end had compared the run's last value with "
          "an earlier one of the reduction).  A referee read then added the m1 M0 r / S0 clock "
          "and the kept term's second-order remainder (_kept_second).  With them: test "
          "profile 0.00244 / 0.00489, quick 0.000431 / 0.000861 (lemma45_total_over_R_den, "
          "worst example; the larger 2026-12-04 errors compared the run's end with the "
          "reduction at the earliest member's end; the ratio of one half is a coincidence: "
          "at quick GD's clock term, 0.00043-0.00044, is about the kept term, "
          "0.00030-0.00042, which the error matches).  The derivation this allowance rests on "
          "is tested on its own by "
          "kept_preconditioner.  Lemma 4.5 states only O(1); the parts compare the "
          "largest ratio after T1 with the reduction's value, in place of the former bare "
          "bound of 20.  Resolution (mutate --resolution, quick, 9a7c63b): > 50 %, held by "
          "private_losses (> 50 %) and private_system (50 %).  Their statistics are ratios "
          "of sums of g = 1 - exp(-loss) whose maxima fall at the run's end (the last of "
          "the 400 reduction points after T1, every member), where I1-I3's losses are 3e-4 "
          "to 7e-4 (I4's about 0), so g is nearly the loss and a common scale of the losses "
          "cancels to first order; a scale of private_system is a change of the reduction's "
          "clock, which these slowly growing ratios follow slowly.  Measured (session of "
          "2026-12-06, quick, data sets 0 and 1, the reduction from each member's start): "
          "the losses x 1.05 move both Lemma 4.5 ratios by 2e-5-3e-5 relative and x 1.5 by "
          "2.4e-4-2.5e-4, but x 0.5 moves lemma45_total_over_R_den by 0.005-0.013, beyond "
          "its allowance (only the upward direction hides, and a rung needs both); the "
          "clock x 0.5 moves them by 0.0018-0.0025 and x 1.5 by 0.0009-0.0012; the "
          "allowance of the worst example quoted above is 8.6e-4 (this probe did not "
          "compute each member's).  So quick resolves neither at 5 %; a longer run makes "
          "the end losses smaller, which only deepens the losses' cancellation, and other "
          "sizes are unmeasured for the clock.  private_trajectory and class_margins are "
          "resolved at 1 %, private_margins at 20 %, and Lemma 4.4's ratio is 0 by symmetry "
          "under any scale of the losses.  Since then private_losses is declared shape_approx "
          "(a common multiple cancels to first order; the ladder tilts it).  Why the clock "
          "holds 50 % (session of 2026-12-06 (third), two probe scripts beside the code of "
          "commit 37122e8, data set 0, not part of the claim): at quick the GD clock term of "
          "the allowance (_clock) is 0.221 and 0.222 for the two members, so a clock slip "
          "under about 20 % sits inside what GD's own departure from the flow allows.  "
          "Compared record by record after T1 (matched tau) instead of by their largest "
          "values, the Lemma 4.5 ratios reach 0.50 of the allowance with the paper's "
          "reduction and 0.97 / 1.33 at a +/- 20 % clock, 2.75 / 5.61 at 50 %: the same "
          "rung.  At a step growth of 0.0015 (5413 steps to tau 4.2e4, clock term 0.023) "
          "the record-by-record comparison rejects +/- 5 % clock slips on member 1 (2.77 / "
          "2.21 against 0.85 with the paper's reduction) but the paper's reduction itself "
          "misses member 0 by 2.50 times that allowance: the 22 % clock term at quick also "
          "covers a departure the allowance does not name.  So no size that reaches 5 % is "
          "known: it needs both that smaller step and the missing allowance term, derived "
          "before any run that uses it.  On the run of tdcheck mutate cooccurrence "
          "--resolution (quick, commit ef0867a), with private_losses "
          "declared shape_approx: 50 %, private_losses' tilts at 1 % (its whole-output slip "
          "covered by loss_constant at 2 % and phase1 at 5 %), private_margins 20 %, "
          "private_system 50 %.  Stop 68, a design tried and not adopted (its reason is its "
          "resolution, not its verdict): the statistics read record by record on the "
          "kept_preconditioner claim's GD map (the preconditioned reduction iterated on each "
          "member's own steps, which removes the GD clock term), with kept_preconditioner's "
          "margin allowance carried through each statistic by the 16 corners of the margin "
          "box, plus the within-class spread.  At the test profile (data set 0, both members) "
          "the map follows the run's statistics to 1.5e-5-7.8e-5 (I2/I3), 6.4e-5-2.5e-4 "
          "(Lemma 4.5 num) and 2.1e-4-3.5e-4 (den), and its rates x (1 +/- 0.05) move the "
          "Lemma 4.5 statistics by 0.025-0.027 and 0.035-0.048 (x (1 +/- 0.2): 0.094-0.12 "
          "and 0.12-0.23), about 100 times the error: the comparison itself resolves a 5 % "
          "clock.  That design passes there (errors at most 3.5e-4 against allowances of at "
          "least 0.012), but its allowance, 0.012-0.29 at the worst points (medians 0.19-0.35 "
          "for the Lemma 4.5 statistics), exceeds what a 5 % or a 20 % clock moves them "
          "(0.025-0.048, 0.094-0.23): the box bounds each class margin separately (the worst "
          "of 16 corners, from margin bounds of 0.021-0.031 at test, chiefly GD's product "
          "term, the M0 rates and the kept term's second order), while the ratios see only "
          "the margins' differences, so that design would not resolve 5 % or 20 %: no "
          "better than this one's 50 %.  What would "
          "resolve 5 %: an allowance on the class-to-class differences of the margin errors, "
          "derived before any run that uses it (not yet found).  Stop 69 (a change of what "
          "the resolution measures, not of the claim's parts, allowances or expected "
          "outcome): private_system and private_margins are declared shape_approx, as "
          "ratio_limit declares them and for its reason (_BALANCING_SHAPE_APPROX): a common "
          "multiple of either is a change of the reduction's clock (or of its state's "
          "scale on a rescaled clock), which these slowly growing ratios follow only by "
          "their drift along it, while the balance between the classes, what Lemmas 4.4 "
          "and 4.5 are about, moves under a tilt.  The declaration follows the runs above, "
          "which measured their scale rungs at 50 % and 20 % and the clock's small effect; "
          "their whole-output slips are still measured, by phase1, sandwich and "
          "phase2_margins (1 % on ef0867a), and the claim's rung is now their tilts'.  "
          "Measured (tdcheck mutate cooccurrence --resolution-only, quick, frozen clone of "
          "f06bc5e, jobs 1, a ci campaign beside it): balancing 1 %; the tilts of "
          "private_system, private_margins and private_losses each rejected at 1 % (by the "
          "Lemma 4.5 parts too, not only the symmetry part); the whole-output slips of "
          "private_system and private_margins resolved at 1 % by phase1, sandwich, "
          "phase2_margins, kept_preconditioner and attention_structure.  Control (stop 69, "
          "after a referee read found the earlier one a far miss: dropping I3's private-token "
          "term, 5.06 of its 7.25 margin on the reduction at n = 60, L = 5, tau = 2e4 from G "
          "= 0, raised I3's loss about 150-fold there): "
          "WEIGHT_SLIP, the reduction with I2's and I3's class proportions slipped by 5 % in "
          "opposite directions, chosen before any run of it.",
)
def check_balancing(params: dict, ctx: Context, *, theory) -> Evidence:
    """Lemma 4.4 (sum_I2 g / sum_I3 g) and Lemma 4.5 ratios after T1, against the reduction."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    parts_obs: dict = {"ratio": [], "a": [], "b": []}
    tols: dict = {"ratio": [], "a": [], "b": []}
    res = {"ratio": (0.0, 0.0, 0.0, 1.0), "a": (0.0, 0.0, 0.0, 1.0), "b": (0.0, 0.0, 0.0, 1.0)}
    for k in range(cfg.members):
        i = _classified(run, k)
        t_i = float(run.tau[k, i])
        # the reduction over the member's own records, T1 to its last (the ratios grow to the
        # end of the run, so a common end would compare the run's last value with an earlier
        # one of the reduction)
        taus = np.concatenate([[0.0], np.geomspace(t_i, float(run.tau[k, -1]), 400)])

        def stats(Y, th=theory):
            w = np.array([float(x) for x in th.WEIGHTS])
            gp = w[:, None] * (1 - np.exp(-th.private_losses(Y, cfg.L)))  # pi_k g_k
            gp = gp[:, 1:]
            return (float(np.max(np.abs(gp[1] / gp[2] - 1))),
                    float(np.max(gp.sum(0) / (gp[1:].sum(0) - gp[0]))),
                    float(np.max(gp.sum(0) / (gp[0] - np.maximum(gp[1], gp[2])))))

        base, spread, ref = _g0_spread(
            theory, run, k, taus, None, _clock(run, k, preconditioner=False) + _m0_eps(run, k),
            stat_of=lambda th, f=stats: lambda Y: np.array(f(Y, th)), reference=True,
            kappa=_kappa(run, k), kept_second=_kept_second(run, k))
        g = run.type_g[k, i:]
        obs = (float(np.max(np.abs(g[:, 1] / g[:, 2] - 1))),
               float(np.max(g.sum(1) / (g[:, 1:].sum(1) - g[:, 0]))),
               float(np.max(g.sum(1) / (g[:, 0] - np.maximum(g[:, 1], g[:, 2])))))
        for key, b, o, sp_, r in zip(("ratio", "a", "b"), base, obs, spread, ref, strict=True):
            parts_obs[key].append(o)
            # error and allowance both relative to the value of the reduction the spread is
            # computed on (the paper's, r), not to the prediction under test: the test is
            # |o - b| <= spread, the same inequality for every theory
            err = abs(o - b) / (abs(r) if key != "ratio" else 1.0)
            tol = sp_ / (abs(r) if key != "ratio" else 1.0)
            tols[key].append(tol)
            res[key] = _worse((b, o, err, tol), res[key])
    b, o, e, t = res["ratio"]
    parts = [_worst_member_part(Part("I2_over_I3", b, o, e, t,
                  "Lemma 4.4: |sum_I2 g / sum_I3 g - 1|, largest after T1, against the reduced "
                  "system's from the member's own initial G (0 by symmetry from G = 0); "
                  "allowance: its random-token G(0) spread, its change over GD's clock "
                  "offset (step x curvature) and the m1 M0 r / S0 clock, and its change when "
                  "the reduction keeps the m1 M r term it drops (theory."
                  "preconditioned_private_system at m1/S0^2; times 1 + its second-order "
                  "remainder, _kept_second), all on the paper's reduction",
                  details={"members": parts_obs["ratio"]}, kind="simulation"), tols["ratio"], res["ratio"])]
    for key, name, what in (("a", "lemma45_total_over_R_num",
                             "sum g / (sum_{I2 u I3 u I4} g - sum_I1 g)"),
                            ("b", "lemma45_total_over_R_den",
                             "sum g / (sum_I1 g - max(sum_I2 g, sum_I3 g))")):
        b, o, e, t = res[key]
        parts.append(_worst_member_part(Part(
            name, b, o, e, t,
            f"Lemma 4.5/F.6: {what} = O(1); largest after T1 against the reduced system's "
            "(theory.private_losses, member's own start); relative error; allowance: its "
            "random-token G(0) spread, GD's and the M0 clock offset, and the kept m1 M r term "
            "with its second-order remainder (as I2_over_I3), relative to the paper's "
            "reduction's value (the same for check and control)",
            details={"members": parts_obs[key]}, kind="simulation"), tols[key], res[key]))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 6b the kept m1 M r term
def _kept_map(theory, run: nc.CoRun, k: int) -> np.ndarray:
    """Class margins [4, records] of ``theory``'s preconditioned private-token reduction
    iterated on member k's own GD steps in tau, from the member's start (:func:`_start`):
    Y_{s+1} = Y_s + h_s f(Y_s; kappa_s), h_s = lr_s S_s (the run's S between records), and
    kappa_s = m1 / S(Y_s)^2 with S(Y) = S0 (1 + s_drift(|beta(Y)|^2 - |beta(Y_0)|^2)) from
    the theory (theory.s_drift, theory.private_beta_sq).  A map that leaves the finite
    numbers is InadmissibleTheory (a failed part)."""
    cfg = run.config
    f = theory.preconditioned_private_system(cfg.n, cfg.L).lambdify()
    steps = run.lr_steps.shape[1]
    h = run.lr_steps[k] * np.interp(np.arange(steps), run.steps, run.S[k])
    S0 = float(run.S[k, 0])
    Y = _start(run, k)
    b0 = float(theory.private_beta_sq(Y, cfg.n, cfg.L))
    path = np.empty((7, steps + 1))
    path[:, 0] = Y
    with np.errstate(all="ignore"):
        for s_ in range(steps):
            drift = float(theory.s_drift(float(theory.private_beta_sq(Y, cfg.n, cfg.L)) - b0,
                                         cfg.m1, S0))
            kappa = cfg.m1 / (S0 * (1.0 + drift)) ** 2
            Y = Y + h[s_] * np.asarray(f(0.0, Y, kappa), dtype=float).reshape(-1)
            if not (math.isfinite(kappa) and np.all(np.isfinite(Y))):
                raise InadmissibleTheory(f"the preconditioned reduction's GD map left the finite "
                                         f"numbers at step {s_} (kappa {kappa:.4g})")
            path[:, s_ + 1] = Y
    return np.array(theory.private_margins(list(path[:, run.steps]), cfg.L), dtype=float)


def _class_margins(run: nc.CoRun, k: int) -> np.ndarray:
    """Member k's mean sample margin y_i F_i per class I1..I4, [4, records]."""
    return np.stack([run.margin[k][:, run.data.types == c].mean(1) for c in range(4)])


#: records at which _kept_allowance evaluates the attention's and M0's rate perturbations
KEPT_RATE_POINTS = 40


def _kept_allowance(run: nc.CoRun, k: int) -> tuple[np.ndarray, dict]:
    """What the kept-term reduction's GD map leaves out, as an allowance on each class margin
    at each record [4, records], from the run and the paper's theory (tc) alone, so the same
    for check and control.  Errors injected into beta are carried to a margin by L (it sums
    L token coordinates) and by a stretch: the uniform-attention flow is the gradient flow
    of a convex loss in beta, non-expansive (GD too while h lambda g (1 + kappa0
    |beta|^2_max) <= 2, checked), and the kept flow P r, P = I + kappa beta beta^T, has the
    Jacobian P J_r + kappa (beta r^T + (beta.r) I): its extra term grows an error at a rate
    of at most 2 kappa |beta| |r|, and the metric P it is non-expansive in changes at a rate
    of at most 2 kappa |beta| |r| (1 + kappa |beta|^2), so with the conversion between the
    two norms (sqrt(1 + kappa |beta|^2) <= exp(kappa |beta|^2 / 2)) the stretch is at most
    exp(kappa0 (|beta|^2_max / 2 + 3 int |beta| |r| dtau)), from the run's |beta| and |r|.
    The terms:

    - GD's product term: beta = W_V^T W^T a moves by -lr (dW_V^T u + W_V^T dW^T a) + lr^2
      dW_V^T dW^T a per step, the last left out of the map; |lr^2 dW_V^T dW^T a| <= lr^2
      |dL/dW_V| |dL/dW| sqrt(m1) (|a| = sqrt(m1)), from the run's own gradients, summed.
    - Attention, an estimate (linear response, not a bound): the rate perturbation of the
      model's attention scores, |r(beta; A) - r(beta; 0)| from tc.canonical_velocity at the
      run's own beta, A the run's A at the start and at the end (the larger; the scores are
      of order 1e-5, where the softmax is linear in A, and A moves by far less than it starts
      from: max|P - P0| against max|P0 - 1/L|), integrated over tau; plus the direct reading
      of beta through c_h = sum_l P_hl at the record, L max|c - 1| |beta|_inf with max|c - 1|
      <= max|c0 - 1| + L max|P - P0| so far.
    - The dropped m1 M0 r / S0 (M0 = W_V^T W_V at the start, not isotropic where d > m): a
      rate error of at most eps0 |r|, eps0 = m1 lambda_max(M0) / S0, integrated with the
      run's own |r| (tc.canonical_velocity).
    - Second order: the kept term is first order in kappa |beta|^2, and M = int d(beta
      beta^T)/S differs from beta beta^T/S by the relative S drift; their product with the
      term's own effect, :func:`_kept_second` |Q_kept - Q_dropped| on tc's flow.  The dropped
      - beta0 beta0^T / S0 lies inside the M0 term already (0 <= M0 - beta0 beta0^T / S0 <=
      M0); _kept_second's kappa0 |beta0|^2 is a conservative extra.
    - The random tokens' G(0) spread within a class (second order, :func:`_g0_spread`)."""
    cfg = run.config
    tau = run.tau[k]
    L, m1, S0, d = cfg.L, cfg.m1, float(run.S[k, 0]), cfg.vocabulary
    beta_sq = np.sum(run.beta[k] ** 2, axis=1)
    kappa0 = m1 / S0 ** 2
    lr = run.lr_steps[k]
    per_step = lr ** 2 * np.sqrt(run.grad_sq["WV"][k] * run.grad_sq["W"][k] * m1)
    gd = np.concatenate([[0.0], np.cumsum(per_step)])[run.steps]
    # rate perturbations at the run's own beta, at KEPT_RATE_POINTS records
    zero = np.zeros((d, d))
    at = np.unique(np.linspace(0, tau.size - 1, KEPT_RATE_POINTS).astype(int))
    d_attn, r_norm = [], []
    for j in at:
        state = {"beta": run.beta[k, j], "S": 1.0, "M": zero, "A": zero, "K_G": zero,
                 "Q_G": zero}
        r0 = tc.canonical_velocity(state, run.data.tokens, run.data.labels, cfg.m, m1)["beta"]
        r_norm.append(float(np.linalg.norm(r0)))
        d_attn.append(max(float(np.linalg.norm(tc.canonical_velocity(
            {**state, "A": A}, run.data.tokens, run.data.labels, cfg.m, m1)["beta"] - r0))
            for A in (run.A_start[k], run.A_end[k])))

    def accumulated(rate):
        rate = np.asarray(rate)
        cum = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1])
                                               * np.diff(tau[at]))])
        return np.interp(tau, tau[at], cum)

    beta_r = accumulated(np.sqrt(beta_sq[at]) * np.asarray(r_norm))[-1]
    stretch = math.exp(kappa0 * (float(beta_sq.max()) / 2 + 3 * float(beta_r)))
    with torch.no_grad():
        _, P0 = nc.forward({name: v[k] for name, v in run.initial.items()},
                           torch.as_tensor(run.data.tokens, device=run.initial["WV"].device))
    cdev = float((P0.sum(2) - 1.0).abs().max()) + L * np.maximum.accumulate(run.max_dp[k])
    direct = L * cdev * np.abs(run.beta[k]).max(axis=1)
    eps0 = _m0_eps(run, k)
    injected = gd + accumulated(d_attn) + eps0 * accumulated(r_norm)
    Y0 = _start(run, k)
    margins = lambda Y: np.array(tc.private_margins(list(Y), L), dtype=float)  # noqa: E731
    kept = margins(_private(tc, cfg, tau, Y0, kappa0))
    dropped = margins(_private(tc, cfg, tau, Y0))
    second = _kept_second(run, k) * np.abs(kept - dropped)
    _, spread = _g0_spread(tc, run, k, tau, margins, allowance=tc)
    # max h lambda g over the run, with the kept term's largest extra curvature
    step_curv = 2 * _clock(run, k, preconditioner=False) * (1 + kappa0 * float(beta_sq.max()))
    total = (L * stretch * injected + direct)[None, :] + second + spread
    return total, {"gd_product": float(L * stretch * gd[-1]),
                   "attention_rates": float(L * stretch * accumulated(d_attn)[-1]),
                   "attention_direct": float(direct.max()),
                   "m0_rates": float(L * stretch * eps0 * accumulated(r_norm)[-1]),
                   "second_order": float(second.max()), "spread": float(np.max(spread)),
                   "stretch": stretch, "max_h_lambda_g": step_curv}


#: What kept_preconditioner and attention_structure do not resolve by design
#: (``Claim.correction_only``): both read S on the reduction's path as S0 (1 + s_drift of the
#: growth of private_beta_sq), and S drifts by 1.4-2 % over these runs (their notes), so a
#: slip delta of either function moves S, and the prediction, by about 0.02 delta.  phase1
#: compares that drift's law with the trained model's S (its S parts).
_S_CORRECTION = {
    "s_drift": "enters as S = S0 (1 + s_drift): a 1.4-2 % correction to S, so a slip delta "
               "moves the prediction by about 0.02 delta; phase1 compares the drift's law "
               "with the trained model's S",
    "private_beta_sq": "enters only through s_drift of its growth along the reduction (the "
                       "same 1.4-2 % correction to S)",
}


@claim(
    statement="our derivation: the private-token class reduction with its dropped m1 M r term "
              "kept to first order (dbeta/dtau = r + (m1/S^2) beta (beta.r)) and S from "
              "Lemma F.10's drift, iterated on the run's own GD steps, gives each class's "
              "mean margin of the trained model at every record",
    source="our derivation from the paper's canonical dynamics (dbeta/dt = S r + m1 M r, dM/dt "
           "= beta r^T + r beta^T, dS/dt = 2 m1 beta.r: Appendix B, Lemma F.10), on the "
           "private-token class reduction",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": NO_PRECONDITIONER},
    control_description=NO_PRECONDITIONER.label,
    correction_only=_S_CORRECTION,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="A strengthening of ours, not a statement of the paper: found while repairing "
          "balancing's allowance (issue 36 item 3, session of 2026-12-05), where the kept "
          "term explained that claim's missing allowance.  Before this claim was written, "
          "diagnostic runs of the same map on the test and quick profiles' data sets 0 and 1 "
          "put the largest |margin - map| at 0.0005-0.0010 (test) and 0.0003-0.0005 (quick), "
          "against 0.036-0.127 for the reduction without the term; the allowance below is "
          "derived term by term (see _kept_allowance), none of it fitted to those numbers.  "
          "The control is the same map without the term: the near miss the claim is about.  "
          "Changes after runs: (1) the first test-profile run failed at record 0 (6e-8 "
          "against an allowance of 0): the initial attention is not exactly uniform, and the "
          "attention term now counts it.  (2) A referee read (no failure prompted it) found "
          "the attention term underived for the rates that built beta and the stretch 1 + "
          "kappa |beta|^2 a guess; the allowance was rebuilt (_kept_allowance: a linear-"
          "response estimate of the attention's and M0's rate perturbations from "
          "tc.canonical_velocity at the run's beta, the stretch exp(kappa0 |beta|^2_max), "
          "beta0 in the second order).  With it (session of 2026-12-05), the worst point is "
          "0.493 of its allowance at quick (0.218-0.493 over the four members of data sets 0 "
          "and 1) and 0.215 at the test profile; the control (the map without the term) "
          "reaches 3.8-4.5 at quick and 2.3-2.4 at the test profile.  (3) A second read "
          "made the stretch a bound and the GD check count the kept term's curvature: then "
          "0.489 at quick (control 4.33 at its worst point) and 0.210 at the test profile "
          "(control 2.36).  A nearer miss, the term "
          "as a clock only (dbeta/dtau = (1 + kappa |beta|^2) r), reaches 1.33-1.52 at quick "
          "(rejected) but 0.70-0.75 at the test profile (not): the smoke size does not "
          "resolve the term's direction, quick does.  Allowance terms at quick, member 0 of "
          "data set 0: GD product 0.0015, M0 rates 0.0024, attention rates 0.0011, attention "
          "direct 0.000065, second order 0.00066, spread 0.00032 (before a second referee "
          "read made the stretch exp(kappa0 (|beta|^2_max / 2 + 3 int |beta| |r| dtau)) and "
          "the GD check include the kept term's curvature).  The part's error is in units of "
          "each point's own "
          "allowance, so its tolerance is 1.  (4) The random-token spread is now the "
          "member's own measured sd_G (_g_sd), not theory.initial_output_sd's expectation: "
          "0.508 at quick (session of 2026-12-05).  Resolution (mutate --resolution, quick, "
          "9a7c63b): > 50 %, held by s_drift and private_beta_sq, which enter only through "
          "kappa's change with S's drift (theory.s_drift of the change of theory."
          "private_beta_sq): S drifts by 1.4-2.0 % over these runs, so their slips barely move "
          "the map.  Measured (session of 2026-12-06, quick, data sets 0 and 1, four members: "
          "_kept_map with the function's output scaled, against _kept_allowance point by "
          "point): x 1.05 shifts the prediction by at most 0.4-0.6 % of the allowance, x 1.5 "
          "by 4-6 %, while the members' worst error is 0.22-0.51 of it.  Seeing a 5 % slip "
          "would take a shift about 100 times larger: an S drift of order one, outside the "
          "first-order kept term this claim tests, or an allowance 100 times smaller at the "
          "same drift; the other eight functions it consumes are resolved at 1 % or enter "
          "its allowance only.  Since then s_drift and private_beta_sq are declared "
          "correction_only (_S_CORRECTION): on the run of tdcheck mutate cooccurrence --resolution "
          "(quick, commit ef0867a)"
          " the claim resolves 1 %, those two measured at > 50 % here and resolved at 1 % by "
          "phase1, which the declaration asks.",
)
def check_kept_preconditioner(params: dict, ctx: Context, *, theory) -> Evidence:
    """Class margins of the trained model against the preconditioned reduction's GD map."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    worst, details, digests = None, [], []
    for k in range(run.config.members):
        pred = _kept_map(theory, run, k)
        obs = _class_margins(run, k)
        allow, why = _kept_allowance(run, k)
        if not np.all(np.isfinite(allow)):
            return Evidence((Part.unmeasured(
                "class margins vs the kept reduction's GD map", 0.0,
                f"member {k}: the allowance is not finite (stretch {why['stretch']:.3g})",
                kind="simulation"),))
        if why["max_h_lambda_g"] > 2:
            return Evidence((Part.unmeasured(
                "class margins vs the kept reduction's GD map", 0.0,
                f"member {k}: h lambda g (1 + kappa0 |beta|^2) reaches "
                f"{why['max_h_lambda_g']:.3g} > 2, where GD "
                "is no longer non-expansive and the GD allowance does not hold",
                kind="simulation"),))
        err = np.abs(obs - pred)
        digests.append(_digest(pred, obs, err))
        # in units of each point's own allowance (which the run and tc fix, not the theory
        # under test): a non-finite prediction ranks worst, an error where the allowance is 0
        # too (0 / 0 reads 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(allow > 0, err / allow, np.where(err > 0, np.inf, 0.0))
        ratio = np.where(np.isfinite(err), ratio, np.inf)
        c, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        point = (float(pred[c, j]), float(obs[c, j]), float(ratio[c, j]))
        if worst is None or point[2] >= worst[2]:
            worst = point
        details.append({"member": k, "class": int(c), "record": int(j),
                        "tau": float(run.tau[k, j]), "error": float(err[c, j]),
                        "allowance": float(allow[c, j]), "max_error": float(err.max()), **why})
    return Evidence((Part(
        "class margins vs the kept reduction's GD map", *worst, 1.0,
        "max over members, classes and records of |mean margin of the class - the "
        "preconditioned reduction's (theory.preconditioned_private_system, kappa from "
        "theory.s_drift) GD map on the member's own tau steps| / its allowance at that point "
        "(so the tolerance is 1); predicted and observed are the margins at the worst point; "
        "the allowance from the run and the paper's theory alone (_kept_allowance: GD's "
        "product term, the attention's and M0's rate perturbations, second order in kappa "
        "|beta|^2, the S drift and beta0, the random-token G(0) spread), the same for check "
        "and control",
        details={"members": details, "member_values": digests}, kind="simulation"),))


# ---------------------------------------------------------------------- 6b four-class tracking
#: the tau window of four_class_tracks (our choice): Phase 1 and the I2/I3 hump of Lemma 4.3
#: (the four-class system's T_0.5 from G = 0 lies inside it; details print it per run)
FOUR_CLASS_WINDOW = 7.0
#: max |g''| of g(q) = 1/(1 + e^q): 1/(6 sqrt 3), at q = +-log(2 + sqrt 3) (the second-order
#: remainder of the random tokens' margin shift); |g'| <= 1/4
G2_MAX = 1.0 / (6.0 * math.sqrt(3.0))


def _frozen_mu3_system(w=None):
    """The four-class system with dG3/dtau = 0 (Lemma 4.2's initial cancellation read as
    holding along the path): the near miss of ``four_class_tracks``."""
    from theory.flow import ReducedSystem

    base = tc.class_system()
    rhs = base.rhs.as_mutable()
    rhs[2] = sp.S.Zero
    return ReducedSystem(base.state, base.params, rhs.as_immutable(),
                         name=base.name + ", mu3 frozen")


def _frozen_mu3_trajectory(taus, G0=(0.0, 0.0, 0.0), w=None):
    """:func:`_frozen_mu3_system` integrated as theory.class_trajectory integrates its own."""
    taus = np.asarray(taus, dtype=float)
    f = _frozen_mu3_system().lambdify()
    sol = solve_ivp(lambda t, y: np.asarray(f(0.0, y), dtype=float).reshape(-1),
                    (0.0, float(taus[-1])), np.asarray(G0, dtype=float), method="LSODA",
                    t_eval=taus, rtol=1e-10, atol=1e-12)
    return sol.y


MU3_FROZEN = _Theory("mu3 frozen: theory.class_system and class_trajectory with dG3/dtau = 0 "
                     "(Lemma 4.2's initial cancellation read as holding along the path)",
                     (("class_system", _frozen_mu3_system),
                      ("class_trajectory", _frozen_mu3_trajectory)))


def _richardson(run: nc.CoRun, half: nc.CoRun, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Member k's G(mu1..mu3) extrapolated to the flow, 2 G(h/2) - G(h) on the run's records
    (the half-step run read at the same tau, linear in tau), [T, 3]; and |G(h) - G(h/2)| [T],
    GD's own step dependence: to leading order the error of G(h/2) itself, which bounds the
    extrapolation's O(h^2) remainder whenever the expansion in h holds (not checked here,
    so the whole of it is allowed, not the quarter that canonical_closure tests)."""
    G = run.beta[k, :, :3]
    Gh = np.stack([np.interp(run.tau[k], half.tau[k], half.beta[k, :, i]) for i in range(3)],
                  axis=1)
    return 2 * Gh - G, np.linalg.norm(G - Gh, axis=1)


def _class_layout(run: nc.CoRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pi_k, z_k [4, 3], y_k) of the four classes read off the run's data (proportions, the
    counts of mu1..mu3 in a sample of the class, its label), so that the allowances below
    take nothing from the theory under test."""
    tok, types, labels = run.data.tokens, run.data.types, run.data.labels
    Z3 = np.stack([(tok == i).sum(axis=1) for i in range(3)], axis=1).astype(float)
    pi = np.array([np.mean(types == c) for c in range(4)])
    z = np.array([Z3[types == c][0] for c in range(4)])
    y = np.array([float(labels[types == c][0]) for c in range(4)])
    return pi, z, y


def _random_token_forcing(run: nc.CoRun, k: int) -> np.ndarray:
    """A bound on |r_full - r_class| [T] at each record of member k, from its random tokens
    (our derivation): with uniform attention the special tokens move as the four-class flow
    except that sample s's margin is q_k(G) + y_s rho_s, rho_s the sum of its random tokens'
    G.  Per class the mean of g(q + y rho) - g(q) is at most |g'| |mean rho| + max|g''|/2
    mean rho^2 (|g'| <= 1/4, max|g''| = G2_MAX); the class sum with weights pi_k z_k, in
    the Euclidean norm.  rho is read off the run (each sample's own random tokens), and the
    class layout too (:func:`_class_layout`): the bound is the run's, the same for check and
    control."""
    tok, types = run.data.tokens, run.data.types
    beta = run.beta[k]  # [T, d]
    pi, z, _ = _class_layout(run)
    rho = np.where(tok[None] >= 3, beta[:, tok], 0.0).sum(axis=2)  # [T, n]
    out = np.zeros((beta.shape[0], 3))
    for c in range(4):
        r = rho[:, types == c]
        ek = 0.25 * np.abs(r.mean(axis=1)) + 0.5 * G2_MAX * (r ** 2).mean(axis=1)
        out += pi[c] * np.outer(ek, z[c])
    return np.linalg.norm(out, axis=1)


def _attention_forcing(run: nc.CoRun, k: int) -> np.ndarray:
    """A bound on the rate error of non-uniform attention [T] (our derivation): the output is
    F = sum_h G(x_h) w_h with token weights w_h = sum_l p_hl (1 at uniform attention), so
    the margins move by at most L max|beta| max|w - 1|, which moves g by a quarter of that,
    and each special token's weight in the gradient by max|w - 1| (g <= 1); both reach
    coordinate j of the rate through the fraction of samples that hold token j, so over
    mu1..mu3 they count |pi z| (the norm of those fractions, :func:`_class_layout`) times.
    max|w - 1| <= its value at the start (the initial scores are not exactly 0) plus L times
    the recorded max |p - p(0)| (numerics' max_dp), running maximum."""
    L = run.data.tokens.shape[1]
    WV = run.initial["WV"]
    with torch.no_grad():
        _, P0 = nc.forward({name: v[k] for name, v in run.initial.items()},
                           torch.as_tensor(run.data.tokens, device=WV.device))
    wdev = (float((P0.sum(2) - 1.0).abs().max())
            + L * np.maximum.accumulate(run.max_dp[k]))
    bmax = np.abs(run.beta[k]).max(axis=1)
    pi, z, _ = _class_layout(run)
    return wdev * float(np.linalg.norm(pi @ z)) * (L * bmax / 4 + 1.0)


def _upper_integral(rate: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """int_0^tau rate on the records as an upper sum (the larger end of every interval)."""
    step = np.maximum(rate[1:], rate[:-1]) * np.diff(taus)
    return np.concatenate([[0.0], np.cumsum(step)])


def _preconditioner_forcing(run: nc.CoRun, k: int) -> np.ndarray:
    """A bound on the m1 M r term's rate error [T] (our derivation): dbeta/dtau = r + (m1/S)
    M r and dM/dtau = (beta r^T + r beta^T)/S, so |(m1/S) M r| <= eps |r|, eps = m1
    (lambda_max(M0) + int 2 |beta| |r| / S dtau) / S, with S the recorded S and |r| <=
    |dbeta/dtau| / (1 - eps) (the whole beta's speed, every token, read off the records;
    eps is of order 1e-3 here, and the integral takes the speed alone, a relative eps low).
    M0 from the member's initial W_V (:func:`_m0_eps`)."""
    taus, beta, S = run.tau[k], run.beta[k], run.S[k]
    speed = np.linalg.norm(np.diff(beta, axis=0), axis=1) / np.diff(taus)
    speed = np.concatenate([[speed[0]], np.maximum(speed[1:], speed[:-1]), [speed[-1]]])
    grow = _upper_integral(2 * np.linalg.norm(beta, axis=1) * speed / S, taus)
    eps = (_m0_eps(run, k) * float(S[0]) + run.config.m1 * grow) / S
    with np.errstate(divide="ignore"):
        return np.where(eps < 1, eps * speed / (1 - eps), np.inf)


def _hessian_bound(run: nc.CoRun) -> float:
    """Lipschitz constant of the four-class rate in G: the flow's Hessian is sum_k pi_k g'(q_k)
    z_k z_k^T <= (1/4) lambda_max(sum_k pi_k z_k z_k^T), with the class layout read off the
    run's data (:func:`_class_layout`)."""
    pi, z, _ = _class_layout(run)
    return 0.25 * float(np.linalg.eigvalsh((z.T * pi) @ z).max())


def _four_class_allowance(run: nc.CoRun, k: int, gd: np.ndarray, path: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, dict]:
    """(allowance on |G_full - G_class| [T], bound on the rate error [T], the allowance's
    terms [T] each).  The four-class flow is the gradient flow of a convex loss, so two of its
    solutions never move apart and a forcing e moves a solution by at most int |e| dtau (our
    derivation); the forcings: the random tokens (:func:`_random_token_forcing`), attention
    (:func:`_attention_forcing`), the m1 M r term (:func:`_preconditioner_forcing`); plus
    GD's step dependence (:func:`_richardson`) and the ODE solver's 1e-9 relative."""
    taus = run.tau[k]
    forcing = {"random_tokens": _random_token_forcing(run, k),
               "attention": _attention_forcing(run, k),
               "preconditioner": _preconditioner_forcing(run, k)}
    terms = {name: _upper_integral(f, taus) for name, f in forcing.items()}
    terms.update(gd=gd, solver=1e-9 * np.linalg.norm(path, axis=1))
    allow = sum(terms.values())
    return allow, sum(forcing.values()) + _hessian_bound(run) * allow, terms


def _initial_rate_predicted(theory, run: nc.CoRun, k: int) -> np.ndarray:
    """dG/dtau at member k's G(0): theory.initial_rates (the rates at G = 0) carried to G(0)
    to first order by the four-class system's Jacobian at 0 (theory.class_system).  A
    prediction that is not three finite numbers raises InadmissibleTheory (a failed part, not
    an error)."""
    G0 = run.beta[k, 0, :3]
    try:
        sys_ = theory.class_system()
        J0 = np.array(sys_.jacobian().subs({s: 0 for s in sys_.state}), dtype=float)
        r0 = np.array([float(x) for x in theory.initial_rates()], dtype=float)
        pred = r0 + J0 @ G0
    except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise InadmissibleTheory(f"no initial rates from the theory: {exc}") from exc
    if pred.shape != (3,) or not np.all(np.isfinite(pred)):
        raise InadmissibleTheory(f"initial rates not three finite numbers: {pred}")
    return pred


def _initial_rate_observed(run: nc.CoRun, half: nc.CoRun, k: int, path: np.ndarray,
                           rate_allow: np.ndarray) -> tuple[np.ndarray, float]:
    """(observed, allowance) of dG/dtau at tau = 0 for member k: the one-sided three-point
    difference of the extrapolated path.  Allowance (the run's alone): the
    rate-error bound at 0, the Taylor remainder max|g''|/2 sum_k pi_k |z_k| q_k(G0)^2, twice
    the difference formula's error h1 h2 |G^(3)|/6 (G^(3) from the third divided difference
    of records 0..3) and GD's own step dependence of that difference."""
    taus = run.tau[k]
    G0 = run.beta[k, 0, :3]
    h1, h2 = taus[1] - taus[0], taus[2] - taus[0]

    def three_point(X: np.ndarray) -> np.ndarray:  # d/dtau at taus[0], exact on quadratics
        return (-(h1 + h2) / (h1 * h2) * X[0] + h2 / (h1 * (h2 - h1)) * X[1]
                - h1 / (h2 * (h2 - h1)) * X[2])

    obs = three_point(path)
    G = run.beta[k, :, :3]
    Gh = np.stack([np.interp(taus[:3], half.tau[k], half.beta[k, :, i]) for i in range(3)],
                  axis=1)
    gd = float(np.linalg.norm(three_point(G[:3]) - three_point(Gh)))
    pi, z, y = _class_layout(run)
    taylor = 0.5 * G2_MAX * float(np.sum(pi * np.linalg.norm(z, axis=1) * (y * (z @ G0)) ** 2))
    # the third divided difference f[t0..t3] is G^(3)/6 at some point of the stencil, so the
    # formula's error h1 h2 G^(3)/6 is h1 h2 |f[t0..t3]|; twice that for G^(3)'s change
    # across the stencil (a margin, not a bound: the records carry no G^(4))
    t = taus[:4]
    d1 = np.diff(path[:4], axis=0) / np.diff(t)[:, None]
    d2 = np.diff(d1, axis=0) / (t[2:] - t[:-2])[:, None]
    d3 = (d2[1] - d2[0]) / (t[3] - t[0])
    fd = 2 * h1 * h2 * float(np.linalg.norm(d3))
    return obs, float(rate_allow[0]) + taylor + fd + gd


@claim(
    statement="with many samples (n = 600 at quick, private random tokens) the full model's "
              "special-token values G(mu1), G(mu2), G(mu3) follow the four-class system "
              "(theory.class_trajectory from the member's own G(0)) to tau = 7, within a "
              "derived bound, and start at its initial rates (theory.initial_rates, Lemmas "
              "4.1-4.2, carried to G(0) by the system's Jacobian)",
    source="the four-class system of Lemma F.6's proof; Lemmas 4.1-4.2 (initial rates); "
           "Theorem E.15 and Lemma F.14 (random tokens negligible); the bound on what the "
           "reduction drops is our derivation",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": MU3_FROZEN},
    control_description=MU3_FROZEN.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="A claim of ours (issue 36: the four-class functions had no run comparison that "
          "resolves them; the other claims compare the run with the private-token "
          "reduction).  Design, fixed before the first run of this claim: n from the "
          "first-order size of the random tokens' forcing, ~ L tau / (2 n) of the "
          "displacement at tau (a few per cent at tau = 7 for n = 600, L = 5), so that a 5 % "
          "error in the four-class system is expected to stand above the bound (tdcheck "
          "mutate --resolution measures it); m = 128 and m1 = 8 (Condition 1: m >> m1, "
          "sigma0 = 0.05/sqrt(L m) as in the row's runs; m = 128 rather than the row's 512 "
          "for cost, since in tau the special tokens' flow does not depend on m at leading "
          "order and the attention and m1 M r terms that do are in the bound); equal "
          "tau-steps 0.025 and a half-step twin for Richardson extrapolation; two data sets "
          "(seeds 0 and 1), two initialisations each.  The bound is derived term by term "
          "(_four_class_allowance), none of it fitted.  The control freezes mu3 in "
          "theory.class_system and class_trajectory (Lemma 4.2's initial cancellation read "
          "as holding along the path).  Runs of the session of 2026-12-05 (quick): the first "
          "version put the path at 0.70 and 0.74 of its bound and the initial rates at 0.62 "
          "and 0.68 (seeds 0, 1).  A referee read then found the bound too small in three "
          "terms and fixed them before any result was stored: attention measured from "
          "uniform weights (not from the start), the m1 M r term bounded with M's growth "
          "(not the mean clock tau_eff/tau), and GD's whole step dependence allowed (not a "
          "quarter, whose premise the check does not test); the class layout of the "
          "allowances read off the data, not the theory.  With those: path 0.59 and 0.64, "
          "initial rates 0.51 and 0.57 at quick (the worst point is the first record: "
          "error 0.6 % of the displacement against a bound of 1.0 %), 0.62 and 0.57 at "
          "the test profile; the control fails both parts (path 35.9 of its bound, initial "
          "rates 0.0164 against 0.0022 at quick; 11.6 and 0.0026 against 0.0025 at the "
          "test profile).  The path decides the control: on the initial rates the frozen "
          "system differs only by its Jacobian's row at G(0), -(G1 + G2)/6 - G3/4 of a "
          "member's random G(0), so that part's rejection is marginal and depends on the "
          "draw.  The 5 % mutants of class_trajectory, class_velocity, "
          "class_system, class_loss, class_losses and initial_rates (16, run one by one "
          "through this check) all fail it, the nearest class_system's rhs[2] x 1.05 at 1.27 "
          "of the path's bound.  Lemma 4.3's T_0.5 was a third part in the first version, "
          "taken out before any commit: the rate-error bound at the crossing (0.0054-0.0066 "
          "against rates of 0.083) over the slope of -dG3/dtau - max(dG1, dG2)/dtau there "
          "(0.015) gave an allowance of 0.71-0.86 on a T_0.5 of 3.3-3.7, which no "
          "few-per-cent error in theory.t_half could cross (the observed T_0.5 agreed within "
          "0.01-0.02); a tighter bound there is open.",
)
def check_four_class_tracks(params: dict, ctx: Context, *, theory) -> Evidence:
    """G(mu1..mu3) of full GD (Richardson-extrapolated) against the four-class system, and its
    initial rates."""
    cfg = _sized(ctx, "four_class", int(params.get("seed", 0)))
    run, half = _run(cfg, ctx), _run(_half_step(cfg), ctx)
    worst_path, worst_rate = _NONE_YET, _NONE_YET
    rate_tols, details, why, digests = [], [], [], []
    for k in range(cfg.members):
        sel = run.tau[k] <= FOUR_CLASS_WINDOW
        taus = run.tau[k][sel]
        path, gd = _richardson(run, half, k)
        allow, rate_allow, terms = _four_class_allowance(run, k, gd, path)
        last = int(np.nonzero(sel)[0][-1])
        path, allow, rate_allow = path[sel], allow[sel], rate_allow[sel]
        try:
            pred = np.asarray(theory.class_trajectory(taus, run.beta[k, 0, :3]), dtype=float)
        except (InadmissibleTheory, TypeError, ValueError, ArithmeticError) as exc:
            pred = np.full((3, taus.size), np.nan)
            why.append(f"member {k}: no four-class trajectory ({exc})")
        if pred.shape != (3, taus.size):  # the solver stopped short: a wrong system
            why.append(f"member {k}: the four-class trajectory stops at "
                       f"{pred.shape[-1] if pred.ndim else 0} of "
                       f"{taus.size} records")
            err = np.full(taus.size, np.inf)
        else:
            err = np.linalg.norm(path - pred.T, axis=1)
        err = np.where(np.isfinite(err), err, np.inf)
        digests.append(_digest(pred, path, err))
        ranks = np.array([_rank(e, a) for e, a in zip(err, allow, strict=True)])
        j = int(np.argmax(ranks))
        disp = float(np.linalg.norm(path[j] - path[0]))
        worst_path = _worse((0.0, float(ranks[j]), float(ranks[j]), 1.0), worst_path)
        o0, a0 = _initial_rate_observed(run, half, k, path, rate_allow)
        try:
            p0 = _initial_rate_predicted(theory, run, k)
            e0 = float(np.linalg.norm(o0 - p0))
        except InadmissibleTheory as exc:
            p0, e0 = np.full(3, np.nan), math.inf
            why.append(f"member {k}: {exc}")
        worst_rate = _worse((float(p0[0]), float(o0[0]), e0, a0), worst_rate)
        rate_tols.append(a0)
        details.append({"member": k, "record": j, "tau": float(taus[j]),
                        "error": float(err[j]), "allowance": float(allow[j]),
                        "error_over_displacement": _quotient(err[j], disp),
                        "allowance_over_displacement": _quotient(allow[j], disp),
                        "allowance_terms_at_worst": {n: float(v[j]) for n, v in terms.items()},
                        "allowance_terms_at_window_end": {n: float(v[last])
                                                          for n, v in terms.items()},
                        "initial_rate": {"predicted": p0.tolist(), "observed": o0.tolist(),
                                         "allowance": a0}})
    reason = (" (" + "; ".join(why) + ")") if why else ""
    return Evidence((
        Part("path", *worst_path,
             "max over members and records (tau <= 7) of |G_full - G_class| / its allowance "
             "(so the tolerance is 1): G_full the Richardson extrapolation 2 G(h/2) - G(h) of "
             "mu1..mu3, G_class theory.class_trajectory from the member's G(0); allowance "
             "(_four_class_allowance, the run's alone) int |forcing| dtau (the four-class "
             "flow is a convex gradient flow: two solutions never separate) over the random "
             "tokens' margin shifts, attention and the m1 M r term, plus GD's step dependence "
             "|G(h) - G(h/2)| and the solver's 1e-9" + reason,
             details={"members": details, "member_values": digests}, kind="simulation"),
        _worst_member_part(Part(
            "initial_rates", *worst_rate,
            "|dG/dtau(0) - predicted| (Euclidean over mu1..mu3; predicted and observed show "
            "dG1/dtau) at the worst member: theory.initial_rates carried to G(0) by the "
            "four-class Jacobian; observed the three-point difference of the extrapolated "
            "path; allowance (_initial_rate_observed, the run's alone): the rate-error bound at tau = "
            "0, the Taylor remainder, the difference formula's error and GD's step dependence"
            + reason,
            kind="simulation"), rate_tols, worst_rate),
    ), {"n": cfg.n, "window": FOUR_CLASS_WINDOW})


# ---------------------------------------------------------------------- 7 ratio limit, 8 loss law
#: What ratio_limit is only nearly blind to a multiple of (``Claim.shape_approx``): its parts
#: judge -dG3/dG1, a ratio of the reduction's coordinates at the run's end, at the run's own
#: tau_eff.  A positive multiple of the reduction's right-hand side is a change of its clock;
#: a common multiple lambda of the four margins (linear in the state) is the loss at lambda
#: Y, whose flow is nearly the same path in U = lambda Y on a clock lambda^2 faster (nearly:
#: the member's start is not scaled by lambda).  Both move the late ratio only by its slow
#: drift along the clock, so this is an approximate insensitivity, not a free multiple:
#: tdcheck mutate --resolution tilts them (a direction error) and asks another claim to
#: resolve their whole-output slip at 5 % (phase1, sandwich and phase2_margins did, at 1 %,
#: on 9a7c63b).
_RATIO_SHAPE_APPROX = {
    "private_system": "a positive multiple of the reduction's right-hand side is a change "
                      "of clock, which moves the run-end ratio -dG3/dG1 only by its slow "
                      "drift along the clock (a real but small error of what is compared); "
                      "phase1, sandwich and phase2_margins resolve the clock",
    "private_margins": "a common multiple of the margins (linear in the state) gives nearly "
                       "the same path in a rescaled state on a rescaled clock (the start is "
                       "not rescaled): the ratio moves only by its slow drift along the "
                       "clock; phase1, sandwich and phase2_margins resolve the margins",
}


@claim(
    statement="-dG3/dG1 follows our reduction at the end of the run and tends to R_inf = "
              "-beta*_3/beta*_1 of the training set's max-margin problem (3/2 at class level, "
              "less with private tokens), inside (1, 2) under Condition 1; R_inf < 1 when n is "
              "small against L",
    source="Lemma F.6 (R* in (1, 2)); R_inf from the max-margin problem and the finite-tau "
           "value from the private-token class reduction are our derivation",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": CLASS_LEVEL},
    control_description=CLASS_LEVEL.label,
    shape_approx=_RATIO_SHAPE_APPROX,
    cost="slow",
    examples=(_PIN, _PIN1, Example({"seed": 0, "n": 6, "L": 12},
                                   via="boundary case: n < L^2 breaks Condition 1 (R_inf < 1)")),
    notes="n = 6, L = 12 breaks Condition 1 (n >= L^2): private tokens dominate, the max-margin "
          "R_inf < 1 there and Lemma F.6's (1, 2) is not claimed.  Issue 36 item 3 (R_inf "
          "near its allowance): on four more data sets (quick, --seed 2 and --seed 4, data "
          "sets 2-5, commit 9d95c25) R_inf's worst example is 0.00238 / 0.00245 and "
          "0.00241 / 0.00243, R_finite_tau's 0.00028 / 0.00035 and 0.00032 / 0.00034: every "
          "data set sits at 97-99 % of R_inf's allowance.  That is the part's structure, not "
          "a drift: its error |R / R_inf - 1| is mostly the reduction's own distance from its "
          "limit, which is also the allowance's largest term (gap), so its slack is "
          "R_finite_tau's.  Resolution (mutate --resolution, quick, 9d95c25): 50 %, held by "
          "private_system and private_margins: a rescaling of the reduction's time barely "
          "moves a late ratio, at any size (they are resolved at 1 % by phase1, sandwich "
          "and phase2_margins).  The claim now declares both shape_approx (tilted; their "
          "whole-output slips must be resolved elsewhere at 5 %): on the run of tdcheck mutate cooccurrence --resolution "
          "(quick, commit ef0867a)"
          " it resolves 1 %, both tilts at 1 % and both whole-output slips at 1 % by "
          "phase1, sandwich and phase2_margins",
)
def check_ratio_limit(params: dict, ctx: Context, *, theory) -> Evidence:
    """-dG3/dG1 at the end of the run against the reduction and R_inf (our derivation)."""
    n, L = int(params.get("n", 60)), int(params.get("L", 5))
    run = _run(_main_config(ctx, int(params.get("seed", 0)), n, L), ctx)
    cfg = run.config
    mm = theory.sample_max_margin(run.data.tokens, run.data.labels, cfg.vocabulary)
    r_inf = float(mm.R_inf)
    g = cfg.growth
    fin = _NONE_YET
    inf = _NONE_YET
    inf_tols = []
    for k in range(cfg.members):
        G = run.beta[k, :, :3]
        R = float(-(G[-1, 2] - G[-2, 2]) / (G[-1, 0] - G[-2, 0]))
        t0, t1 = float(run.tau_eff[k, -2]), float(run.tau_eff[k, -1])
        at = [0.0, t0, t1, t1 * (1 + g / 2)]
        Y = _private(theory, cfg, at, _start(run, k))
        R_pred = float(-(Y[2, 2] - Y[2, 1]) / (Y[0, 2] - Y[0, 1]))
        # the allowance is the paper's reduction's (tc), the same for check and control: GD
        # with a step growing by g per step runs ahead of the flow by a relative g/2 in
        # time (see loss_constant); the ratio's change over that shift, and the m1 M r
        # preconditioner: a component of weight tau_eff/tau - 1 along beta pulls -dG3/dG1
        # towards -G3/G1
        Yp = Y if theory is tc else _private(tc, cfg, at, _start(run, k))
        R_tc = float(-(Yp[2, 2] - Yp[2, 1]) / (Yp[0, 2] - Yp[0, 1]))
        lag = abs(float(-Yp[2, 3] / Yp[0, 3]) - float(-Yp[2, 2] / Yp[0, 2])) / R_tc
        tilt = (t1 / float(run.tau[k, -1]) - 1) * abs(float(-G[-1, 2] / G[-1, 0]) / R - 1)
        tol = lag + tilt + g ** 2
        e = abs(R / R_pred - 1)
        fin = _worse((R_pred, R, e, tol), fin)
        far = _private(tc, cfg, [0.0, 1e15, 1.001e15], _start(run, k))
        gap = abs(R_tc / float(-(far[2, 2] - far[2, 1]) / (far[0, 2] - far[0, 1])) - 1)
        e = abs(R / r_inf - 1)
        inf_tols.append(tol + gap)
        inf = _worse((r_inf, R, e, tol + gap), inf)
    parts = [
        _worst_member_part(Part("R_finite_tau", fin[0], fin[1], fin[2], fin[3],
             "-dG3/dG1 over the last record interval against the private-token reduction's "
             "over the same tau_eff interval (relative); allowance: the GD time lead g/2 "
             "(g = step growth), the m1 M r tilt towards -G3/G1 (weight tau_eff/tau - 1) and "
             "g^2 (on the paper's reduction: the same for check and control)",
             details={"tau_end": float(np.min(run.tau[:, -1]))}, kind="simulation"), picked=fin),
        _worst_member_part(Part(
            "R_inf", inf[0], inf[1], inf[2], inf[3],
            "R_inf of theory.sample_max_margin; allowance: the paper's reduction's own distance "
            "from its value at tau = 1e15 (its limit, computed without the max margin) plus "
            "the R_finite_tau allowance", kind="simulation"), inf_tols, inf),
    ]
    # the class-level constants (theory.class_max_margin, exact KKT enumeration) against an
    # independent numeric solution (SLSQP) of the same problem on the rows y_k z_k
    cm = theory.class_max_margin()
    rows = np.array([[y * z for z in zs] for zs, y in zip(theory.CLASS_TOKENS,
                                                           theory.CLASS_LABELS, strict=True)],
                    dtype=float)
    sol = minimize(lambda b: (b @ b, 2 * b), np.zeros(3), jac=True, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda b: rows @ b - 1,
                                 "jac": lambda b: rows}],
                   options={"ftol": 1e-15, "maxiter": 500})
    num = np.concatenate([[1 / float(sol.x @ sol.x)], sol.x, [-sol.x[2] / sol.x[0]]])
    ex = np.array([float(cm.gamma_sq), *[float(b) for b in cm.beta], float(cm.R_inf)])
    cls_err = float(np.max(np.abs(ex / num - 1)))
    parts.append(Part("class_level_R_inf", float(num[-1]), float(ex[-1]), cls_err, 1e-6,
                      "class level (random tokens ignored): theory.class_max_margin's gamma*^2, "
                      "beta* and R_inf = 3/2 against an independent numeric (SLSQP, ftol 1e-15) "
                      "solution of the hard-margin problem on the rows y_k z_k; largest "
                      "relative difference; allowance 1e-6 (SLSQP's accuracy at ftol 1e-15)", kind="symbolic"))
    if n >= L**2:  # Condition 1 (n >= Omega~(L^2)): where Lemma F.6 is stated
        parts.append(Part("in_1_2", 1.5, fin[1], max(0.0, 1 - fin[1], fin[1] - 2), 0.0,
                          "Lemma F.6: the contractive root R* lies in (1, 2)", kind="simulation"))
    return Evidence(tuple(parts), {"gamma_sq": float(mm.gamma_sq), "n": n, "L": L})


@claim(
    statement="Theorem F.8: for t in [T1, T2], L(t) = 1/(C (t - T1) + 1/L(T1)) with "
              "C = Theta(sigma1^2 m m1): 1/L - 1/L(T1) grows linearly in t - T1",
    source="Theorem F.8 (from dL/dt = -Theta(S) L^2); the law's shape is tested, its constant "
           "only reported in units of sigma1^2 m m1 (the paper gives its order)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": CUBIC_LAW},
    control_description=CUBIC_LAW.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="split from the former loss_law, whose statement named S t but whose check used "
          "tau_eff: this claim is the paper's law (order of the constant, 1/t shape); the "
          "constant 1/gamma*^2 is our strengthening, the separate claim loss_constant",
)
def check_loss_law(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem F.8's shape: the law anchored at T1 with its rate fitted on [T1, t_end/10]
    predicts L(t_end); the local exponent of 1/L - 1/L(T1) in t - T1 over the last decade."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    theta = cfg.s1 ** 2 * cfg.m * cfg.m1  # the paper's sigma1^2 m m1

    def shape(t, loss, i1):
        """(anchored relative error at the end, predicted slope, observed slope) of a curve."""
        ia = int(np.searchsorted(t, t[i1] + 0.1 * (t[-1] - t[i1])))
        C = (1 / loss[ia] - 1 / loss[i1]) / (t[ia] - t[i1])
        law = float(theory.loss_law(float(t[-1]), float(C), 1, float(t[i1]), float(loss[i1])))
        sel = t >= t[i1] + 0.1 * (t[-1] - t[i1])
        x = t[sel] - t[i1]
        lw = np.array([float(theory.loss_law(float(v), float(C), 1, float(t[i1]),
                                             float(loss[i1]))) for v in t[sel]])
        pred_slope = float(np.polyfit(np.log(x), np.log(1 / lw - 1 / loss[i1]), 1)[0])
        obs_slope = float(np.polyfit(np.log(x), np.log(1 / loss[sel] - 1 / loss[i1]), 1)[0])
        return float(loss[-1] / law - 1), pred_slope, obs_slope, float(C)

    anch, slope, rates = _NONE_YET, _NONE_YET, []
    for k in range(cfg.members):
        i1 = _classified(run, k)
        t, loss = run.time[k], run.loss[k]
        e_obs, s_pred, s_obs, C = shape(t, loss, i1)
        rates.append(C / theta)
        # the same procedure on the reduced system (in tau, on the run's record times): how
        # far the exact reduced dynamics departs from the law at these times; plus the
        # relative change of S over the window (C is proportional to S)
        tau = run.tau[k]
        w = np.array([float(x) for x in theory.WEIGHTS])
        Y = _private(theory, cfg, tau, _start(run, k))
        lr = w @ theory.private_losses(Y, cfg.L)
        # the reduction's departure from linear growth of 1/L, measured without the law: the
        # line through 1/L at T1 and at the anchor, extrapolated to the end; the local
        # exponent of 1/L - 1/L(T1) against the exponent 1 of a line
        ia = int(np.searchsorted(tau, tau[i1] + 0.1 * (tau[-1] - tau[i1])))
        line = np.polyval(np.polyfit(tau[[i1, ia]], 1 / lr[[i1, ia]], 1), tau[-1])
        e_red = float(lr[-1] * line - 1)
        sel = tau >= tau[i1] + 0.1 * (tau[-1] - tau[i1])
        s_red = float(np.polyfit(np.log(tau[sel] - tau[i1]),
                                 np.log(1 / lr[sel] - 1 / lr[i1]), 1)[0])
        ds = abs(float(run.S[k, -1] / run.S[k, i1]) - 1)
        tol_a = abs(e_red) + ds
        tol_s = abs(s_red - 1) + ds
        anch = _worse((0.0, e_obs, abs(e_obs), tol_a), anch)
        slope = _worse((s_pred, s_obs, abs(s_obs - s_pred), tol_s), slope)
    return Evidence((
        _worst_member_part(Part("anchored_law", anch[0], anch[1], anch[2], anch[3],
             "Theorem F.8 (theory.loss_law) anchored at T1 (first classification) with C fitted "
             "on the first tenth of [T1, t_end]: relative error at t_end; allowance: the same "
             "procedure's error on the private-token reduction (its finite-time departure "
             "from the law) plus the relative change of S after T1", kind="simulation"), picked=anch),
        _worst_member_part(Part("slope", slope[0], slope[1], slope[2], slope[3],
             "exponent of 1/L - 1/L(T1) in t - T1 over the last 90 % of [T1, t_end]: the law's "
             "(theory.loss_law, 1) against the run's; allowance: the reduction's departure "
             "measured the same way plus the relative change of S", kind="simulation"), picked=slope),
    ), {"C_over_sigma1sq_m_m1": rates})


@claim(
    statement="our strengthening of Theorem F.8: L(t) tau_eff(t) follows the private-token "
              "reduction's L tau and tends to 1/gamma*^2 of the training set's max margin "
              "(17 at class level, 8.22 with private tokens), tau_eff = int (S + m1 b^T M b) dt",
    source="Theorem F.8 (order only); the constant and the preconditioned time tau_eff are our "
           "derivation (dbeta/dt = (S + m1 M) r, implicit bias of the logistic loss)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": CLASS_LEVEL},
    control_description=CLASS_LEVEL.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="the GD correction: on an exponential tail, x = e^beta obeys x_{k+1} = x_k "
          "exp(h_k c/x_k) under GD against dx/dt = c under the flow, so steps growing "
          "geometrically by g run ahead by sum (h c)^2/(2x) = (g/2) x: L tau lower by g/2 "
          "(our derivation); the prediction carries it",
)
def check_loss_constant(params: dict, ctx: Context, *, theory) -> Evidence:
    """L tau_eff at the end of the run against the reduction (with the GD lead) and 1/gamma*^2."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    mm = theory.sample_max_margin(run.data.tokens, run.data.labels, cfg.vocabulary)
    gs = float(mm.gamma_sq)
    g = cfg.growth
    # the returned solution against the hard-margin problem on the run's own token counts:
    # every margin >= 1 with equality on the support (min = 1), and gamma*^2 |beta*|^2 = 1
    bstar = np.asarray(mm.beta, dtype=float)
    Z = np.zeros((cfg.n, cfg.vocabulary))
    np.add.at(Z, (np.repeat(np.arange(cfg.n), cfg.L), run.data.tokens.ravel()), 1.0)
    kkt = max(abs(float(np.min(run.data.labels * (Z[:, : bstar.size] @ bstar))) - 1),
              abs(gs * float(bstar @ bstar) - 1))
    w = np.array([float(x) for x in theory.WEIGHTS])
    fin = _NONE_YET
    asym = _NONE_YET
    s_only = []
    for k in range(cfg.members):
        te = float(run.tau_eff[k, -1])
        obs = float(run.loss[k, -1]) * te
        s_only.append(float(run.loss[k, -1] * run.tau[k, -1]))
        Y = _private(theory, cfg, [0.0, te], _start(run, k))
        red = float(w @ theory.private_losses(Y, cfg.L)[:, -1]) * te
        pred = red * (1 - g / 2)
        # allowance: tau_eff/tau - 1 bounds the anisotropy of the preconditioner S + m1 M
        # (the rate along r lies between S and S + m1 b^T M b), plus g^2 (second-order GD)
        tol = float(run.tau_eff[k, -1] / run.tau[k, -1]) - 1 + g ** 2
        e = abs(obs / pred - 1)
        fin = _worse((pred, obs, e, tol), fin)
        far = _private(theory, cfg, [0.0, 1e15], _start(run, k))
        gap = abs(red / (float(w @ theory.private_losses(far, cfg.L)[:, -1]) * 1e15) - 1)
        e = abs(obs * gs - 1)
        asym = _worse((1 / gs, obs, e, tol + gap + g / 2), asym)
    return Evidence((
        _worst_member_part(Part("finite_tau", fin[0], fin[1], fin[2], fin[3],
             "L tau_eff at tau_end against the private-token reduction's L tau at the same "
             "time, times (1 - g/2) for GD's lead (g = step growth); relative; allowance "
             "tau_eff/tau - 1 (preconditioner anisotropy) + g^2", kind="simulation"), picked=fin),
        _worst_member_part(Part("constant", asym[0], asym[1], asym[2], asym[3],
             "1/gamma*^2 of theory.sample_max_margin; allowance: the reduction's own distance "
             "from its value at tau = 1e15 (its limit, computed without the max margin), the GD "
             "lead g/2 and the finite_tau allowance", kind="simulation"), picked=asym),
        Part("max_margin_kkt", 0.0, kkt, kkt, 1e-8,
             "theory.sample_max_margin's (gamma*^2, beta*) against the hard-margin problem on "
             "the run's token counts: |min_i y_i z_i . beta* - 1| and |gamma*^2 |beta*|^2 - 1|, "
             "the larger; allowance 1e-8 (its stated 8 significant digits)", kind="symbolic"),
    ), {"gamma_sq": gs, "L_tau_with_S_only": s_only,
        "class_gamma_sq": float(tc.class_max_margin().gamma_sq)})


# ---------------------------------------------------------------------- 9 phase-2 signs
def _class_state(theory, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """G and r = dG/dtau of the theory's four-class system at tau (from G = 0)."""
    G = theory.class_trajectory(np.array([min(1.0, tau / 2), tau]))[:, -1]
    return G, np.asarray(theory.class_velocity(G), dtype=float)


def _sign_errors(pred: np.ndarray, obs: np.ndarray, pairs) -> int:
    return sum(int(np.sign(obs[i, j]) != np.sign(pred[i, j])) for i, j in pairs)


ATT_PAIRS = ((1, 0), (0, 1), (2, 0), (2, 1))  # A[key, query]: (mu2,mu1),(mu1,mu2),(mu3,mu1),(mu3,mu2)


@claim(
    statement="after T1: A[mu2,mu1], A[mu1,mu2] increase, A[mu3,mu1], A[mu3,mu2] decrease; M12, "
              "M11, M22 increase, M13, M23 decrease",
    source="Theorem 3.2, Lemma 4.7 / F.16, Corollary 4.6 / F.13",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": KEY_QUERY},
    control_description=KEY_QUERY.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="the class margins of Theorem 3.2 are the claim phase2_margins",
    qualitative="Theorem 3.2's signs of the A and M entries: counts of wrong signs (a "
                "theory's scale cannot move a sign; sign flips are what decide)",
)
def check_phase2_signs(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem 3.2 / Corollary F.13 signs after T1."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    a_err = m_err = 0
    frac_bad = 0.0
    for k in range(cfg.members):
        i = _classified(run, k)
        G, r = _class_state(theory, float(run.tau[k, -1]))
        gam = theory.class_gamma(G, cfg.L, cfg.m)
        a_err += _sign_errors(gam, run.A3[k, -1] - run.A3[k, i], ATT_PAIRS)
        z = np.zeros((3, 3))
        dM_pred = theory.canonical_rhs(G[:, None], r[:, None], 1.0, 1.0, z, z, z, z, z)["M"]
        m_err += _sign_errors(dM_pred, run.M3[k, -1] - run.M3[k, i],
                              ((0, 1), (0, 2), (1, 2), (0, 0), (1, 1)))
        steps = np.diff(run.A3[k, i:], axis=0)
        skip = max(1, steps.shape[0] // 10)
        bad = [np.mean(np.sign(steps[skip:, a, b]) != np.sign(gam[a, b])) for a, b in ATT_PAIRS]
        frac_bad = max(frac_bad, float(np.max(bad)))
    tau_end = float(np.max(run.tau[:, -1]))
    gap, gap_tol = _four_class_gap(theory, cfg.L,
                                   np.concatenate([[0.0], np.geomspace(0.25, tau_end, 40)]))

    return Evidence((
        Part("A_signs", 0.0, a_err, a_err, 0.0,
             "Theorem 3.2: A[mu2,mu1], A[mu1,mu2] up, A[mu3,mu1], A[mu3,mu2] down over [T1, T*] "
             "(signs of Gamma, theory.cooccurrence.class_gamma); count of wrong signs", kind="simulation"),
        Part("A_monotone", 0.0, frac_bad, frac_bad, 0.0,
             "the same signs on every record interval after the first 10 % of Phase 2", kind="simulation"),
        Part("M_signs", 0.0, m_err, m_err, 0.0,
             "Theorem 3.2 / Corollary F.13: M12, M11, M22 up; M13, M23 down "
             "(dM/dt = beta r^T + r beta^T, theory.canonical_rhs)", kind="simulation"),
        Part("four_class_limit", 0.0, gap, gap, gap_tol,
             "the G and r behind these signs (theory.class_trajectory, class_velocity: the "
             "four-class system of Lemma F.6's proof) against the private-token reduction's "
             "special-token G at n = 6e10, its n -> infinity limit, on [0, tau_end]; largest "
             "relative gap; allowance: the O(1/n) gap extrapolated from n and 10 n, plus ODE "
             "rounding", kind="symbolic"),
    ))


#: the signs of Theorem 3.2's three class margins: q1 = G1+G2+G3 > 0, q2 = -(G1+G3) > 0,
#: q3 = -(G2+G3) > 0
_PHASE2_WANT = np.array([1.0, 1.0, 1.0])


def _phase2_onset(theory, taus: np.ndarray, G: np.ndarray) -> tuple[float, float]:
    """The first tau from which q1, q2, q3 (theory.class_margins of G [T, 3], signed by
    :data:`_PHASE2_WANT`) all hold to the end: the latest of their last crossings, each read
    between records (:func:`_held_from`); and its interpolation error."""
    q = np.array(theory.class_margins([G[:, 0], G[:, 1], G[:, 2]]), dtype=float)[:3]
    t, e = _held_from(taus, q * _PHASE2_WANT[:, None])
    i = int(np.argmax(t))
    return float(t[i]), float(e[i])


def _observed_margins(run: nc.CoRun, G: np.ndarray) -> np.ndarray:
    """Theorem 3.2's three class margins of a run's G [T, 3], signed by
    :data:`_PHASE2_WANT` [3, T], with the class layout read off the run's data
    (:func:`_class_layout`: y_k z_k . G), so the observed side takes nothing from the theory."""
    _, z, y = _class_layout(run)
    return (y[:3, None] * (z[:3] @ np.asarray(G, dtype=float).T)) * _PHASE2_WANT[:, None]


def _phase2_gd_onset(run: nc.CoRun, half: nc.CoRun, k: int
                     ) -> tuple[float, float, float, str, float, int]:
    """Member k's Theorem 3.2 onset extrapolated to the flow from GD at h and h/2
    (:func:`_extrapolated_onset` of each margin's last crossing, observed margins
    :func:`_observed_margins`), the slope of the margin that sets it and its index."""
    qs = [_observed_margins(r, r.beta[k, :, :3]) for r in (run, half)]
    on, step, interp, why = _extrapolated_onset(
        [_held_from(r.tau[k], q) for r, q in zip((run, half), qs, strict=True)],
        [_sign_changes(q) for q in qs])
    if not math.isfinite(on):
        return on, step, interp, why, 0.0, 0
    t_half = _held_from(half.tau[k], qs[1])[0]
    i = int(np.argmax(t_half))
    return on, step, interp, why, _slope_at(half.tau[k], qs[1][i], on), i


@claim(
    statement="Theorem 3.2 items 2-3: 'G(mu1)+G(mu2)+G(mu3) >= Omega(1), G(mu1)+G(mu3) <= "
              "-Omega(1), G(mu2)+G(mu3) <= -Omega(1)' for t in [T1, T2]: the class margins take "
              "these signs at tau = O(1) (t = Theta(1/(sigma1^2 m m1))), where our reduction "
              "puts it, and keep them to the end of the run",
    source="Theorem 3.2 (items 2-3), Theorem 3.1 / Definition E.2 (T1 = O~(1/m)); the onset "
           "time is our derivation (private-token class reduction)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": UNIFORM},
    control_description=UNIFORM.label,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="replaces the former refutation, which read T1 as the first classification: there "
          "the four-class system's own q2 is 0 exactly, so that reading was false by "
          "construction and refuted our reading, not the theorem (Definition E.2 fixes T1 only "
          "up to constants); the quick run of this commit decided the design: the class "
          "margins' onset is compared with the reduction's, which holds.  Session of "
          "2026-12-05 (issue 36, resolution): the onset was the first record from which the "
          "signs held, against an allowance of G(0) spread + GD's clock lead (h lambda "
          "g_max/2 + tau_eff/tau - 1) + record spacing; at quick that allowance was 0.184 in "
          "log onset, of which the clock lead was 0.108 and the record spacing 0.076 (all "
          "four members read the same record, tau = 17.72), so a 10 % error in "
          "theory.private_margins or class_margins passed.  Design, fixed before this "
          "version's first run: each margin's last crossing read linearly between records "
          "(interpolation error from the three-record quadratic), GD at h and h/2 (the "
          "half-step twin phase1 already runs) extrapolated to the flow per margin, GD's "
          "whole step dependence |t(h) - t(h/2)| allowed (as in four_class_tracks), and the "
          "m1 M r term carried by the kept reduction (kappa) instead of as a clock.  "
          "First run of this version (quick): errors 0.00039 and 0.00035 against allowances "
          "0.0029 and 0.0029 (seeds 0, 1; the step dependence and the interpolation, each "
          "about 0.0013, dominate); the control 0.303 and 0.297 against 0.0026 and 0.0029; "
          "test profile 0.00051 / 0.0051 and 0.00006 / 0.0040, control 0.31 and 0.32.  "
          "(Between commits 2105f83 and 756fce6 the claim's decorator was lost in an edit "
          "and the row ran without it; the check's numbers above are from direct calls.)  "
          "A referee read of that version then asked for: the observed margins from the "
          "data's class layout (not theory.class_margins), the reduction read to each "
          "member's own end, the attention and m1 M0 r / S0 terms in the allowance, a "
          "reason (not a raise or a silent widening) when the two GD runs cross a different "
          "number of times or the paper's reduction gives no onset.  With them (quick): "
          "0.00039 / 0.0032 and 0.00035 / 0.0032, control 0.303 / 0.0028 and 0.297 / 0.0032; "
          "test profile 0.00051 / 0.0065 and 0.00006 / 0.0053.  The control (uniform "
          "proportions) is a far miss (about 100 allowances); the resolution is measured "
          "by tdcheck mutate --resolution instead (1 % on 5b8d706).  A pilot with a "
          "quarter-step twin as well (quick, seeds 0 and 1, all four members) put GD's "
          "onset in the first-order regime: t(h) - t(h/2) and t(h/2) - t(h/4) in a ratio of "
          "2.005-2.006, the two extrapolations agreeing to 6.0e-5-6.5e-5 in tau against the "
          "allowed step dependence of 0.022-0.024 (the allowance is conservative, not tuned)",
)
def check_phase2_margins(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem 3.2: G1+G2+G3 > 0, G1+G3 < 0, G2+G3 < 0 from an onset tau = O(1) to the end:
    the onset of full GD (Richardson-extrapolated from a half-step twin) against the
    private-token reduction's from each member's own start."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    half = _run(_half_step(run.config), ctx)
    cfg = run.config
    _, z, _ = _class_layout(run)
    onsets, tols, why, end_wrong = [], [], [], 0
    worst_p = _NONE_YET
    for k in range(cfg.members):
        # the reduction to the member's own last record
        taus = np.concatenate([np.linspace(0.0, 50.0, 2501),
                               np.geomspace(50.5, float(run.tau[k, -1]), 300)])

        def onset(th, _taus=taus):
            def stat(Y):
                t = _phase2_onset(th, _taus, np.asarray(Y[:3], dtype=float).T)[0]
                return math.log(t) if 0 < t < math.inf else math.inf
            return stat

        end_wrong += int(np.sum(_observed_margins(run, run.beta[k, -1:, :3])[:, 0] <= 0))
        on, step, interp, why_on, slope, i = _phase2_gd_onset(run, half, k)
        # the allowance is the paper's reduction's (tc) for check and control alike: the
        # random-token G(0) spread (second order, on the trajectory: the onset is the later
        # of the q2 and q3 crossings, a kink) and the m1 M r term the reduction drops, kept
        # to first order (kappa) with its second-order remainder, and the m1 M0 r / S0
        # clock; GD's step is removed by the extrapolation, whose remainder (the whole step
        # dependence) and the readings' interpolation errors are added relative to the onset
        lo_pred, lo_spread = _g0_spread(theory, run, k, taus, None, _m0_eps(run, k),
                                        allowance=tc, through_trajectory=True, stat_of=onset,
                                        kappa=_kappa(run, k), kept_second=_kept_second(run, k))
        ref, why_ref = _onset_reference(*_phase2_onset(
            tc, taus, _private(tc, cfg, taus, _start(run, k))[:3].T), "margin")
        onsets.append(on)
        seen = 0 < on < math.inf
        # non-uniform attention moves G by at most the integral of its rate bound
        # (_attention_forcing, the run's alone; the reduction is a convex gradient flow, as
        # four_class_tracks uses), so the margin that sets the onset by |z_i| times that:
        # read as a shift of its crossing through its slope there
        j = int(np.searchsorted(run.tau[k], on)) if seen else 0
        drift = float(_upper_integral(_attention_forcing(run, k), run.tau[k])[j])
        att = (float(np.linalg.norm(z[i])) * drift / slope / on
               if seen and slope > 0 else (math.inf if seen else 0.0))
        member = _onset_member(on, step + interp, lo_pred, lo_spread + ref + att)
        why += [f"member {k}: {w}" for w in (why_on, why_ref) if w]
        tols.append(member[3])
        worst_p = _worse(member, worst_p)
    return Evidence((
        Part("signs_at_end", 0.0, end_wrong, end_wrong, 0.0,
             "Theorem 3.2: the three class margins have their signs at T* (count of wrong "
             "signs over members)", kind="simulation"),
        _worst_member_part(Part(
            "onset_vs_reduction", *worst_p,
             "log of the first tau from which all three hold to the end (each margin's last "
             "crossing read between records), full GD extrapolated to the flow from a "
             "half-step twin (2 t(h/2) - t(h)), against the private-token reduction's from "
             "the member's own start (theory.private_trajectory, theory.class_margins); "
             "allowance, the same for check and control (computed under the paper's "
             "reduction): the random-token G(0) spread (second order, on the trajectory), "
             "the m1 M r term the reduction drops (kept to first order, with its second-order "
             "remainder, and the m1 M0 r / S0 clock), non-uniform attention (|z_i| x the "
             "integral of the run's attention rate bound over the margin's slope), GD's whole "
             "step dependence |t(h) - t(h/2)| and the interpolation errors of the three "
             "readings (summed: conservative); observed margins y_k z_k . G with the class "
             "layout read off the run's data" + (" (" + "; ".join(why) + ")" if why else ""),
             kind="simulation"), tols, worst_p),
    ), {"onsets": onsets, "first_classification": [
        float(run.tau[k, _classified(run, k)]) for k in range(cfg.members)]})


# ---------------------------------------------------------------------- 10 Eq. (3) structure
#: the grid of the full-vocabulary Gamma integral (attention_structure's random entries):
#: ``RANDOM_GRID[0]`` points on [0, 20] and ``RANDOM_GRID[1]`` geometric ones to tau_eff; its
#: trapezoid error is estimated on the grid itself (Richardson against every other point)
RANDOM_GRID = (51, 75)


def _full_gammas(theory, run: nc.CoRun, k: int, grid: np.ndarray) -> np.ndarray:
    """Gamma = -dL/dA on the whole vocabulary, [T, d, d] (theory.loss_gradients) at the
    theory's private-token states on ``grid`` from member k's start, each random token carrying its own initial offset from its class mean
    (the run's beta(0)), which the class reduction averages out."""
    return _gammas_along(theory, run, k, _private(theory, run.config, grid, _start(run, k)))


def _offsets(run: nc.CoRun, k: int) -> np.ndarray:
    """Member k's random tokens' initial offsets from their class mean, [d] (0 on mu1..mu3):
    beta(0) minus its reduction's form (:func:`_start`, :func:`_placed`)."""
    return run.beta[k, 0] - _placed(run.data, run.config.vocabulary, _start(run, k))["beta"]


def _gammas_along(theory, run: nc.CoRun, k: int, Y: np.ndarray, A: np.ndarray | None = None
                  ) -> np.ndarray:
    """theory.loss_gradients' whole Gamma = -dL/dA [T, d, d] at the private-token states ``Y``
    [7, T] placed on the run's tokens, each random token carrying member k's initial offset
    from its class mean; scores ``A`` (default None: uniform attention)."""
    cfg = run.config
    offsets = _offsets(run, k)
    return np.array([np.asarray(theory.loss_gradients(
        _placed(run.data, cfg.vocabulary, Y[:, j])["beta"] + offsets, A, run.data.tokens,
        run.data.labels, cfg.m)[1], dtype=float) for j in range(Y.shape[1])])


def _coefficients(theory, run: nc.CoRun, k: int) -> tuple[np.ndarray, float]:
    """Eq. (3)'s coefficients C12, C21, C31, C32 = (2 kappa/S0) int Gamma dtau along the
    theory's private-token reduction to member k's tau_eff (theory.score_drift), and their
    relative allowance on the paper's reduction: the random-token G(0) spread and the clock
    (:func:`_g0_spread`, the same for check and control)."""
    cfg = run.config
    kappa = cfg.s0 ** 2 * cfg.m
    grid = np.concatenate([np.linspace(0.0, 20.0, 801),
                           np.geomspace(20.1, float(run.tau_eff[k, -1]), 800)])
    S0 = float(run.S0[k])

    def of(th, Yg):
        C = th.score_drift(grid, Yg, cfg.L, cfg.m, kappa, S0)[-1]
        return np.array([C[i, j] for i, j in ATT_PAIRS])

    def coeff_spread(th):
        p = of(th, _private(th, cfg, grid, _start(run, k)))
        return lambda Yg: np.max(np.abs(of(th, Yg) / p - 1))

    pred = of(theory, _private(theory, cfg, grid, _start(run, k)))
    # the grid runs to tau_eff, and the clock counts tau_eff/tau - 1 again: a first read
    # called it counted twice, a second that the grid treats the kept m1 M r term only as a
    # clock, which moves ratios at first order (balancing); until that term is carried here
    # as in balancing, the clock keeps it (conservative)
    _, c_spread = _g0_spread(theory, run, k, grid, None, _clock(run, k),
                             stat_of=coeff_spread)
    return pred, float(c_spread)


def _leakage(n_random: int, n_unseen: int, n_seen: int, m: int) -> tuple[float, float]:
    """K_G leakage scales (random-token entries, unseen-token entries): an entry with a
    non-special token moves through K_G's (or Q_G's) off-diagonal ~ sigma0^2 sqrt(m) N(0, 1)
    against the diagonal sigma0^2 m, so each entry is ~ N(0, 1/m) relative to the special
    ones, and the largest of N such entries is ~ sqrt(2 ln N / m) (extreme-value scale)."""
    return tuple(math.sqrt(2 * math.log(max(2 * n * n_seen, 2)) / m)
                 for n in (n_random, n_unseen))


def _gamma_exact_error(theory, run: nc.CoRun, k: int) -> float:
    """Gamma = -dL/dA on mu1..mu3 (theory.class_gamma at the reduction's sample margins)
    against the exact canonical Gamma (theory.canonical_velocity with Q_G = I, K_G = 0,
    uniform attention) on the run's tokens, at the reduction's state at member k's tau_eff
    end; the largest entry error relative to the largest exact entry."""
    cfg = run.config
    Ye = _private(theory, cfg, [0.0, float(run.tau_eff[k, -1])], _start(run, k))[:, -1]
    g_red = theory.class_gamma(Ye[:3], cfg.L, cfg.m,
                               margins=theory.private_margins(list(Ye), cfg.L))
    g_ex = theory.canonical_velocity(_placed(run.data, cfg.vocabulary, Ye, Q=1.0),
                                     run.data.tokens, run.data.labels, cfg.m,
                                     cfg.m1)["A"][:3, :3]
    return float(np.max(np.abs(g_red - g_ex)) / np.max(np.abs(g_ex)))


def _random_entry_point(theory, run: nc.CoRun, k: int, dA: np.ndarray, rand: np.ndarray,
                        seen: np.ndarray, a_rel: float, leak_r: float) -> tuple[float, tuple]:
    """Member k's random entries through the theory: (observed ratio, random_entries'
    (predicted, observed, error, tolerance)).

    Gamma on the whole vocabulary along the reduction (:func:`_full_gammas`), integrated by
    theory.attention_drift at the paper's K_G = Q_G = kappa I: Eq. (3)'s O(1/n) with the
    reduction's own constant.  The bound is that ratio times (1 + a)/(1 - a) (a:
    comparable_vs_reduction's allowance, S/S0 - 1 and kappa cancelling in a ratio) and its
    trapezoid error (:func:`_drift_ratio`), plus the leakage scale ``leak_r``: one-sided, so
    the theory's own ratio is the tolerance (declared where the part is built)."""
    cfg = run.config
    kappa = cfg.s0 ** 2 * cfg.m
    r_obs = _random_ratio(dA, rand, seen)
    grid = np.concatenate([np.linspace(0.0, 20.0, RANDOM_GRID[0]), np.geomspace(
        20.0 * (1 + 1e-9), float(run.tau_eff[k, -1]), RANDOM_GRID[1])])
    iso = kappa * np.eye(cfg.vocabulary)
    every = np.arange(grid.size)
    half = np.unique(np.concatenate([every[::2], every[-1:]]))
    try:
        r_iso, g_iso = _drift_ratio(theory, _full_gammas(theory, run, k, grid), grid,
                                    float(run.S0[k]), iso, iso, rand, seen, half)
    except (InadmissibleTheory, TypeError, ValueError, ArithmeticError, IndexError, KeyError,
            AttributeError):  # a theory with no usable Gamma fails the part, not the check
        return r_obs, (math.nan, r_obs, math.inf, leak_r)
    bound = (r_iso * math.exp(g_iso) * (1 + a_rel) / (1 - a_rel) if a_rel < 1
             else math.inf) + leak_r
    return r_obs, (r_iso, r_obs, r_obs, bound)


def _drift_ratio(theory, gammas: np.ndarray, grid: np.ndarray, S0: float, K: np.ndarray,
                 Q: np.ndarray, rand: np.ndarray, seen: np.ndarray, half: np.ndarray
                 ) -> tuple[float, float]:
    """:func:`_random_ratio` of theory.attention_drift's end value with Gram matrices K, Q,
    and its trapezoid error in log: |log(ratio on the grid / ratio on ``half`` of it)| / 3
    (Richardson for a second-order rule; inf where a ratio is not positive)."""
    full = _random_ratio(theory.attention_drift(grid, gammas, S0, K, Q, end_only=True), rand,
                         seen)
    coarse = _random_ratio(theory.attention_drift(grid[half], gammas[half], S0, K, Q,
                                                  end_only=True),
                           rand, seen)
    ok = full > 0 and coarse > 0 and math.isfinite(full) and math.isfinite(coarse)
    return full, abs(math.log(full / coarse)) / 3 if ok else math.inf


def _random_ratio(dA: np.ndarray, rand: np.ndarray, seen: np.ndarray) -> float:
    """max |entry with a random token| / max |C12, C21, C31, C32| of a change of A."""
    special = max(abs(float(dA[i, j])) for i, j in ATT_PAIRS)
    rnd = max(float(np.abs(dA[np.ix_(rand, seen)]).max()),
              float(np.abs(dA[np.ix_(seen, rand)]).max()))
    return rnd / special if special > 0 else math.inf


#: the grid of attention_structure's whole-Gram prediction: ``WHOLE_GRID[0]`` points on
#: [0, 20] and ``WHOLE_GRID[1]`` geometric ones to the member's tau at the end of its run;
#: its trapezoid allowance is the difference against every other point of it
WHOLE_GRID = (101, 150)
#: the four coefficients C12, C21, C31, C32 as index arrays (keys, queries)
_PAIR_ROWS = np.array([i for i, _ in ATT_PAIRS])
_PAIR_COLS = np.array([j for _, j in ATT_PAIRS])
#: what a wrong theory may raise in magnitudes_whole_gram (the part fails with the reason)
_THEORY_ERRORS = (InadmissibleTheory, TypeError, ValueError, ArithmeticError, IndexError,
                  KeyError, AttributeError, RuntimeError)


def _four(dA: np.ndarray) -> np.ndarray:
    """C12, C21, C31, C32 of a change of A (ATT_PAIRS), [4]."""
    return np.asarray(dA, dtype=float)[..., _PAIR_ROWS, _PAIR_COLS]


def _end_grid(tau_end: float) -> np.ndarray:
    """:data:`WHOLE_GRID` to ``tau_end`` (evenly spaced when the run ends before tau = 20)."""
    if tau_end <= 20.0 * (1 + 1e-6):
        return np.linspace(0.0, tau_end, sum(WHOLE_GRID))
    return np.concatenate([np.linspace(0.0, 20.0, WHOLE_GRID[0]),
                           np.geomspace(20.0 * (1 + 1e-9), tau_end, WHOLE_GRID[1])])


def _s_path(theory, cfg: nc.CoConfig, Y: np.ndarray, S0: float) -> np.ndarray:
    """S(tau) along the reduction ``Y`` [7, T]: S0 (1 + theory.s_drift of the growth of
    theory.private_beta_sq from Y's first point)."""
    b2 = np.asarray(theory.private_beta_sq(Y, cfg.n, cfg.L), dtype=float)
    return S0 * (1.0 + np.asarray(theory.s_drift(b2 - b2[0], cfg.m1, S0), dtype=float))


def _structure_drift(theory, run: nc.CoRun, k: int, taus: np.ndarray, kappa: float,
                     Y: np.ndarray | None = None) -> np.ndarray:
    """The theory's Delta A [d, d] at the end of ``taus`` for member k: theory.attention_drift,
    with the member's whole Gram matrices at initialisation and S along the reduction
    (:func:`_s_path`), of theory.loss_gradients' whole Gamma (:func:`_gammas_along`) along
    theory.private_trajectory with its m1 M r term kept at ``kappa``
    (theory.preconditioned_private_system), or along ``Y``."""
    cfg, S0 = run.config, float(run.S0[k])
    Y = _private(theory, cfg, taus, _start(run, k), kappa=kappa) if Y is None else Y
    K, Q = _gram(run, k)
    return np.asarray(theory.attention_drift(taus, _gammas_along(theory, run, k, Y),
                                             _s_path(theory, cfg, Y, S0), K, Q,
                                             end_only=True), dtype=float)


def _form_and_gram(r: nc.CoRun, k: int) -> tuple[np.ndarray, np.ndarray]:
    """On run ``r``'s records (member k; at most STATE_RECORDS of them, evenly spaced), the
    run's own path, its measured S and its initial Gram matrices: (Delta A of Gamma at the run's beta minus at that beta in the reduction's
    form, the Gram matrices' motion's Delta A), on C12..C32, [4] each; Gamma from
    tc.loss_gradients, integrated by tc.attention_drift.

    The reduction's form (:func:`_start` at each record, :func:`_offsets`): G(mu1..mu3), every
    random token at its class's mean plus its initial offset; what the form leaves out is
    the random tokens' own motion around their class mean.  The Gram motion's is exact on
    mu1..mu3 up to the records' trapezoid: tc.canonical_rhs' dA = Gamma dQ_G + dK_G Gamma
    with dQ_G's mu1..mu3 columns and dK_G's mu1..mu3 rows (the recorded columns; K_G
    symmetric), the only entries that reach C12..C32.  Each is returned as |value| plus
    |value - value on every other record| (the thinned records' quadrature)."""
    cfg = r.config
    d = cfg.vocabulary
    recs = _state_records(r.tau.shape[1] - 1)
    taus, S = r.tau[k, recs], r.S[k, recs]
    g_run, _, form_f, form_c = _form_drifts(r, k, recs, S)
    form = np.abs(_four(form_f)) + np.abs(_four(form_f - form_c))
    zero_v, zero = np.zeros((d, 1)), np.zeros((d, d))
    rates = []
    for n, j in enumerate(recs):
        dK, dQ = zero.copy(), zero.copy()
        dK[:3, :] = (r.K_cols[k, j] - r.K_cols[k, 0]).T
        dQ[:, :3] = r.Q_cols[k, j] - r.Q_cols[k, 0]
        rates.append(tc.canonical_rhs(zero_v, zero_v, 1.0, cfg.m1, zero, zero, dK, dQ,
                                      g_run[n])["A"])
    every = np.arange(recs.size)
    half = np.unique(np.concatenate([every[::2], every[-1:]]))
    rates = np.array(rates)
    fine = _four(tc.attention_drift(taus, rates, S, zero, np.eye(d), end_only=True))
    coarse = _four(tc.attention_drift(taus[half], rates[half], S[half], zero, np.eye(d),
                                      end_only=True))
    return form, np.abs(fine) + np.abs(fine - coarse)


def _rate_scores(run: nc.CoRun, k: int) -> float:
    """The largest relative change of r = -dL/dbeta (tc.loss_gradients) when the uniform
    attention of the reduction is replaced by the run's scores (A(0) or A_end), on member k's
    records (at most STATE_RECORDS): the reduction's rates along beta are off by at most
    that share, a clock change of the class means' trajectory."""
    cfg = run.config
    out = 0.0
    for j in _state_records(run.tau.shape[1] - 1):
        r0 = tc.loss_gradients(run.beta[k, j], None, run.data.tokens, run.data.labels,
                               cfg.m)[0]
        for A in (run.A_start[k], run.A_end[k]):
            rA = tc.loss_gradients(run.beta[k, j], A, run.data.tokens, run.data.labels,
                                   cfg.m)[0]
            out = max(out, _quotient(np.linalg.norm(rA - r0), np.linalg.norm(r0)))
    return out


def _structure_terms(run: nc.CoRun, half: nc.CoRun, k: int, ref: np.ndarray,
                     grid: np.ndarray) -> dict:
    """The allowance of magnitudes_whole_gram for member k, term by term, each relative to the
    paper's prediction ``ref`` [4] (on ``grid``) coefficient by coefficient (the largest of
    the four), computed with tc or measured on the runs: the same for check and control.
    No term is a difference between the run and the tested reduction's trajectory or S: an
    error in those is what the part tests.

    * ``trapezoid``: ref against the same on every other grid point (the whole difference:
      three times the finer rule's Richardson estimate);
    * ``kappa_range``: the preconditioned reduction holds kappa = m1/S^2 at S0; S grows, so
      kappa lies between m1/S_end^2 and m1/S0^2: tc's prediction at the one minus the other;
    * ``kept_second_order``: what the kept m1 M r term leaves at second order
      (:func:`_kept_second`) times that term's whole effect (kappa0 against kappa = 0);
    * ``m1_M0_clock``: the isotropic m1 M0 r / S0 the preconditioned reduction drops, a clock
      change of about eps0 (:func:`_m0_eps`);
    * ``class_form``: what the reduction's form leaves out on the run's own path
      (:func:`_form_and_gram`), the larger of the run and its half-step twin;
    * ``within_class_spread``: an estimate (not a bound) of the second-order effect of the
      random tokens' spread around their class mean on the class means' trajectory
      (:func:`_g0_spread`, 3 x the even part at one sd), on every 4th grid point;
    * ``gram_moving``: the prediction freezes K_G, Q_G at initialisation; their recorded
      motion's Delta A (:func:`_form_and_gram`, the larger of the run and its twin);
    * ``scores``: the prediction is at uniform attention; Gamma at the run's final scores
      A_end minus at A = 0 along tc's reduction (at most STATE_RECORDS records);
    * ``scores_on_rates``: the same attention moves r, hence the class means' clock, by at
      most the relative share of :func:`_rate_scores`; a clock faster by rho moves Delta A
      (tau_end) by rho (tau Gamma / Delta A - 1), at most rho while tau Gamma <= 2 Delta A
      (Gamma falls late, as 1/tau: there tau Gamma / Delta A ~ 1/ln tau);
    * ``s_drift_dropped``: s_drift drops the m1 M r term from |beta|^2's growth, whose share
      of the rate along beta is at most eps_M, the run's largest d tau_eff / d tau - 1
      between records (the share is m1 beta^T M r / (S beta.r), which eps_M measures where
      M is beta beta^T/S plus an isotropic part, as the kept term assumes): S/S0 - 1 is then
      off by at most that share of itself (the largest S/S0 - 1 along tc's reduction), and
      Delta A, whose four entries keep their signs over the run (Eq. (3): the signs part),
      moves by at most that relative error of 1/S (the same reading for ``m1_M0_clock``)."""
    cfg, S0 = run.config, float(run.S0[k])
    r4 = np.abs(ref)
    rel = lambda x: float(np.max(np.abs(np.asarray(x, dtype=float)) / r4))  # noqa: E731
    every = np.arange(grid.size)
    coarse = grid[np.unique(np.concatenate([every[::2], every[-1:]]))]
    sparse = grid[np.unique(np.concatenate([every[::4], every[-1:]]))]
    kap0, kap_end = _kappa(run, k), cfg.m1 / float(run.S[k, -1]) ** 2
    at_kap0 = _four(_structure_drift(tc, run, k, coarse, kap0))
    at_end = _four(_structure_drift(tc, run, k, coarse, kap_end))
    at_zero = _four(_structure_drift(tc, run, k, coarse, 0.0))
    form_h, gram_h = _form_and_gram(run, k)
    form_2, gram_2 = _form_and_gram(half, k)
    _, spread = _g0_spread(tc, run, k, sparse, lambda Y: _four(
        _structure_drift(tc, run, k, sparse, 0.0, Y=Y)), through_trajectory=True)
    Y = _private(tc, cfg, run.tau[k], _start(run, k), kappa=kap0)
    s_tc = _s_path(tc, cfg, Y, S0)
    recs = _state_records(run.tau.shape[1] - 1)
    K, Q = _gram(run, k)
    scores = tc.attention_drift(
        run.tau[k, recs], _gammas_along(tc, run, k, Y[:, recs], A=run.A_end[k])
        - _gammas_along(tc, run, k, Y[:, recs]), s_tc[recs], K, Q, end_only=True)
    eps_m = float(np.max(np.diff(run.tau_eff[k]) / np.diff(run.tau[k]) - 1.0))
    return {
        "trapezoid": rel(ref - at_kap0),
        "kappa_range": rel(at_end - at_kap0),
        "kept_second_order": abs(_kept_second(run, k)) * rel(at_kap0 - at_zero),
        "m1_M0_clock": _m0_eps(run, k),
        "class_form": max(rel(form_h), rel(form_2)),
        "within_class_spread": rel(spread),
        "gram_moving": max(rel(gram_h), rel(gram_2)),
        "scores": rel(_four(scores)),
        "scores_on_rates": _rate_scores(run, k),
        "s_drift_dropped": float(np.max(np.abs(s_tc / S0 - 1.0))) * max(eps_m, 0.0),
    }


def _structure_member(theory, run: nc.CoRun, half: nc.CoRun, k: int) -> tuple:
    """Member k's C12, C21, C31, C32 at the end of its run against the theory's whole-Gram
    prediction (:func:`_structure_drift` at kappa0 on :func:`_end_grid`): (predicted [4] or
    None, observed [4], error, allowance, details, shared), ``shared`` (grid, the paper's
    whole-Gram prediction, the extrapolated observation, the allowance, the member's Gram
    matrices) for :func:`_class_level_member`, or None where the part failed before it.
    The observed is Richardson-extrapolated from the half-step twin (2 A(h/2) - A(h) at the run's last tau); the error is the largest
    |observed - predicted| / |paper's prediction| of the four.  A theory (or a patched
    module) that raises, or a twin that ends before the run, fails the part with the reason."""
    t_end = float(run.tau[k, -1])
    grid = _end_grid(t_end)
    obs_h = _four(run.A3[k, -1] - run.A3[k, 0])
    if float(half.tau[k, -1]) < t_end * (1 - 1e-6):
        return None, obs_h, math.inf, math.inf, {
            "why": f"the half-step twin ends at tau {float(half.tau[k, -1]):.6g} before the "
                   f"run's {t_end:.6g}"}, None
    try:
        ref = _four(_structure_drift(tc, run, k, grid, _kappa(run, k)))
        terms = _structure_terms(run, half, k, ref, grid)
    except _THEORY_ERRORS as exc:
        return None, obs_h, math.inf, math.inf, {
            "why": f"no allowance: theory.cooccurrence raised in it ({type(exc).__name__}: "
                   f"{exc})"}, None
    pred, why = ref, ""
    if theory is not tc:
        try:
            pred = _usable(_four(_structure_drift(theory, run, k, grid, _kappa(run, k))), (4,))
            why = "" if pred is not None else "the predicted Delta A is not finite"
        except _THEORY_ERRORS as exc:
            pred, why = None, f"no whole-Gram prediction ({type(exc).__name__}: {exc})"
    a2, a2_interp = _at_tau(half, k, t_end, half.A3[k])
    obs_2 = _four(a2 - half.A3[k, 0])
    obs = 2 * obs_2 - obs_h
    r4 = np.abs(ref)
    terms["richardson"] = float(np.max(np.abs(obs_h - obs_2) / r4))
    terms["interpolation"] = 2 * float(np.max(np.abs(_four(a2_interp)) / r4))
    e = math.inf if pred is None else float(np.max(np.abs(obs - pred) / r4))
    tol = float(sum(terms.values()))
    if not math.isfinite(tol):
        why = why or "the allowance is not finite (theory.cooccurrence as loaded)"
    details = {"error": e, **terms, **({"why": why} if why else {})}
    return pred, obs, e, tol, details, (grid, ref, obs, tol, *_gram(run, k))


def _class_level_form(run: nc.CoRun, k: int, grid: np.ndarray, ref: np.ndarray,
                      K: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """What Lemma 4.7's class-level form leaves out of the whole-Gram prediction ``ref``
    (:func:`_structure_drift` on ``grid`` with tc), on C12..C32 [4], signed: ``ref`` minus
    tc.attention_drift, with the member's mu1..mu3 Gram blocks alone (of its Gram matrices
    ``K``, ``Q`` at initialisation) and S along the same reduction, of tc.loss_gradients'
    Gamma on mu1..mu3 with every random token at its class mean (no initial offsets).  The
    difference is the random tokens' offsets and their Gram coupling to mu1..mu3.  It is
    computed with theory.cooccurrence's loss_gradients and attention_drift only (never
    score_drift or class_gamma, which the class-level part tests), so an error in those
    moves the prediction and not this term."""
    cfg, S0 = run.config, float(run.S0[k])
    Y = _private(tc, cfg, grid, _start(run, k), kappa=_kappa(run, k))
    bare = np.array([tc.loss_gradients(_placed(run.data, cfg.vocabulary, Y[:, j])["beta"],
                                       None, run.data.tokens, run.data.labels, cfg.m)[1][:3, :3]
                     for j in range(grid.size)])
    block = tc.attention_drift(grid, bare, _s_path(tc, cfg, Y, S0), K[:3, :3], Q[:3, :3],
                               end_only=True)
    return np.asarray(ref, dtype=float) - _four(block)


def _class_level_member(theory, run: nc.CoRun, k: int, shared: tuple) -> tuple:
    """Member k's C12..C32 at T* against Lemma 4.7's class-level prediction, corrected for
    what its form leaves out: theory.score_drift along the kept private-token reduction, with
    the member's mu1..mu3 Gram blocks at initialisation and S on its path (theory.s_drift of
    theory.private_beta_sq), plus :func:`_class_level_form` (signed, on the paper's
    reduction): (predicted [4] or None, error, allowance, details).  ``shared`` is
    :func:`_structure_member`'s (grid, the paper's whole-Gram prediction ``ref``, the
    Richardson-extrapolated observation, the whole-Gram allowance, the Gram matrices).

    Derivation: observed - (pred + ref - block) = (observed - ref) + (block - pred); the
    first is within the whole-Gram part's allowance, the second, for the paper's theory, is
    rounding: block and tc.score_drift are the same trapezoid of the same Gamma on mu1..mu3
    (the claim's gamma_exact part holds tc.class_gamma to tc.canonical_velocity, which is
    tc.loss_gradients', at 64 eps; tests/test_cooccurrence.py::
    test_class_level_gamma_is_the_whole_gammas_block on a path).  So the allowance is the
    whole-Gram one plus ``CLASS_LEVEL_ROUNDING`` per grid point.

    What the part adds, read honestly: the class-level form alone misses the trained model
    by the correction's size (``class_level_form`` and ``uncorrected_error`` in the
    details, 1-5 % at quick); corrected, the part's error is magnitudes_whole_gram's plus
    score_drift's departure from the exact mu1..mu3 block, which is zero for the paper's
    theory.  A slip in score_drift (or, through it under ``tdcheck mutate``'s module patch,
    class_gamma or private_margins) is therefore seen through that identity, anchored on the
    trained model's coefficients, not through data that magnitudes_whole_gram does not
    read; a slip in the trajectory, s_drift or private_beta_sq moves prediction and
    correction alike (both use the patched reduction) and is magnitudes_whole_gram's to
    see.  score_drift is the theory's; a ``_Theory`` that overrides class_gamma alone is
    not seen through it (its score_drift is theory.cooccurrence's).  A theory that raises or
    gives no finite 3 x 3 path fails the part with the reason."""
    grid, ref, obs, tol_w, K, Q = shared
    cfg, S0 = run.config, float(run.S0[k])
    r4 = np.abs(ref)
    try:
        form = _class_level_form(run, k, grid, ref, K, Q)
    except _THEORY_ERRORS as exc:
        return None, math.inf, math.inf, {
            "why": f"no correction: theory.cooccurrence raised in it ({type(exc).__name__}: "
                   f"{exc})"}
    kap0 = _kappa(run, k)
    try:
        Y = _private(theory, cfg, grid, _start(run, k), kappa=kap0)
        raw = np.asarray(theory.score_drift(grid, Y, cfg.L, cfg.m, kap0,
                                            _s_path(theory, cfg, Y, S0),
                                            K=K[:3, :3], Q=Q[:3, :3]), dtype=float)
        ok = raw.ndim == 3 and raw.shape[1:] == (3, 3)
        pred = _usable(_four(raw[-1]) if ok else None, (4,))
        why = "" if pred is not None else "the predicted Delta A is not a finite 3 x 3 path"
    except _THEORY_ERRORS as exc:
        pred, why = None, f"no class-level prediction ({type(exc).__name__}: {exc})"
    e = math.inf if pred is None else float(np.max(np.abs(obs - pred - form) / r4))
    rounding = CLASS_LEVEL_ROUNDING * grid.size
    details = {"error": e, "whole_gram_allowance": tol_w, "rounding": rounding,
               "class_level_form": float(np.max(np.abs(form) / r4)),
               "uncorrected_error": (math.inf if pred is None else
                                     float(np.max(np.abs(obs - pred) / r4))),
               "class_level_prediction": None if pred is None else [float(x) for x in pred],
               **({"why": why} if why else {})}
    return None if pred is None else pred + form, e, tol_w + rounding, details


#: rounding allowance per grid point, relative, of the class-level Gamma against the
#: whole-vocabulary one on mu1..mu3 (sums over a data set's token slots and slot pairs of
#: O(1) terms, n L = 300 slots at quick; 1024 eps is a generous reading of that, not a
#: derived bound, and cancellation in the Gram sandwich is not accounted for).  Times the T
#: grid points it is about 6e-11, seven orders below the whole-Gram allowance: it changes no
#: verdict, and the part cannot resolve a departure from the identity below that allowance
CLASS_LEVEL_ROUNDING = 1024 * EPS


def _magnitudes_member(theory, run: nc.CoRun, k: int, dA: np.ndarray) -> dict:
    """Member k's points of attention_structure's ``magnitudes`` and
    ``comparable_vs_reduction`` parts (each a (predicted, observed, error, allowance)
    tuple), the relative allowance ``a_rel`` the random-entries part reuses, the observed
    |C| (``mags``) and why no coefficient was predicted ("" if one was)."""
    S0 = float(run.S0[k])
    no_coeff = ""
    try:
        pred, c_spread = _coefficients(theory, run, k)
    except _THEORY_ERRORS as exc:  # a theory with no usable score_drift fails these
        # parts (infinite error) with the reason; the allowance keeps its terms that do
        # not need the theory (the Gram blocks' spread and S's drift)
        pred, c_spread = np.full(len(ATT_PAIRS), np.nan), 0.0
        no_coeff = f"no score_drift prediction ({type(exc).__name__}: {exc})"
    obs = np.array([dA[i, j] for i, j in ATT_PAIRS])
    # K_G, Q_G: chi-square diagonals (3 sqrt(2/m)), their growth over the run (S/S0 - 1
    # bounds it: all factors of the balanced network grow alike) and the random-token G(0) spread
    tol = 3 * math.sqrt(2 / run.config.m) + c_spread + abs(float(run.S[k, -1] / S0) - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = float(np.max(np.abs(obs / pred - 1)))
    e = e if math.isfinite(e) else math.inf
    mag = (float(np.max(np.abs(pred))), float(np.max(np.abs(obs))), e, tol)
    mags = np.array([abs(dA[i, j]) for i, j in ATT_PAIRS])
    # Eq. (3)'s "comparable size", read through the reduction: the spread of the four
    # |C| against the spread of the predicted ones.  Each observed C is within the
    # relative allowance tol of its prediction (the magnitudes part), so their ratio of
    # largest to smallest is within the factor (1 + tol)/(1 - tol) of the predicted one
    with np.errstate(divide="ignore", invalid="ignore"):
        s_pred = float(np.max(np.abs(pred)) / np.min(np.abs(pred)))
        s_err = abs(math.log(float(mags.max() / mags.min())) - math.log(s_pred))
    # S/S0 - 1 scales all four alike and cancels in the ratio, so it is left out
    a_rel = tol - abs(float(run.S[k, -1] / S0) - 1)
    s_tol = math.log((1 + a_rel) / (1 - a_rel)) if a_rel < 1 else math.inf
    comp = (s_pred, float(mags.max() / mags.min()),
            s_err if math.isfinite(s_err) else math.inf, s_tol)
    return {"mag": mag, "comp": comp, "a_rel": a_rel, "mags": mags, "no_coeff": no_coeff}


@claim(
    statement="Eq. (3) at T*: C12, C21 > 0 > C31, C32 of comparable size; random-token entries "
              "O(1/n) smaller; unseen-token pairs exactly unchanged",
    source="Theorem 3.3 / F.20, Eq. (3)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": KEY_QUERY},
    control_description=KEY_QUERY.label,
    correction_only=_S_CORRECTION,
    cost="slow",
    examples=(_PIN, _PIN1),
    notes="Issue 36 item 6 (session of 2026-12-04): comparable_vs_reduction reads 'comparable "
          "size' through the reduction, beside the bare factor 3, which the key/query control "
          "passes.  Its first allowance was log((1 + tol)/(1 - tol)) with the magnitudes "
          "part's whole tol; a referee read (no failure prompted it) found the part then "
          "implied by magnitudes, and the S/S0 - 1 term, common to the four coefficients, "
          "was taken out.  Session of 2026-12-05 (the rest of item 6): random_entries' bare "
          "constant 3 (rnd <= 3/n + leakage) is replaced by the reduction's own ratio (theory."
          "attention_drift of the whole-vocabulary Gamma of theory.canonical_velocity along "
          "the private-token reduction, at K_G = Q_G = kappa I): about 6.3/n at quick's n = 60 "
          "(6.29 and 6.23 times 1/n, data sets 0 and 1), twice the bare constant, so the old part "
          "had passed only through its leakage term (observed 0.17-0.19 at quick, 0.22-0.27 "
          "at the test profile, against 3/n = 0.05 at n = 60).  The new bound, about 0.15 at "
          "quick before the leakage term, is still below the observed ratio: the part passes "
          "through its leakage estimate, as before, now with the reduction's constant.  Its "
          "bound is the tested theory's own "
          "ratio (declared: tolerance_from_theory), a one-sided reading of O(1/n).  A part "
          "that predicted the leakage entry by entry from the member's own Gram matrices (at "
          "quick, |log| errors 0.018 and 0.041) was taken out again after a referee read: it "
          "is a strengthening of ours, and its allowance was not derived for a ratio.  The "
          "same read found tau_eff/tau - 1 counted twice in the coefficients' allowance (the "
          "grid already runs to tau_eff); a second read found that removing it leaves the "
          "kept m1 M r term's first-order effect on the coefficients uncovered, so the clock "
          "keeps it (conservative) until that term is carried as in balancing.  Session of "
          "2026-12-06: magnitudes' allowance is held by the Gram blocks' chi-square spread "
          "3 sqrt(2/m) (0.35 of its 0.39 at quick), which no error in the theory moves; "
          "magnitudes_whole_gram, added beside it (the registered parts unchanged), predicts "
          "with the member's whole Gram matrices as phase1's whole-Gram parts do.  Probes "
          "on the quick runs of data sets 0 and 1 (scripts, before the part existed) showed "
          "in order: with S held at S0 the whole-Gram prediction sat 1.5-2.1 % above the "
          "run, equal to each member's S/S0 - 1 (0.014-0.020); with the clock S0/S of "
          "theory.s_drift it sat about 1 % above, equal to tau_eff/tau - 1; with the m1 M r "
          "term kept (theory.preconditioned_private_system) it was within 0.07-0.11 %.  The "
          "part predicts with those two pieces of the theory, as the paper's own reduction "
          "plus our first-order kept term.  A first allowance (commit ab3b48d) took the run's beta against the "
          "reduction's trajectory (Richardson-extrapolated) and the run's S against "
          "s_drift's as terms; a referee read (no failure prompted it) found both circular: "
          "an error in the trajectory or in s_drift moved prediction and allowance alike, "
          "so the part could not see it, and the key/query control left this part's Gamma "
          "untransposed.  Rebuilt before any mutation run: the form term is measured on the "
          "run's own path (its beta against that beta in the reduction's form), the spread "
          "term is estimated at second order (_g0_spread, x 3), the S term bounds only what s_drift drops, and "
          "KEY_QUERY transposes theory.loss_gradients' Gamma too.  Gamma now comes from "
          "theory.loss_gradients (canonical_velocity's gradients, without its six d x d "
          "products) and attention_drift takes S's path and an end_only flag.  Measured on "
          "the rebuilt part (quick, the worst example of each pair of data sets): 0.0008 / "
          "0.0020 (data sets 0 and 1; errors 0.0007-0.0011 against allowances 0.0020-"
          "0.0032 over the four members, trapezoid 0.0007 and the form term 0.0003-0.0011 "
          "the largest terms), 0.0013 / 0.0025 (2 and 3, --seed 2), 0.0018 / 0.0031 (4 and "
          "5, --seed 4); the key/query control 1.02, 1.04, 1.08; test profile errors 0.0010-0.0027 against 0.0085-0.019 "
          "(s_drift_dropped the largest there, m = 128).  Gamma or attention_drift "
          "scaled by 1.02 or 0.98 gives 0.020-0.021 at quick (fails), the trajectory "
          "(private_trajectory) scaled by 1.05 or 0.98 gives 0.23 or 0.11, s_drift scaled by "
          "1.5 gives 0.0056-0.0060 against 0.0029-0.0032 (fails), private_beta_sq scaled by "
          "1.05 gives 0.0012-0.0016 (passes: S drifts by 1.4-2 % here, so a 5 % slip in "
          "|beta|^2 moves the prediction by about 0.1 %).  A second referee read (of "
          "fc6d470) found no circular term left and asked for: the attention's effect on r "
          "(scores_on_rates, about 1e-5 here), the thinned records' quadrature in class_form "
          "and gram_moving, RuntimeError among the caught errors, and the sign condition "
          "behind s_drift_dropped stated; added after `tdcheck mutate` ran on fc6d470 (they "
          "move the allowance by under 2 %; the numbers above are of the later commit).  "
          "Resolution (mutate --resolution, quick, fc6d470): > 50 %, held by the registered "
          "parts (signs counts signs of class_gamma along the class reduction; magnitudes "
          "carries the chi-square allowance) through class_gamma, class_loss, class_losses, "
          "class_system, class_trajectory, class_velocity and score_drift, and at 50 % by "
          "s_drift and private_beta_sq (S drifts by 1.4-2 %); magnitudes_whole_gram rejects "
          "attention_drift, loss_gradients, class_margins, private_margins, private_system, "
          "private_trajectory and preconditioned_private_system at 1 %.  Session of 2026-12-06 "
          "(second): magnitudes_class_level pairs Lemma 4.7's class-level form "
          "(theory.score_drift, hence theory.class_gamma) with the member's draw: its mu1..mu3 "
          "Gram blocks and S on its path (score_drift now takes S's path, as attention_drift "
          "does), along the same kept reduction.  The class-level form leaves out the random "
          "tokens' offsets and their Gram coupling to mu1..mu3: 1.0-5.4 % of the coefficients "
          "at quick (members of data sets 0, 1, 2: 0.010, 0.020; 0.017, 0.040; 0.054, "
          "0.011).  A first version (commit 1f71b1c) took that difference's size into the "
          "allowance (triangle inequality); a referee read (no failure prompted it) found "
          "detection then lopsided (a slip of the same sign as a member's difference was seen "
          "only beyond twice it), so the prediction now carries the difference, signed, "
          "computed on the paper's reduction with loss_gradients and attention_drift only "
          "(never score_drift or class_gamma), and the allowance is the whole-Gram part's "
          "plus rounding.  With the paper's theory the part's error is then the whole-Gram "
          "part's (the two forms' Gamma on mu1..mu3 agree to rounding).  How to read it (a "
          "second referee read): the class-level form alone misses the trained model by the "
          "correction's size (details: uncorrected_error); corrected, a slip in score_drift "
          "or class_gamma is seen through their identity with the exact mu1..mu3 block, "
          "anchored on the run's coefficients, not through data the whole-Gram part does not "
          "read, so its kills in tdcheck mutate are not independent of that part's.  Measured "
          "(scripts, quick, data sets 0, 1, 2): 0.00094 / 0.00235, 0.00077 / 0.00203, "
          "0.00097 / 0.00224; score_drift or class_gamma (module patch) x 1.02 gives 0.0208, "
          "0.0202, 0.0210 and x 0.98 0.0199, 0.0191, 0.0194 (all fail); the key/query "
          "control 1.048, 1.005, 1.039.  Before it, score_drift raising made the check raise "
          "in magnitudes (_coefficients); it now fails magnitudes and comparable_vs_reduction "
          "with the reason.  Resolution (mutate --resolution-only, quick, budget 3000 s, "
          "9a7c63b): 50 %, held by s_drift and private_beta_sq (S drifts by 1.4-2 %); "
          "score_drift and class_gamma at 1 % (> 50 % on fc6d470), through the identity "
          "above; the class-level functions that only the signs part reads move no "
          "simulation number and are left out.  s_drift and private_beta_sq are now "
          "declared correction_only (_S_CORRECTION); on the run of tdcheck mutate cooccurrence --resolution "
          "(quick, commit ef0867a)"
          " this claim was not settled in its 864 s share of the budget: attention_drift, "
          "class_gamma, class_margins, loss_gradients, preconditioned_private_system, "
          "private_margins, private_system and private_trajectory at 1 %, s_drift and "
          "private_beta_sq at 50 %, score_drift unsettled at 1 %.  Settled on the run of "
          "tdcheck mutate cooccurrence --resolution-only (quick, commit a4ee86d, budget "
          "5400 s, --jobs 1, load 2: a one-thread campaign beside it; 1231 s for this "
          "claim): 1 %, every function it reads at 1 % (attention_drift, class_gamma, "
          "class_margins, loss_gradients, preconditioned_private_system, private_margins, "
          "private_system, private_trajectory, score_drift), s_drift and private_beta_sq "
          "at 50 % and left out as declared (phase1 resolves both at 1 %).",
)
def check_attention_structure(params: dict, ctx: Context, *, theory) -> Evidence:
    """Eq. (3) / Theorem 3.3 at T* (end of the run); unseen-token entries of Delta A."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    half = _run(_half_step(run.config), ctx)
    cfg = run.config
    seen = np.unique(run.data.tokens)
    unseen = np.setdiff1d(np.arange(cfg.vocabulary), seen)
    rand = seen[seen >= 3]
    sign_err, spread, rnd, both, mixed = 0, 0.0, 0.0, 0.0, 0.0
    mag = comp = whole = level = _NONE_YET
    no_coeff = ""
    mag_tols, comp_tols, whole_tols, whole_terms = [], [], [], []
    level_tols, level_terms = [], []
    rand_w, rand_tols = _NONE_YET, []
    leak_r, leak_u = _leakage(rand.size, unseen.size, seen.size, cfg.m)
    gam_err = 0.0
    for k in range(cfg.members):
        dA = run.A_end[k] - run.A_start[k]
        gam_err = max(gam_err, _gamma_exact_error(theory, run, k))
        gam = theory.class_gamma(_class_state(theory, float(run.tau[k, -1]))[0], cfg.L, cfg.m)
        sign_err += _sign_errors(gam, dA, ATT_PAIRS)
        m_ = _magnitudes_member(theory, run, k, dA)
        no_coeff = m_["no_coeff"] or no_coeff
        mag, comp = _worse(m_["mag"], mag), _worse(m_["comp"], comp)
        mag_tols.append(m_["mag"][3])
        comp_tols.append(m_["comp"][3])
        w_pred, w_obs, w_e, w_tol, w_terms, shared = _structure_member(theory, run, half, k)
        whole = _worse((math.nan if w_pred is None else float(np.max(np.abs(w_pred))),
                        float(np.max(np.abs(w_obs))), w_e, w_tol), whole)
        whole_tols.append(w_tol)
        whole_terms.append(w_terms)
        c_pred, c_e, c_tol, c_terms = ((None, math.inf, math.inf, {"why": w_terms.get("why")})
                                       if shared is None else
                                       _class_level_member(theory, run, k, shared))
        level = _worse((math.nan if c_pred is None else float(np.max(np.abs(c_pred))),
                        float(np.max(np.abs(w_obs))), c_e, c_tol), level)
        level_tols.append(c_tol)
        level_terms.append(c_terms)
        mags, a_rel = m_["mags"], m_["a_rel"]
        spread = max(spread, float(mags.max() / mags.min()))
        special = float(mags.max())
        r_obs, rand_pt = _random_entry_point(theory, run, k, dA, rand, seen, a_rel, leak_r)
        rnd = max(rnd, r_obs)
        rand_w = _worse(rand_pt, rand_w)
        rand_tols.append(rand_pt[3])
        both = max(both, float(np.abs(dA[np.ix_(unseen, unseen)]).max()))
        mixed = max(mixed, float(max(np.abs(dA[np.ix_(unseen, seen)]).max(),
                                     np.abs(dA[np.ix_(seen, unseen)]).max())) / special)
    return _attention_evidence(
        {"sign_err": sign_err, "spread": spread, "comp": comp, "comp_tols": comp_tols,
         "mag": mag, "mag_tols": mag_tols, "whole": whole, "whole_tols": whole_tols,
         "whole_terms": whole_terms, "level": level, "level_tols": level_tols,
         "level_terms": level_terms, "rand_w": rand_w, "rand_tols": rand_tols, "both": both,
         "gam_err": gam_err, "mixed": mixed, "leak_u": leak_u, "no_coeff": no_coeff,
         "unseen": unseen}, cfg)


def _attention_evidence(f: dict, cfg) -> Evidence:
    """attention_structure's parts from the members' folded points ``f`` (the local names
    of :func:`check_attention_structure`)."""
    (sign_err, spread, comp, comp_tols, mag, mag_tols, whole, whole_tols, whole_terms, level,
     level_tols, level_terms, rand_w, rand_tols, both, gam_err, mixed, leak_u, no_coeff,
     unseen) = (f[n] for n in ("sign_err", "spread", "comp", "comp_tols", "mag", "mag_tols",
                               "whole", "whole_tols", "whole_terms", "level", "level_tols",
                               "level_terms", "rand_w", "rand_tols", "both", "gam_err",
                               "mixed", "leak_u", "no_coeff", "unseen"))
    return Evidence((
        Part("signs", 0.0, sign_err, sign_err, 0.0,
             "Eq. (3): C12, C21 > 0 > C31, C32 (count of wrong signs)", kind="simulation"),
        Part("comparable", 1.0, spread, math.log(spread), math.log(3),
             "Eq. (3): the four coefficients are Theta of the same expression; factor 3", kind="simulation"),
        _worst_member_part(Part(
            "comparable_vs_reduction", comp[0], comp[1], comp[2], comp[3],
            "Eq. (3)'s 'comparable size' through the reduction: |log| of the observed spread "
            "max|C|/min|C| of C12, C21, C31, C32 against the spread of their predictions "
            "(theory.score_drift along the private-token reduction, as in magnitudes); "
            "allowance log((1 + a)/(1 - a)), a the magnitudes part's allowance of the same "
            "member less its S/S0 - 1 term, which scales all four alike and cancels in the "
            "ratio (each C within a of its prediction, up to that common factor, bounds the "
            "ratio)",
            details={"why": no_coeff} if no_coeff else {}, kind="simulation"),
            comp_tols, comp),
        _worst_member_part(Part(
            "magnitudes", mag[0], mag[1], mag[2], mag[3],
            "Eq. (3) / Lemma 4.7: C12, C21, C31, C32 against (2 kappa/S0) int Gamma dtau "
            "along the private-token reduction (theory.score_drift), largest relative error; "
            "allowance 3 sqrt(2/m) (K_G, Q_G diagonals), the random-token G(0) spread "
            "(relative, on the paper's reduction) and S/S0 - 1",
            details={"why": no_coeff} if no_coeff else {}, kind="simulation"), mag_tols, mag),
        _worst_member_part(Part(
            "magnitudes_whole_gram", whole[0], whole[1], whole[2], whole[3],
            "Eq. (3) / Lemma 4.7 at T* with the member's whole Gram matrices: C12, C21, C31, "
            "C32 of the run (Richardson-extrapolated from its half-step twin) against "
            "theory.attention_drift of theory.loss_gradients' whole-vocabulary Gamma "
            "along theory.private_trajectory with the m1 M r term kept (theory."
            "preconditioned_private_system, kappa = m1/S0^2), on the clock S0/S of theory."
            "s_drift of theory.private_beta_sq, K_G and Q_G the member's at initialisation; "
            "largest |observed - predicted| relative to the paper's prediction; allowance, "
            "term by term (computed with the paper's theory or measured on the runs, the same "
            "for check and control; none is the run's difference from the tested trajectory "
            "or S): trapezoid, kappa's range, the kept term's second order, the m1 M0 clock, "
            "what the reduction's form (class means, fixed offsets) leaves out on the run's "
            "own path, the within-class spread's second-order effect on the class means, "
            "the Gram matrices' recorded motion, non-uniform scores (on Gamma and, through "
            "r, on the class means' clock), the m1 M r term s_drift drops, GD's "
            "|R_h - R_{h/2}| and the twin's interpolation",
            details={"members": whole_terms}, kind="simulation"),
            whole_tols, whole),
        _worst_member_part(Part(
            "magnitudes_class_level", level[0], level[1], level[2], level[3],
            "Eq. (3) / Lemma 4.7 at T*, the class-level form paired with the member's draw "
            "and corrected by the paper's own whole-Gram difference (the class-level form "
            "alone misses by that correction, 1-5 % at quick: details uncorrected_error; "
            "corrected, a slip in score_drift is seen through its identity with the exact "
            "mu1..mu3 block, anchored on the run): "
            "C12, C21, C31, C32 of the run (as magnitudes_whole_gram's) against theory."
            "score_drift (Lemma 4.7's Gamma on mu1..mu3) along the same kept reduction and "
            "S path, with the member's mu1..mu3 Gram blocks at initialisation, plus what "
            "that form leaves out of the whole-Gram prediction on the paper's reduction (the "
            "random tokens' offsets and Gram coupling, signed, computed with "
            "theory.loss_gradients and theory.attention_drift only); largest "
            "|observed - predicted| relative to the paper's whole-Gram prediction; allowance "
            "magnitudes_whole_gram's plus rounding (the two forms' Gamma on mu1..mu3 agree "
            "to rounding)",
            details={"members": level_terms}, kind="simulation"),
            level_tols, level),
        _worst_member_part(tolerance_from_theory(Part("random_entries", *rand_w,
             "Eq. (3): entries with a random token are O(1/n) of the special ones; the "
             "constant is the reduction's own (each member's ratio max|random| / "
             "max|C| of theory.attention_drift at K_G = Q_G = kappa I of the whole-vocabulary "
             "Gamma, theory.loss_gradients, along the private-token reduction; times "
             "(1 + a)/(1 - a), a as comparable_vs_reduction's, and its trapezoid error), plus "
             "the sigma0^2 sqrt(m) "
             "term: K_G off-diagonal leakage, largest of N entries ~ sqrt(2 ln N / m)",
             details={"ratio_times_n": rand_w[0] * cfg.n}, kind="simulation"),
             "a one-sided O(1/n) reading: the bound is the tested theory's own ratio (its "
             "constant), times the paper's reduction's allowance factor and the integral's "
             "trapezoid error; a theory that predicts larger random entries is allowed more, "
             "as Eq. (3)'s O(1/n) itself allows"), rand_tols, rand_w),
        Part("unseen_pairs_zero", 0.0, both, both, 0.0,
             "W_K, W_Q columns of unseen tokens never receive gradient: exactly 0", kind="simulation"),
        Part("gamma_exact", 0.0, gam_err, gam_err, 64 * EPS,
             "Lemma 4.7 / F.16's Gamma on mu1..mu3 (theory.class_gamma at the private-token "
             "margins, the driver of every C_{nu,mu}) against the exact canonical -dL/dA "
             "(theory.canonical_velocity, Appendix B) on the run's tokens at the reduction's "
             "state at tau_end; relative; allowance 64 eps (rounding of the sums over samples)", kind="symbolic"),
        Part("unseen_mixed", 0.0, mixed, mixed, leak_u,
             "one unseen token: Delta A only through K_G Gamma / Gamma Q_G leakage, "
             "~ N(0, 1/m) per entry relative to the special ones; largest of N ~ sqrt(2 ln N/m)", kind="simulation"),
    ), {"n_unseen": int(unseen.size)})




# ---------------------------------------------------------------------- 11 Appendix A (Fig. 1)
@claim(
    statement="Fig. 1 in the published configuration: I1 loss falls from step 0, the loss "
              "decreases, scores flat then (mu1,mu2) up and (target, mu3) down, attention near "
              "uniform (the I2/I3 hump: appendix_a_hump)",
    source="Fig. 1(a)(b), Appendix A",
    kind="published-number",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": SWAPPED},
    control_description=SWAPPED.label,
    cost="slow",
    examples=(Example({"seed": 0}, via="Appendix A's configuration (Fig. 1); the paper states "
                                       "no seed"),),
    notes="'Kaiming' read as nn.Linear's default U(+-1/sqrt(fan_in)); a trained=False; 1/sqrt(m) "
          "used; steps by profile in SIZES['appendix_a'] (the paper's 30000 under thorough).  "
          "One pinned data set (issue 36): the statement is what Fig. 1 shows, one run of "
          "the published setup with no seed given, so the claim reproduces one run of it; "
          "whether each feature holds across runs is not tested here, except the one the "
          "paper calls consistent (the I2/I3 hump, over independent runs: appendix_a_hump)",
    qualitative="Fig. 1's shape: the theory enters only through the signs of class_gamma "
                "(attention_signs); the other parts are monotonicity and bounds of the run",
)
def check_appendix_a(params: dict, ctx: Context, *, theory) -> Evidence:
    """Fig. 1(a)(b) in the published configuration (Appendix A; "Kaiming" = nn.Linear default)."""
    run = _run(_sized(ctx, "appendix_a", int(params.get("seed", 0))), ctx)
    cfg = run.config
    k = 0
    i = _classified(run, k)
    tl = run.type_loss[k]
    dA = run.A3[k, -1] - run.A3[k, i]
    gam = theory.class_gamma(_class_state(theory, float(run.tau[k, -1]))[0], cfg.L, cfg.m)
    sign_err = _sign_errors(gam, dA, ATT_PAIRS)
    inc = np.diff(run.loss[k])
    worst_inc = float(np.max(inc / run.loss[k, :-1]))
    final = float(run.loss[k, -1])
    flat1 = float(np.max(np.abs(run.A3[k, i] - run.A3[k, 0])))
    later = float(np.max(np.abs(run.A3[k, -1] - run.A3[k, i])))
    # part kinds: the expected side is Fig. 1's shape (published), the observed side our
    # full-model run of Appendix A's configuration, so every part is a simulation part
    return Evidence((
        Part("I1_falls_from_start", 0.0, tl[1, 0] - tl[0, 0], max(0.0, tl[1, 0] - tl[0, 0]), 0.0,
             "Fig. 1(b), Lemma 4.1: the both-targets loss decreases from step 0", kind="simulation"),
        Part("loss_monotone", 0.0, worst_inc, max(0.0, worst_inc), 0.0,
             "Fig. 1(b): the overall loss decreases at every step (largest relative increase)", kind="simulation"),
        Part("attention_signs", 0.0, sign_err, sign_err, 0.0,
             "Fig. 1(a) / Theorem 3.2: after the phase line A[mu2,mu1], A[mu1,mu2] rise and "
             "A[mu3,mu1], A[mu3,mu2] fall (count of wrong signs)", kind="simulation"),
        Part("attention_flat_in_phase1", 0.0, flat1 / later, flat1 / later, 1.0,
             "Fig. 1(a): scores flat until the phase line: their Phase-1 change is smaller than "
             "the Phase-2 change", kind="simulation"),
        Part("near_uniform", 0.0, float(run.max_dp[k].max()), float(run.max_dp[k].max()),
             1 / cfg.L ** 2, "Definition F.1: |p - p(0)| < 1/L^2 throughout", kind="simulation"),
        Part("loss_small", 0.0, final, final, 4.0 / cfg.steps,
             "Fig. 1(b): all losses -> ~0 like 1/t (loss x step stays below 4 in our own "
             "replication of Appendix A); bound 4/steps", kind="simulation"),
    ), {"steps": cfg.steps, "T1_step": int(run.steps[i]), "S0": float(run.S0[k])})


#: the two readings of Appendix A's unspecified "Kaiming" initialisation
KAIMING = ("kaiming_uniform", "kaiming_normal")

#: the power design of ``appendix_a_hump`` (fixed before its first run at this design): a run
#: lacks the hump or not (a Bernoulli trial; runs independent: each its own data set and
#: initialisation), and the statement is decided on the Wilson 99 % interval of the fraction
#: of runs without it against 1/2 (holds when the upper end is below, refuted when the lower
#: end is above).  The number of runs per reading is the smallest with probability >= 0.9 of
#: deciding in both directions when the truth is clear: a miss rate of 3/10 (a representative
#: figure: holds) and of 7/10 (an unrepresentative one: refuted), symmetric about the
#: threshold.  A miss rate nearer 1/2 is left undecided by design.
HUMP_POWER = {"hold_rate": 0.3, "refute_rate": 0.7, "power": 0.9, "confidence": 0.99,
              "threshold": 0.5}


def _decides(n: int, rate: float, side: str, threshold: float, confidence: float) -> float:
    """Exact binomial probability that n runs at miss rate ``rate`` give a Wilson interval
    wholly below (side "hold") or above (side "refute") ``threshold``."""
    total = 0.0
    for k in range(n + 1):
        lo, hi = _wilson(k, n, confidence)
        if (hi < threshold) if side == "hold" else (lo > threshold):
            total += math.comb(n, k) * rate ** k * (1 - rate) ** (n - k)
    return total


def _hump_runs(hold_rate: float, refute_rate: float, power: float, confidence: float,
               threshold: float, n_max: int = 2000) -> int:
    """Smallest number of runs whose decision has probability >= ``power`` both at
    ``hold_rate`` (holds) and at ``refute_rate`` (refuted): :data:`HUMP_POWER`."""
    for n in range(2, n_max + 1):
        if (_decides(n, hold_rate, "hold", threshold, confidence) >= power
                and _decides(n, refute_rate, "refute", threshold, confidence) >= power):
            return n
    raise ValueError(f"no design with power {power} up to {n_max} runs")


def _hump_design() -> dict:
    return {k: HUMP_POWER[k] for k in
            ("hold_rate", "refute_rate", "power", "confidence", "threshold")}


@functools.cache
def hump_power(profile: str) -> PowerPlan:
    """``appendix_a_hump`` 's power plan at ``profile``: the runs per Kaiming reading the
    profile's size table gives (None: the design's own number, :func:`_hump_runs`) and the
    exact probability (:func:`_decides`) that they decide at the design's two miss rates;
    the profile decides when the smaller of the two reaches the design's power."""
    d = _hump_design()
    needed = _hump_runs(**d)
    have = nc.SIZES.at("hump_appendix_a", profile)["runs"] or needed
    power = min(_decides(have, d["hold_rate"], "hold", d["threshold"], d["confidence"]),
                _decides(have, d["refute_rate"], "refute", d["threshold"], d["confidence"]))
    return PowerPlan(
        decides=power >= d["power"], have=int(have), needed=needed,
        unit="runs per Kaiming reading",
        design=(f"HUMP_POWER: probability >= {d['power']:g} of deciding at miss rates "
                f"{d['hold_rate']:g} (holds) and {d['refute_rate']:g} (refuted), Wilson "
                f"{100 * d['confidence']:g} % interval against {d['threshold']:g}; a miss "
                "rate nearer 1/2 is left undecided by design"),
        power=power, band=(d["hold_rate"], d["refute_rate"]), statistic="runs_without_hump_")


#: the fewest runs whose Wilson 99 % interval can lie below 1/2 (none of them missing the
#: hump: 7 / (7 + z^2) < 1/2 with z = 2.576, while 6 runs cannot): the positive control's
#: smoke size (``numerics.cooccurrence.SIZES["hump_theory"]``, held to it by a test), where
#: the theory predicts the hump in every run
HUMP_POSITIVE_SMOKE_RUNS = 7


@claim(
    statement="Appendix A (the setup of Fig. 1, p. 6: n = 60 with 30/10/10/10 samples of the "
              "four types, '5 patches' (L = 5), 'each patch has dimension 64' (d = 64), "
              "'embedding dimension' m = 128, 'number of neurons' m1 = 256, 'Kaiming' "
              "initialisation, gradient descent at lr 0.01) and Fig. 1(b): the losses of the "
              "samples with only one target signal (I2, I3) first increase, then decrease, in "
              "Phase 1 (before all samples are classified).  Fig. 1 is one run and the NeurIPS "
              "checklist (item 7, error bars) calls the behaviour '... pretty consistent': read "
              "as 'the figure is representative', i.e. fewer than half of independent runs of "
              "that setup (each its own data set and initialisation) lack the rise and fall, "
              "under each reading of 'Kaiming'",
    source="Appendix A, Fig. 1(b), NeurIPS checklist item 7; Lemmas 4.2-4.3 (T_0.5 > 0)",
    kind="published-number",
    strategy=_SEEDS,
    theory={"theory": tc, "kind": "appendix_a"},
    control={"theory": UNIFORM, "kind": "appendix_a"},
    control_description=UNIFORM.label + " (T_0.5 = 0: no hump predicted)",
    cost="slow",
    examples=(Example({"seed": 0}, via="Appendix A's configuration (Fig. 1); the paper states "
                                       "no seed"),),
    power=hump_power,
    # from the power plan (hump_power), not from a run: the smoke size's 4 runs per reading
    # cannot decide at any miss rate; quick, ci and thorough run the design's runs or more
    expected_at={"test": "inconclusive"},
    positive=Positive({"seed": 0}, "the same check in the theory-scaled small-initialisation "
                                   "regime (|F(0)| << 1, SIZES hump_theory), where the "
                                   "theory's T_0.5 > 0 predicts the hump in every run",
                      theory={"theory": tc, "kind": "theory"}),
    notes="replaces the former refutation 'whatever the initialisation', a strengthening of a "
          "one-run figure on one data set that also hung on one reading of 'Kaiming'.  "
          "Appendix A leaves the Kaiming variant open: both readings are tested (nn.Linear's "
          "default U(+-1/sqrt(fan_in)), and N(0, 2/fan_in)), each must hold.  Every run has "
          "its own data set (Definition 2.1 drawn anew) and initialisation; the number of "
          "runs comes from the power design HUMP_POWER (90 % power at miss rates 0.3 and "
          "0.7, Wilson 99 %), fixed before this design's first run; the former design (16 "
          "data sets x 2 initialisations sharing them) had power 0.34 at the same rates.  "
          "Runs stop at 60 steps (the check reads the losses up to first classification, "
          "and raises if a run is not classified by then).  Expected outcome by profile from "
          "the power plan (hump_power): where the profile's runs decide at the design's "
          "rates (quick, ci, thorough) the paper's holds; at smoke size inconclusive.  The "
          "design is powered at miss rates 0.3 and 0.7 only, so its plan states the band "
          "(0.3, 0.7) between them: an inconclusive outcome with every undecided reading's "
          "Wilson interval inside it has decided that the miss rate lies between the "
          "planning values, a finding (the README's rule for every banded plan; issue 39): "
          "the figure is then not clearly representative, which the paper's 'pretty "
          "consistent' does not lead one to expect; undecided with an interval reaching past "
          "0.3 or 0.7 is not as expected",
)
def check_appendix_a_hump(params: dict, ctx: Context, *, theory, kind: str = "appendix_a"
                          ) -> Evidence:
    """Fig. 1(b): fraction of runs whose I2 or I3 loss does not rise (>= 2 %) and fall again
    (to <= 98 % of its peak) before T1; every run its own data set and initialisation, as many
    runs per reading as the power design asks (:data:`HUMP_POWER`, :func:`_hump_runs`) unless
    the profile's size table fixes the number (smoke size, thorough)."""
    seed = int(params.get("seed", 0))
    size = ctx.size(nc.SIZES, f"hump_{kind}")
    runs = size["runs"]
    if runs is None:
        runs = _hump_runs(**{k: HUMP_POWER[k] for k in
                             ("hold_rate", "refute_rate", "power", "confidence", "threshold")})
    if size["config"].members != 1:
        raise ValueError("appendix_a_hump draws one initialisation per data set (members=1)")
    th = float(theory.t_half())
    pred = 0.0 if th > 0 else 1.0
    readings = KAIMING if kind == "appendix_a" else ("theory",)
    parts, per = [], {}
    for init in readings:
        missing, rec = 0, []
        for r in range(int(runs)):
            cfg = replace(size["config"], init=init, data_seed=1000 * seed + r,
                          seed=1000 * seed + r)
            run = _run(cfg, ctx)
            i = _classified(run, 0)
            tl = run.type_loss[0, : i + 1]
            rise = [float(tl[:, c].max() / tl[0, c]) for c in (1, 2)]
            fall = [float(tl[-1, c] / tl[:, c].max()) for c in (1, 2)]
            ok = min(rise) >= 1.02 and max(fall) <= 0.98
            missing += int(not ok)
            rec.append(round(min(rise), 4))
        frac = missing / runs
        lo_f, hi_f = _wilson(missing, runs, HUMP_POWER["confidence"])
        lo, hi = (lo_f, hi_f) if pred == 0.0 else (1 - hi_f, 1 - lo_f)
        parts.append(Part.bounded(
            f"runs_without_hump_{init}", pred, frac, abs(frac - pred), lo, hi,
            HUMP_POWER["threshold"],
            "Fig. 1(b) / Lemmas 4.2-4.3 (the theory's T_0.5 > 0 predicts the hump in every "
            "run): fraction of runs whose I2 or I3 loss does not rise by 2 % and fall again "
            "before T1, Wilson 99 % interval over independent runs; a figure is "
            "representative when under half of the runs lack its feature (tolerance 1/2)",
            confidence=HUMP_POWER["confidence"],
            details={"runs": runs, "missing": missing,
                     "no_rise_at_all": sum(1 for x in rec if x <= 1.0)}, kind="simulation"))
        per[init] = rec
    return Evidence(tuple(parts), {"kind": kind, "smallest_rise": per, "t_half": th,
                                   "runs_per_reading": runs})


# ---------------------------------------------------------------------- 12 open: test loss
@claim(
    statement="open (reviewers' question: does the validation loss decay like the training "
              "loss?). Hypothesis: on fresh samples with unseen tokens the loss is the class "
              "loss at the special tokens' G(tau) of the training dynamics (unseen tokens keep "
              "G(0)), so it falls like tau^-kappa, kappa = min_k q_k(beta*_{1:3}), slower "
              "than the training loss",
    source="Theorem 3.3 / F.20 (L(T*) <= 1/poly(m)); the OpenReview reviews' validation-loss "
           "question; the hypothesis is ours",
    kind="open-question",
    strategy=_SEEDS,
    theory={"theory": tc, "series": "val", "margins": "class"},
    control={"theory": tc, "series": "val", "margins": "sample"},
    control_description="test loss following the training law (the training samples' margins, "
                        "private tokens included)",
    expected="open",
    cost="slow",
    examples=(_PIN, _PIN1),
    positive=Positive({"seed": 0}, "the same check on the training loss against the training "
                                   "samples' margins",
                      theory={"theory": tc, "series": "train", "margins": "sample"}),
    notes="the former part fitted a log-log slope against kappa over the last decade, which "
          "depends on the window (the local exponent still drifts towards kappa); the parts now "
          "compare the loss and its local slope with the reduction's finite-tau curve over the "
          "same window; kappa is in the details. Mini-batch Adam and frozen attention (the "
          "other reviewer questions) are not checked here.  Issue 36 (session of 2026-12-06): "
          "the second pinned data set (seed 1) added, so the comparison is read on two data "
          "sets; its runs are the other claims' (shared in the cache).  Quick (3f8f96c): "
          "holds on both, worst val_loss_end 0.017 / 0.0543 (seed 0)",
)
def check_validation_exponent(params: dict, ctx: Context, *, theory, series: str = "val",
                              margins: str = "class") -> Evidence:
    """Open: the fresh-sample loss against the class loss at the reduction's G(tau_eff)."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    mm = theory.sample_max_margin(run.data.tokens, run.data.labels, cfg.vocabulary)
    kappa = float(theory.test_loss_exponent(mm))
    w = np.array([float(x) for x in theory.WEIGHTS])
    # the spread of the set's random tokens' G at the end (unseen tokens: their W_V columns
    # never move, u = W^T a does) is the member's own (_g_sd), the same for check and
    # control: from the theory it would move with it
    lvl, slp = _NONE_YET, _NONE_YET
    slope_tols, level_tols = [], []
    for k in range(cfg.members):
        sdG = (_g_sd(run, k, run.val, record=-1) if series == "val" else _g_sd(run, k))
        te = run.tau_eff[k]
        y = run.val_loss[k] if series == "val" else run.loss[k]
        sel = te >= 0.1 * te[-1]
        Y = _private(theory, cfg, np.concatenate([[0.0], te[sel]]), _start(run, k))[:, 1:]
        if margins == "class":
            pred = w @ np.array(theory.class_losses_twin(*Y[:3]))
        else:
            pred = w @ theory.private_losses(Y, cfg.L)
        # each sample's margin carries the G of its own unseen tokens (at tau_end), or for
        # the training set its random tokens' G(0) spread, sd sd_G sqrt(L - 1) at most: a factor e^{-x} on an exponential
        # tail, whose mean over the n_k >= n_set/6 samples of a class scatters by
        # sd_G sqrt(L - 1)/sqrt(n_k): 3 sd of that
        n_set = cfg.n_val if series == "val" else cfg.n
        tol = 3 * sdG * math.sqrt(cfg.L - 1) / math.sqrt(n_set // 6)
        level_tols.append(tol)
        e = abs(math.log(float(y[-1]) / float(pred[-1])))
        lvl = _worse((float(pred[-1]), float(y[-1]), e, tol), lvl)
        s_obs = float(np.polyfit(np.log(te[sel]), np.log(y[sel]), 1)[0])
        s_pred = float(np.polyfit(np.log(te[sel]), np.log(pred), 1)[0])
        # a constant factor leaves the slope; the GD lead g/2 in time shifts the window by
        # log(1 + g/2) out of its log-length log(10): g/2 / log 10; the factor departs from a
        # constant by at most tol x the loss's own change over the window (the tail is
        # exponential up to O(loss)), the observed loss's: the same for check and control
        y_win = np.asarray(y[sel], dtype=float)
        stol = cfg.growth / 2 / math.log(10) + tol * abs(float(y_win[0] - y_win[-1]))
        slope_tols.append(stol)
        slp = _worse((s_pred, s_obs, abs(s_obs - s_pred), stol), slp)
    return Evidence((
        _worst_member_part(Part(
            f"{series}_loss_end", lvl[0], lvl[1], lvl[2], lvl[3],
            "log of the loss at tau_end against the reduction's (class margins at its G for "
            "fresh samples; theory.private_trajectory at tau_eff); allowance: the unseen "
            "tokens' G: 3 sd of a class mean of e^{-x}, x of sd sd_G sqrt(L - 1) (sd_G the "
            "member's own: over the unseen tokens at tau_end for the fresh samples, over the "
            "training random tokens' G(0) for the training set, _g_sd)", kind="simulation"),
            level_tols, lvl),
        _worst_member_part(Part(
            f"{series}_slope", slp[0], slp[1], slp[2], slp[3],
            "log-log slope over the last decade of tau_eff against the reduction's over the "
            "same window; allowance: GD's time lead g/2 over the window's log-length, and the "
            "level allowance times the observed loss's change over the window",
            kind="simulation"), slope_tols, slp),
    ), {"kappa": kappa, "val_over_train_end": float(np.max(run.val_loss[:, -1] /
                                                           run.loss[:, -1]))})


# ---------------------------------------------------------------------- 13 initial output
#: initialisations drawn per example of ``initial_output`` (one forward pass each)
F0_DRAWS = 200


@claim(
    statement="Lemma D.8: with probability >= 1 - delta, |F(0)(X_i)| <= 2 sigma0 sigma1 "
              "sqrt(2 L m1 m log(2 L n/delta)) for every training sample; and (our derivation) "
              "F(0) has standard deviation sigma0 sigma1 sqrt(L m m1)",
    source="Lemma D.8, Condition 1; the standard deviation is our derivation",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"seed": st.integers(0, 1000),
                                    "m": st.sampled_from((256, 512, 1024)),
                                    "m1": st.sampled_from((4, 16, 64))}),
    theory={"theory": tc},
    control={"theory": ONE_TOKEN},
    control_description=ONE_TOKEN.label,
    cost="slow",
    examples=(Example({"seed": 0, "m": 512, "m1": 8},
                      via="the widths of the quick theory-scaled run (m = 512, m1 = 8)"),),
    notes="replaces the former refutation of 'Condition 1 makes |F(0)| <= 0.01', read without "
          "Condition 1's hidden logarithms (sigma0 = 1/sqrt(L m) literally): a reading, not "
          "the paper's statement; Lemma D.8's own bound is tested instead, at Condition 1's "
          "sigma0 = 1/sqrt(L m), sigma1 = 1/sqrt(m1), delta = 0.05 (the largest |F(0)| over "
          "the training set, against the 0.01 of the old reading, is in the details).  One "
          "data set suffices (issue 36): both parts are over initialisations (F0_DRAWS), and "
          "the law of F(0) at uniform attention depends on the data only through L distinct "
          "tokens per sample.  The Lemma D.8 part is a high-probability upper bound that sits "
          "far out (2 sqrt(2 ln(2 L n / delta)) sd, 8.67 at L = 5, n = 60, delta = 0.05), so it "
          "cannot fail under the paper's bound nor "
          "a 5 % slip of it: it checks the inequality's direction only; G0_variance is the "
          "quantitative part",
)
def check_initial_output(params: dict, ctx: Context, *, theory) -> Evidence:
    """Lemma D.8 over F0_DRAWS initialisations; the sd of F(0) against our derivation."""
    seed, m, m1 = int(params.get("seed", 0)), int(params["m"]), int(params["m1"])
    n, L, delta = 60, 5, 0.05
    s0, s1 = 1 / math.sqrt(L * m), 1 / math.sqrt(m1)
    run = nc.run_initial_outputs(
        nc.InitialOutputsConfig(n=n, L=L, m=m, m1=m1, sigma0=s0, sigma1=s1, data_seed=seed,
                                seeds=tuple(ctx.seeded(seed * 100_003 + j)
                                            for j in range(F0_DRAWS))),
        cache=ctx.cache, device=ctx.device)
    bound = float(theory.initial_output_bound(s0, s1, L, m, m1, n, delta))
    sd = float(theory.initial_output_sd(s0, s1, L, m, m1))
    over = int(np.sum(run.max_abs_F > bound))
    var = run.G_sq_mean * L / sd ** 2
    worst = float(run.max_abs_F.max())
    lo, hi = _wilson(over, F0_DRAWS)
    # part kinds: the observed side is the model's forward pass at initialisation (a
    # Monte-Carlo estimate over F0_DRAWS draws, no training: run_initial_outputs is declared
    # full_model=False), an independent computation of the distribution the theory's
    # formulas give: symbolic, not simulation.  The draws run on ctx.device in float64 (a
    # CUDA run can differ from the CPU's at rounding level; the device is in the run's key)
    return Evidence((
        Part.bounded("lemma_d8_violations", 0.0, over / F0_DRAWS, over / F0_DRAWS, lo, hi,
                     delta, "Lemma D.8: the fraction of initialisations with some |F_i(0)| above "
                     "the bound (theory.initial_output_bound) is at most delta = 0.05; Wilson "
                     "99 % interval over draws", details={"bound": bound, "draws": F0_DRAWS}, kind="symbolic"),
        over_seeds("G0_variance", 1.0, np.array(var), 0.05,
                   "L x mean G(mu)^2 over the vocabulary in units of sd(F(0))^2 "
                   "(theory.initial_output_sd: Var F = L Var G at uniform attention), one value "
                   "per initialisation, Student-t over initialisations; E G^2 = sigma0^2 E|u|^2 "
                   "holds exactly, so no mismatch is expected: 0.05 is the smallest slip this "
                   "budget resolves (the interval half-width is about half of it)", kind="symbolic"),
    ), {"max_abs_F0": worst, "old_reading_bound": 0.01, "sd": sd})


def claims() -> list[Claim]:
    """The cooccurrence row's claims, in source order."""
    return declared(__name__)
