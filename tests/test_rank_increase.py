"""rank_increase row: Algorithm 1 (exact and numeric), reduced flows, numerics, claims."""

import math
from dataclasses import replace

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics import rank_increase as nr
from numerics.ode import integrate
from theory import rank_increase as tr


@pytest.fixture
def fresh_runs():
    """Empty the in-process run memos and every derivation cache (as tdcheck mutate does
    between mutants) before and after a test that patches theory/: the memos key on
    sources, not patches, so a run made under a wrong theory would otherwise be served to a
    later test."""
    from verify.mutate import _clear_caches

    _clear_caches()
    yield
    _clear_caches()


R = sp.Rational


# ---------------------------------------------------------------------- theory: Algorithm 1
def test_three_coordinate_table_exact():
    H, beta, _, _ = tr.three_coordinate_example()
    stages = tr.quadratic_stages(H, beta)
    assert [s.jump_time for s in stages] == [R(40, 29), R(185, 94), R(185, 36), R(595, 12)]
    assert [s.plateau for s in stages] == [
        (R(145, 214), 0, 0), (R(27, 58), R(47, 145), 0), (0, R(13, 20), R(9, 20)),
        (R(-1, 2), 1, R(4, 5))]
    assert [(s.coordinate, s.sign, s.deactivated) for s in stages] == [
        (0, 1, ()), (1, 1, ()), (2, 1, (0,)), (0, -1, ())]
    assert [s.clocks for s in stages] == [
        (1, R(26, 29), R(18, 29)), (1, 1, R(57, 94)), (1, 1, 1), (-1, 1, 1)]
    assert [s.loss for s in stages] == [R(-841, 3424), R(-6359, 23200), R(-5, 16), R(-259, 800)]


def test_float_input_gives_floats_and_same_numbers():
    H, beta, _, _ = tr.three_coordinate_example()
    exact = tr.quadratic_stages(H, beta)
    flt = tr.quadratic_stages(np.array(H.tolist(), dtype=float), [float(b) for b in beta])
    assert all(isinstance(s.jump_time, float) for s in flt)
    for a, b in zip(exact, flt, strict=True):
        assert float(a.jump_time) == pytest.approx(b.jump_time, rel=1e-12)
        assert np.allclose(np.array(a.plateau, float), b.plateau, atol=1e-12)


def test_toy_head_table():
    X = nr.teacher_toy()
    head = tr.diagonal_head_problem(X, (2, 0, 0), (1, 0.5, 0))
    assert head.loss(np.zeros(6)) == pytest.approx(2.96788, abs=1e-5)
    assert np.allclose(head.gradient(np.zeros(6)), [0, 0, 0, -1.13386, -0.24396, 0], atol=1e-5)
    stages = tr.incremental_stages(head.loss, 6, gradient=head.gradient)
    assert [round(float(s.jump_time), 5) for s in stages] == [0.88194, 1.00983, 2.40234]
    assert [(s.coordinate, s.sign) for s in stages] == [(3, 1), (0, 1), (4, 1)]
    assert np.allclose(stages[-1].plateau, (2, 0, 0, 1, 0.5, 0), atol=1e-8)


@st.composite
def _quadratic(draw):
    p = draw(st.integers(2, 3))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, size=(p, p + 1))
    H = sp.Matrix(A @ A.T) + sp.eye(p)
    beta = sp.Matrix(rng.integers(-5, 6, size=p))
    return H, beta


@settings(max_examples=6)
@given(_quadratic())
def test_stage_functions_agree_on_quadratics(hb):
    H, beta = hb
    w = sp.symbols(f"w0:{H.rows}", real=True)
    g = tr.quadratic_loss(H, beta, w)
    exact = tr.quadratic_stages(H, beta)
    numeric = tr.incremental_stages(g, w)
    assert len(exact) == len(numeric)
    for a, b in zip(exact, numeric, strict=True):
        assert float(a.jump_time) == pytest.approx(b.jump_time, rel=1e-6)
        assert np.allclose(np.array(a.plateau, float), b.plateau, rtol=1e-6, atol=1e-9)
        assert (a.coordinate, a.sign, a.deactivated) == (b.coordinate, b.sign, b.deactivated)


@given(st.integers(1, 40), st.integers(-39, 39), st.integers(-9, 9))
def test_two_coordinate_closed_form_matches_algorithm(b1, b2, r):
    if b1 <= abs(b2):
        b1, b2 = abs(b2) + 1, b1 % (abs(b2) + 1)
    beta1, beta2, rho = R(b1, 10), R(b2, 10), R(r, 10)
    T1, T2 = tr.two_coordinate_jump_times(beta1, beta2, rho)
    stages = tr.quadratic_stages([[1, rho], [rho, 1]], [beta1, beta2])
    assert stages[0].jump_time == T1
    if T2 == sp.oo:
        assert len(stages) == 1
    else:
        assert stages[1].jump_time == T2
        assert stages[1].deactivated == ()


def test_two_coordinate_spec_numbers():
    assert tr.two_coordinate_jump_times(1, R(3, 5), R(3, 10)) == (1, R(7, 3))
    T1, T2 = tr.two_coordinate_jump_times(1.0, 0.6, 0.3)
    assert float(T2) == pytest.approx(7 / 3)


def test_first_jump_times():
    assert tr.first_jump_time([R(-1, 2), R(1, 3)]) == 2
    assert tr.first_jump_time([0, 0]) == sp.oo
    assert tr.first_jump_time_full([[0, 0], [0, 0]], [[3, 0], [0, 4]]) == R(1, 4)
    assert tr.first_jump_time_full(np.array([[0.0, 2.0], [0.0, 0.0]])) == pytest.approx(0.5)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: tr.quadratic_stages([[1, 2], [2, 1]], [1, 1]), "H"),
    (lambda: tr.quadratic_stages([[1, 0], [1, 1]], [1, 1]), "H"),
    (lambda: tr.quadratic_stages([[1, 0], [0, 1]], [1, 1, 1]), "beta"),
    (lambda: tr.two_coordinate_jump_times(1, R(1, 2), 1), "rho"),
    (lambda: tr.two_coordinate_jump_times(R(1, 2), 1, 0), "beta1"),
    (lambda: tr.incremental_stages(lambda w: 0.0, 2), "gradient"),
])
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_clock_path_and_staircase_interpolate_stages():
    H, beta, _, _ = tr.three_coordinate_example()
    stages = tr.quadratic_stages(H, beta)
    knots = [float(s.jump_time) for s in stages]
    b = tr.clock_path(stages, [0.0] + knots)
    assert np.allclose(b[0], 0)
    assert np.allclose(b[1:], np.array([[float(x) for x in s.clocks] for s in stages]))
    stair = tr.staircase(stages, [0.5, 1.5, 60.0], 0.0)
    assert np.allclose(stair, [0.0, float(stages[0].loss), float(stages[-1].loss)])


def test_vo_first_symbolic():
    eqs = {eq.name: eq.expr for eq in tr.equations()}
    assert tuple(eqs["KQ gradient at nu = 0 (N = d = 2)"]) == (0, 0)
    g, kappa, nu = tr.diagonal_head_loss_symbolic(2, 1, value_skip=True)
    assert sp.expand(sp.diff(g, kappa[0]).subs({n_: 0 for n_ in nu})) != 0


# ---------------------------------------------------------------------- theory: reduced flows
def test_diagonal_flow_conserves_imbalance_and_log_flow_is_equivalent():
    H, beta, u0, v0 = tr.three_coordinate_example()
    w = sp.symbols("w0:3", real=True)
    g = tr.quadratic_loss(H, beta, w)
    diag = tr.diagonal_flow(g, w)
    assert all(diag.drift(f"imbalance_{i}") == 0 for i in range(3))
    logf = tr.log_flow(g, w)
    alpha, t_end = 1e-2, 12.0
    t = np.linspace(0, t_end, 25)
    y0 = np.concatenate([alpha * np.array(u0), alpha * np.array(v0)])
    raw = integrate(diag, y0, t_end, t_eval=t, rtol=1e-11, atol=1e-14)
    w_raw = raw.y[:3] * raw.y[3:]
    s0, kappa = tr.log_coordinates(u0, v0, alpha)
    sol = integrate(logf, s0, t_end, dict(zip(logf.params, kappa, strict=True)), t_eval=t)
    w_log = tr.weights_from_log(sol.y.T, kappa[None, :]).T
    assert np.max(np.abs(w_raw - w_log)) < 1e-6


def test_log_coordinates_roundtrip():
    u0, v0 = np.array([0.9, -0.6]), np.array([0.4, 0.8])
    s, k = tr.log_coordinates(u0, v0, 0.1)
    assert np.allclose(tr.weights_from_log(s, k), 0.01 * u0 * v0)
    with pytest.raises(ValueError, match="u0"):
        tr.log_coordinates([1.0], [1.0], 0.1)


def test_head_gradients_match_finite_differences():
    X = nr.teacher_toy(n=4)
    head = tr.diagonal_head_problem(X, (2, 0, 0), (1, 0.5, 0))
    w = np.random.default_rng(3).standard_normal(6) * 0.5
    h = 1e-6
    fd = [(head.loss(w + h * e) - head.loss(w - h * e)) / (2 * h) for e in np.eye(6)]
    assert np.allclose(head.gradient(w), fd, atol=1e-7)
    rng = np.random.default_rng(4)
    M, P = rng.standard_normal((3, 3)) * 0.3, rng.standard_normal((3, 3)) * 0.3
    G_M, G_P = tr.full_head_gradients(X, head.Y, M, P)

    def loss(M_, P_):
        A = np.exp(np.einsum("nai,ij,nbj->nab", X, M_, X))
        A /= A.sum(-1, keepdims=True)
        return 0.5 * np.sum((A @ X @ P_ - head.Y) ** 2) / X.shape[0]

    E = np.zeros((3, 3))
    E[0, 1] = h
    assert (loss(M + E, P) - loss(M - E, P)) / (2 * h) == pytest.approx(G_M[0, 1], abs=1e-7)
    assert (loss(M, P + E) - loss(M, P - E)) / (2 * h) == pytest.approx(G_P[0, 1], abs=1e-7)
    assert np.allclose(tr.full_head_gradients(X, head.Y, np.zeros((3, 3)),
                                              np.zeros((3, 3)))[0], 0)


def test_equations_are_sympy():
    eqs = {eq.name: eq.expr for eq in tr.equations()}
    assert eqs["imbalance u0^2 - v0^2 drift"] == 0
    assert eqs["three-coordinate T_4"] == R(595, 12)
    assert all(isinstance(v, sp.Basic) for v in eqs.values())


def test_quadratic_loss_and_its_float_forms_agree():
    H, beta, _, _ = tr.three_coordinate_example()
    w = (R(1, 3), R(-2, 5), R(3, 7))
    exact = tr.quadratic_loss(H, beta, w)
    Hn, bn = np.array(H.tolist(), dtype=float), np.array([float(b) for b in beta])
    assert tr.quadratic_value(Hn, bn, [float(x) for x in w]) == pytest.approx(float(exact))
    grad = [sp.diff(tr.quadratic_loss(H, beta, sp.symbols("w0:3")), x) for x in sp.symbols("w0:3")]
    at = {x: v for x, v in zip(sp.symbols("w0:3"), w, strict=True)}
    assert np.allclose(tr.quadratic_gradient(Hn, bn, [float(x) for x in w]),
                       [float(gi.subs(at)) for gi in grad])


def test_log_weight_twin_and_imbalance():
    s, k = np.array([0.3, -1.2]), np.array([-0.5, -4.0])
    assert np.allclose(tr.weights_from_log(s, k), 0.25 * (np.exp(2 * s) - np.exp(2 * k - 2 * s)))
    assert sp.simplify(tr.log_weight(tr.SIGMA, tr.KAPPA).subs(tr.SIGMA, tr.KAPPA / 2)) == 0
    u, v = sp.symbols("u v", real=True)
    assert tr.imbalance(u, v) == u**2 - v**2


# ---------------------------------------------------------------------- numerics
def test_torch_losses_match_theory():
    head = nr.head_problem(n=4)
    hp = nr.diagonal_head(head)
    fn = nr.torch_loss(head, "cpu")
    u, v = np.random.default_rng(0).standard_normal((2, 6)) * 0.7
    params = {"u": torch.tensor(u), "v": torch.tensor(v)}
    assert float(fn(params)) == pytest.approx(hp.loss(u * v), rel=1e-12)
    quad = nr.three_coordinate_problem()
    fq = nr.torch_loss(quad, "cpu")
    p3 = {"u": torch.tensor(u[:3]), "v": torch.tensor(v[:3])}
    assert float(fq(p3)) == pytest.approx(nr.problem_loss(quad)(u[:3] * v[:3]), rel=1e-12)


def test_ladder_member_equals_single_run():
    quad = nr.three_coordinate_problem()
    _, _, u0, v0 = tr.three_coordinate_example()
    both = nr.run_ladder(nr.LadderConfig(quad, alphas=(1e-2, 1e-3), u0=u0, v0=v0, lr=0.05,
                                          tau_max=0.5, record_every=10))
    one = nr.run_ladder(nr.LadderConfig(quad, alphas=(1e-3,), u0=u0, v0=v0, lr=0.05,
                                         tau_max=0.5, record_every=10))
    assert np.array_equal(both.w[1], one.w[0])
    # GD changes (u-v)(u+v) by exactly (1 - lr^2 g^2) per step: drift is O(lr^2)
    assert np.allclose(both.imbalance[:, 0], np.array([1e-4, 1e-6])[:, None]
                       * (np.array(u0) ** 2 - np.array(v0) ** 2))


def test_measurements():
    tau = np.linspace(0, 3, 301)
    loss = np.where(tau < 1, 2.0, np.where(tau < 2, 1.0, 0.0))
    # the grid step is 0.01, so a crossing is located to within one step (plus rounding)
    assert np.allclose(nr.jump_times(tau, loss, np.array([1.5, 0.5])), [1.0, 2.0], atol=0.011)
    assert nr.active_count(np.array([[1e-4, 0.5, -0.2]]), 1e-3).tolist() == [2]
    m = np.outer([1.0, 2.0], [3.0, -1.0])
    assert float(nr.stable_rank(m)) == pytest.approx(1.0)
    assert float(nr.stable_rank(np.eye(3))) == pytest.approx(3.0)
    assert float(tr.gd_escape_rate(1.0, 0.01)) == pytest.approx(math.log1p(0.01) / 0.01)
    assert float(tr.gd_imbalance_factor(2.0, 0.1)) == pytest.approx(0.96)
    sv = np.linalg.svd(np.stack([m, np.eye(2), np.zeros((2, 2))]), compute_uv=False)
    assert np.allclose(nr.stable_rank_from_singular_values(sv),
                       nr.stable_rank(np.stack([m, np.eye(2), np.zeros((2, 2))])))


def test_one_size_table_with_the_one_fallback_rule():
    for name in ("quadratic", "head"):
        assert nr.standard_ladder(name, "ci") == nr.standard_ladder(name, "quick")
        assert nr.standard_ladder(name, "thorough").alphas == nr.FIG2_ALPHAS
        assert nr.standard_log_flow(name, "thorough") == nr.standard_log_flow(name, "quick")
    assert nr.standard_ladder("head", "thorough", "adam").lr == 1e-3
    assert nr.standard_ladder("head", "test").alphas == (1e-2, 1e-4, 1e-8)
    assert nr.standard_full_head("thorough").alphas[-1] == 1e-12
    assert nr.standard_scale_sweep("test").steps == 400
    assert nr.standard_small_init_head("test").alphas == (1e-24,)
    imb = nr.standard_imbalance_run("quadratic", "quick")
    assert (imb.alphas, imb.record_every, imb.tau_max) == ((1e-2,), 1, 6.0)
    kicks = nr.standard_perturbations("test")
    assert {c.alpha for c in kicks.values()} == {1e-16}
    with pytest.raises(ValueError, match="profile"):
        nr.standard_ladder("head", "huge")


def test_log_flow_head_matches_spec_numbers():
    head = nr.head_problem()
    u0, v0 = nr.default_init(6, 1)
    run = nr.run_log_flow(nr.LogFlowConfig(head, alphas=(1e-24,), u0=u0, v0=v0,
                                            tau_max=1.8, points=181))
    j = int(np.argmin(np.abs(run.tau - 1.7)))
    assert np.allclose(run.w[0, j], (2, 0, 0, 1, 0, 0), atol=2e-3)


@pytest.mark.parametrize("wrong", [
    lambda s, k: (s, -k),            # the sign flip that ran a stiff flow for minutes
    lambda s, k: (-s, k),
])
@pytest.mark.parametrize("alpha", [1e-24, 1e-300])
def test_a_log_map_outside_small_init_is_inadmissible_before_any_integration(wrong, alpha,
                                                                          monkeypatch, fresh_runs):
    """A sign-flipped theory.log_coordinates (a shape tdcheck mutate makes) puts log|u +- v|
    near +2 log(1/alpha): not a small initialisation.  The run refuses it at once
    (InadmissibleTheory, a failed part in a check) instead of integrating a stiff flow."""
    from theory.flow import InadmissibleTheory

    right = tr.log_coordinates
    monkeypatch.setattr(tr, "log_coordinates", lambda *a: wrong(*right(*a)))
    u0, v0 = nr.default_init(6, 1)
    # a config no other test runs: the in-process run cache keys on sources, not patches
    cfg = nr.LogFlowConfig(nr.head_problem(), alphas=(alpha,), u0=u0, v0=v0, tau_max=0.5,
                           points=7)
    with pytest.raises(InadmissibleTheory, match="not a small initialisation"):
        nr.run_log_flow(cfg)


@pytest.mark.parametrize("wrong", [
    lambda s, k: (s, 1.05 * k),
    lambda s, k: (0.95 * s, k),
])
def test_a_wrong_small_start_is_integrated_from_where_the_theory_puts_it(wrong, monkeypatch, fresh_runs):
    """A wrong but small start (a scaled map) is the theory's prediction: the flow runs from
    it, so its w(0) is not the model's alpha^2 u0 v0 and the checks' comparisons with the
    model see the slip (issue 35; before, the run refused it and only an exact record-0
    part did)."""
    right = tr.log_coordinates
    monkeypatch.setattr(tr, "log_coordinates", lambda *a: wrong(*right(*a)))
    u0, v0 = nr.default_init(6, 1)
    alpha = 1e-3
    cfg = nr.LogFlowConfig(nr.head_problem(), alphas=(alpha,), u0=u0, v0=v0, tau_max=0.5,
                           points=5)
    run = nr.run_log_flow(cfg)
    w0 = alpha**2 * np.asarray(u0) * np.asarray(v0)
    assert np.all(np.isfinite(run.w))
    assert np.max(np.abs(run.w[0, 0] - w0) / np.abs(w0)) > 0.1


@pytest.mark.parametrize("name", ["quadratic", "head"])
def test_a_flow_uphill_is_inadmissible_not_integrated_for_minutes(name, monkeypatch):
    """A sign-flipped loss (quadratic: theory.quadratic_loss) or gradient (head: the
    diagonal head's analytic gradient) makes the log flow an ascent that diverges; the run
    stops where sigma reaches SIGMA_MAX and says so (InadmissibleTheory, a failed part in a
    check) instead of integrating to the mutant's time limit."""
    from theory.flow import InadmissibleTheory

    if name == "quadratic":
        right = tr.quadratic_loss
        monkeypatch.setattr(tr, "quadratic_loss", lambda *a: -right(*a))
        nr._quadratic_log_system.cache_clear()
    else:
        right_head = nr.diagonal_head

        class Flipped(tr.HeadProblem):
            def gradient(self, w):
                return -super().gradient(w)

        def flipped(problem):
            head = right_head(problem)
            return Flipped(head.X, head.Y)

        monkeypatch.setattr(nr, "diagonal_head", flipped)
    problem, (u0, v0) = nr._problem_and_init(name)
    cfg = nr.LogFlowConfig(problem, alphas=(1e-6,), u0=u0, v0=v0, tau_max=3.0, points=9)
    try:
        with pytest.raises(InadmissibleTheory, match="diverges"):
            nr.run_log_flow(cfg)
    finally:
        nr._quadratic_log_system.cache_clear()


# ---------------------------------------------------------------------- claims
def test_claims_listed_with_controls():
    from verify import rank_increase as vr

    cl = vr.claims()
    assert len(cl) >= 10
    assert len({c.id for c in cl}) == len(cl)
    for c in cl:
        assert c.check.func is c.control.func is c.function  # one check, two theories
        assert c.expected == "holds" or c.positive_control is not None
        assert all(ex.via for ex in c.examples)


def test_jump_time_claim_reports_predicted_and_extrapolated():
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    ev = vr.check_jump_times({"problem": "quadratic", "sim": "ode"}, ctx, theory=vr.PAPER_THEORY)
    pred = ev.details["ode_quadratic_T_predicted"]
    extr = ev.details["ode_quadratic_T_extrapolated"]
    assert pred == pytest.approx([40 / 29, 185 / 94, 185 / 36, 595 / 12])
    assert np.allclose(extr, pred, rtol=1e-2)
    assert ev.status == "holds"
    control = vr.check_jump_times({"problem": "quadratic", "sim": "ode"}, ctx,
                                  theory=vr.MEMORYLESS)
    assert control.part("ode_quadratic_T2").failed


@pytest.mark.parametrize("claim_id", ["rank_increase.algorithm1_tables",
                                      "rank_increase.imbalance",
                                      "rank_increase.perturbations"])
def test_claims_pass_and_controls_are_rejected(claim_id):
    from verify import rank_increase as vr
    from verify.runner import run_claim

    claim = next(c for c in vr.claims() if c.id == claim_id)
    result = run_claim(claim, "test")
    assert result.ok, result.problems()
    assert result.control_rejected


def test_adam_open_claim_and_its_positive_control():
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    claim = next(c for c in vr.claims() if c.id == "rank_increase.adam")
    assert claim.positive_control.run(ctx).status == "holds"
    ev = claim.check({"optimizer": "adam"}, ctx)
    assert ev.details["lr"] == 1e-3 and ev.details["predicted_order"] == [(3, 1), (0, 1), (4, 1)]
    assert any(n.startswith("adam_one_at_a_time") for n in ev.names)


# ---------------------------------------------------------------------- wrong theories fail, never raise
def _theory_with_stages(fn):
    from dataclasses import dataclass

    from verify import rank_increase as vr

    @dataclass(frozen=True)
    class Wrong(vr.Theory):
        def stages(self, problem, lr=0.0):
            return fn(vr.Theory.stages(self, problem, lr))

    return Wrong("wrong")


def test_plateaus_fail_a_part_when_the_theory_predicts_too_few_stages():
    from verify import rank_increase as vr
    from verify.claims import Context

    ev = vr.check_plateaus({"problem": "quadratic"}, Context(profile="test"),
                           theory=_theory_with_stages(lambda s: s[:1]))
    assert ev.part("quadratic_plateau_1").passed
    assert ev.part("quadratic_plateau_2").failed  # the flow has a plateau the theory lacks


def test_stable_rank_small_init_values_see_a_five_percent_plateau_error():
    """The small-init value parts compare the learned blocks' singular values with w^k's
    entries: a 5 % error of w^k (invisible to a stable rank) fails them; two stages (the
    third, rank-two VO plateau missing) fail the VO stable rank; a raising theory fails a
    part."""
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    ok = vr.check_stable_rank_scale({"model": "full_head"}, ctx, theory=vr.PAPER_THEORY)
    assert all(p.passed for p in ok.parts)
    scaled = vr.check_stable_rank_scale({"model": "full_head"}, ctx,
                                        theory=vr.Theory("w^k x 1.05", plateau_scale=1.05))
    assert scaled.part("small_init_plateau_2_kq").failed
    assert scaled.part("small_init_plateau_1_vo").failed
    assert scaled.part("stable_rank_small_init_vo").passed  # blind to a common scale
    short = vr.check_stable_rank_scale({"model": "full_head"}, ctx,
                                       theory=_theory_with_stages(lambda s: s[:2]))
    assert short.part("stable_rank_small_init_vo").failed
    assert short.part("small_init_plateau_3_vo").failed
    # one jump straight to the teacher: the last plateau passes, the saddles fail
    direct = vr.check_stable_rank_scale({"model": "full_head"}, ctx,
                                        theory=_theory_with_stages(lambda s: s[2:]))
    assert direct.part("small_init_plateau_1_vo").failed

    def not_stages(_stages):
        return ((0.5, (2, 0, 0, 1, 0.5, 0)),)

    malformed = vr.check_stable_rank_scale({"model": "full_head"}, ctx,
                                           theory=_theory_with_stages(not_stages))
    part = malformed.part("stable_rank_small_init_vo")
    assert part.failed and "AttributeError" in part.error_model
    assert malformed.part("small_init_plateau_1_vo").failed


@pytest.mark.parametrize("wrong", ["raises", "malformed"])
def test_order_and_adam_fail_parts_when_the_stages_are_unusable(wrong):
    """A theory whose stages raise or are not Stage objects fails the order claim's event
    parts (flow and GD) and the adam claim's parts under their own names; nothing raises."""
    from verify import rank_increase as vr
    from verify.claims import Context

    def fn(_stages):
        if wrong == "raises":
            raise ValueError("no stages")
        return ((0.5, (2, 0, 0, 1, 0.5, 0)),)

    ctx = Context(profile="test")
    ev = vr.check_order_and_signs({"kind": "sim", "problem": "head"}, ctx,
                                  theory=_theory_with_stages(fn))
    for name in ("head_event_sequence", "gd_head_event_sequence", "head_vo_first"):
        assert ev.part(name).failed
    assert ev.part("gd_symbolic_head_loss").passed  # no stages in it
    opt = vr.check_optimizer({"optimizer": "minibatch"}, ctx, theory=_theory_with_stages(fn))
    assert opt.parts and all(p.failed for p in opt.parts)

    def boom(_stages):
        raise ValueError("no stages")

    raised = vr.check_stable_rank_scale({"model": "full_head"}, ctx,
                                        theory=_theory_with_stages(boom))
    assert all(p.failed for p in raised.parts)


def test_algorithm1_tables_fail_a_part_when_the_theory_raises():
    from verify import rank_increase as vr
    from verify.claims import Context

    def boom(_stages):
        raise ValueError("H must be symmetric")

    ev = vr.check_algorithm1_tables({"kind": "three_coordinate"}, Context(profile="test"),
                                    theory=_theory_with_stages(boom))
    part = ev.part("table31_example")
    assert part.failed and "ValueError: H must be symmetric" in part.error_model


def test_gd_parts_are_simulation_parts_of_plateaus_and_order():
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    ev = vr.check_plateaus({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
    gd = [p for p in ev.parts if p.name.startswith("gd_")]
    assert gd and all(p.kind == "simulation" and p.passed for p in gd)
    ev = vr.check_order_and_signs({"kind": "sim", "problem": "head"}, ctx,
                                  theory=vr.PAPER_THEORY)
    part = ev.part("gd_head_event_sequence")
    assert part.kind == "simulation" and part.passed and part.predicted >= 2


@pytest.mark.parametrize("problem", ["quadratic", "head"])
def test_the_trained_model_sees_a_one_per_cent_slip_in_the_log_map(problem, monkeypatch, fresh_runs):
    """theory.log_coordinates with sigma scaled by 0.99 starts the log flow where the model
    does not start (at alpha = 1e-2 that moves w(0) by about 9 %, so the part fails from
    record 0 on): the GD-limit claim's simulation part (GD extrapolated to step 0 against
    the log flow) fails, with a number, not a raise."""
    from verify import rank_increase as vr
    from verify.claims import Context

    right = tr.log_coordinates
    monkeypatch.setattr(tr, "log_coordinates", lambda *a: (0.99 * right(*a)[0], right(*a)[1]))
    ev = vr.check_log_flow_is_gd_limit({"problem": problem}, Context(profile="test"),
                                       weights=tr.weights_from_log, uv_flow=tr.diagonal_flow)
    part = ev.parts[0]
    assert part.kind == "simulation" and part.failed and math.isfinite(part.error)


@pytest.mark.parametrize("row", [0, 1])
def test_a_diverging_log_flow_is_judged_by_the_model_on_the_records_before(row, monkeypatch, fresh_runs):
    """A sign-flipped component of theory.log_flow makes the quadratic's flow an ascent that
    diverges inside the GD-limit run: the check compares the records before the divergence
    with GD (a finite error far above the allowance) and fails a second simulation part for
    the divergence itself, instead of refusing the run as inadmissible."""
    import dataclasses

    from verify import rank_increase as vr
    from verify.claims import Context

    right = tr.log_flow

    def wrong(*a, **k):
        system = right(*a, **k)
        rhs = sp.Matrix(system.rhs)
        rhs[row] = -rhs[row]
        return dataclasses.replace(system, rhs=rhs)

    monkeypatch.setattr(tr, "log_flow", wrong)
    nr._quadratic_log_system.cache_clear()
    try:
        ev = vr.check_log_flow_is_gd_limit({"problem": "quadratic"}, Context(profile="test"),
                                           weights=tr.weights_from_log,
                                           uv_flow=tr.diagonal_flow)
    finally:
        monkeypatch.setattr(tr, "log_flow", right)
        nr._quadratic_log_system.cache_clear()
    first = ev.parts[0]
    assert first.kind == "simulation" and first.failed and math.isfinite(first.error)
    # the test profile's records end before the divergence; a longer flow reaches it
    monkeypatch.setattr(tr, "log_flow", wrong)
    nr._quadratic_log_system.cache_clear()
    try:
        u0, v0 = nr.QUAD_INIT
        cfg = nr.LogFlowConfig(nr.gd_limit_flow("quadratic", 1e-2, (0.0,)).problem, alphas=(1e-2,), u0=u0, v0=v0,
                               tau_max=4.0, points=41, until_divergence=True)
        run = nr.run_log_flow(cfg)
    finally:
        monkeypatch.setattr(tr, "log_flow", right)
        nr._quadratic_log_system.cache_clear()
    t_div = run.diverged[0]
    assert 0 < t_div < 4.0
    before = run.tau < t_div - 1e-9
    assert np.all(np.isfinite(run.w[0, before])) and np.all(np.isnan(run.w[0, ~before]))


def test_gd_clock_and_value_parts_see_a_few_per_cent_slip(monkeypatch, fresh_runs):
    """The trained model's clocks and its loss against g pass under the paper's theory, and
    a 5 % slip in a clock, in the GD rates or in g fails them (a part, not a raise); a slip in
    the log map fails the (symbolic) init part and leaves the run's own clocks alone."""
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    ev = vr.check_clocks({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
    gd = [p for p in ev.parts if p.name.startswith("gd_quadratic_clocks")]
    assert gd and all(p.kind == "simulation" and p.passed for p in gd)
    ev = vr.check_plateaus({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
    assert ev.part("gd_quadratic_plateau_1_value").passed

    slipped = _theory_with_stages(lambda s: tuple(
        tr.Stage(x.jump_time, x.coordinate, x.sign, x.deactivated, x.plateau,
                 tuple(1.05 * float(c) for c in x.clocks), x.loss) for x in s))
    ev = vr.check_clocks({"problem": "quadratic"}, ctx, theory=slipped)
    assert ev.part("gd_quadratic_clocks_plateau_1").failed

    rate = tr.gd_escape_rate
    monkeypatch.setattr(tr, "gd_escape_rate", lambda g, lr: 1.05 * rate(g, lr))
    vr.nr.problem_stages.cache_clear()
    try:
        ev = vr.check_clocks({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
        assert ev.part("gd_quadratic_clocks_plateau_1").failed
    finally:
        monkeypatch.setattr(tr, "gd_escape_rate", rate)
        vr.nr.problem_stages.cache_clear()

    value = tr.quadratic_value
    monkeypatch.setattr(tr, "quadratic_value", lambda H, b, w: 1.05 * value(H, b, w))
    ev = vr.check_plateaus({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
    assert ev.part("gd_quadratic_plateau_1_value").failed
    monkeypatch.setattr(tr, "quadratic_value", value)

    coords = tr.log_coordinates
    monkeypatch.setattr(tr, "log_coordinates",
                        lambda u, v, a: (1.05 * coords(u, v, a)[0], coords(u, v, a)[1]))
    ev = vr.check_clocks({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
    assert ev.part("gd_quadratic_log_coordinates_at_init").failed
    assert ev.part("gd_quadratic_clocks_plateau_1").passed  # the clocks are the run's own


def test_falling_clock_drift_is_the_gd_gap_while_the_gradient_is_positive():
    """sigma and the escape clock part by -log(1 - lr^2 gamma^2) per step only while gamma > 0:
    zero for a coordinate whose gradient is negative throughout, positive otherwise."""
    from verify import rank_increase as vr

    cfg = nr.standard_ladder("quadratic", "test")
    run = nr.run_ladder(cfg)
    drift = vr._falling_clock_drift(nr.QUAD, run, cfg)
    assert drift.shape == run.s.shape and np.all(drift >= 0)
    assert np.all(np.diff(drift, axis=1) >= 0)  # it only accumulates
    assert drift[:, -1].max() > 0


def test_clocks_fail_a_part_when_the_log_flow_is_inadmissible(monkeypatch):
    from theory.flow import InadmissibleTheory
    from verify import rank_increase as vr
    from verify.claims import Context

    def refuse(*_a, **_k):
        raise InadmissibleTheory("start outside the domain")

    monkeypatch.setattr(nr, "run_log_flow", refuse)
    ev = vr.check_clocks({"problem": "quadratic"}, Context(profile="test"),
                         theory=vr.PAPER_THEORY)
    part = ev.part("quadratic_clocks_log_flow")
    assert part.failed and "start outside the domain" in part.error_model
    assert ev.part("gd_quadratic_clocks_plateau_1").passed


# ---------------------------------------------------------------------- issue 35: new runs and helpers
def test_gd_perturbation_unkicked_member_is_the_ladders_gd():
    """The unkicked member of a GD perturbation run is plain GD from alpha theta_0: its last
    state equals a one-member ladder run of the same steps; the kicked one starts off by the
    kick (relative size ~ 1e-2 in u and v)."""
    u0, v0 = nr.HEAD_INIT
    cfg = nr.GdPerturbConfig(nr.HEAD, u0, v0, alpha=1e-2, lr=0.05, tau_perturb=0.1,
                             tau_end=0.2, record_every=1)
    run = nr.run_gd_perturbation(cfg)
    steps = cfg.kick_step + cfg.steps_after
    lad = nr.run_ladder(nr.LadderConfig(nr.HEAD, alphas=(1e-2,), u0=u0, v0=v0, lr=0.05,
                                        tau_max=(steps - 0.5) * 0.05 / math.log(100),
                                        record_every=1))
    assert lad.config.steps == steps
    # the same float64 GD steps, in two train() calls and a two-member stack against one
    # call of one member: only summation order differs (~1e-15 relative per step over ~20
    # steps), so 1e-12 is rounding with room
    np.testing.assert_allclose(run.w[-1], lad.w[0, -1], rtol=1e-12, atol=1e-300)
    # w = u v with u, v each scaled by 1 + 1e-2 xi: a relative move of ~2e-2 |xi|, between
    # 1e-4 and 0.1 for any of the six normal draws of seed 0 (a kick of 0 or O(1) fails)
    rel = np.abs(run.w_perturbed[0] - run.w[0]) / np.abs(run.w[0])
    assert 1e-4 < np.max(rel) < 0.1
    # the run's own (torch) loss of both members is g at their w: the same function of w
    # in torch and in numpy, float64 rounding only
    g = nr.problem_loss(nr.HEAD)
    assert run.loss.shape == (2, len(run.tau))
    np.testing.assert_allclose(run.loss[:, -1], [g(run.w[-1]), g(run.w_perturbed[-1])],
                               rtol=1e-10)


def test_kicks_are_planned_on_the_reference_table_not_on_theory():
    """The kicks (flow and GD) sit at the reference table's T_k, which Algorithm 1 gives to
    5 decimals: no theory under test moves them."""
    T = nr.HEAD_REFERENCE_T
    for cfgs in (nr.standard_perturbations("test"), nr.standard_gd_perturbations("test")):
        assert cfgs["mid"].tau_perturb == pytest.approx(0.5 * (T[1] + T[2]))
        assert cfgs["start"].tau_perturb == pytest.approx(T[1] + 0.1)
    alg1 = [float(s_.jump_time) for s_ in nr.problem_stages(nr.HEAD)]
    assert np.allclose(alg1, T, atol=5e-6)


def test_minibatch_of_all_samples_is_full_batch_gd():
    """B = n: every step's weights are 1/n on every sample, so minibatch SGD is GD."""
    gd = nr.LadderConfig(nr.HEAD, alphas=(1e-2, 1e-3), u0=nr.HEAD_INIT[0], v0=nr.HEAD_INIT[1],
                         lr=0.05, tau_max=0.3, record_every=2)
    full = nr.run_ladder(gd)
    mb = nr.run_ladder(replace(gd, optimizer="minibatch", batch=nr.HEAD.n, seed=3))
    # the weighted per-sample sum (weights 1/n) against the full-batch mean: the same
    # terms in another order, rounding only (~1e-16 per step, ~30 steps, 1e-10 with room)
    np.testing.assert_allclose(mb.w, full.w, rtol=1e-10, atol=1e-300)
    with pytest.raises(ValueError, match="minibatch"):
        replace(gd, optimizer="minibatch", batch=0)


def test_aitken_extrapolates_decays_and_refuses_the_rest():
    from verify.rank_increase import _aitken

    t = np.array([0.0, 1.0, 2.0])
    lim, ok = _aitken(*(np.array([2 - 0.5 * np.exp(-0.3 * x), -1 + np.exp(-2 * x)]) for x in t))
    assert ok and np.allclose(lim, [2.0, -1.0], atol=1e-12)
    for x in ((1.99, 1.995, 2 + 1e-12), (1e-4, 2e-4, 4e-4), (1.0, 1.1, 1.05)):
        assert not _aitken(*(np.array([v]) for v in x))[1]  # near-linear, growing, oscillating
    assert _aitken(np.ones(2), np.ones(2), np.ones(2)) == (pytest.approx(np.ones(2)), True)


def test_switch_off_time_is_zero_without_a_switch_off_and_positive_with_one():
    """The worked example's third plateau switches w_0 off (Algorithm 1), the head's none."""
    from verify.rank_increase import PAPER_THEORY, _switch_off_time

    st = PAPER_THEORY.stages(nr.QUAD)
    thr = 0.05 * max(abs(float(x)) for x in st[2].plateau)
    dt = _switch_off_time(nr.QUAD, st[1].plateau, st[2].plateau, thr)
    w_prev = float(st[1].plateau[0])
    g0 = abs(float(nr.problem_gradient(nr.QUAD)(np.array([float(x) for x in st[2].plateau]))[0]))
    assert dt == pytest.approx(math.log(w_prev / thr) / (2 * g0)) and dt > 0
    head = PAPER_THEORY.stages(nr.HEAD)
    assert all(_switch_off_time(nr.HEAD, a.plateau, b.plateau, 0.05) == 0.0
               for a, b in zip(head, head[1:], strict=False))


def test_the_divergence_part_fails_with_the_time_and_the_models_scale():
    """The part beside a diverged flow names where the flow left every scale and how large
    the model's step-0 limit stays; it fails (never passes on an infinite error)."""
    from types import SimpleNamespace

    from verify import rank_increase as vr

    flows = [SimpleNamespace(diverged=(1.741,)), SimpleNamespace(diverged=(math.nan,))]
    part = vr._diverged_flow_part("quadratic", flows, np.array([[0.1, -0.3], [0.2, 0.9]]))
    assert part.failed and part.kind == "simulation"
    assert "1.741" in part.error_model and "0.9" in part.error_model


def test_escape_direction_is_where_the_linearised_product_flow_goes():
    """theory.escape_direction against the linearised flow it is derived from, integrated
    from a small random start: A' = -G B, B' = -G^T A; the unit P = A B^T tends to
    -u_1 v_1^T (and the sign flip of G flips it)."""
    rng = np.random.default_rng(3)
    G = rng.standard_normal((3, 3))
    A, B = 1e-6 * rng.standard_normal((3, 3)), 1e-6 * rng.standard_normal((3, 3))
    h = 1e-3
    for _ in range(int(12 / h)):  # explicit Euler: the direction is step-independent
        A, B = A - h * G @ B, B - h * G.T @ A
    P = A @ B.T
    D = tr.escape_direction(G)
    assert abs(np.linalg.norm(D) - 1) < 1e-12
    assert np.linalg.norm(P / np.linalg.norm(P) - D) < 1e-3
    assert np.linalg.norm(tr.escape_direction(-G) + D) < 1e-12
    with pytest.raises(ValueError, match="not simple"):
        tr.escape_direction(np.eye(3))


def test_the_full_head_sees_a_sign_slip_in_its_escape_direction(monkeypatch, fresh_runs):
    """The first-jump claim's escape-direction part passes on the trained full head and
    fails (a number, not a raise) when dg/dP(0)'s sign is flipped, which leaves T_1 alone."""
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    ev = vr.check_first_jump({"problem": "full_head_nonnormal"}, ctx, theory=vr.PAPER_THEORY)
    part = ev.part("full_head_nonnormal_escape_direction")
    assert part.kind == "simulation" and part.passed
    right = tr.full_head_gradients
    monkeypatch.setattr(tr, "full_head_gradients", lambda *a: (right(*a)[0], -right(*a)[1]))
    ev = vr.check_first_jump({"problem": "full_head_nonnormal"}, ctx, theory=vr.PAPER_THEORY)
    part = ev.part("full_head_nonnormal_escape_direction")
    assert part.failed and math.isclose(part.error, 2.0, rel_tol=1e-3)


def test_a_flow_with_a_dead_tail_is_compared_on_its_live_records(monkeypatch, fresh_runs):
    """A log flow whose last records are NaN (a divergence recorded at their time) is
    compared with GD on the records before, and a second simulation part fails for the
    divergence; the u ⊙ v part is kept."""
    import dataclasses

    from verify import rank_increase as vr
    from verify.claims import Context

    real = vr.nr.run_log_flow

    def dying(config, **kw):
        run = real(config, **kw)
        w, b = run.w.copy(), run.b.copy()
        w[:, -3:], b[:, -3:] = np.nan, np.nan
        return dataclasses.replace(run, w=w, b=b, diverged=(float(run.tau[-3]),))

    monkeypatch.setattr(vr.nr, "run_log_flow", dying)
    ev = vr.check_log_flow_is_gd_limit({"problem": "quadratic"}, Context(profile="test"),
                                       weights=tr.weights_from_log, uv_flow=tr.diagonal_flow)
    first, dead, uv = ev.parts
    assert first.passed and first.kind == "simulation"
    assert dead.failed and "diverges" in dead.error_model
    assert uv.passed and "u ⊙ v" in uv.name


def test_plateau_windows_do_not_move_with_the_theorys_losses(monkeypatch, fresh_runs):
    """The GD plateau windows come from the row's reference table and the model's own loss:
    a 5 % slip in theory.quadratic_value (which moves Algorithm 1's plateau losses) leaves
    every window where it was, and a planned plateau the model does not show fails a part
    instead of vanishing."""
    from verify import rank_increase as vr
    from verify.claims import Context

    ctx = Context(profile="test")
    cfg = nr.standard_ladder("quadratic", "test")
    run = nr.run_ladder(cfg)
    before = vr._observed_plateau_points("quadratic", cfg, run)
    value = tr.quadratic_value
    monkeypatch.setattr(tr, "quadratic_value", lambda H, b, w: 1.05 * value(H, b, w))
    vr.nr.problem_stages.cache_clear()
    assert vr._observed_plateau_points("quadratic", cfg, run) == before
    assert before[0] and not before[1]
    ev = vr.check_plateaus({"problem": "quadratic"}, ctx, theory=vr.PAPER_THEORY)
    assert [p for p in ev.parts if p.name.startswith("gd_quadratic_plateau_1")]
    # tau to 2.4: the table's T_2 = 1.97 is inside 90 % of the run (2.16), so plateau 1 is
    # planned, but the model's own second jump (tau 2.35 at alpha = 1e-8) is not
    short = replace(cfg, tau_max=2.4)
    points, missing = vr._observed_plateau_points("quadratic", short, nr.run_ladder(short))
    assert not points and [k for k, _ in missing] == [0]


def test_symbolic_head_part_fails_under_its_own_name_when_the_head_is_unusable(monkeypatch,
                                                                              fresh_runs):
    """A symbolic head whose variables are not symbols (a scaled output) fails the trained
    model's comparison part itself (gd_symbolic_head_loss, a simulation part), so the
    comparison rejects it instead of vanishing from the evidence."""
    from verify import rank_increase as vr

    prob = vr.HEAD
    cfg = nr.standard_ladder("head", "test")
    gd = nr.run_ladder(cfg)
    i = int(np.argmin(cfg.alphas))
    assert vr._symbolic_head_on_gd(prob, gd, i).passed
    right = tr.diagonal_head_loss_symbolic

    def scaled(*a, **k):
        g, kappa, nu = right(*a, **k)
        return 1.05 * g, tuple(1.05 * x for x in kappa), tuple(1.05 * x for x in nu)

    monkeypatch.setattr(tr, "diagonal_head_loss_symbolic", scaled)
    part = vr._symbolic_head_on_gd(prob, gd, i)
    assert part.name == "gd_symbolic_head_loss" and part.kind == "simulation" and part.failed
    monkeypatch.setattr(tr, "diagonal_head_loss_symbolic",
                        lambda *a, **k: (1.05 * right(*a, **k)[0], *right(*a, **k)[1:]))
    part = vr._symbolic_head_on_gd(prob, gd, i)
    assert part.name == "gd_symbolic_head_loss" and part.failed and part.error > 1e-3


def test_switch_off_plan_from_the_reference_table_and_the_models_gradient():
    """The order claim's plan of visible switch-offs takes T_k, w^k from the reference table
    and g from the model's own loss: autograd of the torch loss is H w - beta on the
    quadratic; the worked example's switch-off of w_0 at T_3 (threshold crossing at tau
    ~ 6.07 for alpha = 1e-32, ~ 7.6 for 1e-12) is expected on the thorough ladder
    (horizon 6.12) and not on the quick one."""
    from verify import rank_increase as vr

    w = np.array([0.3, -0.2, 0.5])
    H, b = np.array(nr.QUAD.H, dtype=float), np.array(nr.QUAD.beta, dtype=float)
    np.testing.assert_allclose(vr._model_gradient(nr.QUAD, w), H @ w - b, rtol=1e-12)
    events = vr._events(vr.PAPER_THEORY.stages(nr.QUAD))[:3]
    ref = vr.TABLE_THREE_COORDINATE
    seen = vr._observable_switch_offs(events, ref, nr.QUAD, math.log(1e32), 6.12, 1e-3)
    unseen = vr._observable_switch_offs(events, ref, nr.QUAD, math.log(1e12), 6.12, 1e-3)
    assert seen[2][2] == (0,) and unseen[2][2] == ()


@pytest.mark.parametrize("wrong", ["raises", "malformed"])
def test_jump_times_fail_parts_when_the_stages_are_unusable(wrong):
    """A theory whose stages raise or are not Stage objects fails every compared stage's
    part, GD and exact flow, under its own name; the combined evidence still forms."""
    from verify import rank_increase as vr
    from verify.claims import Context

    def fn(_stages):
        if wrong == "raises":
            raise ValueError("no stages")
        return ((0.5, (2, 0, 0, 1, 0.5, 0)),)

    ev = vr.check_jump_times({"problem": "all"}, Context(profile="test"),
                             theory=_theory_with_stages(fn))
    for name in ("gd_quadratic_T1", "gd_head_T1", "ode_quadratic_T1", "ode_head_T1"):
        part = ev.part(name)
        assert part.failed and ("ValueError" in part.error_model
                                or "AttributeError" in part.error_model)
