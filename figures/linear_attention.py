"""Figures of Ahn et al. (ICLR 2024) and its companions: the reduced theory (partial row)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import sympy as sp

from figures.registry import figure
from figures.style import COLORS, new_figure, save
from numerics import linear_attention as nl
from numerics.ode import integrate
from theory import linear_attention as la


@figure("linear_attention", "balanced_flow", "ZFB one-layer flow (spec §2.4)",
        "ZFB's (u, U) gradient flow from balanced small init, d = 3, n = 10, Lambda = "
        "diag(1, 1/2, 1/4): plateau of length ~ log(1/sigma), limit (||Gamma*||^(1/2), "
        "Gamma*/||Gamma*||^(1/2)), conserved u^2 - ||U||^2")
def balanced_flow(out: Path, quick: bool = False, device: str = "cpu") -> list[Path]:
    lam = sp.diag(1, sp.Rational(1, 2), sp.Rational(1, 4))
    sys = la.balanced_flow(lam, 10, diagonal=True)
    u_inf, U_inf = la.balanced_limit(lam, 10)
    loss = sys.lambdify_loss("numpy")
    t = np.linspace(0, 300, 301 if quick else 1201)
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {"t": t, "u_inf": float(u_inf), "U_inf": np.array(U_inf.evalf(), float)}
    for sigma, style in ((0.05, "-"), (0.005, "--")):
        y0 = [sigma] + [sigma / math.sqrt(3)] * 3
        sol = integrate(sys, y0, float(t[-1]), t_eval=t)
        gam = sol.y[0] * sol.y[1:]
        for i in range(3):
            axes[0, 0].plot(t, gam[i], style, color=f"C{i}",
                            label=f"Gamma_{i + 1}{i + 1}, sigma = {sigma}")
        axes[0, 1].plot(t, [loss(y) for y in sol.y.T], style, color=COLORS["theory"],
                        label=f"loss f/2, sigma = {sigma}")
        data[f"y_sigma_{sigma}"] = sol.y
    g_star = np.diag(np.array(la.optimal_preconditioner(lam, 10).evalf(), float))
    for i, g in enumerate(g_star):
        axes[0, 0].axhline(g, color=f"C{i}", ls=":", lw=1)
    for ax in axes[0]:
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(left=0)
    axes[0, 0].set_xlabel("gradient-flow time t")
    axes[0, 0].set_ylabel("Gamma = u U^T (diagonal); dotted: Gamma*")
    axes[0, 0].legend(fontsize=6)
    f_star = float(la.optimal_one_layer_loss(lam, 10)) / 2
    axes[0, 1].axhline(f_star, color=COLORS["optimum"], ls=":", label="f*/2 (closed form)")
    axes[0, 1].set_yscale("log")
    axes[0, 1].set_xlabel("gradient-flow time t")
    axes[0, 1].set_ylabel("loss (ZFB convention, 1/2)")
    axes[0, 1].legend()
    return save(fig, out, "balanced_flow", data)


@figure("linear_attention", "learned_steps", "AhnPGD Fig. 1/2 protocol, Setting 1 (spec §2.5)",
        "trained B = 0 linear transformers (points: -diag(A_l) per layer, 2 seeds) against "
        "the exact minimising GD steps (crosses), and evaluation losses against the exact "
        "pure-GD floors (lines)")
def learned_steps(out: Path, quick: bool = False, device: str = "cpu") -> list[Path]:
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {}
    floors, losses = [], []
    for layers in (1, 2, 3):
        floor, steps = la.gd_floor(layers, 5, 20)
        params, loss, se = nl.train_gd_family(layers, 0, device)
        a = params["A"].numpy()
        fitted = np.sort(-np.diagonal(a, axis1=-2, axis2=-1).mean(-1), axis=-1)
        for m in range(fitted.shape[0]):
            axes[0, 0].plot([layers] * layers, fitted[m], "o", color=COLORS["sim"], ms=5,
                            alpha=0.7, label="trained" if (layers, m) == (1, 0) else None)
        axes[0, 0].plot([layers] * layers, steps, "x", color=COLORS["theory"], ms=9,
                        label="exact minimiser" if layers == 1 else None)
        floors.append(floor)
        losses.append(loss)
        data[f"trained_steps_L{layers}"] = fitted
        data[f"exact_steps_L{layers}"] = np.array(steps)
    axes[0, 0].set_xlabel("depth L")
    axes[0, 0].set_ylabel("step sizes a_l (sorted)")
    axes[0, 0].set_xticks([1, 2, 3])
    axes[0, 0].legend()
    ls = np.array([1, 2, 3])
    axes[0, 1].plot(ls, floors, "-", color=COLORS["theory"], label="exact pure-GD floor")
    for m in range(2):
        axes[0, 1].plot(ls, [lo[m] for lo in losses], "o", color=COLORS["sim"],
                        label="trained (2e5-prompt eval)" if m == 0 else None)
    axes[0, 1].plot([2, 3], [0.3608, 0.1326], "s", mfc="none", color=COLORS["sim2"],
                    label="companion paper's Monte Carlo")
    axes[0, 1].set_yscale("log")
    axes[0, 1].set_xlabel("depth L")
    axes[0, 1].set_ylabel("loss (no 1/2)")
    axes[0, 1].set_xticks([1, 2, 3])
    axes[0, 1].legend()
    data["floors"] = np.array(floors)
    data["losses"] = np.array(losses)
    return save(fig, out, "learned_steps", data)


@figure("linear_attention", "zfb_torch_vs_ode", "ZFB one-layer flow vs training (spec §6 a2)",
        "plain GD on ZFB's full one-layer model (points, 2 seeds, B = 4000, lr 0.04) against the "
        "(u, U) ODE from the same start (lines): diagonal of Gamma = u U^T, and the balance "
        "||W_PV||^2 - ||W_KQ||^2 with the exact GD prediction")
def zfb_torch_vs_ode(out: Path, quick: bool = False, device: str = "cpu") -> list[Path]:
    run = nl.train_zfb(0, device)
    lam, n = sp.diag(*run["lam"]), run["n"]
    sys = la.balanced_flow(lam, n)
    t = run["time"]
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {"t": t}
    for m in range(2):
        y0 = [run["u"][m, 0], *run["U"][m, 0].flatten()]
        sol = integrate(sys, y0, float(t[-1]), t_eval=t)
        gam_ode = np.array([y[0] * np.diag(y[1:].reshape(3, 3)) for y in sol.y.T])
        gam_full = run["u"][m][:, None] * np.diagonal(run["U"][m], axis1=1, axis2=2)
        for i in range(3):
            axes[0, 0].plot(t, gam_full[:, i], "o", ms=2, color=f"C{i}", alpha=0.6,
                            label=f"GD, Gamma_{i + 1}{i + 1}" if m == 0 else None)
            axes[0, 0].plot(t, gam_ode[:, i], "-", color=f"C{i}", lw=1,
                            label=f"ODE, Gamma_{i + 1}{i + 1}" if m == 0 else None)
        inc = run["lr"] ** 2 * (run["grad_sq_pv"][m] - run["grad_sq_kq"][m])
        predicted = np.concatenate([[0.0], np.cumsum(inc)])[run["steps"]]
        axes[0, 1].plot(t, run["balance"][m] - run["balance"][m, 0], "o", ms=2,
                        color=COLORS["sim"], label="GD: balance(t) - balance(0)" if m == 0 else None)
        axes[0, 1].plot(t, predicted, "-", color=COLORS["theory"], lw=1,
                        label="lr^2 sum (|g_PV|^2 - |g_KQ|^2)" if m == 0 else None)
        data[f"gamma_full_{m}"], data[f"gamma_ode_{m}"] = gam_full, gam_ode
        data[f"balance_{m}"], data[f"balance_predicted_{m}"] = run["balance"][m], predicted
    for ax in axes[0]:
        ax.set_xlabel("gradient-flow time t = lr * steps")
    axes[0, 0].set_xscale("symlog", linthresh=1)
    axes[0, 0].set_xlim(left=0)
    axes[0, 0].set_ylabel("diagonal of Gamma = u U^T")
    axes[0, 0].legend(fontsize=6)
    axes[0, 1].set_ylabel("change of the balance (0 under gradient flow)")
    axes[0, 1].legend()
    return save(fig, out, "zfb_torch_vs_ode", data)
