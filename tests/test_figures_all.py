"""Every registered figure renders at the test profile, unclipped, with PNG, PDF and data.

``figures.style.save`` refuses a figure whose tight bounding box leaves the canvas, so
rendering a figure is its clipping test.
"""

import importlib

import pytest

from figures.registry import FIGURES, draw
from figures.style import ClippedFigureError, check_not_clipped, new_figure
from numerics.context import Context
from verify.registry import implemented

for _paper in implemented():
    importlib.import_module(f"figures.{_paper}")
SPECS = sorted(k for k, s in FIGURES.items() if s.paper in implemented())


def test_clipping_check_catches_a_clipped_title():
    fig, ax = new_figure()
    ax[0, 0].plot([0, 1])
    check_not_clipped(fig)
    ax[0, 0].set_title("a title far too long for its figure " * 4)
    with pytest.raises(ClippedFigureError, match="clipped"):
        check_not_clipped(fig)


@pytest.mark.parametrize("key", SPECS)
def test_figure_renders_unclipped(key, tmp_path):
    spec = FIGURES[key]
    assert spec.caption and spec.reproduces
    paths = draw(spec, tmp_path, Context(profile="test"))
    suffixes = {p.suffix for p in paths}
    assert {".png", ".pdf"} <= suffixes and (".npz" in suffixes or ".csv" in suffixes)
    assert all(p.stat().st_size > 0 for p in paths)
