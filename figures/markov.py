"""Figures of Makkuva et al., *Local to Global* (the paper's Fig. 1 and Fig. 4, and the
authors' plotting scripts in github.com/Bond1995/Markov).

Every size comes from ``numerics.markov.SIZES`` at ``ctx.profile``, and the full-model
figures get their runs through ``numerics.markov.run_full`` with the configs of the verify
claims, so a figure after ``tdcheck verify`` at the same profile retrains no Adam run.
``full_vs_reduced`` draws its rank-one GD runs past the claims' comparison window (its
caption says so), so it trains its two runs once (then cached).  Theory curves come from
``theory.markov`` (closed forms, reduced systems and float twins).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.registry import figure
from figures.style import COLORS, new_figure, save
from numerics import markov as nm
from numerics.context import Context
from numerics.ode import integrate
from theory import markov as tm

__all__ = [
    "REGIMES",
    "basins_gt",
    "basins_lt",
    "full_vs_reduced",
    "init_loss",
    "phase_gt",
    "phase_lt",
    "rank_energy",
]

REGIMES = {"sum_lt_1": (0.1, 0.1), "sum_gt_1": (0.9, 0.9)}  # the code's energy_lines1/2


def _landscape(ax, p: float, q: float, n: int) -> dict:
    """Quiver of the b*-flow, energy contours, Gamma*, separatrix and the e = 0 line."""
    sys = tm.system(p, q)
    f = sys.lambdify("numpy")
    w = np.linspace(-3, 3, n)
    e = np.linspace(-3, 3, n)
    ww, ee = np.meshgrid(w, e)
    de, dw = f(0.0, np.stack([ee.ravel(), ww.ravel()]))
    norm = np.hypot(de, dw) + 1e-300
    step = max(1, n // 20)
    ax.quiver(ww[::step, ::step], ee[::step, ::step],
              (dw / norm).reshape(ww.shape)[::step, ::step],
              (de / norm).reshape(ee.shape)[::step, ::step],
              color="0.6", angles="xy", width=0.003, headwidth=3)
    with np.errstate(divide="ignore", invalid="ignore"):
        energy = tm.energy_twin(ee, ww)
    ax.contour(ww, ee, energy, levels=np.arange(-9, 12, 1.0), colors="0.75", linewidths=0.6)
    e_sep = float(tm.separatrix_energy())
    ax.contour(ww, ee, np.where(ww < 0, energy, np.nan), levels=[e_sep],
               colors=COLORS["separatrix"], linewidths=1.5)
    us = float(tm.optimal_gap(p, q))
    gap_minus_star = tm.gap_twin(ee, ww) - us  # Gamma* is its zero level
    ax.contour(ww, ee, gap_minus_star, levels=[0.0], colors=COLORS["optimum"],
               linewidths=1.5, linestyles="--")
    ax.plot([], [], "--", color=COLORS["optimum"], lw=1.5, label=r"$\Gamma^*$ (global min)")
    kinds = np.array([tm.critical_type(x, p, q) for x in w])
    for kind, color, label in (("min", COLORS["local"], "e = 0: local min"),
                               ("max", "#1f77b4", "e = 0: local max")):
        sel = kinds == kind
        ax.plot(w[sel], np.zeros(sel.sum()), ".", color=color, ms=3, label=label)
    ws = float(tm.saddle_point()[1])
    ax.plot([ws], [0], "^", color="orange", ms=8, label="saddle", zorder=5)
    ax.set_xlim(-3, 3)
    ax.set_ylim(-3, 3)
    ax.set_xlabel("w")
    ax.set_ylabel("e")
    return {"w": w, "e": e, "energy": energy, "gap_minus_u_star": gap_minus_star, "u_star": us,
            "e_sep": e_sep}


def _phase(out: Path, ctx: Context, key: str, label: str) -> list[Path]:
    p, q = REGIMES[key]
    fig, axes = new_figure()
    ax = axes[0, 0]
    data = _landscape(ax, p, q, ctx.size(nm.SIZES, "phase_grid"))
    # A few integrated trajectories (theory) from small and larger starts.
    sys = tm.system(p, q)
    starts = [(0.1, 0.1), (0.1, -0.1), (1.0, -1.0), (0.3, -1.5), (2.0, 0.5), (-1.0, -2.0)]
    for i, (e0, w0) in enumerate(starts):
        sol = integrate(sys, (e0, w0), 400.0, t_eval=np.linspace(0, 400, 400), rtol=1e-8)
        ax.plot(sol.y[1], sol.y[0], color=COLORS["theory"], lw=1)
        ax.plot([w0], [e0], "o", color=COLORS["theory"], ms=3)
        data[f"trajectory_{i}"] = sol.y
    ax.set_title(f"{label}: p = {p}, q = {q} (p+q {'<' if p + q < 1 else '>'} 1)")
    ax.legend(loc="lower left", fontsize=7)
    return save(fig, out, f"phase_portrait_{key}", data)


@figure("markov", "phase_portrait_sum_lt_1", "Fig. 1a (code: energy_lines1.pdf)",
        "b*-flow field, energy contours, separatrix (orange), Gamma* (purple) and critical "
        "types on e = 0, p = q = 0.1")
def phase_lt(out: Path, ctx: Context) -> list[Path]:
    return _phase(out, ctx, "sum_lt_1", "Fig. 1a")


@figure("markov", "phase_portrait_sum_gt_1", "Fig. 1c (code: energy_lines2.pdf)",
        "as Fig. 1a for p = q = 0.9: small initialisations flow to the unigram line")
def phase_gt(out: Path, ctx: Context) -> list[Path]:
    return _phase(out, ctx, "sum_gt_1", "Fig. 1c")


def _basins(out: Path, ctx: Context, key: str, label: str) -> list[Path]:
    p, q = REGIMES[key]
    size = ctx.size(nm.SIZES, "basins_figure")
    n = size["grid"]
    w = np.linspace(-3, 3, n)
    e = np.linspace(-3, 3, n)
    grid = np.array([[1.0 if (ei != 0 and tm.basin(ei, wi, p, q) == "global") else 0.0
                      for wi in w] for ei in e])
    fig, axes = new_figure()
    ax = axes[0, 0]
    from matplotlib.colors import ListedColormap

    ax.pcolormesh(w, e, grid, cmap=ListedColormap(["#ef9a9a", "#a5d6a7"]), shading="auto")
    # Simulation: endpoints of the integrated flow on a coarse grid, as points.
    m = size["flows"]
    pts = []
    sys = tm.system(p, q)
    us = float(tm.optimal_gap(p, q))
    for wi in np.linspace(-2.8, 2.8, m):
        for ei in np.linspace(-2.8, 2.8, m):
            if abs(ei) < 1e-9 or abs(wi) < 1e-9:
                continue
            sol = integrate(sys, (ei, wi), 3000.0, rtol=1e-8, atol=1e-10)
            ee, we = sol.y[:, -1]
            reached = abs(tm.gap_twin(ee, we) - us) < 1e-3
            pts.append((wi, ei, 1.0 if reached else 0.0))
    pts = np.array(pts)
    for val, color, name in ((1.0, COLORS["global"], "flow ends at global min"),
                             (0.0, COLORS["local"], "flow ends at unigram line")):
        sel = pts[:, 2] == val
        ax.plot(pts[sel, 0], pts[sel, 1], "o", ms=3, color=color, label=name)
    e_sep = float(tm.separatrix_energy())
    ww, ee = np.meshgrid(w, e)
    with np.errstate(divide="ignore", invalid="ignore"):
        energy = np.where(ww < 0, tm.energy_twin(ee, ww), np.nan)
    ax.contour(ww, ee, energy, levels=[e_sep], colors=COLORS["separatrix"], linewidths=1.5)
    ax.set_xlabel("w")
    ax.set_ylabel("e")
    ax.set_title(f"{label}: basins I* (green), I_min (red), p = q = {p}", fontsize=8)
    ax.legend(loc="lower left", fontsize=7)
    return save(fig, out, f"basins_{key}", {"w": w, "e": e, "global": grid, "flow_points": pts})


@figure("markov", "basins_sum_lt_1", "Fig. 1b (code: regions1.pdf)",
        "basins from the energy rule (shaded) and where integrated flows end (points)")
def basins_lt(out: Path, ctx: Context) -> list[Path]:
    return _basins(out, ctx, "sum_lt_1", "Fig. 1b")


@figure("markov", "basins_sum_gt_1", "Fig. 1d (code: regions2.pdf)",
        "as Fig. 1b for p + q > 1: the origin lies in the local basin")
def basins_gt(out: Path, ctx: Context) -> list[Path]:
    return _basins(out, ctx, "sum_gt_1", "Fig. 1d")


def _band(ax, x, runs, color, label):
    med = np.median(runs, axis=0)
    ax.fill_between(x, runs.min(0), runs.max(0), color=color, alpha=0.25, lw=0)
    ax.plot(x, med, "o-", color=color, ms=2.5, lw=1, label=label)


def _adam(p: float, q: float, init: str, ctx: Context, size: str = "full") -> nm.FullRunResult:
    """The runs of the verify claims (same configs: a verify before retrains nothing)."""
    budget = ctx.size(nm.SIZES, size)
    return nm.run_full(nm.adam_run_config(p, q, init, budget), cache=ctx.cache,
                       device=ctx.device)


@figure("markov", "init_loss_curves", "Fig. 4 (code: loss_avg.pdf)",
        "full model, standard Gaussian vs the authors' initialisation at p = 0.5, q = 0.8 "
        "(median and range over seeds), unigram and bigram lines from theory; Fig. 4's run: "
        "the authors' linear-embedding model at d = 8 (Markov-Simple before f3a2ec1, kept "
        "as Markov-Simple2), the constants of f3a2ec1, lr 1e-3, iterations 0-600 of a "
        "5000-iteration schedule (SIZES fig4)")
def init_loss(out: Path, ctx: Context) -> list[Path]:
    p, q = 0.5, 0.8
    std = _adam(p, q, "gaussian", ctx, "fig4")
    good = _adam(p, q, "authors_fig4", ctx, "fig4")
    fig, axes = new_figure(width=5.0)
    ax = axes[0, 0]
    _band(ax, std.steps, std.eval_loss, COLORS["sim"], "standard init (N(0, 0.02^2))")
    _band(ax, good.steps, good.eval_loss, COLORS["sim2"], "authors' init")
    uni, bi = float(tm.unigram_loss(p, q)), float(tm.bigram_loss(p, q))
    ax.axhline(uni, color=COLORS["local"], ls="--", label=f"unigram H(pi) = {uni:.4f}")
    ax.axhline(bi, color=COLORS["global"], ls="--", label=f"bigram H_rate = {bi:.4f}")
    ax.axvline(600, color="0.5", ls=":", lw=1, label="Fig. 4's last iteration")
    ax.set_ylim(0.6, 0.9)
    ax.set_xlabel("iteration (AdamW, one-cycle as the authors)")
    ax.set_ylabel("test loss (nats)")
    ax.set_title("Fig. 4: p = 0.5, q = 0.8")
    ax.legend()
    return save(fig, out, "init_loss_curves",
                {"steps": std.steps, "standard": std.eval_loss, "authors": good.eval_loss,
                 "unigram": uni, "bigram": bi})


def _u_rank_one(y: np.ndarray) -> np.ndarray:
    """Gap u = f1 - f0 of the rank-one state (e, s, c1, c2, b) (theory.markov.rank_one_logits)."""
    f0, f1 = tm.rank_one_logits_twin(*y)
    return f1 - f0


@figure("markov", "full_vs_reduced", "authors' loss-comparison.pdf (rebuttal)",
        "full model from a rank-one init with inert attention, plain GD on the exact "
        "population loss, against the exact rank-one restriction (up to its first ReLU "
        "kink) and the paper's (e, w, b) ODE, at matched time t = lr * steps; p = 0.2, "
        "q = 0.3, (e0, w0, b0) = (1, -1, 0).  Drawn to t = 30 (t = 4 at the test profile), "
        "past the comparison window of markov.canonical_tracks_full: its two GD runs are "
        "trained here once, not shared with the claim")
def full_vs_reduced(out: Path, ctx: Context) -> list[Path]:
    p, q, e0, w0, b0 = 0.2, 0.3, 1.0, -1.0, 0.0
    size = ctx.size(nm.SIZES, "full_vs_reduced")
    t_end, seq_len = size["t_end"], size["seq_len"]
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {}
    for lr, marker in ((0.2, "s"), (0.05, "o")):
        res = nm.run_rank_one(nm.RankOneRun(p, q, e0, w0, b0, lr=lr, t_end=t_end,
                                            record_dt=0.2, seq_len=seq_len),
                              cache=ctx.cache, device=ctx.device)
        u = res.logits[:, 1] - res.logits[:, 0]
        axes[0, 0].plot(res.time, u, marker, ms=2.5, color=COLORS["sim"], alpha=0.6,
                        label=f"full model, GD step {lr}")
        axes[0, 1].plot(res.time, res.state[:, 1], marker, ms=2.5, color=COLORS["sim"],
                        alpha=0.6, label=f"full model, GD step {lr}")
        data[f"t_gd_{lr}"], data[f"u_gd_{lr}"], data[f"s_gd_{lr}"] = res.time, u, res.state[:, 1]
    values = {tm.P: p, tm.Q: q, tm.NPOS: float(seq_len - 1)}
    sol = integrate(tm.rank_one_system(), tm.rank_one_state(e0, w0, b0), t_end, values,
                    t_eval=np.linspace(0, t_end, 400),
                    events=(lambda t, y: tm.rank_one_kinks_twin(y[0], y[1])[0],
                            lambda t, y: tm.rank_one_kinks_twin(y[0], y[1])[1]))
    axes[0, 0].plot(sol.t, _u_rank_one(sol.y), color=COLORS["theory"], lw=1.5,
                    label="rank-one restriction (to first kink)")
    axes[0, 1].plot(sol.t, sol.y[1], color=COLORS["theory"], lw=1.5,
                    label="rank-one restriction (to first kink)")
    ewb = integrate(tm.system(p, q, bias="trained"), (e0, w0, b0), t_end,
                    t_eval=np.linspace(0, t_end, 400))
    u_ewb = tm.gap_twin(ewb.y[0], ewb.y[1])
    axes[0, 0].plot(ewb.t, u_ewb, "--", color=COLORS["sim2"], lw=1.5, label="(e, w, b) ODE")
    axes[0, 1].plot(ewb.t, -ewb.y[0] / 2, "--", color=COLORS["sim2"], lw=1.5,
                    label="(e, w, b) ODE: s = -e/2")
    axes[0, 0].axhline(float(tm.optimal_gap(p, q)), color=COLORS["optimum"], ls=":", label="u*")
    axes[0, 0].set_ylabel("gap u = f1 - f0")
    axes[0, 1].set_ylabel("position scalar s")
    for ax in axes[0]:
        ax.set_xlabel("gradient-flow time t = lr * steps")
        ax.legend(fontsize=7)
    data.update({"t_rank_one": sol.t, "u_rank_one": _u_rank_one(sol.y), "t_ewb": ewb.t,
                 "u_ewb": u_ewb})
    return save(fig, out, "full_vs_reduced", data)


@figure("markov", "rank_energy", "code: energy1.py / energy2.py (energy1-4.pdf)",
        "top-singular-value energy of W_V and W_1 over training from Gaussian init "
        "(median and range over seeds); the energy runs' linear-embedding model at d = 8 "
        "(SIZES fig5); the claim's level 0.9 is judged for W_1 from iteration 100 (dotted "
        "vertical) and for W_V at the last iteration")
def rank_energy(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {}
    for ax, (p, q) in zip(axes[0], ((0.5, 0.8), (0.2, 0.3)), strict=True):
        res = _adam(p, q, "gaussian", ctx, "fig5")
        _band(ax, res.steps, res.spectrum_wv[:, :, 0], COLORS["sim"], "W_V")
        _band(ax, res.steps, res.spectrum_w1[:, :, 0], COLORS["sim2"], "W_1")
        ax.axhline(0.9, color=COLORS["theory"], ls=":", label="0.9 (claim)")
        ax.axvline(100, color="0.5", ls=":", lw=1, label="W_1 judged from here")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("iteration")
        ax.set_ylabel("energy fraction sigma_1^2 / sum sigma_i^2")
        ax.set_title(f"p = {p}, q = {q}")
        ax.legend()
        data[f"wv_{p}_{q}"] = res.spectrum_wv[:, :, 0]
        data[f"w1_{p}_{q}"] = res.spectrum_w1[:, :, 0]
        data["steps"] = res.steps
    return save(fig, out, "rank_energy", data)
