"""Linear transformers on in-context linear regression (Ahn et al., ICLR 2024; spec §1).

Layout is the paper's: a prompt is Z in R^{(d+1) x (n+1)}, columns are tokens, the last
row holds the labels and the query's label slot is 0.  One layer (eq. "recursion"):

    Z <- Z + (1/n) P Z M (Z^T Q Z),   M = diag(1, ..., 1, 0)

with the authors' code family (spec §1.2): P = [[B, 0], [0, 1]], Q = [[A, 0], [0, 0]],
A, B in R^{d x d} per layer.  Prediction TF = -Z_L[d, n] (0-based), loss
mean (TF - y_q)^2 (no 1/2).  ``params = {"A": [L, d, d], "B": [L, d, d]}``; leaving out
"B" is the code's ``zero_p`` (B = 0), AhnPGD's pure preconditioned-GD family, for which
L layers compute exactly L GD steps with preconditioners -A_l^T (Lemma 1 in this sign
convention; ``theory.linear_attention.gd_predict``).

Choices: covariates ``gaussian`` (N(0, Sigma)), ``sphere`` (uniform on S^{d-1}) and
``gamma`` (sqrt(G) u, G ~ Gamma(0.1, 10), Setting 3); w* ~ N(0, I) or, with
``w_law="inverse"``, N(0, Sigma^{-1}) (AhnPGD Thms 3/4).  Also ZFB's full one-layer
model (``zfb_*``).  The optimiser-comparison measurements of issue 3 (gradient noise, Hill
index, robust condition numbers, directional smoothness) and softmax attention are not
built yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import torch

__all__ = [
    "ICLConfig",
    "dist_to_identity",
    "forward",
    "init_params",
    "prompt_loss",
    "rotated_covariance",
    "sample_prompts",
    "train_gd_family",
    "train_zfb",
    "zfb_forward",
    "zfb_init",
    "zfb_loss",
]


@dataclass(frozen=True)
class ICLConfig:
    d: int = 5
    n: int = 20
    layers: int = 3
    covariates: str = "gaussian"
    sigma: tuple[tuple[float, ...], ...] | None = None  # covariance (gaussian only)
    w_law: str = "identity"
    batch: int = 1000

    def __post_init__(self) -> None:
        for name in ("d", "n", "layers", "batch"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v}")
        if self.covariates not in ("gaussian", "sphere", "gamma"):
            raise ValueError(f"covariates must be gaussian, sphere or gamma, got {self.covariates!r}")
        if self.w_law not in ("identity", "inverse"):
            raise ValueError(f"w_law must be identity or inverse, got {self.w_law!r}")
        if self.sigma is not None:
            s = torch.tensor(self.sigma, dtype=torch.float64)
            if s.shape != (self.d, self.d) or not torch.allclose(s, s.T):
                raise ValueError("sigma must be a symmetric d x d matrix")
            if torch.linalg.eigvalsh(s).min() <= 0:
                raise ValueError("sigma must be positive definite")


def sample_prompts(config: ICLConfig, generator: torch.Generator, batch: int | None = None,
                   dtype=torch.float64, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """(Z [B, d+1, n+1], y_q [B]) for one member."""
    batch = batch or config.batch
    d, n = config.d, config.n
    x = torch.randn(batch, n + 1, d, generator=generator, dtype=dtype, device=device)
    if config.covariates in ("sphere", "gamma"):
        x = x / x.norm(dim=-1, keepdim=True)
        if config.covariates == "gamma":
            # G ~ Gamma(k = 0.1, theta = 10) by inverting the CDF of a seeded uniform.
            u = torch.rand(batch, n + 1, 1, generator=generator, dtype=dtype, device=device)
            g = _gamma_from_uniform(u, 0.1) * 10.0
            x = x * g.sqrt()
    w = torch.randn(batch, d, generator=generator, dtype=dtype, device=device)
    if config.sigma is not None:
        s = torch.tensor(config.sigma, dtype=dtype, device=device)
        evals, evecs = torch.linalg.eigh(s)
        root = evecs @ torch.diag(evals.sqrt()) @ evecs.T
        x = x @ root
        if config.w_law == "inverse":
            w = w @ (evecs @ torch.diag(evals.rsqrt()) @ evecs.T)
    y = torch.einsum("bnd,bd->bn", x, w)
    z = torch.cat([x, y[..., None]], dim=-1).transpose(1, 2).clone()  # [B, d+1, n+1]
    y_q = z[:, d, n].clone()
    z[:, d, n] = 0
    return z, y_q


def _gamma_from_uniform(u: torch.Tensor, k: float) -> torch.Tensor:
    """Gamma(k, 1) quantiles of uniforms (scipy's gammaincinv), so draws follow the seed."""
    from scipy.special import gammaincinv  # noqa: PLC0415

    return torch.as_tensor(gammaincinv(k, u.cpu().numpy()), dtype=u.dtype, device=u.device)


def forward(params: dict[str, torch.Tensor], z: torch.Tensor) -> torch.Tensor:
    """TF prediction -Z_L[d, n] for a batch of prompts [B, d+1, n+1].

    Written blockwise: with X the covariate rows and r the label row, one layer is
    scores = X^T A X, X <- X + (1/n) B (X M) scores, r <- r + (1/n) (r M) scores.
    """
    a_all = params["A"]
    b_all = params.get("B")
    d = a_all.shape[-1]
    n = z.shape[-1] - 1
    x, r = z[:, :d, :], z[:, d, :]
    mask = torch.ones(n + 1, dtype=z.dtype, device=z.device)
    mask[-1] = 0
    for layer in range(a_all.shape[0]):
        scores = torch.einsum("bin,ij,bjm->bnm", x, a_all[layer], x)
        new_r = r + torch.einsum("bn,bnm->bm", r * mask, scores) / n
        if b_all is not None:
            x = x + torch.einsum("ij,bjn,bnm->bim", b_all[layer], x * mask, scores) / n
        r = new_r
    return -r[:, n]


def prompt_loss(params: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    z, y_q = batch
    return ((forward(params, z) - y_q) ** 2).mean()


def init_params(config: ICLConfig, std: float = 0.05, with_b: bool = True,
                dtype=torch.float64, device="cpu") -> Callable[[torch.Generator], dict]:
    """The authors' init: every entry N(0, std^2) (spec §1.2)."""

    def init(g: torch.Generator) -> dict[str, torch.Tensor]:
        shape = (config.layers, config.d, config.d)
        out = {"A": torch.randn(*shape, generator=g, dtype=dtype, device=device) * std}
        if with_b:
            out["B"] = torch.randn(*shape, generator=g, dtype=dtype, device=device) * std
        return out

    return init


def rotated_covariance(seed: int, spectrum=(1.0, 1.0, 0.25, 0.0625, 1.0)) -> tuple[tuple[float, ...], ...]:
    """Sigma = U^T D U with a seeded random orthogonal U (AhnPGD Fig. 1/2 protocol, spec §6 a3)."""
    g = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(len(spectrum), len(spectrum), generator=g, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    sigma = q.T @ torch.diag(torch.tensor(spectrum, dtype=torch.float64)) @ q
    sigma = 0.5 * (sigma + sigma.T)
    return tuple(tuple(round(float(v), 12) for v in row) for row in sigma)


def dist_to_identity(a: torch.Tensor) -> torch.Tensor:
    """min_alpha ||A - alpha I||_F / ||A||_F (spec §6 a3), over the last two axes."""
    d = a.shape[-1]
    alpha = torch.diagonal(a, dim1=-2, dim2=-1).sum(-1) / d
    eye = torch.eye(d, dtype=a.dtype, device=a.device)
    resid = a - alpha[..., None, None] * eye
    return resid.flatten(-2).norm(dim=-1) / a.flatten(-2).norm(dim=-1).clamp_min(1e-300)


@lru_cache(maxsize=16)
def train_gd_family(layers: int, seed: int, device: str,
                    sigma: tuple[tuple[float, ...], ...] | None = None,
                    w_law: str = "identity") -> tuple[dict, float, float]:
    """Train the B = 0 family (2 seeds stacked; protocol in verify/linear_attention).

    Setting 1 by default; ``sigma`` (a covariance, as nested tuples) and ``w_law`` change
    the data as in ``ICLConfig``.

    Returns (final params on CPU, evaluation loss per member on 2e5 fresh prompts, its
    standard error).  Cached: claims and figures share the runs.
    """
    from numerics.ensemble import (  # noqa: PLC0415
        OptimizerConfig,
        TrainConfig,
        member_generators,
        stack_members,
        train,
    )

    cfg = ICLConfig(layers=layers, sigma=sigma, w_law=w_law)
    dev = torch.device(device)
    params = stack_members(init_params(cfg, with_b=False, device=dev),
                           member_generators(2, seed, dev))
    gens = member_generators(2, seed + 10_000, dev)

    def batch(step):
        parts = [sample_prompts(cfg, g, device=dev) for g in gens]
        return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])

    config = TrainConfig(steps=2000, lr=0.01, optimizer=OptimizerConfig("adam", betas=(0.9, 0.9)),
                         record_every=500, schedule=lambda s: 1.0 if s < 1000 else 0.1)
    traj = train(prompt_loss, params, config, batch)
    z, y = sample_prompts(cfg, torch.Generator(device=dev).manual_seed(99 + seed),
                             batch=200_000, device=dev)
    with torch.no_grad():
        errs = torch.stack([(forward({"A": traj.params["A"][m]}, z) - y) ** 2 for m in range(2)])
    loss = errs.mean(1).cpu().numpy()
    se = (errs.std(1) / math.sqrt(errs.shape[1])).cpu().numpy()
    return {k: v.cpu() for k, v in traj.params.items()}, loss, se


# ---------------------------------------------------------------------- ZFB one-layer model
def zfb_forward(params: dict[str, torch.Tensor], z: torch.Tensor) -> torch.Tensor:
    """ZFB's full one-layer model: f(E) = E + W_PV E M (E^T W_KQ E)/n, read-out +f[d, n].

    ``params = {"PV": [(d+1), (d+1)], "KQ": [(d+1), (d+1)]}`` (ZFB; spec §2.1, §2.4).
    """
    n = z.shape[-1] - 1
    mask = torch.ones(n + 1, dtype=z.dtype, device=z.device)
    mask[-1] = 0
    scores = torch.einsum("bin,ij,bjm->bnm", z, params["KQ"], z)
    out = z + torch.einsum("ij,bjn,bnm->bim", params["PV"], z * mask, scores) / n
    return out[:, -1, n]


def zfb_loss(params: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """ZFB's loss convention: half the mean squared error."""
    z, y_q = batch
    return 0.5 * ((zfb_forward(params, z) - y_q) ** 2).mean()


def zfb_init(d: int, sigma: float, dtype=torch.float64, device="cpu") -> Callable[[torch.Generator], dict]:
    """ZFB's balanced init: W_PV = sigma e_{d+1} e_{d+1}^T, W_KQ = sigma [[Theta Theta^T, 0], [0, 0]]
    with ||Theta Theta^T||_F = 1, Theta Gaussian from the member's generator."""

    def init(g: torch.Generator) -> dict[str, torch.Tensor]:
        theta = torch.randn(d, d, generator=g, dtype=dtype, device=device)
        tt = theta @ theta.T
        tt = tt / tt.norm()
        pv = torch.zeros(d + 1, d + 1, dtype=dtype, device=device)
        pv[d, d] = sigma
        kq = torch.zeros(d + 1, d + 1, dtype=dtype, device=device)
        kq[:d, :d] = sigma * tt
        return {"PV": pv, "KQ": kq}

    return init


@lru_cache(maxsize=4)
def train_zfb(seed: int, device: str = "cpu", lr: float = 0.04, steps: int = 1500,
              batch: int = 4000, sigma0: float = 0.05) -> dict:
    """Plain GD on ZFB's full one-layer model from their balanced init (2 seeds stacked).

    Data: d = 3, n = 10, x ~ N(0, diag(1, 1/2, 1/4)), w* ~ N(0, I), ``batch`` fresh prompts
    per step, loss f/2.  Records u = W_PV[d, d], U = W_KQ[:d, :d], the full balance
    ||W_PV||^2 - ||W_KQ||^2, the largest off-block entry, per-step squared gradient norms,
    and the minibatch-gradient noise at the end (mean ||g_B - g_full||^2 over 16 batches).
    """
    from numerics.ensemble import TrainConfig, member_generators, stack_members, train  # noqa: PLC0415
    from numerics.measure import gradient_noise  # noqa: PLC0415

    d, n = 3, 10
    lam = (1.0, 0.5, 0.25)
    cfg = ICLConfig(d=d, n=n, layers=1,
                    sigma=tuple(tuple(lam[i] if i == j else 0.0 for j in range(d)) for i in range(d)))
    dev = torch.device(device)
    params = stack_members(zfb_init(d, sigma0, device=dev), member_generators(2, seed, dev))
    gens = member_generators(2, seed + 10_000, dev)

    def draw(step):
        parts = [sample_prompts(cfg, g, batch=batch, device=dev) for g in gens]
        return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])

    def off_block(p):
        return torch.cat([p["PV"][:d].flatten(), p["PV"][d, :d], p["KQ"][d].flatten(),
                          p["KQ"][:d, d]]).abs().max()

    observables = {
        "u": lambda p: p["PV"][d, d],
        "U": lambda p: p["KQ"][:d, :d],
        "balance": lambda p: (p["PV"] ** 2).sum() - (p["KQ"] ** 2).sum(),
        "sum": lambda p: (p["PV"] ** 2).sum() + (p["KQ"] ** 2).sum(),
        "off": off_block,
    }
    traj = train(zfb_loss, params, TrainConfig(steps=steps, lr=lr, record_every=25), draw,
                 observables)
    g_end = torch.Generator(device=dev).manual_seed(seed + 20_000)
    noise = []
    for m in range(2):
        member = {k: v[m] for k, v in traj.params.items()}
        mini = [sample_prompts(cfg, g_end, batch=batch, device=dev) for _ in range(16)]
        full = sample_prompts(cfg, g_end, batch=64 * batch, device=dev)
        noise.append(float((gradient_noise(zfb_loss, member, mini, full) ** 2).mean()))
    out = {k: v.cpu().numpy() for k, v in traj.observables.items()}
    out.update(time=traj.time[0].cpu().numpy(), steps=traj.steps.cpu().numpy(), lr=lr,
               grad_sq_pv=traj.grad_sq["PV"].cpu().numpy(),
               grad_sq_kq=traj.grad_sq["KQ"].cpu().numpy(), noise_sq=noise,
               lam=lam, n=n, batch=batch)
    return out
