"""Scan and snap: Tian, Wang, Chen, Du, *Scan and Snap* (NeurIPS 2023, arXiv 2305.16380v4).

Reduced theory of a one-layer transformer (attention logits Z, decoder Y, l2-normalised bag
of attended tokens, softmax cross-entropy over M tokens; the paper's Section 3).
Equation, lemma and theorem numbers are those of arXiv v4.

Closed forms (all re-derived here with sympy; the tests check the derivations):

* Lemma 6 (Eqn 44-45): ``h' = eta_Y / ((M-1) + e^{M h})``, ``h(0) = 0``, implicitly
  ``e^{M h} + (M-1) M h = M eta_Y t + 1``.  Lemma 5 (Eqn 33): the discrete recursion ``h*``.
* Theorem 1 (Eqn 9): ``gamma(t) = (M-1)^2 h(t/K) / ((M-1) + e^{M h(t/K)})``.
* Theorem 4 / Eqn 118-129: ``Gamma(t) = eta_Z int_0^t gamma = eta_Z K (M-1)^2 h(t/K)^2 / (2 eta_Y)``
  and ``B(t) = 1/4 ln(1 + 4 Gamma / C0)``.

Choices and corrections (say so in reports):

* **Eqn 14 / Eqn 129 / Eqn 132 drop ``-1/4 ln C0``**: as printed, ``B = 1/4 ln(C0 + 4 Gamma)``
  so ``B(0) = 1/4 ln C0 != 0`` against the definition ``B(0) = 0`` (Eqn 12).  We use the
  corrected form; :func:`printed_growth_exponent` keeps the printed one for negative controls.
* **Theorem 1(b) prints ``ln(eta_Y t/K)``**; the proof (and the exact asymptote) has
  ``ln(M eta_Y t/K)``.  :func:`late_speed_asymptote` takes ``printed=True`` for the printed one.
* **Appendix D.1 defines ``E' = (I+E)^{-1} - I``**, a sign typo: Lemmas 14-17 use
  ``(I+E)^{-1} = I - E'``.  We use ``E' = I - (F^T F)^{-1}``.
* **Time convention.** Time is per-sample SGD time (batch size 1, uniform classes): the
  population update of ``z_m`` carries ``P(n) = 1/K``, which Eqn 10 leaves out, and ``h`` runs on
  ``t/K``.  Hence in :func:`reduced_system` ``z' = (eta_Z/K) gamma sum_n ...``.  The common-token
  model of Theorem 4 (:func:`snap_system`) keeps the paper's form ``z' = -(eta_Z/C0) gamma e^{4z}``
  with ``C0 = rho_0^4/K`` (Eqn 13), which absorbs the same 1/K.
* **Theorem 1 to leading order** (``q1 = 1``, ``q0 = 0``, ``sigma = theta = delta = 0``):
  ``Y(e_n - alpha_n) = gamma F (I - E') e_n``; this is what :func:`reduced_system` encodes.
* **Eqn 14's regimes** (:func:`growth_exponent_regime`): "early" uses
  ``4 Gamma = 2 (M-1)^2 eta_Y eta_Z t^2 / (K M^2)`` (``h = eta_Y t/(M K)``), "late" uses
  ``4 Gamma = 2 K (M-1)^2 (eta_Z/eta_Y) ln^2(M eta_Y t/K) / M^2`` (``e^{M h} = M eta_Y t/K``).
  Both inside the corrected ``1/4 ln(1 + 4 Gamma/C0)``.

Our derivations (not in the paper), re-derived here: the DT invariant
``1/c~_l^2 - 1/c~_l'^2`` (conserved exactly by :func:`reduced_system`, see its ``drift``), the
peak of gamma at ``e^x (x-1) = M-1`` with ``x = M h``, the loss of Lemma 5's logits
``log(1 + (M-1) e^{-M h})`` (:func:`decoder_loss`; every class's loss is that one, so it is
also the class-averaged population loss), and the exact scalings
``B(t; lam eta_Y, lam eta_Z) = B(lam t; eta_Y, eta_Z)`` (h depends on ``eta_Y t/K`` only).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

import numpy as np
import sympy as sp

from theory.flow import Equation, InadmissibleTheory, ReducedSystem

__all__ = [
    "B_SYM",
    "C0_SYM",
    "ETA_Y",
    "ETA_Z",
    "K_SYM",
    "M_SYM",
    "T_SYM",
    "H",
    "attention_gain",
    "common_tokens",
    "decoder_gap_bound",
    "decoder_loss",
    "decoder_rate_scaled",
    "decoder_scale",
    "decoder_scale_steps",
    "distinct_tokens",
    "dt_drive",
    "dt_invariant",
    "equations",
    "gain_bounds",
    "growth_exponent",
    "growth_exponent_asymptote",
    "growth_exponent_regime",
    "integrated_speed",
    "late_speed_asymptote",
    "predicted_drift_signs",
    "printed_growth_exponent",
    "reduced_system",
    "relative_gain",
    "scan_order",
    "scan_time",
    "snap_delta",
    "snap_system",
    "snap_time",
    "speed_control",
    "speed_peak_scale",
    "speed_peak_time",
    "unnormalised_attention",
    "winners",
    "zeta_overlaps",
]

#: Index-valued functions: ``tdcheck mutate`` gives them permutation mutants (swap the first
#: two entries, reverse, rotate by one) instead of scale mutants, which would make
#: non-integer indices (verify.mutate, MUTANT_KINDS).  The token sets G_CT and G_DT(n) are
#: sets held as sorted tuples: a permutation of one is the same set (9 equivalent mutants,
#: all survivors, in tdcheck mutate scan_snap on 5cf6d85), so they get set mutants instead
#: (the largest token dropped, max + 1 added).
#: ``unnormalised_attention`` is scale-free (see its docstring): c~ enters every consumer only
#: through ratios c~_l/c~_l', the normalisation f = c~/|c~| and the product c~_l0(t)^2 I(0)
#: with I(0) = 1/c~_l0(0)^2 - 1/c~_l(0)^2, so a whole-output scale is the same theory (its
#: x 1.05 and x 0.95 mutants survived every claim in tdcheck mutate scan_snap on 46c6699, as
#: equivalent mutants must).  It gets shape mutants instead: each token's weight alternately
#: x (1 + delta) and x (1 - delta) along the token axis, a slip of P(l|n) no multiple undoes.
MUTANT_KINDS = {
    "common_tokens": "set",
    "distinct_tokens": "set",
    "predicted_drift_signs": "permutation",
    "scan_order": "permutation",
    "unnormalised_attention": "shape",
    "winners": "permutation",
}

# Public symbols (the generic forms of equations()).
T_SYM = sp.Symbol("t", nonnegative=True)
H = sp.Symbol("h", nonnegative=True)
M_SYM = sp.Symbol("M", positive=True, integer=True)
K_SYM = sp.Symbol("K", positive=True, integer=True)
ETA_Y = sp.Symbol("eta_Y", positive=True)
ETA_Z = sp.Symbol("eta_Z", positive=True)
C0_SYM = sp.Symbol("C_0", positive=True)
B_SYM = sp.Symbol("B", real=True)
_Z = sp.Symbol("z", real=True)


# ---------------------------------------------------------------------- validation
# A value outside its domain raises theory.flow.InadmissibleTheory (a ValueError): where it
# is another theory function's output (a negative scan time from a wrong theory), the
# check fails a part with the message instead of stopping (verify.runner).
def _real(name: str, value) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InadmissibleTheory(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise InadmissibleTheory(f"{name} must be finite, got {value!r}")
    return x


def _nonneg(name: str, value) -> float:
    x = _real(name, value)
    if x < 0:
        raise InadmissibleTheory(f"{name} must be >= 0, got {value!r}")
    return x


def _positive(name: str, value) -> float:
    x = _real(name, value)
    if not x > 0:
        raise InadmissibleTheory(f"{name} must be > 0, got {value!r}")
    return x


def _integer(name: str, value, lo: int) -> int:
    x = _real(name, value)
    if x != int(x) or x < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(x)


def _probs(probs) -> np.ndarray:
    try:
        arr = np.asarray(probs, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"probs must be a K x L array of numbers, got {probs!r}") from None
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"probs must be a K x L array (K, L >= 1), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("probs must have finite non-negative entries")
    sums = arr.sum(axis=1)
    if np.any(np.abs(sums - 1) > 1e-9):
        raise ValueError(f"probs rows must sum to 1, got row sums {sums.tolist()}")
    return arr


def _sym_or(name: str, value, check) -> sp.Expr | float:
    """A sympy Symbol passes through (it becomes a system parameter); numbers are checked."""
    if isinstance(value, sp.Symbol):
        return value
    return check(name, value)


# ---------------------------------------------------------------------- decoder (Section 4)
def _scaled_root(u: float, M: int) -> float:
    """x = M h solving expm1(x) + (M-1) x = u (Lemma 6 with u = M eta_Y t), to machine precision.

    g(x) = expm1(x) + (M-1) x - u is increasing and convex, so Newton from a point above the
    root decreases monotonically onto it.  Both u/M and log1p(u) bound the root from above
    (expm1(x) >= x, and (M-1) x >= 0); expm1 keeps full relative precision at u << 1.
    """
    if u == 0.0:
        return 0.0
    return _newton_down(lambda x: (math.expm1(x) + (M - 1) * x - u) / (math.exp(x) + M - 1),
                        min(u / M, math.log1p(u)), floor=0.0)


def _newton_down(step_of: Callable[[float], float], x: float, floor: float = -math.inf
                 ) -> float:
    """Newton's iteration ``x -= step_of(x)`` on a convex increasing function from a point
    above its root, so that it descends monotonically: stops when the descent stalls (the
    next point is not lower, or not above ``floor``) or the step is at machine precision."""
    for _ in range(200):
        step = step_of(x)
        x_new = x - step
        if x_new >= x or x_new <= floor:
            break
        x = x_new
        if step <= 4e-17 * x:
            break
    return x


def decoder_scale(t, M, eta_Y) -> float:
    """h(t) of Lemma 6 (Eqn 45): the root of ``e^{M h} + (M-1) M h = M eta_Y t + 1``."""
    t = _nonneg("t", t)
    M = _integer("M", M, 2)
    eta_Y = _positive("eta_Y", eta_Y)
    return _scaled_root(M * eta_Y * t, M) / M


def decoder_rate_scaled(x, M, eta_Y):
    """Lemma 6's ODE (Eqn 44) in the O(1) variable x = M h: ``x' = M eta_Y/((M-1) + e^x)``
    (``h' = eta_Y/((M-1) + e^{M h})`` times M); ``x`` a float or a numpy array."""
    return M * eta_Y / ((M - 1) + np.exp(x))


def decoder_scale_steps(s, M, eta_Y) -> float:
    """h*(s) of Lemma 5 (Eqn 33): ``h*(s) = h*(s-1) + eta_Y/((M-1) + e^{M h*(s-1)})``, h*(0)=0."""
    s = _integer("s", s, 0)
    M = _integer("M", M, 2)
    eta_Y = _positive("eta_Y", eta_Y)
    h = 0.0
    for _ in range(s):
        h += eta_Y / ((M - 1) + math.exp(M * h))
    return h


@lru_cache(maxsize=1)
def _zeta_overlap_exprs() -> tuple[sp.Expr, sp.Expr]:
    """q_1 = zeta_i . zeta_i and q_0 = zeta_i . zeta_j (i != j) from zeta_n = M/(M-1)
    (e_n - 1/M 1), summed over the M coordinates by kind: zeta_n has 1 entry
    a = M/(M-1) (1 - 1/M) and M - 1 entries b = -1/(M-1); two distinct zetas share M - 2
    b-entries and cross a with b twice."""
    M = M_SYM
    a = M / (M - 1) * (1 - 1 / M)
    b = M / (M - 1) * (-1 / M)
    return sp.simplify(a**2 + (M - 1) * b**2), sp.simplify(2 * a * b + (M - 2) * b**2)


def zeta_overlaps(M) -> tuple[float, float]:
    """(q_1, q_0) of Section 2's notation for vocabulary size M: the overlaps of Lemma 5's
    directions zeta_n (w_n = (M-1) h zeta_n), which Theorem 1's exact coefficients carry
    (its leading order, and :func:`reduced_system`, take q_1 = 1 and q_0 = 0).  With f
    frozen and orthonormal classes, Y(e_n - alpha_n) = gamma (q_1 f_n + q_0 sum_{n' != n}
    f_n') exactly."""
    M = _integer("M", M, 2)
    q1, q0 = _zeta_overlap_exprs()
    return float(q1.subs(M_SYM, M)), float(q0.subs(M_SYM, M))


@lru_cache(maxsize=1)
def _decoder_loss_expr() -> sp.Expr:
    """Class n's cross-entropy when its logits are Lemma 5's w_n = (M-1) h zeta_n, i.e.
    (M-1) h at its own token and -h at each of the other M - 1 (zeta_n = M/(M-1) (e_n -
    1/M 1)): ``-log softmax_n = log(e^{(M-1) h} + (M-1) e^{-h}) - (M-1) h``, which sympy
    simplifies to ``log(M - 1 + e^{M h}) - M h = log(1 + (M-1) e^{-M h})`` (our
    derivation; the tests check the second form against the first)."""
    M, h = M_SYM, H
    own, other = (M - 1) * h, -h
    return sp.simplify(sp.log(sp.exp(own) + (M - 1) * sp.exp(other)) - own)


def decoder_loss(t, M, K, eta_Y) -> float:
    """The population loss while the decoder follows Lemmas 5-6 (f frozen, F^T F = I, every
    class at h(t/K)): ``log(1 + (M-1) e^{-M h(t/K)})`` (:func:`_decoder_loss_expr`, our
    derivation from w_n = (M-1) h zeta_n); ``ln M`` at t = 0.  Evaluated as
    ``log1p((M-1) e^{-x})`` at ``x = M h``, which keeps its precision as the loss falls."""
    t = _nonneg("t", t)
    M = _integer("M", M, 2)
    K = _integer("K", K, 1)
    eta_Y = _positive("eta_Y", eta_Y)
    x = _scaled_root(M * eta_Y * t / K, M)
    return math.log1p((M - 1) * math.exp(-x))


def decoder_gap_bound(M, eta_Y) -> float:
    """Lemma 7: ``0 <= h*(s) - h(s) <= 2 eta_Y / M`` for every step s."""
    M = _integer("M", M, 2)
    eta_Y = _positive("eta_Y", eta_Y)
    return 2.0 * eta_Y / M


def _gamma_of_h(h: float, M: int) -> float:
    return (M - 1) ** 2 * h / ((M - 1) + math.exp(M * h))


def speed_control(t, M, K, eta_Y) -> float:
    """gamma(t) of Theorem 1 (Eqn 9) with continuous ``t/K``: ``(M-1)^2 h/((M-1) + e^{M h})``."""
    t = _nonneg("t", t)
    M = _integer("M", M, 2)
    K = _integer("K", K, 1)
    eta_Y = _positive("eta_Y", eta_Y)
    return _gamma_of_h(_scaled_root(M * eta_Y * t / K, M) / M, M)


def integrated_speed(t, M, K, eta_Y, eta_Z) -> float:
    """Gamma(t) = eta_Z int_0^t gamma = eta_Z K (M-1)^2 h(t/K)^2 / (2 eta_Y) (Eqn 118-129)."""
    t = _nonneg("t", t)
    M = _integer("M", M, 2)
    K = _integer("K", K, 1)
    eta_Y = _positive("eta_Y", eta_Y)
    eta_Z = _positive("eta_Z", eta_Z)
    h = _scaled_root(M * eta_Y * t / K, M) / M
    return eta_Z * K * (M - 1) ** 2 * h * h / (2.0 * eta_Y)


def growth_exponent(t, M, K, eta_Y, eta_Z, C0) -> float:
    """B(t) = 1/4 ln(1 + 4 Gamma(t)/C0): Theorem 4, corrected (B(0) = 0)."""
    C0 = _positive("C0", C0)
    gamma = _nonneg("Gamma(t) (integrated_speed)", integrated_speed(t, M, K, eta_Y, eta_Z))
    return 0.25 * math.log1p(4.0 * gamma / C0)


def printed_growth_exponent(t, M, K, eta_Y, eta_Z, C0) -> float:
    """Eqn 14 / Eqn 129 as printed: ``1/4 ln(C0 + 4 Gamma)`` (off by ``1/4 ln C0``)."""
    C0 = _positive("C0", C0)
    gamma = _nonneg("Gamma(t) (integrated_speed)", integrated_speed(t, M, K, eta_Y, eta_Z))
    return 0.25 * math.log(C0 + 4.0 * gamma)


def _growth_args(t, M, K, eta_Y, eta_Z, C0) -> tuple[float, int, int, float, float, float]:
    """The checked (t, M, K, eta_Y, eta_Z, C0) of the growth-exponent forms."""
    return (_nonneg("t", t), _integer("M", M, 2), _integer("K", K, 1),
            _positive("eta_Y", eta_Y), _positive("eta_Z", eta_Z), _positive("C0", C0))


def growth_exponent_regime(
    t, M, K, eta_Y, eta_Z, C0, regime: Literal["early", "late"]
) -> float:
    """Eqn 14's regime forms, inside the corrected ``1/4 ln(1 + 4 Gamma/C0)``.

    early (t < t0' = K ln M/eta_Y): ``4 Gamma = 2 (M-1)^2 eta_Y eta_Z t^2/(K M^2)``;
    late (t >= t0 = 2 K ln M/eta_Y): ``4 Gamma = 2 K (M-1)^2 (eta_Z/eta_Y) ln^2(M eta_Y t/K)/M^2``
    (zero where ``M eta_Y t/K <= 1``, where the late form has no meaning).
    """
    t, M, K, eta_Y, eta_Z, C0 = _growth_args(t, M, K, eta_Y, eta_Z, C0)
    if regime == "early":
        four_gamma = 2.0 * (M - 1) ** 2 * eta_Y * eta_Z * t * t / (K * M * M)
    elif regime == "late":
        arg = M * eta_Y * t / K
        lg = math.log(arg) if arg > 1 else 0.0
        four_gamma = 2.0 * K * (M - 1) ** 2 * (eta_Z / eta_Y) * lg * lg / (M * M)
    else:
        raise ValueError(f"regime must be 'early' or 'late', got {regime!r}")
    return 0.25 * math.log1p(four_gamma / C0)


def growth_exponent_asymptote(t, M, K, eta_Y, eta_Z, C0) -> float:
    """Eqn 132 corrected: ``1/2 ln ln(M eta_Y t/K) + 1/4 ln(2K (M-1)^2/(M^2 nu C0))``.

    The (1 + o(1)) factor is dropped; ``nu = eta_Y/eta_Z``.  Needs ``M eta_Y t/K > e``.
    """
    t, M, K, eta_Y, eta_Z, C0 = _growth_args(t, M, K, eta_Y, eta_Z, C0)
    arg = M * eta_Y * t / K
    if not arg > math.e:
        raise ValueError(f"t must satisfy M eta_Y t/K > e for the asymptote, got t = {t}")
    nu = eta_Y / eta_Z
    return 0.5 * math.log(math.log(arg)) + 0.25 * math.log(2 * K * (M - 1) ** 2 / (M * M * nu * C0))


def late_speed_asymptote(t, M, K, eta_Y, printed: bool = False) -> float:
    """Large-t gamma (Lemma 9, Theorem 1(b)): ``((M-1)/M)^2 K ln(M eta_Y t/K)/(eta_Y t)``.

    ``printed=True`` gives Theorem 1(b)'s printed ``K ln(eta_Y t/K)/(eta_Y t)`` (no M in the log,
    no ((M-1)/M)^2 prefactor).
    """
    t = _positive("t", t)
    M = _integer("M", M, 2)
    K = _integer("K", K, 1)
    eta_Y = _positive("eta_Y", eta_Y)
    if printed:
        return K * math.log(eta_Y * t / K) / (eta_Y * t)
    return ((M - 1) / M) ** 2 * K * math.log(M * eta_Y * t / K) / (eta_Y * t)


def scan_time(M, K, eta_Y) -> float:
    """t0' = K ln M / eta_Y, the end of the scanning stage (Lemma 9, Eqn 14)."""
    M = _integer("M", M, 2)
    K = _integer("K", K, 1)
    eta_Y = _positive("eta_Y", eta_Y)
    return K * math.log(M) / eta_Y


def snap_time(M, K, eta_Y) -> float:
    """t0 = 2 K ln M / eta_Y, the snap (Theorem 4; the (1 + delta') factor dropped).

    Theorem 4 fixes the late stage's start only up to ``1 + delta'`` with ``delta' =
    Theta(ln ln M / ln M)``; the claims use t0 to place their time grids and regions, and
    snap_reduced judges it: t0 (1 + delta') against Lemma 8's crossing on Lemma 6's h with
    our closed form of delta' (:func:`snap_delta`), and t*/t0 - 1 against the paper's order."""
    return 2.0 * _positive("t0' (scan_time)", scan_time(M, K, eta_Y))


def snap_delta(M) -> float:
    """delta' of Theorem 4's ``t0 (1 + delta')``: where Lemma 8's ``e^{M h} <= (M-1) M h``
    ends on Lemma 6's h, relative to t0 (our derivation; the paper gives only
    delta' = Theta(ln ln M / ln M)).

    The late stage starts at the larger root x* of ``e^x = (M-1) x`` (x = M h); Lemma 6
    (``e^x - 1 + (M-1) x = M eta_Y t/K``) puts it at ``t* = K (2 (M-1) x* - 1)/(M eta_Y)``, so
    ``delta' = t*/t0 - 1 = ((M-1) x* - 1/2)/(M ln M) - 1`` exactly, with t0 = 2 K ln M/eta_Y
    (K and eta_Y cancel).  With L = ln M, x* = L + ln L + ln L/L + ..., hence
    ``delta' = ln L/L (1 + 1/L + O(ln L/L^2))``: the paper's order, with constant 1.  x* by
    Newton from 3 L on ``e^x - (M-1) x`` (convex, increasing past ln(M-1)), in the form
    ``x - ln((M-1) x)`` whose step ``(x - ln((M-1) x)) x/(x - 1)`` cannot overflow.  M >= 4
    (for M - 1 < e, e^x = (M-1) x has no root: Lemma 8's condition never holds)."""
    M = _integer("M", M, 4)
    L = math.log(M)
    x_star = _newton_down(lambda x: (x - math.log((M - 1) * x)) * x / (x - 1), 3.0 * L,
                          floor=1.0)
    return ((M - 1) * x_star - 0.5) / (M * L) - 1.0


def speed_peak_scale(M) -> float:
    """x = M h at the peak of gamma(h): the root x > 1 of ``e^x (x - 1) = M - 1``.

    d gamma/dh = 0 <=> (M-1) + e^{Mh} - M h e^{Mh} = 0.  f(x) = e^x (x-1) - (M-1) is convex
    and increasing for x > 0; Newton from x0 = 2 + ln(M-1) > root descends monotonically.
    """
    M = _integer("M", M, 2)
    return _newton_down(lambda x: (math.exp(x) * (x - 1) - (M - 1)) / (x * math.exp(x)),
                        2.0 + math.log(M - 1))


def speed_peak_time(M, K, eta_Y) -> float:
    """Time at which gamma(t) peaks: ``t = K (e^x + (M-1) x - 1)/(M eta_Y)``, x from
    :func:`speed_peak_scale` (h is increasing in t, so the peak in h is the peak in t)."""
    M = _integer("M", M, 2)
    K = _integer("K", K, 1)
    eta_Y = _positive("eta_Y", eta_Y)
    x = _positive("x at gamma's peak (speed_peak_scale)", speed_peak_scale(M))
    return K * (math.expm1(x) + (M - 1) * x) / (M * eta_Y)


# ---------------------------------------------------------------------- Theorem 4 system
def _gamma_expr(h, M) -> sp.Expr:
    return (M - 1) ** 2 * h / ((M - 1) + sp.exp(M * h))


def snap_system(M, K, eta_Y, eta_Z, C0) -> ReducedSystem:
    """Theorem 4's common-token model (Eqn 13, 118-129), state (h, z), h = h(t/K).

    ``h' = eta_Y/(K((M-1) + e^{M h}))``, ``z' = -(eta_Z/C0) gamma(h) e^{4 z}`` with z the
    logit of the common token and ``B = -z`` (B = eta_Z int xi, xi = gamma e^{4z}/C0).
    Invariant: ``e^{-4 z} - 2 eta_Z K (M-1)^2 h^2/(C0 eta_Y)`` (= 1 from z(0) = h(0) = 0).
    Symbols passed as arguments become parameters; numbers give ``params == ()``.
    """
    M = _sym_or("M", M, lambda n, v: _integer(n, v, 2))
    K = _sym_or("K", K, lambda n, v: _integer(n, v, 1))
    eta_Y = _sym_or("eta_Y", eta_Y, _positive)
    eta_Z = _sym_or("eta_Z", eta_Z, _positive)
    C0 = _sym_or("C0", C0, _positive)
    args = (M, K, eta_Y, eta_Z, C0)
    params = tuple(a for a in args if isinstance(a, sp.Symbol))
    M, K, eta_Y, eta_Z, C0 = (a if isinstance(a, sp.Symbol) else sp.nsimplify(a) for a in args)
    hdot = eta_Y / (K * ((M - 1) + sp.exp(M * H)))
    zdot = -(eta_Z / C0) * _gamma_expr(H, M) * sp.exp(4 * _Z)
    inv = sp.exp(-4 * _Z) - 2 * eta_Z * K * (M - 1) ** 2 * H**2 / (C0 * eta_Y)
    return ReducedSystem(
        state=(H, _Z),
        params=params,
        rhs=sp.Matrix([hdot, zdot]),
        invariants={"snap": inv},
        assumptions=(
            "Theorem 4 / Eqn 13: one common token, a single query, all normalisers ~ rho_0, "
            "C0 = rho_0^4/K; h = h(t/K) (Lemma 9, per-sample time); B = -z."
        ),
        name="scan_snap.snap_system",
    )


# ---------------------------------------------------------------------- token types (Section 3.2)
def distinct_tokens(probs) -> tuple[tuple[int, ...], ...]:
    """G_DT(n) for each class n: tokens l with P(l|n) > 0 and P(l|n') = 0 for n' != n."""
    P = _probs(probs)
    support = P > 0
    count = support.sum(axis=0)
    return tuple(tuple(int(j) for j in np.nonzero(support[n] & (count == 1))[0])
                 for n in range(P.shape[0]))


def common_tokens(probs) -> tuple[int, ...]:
    """G_CT: tokens in the support of more than one class (|Omega(l)| > 1)."""
    P = _probs(probs)
    return tuple(int(j) for j in np.nonzero((P > 0).sum(axis=0) > 1)[0])


def _symmetric_case(P: np.ndarray) -> bool:
    """Corollary 2 (one shared query, Z(0) = 0): each CT has the same P(l|n) in every class,
    and the classes' DT probabilities agree as multisets (a P-preserving bijection)."""
    cts = common_tokens(P)
    for j in cts:
        col = P[:, j]
        if np.any(col <= 0) or np.ptp(col) > 1e-12:
            return False
    dts = distinct_tokens(P)
    ref = np.sort(P[0, list(dts[0])])
    # probabilities given as rows summing to 1 in float64: equal up to a few ulps of rounding
    return all(
        len(d) == len(ref) and np.allclose(np.sort(P[n, list(d)]), ref, rtol=0, atol=1e-12)
        for n, d in enumerate(dts)
    )


def predicted_drift_signs(probs) -> tuple[int, ...]:
    """Theorem 2 signs of ``dz_l/dt`` at Z = 0 for classes sharing one query token.

    +1 for every distinct token (Thm 2a, Eqn 98); -1 for the common token when it is the only
    one and some class has a DT (Thm 2b, Eqn 100), or for every common token in the symmetric
    case of Corollary 2; 0 where the theory predicts nothing (tokens outside every support, or
    CTs outside those cases).
    """
    P = _probs(probs)
    signs = [0] * P.shape[1]
    dts = distinct_tokens(P)
    for d in dts:
        for j in d:
            signs[j] = 1
    cts = common_tokens(P)
    has_dt = any(len(d) for d in dts)
    if has_dt and (len(cts) == 1 or _symmetric_case(P)):
        for j in cts:
            signs[j] = -1
    return tuple(signs)


def winners(probs, z0=None) -> tuple[int | None, ...]:
    """The DT that wins class n's attention, Theorem 3's dominant token l0 (r_{l0/l|n}(0) > 0
    for every other DT l): argmax over G_DT(n) of c~_l(0) = P(l|n) e^{z_l(0)}, since the
    ordering of the c~_l never changes (the DT invariant); from Z(0) = 0 (``z0`` None)
    argmax_l P(l|n).  ``z0``: the logits at t = 0, one row [L] for a shared query or one
    per class [K, L] (Section 5, "initial value as prior"); ties -> lowest index."""
    P = _probs(probs)
    if z0 is None:
        c0 = P
    else:
        z = np.broadcast_to(np.asarray(z0, dtype=float), P.shape)
        c0 = np.asarray(unnormalised_attention(P, z), dtype=float)
    return tuple(max(d, key=lambda j: (c0[n, j], -j)) if d else None
                 for n, d in enumerate(distinct_tokens(P)))


def scan_order(probs, n: int) -> tuple[int, ...]:
    """Order in which class n's DTs lose attention (Section 5, "scan"): increasing P(l|n)."""
    P = _probs(probs)
    if not (isinstance(n, int | np.integer) and 0 <= n < P.shape[0]):
        raise ValueError(f"n must be a class index in [0, {P.shape[0]}), got {n!r}")
    d = distinct_tokens(P)[n]
    return tuple(sorted(d, key=lambda j: (P[n, j], j)))


# ---------------------------------------------------------------------- Theorem 3
def relative_gain(c_l, c_lp):
    """r_{l/l'|n} = c~_l^2/c~_l'^2 - 1 (Theorem 3, Eqn 11); numpy arrays broadcast."""
    c_l = np.asarray(c_l, dtype=float)
    c_lp = np.asarray(c_lp, dtype=float)
    return c_l**2 / c_lp**2 - 1.0


def unnormalised_attention(probs, z):
    """c~_l = P(l|n) e^{z_l}, the un-normalised attention score (Eqn 5, Theorem 3);
    ``probs`` and ``z`` numpy arrays that broadcast (e.g. P(.|n) [L] against z [T, L]).

    c~ enters the theory only through ratios and squares (c~_l/c~_l', f = c~/|c~| in f f^T
    and f_l^2, 1/c~^2), so its overall sign moves no prediction; it is a weight (>= 0), and
    the checks read it through that domain (verify.scan_snap._attention)."""
    return np.asarray(probs, dtype=float) * np.exp(z)


def attention_gain(z, z0, power: float = 2.0):
    """chi_l(t) = e^{2 (z_l(t) - z_l(0))} (Theorem 3, Eqn 11); ``power`` is the exponent 2
    (a different value is a wrong theory, for negative controls); numpy arrays broadcast."""
    return np.exp(power * (z - z0))


def dt_invariant(c_l, c_lp):
    """1/c~_l^2 - 1/c~_l'^2: conserved for two DTs of one class under Eqn 98 (our derivation:
    z_l' e^{-2 z_l}/P_l^2 is the same for every DT of the class); numpy arrays broadcast."""
    c_l = np.asarray(c_l, dtype=float)
    c_lp = np.asarray(c_lp, dtype=float)
    return 1.0 / c_l**2 - 1.0 / c_lp**2


def dt_drive(probs, z) -> np.ndarray:
    """xi_n/gamma of Theorem 1(a) to leading order, per class: ``sum_{n' != n} E'_{nn'} f_n.f_n'``.

    Eqn 98 with Theorem 1 to leading order: a DT l of class n moves as
    ``z_l' = (eta_Z/K) gamma(t) f_nl^2 * dt_drive[n]`` (the 1/K of our per-sample time), so
    Eqn 12's ``B_n = eta_Z int xi_n`` is ``(eta_Z/K) int gamma dt_drive[n] dt`` in that time.
    ``probs`` K x L (rows P(l|n)), ``z`` [L] or [T, L] the shared query's logits; returns [K]
    or [T, K].  ``f_n = c~_n/|c~_n|``, ``E' = I - (F^T F)^{-1}`` (App. D.1, sign fixed).
    """
    P = _probs(probs)
    Z = np.asarray(z, dtype=float)
    single = Z.ndim == 1
    Z = np.atleast_2d(Z)
    if Z.shape[-1] != P.shape[1]:
        raise ValueError(f"z must have {P.shape[1]} columns, got {Z.shape[-1]}")
    c = P[None, :, :] * np.exp(Z[:, None, :])                      # [T, K, L]
    f = c / np.linalg.norm(c, axis=-1, keepdims=True)
    G = np.einsum("tkl,tjl->tkj", f, f)                              # F^T F = I + E
    Ep = np.eye(P.shape[0])[None] - np.linalg.inv(G)
    off = ~np.eye(P.shape[0], dtype=bool)
    out = np.where(off[None], Ep * G, 0.0).sum(axis=-1)              # [T, K]
    return out[0] if single else out


def gain_bounds(f0_sq, B) -> tuple[float, float]:
    """Theorem 3 (Eqn 12): ``e^{2 f_{n l0}(0)^2 B} <= chi_{l0}(t) <= e^{2 B}``."""
    f0_sq = _real("f0_sq", f0_sq)
    if not 0 <= f0_sq <= 1:
        raise ValueError(f"f0_sq must lie in [0, 1], got {f0_sq!r}")
    B = _nonneg("B", B)
    return math.exp(2 * f0_sq * B), math.exp(2 * B)


# ---------------------------------------------------------------------- Lemma 4 system
def reduced_system(probs, M, eta_Y, eta_Z) -> ReducedSystem:
    """Lemma 4 / Eqn 10 with Theorem 1 to leading order; all K classes share one query token.

    State (h, z_1..z_L), h = h(t/K), z_l = Z[m, l]; ``probs`` is K x L with row n = P(l|n)::

        h'  = eta_Y / (K ((M-1) + e^{M h}))
        z'  = (eta_Z/K) gamma(h) sum_n diag(f_n)(f_n f_n^T - I) sum_{n' != n} E'_{n n'} f_{n'}

    f_n = c~_n/|c~_n|, c~_nl = P(l|n) e^{z_l}, E' = I - (F^T F)^{-1} (App. D.1 with its sign
    typo fixed).  The inverse is taken of a K x K matrix of Gram *symbols* (unit diagonal) and
    the dot products f_n . f_n' substituted afterwards; nothing is simplified.  Invariants:
    ``sum_z`` (Z 1 = 0 restricted to the context tokens) and ``dt[n]:l0-l`` =
    1/c~_l0^2 - 1/c~_l^2 for each DT l of class n against its first DT l0.
    """
    P = _probs(probs)
    M = _sym_or("M", M, lambda n, v: _integer(n, v, 2))
    eta_Y = _sym_or("eta_Y", eta_Y, _positive)
    eta_Z = _sym_or("eta_Z", eta_Z, _positive)
    params = tuple(a for a in (M, eta_Y, eta_Z) if isinstance(a, sp.Symbol))
    M, eta_Y, eta_Z = (a if isinstance(a, sp.Symbol) else sp.nsimplify(a) for a in (M, eta_Y, eta_Z))
    return _reduced_system_cached(tuple(map(tuple, P.tolist())), M, eta_Y, eta_Z, params)


@lru_cache(maxsize=32)
def _reduced_system_cached(P_rows: tuple, M, eta_Y, eta_Z, params) -> ReducedSystem:
    P = np.array(P_rows, dtype=float)
    K, L = P.shape
    z = sp.symbols(f"z_1:{L + 1}", real=True)
    Prat = [[sp.nsimplify(P[n, j], rational=True) if P[n, j] > 0 else sp.S.Zero
             for j in range(L)] for n in range(K)]
    ctil = [[Prat[n][j] * sp.exp(z[j]) for j in range(L)] for n in range(K)]
    norm = [sp.sqrt(sum((c**2 for c in ctil[n] if c != 0), sp.S.Zero)) for n in range(K)]
    f = [[ctil[n][j] / norm[n] for j in range(L)] for n in range(K)]
    # Gram symbols g_{nn'} (unit diagonal), inverted symbolically, substituted at the end.
    g = {}
    G = sp.eye(K)
    for a in range(K):
        for b in range(a + 1, K):
            s = sp.Symbol(f"g_{a}{b}", real=True)
            g[(a, b)] = s
            G[a, b] = G[b, a] = s
    Ginv = G.adjugate() / G.det() if K > 1 else sp.eye(1)
    Eprime = sp.eye(K) - Ginv  # E' = I - (I + E)^{-1}
    gram = {s: sum((f[a][j] * f[b][j] for j in range(L)), sp.S.Zero) for (a, b), s in g.items()}

    gamma = _gamma_expr(H, M)
    zdot = []
    for j in range(L):
        total = sp.S.Zero
        for n in range(K):
            if f[n][j] == 0:
                continue
            proj = sum((Eprime[n, k] * G[n, k] for k in range(K) if k != n), sp.S.Zero)
            mix = sum((Eprime[n, k] * f[k][j] for k in range(K) if k != n), sp.S.Zero)
            total += f[n][j] * (f[n][j] * proj - mix)
        zdot.append((eta_Z / K) * gamma * total.xreplace(gram))
    hdot = eta_Y / (K * ((M - 1) + sp.exp(M * H)))
    invariants = {"sum_z": sum(z, sp.S.Zero)}
    support = P > 0
    count = support.sum(axis=0)
    for n in range(K):
        dts = [j for j in range(L) if support[n, j] and count[j] == 1]
        for j in dts[1:]:
            invariants[f"dt[{n}]:{dts[0]}-{j}"] = (
                sp.exp(-2 * z[dts[0]]) / Prat[n][dts[0]] ** 2 - sp.exp(-2 * z[j]) / Prat[n][j] ** 2
            )
    return ReducedSystem(
        state=(H, *z),
        params=params,
        rhs=sp.Matrix([hdot, *zdot]),
        invariants=invariants,
        assumptions=(
            "Lemma 4 / Eqn 10 (T -> infinity), Theorem 1 to leading order "
            "(g_n = gamma F (I - E') e_n), one shared query token, uniform classes "
            "(P(n) = 1/K, per-sample time), Z(0) = 0 not required."
        ),
        name="scan_snap.reduced_system",
    )


# ---------------------------------------------------------------------- equations
def equations() -> list[Equation]:
    """The derived results, for ``tdcheck equations scan_snap`` (arXiv v4 numbering)."""
    M, K, eY, eZ, C0, t = M_SYM, K_SYM, ETA_Y, ETA_Z, C0_SYM, T_SYM
    h_t = sp.Function("h")(t / K)
    gamma = _gamma_expr(h_t, M)
    Gamma = eZ * K * (M - 1) ** 2 * h_t**2 / (2 * eY)
    snap = snap_system(M, K, eY, eZ, C0)
    two = reduced_system([[0.5, 0.25, 0.25, 0.0], [0.0, 0.25, 0.25, 0.5]], M, eY, eZ)
    x = sp.Symbol("x", positive=True)
    s = sp.Symbol("s")
    hstar = sp.Function("h^*")
    return [
        Equation("Lemma 6 implicit h(t)",
                 sp.Eq(sp.exp(M * H) + (M - 1) * M * H, M * eY * t + 1), "Lemma 6, Eqn 44-45"),
        Equation("Lemma 5 h*(s)",
                 sp.Eq(hstar(s), hstar(s - 1) + eY / ((M - 1) + sp.exp(M * hstar(s - 1)))),
                 "Lemma 5, Eqn 33"),
        Equation("Lemma 7 gap bound", 2 * eY / M, "Lemma 7"),
        Equation("loss on Lemma 5's decoder", _decoder_loss_expr(),
                 "our derivation: cross-entropy of w_n = (M-1) h zeta_n"),
        Equation("q_1 = zeta_i . zeta_i", _zeta_overlap_exprs()[0], "Section 2 notation"),
        Equation("q_0 = zeta_i . zeta_j", _zeta_overlap_exprs()[1], "Section 2 notation"),
        Equation("speed control gamma(t)", gamma, "Theorem 1, Eqn 9 (continuous t/K)"),
        Equation("Gamma(t) = eta_Z int gamma", Gamma, "Eqn 118-129 (sympy-checked)"),
        Equation("B(t) (Thm 4, corrected)", sp.log(1 + 4 * Gamma / C0) / 4,
                 "Theorem 4 with -1/4 ln C0 restored"),
        Equation("B(t) printed (Eqn 14/129)", sp.log(C0 + 4 * Gamma) / 4,
                 "Eqn 14/129 as printed (B(0) != 0)"),
        Equation("4 Gamma early (Eqn 14)", 2 * (M - 1) ** 2 * eY * eZ * t**2 / (K * M**2),
                 "Eqn 14, t < t0'"),
        Equation("4 Gamma late (Eqn 14)",
                 2 * K * (M - 1) ** 2 * (eZ / eY) * sp.log(M * eY * t / K) ** 2 / M**2,
                 "Eqn 14, t >= t0"),
        Equation("t0' (scan)", K * sp.log(M) / eY, "Lemma 9"),
        Equation("t0 (snap)", 2 * K * sp.log(M) / eY, "Theorem 4"),
        Equation("gamma peak, x = M h", sp.Eq(sp.exp(x) * (x - 1), M - 1),
                 "our derivation (d gamma/dh = 0 in Theorem 1's gamma)"),
        Equation("snap system dh/dt", snap.rhs[0], "Lemma 9 with per-sample time"),
        Equation("snap system dz/dt", snap.rhs[1], "Theorem 4, Eqn 13"),
        Equation("snap invariant", snap.invariants["snap"],
                 "Eqn 118-129: e^{-4z} = 1 + 4 Gamma/C0"),
        Equation("reduced system dh/dt", two.rhs[0], "Lemma 6 on t/K"),
        Equation("reduced system dz_1/dt (K=2, DT of class 1)", two.rhs[1],
                 "Lemma 4 / Eqn 10 with P(n) = 1/K"),
        Equation("reduced system dz_2/dt (K=2, CT)", two.rhs[2],
                 "Lemma 4 / Eqn 10 with P(n) = 1/K"),
    ]
