"""The tdcheck command line: commands, reports, one-line errors."""

import json

import pytest
import torch

from verify.cli import main


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "markov.energy_conserved" in out and "linear_attention" in out


def test_equations_plain_and_latex(capsys):
    assert main(["equations", "markov"]) == 0
    assert "energy E(e, w)" in capsys.readouterr().out
    assert main(["equations", "markov", "--latex"]) == 0
    assert "\\log" in capsys.readouterr().out
    assert main(["equations", "linear_attention"]) == 0
    assert "Gamma*" in capsys.readouterr().out


def test_verify_one_claim_writes_reports(tmp_path, capsys):
    code = main(["verify", "markov", "--claim", "markov.profile_extremes", "--out",
                 str(tmp_path), "--no-progress"])
    assert code == 0
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["profile"] == "quick" and data["device"] == "cpu"
    assert data["claims"][0]["outcome"] == "holds"
    assert (tmp_path / "report.md").exists()


@pytest.mark.parametrize("argv", [
    ["verify", "nosuchpaper"],
    ["verify", "markov", "--profile", "huge"],
    ["verify", "scan_snap"],
    ["equations", "nosuchpaper"],
    ["verify", "--claim", "markov.nope"],
    ["bench", "--members", "-1"],
    ["frobnicate"],
])
def test_bad_input_is_one_line_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tdcheck: error:") and "\n" not in err and "Traceback" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="machine has a GPU")
def test_cuda_without_gpu_is_one_line_error(capsys):
    assert main(["verify", "markov", "--device", "cuda"]) == 2
    assert "no CUDA device" in capsys.readouterr().err
