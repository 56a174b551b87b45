"""FLOP of a torch computation, counted by dispatch: matmuls by torch's own formulas, every
other computing op as one FLOP per output element.

torch's ``FlopCounterMode`` counts matmuls, convolutions and attention only, so a model built
of elementwise ops (a two-parameter toy, a scalar ODE surrogate) counts 0 and a plan would call
it free.  Here views (``is_view`` ops, no arithmetic) count nothing; any other op counts the
elements it writes, a lower bound for transcendental ops and an upper one for copies.  This is
the FLOP model of ``tdcheck verify --plan`` (:func:`numerics.cache.probe_cost`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import flop_registry

__all__ = ["FlopCount", "count_flops"]


@dataclass(frozen=True)
class FlopCount:
    """Matmul FLOP (torch's formulas) and elementwise FLOP (output elements) of one call."""

    matmul: int
    elementwise: int

    @property
    def total(self) -> int:
        return self.matmul + self.elementwise


class _Counter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.matmul = 0
        self.elementwise = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func._overloadpacket
        if packet in flop_registry:
            self.matmul += int(flop_registry[packet](*args, **kwargs, out_val=out))
        elif not func.is_view:
            self.elementwise += sum(t.numel() for t in tree_leaves(out)
                                    if isinstance(t, torch.Tensor))
        return out


def count_flops(fn: Callable[[], Any], fake: bool = False) -> FlopCount:
    """Run ``fn()`` once and count its FLOP (see the module docstring for the model).

    ``fake=True`` runs it under torch's ``FakeTensorMode``: every op propagates shapes only,
    nothing is computed, so a paper-size step is counted in the time of a tiny one."""
    counter = _Counter()
    if fake:
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode(allow_non_fake_inputs=True), counter:
            fn()
    else:
        with counter:
            fn()
    return FlopCount(counter.matmul, counter.elementwise)
