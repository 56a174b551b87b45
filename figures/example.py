"""Figure of the example row: SGD paths in the (a, b) plane against the flow's geometry.

Theory as lines (the minimum set a b = c, the balance level sets through the starts, the
predicted end points), simulation as points: the run is the one ``example.end_point``
checks at the same profile, read through the shared run cache.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.registry import figure
from figures.style import COLORS, new_figure, save
from numerics import example as ne
from numerics.context import Context
from theory import example as te


@figure("example", "paths", "example row (no paper figure)",
        "SGD paths of every start (points) end on a b = c at the point the balance "
        "a^2 - b^2 selects (crosses: theory.example.end_point)")
def paths(out: Path, ctx: Context) -> list[Path]:
    c = 1.0
    run = ne.run_fit(ne.FitConfig(c=c, seed=ctx.seeded(0), **ctx.size(ne.SIZES, "fit")),
                     cache=ctx.cache, device=ctx.device)
    fig, ax = new_figure(width=4.4, height=5.2)
    ax = ax[0, 0]
    grid = np.linspace(-3, 3, 301)
    aa, bb = np.meshgrid(grid, grid)
    levels = np.unique(np.round(te.balance_twin(run.a[:, 0], run.b[:, 0]), 6))
    ax.contour(aa, bb, te.balance_twin(aa, bb), levels=levels, colors="0.8", linewidths=0.6)
    ax.contour(aa, bb, te.residual_twin(aa, bb, c), levels=[0.0], colors=COLORS["optimum"],
               linewidths=1.5)
    ax.plot([], [], color=COLORS["optimum"], label="minimum set a b = c")
    ax.plot([], [], color="0.8", label="balance levels through the starts")
    ends = np.array([[float(v) for v in te.end_point(x, y, c)]
                     for x, y in zip(run.a[:, 0], run.b[:, 0], strict=True)])
    for k in range(run.a.shape[0]):
        ax.plot(run.a[k, ::20], run.b[k, ::20], ".", ms=1.5, color=COLORS["sim"],
                label="SGD (every 20th step)" if k == 0 else None)
    ax.plot(ends[:, 0], ends[:, 1], "x", color=COLORS["theory"], ms=5, label="end_point")
    ax.set(xlim=(-3, 3), ylim=(-3, 3), xlabel="a", ylabel="b",
           title=f"c = {c:g}: paths in t = lr x steps")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1)
    return save(fig, out, "paths", {"a": run.a, "b": run.b, "end": ends,
                                   "balance_levels": levels})
