"""Figures of Boix-Adserà et al., *Transformers learn through gradual rank increase*.

The runs are the verify claims' runs at ``ctx.profile`` (``numerics.rank_increase.standard_*``
configs, sized by its table ``SIZES``), read through the shared run cache, so a figure drawn
after ``tdcheck verify`` at the same profile trains nothing new.  Theory (Algorithm 1) is
drawn as black lines, simulations as coloured curves.  Time axes are rescaled time
τ = t/log(1/α), t = lr·steps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.registry import figure
from figures.style import COLORS, new_figure, save
from numerics import rank_increase as nr
from numerics.context import Context
from theory import rank_increase as tr

__all__ = ["clocks", "perturbations", "rank", "stable_rank_scale", "staircase"]

PAPER = "rank_increase"
_stages = nr.problem_stages  # Algorithm 1 (cached), shared with the claims


def _alpha_colors(n: int):
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(x) for x in np.linspace(0.05, 0.85, n)]


def _loss_panel(ax, problem: nr.Problem, ladder: nr.LadderRun, flow: nr.LogFlowRun,
                tau_max: float, title: str) -> dict:
    stages = _stages(problem)
    loss0 = nr.problem_loss(problem)(np.zeros(problem.p))
    tau = np.linspace(0, tau_max, 2000)
    colors = _alpha_colors(len(ladder.alphas) + 1)
    data = {}
    for k, a in enumerate(ladder.alphas):
        sel = ladder.tau[k] <= tau_max
        ax.plot(ladder.tau[k][sel], ladder.loss[k][sel], color=colors[k], lw=1.2,
                label=f"GD, α = {a:g}")
        data[f"gd_tau_{k}"], data[f"gd_loss_{k}"] = ladder.tau[k][sel], ladder.loss[k][sel]
    j = len(flow.config.alphas) - 1 if problem.kind == "head" else flow.config.alphas.index(1e-24)
    sel = flow.tau <= tau_max
    ax.plot(flow.tau[sel], flow.loss[j][sel], color=colors[-1], lw=1.2, ls="--",
            label=f"exact flow, α = {flow.config.alphas[j]:g}")
    stair = tr.staircase(stages, tau, loss0)
    ax.plot(tau, stair, color=COLORS["theory"], lw=1.5, label="Algorithm 1 staircase")
    for s in stages:
        if float(s.jump_time) <= tau_max:
            ax.axvline(float(s.jump_time), color="0.7", lw=0.6, ls=":")
    ax.set_xlabel("rescaled time τ = t / log(1/α),  t = lr·steps")
    ax.set_ylabel("training loss g(w)")
    ax.set_title(title)
    ax.legend(loc="upper right")
    data["staircase_tau"], data["staircase"] = tau, stair
    return data


def _entries_panel(ax, problem: nr.Problem, flow: nr.LogFlowRun, alpha: float,
                   labels: list[str], title: str, tau_max: float,
                   legend_at: tuple[float, float] = (0.97, 0.5)) -> dict:
    stages = _stages(problem)
    j = flow.config.alphas.index(alpha)
    sel = flow.tau <= tau_max
    knots = [0.0] + [float(s.jump_time) for s in stages] + [tau_max]
    plateaus = [np.zeros(problem.p)] + [np.array([float(x) for x in s.plateau]) for s in stages]
    colors = _alpha_colors(problem.p)
    for i in range(problem.p):
        ax.plot(flow.tau[sel], flow.w[j][sel, i], color=colors[i], lw=1.3, label=labels[i])
        xs, ys = [], []
        for k, w in enumerate(plateaus):
            xs += [knots[k], knots[k + 1]]
            ys += [w[i], w[i]]
        ax.plot(xs, ys, color=COLORS["theory"], lw=0.9, ls="--")
    ax.plot([], [], color=COLORS["theory"], ls="--", label="Alg. 1 w^k")
    ax.set_xlabel("rescaled time τ = t / log(1/α)")
    ax.set_ylabel("diagonal entries w_i = u_i v_i")
    ax.set_title(title)
    ax.legend(loc="center right", bbox_to_anchor=legend_at, ncol=2, fontsize=7)
    return {"tau": flow.tau[sel], "w": flow.w[j][sel]}


@figure(PAPER, "staircase", "Figs. 2a-b (toy diagonal head) + our three-coordinate quadratic",
        "rescaled loss for several α (GD ladder, exact flow) converging to Algorithm 1's "
        "staircase; entries switching on one at a time, with switch-off and sign-flipped "
        "re-entry in the quadratic")
def staircase(out: Path, ctx: Context) -> list[Path]:
    head_gd = nr.run_ladder(nr.standard_ladder("head", ctx.profile), cache=ctx.cache)
    head_ode = nr.run_log_flow(nr.standard_log_flow("head", ctx.profile), cache=ctx.cache)
    quad_gd = nr.run_ladder(nr.standard_ladder("quadratic", ctx.profile), cache=ctx.cache)
    quad_ode = nr.run_log_flow(nr.standard_log_flow("quadratic", ctx.profile), cache=ctx.cache)
    fig, axes = new_figure(2, 2, width=5.4, height=3.9)
    data = {}
    d = nr.HEAD.d
    data.update({f"head_{k}": v for k, v in _loss_panel(
        axes[0, 0], nr.HEAD, head_gd, head_ode, 3.0,
        "(a) diagonal head (teacher toy): loss").items()})
    data.update({f"head_entries_{k}": v for k, v in _entries_panel(
        axes[0, 1], nr.HEAD, head_ode, 1e-24,
        [f"κ_{i} (KQ)" for i in range(d)] + [f"ν_{i} (VO)" for i in range(d)],
        "(b) head entries, exact flow α = 1e-24", 3.0, legend_at=(0.84, 0.36)).items()})
    data.update({f"quad_{k}": v for k, v in _loss_panel(
        axes[1, 0], nr.QUAD, quad_gd, quad_ode, 8.0,
        "(c) three-coordinate quadratic: loss").items()})
    data.update({f"quad_entries_{k}": v for k, v in _entries_panel(
        axes[1, 1], nr.QUAD, quad_ode, 1e-24, [f"w_{i}" for i in range(3)],
        "(d) quadratic entries, exact flow α = 1e-24",
        55.0).items()})
    return save(fig, out, "staircase", data)


@figure(PAPER, "perturbations", "Fig. 3a-b",
        "VO and KQ entries of the toy head after a 1e-2 kick (solid) vs the unkicked run "
        "(dashed), top: the exact log-form flow, bottom: the head trained by torch GD; "
        "mid-plateau kicks return to w^k, kicks at a stage start keep the next plateaus")
def perturbations(out: Path, ctx: Context) -> list[Path]:
    rows = (("", {key: nr.run_perturbation(cfg, cache=ctx.cache)
                  for key, cfg in nr.standard_perturbations(ctx.profile).items()}, "exact flow"),
            ("gd_", {key: nr.run_gd_perturbation(cfg, cache=ctx.cache)
                     for key, cfg in nr.standard_gd_perturbations(ctx.profile).items()},
             "torch GD"))
    fig, axes = new_figure(2, 2, width=5.0, height=3.6)
    colors = _alpha_colors(nr.HEAD.p)
    names = [f"κ_{i}" for i in range(3)] + [f"ν_{i}" for i in range(3)]
    data = {}
    for r, (prefix, runs, what) in enumerate(rows):
        alpha = runs["mid"].config.alpha
        for c, (key, title) in enumerate((("mid", "kick mid-plateau (strict local minimum)"),
                                          ("start", "kick at a stage start (robust stage)"))):
            ax, run = axes[r, c], runs[key]
            for i in range(nr.HEAD.p):
                if np.max(np.abs(run.w[:, i])) < 1e-3:
                    continue
                ax.plot(run.tau, run.w_perturbed[:, i], color=colors[i], lw=1.4, label=names[i])
                ax.plot(run.tau, run.w[:, i], color="k", lw=0.8, ls="--")
            ax.plot([], [], color="k", ls="--", label="unkicked")
            ax.set_xlabel(f"rescaled time τ ({what}, α = {alpha:g})")
            ax.set_ylabel("entries of W_K W_Q^T, W_V W_O^T")
            ax.set_title(f"({'abcd'[2 * r + c]}) {title}")
            ax.legend(loc="best")
            data[f"{prefix}{key}_tau"] = run.tau
            data[f"{prefix}{key}_w"], data[f"{prefix}{key}_wp"] = run.w, run.w_perturbed
    return save(fig, out, "perturbations", data)


@figure(PAPER, "rank", "Figs. 2-3 (rank view), our non-diagonal bridge test",
        "rank of ΔW_K W_Q^T and ΔW_V W_O^T over rescaled time: diagonal head (active "
        "coordinates) and full d×d head (singular values > 0.05), +1 per stage, VO first")
def rank(out: Path, ctx: Context) -> list[Path]:
    diag = nr.run_ladder(nr.standard_ladder("head", ctx.profile), cache=ctx.cache)
    full = nr.run_full_head(nr.standard_full_head(ctx.profile), cache=ctx.cache)
    d = nr.HEAD.d
    fig, axes = new_figure(3, 1, width=4.2, height=3.4)
    k = len(diag.alphas) - 1
    kq = nr.active_count(diag.w[k][:, :d], 1e-3)
    vo = nr.active_count(diag.w[k][:, d:], 1e-3)
    ax = axes[0, 0]
    ax.step(diag.tau[k], kq, where="post", color=COLORS["sim"], label="KQ rank")
    ax.step(diag.tau[k], vo, where="post", color=COLORS["sim2"], label="VO rank")
    ax.step(diag.tau[k], kq + vo, where="post", color="k", lw=0.8, label="total")
    for s in _stages(nr.HEAD):
        ax.axvline(float(s.jump_time), color="0.6", lw=0.7, ls=":")
    ax.set_title(f"(a) diagonal head, GD α = {diag.alphas[k]:g}")
    ax.set_xlabel("rescaled time τ")
    ax.set_ylabel("rank (|w_i| > 1e-3)")
    ax.legend()
    j = len(full.config.alphas) - 1
    rk = nr.active_count(full.sv_kq[j], 0.05)
    rv = nr.active_count(full.sv_vo[j], 0.05)
    ax = axes[0, 1]
    ax.step(full.tau[j], rk, where="post", color=COLORS["sim"], label="rank ΔW_K W_Q^T")
    ax.step(full.tau[j], rv, where="post", color=COLORS["sim2"], label="rank ΔW_V W_O^T")
    X, Y = nr.full_head_data(full.config)
    G_M, G_P = tr.full_head_gradients(X, Y, np.zeros((d, d)), np.zeros((d, d)))
    ax.axvline(float(tr.first_jump_time_full(G_M, G_P)), color="k", lw=0.8,
               ls="--", label="1/σ_max(∂g/∂P(0))")
    ax.set_title(f"(b) full head, GD α = {full.config.alphas[j]:g}")
    ax.set_xlabel("rescaled time τ")
    ax.set_ylabel("rank (σ > 0.05)")
    ax.legend()
    ax = axes[0, 2]
    for m, lab, c in ((full.sv_kq[j], "ΔW_K W_Q^T", COLORS["sim"]),
                      (full.sv_vo[j], "ΔW_V W_O^T", COLORS["sim2"])):
        for i in range(m.shape[-1]):
            ax.plot(full.tau[j], m[:, i], color=c, lw=1.2, label=lab if i == 0 else None)
    ax.set_title("(c) full head: singular values")
    ax.set_xlabel("rescaled time τ")
    ax.set_ylabel("singular value")
    ax.legend()
    return save(fig, out, "rank", {"diag_tau": diag.tau[k], "kq": kq, "vo": vo,
                                   "full_tau": full.tau[j], "sv_kq": full.sv_kq[j],
                                   "sv_vo": full.sv_vo[j]})


@figure(PAPER, "stable_rank_scale", "Fig. 7 (analogue on the toy full head, GD)",
        "stable rank of ΔW_K W_Q^T and ΔW_V W_O^T after a fixed number of GD steps against "
        "the init scale: smaller init, lower rank")
def stable_rank_scale(out: Path, ctx: Context) -> list[Path]:
    run = nr.run_full_head(nr.standard_scale_sweep(ctx.profile), cache=ctx.cache)
    scales = np.asarray(run.config.alphas)

    def sr(sv):
        return nr.stable_rank_from_singular_values(sv[:, -1])

    fig, axes = new_figure(1, 1, width=4.4, height=3.4)
    ax = axes[0, 0]
    ax.plot(scales, sr(run.sv_kq), "o-", color=COLORS["sim"], label="ΔW_K W_Q^T")
    ax.plot(scales, sr(run.sv_vo), "s-", color=COLORS["sim2"], label="ΔW_V W_O^T")
    ax.axhline(1, color=COLORS["theory"], ls="--", lw=1, label="teacher KQ rank (Alg. 1)")
    ax.axhline(2, color=COLORS["theory"], ls=":", lw=1, label="teacher VO rank (Alg. 1)")
    ax.set_xscale("log")
    ax.set_xlabel("init scale α (θ_0 ~ N(0, 1) entries)")
    ax.set_ylabel(f"stable rank after {run.config.steps} GD steps")
    ax.set_title("stable rank vs init scale (toy full head)")
    ax.legend()
    return save(fig, out, "stable_rank_scale", {"scales": scales, "kq": sr(run.sv_kq),
                                                "vo": sr(run.sv_vo)})


@figure(PAPER, "clocks", "the paper's limit theorem (integrated-gradient clocks)",
        "clocks b_i(τ) of the exact flow for several α against Algorithm 1's piecewise-linear "
        "path through Stage.clocks (our three-coordinate quadratic)")
def clocks(out: Path, ctx: Context) -> list[Path]:
    flow = nr.run_log_flow(nr.standard_log_flow("quadratic", ctx.profile), cache=ctx.cache)
    stages = _stages(nr.QUAD)
    pred = tr.clock_path(stages, flow.tau)
    fig, axes = new_figure(1, 1, width=5.4, height=3.6)
    ax = axes[0, 0]
    colors = _alpha_colors(len(flow.config.alphas))
    for k, a in enumerate(flow.config.alphas):
        for i in range(3):
            ax.plot(flow.tau, flow.b[k][:, i], color=colors[k], lw=0.9,
                    label=f"α = {a:g}" if i == 0 else None)
    for i in range(3):
        ax.plot(flow.tau, pred[:, i], color=COLORS["theory"], lw=1.4, ls="--",
                label="Algorithm 1" if i == 0 else None)
    ax.set_xlabel("rescaled time τ")
    ax.set_ylabel("clock b_i(τ) = Δlog|u_i + v_i| / L")
    ax.set_title("integrated-gradient clocks, three-coordinate quadratic")
    ax.legend(ncol=2, loc="lower left")
    return save(fig, out, "clocks", {"tau": flow.tau, "b": flow.b, "pred": pred})
