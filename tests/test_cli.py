"""The tdcheck command line: commands, reports, one-line errors, help for a newcomer."""

import json

import pytest
import torch

from verify.cli import main


def test_bare_command_lists_commands_with_examples(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for cmd in ("list", "equations", "verify", "report", "figures", "bench"):
        assert cmd in out
    assert "tdcheck verify markov --profile quick" in out


def test_unknown_command_suggests_the_closest(capsys):
    assert main(["lsit"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'list'" in err and "\n" not in err.strip()


def test_list_fits_80_columns_and_has_json(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "markov" in out and "linear_attention" in out and "energy_conserved" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = {c["id"] for r in rows for c in r["claims"]}
    assert "markov.energy_conserved" in ids


def test_equations_text_json_and_latex(tmp_path, capsys):
    assert main(["equations", "markov"]) == 0
    out = capsys.readouterr().out
    assert "energy E(e, w)" in out and "[" in out
    assert main(["equations", "markov", "--format", "json"]) == 0
    eqs = json.loads(capsys.readouterr().out)
    assert eqs and {"name", "source", "text", "latex", "sympy"} <= set(eqs[0])
    tex = tmp_path / "m.tex"
    assert main(["equations", "markov", "--latex", "--out", str(tex)]) == 0
    text = tex.read_text()
    assert text.startswith("\\documentclass") and text.rstrip().endswith("\\end{document}")
    assert text.count("\\begin{dmath*}") == text.count("\\end{dmath*}") == len(eqs)


def test_verify_one_claim_writes_reports_and_report_rerenders(tmp_path, capsys):
    code = main(["verify", "markov", "--claim", "markov.profile_extremes", "--out",
                 str(tmp_path), "--no-progress", "--profile", "test", "--device", "cpu",
                 "--no-cache"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("1 held, 0 refuted (findings)")
    assert "1 of 1 as expected" in out.strip().splitlines()[-1]
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["metadata"]["profile"] == "test" and data["metadata"]["device"] == "cpu"
    assert data["claims"][0]["outcome"] == "holds" and data["summary"]["ok"] == 1
    md = (tmp_path / "report.md").read_text()
    (tmp_path / "report.md").unlink()
    assert main(["report", str(tmp_path)]) == 0
    assert (tmp_path / "report.md").read_text() == md


def test_drawn_overrides_the_profiles_slow_examples_and_the_report_says_so(tmp_path):
    args = ["verify", "example", "--claim", "example.end_point", "--no-progress",
            "--profile", "ci", "--device", "cpu", "--cache-dir", str(tmp_path / "cache")]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--drawn", "0"]) == 0
    full, pinned = (json.loads((tmp_path / d / "report.json").read_text()) for d in "ab")
    assert full["claims"][0]["examples_requested"] == 2  # ci: one drawn + the pinned one
    assert pinned["claims"][0]["examples_requested"] == 1  # the pinned one only
    assert "drawn" not in full["metadata"] and pinned["metadata"]["drawn"] == 0
    assert "`--drawn`" in (tmp_path / "b" / "report.md").read_text()


@pytest.mark.parametrize("argv", [
    ["verify", "markov", "--drawn", "-1"],
    ["verify", "nosuchpaper"],
    ["verify", "markov", "--profile", "huge"],
    ["verify", "markov", "--device", "tpu"],
    ["equations", "nosuchpaper"],
    ["verify", "--claim", "markov.nope"],
    ["bench", "--members", "-1"],
    ["report", "/nonexistent/folder"],
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
