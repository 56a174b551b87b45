"""Hypothesis profiles (HYPOTHESIS_PROFILE=ci|dev|thorough) and shared fixtures."""

import os

import pytest
import torch
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=15, derandomize=True, database=None,
                          deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("dev", max_examples=40, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.register_profile("thorough", max_examples=400, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# under pytest-xdist (make test: -n 2) the cores are shared among the workers
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
torch.set_num_threads(max(1, min(2, (os.cpu_count() or 1) // _WORKERS)))


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
