"""Scan and snap (Tian et al., NeurIPS 2023): data, the Y/Z model, its flows, and statistics.

* **Data** (:func:`make_facts`): the authors' code, ``Dataset2`` in ``decoder_only.py``.  Token
  ids: ``num_common`` global common tokens (CTs) first, then ``num_common_per_last`` CTs per
  query, then ``num_unique_per_next`` distinct tokens (DTs) per class, then the query ids
  ``last_token_offset + m``, then the next-token ids.  Unnormalised probabilities 1 (CTs) and
  ``linspace(0.1, 1, n)`` (DTs), normalised per class; classes are drawn uniformly.
* **Model** (:func:`member_loss`): the authors' ``Model2`` in the paper's canonical parameters
  (Section 3.1): attention logits ``Z`` (``K2.weight``), decoder ``Y`` (``K1.weight^T``), the query
  masked out of attention, ``LN(X^T b)`` then ``logits = Y^T LN(.)``, batch-mean cross-entropy.
  The model sees X only through the count vector N (``X^T b = N e^{z_m} / N.e^{z_m}``), so a
  sequence is stored as its counts: exact, and cheap.  ``residual=True`` is ``Model2``'s
  ``residual`` flag (the query one-hot added before normalising).
* **Per-parameter learning rates** (eta_Y on Y, eta_Z on Z, per member) with the shared
  trainer's single per-member rate: the trainer's rate is eta_Z and Y is stored as
  ``Yhat = Y / a`` with ``a = sqrt(eta_Y/eta_Z)``; the model multiplies by ``a`` (carried in the
  batch).  Then ``grad_Yhat = a grad_Y`` and every SGD / heavy-ball update of Yhat moves Y by
  ``a^2 eta_Z (.) = eta_Y (.)``: exactly the two-optimiser update of the authors' code (momentum
  is linear).  Not valid for Adam (scale-invariant), which this row does not use.
* **Population flow** (:func:`run_population_flow`): the exact T -> infinity gradient flow of the
  class-averaged loss, ``Y' = eta_Y sum_n (1/K) f_n (e_n - alpha_n)^T`` and
  ``z_m' = eta_Z sum_n (1/K) diag(f_n) P_perp Y (e_n - alpha_n)`` (Lemma 1 and Eqn 94 with
  the class probability P(n) = 1/K written out, which Eqn 10 leaves out: our convention),
  integrated with ``solve_ivp`` on torch float64 gradients.  Time is per-sample SGD time.
* **Reduced ODE** (:func:`run_reduced`): :func:`theory.scan_snap.reduced_system` integrated.

Choices: member replicates share the seed across learning rates (common random numbers: the
same initialisation and the same batches at every (eta_Y, eta_Z)), which makes rate
comparisons paired; the Fig. 6 entropy is our reconstruction of the paper's metric (the
authors' analysis script is not public): the Shannon entropy, natural log, of ``c_n``
restricted to class n's DTs and renormalised, from the true P, averaged over n.

Sizes: :data:`SIZES` is the row's one size table, read by the claims (``verify.scan_snap``)
and the figures (``figures.scan_snap``) alike; :func:`sgd_run` runs an SGD ensemble at a
profile (device and member chunk from the table).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import sympy as sp
import torch
import torch.nn.functional as F
from scipy.integrate import solve_ivp

from numerics.cache import run_function
from numerics.context import Context, SizeTable
from numerics.device import select_device
from numerics.ensemble import OptimizerConfig, TrainConfig, train
from numerics.ode import OdeError, integrate
from numerics.threads import threads
from theory import scan_snap as theory
from theory.flow import InadmissibleTheory, ReducedSystem

__all__ = [
    "PUBLISHED_FIG6",
    "SIZES",
    "THOROUGH_CHUNK",
    "THOROUGH_SEEDS",
    "DataConfig",
    "Facts",
    "FlowConfig",
    "FlowResult",
    "PopulationGDConfig",
    "PopulationGDResult",
    "ReducedConfig",
    "ReducedResult",
    "SGDConfig",
    "SGDResult",
    "SnapConfig",
    "attention",
    "dt_entropy",
    "dt_shares",
    "fig4_config",
    "fig6_column_config",
    "fig6_config",
    "init_member",
    "invariant_drift",
    "make_facts",
    "member_loss",
    "one_thread",
    "peak_times",
    "population_loss",
    "residual_config",
    "run_population_flow",
    "run_population_gd",
    "run_reduced",
    "run_sgd",
    "run_snap_system",
    "sample_batch",
    "sgd_device",
    "sgd_run",
    "sized",
]


# ---------------------------------------------------------------------- sizes
#: Seeds per statistic at profile ``thorough``: every SGD claim of this row is a statistic
#: over seeds (a mean with a t interval, a fraction of runs, a statement about every run),
#: so each gets 1000 seeds of the authors' command; a Fig. 6 panel then has 16 rate cells x
#: 1000 = 16 000 members.
THOROUGH_SEEDS = 1000

#: ``member_chunk`` at ``thorough`` by vocabulary size M (None: every member at once), sized
#: from CPU measurements of the peak resident set (float64, Fig. 6 layout): memory held per
#: member through the run (params, optimiser state, grads, batch, records) plus the vmapped
#: gradient's transient per member of a chunk, in MiB:
#:   M = 33 (panel 1):   held 0.17, transient 0.65;  16 000 members at once ~ 13 GiB -> None
#:   M = 79 (panel 3):   held 0.78, transient 1.50;  16 000 at once ~ 36 GiB           -> None
#:   M = 125 (panel 5):  held 1.71, transient 2.44;  16 000 at once ~ 65 GiB (transient
#:                       38 GiB) -> 8192: 8192 x 2.44 MiB = 19.5 GiB + 16 000 x 1.71 MiB = 26.7
#:   M = 240 (panel 10): held 5.85, transient 5.09;  16 000 at once ~ 171 GiB (> 139) -> 4096:
#:                       4096 x 5.09 MiB = 20.4 GiB + 16 000 x 5.85 MiB = 91.4 GiB = ~112 GiB
#:                       (8192 would make a 40.7 GiB chunk but ~132 GiB in all: too close)
#: The Fig. 4 / residual runs (2000 members, M = 34 / 33; ~0.9 MiB per member all-in) need
#: no chunk: ~1.8 GiB.  Estimates for one GPU from CPU measurements (CUDA allocator
#: overhead not included).
THOROUGH_CHUNK: dict[int, int | None] = {33: None, 34: None, 79: None, 125: 8192, 240: 4096}

#: The row's one size table (fallback: ci -> quick, thorough -> ci), read by claims and
#: figures.  ``thorough`` runs every SGD claim at the authors' logged configuration
#: (``figure_4.log``, ``figure_6.log``) with :data:`THOROUGH_SEEDS` seeds, on ``ctx.device``
#: (the GPU) with :data:`THOROUGH_CHUNK`; the other profiles run the SGD ensembles on the CPU.
SIZES = SizeTable({
    # Lemma 7: steps of the discrete recursion h*(s) compared with h(s); also the steps of
    # the model's population gradient descent that decoder_full_model reads h*(s) from
    "decoder_steps": {"test": 200, "quick": 2000},
    # runs of the Fig. 4 command (figure_4.log: zero init, lr_z 1, ratios 1 and 10, momentum
    # 0.9, batch 128, L 128, 100 iterations; the log is one run, seed 2)
    "fig4_seeds": {"test": 3, "quick": 10, "thorough": THOROUGH_SEEDS},
    # runs of the Fig. 4 command for the SGD scan order (seeds 1-10 are the runs of the other
    # Fig. 4 claims: seed s draws the same batches whatever the number of seeds)
    # winner_sgd's Clopper-Pearson bound needs >= 51 runs to decide with no miss, so the
    # test profile has 26 seeds x 2 ratios = 52 runs)
    "order_seeds": {"test": 26, "quick": 40, "thorough": THOROUGH_SEEDS},
    # the runs of scan_order_sgd: order_seeds' below thorough (one run with the other Fig. 4
    # claims); at thorough the seeds its interior-peak part's power calculation asks for
    # (verify.scan_snap.scan_order_sgd_seeds: 16 280 for ratio 10's rare interior peaks;
    # 32 560 members at M = 34, ~0.9 MiB each all-in, ~29 GiB: no member chunk)
    "scan_order_seeds": {"test": 26, "quick": 40, "thorough": 16_280},
    # the panel-1 Fig. 6 sweep of the invariant claim (8 at smoke size: the positive
    # controls need that many to be decisive); at quick it was the pilot of the
    # ratio-monotonicity power calculation (verify.scan_snap.RATIO_PILOT_SD)
    "fig6_seeds": {"test": 8, "quick": 20, "thorough": THOROUGH_SEEDS},
    # the ratio-monotonicity claim: seeds and eta_Y/eta_Z columns of the panel-1 sweep it
    # runs (ratios 2 and 10; at thorough the whole sweep, one run with the other claims').
    # quick: from the power calculation beside the claim (verify.scan_snap._power_seeds)
    "monotone_seeds": {"test": 8, "quick": 163, "thorough": THOROUGH_SEEDS},
    "monotone_ratios": {"test": (2.0, 10.0), "quick": (2.0, 10.0),
                        "thorough": (1.0, 2.0, 5.0, 10.0)},
    # the Fig. 6 table (the published table used 10 seeds)
    "table_seeds": {"test": 8, "quick": 20, "ci": 40, "thorough": THOROUGH_SEEDS},
    # Fig. 6 panels of the table: num_last = 1 below thorough (panels 3, 5, 10 need more
    # memory and time than a CPU profile has, and are left out rather than run
    # underpowered); all four panels of figure_6.log at thorough
    "fig6_panels": {"test": (1,), "quick": (1,), "thorough": (1, 3, 5, 10)},
    # the eta_Z-monotonicity claim: seeds and eta_Y/eta_Z columns of the panel-1 sweep it
    # runs (the ratio-10 column alone; at thorough the whole sweep, whose ratio-10 members
    # equal the column's, so no second run).  quick: from the power calculation beside the
    # claim (verify.scan_snap._power_seeds); 40 seeds before, the pilot of that calculation
    "column_seeds": {"test": 8, "quick": 100, "thorough": THOROUGH_SEEDS},
    "column_ratios": {"test": (10.0,), "quick": (10.0,), "thorough": (1.0, 2.0, 5.0, 10.0)},
    # SGD ensembles on ctx.device (True) or on the CPU, and member_chunk by vocabulary size
    "sgd_on_device": {"test": False, "quick": False, "thorough": True},
    "member_chunk": {"test": {}, "quick": {}, "thorough": THOROUGH_CHUNK},
    # figures only: points of the closed-form curves of Figs. 3 and 9, output times of the
    # figure's own reduced-ODE / population-flow runs, and the time of its small-step GD run
    "fig3_points": {"test": 141, "quick": 701},
    "fig9_points": {"test": 101, "quick": 401},
    "flow_points": {"test": 25, "quick": 50},
    "gd_time": {"test": 20.0, "quick": 100.0},
})


# ---------------------------------------------------------------------- data (the authors' Dataset2)
@dataclass(frozen=True)
class DataConfig:
    """``Dataset2`` arguments.  Defaults: the values of the authors' logged commands
    (``figure_4.log``, ``figure_6.log``), which override two of ``config/decoder_only.yaml``'s
    defaults: the yaml has ``num_common_per_last = 5`` (the logs pass 0) and
    ``model2.zero_init = true`` (``figure_6.log`` passes false; see :class:`SGDConfig`).

    ``dt_perm_seed`` (ours, not in ``Dataset2``): None keeps the authors' layout, where each
    class's DT masses ``linspace(unique_min, unique_max)`` increase with the token id; an
    integer assigns the masses to the class's DT ids in a random order (a numpy generator
    with that seed, one permutation per class), so that id order is not P order.  The model
    has no positional information, so this relabels tokens and leaves the dynamics' law
    unchanged; it makes a check that confused ids with P order fail."""

    num_last: int = 1
    num_next_per_last: int = 2
    num_common: int = 10
    num_common_per_last: int = 0
    num_unique_per_next: int = 10
    unique_min: float = 0.1
    unique_max: float = 1.0
    common_prob: float = 1.0
    dt_perm_seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("num_last", "num_next_per_last", "num_unique_per_next"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("num_common", "num_common_per_last"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 < self.unique_min <= self.unique_max:
            raise ValueError(f"unique_min must lie in (0, unique_max], got {self.unique_min}")


@dataclass(frozen=True, eq=False)
class Facts:
    """The classes of a data set: ``probs`` [K, M] (P(l|n), zero outside the context ids),
    ``query`` [K] (psi(n)), ``label`` [K] (next-token id), vocabulary size ``M``,
    ``n_context`` context ids, DTs per class and the CTs."""

    probs: np.ndarray
    query: np.ndarray
    label: np.ndarray
    M: int
    n_context: int
    dts: tuple[tuple[int, ...], ...]
    cts: tuple[int, ...]

    @property
    def K(self) -> int:
        return int(self.probs.shape[0])


def make_facts(config: DataConfig) -> Facts:
    """Build ``Dataset2``'s facts (id layout and probabilities as in ``decoder_only.py``)."""
    c = config
    num_next = c.num_last * c.num_next_per_last
    cpl_offset = c.num_common
    unique_offset = cpl_offset + c.num_common_per_last * c.num_last
    last_offset = unique_offset + c.num_unique_per_next * num_next
    next_offset = last_offset + c.num_last
    M = next_offset + num_next
    probs = np.zeros((num_next, M))
    query = np.zeros(num_next, dtype=np.int64)
    label = np.zeros(num_next, dtype=np.int64)
    dts = []
    idx = 0
    unique = np.linspace(c.unique_min, c.unique_max, c.num_unique_per_next)
    perm_rng = None if c.dt_perm_seed is None else np.random.default_rng(c.dt_perm_seed)
    for m in range(c.num_last):
        cpl = range(cpl_offset + m * c.num_common_per_last,
                    cpl_offset + (m + 1) * c.num_common_per_last)
        for _ in range(c.num_next_per_last):
            start = unique_offset + c.num_unique_per_next * idx
            probs[idx, : c.num_common] = c.common_prob
            probs[idx, list(cpl)] = c.common_prob
            masses = unique if perm_rng is None else perm_rng.permutation(unique)
            probs[idx, start: start + c.num_unique_per_next] = masses
            probs[idx] /= probs[idx].sum()
            query[idx] = last_offset + m
            label[idx] = next_offset + idx
            dts.append(tuple(range(start, start + c.num_unique_per_next)))
            idx += 1
    cts = tuple(range(c.num_common)) + tuple(
        range(cpl_offset, cpl_offset + c.num_common_per_last * c.num_last))
    return Facts(probs, query, label, M, last_offset, tuple(dts), cts)


def sample_batch(facts: Facts, batch: int, length: int, gen: torch.Generator,
                 dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor]:
    """One ``Dataset2.generate`` batch as counts: classes uniform, ``length - 1`` contextual
    tokens i.i.d. from P(l|n) (the code's L is the paper's T); returns counts [B, M],
    query [B], label [B]."""
    if batch < 1 or length < 2:
        raise ValueError(f"batch must be >= 1 and length >= 2, got {batch}, {length}")
    probs = torch.as_tensor(facts.probs, dtype=torch.float64)
    cls = torch.randint(facts.K, (batch,), generator=gen)
    tokens = torch.multinomial(probs[cls], length - 1, replacement=True, generator=gen)
    counts = torch.zeros(batch, facts.M, dtype=dtype)
    counts.scatter_add_(1, tokens, torch.ones_like(tokens, dtype=dtype))
    return {"counts": counts, "query": torch.as_tensor(facts.query)[cls],
            "label": torch.as_tensor(facts.label)[cls]}


# ---------------------------------------------------------------------- model (Section 3)
def member_loss(params: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
                residual: bool = False) -> torch.Tensor:
    """Batch-mean cross-entropy of ``Model2`` for ONE member (Eqn 1-2).

    ``params``: ``Y`` (stored as Yhat = Y/a), ``Z`` [M, M]; ``batch``: ``counts`` [B, M],
    ``query`` [B], ``label`` [B], ``y_scale`` [] (a), and ``qhot`` [B, M] when ``residual``.
    ``residual``: False (none), True or ``"model2"`` (the authors' ``Model2``: the query
    one-hot added to the attended bag, ``LN(X^T b + e_q)``), or ``"paper"`` (Section 7's
    ``LN(LN(X^T b) + e_q)``: the bag normalised before the query embedding is added).
    """
    Z = params["Z"]
    Y = params["Y"] * batch["y_scale"]
    zq = Z[batch["query"]]
    w = batch["counts"] * torch.exp(zq - zq.max(dim=1, keepdim=True).values)
    bag = w / w.sum(dim=1, keepdim=True)
    if residual == "paper":
        bag = bag / bag.norm(dim=1, keepdim=True) + batch["qhot"]
    elif residual:
        bag = bag + batch["qhot"]
    u = bag / bag.norm(dim=1, keepdim=True)
    return F.cross_entropy(u @ Y, batch["label"])


def population_loss(params: dict[str, torch.Tensor], facts: Facts,
                    residual: bool = False) -> torch.Tensor:
    """Class-averaged T -> infinity loss (X^T b -> c_n, Lemma 2), ``Y`` unscaled."""
    P = torch.as_tensor(facts.probs, dtype=params["Z"].dtype, device=params["Z"].device)
    batch = {"counts": P, "query": torch.as_tensor(facts.query, device=P.device),
             "label": torch.as_tensor(facts.label, device=P.device),
             "y_scale": torch.ones((), dtype=P.dtype, device=P.device),
             "qhot": F.one_hot(torch.as_tensor(facts.query, device=P.device), facts.M).to(P.dtype)}
    return member_loss(params, batch, residual)


def init_member(M: int, zero_init: bool, gen: torch.Generator,
                dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor]:
    """``Model2`` init: zeros, or ``nn.Linear``'s default U(-1/sqrt(M), 1/sqrt(M)) for both."""
    if zero_init:
        return {"Y": torch.zeros(M, M, dtype=dtype), "Z": torch.zeros(M, M, dtype=dtype)}
    bound = 1.0 / math.sqrt(M)
    Y = (torch.rand(M, M, generator=gen, dtype=dtype) * 2 - 1) * bound
    Z = (torch.rand(M, M, generator=gen, dtype=dtype) * 2 - 1) * bound
    return {"Y": Y, "Z": Z}


# ---------------------------------------------------------------------- statistics
def attention(z_rows: np.ndarray, facts: Facts) -> np.ndarray:
    """c_n = P(l|n) e^{z_{psi(n) l}} / sum: ``z_rows`` [..., K, M] -> [..., K, M]."""
    z = np.asarray(z_rows, dtype=float)
    logw = np.where(facts.probs > 0, np.log(np.where(facts.probs > 0, facts.probs, 1.0)) + z,
                    -np.inf)
    logw = logw - logw.max(axis=-1, keepdims=True)
    w = np.exp(logw)
    return w / w.sum(axis=-1, keepdims=True)


def dt_shares(z_rows: np.ndarray, facts: Facts) -> list[np.ndarray]:
    """Per class n, c_n restricted to G_DT(n) and renormalised: list of [..., |G_DT(n)|]."""
    c = attention(z_rows, facts)
    out = []
    for n, d in enumerate(facts.dts):
        s = c[..., n, list(d)]
        out.append(s / s.sum(axis=-1, keepdims=True))
    return out


def dt_entropy(z_rows: np.ndarray, facts: Facts) -> np.ndarray:
    """The Fig. 6 metric: class-averaged Shannon entropy (nats) of the DT-renormalised c_n."""
    ents = []
    for s in dt_shares(z_rows, facts):
        ents.append(-(s * np.log(np.where(s > 0, s, 1.0))).sum(axis=-1))
    return np.mean(ents, axis=0)


def peak_times(t: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Time at which each column of ``shares`` [T, n] peaks (first maximum)."""
    return np.asarray(t)[np.argmax(np.asarray(shares), axis=0)]


# ---------------------------------------------------------------------- threads
@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch's CPU ops single-threaded inside, restoring the caller's setting after.

    The tensors of this row are tiny (M <= 34 below thorough, batch 128), so intra-op
    threads only add synchronisation (on a loaded machine they made a Fig. 6 sweep several
    times slower).  Results are unchanged up to float rounding.  The toolkit's thread
    policy decides (``numerics.threads``: ``TDCHECK_THREADS`` overrides this default of 1)."""
    with threads(default=1):
        yield


# ---------------------------------------------------------------------- SGD ensembles
@dataclass(frozen=True)
class SGDConfig:
    """Members = every (eta_Z, ratio, seed); ``ratio = eta_Y/eta_Z``.

    Defaults: the published sweep (the authors' ``figure_6.log``: L = T = 128, batch 128,
    100 iterations, SGD momentum 0.9, wd 0, ``zero_init = False`` as ``figure_6.log`` passes it;
    the yaml's default is ``zero_init = true``, which ``figure_4.log`` keeps).  ``momentum = 0``
    gives plain SGD; with
    ``exact=True`` the batch is the population (T -> infinity, all classes with weight 1/K):
    deterministic GD.  ``member_chunk`` is the trainer's option
    (:class:`numerics.ensemble.TrainConfig`): the gradient is computed over that many members
    at a time (None: all at once), which caps the memory of a large ensemble; results are
    unchanged up to float rounding (``tests/test_scan_snap.py`` checks it).  The device is
    not part of the config: it is :func:`run_sgd`'s option (in the cache key).
    """

    data: DataConfig = field(default_factory=DataConfig)
    eta_Z: tuple[float, ...] = (1.0,)
    ratio: tuple[float, ...] = (1.0,)
    seeds: tuple[int, ...] = (1,)
    steps: int = 100
    batch: int = 128
    length: int = 128
    momentum: float = 0.9
    zero_init: bool = False
    residual: bool | str = False
    exact: bool = False
    record_every: int = 1
    dtype: str = "float64"
    member_chunk: int | None = None

    def __post_init__(self) -> None:
        if self.member_chunk is not None and self.member_chunk < 1:
            raise ValueError(f"member_chunk must be >= 1, got {self.member_chunk}")
        if not self.eta_Z or any(not v > 0 for v in self.eta_Z):
            raise ValueError(f"eta_Z must be positive rates, got {self.eta_Z}")
        if not self.ratio or any(not v > 0 for v in self.ratio):
            raise ValueError(f"ratio must be positive, got {self.ratio}")
        if not self.seeds:
            raise ValueError("seeds must not be empty")
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")

    @property
    def members(self) -> list[tuple[float, float, int]]:
        return list(itertools.product(self.eta_Z, self.ratio, self.seeds))


@dataclass(frozen=True, eq=False)
class SGDResult:
    """``steps`` [T]; ``zq`` [members, T, K, M] (row psi(n) of Z for each class n);
    ``loss`` [members, T]; ``y_rowsum``/``z_rowsum`` [members, T, M] (Y 1, Z 1);
    ``members`` (eta_Z, ratio, seed) per member; final ``Y``, ``Z`` [members, M, M]."""

    config: SGDConfig
    facts: Facts
    steps: np.ndarray
    zq: np.ndarray
    loss: np.ndarray
    y_rowsum: np.ndarray
    z_rowsum: np.ndarray
    members: tuple[tuple[float, float, int], ...]
    Y: np.ndarray
    Z: np.ndarray

    def entropy(self) -> np.ndarray:
        """DT entropy [members, T]."""
        return dt_entropy(self.zq, self.facts)

    def select(self, eta_Z: float, ratio: float) -> np.ndarray:
        """Member indices with these rates (one per seed)."""
        return np.array([i for i, (ez, r, _) in enumerate(self.members)
                         if math.isclose(ez, eta_Z) and math.isclose(r, ratio)])


def _sgd_compute(config: SGDConfig, device_name: str) -> SGDResult:
    dtype = getattr(torch, config.dtype)
    device = select_device(device_name)
    facts = make_facts(config.data)
    members = config.members
    n = len(members)
    seeds = sorted(set(config.seeds))
    gens = {s: torch.Generator().manual_seed(int(s)) for s in seeds}
    inits = {s: init_member(facts.M, config.zero_init, gens[s], dtype) for s in seeds}
    scale = torch.tensor([math.sqrt(r) for _, r, _ in members], dtype=dtype)
    params = {
        "Y": torch.stack([inits[s]["Y"] / math.sqrt(r) for _, r, s in members]).to(device),
        "Z": torch.stack([inits[s]["Z"] for _, _, s in members]).to(device),
    }
    seed_pos = {s: i for i, s in enumerate(seeds)}
    # which seed's batch each member uses; the per-seed batches go to the device once and are
    # expanded to members there (a 16-member Fig. 6 seed copies 1/16 of the bytes to the device)
    member_seed = torch.tensor([seed_pos[s] for _, _, s in members], device=device)
    qhot_all = F.one_hot(torch.as_tensor(facts.query), facts.M).to(dtype)

    def batch_fn(step: int) -> dict[str, torch.Tensor]:
        if config.exact:
            P = torch.as_tensor(facts.probs, dtype=dtype)
            b = {"counts": P, "query": torch.as_tensor(facts.query),
                 "label": torch.as_tensor(facts.label), "qhot": qhot_all}
            out = {k: v.unsqueeze(0).expand(n, *v.shape) for k, v in b.items()}
        else:
            per_seed = [sample_batch(facts, config.batch, config.length, gens[s], dtype)
                        for s in seeds]
            for b in per_seed:
                b["qhot"] = F.one_hot(b["query"], facts.M).to(dtype)
            out = {k: torch.stack([b[k] for b in per_seed]).to(device)[member_seed]
                   for k in per_seed[0]}
        out["y_scale"] = scale
        return {k: v.to(device) for k, v in out.items()}

    queries = torch.as_tensor(facts.query, device=device)
    observables = {
        "zq": lambda p: p["Z"][queries],
        "y_rowsum": lambda p: p["Y"].sum(dim=1),
        "z_rowsum": lambda p: p["Z"].sum(dim=1),
    }
    opt = (OptimizerConfig("momentum", momentum=config.momentum) if config.momentum > 0
           else OptimizerConfig("sgd"))
    tc = TrainConfig(steps=config.steps, lr=tuple(float(ez) for ez, _, _ in members),
                     optimizer=opt, record_every=config.record_every,
                     member_chunk=config.member_chunk, description="scan_snap SGD")

    def loss_fn(p, b):
        return member_loss(p, b, config.residual)

    traj = train(loss_fn, params, tc, batch_fn=batch_fn, observables=observables)
    sc = scale.to(device).reshape(-1, 1, 1)
    return SGDResult(
        config=config,
        facts=facts,
        steps=traj.steps.cpu().numpy(),
        zq=traj.observables["zq"].cpu().double().numpy(),
        loss=traj.loss.cpu().double().numpy(),
        y_rowsum=(traj.observables["y_rowsum"] * scale.to(device).reshape(-1, 1, 1)
                  ).cpu().double().numpy(),
        z_rowsum=traj.observables["z_rowsum"].cpu().double().numpy(),
        members=tuple(members),
        Y=(traj.params["Y"] * sc).cpu().double().numpy(),
        Z=traj.params["Z"].cpu().double().numpy(),
    )


def _sgd_smoke() -> SGDConfig:
    """A test-size SGD ensemble: the Fig. 4 data, two ratios, two seeds, 5 steps."""
    return SGDConfig(data=DataConfig(num_last=2, num_next_per_last=1), eta_Z=(1.0,),
                     ratio=(1.0, 10.0), seeds=(1, 2), steps=5, batch=8, length=16,
                     zero_init=True)


# the full model: Model2 trained by SGD/heavy ball on its own batch loss, gradients by torch
# autograd (numerics.ensemble.train); no theory function is called
@run_function("scan_snap.sgd", full_model=True, smoke=_sgd_smoke)
def run_sgd(config: SGDConfig, *, device: str = "cpu") -> SGDResult:
    """Train every member of ``config`` in one stacked run on ``device``; call as
    ``run_sgd(config, cache=ctx.cache, device=...)`` (or through :func:`sgd_run`)."""
    with one_thread():
        return _sgd_compute(config, device)


def sgd_device(ctx: Context) -> str:
    """Where the SGD ensembles run: ``ctx.device`` where :data:`SIZES` says so (thorough,
    sized for one GPU), else the CPU."""
    return ctx.device if ctx.size(SIZES, "sgd_on_device") else "cpu"


def sized(config: SGDConfig, ctx: Context) -> SGDConfig:
    """``config`` with the ``member_chunk`` of its vocabulary at ``ctx.profile``
    (:data:`THOROUGH_CHUNK` at thorough); unchanged where the table names no chunks."""
    chunks = ctx.size(SIZES, "member_chunk")
    if chunks:
        return replace(config, member_chunk=chunks.get(make_facts(config.data).M))
    return config


def sgd_run(config: SGDConfig, ctx: Context) -> SGDResult:
    """The SGD ensemble ``config`` at ``ctx``'s profile (:func:`sized`, :func:`sgd_device`),
    through the run cache: the one way claims and figures get an SGD run, so both share it."""
    return run_sgd(sized(config, ctx), cache=ctx.cache, device=sgd_device(ctx))


def fig6_config(num_last: int, seeds: int) -> SGDConfig:
    """Fig. 6 sweep (the authors' ``figure_6.log``): random init, momentum 0.9, one panel, all
    16 rates; recorded every 10 iterations (the table needs the final state only)."""
    return SGDConfig(data=DataConfig(num_last=num_last), eta_Z=(0.5, 1.0, 2.0, 3.0),
                     ratio=(1.0, 2.0, 5.0, 10.0), seeds=tuple(range(1, seeds + 1)),
                     zero_init=False, record_every=10)


def fig6_column_config(num_last: int, ratios: Sequence[float], seeds: int) -> SGDConfig:
    """The Fig. 6 sweep restricted to some eta_Y/eta_Z columns (all four eta_Z).  Seed s
    draws the same init and batches in every run, so a column's members equal the full
    sweep's members at that ratio."""
    return replace(fig6_config(num_last, seeds), ratio=tuple(ratios))


def fig4_config(seeds: int, dt_perm_seed: int | None = None) -> SGDConfig:
    """Fig. 4 command (the authors' ``figure_4.log``): num_last 2, one next token each, zero
    init, lr_z 1, ratios 1 and 10, momentum 0.9, 100 iterations, recorded every iteration;
    ``dt_perm_seed`` permutes the DT masses against the ids (:class:`DataConfig`)."""
    return SGDConfig(data=DataConfig(num_last=2, num_next_per_last=1,
                                     dt_perm_seed=dt_perm_seed), eta_Z=(1.0,),
                     ratio=(1.0, 10.0), seeds=tuple(range(1, seeds + 1)), zero_init=True)


def residual_config(seeds: int, residual: bool | str) -> SGDConfig:
    """Fig. 4 protocol on a shared query (num_last 1, two next tokens), residual on or off.

    The paper has no residual experiment (Section 7 argues it, with no run or log), so there
    is no paper configuration to scale to: thorough keeps this protocol (the Fig. 4
    command's optimiser, batch, length and 100 iterations) with more seeds."""
    return SGDConfig(data=DataConfig(num_last=1, num_next_per_last=2), eta_Z=(1.0,),
                     ratio=(1.0, 10.0), seeds=tuple(range(1, seeds + 1)), zero_init=True,
                     residual=residual)


# ---------------------------------------------------------------------- population flow
@dataclass(frozen=True)
class FlowConfig:
    """Exact T -> infinity gradient flow of (Y, Z) from ``zero_init``, saved at ``t_eval``.

    ``z_init_seed``: None starts from Y(0) = Z(0) = 0 (the paper's initialisation);
    an integer starts the attention logits from ``Model2``'s random init instead
    (``nn.Linear``'s default U(-1/sqrt(M), 1/sqrt(M)), as the authors' Fig. 6 runs,
    :func:`init_member` with a generator seeded so) with Y(0) = 0 kept: Theorem 3's
    r(0) then carries z(0) (the paper's "initial value as prior"), while the decoder's
    reduction (Lemmas 3-6) keeps its zero start."""

    data: DataConfig = field(default_factory=DataConfig)
    eta_Y: float = 10.0
    eta_Z: float = 1.0
    t_eval: tuple[float, ...] = (0.0, 1.0, 10.0, 100.0)
    residual: bool | str = False
    rtol: float = 1e-9
    atol: float = 1e-11
    y_update: str = "gradient"
    z_init_seed: int | None = None

    def __post_init__(self) -> None:
        if self.y_update not in Y_UPDATES:
            raise ValueError(f"y_update must be one of {Y_UPDATES}, got {self.y_update!r}")
        if self.y_update == "eqn26" and self.residual:
            raise ValueError("Eqn 26's modified Y update is stated for the model without "
                             "a residual connection")


#: The decoder's update in :class:`FlowConfig`: ``"gradient"``, the model's own population
#: gradient (autograd); ``"eqn26"``, Lemma 3's modified update (Eqn 26) with P(n) = 1/K,
#: ``Y' = eta_Y sum_n (1/K) (f_n - F E' e_n)(e_n - alpha_n)^T`` with E' = I - (I + E)^{-1},
#: i.e. ``eta_Y/K F (F^T F)^{-1} R`` (R's rows e_n - alpha_n), under which W = F^T Y moves
#: exactly as Lemma 3 says; Z keeps its autograd gradient in both.
Y_UPDATES = ("gradient", "eqn26")


@dataclass(frozen=True, eq=False)
class FlowResult:
    """``t`` [T]; ``zq`` [T, K, M]; ``Y`` [T, M, M]; ``zdot`` [T, K, M] (dz/dt of the rows)."""

    config: FlowConfig
    facts: Facts
    t: np.ndarray
    zq: np.ndarray
    Y: np.ndarray
    zdot: np.ndarray


def class_features(Z: torch.Tensor, facts: Facts) -> torch.Tensor:
    """F's rows f_n [K, M]: class n's attended bag c_n = P(.|n) e^{z_psi(n)} / sum, divided
    by its L2 norm (the model's normalised input at T -> infinity, Lemma 2)."""
    P = torch.as_tensor(facts.probs, dtype=Z.dtype)
    zq = Z[torch.as_tensor(facts.query)]
    w = P * torch.exp(zq - zq.max(dim=1, keepdim=True).values)
    c = w / w.sum(dim=1, keepdim=True)
    return c / c.norm(dim=1, keepdim=True)


def decoder_residuals(Y: torch.Tensor, Z: torch.Tensor, facts: Facts) -> torch.Tensor:
    """R's rows e_n - alpha_n [K, M] (alpha_n = softmax(Y^T f_n)): the population gradient
    of the class-averaged loss in Y is -(1/K) F^T R with F's rows f_n."""
    F_rows = class_features(Z, facts)
    alpha = torch.softmax(F_rows @ Y, dim=1)
    onehot = torch.nn.functional.one_hot(torch.as_tensor(facts.label), facts.M).to(Y.dtype)
    return onehot - alpha


def eqn26_update(Y: torch.Tensor, Z: torch.Tensor, facts: Facts) -> torch.Tensor:
    """Lemma 3's modified decoder update per unit eta_Y (Eqn 26, class probability 1/K):
    (1/K) sum_n (f_n - F E' e_n)(e_n - alpha_n)^T = (1/K) F (I + E)^{-1} R, since
    I - E' = (I + E)^{-1} and F^T F = I + E.  Then F^T Y' = R / K: Lemma 3's W dynamics."""
    F_rows = class_features(Z, facts)
    R = decoder_residuals(Y, Z, facts)
    return F_rows.T @ torch.linalg.solve(F_rows @ F_rows.T, R) / facts.K


def _flow_compute(config: FlowConfig) -> FlowResult:
    facts = make_facts(config.data)
    M = facts.M
    rows = np.unique(facts.query)
    n_rows = len(rows)
    row_of = {int(r): i for i, r in enumerate(rows)}
    full_rows = torch.as_tensor(rows)

    def grads(y: np.ndarray) -> np.ndarray:
        Yt = torch.tensor(y[: M * M].reshape(M, M), dtype=torch.float64, requires_grad=True)
        zr = torch.tensor(y[M * M:].reshape(n_rows, M), dtype=torch.float64, requires_grad=True)
        Z = torch.zeros(M, M, dtype=torch.float64).index_put((full_rows,), zr)
        loss = population_loss({"Y": Yt, "Z": Z}, facts, config.residual)
        gY, gz = torch.autograd.grad(loss, (Yt, zr))
        dY = (eqn26_update(Yt.detach(), Z.detach(), facts) if config.y_update == "eqn26"
              else -gY)
        return np.concatenate([config.eta_Y * dY.numpy().ravel(),
                               -config.eta_Z * gz.numpy().ravel()])

    y0 = np.zeros(M * M + n_rows * M)
    if config.z_init_seed is not None:  # Model2's random Z, its query rows (the only ones read)
        Z0 = init_member(M, False, torch.Generator().manual_seed(int(config.z_init_seed)))["Z"]
        y0[M * M:] = Z0[full_rows].numpy().ravel()
    t_eval = np.asarray(config.t_eval, dtype=float)
    sol = solve_ivp(lambda t, y: grads(y), (0.0, float(t_eval[-1])), y0, method="RK45",
                    t_eval=t_eval, rtol=config.rtol, atol=config.atol)
    if not sol.success:
        raise RuntimeError(f"population flow failed: {sol.message}")
    Ys = sol.y[: M * M].T.reshape(-1, M, M)
    zr = sol.y[M * M:].T.reshape(-1, n_rows, M)
    sel = [row_of[int(q)] for q in facts.query]
    zdot = np.stack([grads(sol.y[:, i])[M * M:].reshape(n_rows, M)[sel]
                     for i in range(sol.y.shape[1])])
    return FlowResult(config, facts, sol.t, zr[:, sel], Ys, zdot)


def _flow_smoke() -> FlowConfig:
    """A test-size population flow: Dataset2 at num_last = 1 with 3 DTs, to t = 1."""
    return FlowConfig(data=DataConfig(num_unique_per_next=3, num_common=2),
                      t_eval=(0.0, 0.1, 1.0))


# the full model too: the exact T -> infinity gradient flow of Model2's own class-averaged
# loss (population_loss), its gradient by torch autograd, integrated by solve_ivp; its
# dynamics come from the model alone, not from theory.scan_snap's reduced system
@run_function("scan_snap.population_flow", full_model=True, smoke=_flow_smoke)
def run_population_flow(config: FlowConfig) -> FlowResult:
    """Integrate the exact population flow (CPU, float64); call with ``cache=ctx.cache``."""
    if config.y_update != "gradient":
        raise ValueError("run_population_flow is the model's own gradient flow; Eqn 26's "
                         "modified update is run_eqn26_flow")
    with one_thread():
        return _flow_compute(config)


def _eqn26_smoke() -> FlowConfig:
    return replace(_flow_smoke(), y_update="eqn26")


# not the full model: the decoder moves by Lemma 3's modified update (Eqn 26), the paper's
# own device for Theorem 1, while Z keeps the model's autograd gradient; it judges whether
# Theorem 1 follows from its modification, not whether the model obeys it
@run_function("scan_snap.eqn26_flow", full_model=False, smoke=_eqn26_smoke)
def run_eqn26_flow(config: FlowConfig) -> FlowResult:
    """The population flow with Eqn 26's decoder update (CPU, float64)."""
    if config.y_update != "eqn26":
        raise ValueError("run_eqn26_flow integrates Eqn 26's update: y_update='eqn26'")
    with one_thread():
        return _flow_compute(config)


@dataclass(frozen=True)
class PopulationGDConfig:
    """Plain full-batch gradient descent on the model's class-averaged T -> infinity loss
    (:func:`population_loss`) from Y(0) = Z(0) = 0: ``steps`` steps of ``Y <- Y - eta_Y
    grad_Y``, ``Z <- Z - eta_Z grad_Z``, the gradients by torch autograd (float64).  The
    discrete-step twin of :class:`FlowConfig` (Lemma 5 is a statement about such steps)."""

    data: DataConfig = field(default_factory=DataConfig)
    eta_Y: float = 1.0
    eta_Z: float = 0.0
    steps: int = 100


@dataclass(frozen=True, eq=False)
class PopulationGDResult:
    """``logits`` [steps + 1, K, M]: the model's output for each class's population input,
    ``f_n^T Y`` with f_n its attended, normalised bag (step 0 first); ``zq`` [steps + 1, K,
    M]: the attention logits of each class's query row."""

    config: PopulationGDConfig
    facts: Facts
    logits: np.ndarray
    zq: np.ndarray


def _population_gd_compute(config: PopulationGDConfig) -> PopulationGDResult:
    facts = make_facts(config.data)
    M = facts.M
    Y = torch.zeros(M, M, dtype=torch.float64, requires_grad=True)
    Z = torch.zeros(M, M, dtype=torch.float64, requires_grad=True)
    query = torch.as_tensor(facts.query)
    logits, zq = [], []

    def record() -> None:
        with torch.no_grad():
            logits.append((class_features(Z, facts) @ Y).numpy().copy())
            zq.append(Z[query].numpy().copy())

    record()
    for _ in range(config.steps):
        loss = population_loss({"Y": Y, "Z": Z}, facts)
        gY, gZ = torch.autograd.grad(loss, (Y, Z))
        with torch.no_grad():
            Y -= config.eta_Y * gY
            Z -= config.eta_Z * gZ
        record()
    return PopulationGDResult(config, facts, np.array(logits), np.array(zq))


def _population_gd_smoke() -> PopulationGDConfig:
    """A test-size run: Dataset2 at num_last = 1 with 3 DTs and 2 CTs, 5 steps."""
    return PopulationGDConfig(data=DataConfig(num_unique_per_next=3, num_common=2),
                              eta_Z=1.0, steps=5)


# the full model: Model2's own class-averaged loss, its gradient by torch autograd, plain
# discrete steps; nothing from theory.scan_snap enters its dynamics
@run_function("scan_snap.population_gd", full_model=True, smoke=_population_gd_smoke)
def run_population_gd(config: PopulationGDConfig) -> PopulationGDResult:
    """Plain population gradient descent of the model (CPU, float64); call with
    ``cache=ctx.cache``."""
    with one_thread():
        return _population_gd_compute(config)


# ---------------------------------------------------------------------- reduced ODEs
@dataclass(frozen=True)
class ReducedConfig:
    """:func:`theory.scan_snap.reduced_system` for the context tokens of one shared query.

    ``probs`` rows are P(l|n) over the context tokens (a tuple of tuples); ``M`` is the
    vocabulary (softmax) size entering gamma; ``z0`` the logits at t = 0 (None: Z(0) = 0,
    the paper's start; :func:`model2_logits` draws Model2's random init).
    """

    probs: tuple[tuple[float, ...], ...]
    M: int
    eta_Y: float
    eta_Z: float
    t_eval: tuple[float, ...]
    rtol: float = 1e-10
    atol: float = 1e-12
    z0: tuple[float, ...] | None = None


@dataclass(frozen=True, eq=False)
class ReducedResult:
    """``t`` [T], ``h`` [T], ``z`` [T, L] (at ``t_eval``, from the solver's dense output);
    ``step_t`` [N + 1] the accepted steps' ends (t = 0 first) and ``step_y`` [N + 1, L + 1]
    the state there (the step's own end value, no interpolation), for error bounds that
    count steps (None where not recorded)."""

    config: ReducedConfig
    t: np.ndarray
    h: np.ndarray
    z: np.ndarray
    step_t: np.ndarray | None = None
    step_y: np.ndarray | None = None


#: a flow under test is read as escaping when a state entry leaves |y| <= ESCAPE_STATE (a
#: logit 20 above another puts the other token's attention at e^-20 = 2e-9 of the winner's:
#: a complete snap, where Theorem 4's logits, growing as 1/4 ln(1 + 4 Gamma/C0), arrive only
#: at Gamma ~ e^80) or when it moves faster than ESCAPE_RATE per unit of ln t relative to its
#: size, t max |y'| / (1 + max |y|) > ESCAPE_RATE.  The paper's flows move at most as ln t:
#: on the snap system h is concave with h(0) = 0, so t h' <= h, t Gamma' <= 2 Gamma and
#: t |z'| = t Gamma'/(C0 + 4 Gamma) < 1/2; h's own t h' <= h <= |y|; the reduced system's
#: logits follow the same gamma (measured in the test beside it).  A finite-time blow-up
#: such as z' ~ e^{4z}, z = -1/4 ln(T - t), has t z' = t/(4 (T - t)), past 100 once T - t <
#: T/400, long before its logarithmic singularity reaches any state bound and while the
#: solver can still step.  The criterion does not depend on the horizon and is 0 at t = 0.
#: Both bounds are properties of the integration, the same for check and control; a wrong
#: reduced or snap system (a sign flipped) crosses them within seconds, where DOP853 or LSODA
#: would otherwise crawl towards the blow-up for as long as a mutant's time limit allows.
ESCAPE_STATE = 20.0
ESCAPE_RATE = 100.0


def _log_speed(f, t: float, y: np.ndarray) -> float:
    """t max |y'| / (1 + max |y|): the flow's speed per unit of ln t relative to its size
    (inf where y' is not finite)."""
    speed = float(np.max(np.abs(np.asarray(f(t, y), dtype=float))))
    return t * speed / (1.0 + float(np.max(np.abs(y)))) if math.isfinite(speed) else math.inf


def _escape_events(f) -> tuple:
    """Terminal events for ``solve_ivp`` on ``y' = f(t, y)``: the state bound
    :data:`ESCAPE_STATE` and the speed bound :data:`ESCAPE_RATE`."""

    def state(t, y):
        return ESCAPE_STATE - float(np.max(np.abs(y)))

    def rate(t, y):
        return ESCAPE_RATE - _log_speed(f, t, y) if t > 0 else 1.0

    for ev in (state, rate):
        ev.terminal = True
    return state, rate


def _escaped(name: str, t: float, y: np.ndarray, f, t_end: float) -> InadmissibleTheory:
    return InadmissibleTheory(
        f"the flow under test ({name}) escapes at t = {t:.4g} of {t_end:.4g}: max |y| = "
        f"{float(np.max(np.abs(y))):.3g} (bound {ESCAPE_STATE:g}), t max |y'|/(1 + max |y|) "
        f"= {_log_speed(f, t, y):.3g} (bound {ESCAPE_RATE:g}): it blows up or snaps "
        "completely where the paper's flow moves as ln t")


def _check_start(name: str, f, y0: np.ndarray) -> None:
    """A flow under test whose right-hand side at the start is not finite fails at once (an
    event already crossed at t = 0 would never fire)."""
    if not np.all(np.isfinite(np.asarray(f(0.0, y0), dtype=float))):
        raise InadmissibleTheory(f"the flow under test ({name}) has a non-finite right-hand "
                                 "side at its start")


def reduced_start(config: ReducedConfig) -> np.ndarray:
    """The reduced system's state at t = 0: (h, z) = (0, z0), z0 = 0 unless given."""
    L = len(config.probs[0])
    z0 = np.zeros(L) if config.z0 is None else np.asarray(config.z0, dtype=float)
    if z0.shape != (L,):
        raise ValueError(f"z0 must have one entry per context token ({L}), got {z0.shape}")
    return np.r_[0.0, z0]


def model2_logits(L: int, M: int, seed: int) -> tuple[float, ...]:
    """``L`` attention logits from ``Model2``'s random init (``nn.Linear``'s default
    U(-1/sqrt(M), 1/sqrt(M)), as :func:`init_member`), from a generator seeded ``seed``: a
    random Z(0) row for the reduced system's context tokens."""
    g = torch.Generator().manual_seed(int(seed))
    draw = (torch.rand(L, generator=g, dtype=torch.float64) * 2 - 1) / math.sqrt(M)
    return tuple(float(x) for x in draw)


def _reduced_compute(config: ReducedConfig) -> ReducedResult:
    sys = theory.reduced_system(config.probs, config.M, config.eta_Y, config.eta_Z)
    f = sys.lambdify("numpy")
    t_eval = np.asarray(config.t_eval, dtype=float)
    t_end = float(t_eval[-1])
    # dense_output only to read the accepted steps' ends (sol.sol.ts); the values at t_eval
    # come from the same per-step interpolants either way
    name = sys.name or "reduced system"
    y0 = reduced_start(config)
    _check_start(name, f, y0)
    sol = solve_ivp(lambda t, y: f(t, y), (0.0, t_end), y0,
                    method="DOP853", t_eval=t_eval, rtol=config.rtol, atol=config.atol,
                    dense_output=True, events=_escape_events(f))
    if sol.status == 1:
        k = next(i for i, te in enumerate(sol.t_events) if len(te))
        raise _escaped(name, float(sol.t_events[k][0]), sol.y_events[k][0], f, t_end)
    if not sol.success:  # the theory's own flow: a failure is the theory's, with the reason
        raise InadmissibleTheory(f"the flow under test ({name}) could not be integrated "
                                 f"to t = {t_end:.4g}: {sol.message}")
    steps = np.asarray(sol.sol.ts)
    # each step's interpolant at its own right end is the step's end value (up to rounding)
    ends = np.stack([y0] + [q(q.t) for q in sol.sol.interpolants])
    return ReducedResult(config, sol.t, sol.y[0], sol.y[1:].T, steps, ends)


# integrates theory.scan_snap.reduced_system (Lemma 4): the theory, not the model
@run_function("scan_snap.reduced", full_model=False)
def run_reduced(config: ReducedConfig) -> ReducedResult:
    """Integrate the Lemma 4 reduced system from h(0) = 0 and Z(0) = 0 (or ``z0``); call
    with ``cache=ctx.cache``."""
    return _reduced_compute(config)


@dataclass(frozen=True)
class SnapConfig:
    """:func:`theory.scan_snap.snap_system` at these parameters, saved at ``t_eval``."""

    M: int
    K: int
    eta_Y: float
    eta_Z: float
    C0: float
    t_eval: tuple[float, ...]


# integrates theory.scan_snap.snap_system (Theorem 4): the theory, not the model
@run_function("scan_snap.snap_system", full_model=False)
def run_snap_system(config: SnapConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integrate :func:`theory.scan_snap.snap_system` from (h, z) = (0, 0): (t, h, B = -z);
    call with ``cache=ctx.cache``."""
    c = config
    sys = theory.snap_system(c.M, c.K, c.eta_Y, c.eta_Z, c.C0)
    t_eval = np.asarray(c.t_eval, dtype=float)
    f = sys.lambdify("numpy")
    t_end = float(t_eval[-1])
    name = sys.name or "snap system"
    _check_start(name, f, np.zeros(2))
    try:
        sol = integrate(sys, (0.0, 0.0), t_end, t_eval=t_eval, method="LSODA",
                        rtol=1e-12, atol=1e-14, events=_escape_events(f))
    except OdeError as e:  # the theory's own flow: a failure is the theory's
        raise InadmissibleTheory(f"the flow under test ({name}): {e}") from None
    if sol.t_event is not None:
        raise _escaped(name, sol.t_event, sol.y_event if sol.y_event is not None
                       else sol.y[:, -1], f, t_end)
    if not sol.success:
        raise InadmissibleTheory(f"the flow under test ({name}) could not be integrated to "
                                 f"t = {t_end:.4g}: {sol.message}")
    return sol.t, sol.y[0], -sol.y[1]


# ---------------------------------------------------------------------- published numbers
#: Fig. 6 (the authors' code, ``scan_snap/figure_6_data.pkl``): (num_last, eta_Z) ->
#: {ratio: (mean, +-)}; 10 seeds,
#: random init, SGD momentum 0.9, 100 iterations; num_next_per_last = 2.
PUBLISHED_FIG6: dict[tuple[int, float], dict[float, tuple[float, float]]] = {
    (1, 0.5): {1: (1.971, .028), 2: (2.007, .032), 5: (2.066, .017), 10: (2.092, .016)},
    (1, 1.0): {1: (1.871, .052), 2: (1.937, .052), 5: (2.022, .036), 10: (2.053, .030)},
    (1, 2.0): {1: (1.699, .101), 2: (1.810, .099), 5: (1.934, .068), 10: (1.900, .200)},
    (1, 3.0): {1: (1.551, .155), 2: (1.708, .152), 5: (1.786, .170), 10: (1.825, .331)},
    (3, 0.5): {1: (2.019, .010), 2: (1.988, .012), 5: (2.031, .007), 10: (2.063, .005)},
    (3, 1.0): {1: (1.963, .015), 2: (1.920, .018), 5: (1.982, .009), 10: (2.024, .008)},
    (3, 2.0): {1: (1.842, .024), 2: (1.809, .027), 5: (1.899, .018), 10: (1.955, .020)},
    (3, 3.0): {1: (1.737, .032), 2: (1.715, .038), 5: (1.821, .030), 10: (1.839, .100)},
    (5, 0.5): {1: (2.026, .005), 2: (1.994, .007), 5: (2.020, .007), 10: (2.055, .006)},
    (5, 1.0): {1: (1.995, .007), 2: (1.931, .011), 5: (1.971, .010), 10: (2.014, .009)},
    (5, 2.0): {1: (1.906, .012), 2: (1.816, .022), 5: (1.884, .020), 10: (1.926, .025)},
    (5, 3.0): {1: (1.817, .021), 2: (1.718, .032), 5: (1.802, .033), 10: (1.831, .050)},
    (10, 0.5): {1: (2.033, .004), 2: (2.012, .004), 5: (2.018, .004), 10: (2.051, .003)},
    (10, 1.0): {1: (2.027, .003), 2: (1.975, .005), 5: (1.976, .006), 10: (2.015, .006)},
    (10, 2.0): {1: (1.990, .005), 2: (1.888, .009), 5: (1.899, .013), 10: (1.947, .015)},
    (10, 3.0): {1: (1.940, .006), 2: (1.805, .013), 5: (1.829, .019), 10: (1.875, .023)},
}


# ---------------------------------------------------------------------- diagnostics
def invariant_drift(system: ReducedSystem, name: str, states) -> tuple[np.ndarray, np.ndarray]:
    """d(invariant)/dt along ``system`` evaluated at ``states`` [N, d], with its scale.

    Returns (drift, scale): ``drift = sum_i dI/dx_i * x_i'`` and ``scale = sum_i |dI/dx_i * x_i'|``
    (the size of the terms that cancel), both [N].  A conserved quantity gives
    ``|drift| <= ~1e-15 scale``.  This is the numeric counterpart of ``ReducedSystem.drift``,
    whose full ``expand`` is too slow for the sqrt-of-sums expressions of
    :func:`theory.scan_snap.reduced_system` (evaluation in float64 of the unsimplified
    derivative).  A numeric instrument, not a result of the paper: it lives here, not in
    :mod:`theory.scan_snap`.
    """
    if name not in system.invariants:
        raise ValueError(f"name must be one of {sorted(system.invariants)}, got {name!r}")
    if system.params:
        raise ValueError("system must be numeric (params == ())")
    inv = system.invariants[name]
    terms = [sp.diff(inv, s) * r for s, r in zip(system.state, system.rhs, strict=True)
             if inv.has(s)]
    f = sp.lambdify([list(system.state)], terms, modules="numpy", cse=True)
    X = np.atleast_2d(np.asarray(states, dtype=float))
    if X.shape[1] != len(system.state):
        raise ValueError(f"states must have {len(system.state)} columns, got {X.shape[1]}")
    vals = np.array([[float(v) for v in f(x)] for x in X])
    return vals.sum(axis=1), np.abs(vals).sum(axis=1)
