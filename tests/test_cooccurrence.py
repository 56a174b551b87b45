"""cooccurrence row: theory against autograd, closed forms, data, model, runs (small sizes)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.optimize import minimize
from torch.func import grad, jvp

from numerics import cooccurrence as nc
from theory import cooccurrence as tc


def _autograd_velocity(p, tokens, labels):
    tok, lab = torch.as_tensor(tokens), torch.as_tensor(labels, dtype=torch.float64)
    g = grad(lambda q: nc.loss(q, tok, lab))(p)
    _, vel = jvp(nc.canonical, (p,), ({k: -v for k, v in g.items()},))
    return {k: v.detach().numpy() for k, v in vel.items()}


# ---------------------------------------------------------------------- canonical system
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), private=st.booleans(), sigma=st.sampled_from((0.3, 0.8)))
def test_canonical_velocity_matches_autograd(seed, private, sigma):
    """§3.2 is exact: d/dt of the canonical map under -grad equals canonical_velocity."""
    data = nc.make_dataset(6, 4, seed, private=private, d=None if private else 7)
    d = int(data.tokens.max()) + 3  # unseen ids too
    m, m1 = 5, 3
    p = nc.init_params(d, m, m1, "gaussian", sigma0=sigma, sigma1=sigma)(
        torch.Generator().manual_seed(seed))
    want = _autograd_velocity(p, data.tokens, data.labels)
    got = tc.canonical_velocity(nc.canonical_state(p), data.tokens, data.labels, m, m1)
    for k in tc.STATE_KEYS:
        scale = 1.0 + float(np.max(np.abs(want[k])))
        assert np.max(np.abs(np.asarray(got[k]) - want[k])) <= 1e-12 * scale, k


def test_loss_gradients_are_canonical_velocity_at_unit_gram():
    """loss_gradients' (r, Gamma) are what canonical_velocity maps: at S = 1, M = 0, K_G = 0,
    Q_G = I its dbeta is r and its dA is Gamma (scores A not zero, so attention is not
    uniform).  Exact: multiplying by 1 and adding the products with zero matrices round
    nothing."""
    data = nc.make_dataset(12, 4, 3)
    d = int(data.tokens.max()) + 1
    rng = np.random.default_rng(0)
    beta, A = rng.normal(size=d), 0.5 * rng.normal(size=(d, d))
    z = np.zeros((d, d))
    v = tc.canonical_velocity({"beta": beta, "S": 1.0, "M": z, "A": A, "K_G": z,
                               "Q_G": np.eye(d)}, data.tokens, data.labels, 9.0, 2.0)
    r, gam = tc.loss_gradients(beta, A, data.tokens, data.labels, 9.0)
    np.testing.assert_array_equal(r, v["beta"])
    np.testing.assert_array_equal(gam, v["A"])
    _, gam0 = tc.loss_gradients(beta, None, data.tokens, data.labels, 9.0)
    _, gamz = tc.loss_gradients(beta, z, data.tokens, data.labels, 9.0)
    np.testing.assert_array_equal(gam0, gamz)


def test_canonical_velocity_shapes_and_unseen_rows_zero():
    assert nc.STATE_KEYS == tc.STATE_KEYS
    data = nc.make_dataset(60, 5, 0)
    d = 163
    rng = np.random.default_rng(0)
    state = {"beta": rng.normal(size=d), "S": 3.0, "M": np.eye(d), "A": rng.normal(size=(d, d)),
             "K_G": np.eye(d), "Q_G": np.eye(d)}
    v = tc.canonical_velocity(state, data.tokens, data.labels, 100, 10)
    assert v["A"].shape == (d, d)
    # with K_G = Q_G = I, dA = 2 Gamma: rows/columns of ids never seen get no gradient
    state2 = dict(state, beta=np.concatenate([state["beta"], [0.0]]), M=np.eye(d + 1),
                  A=np.zeros((d + 1, d + 1)), K_G=np.eye(d + 1), Q_G=np.eye(d + 1))
    v2 = tc.canonical_velocity(state2, data.tokens, data.labels, 100, 10)
    assert np.all(v2["A"][d] == 0) and np.all(v2["A"][:, d] == 0) and v2["beta"][d] == 0


def test_invariants_zero_drift_and_numeric_constancy():
    assert all(v == 0 for v in tc.invariant_drifts(2).values())
    assert all(v == 0 for v in tc.invariant_drifts(3).values())
    data = nc.make_dataset(6, 3, 1)
    d = int(data.tokens.max()) + 1
    p = nc.init_params(d, 4, 2, "gaussian", sigma0=0.5, sigma1=0.5)(torch.Generator().manual_seed(3))
    s0 = nc.canonical_state(p)
    out = nc.integrate_canonical(s0, data.tokens, data.labels, 4, 2, [0.5, 1.0],
                                 velocity=tc.canonical_velocity)
    i0 = tc.invariants(s0, 2)
    for s in out:
        for k, v in tc.invariants(s, 2).items():
            assert abs(v - i0[k]) <= 1e-8 * (1 + abs(i0[k]))
    # value_balance equals m1 (||W||^2 - ||W_V||^2) + (S - m1 ||W||^2), from the parameters
    inv = nc.param_invariants(p)
    assert i0["value_balance"] == pytest.approx(2 * float(inv[3]), rel=1e-12, abs=1e-12)


def test_invariant_manifold_uniform_attention():
    data = nc.make_dataset(6, 4, 2)
    d = int(data.tokens.max()) + 1
    state = {"beta": np.linspace(-1, 1, d), "S": 2.0, "M": np.eye(d), "A": np.zeros((d, d)),
             "K_G": np.zeros((d, d)), "Q_G": np.zeros((d, d))}
    v = tc.canonical_velocity(state, data.tokens, data.labels, 7, 3)
    assert np.all(v["A"] == 0) and np.all(v["K_G"] == 0) and np.all(v["Q_G"] == 0)


# ---------------------------------------------------------------------- four-class system
def test_class_system_closed_forms():
    sys_ = tc.class_system()
    assert sys_.params == ()
    assert tc.initial_rates() == (sp.Rational(1, 6), sp.Rational(1, 6), 0)
    assert tc.peak_identity() == 0
    mm = tc.class_max_margin()
    assert mm.gamma_sq == sp.Rational(1, 17)
    assert tuple(mm.beta) == (2, 2, -3)
    assert mm.R_inf == sp.Rational(3, 2)


def test_class_numerics_are_the_symbolic_system():
    """class_velocity, the class-loss and g_k twins and class_trajectory agree with the symbolic
    four-class system they stand for."""
    rng = np.random.default_rng(0)
    G = rng.normal(scale=3.0, size=(3, 50))
    for weights in (tc.WEIGHTS, (0.25, 0.25, 0.25, 0.25)):
        sys_ = tc.class_system(weights)
        fast = np.array([tc.class_velocity(G[:, j], weights) for j in range(G.shape[1])]).T
        assert np.allclose(fast, sys_.lambdify()(0.0, G), rtol=1e-12, atol=1e-15)
    q = np.array(tc.class_margins(list(G)))
    assert np.allclose(np.array(tc.class_losses_twin(*G)), np.logaddexp(0.0, -q), rtol=1e-12)
    assert np.allclose(np.array(tc.class_sigmoids_twin(*G)), 1 / (1 + np.exp(q)), rtol=1e-12)
    w = np.array([float(x) for x in tc.WEIGHTS])
    assert np.allclose(tc.class_system().lambdify_loss()(G),
                       w @ np.logaddexp(0.0, -q), rtol=1e-12)
    taus = np.array([0.5, 2.0, 10.0])
    traj = tc.class_trajectory(taus)
    ref = solve_ivp(lambda t, y: tc.class_system().lambdify()(t, y), (0, 10), [0, 0, 0],
                    method="DOP853", t_eval=taus, rtol=1e-12, atol=1e-14).y
    assert np.allclose(traj, ref, rtol=1e-8, atol=1e-10)
    beta, r = rng.normal(size=(4, 1)), rng.normal(size=(4, 1))
    z = np.zeros((4, 4))
    dM = tc.canonical_rhs(beta, r, 1.0, 1.0, z, z, z, z, z)["M"]
    assert np.allclose(dM, dM.T) and np.isclose(np.trace(dM), 2 * (beta.T @ r).item())


def test_t_half_eight_digits_and_peak():
    th = tc.t_half()
    def f(_t, y):
        return tc.class_velocity(y)

    # independent: Radau integration, crossing of -dG3 - dG1 (symmetric G1 = G2)
    sol = solve_ivp(f, (0, 10), [0, 0, 0], method="Radau", rtol=1e-12, atol=1e-14,
                    dense_output=True)

    def h(t):
        r = f(0, sol.sol(t))
        return -r[2] - r[0]

    from scipy.optimize import brentq
    ref = brentq(h, 1.0, 8.0, xtol=1e-14)
    assert th == pytest.approx(ref, rel=1e-8)
    assert th == pytest.approx(3.5647220, abs=1e-6)
    # peak identity: the I2 loss peaks at T_0.5
    pk = minimize(lambda t: -np.logaddexp(0, sol.sol(t[0])[0] + sol.sol(t[0])[2]), [3.0],
                  method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-16}).x[0]
    assert pk == pytest.approx(th, abs=1e-5)
    assert tc.t_half((2.0, 2.0, -1.0)) == 0.0  # single-target samples misclassified: -dG3 > 0 > dG1


def test_sample_max_margin_kkt_and_values():
    data = nc.make_dataset(60, 5, 0)
    mm = tc.sample_max_margin(data.tokens, data.labels)
    assert 1 / mm.gamma_sq == pytest.approx(8.2232704, rel=1e-7)
    assert mm.R_inf == pytest.approx(1.2686567, rel=1e-7)
    assert tc.test_loss_exponent(mm) == pytest.approx(0.28301887, rel=1e-6)
    Z = np.zeros((60, 163))
    np.add.at(Z, (np.repeat(np.arange(60), 5), data.tokens.ravel()), 1.0)
    margins = data.labels * (Z @ mm.beta)
    assert margins.min() >= 1 - 1e-10
    # independent primal solve (SLSQP) agrees to 6+ digits
    res = minimize(lambda b: b @ b, mm.beta * 1.1, jac=lambda b: 2 * b, method="SLSQP",
                   constraints={"type": "ineq", "fun": lambda b: data.labels * (Z @ b) - 1,
                                "jac": lambda b: data.labels[:, None] * Z},
                   options={"ftol": 1e-14, "maxiter": 500})
    assert res.fun == pytest.approx(1 / mm.gamma_sq, rel=1e-6)
    # class-level data (no random tokens, L = 3 with a padding id used by every sample)
    # is solved exactly by the sympy KKT enumeration
    toks = np.array([[0, 1, 2], [0, 2, 3], [1, 2, 3], [2, 3, 3]])
    ex = tc.sample_max_margin(toks, [1, -1, -1, -1])
    assert ex.gamma_sq > 0 and np.all(np.array([1, -1, -1, -1]) * (
        np.array([[1, 1, 1, 0], [1, 0, 1, 1], [0, 1, 1, 1], [0, 0, 1, 2]]) @ ex.beta) >= 1 - 1e-10)


def test_small_n_large_L_gives_R_below_one():
    """Private tokens dominate when n is small against L (Condition 1: n >= Omega~(L^2))."""
    data = nc.make_dataset(6, 12, 0)
    assert tc.sample_max_margin(data.tokens, data.labels).R_inf < 1


def test_loss_law_solves_ode():
    t, S, g, t1, l1 = sp.symbols("t S g t1 l1", positive=True)
    law = tc.loss_law(t, S, g, t1, l1)
    assert sp.simplify(sp.diff(law, t) + S * g * law**2) == 0
    assert sp.simplify(law.subs(t, t1) - l1) == 0
    assert float(tc.loss_law(100, 2, sp.Rational(1, 17))) == pytest.approx(17 / 200)
    eq = {e.name: e.expr for e in tc.equations()}
    assert eq["class max margin gamma*^2"] == sp.Rational(1, 17)
    assert eq["drift of kq_balance_2"] == 0
    assert all(e.source for e in tc.equations())


@pytest.mark.parametrize("call, name", [
    (lambda: tc.sample_max_margin([[0, 1, 9]], [1], d=5), "tokens"),
    (lambda: tc.sample_max_margin([[0, 1, 2]], [2]), "labels"),
    (lambda: tc.class_system((0.5, 0.5, 0.1, -0.1)), "weights"),
    (lambda: tc.t_half((0, 0, 0), (0.5, 0.5)), "weights"),
    (lambda: tc.loss_law(1, -1, 0.1), "S"),
    (lambda: tc.loss_law(1, 1, 0), "gamma_sq"),
    (lambda: tc.canonical_velocity({"beta": [0, 0, 0], "S": 1, "M": np.eye(3), "A": np.eye(3),
                                    "K_G": np.eye(3), "Q_G": np.eye(3)}, [[0, 1, 2]], [1], 0, 1),
     "m"),
    (lambda: tc.invariants({"S": 1, "M": np.eye(2), "A": np.eye(2), "K_G": np.eye(2),
                            "Q_G": np.eye(2)}, -1), "m1"),
])
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------- data and model
def test_dataset_definition_2_1():
    data = nc.make_dataset(60, 5, 4)
    assert np.bincount(data.types).tolist() == [30, 10, 10, 10]
    for row, t, y in zip(data.tokens, data.types, data.labels, strict=True):
        assert np.sum(row == 2) == 1
        assert (0 in row) == (t in (0, 1)) and (1 in row) == (t in (0, 2))
        assert y == (1 if t == 0 else -1)
    rand = data.tokens[data.tokens >= 3]
    assert rand.size == nc.random_slots(60, 5) == 160 and np.unique(rand).size == 160
    val = nc.validation_set(data, 24, 5)
    assert np.intersect1d(val.tokens[val.tokens >= 3], rand).size == 0
    rep = nc.make_dataset(60, 5, 0, private=False, d=64)
    assert rep.tokens.max() < 64 and np.unique(rep.tokens[rep.tokens >= 3]).size < 160
    with pytest.raises(ValueError, match="n"):
        nc.make_dataset(10, 5, 0)


def test_forward_matches_equation_1_loop():
    data = nc.make_dataset(6, 4, 0)
    d = int(data.tokens.max()) + 1
    m, m1 = 6, 3
    p = nc.init_params(d, m, m1, "gaussian", sigma0=0.6, sigma1=0.6)(torch.Generator().manual_seed(1))
    F, _ = nc.forward(p, torch.as_tensor(data.tokens))
    eye = torch.eye(d, dtype=torch.float64)
    for i, row in enumerate(data.tokens):
        X = eye[:, torch.as_tensor(row)]  # d x L
        total = 0.0
        for q in range(X.shape[1]):
            s = X.T @ p["WK"].T @ p["WQ"] @ X[:, q] / math.sqrt(m)
            total += float(p["a"] @ p["W"] @ p["WV"] @ X @ torch.softmax(s, 0))
        assert float(F[i]) == pytest.approx(total, rel=1e-12, abs=1e-12)


def test_small_run_records_and_identities():
    cfg = nc.CoConfig(n=12, L=4, m=16, m1=4, members=2, steps=30, record_every=10, n_val=6,
                      growth=0.05, warm=10)
    run = nc.run(cfg)
    assert run.loss.shape == (2, 4) and run.beta.shape == (2, 4, cfg.vocabulary)
    assert np.all(np.diff(run.tau, axis=1) > 0)
    assert run.lr_steps[0, 20] == pytest.approx(run.lr_steps[0, 0] * 1.05 ** 10)
    # exact GD identity for ||W_K||^2 - ||W_Q||^2 and S - m1 ||W||^2
    pk = np.sum(run.lr_steps**2 * (run.grad_sq["WK"] - run.grad_sq["WQ"]), axis=1)
    assert np.allclose(run.invariants[:, -1, 1] - run.invariants[:, 0, 1], pk, atol=1e-13)
    assert np.allclose(run.invariants[:, -1, 2], run.invariants[:, 0, 2], rtol=1e-12)
    c = nc.canonical(run.final)
    assert np.allclose(c["beta"].numpy(), nc.canonical(run.final)["beta"].numpy())
    assert torch.equal(run.final["a"], run.initial["a"])


def test_closure_run_is_a_cached_run_function(tmp_path):
    from numerics.cache import RunCache

    cfg = nc.ClosureConfig(lrs=(0.01, 0.005), steps=4, record_every=2, unseen=2)
    cache = RunCache(tmp_path)
    first = nc.run_closure(cfg, cache=cache, device="cpu")
    assert nc.run_closure(cfg, cache=cache, device="cpu") is first  # in-process LRU
    assert first.state.shape == (2, 3, first.initial_flat.size)
    assert first.d == int(first.data.tokens.max()) + 3
    for k in range(2):  # every member starts at the one initialisation
        assert np.array_equal(first.state[k, 0], first.initial_flat)
    assert first.time[:, -1] == pytest.approx([0.04, 0.02])
    assert len(list(tmp_path.glob("cooccurrence.closure-*.npz"))) == 1
    nc.run_closure.cache_clear()
    again = nc.run_closure(cfg, cache=cache, device="cpu")  # read back from disk
    assert again is not first and np.array_equal(again.state, first.state)


def test_initial_outputs_run_is_the_model_at_initialisation(tmp_path):
    """The initial_output claim's run: each draw's max |F(0)| over the training set and mean
    beta^2 are the model's own (forward, canonical_state), stored and read back from disk, and
    --plan counts one member-step per draw (trains nothing)."""
    from numerics.cache import RunCache

    cfg = nc.InitialOutputsConfig(n=12, L=5, m=16, m1=4, sigma0=0.1, sigma1=0.5,
                                  data_seed=1, seeds=(3, 4, 5))
    cache = RunCache(tmp_path)
    run = nc.run_initial_outputs(cfg, cache=cache, device="cpu")
    data = nc.make_dataset(12, 5, 1)
    make = nc.init_params(int(data.tokens.max()) + 1, 16, 4, "theory", sigma0=0.1, sigma1=0.5)
    for j, seed in enumerate(cfg.seeds):
        p = make(torch.Generator().manual_seed(seed))
        with torch.no_grad():
            F, _ = nc.forward(p, torch.as_tensor(data.tokens))
        assert run.max_abs_F[j] == pytest.approx(float(F.abs().max()), rel=1e-12)
        beta = nc.canonical_state(p)["beta"]
        assert run.G_sq_mean[j] == pytest.approx(float(np.mean(beta * beta)), rel=1e-12)
    nc.run_initial_outputs.cache_clear()
    again = nc.run_initial_outputs(cfg, cache=cache, device="cpu")
    assert again is not run and np.array_equal(again.max_abs_F, run.max_abs_F)
    steps, flops = nc.run_initial_outputs.planned_cost(cfg)
    assert steps == 3 and flops > 0


def test_size_table_serves_claims_and_figures():
    from dataclasses import replace

    from numerics.context import PROFILES

    for profile in PROFILES:
        for name in nc.SIZES.entries:
            nc.SIZES.at(name, profile)
    assert nc.SIZES.at("theory_scaled", "ci") == nc.THEORY_QUICK  # ci falls back to quick
    # Fig. 1 at test and thorough is the appendix_a check's own run (seed 0): no new training
    for profile in ("test", "thorough"):
        check = replace(nc.SIZES.at("appendix_a", profile), seed=0, data_seed=0)
        assert nc.SIZES.at("fig1_appendix_a", profile) == check


def test_fast_claims_at_smoke_size():
    """The fast claims at profile "test" (the slow ones run in tests/test_claims.py)."""
    from verify import cooccurrence as vc
    from verify.runner import run_claims

    claims = vc.claims()
    assert len(claims) >= 10 and len({c.id for c in claims}) == len(claims)
    assert all(c.id.startswith("cooccurrence.") for c in claims)
    for res in run_claims([c for c in claims if c.cost == "fast"], "test", progress=False):
        assert res.outcome != "error", (res.claim.id, res.error_message)
        assert res.ok, (res.claim.id, res.problems())


# ---------------------------------------------------------------------- private-token classes
def test_private_system_is_the_sample_level_flow():
    """The seven-coordinate reduction equals the uniform-attention flow dbeta/dtau = r on a
    real data set with private random tokens, started at beta = 0 (exact by symmetry)."""
    data = nc.make_dataset(12, 4, 3)
    d = int(data.tokens.max()) + 1
    state = {"S": 1.0, "M": np.zeros((d, d)), "A": np.zeros((d, d)), "K_G": np.zeros((d, d)),
             "Q_G": np.zeros((d, d))}

    def f(_t, b):
        return tc.canonical_velocity({**state, "beta": b}, data.tokens, data.labels, 4.0,
                                     1.0)["beta"]

    taus = np.array([0.5, 3.0, 20.0])
    sol = solve_ivp(f, (0, 20), np.zeros(d), t_eval=taus, rtol=1e-10, atol=1e-12)
    Y = tc.private_trajectory(taus, 12, 4)
    assert np.allclose(sol.y[:3], Y[:3], rtol=1e-7, atol=1e-9)
    for i, (row, t) in enumerate(zip(data.tokens, data.types, strict=True)):
        rand = row[row >= 3]
        assert np.allclose(sol.y[rand], Y[3 + t], rtol=1e-7, atol=1e-9), i
    # |beta|^2 and the per-class losses agree with the full vector's
    assert np.allclose(tc.private_beta_sq(Y, 12, 4), np.sum(sol.y**2, axis=0), rtol=1e-7)
    Z = np.zeros((12, d))
    np.add.at(Z, (np.repeat(np.arange(12), 4), data.tokens.ravel()), 1.0)
    ell = np.logaddexp(0, -(data.labels[:, None] * (Z @ sol.y)))
    per = np.array([ell[data.types == k].mean(0) for k in range(4)])
    assert np.allclose(tc.private_losses(Y, 4), per, rtol=1e-7)


def test_preconditioned_private_system_keeps_m1_M_r_to_first_order():
    """With S held fixed, the sample-level flow dbeta/dt = S r + m1 M r, dM/dt = beta r^T +
    r beta^T (canonical_velocity, uniform attention) from beta = 0, M = 0 departs from the
    private-token reduction at first order in kappa = m1/S^2; the reduction with the term kept
    (preconditioned_private_system) leaves only the second order."""
    data = nc.make_dataset(12, 4, 3)
    d = int(data.tokens.max()) + 1
    S, m1 = 10.0, 1.0
    zero = np.zeros((d, d))

    def f(_t, x):
        st = {"beta": x[:d], "S": S, "M": x[d:].reshape(d, d), "A": zero, "K_G": zero,
              "Q_G": zero}
        v = tc.canonical_velocity(st, data.tokens, data.labels, 4.0, m1)
        return np.concatenate([v["beta"], np.asarray(v["M"]).ravel()])

    taus = np.array([2.0, 10.0, 20.0])
    sol = solve_ivp(f, (0, taus[-1] / S), np.zeros(d + d * d), t_eval=taus / S, rtol=1e-10,
                    atol=1e-12)
    special = sol.y[:3]
    kept = tc.private_trajectory(taus, 12, 4, kappa=m1 / S**2)[:3]
    dropped = tc.private_trajectory(taus, 12, 4)[:3]
    first = np.abs(special - dropped).max()
    assert first > 1e-3  # the term matters at this kappa |beta|^2
    # second order: kappa |beta|^2 reaches 0.09 here, and the kept term leaves 0.03 of the
    # first-order departure (a run of this test), well inside 0.1
    assert np.abs(special - kept).max() < 0.1 * first
    # kappa = 0 is the reduction itself: private_trajectory then takes the same code path
    # (private_system), so the two calls are bitwise equal and the tolerance is exactly 0
    assert np.allclose(tc.private_trajectory(taus, 12, 4, kappa=0.0), tc.private_trajectory(
        taus, 12, 4), rtol=0, atol=0)


def test_private_system_limits_match_the_max_margin():
    data = nc.make_dataset(60, 5, 0)
    mm = tc.sample_max_margin(data.tokens, data.labels)
    Y = tc.private_trajectory([1.0, 1e5], 60, 5)
    w = np.array([float(x) for x in tc.WEIGHTS])
    assert float(w @ tc.private_losses(Y, 5)[:, -1]) * 1e5 * mm.gamma_sq == pytest.approx(
        1.0, abs=2e-3)
    # uniform attention at G = 0: the reduction starts at the four-class initial rates
    f = tc.private_system(60, 5).lambdify()
    r = np.asarray(f(0.0, np.zeros(7)), dtype=float).ravel()
    assert np.allclose(r[:3], [1 / 6, 1 / 6, 0], atol=1e-15)
    assert np.allclose(r[3:], [1 / 120, -1 / 120, -1 / 120, -1 / 120], atol=1e-15)


def test_initial_output_and_s_drift():
    assert tc.initial_output_sd(0.1, 0.5, 4, 100, 9) == pytest.approx(0.1 * 0.5 * 60)
    b = tc.initial_output_bound(1 / math.sqrt(5 * 512), 1 / math.sqrt(8), 5, 512, 8, 60, 0.01)
    assert b == pytest.approx(2 * math.sqrt(2 * math.log(600 / 0.01)))
    assert float(tc.s_drift(3.0, 2.0, 4.0)) == pytest.approx(math.sqrt(1 + 12 / 16) - 1)
    # canonical_rhs is shared: numeric velocity at K_G = Q_G = 0 leaves A fixed
    v = tc.canonical_rhs(np.ones((2, 1)), np.ones((2, 1)), 2.0, 3.0, np.eye(2), np.eye(2),
                         np.zeros((2, 2)), np.zeros((2, 2)), np.ones((2, 2)))
    assert np.allclose(v["beta"], 5.0) and v["S"] == pytest.approx(12.0)
    assert np.all(v["A"] == 0)


def test_score_drift_with_a_members_gram_blocks():
    """score_drift's K, Q: kappa I by default; with Gram blocks it is (I Q + K I)/S, and it
    equals the trapezoid of the exact canonical dA/dt = Gamma Q_G + K_G Gamma on mu1..mu3
    (theory.canonical_velocity on a real data set, the reduction's state placed on its
    tokens) when the Gram matrices vanish off mu1..mu3."""
    n, L, m, S = 12, 4, 16.0, 1.3
    data = nc.make_dataset(n, L, 3)
    d = int(data.tokens.max()) + 1
    taus = np.linspace(0.0, 2.0, 81)
    Y = tc.private_trajectory(taus, n, L)
    kappa = 0.7
    base = tc.score_drift(taus, Y, L, m, kappa, S)
    # rounding only: (kappa x + kappa x) against 2 kappa x, O(1e-16) relative
    assert np.allclose(base, tc.score_drift(taus, Y, L, m, kappa, S, K=kappa * np.eye(3),
                                            Q=kappa * np.eye(3)), rtol=1e-14, atol=0)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 3))
    K, Q = a @ a.T, b @ b.T  # symmetric positive semidefinite, as Gram blocks are
    integral = tc.score_drift(taus, Y, L, m, 0.5, 1.0)  # 2 kappa / S = 1: int Gamma dtau
    paired = tc.score_drift(taus, Y, L, m, kappa, S, K=K, Q=Q)
    # the same products in another order: rounding of 3-term sums of O(1) entries, a few
    # eps, so 1e-13 is a ~100x margin; a wrong formula (K, Q swapped, a missing term)
    # misses by O(1)
    assert np.allclose(paired, (integral @ Q + K @ integral) / S, rtol=1e-13, atol=0)
    # against the exact canonical velocity with these blocks and zeros elsewhere
    KG, QG = np.zeros((d, d)), np.zeros((d, d))
    KG[:3, :3], QG[:3, :3] = K, Q
    rates = []
    for j in range(taus.size):
        beta = np.zeros(d)
        beta[:3] = Y[:3, j]
        for c in range(4):
            rows = data.tokens[data.types == c]
            beta[np.unique(rows[rows >= 3])] = Y[3 + c, j]
        state = {"beta": beta, "S": S, "M": np.zeros((d, d)), "A": np.zeros((d, d)),
                 "K_G": KG, "Q_G": QG}
        rates.append(tc.canonical_velocity(state, data.tokens, data.labels, m, 1.0)["A"][:3, :3])
    rates = np.array(rates)
    exact = np.concatenate([np.zeros((1, 3, 3)), np.cumsum(
        0.5 * (rates[1:] + rates[:-1]) * np.diff(taus)[:, None, None], axis=0)]) / S
    # the same trapezoid on both sides: rounding of sums over samples and grid points
    assert np.allclose(paired, exact, rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="3 x 3"):
        tc.score_drift(taus, Y, L, m, kappa, S, K=np.eye(4))
    # an S path: constant, it is the number; growing, each Gamma is divided by S(tau) before
    # the trapezoid (attention_drift of the same gammas), not by its end value
    assert np.allclose(tc.score_drift(taus, Y, L, m, kappa, np.full(taus.size, S), K=K, Q=Q),
                       paired, rtol=1e-13, atol=0)
    path = S * (1 + 0.2 * taus)
    margins = np.array(tc.private_margins(list(Y), L))
    gam = np.array([tc.class_gamma(Y[:3, j], L, m, margins=margins[:, j])
                    for j in range(taus.size)])
    grown = tc.score_drift(taus, Y, L, m, kappa, path, K=K, Q=Q)
    # the same sums in the same order: rounding only
    assert np.allclose(grown, tc.attention_drift(taus, gam, path, K, Q), rtol=1e-13, atol=0)
    # and not the end value's: S(tau) runs from S to 1.4 S on [0, 2], so dividing every
    # Gamma by 1.4 S instead of S(tau) shrinks the integral by a factor between 1/1.4 and 1
    # (10.7-11.4 % smaller entry by entry on this path and these blocks).  rtol 0.05 is
    # a negative assertion's threshold at half that gap: an S path used only at its end
    # fails the test, and rounding (1e-13, above) is far from reaching it
    assert not np.allclose(grown[-1], tc.score_drift(taus, Y, L, m, kappa, path[-1], K=K,
                                                     Q=Q)[-1], rtol=0.05)


def test_class_level_gamma_is_the_whole_gammas_block():
    """Lemma 4.7's class-level Gamma (class_gamma at private_margins) is the mu1..mu3 block
    of the whole-vocabulary Gamma of loss_gradients with the reduction's state placed on a
    real data set's tokens (every random token at its class mean), along a path; so
    score_drift with Gram blocks and an S path equals attention_drift of those blocks: the
    identity verify.cooccurrence's magnitudes_class_level rests on.  Both sides sum the same
    per-sample terms in another order: rounding of sums over n L = 48 slots, so rtol 1e-11
    is a margin of about 1e3 over n L eps; a wrong Gamma entry misses by O(1)."""
    from verify.cooccurrence import _placed

    n, L, m = 12, 4, 16.0
    data = nc.make_dataset(n, L, 5)
    d = int(data.tokens.max()) + 1
    taus = np.linspace(0.0, 6.0, 31)
    Y = np.asarray(tc.private_trajectory(taus, n, L))
    margins = np.array(tc.private_margins(list(Y), L))
    cls = np.array([tc.class_gamma(Y[:3, j], L, m, margins=margins[:, j])
                    for j in range(taus.size)])
    block = np.array([tc.loss_gradients(_placed(data, d, Y[:, j])["beta"], None, data.tokens,
                                        data.labels, m)[1][:3, :3] for j in range(taus.size)])
    assert np.allclose(cls, block, rtol=1e-11, atol=1e-14 * np.abs(block).max())
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 3, 3))
    K, Q = a @ a.T, b @ b.T
    S = 1.3 * (1 + 0.05 * taus)
    assert np.allclose(tc.score_drift(taus, Y, L, m, 0.7, S, K=K, Q=Q)[-1],
                       tc.attention_drift(taus, block, S, K, Q, end_only=True),
                       rtol=1e-11, atol=0)


def test_key_query_near_miss_transposes_gamma_with_gram_blocks():
    """The KEY_QUERY control's score_drift is int Gamma^T Q_G + K_G int Gamma^T: Gamma read
    as [query, key], the Gram roles kept (verify.cooccurrence._score_drift_transposed)."""
    from verify import cooccurrence as vc

    n, L, m, S = 12, 4, 16.0, 1.3
    taus = np.linspace(0.0, 2.0, 41)
    Y = tc.private_trajectory(taus, n, L)
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 3, 3))
    K, Q = a @ a.T, b @ b.T
    integral = tc.score_drift(taus, Y, L, m, 0.5, 1.0)  # int Gamma dtau
    gt = np.swapaxes(integral, -1, -2)
    expected = (gt @ Q + K @ gt) / S
    got = vc._score_drift_transposed(taus, Y, L, m, 0.7, S, K=K, Q=Q)
    assert np.allclose(got, expected, rtol=1e-13, atol=0)  # rounding of 3 x 3 products
    assert not np.allclose(got, tc.score_drift(taus, Y, L, m, 0.7, S, K=K, Q=Q))


def test_kept_map_fails_a_diverging_theory_with_a_reason():
    """A preconditioned reduction whose GD map leaves the finite numbers is InadmissibleTheory
    (the runner's failed part with its reason), not a numpy warning or a crash; the paper's
    own map stays within the allowance on the smoke run."""
    from theory.flow import InadmissibleTheory, ReducedSystem
    from verify import cooccurrence as vc
    from verify.claims import Context

    def blown(n, L, weights=tc.WEIGHTS):
        base = tc.preconditioned_private_system(n, L, weights)
        return ReducedSystem(base.state, base.params, base.rhs * 1e300, name="blown up")

    ctx = Context(profile="test")
    run = vc._run(vc._main_config(ctx, 0), ctx)
    with pytest.raises(InadmissibleTheory, match="left the finite numbers"):
        vc._kept_map(vc._Theory("blown", (("preconditioned_private_system", blown),)), run, 0)
    pred = vc._kept_map(tc, run, 0)
    allow, why = vc._kept_allowance(run, 0)
    assert pred.shape == allow.shape == (4, run.tau.shape[1])
    assert np.all(np.abs(vc._class_margins(run, 0) - pred) <= allow)
    assert why["max_h_lambda_g"] < 2


def test_attention_drift_is_the_gram_sandwich_of_the_gamma_integral():
    rng = np.random.default_rng(0)
    taus = np.array([0.0, 0.5, 2.0])
    gam = rng.normal(size=(3, 4, 4))
    K, Q = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    integral = 0.25 * (gam[0] + gam[1]) + 0.75 * (gam[1] + gam[2])
    got = tc.attention_drift(taus, gam, 2.0, K, Q)
    assert got.shape == (3, 4, 4) and np.allclose(got[0], 0.0)
    assert np.allclose(got[-1], (integral @ Q + K @ integral) / 2.0, rtol=1e-14)
    # at K = Q = kappa I it is (2 kappa / S) int Gamma dtau
    iso = tc.attention_drift(taus, gam, 2.0, 0.3 * np.eye(4), 0.3 * np.eye(4))[-1]
    assert np.allclose(iso, 0.3 * integral, rtol=1e-14)
    # end_only: the last value alone (a sum instead of a cumulative sum: two additions here,
    # in the same order, so the same floats)
    np.testing.assert_array_equal(tc.attention_drift(taus, gam, 2.0, K, Q, end_only=True),
                                  got[-1])
    # an S path: Gamma / S(tau) integrated; a constant path is the number up to rounding (one
    # division per point instead of one at the end, then sums of 4 x 4 products: rtol 1e-13,
    # about 450 eps, is far above that and far below any slip of the formula)
    path = tc.attention_drift(taus, gam, np.array([1.0, 2.0, 4.0]), K, Q, end_only=True)
    by_hand = 0.25 * (gam[0] + gam[1] / 2) + 0.75 * (gam[1] / 2 + gam[2] / 4)
    np.testing.assert_allclose(path, by_hand @ Q + K @ by_hand, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(tc.attention_drift(taus, gam, np.full(3, 2.0), K, Q), got,
                               rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="S path"):
        tc.attention_drift(taus, gam, np.ones(2), K, Q)
    with pytest.raises(ValueError, match="d x d"):
        tc.attention_drift(taus, gam, 1.0, np.eye(3), np.eye(4))


def test_softmax_change_whole_vocabulary_matches_forward_pass():
    """theory.softmax_change on a whole [d, d] score change equals max |P - 1/L| of the
    model's forward pass with W_K = I, W_Q = Delta A (m >= d), and its 3 x 3 form equals
    the whole form with the change zero off mu1..mu3."""
    data = nc.make_dataset(6, 4, 0)
    d = int(data.tokens.max()) + 1
    rng = np.random.default_rng(3)
    dA = rng.normal(scale=0.3, size=(d, d))
    m = d
    p = {"WK": torch.eye(m, d, dtype=torch.float64), "WQ": torch.as_tensor(dA),
         "WV": torch.zeros(m, d, dtype=torch.float64), "W": torch.zeros(1, m, dtype=torch.float64),
         "a": torch.ones(1, dtype=torch.float64)}
    with torch.no_grad():
        _, P = nc.forward(p, torch.as_tensor(data.tokens))
    want = float((P - 1.0 / data.tokens.shape[1]).abs().max())
    # softmax entries of size 1/L: a few eps of rounding
    assert tc.softmax_change(dA, data.tokens, m) == pytest.approx(want, rel=0, abs=1e-15)
    block = np.zeros((d, d))
    block[:3, :3] = dA[:3, :3]
    assert tc.softmax_change(dA[:3, :3], data.tokens, m) == tc.softmax_change(block,
                                                                             data.tokens, m)
    with pytest.raises(ValueError, match="3 x 3"):
        tc.softmax_change(np.zeros((d - 1, d - 1)), data.tokens, m)
