"""Figures of the cooccurrence row (Yang et al., NeurIPS 2024): Fig. 1 and the reduced theory.

Runs come from the row's run functions (:func:`numerics.cooccurrence.run`,
:func:`numerics.cooccurrence.run_closure`) through the run cache shared with ``tdcheck
verify``, sized by the row's table :data:`numerics.cooccurrence.SIZES` at ``ctx.profile``: the
theory-scaled run is the one the claims check at the same profile, and so is the Appendix A
run at ``test`` and ``thorough`` (at ``quick`` Fig. 1 draws the paper's 30000 steps, more than
the check runs).  Theory is drawn as black lines, simulation as coloured points/lines.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.registry import figure
from figures.style import COLORS, PALETTE, new_figure, save
from numerics import cooccurrence as nc
from numerics.context import Context
from theory import cooccurrence as tc

__all__ = ["fig1_appendix", "fig1_theory", "loss_constant", "reduced_vs_full"]

PAIRS = (((1, 0), r"$A[\mu_2,\mu_1]$"), ((0, 1), r"$A[\mu_1,\mu_2]$"),
         ((2, 0), r"$A[\mu_3,\mu_1]$"), ((2, 1), r"$A[\mu_3,\mu_2]$"))
TYPES = ("I1 (both)", "I2 (mu1 only)", "I3 (mu2 only)", "I4 (neither)")


def _run(entry: str, ctx: Context) -> nc.CoRun:
    """The run of size-table entry ``entry`` at ``ctx.profile`` (seed 0, as the claims' pinned
    example), through the shared run cache."""
    return nc.run(ctx.size(nc.SIZES, entry), cache=ctx.cache, device=ctx.device)


def _t1(run: nc.CoRun, k: int = 0) -> int:
    i = nc.first_classified(run, k)
    return len(run.steps) - 1 if i is None else i


def _fig1(out: Path, run: nc.CoRun, name: str, xlabel: str, x: np.ndarray, logx: bool,
          title: str) -> list[Path]:
    fig, ax = new_figure(2, 1, width=4.4)
    k = 0
    i = _t1(run, k)
    a, b = ax[0]
    for c, ((nu, mu), lab) in enumerate(PAIRS):
        a.plot(x, run.A3[k, :, nu, mu] - run.A3[k, 0, nu, mu], color=PALETTE[c], lw=1.2,
               label=lab)
    b.plot(x, run.loss[k], color=COLORS["theory"], lw=1.5, label="loss")
    for c in range(4):
        b.plot(x, run.type_loss[k, :, c], color=PALETTE[c], lw=1.0, label=TYPES[c])
    for axis in (a, b):
        axis.axvline(x[i], color="red", lw=0.8, ls="--")
        axis.set_xlabel(xlabel)
        if logx:
            axis.set_xscale("log")
    b.set_yscale("log")
    a.set_ylabel("score change (key, query) since init")
    b.set_ylabel("training loss")
    a.set_title(f"(a) attention score correlation, {title}")
    b.set_title(f"(b) training loss, {title}")
    a.legend(loc="best")
    b.legend(loc="lower left")
    data = {"x": x, "A3": run.A3[k], "loss": run.loss[k], "type_loss": run.type_loss[k],
            "T1_index": np.array(i)}
    return save(fig, out, name, data)


@figure("cooccurrence", "fig1_appendix_a", "Fig. 1(a)(b)",
        "Appendix A configuration (n=60, L=5, d=64, m=128, m1=256, lr 0.01, nn.Linear default "
        "init): score changes and per-type losses against GD steps; red line = all samples "
        "classified.  Profile quick (and ci): the paper's 30000 steps recorded every 10, a run "
        "of its own beyond the check's; test and thorough: the appendix_a check's run, every "
        "step (at test it shows the one-step I2/I3 rise)")
def fig1_appendix(out: Path, ctx: Context) -> list[Path]:
    run = _run("fig1_appendix_a", ctx)
    x = run.steps.astype(float) + 1.0
    return _fig1(out, run, "cooccurrence_fig1_appendix_a", "GD step + 1", x, True,
                 "Appendix A")


@figure("cooccurrence", "fig1_theory_scaled", "Fig. 1(a)(b), theory-scaled",
        "theory-scaled run (m >> m1, sigma0 = 0.05/sqrt(Lm), private tokens) against "
        "tau = int S dt; red line = all samples classified")
def fig1_theory(out: Path, ctx: Context) -> list[Path]:
    run = _run("theory_scaled", ctx)
    x = np.maximum(run.tau[0], 1e-3)
    return _fig1(out, run, "cooccurrence_fig1_theory_scaled", r"$\tau = \int S\,dt$", x, True,
                 "theory-scaled")


@figure("cooccurrence", "reduced_vs_full", "our canonical ODE and four-class reduction",
        "(a) G(mu1..3) of full GD (points) and the four-class ODE (lines) in tau; (b) "
        "full GD (points) against the exact canonical ODE (lines), sigma0 = sigma1 = 0.5 "
        "(panel (b) trains a small run of its own, 20 records to t = 1)")
def reduced_vs_full(out: Path, ctx: Context) -> list[Path]:
    run = _run("theory_scaled", ctx)
    fig, ax = new_figure(2, 1, width=4.4)
    a, b = ax[0]
    tau = run.tau[0]
    sel = tau > 0
    ode = tc.class_trajectory(tau[sel])
    for c, lab in enumerate((r"$G_1$", r"$G_2$", r"$G_3$")):
        a.plot(tau[sel], run.beta[0, sel, c], "o", ms=2, color=PALETTE[c], label=f"{lab} full GD")
        a.plot(tau[sel], ode[c], color=COLORS["theory"], lw=0.8)
    a.set_xscale("log")
    a.set_xlabel(r"$\tau = \int S\,dt$")
    a.set_title("(a) full model vs four-class ODE")
    a.legend(loc="best")
    # (b) exact closure on a small model where attention moves
    steps = ctx.size(nc.SIZES, "fig_closure_steps")
    lr = 1.0 / steps
    closure = nc.run_closure(nc.ClosureConfig(lrs=(lr,), steps=steps, record_every=steps // 20,
                                              n=12, L=4, m=16, m1=8, sigma=0.5, seed=0),
                             cache=ctx.cache, device=ctx.device)
    cfg, d = closure.config, closure.d
    t = closure.time[0]
    beta_gd = closure.state[0, :, :3]  # beta comes first in STATE_KEYS
    a21_gd = closure.state[0, :, d + 1 + d * d + d]  # A[1, 0]: after beta [d], S, M [d, d]
    states = nc.integrate_canonical(closure.initial_state, closure.data.tokens,
                                    closure.data.labels, cfg.m, cfg.m1, t,
                                    velocity=tc.canonical_velocity)
    beta_ode = np.array([s["beta"][:3] for s in states])
    a21_ode = np.array([s["A"][1, 0] for s in states])
    for c in range(3):
        b.plot(t, beta_gd[:, c], "o", ms=3, color=PALETTE[c], label=rf"$\beta_{c + 1}$ GD")
        b.plot(t, beta_ode[:, c], color=COLORS["theory"], lw=0.8)
    b.plot(t, a21_gd, "s", ms=3, color=PALETTE[3], label=r"$A[\mu_2,\mu_1]$ GD")
    b.plot(t, a21_ode, color=COLORS["theory"], lw=0.8, ls="--", label="canonical ODE")
    b.set_xlabel("t = lr x steps")
    b.set_title(f"(b) canonical closure (lr = {lr:.0e})")
    b.legend(loc="best")
    return save(fig, out, "cooccurrence_reduced_vs_full",
                {"tau": tau[sel], "G_full": run.beta[0, sel, :3], "G_ode": ode.T, "t": t,
                 "beta_gd": beta_gd, "beta_ode": beta_ode})


@figure("cooccurrence", "loss_constant", "Theorem F.8 (our constant)",
        "L(t) x tau_eff against the predicted 1/gamma*^2: sample level (dashed, private "
        "tokens) and class level 17 (dotted, the four-class ODE's curve in grey)")
def loss_constant(out: Path, ctx: Context) -> list[Path]:
    run = _run("theory_scaled", ctx)
    mm = tc.sample_max_margin(run.data.tokens, run.data.labels, run.config.vocabulary)
    cm = tc.class_max_margin()
    fig, ax = new_figure(2, 1, width=4.4)
    a, b = ax[0]
    taus = np.geomspace(0.1, float(run.tau[0, -1]), 300)
    G = tc.class_trajectory(taus)
    Lc = tc.class_system().lambdify_loss()(G)  # the four-class loss along its own flow
    for k in range(run.config.members):
        a.plot(run.tau_eff[k], run.loss[k] * run.tau_eff[k], "o", ms=2, color=PALETTE[k],
               label=f"full GD, init {k}")
    a.plot(taus, Lc * taus, color="grey", lw=1, label="four-class ODE")
    a.axhline(1 / float(mm.gamma_sq), color=COLORS["theory"], ls="--",
              label=rf"$1/\gamma^{{*2}}$ = {1 / float(mm.gamma_sq):.4f} (sample)")
    a.axhline(1 / float(cm.gamma_sq), color=COLORS["theory"], ls=":",
              label=f"{1 / float(cm.gamma_sq):g} (class)")
    a.set_xscale("log")
    a.set_xlabel(r"$\tau_{\rm eff} = \int (S + m_1 \hat\beta^T M \hat\beta)\,dt$")
    a.set_ylabel(r"$\hat L \cdot \tau_{\rm eff}$")
    a.set_title("(a) 1/t loss law constant")
    a.set_ylim(0.0, 26.0)
    a.legend(loc="upper left", ncol=2)
    for k in range(run.config.members):
        dG = np.diff(run.beta[k, :, :3], axis=0)
        tm = 0.5 * (run.tau[k, 1:] + run.tau[k, :-1])
        good = np.abs(dG[:, 0]) > 0
        b.plot(tm[good], -dG[good, 2] / dG[good, 0], "o", ms=2, color=PALETTE[k],
               label=f"full GD, init {k}")
    r = np.array([tc.class_velocity(G[:, j]) for j in range(G.shape[1])])
    b.plot(taus, -r[:, 2] / r[:, 0], color="grey", lw=1, label="four-class ODE")
    b.axhline(float(mm.R_inf), color=COLORS["theory"], ls="--",
              label=rf"$R_\infty$ = {float(mm.R_inf):.4f} (sample)")
    b.axhline(float(cm.R_inf), color=COLORS["theory"], ls=":", label=f"{cm.R_inf} (class)")
    b.set_xscale("log")
    b.set_ylim(0.0, 2.0)
    b.set_xlabel(r"$\tau = \int S\,dt$")
    b.set_ylabel(r"$R = -\dot G_3/\dot G_1$")
    b.set_title("(b) ratio limit")
    b.legend(loc="lower right")
    return save(fig, out, "cooccurrence_loss_constant",
                {"tau_eff": run.tau_eff, "loss": run.loss, "tau": run.tau,
                 "beta3": run.beta[:, :, :3], "gamma_sq_sample": np.array(float(mm.gamma_sq)),
                 "R_inf_sample": np.array(float(mm.R_inf))})
