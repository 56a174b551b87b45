"""``tdcheck bench``: the ensemble trainer on the markov full model, stacked vs sequential.

For each K, the same K members (seeds 0..K-1) are trained for ``steps`` Adam steps once
stacked (one vmapped step per iteration) and once one after another (K runs of one member);
the speed-up is sequential / stacked wall time.  Timings exclude a warm-up step.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from numerics import markov as nm
from numerics.ensemble import OptimizerConfig, TrainConfig, member_generators, stack_members, train

__all__ = ["run_bench"]


def _time_train(cfg: nm.MarkovConfig, members: int, seed: int, steps: int,
                device: torch.device) -> float:
    gens = member_generators(members, seed, device)
    params = stack_members(nm.init_gaussian(cfg, dtype=torch.float32, device=device), gens)
    data = member_generators(members, seed + 10_000, device)
    config = TrainConfig(steps=steps, lr=2e-3, optimizer=OptimizerConfig("adam"),
                         record_every=steps)
    loss = nm.train_loss(cfg)
    train(loss, params, TrainConfig(steps=1, lr=2e-3, optimizer=OptimizerConfig("adam")),
          lambda s: nm.sample_chains(cfg, data, device))  # warm-up
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    train(loss, params, config, lambda s: nm.sample_chains(cfg, data, device))
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def run_bench(out: Path, device: torch.device, members: tuple[int, ...] = (1, 8, 64),
              steps: int = 20) -> tuple[str, Path]:
    cfg = nm.MarkovConfig(p=0.5, q=0.8, d=4, seq_len=64, batch=32)
    rows = []
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        tqdm = None
    for k in tqdm(members, desc="bench", unit="K") if tqdm else members:
        stacked = _time_train(cfg, k, 0, steps, device)
        sequential = sum(_time_train(cfg, 1, i, steps, device) for i in range(k))
        rows.append({"members": k, "stacked_s": round(stacked, 4),
                     "sequential_s": round(sequential, 4),
                     "speedup": round(sequential / stacked, 3)})
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "bench.json"
    path.write_text(json.dumps({"device": str(device), "steps": steps,
                                "model": "markov full model d=4, N=64, batch 32, float32, Adam",
                                "ensemble": rows}, indent=2))
    lines = [f"device {device}, {steps} Adam steps per run",
             f"{'members':>8} {'stacked s':>10} {'sequential s':>13} {'speedup':>8}"]
    lines += [f"{r['members']:>8} {r['stacked_s']:>10.3f} {r['sequential_s']:>13.3f} "
              f"{r['speedup']:>8.2f}" for r in rows]
    return "\n".join(lines), path
