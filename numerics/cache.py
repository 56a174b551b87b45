"""One run cache for ``verify`` and ``figures``, and the one way a row declares a run.

A row's simulation is a function of a frozen config, declared with :func:`run_function`::

    @run_function("markov.full")
    def run_full(config: FullRun, *, device: str = "cpu") -> FullRunResult:
        ...

    result = run_full(config, cache=ctx.cache, device=ctx.device)

The call is looked up, in order, in a bounded in-process LRU (``maxsize`` results, so a long
``thorough`` run does not keep every result alive) and in the on-disk :class:`RunCache`; it
is computed only when both miss.  The key is the tag, the config's ``repr``, every keyword
argument (device and dtype included: a CUDA run is never served to a CPU caller) and the
**code version of the row**: a hash of the code of the function's own module and of every
module of ``numerics/`` and ``theory/`` it imports, transitively (:func:`module_version`), so
editing one row retrains that row only, and editing a comment or a docstring retrains
nothing (:func:`code_digest`).

Results are stored as arrays and JSON, never pickled (:mod:`numerics.store`: one ``.npz``
read with ``allow_pickle=False``, dataclasses rebuilt only from this project's ``numerics``
and ``theory`` types, a schema version), so a cache on a shared disk runs no code that
someone else wrote; an entry that cannot be read (corrupt, another schema, a pickle) is
recomputed.  A cache with ``root=None`` is disabled (the in-process LRU still applies).

**Which runs are the full model.**  Every run function says whether it trains the paper's
full model by torch autograd on the model's own loss (``full_model=True``) or integrates or
evaluates the theory (``full_model=False``); the parts that compare a theory with a
``full_model`` run are the ``simulation`` parts of a claim (``verify.claims.PART_KINDS``).
A full-model run may take its set-up from theory (an initialisation, sizes, a teacher): it
names those theory functions with the reason in ``uses_theory``, and ``smoke`` builds a
test-size config, so that the row's independence test can run it with every other public
function of ``theory.<row>`` replaced by one that raises.  :data:`RUNS` holds every declared
run (:class:`RunInfo`); while :data:`RUNS_CALLED` holds a list, every call of a run function
appends its tag (the runner uses it to check that a claim with a simulation part asked for a
full-model run).

**Observers.**  ``tdcheck mutate`` must know which theory functions a cached run consumed:
while an observer is set (:data:`OBSERVER`), every computation runs inside
``observer.computing(key)`` and every hit calls ``observer.served(key)``; before reading the
disk the cache asks ``observer.lookup(key)``, which may answer with a path to read instead,
or ``False`` to force a fresh computation (a mutant must not be served a run its mutated
function would have changed).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import hashlib
import inspect
import os
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from numerics import checkpoint, machine, store
from numerics.threads import entered_count, recording, threads

__all__ = [
    "OBSERVER",
    "PLAN",
    "RUNS",
    "RUNS_CALLED",
    "CacheObserver",
    "PlanStop",
    "PlannedRun",
    "RunCache",
    "RunInfo",
    "clear_run_memos",
    "code_digest",
    "code_version",
    "default_cache_dir",
    "module_version",
    "resolve",
    "run_function",
]

T = TypeVar("T")
_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("numerics", "theory")
#: the subfolder of a cache folder holding the checkpoints of runs still computing
CHECKPOINTS = "checkpoints"


class CacheObserver(Protocol):
    """What :data:`OBSERVER` must offer (``tdcheck mutate`` sets one)."""

    def lookup(self, key: str) -> Path | bool | None: ...

    def computing(self, key: str) -> contextlib.AbstractContextManager: ...

    def served(self, key: str) -> None: ...


OBSERVER: ContextVar[CacheObserver | None] = ContextVar("tdcheck_cache_observer", default=None)


@dataclass(frozen=True)
class PlannedRun:
    """A run a check asked for under ``tdcheck verify --plan``: not computed, only costed."""

    tag: str
    config: object
    options: tuple
    member_steps: float | None
    flops: float | None
    cached: bool
    key: str = ""  # the run's cache key: two claims asking for one run share it
    # the rest of a checkpointed run at the wall rate its training measured (seconds), or None
    measured_seconds: float | None = None


class PlanStop(Exception):
    """Raised inside a check at its first run under ``--plan`` (nothing is trained)."""

    def __init__(self, run: PlannedRun):
        super().__init__(f"planned {run.tag}")
        self.run = run


@dataclass(frozen=True)
class RunInfo:
    """A declared run function (:func:`run_function`): whether it is the full model, the
    theory functions it takes its set-up from (name -> why), and a test-size config."""

    tag: str
    module: str
    name: str
    full_model: bool | None
    uses_theory: Mapping[str, str]
    smoke: Callable[[], Any] | None
    compute: Callable[..., Any]


#: Every declared run function, by tag.
RUNS: dict[str, RunInfo] = {}

#: While set to a list, every call of a run function appends its tag.
RUNS_CALLED: ContextVar[list | None] = ContextVar("tdcheck_runs_called", default=None)


# Set by ``tdcheck verify --plan``: a list that collects every PlannedRun.
PLAN: ContextVar[list | None] = ContextVar("tdcheck_plan", default=None)

# Set while ``--plan`` probes a run's cost: :func:`numerics.ensemble.train` then counts the
# FLOP of one stacked step (torch's FlopCounterMode) and raises :class:`Probed` untrained.
PROBE: ContextVar[str | None] = ContextVar("tdcheck_probe", default=None)  # "outer": the run
# itself is on fake tensors; "inner": only the counted step is


class Probed(Exception):
    """A run's cost counted at its trainer's first step (raised under :data:`PROBE`)."""

    def __init__(self, member_steps: float, flops: float):
        super().__init__(f"probed: {member_steps:g} member-steps, {flops:.3g} FLOP")
        self.member_steps = member_steps
        self.flops = flops


#: Member-count fields a probe may shrink (:func:`shrunk_configs`), in the order looked for.
MEMBER_FIELDS = ("members", "seeds", "n_seeds")
PROBE_MEMBERS = (2, 4)  # the member counts a shrunk probe runs at (ZFB's spread needs two)


def shrunk_configs(config: Any) -> tuple[tuple[Any, Any], float] | None:
    """((``config`` at each of :data:`PROBE_MEMBERS` members), its own member count), or
    ``None`` when it has no member-count field (:data:`MEMBER_FIELDS`: an int, or a tuple of
    seeds) above the larger of them.  Members are stacked along one axis of one vmapped
    step, so a run's member-steps and counted FLOP are affine in their number (per-member
    work plus per-step constants: a mean over members); tests/test_plan_speed.py checks it
    on every row's run function with such a field.  The set-up of a paper-size ensemble
    (per-member inits and batches, built one by one on fake tensors) is what makes a whole
    probe slow."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return None
    names = {f.name for f in dataclasses.fields(config)}
    lo, hi = PROBE_MEMBERS
    for name in MEMBER_FIELDS:
        if name not in names:
            continue
        value = getattr(config, name)
        if isinstance(value, int) and not isinstance(value, bool) and value > hi:
            return ((dataclasses.replace(config, **{name: lo}),
                     dataclasses.replace(config, **{name: hi})), float(value))
        if isinstance(value, tuple) and len(value) > hi:
            return ((dataclasses.replace(config, **{name: value[:lo]}),
                     dataclasses.replace(config, **{name: value[:hi]})), float(len(value)))
        return None
    return None


def probe_cost(fn: Callable[..., Any], config: Any, options: dict, *, shrink: bool = True
               ) -> tuple[float, float] | None:
    """(member-steps, FLOP) of ``fn(config, **options)`` from one counted step of its trainer.

    FLOP = the FLOP counted (:mod:`numerics.flops`) in the first stacked gradient step x the
    trainer's steps: evaluation, recording and any second training stage are not counted (an
    estimate from below).  It runs on the CPU (FLOP do not depend on the device,
    and the planned device need not be present).  ``None`` when ``fn`` returned untrained.
    With ``shrink`` a config with many members is probed at the two member counts of
    :data:`PROBE_MEMBERS` and extrapolated on the line through them
    (:func:`shrunk_configs`); one whose shrunk forms cannot be probed (its own checks
    refuse them) is probed whole."""
    if shrink:
        small = shrunk_configs(config)
        if small is not None:
            try:
                counted = [probe_cost(fn, c, options, shrink=False) for c in small[0]]
            except Exception:
                counted = [None]
            if None not in counted:
                (s_lo, f_lo), (s_hi, f_hi) = counted
                lo, hi = PROBE_MEMBERS
                t = (small[1] - lo) / (hi - lo)
                return s_lo + (s_hi - s_lo) * t, f_lo + (f_hi - f_lo) * t
    options = {**options, "device": "cpu"} if "device" in options else options
    plan_token = PLAN.set(None)
    try:
        # first the whole run on fake tensors (its data drawn as shapes only: free at paper
        # size); a run whose set-up needs real values (a .item(), numpy) is probed for real
        for fake in (True, False):
            token = PROBE.set("outer" if fake else "inner")
            try:
                if fake:
                    from torch._subclasses.fake_tensor import FakeTensorMode

                    with FakeTensorMode(allow_non_fake_inputs=True):
                        fn(config, **options)
                else:
                    fn(config, **options)
            except Probed as p:
                return p.member_steps, p.flops
            except Exception:
                if not fake:
                    raise
                continue
            finally:
                PROBE.reset(token)
            return None
    finally:
        PLAN.reset(plan_token)
    return None


def _default_cost(config: object) -> tuple[float | None, float | None]:
    """Member-steps from a config's ``members``/``seeds`` and ``steps``/``iterations``
    fields when it has them (FLOP unknown); a row's ``cost=`` gives better."""
    members = next((getattr(config, f) for f in ("members", "seeds", "n_seeds")
                    if isinstance(getattr(config, f, None), int)), None)
    steps = next((getattr(config, f) for f in ("steps", "iterations", "iters")
                  if isinstance(getattr(config, f, None), int)), None)
    if members is None and steps is None:
        return None, None
    return float((members or 1) * (steps or 1)), None


def code_digest(source: str, filename: str = "<source>") -> bytes:
    """What of a module's source a run depends on: its syntax tree without docstrings
    (``ast.dump``, no line numbers), so that editing a comment, a docstring or the layout
    retrains nothing, and any change to the code does."""
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


@functools.cache
def code_version() -> str:
    """SHA-256 (16 hex digits) of the code (:func:`code_digest`) of every ``.py`` file under
    ``numerics/`` and ``theory/``."""
    h = hashlib.sha256()
    for folder in _PACKAGES:
        for path in sorted((_ROOT / folder).glob("*.py")):
            h.update(path.name.encode())
            h.update(code_digest(path.read_text(), str(path)))
    return h.hexdigest()[:16]


def _module_path(name: str) -> Path | None:
    parts = name.split(".")
    if parts[0] not in _PACKAGES:
        return None
    path = _ROOT.joinpath(*parts).with_suffix(".py")
    if path.exists():
        return path
    init = _ROOT.joinpath(*parts, "__init__.py")
    return init if init.exists() else None


def _imports(path: Path) -> set[str]:
    """Modules of ``numerics``/``theory`` that the file imports (any nesting level)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in out if m.split(".")[0] in _PACKAGES}


@functools.cache
def module_version(module: str) -> str:
    """SHA-256 (16 hex digits) of ``module``'s code (:func:`code_digest`) and of every
    ``numerics``/``theory`` module it imports, transitively: the code version of one row's
    runs."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        path = _module_path(name)
        if path is None or name in seen:
            continue
        seen[name] = path
        todo.extend(_imports(path))
    if not seen:
        return code_version()
    h = hashlib.sha256()
    for name in sorted(seen):
        h.update(name.encode())
        h.update(code_digest(seen[name].read_text(), str(seen[name])))
    return h.hexdigest()[:16]


def default_cache_dir() -> Path:
    """``$TDCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdcheck``, else ``~/.cache/tdcheck``."""
    env = os.environ.get("TDCHECK_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdcheck"


def _key(config: object, tag: str, version: str | None) -> str:
    text = f"{tag}|{config!r}|{version or code_version()}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _load(path: Path, key: str) -> tuple[bool, Any]:
    """(True, the run stored at ``path`` under ``key``), or (False, None) when it cannot be
    read: missing, corrupt, of another schema or key, or not a stored run (a pickle)."""
    try:
        return True, store.load(path, key)
    except (store.StoreError, OSError):
        return False, None


def _save(path: Path, result: Any, key: str, tag: str) -> None:
    """Store ``result`` at ``path``; a result the store cannot hold is returned uncached."""
    try:
        store.save(path, result, key, made_on=machine.facts(threads=entered_count()))
    except store.StoreError as exc:
        warnings.warn(f"run {tag} not cached: {exc}", RuntimeWarning, stacklevel=3)


@dataclass(frozen=True)
class RunCache:
    """Runs stored under ``root`` (``None``: disabled), one ``<tag>-<key>.npz`` each
    (:mod:`numerics.store`)."""

    root: Path | None = None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def key(self, config: object, tag: str, version: str | None = None) -> str:
        return _key(config, tag, version)

    def path(self, config: object, tag: str, version: str | None = None) -> Path | None:
        if self.root is None:
            return None
        return self.path_for_key(self.key(config, tag, version), tag)

    def path_for_key(self, key: str, tag: str) -> Path | None:
        if self.root is None:
            return None
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in tag)
        return Path(self.root) / f"{safe}-{key}{store.SUFFIX}"

    def get_or_compute(self, config: object, compute: Callable[[], T], tag: str,
                       version: str | None = None) -> T:
        """The cached result for (``config``, ``tag``), computing and storing it if absent.

        Under ``--plan`` (:data:`PLAN` set) nothing is computed: the run is recorded and,
        unless it is already cached (then it is served, so the check goes on to its next
        run), :class:`PlanStop` raised.

        ``version`` is the code version in the key (default: all of ``numerics/`` and
        ``theory/``; :func:`run_function` passes the row's own, :func:`module_version`).
        """
        key = self.key(config, tag, version)
        observer = OBSERVER.get()
        path = self.path_for_key(key, tag)
        plan = PLAN.get()
        if plan is not None and not any(p.tag == tag and p.config is config for p in plan):
            inner = config[0] if isinstance(config, tuple) and config else config
            steps, flops = _default_cost(inner)
            planned = PlannedRun(tag, config, (), steps, flops, path is not None and path.exists(),
                                 key)
            plan.append(planned)
            if not planned.cached:
                raise PlanStop(planned)
        redirect = observer.lookup(key) if observer is not None else None
        if isinstance(redirect, Path):
            ok, value = _load(redirect, key)
            if ok:
                observer.served(key)
                return value
        elif redirect is not False and path is not None and path.exists():
            ok, value = _load(path, key)
            if ok:
                if observer is not None:
                    observer.served(key)
                # a checkpoint left by a run killed after it was stored is of no more use
                checkpoint.clear(Path(self.root) / CHECKPOINTS, path.stem)
                return value
            path.unlink(missing_ok=True)  # stale or corrupt: recompute below
        # a long computation checkpoints its trainer into the cache folder and resumes from
        # there when it is asked for again (numerics.checkpoint); the slot is emptied once
        # the whole run is stored
        slot_root = Path(self.root) / CHECKPOINTS if path is not None else None
        with (observer.computing(key) if observer is not None else contextlib.nullcontext(),
              checkpoint.slot(slot_root, path.stem if path is not None else key) as slot):
            result = compute()
        if path is not None:
            _save(path, result, key, tag)
        if slot is not None:
            slot.clear()
        return result


def made_on_summary(root: Path) -> list[dict]:
    """The machines that computed the runs stored under ``root``: one entry per distinct
    :func:`numerics.machine.facts` (``None`` for runs stored without them), with the
    number of runs, most runs first.  A campaign's report carries it, so verdicts on runs
    trained elsewhere can be traced to the machine (float rounding differs between BLAS
    kernels, and long training can amplify it)."""
    import json

    counts: dict[str, int] = {}
    for path in sorted(Path(root).glob(f"*{store.SUFFIX}")):
        facts = store.made_on(path)
        label = json.dumps(facts, sort_keys=True)
        counts[label] = counts.get(label, 0) + 1
    return [{"facts": json.loads(label), "runs": n}
            for label, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def resolve(cache: RunCache | None) -> RunCache:
    """``cache`` or a disabled one."""
    return cache if cache is not None else RunCache(None)


_MEMOS: list[Callable[[], None]] = []  # cache_clear of every run function (for mutate)
_PLANNED_COSTS: dict[str, tuple] = {}  # run key -> what --plan counted for it (its code
# version is in the key, so an entry never goes stale)


def clear_run_memos() -> None:
    """Empty the in-process LRU of every run function (``tdcheck mutate`` between claims)."""
    for clear in _MEMOS:
        clear()


def run_function(tag: str, *, maxsize: int = 8,
                 cost: Callable[..., tuple[float, float | None]] | None = None,
                 probe: bool | None = None, full_model: bool | None = None,
                 uses_theory: Mapping[str, str] | None = None,
                 smoke: Callable[[], Any] | None = None,
                 ) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Declare ``fn(config, **options)`` as a cached run: ``fn(config, cache=..., **options)``.

    ``config`` is a frozen dataclass (its ``repr`` is the key); ``options`` (device, dtype,
    anything else that changes the result) enter the key too.  ``maxsize`` bounds the
    in-process LRU.  ``cost(config, **options) -> (member_steps, flops)`` is what
    ``tdcheck verify --plan`` reports for the run; without it, a run that takes a ``device``
    option (a torch run) is probed (:func:`probe_cost`: built and costed at its trainer's
    first step, not trained) unless ``probe=False``, and any other run gets members x steps
    from its config, FLOP unknown.  The wrapper has ``cache_clear()``, ``tag``, ``version()``
    and ``planned_cost(config, **options)`` (what ``--plan`` counts for that run).

    ``full_model``: ``True`` when the run trains the paper's full model by torch autograd on
    its own loss (its dynamics come from the model alone), ``False`` when it integrates or
    evaluates the theory; every run must say which (the registry test).  ``uses_theory``
    names the theory functions a full-model run takes its set-up from, with the reason;
    ``smoke()`` returns a test-size config for the independence test.  A run whose dynamics
    come from theory is not a full-model run, whatever it computes with torch.
    """
    if not tag:
        raise ValueError("a run function needs a tag")
    if maxsize < 0:
        raise ValueError(f"maxsize must be >= 0, got {maxsize}")

    if full_model is False and uses_theory:
        raise ValueError(f"run {tag}: uses_theory is for full-model runs (a theory run may "
                         "call theory as it likes)")

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        RUNS[tag] = RunInfo(tag, fn.__module__, fn.__qualname__, full_model,
                            dict(uses_theory or {}), smoke, fn)
        memo: OrderedDict[str, T] = OrderedDict()
        defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()
                    if p.kind is inspect.Parameter.KEYWORD_ONLY
                    and p.default is not inspect.Parameter.empty}
        probed = ("device" in defaults) if probe is None else probe

        def planned_cost(config: Any, options: dict) -> tuple[float | None, float | None]:
            if cost is not None:
                return cost(config, **options)
            if probed:
                counted = probe_cost(fn, config, options)
                if counted is not None:
                    return counted
            return _default_cost(config)

        def planned_cost_of(key: str, config: Any, options: dict
                            ) -> tuple[float | None, float | None]:
            # one probe per run: claims (and examples) asking for one run share its cost
            if key not in _PLANNED_COSTS:
                _PLANNED_COSTS[key] = planned_cost(config, options)
            return _PLANNED_COSTS[key]

        def version() -> str:
            return module_version(fn.__module__)

        @functools.wraps(fn)
        def run(config: Any, *, cache: RunCache | None = None, **options: Any) -> T:
            called = RUNS_CALLED.get()
            if called is not None:
                called.append(tag)
            options = {**defaults, **options}  # run(c) and run(c, device="cpu") share a key
            full = (config, tuple(sorted(options.items()))) if options else config
            key = _key(full, tag, version())
            plan = PLAN.get()
            if plan is not None:
                path = resolve(cache).path_for_key(key, tag)
                cached = key in memo or (path is not None and path.exists())
                steps, flops = (None, None) if cached else planned_cost_of(key, config, options)
                found = (checkpoint.status(path.parent / CHECKPOINTS, path.stem)
                         if not cached and path is not None else None)
                done, wall = found if found is not None else (None, None)
                measured = None
                if done:  # a run killed part-way resumes from its checkpoint: count the rest
                    steps = None if steps is None else steps * (1 - done)
                    flops = None if flops is None else flops * (1 - done)
                    measured = None if wall is None else wall * (1 - done) / done
                planned = PlannedRun(tag, config, tuple(sorted(options.items())), steps, flops,
                                     cached, key, measured)
                plan.append(planned)
                if not planned.cached:
                    raise PlanStop(planned)
            if key in memo:
                memo.move_to_end(key)
                observer = OBSERVER.get()
                if observer is not None:
                    observer.served(key)
                return memo[key]
            def compute() -> T:
                return fn(config, **options)

            # the one thread policy (TDCHECK_THREADS overrides), around the store too, so
            # the machine facts stored with the run name the thread count it trained at
            # (the count of a block the run enters itself, recorded, else this one)
            with threads(), recording():
                result = resolve(cache).get_or_compute(full, compute, tag, version=version())
            if maxsize:
                memo[key] = result
                while len(memo) > maxsize:
                    memo.popitem(last=False)
            return result

        run.cache_clear = memo.clear  # type: ignore[attr-defined]
        run.tag = tag  # type: ignore[attr-defined]
        run.full_model = full_model  # type: ignore[attr-defined]
        run.version = version  # type: ignore[attr-defined]
        run.compute = fn  # type: ignore[attr-defined]
        run.planned_cost = lambda config, **options: planned_cost(  # type: ignore[attr-defined]
            config, {**defaults, **options})
        _MEMOS.append(memo.clear)
        return run

    return wrap


@contextlib.contextmanager
def observing(observer: CacheObserver) -> Iterator[None]:
    """Set :data:`OBSERVER` for the duration of a ``with`` block."""
    token = OBSERVER.set(observer)
    try:
        yield
    finally:
        OBSERVER.reset(token)
