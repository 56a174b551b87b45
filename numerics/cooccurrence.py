"""Full model of Yang et al. (NeurIPS 2024), Eq. (1)-(2), trained by float64 GD (Section 2).

Parameters of one member (a dict, so :func:`numerics.ensemble.train` can stack members)::

    W   [m1, m]   linear MLP (rows w_j)           WV, WK, WQ [m, d]   value, key, query
    a   [m1]      fixed +-1 output layer (detached in the loss: its gradient is 0, GD keeps it)

``F(X) = sum_l sum_j a_j w_j^T W_V X softmax(X^T W_K^T W_Q x_l / sqrt(m))`` (sum over query
positions, no pooling), loss ``mean log(1 + exp(-y F))``.  Tokens are one-hot ids: 0 = mu1,
1 = mu2, 2 = mu3 (common), 3.. random.

Choices where the paper leaves the setting open (Appendix A states neither the data layout
nor the initialisation variant; recorded in every run's config):

* Data (Definition 2.1, Assumption 2.3): exact proportions n/2, n/6, n/6, n/6 (n divisible by
  6); positions uniform; ``private=True`` gives every random slot its own token id (ids 3, 4,
  ... in random order; Assumption 2.3(ii)), ``private=False`` draws random tokens uniformly
  from [3, d) with repetition (Appendix A: d = 64 < 3 + 160 slots).
* The validation set uses *unseen* random ids (after all training ids) when ``private``.
* Initialisations: ``theory`` (sigma0 = c0/sqrt(L m), sigma1 = 1/sqrt(m1), Condition 1 with
  c0 small so that |F(0)| << 1: with c0 = 1 Lemma D.8's |F(0)| <= 0.01 needs the log factors
  Condition 1 hides, see the ``initial_output`` claim); ``kaiming_uniform`` (PyTorch
  nn.Linear default U(+-1/sqrt(fan_in)), our reading of Appendix A's "Kaiming");
  ``kaiming_normal``.
* Members of a run share the data set (``data_seed``) and differ by initialisation (member i
  uses ``seed + i``): the theory's constants (gamma*, R_inf) are per data set.
* Time: gradient-flow time t = sum of learning rates; tau = integral of S dt (the four-class
  system's time, :func:`theory.cooccurrence.class_system`).  With ``lr=None`` each member's
  rate is ``dtau / S0`` (equal tau-steps), and ``growth > 0`` makes the step grow
  geometrically after ``warm`` steps (the curvature falls like 1/tau in Phase 2), so tau ~ 1e4
  is reached in ~1e3 steps.

Every simulation of the row is a run function (:func:`numerics.cache.run_function`):
:func:`run` (the stacked theory-scaled and Appendix A runs) and :func:`run_closure` (the small
model of the canonical-closure check).  Their sizes by profile are the row's one table,
:data:`SIZES`, read by the claims and the figures alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import torch
from scipy.integrate import solve_ivp

from numerics.cache import run_function
from numerics.context import SizeTable
from numerics.ensemble import OptimizerConfig, Params, TrainConfig, member_generators, train

__all__ = [
    "APPENDIX_A",
    "SIZES",
    "THEORY",
    "THEORY_QUICK",
    "THEORY_SMOKE",
    "THEORY_THOROUGH",
    "ClosureConfig",
    "ClosureRun",
    "CoConfig",
    "CoRun",
    "Dataset",
    "InitialOutputs",
    "InitialOutputsConfig",
    "canonical",
    "canonical_beta",
    "canonical_state",
    "first_classified",
    "forward",
    "growing_schedule",
    "init_params",
    "integrate_canonical",
    "loss",
    "make_dataset",
    "member",
    "param_invariants",
    "random_slots",
    "run",
    "run_closure",
    "run_initial_outputs",
    "validation_set",
]

CLASS_SPECIAL = ((0, 1), (0,), (1,), ())
#: the canonical variables in the order of ``theory.cooccurrence.STATE_KEYS`` (kept here so
#: that the runs do not import the theory: a theory edit must not invalidate cached runs,
#: which do not depend on it; a test checks the two orders agree).
STATE_KEYS = ("beta", "S", "M", "A", "K_G", "Q_G")
PARAM_NAMES = ("W", "WV", "WK", "WQ")  # targets present in I1..I4 (mu3 is always there)


@dataclass(frozen=True, eq=False)
class Dataset:
    """``tokens`` int64 [n, L], ``labels`` float [n] (+-1), ``types`` int [n] (0..3 = I1..I4)."""

    tokens: np.ndarray
    labels: np.ndarray
    types: np.ndarray

    @property
    def n(self) -> int:
        return int(self.tokens.shape[0])


def random_slots(n: int, L: int) -> int:
    """Random-token slots of an exact-proportion training set: n[(L-3)/2 + (L-2)/3 + (L-1)/6]."""
    return (n // 2) * (L - 3) + 2 * (n // 6) * (L - 2) + (n // 6) * (L - 1)


def make_dataset(n: int, L: int, seed: int, *, private: bool = True, d: int | None = None,
                 first_id: int = 3) -> Dataset:
    """Definition 2.1 with Assumption 2.3(i) exact proportions; (ii) if ``private``.

    ``private``: random tokens get ids first_id, first_id + 1, ... (each used once, order
    shuffled); otherwise they are drawn uniformly from [3, d) (``d`` required).
    """
    if n < 6 or n % 6:
        raise ValueError(f"n must be a positive multiple of 6 (exact proportions), got {n}")
    if L < 3:
        raise ValueError(f"L must be >= 3 (mu1, mu2, mu3 fit in one sample), got {L}")
    rng = np.random.default_rng(seed)
    types = np.repeat(np.arange(4), (n // 2, n // 6, n // 6, n // 6))
    rng.shuffle(types)
    slots = random_slots(n, L)
    if private:
        pool = first_id + rng.permutation(slots)
    else:
        if d is None or d <= 3:
            raise ValueError(f"d must be > 3 for repeated random tokens, got {d}")
        pool = rng.integers(3, d, size=slots)
    tokens = np.empty((n, L), dtype=np.int64)
    k = 0
    for i, t in enumerate(types):
        perm = rng.permutation(L)
        special = (2, *CLASS_SPECIAL[t])
        row = np.empty(L, dtype=np.int64)
        for pos, tok in zip(perm[: len(special)], special, strict=True):
            row[pos] = tok
        rest = perm[len(special):]
        row[rest] = pool[k: k + rest.size]
        k += rest.size
        tokens[i] = row
    labels = np.where(types == 0, 1.0, -1.0)
    return Dataset(tokens, labels, types)


def validation_set(train_set: Dataset, n_val: int, seed: int, *, private: bool = True,
                   d: int | None = None) -> Dataset:
    """Fresh samples (Definition 2.1); with ``private`` their random ids are unseen in training."""
    first = int(train_set.tokens.max()) + 1
    return make_dataset(n_val, train_set.tokens.shape[1], seed, private=private, d=d,
                        first_id=max(first, 3))


# ---------------------------------------------------------------------- model, Eq. (1)-(2)
def forward(params: Mapping[str, torch.Tensor], tokens: torch.Tensor
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """F [n] and attention P [n, key h, query l] of one member (Eq. (1))."""
    m = params["WV"].shape[0]
    keys = params["WK"].T[tokens]  # [n, L, m]
    queries = params["WQ"].T[tokens]
    values = params["WV"].T[tokens]
    scores = torch.einsum("nhk,nlk->nhl", keys, queries) / math.sqrt(m)
    P = torch.softmax(scores, dim=1)
    u = params["W"].T @ params["a"].detach()  # W^T a  [m]
    G = values @ u  # [n, L]: G(x_h)
    F = torch.einsum("nh,nhl->n", G, P)
    return F, P


def loss(params: Mapping[str, torch.Tensor], tokens: torch.Tensor, labels: torch.Tensor
         ) -> torch.Tensor:
    """Eq. (2): mean logistic loss."""
    F, _ = forward(params, tokens)
    return torch.nn.functional.softplus(-labels * F).mean()


def canonical(params: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """beta = W_V^T W^T a, S = |W^T a|^2, M, A = W_K^T W_Q, K_G, Q_G: the canonical variables
    of :func:`theory.cooccurrence.canonical_velocity` (our derivation from Appendix B).

    Works on one member or on stacked members (leading axes).
    """
    WV, WK, WQ, W, a = (params[k] for k in ("WV", "WK", "WQ", "W", "a"))
    u = torch.einsum("...jk,...j->...k", W, a)
    tr = lambda x: x.transpose(-1, -2)
    return {
        "beta": _beta(WV, u),
        "S": (u * u).sum(-1),
        "M": tr(WV) @ WV,
        "A": tr(WK) @ WQ,
        "K_G": tr(WK) @ WK,
        "Q_G": tr(WQ) @ WQ,
    }


def _beta(WV: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    return torch.einsum("...kd,...k->...d", WV, u)


def canonical_beta(params: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """beta = W_V^T W^T a alone (G(mu) of every token), without :func:`canonical`'s d x d
    Gram matrices."""
    return _beta(params["WV"], torch.einsum("...jk,...j->...k", params["W"], params["a"]))


def canonical_state(params: Mapping[str, torch.Tensor]) -> dict:
    """:func:`canonical` of one member as numpy / float (the input of the theory API)."""
    out = {}
    for k, v in canonical(params).items():
        arr = v.detach().cpu().numpy()
        out[k] = float(arr) if arr.ndim == 0 else arr
    return out


def param_invariants(params: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """||W||^2 - ||W_V||^2, ||W_K||^2 - ||W_Q||^2, S - m1||W||^2, S/m1 - tr M: the balancedness
    invariants of adjacent linear factors (:func:`theory.cooccurrence.invariants`)."""
    m1 = params["W"].shape[-2]
    sq = lambda x: (x * x).sum((-1, -2))
    u = torch.einsum("...jk,...j->...k", params["W"], params["a"])
    S = (u * u).sum(-1)
    return torch.stack([
        sq(params["W"]) - sq(params["WV"]),
        sq(params["WK"]) - sq(params["WQ"]),
        S - m1 * sq(params["W"]),
        S / m1 - sq(params["WV"]),
    ], dim=-1)


# ---------------------------------------------------------------------- initialisation
Init = Literal["theory", "kaiming_uniform", "kaiming_normal", "gaussian"]


def init_params(d: int, m: int, m1: int, init: Init = "theory", *, sigma0: float = 0.01,
                sigma1: float = 0.1, zero_kq: bool = False, dtype=torch.float64,
                device="cpu") -> Callable[[torch.Generator], Params]:
    """Initialiser for :func:`numerics.ensemble.stack_members`.

    ``theory``/``gaussian``: W ~ N(0, sigma1^2), W_V, W_K, W_Q ~ N(0, sigma0^2) (Section 2);
    ``kaiming_uniform``: U(+-1/sqrt(fan_in)) (nn.Linear default); ``kaiming_normal``:
    N(0, 2/fan_in).  a ~ Uniform{+-1}.  ``zero_kq``: W_K = W_Q = 0 (invariant manifold).
    """

    def draw(g, shape, fan_in, std):
        if init == "kaiming_uniform":
            b = 1.0 / math.sqrt(fan_in)
            return (torch.rand(shape, generator=g, dtype=dtype) * 2 - 1) * b
        s = math.sqrt(2.0 / fan_in) if init == "kaiming_normal" else std
        return torch.randn(shape, generator=g, dtype=dtype) * s

    if init not in ("theory", "kaiming_uniform", "kaiming_normal", "gaussian"):
        raise ValueError(f"init must be theory, gaussian, kaiming_uniform or kaiming_normal, "
                         f"got {init!r}")

    def make(g: torch.Generator) -> Params:
        p = {
            "W": draw(g, (m1, m), m, sigma1),
            "WV": draw(g, (m, d), d, sigma0),
            "WK": draw(g, (m, d), d, sigma0),
            "WQ": draw(g, (m, d), d, sigma0),
            "a": torch.randint(0, 2, (m1,), generator=g).to(dtype) * 2 - 1,
        }
        if zero_kq:
            p["WK"] = torch.zeros_like(p["WK"])
            p["WQ"] = torch.zeros_like(p["WQ"])
        return {k: v.to(device) for k, v in p.items()}

    return make


def growing_schedule(warm: int, growth: float) -> Callable[[int], float]:
    """Step multiplier 1 for ``warm`` steps, then ``(1 + growth)^(step - warm)``."""
    if growth < 0 or warm < 0:
        raise ValueError(f"growth and warm must be >= 0, got {growth}, {warm}")

    def schedule(step: int) -> float:
        return (1.0 + growth) ** max(0, step - warm)

    return schedule


# ---------------------------------------------------------------------- runs
@dataclass(frozen=True)
class CoConfig:
    """One stacked run: data, model, initialisation, GD.  Defaults: theory-scaled (Condition 1:
    m >> m1, small sigma0, private random tokens)."""

    n: int = 60
    L: int = 5
    m: int = 1024
    m1: int = 64
    d: int | None = None  # None: 3 + training slots + validation slots (all private)
    private: bool = True
    init: Init = "theory"
    c0: float = 0.05  # sigma0 = c0 / sqrt(L m) for init="theory"
    sigma0: float | None = None  # overrides c0 (init="gaussian"/"theory")
    sigma1: float | None = None  # None: 1/sqrt(m1)
    zero_kq: bool = False
    n_val: int = 60
    data_seed: int = 0
    seed: int = 0
    members: int = 2
    lr: float | None = None  # fixed rate (Appendix A: 0.01); None: dtau / S0 per member
    dtau: float = 0.02
    steps: int = 1000
    growth: float = 0.0
    warm: int = 100
    record_every: int = 5
    optimizer: Literal["sgd", "adam"] = "sgd"

    def __post_init__(self) -> None:
        for name in ("n", "L", "m", "m1", "members", "n_val", "record_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.n % 6 or self.n_val % 6:
            raise ValueError(f"n and n_val must be multiples of 6, got {self.n}, {self.n_val}")
        if not self.private and self.d is None:
            raise ValueError("d is required when private=False (repeated random tokens)")

    @property
    def vocabulary(self) -> int:
        if self.d is not None:
            return self.d
        return 3 + random_slots(self.n, self.L) + random_slots(self.n_val, self.L)

    @property
    def s0(self) -> float:
        return self.sigma0 if self.sigma0 is not None else self.c0 / math.sqrt(self.L * self.m)

    @property
    def s1(self) -> float:
        return self.sigma1 if self.sigma1 is not None else 1.0 / math.sqrt(self.m1)


#: the theory-scaled configuration at the paper's scaling (our choice: the paper runs no
#: experiment under Condition 1): m = 4096, m1 = 64, small sigma0, private tokens, with the
#: growing step to tau ~ 2e4; one member (slow on CPU).
THEORY = CoConfig(m=4096, m1=64, members=1, steps=700, growth=0.015, warm=50, record_every=5)
#: Appendix A (Fig. 1): n=60, L=5, d=64, m=128, m1=256, lr 0.01, 30000 steps, "Kaiming".
APPENDIX_A = CoConfig(n=60, L=5, m=128, m1=256, d=64, private=False, init="kaiming_uniform",
                      lr=0.01, steps=30000, record_every=100, members=1)


#: the theory-scaled runs of ``tdcheck verify`` (quick) and of the test suite (smoke size):
#: m >> m1 (S drifts by ~ m1 |beta|^2 / S^2), tau = int S dt up to ~2e4 (quick) / ~2e3 (smoke).
THEORY_QUICK = CoConfig(m=512, m1=8, members=2, steps=700, growth=0.015, warm=50,
                        record_every=5, n_val=24)
THEORY_SMOKE = CoConfig(m=128, m1=4, members=2, steps=300, growth=0.03, warm=30,
                        record_every=3, n_val=24)
#: the theory-scaled run of profile "thorough": the paper runs no experiment under Condition 1
#: (its only one, Appendix A, violates it: m < m1, and d = 64 is too small for distinct random
#: tokens), so this is the largest configuration of our own theory-scaled runs: n = 60, L = 5,
#: m = 4096, m1 = 64, sigma1 = 1/sqrt(m1), sigma0 = 0.05/sqrt(L m), private tokens, to tau ~
#: 1e5 (805 steps: 50 of dtau 0.02, then +1.5 % per step), n_val = 60 fresh samples.  Two
#: initialisations, as in quick: the claims check every trajectory (worst member); the peak
#: memory of a member in float64 is large enough that 1000 members would not fit one GPU.
THEORY_THOROUGH = replace(THEORY, members=2, steps=805)

#: The row's one size table (read by the claims in ``verify.cooccurrence`` and the figures in
#: ``figures.cooccurrence`` at ``ctx.profile``; fallback ci -> quick, thorough -> ci):
#:
#: - ``theory_scaled``: the theory-scaled run of most claims (and of two figures);
#: - ``appendix_a``: the published configuration for ``appendix_a`` (thorough: the paper's own
#:   30000 full-batch steps; "Kaiming" read as nn.Linear's default).  One member: Fig. 1 is one
#:   run (no error bars) and the check reads member 0;
#: - ``hump_appendix_a`` / ``hump_theory``: ``appendix_a_hump`` and its positive control, a
#:   fraction over independent runs, each its own data set and one initialisation
#:   (``members=1``): ``runs`` per reading (None at quick: the number the claim's power design
#:   asks, ``verify.cooccurrence.HUMP_POWER``; 4 at smoke size, 7 for the positive control
#:   there; 1000 under thorough).  The check
#:   reads the losses only up to first classification, which every initialisation reaches
#:   well inside the 60 steps of Appendix A (the check raises if one does not); the positive
#:   control's small-init regime (m = 64, m1 = 4, tau to 15) has no paper configuration;
#: - ``kq_drift``: a small model whose attention moves (sigma0 = sigma1 = 0.5, as the closure),
#:   where the GD drift of tr K_G - tr Q_G stands far above float64 rounding (``invariants``);
#: - ``zero_kq``: the W_K = W_Q = 0 run of ``invariants`` (thorough: the theory-scaled run on
#:   that invariant manifold);
#: - ``closure``: time ``t_end`` and step ``eta`` of ``canonical_closure`` (thorough: t = 3 at
#:   eta = 1e-3, 2 x 3000 GD steps);
#: - ``fig1_appendix_a``: Fig. 1 in the Appendix A configuration.  At test and thorough it is
#:   the check's own run; at quick (and ci) it draws the paper's 30000 steps recorded every 10,
#:   more than the check runs (its caption says so);
#: - ``fig_closure_steps``: GD steps to t = 1 of the canonical-closure panel (its own run).
SIZES = SizeTable({
    "theory_scaled": {"test": THEORY_SMOKE, "quick": THEORY_QUICK, "thorough": THEORY_THOROUGH},
    "appendix_a": {
        "test": replace(APPENDIX_A, record_every=1, steps=200),
        "quick": replace(APPENDIX_A, record_every=1, steps=1000),
        "thorough": replace(APPENDIX_A, record_every=1, steps=30000),
    },
    "hump_appendix_a": {
        "test": {"config": replace(APPENDIX_A, steps=60, record_every=1, members=1),
                 "runs": 4},
        "quick": {"config": replace(APPENDIX_A, steps=60, record_every=1, members=1),
                  "runs": None},
        "thorough": {"config": replace(APPENDIX_A, steps=60, record_every=1, members=1),
                     "runs": 1000},
    },
    "hump_theory": {
        # 7: the fewest runs whose Wilson 99 % interval can fall below 1/2
        # (verify.cooccurrence.HUMP_POSITIVE_SMOKE_RUNS; a positive control must pass)
        "test": {"config": replace(THEORY_SMOKE, m=64, steps=250, growth=0.0, dtau=0.06,
                                   record_every=2, members=1), "runs": 7},
        "quick": {"config": replace(THEORY_SMOKE, m=64, steps=250, growth=0.0, dtau=0.06,
                                    record_every=2, members=1), "runs": None},
        "thorough": {"config": replace(THEORY_SMOKE, m=64, steps=250, growth=0.0, dtau=0.06,
                                       record_every=2, members=1), "runs": 1000},
    },
    "kq_drift": {
        "test": CoConfig(n=12, L=4, m=16, m1=8, init="gaussian", sigma0=0.5, sigma1=0.5,
                         members=1, lr=2e-3, steps=100, record_every=50, n_val=6),
        "quick": CoConfig(n=12, L=4, m=16, m1=8, init="gaussian", sigma0=0.5, sigma1=0.5,
                          members=2, lr=2e-3, steps=500, record_every=100, n_val=6),
    },
    "zero_kq": {
        "test": CoConfig(m=32, m1=4, members=1, steps=40, record_every=10, zero_kq=True,
                         n_val=6),
        "quick": CoConfig(m=128, m1=8, members=1, steps=200, record_every=20, zero_kq=True,
                          n_val=6),
        "thorough": replace(THEORY_THOROUGH, members=1, zero_kq=True, n_val=6,
                            record_every=20),
    },
    # the four_class_tracks claim (verify.cooccurrence): many samples, so that the private
    # random tokens' share of the class margins (~ L tau / n) stays small, equal tau-steps to
    # tau = 7 (Phase 1 and the I2/I3 hump), every other step recorded; its half-step twin is
    # verify.cooccurrence._half_step of the same entry
    "four_class": {
        "test": CoConfig(n=120, L=5, m=64, m1=4, members=2, steps=280, dtau=0.025, growth=0.0,
                         warm=0, record_every=2, n_val=6),
        "quick": CoConfig(n=600, L=5, m=128, m1=8, members=2, steps=280, dtau=0.025,
                          growth=0.0, warm=0, record_every=2, n_val=6),
    },
    "closure": {
        "test": {"t_end": 0.3, "eta": 4e-3},
        "quick": {"t_end": 1.0, "eta": 2e-3},
        "thorough": {"t_end": 3.0, "eta": 1e-3},
    },
    "fig1_appendix_a": {
        "test": replace(APPENDIX_A, record_every=1, steps=200),
        "quick": replace(APPENDIX_A, record_every=10),
        "thorough": replace(APPENDIX_A, record_every=1, steps=30000),
    },
    "fig_closure_steps": {"test": 300, "quick": 1000},
})


@dataclass(frozen=True, eq=False)
class CoRun:
    """Recorded run.  Arrays [K, T, ...] (K members, T records); numpy float64."""

    config: CoConfig
    data: Dataset
    val: Dataset
    steps: np.ndarray
    time: np.ndarray
    tau: np.ndarray  # integral of S dt
    tau_eff: np.ndarray  # integral of (S + m1 beta^T M beta/|beta|^2) dt: the rate along beta
    S0: np.ndarray
    loss: np.ndarray
    type_loss: np.ndarray  # [K, T, 4]
    type_g: np.ndarray  # [K, T, 4]: sum over I_k of g_i, divided by n
    val_loss: np.ndarray
    margin: np.ndarray  # [K, T, n]: y_i F_i
    beta: np.ndarray  # [K, T, d]
    S: np.ndarray
    M3: np.ndarray  # [K, T, 3, 3]
    A3: np.ndarray  # [K, T, 3, 3], A[key, query] of mu1..mu3
    K3: np.ndarray  # [K, T, 3, 3], K_G = W_K^T W_K on mu1..mu3
    Q3: np.ndarray  # [K, T, 3, 3], Q_G = W_Q^T W_Q on mu1..mu3
    K_cols: np.ndarray  # [K, T, d, 3], K_G[:, mu1..mu3] (K_G symmetric: also its rows)
    Q_cols: np.ndarray  # [K, T, d, 3], Q_G[:, mu1..mu3]
    max_dp: np.ndarray  # [K, T]: max |P - P(0)| over samples and pairs
    invariants: np.ndarray  # [K, T, 4] (param_invariants)
    A_start: np.ndarray  # [K, d, d]
    A_end: np.ndarray
    grad_sq: Mapping[str, np.ndarray]  # [K, steps]: |dL/dW|^2 ... per step (before the update)
    lr_steps: np.ndarray  # [K, steps]: the rate of every step (lr x schedule)
    initial: Params = field(repr=False)
    final: Params = field(repr=False)


def _cumtrapz(rate: np.ndarray, time: np.ndarray) -> np.ndarray:
    """integral_0^t rate dt' on the record grid (trapezoid), [K, T]."""
    steps = 0.5 * (rate[:, 1:] + rate[:, :-1]) * np.diff(time, axis=1)
    return np.concatenate([np.zeros((time.shape[0], 1)), np.cumsum(steps, axis=1)], axis=1)


def first_classified(run: CoRun, k: int) -> int | None:
    """First record at which member ``k`` classifies every training sample (min_i y_i F_i > 0,
    the paper's defining property of T1); ``None`` if it never does."""
    ok = np.nonzero(run.margin[k].min(axis=1) > 0)[0]
    return int(ok[0]) if ok.size else None


def _smoke_run() -> CoConfig:
    return CoConfig(n=12, L=4, m=16, m1=4, members=1, steps=20, record_every=5, n_val=6)


def _smoke_closure() -> ClosureConfig:
    return ClosureConfig(lrs=(4e-3, 2e-3), steps=20, record_every=10)


# the full model (Eq. (1)-(2)): its dynamics are torch autograd on its own logistic loss; the
# data, sizes and initialisation are this module's own (it imports no theory function)
@run_function("cooccurrence.run", maxsize=8, full_model=True, smoke=_smoke_run)
def run(config: CoConfig, *, device: str = "cpu") -> CoRun:
    """Train ``config.members`` stacked members with full-batch GD (or Adam) in float64.

    Call as ``run(config, cache=ctx.cache, device=ctx.device)``: a bounded in-process LRU
    over the disk cache, device in the key."""
    d = config.vocabulary
    data = make_dataset(config.n, config.L, config.data_seed, private=config.private,
                        d=None if config.private else d)
    val = validation_set(data, config.n_val, config.data_seed + 10_000, private=config.private,
                         d=None if config.private else d)
    if max(data.tokens.max(), val.tokens.max()) >= d:
        raise ValueError(f"d = {d} is too small for the data (needs "
                         f"{int(max(data.tokens.max(), val.tokens.max())) + 1})")
    dt = torch.float64
    tok = torch.as_tensor(data.tokens, device=device)
    lab = torch.as_tensor(data.labels, dtype=dt, device=device)
    vtok = torch.as_tensor(val.tokens, device=device)
    vlab = torch.as_tensor(val.labels, dtype=dt, device=device)
    onehot = torch.nn.functional.one_hot(torch.as_tensor(data.types, device=device), 4).to(dt)

    make = init_params(d, config.m, config.m1, config.init, sigma0=config.s0,
                       sigma1=config.s1, zero_kq=config.zero_kq, dtype=dt, device=device)
    gens = member_generators(config.members, config.seed)
    inits = [make(g) for g in gens]
    params = {k: torch.stack([p[k] for p in inits]) for k in inits[0]}
    with torch.no_grad():
        P0 = torch.stack([forward(p, tok)[1] for p in inits])  # [K, n, L, L]
    params["P0"] = P0  # constant (never enters the loss: zero gradient)
    S0 = canonical(params)["S"]
    if config.lr is None:
        lr = tuple(float(config.dtau / s) for s in S0)
    else:
        lr = float(config.lr)

    def loss_fn(p):
        return loss(p, tok, lab)

    def obs_margin(p):
        return lab * forward(p, tok)[0]

    def obs_val(p):
        F, _ = forward(p, vtok)
        return torch.nn.functional.softplus(-vlab * F).mean()

    def obs_dp(p):
        return (forward(p, tok)[1] - p["P0"]).abs().amax()

    def obs_can(p):
        u = p["W"].T @ p["a"]
        v3, k3, q3 = p["WV"][:, :3], p["WK"][:, :3], p["WQ"][:, :3]
        beta = p["WV"].T @ u
        mbb = ((p["WV"] @ beta) ** 2).sum() / (beta * beta).sum()  # beta^T M beta / |beta|^2
        return torch.cat([beta, (u * u).sum().reshape(1), (v3.T @ v3).reshape(-1),
                          (k3.T @ q3).reshape(-1), param_invariants(p), mbb.reshape(1),
                          (k3.T @ k3).reshape(-1), (q3.T @ q3).reshape(-1),
                          (p["WK"].T @ k3).reshape(-1), (p["WQ"].T @ q3).reshape(-1)])

    tcfg = TrainConfig(
        steps=config.steps, lr=lr,
        optimizer=OptimizerConfig(name=config.optimizer),
        record_every=config.record_every,
        schedule=growing_schedule(config.warm, config.growth) if config.growth > 0 else None,
    )
    traj = train(loss_fn, params, tcfg,
                 observables={"margin": obs_margin, "val": obs_val, "dp": obs_dp,
                              "can": obs_can})
    margin = traj.observables["margin"].cpu().numpy()
    ell = np.logaddexp(0.0, -margin)
    g = 1.0 / (1.0 + np.exp(np.clip(margin, -700, 700)))
    oh = onehot.cpu().numpy()
    counts = oh.sum(0)
    type_loss = np.einsum("ktn,nc->ktc", ell, oh) / counts
    type_g = np.einsum("ktn,nc->ktc", g, oh) / config.n
    can = traj.observables["can"].cpu().numpy()
    beta = can[..., :d]
    S = can[..., d]
    M3 = can[..., d + 1: d + 10].reshape(*can.shape[:2], 3, 3)
    A3 = can[..., d + 10: d + 19].reshape(*can.shape[:2], 3, 3)
    inv = can[..., d + 19: d + 23]
    s_eff = S + config.m1 * can[..., d + 23]
    K3 = can[..., d + 24: d + 33].reshape(*can.shape[:2], 3, 3)
    Q3 = can[..., d + 33: d + 42].reshape(*can.shape[:2], 3, 3)
    K_cols = can[..., d + 42: 4 * d + 42].reshape(*can.shape[:2], d, 3)
    Q_cols = can[..., 4 * d + 42: 7 * d + 42].reshape(*can.shape[:2], d, 3)
    time = traj.time.cpu().numpy()
    tau = _cumtrapz(S, time)
    tau_eff = _cumtrapz(s_eff, time)
    A0 = canonical(params)["A"].cpu().numpy()
    final = {k: v for k, v in traj.params.items() if k != "P0"}
    for name in PARAM_NAMES:  # a and P0 are constants (zero gradient)
        if not torch.isfinite(final[name]).all():
            raise FloatingPointError(f"non-finite {name} after training")
    sched = np.array([tcfg.schedule(k) if tcfg.schedule else 1.0 for k in range(config.steps)])
    rates = np.asarray(lr if isinstance(lr, tuple) else (lr,) * config.members)
    return CoRun(
        config=config, data=data, val=val, steps=traj.steps.cpu().numpy(), time=time, tau=tau,
        tau_eff=tau_eff, S0=S0.cpu().numpy(), loss=traj.loss.cpu().numpy(), type_loss=type_loss, type_g=type_g,
        val_loss=traj.observables["val"].cpu().numpy(), margin=margin, beta=beta, S=S, M3=M3,
        A3=A3, K3=K3, Q3=Q3, K_cols=K_cols, Q_cols=Q_cols, max_dp=traj.observables["dp"].cpu().numpy(), invariants=inv, A_start=A0,
        A_end=canonical(final)["A"].cpu().numpy(), final=final,
        initial={k: v.detach().clone() for k, v in params.items() if k != "P0"},
        grad_sq={k: v.cpu().numpy() for k, v in traj.grad_sq.items() if k in PARAM_NAMES},
        lr_steps=rates[:, None] * sched[None, :],
    )


# ---------------------------------------------------------------------- the closure run
@dataclass(frozen=True)
class ClosureConfig:
    """Full-batch GD on a small model where attention really moves (sigma0 = sigma1 = sigma,
    Gaussian initialisation), for the exact canonical closure.

    Every member starts from the same initialisation (seed ``seed``) and steps at its own rate
    ``lrs[k]``; the data are ``make_dataset(n, L, seed)`` and the vocabulary has ``unseen``
    ids never seen in training beyond the largest training id.
    """

    lrs: tuple[float, ...]
    steps: int
    record_every: int
    n: int = 12
    L: int = 4
    m: int = 16
    m1: int = 8
    sigma: float = 0.5
    unseen: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.lrs or any(not lr > 0 for lr in self.lrs):
            raise ValueError(f"lrs must be positive rates, got {self.lrs}")
        for name in ("steps", "record_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass(frozen=True, eq=False)
class ClosureRun:
    """``state`` [K, T, D]: the canonical variables of each member on the record grid,
    flattened in the order of ``theory.cooccurrence.STATE_KEYS``; ``time`` [K, T]."""

    config: ClosureConfig
    data: Dataset
    d: int
    initial_state: dict  # canonical_state of the common initialisation
    initial_flat: np.ndarray
    time: np.ndarray
    state: np.ndarray


def _flat_canonical(params: Mapping[str, torch.Tensor]) -> torch.Tensor:
    c = canonical(params)
    return torch.cat([c[k].reshape(-1) for k in STATE_KEYS])


# the full model at sizes where attention moves: torch autograd on its own loss, no theory
@run_function("cooccurrence.closure", maxsize=8, full_model=True, smoke=_smoke_closure)
def run_closure(config: ClosureConfig, *, device: str = "cpu") -> ClosureRun:
    """Train the members of ``config`` (float64, full batch) and record their canonical state."""
    data = make_dataset(config.n, config.L, config.seed)
    d = int(data.tokens.max()) + 1 + config.unseen
    make = init_params(d, config.m, config.m1, "gaussian", sigma0=config.sigma,
                       sigma1=config.sigma, device=device)
    p0 = make(torch.Generator().manual_seed(config.seed))
    stacked = {k: torch.stack([v] * len(config.lrs)) for k, v in p0.items()}
    tok = torch.as_tensor(data.tokens, device=device)
    lab = torch.as_tensor(data.labels, device=device)
    traj = train(lambda p: loss(p, tok, lab), stacked,
                 TrainConfig(steps=config.steps, lr=tuple(config.lrs),
                             record_every=config.record_every),
                 observables={"can": _flat_canonical})
    return ClosureRun(config=config, data=data, d=d, initial_state=canonical_state(p0),
                      initial_flat=_flat_canonical(p0).cpu().numpy(),
                      time=traj.time.cpu().numpy(), state=traj.observables["can"].cpu().numpy())


# ---------------------------------------------------------------------- outputs at init
@dataclass(frozen=True)
class InitialOutputsConfig:
    """Independent initialisations of Section 2's model on one training set, not trained.

    The data are ``make_dataset(n, L, data_seed)``; initialisation ``j`` is
    ``init_params(..., "theory", sigma0, sigma1)`` drawn from ``seeds[j]``."""

    n: int
    L: int
    m: int
    m1: int
    sigma0: float
    sigma1: float
    data_seed: int
    seeds: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("initial outputs need at least one seed")
        if min(self.n, self.L, self.m, self.m1) < 1:
            raise ValueError(f"n, L, m, m1 must be >= 1, got {self.n, self.L, self.m, self.m1}")


@dataclass(frozen=True, eq=False)
class InitialOutputs:
    """Per initialisation: ``max_abs_F`` = max_i |F(0)(X_i)| over the training set, and
    ``G_sq_mean`` = the mean of G(mu)^2 = beta(mu)^2 over the vocabulary."""

    config: InitialOutputsConfig
    max_abs_F: np.ndarray
    G_sq_mean: np.ndarray


def _initial_outputs_cost(config: InitialOutputsConfig, **_: object) -> tuple[float, float]:
    """(draws, FLOP) of :func:`run_initial_outputs`: per draw the scores (2 n L^2 m), the
    value read-out (2 n L m), u = W^T a (2 m1 m) and beta (2 m d, d <= n L + 3 ids)."""
    c = config
    d = c.n * c.L + 3
    per = 2 * c.n * c.L * c.L * c.m + 2 * c.n * c.L * c.m + 2 * c.m1 * c.m + 2 * c.m * d
    return float(len(c.seeds)), float(per * len(c.seeds))


# one forward pass per initialisation and no training: an evaluation of the model at t = 0
# (Lemma D.8's object), so not a full-model run; the parts that read it are symbolic
@run_function("cooccurrence.initial_outputs", maxsize=8, full_model=False,
              cost=_initial_outputs_cost)
def run_initial_outputs(config: InitialOutputsConfig, *, device: str = "cpu"
                        ) -> InitialOutputs:
    """|F(0)| and G(mu)^2 of ``len(config.seeds)`` initialisations (float64)."""
    c = config
    data = make_dataset(c.n, c.L, c.data_seed)
    d = int(data.tokens.max()) + 1
    make = init_params(d, c.m, c.m1, "theory", sigma0=c.sigma0, sigma1=c.sigma1,
                       device=device)
    tok = torch.as_tensor(data.tokens, device=device)
    worst, g_sq = [], []
    for seed in c.seeds:
        p = make(torch.Generator().manual_seed(int(seed)))
        with torch.no_grad():
            F, _ = forward(p, tok)
            G = canonical_beta(p)
        worst.append(float(F.abs().max()))
        g_sq.append(float((G * G).mean()))
    return InitialOutputs(config=c, max_abs_F=np.array(worst), G_sq_mean=np.array(g_sq))


# ---------------------------------------------------------------------- canonical ODE
def integrate_canonical(state0: Mapping, tokens, labels, m: float, m1: float, t_eval,
                        velocity: Callable, rtol: float = 1e-10,
                        atol: float = 1e-12) -> list[dict]:
    """Integrate ``velocity`` (the exact canonical system is
    :func:`theory.cooccurrence.canonical_velocity`, which the caller passes) with solve_ivp
    (DOP853).

    Returns the state at each time in ``t_eval`` (increasing, starting > 0 or at 0).
    """
    beta0 = np.asarray(state0["beta"], dtype=float)
    d = beta0.size
    shapes = [("beta", (d,)), ("S", ()), ("M", (d, d)), ("A", (d, d)), ("K_G", (d, d)),
              ("Q_G", (d, d))]

    def unpack(y):
        out, k = {}, 0
        for name, shp in shapes:
            size = int(np.prod(shp)) if shp else 1
            out[name] = y[k: k + size].reshape(shp) if shp else float(y[k])
            k += size
        return out

    def pack(s):
        return np.concatenate([np.asarray(s[name], dtype=float).reshape(-1) for name, _ in shapes])

    def f(_t, y):
        return pack(velocity(unpack(y), tokens, labels, m, m1))

    t_eval = np.asarray(t_eval, dtype=float)
    sol = solve_ivp(f, (0.0, float(t_eval[-1])), pack(state0), method="DOP853", t_eval=t_eval,
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"canonical ODE failed: {sol.message}")
    return [unpack(sol.y[:, i]) for i in range(sol.y.shape[1])]


def member(params: Mapping[str, torch.Tensor], k: int) -> Params:
    """Member k of stacked parameters."""
    return {name: v[k] for name, v in params.items()}
