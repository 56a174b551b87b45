"""``tdcheck verify --plan``: what a run would train and how long it would take, untrained.

For each claim, :func:`verify.runner.plan_claim` lists the runs its examples and positive
control ask for (member-steps and FLOP from each run function's ``cost=``, or members x
steps from its config), skipping runs already in the cache, so a stopped run's plan shows
what is left, and counting a run that several claims ask for once (the cache trains it once).  Time comes from measured throughput on the device:

1. where ``tdcheck bench`` measured the model of the run's row (``bench-<device>.json`` in
   the cache folder, written by every bench run): the run's FLOP / that model's sustained
   FLOP rate at the bench's largest member count, so that a run at another size (markov at
   the paper's N = 1024, the bench's N = 64) is scaled by its FLOP; a run with no FLOP count,
   its member-steps / that model's stacked member-step rate;
2. else FLOP / the bench's sustained FLOP rate on that device (the median over its models
   at the largest member count);
3. else, with no bench for the device, FLOP / (nominal peak x the fraction of peak the CPU
   bench measured), stated as an assumption; ``--plan-rate`` overrides it.

A run stopped part-way (a ``--resume`` campaign's checkpoint) is costed at the wall rate its
own training measured: the checkpoint's wall seconds / the share of steps done x the share
left (training only: what the check computes after training is not in it).  The bench's rate
can be far off for such a run (another size, thread count and load: the linear-attention
comparison's plan said 25.4 min where one thread under load trained at about 2.9 ms per
member-step, 2.3 h).

A run whose cost is unknown is listed as such, never guessed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from numerics.cache import default_cache_dir

__all__ = ["NOMINAL_PEAK_FLOPS", "Throughput", "bench_path", "plan_report", "throughput"]

# Nominal dense float32 peaks (vendor figures, no tensor cores), used only when no bench was
# measured on the device: the estimate then says so.
NOMINAL_PEAK_FLOPS = {"H200": 67e12, "H100": 67e12, "A100": 19.5e12}


def bench_path(device: str) -> Path:
    """Where ``tdcheck bench`` keeps its last result for ``device`` (``cpu``, ``cuda:...``)."""
    safe = "".join(ch if ch.isalnum() else "_" for ch in device)
    return default_cache_dir() / f"bench-{safe}.json"


@dataclass(frozen=True)
class Throughput:
    """Member-step rates per bench model and a sustained FLOP rate, with their source."""

    member_steps_per_s: Mapping[str, float]
    flops_per_s: float | None
    source: str
    flops_by_model: Mapping[str, float] = field(default_factory=dict)


def _largest_k_rows(data: Mapping) -> dict[str, Mapping]:
    best: dict[str, Mapping] = {}
    for r in data.get("models", []):
        if r["model"] not in best or r["k"] > best[r["model"]]["k"]:
            best[r["model"]] = r
    return best


def throughput(device: str, rate: float | None = None) -> Throughput:
    """The throughput model for ``device`` (see the module docstring for the order)."""
    if rate is not None:
        return Throughput({}, rate, f"--plan-rate {rate:g} FLOP/s (given)")
    path = bench_path(device)
    if path.exists():
        data = json.loads(path.read_text())
        rows = _largest_k_rows(data)
        gflops = sorted(r["gflops"] for r in rows.values())
        median = gflops[len(gflops) // 2] * 1e9 if gflops else None
        return Throughput({m: r["member_steps_per_s"] for m, r in rows.items()}, median,
                          f"tdcheck bench on {data.get('device', device)} ({path})",
                          {m: r["gflops"] * 1e9 for m, r in rows.items() if r.get("gflops")})
    cpu = bench_path("cpu")
    if device.startswith("cuda"):
        name = ""
        try:
            import torch

            name = torch.cuda.get_device_name(device) if torch.cuda.is_available() else ""
        except Exception:  # no CUDA here: plan for the named target
            name = ""
        peak = next((v for k, v in NOMINAL_PEAK_FLOPS.items() if k in name), NOMINAL_PEAK_FLOPS["H200"])
        fraction = None
        if cpu.exists():
            rows = _largest_k_rows(json.loads(cpu.read_text()))
            fr = sorted(r["fraction_of_peak"] for r in rows.values())
            fraction = fr[len(fr) // 2] if fr else None
        if fraction is None:
            return Throughput({}, None, "no bench on this device and none on CPU: run "
                                        "`tdcheck bench` (FLOP rate unknown)")
        return Throughput({}, peak * fraction,
                          f"assumed: nominal float32 peak {peak:.3g} FLOP/s of "
                          f"{name or 'an H200'} x the fraction of peak the CPU bench "
                          f"measured ({fraction:.3g}); no GPU bench yet")
    return Throughput({}, None, "no bench on this device: run `tdcheck bench`")


def _seconds(run, tp: Throughput) -> float | None:
    if getattr(run, "measured_seconds", None) is not None:  # its own checkpointed rate
        return run.measured_seconds
    model = run.tag.split(".", 1)[0]
    if run.flops is not None and model in tp.flops_by_model:
        return run.flops / tp.flops_by_model[model]
    if run.member_steps is not None and model in tp.member_steps_per_s and run.flops is None:
        return run.member_steps / tp.member_steps_per_s[model]
    if run.flops is not None and tp.flops_per_s:
        return run.flops / tp.flops_per_s
    if run.member_steps is not None and model in tp.member_steps_per_s:
        return run.member_steps / tp.member_steps_per_s[model]
    return None


def _new_runs(runs: Sequence, seen: set, weights: Sequence[float] | None = None
              ) -> tuple[list, int, list]:
    """(the uncached runs of ``runs`` not in ``seen``, how many were, the weight of each
    returned run), adding their keys to ``seen``: a run two claims (or two examples) ask for
    is trained once, so it is counted once, by the first claim that asks for it.  A run's
    weight (default 1) is how many runs it stands for (``ClaimPlan.weight``: a probed drawn
    example stands for those drawn and not run); a shared run of weight w is returned with
    weight w - 1 (the examples it stands for are other runs)."""
    new, shared, kept = [], 0, []
    for i, r in enumerate(runs):
        if r.cached:
            continue
        key = r.key or id(r)
        weight = 1.0 if weights is None else float(weights[i])
        if key in seen:
            shared += 1
            if weight > 1:  # the examples it stands for, drawn and not run, are not shared
                new.append(r)
                kept.append(weight - 1)
            continue
        seen.add(key)
        new.append(r)
        kept.append(weight)
    return new, shared, kept


def plan_report(plans: Sequence, tp: Throughput, profile: str, device: str) -> tuple[str, dict]:
    """(terminal table, plan.json dictionary) for a list of ``ClaimPlan``.

    Runs are counted once: a run already counted for an earlier claim (or example) in
    ``plans`` is listed as shared, at no cost (the run cache trains it once)."""
    rows, total, unknown, seen = [], 0.0, 0, set()
    for p in plans:
        weight = getattr(p, "weight", None)
        todo, shared, w = _new_runs(p.runs, seen,
                                    None if weight is None else [weight(i) for i in
                                                                 range(len(p.runs))])
        secs = [_seconds(r, tp) for r in todo]
        known = [s * wi for s, wi in zip(secs, w, strict=True) if s is not None]
        missing = len(secs) - len(known)
        unknown += missing
        t = float(sum(known))
        total += t
        flops = (None if any(r.flops is None for r in todo)
                 else float(sum(r.flops * wi for r, wi in zip(todo, w, strict=True))))
        rows.append({"claim": p.claim.id, "cost": p.claim.cost, "examples": p.examples,
                     "measured_runs": sum(1 for r in todo
                                          if getattr(r, "measured_seconds", None) is not None),
                     "drawn": getattr(p, "drawn", 0),
                     "drawn_probed": getattr(p, "drawn_probed", 0),
                     "runs": len(todo), "shared_runs": shared,
                     "unknown_cost_tags": sorted({r.tag for r, s in zip(todo, secs,
                                                                        strict=True)
                                                  if s is None}),
                     "cached_runs": sum(1 for r in p.runs if r.cached),
                     "member_steps": float(sum((r.member_steps or 0) * wi
                                               for r, wi in zip(todo, w, strict=True))),
                     "flops": flops, "seconds": t,
                     "runs_of_unknown_cost": missing, "error": p.error})
    lines = [f"plan: profile {profile}, device {device}; throughput from {tp.source}",
             f"{'claim':<44} {'ex':>3} {'runs':>4} {'shared':>6} {'member-steps':>13} "
             f"{'FLOP':>10} {'est.':>9}"]
    for r in rows:
        flops = "?" if r["flops"] is None else f"{r['flops']:.2e}"
        est = _hms(r["seconds"]) + ("+?" if r["runs_of_unknown_cost"] else "")
        if r["cost"] == "fast":
            est = "fast"
        lines.append(f"{r['claim']:<44} {r['examples']:>3} {r['runs']:>4} {r['shared_runs']:>6} "
                     f"{r['member_steps']:>13.3g} {flops:>10} {est:>9}"
                     + ("  (rest of a checkpointed run at its measured rate)"
                        if r["measured_runs"] else "")
                     + (f"  ({r['error']})" if r["error"] else ""))
    tags = sorted({t for r in rows for t in r["unknown_cost_tags"]})
    bounded = [r for r in rows if r["drawn_probed"] < r["drawn"]]
    if bounded:
        lines.append(f"{len(bounded)} claims: of their drawn examples only the first "
                     f"{bounded[0]['drawn_probed']} run, the others costed at their cost")
    lines.append(f"total: {_hms(total)}" + (f" plus {unknown} runs of unknown cost "
                                            f"({', '.join(tags)})" if unknown
                                            else "") + "; runs shared between claims counted "
                 "once; an example is counted up to its first run not in the cache (a lower bound where a "
                 "check asks for several in turn); fast claims (symbolic and ODE checks) not "
                 "planned; nothing was trained")
    data = {"profile": profile, "device": device, "throughput": tp.source, "claims": rows,
            "total_seconds": total, "runs_of_unknown_cost": unknown,
            "shared_runs": sum(r["shared_runs"] for r in rows)}
    return "\n".join(lines), data


def _hms(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.2f}h"
