"""numerics.measure: diagnostics on problems whose answers are known."""

import math

import pytest
import torch

from numerics import measure


def _quad(params, batch):
    a, shift = batch
    x = params["x"]
    return 0.5 * x @ a @ x + shift @ x


def test_hessian_condition_numbers_and_directional_smoothness():
    a = torch.diag(torch.tensor([1.0, 2.0, 3.0, 100.0], dtype=torch.float64))
    params = {"x": torch.ones(4, dtype=torch.float64)}
    batch = (a, torch.zeros(4, dtype=torch.float64))
    h = measure.full_hessian(_quad, params, batch)
    torch.testing.assert_close(h, a)
    # median of 4 values in torch is the lower middle one (2.0)
    assert measure.robust_condition_number(h) == pytest.approx(50.0)
    rot = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))[0]
    h_rot = rot @ a @ rot.T
    assert measure.robust_condition_number(h_rot, "eigen") == pytest.approx(50.0)
    v = torch.tensor([0.0, 0.0, 3.0, 4.0], dtype=torch.float64)
    ds = measure.directional_smoothness(_quad, params, {"x": v}, batch)
    assert ds == pytest.approx(float(v @ a @ v / (v @ v)))
    with pytest.raises(ValueError):
        measure.robust_condition_number(h, "trace")


def test_gradient_noise_matches_known_spread():
    params = {"x": torch.zeros(3, dtype=torch.float64)}
    a = torch.eye(3, dtype=torch.float64)
    g = torch.Generator().manual_seed(1)
    shifts = [torch.randn(3, generator=g, dtype=torch.float64) for _ in range(2000)]
    zero = torch.zeros(3, dtype=torch.float64)
    noise = measure.gradient_noise(_quad, params, [(a, s) for s in shifts], [(a, zero)] * 3)
    # g_B - g_full = shift ~ N(0, I_3): E||.||^2 = 3; 2000 samples, s.e. ~ sqrt(6/2000)
    assert (noise**2).mean().item() == pytest.approx(3.0, abs=5 * math.sqrt(6 / 2000))
    with pytest.raises(ValueError):
        measure.gradient_noise(_quad, params, [(a, zero)], [])


def test_hill_index_recovers_pareto_tail():
    g = torch.Generator().manual_seed(0)
    u = torch.rand(200_000, generator=g, dtype=torch.float64)
    alpha = 2.5
    x = u ** (-1 / alpha)  # Pareto(alpha)
    k = 2000
    est = measure.hill_tail_index(x, k)
    assert est == pytest.approx(alpha, abs=5 * alpha / math.sqrt(k))
    light = measure.hill_tail_index(torch.randn(200_000, generator=g).abs(), k)
    assert light > est  # Gaussian tails are lighter: larger index
    with pytest.raises(ValueError):
        measure.hill_tail_index(x, 0)


def test_diagnostics_run_on_the_linear_transformer():
    from numerics import linear_attention as nl

    cfg = nl.ICLConfig(layers=3)
    g = torch.Generator().manual_seed(0)
    params = nl.init_params(cfg)(g)
    batch = nl.sample_prompts(cfg, g, batch=64)
    h = measure.full_hessian(nl.prompt_loss, params, batch)
    assert h.shape == (150, 150)
    torch.testing.assert_close(h, h.T, rtol=1e-8, atol=1e-10)
    for definition in ("diagonal", "eigen"):
        assert measure.robust_condition_number(h, definition) >= 1.0
    update = {k: torch.randn(v.shape, generator=g, dtype=v.dtype) for k, v in params.items()}
    vec, _ = measure.flatten(update)
    ds = measure.directional_smoothness(nl.prompt_loss, params, update, batch)
    v = vec / vec.norm()
    assert ds == pytest.approx(float(v @ h @ v), rel=1e-8)
