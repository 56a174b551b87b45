"""numerics.ensemble: stacked members equal unbatched runs; optimisers match torch.optim."""

import pytest
import torch

from numerics import markov as nm
from numerics.ensemble import (
    DivergenceError,
    OptimizerConfig,
    TrainConfig,
    member_generators,
    stack_members,
    train,
)


def _quadratic(params):
    return 0.5 * (params["x"] ** 2).sum() * params["k"].squeeze() + 0 * params["k"].sum()


def _init(values):
    return lambda g: {"x": torch.tensor(values, dtype=torch.float64),
                      "k": torch.tensor([1.0], dtype=torch.float64)}


def test_gd_on_quadratic_matches_closed_form_and_time_axis():
    params = stack_members(_init([1.0, -2.0]), member_generators(3, 0))
    traj = train(lambda p: 0.5 * (p["x"] ** 2).sum(), {"x": params["x"]},
                 TrainConfig(steps=10, lr=(0.1, 0.2, 0.3), record_every=5))
    for i, lr in enumerate((0.1, 0.2, 0.3)):
        expected = torch.tensor([1.0, -2.0], dtype=torch.float64) * (1 - lr) ** 10
        torch.testing.assert_close(traj.params["x"][i], expected)
        torch.testing.assert_close(traj.time[i], torch.tensor([0, 5 * lr, 10 * lr], dtype=torch.float64))
    assert traj.steps.tolist() == [0, 5, 10]


@pytest.mark.parametrize(("name", "make"), [
    ("adam", lambda p: torch.optim.Adam(p, lr=0.02, betas=(0.9, 0.95))),
    ("momentum", lambda p: torch.optim.SGD(p, lr=0.02, momentum=0.9)),
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.02)),
])
def test_optimisers_match_torch_optim(name, make):
    target = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)

    def loss(p):
        return ((p["x"] - target) ** 2).sum() + 0.1 * (p["x"] ** 4).sum()

    x0 = torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64)
    cfg = OptimizerConfig(name, betas=(0.9, 0.95))
    traj = train(loss, {"x": x0[None].clone()}, TrainConfig(steps=25, lr=0.02, optimizer=cfg))
    ref = x0.clone().requires_grad_(True)
    opt = make([ref])
    for _ in range(25):
        opt.zero_grad()
        loss({"x": ref}).backward()
        opt.step()
    torch.testing.assert_close(traj.params["x"][0], ref.detach(), rtol=1e-10, atol=1e-12)


def test_mixed_optimisers_equal_separate_runs():
    """One stacked run with momentum and Adam members equals the two single-optimiser runs."""
    target = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)

    def loss(p):
        return ((p["x"] - target) ** 2).sum() + 0.1 * (p["x"] ** 4).sum()

    x0 = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 0.0], [2.0, 0.0, 1.0]], dtype=torch.float64)
    sgdm, adam = OptimizerConfig("momentum"), OptimizerConfig("adam", betas=(0.9, 0.9))
    mixed = train(loss, {"x": x0}, TrainConfig(steps=30, lr=(0.01, 0.02, 0.03),
                                               optimizer=(sgdm, adam, sgdm), clip=1.0))
    for i, (opt, lr) in enumerate(((sgdm, 0.01), (adam, 0.02), (sgdm, 0.03))):
        alone = train(loss, {"x": x0[i:i + 1]},
                      TrainConfig(steps=30, lr=lr, optimizer=opt, clip=1.0))
        torch.testing.assert_close(mixed.params["x"][i], alone.params["x"][0], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="optimizer has 2 entries"):
        train(loss, {"x": x0}, TrainConfig(steps=1, lr=0.1, optimizer=(sgdm, adam)))


def test_member_equals_unbatched_run_with_its_seed():
    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=16, batch=4)
    config = TrainConfig(steps=5, lr=1e-2, optimizer=OptimizerConfig("adam"))

    def run(members, seed):
        params = stack_members(nm.init_gaussian(cfg), member_generators(members, seed))
        data = member_generators(members, seed + 100)
        return train(nm.train_loss(cfg), params, config, lambda s: nm.sample_chains(cfg, data))

    batched = run(3, 7)
    for i in range(3):
        alone = run(1, 7 + i)
        for key in batched.params:
            torch.testing.assert_close(batched.params[key][i], alone.params[key][0],
                                       rtol=1e-9, atol=1e-12)


_SMALL_MARKOV = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=16, batch=4)


def _adam_run(loss, steps: int, chunk: int | None):
    """5 small markov members trained with Adam (init seeds 3.., data seeds 103..)."""
    cfg = _SMALL_MARKOV
    params = stack_members(nm.init_gaussian(cfg), member_generators(5, 3))
    data = member_generators(5, 103)
    config = TrainConfig(steps=steps, lr=1e-2, optimizer=OptimizerConfig("adam"),
                         member_chunk=chunk)
    return train(loss, params, config, lambda s: nm.sample_chains(cfg, data))


def test_member_chunks_do_not_change_the_run():
    """Chunked vmapped gradients (5 members, chunks of 2: an uneven last chunk) = one call."""
    loss = nm.train_loss(_SMALL_MARKOV)
    whole, chunked = _adam_run(loss, 4, None), _adam_run(loss, 4, 2)
    torch.testing.assert_close(chunked.loss, whole.loss, rtol=1e-12, atol=1e-14)
    for key in whole.params:
        torch.testing.assert_close(chunked.params[key], whole.params[key], rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="member_chunk"):
        TrainConfig(steps=1, lr=0.1, member_chunk=0)


@pytest.mark.parametrize("chunk", [None, 2])
def test_stacked_loss_trains_as_the_vmapped_loss(chunk):
    """The folded fast path (StackedLoss, autograd of the summed losses) gives each member the
    run it gets from the vmapped one-member loss, also in member chunks."""
    vmapped = _adam_run(nm.train_loss(_SMALL_MARKOV), 6, chunk)
    folded = _adam_run(nm.stacked_train_loss(_SMALL_MARKOV), 6, chunk)
    # float64: per-step gradients agree to ~1e-16 (summation order); Adam divides by
    # sqrt(v) so after 6 steps parameters agree to a few ulp of their O(0.1) size
    torch.testing.assert_close(folded.loss, vmapped.loss, rtol=1e-12, atol=1e-14)
    for key in vmapped.params:
        torch.testing.assert_close(folded.params[key], vmapped.params[key], rtol=1e-10,
                                   atol=1e-13)


def test_divergence_names_member_and_step():
    params = {"x": torch.tensor([[1.0], [1.0]], dtype=torch.float64)}
    with pytest.raises(DivergenceError, match="member 1 diverged at step"):
        train(lambda p: (p["x"] ** 2).sum(), params,
              TrainConfig(steps=2000, lr=(0.1, 3.0)))


def test_clipping_is_per_member():
    params = {"x": torch.tensor([[10.0], [0.1]], dtype=torch.float64)}
    traj = train(lambda p: 0.5 * (p["x"] ** 2).sum(), params,
                 TrainConfig(steps=1, lr=1.0, clip=1.0))
    torch.testing.assert_close(traj.params["x"][:, 0],
                               torch.tensor([9.0, 0.0], dtype=torch.float64))


@pytest.mark.parametrize("bad", [dict(steps=-1, lr=0.1), dict(steps=1, lr=0.0),
                                 dict(steps=1, lr=0.1, record_every=0)])
def test_bad_train_config(bad):
    with pytest.raises(ValueError):
        TrainConfig(**bad)


@pytest.mark.gpu
def test_cuda_ensemble_matches_cpu():
    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=16, batch=4)
    params = stack_members(nm.init_gaussian(cfg), member_generators(2, 0))
    data = [nm.sample_chains(cfg, member_generators(2, 10 + s)) for s in range(4)]
    out = {}
    for dev in ("cpu", "cuda"):
        moved = {k: v.to(dev) for k, v in params.items()}
        traj = train(nm.train_loss(cfg), moved, TrainConfig(steps=3, lr=1e-2),
                     lambda s, dev=dev: data[s].to(dev))
        out[dev] = traj.params["w1"].cpu()
    torch.testing.assert_close(out["cpu"], out["cuda"], rtol=1e-9, atol=1e-12)


def test_plan_probe_counts_one_step_and_trains_nothing():
    """--plan's probe: a matmul model's FLOP scale with members x steps, nothing is trained."""
    from numerics.cache import PROBE, Probed
    from numerics.flops import count_flops

    a = torch.randn(3, 5, 7, dtype=torch.float64)
    counted = count_flops(lambda: a @ torch.ones(7, 2, dtype=torch.float64))
    assert counted.matmul == 2 * 3 * 5 * 7 * 2  # torch's mm formula: 2 m n k
    assert counted.elementwise > 0  # the ones() it wrote
    params = {"w": torch.zeros(4, 6, 6, dtype=torch.float64)}
    x = torch.randn(6, 6, dtype=torch.float64)
    token = PROBE.set("inner")
    try:
        with pytest.raises(Probed) as probed:
            train(lambda p: (p["w"] @ x).pow(2).sum(), params, TrainConfig(steps=50, lr=0.1))
    finally:
        PROBE.reset(token)
    assert probed.value.member_steps == 4 * 50
    # forward w @ x and the backward's product per member: at least 2 x (2 * 6^3) per step
    assert probed.value.flops >= 50 * 4 * 2 * (2 * 6 ** 3)
    assert torch.equal(params["w"], torch.zeros(4, 6, 6, dtype=torch.float64))
