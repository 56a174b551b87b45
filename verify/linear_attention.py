"""Claims of Ahn et al., *Linear attention is (maybe) all you need* (ICLR 2024): partial row.

Implemented so far (issue 3, claims 1-5): the reduced theory against Monte Carlo and
trained linear transformers (claim 3 tests the invariant and the limit; its trajectory
tracking is reported, not tested).  Not built yet: claim 6
(A_l proportional to Sigma^-1: 2000 Adam steps do not converge at condition number 16), and
the optimiser-comparison claims 7-11 (Adam vs SGD, noise tails, robust condition number,
directional smoothness, softmax).

Training runs: Setting 1 (d = 5, n = 20, x ~ N(0, I), w* ~ N(0, I)), the authors' init
(std 0.05), batch 1000 fresh prompts per step, Adam (betas 0.9, 0.9) lr 0.01 for 1000
steps then 0.001 for 1000 (a step decay of ours, to settle the iterates), 2 seeds stacked;
evaluation on 200 000 fresh prompts, whose standard error enters the tolerances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import linear_attention as nl
from numerics.ode import integrate
from theory import linear_attention as la
from verify.claims import Claim, Context, Evidence, combine

PAPER = "linear_attention"
__all__ = ["claims"]


# ---------------------------------------------------------------------- 1. moment identity
@st.composite
def _moment_params(draw):
    d = draw(st.integers(2, 4))
    entries = st.floats(-1, 1, allow_nan=False)
    root = np.array(draw(st.lists(entries, min_size=d * d, max_size=d * d))).reshape(d, d)
    a = np.array(draw(st.lists(entries, min_size=d * d, max_size=d * d))).reshape(d, d)
    return {"sigma": (root @ root.T + 0.2 * np.eye(d)).round(6).tolist(),
            "A": a.round(6).tolist(), "seed": draw(st.integers(0, 2**16))}


def _wrong_moment4(sigma, a):
    """Control: the Sigma A^T Sigma term dropped (a wrong pairing count)."""
    s, a = sp.Matrix(sigma), sp.Matrix(a)
    return s * a * s + (a * s).trace() * s


def _check_moment(params: dict, ctx: Context, *, moment: Callable) -> Evidence:
    sigma, a = np.array(params["sigma"]), np.array(params["A"])
    theory = np.array(moment(sp.Matrix(sigma), sp.Matrix(a)).evalf(), dtype=float)
    rng = np.random.default_rng(params["seed"])
    n = 400_000
    x = rng.multivariate_normal(np.zeros(len(sigma)), sigma, size=n)
    quad = np.einsum("ni,ij,nj->n", x, a, x)
    samples = x[:, :, None] * x[:, None, :] * quad[:, None, None]
    mean, se = samples.mean(0), samples.std(0) / math.sqrt(n)
    diff = np.abs(mean - theory)
    # An entry with zero spread (e.g. A = 0) must match to rounding.
    z = np.where(se > 0, diff / np.where(se > 0, se, 1.0),
                 np.where(diff <= 1e-12 * (1 + np.abs(theory)), 0.0, np.inf))
    return Evidence(float(theory.flat[z.argmax()]), float(mean.flat[z.argmax()]),
                    float(z.max()), 5.0,
                    "max over entries of |MC - theory| / standard error with 4e5 samples; "
                    "5 sigma keeps the false-alarm rate below 1e-5 over <= 16 entries "
                    "(spec §6 b6 uses 4 s.e. per entry)", {"d": len(sigma)})


# ---------------------------------------------------------------------- 4. Lemma 1
@st.composite
def _emulation_params(draw):
    return {"d": draw(st.integers(1, 6)), "n": draw(st.integers(1, 30)),
            "layers": draw(st.integers(1, 4)), "scale": draw(st.floats(0.05, 1.0)),
            "seed": draw(st.integers(0, 2**16))}


def _gd_steps_paper(a_layers):
    """Lemma 1 in our sign convention: layer l performs GD with preconditioner -A_l^T."""
    return [-a.T for a in a_layers]


def _gd_steps_wrong(a_layers):
    """Control: preconditioner A_l (sign and transpose both wrong)."""
    return list(a_layers)


def _check_emulation(params: dict, ctx: Context, *, steps_of: Callable) -> Evidence:
    cfg = nl.ICLConfig(d=params["d"], n=params["n"], layers=params["layers"])
    g = torch.Generator().manual_seed(params["seed"])
    z, _ = nl.sample_prompts(cfg, g, batch=8)
    a = torch.randn(cfg.layers, cfg.d, cfg.d, generator=g, dtype=torch.float64) * params["scale"]
    tf = nl.forward({"A": a}, z).numpy()
    d, n = cfg.d, cfg.n
    worst, pred_w, obs_w = 0.0, 0.0, 0.0
    for b in range(z.shape[0]):
        x = z[b, :d, :n].T.numpy()
        y = z[b, d, :n].numpy()
        pred = la.gd_predict(x, y, z[b, :d, n].numpy(), steps_of([m.numpy() for m in a]))
        err = abs(tf[b] - pred) / (1 + abs(pred))
        if err >= worst:
            worst, pred_w, obs_w = err, pred, float(tf[b])
    return Evidence(pred_w, obs_w, worst, 1e-10,
                    "float64 forward pass vs the GD recursion: rounding ~ L n d eps ~ 1e-13 "
                    "relative; 1e-10 (spec §6 a5)")


# ---------------------------------------------------------------------- training runs
def _equal_step_optimum(layers: int) -> tuple[float, tuple[float, ...]]:
    from scipy.optimize import minimize_scalar  # noqa: PLC0415

    a = sp.Symbol("a")
    f = sp.lambdify(a, la.gd_loss([a] * layers, 5, 20), "numpy")
    res = minimize_scalar(f, bounds=(0.01, 3), method="bounded", options={"xatol": 1e-10})
    return float(res.fun), (float(res.x),) * layers


def _check_floor(params: dict, ctx: Context, *, optimum: Callable) -> Evidence:
    layers = params["layers"]
    floor, steps = optimum(layers)
    trained, loss, se = nl.train_gd_family(layers, params["seed"], ctx.device)
    parts = []
    for m in range(2):
        a = trained["A"][m]
        dist = nl.dist_to_identity(a).numpy()
        fitted = np.sort(-torch.diagonal(a, dim1=-2, dim2=-1).mean(-1).numpy())
        parts.append(Evidence(0.0, float(dist.max()), float(dist.max()), 0.05,
                              "Dist(A_l, I) < 0.05 (spec §6 a3)"))
        rel = np.abs(fitted - np.array(steps)) / np.array(steps)
        parts.append(Evidence(float(np.array(steps)[rel.argmax()]), float(fitted[rel.argmax()]),
                              float(rel.max()), 0.05,
                              "sorted trained steps -diag(A_l) vs the exact minimiser, 5% "
                              "for a finite Adam budget at batch 1000",
                              {"trained_steps": fitted.tolist(), "theory_steps": list(steps)}))
        excess = float(la.gd_loss([sp.Float(v) for v in fitted], 5, 20)) - floor
        parts.append(Evidence(floor, float(loss[m]), abs(float(loss[m]) - floor),
                              4 * float(se[m]) + 0.02 * floor,
                              "4 standard errors of the 2e5-prompt evaluation + 2% of the "
                              "floor for the finite training budget",
                              {"exact_excess_at_trained_steps": excess}))
    ev = combine(parts)
    return Evidence(ev.predicted, ev.observed, ev.error, ev.tolerance, ev.error_model,
                    {**ev.details, "floor": floor, "theory_steps": list(steps),
                     "eval_loss": loss.tolist(), "eval_se": se.tolist()})


def _floor_paper(layers: int) -> tuple[float, tuple[float, ...]]:
    return la.gd_floor(layers, 5, 20)


# ---------------------------------------------------------------------- 2. one-layer optimum
def _wrong_preconditioner(sigma, n):
    """Control: Gamma* without the tr(Sigma)/n term, ((1 + 1/n) Sigma)^-1."""
    return ((1 + sp.Rational(1, n)) * sp.Matrix(sigma)).inv()


def _mc_loss_at(gamma: float, covariates: str, seed: int) -> tuple[float, float, float, float]:
    """MC loss of the one-layer model A = -gamma I at gamma and 0.9/1.1 gamma (same prompts)."""
    cfg = nl.ICLConfig(layers=1, covariates=covariates)
    z, y = nl.sample_prompts(cfg, torch.Generator().manual_seed(seed), batch=200_000)
    out = []
    for g in (gamma, 0.9 * gamma, 1.1 * gamma):
        err = (nl.forward({"A": -g * torch.eye(5, dtype=torch.float64)[None]}, z) - y) ** 2
        out.append(err)
    e0 = out[0]
    return (float(e0.mean()), float(e0.std() / math.sqrt(len(e0))),
            float((out[1] - e0).mean()), float((out[2] - e0).mean()))


def _check_one_layer(params: dict, ctx: Context, *, preconditioner: Callable) -> Evidence:
    parts = []
    gamma_star = np.array(preconditioner(sp.eye(5), 20).evalf(), dtype=float)
    f_star = float(la.one_layer_loss(sp.Matrix(gamma_star), sp.eye(5), 20))
    trained, loss, se = nl.train_gd_family(1, params["seed"], ctx.device)
    for m in range(2):
        gamma = -trained["A"][m, 0].numpy().T
        rel = np.linalg.norm(gamma - gamma_star) / np.linalg.norm(gamma_star)
        parts.append(Evidence(float(gamma_star[0, 0]), float(gamma[0, 0]), float(rel), 0.05,
                              "relative Frobenius error of trained Gamma = -A^T vs Gamma*: 5% "
                              "for 2000 Adam steps at batch 1000 without averaging (spec §6 "
                              "a1 asks <= 2% with 1e5-prompt batches and averaging)"))
        parts.append(Evidence(f_star, float(loss[m]), abs(float(loss[m]) - f_star),
                              4 * float(se[m]) + 0.02 * f_star,
                              "4 s.e. of the 2e5-prompt evaluation + 2% finite training"))
    # Rotation-invariant closed forms (spec §2.3): MC loss at gamma* I and minimality.
    for cov, moments in (("sphere", la.sphere_moments()), ("gamma", la.gamma_moments())):
        g_star, f1 = (float(v) for v in la.rotation_invariant_optimum(5, 20, *moments))
        if preconditioner is not la.optimal_preconditioner:
            g_star = float(preconditioner(sp.eye(5) / 5, 20)[0, 0])  # wrong theory, same check
        mean, s, up_low, up_high = _mc_loss_at(g_star, cov, params["seed"] + 7)
        parts.append(Evidence(f1, mean, abs(mean - f1), 5 * s,
                              f"{cov}: MC loss at gamma* I vs f1*, 5 s.e. (heavy tails for "
                              "Gamma covariates make the s.e. itself noisy; spec §6 b9)"))
        parts.append(Evidence(0.0, min(up_low, up_high), max(0.0, -min(up_low, up_high)), 0.0,
                              f"{cov}: the loss at 0.9 gamma* and 1.1 gamma* exceeds the loss at "
                              "gamma* on the same prompts (common random numbers)"))
    return combine(parts)


# ---------------------------------------------------------------------- 3. ZFB balanced flow
def _check_balanced(params: dict, ctx: Context, *, sign: int, limit: Callable) -> Evidence:
    """Balance Q = ||W_PV||^2 + sign ||W_KQ||^2 (ZFB: sign = -1) under GD, and the end state.

    If Q is conserved by the gradient flow (Q's gradient is orthogonal to the loss
    gradient, here for every minibatch by the rescaling symmetry), one GD step changes it
    by exactly lr^2 (||g_PV||^2 + sign ||g_KQ||^2): the check compares the recorded Q(t)
    with that prediction from the recorded gradients.
    """
    run = nl.train_zfb(params["seed"], ctx.device)
    lr, steps = run["lr"], run["steps"]
    lam, n = sp.diag(*run["lam"]), run["n"]
    key = "balance" if sign < 0 else "sum"
    gamma_star = np.array(limit(lam, n).evalf(), dtype=float)
    u_inf = float(la.balanced_limit(lam, n)[0])
    sys = la.balanced_flow(lam, n)
    parts = []
    for m in range(2):
        inc = lr**2 * (run["grad_sq_pv"][m] + sign * run["grad_sq_kq"][m])
        predicted = np.concatenate([[0.0], np.cumsum(inc)])[steps]
        observed = run[key][m] - run[key][m, 0]
        scale = 1 + float(np.abs(run[key][m]).max())
        parts.append(Evidence(float(predicted[-1]), float(observed[-1]),
                              float(np.abs(observed - predicted).max()), 1e-12 * len(inc) * scale,
                              "exact GD identity for a flow invariant; float64 rounding of the "
                              "squared norms, 1e-12 per step", {"drift": float(np.abs(observed).max())}))
        # End state: the ODE from the same start, plus SGD's stationary fluctuation.
        y0 = [run["u"][m, 0], *run["U"][m, 0].flatten()]
        sol = integrate(sys, y0, float(run["time"][-1]), t_eval=run["time"])
        gam_ode = np.array([y[0] * y[1:].reshape(3, 3).T for y in sol.y.T])
        gam_full = run["u"][m][:, None, None] * np.transpose(run["U"][m], (0, 2, 1))
        norm = np.linalg.norm(gamma_star)
        # How far the flow itself still is from settling at T (no reference to the claimed
        # limit): its change between T and 10 T.
        late = integrate(sys, sol.y[:, -1], 9 * float(run["time"][-1])).y[:, -1]
        gam_late = late[0] * late[1:].reshape(3, 3).T
        ode_gap = float(np.linalg.norm(gam_ode[-1] - gam_late) / norm)
        h_min = u_inf**2 * min(run["lam"]) * float(la.sample_cov_second_moment(lam, n)[2, 2])
        fluct = 2 * u_inf * math.sqrt(lr * run["noise_sq"][m] / (2 * h_min)) / norm
        rel = float(np.linalg.norm(gam_full[-1] - gamma_star) / norm)
        track = np.linalg.norm(gam_full - gam_ode, axis=(1, 2)) / np.maximum(
            np.linalg.norm(gam_ode, axis=(1, 2)), 1e-3)
        parts.append(Evidence(0.0, rel, rel, ode_gap + 3 * fluct,
                              "relative distance of Gamma(T) = u U^T to Gamma*: how far the "
                              "ODE from the same start still moves after T, plus 3 x the SGD "
                              "stationary fluctuation "
                              "sqrt(lr E||g_B - g||^2 / (2 h_min)), h_min = u_inf^2 "
                              "lambda_min S_min the smallest curvature acting on Gamma, times "
                              "||u U^T||-sensitivity 2 u_inf",
                              {"u_end": float(run["u"][m, -1]), "u_inf": u_inf,
                               "max_rel_gap_to_ode_along_the_way": float(track.max()),
                               "max_off_block": float(run["off"][m].max())}))
    return combine(parts)


def _wrong_limit(lam, n):
    """Control limit: Gamma* without the tr(Lambda)/n term."""
    return _wrong_preconditioner(lam, n)


# ---------------------------------------------------------------------- the claims
def claims() -> list[Claim]:
    seeds = st.integers(0, 10_000)
    return [
        Claim(
            id="linear_attention.moment_identity",
            paper=PAPER,
            statement="E[x x^T A x x^T] = Sigma A Sigma + Sigma A^T Sigma + tr(A Sigma) Sigma "
                      "for x ~ N(0, Sigma)",
            source="spec §2.2, §6 b6 (Isserlis; used by ZFB and AhnPGD)",
            kind="symbolic",
            strategy=_moment_params(),
            check=partial(_check_moment, moment=la.moment4),
            control=partial(_check_moment, moment=_wrong_moment4),
            control_description="the Sigma A^T Sigma term dropped",
            examples=({"sigma": [[1.0, 0.3], [0.3, 0.5]], "A": [[1.0, 2.0], [0.0, -1.0]],
                       "seed": 0},),
        ),
        Claim(
            id="linear_attention.gd_emulation",
            paper=PAPER,
            statement="with B_l = 0, L linear-attention layers compute exactly L preconditioned "
                      "GD steps on the in-context least squares (preconditioner -A_l^T here)",
            source="AhnPGD Lemma 1; spec §2.5, §6 a5",
            kind="symbolic",
            strategy=_emulation_params(),
            check=partial(_check_emulation, steps_of=_gd_steps_paper),
            control=partial(_check_emulation, steps_of=_gd_steps_wrong),
            control_description="preconditioner A_l instead of -A_l^T",
            examples=({"d": 5, "n": 20, "layers": 3, "scale": 0.5, "seed": 0},),
        ),
        Claim(
            id="linear_attention.one_layer_optimum",
            paper=PAPER,
            statement="a trained one-layer model converges to Gamma* = ((1+1/n)Sigma + "
                      "tr(Sigma)/n I)^-1 with loss f*; for sphere and Gamma covariates "
                      "gamma* I is optimal with loss f1*",
            source="AhnPGD Thm 1; ZFB; spec §2.2-2.3, §6 a1, b9",
            kind="reduced-vs-full",
            strategy=st.fixed_dictionaries({"seed": seeds}),
            check=partial(_check_one_layer, preconditioner=la.optimal_preconditioner),
            control=partial(_check_one_layer, preconditioner=_wrong_preconditioner),
            control_description="Gamma* without the tr(Sigma)/n term",
            cost="slow",
            examples=({"seed": 0},),
        ),
        Claim(
            id="linear_attention.balanced_flow",
            paper=PAPER,
            statement="ZFB's balance ||W_PV||^2 - ||W_KQ||^2 (u^2 - ||U||^2 on the block "
                      "family) is a flow invariant: plain GD on the full one-layer model "
                      "changes it by exactly lr^2 (||g_PV||^2 - ||g_KQ||^2) per step, and "
                      "Gamma = u U^T ends at Gamma* (balanced limit)",
            source="ZFB (conservation law, limit); spec §2.4, §6 a2",
            kind="reduced-vs-full",
            strategy=st.fixed_dictionaries({"seed": seeds}),
            check=partial(_check_balanced, sign=-1, limit=la.optimal_preconditioner),
            control=partial(_check_balanced, sign=+1, limit=_wrong_limit),
            control_description="||W_PV||^2 + ||W_KQ||^2 as the invariant and Gamma* without "
                                "the tr/n term",
            cost="slow",
            examples=({"seed": 0},),
            notes="Gamma(t) against the integrated ODE at matched time is reported "
                  "(max_rel_gap_to_ode_along_the_way), not yet tested: its GD-vs-flow error "
                  "model under Monte Carlo gradients is not written.",
        ),
        Claim(
            id="linear_attention.multilayer_floor",
            paper=PAPER,
            statement="with B = 0, trained 2- and 3-layer models have A_l proportional to I, "
                      "steps at the exact minimiser, and reach the exact pure-GD floor",
            source="AhnPGD Thm 2-3; spec §2.5, §6 a3 (floors computed exactly here)",
            kind="reduced-vs-full",
            strategy=st.fixed_dictionaries({"layers": st.sampled_from([2, 3]), "seed": seeds}),
            check=partial(_check_floor, optimum=_floor_paper),
            control=partial(_check_floor, optimum=_equal_step_optimum),
            control_description="the equal-step stationary point (a saddle) as the optimum",
            cost="slow",
            examples=({"layers": 2, "seed": 0}, {"layers": 3, "seed": 0}),
        ),
    ]
