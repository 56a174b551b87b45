"""Figure and bench smoke tests: files written, data beside them."""

import json

import numpy as np
import pytest

from figures import markov as fm  # noqa: F401  (registers the figures)
from figures.bench import draw_bench
from figures.registry import FIGURES, render
from numerics.bench import run_bench
from numerics.context import Context


def test_theory_figures_write_png_pdf_and_data(tmp_path):
    for name in ("phase_portrait_sum_gt_1", "basins_sum_lt_1"):
        paths = FIGURES[f"markov.{name}"].fn(tmp_path, Context(profile="test"))
        assert {p.suffix for p in paths} == {".png", ".pdf", ".npz"}
        assert all(p.stat().st_size > 0 for p in paths)
    data = np.load(tmp_path / "basins_sum_lt_1.npz")
    assert data["global"].shape == (61, 61) and set(np.unique(data["global"])) <= {0.0, 1.0}


def test_registry_and_gallery(tmp_path):
    assert {s.reproduces.split(" ")[0] for s in FIGURES.values() if s.paper == "markov"} >= {"Fig."}
    written = render(["markov"], tmp_path, Context(profile="test"), progress=False)
    gallery = (tmp_path / "gallery.md").read_text()
    assert gallery.count("| markov |") == sum(s.paper == "markov" for s in FIGURES.values())
    assert all(p.exists() for p in written)


def test_bench_writes_schema(tmp_path):
    import torch

    table, path = run_bench(tmp_path, torch.device("cpu"), members=(1, 3), steps=2,
                            loop_members=2, probe_size=64, small=True)
    data = json.loads(path.read_text())
    assert data["device"] == "cpu" and data["threads"] >= 1 and data["peak_gflops"] > 0
    keys = {"model", "k", "loop_s", "stacked_s", "speedup_vs_loop", "member_steps_per_s",
            "gflops", "fraction_of_peak", "loop_members_timed"}
    rows = data["models"]
    assert [(r["model"], r["k"]) for r in rows] == [
        (m, k) for m in ("markov", "linear_attention") for k in (1, 3)]
    for r in rows:
        assert keys <= set(r)
        assert r["loop_members_timed"] == min(r["k"], 2)
        assert r["speedup_vs_loop"] == pytest.approx(r["loop_s"] / r["stacked_s"], rel=1e-2)
        assert r["flops_per_member_step"] > 0 and 0 < r["fraction_of_peak"]
        assert r["max_member_gap"] < 1e-4  # loop member 0 = stacked member 0 (float32)
        assert set(r["loop_parts_ms"]) == {"sample", "forward_backward", "optimizer"}
        assert all(v > 0 for v in r["loop_parts_ms"].values())
    assert {r["stacked_path"] for r in rows} == {"folded"}
    assert data["bandwidth_gbs"] > 0
    # the bound uses the best of the probes before and after the timed cases
    assert len(data["probes"]["peak_gflops"]) == len(data["probes"]["bandwidth_gbs"]) == 2
    assert data["peak_gflops"] == max(data["probes"]["peak_gflops"])
    assert data["bandwidth_gbs"] == max(data["probes"]["bandwidth_gbs"])
    for r in rows:  # the roofline bound: the larger of FLOP / peak and bytes / bandwidth
        assert r["step_flops_per_member_step"] > 0 and r["step_bytes_per_member_step"] > 0
        assert r["bound_s_per_member_step"] == pytest.approx(max(
            r["step_flops_per_member_step"] / (data["peak_gflops"] * 1e9),
            r["step_bytes_per_member_step"] / (data["bandwidth_gbs"] * 1e9)), rel=1e-2)
        assert r["fraction_of_bound"] == pytest.approx(
            r["bound_s_per_member_step"] * r["member_steps_per_s"], rel=2e-2)
    for mem in data["memory"].values():  # two fresh processes per model
        assert len(mem["peak_mb"]) == 2 and all(p > 0 for p in mem["peak_mb"])
        assert mem["per_member_mb"] > 0 and mem["max_k_in_budget"] > 0
    assert draw_bench(json.loads(path.read_text()), tmp_path).stat().st_size > 0
    assert "speedup" in table


def test_linear_attention_theory_figure(tmp_path):
    from figures import linear_attention  # noqa: F401

    paths = FIGURES["linear_attention.balanced_flow"].fn(tmp_path, Context(profile="test"))
    assert {p.suffix for p in paths} == {".png", ".pdf", ".npz"}
    data = np.load(tmp_path / "balanced_flow.npz")
    y = data["y_sigma_0.05"]
    balance = y[0] ** 2 - (y[1:] ** 2).sum(0)
    assert np.ptp(balance) < 1e-8  # conserved along the plotted flow


def test_linear_attention_optimiser_figures_at_smoke_size(tmp_path):
    from figures import linear_attention  # noqa: F401
    from numerics.cache import RunCache

    # tests/test_figures_all.py renders every figure; here the data they share with the claims
    names = ("adam_vs_sgd_loss", "depth_sweep")
    cache = RunCache(tmp_path / "cache")
    for name in names:
        paths = FIGURES[f"linear_attention.{name}"].fn(tmp_path,
                                                       Context(profile="test", cache=cache))
        assert {p.suffix for p in paths} == {".png", ".pdf", ".npz"}, name
    loss = np.load(tmp_path / "adam_vs_sgd_loss.npz")["setting1_loss"]
    assert loss.shape[0] == 2 and loss[0, 0] == loss[1, 0]  # SGDM and Adam, shared start
    assert np.load(tmp_path / "depth_sweep.npz")["hill"].shape == (4,)


def test_a_failing_figure_does_not_lose_the_others(tmp_path, monkeypatch):
    import pytest

    from figures import registry

    def good(out, ctx):
        path = out / "good.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"png")
        return [path]

    def bad(out, ctx):
        raise FloatingPointError("diverged")

    specs = [registry.FigureSpec("p", "bad", "-", "-", bad), registry.FigureSpec("p", "good", "-", "-", good)]
    monkeypatch.setattr(registry, "_load", lambda paper: specs)
    with pytest.raises(registry.RenderError) as info:
        registry.render(["p"], tmp_path, progress=False)
    assert (tmp_path / "p" / "good.png").exists()
    assert info.value.failed == ["p.bad: FloatingPointError: diverged"]
    assert (tmp_path / "gallery.md").exists() and (tmp_path / "gallery.html").exists()
