"""Figures of ``tdcheck sweep``: the Markov phase diagram over (p, q)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.style import COLORS, new_figure, save

__all__ = ["draw_phase"]

_LETTER = {0: "U", 1: "B", 2: "N", 3: "~", 4: "M"}  # index into numerics.sweep.PHASES


def _edges(v: np.ndarray) -> np.ndarray:
    """Cell edges around grid values (evenly spaced or a single value)."""
    if v.size == 1:
        return np.array([v[0] - 0.05, v[0] + 0.05])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def draw_phase(data: dict[str, np.ndarray], out: Path, name: str = "markov_phase") -> list[Path]:
    """Position of the final loss between the unigram (0) and bigram (1) minima, per cell;
    letters give the members' majority phase (U unigram, B bigram, N neither, M mixed:
    no strict majority, ~ indistinguishable, grey); red letters disagree with the theory, whose boundary
    p + q = 1 is the black line."""
    p, q = data["p"], data["q"]
    fig, axes = new_figure(width=4.6, height=3.9)
    ax = axes[0, 0]
    mesh = ax.pcolormesh(_edges(p), _edges(q), np.clip(data["position"], -0.2, 1.2),
                         cmap="viridis", vmin=-0.2, vmax=1.2, shading="flat")
    fig.colorbar(mesh, ax=ax, label="(H(pi) - L) / (H(pi) - H_rate)")
    for j, qv in enumerate(q):
        for i, pv in enumerate(p):
            phase = int(data["phase"][j, i])
            hit = phase == int(data["predicted"][j, i])
            ax.text(pv, qv, _LETTER[phase], ha="center", va="center", fontsize=7,
                    color="black" if phase == 3 else "white" if hit else COLORS["control"],
                    fontweight="normal" if hit else "bold")
    line = np.linspace(0, 1, 50)
    ax.plot(line, 1 - line, color=COLORS["theory"], lw=1.2)
    ax.set(xlim=(_edges(p)[0], _edges(p)[-1]), ylim=(_edges(q)[0], _edges(q)[-1]),
           xlabel="p = P(1 | 0)", ylabel="q = P(0 | 1)",
           title=f"agreement with p + q = 1 (line): {float(data['agreement']):.0%}")
    ax.set_facecolor("#DDDDDD")  # indistinguishable cells (no position) stay grey
    ax.grid(False)
    return save(fig, out, name, data)
