"""``tdcheck verify --plan`` on the example row: runs are costed, not trained, and a run two
claims ask for is counted once."""

from __future__ import annotations

import pytest

from numerics.cache import RunCache
from verify.claims import Context
from verify.example import claims
from verify.plan import Throughput, plan_report
from verify.runner import plan_claim


@pytest.fixture(autouse=True)
def _no_run_in_memory():
    """These tests plan against an empty cache folder, so no run may be served from the
    in-process memo either (``--plan`` counts a run in a run function's memo as cached):
    under pytest-xdist an earlier test of the same worker may have trained the same run."""
    import numerics.cache as nc

    nc.clear_run_memos()



def test_a_run_two_claims_share_is_counted_once(tmp_path):
    claim = next(c for c in claims() if c.id == "example.end_point")
    ctx = Context(profile="test", cache=RunCache(tmp_path))
    first, second = plan_claim(claim, "test", ctx), plan_claim(claim, "test", ctx)
    assert [r.key for r in first.runs] == [r.key for r in second.runs] and first.runs
    assert all(r.key and not r.cached for r in first.runs)
    tp = Throughput({}, 1e9, "a given rate")
    _, one = plan_report([first], tp, "test", "cpu")
    _, two = plan_report([first, second], tp, "test", "cpu")
    distinct = len({r.key for r in first.runs})
    assert one["claims"][0]["runs"] == distinct
    assert two["total_seconds"] == one["total_seconds"] > 0
    assert two["claims"][1]["runs"] == 0
    assert two["claims"][1]["shared_runs"] == len(second.runs)
    assert list(tmp_path.iterdir()) == []  # nothing was trained or stored


def test_noise_and_fit_runs_are_costed_not_unknown():
    """The gradient-noise and L-BFGS runs have no trainer to probe: their ``cost=`` counts
    one gradient on fake tensors and scales it by the gradients the run takes."""
    import numerics.linear_attention as nl

    one = nl.run_init_noise.planned_cost(nl.NoiseConfig(samples=1, batch=50, full=200))
    two = nl.run_init_noise.planned_cost(nl.NoiseConfig(samples=2, batch=50, full=200))
    per_gradient = two[1] - one[1]
    assert two[0] - one[0] == 1 and per_gradient > 0
    small = nl.run_init_noise.planned_cost(nl.NoiseConfig(samples=1, batch=50, full=50))
    assert small[1] == 2 * per_gradient  # a minibatch of 50 and one "full" chunk of 50
    # a chunk of 200 costs 4 of 50, up to the per-call constant ops (the mean's output)
    assert one[1] - small[1] == pytest.approx(3 * per_gradient, rel=1e-3)
    fit = nl.run_fit.planned_cost(nl.FitConfig(prompts=100, iterations=8))
    assert fit[0] == 11 + 2 * 2 * 25 and fit[1] > 0  # L-BFGS, then the sampling law


def test_a_benched_model_is_timed_by_its_own_flop_rate(tmp_path, monkeypatch):
    """A run of a model the bench measured is timed by that model's own FLOP rate (so a run
    at another size is scaled by its FLOP), not by the median over models nor by the
    member-step rate of the bench's size; a model the bench lacks falls back to the median."""
    import json

    from numerics.cache import PlannedRun
    from verify import plan

    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    (tmp_path / "bench-cpu.json").write_text(json.dumps({"device": "cpu", "models": [
        {"model": "markov", "k": 3, "member_steps_per_s": 100.0, "gflops": 1.0},
        {"model": "linear_attention", "k": 3, "member_steps_per_s": 50.0, "gflops": 10.0},
    ]}))
    tp = plan.throughput("cpu")
    big = PlannedRun("markov.run_full", None, (), member_steps=10.0, flops=4e9, cached=False)
    other = PlannedRun("scan_snap.run", None, (), member_steps=10.0, flops=4e9, cached=False)
    unknown = PlannedRun("markov.run_full", None, (), member_steps=10.0, flops=None,
                         cached=False)
    assert plan._seconds(big, tp) == pytest.approx(4.0)  # 4e9 FLOP at markov's 1 GFLOP/s
    assert plan._seconds(other, tp) == pytest.approx(0.4)  # the median rate, 10 GFLOP/s
    assert plan._seconds(unknown, tp) == pytest.approx(0.1)  # 10 member-steps at 100/s
