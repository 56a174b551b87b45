"""One trainer for every paper: many members stepped together with ``torch.func``.

A *member* is one training run (a seed, an initialisation, a learning rate).  Parameters of
all members are stacked along a leading axis of size K; the per-member loss is called
functionally and ``vmap``-ped over that axis, so K runs cost one batched run.  Member i's
initialisation and data use their own ``torch.Generator`` seeded ``seed + i``, so member i
equals the unbatched run with that seed (tested).

Conventions, shared by every row: time is gradient-flow time ``t = sum of lr over steps``
(``lr * step`` for a constant rate); the optimisers are written out over stacked tensors (GD/SGD,
heavy-ball momentum as in ``torch.optim.SGD``, Adam / AdamW with decoupled weight decay);
gradient clipping is per member; a non-finite loss stops training with
:class:`DivergenceError` naming member and step.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import torch
from torch.func import grad_and_value, vmap

from numerics import checkpoint as ckpt
from numerics.cache import PROBE, Probed

__all__ = [
    "SHOW_PROGRESS",
    "DivergenceError",
    "OptimizerConfig",
    "Params",
    "StackedLoss",
    "TrainConfig",
    "Trajectory",
    "member_generators",
    "stack_members",
    "train",
]

Params = dict[str, torch.Tensor]

# glibc's malloc raises its mmap threshold after large frees, so a long run of many
# same-sized ~1 MB tensors fragments the heap: resident memory then grows with the step count
# (measured: 4.5 MB per step, 1.8 GB after 300 steps of the cooccurrence run, 0.45 GB with a
# trim every few steps).  Returning freed pages to the OS every TRIM_EVERY steps bounds it.
TRIM_EVERY = 32


@functools.cache
def _malloc_trim() -> Callable[[], object] | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        return lambda: libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
        return None


def _release_freed_memory() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim()


# Set (scoped, with ``SHOW_PROGRESS.set`` / ``reset``) by the claim runner when the user asked
# for progress: every training run inside that claim then shows a step bar.
SHOW_PROGRESS: ContextVar[bool] = ContextVar("tdcheck_show_progress", default=False)


class DivergenceError(FloatingPointError):
    """A member's loss became NaN or infinite."""


@dataclass(frozen=True)
class StackedLoss:
    """A loss written over ALL members at once: ``fn(params, batch) -> [K]`` losses.

    The default path vmaps a one-member loss; that turns every op into a batched one but
    keeps the op graph of one member, and ``vmap`` falls back to the unfused reference
    kernel for some ops (``scaled_dot_product_attention``).  A model that folds the member
    axis into its own batch axis by hand can call fused kernels over all members in one go;
    the trainer then takes gradients with ordinary autograd of ``fn(...).sum()``, which is
    each member's own gradient because members share no parameters.  The result equals the
    vmapped path up to float rounding (tested for the markov model in float64).
    """

    fn: Callable[..., torch.Tensor]


@dataclass(frozen=True)
class OptimizerConfig:
    """``sgd`` (plain GD when the loss is exact), ``momentum`` (heavy ball), ``adam``.

    ``weight_decay`` is decoupled (AdamW) for ``adam`` and added to the gradient otherwise.
    ``no_decay`` names parameters that get no weight decay (the usual AdamW parameter
    groups: biases, embeddings); every other parameter is decayed.
    """

    name: Literal["sgd", "momentum", "adam"] = "sgd"
    momentum: float = 0.9
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    no_decay: tuple[str, ...] = ()

    def for_param(self, name: str) -> OptimizerConfig:
        """This config as applied to parameter ``name`` (weight decay 0 if in ``no_decay``)."""
        if self.weight_decay and name in self.no_decay:
            return replace(self, weight_decay=0.0, no_decay=())
        return self

    def __post_init__(self) -> None:
        if self.name not in ("sgd", "momentum", "adam"):
            raise ValueError(f"optimizer must be sgd, momentum or adam, got {self.name!r}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must lie in [0, 1), got {self.momentum}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")


@dataclass(frozen=True)
class TrainConfig:
    """Steps, per-member learning rates, optimiser, and where to record.

    ``lr`` is one rate for all members or one per member; so is ``optimizer`` (a tuple
    steps e.g. SGD-momentum and Adam members side by side in one vmapped run).
    ``schedule(step)`` multiplies the rate (default 1).  Observables and the loss are recorded before the update at every
    ``record_every``-th step and after the last one.  ``clip`` caps each member's gradient
    norm separately.  ``member_chunk`` computes the vmapped gradient over that many members
    at a time (None: all at once): results are unchanged (bit for bit for the vmapped path in
    the tests; to float rounding for a :class:`StackedLoss`, 4e-15 in float64), memory is
    capped, and on 2 CPU cores chunks of 4-16 made a K = 64 step of the bench models
    1.4-1.7x faster than one call over all members (no gain at K = 16; numerics/bench.py).
    A one-member loss is vmapped for the forward pass and differentiated by autograd of the
    summed member losses; ``vmap_grad=True`` takes ``vmap(grad_and_value(loss))`` instead
    (the same gradients to float rounding, but a fixed cost of several milliseconds per
    step: 5-10 ms against 0.4 ms for 32 members of a two-parameter model on 2 CPU cores).
    ``compile`` runs the vmapped gradient through ``torch.compile`` (optional: on 2 CPU
    cores it made a step 2-3x faster but took 1-2.5 minutes to compile, so it pays only for
    long runs; float32 results differ from eager ones by rounding).
    """

    steps: int
    lr: float | tuple[float, ...]
    optimizer: OptimizerConfig | tuple[OptimizerConfig, ...] = field(default_factory=OptimizerConfig)
    record_every: int = 1
    schedule: Callable[[int], float] | None = None
    clip: float | None = None
    progress: bool = False
    description: str = "train"
    member_chunk: int | None = None
    compile: bool = False
    vmap_grad: bool = False

    def __post_init__(self) -> None:
        if self.member_chunk is not None and self.member_chunk < 1:
            raise ValueError(f"member_chunk must be >= 1, got {self.member_chunk}")
        if self.steps < 0:
            raise ValueError(f"steps must be >= 0, got {self.steps}")
        if self.record_every < 1:
            raise ValueError(f"record_every must be >= 1, got {self.record_every}")
        rates = self.lr if isinstance(self.lr, tuple) else (self.lr,)
        if not rates or any(not (r > 0) for r in rates):
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.clip is not None and not self.clip > 0:
            raise ValueError(f"clip must be > 0, got {self.clip}")
        if isinstance(self.optimizer, tuple) and not all(
            isinstance(o, OptimizerConfig) for o in self.optimizer
        ):
            raise ValueError("optimizer must be an OptimizerConfig or a tuple of them")


@dataclass(frozen=True)
class Trajectory:
    """Recorded training: ``time`` [K, T] in gradient-flow units, ``loss`` [K, T].

    ``grad_sq[name]`` [K, steps] is the squared norm of each member's gradient for that
    parameter at every step (before clipping), e.g. for exact discrete conservation laws.
    """

    steps: torch.Tensor
    time: torch.Tensor
    loss: torch.Tensor
    observables: Mapping[str, torch.Tensor]
    params: Params
    grad_sq: Mapping[str, torch.Tensor] = field(default_factory=dict)

    @property
    def members(self) -> int:
        return int(self.loss.shape[0])


def member_generators(
    members: int, seed: int, device: torch.device | str = "cpu"
) -> list[torch.Generator]:
    """One generator per member, member i seeded ``seed + i``."""
    if members < 1:
        raise ValueError(f"members must be >= 1, got {members}")
    gens = []
    for i in range(members):
        g = torch.Generator(device=device)
        g.manual_seed(int(seed) + i)
        gens.append(g)
    return gens


def stack_members(
    init: Callable[[torch.Generator], Params], generators: Sequence[torch.Generator]
) -> Params:
    """Initialise each member with its generator and stack along a new leading axis."""
    inits = [init(g) for g in generators]
    return {k: torch.stack([p[k] for p in inits]) for k in inits[0]}


def _rates(config: TrainConfig, members: int, like: torch.Tensor) -> torch.Tensor:
    rates = config.lr if isinstance(config.lr, tuple) else (config.lr,) * members
    if len(rates) != members:
        raise ValueError(f"lr has {len(rates)} entries for {members} members")
    return torch.tensor(rates, dtype=like.dtype, device=like.device)


def _groups(config: TrainConfig, members: int, device) -> list[tuple[OptimizerConfig, torch.Tensor]]:
    """Members grouped by optimiser: (config, member indices) for each distinct config."""
    opts = config.optimizer if isinstance(config.optimizer, tuple) else (config.optimizer,) * members
    if len(opts) != members:
        raise ValueError(f"optimizer has {len(opts)} entries for {members} members")
    groups: dict[OptimizerConfig, list[int]] = {}
    for i, o in enumerate(opts):
        groups.setdefault(o, []).append(i)
    return [(o, torch.tensor(idx, device=device)) for o, idx in groups.items()]


def _step_group(opt: OptimizerConfig, p: torch.Tensor, g: torch.Tensor, s: dict,
                scale: torch.Tensor, step: int) -> None:
    """One optimiser update, in place, of a (sub-)stack of members."""
    if opt.name == "adam":
        b1, b2 = opt.betas
        s["m"].mul_(b1).add_(g, alpha=1 - b1)
        s["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
        m_hat = s["m"] / (1 - b1 ** (step + 1))
        v_hat = s["v"] / (1 - b2 ** (step + 1))
        if opt.weight_decay:
            p.mul_(1 - _bcast(scale, p) * opt.weight_decay)
        p.sub_(_bcast(scale, p) * m_hat / (v_hat.sqrt() + opt.eps))
        return
    if opt.weight_decay:
        g = g + opt.weight_decay * p
    if opt.name == "momentum":
        s["m"].mul_(opt.momentum).add_(g)
        g = s["m"]
    p.sub_(_bcast(scale, p) * g)


def _chunked(gradient: Callable, chunk: int, members: int) -> Callable:
    """``gradient`` applied to ``chunk`` members at a time, outputs concatenated."""
    from torch.utils._pytree import tree_map

    def run(*args):
        outs = [gradient(*tree_map(lambda t, s=s: t[s:s + chunk], args))
                for s in range(0, members, chunk)]
        return tree_map(lambda *parts: torch.cat(parts), *outs)

    return run


def _stacked_gradient(fn: Callable[..., torch.Tensor]) -> Callable:
    """(grads, losses [K]) of a member-stacked loss by autograd of the summed losses."""

    def run(params: Params, *batch: Any) -> tuple[Params, torch.Tensor]:
        leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        with torch.enable_grad():
            losses = fn(leaves, *batch)
            grads = torch.autograd.grad(losses.sum(), list(leaves.values()), allow_unused=True)
        # a parameter the loss does not use has gradient 0 (as under vmap(grad))
        grads = [torch.zeros_like(v) if g is None else g
                 for v, g in zip(leaves.values(), grads, strict=True)]
        return dict(zip(leaves, grads, strict=True)), losses.detach()

    return run


def _bcast(v: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return v.reshape((-1,) + (1,) * (t.ndim - 1))


def _probed(gradient: Callable, params: Params, batch_fn: Callable[[int], Any] | None,
            members: int, steps: int) -> Probed:
    """:class:`Probed` with the FLOP of one stacked gradient step (:mod:`numerics.flops`),
    counted on fake tensors (shapes only: a paper-size step costs nothing to count)."""
    from numerics.flops import count_flops

    batch = batch_fn(0) if batch_fn is not None else None
    counted = count_flops(lambda: gradient(params, batch) if batch_fn is not None
                          else gradient(params), fake=PROBE.get() != "outer")
    return Probed(float(members * steps), float(counted.total) * steps)


class _Checkpoint:
    """The trainer's side of :mod:`numerics.checkpoint`: what one training stores and
    restores (its slot, file and the run's fingerprint)."""

    def __init__(self, slot: ckpt.Slot, path, meta: dict, steps: int):
        self.slot, self.path, self.meta, self.steps = slot, path, meta, steps
        # wall seconds of training: those of earlier sessions (restored) + this one's
        self.wall_before, self.started = 0.0, time.monotonic()

    @classmethod
    def open(cls, config: TrainConfig, params: Params, batch_fn, generators, observables
             ) -> _Checkpoint | None:
        slot = ckpt.CHECKPOINT.get()
        if slot is None or (batch_fn is not None and not generators):
            return None
        start = hashlib.sha256()  # the training's starting point: parameters and generators
        for k in sorted(params):
            start.update(k.encode())
            start.update(params[k].detach().cpu().contiguous().numpy().tobytes())
        for g in generators:
            start.update(g.get_state().numpy().tobytes())
        shape = {"steps": config.steps, "record_every": config.record_every,
                 "params": {k: [list(v.shape), str(v.dtype)] for k, v in params.items()},
                 "observables": sorted(observables), "generators": len(generators),
                 "batched": batch_fn is not None, "description": config.description,
                 "lr": repr(config.lr), "optimizer": repr(config.optimizer),
                 "clip": config.clip, "member_chunk": config.member_chunk,
                 "schedule": config.schedule is not None, "start": start.hexdigest()}
        return cls(slot, slot.next_path(), {"fingerprint": ckpt.fingerprint(shape)},
                   config.steps)

    def save(self, step: int, params: Params, state: dict, elapsed: torch.Tensor,
             generators, rec_steps: list, rec_time: list, rec_loss: list, rec_obs: dict,
             grad_sq: dict) -> None:
        def a(t: torch.Tensor):
            return t.detach().cpu().numpy()

        arrays = {"step": np.asarray(step), "elapsed": a(elapsed),
                  "rec_steps": np.asarray(rec_steps, dtype=np.int64),
                  "rec_time": a(torch.stack(rec_time)), "rec_loss": a(torch.stack(rec_loss)),
                  # torch's global generator too, in case a loss or observable draws from it
                  "rng": torch.get_rng_state().numpy()}
        arrays.update({f"p:{k}": a(v) for k, v in params.items()})
        arrays.update({f"s:{k}:{n}": a(t) for k, slots in state.items() for n, t in slots.items()})
        arrays.update({f"o:{k}": a(torch.stack(v)) for k, v in rec_obs.items() if v})
        arrays.update({f"g:{k}": a(torch.stack(v)) for k, v in grad_sq.items() if v})
        arrays.update({f"r:{i}": g.get_state().numpy() for i, g in enumerate(generators)})
        wall = self.wall_before + time.monotonic() - self.started
        ckpt.write(self.path, arrays, {**self.meta, "step": step, "steps": self.steps,
                                       "wall": wall})

    def restore(self, params: Params, state: dict, generators, observables) -> dict | None:
        """Load the checkpoint into ``params``, ``state`` and ``generators`` (in place) and
        return the rest; None (nothing touched) when there is none for this run or it does
        not fit it (every array's shape and dtype and the records' lengths are checked
        before anything is copied)."""
        found = ckpt.read(self.path, self.meta)
        if found is None:
            return None
        arr = found[1]
        ref = next(iter(params.values()))
        members = int(ref.shape[0])
        like = {f"p:{k}": v for k, v in params.items()}
        like.update({f"s:{k}:{n}": t for k, slots in state.items() for n, t in slots.items()})
        try:
            step = int(arr["step"])
            n_rec = len(arr["rec_steps"])
            fits = (
                0 < step < self.steps
                and all(k in arr and tuple(arr[k].shape) == tuple(v.shape)
                        and torch.from_numpy(np.ascontiguousarray(arr[k])).dtype == v.dtype
                        for k, v in like.items())
                and tuple(arr["elapsed"].shape) == (members,)
                and arr["rec_time"].shape[:2] == (n_rec, members)
                and arr["rec_loss"].shape[:2] == (n_rec, members)
                and all(arr.get(f"o:{k}", np.empty((0,))).shape[:2] == (n_rec, members)
                        for k in observables)
                and all(arr.get(f"g:{k}", np.empty((0,))).shape[:2] == (step, members)
                        for k in params)
                and all(f"r:{i}" in arr and arr[f"r:{i}"].dtype == np.uint8
                        for i in range(len(generators)))
                and "rng" in arr and arr["rng"].dtype == np.uint8)
        except (KeyError, TypeError, ValueError, IndexError):
            return None
        if not fits:
            return None

        def t(x: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(x)).to(ref.device).clone()

        with torch.no_grad():
            for k, v in like.items():
                v.copy_(t(arr[k]))
        for i, g in enumerate(generators):
            g.set_state(torch.from_numpy(np.ascontiguousarray(arr[f"r:{i}"])).clone())
        torch.set_rng_state(torch.from_numpy(np.ascontiguousarray(arr["rng"])).clone())
        wall = found[0].get("wall")
        self.wall_before = float(wall) if isinstance(wall, (int, float)) else 0.0
        self.started = time.monotonic()
        return {
            "step": step, "elapsed": t(arr["elapsed"]),
            "rec_steps": [int(x) for x in arr["rec_steps"]],
            "rec_time": list(t(arr["rec_time"]).unbind(0)),
            "rec_loss": list(t(arr["rec_loss"]).unbind(0)),
            "rec_obs": {k: list(t(arr[f"o:{k}"]).unbind(0)) for k in observables},
            "grad_sq": {k: list(t(arr[f"g:{k}"]).unbind(0)) for k in params},
        }


def train(
    loss_fn: Callable[..., torch.Tensor],
    params: Params,
    config: TrainConfig,
    batch_fn: Callable[[int], Any] | None = None,
    observables: Mapping[str, Callable[[Params], torch.Tensor]] | None = None,
    generators: Sequence[torch.Generator] = (),
) -> Trajectory:
    """Train K stacked members with one vmapped gradient per step.

    ``loss_fn(params, batch)`` (or ``loss_fn(params)`` when ``batch_fn`` is None) is the
    loss of ONE member, or a :class:`StackedLoss` over all members; ``batch_fn(step)`` returns that step's data with a leading K axis.
    ``observables`` map one member's parameters to a tensor; they are recorded on the grid.
    ``generators``: every generator ``batch_fn`` draws from.  Inside a computing cached
    run (:mod:`numerics.checkpoint`) the trainer then writes its whole state, theirs
    included, every so often and resumes from it when the run is asked for again; a run
    with a ``batch_fn`` and no declared generators is not checkpointed.
    """
    observables = dict(observables or {})
    params = {k: v.detach().clone() for k, v in params.items()}
    members = int(next(iter(params.values())).shape[0])
    ref = next(iter(params.values()))
    lr = _rates(config, members, ref)
    groups = _groups(config, members, ref.device)
    # optimiser state only where an optimiser needs it: m for momentum and Adam, v for Adam
    # (at 16 000 momentum members an unused v held 13.7 GiB in scan_snap's Fig. 6 panel 10)
    names = {o.name for o, _ in groups}
    slots = [s for s, needed in (("m", names & {"momentum", "adam"}), ("v", "adam" in names))
             if needed]
    state: dict[str, dict[str, torch.Tensor]] = {
        k: {s: torch.zeros_like(v) for s in slots} for k, v in params.items()
    }
    if isinstance(loss_fn, StackedLoss):
        gradient = _stacked_gradient(torch.compile(loss_fn.fn) if config.compile else loss_fn.fn)
    elif config.vmap_grad:
        gradient = vmap(grad_and_value(loss_fn), in_dims=(0, 0) if batch_fn is not None else 0)
        if config.compile:
            gradient = torch.compile(gradient)
    else:
        # the per-member loss vmapped for the forward pass only, differentiated by autograd of
        # the summed losses: each member's own gradient (members share no parameters), at a
        # fraction of vmap(grad)'s fixed cost per step (numerics/bench.py, README)
        forward = vmap(loss_fn, in_dims=(0, 0) if batch_fn is not None else 0)
        gradient = _stacked_gradient(torch.compile(forward) if config.compile else forward)
    if config.member_chunk is not None and config.member_chunk < members:
        gradient = _chunked(gradient, config.member_chunk, members)
    member_obs = {name: vmap(fn) for name, fn in observables.items()}

    rec_steps, rec_time, rec_loss = [], [], []
    grad_sq: dict[str, list[torch.Tensor]] = {k: [] for k in params}
    rec_obs: dict[str, list[torch.Tensor]] = {name: [] for name in observables}
    elapsed = torch.zeros(members, dtype=ref.dtype, device=ref.device)

    def record(step: int, loss: torch.Tensor) -> None:
        rec_steps.append(step)
        rec_time.append(elapsed.clone())
        rec_loss.append(loss.detach().clone())
        with torch.no_grad():
            for name, fn in member_obs.items():
                rec_obs[name].append(fn(params).detach().clone())

    if PROBE.get():  # tdcheck verify --plan: count one stacked step's FLOP, train nothing
        raise _probed(gradient, params, batch_fn, members, config.steps)
    saver = _Checkpoint.open(config, params, batch_fn, generators, list(observables))
    start, saved_at = 0, 0.0
    if saver is not None:
        restored = saver.restore(params, state, generators, list(observables))
        if restored is not None:
            start, elapsed = restored["step"], restored["elapsed"]
            rec_steps.extend(restored["rec_steps"])
            rec_time.extend(restored["rec_time"])
            rec_loss.extend(restored["rec_loss"])
            for name, rows in restored["rec_obs"].items():
                rec_obs[name].extend(rows)
            for name, rows in restored["grad_sq"].items():
                grad_sq[name].extend(rows)
        saved_at = time.monotonic()
    iterator = range(start, config.steps + 1)
    if config.progress or SHOW_PROGRESS.get():
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc=config.description, leave=False, unit="step",
                        initial=start, total=config.steps + 1)
    for step in iterator:
        if saver is not None and step < config.steps and saver.slot.due(step, start, saved_at):
            saver.save(step, params, state, elapsed, generators, rec_steps, rec_time,
                       rec_loss, rec_obs, grad_sq)
            saved_at = time.monotonic()
        batch = batch_fn(step) if batch_fn is not None else None
        grads, loss = gradient(params, batch) if batch_fn is not None else gradient(params)
        finite = torch.isfinite(loss)
        if not bool(finite.all()):
            k = int((~finite).nonzero()[0, 0])
            if saver is not None:  # deterministic: a resumed run would diverge again
                saver.slot.clear()
            raise DivergenceError(
                f"member {k} diverged at step {step}: loss = {float(loss[k])} "
                f"(lr = {float(lr[k])}); lower the learning rate"
            )
        if step % config.record_every == 0 or step == config.steps:
            record(step, loss)
        if step == config.steps:
            break
        if step % TRIM_EVERY == TRIM_EVERY - 1 and next(iter(params.values())).device.type == "cpu":
            _release_freed_memory()
        for k, g in grads.items():
            grad_sq[k].append(g.detach().reshape(members, -1).pow(2).sum(1))
        scale = lr * (config.schedule(step) if config.schedule is not None else 1.0)
        elapsed = elapsed + scale
        if config.clip is not None:
            sq = sum(g.reshape(members, -1).pow(2).sum(1) for g in grads.values())
            factor = torch.clamp(config.clip / (sq.sqrt() + 1e-12), max=1.0)
            grads = {k: g * _bcast(factor, g) for k, g in grads.items()}
        with torch.no_grad():
            for k, p in params.items():
                if len(groups) == 1:
                    _step_group(groups[0][0].for_param(k), p, grads[k], state[k], scale, step)
                    continue
                for opt, idx in groups:
                    sub, sub_state = p[idx], {n: t[idx] for n, t in state[k].items()}
                    _step_group(opt.for_param(k), sub, grads[k][idx], sub_state, scale[idx], step)
                    p[idx] = sub
                    for n, t in sub_state.items():
                        state[k][n][idx] = t
    return Trajectory(
        steps=torch.tensor(rec_steps),
        time=torch.stack(rec_time, dim=1),
        loss=torch.stack(rec_loss, dim=1),
        observables={k: torch.stack(v, dim=1) for k, v in rec_obs.items()},
        params=params,
        grad_sq={k: torch.stack(v, dim=1) if v else torch.zeros(members, 0) for k, v in grad_sq.items()},
    )
