"""numerics.markov: sampler, model, initialisations, canonical map."""

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from numerics import markov as nm
from numerics.ensemble import member_generators
from theory import markov as tm


def test_binary_sampler_transition_frequencies_and_stationary_start():
    cfg = nm.MarkovConfig(p=0.3, q=0.6, seq_len=200, batch=200)
    x = nm.sample_chains(cfg, member_generators(1, 0))[0]
    prev, nxt = x[:, :-1].flatten(), x[:, 1:].flatten()
    n0 = (prev == 0).sum().item()
    p_hat = ((prev == 0) & (nxt == 1)).sum().item() / n0
    q_hat = ((prev == 1) & (nxt == 0)).sum().item() / (prev == 1).sum().item()
    # Monte Carlo: binomial standard error ~ sqrt(p(1-p)/n) < 3e-3 here; 5 sigma.
    assert p_hat == pytest.approx(0.3, abs=5 * math.sqrt(0.21 / n0))
    assert q_hat == pytest.approx(0.6, abs=0.02)
    pi1 = 0.3 / 0.9
    first = x[:, 0].double().mean().item()
    assert first == pytest.approx(pi1, abs=5 * math.sqrt(pi1 * (1 - pi1) / 200))


def test_multi_state_sampler_stays_and_moves_uniformly():
    cfg = nm.MarkovConfig(p=0.4, states=4, seq_len=200, batch=100)
    x = nm.sample_chains(cfg, member_generators(1, 1))[0]
    stay = (x[:, 1:] == x[:, :-1]).double().mean().item()
    assert stay == pytest.approx(0.6, abs=0.01)
    counts = torch.bincount(x.flatten(), minlength=4).double() / x.numel()
    assert torch.allclose(counts, torch.full((4,), 0.25, dtype=torch.float64), atol=0.01)


@given(st.floats(0.1, 1.5), st.floats(0.05, 1.5).map(lambda v: v) | st.floats(-1.5, -0.05),
       st.floats(-1, 1), st.integers(0, 100))
def test_rank_one_init_realises_canonical_logits(e0, w0, b0, seed):
    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=12, batch=8)
    params = nm.init_rank_one(cfg, e0, w0, b0)(torch.Generator().manual_seed(seed))
    x = nm.sample_chains(cfg, member_generators(1, seed))[0]
    logits = nm.forward(params, x)
    f0, f1 = (float(v) for v in tm.logits(e0, w0, b0))
    expected = torch.where(x == 1, torch.tensor(f1, dtype=torch.float64),
                           torch.tensor(f0, dtype=torch.float64))
    torch.testing.assert_close(logits, expected, rtol=1e-10, atol=1e-10)
    can = dict(zip(nm.CANONICAL_FIELDS, nm.canonical(params, x).tolist(), strict=True))
    assert can["e"] == pytest.approx(e0, rel=1e-9)
    assert can["w"] == pytest.approx(w0, rel=1e-6)
    assert can["b"] == pytest.approx(b0, abs=1e-9)
    assert can["position"] == pytest.approx(-e0 / 2, rel=1e-9)
    assert can["energy_w1"] == pytest.approx(1.0, abs=1e-12)


def test_authors_init_constants_and_gaussian_scale():
    cfg = nm.MarkovConfig(p=0.5, q=0.8)
    good = nm.init_authors(cfg)(torch.Generator().manual_seed(0))
    assert torch.all(good["wte"] == -1) and torch.all(good["wpe"] == 0.5)
    assert torch.all(good["w1"] == 2) and torch.all(good["w2"] == -2)
    base = nm.init_gaussian(cfg)(torch.Generator().manual_seed(0))
    assert base["wpe"].std().item() == pytest.approx(0.02, rel=0.1)
    assert base["b"].item() == 0


def test_soft_and_sampled_losses_agree_in_expectation():
    cfg = nm.MarkovConfig(p=0.3, q=0.6, seq_len=64, batch=256)
    params = nm.init_rank_one(cfg, 1.0, -1.0, 0.2)(torch.Generator().manual_seed(0))
    x = nm.sample_chains(cfg, member_generators(1, 3))[0]
    sampled = nm.train_loss(cfg)(params, x).item()
    soft = nm.conditional_loss(params, x, cfg).item()
    exact = float(tm.reduced_loss(1.0, -1.0, 0.2, 0.3, 0.6))
    # 16k tokens, per-token std < 1.5 nats -> standard error < 0.012; 4 sigma.
    assert sampled == pytest.approx(exact, abs=0.05)
    assert soft == pytest.approx(exact, abs=0.02)


def test_reduced_population_loss_matches_theory():
    loss = nm.reduced_population_loss(0.2, 0.3)
    params = {k: torch.tensor(v, dtype=torch.float64) for k, v in (("e", 0.7), ("w", -0.4), ("b", 0.1))}
    assert loss(params).item() == pytest.approx(float(tm.reduced_loss(0.7, -0.4, 0.1, 0.2, 0.3)), rel=1e-12)


def test_rank_energy_and_schedule():
    m = torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 1.0, 0.0]))
    assert nm.rank_energy(m).item() == pytest.approx(1.0)
    assert nm.rank_energy(torch.eye(4, dtype=torch.float64), 2).item() == pytest.approx(0.5)
    s = nm.one_cycle(100)
    assert s(0) == pytest.approx(0.01) and s(2) == pytest.approx(1.0) and s(100) < 1e-3


@pytest.mark.parametrize("bad", [dict(p=1.2), dict(p=0.5, q=0.0), dict(p=0.5, d=0),
                                 dict(p=0.5, seq_len=-3), dict(p=0.5, states=1)])
def test_bad_config_raises(bad):
    with pytest.raises(ValueError):
        nm.MarkovConfig(**bad)


def test_rank_one_needs_positive_e():
    with pytest.raises(ValueError, match="e0 must be > 0"):
        nm.init_rank_one(nm.MarkovConfig(p=0.5), -1.0, 0.5, 0.0)


def test_gd_on_full_model_follows_rank_one_manifold_initially():
    """One tiny GD step keeps canonical logits consistent with the reduced loss decreasing."""
    res = nm.run_full(nm.FullRun(nm.MarkovConfig(p=0.2, q=0.3, seq_len=16, batch=16,
                                                  soft_targets=True),
                                 init="rank_one", canonical0=(1.0, -1.0, 0.0), members=1,
                                 steps=20, lr=0.05, optimizer="gd", schedule=False,
                                 record_every=10, dtype="float64", eval_batch=32))
    assert np.all(np.diff(res.eval_loss[0]) < 0)
    assert res.canonical[0, 0, 2] == pytest.approx(float(tm.gap(1.0, -1.0)), rel=1e-9)
    assert sp.Float(res.time[0, -1]) == pytest.approx(1.0)
