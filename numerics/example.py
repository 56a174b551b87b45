"""The example row's simulation: SGD on ``f(x) = a b x`` for many members at once.

Each member is one start ``(a0, b0)`` drawn from N(0, 1) with its own generator (member i
seeded ``seed + i``); all members are stepped together by :func:`numerics.ensemble.train`
through a :class:`~numerics.ensemble.StackedLoss` (the loss written over all members at
once: the fast path, one batched op per layer per step whatever the member count).

The batches are drawn in advance so the run can report each step's effective rate: with
noiseless data the mini-batch gradient is the population gradient times the batch mean of
``x^2`` (``theory.example``), so SGD at rate ``lr`` is GD at rate ``lr * m_t``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from numerics.cache import run_function
from numerics.context import SizeTable
from numerics.ensemble import OptimizerConfig, StackedLoss, TrainConfig, member_generators, train

__all__ = ["SIZES", "FitConfig", "FitResult", "run_fit"]

# One size table for claims and figures.  test: the test suite's smoke size; quick: the
# default verification (32 starts make the worst case over members informative); thorough:
# 1000 starts.  Steps are sized so lr * steps = 40, which converges every start that is not
# within 1e-3 of the saddle's stable manifold (rate >= 2|c| near the minimum set).
SIZES = SizeTable({
    "fit": {
        "test": {"members": 4, "steps": 800, "batch": 32, "lr": 0.05},
        "quick": {"members": 32, "steps": 2000, "batch": 256, "lr": 0.02},
        "thorough": {"members": 1000, "steps": 2000, "batch": 256, "lr": 0.02},
    },
})


@dataclass(frozen=True)
class FitConfig:
    """Everything that determines one stacked run."""

    c: float
    members: int
    steps: int
    batch: int
    lr: float
    seed: int = 0

    def __post_init__(self) -> None:
        if self.c == 0:
            raise ValueError("c must be non-zero")
        for name in ("members", "steps", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")


@dataclass(frozen=True)
class FitResult:
    """``a``, ``b``: [members, steps + 1] (before each step and after the last);
    ``rate``: [members, steps], each step's effective GD rate ``lr * mean(x^2)``."""

    config: FitConfig
    a: np.ndarray
    b: np.ndarray
    rate: np.ndarray


def _loss(c: float) -> StackedLoss:
    def fn(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        w = (params["a"] * params["b"])[:, None]
        return 0.5 * ((w - c) * x).pow(2).mean(dim=1)

    return StackedLoss(fn)


def _smoke() -> FitConfig:
    return FitConfig(c=1.0, members=2, steps=20, batch=8, lr=0.05)


# the full model: its dynamics are torch autograd on its own loss, no theory function
@run_function("example.fit", full_model=True, smoke=_smoke)
def run_fit(config: FitConfig, *, device: str = "cpu") -> FitResult:
    """Train ``config.members`` starts with SGD; float64 (the check is an exact identity)."""
    gens = member_generators(config.members, config.seed)
    start = torch.stack([torch.randn(2, generator=g, dtype=torch.float64) for g in gens])
    x = torch.stack([torch.randn(config.steps + 1, config.batch, generator=g,
                                 dtype=torch.float64) for g in gens], dim=1)
    params = {"a": start[:, 0].to(device), "b": start[:, 1].to(device)}
    x = x.to(device)
    traj = train(_loss(config.c), params,
                 TrainConfig(steps=config.steps, lr=config.lr, optimizer=OptimizerConfig("sgd"),
                             description="example.fit"),
                 batch_fn=lambda step: x[step],
                 observables={"a": lambda p: p["a"], "b": lambda p: p["b"]})
    rate = config.lr * x[:-1].pow(2).mean(dim=2).T  # [members, steps]
    return FitResult(config, traj.observables["a"].cpu().numpy(),
                     traj.observables["b"].cpu().numpy(), rate.cpu().numpy())
