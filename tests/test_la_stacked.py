"""numerics.linear_attention's member-folded loss and sampler against the one-member ones."""

import pytest
import torch

from numerics import linear_attention as nl
from numerics.ensemble import OptimizerConfig, TrainConfig, member_generators, stack_members, train


def _members(cfg, k, with_b, std=0.3, seed=0):
    init = nl.init_params(cfg, std=std, with_b=with_b)
    return stack_members(init, member_generators(k, seed))


@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("with_b", [True, False])
def test_stacked_loss_and_gradient_equal_each_members_own(layers, with_b):
    cfg = nl.ICLConfig(d=4, n=7, layers=layers, batch=9)
    params = _members(cfg, 3, with_b)
    z, y = nl.sample_prompts_stacked(cfg, member_generators(3, 100))
    fn = nl.stacked_prompt_loss().fn
    leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    losses = fn(leaves, (z, y))
    # at one layer B does not reach the output: unused here, a zero gradient there
    grads = [torch.zeros_like(v) if g is None else g for v, g in zip(
        leaves.values(), torch.autograd.grad(losses.sum(), list(leaves.values()),
                                             allow_unused=True), strict=True)]
    for m in range(3):
        own = {k: v[m].clone().requires_grad_(True) for k, v in params.items()}
        loss = nl.prompt_loss(own, (z[m], y[m]))
        own_grads = [torch.zeros_like(v) if g is None else g for v, g in zip(
            own.values(), torch.autograd.grad(loss, list(own.values()), allow_unused=True),
            strict=True)]
        assert losses[m].item() == pytest.approx(loss.item(), rel=1e-13, abs=0)
        for name, g, h in zip(own, grads, own_grads, strict=True):
            if name == "B" and layers == 1:
                assert h.abs().max().item() == 0 and g[m].abs().max().item() == 0
                continue
            scale = h.abs().max().item()
            assert scale > 0
            assert (g[m] - h).abs().max().item() <= 1e-12 * scale
        # the forward itself, prompt by prompt
        tf = nl.stacked_forward({k: v[m:m + 1] for k, v in params.items()}, z[m:m + 1])[0]
        ref = nl.forward({k: v[m] for k, v in params.items()}, z[m])
        assert (tf - ref).abs().max().item() <= 1e-12 * ref.abs().max().item()


@pytest.mark.parametrize("kw", [dict(), dict(covariates="sphere"), dict(covariates="gamma"),
                                dict(sigma=nl.rotated_covariance(3, (1.0, 0.5, 0.25)),
                                     w_law="inverse", d=3)])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_stacked_sampler_is_each_members_own_draw(kw, dtype):
    cfg = nl.ICLConfig(n=6, batch=11, **kw)
    z, y = nl.sample_prompts_stacked(cfg, member_generators(4, 7), dtype=dtype)
    assert z.shape == (4, 11, cfg.d + 1, 7) and y.shape == (4, 11) and z.dtype == dtype
    for m, g in enumerate(member_generators(4, 7)):
        zm, ym = nl.sample_prompts(cfg, g, dtype=dtype)
        # exact (rtol = atol = 0) on purpose: the stacked sampler must draw the same numbers
        # from each member's generator in the same order, so any difference is a bug
        torch.testing.assert_close(z[m], zm, rtol=0, atol=0)
        torch.testing.assert_close(y[m], ym, rtol=0, atol=0)


def test_folded_training_equals_the_vmapped_one():
    """Mixed optimisers, clipping, float64: the trainer's folded path gives the vmapped
    path's trajectory to float rounding."""
    cfg = nl.ICLConfig(d=3, n=5, layers=2, batch=16)
    params = _members(cfg, 4, True, std=0.2)
    sgdm, adam = OptimizerConfig("momentum", momentum=0.9), OptimizerConfig("adam", betas=(0.9, 0.9))
    config = TrainConfig(steps=15, lr=(0.05, 0.02) * 2, optimizer=(sgdm, adam) * 2, clip=0.5)

    def runs(loss, chunk=None):
        gens = member_generators(4, 50)
        return train(loss, params, TrainConfig(**{**config.__dict__, "member_chunk": chunk}),
                     lambda s: nl.sample_prompts_stacked(cfg, gens))

    ref = runs(nl.prompt_loss)
    for chunk in (None, 3):
        got = runs(nl.stacked_prompt_loss(), chunk)
        torch.testing.assert_close(got.loss, ref.loss, rtol=1e-11, atol=0)
        for k in ref.params:
            torch.testing.assert_close(got.params[k], ref.params[k], rtol=1e-11, atol=1e-14)
