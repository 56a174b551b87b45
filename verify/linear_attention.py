"""Claims of Ahn et al., *Linear attention is (maybe) all you need* (ICLR 2024), with its
companions AhnPGD (NeurIPS 2023) and ZFB (JMLR 2024): issue 3, claims 1-11.

Reduced theory (claims 1-6): closed forms against Monte Carlo and trained models.  The B = 0
family for claims 2 and 5 is trained on Setting 1 (d = 5, n = 20, x ~ N(0, I), w* ~ N(0, I))
from the authors' init (std 0.05), batch 1000 fresh prompts per step, Adam (betas 0.9, 0.9)
lr 0.01 for 1000 steps then 0.001 for 1000 (a step decay of ours, to settle the iterates),
2 seeds stacked; evaluation on 200 000 fresh prompts, whose standard error enters the
tolerances.  Claim 6 fits by L-BFGS on 20 000 fixed prompts (see its check).

Optimiser comparison (claims 7-11, Fig. 2): ``numerics.linear_attention.compare_optimizers``
runs the authors' protocol (3 layers, code family, README learning rates, clipping, SGD
momentum 0.9 vs Adam betas (0.9, 0.9), batch 1000, float32), but for 1250 iterations and
2 seeds instead of 10 000 and 6, and computes the diagnostics post hoc on the fixed
evaluation batch (seed 99, 1000 prompts).  The checks are the sign-level tests of spec §6 c:
the published numbers have seed spreads of 25-140%, so only orderings are tested.  A claim
expected ``refuted`` is a finding of ours with the numbers in its notes.
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
from numerics import measure
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
        out.append(nl.squared_errors({"A": -g * torch.eye(5, dtype=torch.float64)[None]}, z, y))
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
def _check_balanced(params: dict, ctx: Context, *, sign: int, limit: Callable,
                    flow_of: Callable) -> Evidence:
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
    for m in range(len(run["u"])):
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
    parts.append(_tracking(params["seed"], ctx, flow_of))
    return combine(parts)


def _tracking(seed: int, ctx: Context, flow_of: Callable) -> Evidence:
    """Gamma(t) of torch GD against the integrated ODE at matched time t = k lr.

    The members share one initialisation and draw independent minibatches, so their mean
    estimates the expected GD path and their spread the minibatch noise.  Error model per
    recorded time: the exact discretisation gap |discrete reduced GD map - ODE| (the map
    iterated with the population gradient at the same lr, from the same start) plus the
    99% two-sided Student-t quantile (M - 1 degrees of freedom, since the spread is
    estimated from the M members themselves) times the standard error of the member mean;
    all relative to ||Gamma*||.
    """
    run = nl.train_zfb(seed, ctx.device)
    lr, steps, n = run["lr"], run["steps"], run["n"]
    lam = sp.diag(*run["lam"])
    sys = flow_of(lam, n)
    rhs = sys.lambdify("numpy")
    y0 = np.array([run["u"][0, 0], *run["U"][0, 0].flatten()])
    sol = integrate(sys, y0, float(run["time"][-1]), t_eval=run["time"])
    y, disc = y0.copy(), [y0.copy()]
    for _ in range(int(steps[-1])):
        y = y + lr * np.asarray(rhs(0.0, y), dtype=float).reshape(-1)
        disc.append(y.copy())
    disc = np.array(disc)[steps]

    def gamma(states):
        return np.array([s[0] * s[1:].reshape(3, 3).T for s in states])

    norm = float(np.linalg.norm(np.array(la.optimal_preconditioner(lam, n).evalf(), float)))
    g_ode, g_disc = gamma(sol.y.T), gamma(disc)
    g_full = run["u"][:, :, None, None] * np.transpose(run["U"], (0, 1, 3, 2))  # [M, T, 3, 3]
    mean = g_full.mean(0)
    spread = np.sqrt(((g_full - mean) ** 2).sum((2, 3)).sum(0) / (len(g_full) - 1))
    err = np.linalg.norm(mean - g_ode, axis=(1, 2)) / norm
    disc_gap = np.linalg.norm(g_disc - g_ode, axis=(1, 2)) / norm
    # The spread is estimated from the same few members: Student-t quantile, M - 1 dof.
    from scipy.stats import t as student  # noqa: PLC0415

    quantile = float(student.ppf(0.995, len(g_full) - 1))
    # + 1e-9: at t = 0 both the gap and the allowance are exactly 0 (same start); the
    # floor keeps the ratio defined and is 1e-9 of ||Gamma*||, far below any real gap.
    tol = disc_gap + quantile * spread / math.sqrt(len(g_full)) / norm + 1e-9
    k = int(np.argmax(err / tol))
    return Evidence(0.0, float(err[k]), float(err[k] / tol[k]), 1.0,
                    "max over recorded times of |mean_torch Gamma(t) - Gamma_ode(t)| / "
                    "(exact |discrete map - ODE| + t_{M-1, 0.995} s.e. of the member mean), "
                    "relative "
                    "to ||Gamma*|| (spec §6 a2: O(lr) discretisation + minibatch noise)",
                    {"worst_time": float(run["time"][k]), "gap": float(err[k]),
                     "members": len(g_full), "t_quantile": quantile,
                     "allowed": float(tol[k]), "max_gap": float(err.max()),
                     "max_discretisation_gap": float(disc_gap.max())})


def _wrong_flow(lam, n):
    """Control flow: n doubled in the 1/n terms of the loss (a perturbed coefficient)."""
    return la.balanced_flow(lam, 2 * n)


def _wrong_limit(lam, n):
    """Control limit: Gamma* without the tr(Lambda)/n term."""
    return _wrong_preconditioner(lam, n)


# ---------------------------------------------------------------------- 6. A proportional to Sigma^-1
def _inverse_cov_shape(sigma: sp.Matrix, n: int) -> sp.Matrix:
    """AhnPGD Thm 3 (w* ~ N(0, Sigma^-1)): the stationary A_l are multiples of Sigma^-1."""
    return sigma.inv()


def _identity_prior_shape(sigma: sp.Matrix, n: int) -> sp.Matrix:
    """Control: the shape of the one-layer optimum for w* ~ N(0, I) (Thm 1's Gamma*),
    the wrong pairing the spec warns about (§2.5)."""
    return la.optimal_preconditioner(sigma, n)


def _whitened_dist(a: np.ndarray, shape: np.ndarray) -> float:
    """Dist(C^{-1/2} A C^{-1/2}, I): zero iff A is a multiple of C."""
    evals, evecs = np.linalg.eigh(shape)
    root = evecs @ np.diag(evals ** -0.5) @ evecs.T
    return float(nl.dist_to_identity(torch.as_tensor(root @ a @ root)))


def _check_inverse_cov(params: dict, ctx: Context, *, shape_of: Callable) -> Evidence:
    sigma = nl.rotated_covariance(params["rotation"])
    layers, seed = params["layers"], params["seed"]
    fit = nl.fit_gd_family(layers, seed, sigma, "inverse", device=ctx.device)
    # Error model: in whitened coordinates the problem has exactly the law of the
    # isotropic one (x ~ N(0, I), w* ~ N(0, I)), so the same fit there measures the
    # finite-sample (20 000 prompts) and optimiser error of Dist(., I).
    twin = nl.fit_gd_family(layers, seed, None, "identity", device=ctx.device)
    twin_dist = float(nl.dist_to_identity(twin["A"]).max())
    shape = np.array(shape_of(sp.Matrix(sigma), 20).evalf(), dtype=float)
    dists = [_whitened_dist(fit["A"][i].numpy(), shape) for i in range(layers)]
    raw = float(nl.dist_to_identity(fit["A"]).min())
    worst = max(dists)
    tol = 3 * twin_dist + 0.01
    return Evidence(0.0, worst, worst, tol,
                    "max over layers of Dist(C^-1/2 A_l C^-1/2, I) for the claimed shape C; "
                    "tolerance 3x the same distance in the isotropic twin fit (equal in law "
                    "after whitening: sampling + optimiser error) + 0.01",
                    {"per_layer": dists, "twin_dist": twin_dist, "raw_dist_to_identity": raw,
                     "train_loss": fit["loss"], "test_loss": fit["test_loss"],
                     "grad_norm": fit["grad_norm"]})


# ---------------------------------------------------------------------- 7-11. optimisers
SETTINGS_1_3 = ("setting1", "setting2", "setting3")


def _comparison(setting: str, seed: int, ctx: Context, attention: str = "linear") -> dict:
    return nl.compare_optimizers(nl.ComparisonRun(setting=setting, attention=attention, seed=seed),
                                 ctx.device)


def _split(run: dict, key: str) -> tuple[np.ndarray, np.ndarray]:
    """(SGD-momentum members, Adam members) of an array with a leading member axis."""
    values = run[key]
    return values[0::2], values[1::2]


def _adam_gap(run: dict, sign: int, label: str, start: int = 500) -> Evidence:
    """Seed-averaged log-loss gap log L_SGDM - log L_Adam (times ``sign``) on the fixed
    evaluation batch, at the checkpoints from ``start`` on: the fraction where it is <= 0."""
    sgdm, adam = _split(run, "eval_loss")
    keep = run["eval_steps"] >= start
    gap = sign * (np.log(sgdm).mean(0) - np.log(adam).mean(0))[keep]
    bad = float(np.mean(gap <= 0))
    return Evidence(0.0, bad, bad, 0.1,
                    f"{label}: fraction of checkpoints (every 50 its from {start}) where the "
                    "seed-averaged log-loss gap has the wrong sign; 10% allowed for checkpoints "
                    "where the fixed 1000-prompt evaluation noise crosses a small gap (spec §6 c11)",
                    {"setting": label, "median_gap": float(np.median(sign * gap)),
                     "final_loss_sgdm": sgdm[:, -1].tolist(), "final_loss_adam": adam[:, -1].tolist()})


def _check_adam(params: dict, ctx: Context, *, sign: int) -> Evidence:
    return combine([_adam_gap(_comparison(s, params["seed"], ctx), sign, s) for s in SETTINGS_1_3])


def _condition_ratio(run: dict, sign: int, label: str) -> list[Evidence]:
    """R_med(SGDM) / R_med(Adam) per seed, mean over seeds, at each Hessian checkpoint and
    under both definitions; the claim is ratio > 1 (``sign`` = -1: the control, ratio < 1)."""
    parts, verdicts = [], {}
    for definition in ("diag", "eig"):
        sgdm, adam = _split(run, f"r_{definition}")
        ratio = (sgdm / adam).mean(0)
        for step, r in zip(run["hess_steps"], ratio, strict=True):
            verdicts[(definition, int(step))] = bool(r > 1)
            parts.append(Evidence(1.0, float(r), float(r ** -sign), 1.0,
                                  f"{label}, {definition}, it. {step}: mean over seeds of "
                                  "R_med(SGDM)/R_med(Adam) must exceed 1 (sign-level test, spec "
                                  "§6 c12; published ratios have seed std up to 140%)",
                                  {"per_seed": (sgdm / adam)[:, list(run["hess_steps"]).index(step)].tolist()}))
    agree = all(verdicts[("diag", s)] == verdicts[("eig", s)] for s in map(int, run["hess_steps"]))
    for ev in parts:
        ev.details["definitions_agree"] = agree
        ev.details["r0_identical_init"] = run["init_gap"] == 0.0
    return parts


def _check_condition(params: dict, ctx: Context, *, sign: int) -> Evidence:
    parts = []
    for s in SETTINGS_1_3:
        parts += _condition_ratio(_comparison(s, params["seed"], ctx), sign, s)
    return combine(parts)


def _smoothness(run: dict, sign: int, label: str, start: int = 250) -> Evidence:
    """Median over iterations >= ``start`` of the seed-mean directional smoothness."""
    sgdm, adam = _split(run, "smooth")
    keep = run["smooth_steps"] >= start
    med_s, med_a = float(np.median(sgdm.mean(0)[keep])), float(np.median(adam.mean(0)[keep]))
    num, den = (med_a, med_s) if sign > 0 else (med_s, med_a)
    err = num / den if den > 0 else math.inf
    return Evidence(med_s, med_a, err, 1.0,
                    f"{label}: median over its. {start}-{int(run['smooth_steps'][-1])} of the "
                    "directional smoothness, Adam / SGDM < 1 (spec §6 c13: a sign test)",
                    {"setting": label, "median_sgdm": med_s, "median_adam": med_a})


def _check_smoothness(params: dict, ctx: Context, *, sign: int) -> Evidence:
    return combine([_smoothness(_comparison(s, params["seed"], ctx), sign, s) for s in SETTINGS_1_3])


def _generalised(run: dict, sign: int, label: str) -> Evidence:
    """Spearman correlation of log ||grad f|| and log directional smoothness along Adam.

    Points with non-positive curvature are dropped, as the authors' logarithm drops them.
    Error model: under no association, rho sqrt(m - 1) is approximately N(0, 1) for m
    points; the claim needs rho above 2 / sqrt(m - 1) (the control: below -2 / sqrt(m - 1)).
    """
    from scipy.stats import spearmanr  # noqa: PLC0415

    s, g = run["smooth"][1::2].ravel(), run["grad_norm"][1::2].ravel()
    keep = (s > 0) & (g > 0)
    m = int(keep.sum())
    rho = float(spearmanr(np.log(g[keep]), np.log(s[keep])).statistic) if m > 2 else 0.0
    need = 2 / math.sqrt(max(m - 1, 1))
    err = need / (sign * rho) if sign * rho > 0 else math.inf
    return Evidence(need, rho, err, 1.0,
                    f"{label}: 2/sqrt(m - 1) / Spearman rho over {m} Adam checkpoints (both "
                    "seeds) must be <= 1: rho above the 2-sigma level of no association",
                    {"rho": rho, "points": m, "dropped_non_positive": int((~keep).sum())})


def _check_generalised(params: dict, ctx: Context, *, sign: int) -> Evidence:
    return combine([_generalised(_comparison(s, params["seed"], ctx), sign, s)
                    for s in SETTINGS_1_3])


GAMMA_L3, SPHERE_L3, GAUSS_L8, GAUSS_L2 = ("setting3", 3), ("sphere", 3), ("setting1", 8), ("setting1", 2)


def _tail_evidence(heavy: np.ndarray, light: np.ndarray, label: str) -> Evidence:
    """Hill tail index of ``heavy``'s samples must be smaller than ``light``'s.

    Error model: the Hill estimator from the k largest of N samples (k = N/20) has
    relative standard error ~ 1/sqrt(k); the ratio alpha_heavy / alpha_light must lie 2
    combined standard errors below 1.
    """
    idx, quant = {}, {}
    for tag, x in (("heavy", heavy), ("light", light)):
        k = len(x) // 20
        idx[tag] = (measure.hill_tail_index(x, k), k)
        q1, q50, q99 = np.quantile(x, [0.01, 0.5, 0.99])
        quant[tag] = float((q99 - q50) / (q50 - q1))
    (a_h, k_h), (a_l, k_l) = idx["heavy"], idx["light"]
    tol = 1 - 2 * math.sqrt(1 / k_h + 1 / k_l)
    return Evidence(a_l, a_h, a_h / a_l, tol,
                    f"{label}: Hill index ratio heavy/light from the top 5% of the noise norms; "
                    "must lie 2 s.e. (relative s.e. 1/sqrt(k) each) below 1",
                    {"hill_heavy": a_h, "hill_light": a_l, "quantile_ratio_heavy": quant["heavy"],
                     "quantile_ratio_light": quant["light"], "samples": [len(heavy), len(light)]})


def _tail_comparison(heavy: tuple[str, int], light: tuple[str, int], seed: int,
                     ctx: Context) -> Evidence:
    """||g_B - g_full|| at initialisation (``numerics.linear_attention.init_noise``)."""
    x_h = nl.init_noise(heavy[0], heavy[1], seed=1 + seed, device=ctx.device)
    x_l = nl.init_noise(light[0], light[1], seed=1 + seed, device=ctx.device)
    return _tail_evidence(x_h, x_l, f"{heavy[0]} L={heavy[1]} vs {light[0]} L={light[1]}")


def _check_noise(params: dict, ctx: Context, *, heavy: tuple[str, int],
                 light: tuple[str, int]) -> Evidence:
    return _tail_comparison(heavy, light, params["seed"], ctx)


def _check_softmax(params: dict, ctx: Context, *, sign: int) -> Evidence:
    """Which of claims 7, 9, 10 carry over to softmax attention (Setting 1), and does the
    linear model reach a lower loss than softmax at every checkpoint (spec §6 c17)?"""
    soft = _comparison("setting1", params["seed"], ctx, "softmax")
    lin = _comparison("setting1", params["seed"], ctx)
    parts = {"adam_beats_sgd": [_adam_gap(soft, sign, "softmax")],
             "condition_number_ratio": _condition_ratio(soft, sign, "softmax"),
             "directional_smoothness": [_smoothness(soft, sign, "softmax")]}
    lower = []
    for opt, sl in (("sgdm", slice(0, None, 2)), ("adam", slice(1, None, 2))):
        gap = sign * (np.log(soft["eval_loss"][sl]).mean(0) - np.log(lin["eval_loss"][sl]).mean(0))
        bad = float(np.mean(gap[1:] <= 0))
        lower.append(Evidence(0.0, bad, bad, 0.0,
                              f"{opt}: fraction of checkpoints (after it. 0) where linear "
                              "attention's seed-mean log loss is not below softmax's (Fig. 4: "
                              "at every checkpoint)",
                              {"final_linear": lin["eval_loss"][sl][:, -1].tolist(),
                               "final_softmax": soft["eval_loss"][sl][:, -1].tolist()}))
    parts["linear_below_softmax"] = lower
    carry = {name: all(ev.passed for ev in evs) for name, evs in parts.items()}
    ev = combine([e for evs in parts.values() for e in evs])
    return Evidence(ev.predicted, ev.observed, ev.error, ev.tolerance, ev.error_model,
                    {**ev.details, "carries_over": carry})


def _ordering_claim(name: str, statement: str, source: str, check: Callable, control: Callable,
                    control_description: str, kind: str = "published-number",
                    expected: str = "holds", notes: str = "") -> Claim:
    """An optimiser-comparison claim (7-11): one slow pinned run (seed 0), seeds drawn."""
    return Claim(id=f"{PAPER}.{name}", paper=PAPER, statement=statement, source=source,
                 kind=kind, strategy=st.fixed_dictionaries({"seed": st.integers(1, 1000)}),
                 check=check, control=control, control_description=control_description,
                 expected=expected, cost="slow", examples=({"seed": 0},), notes=notes)


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
                      "changes it by exactly lr^2 (||g_PV||^2 - ||g_KQ||^2) per step; "
                      "Gamma = u U^T tracks the (u, U) ODE at matched time and ends at "
                      "Gamma* (balanced limit)",
            source="ZFB (conservation law, limit); spec §2.4, §6 a2",
            kind="reduced-vs-full",
            strategy=st.fixed_dictionaries({"seed": seeds}),
            check=partial(_check_balanced, sign=-1, limit=la.optimal_preconditioner,
                          flow_of=la.balanced_flow),
            control=partial(_check_balanced, sign=+1, limit=_wrong_limit, flow_of=_wrong_flow),
            control_description="||W_PV||^2 + ||W_KQ||^2 as the invariant, Gamma* without "
                                "the tr/n term, and the flow with n doubled",
            cost="slow",
            examples=({"seed": 0},),
            notes="One run of 4 members from one init with independent minibatches "
                  "(numerics.linear_attention.train_zfb): their spread is the noise model.",
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
        Claim(
            id="linear_attention.preconditioner_inverse_cov",
            paper=PAPER,
            statement="with x ~ N(0, Sigma), Sigma != I, and w* ~ N(0, Sigma^-1), the trained "
                      "B = 0 family has A_l proportional to Sigma^-1 (and not to I)",
            source="AhnPGD Thm 3; spec §2.5, §6 a3",
            kind="reduced-vs-full",
            strategy=st.fixed_dictionaries({"rotation": st.integers(0, 1000),
                                            "layers": st.sampled_from([2, 3]), "seed": seeds}),
            check=partial(_check_inverse_cov, shape_of=_inverse_cov_shape),
            control=partial(_check_inverse_cov, shape_of=_identity_prior_shape),
            control_description="A_l proportional to Thm 1's Gamma*(Sigma), the optimum's "
                                "shape for w* ~ N(0, I) (wrong prior pairing)",
            cost="slow",
            examples=({"rotation": 0, "layers": 2, "seed": 0},),
            notes="Fitted by L-BFGS on 20 000 fixed prompts (as the authors' LBFGS notebook), "
                  "not by Adam: see numerics.linear_attention.fit_gd_family.",
        ),
        _ordering_claim(
            "adam_beats_sgd",
            "in Settings 1-3 (3 layers, README learning rates, clipping), Adam's "
            "seed-averaged loss is below SGD-momentum's at >= 90% of checkpoints after "
            "iteration 500",
            "Ahn et al. Fig. 2 row 1, Section 3; spec §3.1, §6 c11",
            partial(_check_adam, sign=1), partial(_check_adam, sign=-1),
            "the opposite ordering: SGD-momentum below Adam",
            notes="2 seeds and 1250 iterations per setting (the paper: 6 seeds, 10 000).",
        ),
        _ordering_claim(
            "heavy_tailed_noise",
            "at initialisation the stochastic-gradient noise ||g_B - g|| has a heavier tail "
            "(smaller Hill index) for Gamma covariates (Setting 3) than for spherical ones, "
            "3 layers",
            "Ahn et al. Fig. 7, Section 4.1; spec §3.2, §6 c15",
            partial(_check_noise, heavy=GAMMA_L3, light=SPHERE_L3),
            partial(_check_noise, heavy=SPHERE_L3, light=GAMMA_L3),
            "the opposite ordering: sphere heavier than Gamma",
            notes="1000 minibatches of 1000 prompts per case (the paper: 10 000); the paper "
                  "judges tails by eye, we by a Hill index on the top 5%.",
        ),
        _ordering_claim(
            "heavy_tailed_noise_depth",
            "at initialisation the stochastic-gradient noise has a heavier tail (smaller Hill "
            "index) for 8 layers than for 2 (Setting 1 data)",
            "Ahn et al. Fig. 8, Section 4.2; spec §3.2, §6 c15",
            partial(_check_noise, heavy=GAUSS_L8, light=GAUSS_L2),
            partial(_check_noise, heavy=GAUSS_L2, light=GAUSS_L8),
            "the opposite ordering: 2 layers heavier than 8",
            expected="refuted",
            notes="Finding: at the authors' init (std 0.05) the Hill indices are 12.7 (L = 8) "
                  "and 13.0 (L = 2), ratio 0.98 against the 0.60 a 2-s.e. separation needs; "
                  "the spec's quantile ratio (q99 - q50)/(q50 - q1) is 1.51 vs 1.42. Deeper "
                  "layers enter the gradient with extra factors of the 0.05-scale weights.",
        ),
        _ordering_claim(
            "condition_number_ratio",
            "the robust condition number ratio R_med(SGDM)/R_med(Adam) exceeds 1 at iterations "
            "750 and 1250 in Settings 1-3, under the code's definition (Hessian diagonal) and "
            "the paper's (eigenvalues)",
            "Ahn et al. Fig. 2 row 3, Section 2.3, footnote 1; spec §3.3, §6 c12",
            partial(_check_condition, sign=1), partial(_check_condition, sign=-1),
            "the opposite ordering: ratio below 1",
            expected="refuted",
            notes="Finding (Setting 1 only; Settings 2 and 3 hold): for the pinned seeds the "
                  "2-seed mean ratio is 1.39 (diagonal) / 0.64 (eigenvalues) at it. 750 and "
                  "0.94 / 0.41 at it. 1250. A separate 4-seed run (seeds 1-4) gave means "
                  "2.46 / 1.82 and 1.66 / 2.88, but per-seed ratios from 0.49 to 7.19: in "
                  "Setting 1 the ordering does not hold seed by seed, and the published "
                  "1.76 (0.40), 1.58 (0.41) understate the spread; the authors' own rerun "
                  "(2.57 (0.92), 1.30 (0.78)) is in line with ours.",
        ),
        _ordering_claim(
            "directional_smoothness",
            "the directional smoothness along the update (median over iterations 250-1200, "
            "every 50) is smaller for Adam than for SGD-momentum in Settings 1-3",
            "Ahn et al. Fig. 2 row 4, Section 2.4; spec §3.4, §6 c13",
            partial(_check_smoothness, sign=1), partial(_check_smoothness, sign=-1),
            "the opposite ordering: Adam's larger",
        ),
        _ordering_claim(
            "generalised_smoothness",
            "along Adam's trajectory the directional smoothness grows with the gradient norm "
            "((L0, L1)-smoothness trend): positive Spearman correlation of their logarithms in "
            "Settings 1-3",
            "Ahn et al. Fig. 6, Section 2.5, Definition 1; spec §3.5, §6 c14 (a weak test)",
            partial(_check_generalised, sign=1), partial(_check_generalised, sign=-1),
            "the opposite trend: negative correlation",
            notes="Every 50 iterations from 0 to 1200 on the fixed batch (the authors: every "
                  "iteration, 0-1998, one seed). Pinned seeds: rho = 0.82 (S1), 0.30 (S2, "
                  "against 0.29 needed: a narrow pass), 0.64 (S3).",
        ),
        _ordering_claim(
            "softmax_carries_over",
            "open (reviewers' question): with softmax attention trained the same way "
            "(Setting 1), do claims 7, 9 and 10 carry over, and is the linear model's loss "
            "below softmax's at every checkpoint (Fig. 4)?",
            "Ahn et al. Fig. 4; reviews; spec §5.1, §6 c17",
            partial(_check_softmax, sign=1), partial(_check_softmax, sign=-1),
            "every ordering reversed",
            kind="open-question",
            expected="open",
            notes="details.carries_over says which parts held; softmax runs use Setting 1's "
                  "learning rates (the paper does not give its own). Softmax barely learns "
                  "(loss 4.07 SGDM / 4.05 Adam at it. 1250, trivial 5): with the authors' 1/n "
                  "factor and fixed value corner, |TF| <= ((1 + 1/n)^L - 1) max_j |y_j| for any "
                  "parameters (tested), so Fig. 4's gap is a capacity limit of that layer, "
                  "not only slower optimisation.",
        ),
    ]
