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

Steps run side by side where they can (the GPU machine has 16 cores): the quick suite on the
device and on the CPU, one row a process; then bench and plan; then the headlines.
``--dry`` runs the same steps on the CPU at smoke sizes for the example row only (profile
``test``, a tiny bench), so CI keeps the script working on machines without a GPU.
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


def _parallel(jobs: list[tuple[str, list[str], float]], out: Path, width: int) -> list[dict]:
    with ThreadPoolExecutor(max_workers=max(1, width)) as pool:
        return list(pool.map(lambda job: _step(job[0], job[1], out, job[2]), jobs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-check", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tdcheck-gpu-check")
    parser.add_argument("--dry", action="store_true",
                        help="CPU, smoke sizes, the example row only (CI keeps the script "
                             "working without a GPU)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.dry else "cuda"
    profile = "test" if args.dry else "quick"
    rows = ["example"] if args.dry else list(HEADLINE)
    headline = ({"example": "example.end_point"} if args.dry else HEADLINE)
    start = time.perf_counter()

    # A: the CUDA tests and every row's quick suite on the device and on the CPU, in parallel
    # (the CPU reference runs on the GPU machine's own cores, one row a process)
    jobs = [("pytest-gpu", [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p",
                            "no:cacheprovider"], 150)]
    dev_tag = "cpu" if args.dry else "device"
    ref_tag = "cpu-reference" if args.dry else "cpu"
    for row in rows:
        for where, tag in ((device, dev_tag), ("cpu", ref_tag)):
            jobs.append((f"verify-{tag}-{row}", _tdcheck(
                "verify", row, "--profile", profile, "--device", where, "--out",
                str(out / f"verify-{tag}" / row), "--no-progress", "--cache-dir",
                str(out / f"cache-{tag}")), 120 if args.dry else 360))
    steps = _parallel(jobs, out, 2 if args.dry else len(jobs))
    compare: dict = {}
    for row in rows:
        try:
            compare[row] = compare_reports(
                json.loads((out / f"verify-{ref_tag}" / row / "report.json").read_text()),
                json.loads((out / f"verify-{dev_tag}" / row / "report.json").read_text()))
        except (OSError, ValueError, KeyError) as exc:
            compare[row] = {"error": f"{type(exc).__name__}: {exc}"}
    (out / "compare.json").write_text(json.dumps(compare, indent=1))

    # B: the bench up to K = 4096 and the thorough plan, side by side
    bench = ["bench", "--device", device, "--out", str(out / "bench")]
    bench += (["--members", "1", "3", "--steps", "2", "--no-memory", "--loop-members", "1"]
              if args.dry else ["--members", "1", "64", "256", "1024", "4096", "--steps", "20",
                                "--loop-members", "2"])
    plan = ["verify", *rows, "--plan", "--profile", "thorough", "--device", device, "--out",
            str(out / "plan"), "--cache-dir", str(out / f"cache-{dev_tag}")]
    steps += _parallel([("bench", _tdcheck(*bench), 60 if args.dry else 150),
                        ("plan-thorough", _tdcheck(*plan), 60 if args.dry else 150)], out, 2)

    # C: one headline claim per row at thorough size, timed (calibrates the plan)
    head_profile = "test" if args.dry else "thorough"
    steps += _parallel([(f"headline-{row}", _tdcheck(
        "verify", row, "--claim", claim, "--profile", head_profile, "--device", device,
        "--out", str(out / f"headline-{row}"), "--no-progress", "--cache-dir",
        str(out / f"cache-{dev_tag}")), 60 if args.dry else 90)
        for row, claim in headline.items()], out, 1 if args.dry else len(headline))

    summary = {"device": device, "dry": args.dry, "rows": rows,
               "seconds": round(time.perf_counter() - start, 1), "steps": steps,
               "compare": compare}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for s in steps:
        print(f"{s['step']:<34} exit {s['exit']!s:<8} {s['seconds']:>7.1f} s  {s['tail'][:80]}")
    for row, cmp in compare.items():
        if "error" in cmp:
            print(f"compare {row}: {cmp['error']}")
        else:
            print(f"compare {row}, cpu vs {device}: {cmp['claims']} claims, "
                  f"{len(cmp['verdict_differences'])} verdict differences, "
                  f"{len(cmp['number_differences'])} numbers beyond rtol {cmp['rtol']:g}")
    print(f"gpu-check: {out}/summary.json ({summary['seconds']} s)")
    broken = [s for s in steps if s["step"].startswith(("verify-", "bench", "plan"))
              and s["exit"] not in (0, 1)]
    bad = [r for r, c in compare.items() if "error" in c or c.get("verdict_differences")]
    return 1 if broken or bad else 0


if __name__ == "__main__":
    sys.exit(main())
