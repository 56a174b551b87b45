"""Full single-layer transformer on Markov chains (Makkuva et al.; spec §2, §5).

Everything is a function of a parameter dict so that :func:`numerics.ensemble.train` can
stack members.  Parameter names and shapes (binary chain, ``d`` = embedding width)::

    wte [d]      token embedding (x_n * wte, a bias-free Linear(1, d)); tied output
    wpe [N, d]   position embedding
    wq, wk, wv, wo [d, d]   one causal softmax head, W_O = wo
    w1 [4d, d], w2 [d, 4d]  ReLU feed-forward with residual, no biases
    b  []        output bias (scalar)

For S > 2 states (symmetric kernel, spec §1 "Markov-Simple") ``wte`` is [S, d], the output
is ``z @ wte.T + b`` with ``b`` [S], and the loss is softmax cross-entropy.

Choices (the paper's text was unavailable, spec §0):

* The first symbol is drawn from the stationary law, as the paper intends; the authors'
  sampler draws it uniformly (spec §1, a bug that only touches position 1).
* ``soft_targets=True`` replaces the sampled next symbol by its conditional law given x_n
  (Rao-Blackwellisation): the same expected loss and gradient, with less noise.  The
  evaluation loss always uses it.
* The authors' ``good`` initialisation sets constants on wte, wpe, mlp.c_fc, mlp.c_proj
  only (their code); the attention weights keep the Gaussian initialisation.
* The rank-one initialisation from canonical (e0, w0, b0) uses an all-positive hidden sign
  vector, so that the full model's logits equal the canonical logits exactly at t = 0
  (the authors' random hidden signs shift b; spec §2).  It needs e0 > 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp
import torch
import torch.nn.functional as F

from numerics.ensemble import Params
from theory import markov as theory
from theory.flow import numeric

__all__ = [
    "CANONICAL_FIELDS",
    "MarkovConfig",
    "canonical",
    "conditional_loss",
    "forward",
    "init_authors",
    "init_gaussian",
    "init_rank_one",
    "one_cycle",
    "rank_energy",
    "reduced_init",
    "reduced_population_loss",
    "sample_chains",
    "stationary",
    "train_loss",
    "transition_matrix",
]

CANONICAL_FIELDS = ("e", "w", "u", "b", "f0", "f1", "position", "energy_wv", "energy_w1")


@dataclass(frozen=True)
class MarkovConfig:
    """Data and model sizes.  ``q`` is ignored for ``states > 2`` (symmetric kernel)."""

    p: float
    q: float = 0.5
    states: int = 2
    d: int = 4
    seq_len: int = 128
    batch: int = 16
    soft_targets: bool = False

    def __post_init__(self) -> None:
        for name in ("p", "q"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ValueError(f"{name} must lie in (0, 1), got {v}")
        for name, lo in (("states", 2), ("d", 1), ("seq_len", 2), ("batch", 1)):
            v = getattr(self, name)
            if int(v) != v or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v}")

    @property
    def width(self) -> int:
        return 4 * self.d

    @property
    def binary(self) -> bool:
        return self.states == 2


# ---------------------------------------------------------------------- data
def transition_matrix(config: MarkovConfig, dtype=torch.float64) -> torch.Tensor:
    """Binary: [[1-p, p], [q, 1-q]]; S states: stay 1-p, move to each other state p/(S-1)."""
    if config.binary:
        p, q = config.p, config.q
        return torch.tensor([[1 - p, p], [q, 1 - q]], dtype=dtype)
    s = config.states
    off = config.p / (s - 1)
    return torch.full((s, s), off, dtype=dtype) + torch.eye(s, dtype=dtype) * (1 - config.p - off)


def stationary(config: MarkovConfig, dtype=torch.float64) -> torch.Tensor:
    """Stationary law: (q, p)/(p+q) for the binary chain, uniform for the symmetric one."""
    if config.binary:
        return torch.tensor([config.q, config.p], dtype=dtype) / (config.p + config.q)
    return torch.full((config.states,), 1.0 / config.states, dtype=dtype)


def sample_chains(
    config: MarkovConfig,
    generators: Sequence[torch.Generator],
    device: torch.device | str = "cpu",
    batch: int | None = None,
) -> torch.Tensor:
    """Sequences [K, batch, N] (long), member k drawn with ``generators[k]``."""
    batch = batch or config.batch
    n = config.seq_len
    u = torch.stack(
        [torch.rand(batch, n, generator=g, device=device, dtype=torch.float64) for g in generators]
    )
    x = torch.empty(u.shape, dtype=torch.long, device=device)
    if config.binary:
        pi1 = config.p / (config.p + config.q)
        x[..., 0] = (u[..., 0] < pi1).long()
        for i in range(1, n):
            prev = x[..., i - 1]
            x[..., i] = torch.where(prev == 0, u[..., i] < config.p, u[..., i] >= config.q).long()
        return x
    s = config.states
    v = torch.stack(
        [torch.rand(batch, n, generator=g, device=device, dtype=torch.float64) for g in generators]
    )
    x[..., 0] = torch.clamp((v[..., 0] * s).long(), max=s - 1)
    for i in range(1, n):
        prev = x[..., i - 1]
        jump = torch.clamp((v[..., i] * (s - 1)).long(), max=s - 2) + 1
        x[..., i] = torch.where(u[..., i] < config.p, (prev + jump) % s, prev)
    return x


# ---------------------------------------------------------------------- model
def forward(params: Params, x: torch.Tensor, attention: bool = True) -> torch.Tensor:
    """Logits of one member: [B, N] (binary) or [B, N, S]."""
    wte, wpe = params["wte"], params["wpe"]
    n = x.shape[-1]
    if wte.ndim == 1:
        h = x.to(wte.dtype)[..., None] * wte + wpe[:n]
    else:
        states = torch.arange(wte.shape[0], device=x.device)
        h = (x[..., None] == states).to(wte.dtype) @ wte + wpe[:n]
    y = h
    if attention:
        d = h.shape[-1]
        qh, kh, vh = h @ params["wq"].T, h @ params["wk"].T, h @ params["wv"].T
        scores = qh @ kh.transpose(-1, -2) / math.sqrt(d)
        mask = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        att = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        y = h + (att @ vh) @ params["wo"].T
    z = y + torch.relu(y @ params["w1"].T) @ params["w2"].T
    if wte.ndim == 1:
        return z @ wte + params["b"]
    return z @ wte.T + params["b"]


def _target_probs(config: MarkovConfig, x: torch.Tensor, dtype) -> torch.Tensor:
    """Conditional law of x_{n+1} given x_n: P(x=1|x_n) [B, N-1] or rows of P [B, N-1, S]."""
    prev = x[..., :-1]
    if config.binary:
        return torch.where(prev == 0, config.p, 1 - config.q).to(dtype)
    return transition_matrix(config, dtype).to(x.device)[prev]


def _cross_entropy(config: MarkovConfig, logits: torch.Tensor, target: torch.Tensor, soft: bool):
    if config.binary:
        return F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype))
    logp = torch.log_softmax(logits, dim=-1)
    if soft:
        return -(target * logp).sum(-1).mean()
    return -logp.gather(-1, target[..., None]).mean()


def train_loss(config: MarkovConfig) -> Callable[[Params, torch.Tensor], torch.Tensor]:
    """Next-token loss of one member on a batch [B, N]: sampled or soft targets."""

    def loss(params: Params, x: torch.Tensor) -> torch.Tensor:
        logits = forward(params, x)[:, :-1]
        if config.soft_targets:
            return _cross_entropy(config, logits, _target_probs(config, x, logits.dtype), True)
        return _cross_entropy(config, logits, x[:, 1:], False)

    return loss


def conditional_loss(params: Params, x: torch.Tensor, config: MarkovConfig) -> torch.Tensor:
    """Expected next-token loss given the sampled contexts (Rao-Blackwellised, nats)."""
    logits = forward(params, x)[:, :-1]
    return _cross_entropy(config, logits, _target_probs(config, x, logits.dtype), True)


# ---------------------------------------------------------------------- initialisations
def _gaussian(config: MarkovConfig, g: torch.Generator, std: float, dtype, device) -> Params:
    d, n, s = config.d, config.seq_len, config.states

    def normal(*shape, scale=std):
        return torch.randn(*shape, generator=g, dtype=dtype, device=device) * scale

    proj = std / math.sqrt(2.0)  # GPT-2 scaling of c_proj weights, n_layer = 1 (spec §2)
    params = {
        "wte": normal(d) if config.binary else normal(s, d),
        "wpe": normal(n, d),
        "wq": normal(d, d),
        "wk": normal(d, d),
        "wv": normal(d, d),
        "wo": normal(d, d, scale=proj),
        "w1": normal(4 * d, d),
        "w2": normal(d, 4 * d, scale=proj),
        "b": torch.zeros((), dtype=dtype, device=device)
        if config.binary
        else torch.zeros(s, dtype=dtype, device=device),
    }
    return params


def init_gaussian(
    config: MarkovConfig, std: float = 0.02, dtype=torch.float64, device="cpu"
) -> Callable[[torch.Generator], Params]:
    """The authors' ``base`` initialisation: N(0, std^2), c_proj weights std/sqrt(2), b = 0."""
    if not std > 0:
        raise ValueError(f"std must be > 0, got {std}")
    return lambda g: _gaussian(config, g, std, dtype, device)


def init_authors(
    config: MarkovConfig, dtype=torch.float64, device="cpu"
) -> Callable[[torch.Generator], Params]:
    """The authors' ``good`` initialisation: wte = -1, wpe = 0.5, W_1 = 2, W_2 = -2 (spec §2)."""

    def init(g: torch.Generator) -> Params:
        params = _gaussian(config, g, 0.02, dtype, device)
        params["wte"] = torch.full_like(params["wte"], -1.0)
        params["wpe"] = torch.full_like(params["wpe"], 0.5)
        params["w1"] = torch.full_like(params["w1"], 2.0)
        params["w2"] = torch.full_like(params["w2"], -2.0)
        return params

    return init


def init_rank_one(
    config: MarkovConfig, e0: float, w0: float, b0: float, dtype=torch.float64, device="cpu"
) -> Callable[[torch.Generator], Params]:
    """Rank-one initialisation realising canonical (e0, w0, b0) exactly (module doc).

    alpha in {+-1}^d random: wte = e0/sqrt(d) alpha, wpe_n = -e0/(2 sqrt(d)) alpha,
    W_1 = |w0|/d 1 alpha^T, W_2 = sign(w0)|w0|/d alpha 1^T, W_V = 0; W_Q, W_K, W_O Gaussian.
    """
    if not config.binary:
        raise ValueError("states must be 2 for the rank-one initialisation")
    if not e0 > 0:
        raise ValueError(f"e0 must be > 0 for the rank-one map to be exact, got {e0}")
    d = config.d

    def init(g: torch.Generator) -> Params:
        params = _gaussian(config, g, 0.02, dtype, device)
        alpha = (torch.randint(0, 2, (d,), generator=g, device=device) * 2 - 1).to(dtype)
        ones = torch.ones(4 * d, dtype=dtype, device=device)
        params["wte"] = e0 / math.sqrt(d) * alpha
        params["wpe"] = (-e0 / (2 * math.sqrt(d)) * alpha).expand(config.seq_len, d).clone()
        params["w1"] = abs(w0) / d * torch.outer(ones, alpha)
        params["w2"] = math.copysign(abs(w0) / d, w0) * torch.outer(alpha, ones)
        params["wv"] = torch.zeros(d, d, dtype=dtype, device=device)
        params["b"] = torch.tensor(float(b0), dtype=dtype, device=device)
        return params

    return init


# ---------------------------------------------------------------------- canonical map
def rank_energy(matrix: torch.Tensor, k: int = 1) -> torch.Tensor:
    """Fraction of squared singular values in the top k: sum_{i<=k} s_i^2 / sum s_i^2."""
    sv = torch.linalg.svdvals(matrix)
    return (sv[..., :k] ** 2).sum(-1) / (sv**2).sum(-1).clamp_min(1e-300)


def canonical(params: Params, x: torch.Tensor) -> torch.Tensor:
    """Canonical scalars of one binary member, in the order of ``CANONICAL_FIELDS``.

    Procedure of spec §5: alpha = top right singular vector of W_1 (sign chosen so that
    e = <wte, alpha> >= 0); f0, f1 = mean logit over positions with x_n = 0, 1 on the
    contexts ``x`` [B, N]; u = f1 - f0; b = f0 + e^2/2; w from the FF gain
    2 w|w| = u/e^2 - 1; position = mean_n <wpe_n, alpha> (the paper ties it to -e/2);
    energy_* = top-singular-value energy fraction of W_V and W_1.
    """
    _, _, vh = torch.linalg.svd(params["w1"])
    alpha = vh[0]
    e = params["wte"] @ alpha
    sign = torch.where(e < 0, -1.0, 1.0).to(e.dtype)
    alpha, e = alpha * sign, e * sign
    logits = forward(params, x)
    ones = x.to(logits.dtype)
    f1 = (logits * ones).sum() / ones.sum().clamp_min(1.0)
    f0 = (logits * (1 - ones)).sum() / (1 - ones).sum().clamp_min(1.0)
    u = f1 - f0
    gain = u / (e**2).clamp_min(1e-300) - 1
    w = torch.sign(gain) * torch.sqrt(torch.abs(gain) / 2)
    position = (params["wpe"][: x.shape[-1]] @ alpha).mean()
    return torch.stack(
        [e, w, u, f0 + e**2 / 2, f0, f1, position, rank_energy(params["wv"]), rank_energy(params["w1"])]
    )


# ---------------------------------------------------------------------- reduced model
@lru_cache(maxsize=1)
def _reduced_loss_torch():
    expr = numeric(theory.reduced_loss(theory.E, theory.W, theory.B, theory.P, theory.Q))
    return sp.lambdify((theory.E, theory.W, theory.B, theory.P, theory.Q), expr, modules="torch")


def reduced_population_loss(p: float, q: float) -> Callable[[Params], torch.Tensor]:
    """Exact population loss L(e, w, b) of spec §3.2 on params {"e", "w", "b"} (torch)."""
    theory.stationary_distribution(p, q)  # validates p, q
    f = _reduced_loss_torch()
    return lambda params: f(params["e"], params["w"], params["b"], p, q)


def reduced_init(
    e0: float, w0: float, b0: float, dtype=torch.float64, device="cpu"
) -> Callable[[torch.Generator], Params]:
    """The reduced (e, w, b) model's parameters (deterministic; the generator is unused)."""
    return lambda g: {
        k: torch.tensor(float(v), dtype=dtype, device=device)
        for k, v in (("e", e0), ("w", w0), ("b", b0))
    }


# ---------------------------------------------------------------------- schedule
def one_cycle(
    total: int, warmup: float = 0.02, div: float = 100.0, final_div: float = 1e4
) -> Callable[[int], float]:
    """Cosine one-cycle multiplier: linear warm-up from 1/div to 1, cosine to 1/final_div."""
    if total < 1:
        raise ValueError(f"total must be >= 1, got {total}")
    up = max(1, int(warmup * total))

    def schedule(step: int) -> float:
        if step < up:
            return 1 / div + (1 - 1 / div) * step / up
        frac = min(1.0, (step - up) / max(1, total - up))
        low = 1 / final_div
        return low + (1 - low) * 0.5 * (1 + math.cos(math.pi * frac))

    return schedule


# ---------------------------------------------------------------------- cached runs
@dataclass(frozen=True)
class FullRun:
    """One batched training run of the full model: everything that determines its result.

    ``init`` is ``gaussian`` (authors' base), ``authors`` (their good init) or
    ``rank_one`` (from ``canonical0`` = (e0, w0, b0)).  ``optimizer`` is ``adam`` (AdamW
    with the authors' betas (0.9, 0.95) and weight decay 1e-3) or ``gd`` (plain GD, no
    momentum).  Member i uses init seed ``seed + i`` and data seed ``seed + 10_000 + i``.
    """

    config: MarkovConfig
    init: str = "gaussian"
    canonical0: tuple[float, float, float] | None = None
    members: int = 4
    seed: int = 0
    steps: int = 1000
    lr: float = 2e-3
    optimizer: str = "adam"
    schedule: bool = True
    record_every: int = 50
    dtype: str = "float32"
    device: str = "cpu"
    eval_batch: int = 256

    def __post_init__(self) -> None:
        if self.init not in ("gaussian", "authors", "rank_one"):
            raise ValueError(f"init must be gaussian, authors or rank_one, got {self.init!r}")
        if self.optimizer not in ("adam", "gd"):
            raise ValueError(f"optimizer must be adam or gd, got {self.optimizer!r}")
        if self.members < 1 or self.steps < 1:
            raise ValueError("members and steps must be >= 1")


@dataclass(frozen=True)
class FullRunResult:
    """Recorded arrays (numpy, float64): time [K, T]; eval_loss [K, T] (Rao-Blackwellised,
    nats); eval_se [K] (standard error of the final eval loss over eval sequences);
    canonical [K, T, 9] (binary only, fields ``CANONICAL_FIELDS``); spectra of W_V and W_1
    as cumulative energy fractions [K, T, d]."""

    run: FullRun
    steps: object
    time: object
    eval_loss: object
    eval_se: object
    canonical: object
    spectrum_wv: object
    spectrum_w1: object
    seconds: float


def _cumulative_energy(matrix: torch.Tensor) -> torch.Tensor:
    sv = torch.linalg.svdvals(matrix)
    return torch.cumsum(sv**2, -1) / (sv**2).sum(-1).clamp_min(1e-300)


@lru_cache(maxsize=64)
def run_full(run: FullRun) -> FullRunResult:
    """Train ``run.members`` members together and record what the claims and figures need.

    Cached on the (frozen) run description, so claims, controls and figures share runs.
    """
    import time as _time  # noqa: PLC0415

    from numerics.device import select_device  # noqa: PLC0415
    from numerics.ensemble import (  # noqa: PLC0415
        OptimizerConfig,
        TrainConfig,
        member_generators,
        stack_members,
        train,
    )

    start = _time.perf_counter()
    device = select_device(run.device)
    dtype = {"float32": torch.float32, "float64": torch.float64}[run.dtype]
    cfg = run.config
    if run.init == "gaussian":
        init = init_gaussian(cfg, dtype=dtype, device=device)
    elif run.init == "authors":
        init = init_authors(cfg, dtype=dtype, device=device)
    else:
        if run.canonical0 is None:
            raise ValueError("canonical0 = (e0, w0, b0) is needed for the rank-one init")
        init = init_rank_one(cfg, *run.canonical0, dtype=dtype, device=device)
    params = stack_members(init, member_generators(run.members, run.seed, device))
    data_gens = member_generators(run.members, run.seed + 10_000, device)
    x_eval = sample_chains(cfg, member_generators(1, run.seed + 20_000, device), device,
                           batch=run.eval_batch)[0]
    observables = {
        "eval": lambda p: conditional_loss(p, x_eval, cfg),
        "wv": lambda p: _cumulative_energy(p["wv"]),
        "w1": lambda p: _cumulative_energy(p["w1"]),
    }
    if cfg.binary:
        observables["canonical"] = lambda p: canonical(p, x_eval)
    if run.optimizer == "adam":
        opt = OptimizerConfig("adam", betas=(0.9, 0.95), weight_decay=1e-3)
    else:
        opt = OptimizerConfig("sgd")
    config = TrainConfig(
        steps=run.steps,
        lr=run.lr,
        optimizer=opt,
        record_every=run.record_every,
        schedule=one_cycle(run.steps) if run.schedule else None,
        description=f"markov {run.init} p={cfg.p} q={cfg.q}",
    )
    traj = train(train_loss(cfg), params, config, lambda step: sample_chains(cfg, data_gens, device),
                 observables)
    with torch.no_grad():
        per_seq = torch.stack([
            torch.stack([conditional_loss({k: v[m] for k, v in traj.params.items()},
                                          x_eval[i : i + 1], cfg) for i in range(x_eval.shape[0])])
            for m in range(run.members)
        ])
    se = per_seq.std(dim=1) / math.sqrt(x_eval.shape[0])

    def np64(t):
        return None if t is None else t.detach().to("cpu", torch.float64).numpy()

    return FullRunResult(
        run=run,
        steps=traj.steps.numpy(),
        time=np64(traj.time),
        eval_loss=np64(traj.observables["eval"]),
        eval_se=np64(se),
        canonical=np64(traj.observables.get("canonical")),
        spectrum_wv=np64(traj.observables["wv"]),
        spectrum_w1=np64(traj.observables["w1"]),
        seconds=_time.perf_counter() - start,
    )


# ---------------------------------------------------------------------- standard runs
# The runs shared by the markov claims and figures (sizes explained in verify/markov.py).
def full_config(p: float, q: float, states: int = 2, **kw) -> MarkovConfig:
    d = 4 if states == 2 else 8
    return MarkovConfig(p=p, q=q, states=states, d=d, seq_len=64, batch=32, **kw)


def adam_run(p: float, q: float, init: str, device: str = "cpu", seed: int = 0,
             members: int = 4) -> FullRunResult:
    """The authors' optimiser and schedule on the full model (module doc)."""
    return run_full(FullRun(full_config(p, q), init=init, members=members, seed=seed,
                                  steps=1000, lr=2e-3, optimizer="adam", device=device))


def multi_state_run(states: int, p: float, device: str = "cpu", seed: int = 0) -> FullRunResult:
    return run_full(FullRun(full_config(p, 0.5, states=states), init="gaussian",
                                  members=3, seed=seed, steps=1000, lr=2e-3,
                                  optimizer="adam", device=device))


def gd_run(p: float, q: float, e0: float, w0: float, b0: float, device: str = "cpu",
           seed: int = 0) -> FullRunResult:
    """Plain GD (no momentum), soft targets, float64, lr 0.25 for 800 steps (t = 200)."""
    cfg = full_config(p, q, soft_targets=True)
    return run_full(FullRun(cfg, init="rank_one", canonical0=(e0, w0, b0), members=2,
                                  seed=seed, steps=800, lr=0.25, optimizer="gd",
                                  schedule=False, record_every=10, dtype="float64",
                                  device=device))


