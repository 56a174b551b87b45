"""theory.markov: derived closed forms against the authors' and our quoted forms (re-derived, not copied)."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from theory import markov as tm

P, Q = tm.P, tm.Q
prob = st.floats(0.03, 0.97)

# reference numbers (p, q) -> H(pi), H_rate, u*, computed independently
TABLE = [
    ((0.5, 0.8), 0.666278, 0.619015, -1.386294),
    ((0.2, 0.3), 0.673012, 0.544587, 2.233592),
    ((0.9, 0.9), 0.693147, 0.325083, -4.394449),
    ((0.7, 0.9), 0.685314, 0.485835, -3.044522),
]


@pytest.mark.parametrize(("pq", "uni", "bi", "us"), TABLE)
def test_reference_numbers(pq, uni, bi, us):
    assert float(tm.unigram_loss(*pq)) == pytest.approx(uni, abs=1e-6)
    assert float(tm.bigram_loss(*pq)) == pytest.approx(bi, abs=1e-6)
    assert float(tm.optimal_gap(*pq)) == pytest.approx(us, abs=1e-6)


def test_derived_slope_equals_quoted_formula_symbolically():
    quoted = P * Q * (P + Q - 1) / (P + Q) ** 2
    assert sp.simplify(tm.profile_slope_at_zero(P, Q) - quoted) == 0


@given(prob, prob)
def test_curvature_at_optimum_matches_quoted_formula(p, q):
    quoted = p * q * (1 - p) * (1 - q) / ((p + q) * (2 - p - q))
    assert float(tm.profile_curvature_at_optimum(p, q)) == pytest.approx(quoted, rel=1e-8)


@given(prob, prob, st.floats(-2, 2), st.floats(-2, 2))
def test_derived_bias_equals_authors_closed_form(p, q, e, w):
    import mpmath

    # The quoted form cancels ~|u|/ln 10 digits when q > p and u << 0 (p - q + sqrt(...)
    # ~ 0), so it is evaluated in 60-digit arithmetic, not in double precision.
    with mpmath.workdps(60):
        p_, q_, e_, w_ = (mpmath.mpf(v) for v in (p, q, e, w))
        k = mpmath.exp(e_**2 * (1 + 2 * w_ * abs(w_)))
        quoted = e_**2 / 2 + mpmath.log((p_ - q_ + mpmath.sqrt((p_ - q_) ** 2 + 4 * p_ * q_ * k))
                                         / (2 * q_ * k))
    assert float(tm.optimal_bias(e, w, p, q)) == pytest.approx(float(quoted), rel=1e-9, abs=1e-9)


@given(prob, prob, st.floats(-40, 40))
def test_stable_and_derived_profile_agree(p, q, u):
    import mpmath

    derived = sp.lambdify((tm.U, P, Q), tm.profile_loss(tm.U, P, Q), "mpmath")
    stable = sp.lambdify((tm.U, P, Q), tm.stable_profile_loss(tm.U, P, Q), "mpmath")
    with mpmath.workdps(80):  # the derived form cancels ~|u|/2.3 digits; 80 leave > 40
        args = [mpmath.mpf(v) for v in (u, p, q)]
        assert abs(derived(*args) - stable(*args)) < mpmath.mpf(10) ** -30


def test_separatrix_and_saddle():
    assert sp.simplify(tm.separatrix_energy() + (1 + sp.log(2)) / 2) == 0
    assert tm.saddle_point() == (0, -sp.sqrt(2) / 2)


def test_energy_conserved_only_with_optimal_bias():
    assert tm.structured_system().drift("energy") == 0
    assert tm.system(bias="optimal").drift("energy") == 0
    assert tm.system(bias="trained").drift("energy") != 0


def test_attention_reconstruction_invariants_and_a0_slice():
    # symbolic, for every profile l: L(e, w, a) = l(u(e, w, a)) conserves both invariants
    from theory.flow import gradient_flow

    ell = sp.Function("ell")
    u = tm.attention_gap(tm.E, tm.W, tm.A)
    sys = tm.attention_system()
    abstract = gradient_flow(ell(u), (tm.E, tm.W, tm.A), (), invariants=dict(sys.invariants),
                             branches=sys.branches)
    assert abstract.drift("energy") == 0
    assert abstract.drift("attention") == 0
    # and numerically on the system itself (its loss is l(u) with the derived profile)
    f = tm.attention_system(0.2, 0.3).lambdify()
    # sign(w)' = 2 delta(w) vanishes away from w = 0, where these points lie
    grads = [sp.lambdify((tm.E, tm.W, tm.A), [sp.diff(v, x) for x in (tm.E, tm.W, tm.A)],
                         [{"DiracDelta": lambda *a: 0.0}, "numpy"])
             for v in sys.invariants.values()]
    for y in ([0.7, -0.4, 0.3], [1.2, 0.5, -1.0], [0.3, -1.5, 2.0]):
        rate = f(0, np.array(y))
        for g in grads:
            assert abs(float(np.dot(g(*y), rate))) < 1e-12 * (1 + float(np.abs(rate).max()))
    base = tm.system(0.5, 0.8).lambdify()
    att = tm.attention_system(0.5, 0.8).lambdify()
    np.testing.assert_allclose(att(0, np.array([0.7, -0.4, 0.0]))[:2],
                               base(0, np.array([0.7, -0.4])), rtol=1e-12)


def test_attention_invariant_drift_sees_a_perturbed_coefficient():
    # the former claim markov.attention_invariants' control (the reconstruction is ours, not
    # the paper's, so it is a theory test): Q with its (a + 4)^2 coefficient 9/10 of the
    # derived one is not conserved, so the drift test above can fail.  The profile is left
    # abstract: the flow is -l'(u) grad u with l'(u) a free symbol g
    from theory.flow import numeric, simplify_zero

    slope = sp.Symbol("g", real=True)
    state = (tm.E, tm.W, tm.A)
    u = tm.attention_gap(*state)
    rhs = [-slope * sp.diff(u, x) for x in state]
    w_abs = sp.Symbol("w_abs", positive=True)

    def squared_drift(inv):
        rate = sum((sp.diff(inv, x) * r for x, r in zip(state, rhs, strict=True)), sp.S.Zero)
        return sum((numeric(rate.subs(tm.W, s * w_abs)) ** 2 for s in (1, -1)), sp.S.Zero)

    shifted = sp.sqrt(sp.Rational(9, 10)) * (tm.A + 4) - 4
    assert simplify_zero(squared_drift(tm.energy(tm.E, tm.W))) == 0
    assert simplify_zero(squared_drift(tm.attention_invariant(tm.E, tm.A))) == 0
    assert simplify_zero(squared_drift(tm.attention_invariant(tm.E, shifted))) != 0


@pytest.mark.parametrize(
    ("pq", "start", "basin"),
    [((0.5, 0.8), (1, -1), "global"), ((0.5, 0.8), (0.1, 0.1), "local"),
     ((0.5, 0.8), (0.1, -0.1), "local"), ((0.5, 0.8), (0.5, -0.5), "global"),
     ((0.5, 0.8), (2, 0.5), "local"), ((0.2, 0.3), (1, -1), "global"),
     ((0.2, 0.3), (0.1, 0.1), "global"), ((0.2, 0.3), (0.3, -1.5), "local"),
     ((0.2, 0.3), (1, -2), "local"), ((0.9, 0.9), (0.1, 0.1), "local")],
)
def test_basin_matches_integrated_table(pq, start, basin):
    assert tm.basin(*start, *pq) == basin


def test_critical_types_by_regime():
    assert tm.critical_type(0.3, 0.5, 0.8) == "min"
    assert tm.critical_type(-1.0, 0.5, 0.8) == "max"
    assert tm.critical_type(0.3, 0.2, 0.3) == "max"
    assert tm.critical_type(-1 / math.sqrt(2), 0.2, 0.3) == "saddle"


@given(st.floats(0.05, 2), st.floats(-2, 2), st.floats(-1, 1))
def test_rank_one_slice_reproduces_canonical_logits(e, w, b):
    f0, f1 = tm.rank_one_logits(*[sp.Float(v) for v in tm.rank_one_state(e, w, b)])
    g0, g1 = tm.logits(e, w, b)
    assert float(f0) == pytest.approx(float(g0), abs=1e-12)
    assert float(f1) == pytest.approx(float(g1), abs=1e-12)


def test_rank_one_flow_leaves_the_canonical_slice():
    """Why the (e, w, b) ODE is not the full model's flow [our derivation]: on the slice
    s = -e/2, c1 = 2|w|, c2 = 2w the restriction's velocity is not tangent to it (the
    position scalar does not follow -e/2, and c1 does not follow 2|c2|/2 in general)."""
    sys = tm.rank_one_system(0.2, 0.3, 63)
    f = sys.lambdify("numpy")
    e, w, b = 1.0, -1.0, 0.0
    de, ds, dc1, dc2, _ = f(0.0, np.array(tm.rank_one_state(e, w, b)))
    assert abs(ds - (-de / 2)) > 1e-2  # s' != -e'/2: the position tie is broken at once


def test_bad_input_raises_naming_parameter():
    with pytest.raises(ValueError, match="p must lie in"):
        tm.unigram_loss(1.2, 0.5)
    with pytest.raises(ValueError, match="q must lie in"):
        tm.system(0.5, 0.0)
    with pytest.raises(ValueError, match="w must be non-zero"):
        tm.energy(1.0, 0)
    with pytest.raises(ValueError, match="p \\+ q must differ from 1"):
        tm.basin(1, 1, 0.5, 0.5)
    with pytest.raises(ValueError, match="bias must be"):
        tm.system(bias="frozen")


def test_equations_are_named_expressions():
    eqs = {eq.name: eq for eq in tm.equations()}
    assert "energy E(e, w)" in eqs and "optimal bias b*(e, w)" in eqs
    assert all(isinstance(eq.expr, sp.Basic) and eq.source for eq in eqs.values())
    assert all(isinstance(sp.latex(eq.expr), str) for eq in eqs.values())


@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(-1, 1))
def test_twins_are_the_theory_functions_in_floats(e, w, b):
    assert tm.gap_twin(e, w) == pytest.approx(float(tm.gap(e, w)), rel=1e-12, abs=1e-12)
    f0, f1 = tm.logits_twin(e, w, b)
    g0, g1 = (float(v) for v in tm.logits(e, w, b))
    assert (f0, f1) == pytest.approx((g0, g1), rel=1e-12, abs=1e-12)
    du = tm.gap_gradient_twin(e, w)
    # du/de = 2 e (1 + 2w|w|), du/dw = 4 e^2 |w| (our derivation of the gradient)
    assert du == pytest.approx((2 * e * (1 + 2 * w * abs(w)), 4 * e * e * abs(w)),
                               rel=1e-12, abs=1e-12)
    if abs(w) > 1e-3:
        assert tm.energy_twin(e, w) == pytest.approx(float(tm.energy(e, w)), rel=1e-12,
                                                     abs=1e-12)


def test_symmetric_chain_levels():
    # the authors' S = 5, p = 0.1 lines: entropy rate h(p) + p ln(S - 1), unigram ln S
    assert float(tm.symmetric_bigram_loss(0.1, 5)) == pytest.approx(0.46371, abs=1e-5)
    assert float(tm.symmetric_unigram_loss(5)) == pytest.approx(math.log(5), rel=1e-15)
    with pytest.raises(ValueError, match="states must be an integer"):
        tm.symmetric_unigram_loss(1)


def test_symmetric_partition_levels_span_unigram_to_bigram():
    # one block is the unigram predictor, S singleton blocks the bigram one
    for states in (3, 5):
        assert float(tm.symmetric_partition_loss(0.9, (states,))) == pytest.approx(
            math.log(states), rel=1e-14)
        assert float(tm.symmetric_partition_loss(0.9, (1,) * states)) == pytest.approx(
            float(tm.symmetric_bigram_loss(0.9, states)), rel=1e-14)
    # one state told apart from four merged ones, written out by hand: the merged block's
    # row puts p/(S-1) on the singled-out state and the rest evenly on its own four
    p, c = 0.9, 0.9 / 4
    a = (1 - p + 3 * c) / 4
    merged = -c * math.log(c) - 4 * a * math.log(a)
    expected = (float(tm.symmetric_bigram_loss(p, 5)) + 4 * merged) / 5
    assert float(tm.symmetric_partition_loss(p, (1, 4))) == pytest.approx(expected, rel=1e-13)
    levels = tm.symmetric_partition_levels(p, 5)
    assert len(levels) == 7 and set(levels) >= {(5,), (1, 4), (2, 3), (1, 1, 1, 1, 1)}
    # a coarser partition never does better than a refinement of it
    assert float(levels[(5,)]) > float(levels[(1, 4)]) > float(levels[(1, 1, 3)])
    assert float(levels[(2, 3)]) > float(levels[(1, 2, 2)]) > float(levels[(1, 1, 1, 2)])
    with pytest.raises(ValueError, match="blocks must be positive"):
        tm.symmetric_partition_loss(0.9, (0, 5))


def test_pinned_basin_starts_sit_at_their_stated_energy():
    """verify.markov's pinned basin starts are written out (so that a slip in the energy
    moves the rule, not the start): each e must be the one at E_sep + delta."""
    from verify import markov as vm

    e_sep = float(tm.separatrix_energy())
    for _p, _q, w, delta, e in vm._BASIN_PINS:
        assert float(tm.energy(e, w)) == pytest.approx(e_sep + delta, abs=1e-13)
        assert e == pytest.approx(vm._on_level(w, e_sep + delta), rel=1e-13)


def test_metric_system_is_the_papers_ode_over_the_metric():
    """metric_system is built from the paper's (e, w, b) ODE (system, bias='trained'); it
    equals -dL/dx / g_x re-derived from the reduced loss."""
    ms = tm.metric_system()
    loss = tm.reduced_loss(tm.E, tm.W, tm.B, tm.P, tm.Q)
    g = tm.canonical_metric(tm.NPOS)
    for r, x, gi in zip(ms.rhs, (tm.E, tm.W, tm.B), g, strict=True):
        assert sp.simplify(r + sp.diff(loss, x) / gi) == 0
