"""``Claim`` and ``Evidence``: one falsifiable sentence of a paper and what a check saw.

A claim's ``check`` and its negative ``control`` are the *same* check applied to two
theories: the paper's, and a deliberately wrong one (perturbed coefficient, swapped sign,
wrong stationary point).  Paper modules build both with ``functools.partial`` over one
check function, so a control can only differ in the theory it is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hypothesis.strategies import SearchStrategy

__all__ = ["Claim", "Context", "Evidence", "Kind", "combine"]

Kind = Literal["symbolic", "reduced-vs-full", "published-number", "open-question"]
Expected = Literal["holds", "refuted", "open"]
Cost = Literal["fast", "slow", "gpu"]


@dataclass(frozen=True)
class Evidence:
    """One comparison: ``passed`` iff ``error <= tolerance`` (and both are finite).

    ``error_model`` says in words where the tolerance comes from; ``details`` holds any
    further numbers worth reporting (JSON-serialisable).
    """

    predicted: float
    observed: float
    error: float
    tolerance: float
    error_model: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return math.isfinite(self.error) and self.error <= self.tolerance

    @property
    def ratio(self) -> float:
        """error / tolerance: > 1 fails; the runner keeps the largest."""
        if not math.isfinite(self.error):
            return math.inf
        return self.error / self.tolerance if self.tolerance > 0 else (math.inf if self.error > 0 else 0.0)


def combine(parts: Sequence[Evidence]) -> Evidence:
    """The worst (largest error/tolerance) of several comparisons, the others in details."""
    worst = max(parts, key=lambda ev: ev.ratio)
    details = dict(worst.details)
    details["all_parts"] = [
        {"predicted": ev.predicted, "observed": ev.observed, "error": ev.error,
         "tolerance": ev.tolerance, "error_model": ev.error_model}
        for ev in parts
    ]
    return Evidence(worst.predicted, worst.observed, worst.error, worst.tolerance,
                    worst.error_model, details)


@dataclass(frozen=True)
class Context:
    """What a check may need besides its parameters: device, dtype name, profile name."""

    device: str = "cpu"
    profile: str = "quick"


@dataclass(frozen=True)
class Claim:
    """A falsifiable statement from a paper, with its check and negative control.

    ``strategy`` draws parameter dicts from the region where the paper's assumptions hold;
    ``examples`` are pinned parameter dicts always run first (the paper's own settings).
    ``expected`` is ``holds``, ``refuted`` (a documented finding) or ``open``.
    """

    id: str
    paper: str
    statement: str
    source: str
    kind: Kind
    strategy: SearchStrategy
    check: Callable[[dict, Context], Evidence]
    control: Callable[[dict, Context], Evidence]
    control_description: str
    expected: Expected = "holds"
    cost: Cost = "fast"
    examples: tuple[Mapping[str, Any], ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        if self.expected not in ("holds", "refuted", "open"):
            raise ValueError(f"expected must be holds, refuted or open, got {self.expected!r}")
        if self.cost not in ("fast", "slow", "gpu"):
            raise ValueError(f"cost must be fast, slow or gpu, got {self.cost!r}")
