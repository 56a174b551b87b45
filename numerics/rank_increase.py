"""Small-initialisation training of diagonal networks and attention heads (Boix-Adserà et al.).

Models, all as parameter dicts for :func:`numerics.ensemble.train` (members stacked on a
leading axis, one member per initialisation scale α of the ladder):

* ``quadratic``: the diagonal linear network ``g(u ⊙ v)`` with ``g(w) = ½wᵀHw - βᵀw``
  (:func:`theory.rank_increase.quadratic_loss`; our three-coordinate worked example);
  params ``u``, ``v`` [p].
* ``head``: the diagonal softmax head of the paper's Figs. 2-3 toy (our stand-in data and
  teacher, :func:`teacher_toy`), ``w = (κ | ν)``, ``u = (w_K, w_V)``,
  ``v = (w_Q, w_O)``; params ``u``, ``v`` [2d].
* full head (our non-diagonal bridge test): ``W_K, W_Q, W_V, W_O`` [d, d],
  ``f = softmax(X W_K W_Qᵀ Xᵀ) X W_V W_Oᵀ``.

Time is gradient-flow time ``t = lr·steps``; rescaled time is ``τ = t/log(1/α)`` per member.
Plain GD with step η follows the flow up to O(η): the escape rate of a coordinate is
``log(1 + η|γ|)/η = |γ|(1 - η|γ|/2 + ...)``, so jump times shift by a relative
``≈ η|γ|/2`` (:func:`theory.rank_increase.gd_escape_rate`), which the claims carry in
their predictions.

The log form of the flow (:func:`theory.rank_increase.log_flow`) is integrated with
:func:`numerics.ode.integrate` for quadratics (LSODA; Radau when LSODA returns NaN, which it
does silently after a sign-flipped re-entry at tiny α) and, for the head (a numeric loss),
with the same map ``w(σ, κ)`` from theory through ``scipy.integrate.solve_ivp`` (σ clamped to
[κ - 40, 40] against overflowing trial steps; real trajectories never reach the clamp): it
stays well conditioned down to α = 1e-64.  Perturbation runs (Fig. 3) kick the log-form flow.

Every run is a :func:`numerics.cache.run_function` (bounded in-process LRU over the on-disk
run cache; several claims and the figures share one ladder).  Sizes by profile are in the
one table :data:`SIZES`, read by the claims and the figures through the ``standard_*``
configs.  The torch runs are overhead-bound (at most 12 kFLOP of matmuls per member-step) and
run on the CPU unless a caller passes ``device=`` (which then enters the run's key).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import sympy as sp
import torch

from numerics.cache import run_function
from numerics.context import SizeTable
from numerics.ensemble import OptimizerConfig, TrainConfig, member_generators, train
from numerics.ode import OdeError, integrate
from theory import rank_increase as theory
from theory.flow import InadmissibleTheory

__all__ = [
    "DTYPE",
    "FIG2_ALPHAS",
    "HEAD",
    "HEAD_INIT",
    "HEAD_REFERENCE_T",
    "P_NONNORMAL",
    "QUAD",
    "QUAD_INIT",
    "SIZES",
    "FullHeadConfig",
    "FullHeadRun",
    "GdPerturbConfig",
    "LadderConfig",
    "LadderRun",
    "LogFlowConfig",
    "LogFlowRun",
    "PerturbConfig",
    "PerturbRun",
    "Problem",
    "active_count",
    "default_init",
    "diagonal_head",
    "full_head_data",
    "full_head_loss_torch",
    "gd_limit_flow",
    "gd_limit_ladders",
    "head_loss_torch",
    "head_loss_weighted_torch",
    "head_problem",
    "initial_weight_bound",
    "jump_times",
    "problem_gradient",
    "problem_loss",
    "problem_stages",
    "quadratic_loss_torch",
    "quadratic_problem",
    "run_full_head",
    "run_gd_perturbation",
    "run_ladder",
    "run_log_flow",
    "run_perturbation",
    "stable_rank",
    "stable_rank_from_singular_values",
    "standard_full_head",
    "standard_full_head_nonnormal",
    "standard_gd_perturbations",
    "standard_imbalance_run",
    "standard_ladder",
    "standard_log_flow",
    "standard_perturbations",
    "standard_scale_sweep",
    "standard_small_init_head",
    "standard_staircase_ladder",
    "teacher_toy",
    "three_coordinate_problem",
    "torch_loss",
]

DTYPE = torch.float64
TOY_KAPPA = (2.0, 0.0, 0.0)
TOY_NU = (1.0, 0.5, 0.0)


# ---------------------------------------------------------------------- problems
@dataclass(frozen=True)
class Problem:
    """``kind`` "quadratic" (H, beta) or "head" (the toy head with n, N, d, seed, teacher)."""

    kind: str = "quadratic"
    H: tuple[tuple[float, ...], ...] = ()
    beta: tuple[float, ...] = ()
    n: int = 16
    N: int = 4
    d: int = 3
    seed: int = 0
    kappa_star: tuple[float, ...] = TOY_KAPPA
    nu_star: tuple[float, ...] = TOY_NU

    def __post_init__(self) -> None:
        if self.kind not in ("quadratic", "head"):
            raise ValueError(f"kind must be 'quadratic' or 'head', got {self.kind!r}")
        if self.kind == "quadratic" and len(self.H) != len(self.beta):
            raise ValueError("beta must have the length of H")

    @property
    def p(self) -> int:
        return len(self.beta) if self.kind == "quadratic" else 2 * self.d


def quadratic_problem(H, beta) -> Problem:
    Hn = np.array(sp.Matrix(H).tolist() if isinstance(H, sp.MatrixBase) else H, dtype=float)
    bn = np.array([float(x) for x in (list(beta) if isinstance(beta, sp.MatrixBase) else beta)])
    return Problem("quadratic", tuple(tuple(float(x) for x in r) for r in Hn), tuple(bn))


def three_coordinate_problem() -> Problem:
    H, beta, _, _ = theory.three_coordinate_example()
    return quadratic_problem(H, beta)


def head_problem(**kw) -> Problem:
    return Problem("head", **kw)


def teacher_toy(n: int = 16, N: int = 4, d: int = 3, seed: int = 0) -> np.ndarray:
    """X of our stand-in for the Figs. 2-3 toy (d = 3, N = 4, n = 16; with the teacher κ* =
    (2, 0, 0), ν* = (1, 0.5, 0): KQ rank 1, VO rank 2, so three stages):
    ``numpy.random.default_rng(seed).standard_normal((n, N, d))``."""
    for name, val in (("n", n), ("N", N), ("d", d)):
        if int(val) != val or val < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {val}")
    return np.random.default_rng(seed).standard_normal((n, N, d))


def _head_data(problem: Problem, P_star=None) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) of a head problem, labels from the simulation's own forward pass (torch):
    Y_n = softmax(X_n M* X_nᵀ) X_n P* with M* = diag κ*, P* = diag ν* unless ``P_star``
    (a full d×d teacher VO matrix) is given.  The theory's head loss is not used here, so a
    slip in it cannot move the simulations' data."""
    X = teacher_toy(problem.n, problem.N, problem.d, problem.seed)
    Xt = torch.tensor(X, dtype=DTYPE)
    M = torch.diag(torch.tensor(problem.kappa_star, dtype=DTYPE))
    P = (torch.tensor(P_star, dtype=DTYPE) if P_star is not None and len(P_star)
         else torch.diag(torch.tensor(problem.nu_star, dtype=DTYPE)))
    A = torch.softmax(Xt @ M @ Xt.transpose(1, 2), dim=-1)
    return X, (A @ Xt @ P).numpy()


def diagonal_head(problem: Problem) -> theory.HeadProblem:
    """The theory's :class:`~theory.rank_increase.HeadProblem` of a ``head`` problem (its
    loss and analytic gradient, for Algorithm 1 and the exact log-form flow)."""
    X = teacher_toy(problem.n, problem.N, problem.d, problem.seed)
    return theory.diagonal_head_problem(X, problem.kappa_star, problem.nu_star)


def problem_loss(problem: Problem) -> Callable[[np.ndarray], float]:
    """g(w) in numpy (theory's loss for the head, the quadratic form otherwise)."""
    if problem.kind == "head":
        return diagonal_head(problem).loss
    H, b = np.array(problem.H), np.array(problem.beta)
    return lambda w: theory.quadratic_value(H, b, w)


def problem_gradient(problem: Problem) -> Callable[[np.ndarray], np.ndarray]:
    """∇g(w) in numpy (theory's analytic gradient for the head, ``H w - β`` otherwise)."""
    if problem.kind == "head":
        return diagonal_head(problem).gradient
    H, b = np.array(problem.H), np.array(problem.beta)
    return lambda w: theory.quadratic_gradient(H, b, w)


@functools.cache  # a derivation (Algorithm 1), not a run: claims and figures share it
def problem_stages(problem: Problem, *, clock_memory: bool = True, sign_constrained: bool = True,
                   lr: float = 0.0) -> tuple[theory.Stage, ...]:
    """Algorithm 1 for the problem: exact rationals for quadratics (floats at ``lr > 0``, the
    limit of GD with that step), numeric for the head.  ``clock_memory`` and
    ``sign_constrained`` select the near-miss variants of
    :func:`theory.rank_increase.quadratic_stages` (the head has no sign-constrained stage (B)
    to switch off)."""
    if problem.kind == "quadratic" and lr == 0:
        H = sp.Matrix(problem.H).applyfunc(sp.nsimplify)
        b = sp.Matrix(problem.beta).applyfunc(sp.nsimplify)
        return theory.quadratic_stages(H, b, clock_memory=clock_memory,
                                       sign_constrained=sign_constrained)
    if problem.kind == "quadratic":
        return theory.quadratic_stages(problem.H, problem.beta, clock_memory=clock_memory,
                                       sign_constrained=sign_constrained, lr=lr)
    return theory.incremental_stages(problem_loss(problem), problem.p,
                                     gradient=problem_gradient(problem),
                                     clock_memory=clock_memory, lr=lr)


def quadratic_loss_torch(H: torch.Tensor, beta: torch.Tensor) -> Callable:
    def loss(params):
        w = params["u"] * params["v"]
        return 0.5 * w @ H @ w - beta @ w

    return loss


def head_loss_torch(X: torch.Tensor, Y: torch.Tensor) -> Callable:
    """Diagonal head loss of one member: u = (w_K, w_V), v = (w_Q, w_O)."""
    n, _, d = X.shape

    def loss(params):
        w = params["u"] * params["v"]
        kappa, nu = w[:d], w[d:]
        Z = torch.einsum("nai,i,nbi->nab", X, kappa, X)
        out = torch.softmax(Z, dim=-1) @ X * nu
        return 0.5 * ((out - Y) ** 2).sum() / n

    return loss


def head_loss_weighted_torch(X: torch.Tensor, Y: torch.Tensor) -> Callable:
    """Diagonal head loss of one member on a minibatch given as per-sample weights ``c`` [n]
    (1/B on the B samples drawn, 0 elsewhere): the full-batch loss when every c_n = 1/n."""
    d = X.shape[-1]

    def loss(params, c):
        w = params["u"] * params["v"]
        kappa, nu = w[:d], w[d:]
        Z = torch.einsum("nai,i,nbi->nab", X, kappa, X)
        out = torch.softmax(Z, dim=-1) @ X * nu
        return 0.5 * (c * ((out - Y) ** 2).sum((1, 2))).sum()

    return loss


def torch_loss(problem: Problem, device) -> Callable:
    """The problem's loss of one member in torch (float64), on ``device``."""
    if problem.kind == "quadratic":
        return quadratic_loss_torch(torch.tensor(problem.H, dtype=DTYPE, device=device),
                                    torch.tensor(problem.beta, dtype=DTYPE, device=device))
    X, Y = _head_data(problem)
    return head_loss_torch(torch.tensor(X, dtype=DTYPE, device=device),
                           torch.tensor(Y, dtype=DTYPE, device=device))


def default_init(p: int, seed: int = 1) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """θ_0 = (u_0, v_0) ~ N(0, I), numpy seed ``seed`` (the toy head uses seed 1)."""
    rng = np.random.default_rng(seed)
    u, v = rng.standard_normal(p), rng.standard_normal(p)
    return tuple(float(x) for x in u), tuple(float(x) for x in v)


# ---------------------------------------------------------------------- GD ladder
@dataclass(frozen=True)
class LadderConfig:
    """GD (or Adam) from α θ_0 for every α of ``alphas``, one ensemble member per α.

    ``tau_max`` is reached by the smallest α; larger α run further in τ.  Steps are
    ``ceil(tau_max · log(1/min α)/lr)``; ``record_every`` steps between records.
    """

    problem: Problem
    alphas: tuple[float, ...] = (1e-2, 1e-3, 1e-4, 1e-6, 1e-8)
    u0: tuple[float, ...] = ()
    v0: tuple[float, ...] = ()
    lr: float = 0.01
    tau_max: float = 3.2
    record_every: int = 5
    optimizer: str = "sgd"
    batch: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.optimizer not in ("sgd", "adam", "minibatch"):
            raise ValueError(f"optimizer must be sgd, adam or minibatch, got {self.optimizer!r}")
        if self.optimizer == "minibatch" and (self.problem.kind != "head"
                                              or not 0 < self.batch <= self.problem.n):
            raise ValueError("minibatch SGD needs the head problem and 0 < batch <= n")
        if not self.alphas or any(not 0 < a < 1 for a in self.alphas):
            raise ValueError(f"alphas must lie in (0, 1), got {self.alphas}")
        if len(self.u0) != self.problem.p or len(self.v0) != self.problem.p:
            raise ValueError(f"u0 and v0 must have length p={self.problem.p}")
        if not self.lr > 0 or not self.tau_max > 0:
            raise ValueError("lr and tau_max must be > 0")

    @property
    def steps(self) -> int:
        return int(math.ceil(self.tau_max * math.log(1 / min(self.alphas)) / self.lr))


@dataclass(frozen=True)
class LadderRun:
    """``time`` [T] (t = lr·step), ``tau`` [K, T], ``loss`` [K, T], ``w`` [K, T, p],
    ``imbalance`` [K, T, p] (u² - v², computed as (u-v)(u+v)), ``s`` [K, T, p] = u + v (so
    u = (s + I/s)/2 and v = (s - I/s)/2 with I the imbalance)."""

    config: LadderConfig
    time: np.ndarray
    tau: np.ndarray
    loss: np.ndarray
    w: np.ndarray
    imbalance: np.ndarray
    s: np.ndarray
    alphas: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _ladder_smoke() -> LadderConfig:
    return LadderConfig(HEAD, alphas=(1e-2, 1e-3), u0=HEAD_INIT[0], v0=HEAD_INIT[1], lr=0.05,
                        tau_max=0.3, record_every=2)


# the full model: torch autograd on the model's own loss (the quadratic form, or the toy
# head's forward pass on its own labels, _head_data); theory gives neither data nor gradient
@run_function("rank_increase.ladder", full_model=True, smoke=_ladder_smoke)
def run_ladder(config: LadderConfig, *, device: str = "cpu") -> LadderRun:
    """All α of the ladder stacked as members of ONE :func:`numerics.ensemble.train` run."""
    device = torch.device(device)
    alphas = torch.tensor(config.alphas, dtype=DTYPE, device=device)[:, None]
    u0 = torch.tensor(config.u0, dtype=DTYPE, device=device)
    v0 = torch.tensor(config.v0, dtype=DTYPE, device=device)
    params = {"u": alphas * u0, "v": alphas * v0}
    opt = OptimizerConfig(name="adam" if config.optimizer == "adam" else "sgd")
    loss, batch_fn, gens = torch_loss(config.problem, device), None, ()
    if config.optimizer == "minibatch":  # B of the n samples, without replacement, per member
        X, Y = (torch.tensor(a, dtype=DTYPE, device=device) for a in _head_data(config.problem))
        loss, n, B = head_loss_weighted_torch(X, Y), config.problem.n, config.batch
        gens = member_generators(len(config.alphas), config.seed, device)

        def batch_fn(_step: int) -> torch.Tensor:
            c = torch.zeros(len(gens), n, dtype=DTYPE, device=device)
            for k, g in enumerate(gens):
                c[k, torch.randperm(n, generator=g, device=device)[:B]] = 1.0 / B
            return c
    traj = train(
        loss, params,
        TrainConfig(steps=config.steps, lr=config.lr, optimizer=opt,
                    record_every=config.record_every),
        batch_fn,
        generators=gens,
        observables={
            "w": lambda p: p["u"] * p["v"],
            "imbalance": lambda p: (p["u"] - p["v"]) * (p["u"] + p["v"]),
            "s": lambda p: p["u"] + p["v"],
        },
    )
    L = np.log(1 / np.asarray(config.alphas))[:, None]
    time = traj.time[0].cpu().numpy()
    return LadderRun(config, time, time[None, :] / L, traj.loss.cpu().numpy(),
                     traj.observables["w"].cpu().numpy(),
                     traj.observables["imbalance"].cpu().numpy(),
                     traj.observables["s"].cpu().numpy(), np.asarray(config.alphas))


# ---------------------------------------------------------------------- log flow
@dataclass(frozen=True)
class LogFlowConfig:
    """The log-form flow (theory.log_flow) from α θ_0 for each α, sampled on a τ grid."""

    problem: Problem
    alphas: tuple[float, ...] = (1e-4, 1e-8, 1e-16, 1e-24)
    u0: tuple[float, ...] = ()
    v0: tuple[float, ...] = ()
    tau_max: float = 3.2
    points: int = 1601
    t_grid: tuple[float, ...] = ()
    rtol: float = 1e-10
    #: keep a diverging flow's records up to the divergence (NaN after it, the time in
    #: ``LogFlowRun.diverged``) instead of refusing the run: for a check that compares the
    #: flow with the trained model record by record (the quadratic's flow only)
    until_divergence: bool = False

    def __post_init__(self) -> None:
        if self.t_grid and len(self.alphas) != 1:
            raise ValueError("t_grid (flow times) is for one alpha: tau = t / log(1/alpha)")


@dataclass(frozen=True)
class LogFlowRun:
    """``tau`` [T]; ``w``, ``b`` [K, T, p]; ``loss`` [K, T]; ``diverged`` [K]: the τ at which
    a flow run ``until_divergence`` reached :data:`ESCAPE_LOG` (NaN where it did not; its
    records from there on are NaN)."""

    config: LogFlowConfig
    tau: np.ndarray
    w: np.ndarray
    b: np.ndarray
    loss: np.ndarray
    diverged: tuple[float, ...] = ()


@functools.cache  # a derivation (one ReducedSystem per problem, its lambdify cached on it)
def _quadratic_log_system(problem: Problem):
    w = sp.symbols(f"w0:{problem.p}", real=True)
    return theory.log_flow(theory.quadratic_loss(problem.H, problem.beta, w), w)


def initial_weight_bound(u0, v0, sigma, kappa) -> np.ndarray:
    """The float64 rounding bound, relative, of w(0) = α² u0 ⊙ v0 computed from the log
    coordinates (σ, κ) by ``theory.weights_from_log``: eps (|2σ| + |2κ - 2σ| + 3) times
    the cancellation factor (u0² + v0²)/(2|u0 v0|) of (s² - r²)/4 (exp carries its
    argument's rounding eps |x|; + 3 eps for the two exps and the subtraction)."""
    u0, v0 = np.asarray(u0, dtype=float), np.asarray(v0, dtype=float)
    cond = (u0**2 + v0**2) / (2 * np.abs(u0 * v0))
    return np.finfo(float).eps * (np.abs(2 * sigma) + np.abs(2 * kappa - 2 * sigma) + 3) * cond


#: log|u ± v| at or above which a start is not a small initialisation: α|u0 ± v0| must be
#: below the unit scale of the problems, whose minimisers have |w| = O(1) (the quadratic's
#: w* = (-1/2, 1, 4/5)); every ladder here starts at α <= 1e-2, log|u ± v| <= -3.
SMALL_INIT_LOG = 0.0


def _log_start(u0, v0, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``theory.log_coordinates`` of θ(0) = α(u0, v0): the start the theory's log flow
    predicts GD from.  It is used as the theory gives it, so that the trained model judges
    the prediction a wrong map makes (the checks compare the model's own first record with
    it too, exactly: ``verify.rank_increase``).  Refused (InadmissibleTheory, a failed part
    with the reason) only where it is not a start of the paper's regime at all: not finite,
    or log|u ± v| = max(σ, κ - σ) at or above :data:`SMALL_INIT_LOG` (a sign-flipped map puts
    it near +2 log(1/α), from where the flow is stiff for minutes).

    Until 2026-12-05 any start that ``theory.weights_from_log`` did not map back to α² u0 v0
    within :func:`initial_weight_bound` was refused here, so a wrong map never reached a
    comparison with the model (issue 35: only an exact record-0 part saw it)."""
    sigma0, kappa = theory.log_coordinates(u0, v0, alpha)
    try:
        sig = np.asarray(sigma0, dtype=float)
        kap = np.asarray(kappa, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InadmissibleTheory(f"the log coordinates (theory.log_coordinates) of theta(0) at "
                                 f"alpha = {alpha:g} are not numbers: {exc}") from None
    p = np.asarray(u0, dtype=float).shape
    if sig.shape != p or kap.shape != p:
        raise InadmissibleTheory(f"the log coordinates (theory.log_coordinates) of theta(0) at "
                                 f"alpha = {alpha:g} have shapes {sig.shape}, {kap.shape}, not {p}")
    top = np.maximum(sig, kap - sig)
    if not (np.all(np.isfinite(sig)) and np.all(np.isfinite(kap))) or np.any(top >= SMALL_INIT_LOG):
        raise InadmissibleTheory(
            f"the log coordinates (theory.log_coordinates) of theta(0) at alpha = {alpha:g} "
            f"put log|u +- v| at {top.tolist()}: not a small initialisation (every entry must "
            f"be finite and below {SMALL_INIT_LOG:g}; the model starts at "
            f"{np.log(np.abs(alpha * (np.asarray(u0) + np.asarray(v0)))).tolist()} and "
            f"{np.log(np.abs(alpha * (np.asarray(u0) - np.asarray(v0)))).tolist()})")
    return sig, kap


# symbolic: integrates the theory's own log flow (theory.log_flow, log_coordinates,
# weights_from_log and, for the head, theory's analytic gradient)
@run_function("rank_increase.log_flow", full_model=False)
def run_log_flow(config: LogFlowConfig) -> LogFlowRun:
    """The log-form flow from α θ_0 for every α of the config, on its τ grid."""
    problem = config.problem
    tau = (np.asarray(config.t_grid, dtype=float) / math.log(1 / config.alphas[0])
           if config.t_grid else np.linspace(0.0, config.tau_max, config.points))
    loss = problem_loss(problem)
    tol = config.rtol
    ws, bs, ls, gone = [], [], [], []
    starts = [_log_start(config.u0, config.v0, alpha) for alpha in config.alphas]
    for alpha, (sigma0, kappa) in zip(config.alphas, starts, strict=True):
        L = math.log(1 / alpha)
        t_div = math.nan
        if problem.kind == "quadratic":
            system = _quadratic_log_system(problem)
            values = dict(zip(system.params, kappa, strict=True))
            sig, partial = None, None
            # LSODA is fastest but can return NaN silently after a sign-flipped re-entry at
            # tiny alpha (trial steps overflow e^{2kappa - 2sigma}); Radau then redoes it.
            for method in ("LSODA", "Radau"):
                try:
                    with np.errstate(over="ignore", invalid="ignore"):  # rejected trial steps
                        sol = integrate(system, sigma0, float(tau[-1]) * L, values,
                                        t_eval=tau * L, method=method, rtol=tol, atol=tol,
                                        events=(_escape(kappa),))
                except OdeError:
                    if not config.until_divergence:
                        raise
                    continue
                if sol.t_event is not None and not config.until_divergence:
                    raise _diverged(alpha, sol.t_event / L)
                if (sol.t_event is None and sol.y.shape[1] == len(tau)
                        and np.all(np.isfinite(sol.y))):
                    sig = sol.y.T
                    break
                if config.until_divergence:  # keep the finite prefix; Radau may do better
                    bad = ~np.all(np.isfinite(sol.y), axis=0)
                    k = int(np.argmax(bad)) if bad.any() else sol.y.shape[1]
                    if partial is None or k > partial[0]:
                        t_end = sol.t_event if sol.t_event is not None else (
                            float(tau[k]) * L if k < len(tau) else math.nan)
                        partial = (k, sol.y[:, :k].T, t_end / L)
            if sig is None and partial is not None:
                k, head, t_div = partial
                sig = np.full((len(tau), len(sigma0)), np.nan)
                sig[:k] = head
            if sig is None:
                if config.until_divergence:  # neither method got past the start
                    sig = np.full((len(tau), len(sigma0)), np.nan)
                    t_div = 0.0
                else:
                    raise RuntimeError(f"log flow failed at alpha={alpha:g}")
        else:
            sig = _integrate_numeric(problem_gradient(problem), sigma0, kappa, tau * L, tol)
        with np.errstate(invalid="ignore"):
            w = theory.weights_from_log(sig, kappa[None, :])
        ws.append(w)
        bs.append((sig - sigma0[None, :]) / L)
        ls.append(np.array([loss(x) if np.all(np.isfinite(x)) else math.nan for x in w]))
        gone.append(float(t_div))
    return LogFlowRun(config, tau, np.stack(ws), np.stack(bs), np.stack(ls), tuple(gone))


#: Clamp of the head's trial steps (σ and κ - σ at most this: e^{2σ} stays a float).
SIGMA_MAX = 40.0

#: log|u ± v| beyond which the log flow has left every scale of the problems (σ = log|u + v|,
#: κ - σ = log|u - v|; |w| = |e^{2σ} - e^{2(κ-σ)}|/4 ~ e^20 / 4 ~ 1e8 there, where both
#: problems' minimisers have |w| = O(1), the quadratic's w* = (-1/2, 1, 4/5)): a flow that
#: gets there diverges, which a wrong theory's loss or gradient (a sign flip: ascent) does,
#: never the paper's descent from α θ0 to its minimiser.  Not higher: an ascent on a
#: quadratic blows up in finite time, O(1/|w|) after |w|, so at |w| ~ e^80 the solver's
#: steps fall under the rounding of t and its event search fails (seen at log|u ± v| = 40).
ESCAPE_LOG = 10.0


def _escape(kappa: np.ndarray):
    """A terminal event: zero where the largest of log|u + v| = σ and log|u - v| = κ - σ
    reaches :data:`ESCAPE_LOG` (an ascent from a small start grows either one: a sign-flipped
    quadratic loss drives σ down and κ - σ up)."""
    kappa = np.asarray(kappa, dtype=float)

    def escape(_t: float, y: np.ndarray) -> float:
        return ESCAPE_LOG - float(max(np.max(y), np.max(kappa - y)))

    return escape


def _diverged(alpha: float, tau: float) -> InadmissibleTheory:
    return InadmissibleTheory(
        f"the theory's log flow diverges at alpha = {alpha:g}: log|u +- v| reaches {ESCAPE_LOG:g} "
        f"(|w| ~ e^{2 * ESCAPE_LOG:g}) at tau = {tau:.4g}, where a descent from alpha theta0 "
        "to the problem's minimiser stays at |w| = O(1)")


def _integrate_numeric(grad, sigma0, kappa, t_eval, tol: float = 1e-10) -> np.ndarray:
    """σ̇ = -∇g(w(σ, κ)) for a numeric gradient (the head), LSODA."""
    from scipy.integrate import solve_ivp

    # Trial steps of the solver may probe σ far below κ (|r| = e^{κ-σ} huge), where
    # e^{2κ-2σ} overflows; real trajectories keep |r| = O(1), i.e. σ >= κ - O(1), so the
    # clamp to [κ - 40, 40] never binds on them.
    lo = np.asarray(kappa) - SIGMA_MAX

    def rhs(_t, s):
        return -grad(theory.weights_from_log(np.clip(s, lo, SIGMA_MAX), kappa))

    escape = _escape(kappa)
    escape.terminal = True
    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), sigma0, method="LSODA", t_eval=t_eval,
                    rtol=tol, atol=tol, events=escape)
    if sol.status == 1:
        raise InadmissibleTheory(
            f"the theory's log flow diverges: log|u +- v| reaches {ESCAPE_LOG:g} at flow time "
            f"{float(sol.t_events[0][0]):.4g}, where a descent to the problem's minimiser stays "
            "at |w| = O(1)")
    if not sol.success:
        raise RuntimeError(f"log flow failed: {sol.message}")
    return sol.y.T


# ---------------------------------------------------------------------- measurements
def jump_times(tau: np.ndarray, loss: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """First τ at which ``loss`` crosses each level (linear interpolation; nan if never).

    The claims' levels are the midpoints between consecutive plateau losses of the row's
    reference tables (the first from the run's own first loss); each search starts where
    the previous crossing was found.
    """
    out = np.full(len(levels), np.nan)
    start = 0
    for k, level in enumerate(levels):
        below = np.nonzero(loss[start:] <= level)[0]
        if below.size == 0:
            break
        j = start + int(below[0])
        if j == 0:
            out[k] = tau[0]
        else:
            l0, l1 = loss[j - 1], loss[j]
            frac = (l0 - level) / (l0 - l1) if l0 != l1 else 0.0
            out[k] = tau[j - 1] + frac * (tau[j] - tau[j - 1])
        start = j
    return out


def active_count(w: np.ndarray, threshold: float) -> np.ndarray:
    """Number of coordinates with |w_i| > threshold (the diagonal rank), over the last axis."""
    return (np.abs(w) > threshold).sum(axis=-1)


def stable_rank_from_singular_values(sv: np.ndarray) -> np.ndarray:
    """‖M‖_F²/‖M‖_2² from singular values ``sv`` (largest first) over the last axis; a zero
    matrix gives 0 (its 0/0 is guarded by a floor of 1e-300 on the denominator)."""
    return (sv**2).sum(-1) / np.maximum(sv[..., 0] ** 2, 1e-300)


def stable_rank(m: np.ndarray) -> np.ndarray:
    """‖M‖_F²/‖M‖_2² over the last two axes (0 for M = 0)."""
    s = np.linalg.svd(m, compute_uv=False)
    top = s[..., 0] ** 2
    return np.where(top > 0, (s**2).sum(-1) / np.where(top > 0, top, 1.0), 0.0)


# ---------------------------------------------------------------------- full head
@dataclass(frozen=True)
class FullHeadConfig:
    """Full d×d head on the toy head's data from α θ_0 (θ_0 Gaussian, numpy seed ``seed``).

    ``P_star`` (rows of a d×d matrix) replaces the teacher's VO matrix diag ν* (a
    non-normal teacher, whose gradient at 0 has distinct singular values, eigenvalues and
    diagonal); empty: the diagonal toy teacher."""

    problem: Problem = field(default_factory=lambda: head_problem())
    alphas: tuple[float, ...] = (1e-3, 1e-6)
    seed: int = 1
    lr: float = 0.01
    tau_max: float = 3.2
    record_every: int = 10
    steps_override: int = 0
    optimizer: str = "sgd"
    P_star: tuple[tuple[float, ...], ...] = ()

    @property
    def steps(self) -> int:
        if self.steps_override:
            return self.steps_override
        return int(math.ceil(self.tau_max * math.log(1 / min(self.alphas)) / self.lr))


@dataclass(frozen=True)
class FullHeadRun:
    """``tau`` [K, T] (NaN for a member at α >= 1, where L = log(1/α) <= 0 leaves rescaled
    time undefined); singular values ``sv_kq``, ``sv_vo`` [K, T, d] of ΔW_KW_Qᵀ, ΔW_VW_Oᵀ;
    ``loss`` [K, T]; ``vo`` [K, T, d, d] the learned ΔW_VW_Oᵀ itself (its direction: the
    first-jump claim's escape direction)."""

    config: FullHeadConfig
    time: np.ndarray
    tau: np.ndarray
    loss: np.ndarray
    sv_kq: np.ndarray
    sv_vo: np.ndarray
    vo: np.ndarray | None = None


def full_head_data(config: FullHeadConfig) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) the full head of ``config`` trains on (the simulation's own labels)."""
    return _head_data(config.problem, config.P_star)


def full_head_loss_torch(X: torch.Tensor, Y: torch.Tensor) -> Callable:
    n = X.shape[0]

    def loss(params):
        M = params["WK"] @ params["WQ"].T
        P = params["WV"] @ params["WO"].T
        A = torch.softmax(X @ M @ X.transpose(1, 2), dim=-1)
        return 0.5 * ((A @ X @ P - Y) ** 2).sum() / n

    return loss


def _full_head_smoke() -> FullHeadConfig:
    return FullHeadConfig(alphas=(1e-2, 1e-3), lr=0.02, record_every=5, steps_override=20)


# the full model: the d x d head trained by torch autograd on its own loss and labels
@run_function("rank_increase.full_head", full_model=True, smoke=_full_head_smoke)
def run_full_head(config: FullHeadConfig, *, device: str = "cpu") -> FullHeadRun:
    """All α of the config stacked as members of one GD (or Adam) run of the full head."""
    X, Y = full_head_data(config)
    d = config.problem.d
    rng = np.random.default_rng(config.seed)
    base = {k: rng.standard_normal((d, d)) for k in ("WK", "WQ", "WV", "WO")}
    alphas = np.asarray(config.alphas)
    params = {k: torch.tensor(alphas[:, None, None] * v[None], dtype=DTYPE, device=device)
              for k, v in base.items()}
    M0 = np.einsum("k,ij,lj->kil", alphas**2, base["WK"], base["WQ"])
    P0 = np.einsum("k,ij,lj->kil", alphas**2, base["WV"], base["WO"])
    M0t, P0t = torch.tensor(M0, device=device), torch.tensor(P0, device=device)
    opt = OptimizerConfig(name="adam" if config.optimizer == "adam" else "sgd")
    traj = train(
        full_head_loss_torch(torch.tensor(X, dtype=DTYPE, device=device),
                             torch.tensor(Y, dtype=DTYPE, device=device)),
        params, TrainConfig(steps=config.steps, lr=config.lr, optimizer=opt,
                            record_every=config.record_every),
        observables={"M": lambda p: p["WK"] @ p["WQ"].T, "P": lambda p: p["WV"] @ p["WO"].T},
    )
    M = (traj.observables["M"] - M0t[:, None]).cpu()
    P = (traj.observables["P"] - P0t[:, None]).cpu()
    L = np.log(1 / alphas)[:, None]
    time = traj.time[0].cpu().numpy()
    # rescaled time t/L exists only for alpha < 1 (L > 0); other members get NaN on purpose
    tau = np.full((len(alphas), len(time)), np.nan)
    small = L[:, 0] > 0
    tau[small] = time[None, :] / L[small]
    return FullHeadRun(config, time, tau, traj.loss.cpu().numpy(),
                       np.linalg.svd(M.numpy(), compute_uv=False),
                       np.linalg.svd(P.numpy(), compute_uv=False), P.numpy())


# ---------------------------------------------------------------------- perturbations
@dataclass(frozen=True)
class PerturbConfig:
    """The log-form flow at one α, kicked at ``tau_perturb``: s = u + v and r = u - v are
    scaled by (1 + size·ξ), ξ ~ N(0, 1) (seed), i.e. σ += log(1 + size ξ_s), κ += log(1 +
    size ξ_s) + log(1 + size ξ_r); then continued to ``tau_end`` (the paper's Fig. 3: the
    assumptions of strict local minima and of robust stage dynamics)."""

    problem: Problem
    u0: tuple[float, ...]
    v0: tuple[float, ...]
    alpha: float = 1e-24
    tau_perturb: float = 1.7
    tau_end: float = 2.0
    size: float = 1e-2
    seed: int = 0
    points: int = 1201


@dataclass(frozen=True)
class PerturbRun:
    """``tau`` [T] from the kick on; ``w`` and ``w_perturbed`` [T, p]; ``loss`` [2, T] the
    trained model's own loss (unkicked, kicked) where the run is torch GD (None for the
    log-form flow, which has no loss of its own: the theory's g)."""

    config: PerturbConfig
    tau: np.ndarray
    w: np.ndarray
    w_perturbed: np.ndarray
    loss: np.ndarray | None = None


# symbolic: kicks and integrates the theory's own log flow with theory's analytic gradient
@run_function("rank_increase.perturb", full_model=False)
def run_perturbation(config: PerturbConfig) -> PerturbRun:
    """The log-form flow to the kick, then the unperturbed and the kicked flow on."""
    sigma0, kappa = _log_start(config.u0, config.v0, config.alpha)
    L = math.log(1 / config.alpha)
    grad = problem_gradient(config.problem)
    sig = _integrate_numeric(grad, sigma0, kappa, np.array([0.0, config.tau_perturb * L]))[-1]
    rng = np.random.default_rng(config.seed)
    xi_s = rng.standard_normal(sig.shape) * config.size
    xi_r = rng.standard_normal(sig.shape) * config.size
    kicked = (sig + np.log1p(xi_s), kappa + np.log1p(xi_s) + np.log1p(xi_r))
    t = np.linspace(0.0, (config.tau_end - config.tau_perturb) * L, config.points)
    out = []
    for s0, k0 in ((sig, kappa), kicked):
        traj = _integrate_numeric(grad, s0, k0, t)
        out.append(theory.weights_from_log(traj, k0[None, :]))
    return PerturbRun(config, config.tau_perturb + t / L, out[0], out[1])


# ---------------------------------------------------------------------- GD perturbations
@dataclass(frozen=True)
class GdPerturbConfig:
    """Torch GD of ``problem`` from α θ_0 (the ladder's start, one α), kicked at
    ``tau_perturb``: u and v are scaled entrywise by (1 + size·ξ_u) and (1 + size·ξ_v),
    ξ ~ N(0, 1) (numpy ``seed``); then the kicked and the unkicked model are trained on, side
    by side (two members of one run), to ``tau_end``.  The trained-model counterpart of
    :class:`PerturbConfig` (the paper's Fig. 3)."""

    problem: Problem
    u0: tuple[float, ...]
    v0: tuple[float, ...]
    alpha: float = 1e-12
    lr: float = 0.01
    tau_perturb: float = 1.7
    tau_end: float = 2.0
    size: float = 1e-2
    seed: int = 0
    record_every: int = 5

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1 or not self.lr > 0:
            raise ValueError("alpha must lie in (0, 1) and lr be > 0")
        if not 0 <= self.tau_perturb < self.tau_end:
            raise ValueError("need 0 <= tau_perturb < tau_end")

    @property
    def kick_step(self) -> int:
        return int(round(self.tau_perturb * math.log(1 / self.alpha) / self.lr))

    @property
    def steps_after(self) -> int:
        return int(math.ceil(self.tau_end * math.log(1 / self.alpha) / self.lr)) - self.kick_step


def _gd_perturb_smoke() -> GdPerturbConfig:
    return GdPerturbConfig(HEAD, *HEAD_INIT, alpha=1e-2, lr=0.05, tau_perturb=0.1,
                           tau_end=0.2, record_every=2)


# the full model: the ladder's GD (torch autograd on the model's own loss), kicked in (u, v)
@run_function("rank_increase.gd_perturb", full_model=True, smoke=_gd_perturb_smoke)
def run_gd_perturbation(config: GdPerturbConfig, *, device: str = "cpu") -> PerturbRun:
    """GD to the kick (one member), then the unkicked and the kicked model on (two members);
    ``tau`` from the kick on, as for :func:`run_perturbation`."""
    device = torch.device(device)
    loss = torch_loss(config.problem, device)
    a = config.alpha
    start = {"u": a * torch.tensor([config.u0], dtype=DTYPE, device=device),
             "v": a * torch.tensor([config.v0], dtype=DTYPE, device=device)}
    before = train(loss, start, TrainConfig(steps=config.kick_step, lr=config.lr,
                                            record_every=max(1, config.kick_step)))
    rng = np.random.default_rng(config.seed)
    xi = {k: torch.tensor(1.0 + config.size * rng.standard_normal(config.problem.p),
                          dtype=DTYPE, device=device) for k in ("u", "v")}
    pair = {k: torch.cat([v, v * xi[k]]) for k, v in before.params.items()}
    after = train(loss, pair, TrainConfig(steps=config.steps_after, lr=config.lr,
                                          record_every=config.record_every),
                  observables={"w": lambda p: p["u"] * p["v"]})
    w = after.observables["w"].cpu().numpy()
    tau = config.tau_perturb + after.time[0].cpu().numpy() / math.log(1 / a)
    return PerturbRun(config, tau, w[0], w[1], after.loss.cpu().numpy())


# ---------------------------------------------------------------------- standard runs
QUAD = three_coordinate_problem()
HEAD = head_problem()
QUAD_INIT = tuple(tuple(x) for x in theory.three_coordinate_example()[2:])
HEAD_INIT = default_init(HEAD.p, seed=1)

# The α ladder of the paper's Fig. 2a legend as read from a third-party copy of the figure
# (unverified; the paper's own text was not available).  The thorough GD ladders use it:
# L = log(1/α) = 4.6, 9.2, 18.4, 36.8, 73.7.  Float64 GD resolves α = 1e-32 (w = α² u0 v0
# ~ 1e-64, far above the float64 underflow at 1e-308).
FIG2_ALPHAS = (1e-2, 1e-4, 1e-8, 1e-16, 1e-32)

# One size table for the claims and the figures (numerics.context.SizeTable: ci falls back
# to quick, thorough to ci).  ``test`` is the test suite's smoke size (the quadratic GD ladder
# then covers its first two stages only, τ to 3.0 so that the model's own second jump, at
# τ = 2.35 for α = 1e-8, falls inside 90 % of the run and its first plateau is read);
# ``quick`` the default verification.
#
# * GD ladders: Richardson uses the three smallest α, evenly spaced in L = 9.2, 18.4, 27.6
#   (quick).  ``thorough`` uses the Fig. 2a ladder FIG2_ALPHAS (Richardson then on L = 36.8,
#   73.7, its error bar the pair 18.4, 36.8).  The paper's toy learning rate, step count and
#   sizes are not known to us, so the GD rates and τ windows stay the quick ones (the claims
#   carry the O(lr) shift exactly; a rate small against the Hessian, lr <= 1e-3/|Hessian of g|,
#   would need millions of steps for the τ window at α = 1e-32).
# * Adam ladder (head): lr 1e-3 (the Adam rate of the experiments the reviewers asked about)
#   from the same α θ_0, α = 1e-2 ... 1e-4; Adam's steps move every parameter by ~lr whatever
#   its gradient, so the run is sized in steps (1200 at quick: the loss is below 2 % of g(0)
#   by then), one record every 10 steps.  ``tau_max`` only sets that step count here.
# * Staircase GD ladders: the GD ladder's rate and window at the Fig. 2a alphas from quick on
#   (the paper's own list; the staircase claim's notes give the quick run at the quick
#   ladder's alphas, where the quadratic's extrapolation could not decide), the test ladder's
#   at test.
# * Minibatch SGD ladder (head; the reviewers' SGD arm of the Adam question): the GD ladder's
#   α, rate (0.01 at quick: the paper's toy rate is unknown, so the GD arm's) and τ window,
#   each step on B = 4 of the n = 16 samples drawn without replacement (our choice: a quarter
#   of the data, noisy enough to differ from GD), member k's draws from generator seed + k.
# * Full head with a non-normal teacher VO matrix (the first-jump claim): the τ window covers
#   the first escape (T_1 < 1) and its finite-α delay at α = 1e-2.
# * One member per α; nothing is statistical over seeds (θ_0 fixed: the worked example's, and
#   N(0, I) with numpy seed 1 for the head).
# * Exact (log-form) flows: quadratic down to α = 1e-64, head down to 1e-24; deterministic
#   ODEs, so thorough keeps the quick sizes, as for the perturbation runs.
# * Full d×d head: thorough adds α = 1e-12, the scale at which our bridge test first saw the
#   rank sequence (0,0) -> (0,1) -> (1,1) -> (1,2); lr and τ window as quick.
# * Scale sweep (the Fig. 7 analogue: post-training stable rank against the init scale): a
#   fixed number of steps from scales 1e-3 ... 1; thorough (steps 0 = the τ window 3.2, i.e.
#   ceil(3.2 log(1e3)/0.01) = 2211 steps) trains until the smallest scale has finished every
#   stage of Algorithm 1 (T_3 = 2.40 on the toy; quick's 1500 steps stop at t = 15 <
#   T_3 log(1e3) = 16.6).  Fig. 7 itself is ViT/CIFAR-10 with Adam; the toy keeps GD.
# * imbalance: the τ window of the one-member GD run (α = 1e-2, every step recorded) of the
#   imbalance claim, doubled for the quadratic.
# * GD perturbations (Fig. 3 on the trained head): alpha = 1e-24 (the exact flow's kicks'
#   alpha, L = 55.3) and lr 0.01 (the head ladder's rate) at test and quick, about 27 000
#   steps of a six-parameter model; thorough the Fig. 2a ladder's 1e-32.  The return is
#   extrapolated from records a third of the window after the kick or jump; its bias is
#   quadratic in the deviation left there, ~ exp(-2 lambda dtau L / 3) with the slowest rate
#   lambda = 0.21 of the second plateau, so each doubling of L divides it by about 10 on the
#   stage-start window (dtau = 0.59).  Earlier sizes and their runs (alpha = 1e-8, then
#   1e-12: the quick head ladder's) are in verify.rank_increase.check_perturbations' notes.
SIZES = SizeTable({
    "ladder_quadratic": {
        "test": {"alphas": (1e-2, 1e-4, 1e-8), "lr": 0.05, "tau_max": 3.0, "record_every": 2},
        "quick": {"alphas": (1e-2, 1e-4, 1e-8, 1e-12), "lr": 0.02, "tau_max": 6.8,
                  "record_every": 5},
        "thorough": {"alphas": FIG2_ALPHAS, "lr": 0.02, "tau_max": 6.8, "record_every": 5},
    },
    "ladder_head": {
        "test": {"alphas": (1e-2, 1e-4, 1e-8), "lr": 0.02, "tau_max": 1.5, "record_every": 2},
        "quick": {"alphas": (1e-2, 1e-4, 1e-8, 1e-12), "lr": 0.01, "tau_max": 2.8,
                  "record_every": 5},
        "thorough": {"alphas": FIG2_ALPHAS, "lr": 0.01, "tau_max": 2.8, "record_every": 5},
    },
    "ladder_adam": {
        "test": {"alphas": (1e-2, 1e-3, 1e-4), "lr": 1e-3, "tau_max": 0.065, "record_every": 10},
        "quick": {"alphas": (1e-2, 1e-3, 1e-4), "lr": 1e-3, "tau_max": 0.13, "record_every": 10},
    },
    "staircase_gd": {"test": {"alphas": (1e-2, 1e-4, 1e-8)}, "quick": {"alphas": FIG2_ALPHAS}},
    "minibatch": {"test": {"batch": 4, "seed": 0}, "quick": {"batch": 4, "seed": 0}},
    "log_flow_quadratic": {
        "test": {"alphas": (1e-4, 1e-8, 1e-16, 1e-24), "tau_max": 58.0, "points": 11601},
        "quick": {"alphas": (1e-4, 1e-6, 1e-8, 1e-12, 1e-16, 1e-24, 1e-64), "tau_max": 58.0,
                  "points": 23201},
    },
    "log_flow_head": {
        "test": {"alphas": (1e-8, 1e-12, 1e-24), "tau_max": 3.2, "points": 1601},
        "quick": {"alphas": (1e-4, 1e-6, 1e-8, 1e-12, 1e-16, 1e-24), "tau_max": 3.2,
                  "points": 3201},
    },
    "full_head": {
        "test": {"alphas": (1e-2, 1e-3), "lr": 0.02, "record_every": 5},
        "quick": {"alphas": (1e-2, 1e-3, 1e-6), "lr": 0.01, "record_every": 5},
        "thorough": {"alphas": (1e-2, 1e-3, 1e-6, 1e-12), "lr": 0.01, "record_every": 5},
    },
    "full_head_nonnormal": {
        "test": {"alphas": (1e-2, 1e-3), "lr": 0.02, "tau_max": 1.6, "record_every": 5},
        "quick": {"alphas": (1e-2, 1e-3, 1e-6), "lr": 0.01, "tau_max": 1.6, "record_every": 5},
        "thorough": {"alphas": (1e-2, 1e-3, 1e-6, 1e-12), "lr": 0.01, "tau_max": 1.6,
                     "record_every": 5},
    },
    "scale_sweep": {
        "test": {"lr": 0.02, "steps_override": 400},
        "quick": {"lr": 0.01, "steps_override": 1500},
        "thorough": {"lr": 0.01, "steps_override": 0},
    },
    "small_init_head": {
        "test": {"alphas": (1e-24,), "lr": 0.02, "tau_max": 3.2, "record_every": 50},
        "quick": {"alphas": (1e-24,), "lr": 0.01, "tau_max": 3.2, "record_every": 50},
        "thorough": {"alphas": (1e-24,), "lr": 0.01, "tau_max": 3.2, "record_every": 50},
    },
    "imbalance": {"test": {"tau_max": 1.5}, "quick": {"tau_max": 3.0}},
    "gd_limit": {"test": {"alpha": 1e-2, "records": 25}, "quick": {"alpha": 1e-2, "records": 100}},
    "perturbation": {"test": {"alpha": 1e-16, "points": 401},
                     "quick": {"alpha": 1e-24, "points": 1201}},
    "gd_perturbation": {"test": {"alpha": 1e-24, "lr": 0.01, "record_every": 5},
                        "quick": {"alpha": 1e-24, "lr": 0.01, "record_every": 5},
                        "thorough": {"alpha": 1e-32, "lr": 0.01, "record_every": 5}},
})
SCALE_SWEEP_ALPHAS = (1e-3, 1e-2, 0.1, 0.3, 1.0)


def _problem_and_init(name: str) -> tuple[Problem, tuple[tuple[float, ...], tuple[float, ...]]]:
    if name not in ("quadratic", "head"):
        raise ValueError(f"name must be 'quadratic' or 'head', got {name!r}")
    return (QUAD, QUAD_INIT) if name == "quadratic" else (HEAD, HEAD_INIT)


def standard_ladder(name: str, profile: str = "quick", optimizer: str = "sgd") -> LadderConfig:
    """The α ladder of ``name`` at ``profile`` (:data:`SIZES`), shared by the claims and the
    figures (same config: same cache entry); ``optimizer="adam"`` the Adam ladder,
    ``"minibatch"`` the GD ladder's α, rate and window under minibatch SGD."""
    problem, (u0, v0) = _problem_and_init(name)
    if optimizer == "adam":
        return LadderConfig(problem, u0=u0, v0=v0, optimizer="adam",
                            **SIZES.at("ladder_adam", profile))
    gd = LadderConfig(problem, u0=u0, v0=v0, **SIZES.at(f"ladder_{name}", profile))
    if optimizer == "minibatch":
        return replace(gd, optimizer="minibatch", **SIZES.at("minibatch", profile))
    return gd


def standard_staircase_ladder(name: str, profile: str = "quick") -> LadderConfig:
    """The GD ladder of ``name`` at the staircase claim's alphas (:data:`SIZES`)."""
    return replace(standard_ladder(name, profile), **SIZES.at("staircase_gd", profile))


def standard_imbalance_run(name: str, profile: str = "quick") -> LadderConfig:
    """One member (α = 1e-2, where the imbalance I = O(α²) is resolved in float64) of the GD
    ladder of ``name``, recorded at every step, for the imbalance claim."""
    tau = SIZES.at("imbalance", profile)["tau_max"] * (1.0 if name == "head" else 2.0)
    return replace(standard_ladder(name, profile), alphas=(1e-2,), record_every=1, tau_max=tau)


def gd_limit_ladders(name: str, profile: str = "quick") -> tuple[LadderConfig, ...]:
    """GD of ``name`` from alpha theta_0 at one alpha (SIZES ``gd_limit``) with steps h, h/2,
    h/4 (h and tau_max those of :func:`standard_ladder`), recorded every R, 2R, 4R steps so
    that the three share the record times t = h R j (about ``records`` of them)."""
    base = standard_ladder(name, profile)
    size = SIZES.at("gd_limit", profile)
    alpha = size["alpha"]
    R = max(1, round(base.tau_max * math.log(1 / alpha) / (base.lr * size["records"])))
    return tuple(replace(base, alphas=(alpha,), lr=base.lr / m, record_every=R * m)
                 for m in (1, 2, 4))


def gd_limit_flow(name: str, alpha: float, times, rtol: float = 1e-10) -> LogFlowConfig:
    """The log-form flow of ``name`` from alpha theta_0 sampled at the flow times ``times``
    (kept up to a divergence: the check compares it with GD record by record)."""
    problem, (u0, v0) = _problem_and_init(name)
    return LogFlowConfig(problem, alphas=(alpha,), u0=u0, v0=v0,
                         t_grid=tuple(float(t) for t in times), rtol=rtol,
                         until_divergence=True)


def standard_log_flow(name: str, profile: str = "quick") -> LogFlowConfig:
    """Exact (log-form) flows of ``name`` at ``profile`` (:data:`SIZES`)."""
    problem, (u0, v0) = _problem_and_init(name)
    return LogFlowConfig(problem, u0=u0, v0=v0, **SIZES.at(f"log_flow_{name}", profile))


def standard_full_head(profile: str = "quick") -> FullHeadConfig:
    """The full d×d head at ``profile`` (:data:`SIZES`)."""
    return FullHeadConfig(**SIZES.at("full_head", profile))


#: The non-normal teacher VO matrix of the first-jump claim: its gradient at 0 has top
#: singular value, spectral radius, largest diagonal entry and Frobenius norm far apart.
P_NONNORMAL = ((0.0, 1.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.5))


def standard_full_head_nonnormal(profile: str = "quick") -> FullHeadConfig:
    """The full d×d head with the non-normal teacher :data:`P_NONNORMAL` (:data:`SIZES`)."""
    return FullHeadConfig(P_star=P_NONNORMAL, **SIZES.at("full_head_nonnormal", profile))


def standard_scale_sweep(profile: str = "quick") -> FullHeadConfig:
    """The full head trained a fixed number of steps from init scales 1e-3 ... 1 (the Fig. 7
    analogue; sizes in :data:`SIZES`)."""
    return FullHeadConfig(alphas=SCALE_SWEEP_ALPHAS, record_every=50,
                          **SIZES.at("scale_sweep", profile))


def standard_small_init_head(profile: str = "quick") -> FullHeadConfig:
    """The full head at one small scale (alpha = 1e-24, L = 55.3, the GD kicks' alpha),
    trained to rescaled time 3.2, past the toy head's last jump: the stable-rank claim's
    small-init limit (sizes in :data:`SIZES`).  The scale sweep's smallest member (1e-3) is
    the Fig. 7 trend's, a fixed number of steps from each scale; its L = 6.9 leaves the
    learned block visibly short of Algorithm 1's plateau."""
    return FullHeadConfig(**SIZES.at("small_init_head", profile))


#: The toy head's jump times as our Algorithm 1 printed them to 5 decimals when the row was
#: built (not the paper's numbers: the paper prints no table for its toy): the row's
#: reference table (``verify.rank_increase.TABLE_TOY_HEAD``, which the algorithm1_tables
#: claim compares with theory/).  The perturbation kicks are planned on it, so no theory under test moves
#: a kick (issue 35: with the kicks at Algorithm 1's GD-rate T_k, a slip in
#: theory.gd_escape_rate moved every kick and no part could reject it).
HEAD_REFERENCE_T = (0.88194, 1.00983, 2.40234)


def _kick_plan() -> dict[str, dict[str, float]]:
    """The two kicks on :data:`HEAD_REFERENCE_T`: ``mid`` halfway through the second
    plateau (to 0.25 after it), ``start`` 0.1 after the second jump (to 0.6 after the
    third)."""
    T = HEAD_REFERENCE_T
    mid = 0.5 * (T[1] + T[2])
    return {"mid": {"tau_perturb": mid, "tau_end": mid + 0.25, "seed": 0},
            "start": {"tau_perturb": T[1] + 0.1, "tau_end": T[2] + 0.6, "seed": 1}}


def standard_perturbations(profile: str = "quick") -> dict[str, PerturbConfig]:
    """The two kicks of the toy head (Fig. 3): ``mid``, mid-plateau of stage 2 (seed 0), and
    ``start``, 0.1 after the start of stage 2 (seed 1), planned on the reference table's
    T_k (:func:`_kick_plan`)."""
    base = PerturbConfig(HEAD, *HEAD_INIT, **SIZES.at("perturbation", profile))
    return {key: replace(base, **plan) for key, plan in _kick_plan().items()}


def standard_gd_perturbations(profile: str = "quick") -> dict[str, GdPerturbConfig]:
    """The two kicks of :func:`standard_perturbations` (the same plan, :func:`_kick_plan`)
    applied to the trained toy head (sizes in :data:`SIZES`; ``mid`` seed 0, ``start`` seed
    1).  At the GD rate and a finite alpha the model's own jumps come later than the table's
    flow T_k (the O(lr) and O(1/L) shifts); the perturbation claim records the model's own
    next jump beside the kicks."""
    base = GdPerturbConfig(HEAD, *HEAD_INIT, **SIZES.at("gd_perturbation", profile))
    return {key: replace(base, **plan) for key, plan in _kick_plan().items()}
