"""Figures of Tian et al., *Scan and Snap* (NeurIPS 2023): closed forms, reduced ODEs, SGD.

Time axes are per-sample SGD time (gradient-flow time ``t = lr * steps``); for SGD with
momentum mu the axis is ``lr * steps / (1 - mu)``, the heavy-ball long-run step.  Sizes come
from :data:`numerics.scan_snap.SIZES` at ``ctx.profile``, and SGD runs go through
:func:`numerics.scan_snap.sgd_run`, so a figure drawn after ``tdcheck verify`` at the same
profile reuses the claims' runs (a figure that runs more says so in its caption).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.registry import figure
from figures.style import COLORS, PALETTE, new_figure, save
from numerics import scan_snap as ns
from numerics.context import Context
from theory import scan_snap as ts

__all__: list[str] = []


@figure("scan_snap", "growth_exponent", "Figs. 3 and 9",
        "Theorem 4: chi bound e^{2B} (Fig. 3: K = 10, M = 1000, eta_Z = 0.5, C0 = 1) and B(t) "
        "at fixed nu (Fig. 9: K = 1, C0 = 1); lines closed form, points the integrated snap "
        "system, dashed the printed Eqn 14 form, dots B(t0)")
def growth_exponent(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(3, 1, width=4.0)
    data: dict[str, np.ndarray] = {}
    ax = axes[0, 0]
    t = np.linspace(0, 700, ctx.size(ns.SIZES, "fig3_points"))
    for i, eY in enumerate((0.5, 1.0, 2.0, 5.0)):
        # the upper bound e^{2B} of Theorem 3 (Eqn 12)
        chi = np.array([ts.gain_bounds(0.0, ts.growth_exponent(x, 1000, 10, eY, 0.5, 1.0))[1]
                        for x in t])
        ax.plot(t, chi, color=PALETTE[i], label=f"eta_Y = {eY:g}")
        ax.axvline(ts.snap_time(1000, 10, eY), color=PALETTE[i], ls=":", lw=0.8)
        data[f"fig3_chi_etaY{eY:g}"] = chi
    data["fig3_t"] = t
    ax.set(xlabel="t (per-sample time)", ylabel="e^{2B} (upper bound on chi)",
           title="Fig. 3: K = 10, M = 1000, eta_Z = 0.5, C0 = 1")
    ax.legend()
    for j, (M, nu, t_end) in enumerate(((100, 10.0, 5.0), (10000, 1.0, 50.0))):
        ax = axes[0, j + 1]
        t = np.linspace(0, t_end, ctx.size(ns.SIZES, "fig9_points"))
        for i, eZ in enumerate((0.5, 1.0, 2.0, 4.0, 8.0)):
            eY = nu * eZ
            B = np.array([ts.growth_exponent(x, M, 1, eY, eZ, 1.0) for x in t])
            ax.plot(t, B, color=PALETTE[i], label=f"(eta_Z, eta_Y) = ({eZ:g}, {eY:g})")
            tt, _, Bode = ns.run_snap_system(ns.SnapConfig(M, 1, eY, eZ, 1.0, tuple(t[::10])),
                                             cache=ctx.cache)
            ax.plot(tt, Bode, "o", color=PALETTE[i], ms=2.5)
            t0 = ts.snap_time(M, 1, eY)
            if t0 <= t_end:
                ax.plot([t0], [ts.growth_exponent(t0, M, 1, eY, eZ, 1.0)], "o", ms=6,
                        mfc="none", color=COLORS["theory"])
            data[f"fig9_M{M}_etaZ{eZ:g}"] = B
        printed = [ts.printed_growth_exponent(x, M, 1, nu, 1.0, 0.5) for x in t]
        ax.plot(t, printed, "--", color=COLORS["control"], label="printed, C0 = 0.5")
        data[f"fig9_M{M}_t"] = t
        ax.set(xlabel="t (per-sample time)", ylabel="B(t)",
               title=f"Fig. 9: nu = {nu:g}, M = {M}, K = 1, C0 = 1")
        ax.legend(fontsize=6)
    return save(fig, out, "growth_exponent", data)


@figure("scan_snap", "decoder_scale", "Fig. 8",
        "Lemma 5 discrete h*(s) (steps) against Lemma 6's continuous h(t) (lines); Lemma 7: "
        "0 <= h* - h <= 2 eta_Y/M")
def decoder_scale(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(2, 1)
    data: dict[str, np.ndarray] = {}
    for j, (M, rates, t_end) in enumerate(((50, (0.1, 0.2, 0.5, 1.0, 2.0), 80),
                                           (1000, (0.2, 0.5, 1.0, 2.0, 4.0), 70))):
        ax = axes[0, j]
        s = np.arange(t_end + 1)
        t = np.linspace(0, t_end, 401)
        for i, eY in enumerate(rates):
            hs = np.array([ts.decoder_scale_steps(int(k), M, eY) for k in s])
            h = np.array([ts.decoder_scale(x, M, eY) for x in t])
            ax.step(s, hs, where="post", color=PALETTE[i], lw=0.8, alpha=0.8)
            ax.plot(t, h, color=PALETTE[i], lw=1.2, label=f"eta_Y = {eY:g}")
            data[f"M{M}_etaY{eY:g}_hstar"] = hs
            data[f"M{M}_etaY{eY:g}_h"] = h
        ax.set(xlabel="s (steps) / t", ylabel="h", title=f"Fig. 8: M = {M}")
        ax.legend()
    return save(fig, out, "decoder_scale", data)


@figure("scan_snap", "attention_maps", "Fig. 4",
        "c_n of class 1 over tokens 0-19 (CTs 0-9, its DTs 10-19) at iterations 0-10 and 99, "
        "Fig. 4 command (zero init, lr_z = 1, momentum 0.9), seed 2; left ratio 1, right 10 "
        "(the runs of scan_snap.winner_sgd)")
def attention_maps(out: Path, ctx: Context) -> list[Path]:
    # the runs of scan_snap.winner_sgd (seeds 1, 2, ...); seed 2 as published
    cfg = ns.fig4_config(ctx.size(ns.SIZES, "fig4_seeds"))
    res = ns.sgd_run(cfg, ctx)
    rows = [0, 2, 4, 6, 8, 10, res.zq.shape[1] - 1]
    fig, axes = new_figure(2, 1, width=4.4, height=3.0)
    data: dict[str, np.ndarray] = {}
    for j, ratio in enumerate(cfg.ratio):
        i = int(res.select(1.0, ratio)[1])  # seeds 1..10: index 1 is seed 2
        c = ns.attention(res.zq[i, rows], res.facts)[:, 0, :20]
        ax = axes[0, j]
        im = ax.imshow(c, aspect="auto", cmap="viridis")
        ax.set_yticks(range(len(rows)), [str(r) if r != rows[-1] else "final" for r in rows])
        ax.set_xticks(range(0, 20, 2))
        ax.set(xlabel="token", ylabel="iteration",
               title=f"eta_Y/eta_Z = {ratio:g}, H_DT(final) = "
                     f"{float(ns.dt_entropy(res.zq[i, -1], res.facts)):.3f}")
        ax.grid(False)
        fig.colorbar(im, ax=ax, shrink=0.8)
        data[f"ratio{ratio:g}"] = c
    return save(fig, out, "attention_maps", data)


@figure("scan_snap", "fig6_entropy", "Fig. 6",
        "DT entropy after 100 iterations (random init, momentum 0.9): ours (mean over seeds) "
        "beside the published table; rows eta_Z, columns eta_Y/eta_Z; the panels and seeds of "
        "scan_snap.fig6_table at the profile (num_last = 1 below thorough, all four at thorough)")
def fig6_entropy(out: Path, ctx: Context) -> list[Path]:
    panels = ctx.size(ns.SIZES, "fig6_panels")
    seeds = ctx.size(ns.SIZES, "table_seeds")
    fig, axes = new_figure(3, len(panels), width=3.2, height=2.6)
    data: dict[str, np.ndarray] = {}
    for p, panel in enumerate(panels):
        cfg = ns.fig6_config(panel, seeds)  # the runs of scan_snap.fig6_table
        res = ns.sgd_run(cfg, ctx)
        H = res.entropy()[:, -1]
        ours = np.array([[H[res.select(ez, r)].mean() for r in cfg.ratio] for ez in cfg.eta_Z])
        pub = np.array([[ns.PUBLISHED_FIG6[(panel, ez)][r][0] for r in cfg.ratio]
                        for ez in cfg.eta_Z])
        vmin, vmax = min(ours.min(), pub.min()), max(ours.max(), pub.max())
        for k, (mat, name) in enumerate(((ours, f"ours ({seeds} seeds)"), (pub, "published"),
                                         (ours - pub, "ours - published"))):
            ax = axes[p, k]
            kw = ({"vmin": vmin, "vmax": vmax, "cmap": "viridis"} if k < 2
                  else {"vmin": -0.1, "vmax": 0.1, "cmap": "RdBu_r"})
            im = ax.imshow(mat, **kw)
            for a in range(4):
                for b in range(4):
                    ax.text(b, a, f"{mat[a, b]:.3f}", ha="center", va="center", fontsize=6,
                            color="w" if k < 2 else "k")
            ax.set_xticks(range(4), [f"{r:g}" for r in cfg.ratio])
            ax.set_yticks(range(4), [f"{e:g}" for e in cfg.eta_Z])
            ax.set(xlabel="eta_Y/eta_Z", ylabel="eta_Z", title=f"num_last {panel}: {name}")
            ax.grid(False)
            fig.colorbar(im, ax=ax, shrink=0.8)
        data[f"ours_{panel}"], data[f"published_{panel}"] = ours, pub
    return save(fig, out, "fig6_entropy", data)


@figure("scan_snap", "reduced_vs_full", "reduced ODE vs full model (no paper figure)",
        "DT entropy (num_last 1, K = 2, zero init, eta_Y/eta_Z = 10) in the reduced ODE (Lemma 4), "
        "the exact population flow, small-step GD, and SGD with momentum (band = range over "
        "the seeds of scan_snap.residual_open's positive control, no residual connection); "
        "the ODE, flow and GD runs are the figure's own (GD to t = 20 at the test profile, "
        "else 100)")
def reduced_vs_full(out: Path, ctx: Context) -> list[Path]:
    data_cfg = ns.DataConfig(num_last=1)
    facts = ns.make_facts(data_cfg)
    t_end, t_gd = 1000.0, ctx.size(ns.SIZES, "gd_time")
    t = np.r_[0.0, np.geomspace(0.05, t_end, ctx.size(ns.SIZES, "flow_points"))]
    flow = ns.run_population_flow(ns.FlowConfig(data=data_cfg, eta_Y=10.0, eta_Z=1.0,
                                                t_eval=tuple(t)), cache=ctx.cache)
    P = tuple(map(tuple, facts.probs[:, : facts.n_context]))
    red = ns.run_reduced(ns.ReducedConfig(P, facts.M, 10.0, 1.0, tuple(t)), cache=ctx.cache)
    zr = np.zeros((len(t), facts.K, facts.M))
    zr[:, :, : facts.n_context] = red.z[:, None, :]
    delta = 0.05
    gd = ns.sgd_run(ns.SGDConfig(data=data_cfg, eta_Z=(delta,), ratio=(10.0,), seeds=(1,),
                                 steps=int(t_gd / delta), momentum=0.0, zero_init=True,
                                 exact=True, record_every=20), ctx)
    # SGD with momentum: the ratio-10 members of residual_open's positive control (the Fig. 4
    # protocol on num_last 1, no residual)
    run = ns.sgd_run(ns.residual_config(ctx.size(ns.SIZES, "fig4_seeds"), False), ctx)
    ten = run.select(1.0, 10.0)
    fig, axes = new_figure(2, 1)
    ax = axes[0, 0]
    H_red, H_flow = ns.dt_entropy(zr, facts), ns.dt_entropy(flow.zq, facts)
    H_gd = ns.dt_entropy(gd.zq[0], facts)
    ax.plot(t, H_red, color=COLORS["theory"], label="reduced ODE (Lemma 4)")
    ax.plot(t, H_flow, "--", color=COLORS["sim2"], label="population flow")
    ax.plot(gd.steps * delta, H_gd, "o", ms=2, color=COLORS["sim"], label="GD, step 0.05")
    ax.axvline(ts.snap_time(facts.M, facts.K, 10.0), ls=":", color="gray", label="t0")
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set(xlim=(0, t_end), xlabel="t (per-sample time)", ylabel="DT entropy (nats)",
           title="continuous theory vs small-step GD")
    ax.legend()
    ax = axes[0, 1]
    H_sgd = run.entropy()[ten]
    ts_sgd = run.steps * 1.0 / (1 - run.config.momentum)
    ax.fill_between(ts_sgd, H_sgd.min(0), H_sgd.max(0), color=COLORS["sim"], alpha=0.25, lw=0)
    ax.plot(ts_sgd, np.median(H_sgd, 0), color=COLORS["sim"], label="SGD momentum 0.9 (median)")
    ax.plot(t, H_flow, "--", color=COLORS["sim2"], label="population flow")
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set(xlim=(0, t_end), xlabel="t = lr steps / (1 - mu)", ylabel="DT entropy (nats)",
           title="SGD (published protocol) vs flow")
    ax.legend()
    return save(fig, out, "reduced_vs_full", {
        "t": t, "H_reduced": H_red, "H_flow": H_flow, "t_gd": gd.steps * delta, "H_gd": H_gd,
        "t_sgd": ts_sgd, "H_sgd": H_sgd})
