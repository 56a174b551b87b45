"""``tdcheck mutate``: could a row's claims catch a slip in its theory?

A claim that does not consume the theory it names cannot catch an error in it.  This module
measures that, row by row:

1. **Map** (one fresh process, the row's claims run once): every public function of
   ``theory.<paper>`` (its ``__all__``; not ``equations``, symbols or classes) is wrapped to
   record which claims call it and in which role (``verify.claims.ROLE``: the check itself,
   the negative control, the positive control).  Only calls on the check's path count as
   consumption.  The run uses a private, empty run cache; a cache observer records which
   theory functions each cached run called while it was computed, so a later claim served
   from the cache is still charged with them.
2. **Mutants**: semantic slips on a function's output, on each numeric leaf of what it
   returns (number, array, sympy expression, tuple or dict entry, dataclass field; a
   ``ReducedSystem`` one right-hand-side component at a time; a returned callable on its
   whole output): a relative scale by ``1 + delta`` and ``1 - delta`` (``delta`` 5 % unless
   the row's ``MUTATION_DELTA`` says otherwise, with its reason), a sign flip, and swapped
   labels (``'local'`` <-> ``'global'``, ``'min'`` <-> ``'max'``, booleans).  At most
   ``max_mutants`` per function, chosen evenly and deterministically.
3. **Each mutant runs in a fresh process**, the patch applied before the row's claims are
   built, only the claims that consume the function, with its own empty run cache for what
   it computes; it may read the map's cache only for runs during whose computation the map
   saw the mutated function not called (a warm cache would otherwise serve unmutated runs,
   since the cache keys on source, which a runtime patch does not change).
4. **Killed** when a consuming claim that was ok in the map is no longer as expected: its
   outcome changed to ``refuted`` or ``inconclusive`` (or a documented refutation now holds),
   its control is no longer rejected, its positive control fails, or it raised (weak
   detection: a check should refute, not crash).  A consuming claim that the map run left
   not as expected (e.g. not settled at this profile) judges against the map run itself:
   killed when its outcome, control or positive control differs from the map run's
   (reported as "changed ...").
5. **Score** per row: killed / all mutants; functions that no check consumes count as
   survivors (their mutants, or 3 when the map never saw an output).  A row lists the
   functions it does not judge, with the reason, in ``UNJUDGED`` (``{name: reason}``); they
   still count as survivors.

Reports: ``mutation.json`` and ``mutation.md`` beside ``report.json``; ``tdcheck list`` and
the verify headline show the last score.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

__all__ = [
    "DEFAULT_DELTA",
    "LABEL_SWAPS",
    "MAX_MUTANTS",
    "Mutant",
    "apply_mutation",
    "leaves",
    "mutants_for",
    "run_mutate",
    "write_mutation_reports",
]

DEFAULT_DELTA = 0.05
MAX_MUTANTS = 6
EXCLUDED = frozenset({"equations"})
LABEL_SWAPS: Mapping[str, str] = {
    "local": "global", "global": "local", "min": "max", "max": "min",
    "stable": "unstable", "unstable": "stable", "saddle": "min",
}
PROJECT = ("theory", "numerics", "verify", "figures")
NUMERIC_OPS = ("scale+", "scale-", "sign")


# ---------------------------------------------------------------------- leaves and mutation
Path_ = tuple  # a path into a returned value: a tuple of steps


def _is_number(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float, np.floating, np.integer)):
        return True
    return isinstance(x, sp.Number)


def leaves(value: Any, path: Path_ = (), depth: int = 0) -> list[tuple[Path_, str]]:
    """The mutable leaves of ``value``: (path, kind), kind ``numeric`` or ``label``."""
    from theory.flow import ReducedSystem

    if depth > 6:
        return []
    if isinstance(value, ReducedSystem):
        return [((*path, ("rhs", i)), "numeric") for i in range(value.rhs.shape[0])]
    if isinstance(value, bool):
        return [(path, "label")]
    if _is_number(value):
        return [(path, "numeric")]
    if isinstance(value, np.ndarray):
        return [(path, "numeric")] if value.dtype.kind in "fc" else []
    if isinstance(value, sp.MatrixBase):
        return [((*path, ("entry", i)), "numeric") for i in range(len(value))]
    if isinstance(value, sp.Expr):
        return [(path, "numeric")]
    if isinstance(value, str):
        return [(path, "label")] if value in LABEL_SWAPS else []
    if isinstance(value, (tuple, list)):
        out = []
        for i, v in enumerate(value):
            out += leaves(v, (*path, ("idx", i)), depth + 1)
        return out
    if isinstance(value, Mapping):
        out = []
        for k in sorted(value, key=repr):
            out += leaves(value[k], (*path, ("key", k)), depth + 1)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = []
        for f in dataclasses.fields(value):
            out += leaves(getattr(value, f.name), (*path, ("field", f.name)), depth + 1)
        return out
    if callable(value) and not isinstance(value, type):
        return [((*path, ("call",)), "numeric")]
    return []


def _scale(value: Any, factor: Any) -> Any:
    """Every numeric leaf of ``value`` multiplied by ``factor`` (for a callable's output)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_scale(v, factor) for v in value)
    if isinstance(value, Mapping):
        return {k: _scale(v, factor) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype.kind not in "fc":
        return value
    try:
        return value * factor
    except TypeError:
        return value


def _op(value: Any, op: str, delta: float) -> Any:
    if op == "swap":
        if isinstance(value, bool):
            return not value
        return LABEL_SWAPS.get(value, value) if isinstance(value, str) else value
    exact = isinstance(value, (sp.Basic, sp.MatrixBase))
    factor = {"scale+": 1 + delta, "scale-": 1 - delta, "sign": -1}[op]
    if exact:
        factor = sp.Rational(str(factor)) if op != "sign" else sp.S.NegativeOne
    if callable(value) and not isinstance(value, (sp.Basic, sp.MatrixBase, np.ndarray)):
        inner = value

        def mutated(*args, **kwargs):
            return _scale(inner(*args, **kwargs), factor)

        for attr in ("cache_clear",):
            if hasattr(inner, attr):
                setattr(mutated, attr, getattr(inner, attr))
        return mutated
    out = value * factor
    if isinstance(value, int) and not isinstance(value, bool) and op == "sign":
        return -value
    return out


def _hashable(key: Any) -> Any:
    """A mapping key as it was before a JSON round trip (which turns a tuple into a list)."""
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def apply_mutation(value: Any, path: Path_, op: str, delta: float) -> Any:
    """``value`` with the leaf at ``path`` mutated by ``op`` (unchanged if the path is absent)."""
    from theory.flow import ReducedSystem

    if not path:
        return _op(value, op, delta)
    step, rest = path[0], path[1:]
    kind = step[0]
    try:
        if kind == "rhs" and isinstance(value, ReducedSystem):
            i = step[1]
            rhs = value.rhs.as_mutable()  # an immutable rhs would refuse the assignment
            rhs[i] = apply_mutation(rhs[i], rest, op, delta)
            return dataclasses.replace(value, rhs=rhs)
        if kind == "entry" and isinstance(value, sp.MatrixBase):
            m = value.as_mutable()  # a copy; an immutable one would refuse the assignment
            m[step[1]] = apply_mutation(m[step[1]], rest, op, delta)
            return m.as_immutable() if isinstance(value, sp.ImmutableMatrix) else m
        if kind == "idx" and isinstance(value, (tuple, list)):
            items = list(value)
            items[step[1]] = apply_mutation(items[step[1]], rest, op, delta)
            return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
        if kind == "key" and isinstance(value, Mapping):
            out, key = dict(value), _hashable(step[1])
            out[key] = apply_mutation(out[key], rest, op, delta)
            return type(value)(out) if isinstance(value, dict) else out
        if kind == "field" and dataclasses.is_dataclass(value):
            new = apply_mutation(getattr(value, step[1]), rest, op, delta)
            return dataclasses.replace(value, **{step[1]: new})
        if kind == "call" and callable(value):
            return _op(value, op, delta)
    except (IndexError, KeyError, TypeError, ValueError):
        return value
    return value


def _label(path: Path_, op: str, delta: float) -> str:
    where = "".join(
        f"[{s[1]}]" if s[0] in ("idx", "entry") else f".rhs[{s[1]}]" if s[0] == "rhs"
        else f"[{s[1]!r}]" if s[0] == "key" else f".{s[1]}" if s[0] == "field" else "(...)"
        for s in path) or "output"
    what = {"scale+": f"x {1 + delta:g}", "scale-": f"x {1 - delta:g}", "sign": "sign flip",
            "swap": "labels swapped"}[op]
    return f"{where} {what}"


@dataclass(frozen=True)
class Mutant:
    """One semantic slip: ``function``'s output with the leaf at ``path`` changed by ``op``."""

    function: str
    path: Path_
    op: str
    delta: float

    @property
    def label(self) -> str:
        return f"{self.function}: {_label(self.path, self.op, self.delta)}"

    def to_json(self) -> dict:
        return {"function": self.function, "path": [list(s) for s in self.path], "op": self.op,
                "delta": self.delta}

    @classmethod
    def from_json(cls, d: Mapping) -> Mutant:
        return cls(d["function"], tuple(tuple(s) for s in d["path"]), d["op"], d["delta"])


def mutants_for(function: str, structure: Sequence[tuple[Path_, str]] | None, delta: float,
                cap: int = MAX_MUTANTS) -> list[Mutant]:
    """The function's mutants: every (leaf, op) pair, at most ``cap``, evenly chosen."""
    if structure is None:  # never called: the three whole-output mutants
        cands = [((), op) for op in NUMERIC_OPS]
    else:
        cands = [(path, op) for path, kind in structure
                 for op in (NUMERIC_OPS if kind == "numeric" else ("swap",))]
    if cap and len(cands) > cap:
        idx = sorted({round(i * (len(cands) - 1) / (cap - 1)) for i in range(cap)}) if cap > 1 \
            else [0]
        cands = [cands[i] for i in idx]
    return [Mutant(function, path, op, delta) for path, op in cands]


# ---------------------------------------------------------------------- in a child process
def _public_functions(module) -> list[str]:
    """The mutable public functions of a theory module: its ``__all__`` less symbols,
    classes, ``equations`` and numeric twins (a :class:`theory.flow.Twin` is derived from a
    public function by lookup at first call, so mutating that function reaches the twin;
    mutating the twin on its own would test nothing the source's mutants do not)."""
    from theory.flow import Twin

    names = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if name in EXCLUDED or obj is None or isinstance(obj, (type, sp.Basic, Twin)):
            continue
        if callable(obj):
            names.append(name)
    return names


def _project_modules() -> list:
    return [m for name, m in list(sys.modules.items())
            if m is not None and name.split(".")[0] in PROJECT]


def _patch_everywhere(module, name: str, new: Any) -> None:
    """Replace ``module.name`` and every project module's reference to the same object."""
    old = getattr(module, name)
    for mod in _project_modules():
        for attr, value in list(vars(mod).items()):
            if value is old:
                setattr(mod, attr, new)


def _clear_caches() -> None:
    """Empty every derivation cache of the project (functools caches, twins, run memos)."""
    from numerics.cache import clear_run_memos

    clear_run_memos()
    for mod in _project_modules():
        for value in list(vars(mod).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                with contextlib.suppress(Exception):
                    clear()


def _summary(result) -> dict:
    def parts(ev):
        return {} if ev is None else {
            p.name: [_f(p.predicted), _f(p.observed), _f(p.error), _f(p.lower), _f(p.upper),
                     _f(p.tolerance)] for p in ev.parts}

    return {"outcome": result.outcome, "ok": bool(result.ok), "expected": result.expected,
            "control_rejected": result.control_rejected,
            "control_error": result.control_error, "positive_passed": result.positive_passed,
            "positive_error": result.positive_error, "message": (result.error_message or "")[:400],
            "parts": parts(result.worst), "seconds": round(result.seconds, 3)}


def _f(x: float) -> float | str:
    x = float(x)
    return x if math.isfinite(x) else str(x)


class _MapObserver:
    """Records theory calls per claim and role, and per cached run while it computes."""

    def __init__(self) -> None:
        self.claim: str | None = None
        self.roles: dict[str, dict[str, set[str]]] = {}
        self.key_calls: dict[str, set[str]] = {}
        self.stack: list[str] = []

    def called(self, fn: str) -> None:
        from verify.claims import ROLE

        self._charge(fn, ROLE.get())
        for key in self.stack:
            self.key_calls.setdefault(key, set()).add(fn)

    def _charge(self, fn: str, role: str) -> None:
        if self.claim is not None:
            self.roles.setdefault(fn, {}).setdefault(self.claim, set()).add(role)

    def lookup(self, key: str):
        return None

    @contextlib.contextmanager
    def computing(self, key: str) -> Iterator[None]:
        self.key_calls.setdefault(key, set())
        self.stack.append(key)
        try:
            yield
        finally:
            self.stack.pop()

    def served(self, key: str) -> None:
        from verify.claims import ROLE

        for fn in self.key_calls.get(key, ()):
            self._charge(fn, ROLE.get())
            for outer in self.stack:
                self.key_calls.setdefault(outer, set()).add(fn)


class _MutantObserver:
    """Serves a mutant the map's runs that did not call the mutated function."""

    def __init__(self, function: str, key_calls: Mapping[str, Sequence[str]], root: Path):
        self.function, self.key_calls, self.root = function, key_calls, Path(root)

    def lookup(self, key: str):
        calls = self.key_calls.get(key)
        if calls is None or self.function in calls:
            return False
        from numerics.store import SUFFIX

        found = sorted(self.root.glob(f"*-{key}{SUFFIX}"))
        return found[0] if found else False

    def computing(self, key: str):
        return contextlib.nullcontext()

    def served(self, key: str) -> None:
        return None


def _load_row(paper: str):
    theory = importlib.import_module(f"theory.{paper}")
    return theory


def _claims_of(paper: str, module: str | None) -> list:
    from verify.registry import claims_for

    if module is None:
        return claims_for(paper)
    return importlib.import_module(module).claims()


def _run_claims(paper: str, profile: str, ids: Sequence[str] | None, cache_root: Path,
                before_each: Callable[[str], None] | None = None,
                module: str | None = None, first_failure: bool = False,
                stop: Callable[[str, dict], bool] | None = None) -> dict[str, dict]:
    """Run the row's claims (``ids``, in that order when given); after each, ``stop(id,
    summary)`` true ends the run there (a mutant is killed: the later claims are not run)."""
    from numerics.cache import RunCache
    from verify.claims import Context
    from verify.runner import run_claim

    by_id = {c.id: c for c in _claims_of(paper, module)}
    claims = list(by_id.values()) if ids is None else [by_id[i] for i in ids if i in by_id]
    ctx = Context(profile=profile, cache=RunCache(Path(cache_root)))
    out = {}
    for claim in claims:
        if before_each is not None:
            before_each(claim.id)
        out[claim.id] = _summary(run_claim(claim, profile, ctx, first_failure=first_failure))
        if stop is not None and stop(claim.id, out[claim.id]):
            break
    return out


def map_worker(paper: str, profile: str, cache_root: str, ids: Sequence[str] | None,
               module: str | None = None) -> dict:
    """The map pass (run in a fresh process): roles, output structures, run-call sets."""
    import torch

    from numerics.cache import observing

    torch.set_num_threads(1)
    theory = _load_row(paper)
    observer = _MapObserver()
    structures: dict[str, list] = {}
    for name in _public_functions(theory):
        original = getattr(theory, name)

        def recorder(*args, _name=name, _fn=original, **kwargs):
            out = _fn(*args, **kwargs)
            observer.called(_name)
            if _name not in structures:
                with contextlib.suppress(Exception):
                    structures[_name] = [[list(map(list, p)), k] for p, k in leaves(out)]
            return out

        recorder.__wrapped__ = original  # type: ignore[attr-defined]
        if hasattr(original, "cache_clear"):
            recorder.cache_clear = original.cache_clear  # type: ignore[attr-defined]
        _patch_everywhere(theory, name, recorder)

    def before(claim_id: str) -> None:
        _clear_caches()
        observer.claim = claim_id

    start = time.perf_counter()
    with observing(observer):
        baseline = _run_claims(paper, profile, ids, Path(cache_root), before, module)
    return {"functions": _public_functions(theory),
            "roles": {fn: {c: sorted(r) for c, r in by.items()} for fn, by in observer.roles.items()},
            "structures": structures,
            "key_calls": {k: sorted(v) for k, v in observer.key_calls.items()},
            "baseline": baseline, "seconds": time.perf_counter() - start,
            "delta": {k: list(v) for k, v in getattr(theory, "MUTATION_DELTA", {}).items()},
            "unjudged": dict(getattr(theory, "UNJUDGED", {}))}


def _verdict(base: Mapping, mut: Mapping) -> str | None:
    """Why the claim with map-run summary ``base`` detects the mutant (None: it does not)."""
    return _killed_by(base, mut) if base["ok"] else _changed(base, mut)


def mutant_worker(paper: str, profile: str, mutant: Mutant, ids: Sequence[str],
                  key_calls: Mapping[str, Sequence[str]], map_root: str,
                  module: str | None = None, baseline: Mapping[str, Mapping] | None = None
                  ) -> dict:
    """One mutant (run in a fresh process): patch, build the row's claims, run ``ids`` in
    order; with ``baseline`` (the map run's summaries) it stops at the first claim that
    detects the mutant, since one detection kills it."""
    import torch

    from numerics.cache import observing

    torch.set_num_threads(1)
    theory = _load_row(paper)
    original = getattr(theory, mutant.function)

    def mutated(*args, **kwargs):
        return apply_mutation(original(*args, **kwargs), mutant.path, mutant.op, mutant.delta)

    if hasattr(original, "cache_clear"):
        mutated.cache_clear = original.cache_clear  # type: ignore[attr-defined]
    _patch_everywhere(theory, mutant.function, mutated)
    _clear_caches()
    with tempfile.TemporaryDirectory(prefix="tdcheck-mutant-") as own, \
            observing(_MutantObserver(mutant.function, key_calls, Path(map_root))):
        stop = None if baseline is None else (
            lambda cid, summary: _verdict(baseline[cid], summary) is not None)
        return _run_claims(paper, profile, ids, Path(own), lambda _: _clear_caches(), module,
                           first_failure=True, stop=stop)


_PRELOAD = ["numpy", "scipy.integrate", "scipy.optimize", "scipy.stats", "sympy", "torch",
            "hypothesis", "verify.claims", "verify.runner", "verify.mutate"]


def _forkserver():
    """A forkserver with the heavy libraries preloaded (torch, sympy, scipy, hypothesis and
    the engine, but no row module): each mutant is a fresh process forked from it, so it
    starts in a fraction of a second and still imports and patches its row from scratch."""
    import multiprocessing as mp

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx


def _forked(src: str, dst: str) -> None:
    _main(src, dst)


def _child(kind: str, payload: dict, timeout: float | None) -> dict:
    """Run ``map_worker`` or ``mutant_worker`` in a fresh process; its JSON result."""
    with tempfile.TemporaryDirectory(prefix="tdcheck-mutate-") as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        src.write_text(json.dumps({"kind": kind, "path": path, **payload}))
        try:
            ctx = _forkserver()
        except (ValueError, OSError):  # no forkserver here: a fresh interpreter instead
            return _interpreter(src, dst, timeout)
        proc = ctx.Process(target=_forked, args=(str(src), str(dst)))
        proc.start()
        proc.join(timeout)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
            return {"error": f"timed out after {timeout:.0f} s"}
        if proc.exitcode != 0 or not dst.exists():
            return {"error": f"the {kind} process failed (exit code {proc.exitcode})"}
        return json.loads(dst.read_text())


def _interpreter(src: Path, dst: Path, timeout: float | None) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run([sys.executable, "-m", "verify.mutate", str(src), str(dst)],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0 or not dst.exists():
        return {"error": (proc.stderr or proc.stdout)[-1500:]}
    return json.loads(dst.read_text())


def _main(src: str, dst: str) -> int:
    payload = json.loads(Path(src).read_text())
    for entry in reversed(payload.get("path", [])):  # the caller's PYTHONPATH, now
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if payload["kind"] == "map":
        out = map_worker(payload["paper"], payload["profile"], payload["cache_root"],
                         payload.get("ids"), payload.get("module"))
    else:
        out = mutant_worker(payload["paper"], payload["profile"],
                            Mutant.from_json(payload["mutant"]), payload["ids"],
                            payload["key_calls"], payload["map_root"], payload.get("module"),
                            payload.get("baseline"))
    Path(dst).write_text(json.dumps(out, default=str))
    return 0


# ---------------------------------------------------------------------- judging
def _killed_by(base: Mapping, mut: Mapping) -> str | None:
    """Why a consuming claim now detects the mutant (``None``: it does not)."""
    if "error" in mut:
        return "exception"
    if mut["outcome"] == "error" or mut.get("control_error") or mut.get("positive_error"):
        return "exception"
    if mut["ok"]:
        return None
    if mut["outcome"] != base["outcome"]:
        return {"refuted": "refutation", "inconclusive": "inconclusive",
                "holds": "held"}.get(mut["outcome"], "exception")
    if mut["control_rejected"] is False:
        return "control"
    if mut["positive_passed"] is False:
        return "positive control"
    return "other"


def _changed(base: Mapping, mut: Mapping) -> str | None:
    """Why a claim the map run left not as expected detects the mutant: its outcome, control
    or positive control differs from the map run's (``None``: nothing changed)."""
    if "error" in mut or mut["outcome"] == "error" or mut.get("control_error") \
            or mut.get("positive_error"):
        return "exception"
    for key, label in (("outcome", "changed outcome"), ("control_rejected", "changed control"),
                       ("positive_passed", "changed positive control")):
        if mut.get(key) != base.get(key):
            return label
    return None


def _moved(base: Mapping, mut: Mapping) -> list[str]:
    """Names of parts whose numbers differ between the map run and the mutant."""
    if "parts" not in mut:
        return []
    out = []
    for name, nums in mut["parts"].items():
        if base["parts"].get(name) != nums:
            out.append(name)
    return out


@dataclass
class RowResult:
    paper: str
    profile: str
    functions: dict[str, dict] = field(default_factory=dict)
    baseline: dict[str, dict] = field(default_factory=dict)
    seconds: float = 0.0
    map_seconds: float = 0.0
    every_claim: bool = False  # False: a mutant stops at its first detecting claim
    claim_seconds: dict[str, float] = field(default_factory=dict)  # summed over mutants

    @property
    def mutants(self) -> int:
        return sum(len(f["mutants"]) for f in self.functions.values())

    @property
    def killed(self) -> int:
        return sum(m["killed"] for f in self.functions.values() for m in f["mutants"])

    @property
    def score(self) -> float:
        return self.killed / self.mutants if self.mutants else math.nan

    def to_json(self) -> dict:
        by: dict[str, int] = {}
        for f in self.functions.values():
            for m in f["mutants"]:
                for why in m["by"].values():
                    by[why] = by.get(why, 0) + 1
        return {"score": self.score, "killed": self.killed, "mutants": self.mutants,
                "seconds": round(self.seconds, 1), "map_seconds": round(self.map_seconds, 1),
                "profile": self.profile, "killed_by_kind": by,
                "every_claim": self.every_claim,
                "claim_seconds": {c: round(v, 1) for c, v in sorted(
                    self.claim_seconds.items(), key=lambda kv: -kv[1])},
                "unconsumed": sorted(n for n, f in self.functions.items() if not f["consumed_by"]),
                "unjudged": {n: f["unjudged"] for n, f in self.functions.items() if f["unjudged"]},
                "details_only": sorted(n for n, f in self.functions.items() if f["details_only"]),
                "baseline_not_ok": sorted(c for c, r in self.baseline.items() if not r["ok"]),
                "functions": self.functions}


def mutate_row(paper: str, profile: str = "quick", functions: Sequence[str] | None = None,
               jobs: int | None = None, max_mutants: int = MAX_MUTANTS,
               delta: float = DEFAULT_DELTA, progress: bool = False,
               backend: str = "serial", address: str | None = None,
               claims_module: str | None = None, every_claim: bool = False) -> RowResult:
    """Map the row, run every mutant of ``functions`` (default: all public), judge them.

    A mutant runs its consuming claims cheapest first (by the map run's seconds) and stops
    at the first that detects it, so a killed mutant names the claim that killed it first;
    ``every_claim`` runs them all (every detecting claim named, slower).
    ``claims_module`` replaces ``verify.<paper>`` as the source of claims (a module with a
    ``claims()``; the tests use it to score a deliberately toothless claim)."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"tdcheck-map-{paper}-") as map_root:
        mp = _child("map", {"paper": paper, "profile": profile, "cache_root": map_root,
                            "ids": None, "module": claims_module}, timeout=None)
        if "error" in mp:
            raise RuntimeError(f"the map pass of {paper} failed: {mp['error']}")
        row = RowResult(paper, profile, baseline=mp["baseline"], map_seconds=mp["seconds"],
                        every_claim=every_claim)
        names = [n for n in mp["functions"] if functions is None or n in functions]
        jobs_list: list[tuple[str, Mutant, list[str]]] = []
        for name in names:
            roles = mp["roles"].get(name, {})
            consumers = sorted(c for c, r in roles.items() if "check" in r)
            # a consumer judges a mutant against the map run's verdict: "as expected" for
            # a claim that was, else (a claim the map run left not as expected, e.g. not
            # settled at this profile) the map run's own outcome, control and positive
            # control, so a claim that is not settled here still detects a slip that moves it
            judged = sorted((c for c in consumers if c in mp["baseline"]
                             and mp["baseline"][c].get("outcome") != "error"),
                            key=lambda c: (mp["baseline"][c].get("seconds", 0.0), c))
            d, reason = mp["delta"].get(name, (delta, ""))
            structure = mp["structures"].get(name)
            structure = None if structure is None else [
                (tuple(tuple(s) for s in p), k) for p, k in structure]
            muts = mutants_for(name, structure, float(d), max_mutants)
            row.functions[name] = {
                "roles": roles, "consumed_by": consumers, "judged_by": judged,
                "delta": float(d), "delta_reason": reason,
                "unjudged": mp["unjudged"].get(name), "details_only": False,
                "mutants": [{"label": m.label, "killed": False, "by": {}, "moved": {},
                             "ran": bool(judged)} for m in muts]}
            if judged:
                jobs_list += [(name, m, judged) for m in muts]
        def budget(ids: Sequence[str]) -> float:
            """A mutant's time limit: 10 x what its claims took in the map run, + 60 s (a
            slip that makes a solver stiff or a loop diverge is killed as a timeout)."""
            return max(60.0, 10 * sum(mp["baseline"][c].get("seconds", 0.0) for c in ids) + 60)

        def run_one(item):
            name, m, ids = item
            return item, _child("mutant", {"paper": paper, "profile": profile,
                                           "mutant": m.to_json(), "ids": ids,
                                           "key_calls": mp["key_calls"], "map_root": map_root,
                                           "module": claims_module,
                                           "baseline": None if every_claim else
                                           {c: mp["baseline"][c] for c in ids}},
                                timeout=budget(ids))

        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(jobs_list), desc=f"mutate {paper}", unit="mutant")
        results = _map_jobs(run_one, jobs_list, jobs or os.cpu_count() or 1, backend, address, bar)
        if bar is not None:
            bar.close()
        index = {name: 0 for name in names}
        for (name, _m, ids), out in results:
            entry = row.functions[name]["mutants"][index[name]]
            index[name] += 1
            for cid in ids:
                if "error" not in out and cid not in out and not every_claim:
                    continue  # not run: an earlier claim already detected the mutant
                mut = out if "error" in out else out.get(cid, {"error": "claim not run"})
                base = mp["baseline"][cid]
                why = _verdict(base, mut)
                if why is not None:
                    entry["by"][cid] = why
                moved = _moved(mp["baseline"][cid], mut)
                if moved:
                    entry["moved"][cid] = moved
            entry["killed"] = bool(entry["by"])
            ran = {cid: r.get("seconds", 0.0) for cid, r in out.items()
                   if isinstance(r, dict) and "seconds" in r}
            entry["seconds"] = round(sum(ran.values()), 1)
            for cid, sec in ran.items():
                row.claim_seconds[cid] = row.claim_seconds.get(cid, 0.0) + sec
            if "error" in out:
                entry["error"] = out["error"][-300:]
        for f in row.functions.values():
            f["details_only"] = bool(f["judged_by"]) and not any(
                m["killed"] or m["moved"] for m in f["mutants"])
    row.seconds = time.perf_counter() - start
    return row


def _map_jobs(fn, items, jobs: int, backend: str, address: str | None, bar) -> list:
    if backend == "ray":
        from verify.backends import require_ray

        ray = require_ray()
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        remote = ray.remote(num_cpus=1, max_calls=1)(fn)
        refs = [remote.remote(item) for item in items]
        out = []
        for ref in refs:
            out.append(ray.get(ref))
            if bar is not None:
                bar.update(1)
        return out
    out = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for res in pool.map(fn, items):
            out.append(res)
            if bar is not None:
                bar.update(1)
    return out


def run_mutate(papers: Sequence[str], profile: str = "quick", **kwargs) -> list[RowResult]:
    """``mutate_row`` for each paper."""
    if profile not in ("test", "quick", "ci", "thorough"):
        raise ValueError(f"profile must be test, quick, ci or thorough, got {profile!r}")
    return [mutate_row(p, profile, **kwargs) for p in papers]


# ---------------------------------------------------------------------- reports
def write_mutation_reports(rows: Sequence[RowResult], out_dir: Path, meta: Mapping[str, Any]
                           ) -> tuple[Path, Path]:
    """``mutation.json`` and ``mutation.md`` in ``out_dir`` (rows merged with earlier ones)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / "mutation.json", out_dir / "mutation.md"
    data = {"metadata": dict(meta), "rows": {}}
    if js.exists():
        with contextlib.suppress(ValueError, KeyError):
            data["rows"] = json.loads(js.read_text())["rows"]
    for r in rows:
        data["rows"][r.paper] = {**r.to_json(), "commit": meta.get("commit")}
    js.write_text(json.dumps(data, indent=1, default=str))
    md.write_text(to_markdown(data))
    return md, js


def to_markdown(data: Mapping) -> str:
    lines = ["# tdcheck mutation report", "",
             "A mutant is a slip injected into one public theory function's output (a scale "
             "by 1 +/- delta, a sign, swapped labels); it is *killed* when a claim that "
             "consumes the function (calls it on its check's path) is no longer as expected. "
             "Functions that no check consumes count as survivors.", "",
             "| row | score | killed / mutants | by kind | unconsumed functions | seconds |",
             "|---|---|---|---|---|---|"]
    for paper, r in data["rows"].items():
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["killed_by_kind"].items())) or "-"
        lines.append(f"| {paper} | {100 * r['score']:.0f}% | {r['killed']} / {r['mutants']} | "
                     f"{kinds} | {len(r['unconsumed'])} | {r['seconds']} |")
    for paper, r in data["rows"].items():
        lines += ["", f"## {paper} (profile {r['profile']}, commit {r.get('commit')})", ""]
        if r["baseline_not_ok"]:
            lines += ["Claims not as expected in the map run (they judge a mutant by a change "
                      "from the map run's outcome, control or positive control): "
                      + ", ".join(f"`{c}`" for c in r["baseline_not_ok"]), ""]
        slow = list(r.get("claim_seconds", {}).items())[:5]
        if slow:
            lines += [f"Map pass {r.get('map_seconds')} s.  Claim seconds summed over the "
                      "mutants (where the row's mutation time goes): "
                      + ", ".join(f"`{c}` {v:.0f} s" for c, v in slow), ""]
        lines += ["| function | consumed by (check) | other roles | killed | survivors |",
                  "|---|---|---|---|---|"]
        for name, f in r["functions"].items():
            other = sorted({role for roles in f["roles"].values() for role in roles} - {"check"})
            killed = sum(m["killed"] for m in f["mutants"])
            surv = "; ".join(m["label"].split(": ", 1)[1] for m in f["mutants"] if not m["killed"])
            note = ""
            if f["unjudged"]:
                note = f" (unjudged: {f['unjudged']})"
            elif not f["consumed_by"]:
                note = " (no check consumes it)"
            elif f["details_only"]:
                note = " (no part moved: details only)"
            if f["delta_reason"]:
                note += f" (delta {f['delta']:g}: {f['delta_reason']})"
            lines.append(f"| `{name}`{note} | {len(f['consumed_by'])} | {', '.join(other) or '-'} "
                         f"| {killed}/{len(f['mutants'])} | {surv or '-'} |")
        killed_rows = [(name, m) for name, f in r["functions"].items() for m in f["mutants"]
                       if m["killed"]]
        if killed_rows:
            which = ("every detecting claim" if r.get("every_claim") else
                     "the first detecting claim, cheapest first; --every-claim names all")
            lines += ["", f"Killed mutants (claim: how, parts that moved; {which}):", ""]
            for _name, m in killed_rows:
                how = "; ".join(f"`{c}` {w}" + (f" ({', '.join(m['moved'].get(c, []))})"
                                                if m["moved"].get(c) else "")
                                for c, w in m["by"].items())
                lines.append(f"- {m['label']}: {how}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1], sys.argv[2]))
