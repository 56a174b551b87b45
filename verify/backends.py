"""Where the claims run: ``serial`` (this process, one after another) or ``ray``.

The Ray backend makes each claim one Ray task (``num_cpus`` = ``threads``; with a CUDA
device also ``num_gpus`` = ``gpus_per_claim``).  Without an address Ray starts locally inside
this process (and stops when the run ends), so it works on a laptop with nothing else
running; with ``address`` (``ray://host:10001`` or ``host:6379``, or ``auto``) it joins a
running cluster, whose nodes need the same tdcheck installed.

A task is sent the claim's id and rebuilds the claim from :mod:`verify.registry` (claims hold
hypothesis strategies and closures, which need not pickle); a claim that is not in the
registry is pickled whole.  The task runs :func:`verify.runner.run_claim` -- the serial
backend's code -- and returns the result without its claim, which is re-attached here.
Results come back in claim order, so report.json is the serial backend's, timings aside:
hypothesis is derandomised, and every task runs torch with ``threads`` threads (the serial
run reproduces it bit for bit with the same thread count, e.g. ``OMP_NUM_THREADS=1``).

Ray is an optional extra: ``pip install 'tdcheck[ray]'``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any

from verify.claims import Claim, Context
from verify.runner import ClaimResult, Profile, get_profile, run_claim, run_claims

__all__ = ["BACKENDS", "BackendError", "map_on", "require_ray", "run_claims_on"]

BACKENDS = ("serial", "ray")
RAY_MISSING = "the ray backend needs Ray, an optional extra: pip install 'tdcheck[ray]'"
LOCAL_OBJECT_STORE_BYTES = 200 * 1024**2  # claims return small results; keep /dev/shm free


class BackendError(ValueError):
    """A backend that cannot run here (one line, no traceback, from the CLI)."""


def require_ray() -> Any:
    """The ``ray`` module, or :class:`BackendError` naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise BackendError(RAY_MISSING) from None
    return ray


def run_claims_on(backend: str, claims: Sequence[Claim], profile: Profile | str,
                  ctx: Context, progress: bool = False, address: str | None = None,
                  threads: int = 1, gpus_per_claim: float = 1.0,
                  on_result: Callable[[ClaimResult], None] | None = None) -> list[ClaimResult]:
    """Run ``claims`` under ``profile`` on ``backend``; results in claim order.
    ``on_result`` is called with each result as soon as it is in (a campaign stores it:
    :mod:`verify.campaign`)."""
    if backend not in BACKENDS:
        raise BackendError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "serial":
        if address is not None:
            raise BackendError("--address needs --backend ray")
        return run_claims(claims, profile, ctx, progress=progress, on_result=on_result)
    if threads < 1:
        raise BackendError(f"threads must be >= 1, got {threads}")
    return _run_ray(claims, get_profile(profile), ctx, progress, address, threads,
                    gpus_per_claim, on_result)


def map_on(backend: str, fn: Callable[[Any], Any], items: Sequence[Any],
           address: str | None = None, threads: int = 1, gpus: float = 0.0,
           progress: bool = False) -> list[Any]:
    """``[fn(x) for x in items]`` serially or as one Ray task per item (in order).

    ``fn`` must pickle (a module-level function or a ``functools.partial`` of one); used by
    ``tdcheck sweep``, whose grid points are independent.
    """
    if backend not in BACKENDS:
        raise BackendError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "serial":
        if address is not None:
            raise BackendError("--address needs --backend ray")
        if progress:
            from tqdm.auto import tqdm

            items = tqdm(items, desc="sweep", unit="point")
        return [fn(x) for x in items]
    ray = require_ray()
    started = _start(ray, address, threads)
    try:
        task = ray.remote(num_cpus=threads, num_gpus=gpus, max_retries=0)(_call_with_threads)
        refs = [task.remote(fn, x, threads) for x in items]
        _wait(ray, refs, progress, "sweep (ray)")
        return ray.get(refs)
    finally:
        if started:
            ray.shutdown()


def _call_with_threads(fn: Callable[[Any], Any], item: Any, threads: int) -> Any:
    import torch

    torch.set_num_threads(threads)
    return fn(item)


# ---------------------------------------------------------------------- ray
def _claim_refs(claims: Sequence[Claim]) -> list[tuple]:
    """("registry", paper, id) when the registry holds a claim's id, else ("pickled", claim)."""
    from verify.registry import PAPERS, claims_for

    ids: dict[str, set[str]] = {}
    for paper in {c.paper for c in claims}:
        info = PAPERS.get(paper)
        ok = info is not None and info.status != "planned"
        ids[paper] = {c.id for c in claims_for(paper)} if ok else set()
    return [("registry", c.paper, c.id) if c.id in ids[c.paper] else ("pickled", c)
            for c in claims]


def _resolve(ref: tuple) -> Claim:
    if ref[0] == "pickled":
        return ref[1]
    from verify.registry import claims_for

    _, paper, claim_id = ref
    for claim in claims_for(paper):
        if claim.id == claim_id:
            return claim
    raise LookupError(f"claim {claim_id} is not in this worker's tdcheck (versions differ?)")


def _run_remote(ref: tuple, profile: Profile, ctx: Context, threads: int) -> ClaimResult:
    """The body of one Ray task: the serial runner on one claim, returned without the claim."""
    import torch

    torch.set_num_threads(threads)
    result = run_claim(_resolve(ref), profile, ctx)
    return dataclasses.replace(result, claim=None)


def _failed(claim: Claim, profile: Profile, message: str) -> ClaimResult:
    return ClaimResult(claim=claim, outcome="error", worst=None, worst_example=None,
                       examples_drawn=0, examples_requested=len(claim.examples)
                       + getattr(profile, claim.cost), seconds=0.0, control_rejected=None,
                       error_message=message, profile=profile.name)


def _start(ray: Any, address: str | None, threads: int) -> bool:
    """Connect to ``address`` or start Ray here; True when this call started it."""
    if ray.is_initialized():
        return False
    common = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    if address:
        ray.init(address=address, **common)
    else:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        ray.init(num_cpus=max(threads, os.cpu_count() or 1),
                 object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                 runtime_env={"env_vars": {"PYTHONPATH": path}}, **common)
    return True


def _run_ray(claims: Sequence[Claim], profile: Profile, ctx: Context, progress: bool,
             address: str | None, threads: int, gpus_per_claim: float,
             on_result: Callable[[ClaimResult], None] | None = None) -> list[ClaimResult]:
    ray = require_ray()
    started = _start(ray, address, threads)
    try:
        gpus = gpus_per_claim if str(ctx.device).startswith("cuda") else 0
        task = ray.remote(num_cpus=threads, num_gpus=gpus, max_retries=0)(_run_remote)
        remote_ctx = dataclasses.replace(ctx, progress=False)
        refs = [task.remote(r, profile, remote_ctx, threads) for r in _claim_refs(claims)]
        by_ref = {ref: i for i, ref in enumerate(refs)}
        results: list[ClaimResult | None] = [None] * len(refs)

        def collect(ref: Any) -> None:
            i = by_ref[ref]
            claim = claims[i]
            try:
                result = ray.get(ref)
                result.claim = claim
            except Exception as exc:  # a crashed worker is reported as that claim's error
                result = _failed(claim, profile, f"ray task failed: {type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0] if str(exc) else ''}")
            results[i] = result
            if on_result is not None:
                on_result(result)

        _wait(ray, refs, progress, "verify (ray)", collect)
        return [r for r in results if r is not None]
    finally:
        if started:
            ray.shutdown()


def _wait(ray: Any, refs: list, progress: bool, desc: str = "ray",
          each: Callable[[Any], None] | None = None) -> None:
    """Block until every task is done, with a progress bar if asked; ``each`` is called
    with every finished ref as it finishes."""
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(refs), desc=desc, unit="task")
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done if each is not None else ():
            each(ref)
        if bar is not None:
            bar.update(len(done))
    if bar is not None:
        bar.close()
