"""Figures of Ahn et al. (ICLR 2024) and its companions (AhnPGD, ZFB).

Every simulation comes from ``numerics.linear_attention.run_*`` with the configs the claims
use at ``ctx.profile`` (the row's one table, ``numerics.linear_attention.SIZES``), through
the shared run cache: after ``tdcheck verify`` at the same profile the figures retrain
nothing the claims ran.  Two figures draw runs no claim runs, and their captions say so:
the 3-layer learned steps (trained at ci's length from quick on) and the depth sweep.  The
optimiser figures draw the comparison at the profile's size: a smoke run at test and quick,
the authors' protocol with 6 seeds and 1250 iterations at ci.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import sympy as sp

from figures.registry import figure
from figures.style import COLORS, new_figure, save
from numerics import linear_attention as nl
from numerics.context import Context
from numerics.measure import hill_tail_index_top5
from numerics.ode import integrate
from theory import linear_attention as la

_PROFILE_NOTE = ("; at --profile test and quick a smoke run of the claims' comparison, at ci "
                 "the authors' protocol with 6 seeds and 1250 iterations")


@figure("linear_attention", "balanced_flow", "ZFB one-layer flow",
        "ZFB's (u, U) gradient flow from balanced small init, d = 3, n = 10, Lambda = "
        "diag(1, 1/2, 1/4): plateau of length ~ log(1/sigma), limit (||Gamma*||^(1/2), "
        "Gamma*/||Gamma*||^(1/2)), conserved u^2 - ||U||^2")
def balanced_flow(out: Path, ctx: Context) -> list[Path]:
    lam = sp.diag(1, sp.Rational(1, 2), sp.Rational(1, 4))
    sys = la.balanced_flow(lam, 10, diagonal=True)
    u_inf, U_inf = la.balanced_limit(lam, 10)
    loss = sys.lambdify_loss("numpy")
    t = np.linspace(0, 300, ctx.size(nl.SIZES, "flow_points"))
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {"t": t, "u_inf": float(u_inf), "U_inf": np.array(U_inf.evalf(), float)}
    for sigma, style in ((0.05, "-"), (0.005, "--")):
        y0 = [sigma] + [sigma / math.sqrt(3)] * 3
        sol = integrate(sys, y0, float(t[-1]), t_eval=t)
        # the diagonal reduction's state is (u, a_1..a_3) with U = diag(a)
        gam = np.diagonal(la.reduced_gamma(sol.y[0], _diag_stack(sol.y[1:].T)),
                          axis1=-2, axis2=-1).T
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


def _diag_stack(rows: np.ndarray) -> np.ndarray:
    """Diagonal matrices [T, d, d] from their diagonals [T, d]."""
    return rows[:, :, None] * np.eye(rows.shape[1])


@figure("linear_attention", "learned_steps", "AhnPGD Fig. 1/2 protocol, Setting 1",
        "trained B = 0 linear transformers (points: the mean diagonal of -A_l per layer, Lemma 1's step, one per member of the "
            "run the claims read, more for L = 1, whose claim takes an interval over members; Adam at the "
        "claims' length for L = 1, 2, and for L = 3 at ci's 2000 steps from --profile quick "
        "on, a run no quick claim trains) against the exact minimising GD steps "
        "(crosses), and evaluation losses (averaged exactly over w*) against the exact "
        "pure-GD floors (lines)")
def learned_steps(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {}
    floors, losses = [], []
    for layers in (1, 2, 3):
        floor, steps = la.gd_floor(layers, 5, 20)
        size = ctx.size(nl.SIZES, nl.gd_family_entry(layers))
        run = nl.run_gd_family(nl.GDFamilyConfig(layers=layers, seed=0, **size),
                               cache=ctx.cache, device=ctx.device)
        fitted, loss = la.gd_step_sizes(run.A), run.eval_loss
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
    for layers, lo in zip(ls, losses, strict=True):  # the one-layer run has more members
        axes[0, 1].plot([layers] * len(lo), lo, "o", color=COLORS["sim"], alpha=0.7,
                        label="trained (Monte Carlo eval)" if layers == 1 else None)
    axes[0, 1].set_yscale("log")
    axes[0, 1].set_xlabel("depth L")
    axes[0, 1].set_ylabel("loss (no 1/2)")
    axes[0, 1].set_xticks([1, 2, 3])
    axes[0, 1].legend()
    data["floors"] = np.array(floors)
    for layers, lo in zip(ls, losses, strict=True):
        data[f"losses_L{layers}"] = np.asarray(lo)
    return save(fig, out, "learned_steps", data)


@figure("linear_attention", "zfb_torch_vs_ode", "ZFB one-layer flow vs training",
        "plain GD on ZFB's full one-layer model (points, 2 of the members sharing one init, "
        "B = 4000, lr 0.04) against the "
        "(u, U) ODE from the same start (lines): diagonal of Gamma = u U^T, and the balance "
        "||W_PV||^2 - ||W_KQ||^2 with the exact GD prediction")
def zfb_torch_vs_ode(out: Path, ctx: Context) -> list[Path]:
    run = nl.run_zfb(nl.ZFBConfig(seed=0, **ctx.size(nl.SIZES, "zfb")), cache=ctx.cache,
                     device=ctx.device)
    lam, n = sp.diag(*run.lam), run.n
    sys = la.balanced_flow(lam, n)
    t = run.time
    fig, axes = new_figure(ncols=2, width=4.0)
    data = {"t": t}
    for m in range(2):
        y0 = [run.u[m, 0], *run.U[m, 0].flatten()]
        sol = integrate(sys, y0, float(t[-1]), t_eval=t)
        gam_ode = np.diagonal(la.reduced_gamma(sol.y[0], sol.y[1:].T.reshape(-1, 3, 3)),
                              axis1=1, axis2=2)
        gam_full = np.diagonal(run.gamma[m], axis1=1, axis2=2)  # the model's, read out
        for i in range(3):
            axes[0, 0].plot(t, gam_full[:, i], "o", ms=2, color=f"C{i}", alpha=0.6,
                            label=f"GD, Gamma_{i + 1}{i + 1}" if m == 0 else None)
            axes[0, 0].plot(t, gam_ode[:, i], "-", color=f"C{i}", lw=1,
                            label=f"ODE, Gamma_{i + 1}{i + 1}" if m == 0 else None)
        inc = la.gd_invariant_change(run.lr, run.grad_sq_pv[m], run.grad_sq_kq[m])
        predicted = np.concatenate([[0.0], np.cumsum(inc)])[run.steps]
        axes[0, 1].plot(t, run.balance[m] - run.balance[m, 0], "o", ms=2,
                        color=COLORS["sim"], label="GD: balance(t) - balance(0)" if m == 0 else None)
        axes[0, 1].plot(t, predicted, "-", color=COLORS["theory"], lw=1,
                        label="lr^2 sum (|g_PV|^2 - |g_KQ|^2)" if m == 0 else None)
        data[f"gamma_full_{m}"], data[f"gamma_ode_{m}"] = gam_full, gam_ode
        data[f"balance_{m}"], data[f"balance_predicted_{m}"] = run.balance[m], predicted
    for ax in axes[0]:
        ax.set_xlabel("gradient-flow time t = lr * steps")
    axes[0, 0].set_xscale("symlog", linthresh=1)
    axes[0, 0].set_xlim(left=0)
    axes[0, 0].set_ylabel("diagonal of Gamma = u U^T")
    axes[0, 0].legend(fontsize=6)
    axes[0, 1].set_ylabel("change of the balance (0 under gradient flow)")
    axes[0, 1].legend()
    return save(fig, out, "zfb_torch_vs_ode", data)


# ---------------------------------------------------------------------- Adam vs SGD (Fig. 2, 4, 7, 8)
SGDM_COLOR, ADAM_COLOR = "#1f1f1f", "#d62728"  # the authors' colours: SGDM black, Adam red
SETTING_TITLES = {"setting1": "Setting 1 (Gaussian, n = 20)", "setting2": "Setting 2 (n = 5)",
                  "setting3": "Setting 3 (Gamma covariates)"}


def _run(setting: str, ctx: Context, attention: str = "linear") -> nl.ComparisonResult:
    """The claims' comparison run (seed 0) at the profile's size."""
    return nl.run_comparison(nl.comparison_config(setting, ctx.profile, attention),
                             cache=ctx.cache, device=ctx.device)


def _curves(ax, steps, values, color, label):
    """Seed-mean of log values as a line, seeds as thin lines."""
    for v in values:
        ax.plot(steps, v, color=color, lw=0.5, alpha=0.4)
    ax.plot(steps, np.exp(np.log(values).mean(0)), color=color, lw=1.5, label=label)


@figure("linear_attention", "adam_vs_sgd_loss", "Fig. 2 row 1 (Settings 1-3)",
        "loss on the fixed evaluation batch (seed 99, 1000 prompts) of the 3-layer linear "
        "transformer: SGD-momentum (black) against Adam (red), README learning rates, "
        "clipping; thick: geometric mean over seeds, thin: seeds" + _PROFILE_NOTE)
def adam_vs_sgd_loss(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(ncols=3, width=3.4)
    data = {}
    for ax, setting in zip(axes[0], SETTING_TITLES, strict=True):
        run = _run(setting, ctx)
        steps = run.eval_steps
        _curves(ax, steps, run.eval_loss[0::2], SGDM_COLOR, f"SGDM lr {run.lr['sgdm']}")
        _curves(ax, steps, run.eval_loss[1::2], ADAM_COLOR, f"Adam lr {run.lr['adam']}")
        ax.set_yscale("log")
        ax.set_title(SETTING_TITLES[setting])
        ax.set_xlabel("iteration")
        ax.legend()
        data[f"{setting}_steps"], data[f"{setting}_loss"] = steps, run.eval_loss
    axes[0, 0].set_ylabel("loss (no 1/2)")
    return save(fig, out, "adam_vs_sgd_loss", data)


def _noise_cases(ctx: Context) -> dict[str, np.ndarray]:
    """The claims' noise samples (model seed 0): Gamma vs sphere at the tail claim's size,
    L = 2 vs 8 at the depth claim's size."""
    cases = {"Gamma covariates, L = 3": ("setting3", 3, "noise"),
             "sphere, L = 3": ("sphere", 3, "noise"),
             "Gaussian, L = 2": ("setting1", 2, "depth_noise"),
             "Gaussian, L = 8": ("setting1", 8, "depth_noise")}
    return {label: nl.run_init_noise(nl.NoiseConfig(s, layers, seed=0,
                                                    **ctx.size(nl.SIZES, entry)),
                                     cache=ctx.cache, device=ctx.device)
            for label, (s, layers, entry) in cases.items()}


@figure("linear_attention", "noise_tails", "Fig. 2 row 2, Figs. 7-8 (noise at init)",
        "stochastic-gradient noise ||g_B - g_full|| at the authors' initialisation (the "
        "claims' samples at the profile's size: from quick on B = 1000 and g_full from 1e5 "
        "prompts for the covariate pair), density histograms with the Hill tail index of the "
        "top 5% (smaller = heavier); right: the tails on log-log axes (empirical survival "
        "function)")
def noise_tails(out: Path, ctx: Context) -> list[Path]:
    noise = _noise_cases(ctx)
    fig, axes = new_figure(ncols=3, width=3.4)
    data = {}
    pairs = (("Gamma covariates, L = 3", "sphere, L = 3"), ("Gaussian, L = 8", "Gaussian, L = 2"))
    for ax, pair in zip(axes[0, :2], pairs, strict=True):
        for label, color in zip(pair, (ADAM_COLOR, COLORS["sim"]), strict=True):
            x = noise[label]
            alpha = hill_tail_index_top5(x)
            ax.hist(x, bins=ctx.size(nl.SIZES, "histogram_bins"), density=True, alpha=0.6,
                    color=color,
                    label=f"{label}: Hill {alpha:.2f}")
        ax.set_xlabel("gradient error ||g_B - g||")
        ax.set_ylabel("density")
        ax.legend(fontsize=6)
    for i, (label, x) in enumerate(noise.items()):
        xs = np.sort(x)[::-1]
        axes[0, 2].loglog(xs / np.median(xs), np.arange(1, len(xs) + 1) / len(xs), color=f"C{i}",
                          label=label)
        data[label.replace(" ", "_").replace(",", "").replace("=", "")] = x
    from matplotlib.ticker import NullFormatter

    axes[0, 2].xaxis.set_minor_formatter(NullFormatter())
    axes[0, 2].set_xlabel("||g_B - g|| / median")
    axes[0, 2].set_ylabel("P(X > x)")
    axes[0, 2].legend(fontsize=6)
    return save(fig, out, "noise_tails", data)


@figure("linear_attention", "condition_numbers", "Fig. 2 row 3 (robust condition number)",
        "R_med = max/median of |Hessian diagonal| (the authors' code, top) and of |eigenvalues| "
        "(the paper's definition, bottom), SGDM (black) and Adam (red), at the shared "
        "initialisation and at iterations 750 and 1250; points: seeds, lines: means"
        + _PROFILE_NOTE + " (the smoke runs record no Hessian)")
def condition_numbers(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(ncols=3, nrows=2, width=3.3, height=2.8)
    data = {}
    for col, setting in enumerate(SETTING_TITLES):
        run = _run(setting, ctx)
        steps = np.concatenate([[0], run.hess_steps])
        for row, key in enumerate(("diag", "eig")):
            ax = axes[row, col]
            r0 = getattr(run, f"r0_{key}")
            if r0.size == 0:  # smoke runs record no Hessian
                ax.text(0.5, 0.5, "no Hessian in this run", ha="center", transform=ax.transAxes)
                continue
            for off, (name, sl, color) in enumerate((("SGDM", slice(0, None, 2), SGDM_COLOR),
                                                     ("Adam", slice(1, None, 2), ADAM_COLOR))):
                vals = np.concatenate([r0[:, None], getattr(run, f"r_{key}")[sl]], axis=1)
                for v in vals:
                    ax.plot(steps + 15 * off, v, "o", color=color, ms=3, alpha=0.6)
                ax.plot(steps + 15 * off, vals.mean(0), "-", color=color, label=name)
                data[f"{setting}_{key}_{name}"] = vals
            ax.set_yscale("log")
            ax.set_title(f"{SETTING_TITLES[setting]}" if row == 0 else "", fontsize=8)
            ax.set_ylabel(f"R_med ({'diagonal' if key == 'diag' else 'eigenvalues'})")
            ax.set_xlabel("iteration")
            ax.legend()
        data[f"{setting}_steps"] = steps
    return save(fig, out, "condition_numbers", data)


@figure("linear_attention", "directional_smoothness", "Fig. 2 row 4 and Fig. 6",
        "directional smoothness v^T H v along the normalised actual update (fixed batch), "
        "SGDM (black) vs Adam (red), non-positive values dropped on the log axis; right: "
        "generalised smoothness, log gradient norm against log smoothness along Adam "
        "(Setting 1), coloured by iteration" + _PROFILE_NOTE)
def directional_smoothness(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(ncols=4, width=3.0)
    data = {}
    for ax, setting in zip(axes[0, :3], SETTING_TITLES, strict=True):
        run = _run(setting, ctx)
        steps = run.smooth_steps
        for sl, color, name in ((slice(0, None, 2), SGDM_COLOR, "SGDM"),
                                (slice(1, None, 2), ADAM_COLOR, "Adam")):
            mean = run.smooth[sl].mean(0)
            ax.plot(steps, np.where(mean > 0, mean, np.nan), color=color, label=name)
        ax.set_yscale("log")
        ax.set_title(SETTING_TITLES[setting], fontsize=8)
        ax.set_xlabel("iteration")
        ax.legend()
        data[f"{setting}_steps"], data[f"{setting}_smooth"] = steps, run.smooth
        data[f"{setting}_grad_norm"] = run.grad_norm
    axes[0, 0].set_ylabel("directional smoothness")
    run = _run("setting1", ctx)
    s, g = run.smooth[1], run.grad_norm[1]
    keep = s > 0
    sc = axes[0, 3].scatter(np.log(g[keep]), np.log(s[keep]), c=run.smooth_steps[keep], s=8,
                            cmap="viridis")
    fig.colorbar(sc, ax=axes[0, 3], label="iteration")
    axes[0, 3].set_xlabel("log ||grad f||")
    axes[0, 3].set_ylabel("log directional smoothness")
    axes[0, 3].set_title("Adam, Setting 1 (Fig. 6)", fontsize=8)
    return save(fig, out, "directional_smoothness", data)


@figure("linear_attention", "linear_vs_softmax", "Fig. 4 (linear vs softmax attention)",
        "3-layer model, Setting 1, same protocol: linear attention (solid) against softmax "
        "attention (dashed, normalised over all n+1 keys before the mask, as the authors' "
        "code), SGDM black, Adam red" + _PROFILE_NOTE)
def linear_vs_softmax(out: Path, ctx: Context) -> list[Path]:
    fig, axes = new_figure(ncols=1, width=4.4)
    ax = axes[0, 0]
    data = {}
    for att, style in (("linear", "-"), ("softmax", "--")):
        run = _run("setting1", ctx, attention=att)
        for sl, color, name in ((slice(0, None, 2), SGDM_COLOR, "SGDM"),
                                (slice(1, None, 2), ADAM_COLOR, "Adam")):
            ax.plot(run.eval_steps, np.exp(np.log(run.eval_loss[sl]).mean(0)), style,
                    color=color, label=f"{att}, {name}")
        data[f"{att}_steps"], data[f"{att}_loss"] = run.eval_steps, run.eval_loss
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("loss (no 1/2)")
    ax.legend(loc="center right")
    return save(fig, out, "linear_vs_softmax", data)


LR_LADDER = (1.0, 0.5, 0.25, 0.1, 0.05, 0.02)


def _stable_run(layers: int, ctx: Context) -> nl.ComparisonResult:
    """The depth sweep's run (``SIZES["depth_sweep"]``) at the 3-layer rates times the first
    factor of ``LR_LADDER`` at which neither optimiser's float32 loss overflows (the paper
    tunes rates per depth on a grid it does not give).  The ladder is not monotone in
    practice: a deep model can overflow at a lower rate and not at the full one."""
    from numerics.ensemble import DivergenceError

    size = ctx.size(nl.SIZES, "depth_sweep")
    for scale in LR_LADDER:
        try:
            return nl.run_comparison(nl.ComparisonRun(layers=layers, lr_scale=scale, **size),
                                     cache=ctx.cache, device=ctx.device)
        except DivergenceError:
            continue
    raise DivergenceError(f"L = {layers} diverges at every rate of {LR_LADDER}")


@figure("linear_attention", "depth_sweep", "Fig. 8 (depth L = 2, 4, 6, 8)",
        "left: loss of SGDM (black) and Adam (red) for L = 2, 4, 6, 8 (lighter = shallower; one "
        "seed, 500 iterations from --profile quick on, runs no claim trains; Setting 1, the "
        "3-layer rates scaled down where a depth overflows, as the legend says); "
        "right: Hill tail index of the noise at "
        "initialisation against depth (smaller = heavier tail; the depth claim's samples, "
        "model seed 0, bootstrap 90 % intervals)")
def depth_sweep(out: Path, ctx: Context) -> list[Path]:
    from numerics.stats import bootstrap

    fig, axes = new_figure(ncols=2, width=4.0)
    data = {}
    depths = (2, 4, 6, 8)
    hills, lows, highs = [], [], []
    for i, layers in enumerate(depths):
        shade = 0.35 + 0.65 * i / (len(depths) - 1)
        run = _stable_run(layers, ctx)
        x = nl.run_init_noise(nl.NoiseConfig("setting1", layers, seed=0,
                                             **ctx.size(nl.SIZES, "depth_noise")),
                              cache=ctx.cache, device=ctx.device)
        scale = run.config.lr_scale
        for k, color in ((0, SGDM_COLOR), (1, ADAM_COLOR)):
            axes[0, 0].plot(run.eval_steps, run.eval_loss[k], color=color, alpha=shade,
                            label=(f"L = {layers}" + (f" (lr x {scale:g})" if scale != 1 else ""))
                            if k == 1 else None)
        data[f"L{layers}_lr_scale"] = scale
        boot = bootstrap(x, hill_tail_index_top5, 0.9, n_boot=200, seed=layers)
        hills.append(boot.estimate)
        lows.append(boot.lower)
        highs.append(boot.upper)
        data[f"L{layers}_loss"], data[f"L{layers}_noise"] = run.eval_loss, x
    axes[0, 0].set_yscale("log")
    axes[0, 0].set_xlabel("iteration")
    axes[0, 0].set_ylabel("loss (no 1/2)")
    axes[0, 0].legend(title="Adam (red) / SGDM (black)", fontsize=6)
    hills_a = np.array(hills)
    yerr = np.array([hills_a - np.array(lows), np.array(highs) - hills_a]).clip(min=0)
    axes[0, 1].errorbar(depths, hills_a, yerr=yerr, fmt="o-", color=COLORS["sim"], capsize=3,
                        label="Hill index, 90 % bootstrap")
    axes[0, 1].legend()
    axes[0, 1].set_xlabel("depth L")
    axes[0, 1].set_ylabel("Hill tail index of ||g_B - g|| (top 5%)")
    data["hill"] = hills_a
    return save(fig, out, "depth_sweep", data)
