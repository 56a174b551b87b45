"""What makes ``tdcheck verify --plan`` answer in seconds, and that it still trains nothing:
a run with many members is probed at two small member counts and extrapolated (exact:
members are one stacked axis), a run is probed once per plan, and no run is computed.
(Its speed itself is measured by the CLI, not asserted here.)"""

from __future__ import annotations

import pytest

import numerics.cache as nc
from numerics.cache import PROBE_MEMBERS, RunCache, probe_cost, shrunk_configs


@pytest.fixture(autouse=True)
def _no_run_in_memory():
    """These tests plan against an empty cache folder, so no run may be served from the
    in-process memo either (``--plan`` counts a run in a run function's memo as cached):
    under pytest-xdist an earlier test of the same worker may have trained the same run."""
    import numerics.cache as nc

    nc.clear_run_memos()



def _member_configs():
    """Small configs of every row's run function with a member-count field (a few more
    members than a shrunk probe keeps), and that field."""
    import numerics.cooccurrence as co
    import numerics.example as ne
    import numerics.linear_attention as nl
    import numerics.markov as nm
    import numerics.scan_snap as ns

    mc = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=12, batch=4, states=2)
    return [
        (nm.run_full, nm.FullRun(mc, members=6, steps=4, record_every=2, eval_batch=7,
                                 dtype="float64")),
        (co.run, co.CoConfig(n=12, L=4, m=16, m1=4, members=6, steps=10, record_every=5,
                             n_val=6, growth=0.05, warm=5)),
        (ne.run_fit, ne.FitConfig(c=1.0, members=6, steps=3, batch=8, lr=0.1)),
        (nl.run_gd_family, nl.GDFamilyConfig(members=6, steps=3, decay_at=1, batch=20,
                                             eval_prompts=50)),
        (nl.run_zfb, nl.ZFBConfig(steps=3, batch=20, members=6, record_every=1,
                                  noise_batches=2, noise_full=100)),
        (nl.run_comparison, nl.ComparisonRun(layers=2, steps=6, seeds=6, batch=50,
                                             eval_every=3, hessian_at=(3,), eval_batch=100,
                                             hessian_batch=50)),
        (ns.run_sgd, ns.SGDConfig(data=ns.DataConfig(num_last=1, num_common=3,
                                                     num_unique_per_next=3),
                                  eta_Z=(0.7, 1.0), ratio=(5.0,), seeds=(3, 4, 5, 6, 7, 8),
                                  steps=3)),
    ]


@pytest.mark.parametrize("fn, config", _member_configs(),
                         ids=lambda v: getattr(v, "tag", type(v).__name__))
def test_a_shrunk_probe_extrapolated_equals_the_whole_probe(fn, config):
    (lo, hi), count = shrunk_configs(config)
    assert count == 6 and config not in (lo, hi)
    whole = probe_cost(fn.compute, config, {"device": "cpu"}, shrink=False)
    scaled = probe_cost(fn.compute, config, {"device": "cpu"})
    assert whole is not None and whole[1] > 0
    assert scaled == pytest.approx(whole, rel=1e-12)


def test_shrunk_config_leaves_small_and_memberless_configs_alone():
    import numerics.example as ne
    import numerics.rank_increase as nr

    cfg = ne.FitConfig(c=1.0, members=PROBE_MEMBERS[1], steps=3, batch=8, lr=0.1)
    assert shrunk_configs(cfg) is None
    assert shrunk_configs(nr.FullHeadConfig()) is None  # no member field: probed whole
    assert shrunk_configs(("a", 1)) is None


def test_the_plan_trains_nothing_and_probes_each_run_once(tmp_path, monkeypatch):
    """Planning a slow claim twice: no run function's body trains (the trainer is only
    reached under PROBE, which raises before the first step), nothing is stored, and the
    second plan of the same runs probes nothing."""
    import numerics.ensemble as ens
    from verify.claims import Context
    from verify.example import claims
    from verify.runner import plan_claim

    trained, probes = [], []
    real_train, real_probe = ens.train, nc.probe_cost

    def train(*args, **kwargs):
        if not nc.PROBE.get():
            trained.append(1)
        return real_train(*args, **kwargs)

    def probe(*args, **kwargs):
        probes.append(1)
        return real_probe(*args, **kwargs)

    computed = []
    real_get = RunCache.get_or_compute

    def get_or_compute(self, *args, **kwargs):
        computed.append(1)
        return real_get(self, *args, **kwargs)

    monkeypatch.setattr(RunCache, "get_or_compute", get_or_compute)
    monkeypatch.setattr(ens, "train", train)
    monkeypatch.setattr(nc, "probe_cost", probe)
    import numerics.example as ne

    monkeypatch.setattr(ne, "train", train, raising=False)
    claim = next(c for c in claims() if c.cost != "fast")
    ctx = Context(profile="ci", cache=RunCache(tmp_path))
    first = plan_claim(claim, "ci", ctx)
    n_probes = len(probes)
    second = plan_claim(claim, "ci", ctx)
    assert first.error is None and first.runs and not trained and not computed
    assert n_probes >= 1 and len(probes) == n_probes  # the second plan reused every cost
    assert [(r.member_steps, r.flops) for r in first.runs] == [
        (r.member_steps, r.flops) for r in second.runs]
    assert list(tmp_path.iterdir()) == []


def test_drawn_examples_past_the_first_are_drawn_and_costed_not_run(tmp_path, monkeypatch):
    """With ``verify.runner.PLAN_DRAWN = 1``, of four drawn examples one is run up to its
    run; the plan counts all four, the three others at its cost."""
    import dataclasses

    import verify.runner

    monkeypatch.setattr(verify.runner, "PLAN_DRAWN", 1)
    from verify.claims import Context
    from verify.example import claims
    from verify.plan import Throughput, plan_report
    from verify.runner import get_profile, plan_claim

    claim = next(c for c in claims() if c.cost == "slow")
    profile = dataclasses.replace(get_profile("ci"), slow=4)
    plan = plan_claim(claim, profile, Context(profile="ci", cache=RunCache(tmp_path)))
    assert plan.error is None and plan.drawn == 4 and plan.drawn_probed == 1
    assert plan.examples == len(claim.examples) + 4
    drawn_runs = plan.runs[plan.drawn_from:]
    pinned_runs = plan.runs[:plan.drawn_from]
    assert drawn_runs and all(plan.weight(plan.drawn_from + i) == 4
                              for i in range(len(drawn_runs)))
    _, data = plan_report([plan], Throughput({}, 1e9, "a given rate"), "ci", "cpu")
    distinct_pinned = {r.key: r for r in pinned_runs}
    expected = sum(r.member_steps for r in distinct_pinned.values()) + sum(
        (3 if r.key in distinct_pinned else 4) * r.member_steps for r in drawn_runs)
    assert data["claims"][0]["member_steps"] == pytest.approx(expected)
    assert data["claims"][0]["drawn"] == 4 and data["claims"][0]["drawn_probed"] == 1
