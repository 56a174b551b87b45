"""A training run killed part-way resumes from its checkpoint and ends where an
uninterrupted run ends, to the bit (numerics.checkpoint, issue 37)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import numerics.markov as nm
from numerics import checkpoint
from numerics.cache import CHECKPOINTS, RunCache
from numerics.ensemble import OptimizerConfig, TrainConfig, member_generators, train


class Killed(RuntimeError):
    """Stands for the process being stopped."""


def _loss(params, x):
    return ((x @ params["w"] - 1.0) ** 2).mean() + 0.1 * (params["b"] ** 2).sum()


def _train(gens, *, kill_at: int | None = None, seen: list | None = None):
    params = {"w": torch.stack([torch.randn(3, generator=g, dtype=torch.float64)
                                for g in member_generators(2, 5)]),
              "b": torch.zeros(2, 2, dtype=torch.float64)}

    def batch(step):
        if kill_at is not None and step == kill_at:
            raise Killed(step)
        if seen is not None:
            seen.append(step)
        return torch.stack([torch.randn(4, 3, generator=g, dtype=torch.float64) for g in gens])

    config = TrainConfig(steps=12, lr=0.05, record_every=5,
                         optimizer=OptimizerConfig("adam", betas=(0.9, 0.95), weight_decay=1e-3),
                         schedule=lambda s: 1.0 / (1 + s))
    return train(_loss, params, config, batch, {"w2": lambda p: (p["w"] ** 2).sum()},
                 generators=gens)


def _same(a, b) -> None:
    assert torch.equal(a.steps, b.steps)
    for x, y in ((a.time, b.time), (a.loss, b.loss)):
        assert torch.equal(x, y)
    for k in a.params:
        assert torch.equal(a.params[k], b.params[k])
    for k in a.observables:
        assert torch.equal(a.observables[k], b.observables[k])
    for k in a.grad_sq:
        assert torch.equal(a.grad_sq[k], b.grad_sq[k])


def test_killed_training_resumes_to_the_same_bits(tmp_path):
    whole = _train(member_generators(2, 100))
    with checkpoint.slot(tmp_path, "run", steps=3):
        with pytest.raises(Killed):
            _train(member_generators(2, 100), kill_at=8)
    assert list(tmp_path.glob("run-*.npz")), "no checkpoint was written before the kill"
    seen: list[int] = []
    with checkpoint.slot(tmp_path, "run", steps=3):
        resumed = _train(member_generators(2, 100), seen=seen)
    assert seen[0] == 6, "the resumed run did not start at the last checkpoint (step 6)"
    _same(whole, resumed)


def test_no_checkpoint_without_declared_generators(tmp_path):
    gens = member_generators(2, 100)
    with checkpoint.slot(tmp_path, "run", steps=2):
        params = {"w": torch.ones(2, 3, dtype=torch.float64), "b": torch.zeros(2, 2, dtype=torch.float64)}
        train(_loss, params, TrainConfig(steps=6, lr=0.1),
              lambda s: torch.stack([torch.randn(4, 3, generator=g, dtype=torch.float64)
                                     for g in gens]))
    assert not list(tmp_path.iterdir())


def test_a_crafted_pickle_checkpoint_is_ignored_not_run(tmp_path):
    marker = tmp_path / "executed"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "run-0.npz").write_bytes(pickle.dumps(Evil()))
    whole = _train(member_generators(2, 100))
    seen: list[int] = []
    with checkpoint.slot(tmp_path, "run", steps=100):
        resumed = _train(member_generators(2, 100), seen=seen)
    assert not marker.exists() and seen[0] == 0
    _same(whole, resumed)


def test_a_checkpoint_of_another_run_shape_is_not_taken_up(tmp_path):
    with checkpoint.slot(tmp_path, "run", steps=3), pytest.raises(Killed):
        _train(member_generators(2, 100), kill_at=8)
    path = next(tmp_path.glob("run-*.npz"))
    meta, arrays = checkpoint.read(path, {})
    checkpoint.write(path, arrays, {**{k: v for k, v in meta.items() if k != "schema"},
                                    "fingerprint": "another"})
    seen: list[int] = []
    with checkpoint.slot(tmp_path, "run", steps=100):
        _train(member_generators(2, 100), seen=seen)
    assert seen[0] == 0


def _markov_case():
    run = nm._smoke_full()
    run = type(run)(**{**run.__dict__, "steps": 6, "record_every": 2})
    fields = ("time", "eval_loss", "eval_se", "canonical", "spectrum_wv", "spectrum_w1")
    # calls of the sampler: the evaluation draw, then one per step 0..6
    return nm, "sample_chains", nm.run_full, run, fields, 1


def _la_case():
    import numerics.linear_attention as nl

    run = nl._comparison_smoke()
    run = type(run)(**{**run.__dict__, "steps": 6, "eval_every": 2, "hessian_at": (2,)})
    fields = ("eval_steps", "eval_loss", "train_loss", "r_diag", "r_eig", "smooth",
              "grad_norm")
    # calls of the sampler: one per step 0..6 (the evaluation batches come from another)
    return nl, "sample_prompts_stacked", nl.run_comparison, run, fields, 0


def _plan_counts_the_rest(fn, run, cache) -> None:
    """--plan counts a checkpointed run at the share of its steps still to train."""
    from numerics import cache as nc

    def planned(c):
        token = nc.PLAN.set([])
        try:
            with pytest.raises(nc.PlanStop) as stop:
                fn(run, cache=c)
        finally:
            nc.PLAN.reset(token)
        return stop.value.run

    nc._PLANNED_COSTS.clear()
    rest = planned(cache)
    whole = planned(RunCache(cache.root.parent / "empty"))
    assert rest.member_steps == pytest.approx(whole.member_steps * (1 - 4 / 6))
    # and at the wall rate its own training measured: the checkpoint's seconds x 2/6 / 4/6
    (saved,) = (cache.root / CHECKPOINTS).glob("*-0.npz")
    done, wall = checkpoint.status(cache.root / CHECKPOINTS, saved.name.removesuffix("-0.npz"))
    assert done == pytest.approx(4 / 6) and wall is not None and wall > 0
    assert rest.measured_seconds == pytest.approx(wall * (1 - done) / done)
    assert whole.measured_seconds is None


@pytest.mark.parametrize("case", [_markov_case, _la_case], ids=["markov", "linear_attention"])
def test_cached_full_run_resumes_and_clears_its_checkpoints(case, tmp_path, monkeypatch):
    """The run cache opens the slot: a full-model run (markov's, the LA comparison's) killed
    mid-run and asked for again resumes and ends with the uninterrupted run's numbers; the
    slot is then empty."""
    module, sampler, fn, run, fields, before = case()
    whole = fn(run, cache=RunCache(None))  # computed as the cached runs are (one thread policy)
    fn.cache_clear()
    monkeypatch.setenv("TDCHECK_CHECKPOINT_SECONDS", "1e-9")  # a checkpoint before every step
    real, calls = getattr(module, sampler), []

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) == before + 5:  # die drawing step 4
            raise Killed()
        return real(*args, **kwargs)

    cache = RunCache(tmp_path)
    monkeypatch.setattr(module, sampler, dying)
    fn.cache_clear()
    with pytest.raises(Killed):
        fn(run, cache=cache)
    assert list((tmp_path / CHECKPOINTS).glob("*.npz"))
    (saved,) = (tmp_path / CHECKPOINTS).glob("*.npz")
    stem = saved.name.removesuffix("-0.npz")
    assert checkpoint.progress(tmp_path / CHECKPOINTS, stem) == pytest.approx(4 / 6)
    _plan_counts_the_rest(fn, run, cache)
    after: list[int] = []

    def counting(*args, **kwargs):
        after.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, sampler, counting)
    resumed = fn(run, cache=cache)
    assert len(after) == before + 3, "not resumed at step 4 (steps 4-6 drawn again)"
    for name in fields:
        np.testing.assert_array_equal(getattr(whole, name), getattr(resumed, name))
    assert not list((tmp_path / CHECKPOINTS).glob("*.npz"))
    fn.cache_clear()


@pytest.mark.parametrize("damage", ["truncated", "list_header", "wrong_shape"])
def test_a_damaged_checkpoint_starts_the_run_over(damage, tmp_path):
    """A truncated file, a header that is not a dict or an array of the wrong shape is not
    taken up and does not raise: the training starts over and ends as a whole run."""
    with checkpoint.slot(tmp_path, "run", steps=3), pytest.raises(Killed):
        _train(member_generators(2, 100), kill_at=8)
    path = next(tmp_path.glob("run-*.npz"))
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    else:
        meta, arrays = checkpoint.read(path, {})
        if damage == "list_header":
            import json

            with open(path, "wb") as f:
                np.savez(f, __checkpoint__=np.frombuffer(json.dumps([1]).encode(), np.uint8),
                         **arrays)
        else:
            arrays["p:w"] = arrays["p:w"][:, :2]
            checkpoint.write(path, arrays, {k: v for k, v in meta.items() if k != "schema"})
    assert checkpoint.progress(tmp_path, "run") is None or damage == "wrong_shape"
    seen: list[int] = []
    with checkpoint.slot(tmp_path, "run", steps=100):
        resumed = _train(member_generators(2, 100), seen=seen)
    assert seen[0] == 0
    _same(_train(member_generators(2, 100)), resumed)


def test_checkpoints_are_listed_and_stale_ones_pruned(tmp_path, capsys):
    """`tdcheck checkpoints` lists a cache's checkpoints (step, share done, wall seconds of
    training); --prune-older removes only those not written for that long."""
    import os
    import time

    from verify.cli import main

    folder = tmp_path / CHECKPOINTS
    for key in ("old", "new"):
        with checkpoint.slot(folder, key, steps=3), pytest.raises(Killed):
            _train(member_generators(2, 100), kill_at=8)
    old = next(folder.glob("old-*.npz"))
    week = time.time() - 8 * 86400
    os.utime(old, (week, week))
    listed = checkpoint.entries(folder)
    assert [e.key for e in listed] == ["old", "new"]  # oldest first
    assert all(e.step is not None and e.step > 0 and e.done is not None
               and e.wall is not None and e.wall > 0 for e in listed)
    assert main(["checkpoints", "--cache", str(tmp_path), "--prune-older", "7"]) == 0
    out = capsys.readouterr().out
    assert "checkpoints in" in out and "removed 1" in out
    assert [p.name.split("-")[0] for p in folder.glob("*.npz")] == ["new"]
