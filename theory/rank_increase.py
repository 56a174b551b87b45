"""Incremental learning by gradual rank increase: Boix-Adserà, Littwin, Abbe, Bengio, Susskind,
*Transformers learn through gradual rank increase* (NeurIPS 2023).

Reduced theory of networks with diagonal weights ``f(x; u, v) = h(x; u ⊙ v)`` trained by
gradient flow from ``θ(0) = α θ_0`` (the paper's model and its small-initialisation limit).
With ``w = u ⊙ v`` and the loss ``g(w)``:

* gradient flow ``u̇ = -∇g(w) ⊙ v``, ``v̇ = -∇g(w) ⊙ u`` conserves ``u_i² - v_i²``
  (:func:`imbalance`; our derivation, the identity the paper's argument rests on);
* with ``s = u + v`` the flow is ``ṡ_i = -g_i s_i``; the log form ``σ_i = log|s_i|``,
  ``κ_i = log|u_i² - v_i²|`` (constant) gives ``σ̇ = -∇g(w(σ))`` with
  ``w_i = (e^{2σ_i} - e^{2κ_i - 2σ_i})/4`` (:func:`log_weight`; our derivation, exact and well
  conditioned down to α = 1e-64);
* in rescaled time ``τ = t/log(1/α)`` the trajectory tends to a staircase of stationary points
  ``w^k`` entered at times ``T_k`` computed by the paper's greedy Algorithm 1, and the
  "clocks" ``b_i(τ) = (σ_i(τL) - σ_i(0))/L`` tend to a piecewise-linear path.

The paper's full text was not available to us: Algorithm 1's symbols, the limit theorem and
the non-degeneracy assumptions are our reconstruction.  Assumptions are cited by content
(non-degeneracy of the argmin, convergence of stage (B), strict local minima, robustness to
perturbation), not by number; the last two are the ones the paper's Fig. 3 validates.

Choices made where the paper is ambiguous:

* Ties in the argmin of stage (A) are broken by the smallest index (the paper assumes none).
* A coordinate switched off in stage (B) keeps ``b = ±1`` (its old sign) and starts moving
  inwards at slope ``-γ_j``; re-entry with the opposite sign needs a ``b``-travel of 2 (our
  reconstruction, as in Pesme-Flammarion's saddle-to-saddle algorithm, which the paper cites).
* ``Stage.clocks`` is ``b(T_k)`` just after the jump: ``sign(w_i)`` on the support, the old
  sign on switched-off coordinates.  Because ``b`` is linear in ``τ`` between jumps on every
  inactive coordinate and constant (±1) on active ones, the limit clock path is exactly the
  piecewise-linear interpolation through ``(0, 0), (T_1, b^1), (T_2, b^2), ...``
  (:func:`clock_path`).
* Stage (B) for quadratics is the sign-constrained minimiser on the enlarged support, found by
  enumerating sub-supports (exponential in the support size; fine for p ≲ 12).  For general
  losses it integrates ``ẇ = -2|w| ⊙ ∇g(w)`` in log coordinates from a seed of size 1e-10 and
  polishes the stationary point with Newton's method on the surviving support.
* The diagonal softmax head (the paper's toy "attention head with diagonal weights" of
  Figs. 2-3; the data, teacher and sizes are our stand-in, drawn by the numerics) is provided as
  a *numeric* loss with an analytic gradient (:func:`diagonal_head_problem`): a sympy
  expression of the 16-sample toy is too slow to differentiate.  Its structural property
  (the KQ gradient vanishes at ``ν = 0``) is proved symbolically on a generic instance
  (the KQ gradient at ν = 0, in :func:`equations`; its output is identically 0, so it
  is private: the claims derive the identity from :func:`diagonal_head_loss_symbolic`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from numbers import Integral, Rational

import numpy as np
import sympy as sp

from theory.flow import Equation, ReducedSystem, Twin, gradient_flow, simplify_zero

__all__ = [
    "KAPPA",
    "SIGMA",
    "HeadProblem",
    "Stage",
    "clock_path",
    "diagonal_flow",
    "diagonal_head_loss_symbolic",
    "diagonal_head_problem",
    "equations",
    "escape_direction",
    "first_jump_time",
    "first_jump_time_full",
    "full_head_gradients",
    "gd_escape_rate",
    "gd_imbalance_factor",
    "imbalance",
    "incremental_stages",
    "log_coordinates",
    "log_flow",
    "log_weight",
    "quadratic_gradient",
    "quadratic_loss",
    "quadratic_stages",
    "quadratic_value",
    "staircase",
    "three_coordinate_example",
    "two_coordinate_jump_times",
    "weights_from_log",
]


@dataclass(frozen=True)
class Stage:
    """One jump of the paper's Algorithm 1 and the plateau after it.

    ``jump_time`` T_k in rescaled time t/log(1/α); ``coordinate`` i_k switched on at T_k with
    ``sign`` ε_k; ``deactivated`` the coordinates switched off during this jump (ascending);
    ``plateau`` w^k; ``clocks`` b(T_k); ``loss`` g(w^k).
    """

    jump_time: sp.Expr | float
    coordinate: int
    sign: int
    deactivated: tuple[int, ...]
    plateau: tuple
    clocks: tuple
    loss: sp.Expr | float


# ---------------------------------------------------------------------- input handling
def _is_exact(x) -> bool:
    if isinstance(x, bool):
        return True
    if isinstance(x, (Integral, Rational, Fraction, np.integer)):
        return True
    if isinstance(x, sp.Basic):
        return bool(x.is_Rational)
    return False


def _to_exact(x):
    if isinstance(x, sp.Basic):
        return sp.Rational(x)
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    return sp.Rational(int(x)) if isinstance(x, (Integral, np.integer)) else sp.Rational(x)


def _flat(x) -> list:
    if isinstance(x, sp.MatrixBase):
        return list(x)
    arr = np.asarray(x, dtype=object)
    return list(arr.reshape(-1))


def _numeric_array(name: str, x, ndim: int):
    """(values, exact) with values a sympy Matrix (exact) or a float ndarray."""
    if isinstance(x, sp.MatrixBase):
        shape = x.shape if ndim == 2 else (len(x),)
    else:
        arr = np.asarray(x, dtype=object)
        shape = arr.shape
    if len(shape) != ndim and not (ndim == 1 and len(shape) == 2 and 1 in shape):
        raise ValueError(f"{name} must be a {ndim}-dimensional array, got shape {shape}")
    flat = _flat(x)
    for v in flat:
        if isinstance(v, sp.Basic) and v.free_symbols:
            raise ValueError(f"{name} must be numeric, got the symbol(s) {v.free_symbols}")
    exact = all(_is_exact(v) for v in flat)
    if ndim == 1:
        shape = (len(flat),)
    if exact:
        vals = [_to_exact(v) for v in flat]
        return (sp.Matrix(*shape, vals) if ndim == 2 else sp.Matrix(vals)), True
    try:
        arr = np.array([float(v) for v in flat], dtype=float).reshape(shape)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr, False


def _quadratic_inputs(H, beta):
    Hm, h_exact = _numeric_array("H", H, 2)
    bm, b_exact = _numeric_array("beta", beta, 1)
    p = Hm.shape[0]
    if Hm.shape != (p, p):
        raise ValueError(f"H must be square, got shape {Hm.shape}")
    if bm.shape[0] != p:
        raise ValueError(f"beta must have length {p} (the size of H), got {bm.shape[0]}")
    exact = h_exact and b_exact
    if exact:
        if Hm != Hm.T:
            raise ValueError("H must be symmetric")
        if not Hm.is_positive_definite:
            raise ValueError("H must be positive definite")
        return Hm, bm, True
    Hn = np.array(Hm.tolist(), dtype=float) if isinstance(Hm, sp.MatrixBase) else Hm
    bn = np.array([float(v) for v in bm], dtype=float)
    scale = max(1.0, float(np.max(np.abs(Hn))))
    if np.max(np.abs(Hn - Hn.T)) > 1e-12 * scale:
        raise ValueError("H must be symmetric")
    if np.linalg.eigvalsh(0.5 * (Hn + Hn.T)).min() <= 0:
        raise ValueError("H must be positive definite")
    return 0.5 * (Hn + Hn.T), bn, False


# ---------------------------------------------------------------------- Algorithm 1 core
_INF = float("inf")


def _sign(x) -> int:
    return 1 if x > 0 else (-1 if x < 0 else 0)


def gd_escape_rate(gamma, lr: float):
    """Clock rate of gradient descent with step ``lr`` on a coordinate with gradient γ.

    Under GD, ``s' = (1 - lr γ) s`` and ``r' = (1 + lr γ) r`` exactly (s = u + v, r = u - v;
    our derivation), so the growing one of |s|, |r| gains a factor ``1 + lr|γ|`` per step
    and the clock moves at ``sign(γ) log(1 + lr|γ|)/lr`` per unit time ``t = lr·steps``
    (γ itself at ``lr = 0``, the gradient flow).  Floats or arrays; sign-preserving.
    """
    if not lr >= 0:
        raise ValueError(f"lr must be >= 0, got {lr}")
    g = np.asarray(gamma, dtype=float)
    if not lr:
        return g
    return np.sign(g) * np.log1p(lr * np.abs(g)) / lr


def gd_imbalance_factor(gamma, lr: float):
    """Per-step factor of the imbalance u² - v² under GD with step ``lr``: ``1 - lr² γ²``.

    ``u' = u - lr γ v``, ``v' = v - lr γ u`` give ``(u' - v')(u' + v') = (1 + lr γ)(1 - lr γ)
    (u - v)(u + v)`` exactly (our derivation; at ``lr = 0`` the flow conserves it,
    :func:`imbalance`).  Floats or arrays.
    """
    if not lr >= 0:
        raise ValueError(f"lr must be >= 0, got {lr}")
    g = np.asarray(gamma, dtype=float)
    return 1.0 - (lr * g) ** 2


def _gd_rates(gamma, lr: float):
    """Clock rates of GD with step lr (:func:`gd_escape_rate`), a list; γ itself at lr = 0."""
    if not lr:
        return gamma
    return [float(x) for x in gd_escape_rate([float(g) for g in gamma], lr)]


def _escape_times(gamma, b, inactive, is_zero) -> dict[int, object]:
    """Stage (A): Δ(i) = (1 - b_i)/(-γ_i) for γ_i < 0, (1 + b_i)/γ_i for γ_i > 0, else ∞."""
    out = {}
    for i in inactive:
        g = gamma[i]
        if is_zero(g):
            out[i] = _INF
        elif g < 0:
            out[i] = (1 - b[i]) / (-g)
        else:
            out[i] = (1 + b[i]) / g
    return out


def _algorithm1(
    p: int,
    gradient: Callable[[tuple], list],
    loss: Callable[[tuple], object],
    stage_b: Callable[[tuple, dict[int, int]], tuple],
    is_zero: Callable[[object], bool],
    zero,
    max_stages: int,
    clock_memory: bool = True,
    lr: float = 0.0,
) -> tuple[Stage, ...]:
    """The paper's greedy Algorithm 1 (our reconstruction), generic over exact or float arithmetic.

    ``clock_memory=False`` is a near-miss variant for negative controls: the clocks of
    inactive coordinates restart at 0 after every jump (escape times forget the gradient
    integrated on earlier plateaus).  ``lr > 0`` gives the α → 0 limit of gradient *descent*
    with step lr (same plateaus; clocks advance at the GD rates of :func:`_gd_rates`).
    """
    if int(max_stages) != max_stages or max_stages < 0:
        raise ValueError(f"max_stages must be an integer >= 0, got {max_stages}")
    w = tuple(zero for _ in range(p))
    b = [zero] * p
    T = zero
    stages: list[Stage] = []
    for _ in range(int(max_stages)):
        gamma = _gd_rates(gradient(w), lr)
        support = {i for i in range(p) if not is_zero(w[i])}
        inactive = [i for i in range(p) if i not in support]
        deltas = _escape_times(gamma, b, inactive, is_zero)
        finite = {i: d for i, d in deltas.items() if d != _INF}
        if not finite:
            break
        i_k = min(finite, key=lambda i: (finite[i], i))
        delta = finite[i_k]
        T = T + delta
        for i in inactive:
            b[i] = b[i] - delta * gamma[i]
        eps = 1 if b[i_k] > 0 else -1
        b[i_k] = zero + eps
        signs = {i: _sign(w[i]) for i in support}
        signs[i_k] = eps
        w = stage_b(w, signs)
        new_support = {i for i in range(p) if not is_zero(w[i])}
        for i in new_support:
            b[i] = zero + _sign(w[i])
        if not clock_memory:
            for i in range(p):
                if i not in new_support:
                    b[i] = zero
        stages.append(
            Stage(
                jump_time=T,
                coordinate=int(i_k),
                sign=int(eps),
                deactivated=tuple(sorted(support - new_support)),
                plateau=tuple(w),
                clocks=tuple(b),
                loss=loss(w),
            )
        )
    return tuple(stages)


def _quadratic_stage_b(H, beta, exact: bool, tol: float, sign_constrained: bool = True):
    """Sign-constrained minimiser of ½wᵀHw - βᵀw on the candidates (stage (B) for a quadratic).

    ``sign_constrained=False`` (near-miss variant for negative controls): the unconstrained
    minimiser on the enlarged support, i.e. no coordinate is ever switched off.
    """
    p = len(beta)

    def solve(A: list[int]):
        if exact:
            sub = H.extract(A, A)
            return list(sub.LUsolve(sp.Matrix([beta[i] for i in A])))
        return list(np.linalg.solve(H[np.ix_(A, A)], beta[A]))

    def stage_b(w, signs: dict[int, int]):
        cand = sorted(signs)
        zero = sp.S.Zero if exact else 0.0
        if not sign_constrained:
            full = [zero] * p
            for i, v in zip(cand, solve(cand), strict=True):
                full[i] = v if exact else float(v)
            return tuple(full)
        for size in range(len(cand), 0, -1):
            for A in itertools.combinations(cand, size):
                wA = solve(list(A))
                if any(signs[i] * v <= (0 if exact else tol) for i, v in zip(A, wA, strict=True)):
                    continue
                full = [zero] * p
                for i, v in zip(A, wA, strict=True):
                    full[i] = v if exact else float(v)
                grad = _quadratic_gradient(H, beta, full, exact)
                dropped = [j for j in cand if j not in A]
                if all(signs[j] * grad[j] >= (0 if exact else -tol) for j in dropped):
                    return tuple(full)
        return tuple(zero for _ in range(p))

    return stage_b


def _quadratic_gradient(H, beta, w, exact: bool) -> list:
    if exact:
        return list(H * sp.Matrix(w) - beta)
    return list(quadratic_gradient(H, beta, w))


def quadratic_loss(H, beta, w) -> sp.Expr:
    """``g(w) = ½ wᵀHw - βᵀw``: the population loss of the diagonal linear network
    ``f(x) = ⟨u ⊙ v, x⟩`` (H = E xxᵀ, β = E xy), as a sympy expression in ``w`` (symbols or
    exact numbers; ``H``, ``beta`` sympy matrices or nested sequences)."""
    wv = sp.Matrix(list(w))
    H, beta = sp.Matrix(H), sp.Matrix(list(beta))
    return (wv.T * H * wv)[0, 0] / 2 - (beta.T * wv)[0, 0]


def quadratic_value(H, beta, w) -> float:
    """:func:`quadratic_loss` in floats: ``½ wᵀHw - βᵀw`` for float arrays ``H``, ``beta``."""
    wv = np.asarray(w, dtype=float)
    return float(0.5 * wv @ H @ wv - beta @ wv)


def quadratic_gradient(H, beta, w) -> np.ndarray:
    """``∇g(w) = H w - β`` of :func:`quadratic_loss`, in floats."""
    return H @ np.asarray(w, dtype=float) - beta


def quadratic_stages(H, beta, max_stages: int = 64, *, clock_memory: bool = True,
                     sign_constrained: bool = True, lr: float = 0.0) -> tuple[Stage, ...]:
    """Algorithm 1 for ``g(w) = ½ wᵀHw - βᵀw`` (:func:`quadratic_loss`; diagonal linear network).

    Exact sympy Rationals for integer/rational input, floats otherwise.  Stage (B) is the
    sign-constrained minimiser on the enlarged support (unique since H ≻ 0).  Stage 0
    (w = 0) is omitted; the tuple ends when no inactive coordinate has a non-zero gradient.
    ``clock_memory=False`` and ``sign_constrained=False`` give the near-miss variants used
    as negative controls (see :func:`_algorithm1`, :func:`_quadratic_stage_b`); ``lr > 0``
    the limit of gradient descent with that step (floats).
    """
    if not lr >= 0:
        raise ValueError(f"lr must be >= 0, got {lr}")
    if lr > 0:
        H = np.array(sp.Matrix(H).tolist() if isinstance(H, sp.MatrixBase) else H, dtype=object)
        H = [[float(x) for x in row] for row in H]
        beta = [float(x) for x in (list(beta) if isinstance(beta, sp.MatrixBase) else beta)]
    Hm, bm, exact = _quadratic_inputs(H, beta)
    p = len(bm)
    if exact:
        zero = sp.S.Zero

        def is_zero(x) -> bool:
            return x == 0

        def loss(w):
            return quadratic_loss(Hm, bm, w)

        tol = 0.0
    else:
        zero = 0.0
        scale = max(1.0, float(np.max(np.abs(Hm))), float(np.max(np.abs(bm))))
        tol = 1e-12 * scale

        def is_zero(x) -> bool:
            return abs(x) <= tol

        def loss(w):
            return quadratic_value(Hm, bm, w)

    def gradient(w):
        g = _quadratic_gradient(Hm, bm, list(w), exact)
        return g if exact else [float(x) for x in g]

    stage_b = _quadratic_stage_b(Hm, bm, exact, tol, sign_constrained)
    stages = _algorithm1(p, gradient, loss, stage_b, is_zero, zero, max_stages, clock_memory,
                         lr)
    if exact:
        return stages
    return tuple(
        Stage(float(s.jump_time), s.coordinate, s.sign, s.deactivated,
              tuple(float(x) for x in s.plateau), tuple(float(x) for x in s.clocks),
              float(s.loss))
        for s in stages
    )


# ---------------------------------------------------------------------- general losses
def _callables(loss, variables, gradient):
    """(p, g(w) -> float, ∇g(w) -> ndarray, Hessian or None) for a sympy or callable loss."""
    if isinstance(loss, sp.Basic):
        if isinstance(variables, (int, np.integer)):
            raise ValueError("variables must be the sympy symbols of loss, got an integer")
        syms = tuple(variables)
        if not syms or not all(isinstance(s, sp.Symbol) for s in syms):
            raise ValueError("variables must be a non-empty sequence of sympy symbols")
        extra = loss.free_symbols - set(syms)
        if extra:
            raise ValueError(f"loss has free symbols {sorted(map(str, extra))} not in variables")
        grad = [sp.diff(loss, s) for s in syms]
        hess = [[sp.diff(gi, s) for s in syms] for gi in grad]
        f = sp.lambdify([syms], loss, "numpy", cse=True)
        fg = sp.lambdify([syms], grad, "numpy", cse=True)
        fh = sp.lambdify([syms], hess, "numpy", cse=True)
        p = len(syms)
        return (
            p,
            lambda w: float(f(np.asarray(w, dtype=float))),
            lambda w: np.asarray(fg(np.asarray(w, dtype=float)), dtype=float).reshape(p),
            lambda w: np.asarray(fh(np.asarray(w, dtype=float)), dtype=float).reshape(p, p),
        )
    if not callable(loss):
        raise ValueError("loss must be a sympy expression or a callable on arrays of shape (p,)")
    if gradient is None or not callable(gradient):
        raise ValueError("gradient must be given (a callable w -> array of shape (p,)) "
                         "when loss is a callable")
    if int(variables) != variables or variables < 1:
        raise ValueError(f"variables must be the dimension p >= 1 for a callable loss, got {variables}")
    p = int(variables)

    def grad(w):
        out = np.asarray(gradient(np.asarray(w, dtype=float)), dtype=float).reshape(-1)
        if out.shape != (p,):
            raise ValueError(f"gradient must return shape ({p},), got {out.shape}")
        return out

    return p, lambda w: float(loss(np.asarray(w, dtype=float))), grad, None


def _fd_hessian(grad, w: np.ndarray, idx: list[int]) -> np.ndarray:
    h = 1e-6 * max(1.0, float(np.max(np.abs(w))))
    out = np.zeros((len(idx), len(idx)))
    for c, j in enumerate(idx):
        e = np.zeros_like(w)
        e[j] = h
        out[:, c] = (grad(w + e)[idx] - grad(w - e)[idx]) / (2 * h)
    return 0.5 * (out + out.T)


def _flow_stage_b(grad, hess, p: int, tol: float, seed: float = 1e-10,
                  t_chunk: float = 50.0, t_max: float = 20000.0):
    """Stage (B) for a general loss: the balanced limit flow ``ẇ = -2|w| ⊙ ∇g(w)``.

    Integrated in log coordinates ``w_j = ε_j e^{z_j}``, ``ż_j = -2 ε_j g_j(w)`` (signs and
    zeros are preserved exactly), then polished by Newton's method on the surviving support.
    """
    from scipy.integrate import solve_ivp

    def stage_b(w, signs: dict[int, int]):
        cand = sorted(signs)
        eps = np.array([signs[j] for j in cand], dtype=float)
        w0 = np.asarray(w, dtype=float)
        z = np.array([np.log(abs(w0[j])) if abs(w0[j]) > 0 else np.log(seed) for j in cand])

        def full(zz):
            out = np.zeros(p)
            out[cand] = eps * np.exp(np.minimum(zz, 700.0))
            return out

        def rhs(_t, zz):
            return -2.0 * eps * grad(full(zz))[cand]

        t = 0.0
        while t < t_max:
            sol = solve_ivp(rhs, (t, t + t_chunk), z, method="LSODA", rtol=1e-10, atol=1e-12)
            z = sol.y[:, -1]
            t += t_chunk
            wf = full(z)
            g = grad(wf)[cand]
            alive = np.abs(wf[cand]) > 1e-6 * max(1.0, float(np.max(np.abs(wf))))
            if np.all(np.abs(g[alive]) < 1e-7) and np.all(eps[~alive] * g[~alive] > 0):
                break
        wf = full(z)
        alive_idx = [j for j, a in zip(cand, alive, strict=True) if a]
        wf[[j for j in cand if j not in alive_idx]] = 0.0
        for _ in range(50):  # Newton polish of ∇_A g = 0 on the surviving support A
            g = grad(wf)[alive_idx]
            if np.max(np.abs(g), initial=0.0) < tol:
                break
            Hs = hess(wf)[np.ix_(alive_idx, alive_idx)] if hess else _fd_hessian(grad, wf, alive_idx)
            wf[alive_idx] = wf[alive_idx] - np.linalg.solve(Hs, g)
        return tuple(float(x) for x in wf)

    return stage_b


def incremental_stages(loss, variables, *, gradient=None, max_stages: int = 64,
                       tol: float = 1e-9, clock_memory: bool = True,
                       lr: float = 0.0) -> tuple[Stage, ...]:
    """The paper's Algorithm 1 for a general loss g(w), floats.

    ``loss`` is a sympy expression in the symbols ``variables``, or a callable on arrays of
    shape (p,) with ``variables = p`` and ``gradient(w)`` of shape (p,).  Stage (B) integrates
    the balanced limit flow ``ẇ = -2|w| ⊙ ∇g`` and polishes the stationary point; a gradient
    entry with ``|γ_i| <= tol·max(1, |γ|_∞)`` counts as zero (no escape).
    ``clock_memory=False`` is the near-miss variant of :func:`_algorithm1`; ``lr > 0`` the
    limit of gradient descent with that step.
    """
    if not lr >= 0:
        raise ValueError(f"lr must be >= 0, got {lr}")
    p, f, grad, hess = _callables(loss, variables, gradient)
    scale = max(1.0, float(np.max(np.abs(grad(np.zeros(p))))))
    ztol = tol * scale

    def is_zero(x) -> bool:
        return abs(x) <= ztol

    stage_b = _flow_stage_b(grad, hess, p, tol=1e-13 * scale)
    return _algorithm1(p, lambda w: [float(x) for x in grad(w)], f, stage_b, is_zero, 0.0,
                       max_stages, clock_memory, lr)


# ---------------------------------------------------------------------- closed forms
def first_jump_time(gradient) -> sp.Expr:
    """T_1 = 1/max_i |∂g/∂w_i(0)| for ``gradient`` = ∇g(0) (diagonal models: the
    escape rate of coordinate i at w = 0 is |g_i(0)|, our derivation from ṡ_i = -g_i s_i)."""
    g, exact = _numeric_array("gradient", gradient, 1)
    vals = list(g) if exact else [sp.Float(float(x)) for x in g]
    m = max((abs(v) for v in vals), default=sp.S.Zero)
    return sp.oo if m == 0 else 1 / m


def first_jump_time_full(*gradients) -> sp.Expr:
    """T_1 = 1/max_j σ_max(G_j), G_j = ∂g/∂P_j at 0 for products ``P_j = A_j B_jᵀ``.

    Small-init linearisation (our derivation, for the non-diagonal head): ``Ȧ = -G B``, ``Ḃ = -Gᵀ A`` grows along the top
    singular pair of G at rate σ_max(G), so the escape takes log(1/α)/σ_max(G) real time.
    """
    if not gradients:
        raise ValueError("gradients must hold at least one matrix")
    best = sp.S.Zero
    for k, G in enumerate(gradients):
        Gm, exact = _numeric_array(f"gradients[{k}]", G, 2)
        if exact:
            M = Gm.T * Gm
            lam = sp.Symbol("lam")
            roots = sp.Poly(M.charpoly(lam).as_expr(), lam).real_roots() if M.rows else []
            top = sp.sqrt(roots[-1]) if roots else sp.S.Zero
        else:
            top = sp.Float(float(np.linalg.svd(np.atleast_2d(Gm), compute_uv=False).max(initial=0.0)))
        if top > best:
            best = top
    return sp.oo if best == 0 else 1 / best


def escape_direction(G) -> np.ndarray:
    """The direction in which ``P = A Bᵀ`` leaves 0: ``-u_1 v_1ᵀ`` (unit Frobenius norm),
    ``(u_1, v_1)`` the top singular pair of ``G = ∂g/∂P`` at 0.

    Small-init linearisation (our derivation, as :func:`first_jump_time_full`): with
    ``A = u_1 x(t)ᵀ``, ``B = v_1 y(t)ᵀ`` the flow ``Ȧ = -G B``, ``Ḃ = -Gᵀ A`` gives
    ``ẋ = -σ_1 y``, ``ẏ = -σ_1 x``, so ``x - y`` grows as e^{σ_1 t} and ``x + y`` decays:
    ``P = u_1 (x·y) v_1ᵀ → -|x|² u_1 v_1ᵀ``, the sense of ``-G``'s top pair
    (``⟨P, -G⟩ = |x|² σ_1 > 0``).  The other singular pairs grow at σ_j < σ_1, so their
    share of ``P`` falls as (|P|/α²)^{-(1 - σ_j/σ_1)/2}.  Needs σ_1 > σ_2 (a unique pair).
    """
    Gm = np.atleast_2d(np.asarray(G, dtype=float))
    U, S, Vt = np.linalg.svd(Gm)
    if S.size < 1 or not S[0] > 0:
        raise ValueError("G must have a non-zero singular value")
    if S.size > 1 and not S[0] > S[1]:
        raise ValueError(f"the top singular value of G is not simple: {S[:2].tolist()}")
    return -np.outer(U[:, 0], Vt[0])


B1, B2, RHO = sp.symbols("beta1 beta2 rho", real=True)


@lru_cache(maxsize=1)
def _two_coordinate_symbolic() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(T_1, T_2 if β2 > ρβ1, T_2 if β2 < ρβ1), derived by running stage (A) symbolically."""
    H = sp.Matrix([[1, RHO], [RHO, 1]])
    beta = sp.Matrix([B1, B2])
    T1 = 1 / B1                                 # γ(0) = -β, coordinate 0 escapes first
    w1 = sp.Matrix([beta[0] / H[0, 0], 0])      # stage (B): minimiser on coordinate 0
    b2 = T1 * B2                                # b_1(T_1) = -T_1 γ_1(0)
    gamma2 = (H * w1 - beta)[1]
    up = sp.simplify(T1 + (1 - b2) / (-gamma2))
    down = sp.simplify(T1 + (1 + b2) / gamma2)
    return T1, sp.factor(up), sp.factor(down)


def two_coordinate_jump_times(beta1, beta2, rho) -> tuple[sp.Expr, sp.Expr]:
    """(T_1, T_2) for H = [[1, ρ], [ρ, 1]], β1 > |β2| (our derivation: stage (A)
    run symbolically on the two-coordinate quadratic).

    T_1 = 1/β1; T_2 = (1-ρ)/(β2-ρβ1) if β2 > ρβ1 (new coordinate +), (1+ρ)/(ρβ1-β2) if
    β2 < ρβ1 (new coordinate -), ∞ if β2 = ρβ1 (coordinate 1 is already optimal at 0).
    """
    vals = {}
    for name, v in (("beta1", beta1), ("beta2", beta2), ("rho", rho)):
        (x,), _ = _numeric_array(name, [v], 1)
        vals[name] = x if _is_exact(x) else sp.Float(float(x))
    b1, b2, r = vals["beta1"], vals["beta2"], vals["rho"]
    if abs(r) >= 1:
        raise ValueError(f"rho must satisfy |rho| < 1, got {r}")
    if b1 <= abs(b2):
        raise ValueError(f"beta1 must exceed |beta2|, got beta1={b1}, beta2={b2}")
    T1, up, down = _two_coordinate_symbolic()
    sub = {B1: b1, B2: b2, RHO: r}
    if b2 > r * b1:
        T2 = up.subs(sub)
    elif b2 < r * b1:
        T2 = down.subs(sub)
    else:
        T2 = sp.oo
    return sp.nsimplify(T1.subs(sub)) if _is_exact(b1) else T1.subs(sub), T2


def three_coordinate_example() -> tuple[sp.Matrix, sp.Matrix, tuple[float, ...], tuple[float, ...]]:
    """(H, β, u_0, v_0) of our three-coordinate worked example: activation, switch-off and
    sign-flipped re-entry.

    Σ = [[1.07, .7, .7], [.7, 1, 0], [.7, 0, 1]] (x_1 = 0.7(x_2 + x_3) + 0.3 z), w* =
    (-1/2, 1, 4/5), β = Σ w*.
    """
    H = sp.Matrix([[sp.Rational(107, 100), sp.Rational(7, 10), sp.Rational(7, 10)],
                   [sp.Rational(7, 10), 1, 0], [sp.Rational(7, 10), 0, 1]])
    w_star = sp.Matrix([sp.Rational(-1, 2), 1, sp.Rational(4, 5)])
    return H, H * w_star, (0.9, -0.6, 0.7), (0.4, 0.8, -0.3)


# ---------------------------------------------------------------------- reduced flows
def _params_of(loss: sp.Expr, variables) -> tuple[sp.Symbol, ...]:
    return tuple(sorted(loss.free_symbols - set(variables), key=lambda s: s.name))


def _check_symbols(loss, variables) -> tuple[sp.Symbol, ...]:
    if not isinstance(loss, sp.Basic):
        raise ValueError("loss must be a sympy expression")
    syms = tuple(variables)
    if not syms or not all(isinstance(s, sp.Symbol) for s in syms):
        raise ValueError("variables must be a non-empty sequence of sympy symbols")
    return syms


def imbalance(u, v):
    """The conserved imbalance ``u² - v²`` of one coordinate (sympy or numpy).

    Along ``u̇ = -g_i v``, ``v̇ = -g_i u``: d/dt (u² - v²) = -2 g_i u v + 2 g_i v u = 0 (our
    derivation; :func:`diagonal_flow` proves it symbolically as the drift of each invariant).
    """
    return u**2 - v**2


def log_weight(sigma, kappa):
    """``w = (e^{2σ} - e^{2κ-2σ})/4``: the weight of a coordinate in the log form of the flow
    (``σ = log|u + v|``, ``κ = log|u² - v²|``; since ``w = (s² - r²)/4`` with ``s = u + v``,
    ``r = u - v`` and ``|r| = e^{κ-σ}``; our derivation).  Sympy; the float twin is
    :data:`weights_from_log`."""
    return (sp.exp(2 * sigma) - sp.exp(2 * kappa - 2 * sigma)) / 4


def diagonal_flow(loss, variables) -> ReducedSystem:
    """Gradient flow in (u_0..u_{p-1}, v_0..v_{p-1}) of g(u ⊙ v), with invariants u_i² - v_i².

    The other free symbols of ``loss`` are parameters, by name (the paper's diagonal-weight
    network; invariants: :func:`imbalance`).
    """
    syms = _check_symbols(loss, variables)
    p = len(syms)
    u = sp.symbols(f"u0:{p}", real=True)
    v = sp.symbols(f"v0:{p}", real=True)
    L = loss.subs({s: ui * vi for s, ui, vi in zip(syms, u, v, strict=True)}, simultaneous=True)
    return gradient_flow(
        L, (*u, *v), _params_of(loss, syms),
        invariants={f"imbalance_{i}": imbalance(u[i], v[i]) for i in range(p)},
        assumptions="network with diagonal weights f = h(x; u ⊙ v); gradient flow",
        name="diagonal_flow",
    )


def log_flow(loss, variables) -> ReducedSystem:
    """Log form of the diagonal flow: σ̇_i = -∂g/∂w_i at w_i = (e^{2σ_i} - e^{2κ_i-2σ_i})/4.

    State σ_i = log|u_i + v_i|; parameters κ_i = log|u_i² - v_i²| (conserved), then the other
    free symbols of ``loss`` by name.  Exactly equivalent to :func:`diagonal_flow` (our derivation).
    """
    syms = _check_symbols(loss, variables)
    p = len(syms)
    sigma = sp.symbols(f"sigma0:{p}", real=True)
    kappa = sp.symbols(f"kappa0:{p}", real=True)
    w_of = {s: log_weight(si, ki) for s, si, ki in zip(syms, sigma, kappa, strict=True)}
    rhs = sp.Matrix([-sp.diff(loss, s).subs(w_of, simultaneous=True) for s in syms])
    return ReducedSystem(
        state=sigma, params=(*kappa, *_params_of(loss, syms)), rhs=rhs,
        assumptions="s = u + v obeys ds_i/dt = -g_i s_i; sigma = log|s|, kappa = log|u^2 - v^2|",
        name="log_flow",
    )


def log_coordinates(u0, v0, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(σ(0), κ) of θ(0) = α(u_0, v_0): σ_i = log|α(u_i + v_i)|, κ_i = log(α²|u_i² - v_i²|).

    Computed in logs so that α down to 1e-300 does not underflow.  Genericity needs
    u_{0,i} ≠ ±v_{0,i} (so that both u + v and u - v start non-zero).
    """
    u = np.asarray(u0, dtype=float)
    v = np.asarray(v0, dtype=float)
    if u.shape != v.shape:
        raise ValueError(f"u0 and v0 must have the same shape, got {u.shape} and {v.shape}")
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha}")
    if np.any(np.abs(u + v) == 0) or np.any(np.abs(u - v) == 0):
        raise ValueError("u0 must differ from ±v0 in every coordinate (genericity)")
    la = np.log(alpha)
    return la + np.log(np.abs(u + v)), 2 * la + np.log(np.abs(u * u - v * v))


SIGMA, KAPPA = sp.symbols("sigma kappa", real=True)
#: The float twin of :func:`log_weight` (numpy, broadcasts over arrays of σ and κ).
weights_from_log = Twin(log_weight, SIGMA, KAPPA)


def clock_path(stages: Sequence[Stage], tau) -> np.ndarray:
    """Limit clocks b(τ) [len(tau), p]: piecewise linear through (0, 0) and (T_k, b(T_k))."""
    if not stages:
        raise ValueError("stages must not be empty")
    tau = np.atleast_1d(np.asarray(tau, dtype=float))
    knots = np.array([0.0] + [float(s.jump_time) for s in stages])
    vals = np.array([[0.0] * len(stages[0].clocks)] + [[float(x) for x in s.clocks] for s in stages])
    return np.stack([np.interp(tau, knots, vals[:, i]) for i in range(vals.shape[1])], axis=1)


def staircase(stages: Sequence[Stage], tau, loss0: float) -> np.ndarray:
    """Limit loss in rescaled time: g(0) before T_1, g(w^k) on [T_k, T_{k+1})."""
    tau = np.atleast_1d(np.asarray(tau, dtype=float))
    out = np.full(tau.shape, float(loss0))
    for s in stages:
        out[tau >= float(s.jump_time)] = float(s.loss)
    return out


# ---------------------------------------------------------------------- attention head
@dataclass(frozen=True, eq=False)
class HeadProblem:
    """Diagonal softmax head g(κ | ν) on data X [n, N, d] and labels Y (the diagonal
    attention head of the paper's Figs. 2-3 toy).

    w = (κ_0..κ_{d-1} | ν_0..ν_{d-1}); f(X; w) = softmax(X diag(κ) Xᵀ) X diag(ν);
    g(w) = (1/2n) Σ_n ‖f(X_n; w) - Y_n‖_F².
    """

    X: np.ndarray
    Y: np.ndarray

    @property
    def d(self) -> int:
        return int(self.X.shape[2])

    def loss(self, w) -> float:
        return _head_eval(self.X, self.Y, np.asarray(w, dtype=float))[0]

    def gradient(self, w) -> np.ndarray:
        return _head_eval(self.X, self.Y, np.asarray(w, dtype=float))[1]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _head_eval(X, Y, w) -> tuple[float, np.ndarray]:
    """Loss and analytic gradient (softmax backward) of the diagonal head."""
    n, _, d = X.shape
    kappa, nu = w[:d], w[d:]
    Z = np.einsum("nai,i,nbi->nab", X, kappa, X)
    A = _softmax(Z)
    AX = A @ X
    R = AX * nu - Y
    loss = 0.5 * float(np.sum(R * R)) / n
    g_nu = np.einsum("nai,nai->i", R, AX) / n
    G_A = np.einsum("nai,nbi->nab", R * nu, X) / n
    dZ = A * (G_A - np.sum(A * G_A, axis=-1, keepdims=True))
    g_kappa = np.einsum("nab,nai,nbi->i", dZ, X, X)
    return loss, np.concatenate([g_kappa, g_nu])


def diagonal_head_problem(X, kappa_star, nu_star) -> HeadProblem:
    """The teacher problem of the toy (data X from the simulation side): Y_n = softmax(X_n diag κ* X_nᵀ) X_n diag ν*."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, N, d), got {X.shape}")
    d = X.shape[2]
    ks = np.asarray(kappa_star, dtype=float)
    ns = np.asarray(nu_star, dtype=float)
    if ks.shape != (d,):
        raise ValueError(f"kappa_star must have length {d}, got {ks.shape}")
    if ns.shape != (d,):
        raise ValueError(f"nu_star must have length {d}, got {ns.shape}")
    A = _softmax(np.einsum("nai,i,nbi->nab", X, ks, X))
    return HeadProblem(X, (A @ X) * ns)


def full_head_gradients(X, Y, M, P) -> tuple[np.ndarray, np.ndarray]:
    """(∂g/∂M, ∂g/∂P) of the full head f = softmax(X M Xᵀ) X P (our non-diagonal
    bridge test), M = W_K W_Qᵀ,
    P = W_V W_Oᵀ, g = (1/2n) Σ ‖f - Y‖²."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    n = X.shape[0]
    A = _softmax(np.einsum("nai,ij,nbj->nab", X, np.asarray(M, float), X))
    AX = A @ X
    R = AX @ np.asarray(P, float) - Y
    G_P = np.einsum("nai,naj->ij", AX, R) / n
    G_A = np.einsum("naj,nbj->nab", R, X @ np.asarray(P, float)) / n
    dZ = A * (G_A - np.sum(A * G_A, axis=-1, keepdims=True))
    G_M = np.einsum("nab,nai,nbj->ij", dZ, X, X)
    return G_M, G_P


def diagonal_head_loss_symbolic(N: int = 2, d: int = 2, value_skip: bool = False):
    """One-sample diagonal head with symbolic X (N×d), Y: (g, κ, ν).

    ``value_skip=True`` replaces W_V W_Oᵀ = diag(ν) by I + diag(ν) (a near-miss architecture
    with a value skip, used as the negative control of the VO-first claim).
    """
    X = sp.Matrix(N, d, lambda a, i: sp.Symbol(f"x{a}{i}", real=True))
    Y = sp.Matrix(N, d, lambda a, i: sp.Symbol(f"y{a}{i}", real=True))
    kappa = sp.symbols(f"kappa0:{d}", real=True)
    nu = sp.symbols(f"nu0:{d}", real=True)
    Z = X * sp.diag(*kappa) * X.T
    rows = []
    for a in range(N):
        ex = [sp.exp(Z[a, c]) for c in range(N)]
        tot = sum(ex)
        rows.append([e / tot for e in ex])
    A = sp.Matrix(rows)
    P = sp.diag(*nu) + (sp.eye(d) if value_skip else sp.zeros(d, d))
    R = A * X * P - Y
    return sum(r**2 for r in R) / 2, kappa, nu


def _kq_gradient_at_zero_vo(N: int = 2, d: int = 2, value_skip: bool = False) -> tuple[sp.Expr, ...]:
    """∂g/∂κ_i at ν = 0, simplified: identically 0 (our derivation of
    "why VO comes first": with W_V W_Oᵀ = 0 the head's output is 0 whatever the KQ values)."""
    g, kappa, nu = diagonal_head_loss_symbolic(N, d, value_skip)
    zero = {n_: 0 for n_ in nu}
    # simplify_zero: expand, then random rational probes return a non-zero result at once
    return tuple(simplify_zero(sp.diff(g, k).subs(zero)) for k in kappa)


# ---------------------------------------------------------------------- equations
def equations() -> list[Equation]:
    """The derived equations of the row, for ``tdcheck equations rank_increase``."""
    w0, w1 = sp.symbols("w0 w1", real=True)
    quad = sp.expand(quadratic_loss([[1, RHO], [RHO, 1]], [B1, B2], (w0, w1)))
    diag = diagonal_flow(quad, (w0, w1))
    logf = log_flow(quad, (w0, w1))
    T1, up, down = _two_coordinate_symbolic()
    b, gam = sp.symbols("b_i gamma_i", real=True)
    H, beta, _, _ = three_coordinate_example()
    stages = quadratic_stages(H, beta)
    step2 = "the paper's Algorithm 1, stage (A) step 2 (our reconstruction)"
    two = "our derivation: stage (A) run symbolically on the two-coordinate quadratic"
    out = [
        Equation("diagonal flow du0/dt", diag.rhs[0],
                 "gradient flow of g(u ⊙ v), the paper's diagonal-weight network"),
        Equation("diagonal flow dv0/dt", diag.rhs[2], "gradient flow of g(u ⊙ v)"),
        Equation("imbalance u0^2 - v0^2 drift", diag.drift("imbalance_0"),
                 "conservation law (our derivation: the drift must vanish)"),
        Equation("log flow dsigma0/dt", logf.rhs[0], "our derivation: exact log form of the flow"),
        Equation("w(sigma, kappa)", log_weight(SIGMA, KAPPA), "our derivation: w = (s² - r²)/4"),
        Equation("escape time Delta (gamma_i < 0)", (1 - b) / (-gam), step2),
        Equation("escape time Delta (gamma_i > 0)", (1 + b) / gam, step2),
        Equation("two-coordinate T_1", T1, two),
        Equation("two-coordinate T_2 (beta2 > rho beta1)", up, two),
        Equation("two-coordinate T_2 (beta2 < rho beta1)", down, two),
        Equation("KQ gradient at nu = 0 (N = d = 2)", sp.Tuple(*_kq_gradient_at_zero_vo()),
                 "our derivation of 'why VO comes first' (must be 0)"),
    ]
    table = "our three-coordinate worked example (Algorithm 1, exact rationals)"
    for k, s in enumerate(stages, start=1):
        out.append(Equation(f"three-coordinate T_{k}", s.jump_time, table))
        out.append(Equation(f"three-coordinate w^{k}", sp.Tuple(*s.plateau), table))
    return out
