"""Markov chains and initialisation: Makkuva et al., *Local to Global* (NeurIPS 2024).

Reduced theory of a single-layer transformer trained on a binary first-order Markov chain
with kernel ``P = [[1-p, p], [q, 1-q]]``.  The paper's own equation numbers were not
available to us, so references below name the paper's objects (its canonical parameters,
reduced loss, energy, Fig. 1) and, where a formula comes from there, the authors' code
(github.com/Bond1995/Markov: Markov-Fixed/src/models/base.py for the canonical model,
Markov-Fixed/energy/contour_plot.py for the landscape).

Canonical parameters (the paper's canonical model; the authors' code, Markov-Fixed)::

    logit(x_n) = e^2 (1 + 2 w|w|) x_n + b - e^2/2,   f0 = logit(0),  f1 = logit(1)
    u = f1 - f0 = e^2 (1 + 2 w|w|)                   (the parameterisation-free "gap")

Everything here is *derived* with sympy from the population loss of that model; the closed
forms the authors' code uses (b*, the energy, the separatrix level) and the ones we derived
(u*, l'(0), l''(u*)) are re-derived, and the tests compare the derivation with those forms.

Choices made where the paper is ambiguous (say so in reports):

* ``bias="optimal"`` (b eliminated by its optimum b*, the authors' phase portraits) is the
  system whose energy is conserved; ``bias="trained"`` is the authors' trainable canonical
  model (Markov-Fixed), for which the energy is *not* conserved (shown by ``drift``).
* Points with ``e0 = 0`` stay on the unigram line forever; ``basin`` calls them "local".
  ``w = 0`` is invariant; for p+q > 1 it lies in the local basin, for p+q < 1 in the
  global one (our reading of the basins of Fig. 1b/d, which put w >= 0 in I_min for
  p+q > 1).
* The attention extension ``(e, w, a)`` is **our reconstruction, unverified** against the
  paper (its text was unavailable).  The review quotes the canonical attention score
  ``attn_{n,i} = a (x_n - 1/2)(x_i - 1/2)`` (the paper's Eq. 45) with linear attention.
  We take values ``v_i = h_i = e (x_i - 1/2) alpha`` (W_O W_V acting as identity on the
  rank-one direction, its scale absorbed in ``a``) and the causal *mean* over the past
  (1/n normalisation, as a softmax would give a convex combination).  Because
  ``(x_i - 1/2)^2 = 1/4`` for binary symbols, the attention output is exactly
  ``(a/4) h_n``: the pre-FF signal is ``e (1 + a/4)(x_n - 1/2) alpha``.  With the ReLU
  block of the canonical model and tied output this gives, on the branch
  ``e (1 + a/4) > 0``, ``u(e, w, a) = e^2 (1 + a/4)(1 + 2 w|w|)`` and
  ``f0 = b - e^2 (1 + a/4)/2``.  A sum instead of a mean would make the factor
  position-dependent (``n a / 4``).

Float twins (``*_twin``, :class:`theory.flow.Twin`) are lambdified from these functions'
own expressions, for numerics, verify and figures.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

import sympy as sp

from theory.flow import Equation, InadmissibleTheory, ReducedSystem, Twin, gradient_flow

__all__ = [
    "C1",
    "C2",
    "NPOS",
    "S_POS",
    "A",
    "B",
    "E",
    "P",
    "Q",
    "U",
    "W",
    "attention_gap",
    "attention_invariant",
    "attention_system",
    "authors_optimal_bias",
    "basin",
    "bigram_loss",
    "binary_entropy",
    "canonical_from_logits",
    "canonical_from_logits_torch",
    "canonical_metric",
    "canonical_projection",
    "critical_type",
    "energy",
    "energy_twin",
    "equations",
    "ff_gain",
    "ff_gain_twin",
    "gap",
    "gap_gradient",
    "gap_gradient_twin",
    "gap_twin",
    "global_min_curvature",
    "logits",
    "logits_twin",
    "loss_from_logits",
    "metric_system",
    "optimal_bias",
    "optimal_gap",
    "optimal_logit0",
    "profile_curvature_at_optimum",
    "profile_loss",
    "profile_slope_at_zero",
    "rank_one_image",
    "rank_one_kinks",
    "rank_one_kinks_twin",
    "rank_one_logits",
    "rank_one_logits_twin",
    "rank_one_metric",
    "rank_one_state",
    "rank_one_system",
    "reduced_loss",
    "saddle_point",
    "separatrix_energy",
    "small_init_trapped",
    "stable_profile_loss",
    "stationary_distribution",
    "stationary_twin",
    "structured_system",
    "symmetric_bigram_loss",
    "symmetric_partition_levels",
    "symmetric_partition_loss",
    "symmetric_unigram_loss",
    "system",
    "unigram_curvature",
    "unigram_loss",
]

# ``tdcheck mutate``: public functions no claim can judge, with the reason (they still count
# as survivors).  No function needs a delta other than the engine's 5 %.  Equivalent
# mutants, argued here because UNJUDGED names whole functions: ``saddle_point``'s first
# entry is the exact zero e = 0 (the saddle lies on the unigram line), so its three mutants
# (x 1.05, x 0.95, sign) return that same 0 and no check can tell them from the original;
# its second entry, w = -1/sqrt 2, is judged by markov.basins' starts either side of it.
_RECONSTRUCTION = ("our reconstruction of the paper's (e, w, a) model, unverified against the "
                   "paper (its text was unavailable): no statement of the paper to judge, so "
                   "no claim; tests/test_theory_markov.py holds its invariants and its a = 0 "
                   "slice")
UNJUDGED = {
    "attention_gap": _RECONSTRUCTION,
    "attention_system": _RECONSTRUCTION,
    "attention_invariant": _RECONSTRUCTION + "; besides, a conserved quantity is fixed only up "
                           "to a non-zero factor, so every mutant the engine makes of it (a "
                           "scale, a sign) is conserved as well",
}

# State and parameter symbols.  Upper-case names are the public handles.
E = sp.Symbol("e", real=True)
W = sp.Symbol("w", real=True)
B = sp.Symbol("b", real=True)
A = sp.Symbol("a", real=True)
U = sp.Symbol("u", real=True)
P = sp.Symbol("p", positive=True)
Q = sp.Symbol("q", positive=True)
_WPOS = sp.Symbol("W", positive=True)  # |w| on the branches w > 0 and w < 0
_BRANCHES = ({W: _WPOS}, {W: -_WPOS})


# ---------------------------------------------------------------------- validation
def _num(value) -> sp.Expr:
    expr = sp.sympify(value)
    return expr


def _prob(name: str, value) -> sp.Expr:
    expr = _num(value)
    if expr.is_number:
        if not expr.is_real or not (0 < float(expr) < 1):
            raise InadmissibleTheory(f"{name} must lie in (0, 1), got {value}")
    return expr


def _pq(p, q) -> tuple[sp.Expr, sp.Expr]:
    return _prob("p", p), _prob("q", q)


def _real(name: str, value) -> sp.Expr:
    expr = _num(value)
    if expr.is_number and (not expr.is_real or not expr.is_finite):
        raise InadmissibleTheory(f"{name} must be a finite real number, got {value}")
    return expr


def _log_sigmoid(x: sp.Expr) -> sp.Expr:
    return -sp.log(1 + sp.exp(-x))


# ---------------------------------------------------------------------- data
def stationary_distribution(p, q) -> tuple[sp.Expr, sp.Expr]:
    """(pi0, pi1) = (q, p)/(p+q), the stationary law of the chain."""
    p, q = _pq(p, q)
    return q / (p + q), p / (p + q)


def binary_entropy(x) -> sp.Expr:
    """h(x) = -x ln x - (1-x) ln(1-x), in nats."""
    x = _prob("x", x)
    return -x * sp.log(x) - (1 - x) * sp.log(1 - x)


def unigram_loss(p, q) -> sp.Expr:
    """H(pi): loss of the best predictor that ignores x_n (the paper's unigram loss)."""
    _, pi1 = stationary_distribution(p, q)
    return binary_entropy(pi1)


def bigram_loss(p, q) -> sp.Expr:
    """Entropy rate H_rate = [q h(p) + p h(q)]/(p+q), in nats (the paper's bigram loss)."""
    p, q = _pq(p, q)
    return (q * binary_entropy(p) + p * binary_entropy(q)) / (p + q)


def optimal_gap(p, q) -> sp.Expr:
    """u* = ln[(1-p)(1-q)/(pq)]: the gap f1 - f0 of the Bayes predictor (our derivation)."""
    p, q = _pq(p, q)
    return sp.log((1 - p) * (1 - q) / (p * q))


def symmetric_unigram_loss(states) -> sp.Expr:
    """ln S: the unigram loss of the symmetric S-state chain (uniform stationary law; the
    authors' code, Markov-Simple, vocabulary S > 2)."""
    states = _num(states)
    if states.is_number and not (states.is_integer and states >= 2):
        raise ValueError(f"states must be an integer >= 2, got {states}")
    return sp.log(states)


def symmetric_bigram_loss(p, states) -> sp.Expr:
    """h(p) + p ln(S - 1): the entropy rate of the symmetric S-state chain that stays with
    probability 1 - p and moves to each other state with p/(S - 1) (the authors' code,
    Markov-Simple)."""
    symmetric_unigram_loss(states)  # validates states
    return binary_entropy(p) + _prob("p", p) * sp.log(_num(states) - 1)


def _symmetric_kernel(p, states) -> sp.Matrix:
    """The symmetric S-state kernel: stay with 1 - p, move to each other state with
    p/(S - 1) (the authors' code, Markov-Simple)."""
    symmetric_unigram_loss(states)  # validates states
    p, s = _prob("p", p), int(_num(states))
    return sp.Matrix(s, s, lambda i, j: 1 - p if i == j else p / (s - 1))


def symmetric_partition_loss(p, blocks) -> sp.Expr:
    """H(x_{n+1} | block of x_n): the loss of the best next-token predictor that sees only
    which block of a partition of the S = sum(blocks) states x_n lies in [our derivation].

    Computed from the kernel: the predictor's row on a block is the stationary mixture of
    the block's rows of P (the stationary law is uniform), and its loss is that row's
    entropy, weighted by the block's stationary mass.  One block of S states is the
    unigram predictor (ln S), S blocks of one state the bigram one (the entropy rate); the
    partitions in between are the partial solutions that tell some states apart and
    merge the rest (a predictor whose embedding maps a block's states to one point)."""
    blocks = tuple(int(m) for m in blocks)
    if not blocks or min(blocks) < 1:
        raise ValueError(f"blocks must be positive block sizes, got {blocks}")
    kernel = _symmetric_kernel(p, sum(blocks))
    s = sum(blocks)
    loss, start = sp.Integer(0), 0
    for m in blocks:
        rows = range(start, start + m)
        start += m
        mix = [sum(kernel[i, j] for i in rows) / m for j in range(s)]
        loss += sp.Rational(m, s) * -sum(x * sp.log(x) for x in mix)
    return loss


def symmetric_partition_levels(p, states) -> dict[tuple[int, ...], sp.Expr]:
    """{block sizes: :func:`symmetric_partition_loss`} over every partition of the S
    states up to relabelling (the kernel is symmetric, so only the block sizes matter),
    from (S,) (unigram) to (1,) * S (bigram); block sizes in increasing order."""
    from sympy.utilities.iterables import partitions

    symmetric_unigram_loss(states)  # validates states
    out = {}
    for part in partitions(int(_num(states))):
        blocks = tuple(sorted(m for m, k in part.items() for _ in range(k)))
        out[blocks] = symmetric_partition_loss(p, blocks)
    return out


# ---------------------------------------------------------------------- reduced loss
def ff_gain(w) -> sp.Expr:
    """1 + 2 w|w|: the gain of the ReLU feed-forward block on the canonical logit (the
    paper's canonical model; the authors' code, Markov-Fixed/src/models/base.py)."""
    w = _real("w", w)
    return 1 + 2 * w * sp.Abs(w)


def gap(e, w) -> sp.Expr:
    """u = e^2 (1 + 2 w|w|), the gap f1 - f0 of the canonical logits."""
    return _real("e", e) ** 2 * ff_gain(w)


def gap_gradient(e, w) -> tuple[sp.Expr, sp.Expr]:
    """(du/de, du/dw) of :func:`gap`: the normal of the level sets u = const (our
    derivation; the critical set Gamma* = {u = u*} is one of them)."""
    u = gap(E, W)
    grad = (sp.diff(u, E), sp.diff(u, W))
    return tuple(g.subs({E: _real("e", e), W: _real("w", w)}, simultaneous=True) for g in grad)


def logits(e, w, b) -> tuple[sp.Expr, sp.Expr]:
    """(f0, f1): the canonical logits at x_n = 0 and x_n = 1 (the paper's canonical model)."""
    b = _real("b", b)
    f0 = b - _real("e", e) ** 2 / 2
    return f0, f0 + gap(e, w)


def loss_from_logits(f0, f1, p, q) -> sp.Expr:
    """Population BCE of a predictor that outputs sigma(f_{x_n}), in nats (the paper's
    reduced loss; the authors' code, contour_plot.py)."""
    p, q = _pq(p, q)
    pi0, pi1 = stationary_distribution(p, q)
    return -pi1 * (q * _log_sigmoid(-f1) + (1 - q) * _log_sigmoid(f1)) - pi0 * (
        p * _log_sigmoid(f0) + (1 - p) * _log_sigmoid(-f0)
    )


def reduced_loss(e, w, b, p, q) -> sp.Expr:
    """L(e, w, b): the population loss of the canonical model."""
    f0, f1 = logits(e, w, b)
    return loss_from_logits(f0, f1, p, q)


@lru_cache(maxsize=1)
def _optimal_logit0_generic() -> sp.Expr:
    """Derive f0*(u): solve dL/df0 = 0 at fixed gap u.

    With z = exp(f0) the condition is a quadratic in z; we keep its positive root.
    """
    f0 = sp.Symbol("f0", real=True)
    z = sp.Symbol("z", positive=True)
    condition = sp.diff(loss_from_logits(f0, f0 + U, P, Q), f0)
    numerator = sp.numer(sp.together(condition.subs(f0, sp.log(z))))
    roots = sp.solve(sp.expand(numerator), z)
    probe = {U: sp.Rational(3, 10), P: sp.Rational(1, 2), Q: sp.Rational(4, 5)}
    values = [complex(sp.N(r.subs(probe), 30)) for r in roots]
    positive = [r for r, v in zip(roots, values, strict=True)
                if v.real > 0 and abs(v.imag) <= 1e-20 * abs(v)]
    if len(positive) != 1:
        raise InadmissibleTheory("expected one positive root of the bias condition at "
                                 f"(u, p, q) = (3/10, 1/2, 4/5), got the values {values}")
    return sp.log(positive[0])


def optimal_logit0(u, p, q) -> sp.Expr:
    """f0*(u) = argmin over b of the loss at fixed gap u (our derivation)."""
    p, q = _pq(p, q)
    return _optimal_logit0_generic().subs({U: _real("u", u), P: p, Q: q}, simultaneous=True)


@lru_cache(maxsize=1)
def _stable_logit0_generic() -> sp.Expr:
    """f0*(u) in a form free of cancellation, for numerics.

    The derived root ``z = (p - q + sqrt(D)) / (2 q e^u)``, D = (p-q)^2 + 4 p q e^u, loses
    all digits when q > p and e^u << 1 (numerator ~ 0).  Rationalising gives the equal
    ``z = 2 p / (sqrt(D) + q - p)``, stable exactly there; each form is used where it is
    stable.  (Equality of the two forms is a test.)
    """
    d = (P - Q) ** 2 + 4 * P * Q * sp.exp(U)
    derived = sp.log((P - Q + sp.sqrt(d)) / (2 * Q * sp.exp(U)))
    rationalised = sp.log(2 * P / (sp.sqrt(d) + Q - P))
    return sp.Piecewise((rationalised, Q >= P), (derived, True))


def stable_profile_loss(u, p, q) -> sp.Expr:
    """l(u) built on the cancellation-free f0* (what the numerical systems integrate)."""
    p, q = _pq(p, q)
    u = _real("u", u)
    f0 = _stable_logit0_generic().subs({U: u, P: p, Q: q}, simultaneous=True)
    return loss_from_logits(f0, f0 + u, p, q)


def optimal_bias(e, w, p, q) -> sp.Expr:
    """b*(e, w) = e^2/2 + f0*(u(e, w)) (the authors' code, contour_plot.py; derived here)."""
    return _real("e", e) ** 2 / 2 + optimal_logit0(gap(e, w), p, q)


def authors_optimal_bias(e, w, p, q) -> sp.Expr:
    """b*(e, w) as the authors' code writes it (Markov-Fixed/energy/contour_plot.py):
    ``e^2/2 + ln[(p - q + sqrt((p - q)^2 + 4 p q K)) / (2 q K)]``, ``K = exp(u(e, w))``.

    Typed from their closed form, not derived: an independent reference for
    :func:`optimal_bias`, which solves dL/db = 0 with sympy."""
    p, q = _pq(p, q)
    e = _real("e", e)
    k = sp.exp(gap(e, w))
    return e**2 / 2 + sp.log((p - q + sp.sqrt((p - q) ** 2 + 4 * p * q * k)) / (2 * q * k))


def profile_loss(u, p, q) -> sp.Expr:
    """l(u) = min_b L: the loss as a function of the gap alone (the paper's L(e, w))."""
    f0 = optimal_logit0(u, p, q)
    return loss_from_logits(f0, f0 + _real("u", u), p, q)


@lru_cache(maxsize=1)
def _slope_generic() -> sp.Expr:
    slope = sp.diff(profile_loss(U, P, Q), U).subs(U, 0)
    # sqrt((p+q)^2) -> p+q needs the radicand factored first (p, q > 0).
    slope = slope.replace(
        lambda x: x.is_Pow and x.exp == sp.S.Half, lambda x: sp.sqrt(sp.factor(x.base))
    )
    return sp.factor(sp.simplify(slope))


def profile_slope_at_zero(p, q) -> sp.Expr:
    """l'(0), derived (equal to pq(p+q-1)/(p+q)^2, our derivation); its sign is that of p+q-1.

    At numeric p, q the derivative of the profile is taken at those values and not
    simplified (the same number): simplifying the generic form is what the symbolic
    result needs, and on a slightly perturbed profile (a mutant of optimal_logit0 scaled by
    101/100) it ran for minutes where the numeric derivative takes about a second."""
    p, q = _pq(p, q)
    if p.is_number and q.is_number:
        return sp.diff(profile_loss(U, p, q), U).subs(U, 0)
    return _slope_generic().subs({P: p, Q: q}, simultaneous=True)


@lru_cache(maxsize=1)
def _curvature_generic() -> sp.Expr:
    return sp.diff(profile_loss(U, P, Q), U, 2).subs({U: optimal_gap(P, Q)})


def profile_curvature_at_optimum(p, q) -> sp.Expr:
    """l''(u*), from the derived profile (equal to pq(1-p)(1-q)/((p+q)(2-p-q)), our derivation)."""
    p, q = _pq(p, q)
    return _curvature_generic().subs({P: p, Q: q}, simultaneous=True)


def unigram_curvature(w, p, q) -> sp.Expr:
    """The non-zero Hessian eigenvalue of L(e, w) = l(u(e, w)) at the unigram point (0, w):
    ``2 l'(0) (1 + 2 w|w|)`` (our derivation: at e = 0, d^2 u/de^2 = 2 (1 + 2w|w|) and every
    other second derivative of u, and du/de, vanish, so the Hessian is diagonal with this
    e-entry and a zero w-entry)."""
    return 2 * profile_slope_at_zero(p, q) * ff_gain(w)


def global_min_curvature(e, w, p, q) -> sp.Expr:
    """The non-zero Hessian eigenvalue of L(e, w) on Gamma* = {u = u*}: ``l''(u*) |grad u|^2``
    (our derivation: the Hessian is l''(u) grad u grad u^T + l'(u) Hess u, and l'(u*) = 0,
    so it is rank one along grad u; the tangent of Gamma* is the flat direction)."""
    du_de, du_dw = gap_gradient(e, w)
    return profile_curvature_at_optimum(p, q) * (du_de**2 + du_dw**2)


# ---------------------------------------------------------------------- energy
def energy(e, w) -> sp.Expr:
    """E = e^2 - w^2 - sign(w) ln|w|, conserved by the b*-flow (w != 0): the paper's energy
    (Fig. 1a/c contours; the authors' code, contour_plot.py)."""
    e, w = _real("e", e), _real("w", w)
    if w.is_number and w == 0:
        raise ValueError("w must be non-zero (the energy is undefined on w = 0), got 0")
    return e**2 - w**2 - sp.sign(w) * sp.log(sp.Abs(w))


@lru_cache(maxsize=1)
def _k_minimum() -> tuple[sp.Expr, sp.Expr]:
    """Minimise k(t) = t^2 - ln t over t > 0 (E = e^2 - k(|w|) on w < 0)."""
    t = sp.Symbol("t", positive=True)
    k = t**2 - sp.log(t)
    (t_star,) = sp.solve(sp.diff(k, t), t)
    return t_star, sp.simplify(k.subs(t, t_star))


def separatrix_energy() -> sp.Expr:
    """E_sep = -min_t (t^2 - ln t) = -(1 + ln 2)/2: the level through the saddle."""
    return sp.simplify(-_k_minimum()[1])


def saddle_point() -> tuple[sp.Expr, sp.Expr]:
    """(e, w) of the degenerate saddle on the unigram line: (0, -1/sqrt 2)."""
    return sp.S.Zero, -_k_minimum()[0]


# ---------------------------------------------------------------------- systems
def system(
    p=P, q=Q, bias: Literal["optimal", "trained"] = "optimal"
) -> ReducedSystem:
    """Gradient flow of the canonical model (the paper's Fig. 1 flow).

    ``bias="optimal"``: state (e, w), loss l(u(e, w)) with b = b*(e, w); conserves the
    energy.  ``bias="trained"``: state (e, w, b), loss L(e, w, b) (the authors'
    Markov-Fixed model); the energy is listed so that its drift can be shown non-zero.
    ``p``, ``q`` left symbolic become the system's parameters.
    """
    p, q = _pq(p, q)
    params = tuple(s for s in (p, q) if isinstance(s, sp.Symbol))
    inv = {"energy": energy(E, W)}
    if bias == "optimal":
        loss = stable_profile_loss(gap(E, W), p, q)
        return gradient_flow(
            loss,
            (E, W),
            params,
            invariants=inv,
            branches=_BRANCHES,
            name="markov (e, w), b = b*",
            assumptions="b eliminated by its optimum b*(e, w) (the authors' phase portraits)",
        )
    if bias == "trained":
        return gradient_flow(
            reduced_loss(E, W, B, p, q),
            (E, W, B),
            params,
            invariants=inv,
            branches=_BRANCHES,
            name="markov (e, w, b)",
            assumptions="b trained jointly, as in the authors' Markov-Fixed model",
        )
    raise ValueError(f"bias must be 'optimal' or 'trained', got {bias!r}")


def structured_system() -> ReducedSystem:
    """The b*-flow with the profile l(u) left abstract: L(e, w) = l(u(e, w)).

    Shows the structure e' = -l'(u) du/de, w' = -l'(u) du/dw, and proves energy
    conservation for *every* profile l (the drift is l'(u) times grad E . grad u = 0).
    """
    ell = sp.Function("ell")
    return gradient_flow(
        ell(gap(E, W)),
        (E, W),
        (),
        invariants={"energy": energy(E, W)},
        branches=_BRANCHES,
        name="markov (e, w), l abstract",
        assumptions="L depends on (e, w) only through u",
    )


def attention_gap(e, w, a) -> sp.Expr:
    """u(e, w, a) = e^2 (1 + a/4)(1 + 2 w|w|): the gap with the attention scalar a (our
    reconstruction of the paper's L(e, w, a), unverified; module doc)."""
    return _real("e", e) ** 2 * (1 + _real("a", a) / 4) * ff_gain(w)


def attention_invariant(e, a) -> sp.Expr:
    """e^2 - 2 (a + 4)^2: conserved by the (e, w, a) flow of :func:`attention_system` (our
    derivation: grad of it is orthogonal to grad u in (e, a))."""
    return _real("e", e) ** 2 - 2 * (_real("a", a) + 4) ** 2


def attention_system(p=P, q=Q) -> ReducedSystem:
    """(e, w, a) flow with b = b*: our reconstruction of the paper's L(e, w, a) (module doc).

    u(e, w, a) = e^2 (1 + a/4)(1 + 2 w|w|).  Invariants: the energy of the (e, w) model and
    ``attention`` = e^2 - 2 (a + 4)^2 (found by solving grad(Q).grad(u) = 0 in (e, a)).
    """
    p, q = _pq(p, q)
    params = tuple(s for s in (p, q) if isinstance(s, sp.Symbol))
    return gradient_flow(
        stable_profile_loss(attention_gap(E, W, A), p, q),
        (E, W, A),
        params,
        invariants={"energy": energy(E, W), "attention": attention_invariant(E, A)},
        branches=_BRANCHES,
        name="markov (e, w, a), b = b* [reconstruction]",
        assumptions="linear attention, score a(x_n-1/2)(x_i-1/2), causal mean (module doc)",
    )


# ---------------------------------------------------------------------- critical set
def critical_type(w, p, q) -> Literal["min", "max", "saddle"]:
    """Predicted type of the unigram point (0, w) (Fig. 1a/c markers; our derivation).

    L ~ H(pi) + l'(0) e^2 (1 + 2 w|w|) near e = 0, so the type is the sign of
    (p+q-1)(1+2w|w|): positive -> (non-strict) min, negative -> max, zero -> saddle.
    """
    p, q = _pq(p, q)
    value = float(profile_slope_at_zero(p, q) * ff_gain(w))
    if abs(value) < 1e-15:
        return "saddle"
    return "min" if value > 0 else "max"


def basin(e0, w0, p, q) -> Literal["global", "local"]:
    """Which minimum the b*-flow from (e0, w0) reaches, from the energy alone (the basins
    I* and I_min of Fig. 1b/d; the authors' code, regions1/2.pdf; our derivation).

    Uses that E is conserved and sign(w) invariant: on w < 0, E = e^2 - k(|w|) with
    k(t) = t^2 - ln t; trajectories reach the unigram line only where their level meets it.
    """
    p, q = _pq(p, q)
    e0, w0 = float(_real("e0", e0)), float(_real("w0", w0))
    s = float(p + q)
    if abs(s - 1) < 1e-15:
        raise ValueError("p + q must differ from 1 (at p + q = 1 the landscape is degenerate)")
    if e0 == 0:
        return "local"  # the unigram line is invariant
    w_saddle, e_sep = _saddle_floats()
    # E = e^2 - k(|w|) on w < 0, the energy's float twin (this function is called on grids)
    below_separatrix = w0 < 0 and float(energy_twin(e0, w0)) < e_sep
    if s > 1:
        if w0 >= 0:
            return "local"
        if w0 <= w_saddle:
            return "global"
        return "local" if below_separatrix else "global"
    # p + q < 1
    if w0 < w_saddle and below_separatrix:
        return "local"
    return "global"


@lru_cache(maxsize=1)
def _saddle_floats() -> tuple[float, float]:
    return float(saddle_point()[1]), float(separatrix_energy())


def _transition_trace(p, q, states=2) -> sp.Expr:
    """tr P of the chain: ``2 - p - q`` for the binary kernel, ``S (1 - p)`` for the symmetric
    S-state kernel (stay 1 - p, move to each other state with p/(S - 1); the authors' code,
    Markov-Simple).  For S = 2 both forms agree when p = q."""
    states = _num(states)
    if states == 2:
        p, q = _pq(p, q)
        return 2 - p - q
    symmetric_unigram_loss(states)  # validates states
    return states * (1 - _prob("p", p))


def small_init_trapped(p, q, states=2) -> bool:
    """Whether a small initialisation near the origin ends at the unigram level.

    Binary chain (the paper, Fig. 1b/d): a small init lies in the local basin I_min iff the
    unigram line is a local minimum next to the origin, i.e. the profile slope l'(0) > 0
    (its sign is that of p + q - 1, i.e. tr P < 1).  Symmetric S-state chain: the
    conjectured analogue, tr P = S (1 - p) < 1, i.e. p > (S - 1)/S (our hypothesis for the
    reviewers' question; not stated by the paper)."""
    if int(states) == 2:
        return bool(float(profile_slope_at_zero(p, q)) > 0)
    return bool(float(_transition_trace(p, q, states)) < 1)


def canonical_from_logits(e, f0, f1) -> tuple[sp.Expr, sp.Expr]:
    """(w, b) of the canonical model with token scalar ``e`` and logits (f0, f1): the
    inverse of :func:`logits` (b = f0 + e^2/2, and w from the FF gain 2 w|w| = u/e^2 - 1;
    our reading of the canonical map, applied to a full model's measured logits)."""
    e, f0, f1 = _real("e", e), _real("f0", f0), _real("f1", f1)
    g = (f1 - f0) / e**2 - 1
    return sp.sign(g) * sp.sqrt(sp.Abs(g) / 2), f0 + e**2 / 2


# ---------------------------------------------------------------------- rank-one restriction
S_POS = sp.Symbol("s", real=True)
C1 = sp.Symbol("c1", real=True)
C2 = sp.Symbol("c2", real=True)
NPOS = sp.Symbol("N", positive=True)


def rank_one_logits(e, s, c1, c2, b) -> tuple[sp.Expr, sp.Expr]:
    """(f0, f1) of the full model restricted to the rank-one manifold [our derivation].

    With unit vectors alpha (R^d) and u = 1/sqrt(4d) (R^{4d}): wte = e alpha, every
    wpe_n = s alpha, W_1 = c1 u alpha^T, W_2 = c2 alpha u^T and W_V = W_O = 0, the
    single-layer model (the full model of numerics.markov) gives ``logit(x) = e (e x + s + c2 [c1 (e x + s)]_+) + b``.
    The paper's canonical model is the slice s = -e/2, c1 = 2|w|, c2 = 2w.
    """
    def logit(x):
        pre = e * x + s
        return e * (pre + c2 * sp.Max(0, c1 * pre)) + b

    return logit(0), logit(1)


def rank_one_kinks(e, s) -> tuple[sp.Expr, sp.Expr]:
    """The ReLU inputs of :func:`rank_one_logits` at x = 0 and x = 1 divided by c1,
    (s, e + s): the restriction's flow has a kink where either vanishes (our derivation)."""
    e, s = _real("e", e), _real("s", s)
    return s, e + s


def rank_one_metric(positions=NPOS) -> tuple[sp.Expr, ...]:
    """The Euclidean metric of the full parameters in the restriction's coordinates
    (e, s, c1, c2, b), diagonal, as its diagonal (1, N', 1, 1, 1) [our derivation].

    wte = e alpha, W_1 = c1 u alpha^T and W_2 = c2 alpha u^T move along unit directions
    (|alpha| = |u alpha^T|_F = 1), b is a scalar, and s sets the N' position rows that
    carry a target (the last position's output is not scored, so its row is not a
    parameter of the loss), each s alpha: |d wpe|^2 = N' ds^2."""
    return sp.S.One, sp.sympify(positions), sp.S.One, sp.S.One, sp.S.One


def rank_one_image(e, w, b) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """The paper's canonical (e, w, b) as a rank-one state (e, s, c1, c2, b) =
    (e, -e/2, 2|w|, 2w, b): the slice of :func:`rank_one_logits` that gives the canonical
    logits (:func:`logits`) for e > 0 (our derivation)."""
    e, w, b = _real("e", e), _real("w", w), _real("b", b)
    return e, -e / 2, 2 * sp.Abs(w), 2 * w, b


def _canonical_jacobian() -> sp.Matrix:
    """d(e, s, c1, c2, b)/d(e, w, b) of :func:`rank_one_image` (5 x 3; depends on sign w)."""
    return sp.Matrix(rank_one_image(E, W, B)).jacobian(sp.Matrix([E, W, B]))


def canonical_metric(positions=NPOS) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """G = J^T M J: the pull-back of the full parameters' Euclidean metric M
    (:func:`rank_one_metric`) through the canonical map :func:`rank_one_image`, J its
    Jacobian [our derivation].  Derived on both sign branches of w (J depends on sign w
    through |w|); the two agree, and G is diagonal (checked) and constant,
    diag(1 + N'/4, 8, 1): returned as its diagonal (g_e, g_w, g_b).

    At a point of the canonical family, the full model's gradient-flow velocity projected
    orthogonally onto the family is -G^{-1} grad L(e, w, b) (:func:`metric_system`); the
    full flow itself leaves the family (its position scalar does not follow -e/2), so the
    two paths agree to first order in time only.  G is not a multiple of the identity
    (e, w and b move at rates 1/(1 + N'/4), 1/8 and 1), so no single time change maps the
    paper's (e, w, b) ODE (metric I) onto it."""
    jac = _canonical_jacobian()
    metric = sp.diag(*rank_one_metric(positions))
    out = [sp.simplify((jac.T * metric * jac).subs(branch)) for branch in _BRANCHES]
    if sp.simplify(out[0] - out[1]) != sp.zeros(3, 3):
        raise InadmissibleTheory(f"the canonical metric differs between the branches: {out}")
    if any(out[0][i, j] != 0 for i in range(3) for j in range(3) if i != j):
        raise InadmissibleTheory(f"the canonical metric is not diagonal: {out[0]}")
    return tuple(out[0][i, i] for i in range(3))


def _metric_velocity(p, q, positions) -> sp.Matrix:
    """-G^{-1} grad L(e, w, b) of :func:`metric_system`: the paper's (e, w, b) ODE
    (:func:`system`, ``bias="trained"``, velocity -grad L) with each component divided by
    its weight in G (:func:`canonical_metric`), so that the metric flow is built from the
    paper's own ODE, not re-derived beside it."""
    base = system(p, q, bias="trained")
    if tuple(base.state) != (E, W, B):
        raise InadmissibleTheory(f"the paper's ODE has state {base.state}, not (e, w, b)")
    metric = canonical_metric(positions)
    return sp.Matrix([r / g for r, g in zip(base.rhs, metric, strict=True)])


def canonical_projection(e, s, c1, c2, b, positions=NPOS) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(e, w, b) of the point of the canonical family nearest the rank-one state
    (e, s, c1, c2, b) in the full parameters' metric: G^{-1} J^T M y [our derivation].

    On each sign branch of w the family is a linear subspace, so the orthogonal projection
    is exact; the branch is that of c2 (= 2w on the family).  On the family it returns the
    canonical (e, w, b) of :func:`rank_one_image`; off it, e.g. where full GD has moved the
    position scalar away from -e/2, it is the least-squares canonical read-out."""
    y = sp.Matrix([_real("e", e), _real("s", s), _real("c1", c1), _real("c2", c2),
                   _real("b", b)])
    jac = _canonical_jacobian().subs(W, y[3] / 2)
    pulled = jac.T * sp.diag(*rank_one_metric(positions)) * y
    return tuple(x / g for x, g in zip(pulled, canonical_metric(positions), strict=True))


def metric_system(p=P, q=Q, positions=NPOS) -> ReducedSystem:
    """d(e, w, b)/dt = -G^{-1} grad L(e, w, b), G = :func:`canonical_metric`: the paper's
    canonical model in the metric the full parameters induce [our derivation].

    Its velocity is the full model's gradient-flow velocity at a point of the canonical
    family, projected orthogonally onto the family (the full velocity also has a part off
    the family: the position scalar, at rate 1/N', does not follow -e/2; the FF factors
    stay balanced, c1 = |c2|).  The paper's (e, w, b) ODE, :func:`system` with
    ``bias="trained"``, is this flow with G replaced by the identity."""
    p, q = _pq(p, q)
    params = tuple(x for x in (p, q, positions) if isinstance(x, sp.Symbol))
    return ReducedSystem(
        state=(E, W, B), params=params, rhs=_metric_velocity(p, q, positions),
        loss=reduced_loss(E, W, B, p, q), branches=_BRANCHES,
        name="markov (e, w, b) in the full model's metric",
        assumptions="the full model's gradient flow projected onto the canonical family "
                    "(our derivation)",
    )


def rank_one_system(p=P, q=Q, positions=NPOS) -> ReducedSystem:
    """Exact gradient flow of the full model on the rank-one manifold [our derivation].

    State (e, s, c1, c2, b).  The manifold is invariant under full-model gradient flow when
    the attention is inert (W_V = W_O = 0): every gradient keeps the alpha / u structure.
    The loss is the mean over ``positions`` (N') target positions, so each position row
    gets 1/N' of the gradient: the shared position scalar s moves at rate 1/N' while
    (e, c1, c2, b) move at rate 1 (Frobenius metric along unit directions).  With the
    first symbol drawn from the stationary law all positions are exchangeable.
    """
    p, q = _pq(p, q)
    f0, f1 = rank_one_logits(E, S_POS, C1, C2, B)
    loss = loss_from_logits(f0, f1, p, q)
    params = tuple(x for x in (p, q, positions) if isinstance(x, sp.Symbol))
    return gradient_flow(
        loss,
        (E, S_POS, C1, C2, B),
        params,
        rates=tuple(1 / m for m in rank_one_metric(positions)),
        name="markov rank-one restriction (e, s, c1, c2, b)",
        assumptions="full model on the rank-one manifold, attention inert (our derivation)",
    )


def rank_one_state(e0, w0, b0) -> tuple[float, float, float, float, float]:
    """Map the paper's canonical (e0, w0, b0) to the rank-one state (e, s, c1, c2, b)."""
    e0, w0, b0 = float(_real("e0", e0)), float(_real("w0", w0)), float(_real("b0", b0))
    return tuple(float(v) for v in rank_one_image(e0, w0, b0))


# ---------------------------------------------------------------------- float twins
ff_gain_twin = Twin(ff_gain, W)
gap_twin = Twin(gap, E, W)
gap_gradient_twin = Twin(gap_gradient, E, W)
logits_twin = Twin(logits, E, W, B)
energy_twin = Twin(energy, E, W)
stationary_twin = Twin(stationary_distribution, P, Q)
rank_one_logits_twin = Twin(rank_one_logits, E, S_POS, C1, C2, B)
rank_one_kinks_twin = Twin(rank_one_kinks, E, S_POS)
_F0, _F1 = sp.Symbol("f0", real=True), sp.Symbol("f1", real=True)


def _torch_sqrt(x):
    import torch

    return torch.sqrt(x) if isinstance(x, torch.Tensor) else math.sqrt(x)


canonical_from_logits_torch = Twin(canonical_from_logits, E, _F0, _F1,
                                   modules=[{"sqrt": _torch_sqrt}, "torch"])


# ---------------------------------------------------------------------- equations
def equations() -> list[Equation]:
    """Named derived results for ``tdcheck equations markov``."""
    sys_opt = structured_system()
    sys_tr = system(bias="trained")
    pi0, pi1 = stationary_distribution(P, Q)
    model = "the paper's canonical model (the authors' code, Markov-Fixed)"
    landscape = "the authors' code, Markov-Fixed/energy/contour_plot.py"
    return [
        Equation("stationary pi0", pi0, "the chain's stationary law"),
        Equation("stationary pi1", pi1, "the chain's stationary law"),
        Equation("unigram loss H(pi)", unigram_loss(P, Q), "the paper's unigram loss"),
        Equation("bigram loss H_rate", bigram_loss(P, Q), "the paper's bigram loss"),
        Equation("optimal gap u*", optimal_gap(P, Q), "our derivation"),
        Equation("gap u(e, w)", gap(E, W), model),
        Equation("reduced loss L(e, w, b)", reduced_loss(E, W, B, P, Q), model),
        Equation("optimal bias b*(e, w)", optimal_bias(E, W, P, Q),
                 f"{landscape}; derived here"),
        Equation("profile slope l'(0)", profile_slope_at_zero(P, Q), "our derivation"),
        Equation("energy E(e, w)", energy(E, W), f"the paper's energy ({landscape})"),
        Equation("separatrix energy E_sep", separatrix_energy(),
                 f"the level through the saddle ({landscape}); our derivation"),
        Equation("saddle (e, w)", sp.Tuple(*saddle_point()), "our derivation"),
        Equation("flow de/dt (b = b*, l(u) = min_b L)", sys_opt.rhs[0],
                 "gradient flow of the paper's L(e, w) (Fig. 1a/c)"),
        Equation("flow dw/dt (b = b*, l(u) = min_b L)", sys_opt.rhs[1],
                 "gradient flow of the paper's L(e, w) (Fig. 1a/c)"),
        Equation("flow db/dt (b trained)", sys_tr.rhs[2], model),
        Equation("canonical metric G = J^T J, diagonal (full parameters, N' target rows)",
                 sp.Tuple(*canonical_metric(NPOS)), "our derivation"),
        Equation("attention gap u(e, w, a) [reconstruction]", attention_gap(E, W, A),
                 "our reconstruction of the paper's L(e, w, a), unverified"),
        Equation("attention invariant [reconstruction]", attention_invariant(E, A),
                 "our derivation on that reconstruction"),
    ]
