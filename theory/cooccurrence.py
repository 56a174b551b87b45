"""Word co-occurrence: Yang, Kailkhura, Wang, Liang, *Training dynamics of transformers to
recognize word co-occurrence via gradient flow analysis* (NeurIPS 2024).

Reduced theory of one softmax-attention layer (W_K, W_Q, W_V in R^{m x d}, scores scaled by
1/sqrt(m)) followed by a linear MLP W in R^{m1 x m} with a fixed +-1 output layer a, the output
summed over all L query positions (the paper's Eq. (1)), trained by gradient flow on the
logistic loss (Eq. (2)).

Canonical variables (our derivation from Appendix B's gradients; tokens are one-hot,
mu_i = e_i)::

    beta = W_V^T W^T a   (beta_mu = G(mu), Definition E.18),   S = ||W^T a||^2,
    M = W_V^T W_V,  A = W_K^T W_Q  (A[nu, mu] = key nu, query mu),
    K_G = W_K^T W_K,  Q_G = W_Q^T W_Q.

They obey an *exact* closed ODE (:func:`canonical_velocity`; Appendix B's gradients written in
these variables; Eq. (4)-(7), Lemmas C.1-C.4, F.4, F.11 are entrywise forms of it).  It conserves
``S - m1 tr M``, ``tr K_G - tr Q_G`` and ``tr K_G^2 + tr Q_G^2 - 2 ||A||_F^2`` (balancedness of
adjacent factors; proved symbolically in :func:`invariant_drifts`), and W_K = W_Q = 0 is an
invariant manifold (Gamma Q_G = K_G Gamma = 0 there; attention exactly uniform).

The four-class system (our reduction; the system written in the proof of Lemma F.6) is the
gradient flow, in tau = S t, of ``sum_k pi_k log(1 + exp(-q_k))`` with class margins
``q = (G1+G2+G3, -(G1+G3), -(G2+G3), -G3)`` (uniform attention, random tokens ignored, S
constant, the m1 M r term dropped).  Its asymptotics follow the implicit bias of the logistic
loss on separable data (Soudry et al. 2018): beta/|beta| -> the hard-margin direction,
``L(t) ~ 1/(S gamma*^2 t)`` and ``-dG3/dG1 -> R_inf = -beta*_3 / beta*_1``.

The private-token class system (our reduction, :func:`private_system`) adds what the four-class
system drops: with private random tokens (Assumption 2.3(ii)) and uniform attention, every
sample of a class keeps the same margin, so the sample-level flow dbeta/dtau = r closes exactly
on (G1, G2, G3, P1..P4), P_k the G of each random token of class k.  It is the row's
finite-time prediction for the full model (first classification, the I2/I3 hump, the
sandwich onset, the class-margin onset, the Lemma 4.5 ratios, L tau and -dG3/dG1 at the end of
a run, the score drift of Eq. (3)); its limits are the sample-level max margin.

Choices where the paper is ambiguous:

* T_0.5 (Lemma 4.3 / Theorem E.19 says only "there exists") is taken as the first tau with
  ``-dG3/dtau >= max(dG1/dtau, dG2/dtau)``; in the four-class system this is exactly the peak of
  the single-target (I2/I3) losses, since ``dq2/dtau = -(dG1 + dG3)/dtau``
  (:func:`peak_identity`).
* The sample-level max margin uses *uniform attention*: z_i = token counts of sample i (repeated
  tokens count twice), beta has one coordinate per token id.  Private random tokens are extra
  features, so gamma*^2 exceeds the class-level 1/17 (our derivation).
* The 1/t law's constant S gamma*^2 is our sharpening of Theorem F.8's Theta(sigma1^2 m m1);
  the paper proves only the order.  R_inf (ours) sharpens Lemma F.6's R* in (1, 2).
* The test-loss exponent kappa (the OpenReview reviewers' question whether the validation
  loss decays like the training loss): unseen tokens keep their initial G, so the test
  margins are the class margins of beta*'s mu1..mu3 entries, and with beta(t) ~ beta* log(tau)
  the test loss falls like tau^-kappa, kappa = min_k q_k(beta*_{1:3})
  (:func:`test_loss_exponent`).  This is our hypothesis, not the paper's (Theorem 3.3 claims
  only L(T*) <= 1/poly(m)).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, minimize
from scipy.special import expit

from theory.flow import (
    Equation,
    InadmissibleTheory,
    ReducedSystem,
    Twin,
    gradient_flow,
    simplify_zero,
)

__all__ = [
    "CLASS_LABELS",
    "CLASS_TOKENS",
    "G1",
    "G2",
    "G3",
    "PRECOND",
    "STATE_KEYS",
    "TAU",
    "WEIGHTS",
    "MaxMargin",
    "attention_drift",
    "canonical_rhs",
    "canonical_velocity",
    "class_gamma",
    "class_loss",
    "class_losses",
    "class_losses_twin",
    "class_margins",
    "class_max_margin",
    "class_system",
    "class_trajectory",
    "class_velocity",
    "equations",
    "initial_output_bound",
    "initial_output_sd",
    "initial_rates",
    "invariants",
    "loss_gradients",
    "loss_law",
    "preconditioned_private_system",
    "private_beta_sq",
    "private_losses",
    "private_margins",
    "private_system",
    "private_trajectory",
    "s_drift",
    "sample_max_margin",
    "score_drift",
    "softmax_change",
    "t_half",
    "test_loss_exponent",
]

G1, G2, G3 = sp.symbols("G1 G2 G3", real=True)
TAU = sp.Symbol("tau", positive=True)
#: class proportions of Definition 2.1 / Assumption 2.3(i): I1 (both), I2 (mu1), I3 (mu2), I4.
WEIGHTS = (sp.Rational(1, 2), sp.Rational(1, 6), sp.Rational(1, 6), sp.Rational(1, 6))
#: special-token counts (mu1, mu2, mu3) of each class and its label.
CLASS_TOKENS = ((1, 1, 1), (1, 0, 1), (0, 1, 1), (0, 0, 1))
CLASS_LABELS = (1, -1, -1, -1)
#: the canonical variables in the order used to flatten a state.
STATE_KEYS = ("beta", "S", "M", "A", "K_G", "Q_G")
#: the four-class proportions as floats (the default of the numeric functions).
_FLOAT_WEIGHTS = (1 / 2, 1 / 6, 1 / 6, 1 / 6)


class MaxMargin(NamedTuple):
    """Hard-margin problem ``min |beta|^2`` s.t. ``y_i z_i . beta >= 1``.

    ``gamma_sq = 1/|beta|^2`` is the squared max margin; ``R_inf = -beta[2]/beta[0]`` the limit
    of ``-dG3/dG1`` (our derivation: the implicit bias of the logistic loss).
    """

    gamma_sq: object
    beta: object
    R_inf: object


#: public functions no claim can judge, with the reason (``tdcheck mutate`` counts them as
#: survivors)
UNJUDGED = {
    "test_loss_exponent": "kappa is the tau -> infinity exponent of the open validation "
                          "hypothesis, reached beyond any run; the claim tests the "
                          "finite-tau curve (val_slope) and reports kappa",
}

#: not in ``__all__`` (helpers, not the row's API; their mutants would be equivalent):
#: ``invariant_drifts`` and ``peak_identity`` return expressions that simplify to 0 (a scale
#: or sign of 0 is 0), proofs whose content is judged through their inputs (``invariants``,
#: ``canonical_rhs``, ``class_system``) and tested in tests/test_cooccurrence.py;
#: ``class_sigmoids`` (and its twin) is a display form of g_k = -l'(q_k) that no check uses.
#: Survivors of ``tdcheck mutate`` argued, not hidden: ``initial_rates``[2] is an exact 0
#: (Lemma 4.2's cancellation; a scale or sign of 0 is 0: equivalent); ``invariants``'
#: kq_balance_2 times a constant (or negated) is still conserved, and its exact GD drift is
#: not recorded by the runs (only the first two invariants' are), so no part can see it;
#: ``initial_output_bound`` (delta = 0.05, n = 60, L = 5) is 8.7 sd(F(0)), so no number of draws resolves
#: a 5 % change of it (its sign flip is killed).


# ---------------------------------------------------------------------- validation
def _positive(name: str, value) -> None:
    if isinstance(value, sp.Basic) and not value.is_number:
        return
    v = float(value)
    if not (v > 0 and math.isfinite(v) or v == math.inf):
        raise ValueError(f"{name} must be > 0, got {value}")


def _weights(weights: Sequence) -> tuple:
    w = tuple(weights)
    try:
        return _weights_checked(w)
    except TypeError:  # unhashable entries
        return _weights_checked.__wrapped__(w)


@lru_cache(maxsize=256)
def _weights_checked(w: tuple) -> tuple:
    if len(w) != 4:
        raise ValueError(f"weights must be 4 positive numbers summing to 1, got {w}")
    vals = [float(x) for x in w]
    if any(not x > 0 for x in vals) or abs(sum(vals) - 1) > 1e-12:
        raise ValueError(f"weights must be 4 positive numbers summing to 1, got {w}")
    return tuple(sp.nsimplify(x) if not isinstance(x, sp.Basic) else x for x in w)


def _data(tokens, labels, d: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    tok = np.asarray(tokens)
    if tok.ndim != 2 or tok.size == 0:
        raise ValueError(f"tokens must be a non-empty [n, L] integer array, got shape {tok.shape}")
    if not np.issubdtype(tok.dtype, np.integer):
        if not np.all(np.equal(np.mod(tok, 1), 0)):
            raise ValueError("tokens must be integer token ids")
        tok = tok.astype(np.int64)
    lab = np.asarray(labels, dtype=float).reshape(-1)
    if lab.shape[0] != tok.shape[0]:
        raise ValueError(f"labels must have length n = {tok.shape[0]}, got {lab.shape[0]}")
    if not np.all(np.isin(lab, (-1.0, 1.0))):
        raise ValueError(f"labels must be +1 or -1, got values {sorted(set(lab.tolist()))}")
    dd = int(tok.max()) + 1 if d is None else int(d)
    if tok.min() < 0 or tok.max() >= dd:
        raise ValueError(f"tokens must be ids in [0, d) with d = {dd}, got range "
                         f"[{int(tok.min())}, {int(tok.max())}]")
    return tok.astype(np.int64), lab, dd


# ---------------------------------------------------------------------- canonical system
def canonical_velocity(state: Mapping, tokens, labels, m: float, m1: float) -> dict:
    """d/dt of the canonical variables under gradient flow on Eq. (1)-(2); exact (our
    derivation from Appendix B; Eq. (4)-(7) and Lemmas C.1-C.4, F.4, F.11 are its entrywise forms).

    ``state``: "beta" [d], "S", "M", "A", "K_G", "Q_G" [d, d].  With key h, query l of sample i,
    ``P_{h,l} = softmax_h(A[T_h, T_l]/sqrt(m))``, ``c_h = sum_l P_{h,l}``,
    ``F_i = sum_h beta[T_h] c_h``, ``g_i = 1/(1 + exp(y_i F_i))``::

        r      = (1/n) sum_i g_i y_i sum_h c_h e_{T_h}                    (= -dL/dbeta)
        Gamma  = (1/(n sqrt m)) sum_i g_i y_i sum_{h,l} P_{h,l}(beta[T_h] - Gbar_l) e_{T_h} e_{T_l}^T
        dbeta  = S r + m1 M r,  dS = 2 m1 beta.r,  dM = beta r^T + r beta^T,
        dA     = Gamma Q_G + K_G Gamma,  dK_G = A Gamma^T + Gamma A^T,  dQ_G = A^T Gamma + Gamma^T A.
    """
    _positive("m1", m1)
    beta = np.asarray(state["beta"], dtype=float).reshape(-1)
    d = beta.shape[0]
    S = float(state["S"])
    M, A, K, Q = (np.asarray(state[k], dtype=float) for k in ("M", "A", "K_G", "Q_G"))
    for name, mat in (("M", M), ("A", A), ("K_G", K), ("Q_G", Q)):
        if mat.shape != (d, d):
            raise ValueError(f"{name} must have shape ({d}, {d}), got {mat.shape}")
    r, gam = loss_gradients(beta, A, tokens, labels, m)
    out = canonical_rhs(beta[:, None], r[:, None], S, m1, M, A, K, Q, gam)
    out["beta"] = out["beta"].reshape(-1)
    out["S"] = float(out["S"])
    return out


def loss_gradients(beta, A, tokens, labels, m: float) -> tuple[np.ndarray, np.ndarray]:
    """``(r, Gamma) = (-dL/dbeta, -dL/dA)`` of Eq. (2) at ``beta`` [d] and scores ``A`` [d, d]
    (None: uniform attention), the two gradients :func:`canonical_velocity` maps through
    :func:`canonical_rhs` (formulas there).  Alone it costs no d x d products: a check that
    needs only Gamma (Delta A = int Gamma Q_G + K_G Gamma dt) calls it directly."""
    _positive("m", m)
    beta = np.asarray(beta, dtype=float).reshape(-1)
    d = beta.shape[0]
    tok, y, _ = _data(tokens, labels, d)
    A = np.zeros((d, d)) if A is None else np.asarray(A, dtype=float)
    if A.shape != (d, d):
        raise ValueError(f"A must have shape ({d}, {d}), got {A.shape}")
    n = tok.shape[0]
    scores = A[tok[:, :, None], tok[:, None, :]] / math.sqrt(m)  # [n, key h, query l]
    scores = scores - scores.max(axis=1, keepdims=True)
    P = np.exp(scores)
    P /= P.sum(axis=1, keepdims=True)
    c = P.sum(axis=2)  # [n, h]
    bt = beta[tok]  # [n, L]
    F = np.sum(bt * c, axis=1)
    g = expit(-y * F)
    w = g * y / n
    r = np.bincount(tok.ravel(), weights=(w[:, None] * c).ravel(), minlength=d)
    gbar = np.einsum("ihl,ih->il", P, bt)
    D = P * (bt[:, :, None] - gbar[:, None, :])
    flat = (tok[:, :, None] * d + tok[:, None, :]).ravel()
    gam = np.bincount(flat, weights=(w[:, None, None] * D).ravel(), minlength=d * d)
    return r, gam.reshape(d, d) / math.sqrt(m)


def canonical_rhs(beta, r, S, m1, M, A, K_G, Q_G, Gamma) -> dict:
    """The canonical ODE given ``r = -dL/dbeta`` and ``Gamma = -dL/dA`` (our derivation from
    Appendix B): column vectors ``beta``, ``r`` and matrices, numpy arrays or sympy matrices
    alike (one source for :func:`canonical_velocity` and :func:`invariant_drifts`)::

        dbeta = S r + m1 M r,  dS = 2 m1 beta.r,  dM = beta r^T + r beta^T,
        dA = Gamma Q_G + K_G Gamma,  dK_G = A Gamma^T + Gamma A^T,  dQ_G = A^T Gamma + Gamma^T A.
    """
    return {
        "beta": S * r + m1 * (M @ r),
        "S": 2 * m1 * (beta.T @ r)[0, 0],
        "M": beta @ r.T + r @ beta.T,
        "A": Gamma @ Q_G + K_G @ Gamma,
        "K_G": A @ Gamma.T + Gamma @ A.T,
        "Q_G": A.T @ Gamma + Gamma.T @ A,
    }


def _scalar(x):
    return x if isinstance(x, sp.Basic) else float(x)


def invariants(state: Mapping, m1: float) -> dict:
    """Conserved quantities of the canonical flow (balancedness of adjacent linear factors; our
    derivation, proved in :func:`invariant_drifts`).  Numbers for numpy states, expressions for
    sympy ones."""
    _positive("m1", m1)
    M, A, K, Q = (state[k] if isinstance(state[k], sp.MatrixBase) else
                  np.asarray(state[k], dtype=float) for k in ("M", "A", "K_G", "Q_G"))
    return {
        "value_balance": _scalar(state["S"] - m1 * M.trace()),
        "kq_balance": _scalar(K.trace() - Q.trace()),
        "kq_balance_2": _scalar((K @ K).trace() + (Q @ Q).trace() - 2 * (A @ A.T).trace()),
    }


def invariant_drifts(d: int = 2, invariants_of=None) -> dict[str, sp.Expr]:
    """Time derivatives of the invariants along the canonical ODE, simplified.

    ``invariants_of`` (default :func:`invariants`) is differentiated along
    :func:`canonical_rhs` with generic symbols: beta, r in R^d, S, m1; M, K_G, Q_G symmetric;
    A, Gamma arbitrary d x d (r and Gamma are whatever the data make them, so the identity
    holds for every data set).  All three come out 0.
    """
    return _invariant_drifts(int(d), invariants if invariants_of is None else invariants_of,
                             canonical_rhs)


@cache
def _invariant_drifts(d: int, invariants_of, rhs_of) -> dict[str, sp.Expr]:
    sym = lambda p: sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{p}{min(i, j)}{max(i, j)}"))
    gen = lambda p: sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{p}{i}{j}"))
    beta = sp.Matrix(sp.symbols(f"b0:{d}"))
    r = sp.Matrix(sp.symbols(f"r0:{d}"))
    S, m1, eps = sp.symbols("S m1 epsilon", positive=True)
    state = {"beta": beta, "S": S, "M": sym("M"), "A": gen("A"), "K_G": sym("K"),
             "Q_G": sym("Q")}
    vel = rhs_of(beta, r, S, m1, state["M"], state["A"], state["K_G"], state["Q_G"], gen("g"))
    moved = {k: state[k] + eps * vel[k] for k in state}
    inv = invariants_of(moved, m1)
    return {name: simplify_zero(sp.diff(sp.expand(expr), eps).subs(eps, 0))
            for name, expr in inv.items()}


# ---------------------------------------------------------------------- four-class system
def class_margins(G: Sequence) -> tuple:
    """q_k = y_k z_k . G for the four classes (I1..I4)."""
    return tuple(
        y * sum(z_i * g for z_i, g in zip(z, G, strict=True))
        for z, y in zip(CLASS_TOKENS, CLASS_LABELS, strict=True)
    )


def _logistic(q) -> sp.Expr:
    """The logistic loss l(q) = log(1 + exp(-q)) of Eq. (2)."""
    return sp.log(1 + sp.exp(-q))


def class_losses(g1=G1, g2=G2, g3=G3) -> tuple:
    """Per-class losses ``l(q_k) = log(1 + exp(-q_k))``, k = I1..I4 (Eq. (2) at uniform
    attention, random tokens ignored: sample i's margin is its class margin q_k)."""
    return tuple(_logistic(qk) for qk in class_margins((g1, g2, g3)))


def class_sigmoids(g1=G1, g2=G2, g3=G3) -> tuple:
    """Per-class ``g_k = -l'(q_k) = 1/(1 + e^{q_k})`` (the paper's g of Eq. (2), Section 2)."""
    q = sp.Symbol("q", real=True)
    g = -sp.diff(_logistic(q), q)
    return tuple(g.subs(q, qk) for qk in class_margins((g1, g2, g3)))


def class_loss(weights: Sequence = WEIGHTS) -> sp.Expr:
    """``sum_k pi_k log(1 + exp(-q_k))`` (Eq. (2) with class proportions, uniform attention)."""
    w = _weights(weights)
    return sum((pk * lk for pk, lk in zip(w, class_losses(), strict=True)), sp.S.Zero)


#: float twins (arrays of G1, G2, G3 in, a tuple of four arrays out).
class_losses_twin = Twin(class_losses, G1, G2, G3)
class_sigmoids_twin = Twin(class_sigmoids, G1, G2, G3)


@cache
def _class_system(weights: tuple) -> ReducedSystem:
    return gradient_flow(
        class_loss(weights),
        (G1, G2, G3),
        (),
        name="cooccurrence four-class",
        assumptions=(
            "our reduction: uniform attention (Definition F.1, Corollary F.17), random tokens "
            "ignored (Theorem E.15, Lemma F.14), S constant (Proposition E.12, Lemma F.10), "
            "m1 M r dropped (sigma0^2/sigma1^2 small, Condition 1); time tau = S t"
        ),
    )


def class_system(weights: Sequence = _FLOAT_WEIGHTS) -> ReducedSystem:
    """Four-class gradient flow in tau = S t (our reduction; the system in the proof of Lemma F.6).

    ``dG1/dtau = pi1 g1 - pi2 g2``, ``dG2/dtau = pi1 g1 - pi3 g3``,
    ``dG3/dtau = pi1 g1 - pi2 g2 - pi3 g3 - pi4 g4`` with ``g_k = 1/(1 + e^{q_k})``.
    """
    return _class_system(_weights(weights))


def initial_rates(weights: Sequence = WEIGHTS) -> tuple:
    """(dG1, dG2, dG3)/dtau at G = 0 (all g = 1/2): (1/6, 1/6, 0); Lemmas 4.1/4.2 cancellation."""
    sys_ = class_system(weights)
    return tuple(sp.nsimplify(sp.simplify(x.subs({G1: 0, G2: 0, G3: 0}))) for x in sys_.rhs)


def peak_identity(weights: Sequence = WEIGHTS) -> sp.Expr:
    """``dq2/dtau + (dG1/dtau + dG3/dtau)``, which simplifies to 0 (our derivation: the I2 loss
    peaks exactly at Lemma 4.3's T_0.5 in the four-class system)."""
    sys_ = class_system(weights)
    q2 = class_margins((G1, G2, G3))[1]
    dq2 = sum((sp.diff(q2, s) * f for s, f in zip(sys_.state, sys_.rhs, strict=True)), sp.S.Zero)
    return simplify_zero(dq2 + sys_.rhs[0] + sys_.rhs[2])


def _class_rhs(weights: Sequence = WEIGHTS):
    """``f(tau, G)``: the four-class system's right-hand side as numbers, lambdified from
    :func:`class_system` (one source: a slip in the symbolic system reaches every integrator;
    the former hand-typed numpy copy agreed to rounding, which moves t_half in its last
    digits)."""
    f = class_system(weights).lambdify()

    def rhs(_t, G):
        return np.asarray(f(0.0, np.asarray(G, dtype=float)), dtype=float).reshape(-1)

    return rhs


@lru_cache(maxsize=64)
def _cached_rhs(weights: tuple):
    return _class_rhs(weights)


def class_velocity(G: Sequence, weights: Sequence = _FLOAT_WEIGHTS) -> np.ndarray:
    """r = dG/dtau of the four-class system at G (numbers, lambdified from
    :func:`class_system`)."""
    return _cached_rhs(tuple(weights))(0.0, np.asarray(G, dtype=float))


def class_trajectory(taus, G0: Sequence = (0.0, 0.0, 0.0),
                     weights: Sequence = _FLOAT_WEIGHTS) -> np.ndarray:
    """The four-class system integrated from ``G0`` to the increasing times ``taus``, [3, T]
    (LSODA, rtol 1e-10, atol 1e-12, on :func:`class_velocity`)."""
    taus = np.asarray(taus, dtype=float)
    sol = solve_ivp(lambda t, y: class_velocity(y, weights), (0.0, float(taus[-1])),
                    np.asarray(G0, dtype=float), method="LSODA", t_eval=taus, rtol=1e-10,
                    atol=1e-12)
    return sol.y


def class_gamma(G: Sequence, L: int, m: float, weights: Sequence = _FLOAT_WEIGHTS,
                margins: Sequence | None = None) -> np.ndarray:
    """-dL/dA on mu1..mu3 at uniform attention (our reduction), [key, query].

    ``Gamma[nu, mu] = (1/(L sqrt m)) sum_{k: mu, nu in class k} pi_k g_k Y_k (G_nu - F_k/L)``,
    F_k = Y_k Q_k, g_k = 1/(1 + e^{Q_k}), with Q_k the class's sample margins: ``margins``
    (e.g. :func:`private_margins`, private tokens included), default the class margins q_k
    (random tokens ignored).  With K_G ~ Q_G ~ kappa I, dA/dt ~ 2 kappa Gamma: the signs of
    Theorem 3.2 and the magnitudes of Lemma 4.7 / F.16.
    """
    _positive("m", m)
    if int(L) < 3:
        raise ValueError(f"L must be >= 3, got {L}")
    w = [float(x) for x in _weights(weights)]
    G = np.asarray(G, dtype=float)
    q = np.array(class_margins(list(G)) if margins is None else margins, dtype=float)
    out = np.zeros((3, 3))
    for k, (z, y) in enumerate(zip(CLASS_TOKENS, CLASS_LABELS, strict=True)):
        present = [i for i in range(3) if z[i]]
        F = y * q[k]
        gk = float(expit(-q[k]))
        for nu in present:
            for mu in present:
                out[nu, mu] += w[k] * gk * y * (G[nu] - F / L)
    return out / (L * math.sqrt(m))


def score_drift(taus, Y, L: int, m: float, kappa: float, S,
                weights: Sequence = _FLOAT_WEIGHTS, K=None, Q=None) -> np.ndarray:
    """Predicted change of A = W_K^T W_Q on mu1..mu3 along a private-token trajectory ``Y``
    [7, T] at times ``taus`` (our reduction): ``Delta A = (1/S) (I Q_G + K_G I)``, ``I = int
    Gamma dtau`` (dA/dt = Gamma Q_G + K_G Gamma with K_G, Q_G frozen at their initial values,
    dt = dtau/S; Gamma from :func:`class_gamma` at the sample margins), trapezoid on the grid;
    [T, 3, 3].

    ``K``, ``Q``: the key and query Gram blocks K_G = W_K^T W_K and Q_G = W_Q^T W_Q on
    mu1..mu3 (3 x 3), when one initialisation's own draw is known; default ``kappa I`` each
    (kappa = sigma0^2 m, their expectation at initialisation), which gives ``Delta A =
    (2 kappa / S) int Gamma dtau``.  ``S``: a number, or its path [T] along ``Y`` (as
    :func:`attention_drift` takes it)."""
    taus = np.asarray(taus, dtype=float)
    Y = np.asarray(Y, dtype=float)
    Q_ = kappa * np.eye(3) if Q is None else np.asarray(Q, dtype=float)
    K_ = kappa * np.eye(3) if K is None else np.asarray(K, dtype=float)
    if Q_.shape != (3, 3) or K_.shape != (3, 3):
        raise ValueError(f"K and Q must be 3 x 3, got {K_.shape} and {Q_.shape}")
    margins = np.array(private_margins(list(Y), L))
    gam = np.array([class_gamma(Y[:3, j], L, m, weights, margins[:, j])
                    for j in range(taus.size)])
    return attention_drift(taus, gam, S, K_, Q_)


def attention_drift(taus, gammas, S, K, Q, *, end_only: bool = False) -> np.ndarray:
    """``Delta A = I Q_G + K_G I``, ``I = int Gamma / S dtau`` (trapezoid on ``taus``) for a
    path of ``gammas`` [T, d, d] at ``taus`` [T], with K_G, Q_G [d, d] frozen (our
    derivation: dA/dt = Gamma Q_G + K_G Gamma, Appendix B, and dt = dtau/S); [T, d, d], or
    with ``end_only`` the last of them, [d, d] (one Gram sandwich instead of T).  ``S`` is
    a number (S held constant: ``(1/S)(int Gamma dtau) Q_G + ...``) or its path [T] (S grows
    with |beta|, :func:`s_drift`).  :func:`score_drift` is its mu1..mu3 block along the
    private-token reduction; a check with one initialisation's whole Gram matrices uses it
    on the full vocabulary."""
    taus = np.asarray(taus, dtype=float)
    gam = np.asarray(gammas, dtype=float)
    K_, Q_ = np.asarray(K, dtype=float), np.asarray(Q, dtype=float)
    d = gam.shape[-1]
    if gam.shape != (taus.size, d, d) or K_.shape != (d, d) or Q_.shape != (d, d):
        raise ValueError(f"gammas must be [T, d, d] at the T times and K, Q d x d, got "
                         f"{gam.shape}, {K_.shape}, {Q_.shape} for T = {taus.size}")
    S_ = np.asarray(S, dtype=float)
    if S_.ndim:
        if S_.shape != taus.shape:
            raise ValueError(f"an S path must have the T = {taus.size} times' shape, got "
                             f"{S_.shape}")
        gam = gam / S_[:, None, None]
        S_ = np.float64(1.0)
    steps = 0.5 * (gam[1:] + gam[:-1]) * np.diff(taus)[:, None, None]
    integral = (steps.sum(axis=0) if end_only else
                np.concatenate([np.zeros((1, d, d)), np.cumsum(steps, axis=0)]))
    return (integral @ Q_ + K_ @ integral) / S_


def softmax_change(dA3, tokens, m: float) -> float:
    """max |p - 1/L| over samples, keys and queries when the scores A[key, query]/sqrt(m) are
    ``dA3`` on mu1..mu3 (ids 0..2) and 0 elsewhere (the paper's p, Eq. (1)).  ``dA3`` may
    also be the change on the whole vocabulary, [d', d'] with d' >= every token id + 1 (a
    prediction that keeps the random tokens' scores, e.g. :func:`attention_drift` of the
    whole Gram matrices)."""
    tok = np.asarray(tokens, dtype=np.int64)
    d = int(tok.max()) + 1
    dA = np.asarray(dA3, dtype=float)
    if dA.ndim != 2 or dA.shape[0] != dA.shape[1] or (dA.shape[0] != 3 and dA.shape[0] < d):
        raise ValueError(f"dA3 must be 3 x 3 or d' x d' with d' >= {d}, got {dA.shape}")
    if dA.shape[0] == 3:
        A = np.zeros((max(d, 3), max(d, 3)))
        A[:3, :3] = dA
    else:
        A = dA
    s = A[tok[:, :, None], tok[:, None, :]] / math.sqrt(m)
    s = s - s.max(axis=1, keepdims=True)
    P = np.exp(s)
    P /= P.sum(axis=1, keepdims=True)
    return float(np.max(np.abs(P - 1.0 / tok.shape[1])))


def initial_output_bound(sigma0: float, sigma1: float, L: int, m: float, m1: float, n: int,
                         delta: float) -> float:
    """Lemma D.8: with probability >= 1 - delta, ``|F(0)(X_i)| <= 2 sigma0 sigma1
    sqrt(2 L m1 m log(2 L n / delta))`` for every training sample."""
    for name, v in (("sigma0", sigma0), ("sigma1", sigma1), ("m", m), ("m1", m1)):
        _positive(name, v)
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return float(2 * sigma0 * sigma1 * math.sqrt(2 * L * m1 * m * math.log(2 * L * n / delta)))


def initial_output_sd(sigma0: float, sigma1: float, L: int, m: float, m1: float) -> float:
    """Standard deviation of F(0)(X) over initialisations (our derivation): at uniform
    attention ``F = sum_h G(x_h)`` over L distinct tokens, ``G(mu) = u^T W_V mu`` is
    N(0, sigma0^2 |u|^2) given u = W^T a, and E|u|^2 = m m1 sigma1^2, so
    ``Var F = L m m1 sigma0^2 sigma1^2``."""
    for name, v in (("sigma0", sigma0), ("sigma1", sigma1), ("m", m), ("m1", m1)):
        _positive(name, v)
    return float(sigma0 * sigma1 * math.sqrt(L * m * m1))


def t_half(G0: Sequence = (0, 0, 0), weights: Sequence = _FLOAT_WEIGHTS) -> float:
    """First tau with ``-dG3/dtau >= max(dG1/dtau, dG2/dtau)`` in the four-class system.

    Lemma 4.3 / Theorem E.19's T_0.5 (our reading, module docstring).  Root-found on the dense
    output of an rtol = 1e-12 integration (8 significant digits).
    """
    w = _weights(weights)
    G0 = np.asarray(G0, dtype=float)
    if G0.shape != (3,) or not np.all(np.isfinite(G0)):
        raise ValueError(f"G0 must be 3 finite numbers, got {G0}")
    f = _class_rhs(w)

    def h(y):
        v = f(0.0, y)
        return -v[2] - max(v[0], v[1])

    if h(G0) >= 0:
        return 0.0
    t_end = 1.0
    while t_end < 1e6:
        sol = solve_ivp(f, (0.0, t_end), G0, method="DOP853", rtol=1e-12, atol=1e-14,
                        dense_output=True)
        grid = np.linspace(0.0, t_end, 2001)
        vals = np.array([h(sol.sol(t)) for t in grid])
        hit = np.nonzero(vals >= 0)[0]
        if hit.size:
            k = int(hit[0])
            return float(brentq(lambda t, s=sol: h(s.sol(t)), grid[k - 1], grid[k], xtol=1e-14,
                                rtol=1e-15))
        t_end *= 4
    # no such time under this system (a wrong theory's): inadmissible, a failed part
    raise InadmissibleTheory(f"no T_0.5 before tau = 1e6 from G0 = {G0.tolist()}")


# ---------------------------------------------------------------------- private-token classes
P1, P2, P3, P4 = sp.symbols("P1:5", real=True)
#: the private-token class state: G1, G2, G3 and P_k, the G of each random token of class k.
PRIVATE_STATE = (G1, G2, G3, P1, P2, P3, P4)


def _private_counts(n: int, L: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(random tokens per sample, samples) of each class I1..I4 at exact proportions."""
    n, L = int(n), int(L)
    if n < 6 or n % 6:
        raise ValueError(f"n must be a positive multiple of 6 (exact proportions), got {n}")
    if L < 3:
        raise ValueError(f"L must be >= 3, got {L}")
    per = tuple(L - 1 - sum(z[:2]) for z in CLASS_TOKENS)
    return per, (n // 2, n // 6, n // 6, n // 6)


def private_margins(Y: Sequence, L: int) -> tuple:
    """Sample margins of the four classes with private random tokens (our reduction):
    ``Q_k = q_k(G) + y_k (L - s_k) P_k``, s_k the special tokens of class k."""
    per, _ = _private_counts(6, L)
    q = class_margins(tuple(Y[:3]))
    return tuple(qk + y * c * pk for qk, y, c, pk in zip(q, CLASS_LABELS, per, Y[3:7],
                                                          strict=True))


def private_losses(Y, L: int) -> np.ndarray:
    """Per-class sample losses ``log(1 + exp(-Q_k))`` at the private-token margins
    (:func:`private_margins`), [4, ...] (Eq. (2) per class)."""
    Q = np.array(private_margins(list(np.asarray(Y, dtype=float)), L), dtype=float)
    return np.logaddexp(0.0, -Q)


def private_beta_sq(Y, n: int, L: int) -> np.ndarray:
    """|beta|^2 of a private-token class state: ``G1^2 + G2^2 + G3^2 + sum_k N_k P_k^2`` with
    N_k = n_k (L - s_k) random tokens of class k (each its own coordinate of beta)."""
    per, counts = _private_counts(n, L)
    Y = np.asarray(Y, dtype=float)
    return np.sum(Y[:3] ** 2, axis=0) + sum(c * nk * Y[3 + k] ** 2 for k, (c, nk) in
                                            enumerate(zip(per, counts, strict=True)))


def s_drift(beta_sq, m1: float, S0: float):
    """Relative change of S = |W^T a|^2 when |beta|^2 grows by ``beta_sq`` (our derivation):
    dS/dt = 2 m1 beta.r and d|beta|^2/dt = 2 S beta.r (m1 M r dropped) give
    ``S^2 - S0^2 = 2 m1 Delta|beta|^2``, so ``S/S0 - 1 = sqrt(1 + 2 m1 Delta|beta|^2/S0^2) - 1``
    (Proposition E.12 / Lemma F.10: S almost constant)."""
    _positive("m1", m1)
    _positive("S0", S0)
    return np.sqrt(1.0 + 2.0 * m1 * np.asarray(beta_sq, dtype=float) / S0 ** 2) - 1.0


@cache
def _private_system(n: int, L: int, weights: tuple) -> ReducedSystem:
    per, counts = _private_counts(n, L)
    Q = private_margins(PRIVATE_STATE, L)
    loss = sum((pk * _logistic(qk) for pk, qk in zip(weights, Q, strict=True)), sp.S.Zero)
    # gradient flow on beta (one coordinate per token): a class-k token shared by its N_k =
    # n_k (L - s_k) occurrences moves at 1/N_k of the reduced gradient
    rates = (sp.S.One,) * 3 + tuple(sp.Rational(1, c * nk) if c else sp.S.Zero
                                    for c, nk in zip(per, counts, strict=True))
    return gradient_flow(
        loss, PRIVATE_STATE, (), rates=rates, name=f"cooccurrence private-token classes n={n} L={L}",
        assumptions=(
            "our reduction: uniform attention, S constant, m1 M r dropped, G(0) = 0, random "
            "tokens private (Assumption 2.3(ii)); by symmetry every sample of a class keeps "
            "the same margin, so the sample-level flow closes on (G1, G2, G3, P1..P4); time "
            "tau = S t"
        ),
    )


def private_system(n: int, L: int, weights: Sequence = WEIGHTS) -> ReducedSystem:
    """The sample-level gradient flow at uniform attention with private random tokens, closed
    on seven coordinates (our reduction; the four-class system of Lemma F.6's proof plus the
    random tokens it drops, Theorem E.15, Lemma F.14): ``dP_k/dtau = y_k g_k / n``, and the
    special tokens move as in :func:`class_system` with ``g_k = 1/(1 + exp(Q_k))``.
    """
    return _private_system(int(n), int(L), _weights(weights))


#: m1 / S^2, the weight of the preconditioner term (:func:`preconditioned_private_system`);
#: called kappa in its docstrings, not the kappa = sigma0^2 m of :func:`score_drift`
PRECOND = sp.Symbol("kappa_p", nonnegative=True)


@cache
def _preconditioned_private_system(n: int, L: int, weights: tuple) -> ReducedSystem:
    base = private_system(n, L, weights)  # the public one: a slip in it reaches this too
    per, counts = _private_counts(n, L)
    # beta.r = (1/2) d|beta|^2/dtau on the reduced flow: one coordinate per special token,
    # N_k = n_k (L - s_k) coordinates equal to P_k per class (private_beta_sq's weights)
    mult = (sp.S.One,) * 3 + tuple(sp.Integer(c * nk) for c, nk in zip(per, counts, strict=True))
    beta_r = sum((w * y * f for w, y, f in zip(mult, base.state, base.rhs, strict=True)),
                 sp.S.Zero)
    return ReducedSystem(
        base.state, (PRECOND,), base.rhs + PRECOND * beta_r * sp.Matrix(base.state),
        name=f"cooccurrence private-token classes n={n} L={L}, m1 M r kept to first order",
        assumptions=(
            "our derivation: the private-token reduction (private_system) plus the term it "
            "drops; dbeta/dt = S r + m1 M r and dM/dt = beta r^T + r beta^T give, with S "
            "constant and dbeta/dt = S r at leading order, M = M0 + (beta beta^T - beta0 "
            "beta0^T)/S, so in tau = S t: dbeta/dtau = r + (m1/S^2) beta (beta.r), dropping the "
            "isotropic m1 M0 r/S (a clock change) and the beta0 terms (|G(0)| << |beta|)"),
    )


def preconditioned_private_system(n: int, L: int, weights: Sequence = WEIGHTS) -> ReducedSystem:
    """:func:`private_system` with the preconditioner term it drops kept to first order (our
    derivation): ``dY/dtau = f(Y) + kappa (beta.r) Y``, kappa = m1/S^2 (:data:`PRECOND`).

    The term is along beta itself: it grows every margin in proportion to its own value, so
    ratios of the class losses that the reduction predicts move at first order in kappa
    |beta|^2 (about tau_eff/tau - 1), not only through the clock.  S grows with |beta|
    (:func:`s_drift`), so kappa at S0 bounds the term from above."""
    return _preconditioned_private_system(int(n), int(L), _weights(weights))


def private_trajectory(taus, n: int, L: int, weights: Sequence = _FLOAT_WEIGHTS,
                       Y0: Sequence | None = None, kappa: float = 0.0) -> np.ndarray:
    """:func:`private_system` integrated from ``Y0`` (default 0) to the increasing times
    ``taus``, [7, T] (LSODA, rtol 1e-10, atol 1e-12); with ``kappa`` > 0 the
    :func:`preconditioned_private_system` at that kappa = m1/S^2."""
    if kappa:
        _positive("kappa", kappa)
        g = preconditioned_private_system(n, L, weights).lambdify()

        def f(t, y):
            return g(t, y, kappa)
    else:
        f = private_system(n, L, weights).lambdify()
    taus = np.asarray(taus, dtype=float)
    sol = solve_ivp(lambda t, y: np.asarray(f(t, y), dtype=float).reshape(-1),
                    (0.0, float(taus[-1])), np.zeros(7) if Y0 is None else
                    np.asarray(Y0, dtype=float), method="LSODA", t_eval=taus,
                    rtol=1e-10, atol=1e-12)
    if not sol.success:  # a wrong system (a control, a mutant) fails a part, not the check
        raise InadmissibleTheory(f"private-token class system failed: {sol.message}")
    return sol.y


# ---------------------------------------------------------------------- max margin
@cache
def class_max_margin() -> MaxMargin:
    """Class-level hard-margin SVM solved exactly by enumerating KKT active sets (sympy).

    Rows ``y_k z_k`` of the four classes; returns gamma*^2 = 1/17, beta* = (2, 2, -3),
    R_inf = 3/2 (support I1, I2, I3; our derivation).
    """
    rows = [sp.Matrix([y * z for z in zs]).T for zs, y in zip(CLASS_TOKENS, CLASS_LABELS,
                                                                 strict=True)]
    best = None
    for k in range(1, 5):
        for support in itertools.combinations(range(4), k):
            Z = sp.Matrix.vstack(*[rows[i] for i in support])
            gram = Z * Z.T
            if gram.det() == 0:
                continue
            alpha = gram.inv() * sp.ones(k, 1)
            if any(a < 0 for a in alpha):
                continue
            beta = Z.T * alpha
            if all((row * beta)[0] >= 1 for row in rows):
                norm = (beta.T * beta)[0]
                if best is None or norm < best[0]:
                    best = (norm, beta)
    norm, beta = best
    return MaxMargin(sp.Integer(1) / norm, tuple(beta), -beta[2] / beta[0])


def sample_max_margin(tokens, labels, d: int | None = None) -> MaxMargin:
    """Sample-level hard-margin SVM on token counts z_i (uniform attention; our derivation).

    Dual ``min_alpha >= 0  1/2 alpha^T K alpha - sum alpha`` (L-BFGS-B), then an exact
    active-set polish: on the support solve ``K_SS alpha_S = 1`` and swap indices until the
    multipliers are >= 0 and every margin >= 1 (8+ significant digits).
    """
    tok, y, dd = _data(tokens, labels, d)
    n = tok.shape[0]
    Z = np.zeros((n, dd))
    np.add.at(Z, (np.repeat(np.arange(n), tok.shape[1]), tok.ravel()), 1.0)
    X = y[:, None] * Z
    K = X @ X.T
    res = minimize(
        lambda a: (0.5 * a @ K @ a - a.sum(), K @ a - 1.0),
        np.full(n, 0.1),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * n,
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000},
    )
    alpha = res.x
    support = set(np.nonzero(alpha > 1e-6 * max(alpha.max(), 1e-300))[0].tolist())
    for _ in range(4 * n):
        idx = np.array(sorted(support))
        a_s, *_ = np.linalg.lstsq(K[np.ix_(idx, idx)], np.ones(idx.size), rcond=None)
        beta = X[idx].T @ a_s
        margins = X @ beta
        neg = idx[a_s < -1e-12]
        viol = np.nonzero(margins < 1 - 1e-10)[0]
        if neg.size == 0 and viol.size == 0:
            break
        if neg.size:
            support.discard(int(idx[int(np.argmin(a_s))]))
        else:
            support.add(int(viol[int(np.argmin(margins[viol]))]))
    else:
        raise ValueError("sample_max_margin: active set did not settle (data not separable?)")
    if not np.all(margins >= 1 - 1e-8):
        raise ValueError("tokens/labels are not linearly separable with uniform attention")
    return MaxMargin(float(1.0 / (beta @ beta)), beta, float(-beta[2] / beta[0]))


def test_loss_exponent(mm: MaxMargin) -> float:
    """kappa = min_k q_k(beta*[:3]): test loss ~ tau^-kappa on samples with unseen tokens.

    Our hypothesis for the reviewers' validation-loss question (module docstring).
    """
    b = [float(x) for x in mm.beta[:3]]
    return float(min(class_margins(b)))


def loss_law(t, S, gamma_sq, t1=0, loss1=sp.oo) -> sp.Expr:
    """Theorem F.8 with our constant: ``L(t) = 1/(S gamma*^2 (t - t1) + 1/L(t1))``.

    Solution of ``dL/dt = -S gamma*^2 L^2`` (see :func:`equations`, "loss law ODE").
    """
    _positive("S", S)
    _positive("gamma_sq", gamma_sq)
    _positive("loss1", loss1)
    S, gamma_sq, t1, loss1 = (sp.sympify(x) for x in (S, gamma_sq, t1, loss1))
    return 1 / (S * gamma_sq * (sp.sympify(t) - t1) + 1 / loss1)


def _loss_law_dsolve() -> sp.Expr:
    t = sp.Symbol("t", positive=True)
    c, l1 = sp.symbols("C L_1", positive=True)
    f = sp.Function("L")
    sol = sp.dsolve(sp.Eq(f(t).diff(t), -c * f(t) ** 2), f(t), ics={f(0): l1})
    return sp.simplify(sol.rhs)


def equations() -> list[Equation]:
    """Named derived results for ``tdcheck equations cooccurrence``, with their sources."""
    sys_ = class_system(WEIGHTS)
    mm = class_max_margin()
    drifts = invariant_drifts(2)
    S, m1, t, t1, l1 = sp.symbols("S m1 t t_1 L_1", positive=True)
    gs = sp.Symbol("gamma_*^2", positive=True)
    q = class_margins((G1, G2, G3))
    four_class = "our reduction; the system in the proof of Lemma F.6"
    canonical = "our derivation from Appendix B's gradients"
    out = [
        Equation("class loss (tau = S t)", sys_.loss,
                 "Eq. (2) at uniform attention, random tokens ignored, S constant (our "
                 "reduction; proof of Lemma F.6)"),
        Equation("dG1/dtau", sys_.rhs[0], four_class),
        Equation("dG2/dtau", sys_.rhs[1], four_class),
        Equation("dG3/dtau", sys_.rhs[2], four_class),
        Equation("class margins q1..q4", sp.Tuple(*q), "Definition 2.1 (classes I1..I4)"),
        Equation("initial rates (dG/dtau at G = 0)", sp.Tuple(*initial_rates()),
                 "Lemmas 4.1-4.2 (E.4, E.16)"),
        Equation("peak identity dq2/dtau + dG1/dtau + dG3/dtau", peak_identity(),
                 "our derivation: the I2 loss peaks at Lemma 4.3's T_0.5"),
        Equation("class max margin gamma*^2", mm.gamma_sq,
                 "our derivation: KKT of the class-level hard-margin problem, support I1-I3"),
        Equation("class max-margin direction beta*", sp.Tuple(*mm.beta), "our derivation"),
        Equation("R_inf = lim -dG3/dG1", mm.R_inf,
                 "our derivation; sharpens Lemma F.6's R* in (1, 2)"),
        Equation("loss law ODE dL/dt = -C L^2, L(0) = L_1", _loss_law_dsolve(), "Theorem F.8"),
        Equation("loss law L(t)", loss_law(t, S, gs, t1, l1),
                 "Theorem F.8 with our constant C = S gamma*^2"),
        Equation("class-level L S t -> 1/gamma*^2", 1 / mm.gamma_sq,
                 "our derivation (implicit bias of the logistic loss, Soudry et al. 2018)"),
        Equation("T_0.5 (tau, G0 = 0)", sp.Float(t_half(), 10),
                 "Lemma 4.3 / Theorem E.19 (our definition of T_0.5)"),
        Equation("test exponent kappa (class level)", sp.nsimplify(test_loss_exponent(mm)),
                 "our hypothesis for the reviewers' validation-loss question"),
    ]
    out += [Equation(f"drift of {name}", drift,
                     "our derivation: balancedness of adjacent factors (must vanish)")
            for name, drift in drifts.items()]
    out.append(Equation("invariant value_balance", S - m1 * sp.Symbol("tr(M)"), canonical))
    d = sp.Symbol("d", integer=True, positive=True)
    beta, r = sp.MatrixSymbol("beta", d, 1), sp.MatrixSymbol("r", d, 1)
    M, A, Kg, Qg, Gam = (sp.MatrixSymbol(x, d, d) for x in ("M", "A", "K_G", "Q_G", "Gamma"))
    out += [
        Equation("canonical dbeta/dt", S * r + m1 * M * r, f"{canonical}; Eq. (4), Lemma F.4"),
        Equation("canonical dS/dt", 2 * m1 * beta.T * r, f"{canonical}; Eq. (5) / Lemma F.4"),
        Equation("canonical dM/dt", beta * r.T + r * beta.T, f"{canonical}; Lemma F.11"),
        Equation("canonical dA/dt", Gam * Qg + Kg * Gam, f"{canonical}; Eq. (7), Lemma F.16"),
        Equation("canonical dK_G/dt", A * Gam.T + Gam * A.T, f"{canonical}; Lemma C.3"),
        Equation("canonical dQ_G/dt", A.T * Gam + Gam.T * A, f"{canonical}; Lemma C.4"),
    ]
    return out
