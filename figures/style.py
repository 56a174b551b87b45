"""Shared figure style: theory as lines, simulation as points or bands."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["COLORS", "new_figure", "plt", "save"]

COLORS = {
    "theory": "#1f1f1f",
    "global": "#2ca02c",
    "local": "#d62728",
    "separatrix": "#ff7f0e",
    "optimum": "#9467bd",
    "sim": "#1f77b4",
    "sim2": "#e377c2",
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
}


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.4):
    with plt.rc_context(RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                                 squeeze=False, constrained_layout=True)
    return fig, axes


def save(fig, out: Path, name: str, data: dict[str, np.ndarray]) -> list[Path]:
    """Write ``name.png``, ``name.pdf`` and the plotted data ``name.npz`` into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf", out / f"{name}.npz"]
    with plt.rc_context(RC):
        fig.savefig(paths[0])
        fig.savefig(paths[1])
    plt.close(fig)
    np.savez(paths[2], **{k: np.asarray(v) for k, v in data.items()})
    return paths
