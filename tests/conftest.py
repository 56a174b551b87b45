"""Hypothesis profiles (HYPOTHESIS_PROFILE=ci|dev|thorough) and shared fixtures."""

import os

# under pytest-xdist (make test: -n 2) the cores are shared among the workers: numpy's BLAS
# gets the same per-worker share as torch below, set before numpy is first imported (torch
# imports it).  Left to its default, each worker's OpenBLAS runs as many threads as there are
# cores, and the d x d products of the cooccurrence checks ran about twice as slowly (the
# cooccurrence tests: 169 s against 83 s on 2 cores, this suite's -k "phase1 or cooccurrence")
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
_THREADS = max(1, min(2, (os.cpu_count() or 1) // _WORKERS))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(_THREADS))

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=15, derandomize=True, database=None,
                          deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("dev", max_examples=40, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.register_profile("thorough", max_examples=400, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

torch.set_num_threads(_THREADS)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fresh_plan_costs(monkeypatch):
    """Each test starts with an empty ``--plan`` cost memo (numerics.cache._PLANNED_COSTS is
    per process; under pytest-xdist another test of the same worker may have planned, and
    with a patched probe costed, the same run first)."""
    import numerics.cache as nc

    monkeypatch.setattr(nc, "_PLANNED_COSTS", {})
