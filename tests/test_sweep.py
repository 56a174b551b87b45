"""numerics.sweep and ``tdcheck sweep``: grid parsing, phase classification, files written."""

import json

import numpy as np
import pytest

from numerics.sweep import BAND, GAP_FLOOR, classify, majority, parse_grid, predicted_phase
from verify.cli import main


def test_parse_grid():
    assert parse_grid("p=0.05:0.95:3") == ("p", (0.05, 0.5, 0.95))
    assert parse_grid("q=0.3:0.3:1") == ("q", (0.3,))
    for bad in ("p=0.1:0.9", "p=0:0.5:3", "p=0.5:0.2:3", "p0.1:0.9:3", "p=0.1:0.9:0"):
        with pytest.raises(ValueError):
            parse_grid(bad)


def test_classify_by_position_between_the_minima():
    uni, bi = 0.6, 0.4  # gap 0.2 nats
    gap = uni - bi
    assert classify(bi, uni, bi) == "bigram"
    assert classify(uni - (1 - BAND) * gap + 1e-9, uni, bi) == "neither"
    assert classify(uni + BAND * gap * 0.5, uni, bi) == "unigram"
    assert classify(uni - 0.5 * gap, uni, bi) == "neither"
    assert classify(0.5, 0.5, 0.5 - GAP_FLOOR / 2) == "indistinguishable"
    assert predicted_phase(0.8, 0.4) == "unigram" and predicted_phase(0.2, 0.4) == "bigram"
    assert majority(["bigram", "bigram", "neither"]) == "bigram"
    assert majority(["unigram", "neither"]) == "mixed"  # a tie is no majority


def test_sweep_command_writes_figure_and_data(tmp_path):
    code = main(["sweep", "markov", "phase", "--grid", "p=0.2:0.7:2", "q=0.2:0.7:2",
                 "--steps", "3", "--members", "1", "--device", "cpu", "--out", str(tmp_path)])
    assert code == 0
    assert {p.name for p in tmp_path.iterdir()} >= {"markov_phase.png", "markov_phase.pdf",
                                                     "markov_phase.npz", "markov_phase.json"}
    data = np.load(tmp_path / "markov_phase.npz")
    assert data["loss"].shape == (2, 2, 1) and data["phase"].shape == (2, 2)
    # (0.2, 0.2): p + q < 1 predicts bigram; (0.7, 0.7): unigram (theory's boundary)
    assert data["predicted"][0, 0] == 1 and data["predicted"][1, 1] == 0
    summary = json.loads((tmp_path / "markov_phase.json").read_text())
    assert summary["sweep"]["steps"] == 3
    assert main(["sweep", "markov", "phase", "--grid", "p=0.2:0.7:2", "x=0.2:0.7:2"]) == 2
