"""The example row: a two-layer scalar linear model, the smallest complete tdcheck row.

Not a paper of the suite: it is the template a newcomer copies (README, "Adding a paper"),
and the row on which the tests exercise the engine and ``tdcheck mutate``.

Model: ``f(x) = a b x`` fitted to noiseless data ``y = c x`` with ``x ~ N(0, 1)``.  The
population loss is ``L(a, b) = (a b - c)^2 / 2`` (E x^2 = 1), a two-parameter caricature of
the depth-two factorisations that the papers reduce transformers to.  Its gradient flow
``a' = -b (a b - c)``, ``b' = -a (a b - c)`` conserves the balance ``a^2 - b^2`` (the
analogue of the layer-balance invariants of deep linear networks), has one critical point
off the minimum set, the origin, a saddle with Hessian eigenvalues ``-|c|, +|c|``, and
ends on the hyperbola ``a b = c`` at the point the invariant selects (:func:`end_point`).

Choices: the data are noiseless, so a mini-batch gradient is the population gradient times
the batch's mean of ``x^2`` (SGD is GD with a random step), which keeps the full-model check
exact up to the discretisation the check bounds.
"""

from __future__ import annotations

import sympy as sp

from theory.flow import Equation, ReducedSystem, Twin, gradient_flow

__all__ = [
    "A",
    "B",
    "C",
    "balance",
    "balance_twin",
    "end_point",
    "equations",
    "gd_balance_factor",
    "gd_balance_factor_twin",
    "population_loss",
    "residual",
    "residual_twin",
    "saddle_eigenvalues",
    "system",
]

A = sp.Symbol("a", real=True)
B = sp.Symbol("b", real=True)
C = sp.Symbol("c", real=True)


def _real(name: str, value) -> sp.Expr:
    expr = sp.sympify(value)
    if expr.is_real is False:
        raise ValueError(f"{name} must be real, got {value!r}")
    return expr


def residual(a=A, b=B, c=C) -> sp.Expr:
    """The fit residual ``a b - c``: zero exactly on the minimum set (a hyperbola)."""
    a, b, c = (_real(n, v) for n, v in (("a", a), ("b", b), ("c", c)))
    return a * b - c


def population_loss(a=A, b=B, c=C) -> sp.Expr:
    """``L(a, b) = (a b - c)^2 / 2``: the expected squared error over ``x ~ N(0, 1)``."""
    return residual(a, b, c) ** 2 / 2


def system() -> ReducedSystem:
    """The gradient flow of :func:`population_loss` in (a, b), with its balance invariant."""
    return gradient_flow(population_loss(), (A, B), (C,), invariants={"balance": balance()},
                         assumptions="noiseless data y = c x, x ~ N(0, 1)", name="example")


def balance(a=A, b=B) -> sp.Expr:
    """The conserved balance ``a^2 - b^2`` (d/dt = 2a a' - 2b b' = 0 along the flow)."""
    return _real("a", a) ** 2 - _real("b", b) ** 2


def saddle_eigenvalues(c=C) -> tuple[sp.Expr, sp.Expr]:
    """Hessian eigenvalues of ``L`` at the origin, ``(-|c|, |c|)``: a strict saddle for c != 0."""
    c = _real("c", c)
    return (-sp.Abs(c), sp.Abs(c))


def end_point(a0, b0, c) -> tuple[sp.Expr, sp.Expr]:
    """Where the flow from ``(a0, b0)`` ends: on ``a b = c`` with ``a^2 - b^2`` conserved.

    ``a^2 - c^2/a^2 = delta`` gives ``a^2 = (delta + sqrt(delta^2 + 4 c^2)) / 2``; the sign
    of ``a`` is that of ``a0 + b0`` for ``c > 0`` (``(a + b)' = -(a + b)(a b - c)`` keeps its
    sign) and of ``a0 - b0`` for ``c < 0``.  Starts with that sum (difference) zero flow into
    the saddle and are outside the region (``ValueError``).
    """
    a0, b0, c = _real("a0", a0), _real("b0", b0), _real("c", c)
    if c == 0:
        raise ValueError("c must be non-zero (c = 0 makes the whole axes critical)")
    side = a0 + b0 if c > 0 else a0 - b0
    if side == 0:
        raise ValueError("the start lies on the saddle's stable manifold (a0 = -b0 sign(c))")
    delta = balance(a0, b0)
    a_end = sp.sign(side) * sp.sqrt((delta + sp.sqrt(delta**2 + 4 * c**2)) / 2)
    return a_end, c / a_end


def gd_balance_factor(step, a, b, c) -> sp.Expr:
    """The exact factor by which one GD step of size ``step`` multiplies the balance:
    ``a'^2 - b'^2 = (a^2 - b^2)(1 - step^2 (a b - c)^2)`` for ``a' = a - step b (a b - c)``,
    ``b' = b - step a (a b - c)`` (expand the squares: the cross terms cancel)."""
    step, a, b, c = (_real(n, v) for n, v in (("step", step), ("a", a), ("b", b), ("c", c)))
    return 1 - step**2 * (a * b - c) ** 2


S = sp.Symbol("s", positive=True)
balance_twin = Twin(balance, A, B)
residual_twin = Twin(residual, A, B, C)
gd_balance_factor_twin = Twin(gd_balance_factor, S, A, B, C)


def equations() -> list[Equation]:
    """The derived equations of the row, for ``tdcheck equations example``."""
    sys = system()
    return [
        Equation("population loss L(a, b)", population_loss(), "model definition"),
        Equation("da/dt", sys.rhs[0], "gradient flow of L"),
        Equation("db/dt", sys.rhs[1], "gradient flow of L"),
        Equation("balance a^2 - b^2", balance(), "invariant: d/dt = 0 along the flow"),
        Equation("drift of the balance", sys.drift("balance"), "must vanish"),
        Equation("GD balance factor", gd_balance_factor(S, A, B, C),
                 "one GD step of size s, exact"),
    ]
