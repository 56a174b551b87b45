"""Linear attention as a proxy for transformer optimisation: Ahn et al. (ICLR 2024).

Reduced theory of in-context linear regression with linear self-attention, from the paper
and its two companions: ZFB (Zhang, Frei, Bartlett, JMLR 2024) for the one-layer flow,
AhnPGD (Ahn, Cheng, Daneshmand, Sra, NeurIPS 2023) for L layers.

**Loss convention.** Every loss here is the paper's (Section 3.1) and the authors' code
convention, with no 1/2: ``f = E[(prediction - w*^T x_q)^2]``.  The ZFB flow descends
``f/2`` (their convention), said again where it matters.

Notation: covariates x ~ D with covariance Sigma, n context tokens, Sigma_hat = (1/n)
sum_i x_i x_i^T, h = Sigma_hat w*; a one-layer model predicts x_q^T Gamma h (our
derivation: the read-out of any one-layer model whose value matrix has last row (0, u) and
whose key-query matrix is [[U, 0], [0, 0]], with Gamma = u U^T).

Choices and derivations (say so in reports):

* ``moment4`` is derived entry by entry from Isserlis' theorem, not copied; the closed
  form Sigma A Sigma + Sigma A^T Sigma + tr(A Sigma) Sigma is what the tests compare with.
* ``trace_moments`` computes E tr W^k for a real Wishart W ~ W_d(n, I) *exactly* by a
  recursion we derived from Stein's identity E[X_ij f(X)] = E[d f / d X_ij] (W = X X^T):

      E[tr W^k P] = (n + k - 1) E[tr W^(k-1) P] + sum_{j=1}^{k-1} E[tr W^j tr W^(k-1-j) P]
                    + sum_{r in P} 2 r E[tr W^(k+r-1) P / tr W^r]

  for P a product of traces (tr W^0 = d).  It gives E tr W = nd and
  E tr W^2 = nd(n + d + 1), the known real-Wishart values, and it replaces the companion
  paper's Monte Carlo for the L-layer pure-GD floor (``gd_floor``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
import sympy as sp

from theory.flow import Equation, InadmissibleTheory, ReducedSystem, gradient_flow

__all__ = [
    "balanced_flow",
    "balanced_limit",
    "balanced_off_block_curvature",
    "balanced_off_block_curvature_numeric",
    "balanced_split_scale",
    "equations",
    "gamma_moments",
    "gd_floor",
    "gd_invariant_change",
    "gd_loss",
    "gd_preconditioners",
    "gd_predict",
    "gd_step_sizes",
    "inverse_cov_preconditioners",
    "lemma1_prediction",
    "moment4",
    "one_layer_gradient",
    "one_layer_loss",
    "optimal_one_layer_loss",
    "optimal_preconditioner",
    "reduced_gamma",
    "rotation_invariant_optimum",
    "sample_cov_second_moment",
    "sphere_moments",
    "trace_moments",
]


#: public functions no claim judges, with the reason (``tdcheck mutate`` counts them as
#: survivors all the same)
UNJUDGED: dict[str, str] = {}
# (balanced_off_block_curvature and its numeric twin were listed here as only a tolerance's
# input until balanced_flow's curvature parts held them to the model's own Hessian, at the
# run's states: the coefficients the run's nearly diagonal path leaves near 0 are not
# resolved, as that claim's notes say.)

# ---------------------------------------------------------------------- validation
def _matrix(name: str, value, square: bool = True) -> sp.Matrix:
    try:
        m = sp.Matrix(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a matrix, got {value!r}") from exc
    if square and m.rows != m.cols:
        raise ValueError(f"{name} must be square, got shape {m.shape}")
    return m


def _covariance(name: str, value) -> sp.Matrix:
    sigma = _matrix(name, value)
    if sigma.is_symbolic():
        return sigma
    arr = np.array(sigma.evalf(), dtype=float)
    # Symmetry up to float rounding: inputs built as numpy products (U^T D U) carry
    # asymmetries of a few eps x max|entry| (~1e-16 relative); 1e-12 relative leaves a
    # 5000x margin for that while still rejecting any genuinely non-symmetric matrix.
    if not np.allclose(arr, arr.T, rtol=0, atol=1e-12 * max(1.0, np.abs(arr).max())):
        raise ValueError(f"{name} must be symmetric")
    if np.linalg.eigvalsh(arr).min() <= 0:
        raise ValueError(f"{name} must be positive definite")
    return sigma


def _count(name: str, value, low: int = 1) -> int:
    if int(value) != value or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value}")
    return int(value)


def _same_shape(a: sp.Matrix, b: sp.Matrix, names: str) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{names} must have the same shape, got {a.shape} and {b.shape}")


# ---------------------------------------------------------------------- moments
def moment4(Sigma, A) -> sp.Matrix:
    """E[x x^T A x x^T] for x ~ N(0, Sigma), derived entry-wise from Isserlis' theorem.

    E[x_a x_c x_e x_b] = S_ac S_eb + S_ae S_cb + S_ab S_ce  (S = Sigma).
    """
    S = _covariance("Sigma", Sigma)
    A = _matrix("A", A)
    _same_shape(S, A, "Sigma and A")
    d = S.rows

    def entry(a, b):
        return sum(
            A[c, e] * (S[a, c] * S[e, b] + S[a, e] * S[c, b] + S[a, b] * S[c, e])
            for c in range(d)
            for e in range(d)
        )

    return sp.Matrix(d, d, entry)


def sample_cov_second_moment(Sigma, n, A=None) -> sp.Matrix:
    """E[Sigma_hat A Sigma_hat] (A = I by default) for n Gaussian samples (our derivation).

    Sigma_hat = (1/n) sum x_i x_i^T: the n(n-1) cross terms give Sigma A Sigma, the n
    diagonal ones the fourth moment.
    """
    S = _covariance("Sigma", Sigma)
    n = _count("n", n)
    A = sp.eye(S.rows) if A is None else _matrix("A", A)
    return sp.Rational(n - 1, n) * S * A * S + moment4(S, A) / n


# ---------------------------------------------------------------------- one layer
def one_layer_loss(Gamma, Sigma, n) -> sp.Expr:
    """f(Gamma) = E[(x_q^T (Gamma Sigma_hat - I) w*)^2], w* ~ N(0, I); code convention (no 1/2).

    = tr(Gamma^T Sigma Gamma S) - 2 tr(Gamma Sigma^2) + tr Sigma, S = E[Sigma_hat^2].
    """
    G = _matrix("Gamma", Gamma)
    S = _covariance("Sigma", Sigma)
    _same_shape(G, S, "Gamma and Sigma")
    M = sample_cov_second_moment(S, n)
    return sp.expand((G.T * S * G * M).trace() - 2 * (G * S * S).trace() + S.trace())


def one_layer_gradient(Gamma, Sigma, n) -> sp.Matrix:
    """d f / d Gamma = 2 (Sigma Gamma S - Sigma^2) (code convention; our derivation)."""
    G = _matrix("Gamma", Gamma)
    S = _covariance("Sigma", Sigma)
    _same_shape(G, S, "Gamma and Sigma")
    return 2 * (S * G * sample_cov_second_moment(S, n) - S * S)


def optimal_preconditioner(Sigma, n) -> sp.Matrix:
    """Gamma* = ((1 + 1/n) Sigma + tr(Sigma)/n I)^-1, the root of the gradient (AhnPGD Thm 1).

    ``n`` may be a positive symbol (for ``equations``)."""
    S = _covariance("Sigma", Sigma)
    n = sp.sympify(n)
    if n.is_number:
        n = sp.Integer(_count("n", n))
    return ((1 + sp.S.One / n) * S + S.trace() / n * sp.eye(S.rows)).inv()


def optimal_one_layer_loss(Sigma, n) -> sp.Expr:
    """f(Gamma*) = tr Sigma - tr(Gamma* Sigma^2) (code convention, no 1/2)."""
    S = _covariance("Sigma", Sigma)
    return sp.simplify(S.trace() - (optimal_preconditioner(S, n) * S * S).trace())


def sphere_moments() -> tuple[sp.Expr, sp.Expr]:
    """(E G, E G^2) for x = sqrt(G) u with G = 1: uniform on the sphere."""
    return sp.S.One, sp.S.One


def gamma_moments(k="1/10", theta=10) -> tuple[sp.Expr, sp.Expr]:
    """(E G, E G^2) for G ~ Gamma(shape k, scale theta): Setting 3 (k = 0.1, theta = 10)."""
    k, theta = sp.sympify(k), sp.sympify(theta)
    if (k.is_number and k <= 0) or (theta.is_number and theta <= 0):
        raise ValueError(f"k and theta must be > 0, got {k}, {theta}")
    return k * theta, k * theta**2 + (k * theta) ** 2


def rotation_invariant_optimum(d, n, m1, m2) -> tuple[sp.Expr, sp.Expr]:
    """(gamma*, f*) for x = sqrt(G) u, u uniform on S^{d-1}, E G = m1, E G^2 = m2 (our
    derivation; not in the papers).

    Derived: E[x x^T A x x^T] = m2/(d(d+2)) (A + A^T + tr A I), so E[Sigma_hat^2] = c I with
    c = ((n-1)/n) s^4 + m2/(n d), s^2 = m1/d; f(gamma I) = gamma^2 s^2 d c - 2 gamma s^4 d
    + s^2 d is minimised at gamma* = s^2/c with f* = s^2 d (1 - s^4/c).
    """
    d, n = _count("d", d), _count("n", n)
    m1, m2 = sp.sympify(m1), sp.sympify(m2)
    s2 = m1 / d
    c = sp.Rational(n - 1, n) * s2**2 + m2 / (n * d)
    gamma = sp.Symbol("gamma")
    f = gamma**2 * s2 * d * c - 2 * gamma * s2**2 * d + s2 * d
    (g_star,) = sp.solve(sp.diff(f, gamma), gamma)
    return sp.simplify(g_star), sp.simplify(f.subs(gamma, g_star))


# ---------------------------------------------------------------------- ZFB flow
def balanced_flow(Lambda, n, diagonal: bool = False) -> ReducedSystem:
    """Gradient flow of L(u, U) = f(u U^T)/2 (ZFB's 1/2 convention) as a ReducedSystem.

    State u (scalar) and U (d x d, row-major) or, with ``diagonal=True`` (Lambda diagonal,
    U = diag(a)), (u, a_1..a_d).  Invariant ``balance`` = u^2 - ||U||_F^2.
    """
    L = _covariance("Lambda", Lambda)
    d = L.rows
    u = sp.Symbol("u", real=True)
    if diagonal:
        if not L.is_diagonal():
            raise ValueError("Lambda must be diagonal for the diagonal reduction")
        a = sp.symbols(f"a1:{d + 1}", real=True)
        U = sp.diag(*a)
        state = (u, *a)
    else:
        syms = sp.symbols(f"U1:{d + 1}(1:{d + 1})", real=True)
        U = sp.Matrix(d, d, syms)
        state = (u, *syms)
    loss = one_layer_loss(u * U.T, L, n) / 2
    balance = u**2 - sum(x**2 for x in U)
    return gradient_flow(
        loss,
        state,
        (),
        invariants={"balance": balance},
        name=f"ZFB balanced flow d={d}" + (" (diagonal)" if diagonal else ""),
        assumptions="one layer, x ~ N(0, Lambda), w* ~ N(0, I), loss f/2 (ZFB)",
    )


def balanced_limit(Sigma, n) -> tuple[sp.Expr, sp.Matrix]:
    """(u_inf, U_inf) = (||Gamma*||_F^(1/2), Gamma*/||Gamma*||_F^(1/2)) for a balanced start."""
    G = optimal_preconditioner(Sigma, n)
    norm = sp.sqrt(sum(x**2 for x in G))
    return sp.sqrt(norm), G / sp.sqrt(norm)


def balanced_split_scale(gamma_norm, balance):
    """The scalar u of a factorisation Gamma = u U^T with ||Gamma||_F = ``gamma_norm`` and
    balance u^2 - ||U||_F^2 = ``balance`` (our derivation): ||U|| = ||Gamma|| / u gives
    u^4 - b u^2 - ||Gamma||^2 = 0, so u^2 = (b + sqrt(b^2 + 4 ||Gamma||^2)) / 2 (u > 0); at
    b = 0 the balanced limit's u_inf = ||Gamma||^(1/2) (:func:`balanced_limit`).  Works on
    floats and arrays."""
    b = np.asarray(balance, dtype=float)
    return np.sqrt((b + np.sqrt(b**2 + 4 * np.asarray(gamma_norm, dtype=float) ** 2)) / 2)


def _gauss_mean(expr: sp.Expr, normals: list[tuple[sp.Symbol, sp.Expr]]) -> sp.Expr:
    """E[expr] over independent centred normals (symbol, variance): a polynomial in them,
    each monomial x^k replaced by var^(k/2) (k - 1)!! (0 for odd k)."""
    syms = [s for s, _ in normals]
    out = sp.S.Zero
    for powers, coef in sp.Poly(sp.expand(expr), *syms).terms():
        if any(k % 2 for k in powers):
            continue
        out += coef * sp.Mul(*(var ** (k // 2) * sp.factorial2(k - 1)
                               for k, (_, var) in zip(powers, normals, strict=True)))
    return out


def balanced_off_block_curvature(Lambda, n) -> tuple[tuple[sp.Symbol, ...], sp.Matrix]:
    """(state, A): the Hessian A(u, U) of the full one-layer ZFB model's population loss
    (f/2) in the off-block entries o = (a, b), a = W_PV[d, :d], b = W_KQ[d, :d], at o = 0
    (our derivation; Lambda diagonal).  ``state`` is :func:`balanced_flow`'s (u, U
    row-major).

    On ZFB's block family (:func:`balanced_flow`) these are the only entries off the block
    that GD moves: W_PV[:d] leaves the read-out and W_KQ[:, d] meets the query's zero label.
    The read-out is c^T Sigma_hat e with c = a + u w*, e = U x_q + (b . x_q) w*, so given
    (w*, x_q) the loss is (c^T E[Sigma_hat e e^T Sigma_hat] c - 2 (c^T Lambda e)(w* . x_q)
    + (w* . x_q)^2) / 2, E[Sigma_hat A Sigma_hat] from :func:`sample_cov_second_moment`, then
    Gaussian moments over w* ~ N(0, I), x_q ~ N(0, Lambda).  L(u, U, o) = L(u, U, 0) +
    o^T A o / 2 + O(|o|^4).  Checked on the way (ValueError otherwise): at o = 0 the loss is
    :func:`one_layer_loss` (u U^T) / 2, and it has no odd terms in o at fixed (u, U) (the
    symmetry (w*, o) -> (-w*, -o): c -> -c, e -> e and the target w* . x_q -> -w* . x_q, with
    w* ~ N(0, I) symmetric; the joint flip (o, y) -> (-o, -y) alone would not exclude them)."""
    L = _covariance("Lambda", Lambda)
    if not L.is_diagonal():
        raise ValueError("Lambda must be diagonal")
    d = L.rows
    system = balanced_flow(L, n)
    u, U = system.state[0], sp.Matrix(d, d, system.state[1:])
    a = sp.Matrix(sp.symbols(f"a1:{d + 1}", real=True))
    b = sp.Matrix(sp.symbols(f"b1:{d + 1}", real=True))
    w = sp.Matrix(sp.symbols(f"w1:{d + 1}", real=True))
    xq = sp.Matrix(sp.symbols(f"q1:{d + 1}", real=True))
    t = sp.Symbol("t")
    c = t * a + u * w
    e = U * xq + t * (b.dot(xq)) * w
    second = sample_cov_second_moment(L, n, e * e.T)
    cond = ((c.T * second * c)[0] - 2 * (c.T * L * e)[0] * w.dot(xq) + w.dot(xq) ** 2) / 2
    normals = [(s, sp.S.One) for s in w] + [(s, L[i, i]) for i, s in enumerate(xq)]
    order = {k[0]: v for k, v in sp.Poly(_gauss_mean(cond, normals), t).terms()}
    # consistency checks between theory functions: under a wrong theory (one_layer_loss,
    # sample_cov_second_moment, moment4 off) they fail, which is a failed part, not a crash
    if sp.expand(order.get(0, 0) - one_layer_loss(u * U.T, L, n) / 2) != 0:
        raise InadmissibleTheory("the full model's loss at o = 0 is not one_layer_loss / 2")
    if any(sp.expand(order.get(k, 0)) != 0 for k in (1, 3)):
        raise InadmissibleTheory("the full model's loss has odd terms in the off-block "
                                 "entries")
    return tuple(system.state), sp.hessian(order.get(2, sp.S.Zero), [*a, *b])


@cache
def balanced_off_block_curvature_numeric(lam: tuple[float, ...], n: int
                                         ) -> tuple[Callable, Callable]:
    """Numeric twins of :func:`balanced_off_block_curvature` at Lambda = diag(``lam``):
    (A(y), dA/dy(y)) lambdified on the state y = (u, U row-major), [2d, 2d] and
    [state, 2d, 2d]."""
    state, A = balanced_off_block_curvature(sp.diag(*[sp.nsimplify(x) for x in lam]), n)
    if not all(isinstance(s, sp.Symbol) for s in state):
        raise InadmissibleTheory(f"the curvature's state must be symbols, got {state}")
    dA = sp.Array([[[sp.diff(A[i, j], s) for j in range(A.cols)] for i in range(A.rows)]
                   for s in state])
    return sp.lambdify([list(state)], A, "numpy"), sp.lambdify([list(state)], dA, "numpy")


def reduced_gamma(u, U) -> np.ndarray:
    """Gamma = u U^T, the one-layer reduced parameter of ZFB's (u, U) factorisation, for
    arrays: ``u`` [...], ``U`` [..., d, d] (a stack of states, or of members and times)."""
    return np.asarray(u)[..., None, None] * np.swapaxes(np.asarray(U), -1, -2)


def gd_invariant_change(lr, grad_sq_pv, grad_sq_kq, sign: int = -1):
    """The change of Q = ||W_PV||^2 + sign ||W_KQ||^2 in one GD step of size ``lr``, if Q
    is a flow invariant: lr^2 (||g_PV||^2 + sign ||g_KQ||^2) (our derivation).

    ZFB's balance (sign = -1) is one: the rescaling symmetry (W_PV, W_KQ) -> (c W_PV,
    W_KQ / c) makes <W_PV, g_PV> = <W_KQ, g_KQ> for every minibatch, so the first-order
    terms of ||W - lr g||^2 cancel and only the second-order ones remain.  Works on floats,
    arrays and sympy expressions."""
    if sign not in (-1, 1):
        raise ValueError(f"sign must be -1 or +1, got {sign}")
    return lr**2 * (grad_sq_pv + sign * grad_sq_kq)


# ---------------------------------------------------------------------- L layers (AhnPGD)
def gd_predict(X, y, x_q, steps: Sequence):
    """Prediction <x_q, w_L> of L preconditioned GD steps from w_0 = 0 (AhnPGD Lemma 1).

    w_{l+1} = w_l + A_l (1/n) sum_i x_i (y_i - x_i^T w_l); ``X`` is [n, d].  The
    preconditioners of a B = 0 linear transformer are :func:`gd_preconditioners`.  Arrays
    give a float; sympy matrices (``y``, ``x_q`` column vectors) an exact expression.
    """
    if isinstance(X, sp.MatrixBase):
        w = sp.zeros(X.cols, 1)
        for A in steps:
            w = w + sp.Matrix(A) * (X.T * (y - X * w)) / X.rows
        return sp.expand((x_q.T * w)[0, 0])
    X, y, x_q = np.asarray(X, float), np.asarray(y, float), np.asarray(x_q, float)
    w = np.zeros(X.shape[1])
    for A in steps:
        w = w + np.asarray(A, float) @ (X.T @ (y - X @ w)) / X.shape[0]
    return float(x_q @ w)


def gd_preconditioners(a_layers: Sequence) -> list:
    """AhnPGD Lemma 1 in the code's sign convention (TF = -Z_L[d, n], Q_l = [[A_l, 0],
    [0, 0]], B_l = 0): layer l performs one GD step with preconditioner -A_l^T (sympy
    matrices stay sympy)."""
    return [-a.T if isinstance(a, sp.MatrixBase) else -np.asarray(a).T for a in a_layers]


def lemma1_prediction(Z, a_layers: Sequence, preconditioners: Callable | None = None):
    """AhnPGD Lemma 1 read off a prompt: the L-layer B = 0 transformer's output on ``Z``
    ((d+1) x (n+1), the paper's layout: covariate rows over the label row, the query in
    the last column with its label slot 0) equals :func:`gd_predict` on the context
    (x_i, y_i), i <= n, and x_q = the last column's covariates, with the preconditioners
    ``preconditioners(a_layers)`` (default :func:`gd_preconditioners`).  Arrays give a
    float, a sympy ``Z`` an exact expression."""
    steps_of = gd_preconditioners if preconditioners is None else preconditioners
    if isinstance(Z, sp.MatrixBase):
        d, n = Z.rows - 1, Z.cols - 1
        return gd_predict(Z[:d, :n].T, Z[d, :n].T, Z[:d, n],
                          steps_of([sp.Matrix(a) for a in a_layers]))
    Z = np.asarray(Z, float)
    d, n = Z.shape[0] - 1, Z.shape[1] - 1
    return gd_predict(Z[:d, :n].T, Z[d, :n], Z[:d, n], steps_of([np.asarray(a) for a in a_layers]))


def gd_step_sizes(a_layers: np.ndarray) -> np.ndarray:
    """The scalar GD steps a_l of :func:`gd_preconditioners` where -A_l^T = a_l I:
    the mean diagonal of layer l's preconditioner (-mean diag(A_l)), sorted (the loss is
    symmetric under permuting the steps).  ``a_layers`` is [..., L, d, d]; the result
    [..., L]."""
    a = np.asarray(a_layers, dtype=float)
    if a.ndim > 3:
        return np.stack([gd_step_sizes(layers) for layers in a])
    # the step of layer l read through Lemma 1's map (gd_preconditioners), so that the
    # trained model's steps are what that map says each layer does
    pre = np.stack([np.asarray(p, dtype=float) for p in gd_preconditioners(list(a))])
    return np.sort(np.diagonal(pre, axis1=-2, axis2=-1).mean(-1), axis=-1)


def inverse_cov_preconditioners(Sigma, steps: Sequence) -> list[sp.Matrix]:
    """The preconditioners (in :func:`gd_predict`'s convention) of the stationary B = 0
    model for x ~ N(0, Sigma) and w* ~ N(0, Sigma^-1): a_l Sigma^-1 (AhnPGD Thm 3), with
    a_l the scalar steps of the isotropic problem (:func:`gd_floor`'s).

    Our derivation of the steps: x = Sigma^1/2 xi and w* = Sigma^-1/2 v map the problem
    onto the isotropic one (xi, v ~ N(0, I)) with the preconditioner A -> Sigma^1/2 A
    Sigma^1/2 (the residuals y_i - x_i^T w and the step A (1/n) sum x_i r_i become the
    isotropic ones), so the isotropic optimum a_l I maps back to a_l Sigma^-1.
    """
    S = _covariance("Sigma", Sigma)
    inv = S.inv()
    return [sp.sympify(a) * inv for a in steps]


@cache
def _wishart_moment(powers: tuple[int, ...], d: sp.Expr, n: sp.Expr) -> sp.Expr:
    """E prod_i tr W^{powers_i}, W ~ W_d(n, I) real, by the Stein recursion (module doc)."""
    powers = tuple(sorted(p for p in powers if p > 0))
    if not powers:
        return sp.S.One
    k, rest = powers[-1], powers[:-1]

    def with_(*extra: int) -> sp.Expr:
        zeros = sum(1 for e in extra if e == 0)
        return d**zeros * _wishart_moment(tuple(sorted(rest + tuple(e for e in extra if e > 0))), d, n)

    total = (n + k - 1) * with_(k - 1)
    for j in range(1, k):
        total += with_(j, k - 1 - j)
    for i, r in enumerate(rest):
        others = rest[:i] + rest[i + 1 :]
        total += 2 * r * d ** 0 * _wishart_moment(tuple(sorted(others + (k + r - 1,))), d, n)
    return sp.expand(total)


def trace_moments(k_max: int, d, n) -> list[sp.Expr]:
    """[E tr Sigma_hat^k for k = 0..k_max], Sigma_hat = W/n, x ~ N(0, I_d); exact."""
    k_max = _count("k_max", k_max, 0)
    d, n = sp.sympify(d), sp.sympify(n)
    if d.is_number:
        _count("d", d)
    if n.is_number:
        _count("n", n)
    return [d] + [_wishart_moment((k,), d, n) / n**k for k in range(1, k_max + 1)]


def gd_loss(steps: Sequence, d, n) -> sp.Expr:
    """f(a) = E tr prod_l (I - a_l Sigma_hat)^2 for Sigma = I, w* ~ N(0, I): the loss of L
    scalar preconditioned GD steps (code convention), exact in the step sizes a_l."""
    m = sp.Symbol("m")
    poly = sp.Poly(sp.expand(sp.prod([(1 - a * m) ** 2 for a in steps])), m)
    moments = trace_moments(poly.degree(), d, n)
    return sp.expand(sum(c * moments[k] for (k,), c in poly.terms()))


def gd_floor(L: int, d: int, n: int, starts: int = 20, seed: int = 0) -> tuple[float, tuple[float, ...]]:
    """Minimum over step sizes of the L-step pure-GD loss, Sigma = I (AhnPGD Thms 2-3;
    their floors are Monte Carlo, this one is exact).

    The loss is an exact polynomial in a (``gd_loss``); it is minimised from ``starts``
    random asymmetric starts (equal steps are stationary by symmetry but saddles) and the
    best is returned with its steps sorted (the loss is symmetric under permuting them).
    """
    from scipy.optimize import minimize

    L = _count("L", L)
    a = sp.symbols(f"a1:{L + 1}", real=True)
    f = gd_loss(a, d, n)
    fn = sp.lambdify([a], f, "numpy")
    grad = sp.lambdify([a], [sp.diff(f, x) for x in a], "numpy")
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(starts):
        x0 = np.sort(rng.uniform(0.1, 2.5, size=L))
        res = minimize(lambda v: float(fn(v)), x0, jac=lambda v: np.array(grad(v), float),
                       method="BFGS", options={"gtol": 1e-12})
        if best is None or res.fun < best.fun:
            best = res
    return float(best.fun), tuple(float(v) for v in np.sort(best.x))


# ---------------------------------------------------------------------- equations
def equations() -> list[Equation]:
    """The derived equations of the row, for ``tdcheck equations linear_attention`` (d = 2
    shown where a dimension is needed)."""
    s11, s12, s22 = sp.symbols("Sigma11 Sigma12 Sigma22", real=True)
    n = sp.Symbol("n", positive=True)
    Sigma = sp.Matrix([[s11, s12], [s12, s22]])
    A = sp.Matrix(2, 2, sp.symbols("A1:3(1:3)", real=True))
    lam = sp.symbols("lambda1:3", positive=True)
    d_sym, n_sym = sp.symbols("d n", positive=True)
    g_sphere = rotation_invariant_optimum(5, 20, *sphere_moments())
    g_gamma = rotation_invariant_optimum(5, 20, *gamma_moments())
    flow = balanced_flow(sp.diag(*lam), 10, diagonal=True)
    lr, g_pv, g_kq = sp.symbols("lr g_PV^2 g_KQ^2", nonnegative=True)
    floors = [
        Equation(f"exact pure-GD floor and steps, L = {L} (Setting 1)",
                 sp.Tuple(sp.Float(loss, 8), *[sp.Float(a, 6) for a in steps]),
                 "AhnPGD Thms 2-3 (their Monte Carlo floors); exact here, our derivation")
        for L in (2, 3, 4)
        for loss, steps in [gd_floor(L, 5, 20)]
    ]
    return [
        Equation("E[x x^T A x x^T] (d = 2)", moment4(Sigma, A),
                 "Isserlis' theorem (our derivation, used by ZFB and AhnPGD)"),
        Equation("Gamma* = ((1+1/n) Lambda + tr(Lambda)/n I)^-1 (Lambda diagonal, d = 2)",
                 optimal_preconditioner(sp.diag(*lam), n), "AhnPGD Thm 1; ZFB"),
        Equation("one-layer optimum f*, Setting 1 (d = 5, n = 20)",
                 optimal_one_layer_loss(sp.eye(5), 20), "AhnPGD Thm 1 (paper's Table 1)"),
        Equation("sphere (gamma*, f*), d = 5, n = 20", sp.Tuple(*g_sphere), "our derivation"),
        Equation("Gamma-covariates (gamma*, f*), k = 0.1, theta = 10, d = 5, n = 20",
                 sp.Tuple(*g_gamma), "our derivation (Setting 3 of the paper's Table 1)"),
        Equation("E tr Sigma_hat^2 (Sigma = I)", sp.factor(trace_moments(2, d_sym, n_sym)[2]),
                 "our derivation (Stein recursion for Wishart moments)"),
        Equation("E tr Sigma_hat^3 (Sigma = I)", sp.factor(trace_moments(3, d_sym, n_sym)[3]),
                 "our derivation (Stein recursion for Wishart moments)"),
        Equation("balanced flow invariant u^2 - ||U||_F^2 (Lambda diagonal, d = 2, n = 10)",
                 flow.invariants["balance"], "ZFB (conservation law)"),
        Equation("its drift along the flow", flow.drift("balance"), "must vanish (ZFB)"),
        Equation("one GD step's change of the balance",
                 gd_invariant_change(lr, g_pv, g_kq), "our derivation"),
        *floors,
    ]
