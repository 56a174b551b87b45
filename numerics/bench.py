"""``tdcheck bench``: the stacked trainer against the authors' way of training, honestly.

For each model (the markov and linear-attention full models at small fixed sizes, given in
``bench.json``'s ``cases``)
and each ensemble size K the same K members (init seeds ``seed + i``, data seeds
``seed + 10_000 + i``, the same steps) are trained twice:

* **loop** -- the authors' way: an ``nn.Module`` holding one member's parameters, wrapping
  the very loss function the claims train, ``torch.optim`` (AdamW for markov, SGD with
  momentum and per-member norm clipping for linear attention), members one after another.
  For large K only ``loop_members`` members are timed and the time is scaled by
  K / timed (``loop_members_timed`` in the JSON says how many were);
* **stacked** -- :func:`numerics.ensemble.train` on all K members at once.

Both timings include initialisation and data sampling and exclude a warm-up run.  The
machine's dense matmul throughput in the same dtype (``peak_gflops``) is measured by a
short probe (best of a few square ``n x n`` products).  The FLOP model of one member-step is
*counted*, not estimated: ``torch.utils.flop_counter.FlopCounterMode`` over one member's
forward and backward pass.  It counts matrix products only (mm, bmm, einsum's contractions);
elementwise work (softmax, masks, the optimiser) is left out, so ``fraction_of_peak`` is the
share of the machine's matmul rate that the model's matmuls reach, a lower bound on how busy
the machine is.  A model's folded loss may compute the same loss with fewer operations
(linear attention's works on each prompt's d x d statistics): ``gflops`` then is the rate
at which the one-member graph's FLOP are retired (its equivalent), and the bound below is
taken on the step actually run.

The roofline bound of one member-step is the larger of its FLOP over the matmul peak and
its bytes moved over the machine's memory bandwidth (``bandwidth_gbs``: best of repeated
copies of a 64 MiB tensor, bytes read plus written).  Both probes run before and after the
timed cases (``probes`` lists the four readings) and the best of each is used: a probe taken
while the machine was busy reads low and would overstate the fraction of the bound.  Both are counted on the stacked
trainer's own step (:func:`stacked_step_cost`: data sampling, loss, gradient, clipping,
optimiser; the difference of a 2-step and a 1-step run): FLOP by the flop counter as above,
bytes as each eager op's tensor inputs plus outputs (views excluded), the traffic of an
unfused execution whose operands outgrow the caches.  ``fraction_of_bound`` is that bound
times the measured member-steps per second (1 would run at the bound).

``max_member_gap`` is the largest parameter difference between loop member 0 and stacked
member 0 after training (float32): the two ways compute the same thing.

bench.json::

    {"device", "threads", "peak_gflops", "probes", "dtype", "steps", "probe_size", "models": [
        {"model", "k", "loop_s", "stacked_s", "speedup_vs_loop", "member_steps_per_s",
         "gflops", "fraction_of_peak", "loop_members_timed", "flops_per_member_step",
         "max_member_gap", "step_flops_per_member_step", "step_bytes_per_member_step",
         "bound_s_per_member_step", "bound_by", "fraction_of_bound"}],
     "bandwidth_gbs", ...}

``member_steps_per_s`` and ``gflops`` are the stacked trainer's.  ``bench.png`` beside it
plots speed-up, fraction of peak and fraction of the bound against K.  Timings on a shared machine are noisy: run
the bench on an otherwise idle one before quoting it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from numerics.ensemble import (
    OptimizerConfig,
    Params,
    StackedLoss,
    TrainConfig,
    member_generators,
    stack_members,
    train,
)

__all__ = ["BenchCase", "bench_cases", "matmul_peak_gflops", "member_memory", "member_step_flops",
           "run_bench"]

DTYPE = torch.float32
DATA_OFFSET = 10_000
CPU_MEMBER_CHUNK = 16  # members per vmapped call on a CPU: at K = 64, chunks of 4-16 ran
# 1.4-1.7x faster than one call (2 shared cores); below 16 members no chunking


@dataclass(frozen=True)
class BenchCase:
    """One model as both trainers see it.

    ``sample(generators)`` returns a stacked batch (leading member axis, one generator per
    member); ``loss(params, batch)`` is one member's loss; ``make_optimizer`` builds the
    ``torch.optim`` optimiser equal to ``optimizer`` for the loop.
    """

    name: str
    description: str
    init: Callable[[torch.Generator], Params]
    loss: Callable[[Params, Any], torch.Tensor]
    sample: Callable[[Sequence[torch.Generator]], Any]
    lr: float
    optimizer: OptimizerConfig
    make_optimizer: Callable[[list[tuple[str, nn.Parameter]]], torch.optim.Optimizer]
    clip: float | None = None
    stacked_loss: StackedLoss | None = None  # the model's member-folded loss, if it has one


def _first(batch: Any) -> Any:
    """Member 0 of a stacked batch (a tensor or a tuple of tensors)."""
    if isinstance(batch, tuple):
        return tuple(t[0] for t in batch)
    return batch[0]


def _markov_case(device: torch.device, small: bool) -> BenchCase:
    from numerics import markov as nm

    # a small full model (numerics.markov.Budget's defaults: d=4, N=64, batch 32; the quick
    # profile's runs are N=32, batch 16)
    budget = nm.Budget() if hasattr(nm, "Budget") else None
    d, n, b = (budget.d, budget.seq_len, budget.batch) if budget else (4, 64, 32)
    if small:
        d, n, b = 4, 16, 4
    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=d, seq_len=n, batch=b)
    lr = 2e-3
    # the authors' AdamW: betas (0.9, 0.95), weight decay 1e-3 outside the no-decay group
    opt = nm.authors_adamw() if hasattr(nm, "authors_adamw") else OptimizerConfig(
        "adam", betas=(0.9, 0.95), weight_decay=1e-3)
    no_decay = set(getattr(opt, "no_decay", ()))

    def make_optimizer(named: list[tuple[str, nn.Parameter]]) -> torch.optim.Optimizer:
        groups = [{"params": [p for k, p in named if k not in no_decay]},
                  {"params": [p for k, p in named if k in no_decay], "weight_decay": 0.0}]
        return torch.optim.AdamW([g for g in groups if g["params"]], lr=lr, betas=opt.betas,
                                 eps=opt.eps, weight_decay=opt.weight_decay)

    return BenchCase(
        name="markov",
        description=f"markov full model d={cfg.d}, N={cfg.seq_len}, batch {cfg.batch}, AdamW",
        init=nm.init_gaussian(cfg, dtype=DTYPE, device=device),
        loss=nm.train_loss(cfg),
        sample=lambda gens: nm.sample_chains(cfg, gens, device),
        lr=lr,
        optimizer=opt,
        make_optimizer=make_optimizer,
        stacked_loss=nm.stacked_train_loss(cfg),
    )


def _linear_attention_case(device: torch.device, small: bool) -> BenchCase:
    from numerics import linear_attention as nl

    # Setting 1 of the optimiser comparison (quick profile): d=5, n=20, 3 layers, 1000 prompts
    cfg = nl.ICLConfig(n=20, layers=3, batch=1000)
    if small:
        cfg = nl.ICLConfig(n=6, layers=2, batch=16)
    lr, momentum, clip = 0.02, 0.9, 1.0

    def sample(gens):
        if len(gens) == 1:  # the loop: the authors' one-member draw
            z, y = nl.sample_prompts(cfg, gens[0], dtype=DTYPE, device=device)
            return z[None], y[None]
        # the same draws, member by member off each generator (tested)
        return nl.sample_prompts_stacked(cfg, gens, dtype=DTYPE, device=device)

    return BenchCase(
        name="linear_attention",
        description=(f"linear attention d={cfg.d}, n={cfg.n}, L={cfg.layers}, "
                     f"batch {cfg.batch}, SGD-momentum, clip {clip}"),
        init=nl.init_params(cfg, dtype=DTYPE, device=device),
        loss=nl.prompt_loss,
        sample=sample,
        lr=lr,
        optimizer=OptimizerConfig("momentum", momentum=momentum),
        make_optimizer=lambda named: torch.optim.SGD([p for _, p in named], lr=lr,
                                                     momentum=momentum),
        clip=clip,
        stacked_loss=nl.stacked_prompt_loss(),
    )


def bench_cases(device: torch.device, small: bool = False) -> list[BenchCase]:
    """The benchmarked models; ``small`` shrinks them to smoke size (tests)."""
    return [_markov_case(device, small), _linear_attention_case(device, small)]


# ---------------------------------------------------------------------- the two trainers
class _Member(nn.Module):
    """One member as the authors write it: parameters in a module, the loss as forward."""

    def __init__(self, params: Params, loss: Callable[[Params, Any], torch.Tensor]):
        super().__init__()
        self.params = nn.ParameterDict({k: nn.Parameter(v.clone()) for k, v in params.items()})
        self._loss = loss

    def forward(self, batch: Any) -> torch.Tensor:
        return self._loss(dict(self.params.items()), batch)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_loop_member(case: BenchCase, index: int, seed: int, steps: int,
                      device: torch.device, parts: dict[str, float] | None = None) -> Params:
    """Member ``index`` trained alone with ``torch.optim``; returns its final parameters.

    ``parts``, when given, accumulates the seconds spent sampling data, in the forward and
    backward pass, and in clipping plus the optimiser step (synchronised timers: slower).
    """
    gen = member_generators(1, seed + index, device)[0]
    data = member_generators(1, seed + DATA_OFFSET + index, device)
    model = _Member(case.init(gen), case.loss)
    opt = case.make_optimizer(list(model.params.items()))
    clock = _Clock(parts, device)
    for _ in range(steps):
        batch = _first(case.sample(data))
        clock.lap("sample")
        loss = model(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clock.lap("forward_backward")
        if case.clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), case.clip)
        opt.step()
        clock.lap("optimizer")
    return {k: v.detach() for k, v in model.params.items()}


class _Clock:
    """Adds the time since the last lap to ``parts[name]`` (does nothing without parts)."""

    def __init__(self, parts: dict[str, float] | None, device: torch.device):
        self.parts, self.device = parts, device
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        if self.parts is None:
            return
        _sync(self.device)
        now = time.perf_counter()
        self.parts[name] = self.parts.get(name, 0.0) + now - self.last
        self.last = now


def train_stacked(case: BenchCase, members: int, seed: int, steps: int,
                  device: torch.device, member_chunk: int | None = None,
                  compile: bool = False) -> Params:
    """All members with :func:`numerics.ensemble.train`; returns the stacked parameters."""
    params = stack_members(case.init, member_generators(members, seed, device))
    data = member_generators(members, seed + DATA_OFFSET, device)
    config = TrainConfig(steps=steps, lr=case.lr, optimizer=case.optimizer, clip=case.clip,
                         record_every=max(1, steps), member_chunk=member_chunk,
                         compile=compile)
    loss = case.stacked_loss if case.stacked_loss is not None else case.loss
    return train(loss, params, config, lambda step: case.sample(data)).params


def _timed(fn: Callable[[], Any], device: torch.device) -> tuple[float, Any]:
    _sync(device)
    start = time.perf_counter()
    out = fn()
    _sync(device)
    return time.perf_counter() - start, out


# ---------------------------------------------------------------------- FLOPs
def member_step_flops(case: BenchCase, device: torch.device) -> int:
    """Matmul FLOPs of one member's forward + backward pass, counted by torch."""
    from torch.utils.flop_counter import FlopCounterMode

    params = case.init(member_generators(1, 0, device)[0])
    batch = _first(case.sample(member_generators(1, DATA_OFFSET, device)))
    counter = FlopCounterMode(display=False)
    with counter:
        torch.func.grad(case.loss)(params, batch)
    return int(counter.get_total_flops())


def matmul_peak_gflops(device: torch.device, size: int = 1024, dtype=DTYPE,
                       seconds: float = 0.3) -> float:
    """Dense ``size x size`` matmul throughput (GFLOP/s), best of repeated timed products."""
    a = torch.randn(size, size, dtype=dtype, device=device)
    b = torch.randn(size, size, dtype=dtype, device=device)
    a @ b  # warm-up
    best = 0.0
    spent = 0.0
    while spent < seconds:
        dt, _ = _timed(lambda: a @ b, device)
        spent += dt
        best = max(best, 2 * size**3 / max(dt, 1e-12) / 1e9)
    return best


def copy_bandwidth_gbs(device: torch.device, megabytes: int = 64, dtype=DTYPE,
                       seconds: float = 0.3) -> float:
    """Memory bandwidth (GB/s): best of repeated copies of a ``megabytes`` tensor into
    another (bytes read plus bytes written), larger than the caches of a CPU."""
    n = megabytes * 2**20 // torch.empty((), dtype=dtype).element_size()
    a = torch.randn(n, dtype=dtype, device=device)
    b = torch.empty_like(a)
    b.copy_(a)  # warm-up: pages touched
    best = 0.0
    spent = 0.0
    while spent < seconds:
        dt, _ = _timed(lambda: b.copy_(a), device)
        spent += dt
        best = max(best, 2 * a.numel() * a.element_size() / max(dt, 1e-12) / 1e9)
    return best


class _TrafficMode(torch.utils._python_dispatch.TorchDispatchMode):
    """Bytes each aten op reads and writes: its tensor inputs plus its outputs (views move
    nothing).  The traffic of an unfused (eager) execution whose operands do not stay in a
    cache between ops, the case of the benched sizes."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        from torch.utils._pytree import tree_leaves

        out = func(*args, **(kwargs or {}))
        if not getattr(func, "is_view", False):
            seen = set()
            for t in tree_leaves((args, kwargs or {}, out)):
                if isinstance(t, torch.Tensor) and id(t) not in seen:
                    seen.add(id(t))
                    self.bytes += t.numel() * t.element_size()
        return out


def stacked_step_cost(case: BenchCase, device: torch.device, members: int = 4,
                      chunk: int | None = None) -> tuple[float, float]:
    """(FLOP, bytes moved) of one member-step of the stacked trainer as the bench times it
    (data sampling, loss, gradient, clipping, optimiser): the difference between a 2-step
    and a 1-step :func:`train_stacked` of ``members`` members, divided by ``members``.
    FLOP by ``torch.utils.flop_counter`` (matrix products only), bytes by :class:`_TrafficMode`."""
    from torch.utils.flop_counter import FlopCounterMode

    def cost(steps: int) -> tuple[float, float]:
        flops = FlopCounterMode(display=False)
        with flops:
            train_stacked(case, members, 0, steps, device, chunk)
        traffic = _TrafficMode()
        with traffic:
            train_stacked(case, members, 0, steps, device, chunk)
        return float(flops.get_total_flops()), float(traffic.bytes)

    one, two = cost(1), cost(2)
    return (two[0] - one[0]) / members, (two[1] - one[1]) / members


def _resolve_chunk(chunk: int | str | None, device: torch.device, case: BenchCase) -> int | None:
    """``auto``: chunks help the vmapped path on a CPU, not a GPU nor a folded loss."""
    if chunk != "auto":
        return chunk
    return CPU_MEMBER_CHUNK if device.type == "cpu" and case.stacked_loss is None else None


# ---------------------------------------------------------------------- memory
def _peak_memory_child(model: str, members: int, steps: int, small: bool, device: str,
                       member_chunk: int | None) -> float:
    """Peak memory (bytes) of one stacked run in a fresh process: the process's peak
    resident set on a CPU, the allocator's peak on a GPU."""
    import resource

    dev = torch.device(device)
    case = next(c for c in bench_cases(dev, small) if c.name == model)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    train_stacked(case, members, 0, steps, dev, member_chunk)
    if dev.type == "cuda":
        return float(torch.cuda.max_memory_allocated(dev))
    # the process's own high-water mark; ru_maxrss would not do: Linux carries it over from
    # the parent through fork and exec, so every child reported the parent's peak
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) * 1024.0  # kB
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024.0  # KiB on Linux


def member_memory(model: str, device: torch.device, ks: tuple[int, int] = (8, 64),
                  steps: int = 3, small: bool = False, member_chunk: int | None = None,
                  budget_gib: float = 24.0) -> dict:
    """Memory per member of the stacked trainer: the slope of the peak over two ensemble sizes
    (each run in a fresh process, so the fixed cost of torch and the data cancels), and the
    largest K whose extrapolated peak fits in ``budget_gib``."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    peaks = []
    for k in ks:
        with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
            peaks.append(pool.submit(_peak_memory_child, model, k, steps, small, str(device),
                                     member_chunk).result())
    per_member = max((peaks[1] - peaks[0]) / (ks[1] - ks[0]), 1.0)
    fixed = peaks[0] - per_member * ks[0]
    return {"ks": list(ks), "peak_mb": [round(p / 2**20, 1) for p in peaks],
            "per_member_mb": _sig(per_member / 2**20),
            "max_k_in_budget": int((budget_gib * 2**30 - fixed) // per_member),
            "budget_gib": budget_gib}


# ---------------------------------------------------------------------- the bench
def _bench_case(case: BenchCase, members: Sequence[int], steps: int, loop_members: int,
                seed: int, device: torch.device, chunk: int | None,
                compile: bool) -> list[dict]:
    """The timed rows of one model; the fields that need the machine's peak and bandwidth
    are added by :func:`_add_bounds` once both probes have run."""
    chunk = _resolve_chunk(chunk, device, case)
    flops = member_step_flops(case, device)
    step_flops, step_bytes = stacked_step_cost(case, device, chunk=chunk)
    train_stacked(case, 1, seed, 1, device)  # warm-up: kernels, vmap, allocator
    train_loop_member(case, 0, seed, 1, device)
    parts: dict[str, float] = {}
    train_loop_member(case, 0, seed, steps, device, parts)
    loop_parts_ms = {name: _sig(1e3 * v / steps) for name, v in parts.items()}
    rows = []
    for k in members:
        if compile:  # compile outside the timing (torch.compile caches per shape)
            train_stacked(case, k, seed, 1, device, chunk, compile)
        stacked_s, stacked = _timed(
            lambda k=k: train_stacked(case, k, seed, steps, device, chunk, compile), device)
        timed = min(k, loop_members)
        loop_s, loop0 = _timed(lambda t=timed: [train_loop_member(case, i, seed, steps, device)
                                                for i in range(t)][0], device)
        loop_s *= k / timed
        gap = max(float((stacked[n][0] - v).abs().max()) for n, v in loop0.items())
        rows.append({
            "model": case.name, "k": k, "loop_s": round(loop_s, 6),
            "stacked_s": round(stacked_s, 6),
            "speedup_vs_loop": round(loop_s / stacked_s, 3),
            "member_steps_per_s": round(k * steps / stacked_s, 2),
            "gflops": _sig(k * steps * flops / stacked_s / 1e9),
            "loop_members_timed": timed, "flops_per_member_step": flops,
            "max_member_gap": gap, "member_chunk": chunk,
            "stacked_path": "folded" if case.stacked_loss is not None else "vmap",
            "loop_parts_ms": loop_parts_ms,
            "step_flops_per_member_step": step_flops,
            "step_bytes_per_member_step": step_bytes,
        })
    return rows


def _add_bounds(rows: list[dict], peak: float, bandwidth: float) -> None:
    """Adds each row's fraction of the matmul peak and its roofline bound (the larger of
    the step's FLOP over ``peak`` and its bytes over ``bandwidth``), in place."""
    for r in rows:
        compute_s = r["step_flops_per_member_step"] / (peak * 1e9)
        memory_s = r["step_bytes_per_member_step"] / (bandwidth * 1e9)
        bound_s = max(compute_s, memory_s)
        r["fraction_of_peak"] = _sig(r["gflops"] / peak)
        r["bound_s_per_member_step"] = _sig(bound_s)
        r["bound_by"] = "compute" if compute_s >= memory_s else "memory"
        r["fraction_of_bound"] = _sig(bound_s * r["member_steps_per_s"])


def _sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def run_bench(out: Path, device: torch.device, members: tuple[int, ...] = (1, 8, 64, 256),
              steps: int = 20, loop_members: int = 4, probe_size: int = 1024,
              small: bool = False, seed: int = 0, member_chunk: int | str | None = "auto",
              compile: bool = False, memory: bool = True) -> tuple[str, Path]:
    """Run the bench, write ``bench.json`` into ``out``; (table, json path).  The plot is
    ``figures.bench.draw_bench`` (the CLI draws it: numerics imports no figures).

    ``small`` runs the models at smoke size (the tests); the sizes otherwise are the quick
    profile's.  ``member_chunk`` is the trainer's option ("auto": CPU_MEMBER_CHUNK members
    per vmapped call on a CPU, all at once on a GPU or for a model's folded loss).
    ``memory`` adds each model's memory per member (:func:`member_memory`, 24 GiB budget).  ``compile`` times the trainer with ``torch.compile`` (compile time excluded).
    """
    if steps < 1 or not members or min(members) < 1 or loop_members < 1:
        raise ValueError("steps, members and loop_members must be >= 1")
    device = torch.device(device)
    probe_mb = 8 if small else 64
    # the probes run before and after the timed cases and the best of each is kept: a probe
    # that ran while the machine was busy reads low and would overstate the fraction of the
    # bound (a run whose bandwidth probe read 25 of about 37 GB/s put linear attention at
    # 1.01 of its bound)
    peaks = [matmul_peak_gflops(device, probe_size)]
    bandwidths = [copy_bandwidth_gbs(device, probe_mb)]
    cases = bench_cases(device, small)
    rows: list[dict] = []
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    for case in tqdm(cases, desc="bench", unit="model") if tqdm else cases:
        rows += _bench_case(case, members, steps, loop_members, seed, device,
                            member_chunk, compile)
    peaks.append(matmul_peak_gflops(device, probe_size))
    bandwidths.append(copy_bandwidth_gbs(device, probe_mb))
    peak, bandwidth = max(peaks), max(bandwidths)
    _add_bounds(rows, peak, bandwidth)
    memory_rows = {}
    if memory:
        for case in cases:
            memory_rows[case.name] = member_memory(
                case.name, device, small=small,
                member_chunk=_resolve_chunk(member_chunk, device, case))
    data = {"device": str(device), "threads": torch.get_num_threads(),
            "peak_gflops": round(peak, 3), "bandwidth_gbs": round(bandwidth, 3),
            "probes": {"peak_gflops": [round(x, 3) for x in peaks],
                       "bandwidth_gbs": [round(x, 3) for x in bandwidths]},
            "dtype": str(DTYPE).removeprefix("torch."),
            "steps": steps, "probe_size": probe_size, "member_chunk": member_chunk,
            "compile": compile,
            "cases": {c.name: c.description for c in cases}, "models": rows,
            "memory": memory_rows}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "bench.json"
    path.write_text(json.dumps(data, indent=2))
    return _table(data), path


def _table(data: dict) -> str:
    lines = [f"device {data['device']}, {data['threads']} threads, {data['dtype']}, "
             f"{data['steps']} steps per run; matmul peak {data['peak_gflops']:.1f} GFLOP/s, "
             f"copy bandwidth {data.get('bandwidth_gbs', float('nan')):.1f} GB/s; "
             f"member_chunk {data['member_chunk']}, compile {data['compile']}",
             f"{'model':<17} {'K':>5} {'loop s':>9} {'stacked s':>10} {'speedup':>8} "
             f"{'m-steps/s':>10} {'GFLOP/s':>8} {'of peak':>8} {'bound ms':>9} "
             f"{'of bound':>9}"]
    for r in data["models"]:
        scaled = "*" if r["loop_members_timed"] < r["k"] else " "
        lines.append(f"{r['model']:<17} {r['k']:>5} {r['loop_s']:>8.2f}{scaled} "
                     f"{r['stacked_s']:>10.2f} {r['speedup_vs_loop']:>8.2f} "
                     f"{r['member_steps_per_s']:>10.1f} {r['gflops']:>8.2f} "
                     f"{r['fraction_of_peak']:>8.4f} "
                     f"{1e3 * r.get('bound_s_per_member_step', float('nan')):>9.4f} "
                     f"{r.get('fraction_of_bound', float('nan')):>9.4f}")
    lines.append("* loop time scaled from the members timed (loop_members_timed)")
    for model in dict.fromkeys(r["model"] for r in data["models"]):
        row = next(r for r in data["models"] if r["model"] == model)
        parts = ", ".join(f"{k} {v:.3f} ms" for k, v in row.get("loop_parts_ms", {}).items())
        lines.append(f"{model} loop, per member-step: {parts}; stacked path "
                     f"{row.get('stacked_path', 'vmap')}")
        mem = data.get("memory", {}).get(model)
        if mem:
            lines.append(f"{model} memory: {mem['per_member_mb']:.2f} MB per member (peaks "
                         f"{mem['peak_mb']} MB at K = {mem['ks']}); largest K in "
                         f"{mem['budget_gib']:g} GiB: {mem['max_k_in_budget']}")
    return "\n".join(lines)
