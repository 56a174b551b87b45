"""scan_snap row: theory closed forms (against mpmath and sympy), numerics, claims at smoke size."""

import math
from dataclasses import replace

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from numerics import scan_snap as ns
from numerics.context import Context
from theory import scan_snap as ts
from theory.flow import Equation

Ms = st.integers(2, 5000)
Ks = st.integers(1, 20)
rates = st.floats(0.01, 50)
times = st.floats(0, 1e6)


def _mp_root(t, M, eta_Y):
    """h(t) from Lemma 6 at 50 digits (mpmath findroot on x = M h)."""
    with mpmath.workdps(50):
        u = mpmath.mpf(M) * mpmath.mpf(eta_Y) * mpmath.mpf(t)
        if u == 0:
            return mpmath.mpf(0)
        f = lambda x: mpmath.expm1(x) + (M - 1) * x - u
        hi = min(u / M, mpmath.log1p(u))
        x = mpmath.findroot(f, (hi * mpmath.mpf("0.5"), hi), solver="anderson")
        return x / M


# ---------------------------------------------------------------------- theory: decoder
@given(times, Ms, rates)
def test_decoder_scale_to_1e10_relative(t, M, eta_Y):
    exact = _mp_root(t, M, eta_Y)
    got = ts.decoder_scale(t, M, eta_Y)
    assert isinstance(got, float)
    if exact == 0:
        assert got == 0.0
    else:
        assert abs(got - float(exact)) <= 1e-10 * float(exact)


@pytest.mark.parametrize("t", [1e-300, 1e-20, 1e-9, 1e-3])
def test_decoder_scale_small_t(t):
    # t << 1/(M eta_Y): h = eta_Y t/M (1 - O(eta_Y t)), still to 1e-10 relative
    exact = float(_mp_root(t, 1000, 2.0))
    assert ts.decoder_scale(t, 1000, 2.0) == pytest.approx(exact, rel=1e-10)


def test_decoder_scale_solves_the_implicit_equation_symbolically():
    h = sp.Function("h")
    t = sp.Symbol("t", positive=True)
    M, eY = ts.M_SYM, ts.ETA_Y
    implicit = sp.exp(M * h(t)) + (M - 1) * M * h(t) - M * eY * t - 1
    hdot = sp.solve(sp.diff(implicit, t), sp.diff(h(t), t))[0]
    assert sp.simplify(hdot - eY / ((M - 1) + sp.exp(M * h(t)))) == 0


def test_decoder_scale_steps_and_gap_bound():
    M, eta = 50, 0.5
    assert ts.decoder_scale_steps(0, M, eta) == 0.0
    assert ts.decoder_scale_steps(1, M, eta) == pytest.approx(eta / (M - 1 + 1))
    gaps = [ts.decoder_scale_steps(s, M, eta) - ts.decoder_scale(s, M, eta) for s in range(0, 300, 7)]
    assert min(gaps) >= 0 and max(gaps) <= ts.decoder_gap_bound(M, eta)


@given(st.floats(1e-3, 1e4), Ms, Ks, rates, rates)
def test_integrated_speed_is_the_integral_of_gamma(t, M, K, eY, eZ):
    # numeric spot check of dGamma/dt = eta_Z gamma (central difference, O(dt^2) error);
    # the exact identity is proved symbolically below
    dt = 1e-5 * t
    num = (ts.integrated_speed(t + dt, M, K, eY, eZ) - ts.integrated_speed(t - dt, M, K, eY, eZ))
    assert num / (2 * dt) == pytest.approx(eZ * ts.speed_control(t, M, K, eY), rel=1e-5)


def test_gamma_integral_identity_symbolic():
    h, M, K, eY, eZ = ts.H, ts.M_SYM, ts.K_SYM, ts.ETA_Y, ts.ETA_Z
    gamma = (M - 1) ** 2 * h / ((M - 1) + sp.exp(M * h))
    dt_dh = K * ((M - 1) + sp.exp(M * h)) / eY
    Gamma = eZ * K * (M - 1) ** 2 * h**2 / (2 * eY)
    assert sp.simplify(sp.diff(Gamma, h) - eZ * gamma * dt_dh) == 0


def test_growth_exponent_corrected_vs_printed():
    assert ts.growth_exponent(0, 100, 3, 1, 1, 0.5) == 0.0
    diff = ts.printed_growth_exponent(7, 100, 3, 1, 1, 0.5) - ts.growth_exponent(7, 100, 3, 1, 1, 0.5)
    assert diff == pytest.approx(0.25 * math.log(0.5), rel=1e-12)
    # corrected Eqn 14 at M = 1000, K = 10: B(100) = 1.771 exact, 1.859 from the late form
    assert ts.growth_exponent(100, 1000, 10, 1, 1, 1) == pytest.approx(1.771, abs=5e-4)
    assert ts.growth_exponent_regime(100, 1000, 10, 1, 1, 1, "late") == pytest.approx(1.859, abs=5e-4)


def test_snap_system_invariant_symbolic():
    sys = ts.snap_system(100, 3, 10, 1, 0.5)
    assert sys.params == ()
    assert sys.drift("snap") == 0
    gen = ts.snap_system(ts.M_SYM, ts.K_SYM, ts.ETA_Y, ts.ETA_Z, ts.C0_SYM)
    assert set(gen.params) == {ts.M_SYM, ts.K_SYM, ts.ETA_Y, ts.ETA_Z, ts.C0_SYM}
    assert gen.drift("snap") == 0


def test_speed_peak():
    # Theorem 1's gamma at M = 1000, K = 10, eta_Y = 1 peaks at x = M h = 5.42, t = 56.5,
    # before t0' = K ln M / eta_Y = 69.1
    x = ts.speed_peak_scale(1000)
    assert math.exp(x) * (x - 1) == pytest.approx(999, rel=1e-13)
    tp = ts.speed_peak_time(1000, 10, 1)
    assert tp == pytest.approx(56.4, abs=0.1) and tp < ts.scan_time(1000, 10, 1)
    g = [ts.speed_control(tp * f, 1000, 10, 1) for f in (0.999, 1.0, 1.001)]
    assert g[1] >= g[0] and g[1] >= g[2]
    assert ts.speed_peak_scale(2) > 1


def test_regimes_and_times():
    assert ts.snap_time(1000, 10, 1) == pytest.approx(2 * 10 * math.log(1000))
    # Theorem 1(b): gamma -> ((M-1)/M)^2 K ln(M eta_Y t/K)/(eta_Y t); the printed ln(eta_Y t/K)
    # is still 25 % off at t = 1e12
    exact = [ts.speed_control(t, 1000, 10, 1) / ts.late_speed_asymptote(t, 1000, 10, 1)
             for t in (1e6, 1e9, 1e12)]
    printed = ts.speed_control(1e12, 1000, 10, 1) / ts.late_speed_asymptote(1e12, 1000, 10, 1, True)
    assert abs(exact[2] - 1) < abs(exact[1] - 1) < abs(exact[0] - 1) < 0.2
    assert abs(exact[2] - 1) < 0.01 and abs(printed - 1) > 0.2
    with pytest.raises(ValueError, match="regime"):
        ts.growth_exponent_regime(1, 10, 1, 1, 1, 1, "middle")


@pytest.mark.parametrize(
    ("fn", "args", "name"),
    [
        (ts.decoder_scale, (-1, 10, 1), "t"),
        (ts.decoder_scale, (1, 1, 1), "M"),
        (ts.decoder_scale, (1, 2.5, 1), "M"),
        (ts.decoder_scale, (1, 10, 0), "eta_Y"),
        (ts.decoder_scale_steps, (-1, 10, 1), "s"),
        (ts.speed_control, (1, 10, 0, 1), "K"),
        (ts.integrated_speed, (1, 10, 1, 1, -1), "eta_Z"),
        (ts.growth_exponent, (1, 10, 1, 1, 1, 0), "C0"),
        (ts.reduced_system, ([[0.5, 0.6]], 10, 1, 1), "probs"),
        (ts.reduced_system, ([[1.5, -0.5]], 10, 1, 1), "probs"),
        (ts.snap_system, (10, 1, 1, 1, -2), "C0"),
    ],
)
def test_bad_input_names_the_parameter(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


# ---------------------------------------------------------------------- theory: tokens
PROBS = np.array([[0.4, 0.1, 0.2, 0.3, 0, 0, 0], [0.4, 0, 0, 0, 0.1, 0.2, 0.3]])


def test_token_types_signs_winners_order():
    assert ts.distinct_tokens(PROBS) == ((1, 2, 3), (4, 5, 6))
    assert ts.common_tokens(PROBS) == (0,)
    assert ts.predicted_drift_signs(PROBS) == (-1, 1, 1, 1, 1, 1, 1)
    assert ts.winners(PROBS) == (3, 6)
    assert ts.scan_order(PROBS, 1) == (4, 5, 6)


def test_reduced_system_signs_and_invariants():
    sys = ts.reduced_system(PROBS, 30, 10, 1)
    assert sys.params == ()
    f = sys.lambdify("numpy")
    y0 = np.r_[0.01, np.zeros(7)]
    rhs = f(0.0, y0)
    signs = np.sign(rhs[1:]).astype(int)
    assert tuple(signs) == ts.predicted_drift_signs(PROBS)
    rng = np.random.default_rng(1)
    states = np.c_[rng.uniform(0, 0.2, 4), rng.normal(size=(4, 7))]
    for name in sys.invariants:
        drift, scale = ns.invariant_drift(sys, name, states)
        assert np.all(np.abs(drift) <= 1e-13 * scale + 1e-300)


def test_gain_bounds_and_relative_gain():
    lo, hi = ts.gain_bounds(0.25, 1.0)
    assert lo == pytest.approx(math.exp(0.5)) and hi == pytest.approx(math.exp(2))
    assert ts.relative_gain(2.0, 1.0) == pytest.approx(3.0)
    assert ts.dt_invariant(1.0, 2.0) == pytest.approx(0.75)


def test_equations_are_sympy_records():
    eq = ts.equations()
    assert len(eq) >= 12
    assert all(isinstance(e, Equation) and isinstance(e.expr, sp.Basic) and e.source for e in eq)
    assert len({e.name for e in eq}) == len(eq)


def test_theory_float_helpers():
    # Lemma 6 in x = M h: x' = M h' = M eta_Y/((M-1) + e^{M h})
    h = ts.decoder_scale(3.0, 50, 2.0)
    assert ts.decoder_rate_scaled(50 * h, 50, 2.0) == pytest.approx(
        50 * 2.0 / (49 + math.exp(50 * h)), rel=1e-15)
    z = np.array([[0.0, 0.5], [0.1, -0.2]])
    np.testing.assert_allclose(ts.unnormalised_attention([0.25, 0.75], z),
                               [0.25, 0.75] * np.exp(z), rtol=1e-15)
    assert ts.attention_gain(1.5, 0.5) == pytest.approx(math.exp(2.0))


# ---------------------------------------------------------------------- numerics


def test_facts_layout_matches_dataset2():
    f = ns.make_facts(ns.DataConfig(num_last=1))  # Syn-Medium panel 1: M = 10 + 20 + 1 + 2
    assert f.M == 33 and f.n_context == 30 and f.K == 2
    assert f.cts == tuple(range(10)) and f.dts == (tuple(range(10, 20)), tuple(range(20, 30)))
    assert tuple(f.query) == (30, 30) and tuple(f.label) == (31, 32)
    assert f.probs[0, 0] == pytest.approx(1 / 15.5) and f.probs[0, 10] == pytest.approx(0.1 / 15.5)
    g = ns.make_facts(ns.DataConfig(num_last=2, num_next_per_last=1))  # Fig. 4: M = 34
    assert g.M == 34 and tuple(g.query) == (30, 31)
    # initial DT entropy of the Fig. 4 masses p ~ 1..10: H = 2.1513
    assert float(ns.dt_entropy(np.zeros((2, 33)), f)) == pytest.approx(2.15128, abs=1e-5)


def test_count_model_equals_one_hot_model2():
    """member_loss on counts == Model2.forward on one-hot sequences (decoder_only.py)."""
    f = ns.make_facts(ns.DataConfig(num_last=2, num_next_per_last=1))
    gen = torch.Generator().manual_seed(0)
    Z = torch.randn(f.M, f.M, generator=gen, dtype=torch.float64)
    Y = torch.randn(f.M, f.M, generator=gen, dtype=torch.float64)
    L = 9
    probs = torch.as_tensor(f.probs)
    cls = torch.tensor([0, 1, 1, 0])
    tokens = torch.multinomial(probs[cls], L - 1, replacement=True, generator=gen)
    x = torch.cat([tokens, torch.as_tensor(f.query)[cls, None]], dim=1)
    for residual in (False, True):
        X = F.one_hot(x, f.M).double()
        logit = torch.bmm(X[:, :-1] @ Z.T, X[:, -1].unsqueeze(2)).squeeze(2)  # K2(X_key) . x_T
        comb = torch.bmm(torch.softmax(logit, 1).unsqueeze(1), X[:, :-1]).squeeze(1)
        if residual:
            comb = comb + X[:, -1]
        comb = comb / comb.norm(dim=1, keepdim=True)
        ref = F.cross_entropy(comb @ Y, torch.as_tensor(f.label)[cls])  # K1.weight = Y^T
        counts = torch.zeros(4, f.M, dtype=torch.float64).scatter_add_(
            1, tokens, torch.ones_like(tokens, dtype=torch.float64))
        batch = {"counts": counts, "query": torch.as_tensor(f.query)[cls],
                 "label": torch.as_tensor(f.label)[cls], "y_scale": torch.tensor(1.0),
                 "qhot": F.one_hot(torch.as_tensor(f.query)[cls], f.M).double()}
        assert float(ns.member_loss({"Y": Y, "Z": Z}, batch, residual)) == pytest.approx(
            float(ref), rel=1e-12)


def test_per_parameter_rates_equal_two_optimisers():
    """Yhat = Y/sqrt(eta_Y/eta_Z) under one rate == torch SGD with lr_y, lr_z and momentum."""
    data = ns.DataConfig(num_last=1, num_common=3, num_unique_per_next=3)
    cfg = ns.SGDConfig(data=data, eta_Z=(0.7,), ratio=(5.0,), seeds=(3,), steps=6, exact=True)
    res = ns.run_sgd(cfg)
    f = res.facts
    init = ns.init_member(f.M, False, torch.Generator().manual_seed(3))
    Y = init["Y"].clone().requires_grad_(True)
    Z = init["Z"].clone().requires_grad_(True)
    opt_y = torch.optim.SGD([Y], lr=3.5, momentum=0.9)
    opt_z = torch.optim.SGD([Z], lr=0.7, momentum=0.9)
    for _ in range(6):
        opt_y.zero_grad()
        opt_z.zero_grad()
        ns.population_loss({"Y": Y, "Z": Z}, f).backward()
        opt_y.step()
        opt_z.step()
    assert np.allclose(res.Y[0], Y.detach().numpy(), rtol=1e-10, atol=1e-13)
    assert np.allclose(res.Z[0], Z.detach().numpy(), rtol=1e-10, atol=1e-13)


def test_population_gradient_is_lemma1():
    """-dJ/dY = sum_n (1/K) f_n (e_n - alpha_n)^T (Eqn 3 in the T -> infinity limit)."""
    f = ns.make_facts(ns.DataConfig(num_last=1, num_common=2, num_unique_per_next=3))
    gen = torch.Generator().manual_seed(1)
    Y = torch.randn(f.M, f.M, generator=gen, dtype=torch.float64, requires_grad=True)
    Z = torch.randn(f.M, f.M, generator=gen, dtype=torch.float64)
    (gY,) = torch.autograd.grad(ns.population_loss({"Y": Y, "Z": Z}, f), (Y,))
    c = torch.as_tensor(ns.attention(Z[torch.as_tensor(f.query)].numpy(), f))
    fn = c / c.norm(dim=1, keepdim=True)
    alpha = torch.softmax(fn @ Y.detach(), dim=1)
    e = F.one_hot(torch.as_tensor(f.label), f.M).double()
    expected = sum(torch.outer(fn[n], e[n] - alpha[n]) for n in range(f.K)) / f.K
    assert torch.allclose(-gY, expected, rtol=1e-10, atol=1e-14)


def test_reduced_and_population_flows_start_at_the_theory():
    data = ns.DataConfig(num_last=1, num_common=1, num_unique_per_next=2)
    f = ns.make_facts(data)
    flow = ns.run_population_flow(ns.FlowConfig(data=data, eta_Y=10.0, t_eval=(0.0, 0.5, 2.0)))
    assert np.all(flow.zq[0] == 0) and np.all(np.isfinite(flow.zq))
    P = tuple(map(tuple, f.probs[:, : f.n_context]))
    red = ns.run_reduced(ns.ReducedConfig(P, f.M, 10.0, 1.0, (0.0, 0.5, 2.0)))
    # h(t/K) of the reduced system is Lemma 6's root
    assert red.h[-1] == pytest.approx(ts.decoder_scale(2.0 / f.K, f.M, 10.0), rel=1e-8)
    # Z 1 = 0 along both flows (Lemma 1)
    assert np.abs(flow.zq[-1, 0].sum()) < 1e-10 and np.abs(red.z[-1].sum()) < 1e-10


def test_reduced_run_records_its_steps():
    """The reduced run keeps the solver's accepted step ends and the state there (the
    dt_invariant allowances count steps); t_eval values are unchanged by recording them."""
    P = ((0.5, 0.25, 0.25, 0.0), (0.5, 0.0, 0.0, 0.5))
    red = ns.run_reduced(ns.ReducedConfig(P, 50, 5.0, 1.0, (0.0, 0.3, 3.0)))
    assert red.step_t[0] == 0 and red.step_t[-1] == pytest.approx(3.0)
    assert np.all(np.diff(red.step_t) > 0) and red.step_y.shape == (red.step_t.size, 5)
    assert np.all(red.step_y[0] == 0)
    assert red.step_y[-1] == pytest.approx(np.r_[red.h[-1], red.z[-1]], rel=1e-12, abs=1e-15)


def test_a_posteriori_re_solve_of_the_reduced_run():
    """dt_invariant's re-solve: the same trajectory at tolerances / FINE_FACTOR, each output
    time a step end; it agrees with the run to the run's tolerance, is closer to Lemma 6's h,
    and its step counts per output time are cumulative."""
    from verify import scan_snap as vs
    P = ((0.5, 0.25, 0.25, 0.0), (0.5, 0.0, 0.0, 0.5))
    t = (0.0, 0.01, 0.3, 3.0)
    red = ns.run_reduced(ns.ReducedConfig(P, 50, 5.0, 1.0, t))
    fine, ends, n_k = vs._fine_reduced(red)
    assert fine.shape == (len(t), 5) and np.all(fine[0] == 0) and np.all(ends[0] == 0)
    assert n_k[0] == 0 and np.all(np.diff(n_k) >= 1) and n_k[-1] == ends.shape[0] - 1
    # every output time is a step end: the last step of each interval ends on it, and the
    # output there is that step's own end value (the same floats, not an interpolation),
    # so equality is exact
    assert np.array_equal(ends[n_k[1:]], fine[1:])
    h_ref = np.array([ts.decoder_scale(x / 2, 50, 5.0) for x in t[1:]])
    assert np.all(np.abs(fine[1:, 0] - red.h[1:]) <= 1e-8 * h_ref)
    assert np.max(np.abs(fine[1:, 0] - h_ref) / h_ref) < 1e-11
    assert np.all(vs._step_sum(n_k, np.ones(n_k[-1])) == n_k)


def test_monotone_sizes_come_from_the_power_calculation():
    """quick runs the largest seed count that the power calculation beside ratio_monotone and
    etaz_monotone asks for (published effect, pilot sd, 99 % interval, power 0.95)."""
    from verify import scan_snap as vs
    quick = Context(profile="quick")
    assert quick.size(ns.SIZES, "monotone_seeds") == max(vs.ratio_monotone_seeds().values())
    assert quick.size(ns.SIZES, "column_seeds") == max(vs.etaz_monotone_seeds().values())
    # the calculation itself: larger noise or a smaller effect asks for more seeds
    assert vs._power_seeds(0.1, 0.2) > vs._power_seeds(0.1, 0.1) > vs._power_seeds(0.2, 0.1)


def test_scan_order_sgd_expectation_comes_from_the_power_calculation():
    """scan_order_sgd is inconclusive at a profile whose Fig. 4 seeds fall short of what its
    interior-peak part's power calculation asks (the pilot's rates, the 10 % tolerance)."""
    from verify import scan_snap as vs
    need = vs.scan_order_sgd_seeds()
    (claim,) = [c for c in vs.claims() if c.id == "scan_snap.scan_order_sgd"]
    for profile in ("test", "quick", "ci", "thorough"):
        ctx = Context(profile=profile)
        seeds = ctx.size(ns.SIZES, "scan_order_seeds")
        assert (seeds < max(need.values())) == (claim.expected_for(profile) == "inconclusive")
        if profile != "thorough":  # one run with the other Fig. 4 claims below thorough
            assert seeds == ctx.size(ns.SIZES, "order_seeds")
    assert Context(profile="thorough").size(ns.SIZES, "scan_order_seeds") == max(need.values())
    assert claim.measured_at == "thorough" and claim.expected_for("thorough") == "holds"
    # the calculation: a fraction nearer the tolerance or a rarer pair asks for more
    assert vs._interior_runs_needed(0.06) > vs._interior_runs_needed(2 / 44)
    assert need[10.0] > need[1.0]
    with pytest.raises(ValueError, match="p must lie"):
        vs._interior_runs_needed(0.1)


def test_region_data_meet_assumption_2():
    """The Theorem 1-region data of reduced_magnitude and theorem3_population: M >> 100,
    M >> K^2, sqrt(6/M) <= |lambda_i(E)| < 1/K at Z = 0 over the strategy's CT counts;
    Dataset2 at num_last = 10 (M = 240) breaks M > K^2 and |lambda_1| < 1/K."""
    from verify import scan_snap as vs
    for nc in (9, 10, 20):
        a = vs._assumption2(ns.make_facts(vs._region_data(
            {"num_common": nc, "num_unique": vs.REGION_DTS})))
        assert a["M"] > 250 and a["M"] > 50 * a["K"] ** 2
        assert a["sqrt(6/M)"] <= a["min_lambda"] and a["lambda_1"] < a["1/K"]
    a = vs._assumption2(ns.make_facts(ns.DataConfig(num_last=10)))
    assert a["M"] == 240 and a["M"] < a["K"] ** 2 and a["lambda_1"] > a["1/K"]


# ---------------------------------------------------------------------- claims at smoke size
@pytest.mark.parametrize("claim_id", ["scan_snap.growth_exponent", "scan_snap.regimes_transition",
                                      "scan_snap.theorem2_signs", "scan_snap.winner_sgd"])
def test_claim_at_test_profile(claim_id):
    """A sample of claims at profile "test" (tests/test_claims.py runs all of them once the row
    is registered): a holds claim whose control must be rejected, a refuted finding with its
    positive control, a population-flow claim and an SGD claim."""
    from verify import scan_snap as vs
    from verify.runner import run_claim

    claim = next(c for c in vs.claims() if c.id == claim_id)
    r = run_claim(claim, "test", Context(profile="test"))
    assert r.outcome != "error", r.error_message
    assert r.ok, r.problems()


def test_reduced_system_builds_fast_at_k3_l16():
    import time

    P = np.zeros((3, 16))
    for n in range(3):
        P[n, 0] = 1.0
        P[n, 1 + 5 * n: 6 + 5 * n] = np.linspace(0.1, 1, 5)
    P /= P.sum(axis=1, keepdims=True)
    start = time.perf_counter()
    sys = ts.reduced_system(P, 1000, 10, 1)
    assert time.perf_counter() - start < 10 and sys.params == () and len(sys.state) == 17
    assert sum(1 for k in sys.invariants if k.startswith("dt[")) == 12


def test_one_thread_restores_the_callers_setting():
    before = torch.get_num_threads()
    with ns.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_column_run_equals_the_full_sweeps_column():
    """The eta_Z-monotonicity claim runs one ratio column alone: its members must equal the
    full sweep's members at that ratio (same seed -> same init and batches)."""
    full = ns.run_sgd(replace(ns.fig6_config(1, 2), steps=3))
    col = ns.run_sgd(replace(ns.fig6_column_config(1, (10.0,), 2), steps=3))
    for ez in full.config.eta_Z:
        a, b = full.select(ez, 10.0), col.select(ez, 10.0)
        assert len(a) == len(b) == 2
        np.testing.assert_allclose(col.zq[b], full.zq[a], rtol=1e-12, atol=1e-14)


def test_member_chunk_leaves_the_sgd_run_unchanged():
    """SGDConfig.member_chunk (the trainer's option, used at profile thorough) changes memory,
    not results: a chunk of 5 of 32 members agrees to float rounding."""
    cfg = replace(ns.fig6_config(1, 2), steps=3)
    a, b = ns.run_sgd(cfg), ns.run_sgd(replace(cfg, member_chunk=5))
    # float64, O(1) values: chunks change only the summation order inside the batched
    # products (measured <= 3e-16 apart); 1e-13 leaves room for 3 steps of it to compound
    for name in ("zq", "loss", "Y", "Z"):
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=0, atol=1e-13)
    with pytest.raises(ValueError, match="member_chunk"):
        ns.SGDConfig(member_chunk=0)


def test_thorough_profile_sizes_without_training():
    """Profile thorough: the authors' commands (figure_4.log, figure_6.log) at 1000 seeds, all
    four Fig. 6 panels, on ctx.device with the panel's member_chunk; test/quick/ci configs are
    returned untouched (on the CPU)."""
    th = Context(profile="thorough", device="cuda")
    assert th.size(ns.SIZES, "fig6_panels") == (1, 3, 5, 10)
    names = ("fig6_seeds", "table_seeds", "column_seeds", "order_seeds", "fig4_seeds",
             "monotone_seeds")
    assert {th.size(ns.SIZES, n) for n in names} == {ns.THOROUGH_SEEDS} == {1000}
    # the eta_Z column at thorough is the whole panel-1 sweep (one run, one cache entry)
    column = ns.fig6_column_config(1, th.size(ns.SIZES, "column_ratios"), 1000)
    assert column == ns.fig6_config(1, 1000) and repr(column) == repr(ns.fig6_config(1, 1000))
    monotone = ns.fig6_column_config(1, th.size(ns.SIZES, "monotone_ratios"), 1000)
    assert repr(monotone) == repr(ns.fig6_config(1, 1000))
    panels = [ns.sized(ns.fig6_config(p, 1000), th) for p in (1, 3, 5, 10)]
    assert [len(c.members) for c in panels] == [16_000] * 4
    assert [c.member_chunk for c in panels] == [None, None, 8192, 4096]
    fig4 = ns.sized(ns.fig4_config(1000), th)
    assert len(fig4.members) == 2000 and fig4.zero_init and fig4.member_chunk is None
    assert ns.sgd_device(th) == "cuda"
    for c in [*panels, fig4]:
        assert (c.steps, c.batch, c.length, c.momentum) == (100, 128, 128, 0.9)
    for profile in ("test", "quick", "ci"):
        ctx = Context(profile=profile, device="cuda")
        c = ns.fig6_config(1, 8)
        assert ns.sized(c, ctx) is c and ns.sgd_device(ctx) == "cpu"
        assert ctx.size(ns.SIZES, "column_ratios") == (10.0,)


def test_runs_are_cached_in_process_with_the_device_in_the_key():
    """One run per (config, device): a second call is served by run_function's LRU."""
    cfg = replace(ns.fig4_config(1), steps=2)
    a = ns.run_sgd(cfg, device="cpu")
    assert ns.run_sgd(cfg, device="cpu") is a
    assert ns.sgd_run(cfg, Context(profile="quick")) is a


def test_permuted_fig4_layout_separates_p_order_from_id_order():
    """scan_order_sgd's and winner_sgd's second example (dt_perm_seed): through the theory,
    each class's winner is not its last DT id and its scan order is not id order, while the
    authors' layout has both in id order (so a check that read ids for P would pass there)."""
    from verify import scan_snap as vs
    for perm, differs in ((None, False), (vs._DT_PERM, True)):
        f = ns.make_facts(ns.fig4_config(1, perm).data)
        P = f.probs[:, : f.n_context]
        for n, d in enumerate(f.dts):
            assert (ts.winners(P)[n] != max(d)) == differs
            assert (ts.scan_order(P, n) != tuple(sorted(d))) == differs
            assert sorted(ts.scan_order(P, n)) == sorted(d)


def test_interior_inversions_count_only_pairs_peaking_inside():
    """scan_order_sgd's interior part: pairs of non-winning columns whose peaks both lie
    strictly inside the record; ties at t = 0 and the winner's column are left out."""
    from verify import scan_snap as vs
    t = np.arange(5.0)
    # columns in predicted order; peaks at t = 0, 3, 1 (inverted against 3), 4 (winner)
    shares = np.array([[9, 0, 0, 0], [0, 0, 5, 0], [0, 0, 0, 0], [0, 7, 0, 0],
                       [0, 0, 0, 8]], dtype=float)
    assert vs._interior_inversions(t, shares, top=3) == (1, 1)
    assert vs._interior_inversions(t, shares[:, [0, 2, 1, 3]], top=3) == (0, 1)
    assert vs._interior_inversions(t, shares[:, [0, 3]], top=1) == (0, 0)


def test_snap_reduced_follows_p_not_ids():
    """snap_reduced picks the winner through the theory (ts.winners): relabelling a class's
    DT ids (the model has no positions) leaves its evidence unchanged, and the drawn region
    puts the winner away from the last DT id in some examples."""
    from verify import scan_snap as vs
    from verify.claims import Context as VContext
    base = dict(vs._EXAMPLE_PROBS)
    P = np.array(base["probs"])
    swapped = P.copy()
    swapped[:, [1, 3]] = P[:, [3, 1]]               # class 0's DTs relabelled
    ctx = VContext(profile="test")
    a = vs._check_snap_reduced(base, ctx, power=1)
    b = vs._check_snap_reduced(dict(base, probs=tuple(map(tuple, swapped))), ctx, power=1)
    assert ts.winners(swapped)[0] != ts.winners(P)[0]
    assert b.parts[0].observed == pytest.approx(a.parts[0].observed, rel=1e-6)
    seen = []

    @given(vs._probs(M_min=300, M_max=5000, nu_max=100.0))
    def draw(params):
        Q = np.array(params["probs"])
        seen.append(all(ts.winners(Q)[n] != max(d) for n, d in
                        enumerate(ts.distinct_tokens(Q))))

    draw()
    assert any(seen)


# ---------------------------------------------------------------------- index-valued theory
def _scaled(value, factor):
    """``value`` with every number multiplied by ``factor`` (tuples kept, None kept): what a
    scale mutant of an index-valued function returns (float or negative indices)."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return type(value)(_scaled(v, factor) for v in value)
    return value * factor


def _shifted(value, by):
    """Every index moved out of range by ``by``."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return type(value)(_shifted(v, by) for v in value)
    return value + by


_WRONG = {"scale": lambda v: _scaled(v, 1.05), "sign": lambda v: _scaled(v, -1),
          "out of range": lambda v: _shifted(v, 1000)}
# (claim, theory function patched in theory.scan_snap, or a keyword of the check)
_INDEX_CONSUMERS = [
    ("dt_invariant", "distinct_tokens"), ("theorem2_signs", "distinct_tokens"),
    ("theorem2_signs", "common_tokens"), ("theorem2_signs", "signs"),
    ("scan_order", "order"), ("scan_order", "distinct_tokens"),
    ("scan_order_sgd", "order"), ("scan_order_sgd", "winners"),
    ("snap_reduced", "winners"), ("snap_reduced", "distinct_tokens"),
    ("winner_sgd", "rule"), ("winner_sgd", "distinct_tokens"),
    ("residual_open", "signs"),
]
# residual_open reads its CTs off P's support (Section 3.2's types), not from common_tokens:
# that function reaches it only through the sign rule, whose output is validated above


@pytest.mark.parametrize("how", sorted(_WRONG))
@pytest.mark.parametrize(("claim_id", "fn"), _INDEX_CONSUMERS)
def test_an_invalid_index_from_a_wrong_theory_fails_a_part(claim_id, fn, how, monkeypatch):
    """Token indices (and signs) from a wrong theory that are no indices (floats from a scale
    mutant, negative ones from a sign flip, out of range) fail a part with the reason before
    any run; the check never raises."""
    from verify import scan_snap as vs

    claim = next(c for c in vs.claims() if c.id == f"scan_snap.{claim_id}")
    wrong = _WRONG[how]
    kwargs = dict(claim.theory)
    if fn in kwargs:
        right = kwargs[fn]
        kwargs[fn] = lambda *a, _r=right: wrong(_r(*a))
    else:
        right = getattr(ts, fn)
        monkeypatch.setattr(ts, fn, lambda *a, _r=right: wrong(_r(*a)))
    if fn == "signs" and how == "sign":
        # not an invalid index: flipping a sign rule's output gives valid signs (-1, 0, +1),
        # which the check judges as a wrong prediction (its control covers that), so there is
        # no "theory output usable" failure to assert here
        pytest.skip("a sign-flipped sign rule returns valid signs: the check judges them")
    ev = claim.function(claim.examples[0].params, Context(profile="test"), **kwargs)
    assert ev.status == "refuted"
    bad = [p for p in ev.parts if p.failed]
    assert bad and "not what it claims" in bad[0].error_model, bad[0].error_model


@pytest.mark.parametrize("M", [300, 1000, 5000])
def test_lemma8_crossing_is_lemma6_at_the_larger_root(M):
    """The crossing time of snap_reduced's t0 part solves Lemma 6's implicit equation at
    the larger root x* of e^x = (M-1) x: t* = K (2 (M-1) x* - 1)/(M eta_Y)."""
    from verify import scan_snap as vs

    K, eY = 2, 3.0
    t = vs._lemma8_crossing(M, K, eY)
    x = M * ts.decoder_scale(t / K, M, eY)
    assert math.exp(x) == pytest.approx((M - 1) * x, rel=1e-9)
    assert x > math.log(M)
    assert t == pytest.approx(K * (2 * (M - 1) * x - 1) / (M * eY), rel=1e-9)
    assert ts.snap_delta(M) == pytest.approx(t / (2 * K * math.log(M) / eY) - 1, rel=1e-10)
    with pytest.raises(ValueError, match="M"):
        ts.snap_delta(3)


# (claim, theory function sign-flipped in theory.scan_snap): each raised from numpy, math or
# brentq inside a check or control under that mutant (tdcheck mutate at e61fc8a: a grid
# with a negative end, log1p of a value below -1, expm1 overflow, a bracket without a
# sign change); a wrong theory must fail a part with its reason instead
_TIME_CONSUMERS = [
    ("integrated_speed", "snap_time"),
    ("growth_exponent", "integrated_speed"), ("growth_exponent", "scan_time"),
    ("rate_scalings", "integrated_speed"), ("decoder_scale", "snap_time"),
    ("snap_reduced", "decoder_scale"),
]


@pytest.mark.parametrize(("claim_id", "fn"), _TIME_CONSUMERS)
def test_a_sign_flipped_time_or_speed_fails_a_part(claim_id, fn, monkeypatch):
    from verify import scan_snap as vs
    from verify.runner import run_claim

    right = getattr(ts, fn)
    monkeypatch.setattr(ts, fn, lambda *a, _r=right: -_r(*a))
    claim = next(c for c in vs.claims() if c.id == f"scan_snap.{claim_id}")
    res = run_claim(claim, "test")
    assert res.outcome == "refuted", (res.outcome, res.error_message)
    assert res.error_message is None and res.control_error is None


def test_a_flow_under_test_that_blows_up_fails_with_the_reason(monkeypatch):
    """The reduced and snap runs integrate the theory under test with escape bounds
    (ESCAPE_STATE, ESCAPE_RATE): the paper's flows finish inside them; a sign-flipped
    equation (a mutant of tdcheck mutate, which timed out at 767 s and 79 s before the
    bounds) raises InadmissibleTheory, which fails a part with the reason."""
    from theory.flow import InadmissibleTheory
    from verify.mutate import apply_mutation

    P = ((0.5, 0.25, 0.25, 0.0), (0.5, 0.0, 0.0, 0.5))
    t_red = tuple(np.r_[0.0, np.geomspace(1e-2, 300.0, 8)])
    red = ns.run_reduced(ns.ReducedConfig(P, 300, 10.0, 10.0, t_red))
    assert np.max(np.abs(red.z)) < ns.ESCAPE_STATE
    snap_cfg = ns.SnapConfig(1000, 10, 1.0, 0.5, 0.1,
                             tuple(np.r_[0.0, np.geomspace(1e-2, 1e3, 8)]))
    _, h, B = ns.run_snap_system(snap_cfg)
    assert np.all(np.isfinite(B)) and np.max(np.abs(B)) < ns.ESCAPE_STATE
    original_red, original_snap = ts.reduced_system, ts.snap_system
    monkeypatch.setattr(ts, "reduced_system", lambda *a: apply_mutation(
        original_red(*a), (("rhs", 1),), "sign", 0.0))
    with pytest.raises(InadmissibleTheory, match="escapes"):  # uncached: the mutant's own run
        ns.run_reduced.__wrapped__(ns.ReducedConfig(P, 300, 10.0, 10.0, t_red))
    monkeypatch.setattr(ts, "snap_system", lambda *a: apply_mutation(
        original_snap(*a), (("rhs", 1),), "sign", 0.0))
    with pytest.raises(InadmissibleTheory, match="escapes"):
        ns.run_snap_system.__wrapped__(snap_cfg)


def test_snap_delta_has_the_papers_order():
    """Theorem 4's delta' = Theta(ln ln M/ln M): the exact crossing (snap_delta) against its
    expansion ln L/L (1 + 1/L + O(ln L/L^2)), L = ln M, over M = 300 ... 1e6: the remainder
    shrinks like ln L/L^2 relative."""
    for M in (300, 1000, 5000, 10**5, 10**6):
        L = math.log(M)
        lead = math.log(L) / L * (1 + 1 / L)
        assert abs(ts.snap_delta(M) / lead - 1) < 2 * math.log(L) / L**2


def test_token_sets_must_partition_the_tokens_with_mass():
    """theorem2_signs reads G_DT(n) and G_CT as Section 3.2's types of P's support: the
    theory's sets pass; a CT left out (tdcheck mutate's surviving 'largest member dropped'
    on b89259e), a DT in the other class's set, a CT listed as a DT or a token without mass
    fails that part, naming the tokens, beside the simulation parts (which still run)."""
    from verify import scan_snap as vs

    P = np.array([[0.5, 0.25, 0.25, 0.0, 0.0, 0.0], [0.4, 0.0, 0.0, 0.3, 0.3, 0.0]])
    dts = ts.distinct_tokens(P)
    cts = list(ts.common_tokens(P))
    assert dts == ((1, 2), (3, 4)) and cts == [0]
    assert vs._token_partition(P, dts, cts).status == "pass"
    for bad_dts, bad_cts in ((dts, []), (((1,), (2, 3, 4)), cts), (((0, 1, 2), (3, 4)), []),
                             (dts, cts + [5])):
        part = vs._token_partition(P, bad_dts, bad_cts)
        assert part.status == "fail" and "misplaced: {" in part.error_model


@pytest.mark.parametrize("wrong", ["drop", "add"])
def test_theorem2_signs_judges_every_token_of_a_type_in_the_flow(wrong, monkeypatch):
    """The CT-sign simulation part judges every CT of P's support, not the tokens the theory
    calls CTs: a common_tokens that drops its largest member (so the sign rule predicts 0
    there) or adds a DT fails that simulation part, not only the partition part."""
    from verify import scan_snap as vs

    claim = next(c for c in vs.claims() if c.id == "scan_snap.theorem2_signs")
    right = ts.common_tokens

    def mutated(probs):
        cts = tuple(right(probs))
        return cts[:-1] if wrong == "drop" else cts + (max(cts) + 1,)

    monkeypatch.setattr(ts, "common_tokens", mutated)
    ev = claim.function(claim.examples[0].params, Context(profile="test"), **claim.theory)
    status = {p.name: p.status for p in ev.parts}
    assert status["CT sign"] == "fail"
    assert status["token types partition the context tokens (Section 3.2)"] == "fail"


def test_theorem2_signs_reads_eqn10_rows_against_the_flow():
    """theorem2_signs' Eqn 10 part passes with reduced_system and fails (the other parts
    passing) when one token's z row has its sign flipped (tdcheck mutate's surviving
    '.rhs[4] sign flip' on 46c6699): the flow's dz/dt disagrees at every saved time."""
    from verify import mutate as mu
    from verify import scan_snap as vs

    claim = next(c for c in vs.claims() if c.id == "scan_snap.theorem2_signs")
    name = "Eqn 10 rows' signs at the flow's states"

    def flipped(*args, **kwargs):
        return mu.apply_mutation(ts.reduced_system(*args, **kwargs), (("rhs", 4),), "sign", 0.05)

    params = claim.examples[0].params
    right = {p.name: p for p in claim.function(params, Context(profile="test"),
                                                **claim.theory).parts}
    wrong = {p.name: p for p in claim.function(params, Context(profile="test"),
                                                **{**claim.theory, "system": flipped}).parts}
    assert right[name].status == "pass" and right[name].observed == 0.0
    assert wrong[name].status == "fail"
    assert wrong[name].details["tokens with a wrong or vanishing sign"] == [3]
    assert wrong["DT gain (dz > 0)"].status == wrong["CT sign"].status == "pass"


def test_eqn26_update_is_lemma3_and_the_residuals_give_the_gradient():
    """The population gradient of the class-averaged loss in Y is -(1/K) F^T R (autograd
    against numerics.scan_snap.decoder_residuals), and Eqn 26's modified update moves
    W = F^T Y by exactly R / K (Lemma 3), at a random (Y, Z)."""
    import torch

    facts = ns.make_facts(ns.DataConfig(num_unique_per_next=4, num_common=3))
    gen = torch.Generator().manual_seed(0)
    Y = torch.randn(facts.M, facts.M, generator=gen, dtype=torch.float64, requires_grad=True)
    Z = 0.3 * torch.randn(facts.M, facts.M, generator=gen, dtype=torch.float64)
    (gY,) = torch.autograd.grad(ns.population_loss({"Y": Y, "Z": Z}, facts), Y)
    F_rows = ns.class_features(Z, facts)
    R = ns.decoder_residuals(Y.detach(), Z, facts)
    # both sides are the same algebra in float64 on O(1) entries (|R| <= 1, |f| <= 1, M = 14
    # terms per sum): rounding is a few eps ~ 1e-15, so 1e-14 is a 10-50x margin (measured
    # 2.8e-17 and 1.7e-16 when written); a wrong formula misses by O(1/K)
    assert torch.allclose(-gY, F_rows.T @ R / facts.K, rtol=0, atol=1e-14)
    U = ns.eqn26_update(Y.detach(), Z, facts)
    assert torch.allclose(F_rows @ U, R / facts.K, rtol=0, atol=1e-14)
    # the modification is not a no-op: at this Z the classes overlap (3 CTs), so the two
    # updates differ by F E' R / K (0.32 at most, measured when written), far above 1e-6, which only
    # keeps rounding-level agreement from counting as "different"
    assert not torch.allclose(U, -gY, rtol=0, atol=1e-6)


def test_eqn26_flow_is_its_own_run():
    """The Eqn 26 flow is not the model's gradient flow: each run function refuses the
    other's update, and Eqn 26 is not defined with a residual connection."""
    cfg = ns.FlowConfig(data=ns.DataConfig(num_unique_per_next=3, num_common=2),
                        t_eval=(0.0, 0.1), y_update="eqn26")
    with pytest.raises(ValueError):
        ns.run_population_flow(cfg)
    with pytest.raises(ValueError):
        ns.run_eqn26_flow(ns.FlowConfig(t_eval=(0.0, 0.1)))
    with pytest.raises(ValueError):
        ns.FlowConfig(y_update="eqn26", residual=True)
    with pytest.raises(ValueError):
        ns.FlowConfig(y_update="modified")
    a = ns.run_eqn26_flow(cfg)
    b = ns.run_population_flow(ns.FlowConfig(data=cfg.data, t_eval=cfg.t_eval))
    assert np.all(np.isfinite(a.zq)) and not np.allclose(a.Y[-1], b.Y[-1])


@pytest.mark.parametrize("M", [2, 7, 253])
def test_zeta_overlaps_are_the_dot_products_of_zeta(M):
    """q_1 and q_0 (theory.scan_snap.zeta_overlaps) against the explicit vectors
    zeta_n = M/(M-1)(e_n - 1/M): q_1 = M/(M-1), q_0 = -M/(M-1)^2."""
    zeta = np.stack([M / (M - 1) * (np.eye(M)[i] - 1 / M) for i in range(2)])
    q1, q0 = ts.zeta_overlaps(M)
    assert q1 == pytest.approx(zeta[0] @ zeta[0], rel=1e-13)
    assert q0 == pytest.approx(zeta[0] @ zeta[1], rel=1e-13)


def test_population_flow_from_a_random_z_starts_there_and_keeps_its_row_sums():
    """FlowConfig.z_init_seed starts Z's query rows at Model2's random init (Y(0) = 0), and
    the flow keeps Z 1 at its initial value (Lemma 1: the rows' updates sum to 0)."""
    data = ns.DataConfig(num_unique_per_next=3, num_common=2)
    cfg = ns.FlowConfig(data=data, t_eval=(0.0, 0.5, 2.0), z_init_seed=3)
    run = ns.run_population_flow(cfg)
    M = run.facts.M
    Z0 = ns.init_member(M, False, torch.Generator().manual_seed(3))["Z"].numpy()
    np.testing.assert_array_equal(run.zq[0], Z0[run.facts.query])
    assert np.all(run.Y[0] == 0)
    # Z 1 is a linear invariant of the flow (Lemma 1), which Runge-Kutta steps keep up to
    # rounding; 1e-9 is a rounding bound with room (RK45's 7 stages x 11 components x a few
    # hundred steps x eps x max|z| < 0.3 is ~1e-12; 0.0 drift measured when written), and
    # far below what a start not held (a changed Z(0) 1, O(0.1)) would show
    np.testing.assert_allclose(run.zq[-1].sum(-1), run.zq[0].sum(-1), rtol=0, atol=1e-9)
    zero = ns.run_population_flow(ns.FlowConfig(data=data, t_eval=cfg.t_eval))
    assert not np.allclose(zero.zq[-1], run.zq[-1])


def test_reduced_system_from_a_random_start():
    """ReducedConfig.z0 starts the reduced system there (model2_logits: U(-1/sqrt M,
    1/sqrt M), reproducible), keeps Z 1 at its start, and a z0 of the wrong length raises."""
    probs = ((0.5, 0.3, 0.2, 0.0), (0.5, 0.0, 0.0, 0.5))
    z0 = ns.model2_logits(4, 100, seed=2)
    assert z0 == ns.model2_logits(4, 100, seed=2) and max(map(abs, z0)) <= 0.1
    cfg = ns.ReducedConfig(probs, 100, 10.0, 1.0, (0.0, 1.0, 10.0), z0=z0)
    res = ns.run_reduced(cfg)
    np.testing.assert_array_equal(res.z[0], z0)
    # rounding only: the same derived bound as dt_invariant's part, 13 L N eps max|z| (DOP853's
    # 12 stages + the update, L components, N accepted steps; 1.5e-16 measured when written)
    steps = len(res.step_t) - 1
    bound = 13 * res.z.shape[1] * steps * np.finfo(float).eps * np.abs(res.z).max()
    np.testing.assert_allclose(res.z.sum(1), sum(z0), rtol=0, atol=bound)
    with pytest.raises(ValueError):
        ns.reduced_start(ns.ReducedConfig(probs, 100, 10.0, 1.0, (0.0, 1.0), z0=(0.0,)))


def test_eqn11_statistics_refuse_a_sign_flipped_gain_and_a_foreign_winner(monkeypatch):
    """A sign-flipped attention_gain (chi < 0, whose logarithm is NaN) and a winner outside
    the class's DTs fail with the reason (InadmissibleTheory); neither passes with error 0."""
    import verify.scan_snap as vs
    from theory.flow import InadmissibleTheory

    data = ns.DataConfig(num_unique_per_next=3, num_common=2)
    flow = ns.run_population_flow(ns.FlowConfig(data=data, t_eval=(0.0, 0.5, 2.0)))
    expo, band = vs._eqn11_errors(flow.zq[None], flow.facts, 2.0)
    assert np.all(np.isfinite(expo)) and np.all(np.isfinite(band))
    real = ts.attention_gain
    monkeypatch.setattr(ts, "attention_gain", lambda z, z0, p=2.0: -real(z, z0, p))
    with pytest.raises(InadmissibleTheory):
        vs._eqn11_errors(flow.zq[None], flow.facts, 2.0)
    monkeypatch.setattr(ts, "attention_gain", real)
    monkeypatch.setattr(ts, "winners", lambda P, z0=None: (0,) * np.asarray(P).shape[0])
    with pytest.raises(InadmissibleTheory):
        vs._eqn11_errors(flow.zq[None], flow.facts, 2.0)


def test_exponent_error_reads_the_last_decade_of_ln_chi():
    """On the population claims' grid (0, then 20 geometric times to 100 t0) with ln chi
    linear in t: an exact Eqn 11 gives 0; a 1 % alternating tilt of r, invisible at the
    ends, fails the 25 % threshold along the window; 5 times are read; chi(T) = 1 (no
    gain) gives an infinite or undefined error, which fails a part, never a pass."""
    import verify.scan_snap as vs

    t = np.r_[0.0, np.geomspace(1e-2, 221.3, 20)]
    lnchi = 1.2e-3 * t / t[-1]
    chi = np.exp(lnchi)
    grown = chi.copy()  # r(t)/r(0) = chi(t): Eqn 11 exactly
    assert vs._exponent_error(grown, chi, along=True) < 1e-9
    tilt = np.where(np.arange(t.size) % 2, 0.99, 1.01)
    tilted = grown * tilt / tilt[0]
    assert vs._exponent_error(tilted, chi, along=False) < 1e-9  # the ends see nothing
    assert vs._exponent_error(tilted, chi, along=True) > 0.25
    sel = np.abs(lnchi) >= np.abs(lnchi[-1]) / vs.EXPONENT_DECADE
    assert int(sel[1:].sum()) == 5
    flat = np.ones_like(chi)
    err = vs._exponent_error(grown, flat, along=True)
    assert not np.isfinite(err) or err > 0.25


def test_population_gd_is_plain_gradient_descent_of_the_model():
    """run_population_gd takes plain steps of the model's own population gradient: step 1
    from zero init moves Y by -eta_Y grad_Y L(0) (autograd on population_loss), records the
    model's logits f_n^T Y per class, and with eta_Z > 0 moves Z's query rows with their
    row sums kept (Lemma 1); with eta_Z = 0 Z stays at 0."""
    data = ns.DataConfig(num_unique_per_next=3, num_common=2)
    run = ns.run_population_gd(ns.PopulationGDConfig(data=data, eta_Y=2.0, eta_Z=1.0, steps=3))
    f = run.facts
    M = f.M
    Y = torch.zeros(M, M, dtype=torch.float64, requires_grad=True)
    Z = torch.zeros(M, M, dtype=torch.float64)
    (gY,) = torch.autograd.grad(ns.population_loss({"Y": Y, "Z": Z}, f), Y)
    one = (ns.class_features(Z, f) @ (-2.0 * gY)).numpy()
    # the same float64 operations in the same order: bitwise equal
    np.testing.assert_array_equal(run.logits[1], one)
    assert run.logits.shape == (4, f.K, M) and np.all(run.logits[0] == 0)
    assert np.any(run.zq[-1] != 0)
    # Z's query rows sum to 0 at every step (Lemma 1: each update's entries sum to 0 in
    # exact arithmetic).  Float64 rounding only: each step rounds M entries by eps |z| each
    # (at most M eps max|z| on the row sum per step), and the final sum of M terms adds
    # M eps max|z| more, so (steps + 1) M eps max|z|, x 4 for the update's own rounding
    bound = 4 * (run.zq.shape[0]) * M * np.finfo(float).eps * np.abs(run.zq).max()
    np.testing.assert_allclose(run.zq.sum(-1), 0.0, rtol=0, atol=bound)
    frozen = ns.run_population_gd(ns.PopulationGDConfig(data=data, eta_Y=2.0, steps=3))
    assert np.all(frozen.zq == 0)


def test_decoder_loss_is_the_cross_entropy_of_lemma5s_logits():
    """theory.scan_snap.decoder_loss: its sympy form equals log(1 + (M-1) e^{-M h}) and the
    cross-entropy of the logits (M-1) h (own) and -h (others), computed by torch; ln M at
    t = 0; and the float function agrees with the expression (mpmath, 50 digits) along
    Lemma 6's h, where its log1p form keeps precision as the loss falls."""
    expr = ts._decoder_loss_expr()
    M, h = ts.M_SYM, ts.H
    assert sp.simplify(expr - sp.log(1 + (M - 1) * sp.exp(-M * h))) == 0
    for m, hv in ((2, 0.3), (34, 0.05), (253, 0.01)):
        logits = torch.full((1, m), -hv, dtype=torch.float64)
        logits[0, 0] = (m - 1) * hv
        ce = float(F.cross_entropy(logits, torch.zeros(1, dtype=torch.long)))
        assert ce == pytest.approx(float(expr.subs({M: m, h: hv})), rel=1e-13)
    assert ts.decoder_loss(0.0, 34, 2, 1.0) == pytest.approx(math.log(34), rel=1e-15)
    mpmath.mp.dps = 50
    for t in (0.01, 1.0, 30.0, 1e3, 1e6):
        x = ts.decoder_scale(t / 2, 23, 1.0) * 23
        exact = mpmath.log1p(22 * mpmath.exp(-mpmath.mpf(x)))
        # the root x carries ~4 eps relative; the loss's sensitivity d ln L/d ln x is at most
        # x (the loss ~ (M-1) e^{-x} at large x), so 8 (1 + x) eps relative bounds both
        assert ts.decoder_loss(t, 23, 2, 1.0) == pytest.approx(
            float(exact), rel=8 * (1 + x) * np.finfo(float).eps)


@pytest.mark.parametrize("M", [9, 11, 23, 64])
def test_parabola_peak_bounds_its_error_on_gammas_own_curve(M):
    """verify.scan_snap._parabola_peak on the theory's gamma at decoder_full_model's dense
    times (K/eta_Y geomspace(1e-6, 10 M, 400)): the vertex lies within its stated bound of
    gamma's true peak time (speed_peak_time, tested against its own root elsewhere), so the
    peak parts' allowance is a bound, not a fit.  M covers the strategy's range (K = 2, 3
    with 3-20 DTs per class)."""
    from verify import scan_snap as vs
    K, eta_Y = 2, 1.0
    times = K / eta_Y * np.geomspace(1e-6, 10 * M, 400)
    g = np.array([ts.speed_control(t, M, K, eta_Y) for t in times])
    vertex, bound = vs._parabola_peak(np.log(times), g)
    assert abs(vertex - math.log(ts.speed_peak_time(M, K, eta_Y))) <= bound


def test_decoder_full_model_new_parts_fail_an_unusable_theory_with_a_reason():
    """The rate, peak, loss and Eqn 33 parts of decoder_full_model take an unusable theory
    output (an exception, a string, NaN, a wrong shape) as one failed part with its reason,
    never a crash, and a bad peak_scale does not spoil the peak-time part."""
    from verify import scan_snap as vs

    def raises(*args):
        raise ValueError("an unusable theory")

    data = ns.DataConfig(num_last=1, num_next_per_last=2, num_common=0, num_unique_per_next=3)
    facts = ns.make_facts(data)
    M, K = facts.M, facts.K
    times = K * np.geomspace(1e-2, 10 * M, 10)
    flow = ns.run_population_flow(ns.FlowConfig(data=data, eta_Y=1.0, eta_Z=0.0,
                                                t_eval=tuple(float(t) for t in times)))
    for bad in (lambda x, M, e: "abc", lambda x, M, e: np.full_like(x, np.nan),
                lambda x, M, e: np.zeros(3), raises):
        part = vs._rate_part(flow, facts, 1.0, bad)
        assert part.status == "fail" and part.error_model
    gd = ns.run_population_gd(ns.PopulationGDConfig(data=data, eta_Y=1.0, steps=20))
    for bad in (lambda s, M, e: math.nan, lambda s, M, e: "x", raises):
        assert vs._gd_steps_part(gd, 1.0, bad).status == "fail"
    runs = [flow, flow]
    assert vs._loss_part(runs, times, facts, 1.0, 1e-9,
                         lambda t, M, K, e: math.nan).status == "fail"
    dense_t = vs._dense_times(facts, 1.0)
    dense = ns.run_population_flow(ns.FlowConfig(data=data, eta_Y=1.0, eta_Z=0.0,
                                                 t_eval=tuple(float(t) for t in dense_t),
                                                 rtol=1e-11, atol=1e-13))
    q1, q0 = ts.zeta_overlaps(M)
    h, g, _ = vs._decoder_readouts(dense, facts, q1, q0)
    t_part, x_part = vs._speed_peak_parts(dense_t, g.mean(axis=1), M * h.mean(axis=(1, 2)),
                                          M, K, 1.0, ts.speed_peak_time,
                                          raises)
    assert t_part.status == "pass" and x_part.status == "fail"


def test_sgd_with_momentum_keeps_lemma1s_row_sums():
    """Lemma 1 in the trained model (formerly the claim invariants_sgd, which consumed no
    theory function: a property of the model, not a comparison with the reduced theory):
    under SGD with momentum from Model2's random init, Y 1 and Z 1 stay at their initial
    values at every step, to float64 rounding (16 M steps eps of max|.|, the bound the claim
    used); the column sums 1^T Y, 1^T Z, which Lemma 1 does not conserve, move."""
    cfg = ns.SGDConfig(data=ns.DataConfig(num_last=2, num_next_per_last=1), ratio=(1.0, 10.0),
                       seeds=(1, 2), steps=20, batch=8, length=16, zero_init=False)
    res = ns.run_sgd(cfg)
    M = res.facts.M
    eps = np.finfo(float).eps
    tol_y = 16 * M * cfg.steps * eps * float(np.abs(res.Y).max())
    tol_z = 16 * M * cfg.steps * eps * float(np.abs(res.Z).max())
    assert np.abs(res.y_rowsum - res.y_rowsum[:, :1]).max() <= tol_y
    assert np.abs(res.z_rowsum - res.z_rowsum[:, :1]).max() <= tol_z
    inits = {s: ns.init_member(M, False, torch.Generator().manual_seed(s)) for s in cfg.seeds}
    y0 = np.stack([inits[s]["Y"].numpy() for _, _, s in res.members])
    # the recorded step-0 row sums are the init's: the trainer stores Y / a and multiplies
    # back (two roundings, 2 eps relative per entry) and may sum in another order (M eps
    # max|Y|), so 4 M eps max|Y(0)| bounds the difference; a wrong start is O(max|Y(0)|)
    tol_0 = 4 * M * eps * float(np.abs(y0).max())
    np.testing.assert_allclose(res.y_rowsum[:, 0], y0.sum(-1), rtol=0, atol=tol_0)
    assert np.abs(res.Y.sum(1) - y0.sum(1)).max() > 1e3 * tol_y

