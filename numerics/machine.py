"""What machine computed a run: the facts that can change its float rounding.

Long float32 training amplifies rounding: two runs of the same code, seed and thread count
can part by tens of per cent in a late statistic when only the BLAS kernel's instruction
set differs (linear_attention's condition_number_ratio notes give the measurement).  So a
stored run (:mod:`numerics.store`) and a report (:func:`verify.report.metadata`) say where
they were made, and a difference between two machines' verdicts can be traced to it.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["facts"]

#: Environment variables that choose a numerical library's kernels (and so its rounding).
KERNEL_ENV = ("MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "ATEN_CPU_CAPABILITY",
              "OMP_NUM_THREADS", "TDCHECK_THREADS")


#: CPU flags that decide which kernels a BLAS (MKL, OpenBLAS, oneDNN) dispatches to.
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16",
              "avx512_fp16", "amx_tile", "amx_bf16")


def _cpuinfo(field: str) -> str | None:
    """The first ``field`` line of ``/proc/cpuinfo`` (Linux), or None."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cpu_model() -> str | None:
    """The processor's model name (``/proc/cpuinfo`` on Linux, else ``platform``)."""
    return _cpuinfo("model name") or platform.processor() or None


def _simd() -> list[str] | None:
    """The :data:`SIMD_FLAGS` this CPU has (None where ``/proc/cpuinfo`` is absent)."""
    flags = _cpuinfo("flags")
    if flags is None:
        return None
    have = set(flags.split())
    return [f for f in SIMD_FLAGS if f in have]


def facts(threads: int | None = None) -> dict:
    """The machine facts that can change a run's rounding: CPU model, SIMD flags and cores,
    torch's CPU kernel capability and thread count, and the kernel-choosing environment
    variables that are set, and the torch and numpy versions.  ``threads``: the thread count
    the computation ran at, where it set its own (default: torch's count now).  Cheap (no
    computation)."""
    out: dict = {"machine": platform.machine(), "cpu": _cpu_model(), "simd": _simd(),
                 "cores": os.cpu_count()}
    try:
        import torch

        out["torch"] = torch.__version__
        out["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        out["torch_threads"] = int(threads) if threads is not None else torch.get_num_threads()
    except Exception:  # torch missing or too old: the rest still says something
        pass
    try:
        import numpy

        out["numpy"] = numpy.__version__
    except Exception:  # pragma: no cover - numpy is a dependency
        pass
    env = {k: os.environ[k] for k in KERNEL_ENV if os.environ.get(k)}
    if env:
        out["env"] = env
    return out
