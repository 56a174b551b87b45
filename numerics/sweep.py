"""``tdcheck sweep markov phase``: the phase diagram of the full Markov model over (p, q).

At every grid point an ensemble of ``members`` full models (numerics.markov, the authors'
Gaussian ``base`` initialisation, their AdamW and one-cycle schedule, float32) is trained on
the chain with switching probabilities (p, q), and each member's final loss L (evaluated
Rao-Blackwellised on fresh sequences, nats) is placed between the two stationary points of
Makkuva et al.: the unigram loss H(pi) (the predictor that ignores x_n, a local minimum for
p + q > 1) and the bigram loss H_rate (the Bayes predictor, the global minimum).  With
``s = (H(pi) - L) / (H(pi) - H_rate)`` a member is

* ``bigram`` if s >= 1 - BAND, ``unigram`` if |s| <= BAND, ``neither`` otherwise;
* ``indistinguishable`` where the gap H(pi) - H_rate is below ``GAP_FLOOR`` nats: near the
  line p + q = 1 the chain is nearly i.i.d., both minima coincide and no loss can tell them
  apart (the band there is smaller than the evaluation noise).

The theory's boundary is p + q = 1: from a small Gaussian initialisation training ends on the
unigram minimum above it and on the bigram minimum below it (theory.markov: the sign of the profile slope l'(0)).
``agreement`` is the share of distinguishable points whose majority phase is the predicted
one (a ``mixed`` point, without a strict majority, counts as a disagreement).  Every grid
point is independent; the sweep trains the whole grid as one stacked ensemble (the folded
fast path, p and q per member), or in groups of points mapped serially or as Ray tasks
(``verify.backends.map_on``).

Choices (ours): BAND = 0.2 of the gap, GAP_FLOOR = 0.01 nats (about twice the standard
error of the evaluation loss at 256 x 63 tokens); member i of point j uses seeds
``seed + 1000 j + i`` (init) and ``+ 10_000`` (data), so each point is reproducible alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["BAND", "GAP_FLOOR", "PHASES", "PhaseSweep", "PointResult", "classify", "majority",
           "parse_grid", "predicted_phase", "run_phase_sweep", "run_point", "run_points",
           "summarise"]

BAND = 0.2  # share of the unigram-bigram gap counted as "at" a minimum (module doc)
GAP_FLOOR = 0.01  # nats: below it the two minima are closer than the evaluation noise
PHASES = ("unigram", "bigram", "neither", "indistinguishable", "mixed")


def parse_grid(spec: str) -> tuple[str, tuple[float, ...]]:
    """``"p=0.05:0.95:7"`` -> ("p", 7 evenly spaced values from 0.05 to 0.95)."""
    try:
        name, rng = spec.split("=", 1)
        lo, hi, n = rng.split(":")
        lo_f, hi_f, count = float(lo), float(hi), int(n)
    except ValueError:
        raise ValueError(f"grid must look like p=0.05:0.95:7, got {spec!r}") from None
    if count < 1 or not 0 < lo_f <= hi_f < 1:
        raise ValueError(f"grid {spec!r}: need 0 < start <= stop < 1 and a count >= 1")
    values = np.linspace(lo_f, hi_f, count) if count > 1 else np.array([lo_f])
    return name.strip(), tuple(round(float(v), 10) for v in values)


@dataclass(frozen=True)
class PhaseSweep:
    """Everything that determines a sweep (sizes default to the quick profile's model)."""

    p_values: tuple[float, ...]
    q_values: tuple[float, ...]
    members: int = 2
    steps: int = 1000
    lr: float = 2e-3
    d: int = 4
    seq_len: int = 64
    batch: int = 32
    eval_batch: int = 256
    seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        if not self.p_values or not self.q_values:
            raise ValueError("the grid needs at least one p and one q")
        for name in ("members", "steps", "d", "seq_len", "batch", "eval_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    def points(self) -> list[tuple[int, float, float]]:
        """(index, p, q) in row-major order (q rows, p columns)."""
        return [(j * len(self.p_values) + i, p, q) for j, q in enumerate(self.q_values)
                for i, p in enumerate(self.p_values)]


@dataclass(frozen=True)
class PointResult:
    p: float
    q: float
    final_loss: tuple[float, ...]  # per member, nats
    unigram: float
    bigram: float
    phases: tuple[str, ...]
    seconds: float


def predicted_phase(p: float, q: float) -> str:
    """The theory's phase from a small initialisation (``theory.markov.small_init_trapped``:
    the unigram line is a local minimum next to the origin iff the profile slope l'(0) > 0,
    which is p + q > 1); else training reaches the bigram minimum."""
    from theory import markov as theory

    return "unigram" if theory.small_init_trapped(p, q) else "bigram"


def classify(loss: float, unigram: float, bigram: float) -> str:
    """Phase of one final loss (module doc)."""
    gap = unigram - bigram
    if gap < GAP_FLOOR:
        return "indistinguishable"
    s = (unigram - loss) / gap
    if s >= 1 - BAND:
        return "bigram"
    if abs(s) <= BAND:
        return "unigram"
    return "neither"


def _reference_losses(p: float, q: float) -> tuple[float, float]:
    from theory import markov as theory

    return float(theory.unigram_loss(p, q)), float(theory.bigram_loss(p, q))


def _point_config(sweep: PhaseSweep, p: float, q: float):
    from numerics import markov as nm

    return nm.MarkovConfig(p=p, q=q, d=sweep.d, seq_len=sweep.seq_len, batch=sweep.batch)


def run_points(sweep: PhaseSweep, points: Sequence[tuple[int, float, float]]
               ) -> list[PointResult]:
    """Train every member of ``points`` in ONE stacked ensemble and classify each final loss.

    Members of all points are stepped together through the markov model's folded loss
    (``numerics.markov.stacked_train_loss``: one fused attention call over every member's
    batch), each with the (p, q) of its point: the sampled next-token loss does not involve
    p and q, only the data do, so one loss serves the whole grid.  Member i of point j keeps
    its seeds (``seed + 1000 j + i`` for the initialisation, ``+ 10_000`` for the data), so a
    point gives the same members whether it is trained alone or with the grid (to float32
    rounding of the batched kernels).
    """
    import time

    from numerics import markov as nm
    from numerics.device import select_device
    from numerics.ensemble import TrainConfig, member_generators, stack_members, train

    start = time.perf_counter()
    device = select_device(sweep.device)
    configs = [_point_config(sweep, p, q) for _, p, q in points]
    inits, data = [], []
    for (index, _, _), cfg in zip(points, configs, strict=True):
        seed = sweep.seed + 1000 * index
        inits.append(stack_members(nm.init_gaussian(cfg, dtype=torch.float32, device=device),
                                   member_generators(sweep.members, seed, device)))
        data.append(member_generators(sweep.members, seed + 10_000, device))
    params = {k: torch.cat([p[k] for p in inits]) for k in inits[0]}

    def batch(step: int) -> torch.Tensor:
        return torch.cat([nm.sample_chains(cfg, gens, device)
                          for cfg, gens in zip(configs, data, strict=True)])

    config = TrainConfig(steps=sweep.steps, lr=sweep.lr, optimizer=nm.authors_adamw(),
                         schedule=nm.one_cycle(sweep.steps), record_every=sweep.steps,
                         description="sweep")
    traj = train(nm.stacked_train_loss(configs[0]), params, config, batch)
    seconds = (time.perf_counter() - start) / len(points)
    out = []
    for j, ((index, p, q), cfg) in enumerate(zip(points, configs, strict=True)):
        seed = sweep.seed + 1000 * index
        x_eval = nm.sample_chains(cfg, member_generators(1, seed + 20_000, device), device,
                                  batch=sweep.eval_batch)[0]
        with torch.no_grad():
            final = [float(nm.conditional_loss(
                {k: v[j * sweep.members + m].double() for k, v in traj.params.items()},
                x_eval, cfg)) for m in range(sweep.members)]
        unigram, bigram = _reference_losses(p, q)
        out.append(PointResult(p=p, q=q, final_loss=tuple(final), unigram=unigram,
                               bigram=bigram,
                               phases=tuple(classify(v, unigram, bigram) for v in final),
                               seconds=seconds))
    return out


def run_point(sweep: PhaseSweep, point: tuple[int, float, float]) -> PointResult:
    """One grid point trained on its own (:func:`run_points` with a single point)."""
    return run_points(sweep, [point])[0]


def run_phase_sweep(sweep: PhaseSweep,
                    map_fn: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]
                    | None = None, chunks: int = 1) -> dict[str, np.ndarray]:
    """All grid points, stacked: ``chunks`` groups of points (1: the whole grid in one
    ensemble), each trained by :func:`run_points`; ``map_fn(fn, groups)`` runs the groups
    (``map`` by default, or one Ray task per group).

    Returns arrays over the grid [len(q), len(p)]: ``loss`` [.., members], ``unigram``,
    ``bigram``, ``position`` (mean s of the module doc), ``phase`` (majority, index into
    PHASES; ``mixed`` when no strict majority of members shares one), ``predicted``
    (index), plus ``p``, ``q``, ``agreement``, ``seconds`` (per point: its share of its
    group's time) and ``member_steps_per_s`` (the whole sweep's rate).
    """
    import time
    from functools import partial

    if chunks < 1:
        raise ValueError(f"chunks must be >= 1, got {chunks}")
    points = sweep.points()
    groups = [list(g) for g in np.array_split(np.array(points, dtype=object), min(chunks, len(points)))]
    groups = [[(int(i), float(p), float(q)) for i, p, q in g] for g in groups if len(g)]
    start = time.perf_counter()
    results = [r for group in (map_fn or map)(partial(run_points, sweep), groups) for r in group]
    elapsed = time.perf_counter() - start
    shape = (len(sweep.q_values), len(sweep.p_values))
    data = summarise(np.array(sweep.p_values), np.array(sweep.q_values),
                     np.array([r.final_loss for r in results]).reshape(*shape, sweep.members))
    data["seconds"] = np.array([r.seconds for r in results]).reshape(shape)
    data["member_steps_per_s"] = np.array(len(points) * sweep.members * sweep.steps / elapsed)
    return data


def majority(phases: Sequence[str]) -> str:
    """The members' phase if a strict majority shares it, else ``mixed``."""
    best = max(PHASES, key=list(phases).count)
    return best if 2 * list(phases).count(best) > len(phases) else "mixed"


def summarise(p: np.ndarray, q: np.ndarray, loss: np.ndarray) -> dict[str, np.ndarray]:
    """Grid arrays from final losses ``loss`` [len(q), len(p), members] (see run_phase_sweep)."""
    uni = np.array([[_reference_losses(pv, qv)[0] for pv in p] for qv in q])
    bi = np.array([[_reference_losses(pv, qv)[1] for pv in p] for qv in q])
    gap = uni - bi
    position = np.where(gap >= GAP_FLOOR, (uni[..., None] - loss).mean(-1)
                        / np.where(gap > 0, gap, 1.0), np.nan)
    phase = np.array([[PHASES.index(majority([classify(v, uni[j, i], bi[j, i])
                                                for v in loss[j, i]]))
                       for i in range(len(p))] for j in range(len(q))])
    predicted = np.array([[PHASES.index(predicted_phase(pv, qv)) for pv in p] for qv in q])
    distinguishable = phase != PHASES.index("indistinguishable")
    hits = (phase == predicted) & distinguishable
    agreement = float(hits.sum() / distinguishable.sum()) if distinguishable.any() else math.nan
    return {"p": p, "q": q, "loss": loss, "unigram": uni, "bigram": bi, "position": position,
            "phase": phase, "predicted": predicted, "agreement": np.array(agreement)}
