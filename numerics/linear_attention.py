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
model (``zfb_*``), softmax attention (``forward(..., attention="softmax")``, the authors'
``activation``: normalised over all n+1 keys before the mask, 1/n kept), the optimiser
comparison of Fig. 2 (``compare_optimizers``: SGD-momentum and Adam members stacked in one
run, diagnostics post hoc on a fixed batch as the authors' notebooks), the noise at
initialisation (``init_noise``) and fixed-sample L-BFGS fits (``fit_gd_family``).
The paper's full (d+1) x (d+1) P, Q parameterisation is ``full_forward`` (the claims train
the code's block family, as the authors' figures were produced).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import torch

__all__ = [
    "SETTINGS",
    "ComparisonRun",
    "ICLConfig",
    "Setting",
    "compare_optimizers",
    "fit_gd_family",
    "get_setting",
    "init_noise",
    "loss_for",
    "softmax_prompt_loss",
    "squared_errors",
    "dist_to_identity",
    "forward",
    "full_forward",
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
            # G ~ Gamma(k = 0.1, theta = 10), drawn by numpy from a seed taken off the
            # member's generator (so the draws follow it; torch's gamma sampler takes none).
            g = _gamma_draws(generator, (batch, n + 1, 1), 0.1, 10.0)
            x = x * torch.as_tensor(g, dtype=dtype, device=device).sqrt()
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


def _gamma_draws(generator: torch.Generator, shape: tuple[int, ...], k: float, theta: float):
    """Gamma(k, theta) draws from numpy, seeded by one integer off ``generator``."""
    import numpy as np  # noqa: PLC0415

    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
    return np.random.default_rng(seed).gamma(k, theta, size=shape)


def forward(params: dict[str, torch.Tensor], z: torch.Tensor,
            attention: str = "linear") -> torch.Tensor:
    """TF prediction -Z_L[d, n] for a batch of prompts [B, d+1, n+1].

    Written blockwise: with X the covariate rows and r the label row, one layer is
    scores = X^T A X, X <- X + (1/n) B (X M) scores, r <- r + (1/n) (r M) scores.
    ``scores[b, j, i]`` pairs key token j with output token i.

    ``attention="softmax"`` is the authors' ``activation`` (spec §1.2, §5.1): the scores
    are normalised over the key index j across all n+1 tokens *before* the mask removes
    the query as a value, and the 1/n factor is kept, exactly as their ``attention()``.
    Consequence (ours): the weights are a sub-convex combination and the value corner is
    fixed to 1, so each layer moves a label entry by at most max_j |r_j| / n, and
    |TF| <= ((1 + 1/n)^L - 1) max_j |y_j| for ANY parameters (tested): at n = 20, L = 3
    softmax attention cannot fit y_q, whatever the optimiser.
    """
    if attention not in ("linear", "softmax"):
        raise ValueError(f"attention must be linear or softmax, got {attention!r}")
    a_all = params["A"]
    b_all = params.get("B")
    d = a_all.shape[-1]
    n = z.shape[-1] - 1
    x, r = z[:, :d, :], z[:, d, :]
    mask = torch.ones(n + 1, dtype=z.dtype, device=z.device)
    mask[-1] = 0
    for layer in range(a_all.shape[0]):
        scores = torch.einsum("bin,ij,bjm->bnm", x, a_all[layer], x)
        if attention == "softmax":
            scores = torch.softmax(scores, dim=1)
        new_r = r + torch.einsum("bn,bnm->bm", r * mask, scores) / n
        if b_all is not None:
            x = x + torch.einsum("ij,bjn,bnm->bim", b_all[layer], x * mask, scores) / n
        r = new_r
    return -r[:, n]


def full_forward(params: dict[str, torch.Tensor], z: torch.Tensor) -> torch.Tensor:
    """The paper's parameterisation (Section 3.1): full P_l, Q_l in R^{(d+1) x (d+1)},

        Z <- Z + (1/n) P_l Z M (Z^T Q_l Z),   TF = -Z_L[d, n].

    ``params = {"P": [L, d+1, d+1], "Q": [L, d+1, d+1]}``.  With P_l = [[B_l, 0], [0, 1]]
    and Q_l = [[A_l, 0], [0, 0]] it is ``forward`` (tested).
    """
    n = z.shape[-1] - 1
    mask = torch.ones(n + 1, dtype=z.dtype, device=z.device)
    mask[-1] = 0
    for p, q in zip(params["P"], params["Q"], strict=True):
        scores = torch.einsum("bin,ij,bjm->bnm", z, q, z)
        z = z + torch.einsum("ij,bjn,bnm->bim", p, z * mask, scores) / n
    return -z[:, -1, n]


def squared_errors(params: dict[str, torch.Tensor], z: torch.Tensor, y_q: torch.Tensor,
                   attention: str = "linear", chunk: int = 20_000) -> torch.Tensor:
    """(TF - y_q)^2 per prompt without gradients, in chunks (bounded memory for 1e5+ prompts)."""
    with torch.no_grad():
        return torch.cat([(forward(params, z[i:i + chunk], attention) - y_q[i:i + chunk]) ** 2
                          for i in range(0, z.shape[0], chunk)])


def prompt_loss(params: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    z, y_q = batch
    return ((forward(params, z) - y_q) ** 2).mean()


def softmax_prompt_loss(params: dict[str, torch.Tensor],
                        batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """``prompt_loss`` with softmax attention (spec §5.1)."""
    z, y_q = batch
    return ((forward(params, z, "softmax") - y_q) ** 2).mean()


def loss_for(attention: str) -> Callable:
    """The training loss of one member for ``linear`` or ``softmax`` attention."""
    if attention not in ("linear", "softmax"):
        raise ValueError(f"attention must be linear or softmax, got {attention!r}")
    return prompt_loss if attention == "linear" else softmax_prompt_loss


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
    errs = torch.stack([squared_errors({"A": traj.params["A"][m]}, z, y) for m in range(2)])
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
              batch: int = 4000, sigma0: float = 0.05, members: int = 4,
              shared_init: bool = True, measure_noise: bool = True) -> dict:
    """Plain GD on ZFB's full one-layer model from their balanced init (``members`` stacked:
    seeds ``seed + i``, or with ``shared_init`` one init from ``seed`` and independent data
    streams, so that the spread across members is the minibatch noise alone).

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
    init_gens = ([torch.Generator(device=dev).manual_seed(seed) for _ in range(members)]
                 if shared_init else member_generators(members, seed, dev))
    params = stack_members(zfb_init(d, sigma0, device=dev), init_gens)
    gens = member_generators(members, seed + 10_000, dev)

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
    for m in range(members if measure_noise else 0):
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


# ---------------------------------------------------------------------- optimiser comparison
@dataclass(frozen=True)
class Setting:
    """One column of the paper's Table 1 (all d = 5, w* ~ N(0, I)) with the README's
    learning rates for SGD-momentum and Adam and the clipping threshold (spec §1.2)."""

    name: str
    n: int
    covariates: str
    lr_sgdm: float
    lr_adam: float
    clip: float


SETTINGS: dict[str, Setting] = {
    "setting1": Setting("setting1", 20, "gaussian", 0.02, 0.02, 1.0),
    "setting2": Setting("setting2", 5, "gaussian", 0.01, 0.005, 1.0),
    "setting3": Setting("setting3", 20, "gamma", 0.02, 0.02, 1.0),
    "sphere": Setting("sphere", 20, "sphere", 5.0, 0.1, 0.1),
}


def get_setting(name: str) -> Setting:
    if name not in SETTINGS:
        raise ValueError(f"setting must be one of {', '.join(SETTINGS)}, got {name!r}")
    return SETTINGS[name]


@dataclass(frozen=True)
class ComparisonRun:
    """SGD-momentum against Adam on the code family (spec §1.2, §3), both in one stacked run.

    The authors' protocol (``train.ipynb``): init std 0.05, a fresh batch of ``batch``
    prompts per step, SGD momentum 0.9 and Adam betas (0.9, 0.9), global norm clipping,
    float32 training; diagnostics on one fixed evaluation batch (seed 99, 1000 prompts).
    Ours differs in length only: ``steps`` (1250 by default; the paper runs 10 000, but its
    condition-number table is at 750 and 1250) and ``seeds`` (the paper has 6).  The two
    optimisers of seed s share the initialisation and the data stream, as in the paper.
    ``attention="softmax"`` trains the same model with softmax attention at Setting 1's
    rates (Fig. 4; the paper does not give its rates).  ``lr_scale`` multiplies both rates
    (the depth sweep halves them where a deep model diverges at the 3-layer rates).
    """

    setting: str = "setting1"
    attention: str = "linear"
    layers: int = 3
    seeds: int = 2
    steps: int = 1250
    seed: int = 0
    batch: int = 1000
    eval_every: int = 50
    hessian_at: tuple[int, ...] = (750, 1250)
    eval_batch: int = 1000
    lr_scale: float = 1.0

    def __post_init__(self) -> None:
        get_setting(self.setting)
        if self.attention not in ("linear", "softmax"):
            raise ValueError(f"attention must be linear or softmax, got {self.attention!r}")
        for name in ("layers", "seeds", "steps", "batch", "eval_every", "eval_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr_scale > 0:
            raise ValueError(f"lr_scale must be > 0, got {self.lr_scale}")
        if any(not 0 <= h <= self.steps for h in self.hessian_at):
            raise ValueError(f"hessian_at must lie in [0, steps], got {self.hessian_at}")

    @property
    def optimizers(self) -> tuple[str, ...]:
        """Member order: (sgdm, adam) for seed 0, then for seed 1, ..."""
        return ("sgdm", "adam") * self.seeds


def _eval_batch(cfg: ICLConfig, device, size: int = 1000, dtype=torch.float64):
    """The authors' fixed evaluation batch (seed 99, 1000 prompts)."""
    return sample_prompts(cfg, torch.Generator(device=device).manual_seed(99), batch=size,
                          dtype=dtype, device=device)


@lru_cache(maxsize=32)
def compare_optimizers(run: ComparisonRun, device: str = "cpu", progress: bool = False) -> dict:
    """Train ``run`` and measure what Fig. 2 plots, post hoc from the saved iterates.

    Returns numpy arrays: ``eval_steps`` and ``eval_loss`` [K, T] (fixed batch, every
    ``eval_every`` steps); ``hess_steps`` and robust condition numbers ``r_diag``/``r_eig``
    [K, H] (``numerics.measure``; the Hessian of the fixed-batch loss, float32 like the
    authors); ``r0_diag``/``r0_eig`` [seeds] at the shared initialisation; ``smooth`` and
    ``grad_norm`` [K, S] (directional smoothness along the actual update x_{t+1} - x_t, and
    the gradient norm, on the fixed batch, every ``eval_every`` steps); ``init_gap`` (largest
    difference between the two optimisers' initial parameters: 0 by construction).
    """
    from numerics.ensemble import OptimizerConfig, TrainConfig, train  # noqa: PLC0415
    from numerics.measure import (  # noqa: PLC0415
        directional_smoothness,
        flatten,
        full_hessian,
        robust_condition_number,
    )

    s = get_setting(run.setting)
    cfg = ICLConfig(n=s.n, layers=run.layers, covariates=s.covariates, batch=run.batch)
    dev = torch.device(device)
    dt = torch.float32
    init = init_params(cfg, dtype=dt, device=dev)
    base = run.seed * 1000
    inits = [init(torch.Generator(device=dev).manual_seed(base + k)) for k in range(run.seeds)]
    params = {key: torch.stack([inits[k // 2][key] for k in range(2 * run.seeds)])
              for key in inits[0]}
    data = [torch.Generator(device=dev).manual_seed(base + 10_000 + k) for k in range(run.seeds)]

    def batch(step):
        parts = [sample_prompts(cfg, g, dtype=dt, device=dev) for g in data]
        z = torch.stack([parts[k // 2][0] for k in range(2 * run.seeds)])
        y = torch.stack([parts[k // 2][1] for k in range(2 * run.seeds)])
        return z, y

    sgdm = OptimizerConfig("momentum", momentum=0.9)
    adam = OptimizerConfig("adam", betas=(0.9, 0.9))
    rates = s if run.attention == "linear" else SETTINGS["setting1"]
    lr_tag = {"sgdm": rates.lr_sgdm * run.lr_scale, "adam": rates.lr_adam * run.lr_scale}
    lr = (lr_tag["sgdm"], lr_tag["adam"]) * run.seeds
    loss_fn = loss_for(run.attention)
    config = TrainConfig(steps=run.steps, lr=lr, optimizer=(sgdm, adam) * run.seeds,
                         clip=s.clip, progress=progress,
                         description=f"{run.setting} {run.attention} L={run.layers}")
    traj = train(loss_fn, params, config, batch,
                 {"theta": lambda p: torch.cat([p["A"].flatten(), p["B"].flatten()])})
    theta = traj.observables["theta"]  # [K, steps + 1, P]
    _, unflatten = flatten({k: v[0] for k, v in params.items()})
    z_eval, y_eval = _eval_batch(cfg, dev, run.eval_batch)
    ev64 = (z_eval, y_eval)
    ev32 = (z_eval.to(dt), y_eval.to(dt))
    members = 2 * run.seeds
    eval_steps = list(range(0, run.steps + 1, run.eval_every))
    if eval_steps[-1] != run.steps:
        eval_steps.append(run.steps)
    with torch.no_grad():
        eval_loss = torch.stack([torch.stack([
            loss_fn(unflatten(theta[k, t].to(torch.float64)), ev64) for t in eval_steps])
            for k in range(members)])

    def conditions(vec):
        h = full_hessian(loss_fn, unflatten(vec), ev32).to(torch.float64)
        return robust_condition_number(h, "diagonal"), robust_condition_number(h, "eigen")

    hess = [[conditions(theta[k, t]) for t in run.hessian_at] for k in range(members)]
    r0 = [conditions(theta[2 * k, 0]) for k in range(run.seeds)]
    smooth_steps = [t for t in eval_steps if t < run.steps]
    smooth, grad_norm = [], []
    for k in range(members):
        row_s, row_g = [], []
        for t in smooth_steps:
            p64 = unflatten(theta[k, t].to(torch.float64))
            upd = unflatten((theta[k, t + 1] - theta[k, t]).to(torch.float64))
            row_s.append(directional_smoothness(loss_fn, p64, upd, ev64))
            g = torch.func.grad(loss_fn)(p64, ev64)
            row_g.append(float(torch.sqrt(sum((v**2).sum() for v in g.values()))))
        smooth.append(row_s)
        grad_norm.append(row_g)
    import numpy as np  # noqa: PLC0415

    return {
        "run": run,
        "optimizers": run.optimizers,
        "lr": lr_tag,
        "eval_steps": np.array(eval_steps),
        "eval_loss": eval_loss.cpu().numpy(),
        "train_loss": traj.loss.cpu().numpy(),
        "hess_steps": np.array(run.hessian_at),
        "r_diag": np.array([[c[0] for c in row] for row in hess]),
        "r_eig": np.array([[c[1] for c in row] for row in hess]),
        "r0_diag": np.array([c[0] for c in r0]),
        "r0_eig": np.array([c[1] for c in r0]),
        "init_gap": float((theta[0::2, 0] - theta[1::2, 0]).abs().max()),
        "smooth_steps": np.array(smooth_steps),
        "smooth": np.array(smooth),
        "grad_norm": np.array(grad_norm),
    }


@lru_cache(maxsize=32)
def init_noise(setting: str, layers: int = 3, attention: str = "linear", samples: int = 1000,
               batch: int = 1000, full: int = 100_000, seed: int = 1,
               device: str = "cpu") -> np.ndarray:  # noqa: F821
    """||g_B - g_full|| at the authors' initialisation (std 0.05, model seed ``seed``).

    ``samples`` fresh minibatches of ``batch`` prompts; g_full from ``full`` = 100 B prompts
    (the authors' approximation of the full gradient), in chunks.  Float32, as the authors.
    """
    s = get_setting(setting)
    cfg = ICLConfig(n=s.n, layers=layers, covariates=s.covariates, batch=batch)
    dev = torch.device(device)
    dt = torch.float32
    params = init_params(cfg, dtype=dt, device=dev)(torch.Generator(device=dev).manual_seed(seed))
    loss_fn = loss_for(attention)
    g = torch.Generator(device=dev).manual_seed(seed + 50_000)
    grad_fn = torch.func.grad(loss_fn)

    def flat_grad(b):
        gr = grad_fn(params, b)
        return torch.cat([gr[k].reshape(-1) for k in params])

    chunk = 10_000
    parts = [flat_grad(sample_prompts(cfg, g, batch=chunk, dtype=dt, device=dev))
             for _ in range(max(1, full // chunk))]
    g_full = torch.stack(parts).mean(0)
    norms = [float((flat_grad(sample_prompts(cfg, g, dtype=dt, device=dev)) - g_full).norm())
             for _ in range(samples)]
    import numpy as np  # noqa: PLC0415

    return np.array(norms)


# ---------------------------------------------------------------------- fixed-sample fits
@lru_cache(maxsize=16)
def fit_gd_family(layers: int, seed: int, sigma: tuple[tuple[float, ...], ...] | None = None,
                  w_law: str = "identity", prompts: int = 20_000, iterations: int = 300,
                  device: str = "cpu") -> dict:
    """Minimise the B = 0 family's loss on ``prompts`` fixed prompts with L-BFGS (float64).

    The authors fit this family with L-BFGS too (``rotation demonstration-LBFGS.ipynb``):
    for an ill-conditioned Sigma, first-order training at batch 1000 does not settle in a
    CPU budget (2000 Adam steps left the whitened distance at 0.04 and 0.20).  Start: the
    authors' init (std 0.05, seed ``seed``); strong-Wolfe line search.  Returns the fitted
    ``A`` [L, d, d], the final training loss and gradient norm, and the loss of the same A
    on 10^5 fresh prompts.
    """
    cfg = ICLConfig(layers=layers, sigma=sigma, w_law=w_law)
    dev = torch.device(device)
    gen = torch.Generator(device=dev).manual_seed(seed)
    a = init_params(cfg, with_b=False, device=dev)(gen)["A"].clone().requires_grad_(True)
    data = sample_prompts(cfg, torch.Generator(device=dev).manual_seed(seed + 30_000),
                          batch=prompts, device=dev)
    opt = torch.optim.LBFGS([a], lr=1.0, max_iter=iterations, tolerance_grad=1e-12,
                            tolerance_change=1e-15, history_size=50, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = prompt_loss({"A": a}, data)
        loss.backward()
        return loss

    opt.step(closure)
    loss = closure()
    fresh = sample_prompts(cfg, torch.Generator(device=dev).manual_seed(seed + 40_000),
                           batch=100_000, device=dev)
    test = float(squared_errors({"A": a.detach()}, *fresh).mean())
    return {"A": a.detach().cpu(), "loss": float(loss.detach()), "grad_norm": float(a.grad.norm()),
            "test_loss": test}
