"""Shared figure style: theory as lines, simulation as points or bands."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = [
    "COLORS",
    "PALETTE",
    "ClippedFigureError",
    "check_not_clipped",
    "new_figure",
    "plt",
    "save",
]

# Okabe & Ito's colour-blind-safe palette.  One meaning keeps one colour in every figure:
# theory black, simulation blue, a second simulation reddish purple, a negative control (a
# wrong theory) vermillion; global/local basins green/orange-brown, optima sky blue.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
COLORS = {
    "theory": "#000000",
    "sim": "#0072B2",
    "sim2": "#CC79A7",
    "control": "#D55E00",
    "global": "#009E73",
    "local": "#E69F00",
    "separatrix": "#E69F00",
    "optimum": "#56B4E9",
    "published": "#F0E442",
}

RC = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
}


class ClippedFigureError(RuntimeError):
    """Some text or artist of a figure lies outside its canvas at the saved size."""


def check_not_clipped(fig, slack_in: float = 0.02) -> None:
    """Raise :class:`ClippedFigureError` if the tight bounding box leaves the canvas.

    ``slack_in`` (inches) absorbs anti-aliasing of lines drawn on the canvas edge.
    """
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    over = {"left": -box.x0, "bottom": -box.y0, "right": box.x1 - w, "top": box.y1 - h}
    bad = {k: round(float(v), 3) for k, v in over.items() if v > slack_in}
    if bad:
        title = fig.axes[0].get_title() if fig.axes else ""
        raise ClippedFigureError(f"figure {title!r} is clipped by {bad} inches")


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.4):
    with plt.rc_context(RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                                 squeeze=False, constrained_layout=True)
    return fig, axes


def save(fig, out: Path, name: str, data: dict[str, np.ndarray]) -> list[Path]:
    """Write ``name.png``, ``name.pdf`` and the plotted data ``name.npz`` into ``out``.

    Refuses (``ClippedFigureError``) a figure whose text would be cut off at its saved size.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf", out / f"{name}.npz"]
    with plt.rc_context(RC):
        try:
            check_not_clipped(fig)
        except ClippedFigureError:
            plt.close(fig)
            raise
        fig.savefig(paths[0])
        fig.savefig(paths[1])
    plt.close(fig)
    np.savez(paths[2], **{k: np.asarray(v) for k, v in data.items()})
    return paths
