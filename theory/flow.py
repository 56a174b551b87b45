"""Shared symbolic toolkit: reduced systems, gradient flows, invariants, critical points.

A :class:`ReducedSystem` is the object every paper module produces: a state vector of
sympy symbols, parameters, the right-hand side ``d state / dt`` and optionally the loss it
descends and the quantities it conserves.  Derivation (sympy) stays separate from numeric
evaluation (``lambdify``), following sympy.physics.mechanics / pydy.

Non-smooth models (``w|w|`` from a ReLU, say) are handled through ``branches``: a tuple of
substitutions (e.g. ``{w: W}`` and ``{w: -W}`` with ``W > 0``) under which every expression
is smooth.  Symbolic identities (``drift``) are proved branch by branch; numeric
evaluation replaces ``DiracDelta`` by 0, which is exact away from the kinks (a set of
measure zero that no integrator or root finder lands on).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal, NamedTuple

import numpy as np
import sympy as sp

Backend = Literal["numpy", "torch"]

__all__ = [
    "Classification",
    "Equation",
    "InadmissibleTheory",
    "ReducedSystem",
    "Twin",
    "admissible",
    "classify_matrix",
    "gradient_flow",
    "lambdify_numeric",
    "numeric",
    "simplify_zero",
]


class InadmissibleTheory(ValueError):
    """A theory value outside its domain (a probability outside (0, 1), a complex gap) or a
    derivation with no admissible solution (no positive root of a bias condition).

    Raised by a theory function whose inputs are another theory function's values: under a
    wrong theory (a mutant, a control) the check then fails a part with this message as
    its reason instead of stopping (``verify.runner``).  A ValueError, so a user's own
    inadmissible input still reads as one."""


def admissible(name: str, value, *, lower: float = -math.inf, strict: bool = True) -> float:
    """``value`` as a finite float above ``lower`` (``> lower`` if ``strict``, else ``>=``),
    or :class:`InadmissibleTheory` naming ``name``.

    For a consumer of a theory function's value that needs it in a domain: a check that
    places its time grid at a predicted time, a root bracket at a predicted scale, a
    logarithm of a predicted rate.  A wrong theory (a negative time) then fails a part with
    this message instead of raising from numpy or ``math`` inside the check."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InadmissibleTheory(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise InadmissibleTheory(f"{name} must be finite, got {value!r}")
    if (x <= lower) if strict else (x < lower):
        raise InadmissibleTheory(f"{name} must be {'>' if strict else '>='} {lower:g}, got {x!r}")
    return x


def _has(expr: sp.Basic, cls: type) -> bool:
    """Whether ``expr`` contains a node of type ``cls``, visiting each distinct subexpression
    once: ``Basic.has`` walks the expression as a tree, and a large reduced system (Eqn 10
    at 250 context tokens) repeats its shared sums millions of times."""
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cls):
            return True
        for arg in node.args:
            if id(arg) not in seen:
                seen.add(id(arg))
                stack.append(arg)
    return False


def numeric(expr: sp.Expr) -> sp.Expr:
    """Drop distributional terms (DiracDelta) that only live on the kinks of |x|, sign(x);
    and read a complex infinity (``zoo``: a division by an exact zero, e.g. in a degenerate
    metric) as NaN, which numpy can evaluate, so a wrong theory gives a NaN a part rejects
    instead of a ``KeyError: 'ComplexInfinity'`` from the code printer."""
    expr = sp.sympify(expr)
    if _has(expr, type(sp.zoo)):
        expr = expr.xreplace({sp.zoo: sp.nan})
    if not _has(expr, sp.DiracDelta):
        return expr
    return expr.replace(sp.DiracDelta, lambda *args: sp.S.Zero)


def _numeric_tree(expr):
    if isinstance(expr, (list, tuple)):
        return type(expr)(_numeric_tree(x) for x in expr)
    if isinstance(expr, (sp.MatrixBase, sp.NDimArray)):
        return expr.applyfunc(numeric)
    return numeric(expr)


def lambdify_numeric(args, expr, modules="numpy", **kwargs):
    """``sympy.lambdify`` of a theory expression (a scalar, a list or tuple of them, a Matrix
    or Array) after :func:`numeric`: a check that evaluates a wrong theory's expression gets
    NaN where the theory divides by an exact zero, never a printer ``KeyError``.  No sympy
    ``implemented_function`` is used in ``theory/``, so its namespace scan is skipped."""
    kwargs.setdefault("use_imps", False)
    return sp.lambdify(args, _numeric_tree(expr), modules, **kwargs)


class Equation(NamedTuple):
    """One record of a row's ``equations()``: a name, the sympy expression and where it
    comes from (the paper's equation, theorem or section, or "our derivation")."""

    name: str
    expr: object
    source: str


class Twin:
    """The float twin of a theory function: lambdified from that function's own expression.

    ``gap_f = Twin(gap, E, W)`` evaluates ``gap(E, W)`` once, symbolically, and lambdifies it
    (numpy by default; distributional terms dropped by :func:`numeric`), so ``gap_f(e, w)``
    takes floats or arrays and can never disagree with the formula the library ships.  A
    tuple-valued function gives a tuple-valued twin.

    The function is looked up by module and name when the twin is first called (and after
    :meth:`cache_clear`), so a patched theory function (``tdcheck mutate``) reaches its twin.
    """

    def __init__(self, fn: Callable[..., object], *symbols: sp.Symbol,
                 modules: str = "numpy") -> None:
        self._module, self._name = fn.__module__, fn.__name__
        self._symbols = symbols
        self._modules = modules
        self._fn: Callable | None = None
        self.__name__ = f"{fn.__name__}_twin"
        self.__doc__ = f"Float twin of ``{fn.__module__}.{fn.__name__}`` (lambdified)."

    def expression(self) -> object:
        """The theory function's expression at the twin's symbols."""
        import importlib

        fn = getattr(importlib.import_module(self._module), self._name)
        return fn(*self._symbols)

    def cache_clear(self) -> None:
        self._fn = None

    def __call__(self, *args):
        if self._fn is None:
            expr = self.expression()
            body = tuple(numeric(x) for x in expr) if isinstance(expr, tuple) else numeric(expr)
            self._fn = sp.lambdify(self._symbols, body, modules=self._modules, cse=True)
        out = self._fn(*args)
        return tuple(out) if isinstance(out, (tuple, list)) else out

    def __repr__(self) -> str:
        return f"Twin({self._module}.{self._name})"


def simplify_zero(expr: sp.Expr, *, probes: int = 3, seed: int = 0) -> sp.Expr:
    """Simplify an expression expected to vanish.

    ``expand`` first (cheap, and enough for most conservation laws); if that does not give
    0, evaluate at a few random points that respect the symbols' assumptions: a clearly
    non-zero value returns the expanded expression at once (no slow ``simplify`` of an
    expression that is not zero); otherwise ``cancel`` and ``simplify`` get their turn.
    """
    expr = sp.piecewise_fold(numeric(expr))
    if isinstance(expr, sp.Piecewise):
        pieces = [simplify_zero(branch, probes=probes, seed=seed) for branch, _ in expr.args]
        if all(piece == 0 for piece in pieces):
            return sp.S.Zero
        return sp.Piecewise(*[(piece, cond) for piece, (_, cond) in zip(pieces, expr.args, strict=True)])
    expr = sp.expand(expr)
    if expr == 0:
        return sp.S.Zero
    rng = np.random.default_rng(seed)
    for _ in range(probes):
        point = {
            s: sp.Rational(int(rng.integers(1, 97)), 97) * (1 if s.is_positive else rng.choice([-1, 1]))
            for s in expr.free_symbols
        }
        value = complex(expr.subs(point).evalf(30))
        if abs(value) > 1e-12:
            return expr
    for attempt in (sp.cancel, sp.simplify):
        expr = attempt(expr)
        if expr == 0:
            return sp.S.Zero
    return expr


@dataclass(frozen=True)
class Classification:
    """Type of a stationary point from the eigenvalues of the Hessian (or Jacobian).

    ``kind`` is ``min``, ``max``, ``saddle`` or ``degenerate`` (all eigenvalues zero).  A
    semi-definite matrix with some zero eigenvalues is reported as ``min``/``max`` with
    ``strict=False`` (a non-isolated extremum, e.g. a line of minima).
    """

    kind: Literal["min", "max", "saddle", "degenerate"]
    strict: bool
    eigenvalues: tuple[float, ...]


@dataclass(frozen=True, eq=False)
class ReducedSystem:
    """A reduced ODE ``d state/dt = rhs(state; params)`` with its loss and invariants."""

    state: tuple[sp.Symbol, ...]
    params: tuple[sp.Symbol, ...]
    rhs: sp.Matrix
    loss: sp.Expr | None = None
    invariants: Mapping[str, sp.Expr] = field(default_factory=dict)
    assumptions: str = ""
    branches: tuple[Mapping[sp.Symbol, sp.Expr], ...] = ()
    name: str = ""

    def __post_init__(self) -> None:
        if self.rhs.shape != (len(self.state), 1):
            raise ValueError(
                f"rhs must have shape ({len(self.state)}, 1), got {self.rhs.shape}"
            )

    # ------------------------------------------------------------------ symbolic
    def jacobian(self) -> sp.Matrix:
        """d rhs / d state."""
        return self.rhs.jacobian(sp.Matrix(self.state))

    def hessian(self) -> sp.Matrix:
        """Hessian of the loss in the state variables."""
        if self.loss is None:
            raise ValueError(f"system {self.name or '?'} has no loss, so no Hessian")
        return sp.hessian(self.loss, self.state)

    def drift(self, name: str) -> sp.Expr:
        """Time derivative of invariant ``name`` along the flow, simplified (0: conserved).

        With ``branches`` the identity is simplified on each branch: the result is 0 only
        if it vanishes on every branch, else it is the simplified drift on the first
        branch where it does not.
        """
        if name not in self.invariants:
            raise ValueError(
                f"unknown invariant {name!r}; this system has {sorted(self.invariants)}"
            )
        inv = self.invariants[name]
        expr = sum(
            (sp.diff(inv, s) * r for s, r in zip(self.state, self.rhs, strict=True)),
            sp.S.Zero,
        )
        pieces = [expr.subs(sub) for sub in self.branches] or [expr]
        for piece in pieces:
            reduced = simplify_zero(piece)
            if reduced != 0:
                return reduced
        return sp.S.Zero

    def latex(self) -> str:
        """The system as LaTeX, one ``\\dot{x} = ...`` line per state variable."""
        lines = [
            rf"\dot{{{sp.latex(s)}}} = {sp.latex(r)}"
            for s, r in zip(self.state, self.rhs, strict=True)
        ]
        if self.loss is not None:
            lines.insert(0, rf"L = {sp.latex(self.loss)}")
        for key, inv in self.invariants.items():
            lines.append(rf"\text{{{key}}} = {sp.latex(inv)}")
        return " \\\\\n".join(lines)

    # ------------------------------------------------------------------ numeric
    def _values(self, values: Mapping[sp.Symbol, float] | None) -> dict:
        values = dict(values or {})
        missing = [str(p) for p in self.params if p not in values]
        if missing:
            raise ValueError(f"values needed for parameters {missing}")
        return values

    @cache  # noqa: B019  (instances are identity-hashed and long-lived)
    def lambdify(self, backend: Backend = "numpy") -> Callable:
        """``f(t, y, *params)`` evaluating ``rhs``; ``y`` may carry trailing batch axes.

        numpy: returns an array of shape ``y.shape``; torch: a tensor of that shape.
        """
        return _lambdify_matrix(self, self.rhs, backend)

    @cache  # noqa: B019
    def lambdify_jacobian(self, backend: Backend = "numpy") -> Callable:
        """``J(t, y, *params)`` with shape (d, d) for a single state."""
        return _lambdify_matrix(self, self.jacobian(), backend)

    @cache  # noqa: B019
    def lambdify_hessian(self, backend: Backend = "numpy") -> Callable:
        """``H(t, y, *params)``: Hessian of the loss, shape (d, d)."""
        return _lambdify_matrix(self, self.hessian(), backend)

    @cache  # noqa: B019
    def lambdify_loss(self, backend: Backend = "numpy") -> Callable:
        """``L(y, *params)`` (no time argument)."""
        if self.loss is None:
            raise ValueError(f"system {self.name or '?'} has no loss")
        f = sp.lambdify(
            [list(self.state), *self.params],
            numeric(self.loss),
            modules=_modules(backend),
            cse=True,
        )
        if backend != "numpy":
            return f

        def f_np(y, *params):
            with np.errstate(all="ignore"):
                return f(y, *params)

        return f_np

    def stationary_points(
        self,
        values: Mapping[sp.Symbol, float] | None = None,
        *,
        box: Sequence[tuple[float, float]] | None = None,
        starts: int = 200,
        seed: int = 0,
        tol: float = 1e-9,
        decimals: int = 6,
    ) -> np.ndarray:
        """Zeros of ``rhs`` found numerically from ``starts`` random starts in ``box``.

        Returns the deduplicated points (rows) at which ``|rhs| < tol``.  Critical sets
        that are curves (non-isolated minima) come back as many points on the curve.
        """
        from scipy.optimize import least_squares

        vals = self._values(values)
        f = self.lambdify("numpy")
        jac = self.lambdify_jacobian("numpy")
        args = [vals[p] for p in self.params]
        d = len(self.state)
        box = box or [(-3.0, 3.0)] * d
        rng = np.random.default_rng(seed)
        lo = np.array([b[0] for b in box])
        hi = np.array([b[1] for b in box])
        found = []
        for x0 in rng.uniform(lo, hi, size=(starts, d)):
            sol = least_squares(
                lambda y: f(0.0, y, *args),
                x0,
                jac=lambda y: jac(0.0, y, *args),
                xtol=1e-15,
                ftol=1e-15,
                gtol=1e-15,
            )
            if np.all(np.isfinite(sol.x)) and np.max(np.abs(f(0.0, sol.x, *args))) < tol:
                found.append(sol.x)
        if not found:
            return np.empty((0, d))
        pts = np.array(found)
        _, idx = np.unique(np.round(pts, decimals), axis=0, return_index=True)
        return pts[np.sort(idx)]

    def classify(
        self,
        point: Sequence[float],
        values: Mapping[sp.Symbol, float] | None = None,
        *,
        tol: float = 1e-9,
    ) -> Classification:
        """Type of a stationary point from Hessian (if a loss is known) or Jacobian."""
        vals = self._values(values)
        args = [vals[p] for p in self.params]
        if self.loss is not None:
            num = self.lambdify_hessian("numpy")(0.0, np.asarray(point, dtype=float), *args)
        else:
            num = self.lambdify_jacobian("numpy")(0.0, np.asarray(point, dtype=float), *args)
        return classify_matrix(num, hessian=self.loss is not None, tol=tol)


def classify_matrix(matrix: np.ndarray, *, hessian: bool = True, tol: float = 1e-9) -> Classification:
    """Classify from a numeric Hessian (or, with ``hessian=False``, a flow's Jacobian).

    For a flow, stable directions (negative real part of the Jacobian's eigenvalues) count
    as the directions in which the descended loss curves up.
    """
    num = np.asarray(matrix, dtype=float)
    if hessian:
        eig = np.linalg.eigvalsh(0.5 * (num + num.T))
    else:
        eig = -np.real(np.linalg.eigvals(num))
    scale = max(1.0, float(np.max(np.abs(eig))))
    pos = eig > tol * scale
    neg = eig < -tol * scale
    zero = ~(pos | neg)
    if pos.any() and neg.any():
        kind = "saddle"
    elif pos.any():
        kind = "min"
    elif neg.any():
        kind = "max"
    else:
        kind = "degenerate"
    return Classification(kind, bool(not zero.any()), tuple(float(x) for x in eig))


def _modules(backend: Backend):
    if backend == "numpy":
        return "numpy"
    if backend == "torch":
        return "torch"
    raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")


def _lambdify_matrix(system: ReducedSystem, matrix: sp.Matrix, backend: Backend):
    t = sp.Symbol("t", real=True)
    flat = [numeric(x) for x in matrix]
    raw = sp.lambdify(
        [t, list(system.state), *system.params], flat, modules=_modules(backend), cse=True,
        # no sympy implemented_function is used in theory/: skipping its namespace scan (a
        # tree walk of the whole expression) saves most of the lambdify time of large systems
        use_imps=False,
    )
    shape = matrix.shape if matrix.shape[1] > 1 else (matrix.shape[0],)

    if backend == "numpy":

        def f_np(t_, y, *params):
            y = np.asarray(y, dtype=float)
            # Piecewise branches are all evaluated (numpy.select); the unused one may
            # divide by zero, so silence those warnings (the selected value is finite).
            with np.errstate(all="ignore"):
                out = raw(t_, y, *params)
            out = np.broadcast_arrays(*[np.asarray(o, dtype=float) for o in out])
            arr = np.stack(out, axis=0)
            return arr.reshape(shape + arr.shape[1:])

        return f_np

    import torch  # (theory imports no torch unless asked for the torch backend)

    def f_torch(t_, y, *params):
        out = raw(t_, y, *params)
        ref = y[0]
        out = [o if torch.is_tensor(o) else torch.full_like(ref, float(o)) for o in out]
        out = torch.broadcast_tensors(*out)
        arr = torch.stack(out, dim=0)
        return arr.reshape(shape + tuple(arr.shape[1:]))

    return f_torch


def gradient_flow(
    loss: sp.Expr,
    state: Sequence[sp.Symbol],
    params: Sequence[sp.Symbol] = (),
    rates: Sequence[sp.Expr] | None = None,
    **kwargs,
) -> ReducedSystem:
    """Gradient flow ``d x_i/dt = -rate_i * dL/dx_i`` of ``loss`` as a :class:`ReducedSystem`."""
    state = tuple(state)
    rates = tuple(rates) if rates is not None else (sp.S.One,) * len(state)
    if len(rates) != len(state):
        raise ValueError(f"rates must have length {len(state)}, got {len(rates)}")
    rhs = sp.Matrix([-r * sp.diff(loss, s) for r, s in zip(rates, state, strict=True)])
    return ReducedSystem(state=state, params=tuple(params), rhs=rhs, loss=loss, **kwargs)
