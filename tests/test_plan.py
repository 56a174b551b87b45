"""``tdcheck verify --plan`` on the example row: runs are costed, not trained, and a run two
claims ask for is counted once."""

from __future__ import annotations

from numerics.cache import RunCache
from verify.claims import Context
from verify.example import claims
from verify.plan import Throughput, plan_report
from verify.runner import plan_claim


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
