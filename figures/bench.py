"""The bench plot (``tdcheck bench``): drawn from ``bench.json``."""

from __future__ import annotations

from pathlib import Path

from figures.style import new_figure, plt

__all__ = ["draw_bench"]


def draw_bench(data: dict, out: Path) -> Path:
    """``bench.png`` from a ``bench.json`` dictionary: speed-up over the loop, the fraction
    of the matmul peak and (where the JSON has it) the fraction of the roofline bound, per
    model and member count."""
    bound = all("fraction_of_bound" in r for r in data["models"])
    fig, axes = new_figure(ncols=3 if bound else 2, width=3.8, height=3.0)
    for model in dict.fromkeys(r["model"] for r in data["models"]):
        rows = [r for r in data["models"] if r["model"] == model]
        ks = [r["k"] for r in rows]
        axes[0, 0].plot(ks, [r["speedup_vs_loop"] for r in rows], "o-", label=model)
        axes[0, 1].plot(ks, [r["fraction_of_peak"] for r in rows], "o-", label=model)
        if bound:
            axes[0, 2].plot(ks, [r["fraction_of_bound"] for r in rows], "o-", label=model)
    if bound:
        axes[0, 2].axhline(1.0, color="k", lw=0.8, ls=":")
        axes[0, 2].set(xscale="log", xlabel="members K",
                       ylabel="bound time / measured time",
                       title=f"roofline, {data.get('bandwidth_gbs', float('nan')):.0f} GB/s")
    axes[0, 0].axhline(1.0, color="k", lw=0.8, ls=":")
    axes[0, 0].set(xscale="log", xlabel="members K", ylabel="speed-up vs torch loop",
                   title="stacked trainer / loop")
    axes[0, 1].set(xscale="log", yscale="log", xlabel="members K",
                   ylabel="matmul GFLOP/s / peak",
                   title=f"peak {data['peak_gflops']:.1f} GFLOP/s, {data['threads']} thr.")
    axes[0, 0].legend(loc="lower right")
    path = out / "bench.png"
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path
