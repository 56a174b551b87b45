"""Claims of Yang, Kailkhura, Wang, Liang (NeurIPS 2024): the ``cooccurrence`` row.

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory`` and
``control`` are the keyword arguments that make the one check test the paper's theory (the
module :mod:`theory.cooccurrence`, called at check time) and a near-miss wrong theory (the same
module with one function replaced, :class:`_Theory`), so the control runs the same code by
construction.  Sources cite the paper's numbering; "our derivation" marks what the paper does
not state (the canonical ODE, the four-class reduction, the max-margin constants).

Runs (our choices, Condition 1 respected): the *theory-scaled* configuration n = 60, L = 5,
private random tokens (Assumption 2.3(ii)), d = 3 + training + validation slots, m = 512,
m1 = 8, sigma1 = 1/sqrt(m1), sigma0 = 0.05/sqrt(L m) (small enough that |F(0)| << 1; see the
``initial_output`` claim for why Condition 1's sigma0 = 1/sqrt(L m) is not), two
initialisations stacked in one float64 full-batch GD run (:func:`numerics.ensemble.train`)
with equal tau-steps 0.02 for 50 steps, then a step growing 1.5 % per step (the curvature
falls like 1/tau), reaching tau = int S dt ~ 2e4 in 700 steps.  m1 is small so that S drifts
little (Delta S / S ~ m1 |beta|^2 / S^2, Lemma F.10).  ``ratio_limit`` also runs n = 6, L = 12
(outside Condition 1, where the max-margin R_inf < 1).  The Appendix A configuration (Fig. 1)
and the stacked initialisations of ``appendix_a_hump`` are sized by profile in the row's one
table, :data:`numerics.cooccurrence.SIZES` (which also says what ``thorough`` runs: the paper's
own configuration where it has one, else the largest of our theory-scaled runs).  Every run
goes through :func:`numerics.cooccurrence.run` or :func:`numerics.cooccurrence.run_closure`,
the row's run functions (bounded in-process LRU over the shared run cache, device in the key).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import cooccurrence as nc
from theory import cooccurrence as tc
from verify.claims import Claim, Context, Evidence, Example, Part, Positive, claim, declared
from verify.error_models import identically_zero

__all__ = ["claims"]

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
        ("class_gamma", lambda G, L, m, w=None: tc.class_gamma(G, L, m, weights)),
        ("initial_rates", lambda w=None: tc.initial_rates(rational)),
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
                  (("class_gamma", lambda G, L, m, w=None: -tc.class_gamma(G, L, m)),))


def _no_m_term(state, tokens, labels, m, m1):
    return tc.canonical_velocity({**state, "M": np.zeros_like(np.asarray(state["M"]))},
                                 tokens, labels, m, m1)


NO_M_TERM = _Theory("canonical system without the m1 M r term (approximation (d) of our "
                    "four-class reduction)",
                    (("canonical_velocity", _no_m_term),))


def _swapped_invariants(state, m1):
    out = tc.invariants(state, m1)
    M = np.asarray(state["M"], dtype=float)
    out["value_balance"] = float(state["S"]) + m1 * float(np.trace(M))
    return out


WRONG_INVARIANT = _Theory("S + m1 tr M (sign swapped) as the value invariant",
                          (("invariants", _swapped_invariants),))



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


_SEEDS = st.fixed_dictionaries({"seed": st.integers(0, 1000)})
#: the pinned example of the claims on our own runs: the paper states no seed, and seed 0 is
#: the data set and initialisations on which the row's runs and figures are drawn.
_PIN = Example({"seed": 0}, via="seed 0: the data set and initialisations of the row's figures "
                               "(the paper states no seed)")


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
    examples=(_PIN,),
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
    return Evidence((
        Part("first_order", 2.0, e1 / e2, abs(e1 / e2 - 2.0), 0.3,
             "GD's global error is c1 eta + c2 eta^2 against gradient flow; the eta^2 term moves "
             "the ratio e(eta)/e(eta/2) off 2 by ~ (c2/c1) eta (a few % at eta |H| ~ 1e-3); "
             "0.3 allowance", details={"e_eta": e1, "e_eta_half": e2, "eta": eta}),
        Part("richardson", 0.0, rich, rich, 0.25 * e2 + 1e-8,
             "Richardson 2X(eta/2) - X(eta) cancels the O(eta) error; the O(eta^2) remainder is "
             "below e(eta/2)/4 when (c2/c1) eta < 1/2; 1e-8 for the ODE solver (rtol 1e-10)",
             details={"relative_motion": moved}),
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
)
def check_invariants(params: dict, ctx: Context, *, theory) -> Evidence:
    """Zero symbolic drift; exact GD drift eta^2 (|g_W|^2 - |g_V|^2); W_K = W_Q = 0 invariant."""
    seed = int(params.get("seed", 0))
    parts = []
    for name, drift in theory.invariant_drifts(2).items():
        # 1 for any drift that does not simplify to zero (a numeric substitution alone could
        # vanish by accident)
        parts.append(identically_zero(f"symbolic_{name}", drift,
                                      "exact sympy identity along the canonical ODE: 0 if the "
                                      "simplified drift is identically zero, else 1"))
    run = _run(_main_config(ctx, seed), ctx)
    m1 = run.config.m1
    worst_v = worst_kq = 0.0
    pred_v = obs_v = pred_kq = obs_kq = 0.0
    for k in range(run.config.members):
        start = theory.invariants(nc.canonical_state(nc.member(run.initial, k)), m1)
        end = theory.invariants(nc.canonical_state(nc.member(run.final, k)), m1)
        lr2 = run.lr_steps[k] ** 2
        pv = m1 * float(np.sum(lr2 * (run.grad_sq["W"][k] - run.grad_sq["WV"][k])))
        pk = float(np.sum(lr2 * (run.grad_sq["WK"][k] - run.grad_sq["WQ"][k])))
        ov = end["value_balance"] - start["value_balance"]
        ok = end["kq_balance"] - start["kq_balance"]
        if abs(ov - pv) >= worst_v:
            worst_v, pred_v, obs_v = abs(ov - pv), pv, ov
        if abs(ok - pk) >= worst_kq:
            worst_kq, pred_kq, obs_kq = abs(ok - pk), pk, ok
    # float64 rounding: each GD step rounds every weight (relative eps), which moves an
    # invariant built from squared weights by ~ 2 eps x (sum of its terms' sizes); a worst
    # case adds these linearly over the run: ROUND_ULPS eps x steps x size, ROUND_ULPS = 4 for
    # the factor 2 of the squares and the rounding of the update and of the trace sums.
    steps = run.config.steps
    ends = [nc.canonical_state(nc.member(p, k)) for p in (run.initial, run.final)
            for k in range(run.config.members)]
    size_v = max(abs(float(c["S"])) + m1 * abs(float(np.trace(np.asarray(c["M"]))))
                 for c in ends)
    size_kq = max(float(np.trace(np.asarray(c["K_G"])) + np.trace(np.asarray(c["Q_G"])))
                  for c in ends)
    parts.append(Part("gd_value_balance", pred_v, obs_v, worst_v, ROUND_ULPS * EPS * steps * size_v,
                      "exact GD identity: first-order terms cancel as in the flow, each step "
                      "adds m1 eta^2 (|dL/dW|^2 - |dL/dW_V|^2); float64 rounding of S + m1 tr M "
                      "(4 eps per step, linear accumulation)"))
    parts.append(Part("gd_kq_balance", pred_kq, obs_kq, worst_kq,
                      ROUND_ULPS * EPS * steps * size_kq,
                      "exact GD identity eta^2 (|dL/dW_K|^2 - |dL/dW_Q|^2) per step; float64 "
                      "rounding of tr K_G + tr Q_G (4 eps per step, linear accumulation)",
                      details={"predicted_drift_over_tolerance":
                               abs(pred_kq) / (ROUND_ULPS * EPS * steps * size_kq)}))
    zrun = _run(_sized(ctx, "zero_kq", seed), ctx)
    kq = max(float(zrun.final["WK"].abs().max()), float(zrun.final["WQ"].abs().max()))
    parts.append(Part("kq_stays_zero", 0.0, kq, kq, 0.0,
                      "W_K = W_Q = 0 is invariant: their gradients W_Q Gamma^T, W_K Gamma vanish "
                      "exactly (no rounding: products with exact zeros)"))
    dp = float(np.max(zrun.max_dp))
    parts.append(Part("uniform_attention", 0.0, dp, dp, 0.0,
                      "softmax of all-zero scores is the same float 1/L at every step"))
    return Evidence(tuple(parts), {"members": run.config.members})


# ---------------------------------------------------------------------- 3 phase 1
@claim(
    statement="all samples are classified at tau = S0 t = O(1) with attention and S nearly "
              "frozen, G1, G2 > 0 > G3; initially dG1/dtau = 1/6, dG3/dtau = 0",
    source="Theorem 3.1 / E.28, Lemmas 4.1-4.2 (E.4, E.16), Propositions E.3, E.12",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": UNIFORM},
    control_description=UNIFORM.label,
    cost="slow",
    examples=(_PIN,),
)
def check_phase1(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem 3.1 / E.28 and Lemmas 4.1-4.2 in the theory-scaled run."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    rates = [float(x) for x in theory.initial_rates()]
    taus = np.geomspace(1e-3, 200.0, 4000)
    Gc = theory.class_trajectory(taus)
    qc = np.array(tc.class_margins(list(Gc)))
    hit = np.nonzero(qc.min(axis=0) > 0)[0]
    tau_cls_pred = float(taus[hit[0]]) if hit.size else math.inf
    obs_tcls, r1, r3, dps, dS, dA, losses, wrong = [], [], [], [], [], [], [], 0
    for k in range(cfg.members):
        i = _classified(run, k)
        obs_tcls.append(float(run.tau[k, i]))
        _, rate = _rates(run, k)
        r1.append(float(rate[0, 0]))
        r3.append(float(rate[0, 2]))
        dps.append(float(run.max_dp[k, i]))
        dS.append(abs(float(run.S[k, i] / run.S0[k]) - 1))
        dA.append(float(np.max(np.abs(run.A3[k, i] - run.A3[k, 0]))))
        losses.append(float(run.loss[k, i]))
        G = run.beta[k, i, :3]
        wrong += int(not (G[0] > 0 and G[1] > 0 and G[2] < 0))
    t_obs = float(np.mean(obs_tcls))
    w1 = max(r1, key=lambda x: abs(x - rates[0]))
    w3 = max(r3, key=lambda x: abs(x - rates[2]))
    lw = max(losses, key=lambda x: max(0.2 - x, x - 0.7))
    # the rate allowance is relative to the measured scale of the rates (min over members of
    # the measured initial dG1/dtau), not to either theory's prediction
    rate_tol = 0.2 * min(abs(x) for x in r1)
    return Evidence((
        Part("t_cls", tau_cls_pred, t_obs, abs(math.log(t_obs / tau_cls_pred)), math.log(3),
             "Theorem 3.1 gives T1 = Theta(1/(sigma1^2 m m1)) only; the four-class ODE ignores the "
             "private tokens, which speed classification up (by about a quarter in our exact "
             "canonical runs at m = 4096); factor 3",
             details={"members": obs_tcls}),
        Part("initial_rate_mu1", rates[0], w1, abs(w1 - rates[0]), rate_tol,
             "Lemma 4.1: dG(mu1)/dtau -> (pi1 - pi2)/2; corrections O(sigma0^2/sigma1^2) (m1 M r), "
             "O(|F(0)|) and the finite difference over the first record: 20 % of the measured "
             "initial dG1/dtau"),
        Part("initial_rate_mu3", rates[2], w3, abs(w3 - rates[2]), rate_tol,
             "Lemma 4.2: positive and negative samples cancel, dG(mu3)/dtau -> 0; same "
             "corrections as for mu1: |dG3 - predicted| <= 0.2 x measured dG1"),
        Part("attention_frozen", 0.0, max(dps), max(dps), 10 / (cfg.L * cfg.m),
             "Proposition E.3 / Corollary E.24: |p - p(0)| = O~(1/(L m)) in Phase 1; 10/(Lm)"),
        Part("S_constant", 0.0, max(dS), max(dS), 0.05,
             "Proposition E.12: S changes by O~(1/m) relative in Phase 1; 5 %"),
        Part("score_change", 0.0, max(dA), max(dA), 10 / cfg.m ** 1.5,
             "Theorem E.28: |Delta score| <= O~(m^-3/2); constant 10"),
        Part("loss_at_T1", 0.45, lw, max(0.0, 0.2 - lw, lw - 0.7), 0.0,
             "Theorem 3.1: L(T1) = Theta(1); our window [0.2, 0.7]"),
        Part("signs_at_T1", 0.0, wrong, wrong, 0.0,
             "Theorem 3.1: G1, G2 >= Omega(1) > 0 > G3 at T1 (count of members violating)"),
    ), {"S0": run.S0.tolist()})


# ---------------------------------------------------------------------- 4 hump
@claim(
    statement="the I2/I3 losses rise, peak near T_0.5 and fall within Phase 1",
    source="Fig. 1(b), Lemmas 4.2-4.3; the peak identity (our derivation, "
           "theory.cooccurrence.peak_identity)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": UNIFORM},
    control_description=UNIFORM.label,
    cost="slow",
    examples=(_PIN,),
)
def check_single_target_hump(params: dict, ctx: Context, *, theory) -> Evidence:
    """Fig. 1(b), Lemmas 4.2-4.3: I2/I3 losses rise, peak near T_0.5, fall within Phase 1."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    th = float(theory.t_half())
    taus = np.geomspace(1e-3, 50.0, 3000)
    Gc = theory.class_trajectory(taus)
    l2 = tc.class_losses_twin(*Gc)[1]  # the I2 class loss l(q2)
    pred_ratio = float(l2.max() / math.log(2))
    ratios, peaks, falls = [], [], []
    for k in range(run.config.members):
        i_cls = _classified(run, k)
        for c in (1, 2):
            curve = run.type_loss[k, : i_cls + 1, c]
            j = int(np.argmax(curve))
            ratios.append(float(curve[j] / curve[0]))
            peaks.append(float(run.tau[k, j]))
            falls.append(float((curve[j] - curve[-1]) / curve[j]))
    r_obs = min(ratios)
    tpk = float(np.exp(np.mean(np.log(np.maximum(peaks, 1e-300)))))
    return Evidence((
        Part("rise", pred_ratio, r_obs, abs(r_obs - pred_ratio), 0.6 * abs(pred_ratio - 1),
             "private tokens give single-target samples extra margin and cut the rise (in our "
             "exact canonical runs to well below the four-class one); allowance 60 % of the "
             "predicted rise",
             details={"ratios": ratios}),
        Part("peak_vs_t_half", th, tpk,
             abs(math.log(tpk / th)) if th > 0 else math.inf, math.log(2),
             "peak identity (exact in the 4-class system); private tokens and |F(0)| move the "
             "full model's peak (earlier, in our exact canonical runs); factor 2",
             details={"peaks": peaks}),
        Part("falls_in_phase1", 0.0, min(falls), max(0.0, 0.02 - min(falls)), 0.0,
             "Lemma 4.3: after T_0.5 the single-target losses fall before T1 (>= 2 % below peak)"),
    ), {"t_half": th})


# ---------------------------------------------------------------------- 5 sandwich
SANDWICH_C = 0.05  # our choice of Lemma 4.3's constant C in (0, 1)


def _sandwich_onset(tm: np.ndarray, r: np.ndarray, c: float) -> float:
    """The earliest record midpoint from which (1+c) max(dG1, dG2) <= -dG3 <= (1-c)(dG1 + dG2)
    holds on every later record (inf if it fails at the last one)."""
    low = -r[:, 2] / np.maximum(r[:, 0], r[:, 1]) - 1
    up = 1 + r[:, 2] / (r[:, 0] + r[:, 1])
    bad = np.nonzero(~((low >= c) & (up >= c)))[0]
    if bad.size and bad[-1] == len(tm) - 1:
        return math.inf
    return float(tm[int(bad[-1]) + 1]) if bad.size else float(tm[0])


@claim(
    statement="from some T_0.5 <= T1 (near the four-class T_0.5) to the end of the run: "
              "(1+C) max(dG1, dG2) <= -dG3 <= (1-C)(dG1 + dG2), C = 0.05",
    source="Lemma 4.3 / Theorem E.19, Lemma 4.5 / F.6",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": UNIFORM},
    control_description=UNIFORM.label + " (T_0.5 = 0)",
    cost="slow",
    examples=(_PIN,),
)
def check_sandwich(params: dict, ctx: Context, *, theory) -> Evidence:
    """Lemma 4.3 / E.19 (and F.6 in Phase 2): there is T_0.5 <= T1 such that
    (1+C) max(dG1, dG2) <= -dG3 <= (1-C)(dG1 + dG2) on [T_0.5, tau_end], C = 0.05.

    The onset is measured (the earliest record from which the sandwich holds to the end of the
    run); the lemma needs it before first classification, and the theory's four-class T_0.5
    (the equality point -dG3 = max(dG1, dG2)) predicts where it lies.
    """
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    th = float(theory.t_half())
    onsets, ratios, t1s, ups = [], [], [], []
    for k in range(run.config.members):
        tm, r = _rates(run, k)
        onset = _sandwich_onset(tm, r, SANDWICH_C)
        t1 = float(run.tau[k, _classified(run, k)])
        onsets.append(onset)
        t1s.append(t1)
        ratios.append(onset / t1)
        sel = tm >= th  # the upper side from the theory's T_0.5 on (not from the onset)
        ups.append(float(np.min(1 + r[sel, 2] / (r[sel, 0] + r[sel, 1]))))
    late = max(ratios)
    worst = max(onsets, key=lambda x: abs(math.log(x / th)) if th > 0 and math.isfinite(x)
                else math.inf)
    err = abs(math.log(worst / th)) if th > 0 and math.isfinite(worst) else math.inf
    return Evidence((
        Part("onset_before_T1", 1.0, late, max(0.0, math.log(late)) if late > 0 else math.inf,
             0.0, "Lemma 4.3/E.19: the sandwich with C = 0.05 holds from some T_0.5 <= T1 to the "
             "end of the run (T1 = first classification; onset/T1, largest over members); "
             "finite differences of recorded G", details={"onsets": onsets, "T1": t1s}),
        Part("onset_vs_t_half", th, worst, err, math.log(2),
             "the four-class T_0.5 (equality -dG3 = max(dG1, dG2)) predicts the onset; C = 0.05 "
             "delays it past the equality point, and private tokens and |F(0)| move the full "
             "model's timing (later, in our exact canonical runs; same factor 2 as "
             "peak_vs_t_half)"),
        Part("upper_side_margin", SANDWICH_C, min(ups), max(0.0, SANDWICH_C - min(ups)), 0.0,
             "Lemma 4.3/F.6 upper side -dG3 <= (1-C)(dG1 + dG2) on [T_0.5 (theory), tau_end]: "
             "min (1 + dG3/(dG1 + dG2)) >= C"),
    ), {"t_half": th})


# ---------------------------------------------------------------------- 6 balancing
@claim(
    statement="automatic balancing: sum_I2 g / sum_I3 g stays within 10 % of 1 after T1; the "
              "Lemma 4.5 ratios stay O(1)",
    source="Lemma 4.4 / F.5, Lemma 4.5 / F.6",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": ASYMMETRIC},
    control_description=ASYMMETRIC.label,
    cost="slow",
    examples=(_PIN,),
)
def check_balancing(params: dict, ctx: Context, *, theory) -> Evidence:
    """Lemma 4.4 (sum_I2 g / sum_I3 g ~ 1) and Lemma 4.5 ratios O(1) after T1."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    tau_end = float(np.min(run.tau[:, -1]))
    taus = np.geomspace(0.1, tau_end, 600)
    Gc = theory.class_trajectory(taus)
    qc = np.array(tc.class_margins(list(Gc)))
    pis = [float(x) for x in theory.WEIGHTS]
    gpi = np.array(pis)[:, None] * np.array(tc.class_sigmoids_twin(*Gc))  # pi_k g_k
    i1 = np.nonzero(qc.min(axis=0) > 0)[0]
    pred45a = float(np.max((gpi.sum(0) / (gpi[1:].sum(0) - gpi[0]))[i1]))
    worst, r45a, r45b = 0.0, 0.0, 0.0
    obs = pred = 1.0
    for k in range(run.config.members):
        i = _classified(run, k)
        g = run.type_g[k, i:]
        ratio = g[:, 1] / g[:, 2]
        pr = np.interp(np.log(run.tau[k, i:]), np.log(taus), gpi[1] / gpi[2])
        j = int(np.argmax(np.abs(ratio / pr - 1)))
        if abs(ratio[j] / pr[j] - 1) >= worst:
            worst, obs, pred = abs(ratio[j] / pr[j] - 1), float(ratio[j]), float(pr[j])
        r45a = max(r45a, float(np.max(g.sum(1) / (g[:, 1:].sum(1) - g[:, 0]))))
        r45b = max(r45b, float(np.max(g.sum(1) / (g[:, 0] - np.maximum(g[:, 1], g[:, 2])))))
    return Evidence((
        Part("I2_over_I3", pred, obs, worst, 0.1,
             "Lemma 4.4: |sum_I2 g - sum_I3 g| <= C min(...), C << 1; private tokens make I2 and I3 "
             "samples differ at O(1/n); 10 %"),
        Part("lemma45_total_over_R_num", pred45a, r45a, r45a, 20.0,
             "Lemma 4.5/F.6: sum g / (sum_{I2 u I3 u I4} g - sum_I1 g) = O(1); bound 20"),
        Part("lemma45_total_over_R_den", 0.0, r45b, r45b, 20.0,
             "Lemma 4.5/F.6: sum g / (sum_I1 g - sum_{I2,I3} g) = O(1); bound 20"),
    ))


# ---------------------------------------------------------------------- 7 ratio limit, 8 loss law
def _finite_tau_gap(tau: float) -> tuple[float, float]:
    """|L tau gamma^2 - 1| and |R/R_inf - 1| of the class-level ODE at tau (finite-time size)."""
    taus = np.array([tau * 0.999, tau])
    G = tc.class_trajectory(np.concatenate([[1.0], taus]))[:, 1:]
    mm = tc.class_max_margin()
    L = float(tc.class_system().lambdify_loss()(G[:, -1]))
    r = tc.class_velocity(G[:, -1])
    return abs(L * tau * float(mm.gamma_sq) - 1), abs(-r[2] / r[0] / float(mm.R_inf) - 1)


@claim(
    statement="-dG3/dG1 -> R_inf = -beta*_3/beta*_1 of the training set's max-margin problem "
              "(3/2 at class level, less with private tokens), inside (1, 2) under Condition 1; "
              "R_inf < 1 when n is small against L",
    source="Lemma F.6 (R* in (1, 2)); R_inf from the max-margin problem is our derivation",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": CLASS_LEVEL},
    control_description=CLASS_LEVEL.label,
    cost="slow",
    examples=(_PIN, Example({"seed": 0, "n": 6, "L": 12},
                            via="boundary case: n < L^2 breaks Condition 1 (R_inf < 1)")),
    notes="n = 6, L = 12 breaks Condition 1 (n >= L^2): private tokens dominate, the max-margin "
          "R_inf < 1 there and Lemma F.6's (1, 2) is not claimed",
)
def check_ratio_limit(params: dict, ctx: Context, *, theory) -> Evidence:
    """-dG3/dG1 -> R_inf of the run's own training set (our derivation; Lemma F.6: R* in
    (1, 2))."""
    n, L = int(params.get("n", 60)), int(params.get("L", 5))
    run = _run(_main_config(ctx, int(params.get("seed", 0)), n, L), ctx)
    mm = theory.sample_max_margin(run.data.tokens, run.data.labels, run.config.vocabulary)
    pred = float(mm.R_inf)
    tau_end = float(np.min(run.tau[:, -1]))
    _, gap_r = _finite_tau_gap(tau_end)
    obs, worst = pred, 0.0
    for k in range(run.config.members):
        G = run.beta[k, :, :3]
        R = float(-(G[-1, 2] - G[-2, 2]) / (G[-1, 0] - G[-2, 0]))
        if abs(R / pred - 1) >= worst:
            worst, obs = abs(R / pred - 1), R
    growth = run.config.growth
    parts = [
        Part("R_inf", pred, obs, worst, 2 * gap_r + 0.01,
             f"finite tau: the class ODE is {gap_r:.1e} off its limit at tau_end (x2 for private "
             f"tokens); 1 % for GD (dtau/tau = {growth}), the record-interval finite difference "
             "and the S + m1 M preconditioner",
             details={"tau_end": tau_end}),
    ]
    if n >= L**2:  # Condition 1 (n >= Omega~(L^2)): where Lemma F.6 is stated
        parts.append(Part("in_1_2", 1.5, obs, max(0.0, 1 - obs, obs - 2), 0.0,
                          "Lemma F.6: the contractive root R* lies in (1, 2)"))
    return Evidence(tuple(parts), {"gamma_sq": float(mm.gamma_sq), "n": n, "L": L})


@claim(
    statement="L(t) = 1/(S gamma*^2 (t - t1) + 1/L(t1)) with gamma* the training set's max "
              "margin: L S t -> 1/gamma*^2 (17 at class level, less with private tokens)",
    source="Theorem F.8 (order only); the constant S gamma*^2 is our derivation",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": CLASS_LEVEL},
    control_description=CLASS_LEVEL.label,
    cost="slow",
    examples=(_PIN,),
)
def check_loss_law(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem F.8 with gamma* from the training set's max margin (our constant)."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    mm = theory.sample_max_margin(run.data.tokens, run.data.labels, run.config.vocabulary)
    gs = float(mm.gamma_sq)
    tau_end = float(np.min(run.tau[:, -1]))
    gap_l, _ = _finite_tau_gap(tau_end)
    growth = run.config.growth
    tol = 2 * gap_l + 0.01
    model = (f"finite tau: the class ODE's L tau gamma^2 is {gap_l:.1e} off 1 at tau_end (x2 for "
             f"private tokens); 1 % for GD (dtau/tau = {growth}) and the preconditioner "
             "S + m1 M (tau_eff = int (S + m1 b^T M b/|b|^2) dt)")
    c_obs, c_err, a_obs, a_pred, a_err, slopes = 0.0, -1.0, 0.0, 0.0, -1.0, []
    for k in range(run.config.members):
        L, te, t = run.loss[k], run.tau_eff[k], run.time[k]
        c = float(L[-1] * te[-1])
        if abs(c * gs - 1) > c_err:
            c_err, c_obs = abs(c * gs - 1), c
        i1 = int(np.searchsorted(te, 0.01 * te[-1]))
        s_mean = (te[-1] - te[i1]) / (t[-1] - t[i1])
        law = float(theory.loss_law(float(t[-1]), s_mean, gs, float(t[i1]), float(L[i1])))
        if abs(L[-1] / law - 1) > a_err:
            a_err, a_obs, a_pred = abs(L[-1] / law - 1), float(L[-1]), law
        sel = te >= 0.1 * te[-1]
        slopes.append(float(np.polyfit(np.log(te[sel]), np.log(L[sel]), 1)[0]))
    sl = max(slopes, key=lambda x: abs(x + 1))
    return Evidence((
        Part("constant", 1 / gs, c_obs, c_err, tol, model),
        Part("anchored_law", a_pred, a_obs, a_err, tol,
             "Theorem F.8 anchored at tau_1 = tau_end/100 with the measured mean rate; " + model),
        Part("slope", -1.0, sl, abs(sl + 1), 0.05,
             "log L vs log tau over the last decade: -1 up to O(1/log tau) corrections (0.05)"),
    ), {"gamma_sq": gs, "tau_end": tau_end, "class_gamma_sq": float(tc.class_max_margin().gamma_sq)})


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
              "M11, M22 increase, M13, M23 decrease; the class margins keep their signs",
    source="Theorem 3.2, Lemma 4.7 / F.16, Corollary 4.6 / F.13",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": SWAPPED},
    control_description=SWAPPED.label,
    cost="slow",
    examples=(_PIN,),
)
def check_phase2_signs(params: dict, ctx: Context, *, theory) -> Evidence:
    """Theorem 3.2 / Corollary F.13 signs after T1, and the Phase-2 margins."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    a_err = m_err = 0
    frac_bad = 0.0
    for k in range(cfg.members):
        i = _classified(run, k)
        G, r = _class_state(theory, float(run.tau[k, -1]))
        gam = theory.class_gamma(G, cfg.L, cfg.m)
        a_err += _sign_errors(gam, run.A3[k, -1] - run.A3[k, i], ATT_PAIRS)
        dM_pred = tc.value_gram_velocity(G, r)
        m_err += _sign_errors(dM_pred, run.M3[k, -1] - run.M3[k, i],
                              ((0, 1), (0, 2), (1, 2), (0, 0), (1, 1)))
        steps = np.diff(run.A3[k, i:], axis=0)
        skip = max(1, steps.shape[0] // 10)
        bad = [np.mean(np.sign(steps[skip:, a, b]) != np.sign(gam[a, b])) for a, b in ATT_PAIRS]
        frac_bad = max(frac_bad, float(np.max(bad)))

    return Evidence((
        Part("A_signs", 0.0, a_err, a_err, 0.0,
             "Theorem 3.2: A[mu2,mu1], A[mu1,mu2] up, A[mu3,mu1], A[mu3,mu2] down over [T1, T*] "
             "(signs of Gamma, theory.cooccurrence.class_gamma); count of wrong signs"),
        Part("A_monotone", 0.0, frac_bad, frac_bad, 0.0,
             "the same signs on every record interval after the first 10 % of Phase 2"),
        Part("M_signs", 0.0, m_err, m_err, 0.0,
             "Theorem 3.2 / Corollary F.13: M12, M11, M22 up; M13, M23 down"),
    ))


@claim(
    statement="from T1 (all samples classified, the phase line) the class margins have their "
              "Phase-2 signs: G1+G2+G3 > 0, G1+G3 < 0, G2+G3 < 0",
    source="Theorem 3.2 (items 2-3), Theorem 3.1",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc, "start": 1.0},
    control={"theory": SWAPPED, "start": 1.0},
    control_description="(not used when refuted) " + SWAPPED.label,
    expected="refuted",
    cost="slow",
    examples=(_PIN,),
    positive=Positive({"seed": 0}, "the same check from 3 T1, once the margins are Theta(1)",
                      theory={"theory": tc, "start": 3.0}),
    notes="finding: at first classification the private tokens carry the single-target "
          "samples; -(G1+G3) > 0 only from a later multiple of T1 (details). In the four-class "
          "system q2 = 0 exactly at its T1, so '<= -Omega(1)' needs T1 later than first "
          "classification. This refutes our reading of the phase line (T1 = first "
          "classification), not clearly Theorem 3.2 itself: the paper's T1 (Def. E.2) is fixed "
          "only up to constants, and the positive control shows the signs from 3 T1",
)
def check_phase2_margins(params: dict, ctx: Context, *, theory, start: float = 1.0) -> Evidence:
    """Theorem 3.2: G1+G2+G3 > 0, G1+G3 < 0, G2+G3 < 0 for tau >= start x T1 (first
    classification, our reading of the phase line)."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    G_late, _ = _class_state(theory, float(np.min(run.tau[:, -1])))
    want = np.sign(np.array(tc.class_margins(list(G_late)))[:3])
    marg, late = 0, []
    for k in range(run.config.members):
        i = _classified(run, k)
        j = int(np.searchsorted(run.tau[k], start * run.tau[k, i]))
        Gs = run.beta[k, :, :3]
        q = np.array(tc.class_margins([Gs[:, 0], Gs[:, 1], Gs[:, 2]]))[:3]
        marg += int(np.sum(np.sign(q[:, j:]) != want[:, None]))
        pos = np.nonzero(np.all(np.sign(q) == want[:, None], axis=0))[0]
        late.append(float(run.tau[k, pos[0]] / run.tau[k, i]) if pos.size else math.inf)
    return Evidence((
        Part("margins", 0.0, marg, marg, 0.0,
             f"Theorem 3.2 (signs of the class margins, as in the theory's four-class system) on "
             f"every record from {start} x T1 (count of violations)"),
    ), {"class_margins_right_from_tau_over_T1": late})


# ---------------------------------------------------------------------- 10 Eq. (3) structure
@claim(
    statement="Eq. (3) at T*: C12, C21 > 0 > C31, C32 of comparable size; random-token entries "
              "O(1/n) smaller; unseen-token pairs exactly unchanged",
    source="Theorem 3.3 / F.20, Eq. (3)",
    kind="reduced-vs-full",
    strategy=_SEEDS,
    theory={"theory": tc},
    control={"theory": SWAPPED},
    control_description=SWAPPED.label,
    cost="slow",
    examples=(_PIN,),
)
def check_attention_structure(params: dict, ctx: Context, *, theory) -> Evidence:
    """Eq. (3) / Theorem 3.3 at T* (end of the run); unseen-token entries of Delta A."""
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    cfg = run.config
    seen = np.unique(run.data.tokens)
    unseen = np.setdiff1d(np.arange(cfg.vocabulary), seen)
    rand = seen[seen >= 3]
    sign_err, spread, rnd, both, mixed = 0, 0.0, 0.0, 0.0, 0.0
    for k in range(cfg.members):
        dA = run.A_end[k] - run.A_start[k]
        gam = theory.class_gamma(_class_state(theory, float(run.tau[k, -1]))[0], cfg.L, cfg.m)
        sign_err += _sign_errors(gam, dA, ATT_PAIRS)
        mags = np.array([abs(dA[i, j]) for i, j in ATT_PAIRS])
        spread = max(spread, float(mags.max() / mags.min()))
        special = float(mags.max())
        rnd = max(rnd, float(max(np.abs(dA[np.ix_(rand, seen)]).max(),
                                 np.abs(dA[np.ix_(seen, rand)]).max())) / special)
        both = max(both, float(np.abs(dA[np.ix_(unseen, unseen)]).max()))
        mixed = max(mixed, float(max(np.abs(dA[np.ix_(unseen, seen)]).max(),
                                     np.abs(dA[np.ix_(seen, unseen)]).max())) / special)
    # K_G leakage: an entry with a non-special token moves through K_G's (or Q_G's)
    # off-diagonal ~ sigma0^2 sqrt(m) N(0, 1) against the diagonal sigma0^2 m: each entry is
    # ~ N(0, 1/m) relative to the special ones, and the largest of N such entries is
    # ~ sqrt(2 ln N / m) (extreme-value scale)
    n_rand = 2 * rand.size * seen.size
    n_mixed = 2 * unseen.size * seen.size
    leak_r = math.sqrt(2 * math.log(max(n_rand, 2)) / cfg.m)
    leak_u = math.sqrt(2 * math.log(max(n_mixed, 2)) / cfg.m)
    return Evidence((
        Part("signs", 0.0, sign_err, sign_err, 0.0,
             "Eq. (3): C12, C21 > 0 > C31, C32 (count of wrong signs)"),
        Part("comparable", 1.0, spread, math.log(spread), math.log(3),
             "Eq. (3): the four coefficients are Theta of the same expression; factor 3"),
        Part("random_entries", 1 / cfg.n, rnd, rnd, 3 / cfg.n + leak_r,
             "Eq. (3): entries with a random token are O~(1/n) of the special ones (constant 3) "
             "plus the sigma0^2 sqrt(m) term: K_G off-diagonal leakage, largest of N entries "
             "~ sqrt(2 ln N / m)"),
        Part("unseen_pairs_zero", 0.0, both, both, 0.0,
             "W_K, W_Q columns of unseen tokens never receive gradient: exactly 0"),
        Part("unseen_mixed", 0.0, mixed, mixed, leak_u,
             "one unseen token: Delta A only through K_G Gamma / Gamma Q_G leakage, "
             "~ N(0, 1/m) per entry relative to the special ones; largest of N ~ sqrt(2 ln N/m)"),
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
          "used; steps by profile in SIZES['appendix_a'] (the paper's 30000 under thorough)",
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
    return Evidence((
        Part("I1_falls_from_start", 0.0, tl[1, 0] - tl[0, 0], max(0.0, tl[1, 0] - tl[0, 0]), 0.0,
             "Fig. 1(b), Lemma 4.1: the both-targets loss decreases from step 0"),
        Part("loss_monotone", 0.0, worst_inc, max(0.0, worst_inc), 0.0,
             "Fig. 1(b): the overall loss decreases at every step (largest relative increase)"),
        Part("attention_signs", 0.0, sign_err, sign_err, 0.0,
             "Fig. 1(a) / Theorem 3.2: after the phase line A[mu2,mu1], A[mu1,mu2] rise and "
             "A[mu3,mu1], A[mu3,mu2] fall (count of wrong signs)"),
        Part("attention_flat_in_phase1", 0.0, flat1 / later, flat1 / later, 1.0,
             "Fig. 1(a): scores flat until the phase line: their Phase-1 change is smaller than "
             "the Phase-2 change"),
        Part("near_uniform", 0.0, float(run.max_dp[k].max()), float(run.max_dp[k].max()),
             1 / cfg.L ** 2, "Definition F.1: |p - p(0)| < 1/L^2 throughout"),
        Part("loss_small", 0.0, final, final, 4.0 / cfg.steps,
             "Fig. 1(b): all losses -> ~0 like 1/t (loss x step stays below 4 in our own "
             "replication of Appendix A); bound 4/steps"),
    ), {"steps": cfg.steps, "T1_step": int(run.steps[i]), "S0": float(run.S0[k])})


@claim(
    statement="Fig. 1(b) in the published configuration: the single-target (I2, I3) losses "
              "first rise, then fall before all samples are classified, whatever the "
              "(unspecified 'Kaiming') initialisation",
    source="Fig. 1(b), Lemmas 4.2-4.3, Appendix A",
    kind="published-number",
    strategy=_SEEDS,
    theory={"theory": tc, "kind": "appendix_a"},
    control={"theory": UNIFORM, "kind": "appendix_a"},
    control_description="(not used when refuted) " + UNIFORM.label,
    expected="refuted",
    cost="slow",
    examples=(Example({"seed": 0}, via="Appendix A's configuration (Fig. 1); the paper states "
                                       "no seed"),),
    positive=Positive({"seed": 0},
                      "the same check in the theory-scaled small-initialisation regime "
                      "(|F(0)| << 1), where every initialisation shows the hump",
                      theory={"theory": tc, "kind": "theory"}),
    notes="finding: with nn.Linear's default initialisation |F(0)| is of order 1 and the hump "
          "depends on the draw (the fraction of initialisations without it is in the report); "
          "the paper's small-init theory predicts it, its experiment does not guarantee it",
)
def check_appendix_a_hump(params: dict, ctx: Context, *, theory, kind: str = "appendix_a"
                          ) -> Evidence:
    """Fig. 1(b): the I2 and I3 losses rise (>= 2 %) and fall again before T1, for every
    initialisation (members = init seeds, stacked in one run)."""
    run = _run(_sized(ctx, f"hump_{kind}", int(params.get("seed", 0))), ctx)
    th = float(theory.t_half())
    missing, per = 0, []
    for k in range(run.config.members):
        i = _classified(run, k)
        tl = run.type_loss[k, : i + 1]
        rise = [float(tl[:, c].max() / tl[0, c]) for c in (1, 2)]
        fall = [float(tl[-1, c] / tl[:, c].max()) for c in (1, 2)]
        ok = min(rise) >= 1.02 and max(fall) <= 0.98
        missing += int(not ok)
        per.append({"rise": rise, "T1_step": int(run.steps[i])})
    frac = missing / run.config.members
    pred = 0.0 if th > 0 else 1.0
    return Evidence((
        Part("inits_without_hump", pred, frac, abs(frac - pred), 0.0,
             "Fig. 1(b) / Lemmas 4.2-4.3 as stated (no init qualifier): fraction of "
             "initialisations whose I2 or I3 loss does not rise by 2 % and fall again before T1 "
             "(the theory's T_0.5 > 0 predicts a hump)"),
    ), {"kind": kind, "members": per, "t_half": th})


# ---------------------------------------------------------------------- 12 open: test loss
@claim(
    statement="open (reviewers' question: does the validation loss decay like the training "
              "loss?). Hypothesis: on fresh samples with unseen tokens the loss falls like "
              "tau^-kappa, kappa = min_k q_k(beta*_{1:3}), slower than the training loss's 1/tau",
    source="Theorem 3.3 / F.20 (L(T*) <= 1/poly(m)); the OpenReview reviews' validation-loss "
           "question; the exponent kappa is our hypothesis",
    kind="open-question",
    strategy=_SEEDS,
    theory={"theory": tc, "series": "val"},
    control={"theory": CLASS_LEVEL, "series": "val"},
    control_description="test loss following the training law (class-level margins: kappa = 1)",
    expected="open",
    cost="slow",
    examples=(_PIN,),
    positive=Positive({"seed": 0}, "the same slope check on the training loss, whose exponent "
                                   "is 1 (Theorem F.8)",
                      theory={"theory": tc, "series": "train"}),
    notes="mini-batch Adam and frozen attention (the other reviewer questions) are not checked "
          "here; W_K = W_Q = 0 runs appear in the invariants claim",
)
def check_validation_exponent(params: dict, ctx: Context, *, theory, series: str = "val"
                              ) -> Evidence:
    """Open: the loss on fresh samples with unseen tokens falls like tau^-kappa (our hypothesis).

    kappa = min_k q_k(beta*[:3]) from the training set's max margin (``test_loss_exponent``);
    ``series="train"`` is the positive control: the training loss's exponent is 1 (Thm F.8).
    """
    run = _run(_main_config(ctx, int(params.get("seed", 0))), ctx)
    mm = theory.sample_max_margin(run.data.tokens, run.data.labels, run.config.vocabulary)
    kappa = float(theory.test_loss_exponent(mm)) if series == "val" else 1.0
    slopes = []
    for k in range(run.config.members):
        te = run.tau_eff[k]
        y = run.val_loss[k] if series == "val" else run.loss[k]
        sel = te >= 0.1 * te[-1]
        slopes.append(float(np.polyfit(np.log(te[sel]), np.log(y[sel]), 1)[0]))
    s = max(slopes, key=lambda x: abs(x + kappa))
    return Evidence((
        Part(f"{series}_exponent", -kappa, s, abs(s + kappa), 0.05,
             "log-log slope over the last decade of tau: O(1/log tau) corrections and the "
             "unseen tokens' initial G (|G_r(0)| ~ sigma0 sigma1 sqrt(m m1)); 0.05 (the training "
             "loss's slope, measured the same way, is within 0.05 of -1)",
             details={"slopes": slopes}),
    ), {"kappa": kappa, "val_over_train_end": float(np.max(run.val_loss[:, -1] /
                                                           run.loss[:, -1]))})


# ---------------------------------------------------------------------- 13 initial output
@claim(
    statement="with sigma0 = 1/sqrt(L m) and sigma1 = 1/sqrt(m1) (Condition 1 without its hidden "
              "logs) the initial output satisfies |F(0)| <= 0.01",
    source="Lemma D.8, Condition 1",
    kind="symbolic",
    strategy=st.fixed_dictionaries({"seed": st.integers(0, 1000),
                                    "m": st.sampled_from((256, 512, 1024)),
                                    "m1": st.sampled_from((4, 16, 64))}),
    theory={"c0": 1.0},
    control={"c0": 2.0},
    control_description="sigma0 = 2/sqrt(L m) (coefficient doubled)",
    expected="refuted",
    cost="fast",
    examples=(Example({"seed": 0, "m": 512, "m1": 8},
                      via="the widths of the quick theory-scaled run (m = 512, m1 = 8)"),),
    positive=Positive({"seed": 0, "m": 512, "m1": 8},
                      "the same check with sigma0 = 0.002/sqrt(L m), where |F(0)| is 500 times "
                      "smaller", theory={"c0": 0.002}),
    notes="finding: sigma0 sigma1 sqrt(L m m1) = 1, so |F(0)| = O(1); the Theta~ of Condition 1 "
          "must hide log factors of m",
)
def check_initial_output(params: dict, ctx: Context, *, c0: float = 1.0) -> Evidence:
    """Lemma D.8 / Condition 1: |F(0)| <= 0.01 with sigma0 = c0/sqrt(L m), sigma1 = 1/sqrt(m1)."""
    seed, m, m1 = int(params.get("seed", 0)), int(params["m"]), int(params["m1"])
    n, L = 60, 5
    data = nc.make_dataset(n, L, seed)
    d = int(data.tokens.max()) + 1
    make = nc.init_params(d, m, m1, "theory", sigma0=c0 / math.sqrt(L * m),
                          sigma1=1 / math.sqrt(m1))
    p = make(torch.Generator().manual_seed(seed))
    with torch.no_grad():
        F, _ = nc.forward(p, torch.as_tensor(data.tokens))
    f = float(F.abs().max())
    return Evidence((
        Part("max_abs_F0", 0.01, f, f, 0.01,
             "Lemma D.8 as used with Condition 1: |F(0)| <= 0.01 for every training sample "
             "(the paper's bound, no allowance)"),
    ), {"c0": c0, "sigma0_sigma1_sqrt_Lmm1": c0})


def claims() -> list[Claim]:
    """The cooccurrence row's claims, in source order."""
    return declared(__name__)
