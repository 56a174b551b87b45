"""The run cache stores arrays and JSON, never pickles (numerics.store): a crafted pickle in
the cache folder is refused and the run recomputed; every row's run result round-trips."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from numerics import store
from numerics.cache import RunCache, run_function


# --------------------------------------------------------------------------- helpers
def assert_same(a, b, where="value"):
    """``b`` is ``a`` rebuilt: same types, dtypes, shapes, devices and bits, all the way down."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.device == b.device and a.shape == b.shape, where
        assert a.requires_grad == b.requires_grad, where
        assert torch.equal(a.detach(), b.detach()) or (
            a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
            and torch.equal(a.nan_to_num(), b.nan_to_num())), where
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and (a == b or (np.isnan(a) and np.isnan(b))), where
    elif isinstance(a, float):
        assert a == b or (math.isnan(a) and math.isnan(b)), where
        assert math.copysign(1, a) == math.copysign(1, b), where
    elif dataclasses.is_dataclass(a):
        assert list(vars(a)) == list(vars(b)), where
        for k in vars(a):
            assert_same(getattr(a, k), getattr(b, k), f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    else:
        assert a == b, where


def round_trip(value, tmp_path: Path, key: str = "k" * 32):
    path = tmp_path / f"x-{key}{store.SUFFIX}"
    store.save(path, value, key)
    back = store.load(path, key)
    assert_same(value, back)
    return back


class _Marker:
    """A pickle whose loading would create ``path`` (it must never be loaded)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


class _OpenMarker:
    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


# --------------------------------------------------------------------------- safety
@pytest.mark.parametrize("payload", [_Marker, _OpenMarker])
def test_a_crafted_pickle_in_the_cache_is_refused_and_the_run_recomputed(tmp_path, payload):
    cache_dir, marker = tmp_path / "cache", tmp_path / "marker"
    cache = RunCache(cache_dir)
    config, tag = ("cfg", 1), "toy"
    key = cache.key(config, tag)
    new = cache.path(config, tag)
    old = new.with_suffix(".pkl")  # where the pickling cache of before kept this run
    assert new.suffix == store.SUFFIX and new.name == f"{tag}-{key}{store.SUFFIX}"
    cache_dir.mkdir()
    for path in (old, new):
        path.write_bytes(pickle.dumps(payload(marker)))
    calls = []

    def compute():
        calls.append(1)
        return {"v": np.arange(3.0)}

    value = cache.get_or_compute(config, compute, tag)
    assert calls == [1] and not marker.exists()  # refused, recomputed, nothing ran
    np.testing.assert_array_equal(value["v"], np.arange(3.0))
    # the crafted file was replaced by a stored run, which is then served
    assert cache.get_or_compute(config, compute, tag)["v"].tolist() == [0.0, 1.0, 2.0]
    assert calls == [1] and not marker.exists()
    with pytest.raises(store.StoreError):
        store.load(old, key)
    assert not marker.exists()


def test_a_pickle_inside_a_zip_and_object_arrays_are_refused(tmp_path):
    marker = tmp_path / "marker"
    key = "a" * 32
    path = tmp_path / f"toy-{key}.npz"
    obj = np.empty(1, dtype=object)
    obj[0] = _Marker(marker)
    head = {"format": "tdcheck-run", "schema": store.SCHEMA, "key": key,
            "value": {"@": "nd", "ref": "a0"}}
    text = np.frombuffer(json.dumps(head).encode(), dtype=np.uint8)
    np.savez(path, __skeleton__=text, a0=obj)  # np.savez pickles object arrays
    with pytest.raises(store.StoreError):
        store.load(path, key)
    assert not marker.exists()
    with pytest.raises(store.StoreError):
        store.encode(obj)


@pytest.mark.parametrize("skeleton", [
    {"@": "dataclass", "module": "os", "qualname": "system", "fields": []},
    {"@": "dataclass", "module": "subprocess", "qualname": "Popen", "fields": []},
    {"@": "dataclass", "module": "numerics.cache", "qualname": "os.system", "fields": []},
    {"@": "dataclass", "module": "numerics.cache", "qualname": "__builtins__", "fields": []},
    {"@": "dataclass", "module": "numerics.cache", "qualname": "RunCache.__init__",
     "fields": []},
    {"@": "dataclass", "module": "numerics.cache", "qualname": "Path", "fields": []},
    {"@": "dataclass", "module": "numerics.nonexistent", "qualname": "X", "fields": []},
    {"@": "dataclass", "module": "numerics/../os", "qualname": "X", "fields": []},
    {"@": "namedtuple", "module": "numerics.cache", "qualname": "RunCache", "items": []},
    {"@": "torchdtype", "name": "load"},
    {"@": "nd", "ref": "__skeleton__"},
    {"@": "no-such-tag"},
])
def test_types_outside_the_allow_list_are_refused(tmp_path, skeleton):
    key = "b" * 32
    path = tmp_path / f"toy-{key}.npz"
    head = {"format": "tdcheck-run", "schema": store.SCHEMA, "key": key, "value": skeleton}
    np.savez(path, __skeleton__=np.frombuffer(json.dumps(head).encode(), dtype=np.uint8))
    with pytest.raises(store.StoreError):
        store.load(path, key)


def test_another_schema_or_key_is_recomputed(tmp_path):
    cache = RunCache(tmp_path)
    config, tag = ("cfg", 2), "toy"
    key, path = cache.key(config, tag), cache.path(config, tag)
    store.save(path, {"v": 1}, key)
    assert cache.get_or_compute(config, lambda: {"v": 2}, tag) == {"v": 1}
    with np.load(path, allow_pickle=False) as data:
        head = json.loads(data["__skeleton__"].tobytes())
    head["schema"] = store.SCHEMA + 1
    np.savez(path, __skeleton__=np.frombuffer(json.dumps(head).encode(), dtype=np.uint8))
    assert cache.get_or_compute(config, lambda: {"v": 3}, tag) == {"v": 3}
    other = cache.path(("cfg", 3), tag)
    other.write_bytes(path.read_bytes())  # an entry copied under another run's name
    assert cache.get_or_compute(("cfg", 3), lambda: {"v": 4}, tag) == {"v": 4}
    path.write_bytes(b"PK\x03\x04truncated")
    assert cache.get_or_compute(config, lambda: {"v": 5}, tag) == {"v": 5}


def test_a_result_the_store_cannot_hold_is_returned_uncached(tmp_path):
    cache = RunCache(tmp_path)
    with pytest.warns(RuntimeWarning, match="not cached"):
        value = cache.get_or_compute(("cfg", 4), lambda: {"f": print}, "toy")
    assert value == {"f": print} and not list(tmp_path.iterdir())


def test_run_function_reads_back_its_stored_run(tmp_path):
    calls = []

    @run_function("test_store.toy")
    def toy(config: tuple, *, device: str = "cpu") -> dict:
        calls.append(config)
        return {"x": torch.arange(config[0], dtype=torch.float32), "n": config}

    cache = RunCache(tmp_path)
    first = toy((3,), cache=cache)
    toy.cache_clear()
    again = toy((3,), cache=cache)
    assert calls == [(3,)] and again is not first
    assert_same(first, again)
    assert [p.suffix for p in tmp_path.iterdir()] == [store.SUFFIX]


def test_a_stored_run_says_which_machine_and_thread_count_made_it(tmp_path, monkeypatch):
    from numerics.cache import made_on_summary
    from numerics.machine import facts
    from numerics.threads import threads

    @run_function("test_store.where")
    def where(config: tuple) -> dict:
        return {"threads": torch.get_num_threads()}

    @run_function("test_store.own_count")
    def own_count(config: tuple) -> dict:
        with threads(default=1):  # as scan_snap's runs do: their own count, not the caller's
            return {"threads": torch.get_num_threads()}

    monkeypatch.setenv("TDCHECK_THREADS", "1")
    cache = RunCache(tmp_path)
    assert where((1,), cache=cache) == {"threads": 1}
    (path,) = tmp_path.glob(f"*{store.SUFFIX}")
    made = store.made_on(path)
    here = facts()
    assert made is not None and made["cpu"] == here["cpu"] and made["simd"] == here["simd"]
    assert made["torch_threads"] == 1 and made["env"]["TDCHECK_THREADS"] == "1"
    assert made["torch"] == torch.__version__
    path.unlink()
    # without the override the caller keeps 2 threads, and the run records its own 1
    monkeypatch.delenv("TDCHECK_THREADS")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert own_count((1,), cache=cache) == {"threads": 1}
    finally:
        torch.set_num_threads(before)
    (path,) = tmp_path.glob(f"*{store.SUFFIX}")
    assert store.made_on(path)["torch_threads"] == 1
    # a run stored without facts (an older cache) reads back, and counts as unknown
    store.save(tmp_path / f"old{store.SUFFIX}", {"x": 1}, "k")
    assert store.made_on(tmp_path / f"old{store.SUFFIX}") is None
    assert store.load(tmp_path / f"old{store.SUFFIX}", "k") == {"x": 1}
    summary = made_on_summary(tmp_path)
    assert sorted(m["runs"] for m in summary) == [1, 1]
    assert {m["facts"] is None for m in summary} == {True, False}
    assert store.made_on(tmp_path / "absent.npz") is None


# --------------------------------------------------------------------------- round trips
def test_plain_values_round_trip(tmp_path):
    value = {
        "none": None, "bool": True, "int": -3, "big": 2**80, "float": 0.1, "neg0": -0.0,
        "nan": float("nan"), "inf": float("-inf"), "complex": 1 - 2j, "str": "α-β",
        "list": [1, (2, 3.0)], "tuple": (), "set": {1, 2}, "frozen": frozenset({"a"}),
        (1, "k"): "tuple key", 2: "int key",
        "f64": np.arange(6.0).reshape(2, 3), "i8": np.array([1, -1], dtype=np.int8),
        "c128": np.array([1 + 1j]), "bool_arr": np.array([True, False]),
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)), "empty": np.zeros((0, 4)),
        "0d": np.array(2.5), "np_float": np.float64(1.5), "np_int": np.int64(7),
        "nan_arr": np.array([np.nan, 1.0]), "u": np.array(["ab", "c"]),
        "dtype": np.dtype("float32"),
        "t64": torch.arange(4, dtype=torch.float64), "t32": torch.ones(2, 2),
        "bf16": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
        "long": torch.tensor([1, 2]), "grad": torch.zeros(3, requires_grad=True),
        "param": torch.nn.Parameter(torch.ones(2)), "tdtype": torch.float16,
        "tdevice": torch.device("cpu"), "view": torch.arange(10.0)[::3],
    }
    round_trip(value, tmp_path)
    arr = round_trip(np.arange(3), tmp_path)
    assert arr.flags.writeable
    round_trip((np.zeros(2), np.ones(3), np.arange(4.0)), tmp_path)


def _row_results():
    """One small result of every row's run function (``fn.compute``: no cache), by tag."""
    import numerics.cooccurrence as nc
    import numerics.example as ne
    import numerics.linear_attention as nl
    import numerics.markov as nm
    import numerics.rank_increase as nr
    import numerics.scan_snap as ns
    import theory.rank_increase as tr

    quad = nr.three_coordinate_problem()
    _, _, u0, v0 = tr.three_coordinate_example()
    head = nr.head_problem()
    hu0, hv0 = nr.default_init(6, 1)
    data = ns.DataConfig(num_last=1, num_common=1, num_unique_per_next=2)
    facts = ns.make_facts(data)
    P = tuple(map(tuple, facts.probs[:, : facts.n_context]))
    mc = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=12, batch=4, states=2)
    return {
        nm.run_full: nm.FullRun(mc, members=2, steps=4, record_every=2, eval_batch=7,
                                dtype="float64"),
        nm.run_rank_one: nm.RankOneRun(0.2, 0.3, 1.0, -1.0, 0.1, lr=0.1, t_end=1.0,
                                       record_dt=0.5, seq_len=8),
        nc.run: nc.CoConfig(n=12, L=4, m=16, m1=4, members=2, steps=10, record_every=5,
                            n_val=6, growth=0.05, warm=5),
        nc.run_closure: nc.ClosureConfig(lrs=(0.01, 0.005), steps=4, record_every=2),
        ne.run_fit: ne.FitConfig(c=1.0, members=2, steps=3, batch=8, lr=0.1),
        nl.run_gd_family: nl.GDFamilyConfig(members=2, steps=3, decay_at=1, batch=20,
                                            eval_prompts=50),
        nl.run_zfb: nl.ZFBConfig(steps=3, batch=20, members=2, record_every=1,
                                 noise_batches=2, noise_full=100),
        nl.run_comparison: nl.ComparisonRun(layers=2, steps=6, seeds=1, batch=50,
                                            eval_every=3, hessian_at=(3,), eval_batch=100,
                                            hessian_batch=50),
        nl.run_init_noise: nl.NoiseConfig("sphere", layers=2, samples=3, batch=50,
                                          full=1000),
        nl.run_fit: nl.FitConfig(1, 0, None, "identity", prompts=200, iterations=3),
        nr.run_ladder: nr.LadderConfig(quad, alphas=(1e-2, 1e-3), u0=u0, v0=v0, lr=0.05,
                                       tau_max=0.2, record_every=10),
        nr.run_log_flow: nr.LogFlowConfig(head, alphas=(1e-6,), u0=hu0, v0=hv0,
                                          tau_max=0.2, points=5),
        nr.run_full_head: nr.FullHeadConfig(alphas=(1e-2,), tau_max=0.05, steps_override=4,
                                            record_every=2),
        nr.run_perturbation: nr.PerturbConfig(head, hu0, hv0, alpha=1e-6, tau_perturb=0.1,
                                              tau_end=0.2, points=5),
        ns.run_sgd: ns.SGDConfig(data=ns.DataConfig(num_last=1, num_common=3,
                                                    num_unique_per_next=3),
                                 eta_Z=(0.7,), ratio=(5.0,), seeds=(3,), steps=3, exact=True),
        ns.run_population_flow: ns.FlowConfig(data=data, eta_Y=10.0, t_eval=(0.0, 0.5)),
        ns.run_reduced: ns.ReducedConfig(P, facts.M, 10.0, 1.0, (0.0, 0.5)),
        ns.run_snap_system: ns.SnapConfig(M=facts.M, K=facts.K, eta_Y=10.0, eta_Z=1.0,
                                          C0=1.0, t_eval=(0.0, 0.5)),
    }


def test_every_rows_run_result_round_trips(tmp_path):
    """Each row's run function, at a few steps, stored and read back bit for bit (types,
    dtypes, nested configs, torch parameters and numpy facts included)."""
    seen = set()
    for fn, config in _row_results().items():
        result = fn.compute(config)
        back = round_trip(result, tmp_path, key=f"{len(seen):032d}")
        seen.add(type(back).__qualname__)
        if dataclasses.is_dataclass(result):
            assert back.__class__ is result.__class__
    assert {"FullRunResult", "RankOneResult", "CoRun", "ClosureRun", "FitResult",
            "GDFamilyResult", "ZFBResult", "ComparisonResult", "LadderRun", "LogFlowRun",
            "FullHeadRun", "PerturbRun", "SGDResult", "FlowResult", "ReducedResult",
            "ndarray", "tuple"} <= seen
