"""The prepared device check (``make gpu-check``): everything a lent GPU should measure, in
one command, within 10 minutes, written to one folder.

Steps (each with its own time limit, so one slow step cannot eat the others; every step's
output, exit code and seconds go to ``OUT/summary.json``):

1. ``pytest -m gpu``: the CUDA tests (float32 agreement of the trainer and the models).
2. ``tdcheck verify --profile quick --device cuda`` for every row, and the same on the CPU
   in parallel; the two reports compared verdict by verdict (outcomes, controls, positive
   controls must agree) and part by part (numbers within ``RTOL``, the float32 noise
   allowance: float32 rounding, 6e-8 relative per operation, accumulated over runs of up to
   1e4 steps and reductions over 1e3 terms, stays below 1e-3 relative for these losses).
3. ``tdcheck bench --device cuda`` up to K = 4096 members, with the fraction of peak; the
   result is kept where ``tdcheck verify --plan`` reads it.
4. One headline claim per row at ``--profile thorough``, timed (with a limit), and the
   thorough plan, to calibrate the plan against what the device did.

``--dry`` runs the same steps on the CPU at smoke sizes (profile ``test``, a tiny bench), so
CI keeps the script working on machines without a GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["HEADLINE", "RTOL", "compare_reports", "main"]

RTOL = 1e-3
HEADLINE = {
    "markov": "markov.gaussian_init_trap",
    "scan_snap": "scan_snap.fig6_table",
    "rank_increase": "rank_increase.staircase",
    "cooccurrence": "cooccurrence.loss_law",
    "linear_attention": "linear_attention.adam_beats_sgd",
}


def _tdcheck(*args: str) -> list[str]:
    return [sys.executable, "-m", "verify.cli", *args]


def _step(name: str, cmd: list[str], out: Path, limit: float) -> dict:
    start = time.perf_counter()
    log = out / f"{name}.log"
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
        code, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code = "timeout"
        text = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    log.write_text(text)
    return {"step": name, "command": " ".join(cmd), "exit": code,
            "seconds": round(time.perf_counter() - start, 1), "log": str(log),
            "tail": text.strip().splitlines()[-1] if text.strip() else ""}


def _close(a, b, rtol: float) -> bool:
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    if math.isnan(x) and math.isnan(y):
        return True
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= rtol * max(1.0, abs(x), abs(y))


def compare_reports(cpu: dict, dev: dict, rtol: float = RTOL) -> dict:
    """Verdict-by-verdict and part-by-part differences between two report dictionaries."""
    a = {c["id"]: c for c in cpu["claims"]}
    b = {c["id"]: c for c in dev["claims"]}
    verdicts, numbers = [], []
    for cid in sorted(set(a) & set(b)):
        x, y = a[cid], b[cid]
        for key in ("outcome", "control_rejected"):
            if x[key] != y[key]:
                verdicts.append(f"{cid}: {key} {x[key]} (cpu) vs {y[key]} (device)")
        px = (x.get("positive_control") or {}).get("passed")
        py = (y.get("positive_control") or {}).get("passed")
        if px != py:
            verdicts.append(f"{cid}: positive control {px} (cpu) vs {py} (device)")
        for part in x["parts"]:
            other = next((p for p in y["parts"] if p["name"] == part["name"]), None)
            if other is None:
                continue
            for k in ("observed", "error", "upper"):
                if not _close(part[k], other[k], rtol):
                    numbers.append(f"{cid} / {part['name']}.{k}: {part[k]} vs {other[k]}")
    return {"claims": len(set(a) & set(b)), "verdict_differences": verdicts,
            "number_differences": numbers, "rtol": rtol,
            "only_cpu": sorted(set(a) - set(b)), "only_device": sorted(set(b) - set(a))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-check", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tdcheck-gpu-check")
    parser.add_argument("--dry", action="store_true", help="CPU, smoke sizes (CI)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.dry else "cuda"
    profile = "test" if args.dry else "quick"
    steps: list[dict] = []
    start = time.perf_counter()

    steps.append(_step("pytest-gpu", [sys.executable, "-m", "pytest", "-q", "-m", "gpu",
                                      "-p", "no:cacheprovider"], out, 120))
    verify = {
        "verify-device": _tdcheck("verify", "--profile", profile, "--device", device,
                                  "--out", str(out / "verify-device"), "--no-progress",
                                  "--cache-dir", str(out / "cache-device")),
        "verify-cpu": _tdcheck("verify", "--profile", profile, "--device", "cpu",
                               "--out", str(out / "verify-cpu"), "--no-progress",
                               "--cache-dir", str(out / "cache-cpu")),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        steps += list(pool.map(lambda kv: _step(kv[0], kv[1], out, 330), verify.items()))
    try:
        cmp = compare_reports(json.loads((out / "verify-cpu" / "report.json").read_text()),
                              json.loads((out / "verify-device" / "report.json").read_text()))
    except (OSError, ValueError, KeyError) as exc:
        cmp = {"error": f"{type(exc).__name__}: {exc}"}
    (out / "compare.json").write_text(json.dumps(cmp, indent=1))
    bench = ["bench", "--device", device, "--out", str(out / "bench")]
    bench += (["--members", "1", "3", "--steps", "2", "--no-memory", "--loop-members", "1"]
              if args.dry else ["--members", "1", "64", "256", "1024", "4096", "--steps", "20",
                                "--loop-members", "2"])
    steps.append(_step("bench", _tdcheck(*bench), out, 120))
    head_profile = "test" if args.dry else "thorough"
    steps.append(_step("plan-thorough", _tdcheck(
        "verify", "--plan", "--profile", "thorough", "--device", device, "--out",
        str(out / "plan"), "--cache-dir", str(out / "cache-device")), out, 60))
    for paper, claim in HEADLINE.items():
        steps.append(_step(f"headline-{paper}", _tdcheck(
            "verify", paper, "--claim", claim, "--profile", head_profile, "--device", device,
            "--out", str(out / f"headline-{paper}"), "--no-progress", "--cache-dir",
            str(out / "cache-device")), out, 20 if args.dry else 45))
    summary = {"device": device, "dry": args.dry, "seconds": round(time.perf_counter() - start, 1),
               "steps": steps, "compare": cmp}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for s in steps:
        print(f"{s['step']:<28} exit {s['exit']!s:<8} {s['seconds']:>7.1f} s  {s['tail'][:90]}")
    if "error" in cmp:
        print(f"compare: {cmp['error']}")
    else:
        print(f"compare cpu vs {device}: {cmp['claims']} claims, "
              f"{len(cmp['verdict_differences'])} verdict differences, "
              f"{len(cmp['number_differences'])} numbers beyond rtol {cmp['rtol']:g}")
    print(f"gpu-check: {out}/summary.json ({summary['seconds']} s)")
    failed = [s for s in steps if s["step"] in ("verify-device", "verify-cpu", "bench")
              and s["exit"] not in (0, 1)]
    return 1 if failed or "error" in cmp or cmp.get("verdict_differences") else 0


if __name__ == "__main__":
    sys.exit(main())
