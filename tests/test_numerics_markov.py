"""numerics.markov: sampler, model, initialisations, canonical map."""

import math

import numpy as np
import pytest
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


def test_rank_energy():
    m = torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 1.0, 0.0]))
    assert nm.rank_energy(m).item() == pytest.approx(1.0)
    assert nm.rank_energy(torch.eye(4, dtype=torch.float64), 2).item() == pytest.approx(0.5)


@pytest.mark.parametrize("total", [1000, 300, 100, 51])
def test_one_cycle_is_torch_onecycle_as_the_authors_call_it(total):
    """Their main.py: OneCycleLR(pct_start=0.02, anneal cos, cycle_momentum=False,
    div_factor=1e2, final_div_factor=.05): final rate max/5, cosine warm-up."""
    weight = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([weight], lr=2e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=2e-3, total_steps=total, pct_start=0.02, anneal_strategy="cos",
        cycle_momentum=False, div_factor=1e2, final_div_factor=0.05)
    ours = nm.one_cycle(total)
    for step in range(total):
        assert opt.param_groups[0]["lr"] == pytest.approx(2e-3 * ours(step), rel=1e-12, abs=1e-18)
        opt.step()
        sched.step()
    assert ours(0) == pytest.approx(0.01) and ours(total - 1) == pytest.approx(0.2)


def test_authors_adamw_decays_only_their_decay_group():
    from numerics.ensemble import TrainConfig, train

    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=8)
    params = {k: v[None] for k, v in nm.init_gaussian(cfg)(torch.Generator().manual_seed(0)).items()}
    params["b"] = params["b"] + 1.0
    # a loss with zero gradient: Adam's step is 0, so only weight decay moves parameters
    traj = train(lambda p: 0.0 * sum(v.sum() for v in p.values()), params,
                 TrainConfig(steps=1, lr=0.5, optimizer=nm.authors_adamw()))
    for name, before in params.items():
        after = traj.params[name]
        if name in nm.NO_DECAY:
            # no gradient and no decay: the parameter must not move at all (exact equality)
            torch.testing.assert_close(after, before, rtol=0, atol=0)
        else:
            torch.testing.assert_close(after, before * (1 - 0.5 * 1e-3), rtol=1e-12, atol=0)
    # Markov-Simple2 (the simulated model): wte is a Linear and decayed; Markov-Simple's
    # Embedding wte (embedding "table") is exempt
    assert set(nm.NO_DECAY) == {"wpe", "b"}
    assert set(nm.NO_DECAY_TABLE) == {"wte", "wpe", "b"}


def test_table_embedding_is_the_vocabulary_model():
    """embedding "table" (Markov-Simple): a two-row wte, a softmax head over two classes;
    its conditional loss is the binary chain's cross-entropy, and the Fig. 4 constants give
    every token the same embedding."""
    cfg = nm.MarkovConfig(p=0.5, q=0.8, d=8, seq_len=16, batch=4, embedding="table")
    assert not cfg.scalar_head and cfg.binary
    params = nm.init_authors(cfg, constants=nm.GOOD_INIT["authors_fig4"])(
        torch.Generator().manual_seed(0))
    assert params["wte"].shape == (2, 8) and params["b"].shape == (2,)
    x = nm.sample_chains(cfg, [torch.Generator().manual_seed(1)])[0]
    logits = nm.forward(params, x)
    assert logits.shape == (4, 16, 2)
    # both rows of wte equal: the two classes get the same logit, the loss is ln 2
    assert float(nm.conditional_loss(params, x, cfg)) == pytest.approx(math.log(2), abs=1e-9)


def test_per_sequence_loss_averages_to_conditional_loss():
    cfg = nm.MarkovConfig(p=0.3, q=0.6, seq_len=16, batch=8)
    params = nm.init_rank_one(cfg, 1.0, -1.0, 0.2)(torch.Generator().manual_seed(0))
    x = nm.sample_chains(cfg, member_generators(1, 3))[0]
    per = nm.per_sequence_loss(params, x, cfg)
    assert per.shape == (8,)
    assert per.mean().item() == pytest.approx(nm.conditional_loss(params, x, cfg).item(), rel=1e-12)


def test_rank_one_population_loss_is_exact_and_gd_stays_on_the_manifold():
    p, q, e0, w0, b0 = 0.2, 0.3, 1.0, -1.0, 0.1
    run = nm.RankOneRun(p, q, e0, w0, b0, lr=0.1, t_end=1.0, record_dt=0.5, seq_len=8)
    res = nm.run_rank_one(run)
    assert nm.run_rank_one(run) is res  # served by the run function's in-process LRU
    f0, f1 = (float(v) for v in tm.logits(e0, w0, b0))
    assert res.logits[0] == pytest.approx([f0, f1], rel=1e-12)
    assert res.loss[0] == pytest.approx(float(tm.reduced_loss(e0, w0, b0, p, q)), rel=1e-12)
    assert res.state[0] == pytest.approx(list(tm.rank_one_state(e0, w0, b0)), rel=1e-12)
    assert res.time.tolist() == pytest.approx([0.0, 0.5, 1.0])
    assert res.off_manifold.max() < 1e-12 and res.attention.max() == 0
    assert np.all(np.diff(res.loss) < 0)
    with pytest.raises(ValueError, match="multiple of lr"):
        nm.RankOneRun(p, q, e0, w0, b0, lr=0.3, t_end=1.0, record_dt=0.5)


@pytest.mark.parametrize("bad", [dict(p=1.2), dict(p=0.5, q=0.0), dict(p=0.5, d=0),
                                 dict(p=0.5, seq_len=-3), dict(p=0.5, states=1)])
def test_bad_config_raises(bad):
    with pytest.raises(ValueError):
        nm.MarkovConfig(**bad)


def test_rank_one_needs_positive_e():
    with pytest.raises(ValueError, match="e0 must be > 0"):
        nm.init_rank_one(nm.MarkovConfig(p=0.5), -1.0, 0.5, 0.0)


def _folded_against_vmapped(cfg, members, device="cpu", dtype=torch.float64):
    """(loss, grads) of the folded fast path and of vmap over the one-member loss."""
    from torch.func import grad_and_value, vmap

    from numerics.ensemble import stack_members

    params = stack_members(nm.init_gaussian(cfg, std=0.5, dtype=dtype, device=device),
                           member_generators(members, 0, device))
    x = nm.sample_chains(cfg, member_generators(members, 100, device), device)
    vmapped = vmap(grad_and_value(nm.train_loss(cfg)))(params, x)
    # the folded path's per-member gradients: autograd of the summed member losses (members
    # share no parameters), as the trainer's fast path takes them
    leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    losses = nm.stacked_train_loss(cfg).fn(leaves, x)
    grads = torch.autograd.grad(losses.sum(), list(leaves.values()))
    folded = dict(zip(leaves, grads, strict=True)), losses.detach()
    return folded, vmapped


@pytest.mark.parametrize(("states", "soft", "seq_len", "batch"),
                         [(2, False, 12, 6), (2, True, 12, 6), (3, False, 12, 6),
                          (3, True, 12, 6), (2, False, 600, 1), (5, True, 600, 1)])
def test_stacked_loss_equals_the_vmapped_member_loss(states, soft, seq_len, batch):
    """The folded fast path (one fused attention call over all members) computes each
    member's loss and gradient as vmap over the one-member loss does; N = 600 spans several
    blocks of torch's CPU flash kernel, so the causal mask across blocks is exercised."""
    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=seq_len, batch=batch, states=states,
                          soft_targets=soft)
    (grads_s, loss_s), (grads_v, loss_v) = _folded_against_vmapped(cfg, 2 if seq_len > 100 else 3)
    # float64, O(1) values: the two paths differ in summation order only (~1e-16 measured)
    torch.testing.assert_close(loss_s, loss_v, rtol=0, atol=1e-13)
    for name, g in grads_v.items():
        torch.testing.assert_close(grads_s[name], g, rtol=1e-10, atol=1e-13)


@pytest.mark.gpu
def test_stacked_loss_equals_the_vmapped_member_loss_on_cuda_float32():
    """The thorough profile's case: float32 on CUDA, paper length N = 1024."""
    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=8, seq_len=1024, batch=2)
    (grads_s, loss_s), (grads_v, loss_v) = _folded_against_vmapped(cfg, 2, "cuda", torch.float32)
    # float32 with different kernels (fused vs explicit softmax): rounding ~1e-6 relative
    torch.testing.assert_close(loss_s, loss_v, rtol=1e-4, atol=1e-5)
    for name, g in grads_v.items():
        torch.testing.assert_close(grads_s[name], g, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("states", [2, 3])
def test_member_and_eval_chunks_leave_the_run_unchanged(states):
    """``member_chunk`` and ``eval_chunk`` (profile thorough's memory bounds) change only how
    the members and evaluation sequences are batched: evaluation chunks give the same bits,
    member chunks the same results up to rounding (the batched products sum in another
    order: ~4e-15 measured in float64 here, ~3e-7 in float32)."""
    import dataclasses

    cfg = nm.MarkovConfig(p=0.3, q=0.4, d=4, seq_len=12, batch=4, states=states)
    run = nm.FullRun(cfg, members=3, steps=4, record_every=2, eval_batch=7, dtype="float64")
    ref = nm.run_full(run)
    by_eval = nm.run_full(dataclasses.replace(run, eval_chunk=3))
    by_member = nm.run_full(dataclasses.replace(run, member_chunk=2, eval_chunk=3))
    for name in ("eval_loss", "eval_se", "spectrum_wv", "spectrum_w1", "canonical"):
        if getattr(ref, name) is not None:
            np.testing.assert_array_equal(getattr(by_eval, name), getattr(ref, name))
            np.testing.assert_allclose(getattr(by_member, name), getattr(ref, name),
                                       rtol=0, atol=1e-12)
    for bad in (dict(member_chunk=0), dict(eval_chunk=0), dict(eval_chunk=1.5)):
        with pytest.raises(ValueError, match="chunk"):
            dataclasses.replace(run, **bad)


def _chains_by_loop(config, generators):
    """Reference sampler: step through the positions (the definition of the chain)."""
    n, out = config.seq_len, []
    for g in generators:
        u = torch.rand(config.batch, n, generator=g, dtype=torch.float64)
        x = torch.empty(u.shape, dtype=torch.long)
        if config.binary:
            x[:, 0] = (u[:, 0] < config.p / (config.p + config.q)).long()
            for i in range(1, n):
                x[:, i] = torch.where(x[:, i - 1] == 0, u[:, i] < config.p,
                                      u[:, i] >= config.q).long()
        else:
            s = config.states
            v = torch.rand(config.batch, n, generator=g, dtype=torch.float64)
            x[:, 0] = torch.clamp((v[:, 0] * s).long(), max=s - 1)
            for i in range(1, n):
                jump = torch.clamp((v[:, i] * (s - 1)).long(), max=s - 2) + 1
                x[:, i] = torch.where(u[:, i] < config.p, (x[:, i - 1] + jump) % s, x[:, i - 1])
        out.append(x)
    return torch.stack(out)


@given(st.floats(0.02, 0.98), st.floats(0.02, 0.98), st.sampled_from([2, 3, 5]),
       st.integers(0, 2**16))
def test_vectorised_sampler_equals_stepping_through_positions(p, q, states, seed):
    cfg = nm.MarkovConfig(p=p, q=q, states=states, seq_len=40, batch=8)
    fast = nm.sample_chains(cfg, member_generators(3, seed))
    assert torch.equal(fast, _chains_by_loop(cfg, member_generators(3, seed)))


def test_sizes_table_falls_back_and_budgets_are_the_runs_sizes():
    """One size table: ci reads quick's full-model runs, thorough the paper's; the tracks
    step ladder halves at ci (and thorough falls back to it)."""
    assert nm.SIZES.at("full", "ci") == nm.SIZES.at("full", "quick")
    paper = nm.SIZES.at("full", "thorough")  # Markov-Simple2's own defaults
    assert (paper.d, paper.seq_len, paper.batch, paper.members) == (4, 1024, 16, 1000)
    assert paper.paper and not nm.SIZES.at("full", "quick").paper
    fig4 = nm.SIZES.at("fig4", "thorough")  # Fig. 4's Markov-Simple run, to iteration 600
    assert (fig4.embedding, fig4.d, fig4.seq_len, fig4.lr, fig4.steps, fig4.schedule_steps) == (
        "linear", 8, 1024, 1e-3, 600, 5000) and fig4.paper and fig4.members >= 8
    fig5 = nm.SIZES.at("fig5", "thorough")
    assert (fig5.embedding, fig5.d, fig5.seq_len, fig5.steps) == ("linear", 8, 1024, 5000)
    assert nm.SIZES.at("full_multi", "thorough").steps == 5000
    assert nm.SIZES.at("full_multi", "ci").steps == 5000  # the authors' length at ci
    assert nm.SIZES.at("tracks", "thorough") == nm.SIZES.at("tracks", "ci")
    run = nm.adam_run_config(0.5, 0.8, "gaussian", nm.SIZES.at("full", "quick"), seed=3)
    assert (run.members, run.steps, run.seed, run.config.seq_len) == (8, 1000, 3, 32)


@given(st.floats(0.05, 0.95), st.floats(0.05, 0.95), st.floats(0.3, 2.0),
       st.floats(0.05, 2.0), st.sampled_from([-1.0, 1.0]), st.floats(-1.0, 1.0),
       st.sampled_from([8, 16]))
def test_canonical_metric_is_the_full_gradient_pushed_through_the_map(p, q, e, w_abs, sign,
                                                                       b, seq_len):
    """theory.markov.canonical_metric G = J^T J and the metric flow -G^{-1} grad L against
    the full model (numerics.markov.init_rank_one, autograd) at random points: J^T of the
    full gradient is grad L(e, w, b), its least-squares coefficients on the family's
    tangent (the full gradient projected onto the family) are G^{-1} grad L, and
    canonical_projection of the rank-one state returns (e, w, b)."""
    w = sign * w_abs
    n_targets = seq_len - 1
    cfg = nm.MarkovConfig(p=p, q=q, d=4, seq_len=seq_len, batch=1)
    params = nm.init_rank_one(cfg, e, w, b)(torch.Generator().manual_seed(1))
    params["wo"] = torch.zeros_like(params["wo"])  # inert attention, as in run_rank_one
    alpha = params["wte"] / params["wte"].norm()
    hidden = torch.full((4 * cfg.d,), 1 / math.sqrt(4 * cfg.d), dtype=torch.float64)
    names = sorted(params)
    loss = nm.rank_one_population_loss(p, q, seq_len)

    def image(c: torch.Tensor) -> torch.Tensor:
        """(e, w, b) -> the full parameters the loss depends on (the canonical map)."""
        ce, cw, cb = c
        out = dict(params)
        wpe = params["wpe"].clone()
        wpe[:n_targets] = -ce / 2 * alpha
        out.update(wte=ce * alpha, wpe=wpe, w1=2 * cw.abs() * torch.outer(hidden, alpha),
                   w2=2 * cw * torch.outer(alpha, hidden), b=cb)
        return torch.cat([out[k].reshape(-1) for k in names])

    c0 = torch.tensor([e, w, b], dtype=torch.float64)
    flat = torch.cat([params[k].reshape(-1) for k in names])
    # the map is the init's: the same O(1) products in float64, which may differ from the
    # init's own arithmetic order by a few ulps (1e-14 is about 50 eps at magnitude 1)
    assert torch.allclose(image(c0), flat, rtol=0, atol=1e-14)
    jac = torch.autograd.functional.jacobian(image, c0).numpy()
    sizes = [params[k].numel() for k in names]

    def full_loss(v: torch.Tensor) -> torch.Tensor:
        parts = torch.split(v, sizes)
        return loss({k: t.reshape(params[k].shape) for k, t in zip(names, parts, strict=True)})

    grad = torch.autograd.functional.jacobian(full_loss, flat).numpy()
    metric = np.diag([float(g) for g in tm.canonical_metric(n_targets)])
    assert jac.T @ jac == pytest.approx(metric, abs=1e-12)
    values = {tm.E: e, tm.W: w, tm.B: b}
    dl = np.array([float(sp_diff.subs(values)) for sp_diff in
                   (tm.reduced_loss(tm.E, tm.W, tm.B, p, q).diff(x) for x in (tm.E, tm.W, tm.B))])
    assert jac.T @ grad == pytest.approx(dl, rel=1e-9, abs=1e-12)
    coeff = np.linalg.lstsq(jac, grad, rcond=None)[0]
    sys = tm.metric_system(p, q, n_targets)
    velocity = np.asarray(sys.lambdify("numpy")(0.0, np.array([e, w, b])), float).ravel()
    assert -coeff == pytest.approx(velocity, rel=1e-9, abs=1e-12)
    back = [float(v) for v in tm.canonical_projection(*tm.rank_one_state(e, w, b), n_targets)]
    assert back == pytest.approx([e, w, b], rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("states,p,q", [(5, 0.1, 0.5), (2, 0.2, 0.3)])
def test_initial_logit_range_bounds_the_initial_loss_distance_to_ln_s(states, p, q):
    """|L(0) - ln S| <= max f - min f at every position (numerics.markov.initial_logit_range's
    docstring), so also for the run's recorded initial evaluation loss; and the range is the
    run's own initial model's (a range of 0 would fail the bound at std 0.02)."""
    budget = nm.Budget(steps=2, members=3, d=8, seq_len=16, batch=4, eval_batch=32,
                       record_every=1)
    run = nm.adam_run_config(p, q, "gaussian", budget, 0, states)
    res = nm.run_full(run)
    spread = nm.initial_logit_range(run)
    assert res.steps[0] == 0 and spread.shape == (3,)
    distance = np.abs(res.eval_loss[:, 0] - np.log(states))
    assert np.all(distance <= spread)
    assert np.all(distance > 0)  # the bound is not met vacuously by a uniform model
