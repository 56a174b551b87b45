"""``tdcheck mutate``: could a row's claims catch a slip in its theory?

A claim that does not consume the theory it names cannot catch an error in it.  This module
measures that, row by row:

1. **Map** (the row's claims run once, in fresh processes: one for the row with one job,
   else one per claim, ``jobs`` at a time, costly claims first): every public function of
   ``theory.<paper>`` (its ``__all__``; not ``equations``, symbols or classes) is wrapped to
   record which claims call it and in which role (``verify.claims.ROLE``: the check itself,
   the negative control, the positive control).  Only calls on the check's path count as
   consumption.  The run uses a private, empty run cache; a cache observer records which
   theory functions each cached run called while it was computed, so a later claim served
   from the cache is still charged with them (side by side, the calls are written beside
   the run, so a claim served a run another process computed is charged too; the merged
   map is the serial one's, a test shows).  The map run also records, per claim, every
   part's kind and worst status over the examples (``ClaimResult.parts_seen``).
2. **Mutants**: semantic slips on a function's output, on each numeric leaf of what it
   returns (number, float array, sympy expression, tuple or dict entry, dataclass field; a
   ``ReducedSystem`` one right-hand-side component at a time; a returned callable on its
   whole output): a relative scale by ``1 + delta`` and ``1 - delta`` (``delta`` 5 % unless
   the row's ``MUTATION_DELTA`` says otherwise, with its reason), a sign flip, and swapped
   labels (``'local'`` <-> ``'global'``, ``'min'`` <-> ``'max'``, booleans).  At most
   ``max_mutants`` per function, chosen evenly and deterministically.

   **Scale-free functions** (``MUTANT_KINDS = {"function_name": "shape"}``): a function
   whose overall scale no consumer can see (an un-normalised weight that every check reads
   through ratios or a normalisation) would get scale mutants that are *equivalent*: the
   same theory, no check can kill them.  Its float leaves get shape mutants instead, of the
   same size: the entries alternately times ``1 + delta`` and ``1 - delta`` along the
   array's last axis (``shape+`` starts with ``1 + delta``, ``shape-`` with ``1 - delta``;
   for a weight indexed by token on its last axis, a slip of each token's weight that no
   single multiple undoes), and the sign flip.  The row states why the scale is equivalent
   beside its ``MUTANT_KINDS`` entry; the resolution tilts it too (whole-output leaves
   alternately times ``1 + delta`` and ``1 - delta``), in every claim, as for a
   ``Claim.shape_only`` function.

   **Index-valued functions** (an ordering, a winner, a token set) would get scale mutants
   that are no longer indices, or (integer arrays) no mutants at all.  A row registers them
   in its theory module: ``MUTANT_KINDS = {"function_name": "permutation"}`` (or ``"set"``
   for a token set held as a sorted tuple: its sequences then get the set mutants below,
   since a permuted set is the same set).  Their integer
   leaves then get index mutants instead: a sequence of integers (tuple, list, integer
   array along its first axis) of length >= 3 has its entries 0 and 1 swapped, is reversed,
   and is rotated by one; of length 2, swapped; a scalar integer becomes ``k + 1`` and
   ``k - 1`` (``k + 1`` again when ``k = 0``, to stay a valid index); a set of integers
   loses its largest member or gains ``max + 1``.  Float leaves of the same output keep
   their numeric mutants.  An unregistered function's integer arrays are listed as
   "integer leaves, not mutated" in ``mutation.md``.  A numeric leaf that is an exact 0 (sympy or integer) at every call of
   the map run gets no mutants either (its scale and sign mutants would be the function
   itself: equivalent mutants no check can kill); ``mutation.md`` lists them as "leaves
   exactly 0 at every call".
3. **Each mutant runs in a fresh process**, the patch applied before the row's claims are
   built, only the claims that consume the function, with its own empty run cache for what
   it computes; it may read the map's cache only for runs during whose computation the map
   saw the mutated function not called (a warm cache would otherwise serve unmutated runs,
   since the cache keys on source, which a runtime patch does not change).  By default the
   consuming claims run cheapest first and stop at the first *kill* (below; a weak kill, an
   exception or a timeout does not stop them); ``every_claim`` runs them all.  The mutants of
   a **simulation function** (one consumed on the check path of a claim whose map run has a
   part of kind ``simulation``) always run every consuming claim, and those simulation
   claims run every example (no stop at the first refuted one; a ``fast`` claim still stops
   there, since its refuted example would be shrunk), so the cheapest exact part does not
   hide the simulation's answer.
4. **Judging**, claim by claim against the claim's own map run:

   - *exception defect* (not a kill): the check, its control or its positive control raised
     under the mutant and not in the map run.  A wrong theory must give a failed part with a
     reason, never an ``IndexError`` or ``ValueError``; ``mutation.md`` lists each with its
     message so the row's owner can fix the check.
   - *timeout* (not a kill, counted apart): the mutant's process ran past its limit (10 x
     the map seconds of its claims + 60 s) while the claim ran.  A slip that makes a solver
     stiff may well be a detection, but a timeout says no more than "something is slow", so
     it is neither a kill nor silently a survivor; the claims that finished before it are
     judged as usual.
   - *kill*: the outcome moved ``holds`` -> ``refuted`` or ``refuted`` -> ``holds``; or,
     outcome unchanged, whether the control is rejected or the positive control passes
     changed (a control or positive control that raised is a defect instead); or the claim
     was ok and is not (anything else).
   - *weak kill*: the outcome only moved to ``inconclusive`` (a passing part turned
     inconclusive, or a failing one did), or the map run left the claim ``inconclusive``
     (not settled) and its outcome changed.

   A mutant's status is the strongest over its claims: kill, weak, defect, timeout,
   survived.
5. **Score** per row: (kills + weak kills) / all mutants, with the weak kills, exception
   defects and timeouts given apart; functions that no check consumes count as survivors
   (their mutants, or 3 when the map never saw an output).  A row lists the functions it
   does not judge, with the reason, in ``UNJUDGED`` (``{name: reason}``); they still count
   as survivors.
6. **Simulation score**: of the mutants of simulation functions, the fraction that some
   simulation part *rejects*: a simulation part of a consuming claim whose map outcome was
   ``holds`` moved ``pass`` -> ``fail``.  A *weak rejection* (counted apart, not in the
   score): such a part moved ``pass`` -> ``inconclusive``, or, for a claim the map run left
   refuted or not settled, a simulation part's status changed at all.  A mutant whose
   simulation claims' checks raised is a simulation defect, one that timed out before they
   finished a simulation timeout; both are counted apart and are not rejections.
7. **Resolution** (``resolution=True``, ``tdcheck mutate --resolution``): for each claim
   with a simulation part, the smallest ``delta`` on :data:`LADDER` (1, 2, 5, 10, 20, 50 %)
   at which both whole-output scale mutants (every numeric leaf of the output times
   ``1 + delta``, resp. ``1 - delta``; for a function the claim holds only up to a free
   multiple, ``Claim.shape_only``, where a scale is an equivalent mutant, both tilts: the
   numeric leaves alternately times ``1 + delta`` and ``1 - delta``, starting either way)
   of every theory function the claim's simulation parts consume are rejected (a simulation part that passed in the map run fails) by that claim's
   simulation parts, with the claim's check alone (no controls) on every example.  Each
   function climbs the ladder on its own first (its ``+delta`` mutant, then its ``-delta``
   one; a rung stops at the first mutant not at least weakly rejected, and the function
   stops at the first rung where both are rejected), which names the function that limits
   the claim (``by_function``).  A consumed function none of whose mutants, up to 50 %,
   moves a simulation part's numbers or status feeds only the claim's symbolic parts: it is
   named in ``not_in_simulation_parts`` and left out (if every function is, the answer is
   "> 50 %: no mutant ... moved a simulation part").  A consumed function whose mutants
   move only simulation parts' tolerances (never a prediction, observation, error or its
   interval: :func:`_moves_value`) sizes a model-mismatch allowance, not what the parts
   compare: it is named in ``allowance_only``, keeps its own rung in ``by_function`` and
   is left out of the claim's rung, provided some claim of the row resolves it in its own
   rung at 5 % or finer (:func:`_cover_allowances`; otherwise it is named in
   ``allowance_uncovered`` and its rung counts, not confirmed jointly; a claim covers a
   function through its own per-function rung, even where its joint confirmation ran out
   of time; only a claim that scales a function covers it: a tilt rung says nothing about
   a whole-output slip).  A ``shape_only`` or ``Claim.shape_approx`` function none of
   whose tilts moves a simulation part keeps its rung at "> 50 %", named in
   ``tilt_unseen``; a ``shape_approx`` one (the claim is only nearly blind to a multiple)
   must have its whole-output scale resolved by another claim at 5 %, else the claim's
   answer is "> 50 %", ``shape_uncovered``.  A function the claim declares in
   ``Claim.placement_only`` (it only places the comparison, e.g. the end of a time window,
   and the statement does not depend on where)
   or in ``Claim.correction_only`` (its output is a small correction to the compared
   prediction, a drift of 2 % say, so that a slip delta of it moves the prediction by a
   small fraction of delta) is treated the same way, named in ``placement_only`` /
   ``correction_only`` (uncovered: ``placement_uncovered`` / ``correction_uncovered``) even
   where its mutants move the compared values.  A function one of whose mutants makes
   the check raise or time out stays in the rung.  (The runner's drift
   test cannot stand in for that: under a mutant the check and the control share the
   patched module, so an allowance computed from it moves in both.)  The claim's answer is the largest of
   those rungs, confirmed
   by running every other function's pair there (and, should one not be rejected there, the
   whole set up the ladder from it).  ``weak_delta``: the largest of the functions' first
   rungs where both mutants were at least weakly rejected (a simulation part left ``pass``;
   not confirmed jointly).  Answers:
   the delta; ``"> 50 %"``; ``"n/a: qualitative (signs or orderings only)"`` for a claim
   with ``Claim.qualitative``; ``"n/a: ..."`` when no simulation part passed in the map run
   or the claim consumes no function with a numeric output (labels and ``MUTANT_KINDS``
   functions have none to scale; ``UNJUDGED`` functions are left out and named);
   ``"not settled: ..."`` when the claim's share of the time budget ran out.  A mutant that raises or
   times out is not rejected (listed as such in the rung).  **Time bound**: the map pass is
   shared with the score's mutants; the resolution itself gets ``resolution_budget`` seconds
   of wall time (default 1200 s) less the map pass's, shared by the claims it measures,
   cheapest first, ``jobs`` processes at a time (claims side by side, a claim's mutants in
   batches when there are more processes than claims): a claim starting gets what is left
   divided by the rounds of claims still to run (ceil(waiting / processes); all of it once
   no more claims wait than processes run), so a claim settled
   early leaves its time to the costly ones ("not started" if none is left); each mutant
   process is limited to 10 x its claim's map seconds + 60 s and to its claim's share.  Training
   runs that do not call the mutated function are served from the map's cache (a full-model
   run takes theory only for its set-up), so a rung costs about the claim's theory side.

Reports: ``mutation.json`` and ``mutation.md`` beside ``report.json``, and the row's summary
kept in the run cache's folder (``numerics.cache.default_cache_dir() / "mutation" /
"<row>.json"``) every time ``tdcheck mutate`` runs, which ``tdcheck list`` reads; ``tdcheck
list`` and the verify headline show the score, the simulation score and "resolution <= 5 %
for k of n simulation claims".
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
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

from numerics.threads import thread_count
from verify.runner import INADMISSIBLE_PART

__all__ = [
    "DEFAULT_DELTA",
    "LABEL_SWAPS",
    "LADDER",
    "MAX_MUTANTS",
    "MUTANT_KIND_CHOICES",
    "RESOLUTION_BUDGET",
    "Mutant",
    "apply_mutation",
    "headline",
    "kept_path",
    "kept_summaries",
    "leaves",
    "mutants_for",
    "row_summary",
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
#: a "shape" MUTANT_KINDS function's float leaves: tilts along the last axis, and the sign
SHAPE_OPS = ("shape+", "shape-", "sign")
#: index mutants by leaf kind (functions registered in a row's ``MUTANT_KINDS``)
INDEX_OPS: Mapping[str, tuple[str, ...]] = {
    "permutation": ("swap01", "reverse", "rotate"), "transposition": ("swap01",),
    "index": ("next", "prev"), "set": ("drop", "add")}
OPS_BY_KIND: Mapping[str, tuple[str, ...]] = {
    "numeric": NUMERIC_OPS, "label": ("swap",), "integer": (), "zero": (), **INDEX_OPS}
MUTANT_KIND_CHOICES = ("permutation", "set", "shape")
LADDER = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)
RESOLUTION_BUDGET = 1200.0
CALLS_SUFFIX = ".calls.json"  # a map run's recorded theory calls, beside it
#: the rung the headline counts ("resolution <= 5 % for k of n simulation claims")
RESOLUTION_BAR = 0.05


# ---------------------------------------------------------------------- leaves and mutation
Path_ = tuple  # a path into a returned value: a tuple of steps


def _is_number(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float, np.floating, np.integer)):
        return True
    return isinstance(x, sp.Number)


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _seq_kind(n: int) -> str:
    return "permutation" if n >= 3 else "transposition"


def _index_leaves(value: Any, path: Path_, as_set: bool = False
                  ) -> list[tuple[Path_, str]] | None:
    """The index leaf ``value`` is, for a ``MUTANT_KINDS`` function (``None``: not one);
    ``as_set`` (a function registered ``"set"``): a sequence of integers is a set, whose
    order carries no meaning, so it gets set mutants (drop, add), not permutations (a
    permuted set is the same set: an equivalent mutant no check can kill)."""
    if _is_int(value):
        return [(path, "index")]
    if isinstance(value, (tuple, list)) and value and all(_is_int(v) for v in value):
        if as_set:
            return [(path, "set")]
        return [(path, _seq_kind(len(value)))] if len(value) >= 2 else \
            [((*path, ("idx", 0)), "index")]
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        if value.ndim == 0:
            return [(path, "index")]
        return [(path, _seq_kind(value.shape[0]))] if value.shape[0] >= 2 else []
    if isinstance(value, (set, frozenset)) and value and all(_is_int(v) for v in value):
        return [(path, "set")]
    return None


def _exact_zero(value: Any) -> bool:
    """Whether a numeric leaf is an exact zero (a sympy expression that is the number 0, an
    integer 0): scaling it or flipping its sign changes nothing.  A float 0 is not: its sign
    flip is -0.0, which 1/x, atan2 or a complex branch cut can tell apart."""
    with contextlib.suppress(Exception):
        if isinstance(value, sp.Basic):
            return value.is_zero is True and value.is_number
        if _is_int(value):
            return int(value) == 0
    return False


def leaves(value: Any, path: Path_ = (), depth: int = 0, *, index: bool | str = False,
           zeros: bool = False) -> list[tuple[Path_, str]]:
    """The mutable leaves of ``value``: (path, kind), kind ``numeric``, ``label``,
    ``integer`` (an integer array: no mutants unless the function is registered), or, with
    ``index`` (a ``MUTANT_KINDS`` function), ``permutation``, ``transposition``, ``index``
    or ``set`` (``index="set"``: sequences of integers are sets).  With ``zeros``, a numeric
    leaf that is exactly 0 has kind ``zero`` (the map pass: a leaf that is 0 at every call
    gets no mutants, since its scale and sign mutants are the function itself)."""
    from theory.flow import ReducedSystem

    def num(p: Path_, v: Any) -> tuple[Path_, str]:
        return (p, "zero" if zeros and _exact_zero(v) else "numeric")

    if index == "shape":  # a scale-free function: its leaves are numeric (mutants_for)
        index = False

    if depth > 6:
        return []
    if isinstance(value, ReducedSystem):
        return [num((*path, ("rhs", i)), value.rhs[i]) for i in range(value.rhs.shape[0])]
    if isinstance(value, (bool, np.bool_)):
        return [(path, "label")]
    if index:
        found = _index_leaves(value, path, as_set=index == "set")
        if found is not None:
            return found
    if _is_number(value):
        return [num(path, value)]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return [num(path, value)]
        return [(path, "integer")] if value.dtype.kind in "iu" and value.size else []
    if isinstance(value, sp.MatrixBase):
        return [num((*path, ("entry", i)), value[i]) for i in range(len(value))]
    if isinstance(value, sp.Expr):
        return [num(path, value)]
    if isinstance(value, str):
        return [(path, "label")] if value in LABEL_SWAPS else []
    if isinstance(value, (tuple, list)):
        out = []
        for i, v in enumerate(value):
            out += leaves(v, (*path, ("idx", i)), depth + 1, index=index, zeros=zeros)
        return out
    if isinstance(value, Mapping):
        out = []
        for k in sorted(value, key=repr):
            out += leaves(value[k], (*path, ("key", k)), depth + 1, index=index,
                          zeros=zeros)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = []
        for f in dataclasses.fields(value):
            out += leaves(getattr(value, f.name), (*path, ("field", f.name)), depth + 1,
                          index=index, zeros=zeros)
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


def _scale_every_leaf(value: Any, op: str, delta: float) -> Any:
    """``value`` with every numeric leaf scaled by ``op`` (the resolution's whole-output
    scale: one factor for the whole output, a ReducedSystem's whole right-hand side)."""
    for path, kind in leaves(value):
        if kind == "numeric":
            value = apply_mutation(value, path, op, delta)
    return value


def _tilt_every_leaf(value: Any, op: str, delta: float) -> Any:
    """``value`` with its numeric leaves alternately times 1 + delta and 1 - delta (``tilt+``
    starts with 1 + delta, ``tilt-`` with 1 - delta; a float array's entries alternate
    within it, :func:`_tilt_leaf`): the resolution's mutant of a function
    a claim holds only up to a free multiple (``Claim.shape_only``), where a whole-output
    scale would be absorbed; a relative error delta in every leaf that no single multiple
    undoes."""
    up = op == "tilt+"
    for path, kind in leaves(value):
        if kind == "numeric":
            value = apply_mutation(value, path, "leaftilt+" if up else "leaftilt-", delta)
            up = not up
    return value


def _tilt_leaf(value: Any, op: str, delta: float) -> Any:
    """One leaf of a tilt: a float array's entries alternately times 1 + delta and 1 - delta
    (starting as ``op`` says; an array is one leaf to :func:`leaves`), any other leaf scaled."""
    up = op == "leaftilt+"
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and value.size > 1:
        signs = np.where(np.arange(value.size) % 2 == 0, 1.0, -1.0) * (1.0 if up else -1.0)
        return value * (1.0 + delta * signs).reshape(value.shape)
    return _op(value, "scale+" if up else "scale-", delta)


def _shape_tilt(value: Any, op: str, delta: float) -> Any:
    """A "shape" mutant of one leaf: a float array's entries alternately times 1 + delta and
    1 - delta along its last axis (``shape+`` starts with 1 + delta), the same factor for a
    given position on that axis whatever the leading axes; a leaf with fewer than two
    entries on its last axis is scaled (there is no shape to slip)."""
    up = op == "shape+"
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and value.ndim >= 1 \
            and value.shape[-1] > 1:
        signs = np.where(np.arange(value.shape[-1]) % 2 == 0, 1.0, -1.0) * (1.0 if up else -1.0)
        return value * (1.0 + delta * signs)
    if callable(value) and not isinstance(value, (sp.Basic, sp.MatrixBase, np.ndarray)):
        inner = value

        def mutated(*args, **kwargs):
            out = inner(*args, **kwargs)
            return _shape_tilt(np.asarray(out), op, delta) if isinstance(
                out, (np.ndarray, list, tuple)) else _op(out, "scale+" if up else "scale-", delta)

        return mutated
    return _op(value, "scale+" if up else "scale-", delta)


def _order(n: int, op: str) -> list[int]:
    idx = list(range(n))
    if n < 2:
        return idx
    if op == "swap01":
        idx[0], idx[1] = 1, 0
    elif op == "reverse":
        idx.reverse()
    elif op == "rotate":
        idx = idx[1:] + idx[:1]
    return idx


def _permute(value: Any, op: str) -> Any:
    """An index mutant of ``value`` (see the module docstring, 2.)."""
    if isinstance(value, (set, frozenset)):
        if not value:
            return value
        if op == "drop":
            return type(value)(sorted(value)[:-1])
        if op == "add":
            return type(value)(set(value) | {max(value) + 1})
        return value
    if isinstance(value, (tuple, list)) and value and op in ("drop", "add"):
        items = list(value)  # a set held as a sequence (a "set" MUTANT_KINDS function)
        if op == "drop":
            items.remove(max(items))
        else:
            items.append(max(items) + 1)
        return type(value)(items)
    scalar = _is_int(value) or (isinstance(value, np.ndarray) and value.ndim == 0)
    if scalar and op in ("next", "prev"):
        k = int(value)
        new = k + 1 if op == "next" or k <= 0 else k - 1
        if isinstance(value, np.ndarray):
            return np.asarray(new, dtype=value.dtype)
        return type(value)(new)
    if isinstance(value, np.ndarray) and value.ndim >= 1:
        return value[np.asarray(_order(value.shape[0], op))].copy()
    if isinstance(value, (tuple, list)):
        items = list(value)
        new = [items[i] for i in _order(len(items), op)]
        return type(value)(*new) if hasattr(value, "_fields") else type(value)(new)
    return value


def _op(value: Any, op: str, delta: float) -> Any:
    if op in ("swap01", "reverse", "rotate", "next", "prev", "drop", "add"):
        return _permute(value, op)
    if op in ("all+", "all-"):
        return _scale_every_leaf(value, "scale+" if op == "all+" else "scale-", delta)
    if op in ("tilt+", "tilt-"):
        return _tilt_every_leaf(value, op, delta)
    if op in ("leaftilt+", "leaftilt-"):
        return _tilt_leaf(value, op, delta)
    if op in ("shape+", "shape-"):
        return _shape_tilt(value, op, delta)
    if op == "swap":
        if isinstance(value, (bool, np.bool_)):
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


_OP_WORDS = {"sign": "sign flip", "swap": "labels swapped", "swap01": "entries 0 and 1 swapped",
             "reverse": "reversed", "rotate": "rotated by one", "next": "+ 1 (index)",
             "prev": "- 1 (index)", "drop": "largest member dropped", "add": "max + 1 added"}


def _label(path: Path_, op: str, delta: float) -> str:
    where = "".join(
        f"[{s[1]}]" if s[0] in ("idx", "entry") else f".rhs[{s[1]}]" if s[0] == "rhs"
        else f"[{s[1]!r}]" if s[0] == "key" else f".{s[1]}" if s[0] == "field" else "(...)"
        for s in path) or "output"
    what = {"scale+": f"x {1 + delta:g}", "scale-": f"x {1 - delta:g}",
            "all+": f"(every numeric leaf) x {1 + delta:g}",
            "all-": f"(every numeric leaf) x {1 - delta:g}",
            "tilt+": f"(numeric leaves alternately x {1 + delta:g} and x {1 - delta:g})",
            "tilt-": f"(numeric leaves alternately x {1 - delta:g} and x {1 + delta:g})",
            "shape+": f"alternately x {1 + delta:g} and x {1 - delta:g} along its last axis",
            "shape-": f"alternately x {1 - delta:g} and x {1 + delta:g} along its last axis",
            }.get(op) or _OP_WORDS[op]
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
                cap: int = MAX_MUTANTS, *, index: bool | str = False) -> list[Mutant]:
    """The function's mutants: every (leaf, op) pair, at most ``cap``, evenly chosen.  A
    function the map never saw called gets three whole-output mutants (scale +/-, sign; a
    ``MUTANT_KINDS`` function, ``index``: swap, reverse, rotate)."""
    by_kind = {**OPS_BY_KIND, "numeric": SHAPE_OPS} if index == "shape" else OPS_BY_KIND
    if structure is None:  # never called: whole-output mutants
        ops = (SHAPE_OPS if index == "shape"
               else INDEX_OPS["set" if index == "set" else "permutation"] if index
               else NUMERIC_OPS)
        cands = [((), op) for op in ops]
    else:
        cands = [(path, op) for path, kind in structure for op in by_kind.get(kind, ())]
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
    setattr(module, name, new)  # the theory module itself (a test's may be outside the project)
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




def _clear_derivation_caches() -> None:
    """Empty the functools caches outside theory/ and the run cache machinery (numerics',
    verify's, figures' derivations).  A run computed in the map pass that took a derivation
    from such a cache (built by an earlier run from a theory call) calls no theory function
    itself, so its key records no call and a mutant is served the map's unmutated result:
    rank_increase.log_flow_is_gd_limit's second log-flow run hit numerics.rank_increase.
    _quadratic_log_system, so under a log_flow mutant its solver-error estimate (the
    change between its two solves) took in the whole mutation and the part passed.  A
    cache inside theory sits below a public function, whose calls are recorded anyway."""
    for mod in _project_modules():
        if mod.__name__.split(".")[0] == "theory" or mod.__name__ == "numerics.cache":
            continue
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
            "parts": parts(result.worst),
            "kinds": {n: [v["kind"], v["status"]] for n, v in result.parts_seen.items()},
            "qualitative": result.claim.qualitative, "cost": result.claim.cost,
            "shape_only": dict(result.claim.shape_only),
            "shape_approx": dict(result.claim.shape_approx),
            "placement_only": dict(result.claim.placement_only),
            "correction_only": dict(result.claim.correction_only),
            "seconds": round(result.seconds, 3)}


def _check_only(claim, profile: str, ctx) -> dict:
    """The claim's check alone on every example the profile asks for (no controls, no
    shrinking): its outcome and its parts' kinds and worst statuses (the resolution)."""
    from verify.runner import _compared, _explore, _parts_seen, _worst, get_profile

    start = time.perf_counter()
    n_drawn = getattr(get_profile(profile), claim.cost)
    try:
        seen = _explore(claim.check, claim, ctx, n_drawn, shrink=False)
    except Exception as exc:  # a check that raises under a mutant: a defect, reported
        return {"outcome": "error", "message": f"{type(exc).__name__}: {exc}"[:400],
                "kinds": {}, "seconds": round(time.perf_counter() - start, 3)}
    statuses = {ev.status for _, ev in seen.runs}
    outcome = ("error" if not seen.runs else "refuted" if "refuted" in statuses
               else "inconclusive" if "inconclusive" in statuses else "holds")
    _, worst = _worst(seen.runs)
    parts = {} if worst is None else {
        p.name: [_f(p.predicted), _f(p.observed), _f(p.error), _f(p.lower), _f(p.upper),
                 _f(p.tolerance)] for p in worst.parts}
    return {"outcome": outcome, "message": "" if seen.runs else "no example was run",
            "kinds": {n: [v["kind"], v["status"]] for n, v in _parts_seen(seen.runs).items()},
            "parts": parts, "compared": _floats(_compared(seen.runs)),
            "seconds": round(time.perf_counter() - start, 3)}


def _f(x: float) -> float | str:
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _floats(x: Any) -> Any:
    """``x`` (nested dicts and lists of numbers) with every number through :func:`_f`."""
    if isinstance(x, dict):
        return {k: _floats(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_floats(v) for v in x]
    try:
        return _f(x)
    except (TypeError, ValueError):
        return str(x)


class _MapObserver:
    """Records theory calls per claim and role, and per cached run while it computes.

    With ``root`` (the map's cache folder, shared by map processes running side by side)
    each computed run's calls are also written beside it (``<key>.calls.json``, before the
    run is stored), so a process served a run that another process computed charges its
    claim with that run's calls as if it had computed the run itself."""

    def __init__(self, root: Path | None = None) -> None:
        self.claim: str | None = None
        self.roles: dict[str, dict[str, set[str]]] = {}
        self.key_calls: dict[str, set[str]] = {}
        self.stack: list[str] = []
        self.root = None if root is None else Path(root)

    def _sidecar(self, key: str) -> Path | None:
        return None if self.root is None else self.root / f"{key}{CALLS_SUFFIX}"

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
        _clear_derivation_caches()  # so this run's theory calls are made, and recorded
        self.stack.append(key)
        try:
            yield
        finally:
            self.stack.pop()
            side = self._sidecar(key)
            if side is not None:  # written before the run is stored (atomically, renamed)
                tmp = side.with_name(f"{side.name}.{os.getpid()}.tmp")
                tmp.write_text(json.dumps(sorted(self.key_calls[key])))
                tmp.replace(side)

    def served(self, key: str) -> None:
        from verify.claims import ROLE

        side = self._sidecar(key)
        if key not in self.key_calls and side is not None and side.exists():
            self.key_calls[key] = set(json.loads(side.read_text()))  # computed by another
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




def _load_row(paper: str, theory_module: str | None = None):
    return importlib.import_module(theory_module or f"theory.{paper}")


def _mutant_kinds(theory) -> dict[str, str]:
    kinds = dict(getattr(theory, "MUTANT_KINDS", {}))
    bad = {k: v for k, v in kinds.items() if v not in MUTANT_KIND_CHOICES}
    if bad:
        raise ValueError(f"{theory.__name__}.MUTANT_KINDS: kinds must be one of "
                         f"{', '.join(MUTANT_KIND_CHOICES)}, got {bad}")
    return kinds


def _claims_of(paper: str, module: str | None) -> list:
    from verify.registry import claims_for

    if module is None:
        return claims_for(paper)
    return importlib.import_module(module).claims()


def _run_claims(paper: str, profile: str, ids: Sequence[str] | None, cache_root: Path,
                before_each: Callable[[str], None] | None = None,
                module: str | None = None, first_failure: bool = False,
                stop: Callable[[str, dict], bool] | None = None,
                every_example: Sequence[str] = (), check_only: bool = False,
                compared: bool = False,
                progress: Callable[[str | None, dict], None] | None = None) -> dict[str, dict]:
    """Run the row's claims (``ids``, in that order when given); after each, ``stop(id,
    summary)`` true ends the run there (a mutant is killed: the later claims are not run).
    ``every_example``: claims that run every example even with ``first_failure``;
    ``check_only``: the check alone (:func:`_check_only`); ``progress(running, done)`` is
    called before each claim and at the end (a timed-out process leaves what it finished)."""
    from numerics.cache import RunCache
    from verify.claims import Context
    from verify.runner import run_claim

    by_id = {c.id: c for c in _claims_of(paper, module)}
    claims = list(by_id.values()) if ids is None else [by_id[i] for i in ids if i in by_id]
    ctx = Context(profile=profile, cache=RunCache(Path(cache_root)))
    out: dict[str, dict] = {}
    for claim in claims:
        if progress is not None:
            progress(claim.id, out)
        if before_each is not None:
            before_each(claim.id)
        if check_only:
            out[claim.id] = _check_only(claim, profile, ctx)
        else:
            result = run_claim(claim, profile, ctx,
                               first_failure=first_failure and claim.id not in every_example)
            out[claim.id] = _summary(result)
            if compared:  # the map's baseline: what --resolution compares mutants with
                out[claim.id]["compared"] = _floats(result.compared)
        if stop is not None and stop(claim.id, out[claim.id]):
            break
    if progress is not None:
        progress(None, out)
    return out


def map_worker(paper: str, profile: str, cache_root: str, ids: Sequence[str] | None,
               module: str | None = None, theory_module: str | None = None) -> dict:
    """The map pass (run in a fresh process): roles, output structures, run-call sets."""
    import torch

    from numerics.cache import observing

    torch.set_num_threads(thread_count(1))
    theory = _load_row(paper, theory_module)
    kinds = _mutant_kinds(theory)
    observer = _MapObserver(Path(cache_root))
    structures: dict[str, list] = {}
    for name in _public_functions(theory):
        original = getattr(theory, name)

        def recorder(*args, _name=name, _fn=original, **kwargs):
            out = _fn(*args, **kwargs)
            observer.called(_name)
            if _name not in structures:
                with contextlib.suppress(Exception):
                    structures[_name] = [[list(map(list, p)), k] for p, k in leaves(
                        out, index=kinds.get(_name, False), zeros=True)]
            elif any(k == "zero" for _, k in structures[_name]):
                # a leaf stays "zero" only while it is 0 at every call (a call whose leaves
                # cannot be read counts as nonzero)
                try:
                    now = {tuple(map(tuple, p)): k for p, k in leaves(
                        out, index=kinds.get(_name, False), zeros=True)}
                except Exception:
                    now = {}
                for entry in structures[_name]:
                    if entry[1] == "zero" and now.get(tuple(map(tuple, entry[0]))) != "zero":
                        entry[1] = "numeric"
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
        baseline = _run_claims(paper, profile, ids, Path(cache_root), before, module,
                               compared=True)
    return {"functions": _public_functions(theory),
            "roles": {fn: {c: sorted(r) for c, r in by.items()} for fn, by in observer.roles.items()},
            "structures": structures,
            "key_calls": {k: sorted(v) for k, v in observer.key_calls.items()},
            "baseline": baseline, "seconds": time.perf_counter() - start,
            "delta": {k: list(v) for k, v in getattr(theory, "MUTATION_DELTA", {}).items()},
            "unjudged": dict(getattr(theory, "UNJUDGED", {})), "mutant_kinds": kinds}


def claim_order(paper: str, module: str | None = None) -> list[str]:
    """The row's claim ids, the costly first (gpu, slow, fast; the row's order within each):
    the order in which a parallel map pass hands them out."""
    rank = {"gpu": 0, "slow": 1, "fast": 2}
    claims = _claims_of(paper, module)
    return [c.id for _, c in sorted(enumerate(claims),
                                    key=lambda ic: (rank.get(ic[1].cost, 1), ic[0]))]


def _merge_maps(maps: Sequence[Mapping], ids: Sequence[str], seconds: float) -> dict:
    """One map from the per-claim maps of a parallel pass (``maps`` in the row's order), as
    the serial pass would give: roles and run-call sets united, a function's output
    structure from the first claim (in the row's order) that recorded it, a leaf "zero" only where every process saw zero,
    the baselines in the row's order; ``seconds`` is the pass's wall time."""
    first = maps[0]
    roles: dict[str, dict[str, list[str]]] = {}
    key_calls: dict[str, set[str]] = {}
    structures: dict[str, list] = {}
    baseline: dict[str, Any] = {}
    for m in maps:
        for fn, by in m["roles"].items():
            for cid, rs in by.items():
                roles.setdefault(fn, {})[cid] = sorted(set(roles.get(fn, {}).get(cid, ()))
                                                       | set(rs))
        for key, calls in m["key_calls"].items():
            key_calls.setdefault(key, set()).update(calls)
        for fn, entries in m["structures"].items():
            if fn not in structures:
                structures[fn] = [list(e) for e in entries]
                continue
            now = {json.dumps(p): k for p, k in entries}
            for entry in structures[fn]:
                if entry[1] == "zero" and now.get(json.dumps(entry[0])) != "zero":
                    entry[1] = "numeric"
        baseline.update(m["baseline"])
    ordered = {cid: baseline[cid] for cid in ids if cid in baseline}
    return {**first, "roles": roles, "structures": structures,
            "key_calls": {k: sorted(v) for k, v in key_calls.items()},
            "baseline": ordered, "seconds": seconds,
            "claim_seconds": sum(float(m["seconds"]) for m in maps)}


def _map_pass(paper: str, profile: str, map_root: str, jobs: int,
              module: str | None, theory_module: str | None) -> dict:
    """The map pass: one process for the whole row when ``jobs`` is 1; else one process
    per claim, ``jobs`` at a time, the costly claims first, sharing the map's cache folder
    (a run another claim's process computed is served with its recorded calls,
    :class:`_MapObserver`), merged into what the serial pass gives (:func:`_merge_maps`)."""
    payload = {"paper": paper, "profile": profile, "cache_root": map_root, "module": module,
               "theory_module": theory_module}
    start = time.perf_counter()
    if jobs <= 1:
        return _child("map", {**payload, "ids": None}, timeout=None)
    listed = _child("claims", {"paper": paper, "module": module}, timeout=None)
    if "error" in listed:
        return listed
    ids = listed["ids"]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        maps = list(pool.map(lambda cid: _child("map", {**payload, "ids": [cid]},
                                                timeout=None), ids))
    failed = [(cid, m["error"]) for cid, m in zip(ids, maps, strict=True) if "error" in m]
    if failed:
        return {"error": "; ".join(f"{cid}: {e}" for cid, e in failed)}
    row_ids = listed["row_order"]
    if sorted(row_ids) != sorted(ids):
        return {"error": "the claims handed out are not the row's claims"}
    by_id = dict(zip(ids, maps, strict=True))
    return _merge_maps([by_id[cid] for cid in row_ids if cid in by_id], row_ids,
                       time.perf_counter() - start)


def mutant_worker(paper: str, profile: str, mutant: Mutant, ids: Sequence[str],
                  key_calls: Mapping[str, Sequence[str]], map_root: str,
                  module: str | None = None, baseline: Mapping[str, Mapping] | None = None,
                  every_example: Sequence[str] = (), check_only: bool = False,
                  theory_module: str | None = None, progress_path: str | None = None
                  ) -> dict:
    """One mutant (run in a fresh process): patch, build the row's claims, run ``ids`` in
    order; with ``baseline`` (the map run's summaries) it stops at the first claim that
    kills the mutant, since one kill is enough.  ``progress_path`` receives, before each
    claim, the claim running and the summaries so far."""
    import torch

    from numerics.cache import observing

    torch.set_num_threads(thread_count(1))
    theory = _load_row(paper, theory_module)
    original = getattr(theory, mutant.function)

    def mutated(*args, **kwargs):
        return apply_mutation(original(*args, **kwargs), mutant.path, mutant.op, mutant.delta)

    if hasattr(original, "cache_clear"):
        mutated.cache_clear = original.cache_clear  # type: ignore[attr-defined]
    _patch_everywhere(theory, mutant.function, mutated)
    _clear_caches()

    def progress(running: str | None, done: dict) -> None:
        if progress_path is not None:
            Path(progress_path).write_text(json.dumps({"running": running, "done": done},
                                                      default=str))

    with tempfile.TemporaryDirectory(prefix="tdcheck-mutant-") as own, \
            observing(_MutantObserver(mutant.function, key_calls, Path(map_root))):
        stop = None if baseline is None else (
            lambda cid, summary: (_detect(baseline[cid], summary) or ("",))[0] == "kill")
        return _run_claims(paper, profile, ids, Path(own), lambda _: _clear_caches(), module,
                           first_failure=True, stop=stop, every_example=every_example,
                           check_only=check_only, progress=progress)


_PRELOAD = ["numpy", "scipy.integrate", "scipy.optimize", "scipy.stats", "sympy", "torch",
            "hypothesis", "verify.claims", "verify.runner", "verify.mutate"]


def _forkserver():
    """A forkserver with the heavy libraries preloaded (torch, sympy, scipy, hypothesis and
    the engine, but no row module): each mutant is a fresh process forked from it, so it
    starts in a fraction of a second and still imports and patches its row from scratch."""
    import multiprocessing as mp

    n = str(thread_count(1))
    os.environ.setdefault("OMP_NUM_THREADS", n)
    os.environ.setdefault("MKL_NUM_THREADS", n)
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx




def _forked(src: str, dst: str) -> None:
    _main(src, dst)


def _timed_out(timeout: float | None, progress: Path) -> dict:
    """A timed-out mutant: the claims it finished, and the one it was running."""
    out: dict[str, Any] = {"error": f"timed out after {timeout:.0f} s", "timed_out": True}
    with contextlib.suppress(OSError, ValueError):
        out.update(json.loads(progress.read_text()))
    return out


def _child(kind: str, payload: dict, timeout: float | None) -> dict:
    """Run ``map_worker`` or ``mutant_worker`` in a fresh process; its JSON result.  A
    failure is ``{"error": ...}`` with ``timed_out``, and for a mutant the claims it
    finished (``done``) and the one it was running (``running``)."""
    with tempfile.TemporaryDirectory(prefix="tdcheck-mutate-") as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        progress = Path(tmp) / "progress.json"
        path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        src.write_text(json.dumps({"kind": kind, "path": path, "progress_path": str(progress),
                                   **payload}))
        try:
            ctx = _forkserver()
        except (ValueError, OSError):  # no forkserver here: a fresh interpreter instead
            return _interpreter(src, dst, timeout, progress)
        proc = ctx.Process(target=_forked, args=(str(src), str(dst)))
        proc.start()
        proc.join(timeout)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
            return _timed_out(timeout, progress)
        if proc.exitcode != 0 or not dst.exists():
            out = {"error": f"the {kind} process failed (exit code {proc.exitcode})"}
            with contextlib.suppress(OSError, ValueError):
                out.update(json.loads(progress.read_text()))
            return out
        return json.loads(dst.read_text())


def _interpreter(src: Path, dst: Path, timeout: float | None, progress: Path) -> dict:
    n = str(thread_count(1))
    env = {**os.environ, "OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run([sys.executable, "-m", "verify.mutate", str(src), str(dst)],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return _timed_out(timeout, progress)
    if proc.returncode != 0 or not dst.exists():
        return {"error": (proc.stderr or proc.stdout)[-1500:]}
    return json.loads(dst.read_text())


def _main(src: str, dst: str) -> int:
    payload = json.loads(Path(src).read_text())
    for entry in reversed(payload.get("path", [])):  # the caller's PYTHONPATH, now
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if payload["kind"] == "claims":
        out = {"ids": claim_order(payload["paper"], payload.get("module")),
               "row_order": [c.id for c in _claims_of(payload["paper"], payload.get("module"))]}
    elif payload["kind"] == "map":
        out = map_worker(payload["paper"], payload["profile"], payload["cache_root"],
                         payload.get("ids"), payload.get("module"),
                         payload.get("theory_module"))
    else:
        out = mutant_worker(payload["paper"], payload["profile"],
                            Mutant.from_json(payload["mutant"]), payload["ids"],
                            payload["key_calls"], payload["map_root"], payload.get("module"),
                            payload.get("baseline"), payload.get("every_example", ()),
                            bool(payload.get("check_only")), payload.get("theory_module"),
                            payload.get("progress_path"))
    Path(dst).write_text(json.dumps(out, default=str))
    return 0


# ---------------------------------------------------------------------- judging
def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


def _raised(base: Mapping, mut: Mapping) -> list[tuple[str, str]]:
    """(role, message) for each role of the claim that raised under the mutant and not in
    the map run: ``check``, ``control``, ``positive control``."""
    out = []
    if mut.get("outcome") == "error" and base.get("outcome") != "error":
        out.append(("check", _first_line(mut.get("message")) or "the check raised"))
    if mut.get("control_error") and not base.get("control_error"):
        out.append(("control", _first_line(mut["control_error"])))
    if mut.get("positive_error") and not base.get("positive_error"):
        out.append(("positive control", _first_line(mut["positive_error"])))
    return out


def _detect(base: Mapping, mut: Mapping) -> tuple[str, str] | None:
    """How a consuming claim responds to a mutant, against its map run ``base``:
    ``(strength, why)`` with strength ``kill``, ``weak``, ``defect`` or ``timeout``
    (module docstring, 4.), ``None`` when nothing changed."""
    if mut.get("timed_out"):
        return "timeout", mut.get("error", "timed out")
    if "error" in mut:
        return "defect", f"the mutant's process failed: {_first_line(mut['error'])}"
    raised = dict(_raised(base, mut))
    if "check" in raised:
        return "defect", f"check raised: {raised['check']}"
    b, m = base["outcome"], mut["outcome"]
    if m != b:
        if b == "holds":
            return ("kill", "refutation") if m == "refuted" else ("weak", "inconclusive")
        if b == "refuted":
            return ("kill", "held") if m == "holds" else ("weak", "inconclusive")
        return "weak", f"changed outcome ({b} -> {m})"
    if "control" not in raised and mut.get("control_rejected") != base.get("control_rejected"):
        return "kill", ("control" if base.get("control_rejected") is True
                        and mut.get("control_rejected") is False else "changed control")
    if "positive control" not in raised and \
            mut.get("positive_passed") != base.get("positive_passed"):
        return "kill", ("positive control" if base.get("positive_passed") is True
                        else "changed positive control")
    if raised:
        return "defect", "; ".join(f"{role} raised: {msg}" for role, msg in raised.items())
    if base.get("ok") and not mut.get("ok"):
        return "kill", "other"
    return None


def _sim_moves(base: Mapping, mut: Mapping) -> tuple[list[str], list[str]]:
    """(rejecting, weakly rejecting) simulation parts of one claim under a mutant, as
    ``"name: before -> after"`` (module docstring, 6.)."""
    strong: list[str] = []
    weak: list[str] = []
    now = mut.get("kinds") or {}
    settled = base.get("outcome") == "holds"
    for name, (kind, status) in (base.get("kinds") or {}).items():
        if kind != "simulation" or name not in now or now[name][1] == status:
            continue
        label = f"{name}: {status} -> {now[name][1]}"
        (strong if settled and status == "pass" and now[name][1] == "fail" else weak).append(label)
    return strong, weak


def _is_sim(summary: Mapping) -> bool:
    return any(k == "simulation" for k, _ in (summary.get("kinds") or {}).values())


def _moved(base: Mapping, mut: Mapping) -> list[str]:
    """Names of parts whose numbers differ between the map run and the mutant."""
    if "parts" not in mut:
        return []
    out = []
    for name, nums in mut["parts"].items():
        if base["parts"].get(name) != nums:
            out.append(name)
    return out


_STATUS_RANK = {"kill": 4, "weak": 3, "defect": 2, "timeout": 1, "survived": 0}


#: parts that say a theory output is unusable or outside its domain, not a prediction's
#: comparison: the runner's admissibility part and a row's own (scan_snap's invalid indices)
NON_PREDICTION_PARTS = (INADMISSIBLE_PART, "theory output usable (token indices, signs)")
#: a check with several theory inputs names each input's usability part "<input>: theory
#: output usable" (scan_snap.decoder_full_model, rank_increase.log_flow_is_gd_limit)
NON_PREDICTION_SUFFIX = ": theory output usable"


def _non_prediction(name: str) -> bool:
    """Whether a part only says the theory's output left its domain or is unusable."""
    return name in NON_PREDICTION_PARTS or name.endswith(NON_PREDICTION_SUFFIX)


def _domain_kill(base: Mapping, mut: Mapping, why: str) -> bool:
    """Whether a claim's kill came from a non-prediction part alone: a refutation in which a
    NON_PREDICTION_PARTS part fails over the examples run and no other part's worst status
    (over every example) differs from the map run's."""
    if why != "refutation":
        return False
    now, was = mut.get("kinds") or {}, base.get("kinds") or {}
    if not any(status == "fail" for name, (_, status) in now.items() if _non_prediction(name)):
        return False
    return all(status == (was.get(name) or ("", status))[1]
               for name, (_, status) in now.items() if not _non_prediction(name))


def _domain_only(entry: Mapping) -> bool:
    """Whether every claim that killed the mutant killed it by a non-prediction part alone
    (:func:`_domain_kill`, recorded per claim by :func:`_judge`)."""
    by, dom = entry.get("by", {}), entry.get("domain", {})
    return bool(by) and all(dom.get(c, False) for c in by)


def _judge(entry: dict, ids: Sequence[str], out: Mapping, baseline: Mapping[str, Mapping],
           sim_claims: Sequence[str]) -> None:
    """Fill a mutant's ``entry`` from its process's output ``out``."""
    failed = "error" in out
    done = out.get("done", {}) if failed else out
    running = out.get("running") if failed else None
    if failed and running is None and not done:
        running = ids[0] if ids else None
    status = "survived"
    sim_status = "survived" if sim_claims else None
    for cid in ids:
        if cid in done:
            mut = done[cid]
        elif failed and cid == running:
            mut = {"error": out["error"], "timed_out": bool(out.get("timed_out"))}
        else:
            continue  # not run: an earlier claim killed the mutant, or the process stopped
        base = baseline[cid]
        found = _detect(base, mut)
        if found is not None:
            strength, why = found
            if strength in ("kill", "weak"):
                entry["by"][cid] = why
                entry["strength"][cid] = strength
                entry.setdefault("domain", {})[cid] = _domain_kill(base, mut, why)
            elif strength == "timeout":
                entry["timeouts"].append({"claim": cid, "message": why})
            if _STATUS_RANK[strength] > _STATUS_RANK[status]:
                status = strength
        if "error" in mut and not mut.get("timed_out"):
            entry["defects"].append({"claim": cid, "role": "process",
                                     "message": _first_line(mut["error"])})
        elif "error" not in mut:
            for role, msg in _raised(base, mut):
                entry["defects"].append({"claim": cid, "role": role, "message": msg})
        moved = _moved(base, mut)
        if moved:
            entry["moved"][cid] = moved
        if cid in sim_claims:
            if "error" in mut:
                sim_here = "timeout" if mut.get("timed_out") else "defect"
            elif mut.get("outcome") == "error":
                sim_here = "defect"
            else:
                strong, weak = _sim_moves(base, mut)
                sim_here = "kill" if strong else "weak" if weak else "survived"
                if strong or weak:
                    entry["simulation_parts"][cid] = strong + weak
            if _STATUS_RANK[sim_here] > _STATUS_RANK[sim_status]:
                sim_status = sim_here
    entry["status"] = status
    entry["killed"] = status in ("kill", "weak")
    entry["simulation"] = {"kill": "rejected"}.get(sim_status, sim_status)


@dataclass
class RowResult:
    paper: str
    profile: str
    functions: dict[str, dict] = field(default_factory=dict)
    baseline: dict[str, dict] = field(default_factory=dict)
    seconds: float = 0.0
    map_seconds: float = 0.0
    every_claim: bool = False  # False: a mutant stops at its first killing claim
    claim_seconds: dict[str, float] = field(default_factory=dict)  # summed over mutants
    resolution: dict[str, dict] | None = None
    resolution_seconds: float = 0.0
    resolution_only: bool = False  # no score mutants were run

    def _all(self) -> list[dict]:
        return [m for f in self.functions.values() for m in f["mutants"]]

    def _count(self, status: str) -> int:
        return sum(m.get("status") == status for m in self._all())

    @property
    def mutants(self) -> int:
        return len(self._all())

    @property
    def killed(self) -> int:
        """Kills and weak kills (module docstring, 4.)."""
        return sum(bool(m["killed"]) for m in self._all())

    @property
    def weak(self) -> int:
        return self._count("weak")

    @property
    def domain_only(self) -> int:
        """Kills whose every killing claim moved only the "theory admissible" part: the
        mutant left the function's domain (a negative weight, a blown-up flow) and no
        prediction was compared (an honest kill, but not one a prediction made)."""
        return sum(bool(m["killed"]) and _domain_only(m) for m in self._all())

    @property
    def exceptions(self) -> int:
        """Mutants that made some consuming check, control or positive control raise."""
        return sum(bool(m.get("defects")) for m in self._all())

    @property
    def timeouts(self) -> int:
        return self._count("timeout")

    @property
    def score(self) -> float:
        return self.killed / self.mutants if self.mutants else math.nan

    def simulation(self) -> dict:
        sims = [m for m in self._all() if m.get("simulation") is not None]
        count = {s: sum(m["simulation"] == s for m in sims)
                 for s in ("rejected", "weak", "defect", "timeout", "survived")}
        return {"score": count["rejected"] / len(sims) if sims else math.nan,
                "mutants": len(sims), **count,
                "claims": sorted(c for c, b in self.baseline.items() if _is_sim(b)),
                "functions": sorted(n for n, f in self.functions.items() if f["simulation"])}

    def to_json(self) -> dict:
        by: dict[str, int] = {}
        for m in self._all():
            for why in m["by"].values():
                by[why] = by.get(why, 0) + 1
        return {"score": self.score, "killed": self.killed, "mutants": self.mutants,
                "strong": self.killed - self.weak, "weak": self.weak,
                "domain_only": self.domain_only,
                "exceptions": self.exceptions, "timeouts": self.timeouts,
                "by_status": {s: self._count(s) for s in _STATUS_RANK},
                "simulation": self.simulation(),
                "defects": [{"mutant": m["label"], **d} for m in self._all()
                            for d in m.get("defects", ())],
                "timeouts_list": [{"mutant": m["label"], **t} for m in self._all()
                                  for t in m.get("timeouts", ())],
                "seconds": round(self.seconds, 1), "map_seconds": round(self.map_seconds, 1),
                "profile": self.profile, "killed_by_kind": by,
                "every_claim": self.every_claim, "resolution_only": self.resolution_only,
                "resolution": self.resolution,
                "resolution_seconds": round(self.resolution_seconds, 1),
                "claim_seconds": {c: round(v, 1) for c, v in sorted(
                    self.claim_seconds.items(), key=lambda kv: -kv[1])},
                "unconsumed": sorted(n for n, f in self.functions.items() if not f["consumed_by"]),
                "unjudged": {n: f["unjudged"] for n, f in self.functions.items() if f["unjudged"]},
                "details_only": sorted(n for n, f in self.functions.items() if f["details_only"]),
                "integer_leaves": {n: f["integer_leaves"] for n, f in self.functions.items()
                                   if f.get("integer_leaves")},
                "zero_leaves": {n: f["zero_leaves"] for n, f in self.functions.items()
                                if f.get("zero_leaves")},
                "baseline_not_ok": sorted(c for c, r in self.baseline.items() if not r["ok"]),
                "functions": self.functions}


def _structure(mp: Mapping, name: str) -> list | None:
    s = mp["structures"].get(name)
    return None if s is None else [(tuple(tuple(x) for x in p), k) for p, k in s]


def mutate_row(paper: str, profile: str = "quick", functions: Sequence[str] | None = None,
               jobs: int | None = None, max_mutants: int = MAX_MUTANTS,
               delta: float = DEFAULT_DELTA, progress: bool = False,
               backend: str = "serial", address: str | None = None,
               claims_module: str | None = None, every_claim: bool = False,
               resolution: bool = False, resolution_only: bool = False,
               resolution_budget: float = RESOLUTION_BUDGET,
               theory_module: str | None = None) -> RowResult:
    """Map the row, run every mutant of ``functions`` (default: all public), judge them;
    with ``resolution`` (or ``resolution_only``: no score mutants) measure the resolution of
    its simulation claims (module docstring, 7.).

    A mutant runs its consuming claims cheapest first (by the map run's seconds) and stops
    at the first that kills it, so a killed mutant names the claim that killed it first;
    ``every_claim`` runs them all (every detecting claim named, slower); the mutants of a
    simulation function always run them all.  ``claims_module`` replaces ``verify.<paper>``
    as the source of claims (a module with a ``claims()``) and ``theory_module`` replaces
    ``theory.<paper>`` (the tests use them to score synthetic rows)."""
    start = time.perf_counter()
    jobs = max(1, jobs or os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix=f"tdcheck-map-{paper}-") as map_root:
        mp = _map_pass(paper, profile, map_root, jobs, claims_module, theory_module)
        if "error" in mp:
            raise RuntimeError(f"the map pass of {paper} failed: {mp['error']}")
        row = RowResult(paper, profile, baseline=mp["baseline"], map_seconds=mp["seconds"],
                        every_claim=every_claim, resolution_only=resolution_only)
        if not resolution_only:
            _score_mutants(row, mp, map_root, paper, profile, functions, jobs, max_mutants,
                           delta, progress, backend, address, claims_module, theory_module)
        if resolution or resolution_only:
            t0 = time.perf_counter()
            row.resolution = _resolution(mp, map_root, paper, profile, jobs, claims_module,
                                         theory_module, max(60.0, resolution_budget
                                                            - mp["seconds"]))
            row.resolution_seconds = time.perf_counter() - t0
    row.seconds = time.perf_counter() - start
    return row


def _score_mutants(row: RowResult, mp: Mapping, map_root: str, paper: str, profile: str,
                   functions: Sequence[str] | None, jobs: int, max_mutants: int, delta: float,
                   progress: bool, backend: str, address: str | None,
                   claims_module: str | None, theory_module: str | None) -> None:
    base_all = mp["baseline"]
    sim_all = {c for c, b in base_all.items() if _is_sim(b)}
    kinds = mp.get("mutant_kinds", {})
    names = [n for n in mp["functions"] if functions is None or n in functions]
    jobs_list: list[tuple[str, Mutant, list[str], list[str]]] = []
    for name in names:
        roles = mp["roles"].get(name, {})
        consumers = sorted(c for c, r in roles.items() if "check" in r)
        # a consumer judges a mutant against the map run's verdict (module docstring, 4.)
        judged = sorted((c for c in consumers if c in base_all
                         and base_all[c].get("outcome") != "error"),
                        key=lambda c: (base_all[c].get("seconds", 0.0), c))
        sims = [c for c in judged if c in sim_all]
        d, reason = mp["delta"].get(name, (delta, ""))
        structure = _structure(mp, name)
        muts = mutants_for(name, structure, float(d), max_mutants,
                           index=kinds.get(name, False))
        row.functions[name] = {
            "roles": roles, "consumed_by": consumers, "judged_by": judged,
            "simulation": bool(sims), "simulation_claims": sims,
            "mutant_kind": kinds.get(name),
            "integer_leaves": sum(k == "integer" for _, k in structure or ()),
            "zero_leaves": sum(k == "zero" for _, k in structure or ()),
            "delta": float(d), "delta_reason": reason,
            "unjudged": mp["unjudged"].get(name), "details_only": False,
            "mutants": [{"label": m.label, "killed": False, "status": "survived", "by": {},
                         "strength": {}, "moved": {}, "defects": [], "timeouts": [],
                         "simulation": None, "simulation_parts": {}, "ran": bool(judged)}
                        for m in muts]}
        if judged:
            jobs_list += [(name, m, judged, sims) for m in muts]

    def budget(ids: Sequence[str]) -> float:
        """A mutant's time limit: 10 x what its claims took in the map run, + 60 s."""
        return max(60.0, 10 * sum(base_all[c].get("seconds", 0.0) for c in ids) + 60)

    def run_one(item):
        name, m, ids, sims = item
        every = row.every_claim or bool(sims)
        full = [c for c in sims if base_all[c].get("cost") != "fast"]
        return item, _child("mutant", {"paper": paper, "profile": profile,
                                       "mutant": m.to_json(), "ids": ids,
                                       "key_calls": mp["key_calls"], "map_root": map_root,
                                       "module": claims_module, "theory_module": theory_module,
                                       "every_example": full,
                                       "baseline": None if every else
                                       {c: base_all[c] for c in ids}},
                            timeout=budget(ids))

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs_list), desc=f"mutate {row.paper}", unit="mutant")
    results = _map_jobs(run_one, jobs_list, jobs, backend, address, bar)
    if bar is not None:
        bar.close()
    index = {name: 0 for name in names}
    for (name, _m, ids, sims), out in results:
        entry = row.functions[name]["mutants"][index[name]]
        index[name] += 1
        _judge(entry, ids, out, base_all, sims)
        done = out.get("done", {}) if "error" in out else out
        ran = {cid: r.get("seconds", 0.0) for cid, r in done.items()
               if isinstance(r, dict) and "seconds" in r}
        entry["seconds"] = round(sum(ran.values()), 1)
        for cid, sec in ran.items():
            row.claim_seconds[cid] = row.claim_seconds.get(cid, 0.0) + sec
        if "error" in out:
            entry["error"] = out["error"][-300:]
    for f in row.functions.values():
        f["details_only"] = bool(f["judged_by"]) and not any(
            m["killed"] or m["moved"] for m in f["mutants"])


# ---------------------------------------------------------------------- resolution
def _resolution_verdict(base: Mapping, mut: Mapping) -> tuple[str, list[str]]:
    """``rejected`` (a simulation part that passed in the map run fails), ``weak`` (one
    left ``pass``, none failed), ``not rejected``, ``defect`` or ``timeout``; and the parts."""
    if mut.get("timed_out"):
        return "timeout", []
    if "error" in mut:
        return "defect", [_first_line(mut["error"])]
    if mut.get("outcome") == "error":
        return "defect", [_first_line(mut.get("message"))]
    now = mut.get("kinds") or {}
    failed, left = [], []
    for name, (kind, status) in (base.get("kinds") or {}).items():
        if kind == "simulation" and status == "pass" and name in now and now[name][1] != "pass":
            (failed if now[name][1] == "fail" else left).append(f"{name}: pass -> {now[name][1]}")
    if failed:
        return "rejected", failed + left
    return ("weak", left) if left else ("not rejected", [])


#: relative change below which a part's number has not moved: float rounding.  A scale
#: mutant of a quantity a statement takes only in ratios (theory.scan_snap's c~ in Eqn 11)
#: changes the part's numbers by rounding (1e-16 relative, amplified by the statistic's
#: condition, e.g. 1/ln chi ~ 1e3 at M = 253), not by what the mutant says
MOVE_RTOL = 1e-9


def _same_number(a, b) -> bool:
    """Equal up to :data:`MOVE_RTOL` (relative); non-finite values (stored as strings) and
    missing ones must be identical."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= MOVE_RTOL * max(abs(a), abs(b))
    return a == b


def _same_numbers(a, b) -> bool:
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or len(a) != len(b):
        return a == b
    return all(_same_number(x, y) for x, y in zip(a, b, strict=True))


def _moves_simulation(base: Mapping, mut: Mapping) -> bool:
    """Whether a simulation part's numbers (worst example) or status differ from the map's
    by more than float rounding (:data:`MOVE_RTOL`)."""
    kinds, parts, now = base.get("kinds") or {}, base.get("parts") or {}, mut.get("parts") or {}
    now_kinds = mut.get("kinds") or {}
    for name, (kind, status) in kinds.items():
        if kind != "simulation":
            continue
        if name in now and not _same_numbers(now[name], parts.get(name)):
            return True
        if name in now_kinds and now_kinds[name][1] != status:
            return True
    return False


def _same_group(a: Any, b: Any) -> bool:
    """One part's (or member's) values (predicted, observed, then error-like numbers) equal
    up to float rounding: the predicted and observed values relative to themselves
    (:data:`MOVE_RTOL`), an error-like number relative to the larger of them too, since it
    is their difference (a near-cancelled error moves by the rounding of the values it is
    the difference of, e.g. 3e-15 on 1.8e-6)."""
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or len(a) != len(b):
        return a == b
    nums = [x for x in (*a[:2], *b[:2]) if isinstance(x, (int, float))]
    scale = max((abs(x) for x in nums), default=0.0)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if not (isinstance(x, (int, float)) and isinstance(y, (int, float))):
            if x != y:
                return False
        elif abs(x - y) > MOVE_RTOL * max(abs(x), abs(y), scale if i >= 2 else 0.0):
            return False
    return True


def _groups(values: Any) -> list:
    """A part's compared values as a list of groups: every example's member_values rows, or
    its five numbers."""
    out: list = []
    for v in values if isinstance(values, (list, tuple)) else [values]:
        if isinstance(v, (list, tuple)) and v and isinstance(v[0], (list, tuple)):
            out.extend(v)  # an example's member rows
        else:
            out.append(v)
    return out


def _moves_value(base: Mapping, mut: Mapping) -> bool:
    """Whether a simulation part's prediction, observation, error or error interval differs
    from the map's by more than float rounding (:func:`_same_group`): a move of its
    tolerance alone (or of the status that follows from it) is not one.  Where the runs
    recorded them (``compared``: every example's values, a worst-member part's every
    member's), those are compared, so a tolerance that moves the worst example or member to
    another is no move; else the worst example's.  A function whose mutants move only
    tolerances enters the claim's simulation parts through their model-mismatch allowances,
    not through what the parts compare (module docstring, 7.)."""
    kinds, parts, now = base.get("kinds") or {}, base.get("parts") or {}, mut.get("parts") or {}
    seen, seen_now = base.get("compared") or {}, mut.get("compared") or {}
    for name, (kind, _status) in kinds.items():
        if kind != "simulation":
            continue
        if name in seen and name in seen_now:  # every example's (and member's) values
            old, new = _groups(seen[name]), _groups(seen_now[name])
            if len(old) != len(new) or not all(
                    _same_group(x, y) for x, y in zip(new, old, strict=True)):
                return True
            continue
        if name not in now:
            continue
        old = parts.get(name)
        if not isinstance(old, (list, tuple)) or not isinstance(now[name], (list, tuple)):
            if now[name] != old:
                return True
            continue
        if not _same_group(list(now[name])[:5], list(old)[:5]):
            return True
    return False


def _resolution_plan(mp: Mapping) -> tuple[dict[str, dict], list[tuple[str, list[str]]]]:
    """Answers known without running (n/a), and the (claim, functions) to measure."""
    base_all, kinds = mp["baseline"], mp.get("mutant_kinds", {})
    answers: dict[str, dict] = {}
    todo: list[tuple[str, list[str]]] = []
    sims = sorted((c for c, b in base_all.items() if _is_sim(b)),
                  key=lambda c: (base_all[c].get("seconds", 0.0), c))
    for cid in sims:
        base = base_all[cid]
        consumed = sorted(f for f, roles in mp["roles"].items() if "check" in roles.get(cid, ()))
        unjudged = [f for f in consumed if f in mp["unjudged"]]
        # index-valued functions have nothing to scale; a "shape" one is numeric here
        fns = [f for f in consumed if f not in mp["unjudged"] and kinds.get(f) in (None, "shape")
               and any(k == "numeric" for _, k in _structure(mp, f) or ())]
        entry = {"functions": fns, "left_out": sorted(set(consumed) - set(fns)),
                 "unjudged": unjudged, "seconds": 0.0, "rungs": [], "weak_delta": None,
                 "simulation_parts": sorted(n for n, (k, _) in base["kinds"].items()
                                            if k == "simulation")}
        passing = [n for n, (k, s) in base["kinds"].items() if k == "simulation" and s == "pass"]
        if base.get("qualitative"):
            answers[cid] = {**entry, "delta": "n/a: qualitative (signs or orderings only)",
                            "reason": base["qualitative"]}
        elif not passing:
            answers[cid] = {**entry, "delta": "n/a: no simulation part passed in the map run "
                                              "(nothing for a mutant to make fail)"}
        elif not fns:
            answers[cid] = {**entry, "delta": "n/a: consumes no theory function with a "
                                              "numeric output"}
        else:
            answers[cid] = entry
            todo.append((cid, fns))
    return answers, todo


def _resolution(mp: Mapping, map_root: str, paper: str, profile: str, jobs: int,
                claims_module: str | None, theory_module: str | None, budget: float
                ) -> dict[str, dict]:
    """The resolution of every simulation claim (module docstring, 7.)."""
    answers, todo = _resolution_plan(mp)
    kinds = mp.get("mutant_kinds", {})
    if not todo:
        return answers
    slots = min(jobs, len(todo))
    width = max(1, jobs // slots)  # a claim's mutants side by side when processes are spare
    end = time.perf_counter() + budget
    lock, waiting = threading.Lock(), [len(todo)]

    def ladder(item: tuple[str, list[str]]) -> tuple[str, dict]:
        cid, fns = item
        base = mp["baseline"][cid]
        entry = answers[cid]
        with lock:  # its share of what is left: a claim settled early leaves its time
            t0 = time.perf_counter()
            share = max(0.0, end - t0) / math.ceil(waiting[0] / slots)
            waiting[0] -= 1
        claim_end = t0 + share
        if share <= 0:
            entry["delta"] = (f"not started: the resolution's time budget ({budget:.0f} s) ran "
                              "out before this claim's turn")
            return cid, entry
        limit = 10 * base.get("seconds", 0.0) + 60
        shape_only = base.get("shape_only") or {}
        if shape_only:
            entry["shape_only"] = dict(shape_only)
        shape_approx = base.get("shape_approx") or {}
        if shape_approx:
            entry["shape_approx"] = dict(shape_approx)
        # a "shape" MUTANT_KINDS function is scale-free for every claim: tilted too
        tilted = {*shape_only, *shape_approx, *(f for f, k in kinds.items() if k == "shape")}
        # functions the claim declares it does not resolve by design (Claim.placement_only,
        # Claim.correction_only), by kind
        declared = {k: dict(base.get(f"{k}_only") or {}) for k in DECLARED_KINDS}
        for k, fs in declared.items():
            if fs:
                entry[f"{k}_declared"] = fs
        placement = {f for fs in declared.values() for f in fs}

        def pair(f: str) -> tuple[str, str]:
            """The ladder's two mutants of ``f``: whole-output scales, or tilts where the
            claim holds f only up to a free multiple (``Claim.shape_only``), is nearly
            blind to one (``Claim.shape_approx``), or f is a "shape" MUTANT_KINDS function
            (no claim can see its scale)."""
            return ("tilt+", "tilt-") if f in tilted else ("all+", "all-")

        def one(fop: tuple[str, str], d: float) -> tuple[str, list[str], str]:
            left = claim_end - time.perf_counter()
            m = Mutant(fop[0], (), fop[1], d)
            out = _child("mutant", {"paper": paper, "profile": profile, "mutant": m.to_json(),
                                    "ids": [cid], "key_calls": mp["key_calls"],
                                    "map_root": map_root, "module": claims_module,
                                    "theory_module": theory_module, "check_only": True,
                                    "baseline": None}, timeout=max(10.0, min(limit, left)))
            mut = out.get(cid) if "error" not in out else {
                "error": out["error"], "timed_out": bool(out.get("timed_out"))}
            verdict, parts = _resolution_verdict(base, mut or {"error": "claim not run"})
            if verdict in ("rejected", "weak") or _moves_simulation(base, mut or {}):
                moved.add(fop[0])
            if _moves_value(base, mut or {}) or verdict in ("defect", "timeout"):
                # a mutant the check cannot run through is no evidence that the function
                # stays out of what the simulation parts compare: it keeps its rung
                moved.add(fop[0])
                moved_value.add(fop[0])
            return m.label, parts, verdict

        def rung(d: float, fops: list[tuple[str, str]], function: str | None) -> str:
            """Run ``fops`` at ``d`` (in batches of ``width``) until one is not at least
            weakly rejected; record the rung; its result."""
            tried: list[dict] = []
            with ThreadPoolExecutor(max_workers=width) as pool:
                for i in range(0, len(fops), width):
                    batch = fops[i:i + width]
                    got = list(pool.map(lambda f, _d=d: one(f, _d), batch))
                    for fop, (label, parts, verdict) in zip(batch, got, strict=True):
                        tried.append({"mutant": label, "verdict": verdict, "parts": parts,
                                      "fop": fop})
                    if any(v not in ("rejected", "weak") for _, _, v in got):
                        break  # not even weakly rejected: the rung fails here
            verdicts = [t["verdict"] for t in tried]
            complete = len(tried) == len(fops)
            result = ("rejected" if complete and all(v == "rejected" for v in verdicts) else
                      "weak" if complete and all(v in ("rejected", "weak") for v in verdicts)
                      else "not rejected")
            if "timeout" in verdicts and out_of_time():
                result = "budget"
            entry["rungs"].append({"delta": d, "function": function, "result": result,
                                   "tried": [{k: v for k, v in t.items() if k != "fop"}
                                             for t in tried]})
            return result

        def out_of_time() -> bool:
            return time.perf_counter() >= claim_end

        # 1. each function alone up the ladder: its own rung (both signs rejected); a
        # function none of whose mutants moves a simulation part's numbers is not consumed
        # by the simulation parts (it feeds the claim's symbolic parts) and is left out
        moved: set[str] = set()
        moved_value: set[str] = set()  # moved what a simulation part compares, not only its tolerance
        per_fn: dict[str, Any] = {}
        weak_fn: dict[str, float | None] = {}
        settled = True
        for f in fns:
            per_fn[f], weak_fn[f] = "> 50 %", None
            for d in LADDER:
                if out_of_time():
                    per_fn[f], settled = f"not settled at {100 * d:g} %", False
                    break
                result = rung(d, [(f, op) for op in pair(f)], f)
                if result in ("rejected", "weak") and weak_fn[f] is None:
                    weak_fn[f] = d
                if result == "rejected":
                    per_fn[f] = d
                    break
                if result == "budget":
                    per_fn[f], settled = f"not settled at {100 * d:g} %", False
                    break
            if not settled:
                break
        entry["by_function"] = {f: {"delta": per_fn[f], "weak_delta": weak_fn.get(f),
                                    "moves_simulation": f in moved,
                                    "moves_compared_values": f in moved_value}
                                for f in per_fn}
        if settled:
            # a tilted function none of whose tilts moved a simulation part is not "left
            # out": the claim's simulation parts read it (a scale moved them, or the claim
            # says a multiple is absorbed), they just do not see this shape error, so it
            # keeps its rung ("> 50 %"), named in tilt_unseen
            entry["tilt_unseen"] = sorted(f for f in fns if f in tilted and f not in moved)
            moved |= set(entry["tilt_unseen"])
            moved_value |= set(entry["tilt_unseen"])
            entry["not_in_simulation_parts"] = sorted(f for f in fns if f not in moved)
            entry["allowance_only"] = sorted(f for f in fns if f in moved
                                             and f not in moved_value and f not in placement)
            # a declared placement or correction leaves the rung like an allowance, unless one
            # of its mutants made the check raise or time out
            raised = {r["function"] for r in entry["rungs"] if r["function"] and any(
                t["verdict"] in ("defect", "timeout") for t in r["tried"])}
            for k, fs in declared.items():
                entry[f"{k}_only"] = sorted(f for f in fns if f in moved and f in fs
                                            and f not in raised)
            fns = [f for f in fns if f in moved_value and not any(
                f in entry[f"{k}_only"] for k in DECLARED_KINDS)]
            entry["rung_functions"] = fns
        numeric = [per_fn.get(f) for f in fns]
        if settled and fns and all(weak_fn.get(f) is not None for f in fns):
            entry["weak_delta"] = max(weak_fn[f] for f in fns)  # not confirmed jointly
        delta: Any
        if not settled:
            measured = ", ".join(f for f in per_fn if isinstance(per_fn[f], float))
            delta = (f"not settled: its share of the resolution's time budget ({share:.0f} of "
                     f"{budget:.0f} s) ran out (functions measured: {measured})")
        elif not fns:
            delta = ("> 50 %: no mutant of a consumed theory function moved a simulation "
                     "part (the simulation parts take nothing this ladder can change)")
        elif not all(isinstance(v, float) for v in numeric):
            delta = "> 50 %"
        else:
            # 2. the claim's rung: the largest of the functions' rungs, confirmed with every
            # function there (and up the ladder from it if one is not rejected there)
            delta = "> 50 %"
            top = max(numeric)
            order = [(f, op) for f in fns if per_fn[f] != top for op in pair(f)]
            for d in [x for x in LADDER if x >= top]:
                if out_of_time():
                    delta = (f"not settled: its share of the resolution's time budget "
                             f"({share:.0f} of {budget:.0f} s) ran out before the "
                             f"{100 * d:g} % rung")
                    break
                others = order if d == top else [(f, op) for f in fns for op in pair(f)]
                result = rung(d, others, None) if others else "rejected"
                if result == "rejected":
                    delta = d
                    break
                if result == "budget":
                    delta = (f"not settled: its share of the resolution's time budget "
                             f"({share:.0f} of {budget:.0f} s) ran out during the "
                             f"{100 * d:g} % rung")
                    break
        entry["delta"] = delta
        entry["seconds"] = round(time.perf_counter() - t0, 1)
        return cid, entry

    with ThreadPoolExecutor(max_workers=slots) as pool:
        for cid, entry in pool.map(ladder, todo):
            answers[cid] = entry
    _cover_allowances(answers)
    return answers


#: the kinds of function a claim may declare it does not resolve by design
#: (``Claim.placement_only``, ``Claim.correction_only``)
DECLARED_KINDS = ("placement", "correction")

#: an allowance-only function is left out of a claim's rung only if some claim of the row
#: resolves it (in its rung) at this delta or finer
COVER_DELTA = 0.05


def _cover_allowances(answers: dict[str, dict]) -> None:
    """Put back into a claim's answer the allowance-only (and declared placement- or
    correction-only) functions that no claim of the row resolves at :data:`COVER_DELTA`
    (module docstring, 7.): an allowance sized, or a window placed, by a function nothing
    else pins down could hide a wrong one.  Such a function's own rung then counts (the
    claim's answer is the worse of the two; not confirmed jointly), and it is named in
    ``allowance_uncovered`` (``placement_uncovered``, ``correction_uncovered``).  Only a
    claim that scales f covers it (a tilt rung says nothing about a whole-output slip).  A
    ``shape_approx`` function of a claim that no other claim covers makes the claim's
    answer "> 50 %" (``shape_uncovered``)."""
    covered: dict[str, float] = {}
    for e in answers.values():
        tilted = {*(e.get("shape_only") or {}), *(e.get("shape_approx") or {})}
        for f in e.get("rung_functions", ()):
            if f in tilted:
                continue  # a tilt rung says nothing about a whole-output slip
            d = (e.get("by_function") or {}).get(f, {}).get("delta")
            if isinstance(d, float):
                covered[f] = min(covered.get(f, math.inf), d)
    for e in answers.values():
        for key in ("allowance", *DECLARED_KINDS):
            _put_back(e, key, [f for f in e.get(f"{key}_only", ())
                               if covered.get(f, math.inf) > COVER_DELTA])
        # a function the claim is only nearly blind to a multiple of (Claim.shape_approx):
        # its whole-output slip must be resolved by another claim at COVER_DELTA, else this
        # claim's answer cannot stand for it (its scale rung was not run here: "> 50 %")
        left = sorted(f for f in (e.get("shape_approx") or {})
                      if f in e.get("rung_functions", ()) and
                      covered.get(f, math.inf) > COVER_DELTA)
        if left:
            e["shape_uncovered"] = left
            if isinstance(e.get("delta"), float):
                e["delta"] = "> 50 %"
                e["weak_delta"] = None


def _put_back(e: dict, key: str, left: list[str]) -> None:
    """:func:`_cover_allowances` for one claim's uncovered ``{key}_only`` functions."""
    if not left:
        return
    e[f"{key}_uncovered"] = left
    e[f"{key}_only"] = [f for f in e[f"{key}_only"] if f not in left]
    e["rung_functions"] = [*e.get("rung_functions", ()), *left]
    weak = [e["by_function"][f].get("weak_delta") for f in left]
    if e.get("weak_delta") is not None:
        e["weak_delta"] = (max([e["weak_delta"], *weak])
                           if all(isinstance(w, float) for w in weak) else None)
    if not isinstance(e.get("delta"), float):
        return  # "> 50 %", not settled: already no better
    own = [e["by_function"][f]["delta"] for f in left]
    if all(isinstance(d, float) for d in own):
        e["delta"] = max([e["delta"], *own])
        e["unconfirmed"] = True  # the uncovered functions' rungs were not run jointly
    else:
        e["delta"] = "> 50 %"


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


# ---------------------------------------------------------------------- summaries
def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def resolution_counts(resolution: Mapping[str, Mapping] | None) -> dict | None:
    """``k`` simulation claims resolved at <= 5 % of ``n``, ``qualitative`` of them n/a."""
    if not resolution:
        return None
    deltas = [r.get("delta") for r in resolution.values()]
    return {"k": sum(isinstance(d, (int, float)) and d <= RESOLUTION_BAR + 1e-12
                     for d in deltas),
            "n": len(deltas),
            "qualitative": sum(isinstance(d, str) and d.startswith("n/a: qualitative")
                               for d in deltas)}


def row_summary(r: Mapping) -> dict:
    """The headline numbers of one row (of ``mutation.json`` or of a kept summary)."""
    sim = r.get("simulation") or {}
    return {"score": _num(r.get("score")), "killed": r.get("killed"),
            "mutants": r.get("mutants"), "weak": r.get("weak"),
            "exceptions": r.get("exceptions"), "timeouts": r.get("timeouts"),
            "simulation_score": _num(sim.get("score")), "simulation_mutants": sim.get("mutants"),
            "simulation_weak": sim.get("weak"),
            "resolution": resolution_counts(r.get("resolution")),
            "commit": r.get("commit"), "profile": r.get("profile"),
            "resolution_commit": r.get("resolution_commit")}


def headline(s: Mapping) -> str:
    """One row's mutation numbers in words: score, simulation score, resolution."""
    out = []
    if s.get("score") is not None:
        extra = [f"{s[k]} {w if s[k] != 1 else w.rstrip('s')}"
                 for k, w in (("weak", "weak"), ("exceptions", "exceptions"),
                              ("timeouts", "timeouts")) if s.get(k)]
        out.append(f"{100 * s['score']:.0f}%" + (f" ({', '.join(extra)})" if extra else ""))
    else:
        out.append("score not measured")
    if s.get("simulation_score") is not None:
        out.append(f"simulation {100 * s['simulation_score']:.0f}% of "
                   f"{s.get('simulation_mutants')}")
    elif s.get("score") is not None:
        out.append("simulation n/a")
    res = s.get("resolution")
    if res:
        line = f"resolution <= 5 % for {res['k']} of {res['n']} simulation claims"
        if res.get("qualitative"):
            line += f" ({res['qualitative']} qualitative)"
        out.append(line)
    else:
        out.append("resolution not measured")
    return ", ".join(out)


def kept_path(paper: str, root: Path | None = None) -> Path:
    """Where ``tdcheck mutate`` keeps a row's last summary (beside the run cache)."""
    from numerics.cache import default_cache_dir

    return Path(root or default_cache_dir()) / "mutation" / f"{paper}.json"


def kept_summaries(root: Path | None = None) -> dict[str, dict]:
    """Every kept row summary: ``{paper: summary}`` (what ``tdcheck list`` shows)."""
    folder = kept_path("x", root).parent
    out = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        with contextlib.suppress(OSError, ValueError):
            out[path.stem] = json.loads(path.read_text())
    return out


def _keep(paper: str, row: Mapping, meta: Mapping, root: Path | None = None) -> Path | None:
    """Keep the row's summary beside the run cache, merged with what was kept: a
    resolution-only run keeps the earlier score, a score-only run the earlier resolution."""
    path = kept_path(paper, root)
    old: dict = {}
    with contextlib.suppress(OSError, ValueError):
        old = json.loads(path.read_text())
    res = {c: {"delta": e.get("delta"), "weak_delta": e.get("weak_delta"),
               "seconds": e.get("seconds")} for c, e in (row.get("resolution") or {}).items()}
    new = {"paper": paper, "commit": meta.get("commit"), "profile": row.get("profile"),
           "started": meta.get("started"), "score": row.get("score"),
           "killed": row.get("killed"), "mutants": row.get("mutants"),
           "strong": row.get("strong"), "weak": row.get("weak"),
           "exceptions": row.get("exceptions"), "timeouts": row.get("timeouts"),
           "simulation": {k: v for k, v in (row.get("simulation") or {}).items()
                          if k not in ("claims", "functions")}}
    if row.get("resolution_only"):
        kept = {**old, "paper": paper} if old else {"paper": paper, "profile": row.get("profile")}
    else:
        kept = {**new, **{k: old[k] for k in ("resolution", "resolution_commit") if k in old}}
    if row.get("resolution") is not None:
        kept["resolution"] = res
        kept["resolution_commit"] = meta.get("commit")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(kept, indent=1, default=str))
        tmp.replace(path)
    except OSError:
        return None  # a read-only cache: the report folder still has it
    return path


# ---------------------------------------------------------------------- reports
def write_mutation_reports(rows: Sequence[RowResult], out_dir: Path, meta: Mapping[str, Any],
                           keep_root: Path | None = None) -> tuple[Path, Path]:
    """``mutation.json`` and ``mutation.md`` in ``out_dir`` (rows merged with earlier ones;
    a resolution-only row keeps the earlier row's score), and each row's summary kept
    beside the run cache (:func:`kept_path`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / "mutation.json", out_dir / "mutation.md"
    data = {"metadata": dict(meta), "rows": {}}
    if js.exists():
        with contextlib.suppress(ValueError, KeyError):
            data["rows"] = json.loads(js.read_text())["rows"]
    for r in rows:
        new = {**r.to_json(), "commit": meta.get("commit")}
        old = data["rows"].get(r.paper)
        if r.resolution_only and old:
            new = {**old, "resolution": new["resolution"],
                   "resolution_seconds": new["resolution_seconds"],
                   "resolution_commit": meta.get("commit")}
        elif r.resolution is not None:
            new["resolution_commit"] = meta.get("commit")
        elif old and old.get("resolution") is not None:
            new["resolution"] = old["resolution"]
            new["resolution_commit"] = old.get("resolution_commit", old.get("commit"))
        data["rows"][r.paper] = new
        _keep(r.paper, {**r.to_json(), "resolution_only": r.resolution_only}, meta, keep_root)
    js.write_text(json.dumps(data, indent=1, default=str))
    md.write_text(to_markdown(data))
    return md, js


def _pct(x: Any) -> str:
    x = _num(x)
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _delta_text(d: Any) -> str:
    return f"{100 * d:g} %" if isinstance(d, (int, float)) else str(d)


def to_markdown(data: Mapping) -> str:
    lines = ["# tdcheck mutation report", "",
             "A mutant is a slip injected into one public theory function's output (a scale "
             "by 1 +/- delta, a sign, swapped labels, an index permutation); it is *killed* "
             "when a claim that consumes the function (calls it on its check's path) "
             "changes its verdict against the map run, *weakly* when it only turns "
             "inconclusive or moves a claim not settled in the map run. A check that raises "
             "under a mutant is an *exception defect* and a mutant past its time limit a "
             "*timeout*: neither is a kill. The score counts kills and weak kills; functions "
             "that no check consumes count as survivors. The *simulation score* is, over "
             "the mutants of functions a claim with a simulation part consumes, the "
             "fraction that a simulation part rejects (pass -> fail). *Resolution*: the "
             "smallest whole-output scale delta on 1, 2, 5, 10, 20, 50 % at which a claim's "
             "simulation parts reject both +delta and -delta of every function it consumes.",
             "",
             "| row | score | killed / mutants | weak | exceptions | timeouts | simulation "
             "(rejected / mutants, weak) | resolution | by kind | unconsumed functions | "
             "seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for paper, r in data["rows"].items():
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(r.get("killed_by_kind", {}).items())) \
            or "-"
        sim = r.get("simulation") or {}
        res = resolution_counts(r.get("resolution"))
        res_text = "-" if res is None else f"<= 5 % for {res['k']} of {res['n']}"
        lines.append(
            f"| {paper} | {_pct(r.get('score'))} | {r.get('killed')} / {r.get('mutants')} | "
            f"{r.get('weak', '-')} | {r.get('exceptions', '-')} | {r.get('timeouts', '-')} | "
            f"{_pct(sim.get('score'))} ({sim.get('rejected', '-')} / {sim.get('mutants', '-')}"
            f", weak {sim.get('weak', '-')}) | {res_text} | {kinds} | "
            f"{len(r.get('unconsumed', []))} | {r.get('seconds')} |")
    for paper, r in data["rows"].items():
        lines += ["", f"## {paper} (profile {r.get('profile')}, commit {r.get('commit')})", ""]
        if r.get("baseline_not_ok"):
            lines += ["Claims not as expected in the map run (they judge a mutant by a change "
                      "from the map run's outcome, control or positive control): "
                      + ", ".join(f"`{c}`" for c in r["baseline_not_ok"]), ""]
        slow = list(r.get("claim_seconds", {}).items())[:5]
        if slow:
            lines += [f"Map pass {r.get('map_seconds')} s.  Claim seconds summed over the "
                      "mutants (where the row's mutation time goes): "
                      + ", ".join(f"`{c}` {v:.0f} s" for c, v in slow), ""]
        if r.get("domain_only"):
            lines += [f"Of the {r.get('killed')} kills, {r['domain_only']} moved only the "
                      "\"theory admissible\" part of every claim that killed them: the mutant "
                      "left its function's domain and no prediction was compared.", ""]
        lines += _simulation_md(r)
        if r.get("functions"):
            lines += ["| function | consumed by (check) | other roles | simulation | killed "
                      "(weak) | survivors |", "|---|---|---|---|---|---|"]
        for name, f in (r.get("functions") or {}).items():
            other = sorted({role for roles in f["roles"].values() for role in roles} - {"check"})
            killed = sum(m["killed"] for m in f["mutants"])
            weak = sum(m.get("status") == "weak" for m in f["mutants"])
            surv = "; ".join(m["label"].split(": ", 1)[1] + (
                f" ({m['status']})" if m.get("status") in ("defect", "timeout") else "")
                for m in f["mutants"] if not m["killed"])
            note = ""
            if f["unjudged"]:
                note = f" (unjudged: {f['unjudged']})"
            elif not f["consumed_by"]:
                note = " (no check consumes it)"
            elif f["details_only"]:
                note = " (no part moved: details only)"
            if f["delta_reason"]:
                note += f" (delta {f['delta']:g}: {f['delta_reason']})"
            if f.get("mutant_kind"):
                note += f" (MUTANT_KINDS: {f['mutant_kind']})"
            if f.get("integer_leaves"):
                note += (f" ({f['integer_leaves']} integer leaves, not mutated: declare "
                         "MUTANT_KINDS)")
            if f.get("zero_leaves"):
                note += (f" ({f['zero_leaves']} leaves exactly 0 at every call, not mutated: "
                         "their scale and sign mutants are equivalent)")
            sim = "-"
            if f.get("simulation"):
                rej = sum(m.get("simulation") == "rejected" for m in f["mutants"])
                sim = f"{rej}/{len(f['mutants'])} rejected"
            lines.append(f"| `{name}`{note} | {len(f['consumed_by'])} | {', '.join(other) or '-'} "
                         f"| {sim} | {killed}/{len(f['mutants'])}"
                         + (f" ({weak})" if weak else "") + f" | {surv or '-'} |")
        killed_rows = [(name, m) for name, f in (r.get("functions") or {}).items()
                       for m in f["mutants"] if m["killed"]]
        if killed_rows:
            which = ("every detecting claim" if r.get("every_claim") else
                     "the first killing claim, cheapest first (every claim for simulation "
                     "functions); --every-claim names all")
            lines += ["", f"Killed mutants (claim: how, parts that moved; {which}):", ""]
            for _name, m in killed_rows:
                how = "; ".join(
                    f"`{c}` {w}" + (" (weak)" if m.get("strength", {}).get(c) == "weak" else "")
                    + (f" ({', '.join(m['moved'].get(c, []))})" if m["moved"].get(c) else "")
                    for c, w in m["by"].items())
                lines.append(f"- {m['label']}: {how}")
        if r.get("defects"):
            lines += ["", "Exception defects (a mutant made a check, control or positive "
                      "control raise; a wrong theory must give a failed part with a reason, "
                      "never an exception; not counted as kills):", ""]
            lines += [f"- {d['mutant']}: `{d['claim']}` {d['role']}: `{d['message']}`"
                      for d in r["defects"]]
        if r.get("timeouts_list"):
            lines += ["", "Timeouts (not counted as kills):", ""]
            lines += [f"- {t['mutant']}: `{t['claim']}` {t['message']}"
                      for t in r["timeouts_list"]]
        lines += _resolution_md(r)
    return "\n".join(lines) + "\n"


def _simulation_md(r: Mapping) -> list[str]:
    sim = r.get("simulation")
    if not sim or not sim.get("mutants"):
        if r.get("functions"):
            return ["No function is consumed by a claim with a simulation part: no simulation "
                    "score.", ""]
        return []
    out = [f"**Simulation score {_pct(sim['score'])}**: {sim['rejected']} of {sim['mutants']} "
           f"mutants of the functions that claims with simulation parts consume "
           f"({', '.join(f'`{f}`' for f in sim['functions'])}) are rejected by a simulation "
           f"part (pass -> fail); weak {sim['weak']}, defects {sim['defect']}, timeouts "
           f"{sim['timeout']}, survived {sim['survived']}. Simulation claims: "
           + ", ".join(f"`{c}`" for c in sim["claims"]) + ".", ""]
    moved = [(m["label"], m.get("simulation"), m.get("simulation_parts", {}))
             for f in (r.get("functions") or {}).values() for m in f["mutants"]
             if m.get("simulation_parts")]
    if moved:
        out += ["Simulation parts that moved:", ""]
        out += [f"- {label} ({verdict}): " + "; ".join(
            f"`{c}` {', '.join(p)}" for c, p in parts.items()) for label, verdict, parts in moved]
        out.append("")
    return out


#: the resolution table's captions of a claim's named lists of functions (beside the
#: allowance ones, whose caption says whether the rung was confirmed jointly)
_LIST_CAPTIONS = (
    ("placement_only", "declared to place the comparison only, resolved by another claim "
                       "at 5 %, not in the rung"),
    ("placement_uncovered", "declared to place the comparison only but resolved by no claim "
                            "at 5 %, so in the rung"),
    ("tilt_unseen", "held up to a multiple, but no tilt of it moved a simulation part, so "
                    "in the rung at > 50 %"),
    ("shape_uncovered", "nearly blind to a multiple, and no other claim resolves its scale "
                        "at 5 %, so the claim's answer is > 50 %"),
    ("correction_only", "declared a small correction to the prediction, resolved by another "
                        "claim at 5 %, not in the rung"),
    ("correction_uncovered", "declared a small correction but resolved by no claim at 5 %, "
                             "so in the rung"),
)


def _resolution_md(r: Mapping) -> list[str]:
    res = r.get("resolution")
    if res is None:
        return []
    counts = resolution_counts(res) or {"k": 0, "n": 0}
    out = ["", f"### Resolution (commit {r.get('resolution_commit', r.get('commit'))}, "
           f"{r.get('resolution_seconds', '-')} s): <= 5 % for {counts['k']} of "
           f"{counts['n']} simulation claims", ""]
    if not res:
        return out + ["No claim has a simulation part.", ""]
    out += ["Each function consumed by the claim is scaled as a whole (+/- delta) up the "
            "ladder on its own; the claim's resolution is the largest of the functions' rungs, "
            "confirmed with all of them at that rung.", "",
            "| claim | resolution | weakly at | by function (rejected at) | mutant runs | "
            "seconds |", "|---|---|---|---|---|---|"]
    for cid, e in res.items():
        by = e.get("by_function") or {}
        fns = ", ".join(f"`{f}` {_delta_text(v['delta'])}" for f, v in by.items()) or \
            ", ".join(f"`{f}`" for f in e.get("functions", [])) or "-"
        if e.get("left_out"):
            fns += f" (left out: {', '.join(e['left_out'])})"
        if e.get("allowance_only"):
            fns += f" (in allowances only, not in the rung: {', '.join(e['allowance_only'])})"
        if e.get("allowance_uncovered"):
            fns += (" (in allowances only but resolved by no claim at 5 %, so in the rung: "
                    f"{', '.join(e['allowance_uncovered'])}"
                    + ("; the claim's rung with them not confirmed jointly" if
                       e.get("unconfirmed") else "") + ")")
        for key, caption in _LIST_CAPTIONS:
            if e.get(key):
                fns += f" ({caption}: {', '.join(e[key])})"
        if e.get("reason"):
            fns += f" ({e['reason']})"
        runs = sum(len(g["tried"]) for g in e.get("rungs", []))
        out.append(f"| `{cid}` | {_delta_text(e.get('delta'))} | "
                   f"{_delta_text(e['weak_delta']) if e.get('weak_delta') else '-'} | "
                   f"{fns} | {runs} | {e.get('seconds', 0)} |")
    return out + [""]


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1], sys.argv[2]))
