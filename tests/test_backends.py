"""verify.backends: the Ray backend writes the serial backend's report, timings aside."""

import sys

import pytest
import torch

from verify.backends import BackendError, run_claims_on
from verify.claims import Context
from verify.registry import claims_for
from verify.report import metadata, to_json


def _cheap_claims(paper: str = "markov", count: int = 2):
    """A couple of the row's cheapest claims (symbolic, fast)."""
    claims = [c for c in claims_for(paper) if c.kind == "symbolic" and c.cost == "fast"]
    assert len(claims) >= count
    return claims[:count]


def _without_timings(results) -> dict:
    data = to_json(results, metadata("test", "cpu", 0.0, 0.0))
    for claim in data["claims"]:
        claim.pop("seconds")
    return data


_SERIAL = """
import json, sys
import torch
torch.set_num_threads(1)
from verify.backends import run_claims_on
from verify.claims import Context
from verify.registry import claims_for
from verify.report import metadata, to_json
ids = sys.argv[1:]
claims = [c for c in claims_for("markov") if c.id in ids]
data = to_json(run_claims_on("serial", claims, "test", Context(profile="test")),
               metadata("test", "cpu", 0.0, 0.0))
for claim in data["claims"]:
    claim.pop("seconds")
print(json.dumps(data))
"""


def _serial_in_a_fresh_process(claims) -> dict:
    """The serial report, from a fresh interpreter like the Ray workers (the test process has
    imported other modules, and the markov row's worst example depends on that: importing
    figures.markov moves profile_extremes' worst example from q = 0.3 to q = 0.25)."""
    import json
    import subprocess

    out = subprocess.run([sys.executable, "-c", _SERIAL, *[c.id for c in claims]],
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_ray_backend_gives_the_serial_report():
    """Claims and sweep points as Ray tasks (Ray started here once) = the serial run."""
    ray = pytest.importorskip("ray")
    from functools import partial

    from numerics.sweep import PhaseSweep, run_point
    from verify.backends import _start, map_on

    claims = _cheap_claims()
    sweep = PhaseSweep((0.2, 0.7), (0.3,), members=2, steps=3, seq_len=16, batch=4,
                       eval_batch=8)
    serial = _serial_in_a_fresh_process(claims)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the Ray tasks' thread count, so numbers agree bit for bit
    try:
        serial_points = map_on("serial", partial(run_point, sweep), sweep.points())
    finally:
        torch.set_num_threads(threads)
    started = _start(ray, None, 1)
    try:
        remote = run_claims_on("ray", claims, "test", Context(profile="test"), threads=1)
        remote_points = map_on("ray", partial(run_point, sweep), sweep.points())
    finally:
        if started:
            ray.shutdown()
    assert [r.claim for r in remote] == claims
    assert all(r.outcome != "error" for r in remote), [r.error_message for r in remote]
    assert _without_timings(remote) == serial  # bit for bit, timings aside
    assert [(r.p, r.q, r.final_loss, r.phases) for r in remote_points] == [
        (r.p, r.q, r.final_loss, r.phases) for r in serial_points]


def test_missing_ray_is_one_line_naming_the_extra(monkeypatch, capsys):
    from verify.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(BackendError, match=r"tdcheck\[ray\]"):
        run_claims_on("ray", [], "test", Context(profile="test"))
    assert main(["verify", "markov", "--profile", "test", "--backend", "ray"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tdcheck[ray]" in err[0]


def test_backend_arguments_are_checked():
    with pytest.raises(BackendError, match="backend must be"):
        run_claims_on("dask", [], "test", Context(profile="test"))
    with pytest.raises(BackendError, match="--address needs --backend ray"):
        run_claims_on("serial", [], "test", Context(profile="test"), address="auto")
