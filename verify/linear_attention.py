"""Claims of Ahn et al., *Linear attention is (maybe) all you need (to understand Transformer
optimization)* (ICLR 2024), with its companions AhnPGD (Ahn, Cheng, Daneshmand, Sra, NeurIPS
2023) and ZFB (Zhang, Frei, Bartlett, JMLR 2024).

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory``
and ``control`` are the keyword arguments that make the one check test the paper's theory
and a near-miss wrong one.  Every check returns named parts (``verify.claims.Part``).
Deterministic parts compare exact quantities; statistical parts carry an interval at 99 %
(Student-t over seeds for orderings, normal for Monte Carlo means with measured standard
errors, Student-t over model seeds for Hill indices).  Tolerances are model-mismatch allowances, each derived
next to its part:

* exact identities: float64 rounding bounds (Lemma 1's forward pass: the error in units
  of the prompt's own forward-error growth, so the tolerance is the example's rounding
  constant);
* trained parameters (one-layer optimum, multilayer floor): the exact excess loss at the
  trained parameters (``theory.linear_attention.one_layer_loss`` / ``gd_loss``) bounds
  their distance to a claimed minimiser through the loss's curvature, so the allowance
  shrinks as training converges and needs no constant (an allowance about the claimed
  point by design, declared with ``verify.claims.tolerance_from_theory``); "training
  reached the optimum" and "Monte Carlo value = closed form" use 1 % of the value
  (:data:`PRECISION`), held as a relative error so that the tolerance is the same for
  check and control, with sampling noise in the interval;
* fitted preconditioners (A ~ Sigma^-1): the fit's own sampling law, the sandwich
  covariance of the P-prompt minimiser about the population one, through the chi-square
  99 % point of the weighted residual (the same for check and control);
* ZFB tracking and end state (balanced flow): torch GD (member mean) against the discrete
  GD map of the flow under test, within a bound on the noise-induced drift of the mean
  (second order in the fluctuations, from the members' recorded moments and the full
  model's curvature; the same allowance for check and control); the flow's own limit
  against the claimed (u_inf, Gamma*), up to the flow's remaining motion (the flow under
  test's own, declared with ``verify.claims.tolerance_from_theory``);
* orderings (the optimiser and noise claims): tolerance 0 on the claimed sign, with a
  seed-level interval (``verify.error_models.signed_over_seeds``: a result tied to one seed
  is not a finding).

Sizes come from the profile, through the row's one table ``numerics.linear_attention.SIZES``
(read by the figures too): ``test`` runs every check at smoke size through the same code;
``quick`` is the default verification; ``ci`` runs the optimiser comparison at the paper's
6 seeds and 1250 iterations.  ``thorough`` runs each simulation at the paper's own
configuration as far as the paper and the authors' code give it (sources next to each
entry of ``SIZES``): the optimiser comparison at the authors' 10 000 iterations, batch 1000
and README rates with the seeds of its power calculation (:func:`comparison_seeds_needed`;
each drawn example another replication); the noise histograms at the authors' 10 000 minibatches of 1000 prompts
(g_full from 1e5), the depth claim over ci's model seeds (:func:`depth_seeds_needed`); the B = 0 family at 10 000 Adam
steps, AhnPGD's batch 20 000 and the paper's 6 seeds (no interval over members there; rate
and step decay ci's); the ZFB flow at ci's
configuration with 1000 members; the L-BFGS fits as ci.  It is sized for one GPU
(``member_chunk`` from memory measured on CPU) and its outcomes are unmeasured, so
``expected`` is ci's.  Simulations run through ``numerics.linear_attention.run_*`` (frozen
configs, one run cache), so ``tdcheck figures`` after ``tdcheck verify`` at the same profile
retrains nothing it ran.

Choices where the paper is ambiguous: the comparison claims are judged at the protocol's
own iterations (from it. 500, at 750 and 1250, from it. 250); a run that stops earlier
measures nothing about them, and its parts say "not measured" (inconclusive), so a
shortened run never stands in for the finding.  The generalised-smoothness trend is judged
after removing a cubic trend in the iteration from both series (partial correlation), so
the common decay of both along training is not counted as association.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import linear_attention as nl
from numerics import measure
from numerics.context import PROFILES
from numerics.ode import integrate
from numerics.stats import (
    median_sign_power,
    normal_quantile,
    samples_for_power,
    samples_for_sign_power,
    t_interval_power,
    t_quantile,
)
from theory import linear_attention as la
from theory.flow import InadmissibleTheory, lambdify_numeric
from verify.claims import (
    Claim,
    Context,
    Evidence,
    Example,
    Part,
    Positive,
    PowerPlan,
    claim,
    declared,
    tolerance_from_theory,
)
from verify.error_models import signed_median_over_seeds, signed_over_seeds

EPS = float(np.finfo(np.float64).eps)
# 1 % of the value: the precision of AhnPGD's Monte Carlo floors and of the Monte Carlo
# checks of the closed forms in our derivation, the finest a trained model is held to.
PRECISION = 0.01
__all__ = [
    "BALANCED_FLOW_PILOT",
    "COMPARISON_CONFIDENCE",
    "COMPARISON_PILOT",
    "COMPARISON_POWER",
    "CORRELATED_LOSS_TOLERANCE",
    "DEPTH_FIRST_SEED",
    "DEPTH_PILOT",
    "FIT_CALIBRATED_PROMPTS",
    "FLOOR_EVAL_PILOT",
    "FLOOR_EVAL_PILOTS",
    "FLOOR_MIN_STEPS",
    "MEDIAN_PARTS",
    "PAPER_RMED_RATIO",
    "PRECISION",
    "TAIL_FIRST_SEED",
    "TAIL_PILOT",
    "adam_gap",
    "balanced_flow_control_members",
    "balanced_flow_members",
    "balanced_flow_power",
    "balanced_flow_scale_members",
    "check_adam_beats_sgd",
    "check_balanced_flow",
    "check_condition_number_ratio",
    "check_directional_smoothness",
    "check_gd_emulation",
    "check_generalised_smoothness",
    "check_heavy_tailed_noise",
    "check_heavy_tailed_noise_depth",
    "check_moment_identity",
    "check_multilayer_floor",
    "check_one_layer_optimum",
    "check_preconditioner_inverse_cov",
    "check_softmax_carries_over",
    "claims",
    "comparison_power",
    "comparison_power_at",
    "comparison_seeds_needed",
    "condition_parts",
    "depth_power",
    "depth_seeds_needed",
    "design_synthetic",
    "equal_step_optimum",
    "excess_bound",
    "floor_eval_prompts_needed",
    "generalised_part",
    "heavy_tailed",
    "log_normal_mean_log",
    "n_plus_one_floor",
    "null_control_power",
    "one_layer_loss_setting1",
    "planning_effect",
    "planning_negative",
    "ridge_slipped_preconditioners",
    "segment_curvature",
    "sigma_n_dropped_loss",
    "sigma_n_dropped_preconditioner",
    "smoothness_part",
    "synthetic_noise",
    "synthetic_noise_ci",
    "synthetic_run",
    "tail_positive_seeds",
    "tail_power",
    "tail_seeds_needed",
    "trace_allowance",
]

_SEEDS = st.integers(0, 9_999)  # below the runs' 10 000-wide stream offsets
_SYNTHETIC = ("a synthetic 6-seed run with the effect built in at a published size "
              "(log-normal seed noise s.d. 0.3)")
_POWER_NOTE = (
    "Power (comparison_seeds_needed, beside the claims), registered after the pilot, the first "
    "ci run of these claims at 6750882, whose intervals did not decide: with the paper's "
    "effect where it gives one and the pilot's spread, the paper's 6 seeds decide the claim "
    "with power below 0.9 (comparison_power_at), so ci expects inconclusive; thorough runs "
    "140 seeds, the calculation's largest count over the four comparison claims' parts "
    "(the eigenvalue ratio in Setting 3 at it. 1250), and expects the paper's holds. ")
_COMPARISON_NOTE = (
    "Budget: the claim is about the authors' protocol (3 layers, batch 1000, README rates). "
    "--profile ci runs the paper's 6 seeds for 1250 of their 10 000 its (windows its. "
    "250-1250); --profile thorough runs their full 10 000 its with the power calculation's "
    "seeds (Adam gap over its. 500-10 000, smoothness over its. 250-1950; sized for a GPU). quick and test run a 20-it "
    "smoke run, which reaches none of the windows, so every part is reported as not measured "
    "(inconclusive): a shortened run must not stand in for the finding. Each seed is scored "
    "on its own evaluation batch (both optimisers of a seed on the same one), so the interval "
    "over seeds carries the evaluation batch's own error.")


# The empirical core (the optimiser and noise claims consume no theory): each says
# "empirical" in its statement, and its negative control is the null a powered check must
# reject, not the mirror ordering.  With a tolerance-0 sign part the control that claims
# "the statistic is at most 0" fails exactly when the interval over seeds lies above 0, so
# it is the one-sided null "no difference" (H0: effect <= 0): rejected when, and only when,
# the data decide the paper's sign; the seeds that decide it are the claims' power
# calculations (comparison_seeds_needed, depth_seeds_needed).  Where the paper prints an
# effect size (the R_med ratios of Fig. 2 row 3) the null is half that effect
# (:func:`null_control_power`).  Their claim kind is "empirical" (verify.claims.Kind).
_EMPIRICAL_NOTE = (
    "Empirical: this claim consumes no theory function (the paper's own measurement, "
    "replicated); its negative control is the null a powered check must reject. ")
#: Why a refuted empirical claim's null control reads n/a, and what stands in for it.
_REFUTED_NULL_NOTE = (
    "Its thorough run (results/thorough/linear_attention, commit a699076) refuted it, so the "
    "runner records its null control n/a: a control is judged only against a part that "
    "passed where the claim holds.  What that run says in its place, part by part: each "
    "part that passed has its 99 % interval over seeds on the claimed side of 0, the "
    "failing part's lies on the other side, and the inconclusive ones contain 0 (the "
    "report lists each).  ")
_NULL_CONTROL = ("the null, no difference: each part claims the statistic is at most 0 "
                 "(sign -1, tolerance 0), so it fails, rejecting the null, exactly when the "
                 "interval over seeds lies above 0")


def _slow(expected: str = "holds", kind: str = "empirical",
          measured_at: str = "ci") -> dict:
    """The fields every optimiser-comparison and noise claim shares: one slow pinned example
    (seed 0, the run the figures draw), seeds drawn from 1-1000.

    A claim the quick budget cannot settle (``expected="inconclusive"``) is measured at
    ``ci`` (``measured_at``), the smallest budget that runs the protocol's windows with the
    paper's 6 seeds; there, and at ``thorough``, the expected outcome is the paper's own
    statement (``holds``), registered before any run of that profile.  Where the power
    calculation (:func:`comparison_seeds_needed`) shows that 6 seeds cannot decide it
    (``measured_at="thorough"``), ci expects inconclusive and thorough, with the
    calculation's seeds, the paper's holds.  An open question
    (``expected="open"``) stays open everywhere, but is still measured at ``ci``."""
    fields = {"kind": kind, "strategy": st.fixed_dictionaries({"seed": st.integers(1, 1000)}),
              "expected": expected, "cost": "slow",
              "examples": (Example({"seed": 0}, via="seed 0: the run the row's figures draw"),)}
    if expected == "inconclusive" and measured_at == "thorough":
        # the power calculation (comparison_seeds_needed) puts the decision at thorough
        fields |= {"expected_at": {"thorough": "holds"}, "measured_at": "thorough"}
    elif expected == "inconclusive":
        fields |= {"expected_at": {"ci": "holds", "thorough": "holds"}, "measured_at": "ci"}
    elif expected == "open":
        fields |= {"measured_at": "ci"}
    return fields


def _synthetic(description: str, **theory) -> Positive:
    """The positive control of an optimiser claim: its own check on :func:`synthetic_run`
    (at the design's seeds where a part is judged on the median: :func:`design_synthetic`)."""
    return Positive({"seed": 0}, f"the same check on {_SYNTHETIC}: {description}",
                    theory={"sign": 1, "source": synthetic_run, **theory})


def design_synthetic(claim_id: str) -> Callable[..., nl.ComparisonResult]:
    """:func:`synthetic_run` with, for a median part (:data:`MEDIAN_PARTS`), the seeds the
    power calculation gives it (a median needs at least 8 for a 99 % interval), else 6."""
    def source(setting: str, seed: int, ctx: Context, attention: str = "linear"
               ) -> nl.ComparisonResult:
        seeds = (comparison_seeds_needed()[(claim_id, setting)]
                 if (claim_id, setting) in MEDIAN_PARTS else 6)
        return synthetic_run(setting, seed, ctx, attention, seeds=seeds)
    return source


# ---------------------------------------------------------------------- moment identity
@st.composite
def _moment_params(draw):
    d = draw(st.integers(2, 4))
    entries = st.floats(-1, 1, allow_nan=False)
    root = np.array(draw(st.lists(entries, min_size=d * d, max_size=d * d))).reshape(d, d)
    a = np.array(draw(st.lists(entries, min_size=d * d, max_size=d * d))).reshape(d, d)
    return {"sigma": (root @ root.T + 0.2 * np.eye(d)).round(6).tolist(),
            "A": a.round(6).tolist()}


def _wrong_moment4(sigma, a):
    """Control: the Sigma A^T Sigma term dropped (a wrong pairing count)."""
    s, a = sp.Matrix(sigma), sp.Matrix(a)
    return s * a * s + (a * s).trace() * s


@claim(
    statement="E[x x^T A x x^T] = Sigma A Sigma + Sigma A^T Sigma + tr(A Sigma) Sigma "
              "for x ~ N(0, Sigma)",
    source="Isserlis' theorem (our derivation; used by ZFB and AhnPGD)",
    kind="symbolic",
    strategy=_moment_params(),
    theory={"moment": la.moment4},
    control={"moment": _wrong_moment4},
    control_description="the Sigma A^T Sigma term dropped",
    examples=(Example({"sigma": [[1.0, 0.3], [0.3, 0.5]], "A": [[1.0, 2.0], [0.0, -1.0]]},
                      via="a correlated Sigma and a non-symmetric A (the Sigma A^T Sigma "
                          "term differs from Sigma A Sigma)"),),
    notes="Checked against exact Gauss-Hermite quadrature (deterministic) instead of "
          "Monte Carlo: the integrand is a degree-4 polynomial.",
)
def check_moment_identity(params: dict, ctx: Context, *, moment: Callable) -> Evidence:
    """The closed form against Gauss-Hermite quadrature, which is exact for this degree-4
    integrand (``numerics.linear_attention.gaussian_quadrature_moment4``): a deterministic
    part."""
    sigma, a = np.array(params["sigma"]), np.array(params["A"])
    theory = _theory_array("moment4", moment, sp.Matrix(sigma), sp.Matrix(a),
                           shape=sigma.shape)
    quad = nl.gaussian_quadrature_moment4(sigma, a)
    scale = float(np.abs(quad).max()) + float(np.linalg.norm(sigma) ** 2 * np.linalg.norm(a))
    err = float(np.abs(theory - quad).max()) / max(scale, np.finfo(float).tiny)
    d = len(sigma)
    # Rounding: each entry sums 3^d node terms of degree-4 products (a few ulp each) after a
    # Cholesky factor with relative error ~ d eps: |error| <~ (3^d + 8 d) eps relative to the
    # scale ||Sigma||^2 ||A||; x 100 headroom for the sympy -> float conversions.
    tol = 100 * (3**d + 8 * d) * EPS
    k = int(np.abs(theory - quad).argmax())
    return Evidence((Part("E[x x^T A x x^T] vs exact quadrature", float(theory.flat[k]),
                          float(quad.flat[k]), err, tol,
                          "max entry |closed form - 3-node Gauss-Hermite quadrature| relative to "
                          "||Sigma||^2 ||A||; quadrature is exact for degree <= 5, so the "
                          "tolerance is float64 rounding (3^d + 8d) eps x 100",
                          details={"d": d}, kind="symbolic"),))


# ---------------------------------------------------------------------- Lemma 1
@st.composite
def _emulation_params(draw):
    return {"d": draw(st.integers(1, 6)), "n": draw(st.integers(1, 30)),
            "layers": draw(st.integers(1, 4)), "scale": draw(st.floats(0.05, 1.0)),
            "seed": draw(st.integers(0, 2**16))}


def _gd_steps_wrong(a_layers):
    """Control: preconditioner -A_l, the transpose slip alone (the sign right): a near miss
    that only a non-symmetric A_l tells apart, as the checks draw."""
    return [-np.asarray(a) for a in a_layers]


def _lemma1_transpose_slip(z, a_layers):
    """Control: Lemma 1 read off the prompt with the transpose slip (:func:`_gd_steps_wrong`)."""
    return la.lemma1_prediction(z, a_layers, preconditioners=_gd_steps_wrong)


@claim(
    statement="with B_l = 0, L linear-attention layers compute exactly L preconditioned "
              "GD steps on the in-context least squares (preconditioner -A_l^T here)",
    source="AhnPGD Lemma 1",
    kind="symbolic",
    strategy=_emulation_params(),
    theory={"predict": la.lemma1_prediction},
    control={"predict": _lemma1_transpose_slip},
    control_description="preconditioner -A_l instead of -A_l^T (the transpose slip)",
    examples=(Example({"d": 5, "n": 20, "layers": 3, "scale": 0.5, "seed": 0},
                      via="the paper's base setting (d = 5, n = 20, L = 3; Section 3.2)"),),
)
def check_gd_emulation(params: dict, ctx: Context, *, predict: Callable) -> Evidence:
    cfg = nl.ICLConfig(d=params["d"], n=params["n"], layers=params["layers"])
    g = torch.Generator().manual_seed(params["seed"])
    z, _ = nl.sample_prompts(cfg, g, batch=8)
    a = torch.randn(cfg.layers, cfg.d, cfg.d, generator=g, dtype=torch.float64) * params["scale"]
    tf = nl.forward({"A": a}, z).numpy()
    d, n, layers = cfg.d, cfg.n, cfg.layers
    # Forward-error model: each layer forms length-(n+1) inner products over d+1 rows
    # (relative error <= (n + d + 2) eps each, Higham's gamma_k), amplified by the layer
    # maps I + A_l Sigma_hat of each prompt: growth = prod_l (1 + ||A_l|| ||Sigma_hat||).
    # The growth is the prompt's and the drawn A_l's (no theory), so the error is measured
    # in units of it and the tolerance is the rounding constant of the example alone, the
    # same for check and control (a per-prompt tolerance, taken at the worst prompt, would
    # follow the prompt the theory under test makes worst).
    tol = 4 * layers * (n + d + 2) * EPS
    rows = []  # (error, pred, observed, growth) per prompt
    for b in range(z.shape[0]):
        x = z[b, :d, :n].T.numpy()
        y = z[b, d, :n].numpy()
        pred = predict(z[b].numpy(), [m.numpy() for m in a])
        sh = np.linalg.norm(x.T @ x / n, 2)
        growth = float(np.prod([1 + np.linalg.norm(m.numpy(), 2) * sh for m in a]))
        scale = 1 + abs(pred) + float(np.abs(y).max()) * float(np.abs(x).max())
        rows.append((abs(tf[b] - pred) / (scale * growth), pred, float(tf[b]), growth))
    # the worst prompt; a NaN error (a wrong theory's) is the worst, so the part fails
    err_w, pred_w, obs_w, growth_w = max(rows, key=lambda r: math.inf if math.isnan(r[0])
                                         else r[0])
    return Evidence((Part("transformer output vs L preconditioned GD steps", pred_w, obs_w,
                          err_w, tol,
                          "float64 forward pass vs the GD recursion, relative to (1 + |pred| + "
                          "max|y| max|x|) prod_l (1 + ||A_l|| ||Sigma_hat||), the prompt's "
                          "forward-error growth through the L layer maps; tolerance "
                          "4 L (n + d + 2) eps (inner-product rounding), max over prompts",
                          details={"growth": growth_w},
                          # the observed side is the torch forward pass at drawn (untrained)
                          # parameters, no run: an independent evaluation, symbolic
                          kind="symbolic"),))


# ---------------------------------------------------------------------- trained B = 0 family
def _gd_family(layers: int, seed: int, ctx: Context) -> nl.GDFamilyResult:
    """Adam on the B = 0 family at the profile's size (``SIZES["gd_family"]``; L = 1 at
    ``SIZES["gd_family_one"]``, 8 members; L = 3 at ``SIZES["gd_family_deep"]``, ci's length
    from quick on; the runs the learned-steps figure shares)."""
    size = ctx.size(nl.SIZES, nl.gd_family_entry(layers))
    return nl.run_gd_family(nl.GDFamilyConfig(layers=layers, seed=seed, **size),
                            cache=ctx.cache, device=ctx.device)


# ---------------------------------------------------------------------- one-layer optimum
def sigma_n_dropped_preconditioner(sigma, n):
    """Control: Gamma* with one of its two finite-n terms dropped, the Sigma/n in (1 + 1/n)
    Sigma (the tr(Sigma)/n I term kept): (Sigma + tr(Sigma)/n I)^-1.  A single near miss
    through the theory (4 % in Gamma*'s scale at Setting 1's Sigma = I, d = 5, n = 20)."""
    s = sp.Matrix(sigma)
    return (s + s.trace() / sp.Integer(n) * sp.eye(s.rows)).inv()


def sigma_n_dropped_loss(sigma, n):
    """Control: the loss the control calls optimal, one_layer_loss at its Gamma (so the
    closed-form part agrees with itself: the trained model's parts and the stationarity
    part must reject it)."""
    s = sp.Matrix(sigma)
    return la.one_layer_loss(sigma_n_dropped_preconditioner(s, n), s, n)


def _gaussian_rotation_optimum(d, n, m1, m2):
    """Control for rotation-invariant covariates: the Gaussian Gamma* at Sigma = (m1/d) I,
    i.e. the fourth moment m2 ignored (and its loss at that Sigma)."""
    sigma = sp.eye(d) * sp.sympify(m1) / d
    return la.optimal_preconditioner(sigma, n)[0, 0], la.optimal_one_layer_loss(sigma, n)


def excess_bound(excess: float, curvature: float, grad_norm: float, value_scale: float
                 ) -> float:
    """Largest distance to a claimed minimiser x* consistent with an exact excess loss.

    With g = grad f(x*) (0 at an exact stationary point; the numeric optimum leaves a
    little) and curvature >= ``curvature`` on the segment, f(x) - f(x*) >= -|g| |delta| +
    (curvature / 2) |delta|^2, so |delta| <= (|g| + sqrt(|g|^2 + 2 curvature e)) / curvature.
    ``value_scale`` * 1e-12 covers float64 rounding of e.  0 if the curvature is not
    positive (x* is not a minimum).
    """
    if not curvature > 0:
        return 0.0
    e = max(excess + 1e-12 * value_scale, 0.0)
    return (grad_norm + math.sqrt(grad_norm**2 + 2 * curvature * e)) / curvature


def _relative_deviation(name: str, claimed: float, observed: float, se: float,
                       error_model: str, kind: str, confidence: float = 0.99,
                       tolerance: float = PRECISION) -> Part:
    """``|observed - claimed| / |claimed|`` against ``tolerance`` (:data:`PRECISION` unless
    a part derives a finer one), ``observed`` a Monte Carlo estimate of s.e. ``se`` (normal
    interval at ``confidence``, clipped at 0).

    The allowance "1 % of the value" is a relative precision: held as a relative error, its
    tolerance is a constant for every theory (:data:`PRECISION`, or a part's derived finer
    margin such as :data:`CORRELATED_LOSS_TOLERANCE`), where 1 % of the claimed
    value in absolute units would move with the theory under test (and shrink or grow the
    allowance of a wrong one).  The verdict is the same as that of the absolute form
    ``|observed - claimed| <= PRECISION |claimed|`` (both sides and the interval scaled by
    1 / |claimed|); a claimed value of 0 or NaN gives an infinite or NaN error, a failure."""
    scale = abs(float(claimed))
    with np.errstate(divide="ignore", invalid="ignore"):
        err = float(np.float64(abs(float(observed) - float(claimed))) / scale)
        rel_se = float(np.float64(se) / scale)
    q = normal_quantile(confidence)
    if not se >= 0 or math.isnan(err):
        # no interval (a NaN or negative s.e., a NaN error): the part fails on NaN, it is
        # never read as a zero-width interval that could pass
        lower = upper = math.nan
    else:
        lower, upper = max(0.0, err - q * rel_se), err + q * rel_se  # inf stays inf
    return Part.bounded(name, claimed, observed, err, lower, upper, tolerance, error_model,
                        confidence=confidence, details={"se": float(se), "relative_se": rel_se},
                        se=rel_se if math.isfinite(rel_se) else None, kind=kind)


@cache
def one_layer_loss_setting1() -> Callable[[np.ndarray], float]:
    """``theory.linear_attention.one_layer_loss`` for Setting 1 (Sigma = I, n = 20) as a
    float function of Gamma, lambdified once from the theory's expression."""
    g = sp.Matrix(5, 5, sp.symbols("g0:25", real=True))
    fn = lambdify_numeric([list(g)], la.one_layer_loss(g, sp.eye(5), 20), "numpy")
    return lambda gamma: float(fn(list(np.asarray(gamma, dtype=float).ravel())))


def _half_gradient(gamma, sigma, n):
    """Control: the gradient of ZFB's f/2 where the code's f is meant (a factor-2 slip)."""
    return la.one_layer_gradient(gamma, sigma, n) / 2


# A fixed non-symmetric point for the gradient part, away from Gamma* (so the gradient is
# O(1)) and non-symmetric (so a transpose slip shows): drawn once, no theory involved.
_GRADIENT_POINT = (0.4 * np.eye(5)
                   + 0.1 * np.random.default_rng(20_240_310).normal(size=(5, 5))).round(6)


@cache
def _loss_gradient_fn() -> Callable:
    g = sp.Matrix(5, 5, sp.symbols("g0:25", real=True))
    loss = la.one_layer_loss(g, sp.eye(5), 20)
    return lambdify_numeric([list(g)], [sp.diff(loss, v) for v in g], "numpy")


def _loss_gradient_setting1(gamma: np.ndarray) -> np.ndarray:
    """d one_layer_loss / d Gamma for Setting 1 at ``gamma``, by sympy differentiation."""
    return np.array(_loss_gradient_fn()(list(np.asarray(gamma, float).ravel())),
                    dtype=float).reshape(5, 5)


# A correlated covariance (AhnPGD's Fig. 1/2 spectrum under rotation 0, as the inverse-cov
# claim uses): Sigma = I makes Gamma* and E[Sigma_hat^2] diagonal, so a slip in an
# off-diagonal entry of either would be invisible there.
_CORRELATED = nl.rotated_covariance(0)


@cache
def _loss_gradient_correlated() -> Callable:
    g = sp.Matrix(5, 5, sp.symbols("g0:25", real=True))
    loss = la.one_layer_loss(g, sp.Matrix(_CORRELATED), 20)
    return lambdify_numeric([list(g)], [sp.diff(loss, v) for v in g], "numpy")


def _stationarity_correlated(preconditioner: Callable) -> Part:
    """The claimed Gamma*(Sigma) at a correlated Sigma against the root of the exact loss's
    gradient (sympy derivative of ``one_layer_loss``, which carries E[Sigma_hat^2]): the
    loss is a strictly convex quadratic in Gamma, so Gamma* is its minimiser iff the
    gradient vanishes there."""
    grad = _loss_gradient_correlated()
    gamma_c = _theory_array("optimal_preconditioner", preconditioner, sp.Matrix(_CORRELATED),
                            20, shape=(5, 5))
    at_star = np.array(grad(list(gamma_c.ravel())), dtype=float)
    at_zero = np.array(grad([0.0] * 25), dtype=float)
    err = float(np.abs(at_star).max() / np.abs(at_zero).max())
    # Rounding: the gradient's entries are 25-term sums of products of O(1) float64
    # numbers from sympy's exact rationals (a few hundred eps); 1e-10 as the gradient part.
    return Part("Gamma*(Sigma) is the root of d one_layer_loss / d Gamma, correlated Sigma",
                0.0, float(np.abs(at_star).max()), err, 1e-10,
                "max |d one_layer_loss / d Gamma| at the claimed Gamma*(Sigma), relative to its "
                "max at Gamma = 0, Sigma = AhnPGD's spectrum (1, 1, 1/4, 1/16, 1) rotated "
                "(rotation 0), n = 20; both exact: float64 rounding (1e-10)",
                details={"gamma_star_offdiag_max": float(np.abs(gamma_c - np.diag(
                    np.diag(gamma_c))).max())}, kind="symbolic")


def _theory_array(what: str, fn: Callable, *args, shape: tuple[int, ...]) -> np.ndarray:
    """``fn(*args)`` as a finite float array of ``shape``; anything else (a symbol left in,
    a wrong shape, an exception of the theory function) is InadmissibleTheory, a failed part
    with the reason, never a crash of the check."""
    try:
        out = fn(*args)
        out = out.evalf() if hasattr(out, "evalf") else out
        value = np.array(out, dtype=float)
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"{what} is not a numeric array: {type(exc).__name__}: "
                                 f"{exc}") from exc
    if value.shape != shape or not np.all(np.isfinite(value)):
        raise InadmissibleTheory(f"{what} has shape {value.shape} or non-finite entries, "
                                 f"expected finite {shape}")
    return value


def _lemma1_gamma(a: np.ndarray) -> np.ndarray:
    """Gamma = ``gd_preconditioners`` of one layer's A (Lemma 1), checked numeric."""
    return _theory_array("gd_preconditioners", lambda m: la.gd_preconditioners([m])[0],
                         np.asarray(a, dtype=float), shape=np.shape(a))


def _lemma1_jacobian(d: int) -> np.ndarray:
    """d vec(Gamma) / d vec(A) of Lemma 1's map (``gd_preconditioners``), column k its image
    of the k-th unit matrix: the map is linear, so this carries a covariance of vec(A) to
    vec(Gamma) (J C J^T) with no formula typed here."""
    return np.stack([_lemma1_gamma(np.eye(d * d)[k].reshape(d, d)).ravel()
                     for k in range(d * d)], axis=1)


# The fixed A of the gradient part's step: a non-symmetric point (so a transpose slip
# shows) whose Gamma is far from Gamma* (so the gradient is O(1)); data, no theory.  (The
# sizing pilot ran at A = -_GRADIENT_POINT^T; at this point the quick run of d074052
# resolved a 9.65 % scale error at quick's 20 000 prompts, details resolves_scale_error.)
_STEP_POINT = _GRADIENT_POINT


def _gradient_step_part(g_claimed: np.ndarray, seed: int, ctx: Context) -> Part:
    """The one-layer model's autograd gradient (Monte Carlo, one full-batch GD step's
    direction) against the claimed gradient at Gamma_0 = ``gd_preconditioners`` of the fixed
    A_0 = :data:`_STEP_POINT`, the correlated Sigma, n = 20.

    ``numerics.linear_attention.run_gradient_step`` takes the mean of P independent
    per-prompt autograd gradients of the model's own prompt loss at A_0 (its step divided by
    its rate), whose expectation is d f / dA at A_0 exactly (f the population loss): no model
    mismatch, only noise.  The claimed d f / dGamma (``g_claimed``, evaluated once by the
    check) is carried to A by the adjoint of Lemma 1's linear map, J^T (:func:`_lemma1_jacobian`;
    for Gamma = -A^T it is the map itself).  With r the difference and C the mean's
    covariance (per-prompt gradients / P), r^T C^-1 r ~ chi-square(d^2) under the claim: the
    tolerance is its 99 % point, derived; details give the relative scale error of the
    claimed gradient the run resolves with power 0.9."""
    from scipy import stats as _st

    d = _STEP_POINT.shape[0]
    run = nl.run_gradient_step(
        nl.GradientStepConfig(a0=tuple(tuple(float(v) for v in row) for row in _STEP_POINT),
                              sigma=_CORRELATED, seed=seed,
                              **ctx.size(nl.SIZES, "gradient_step")),
        cache=ctx.cache, device=ctx.device)
    g_a = _lemma1_jacobian(d).T @ g_claimed.ravel()
    r = run.step.ravel() - g_a
    stat = float(r @ np.linalg.solve(run.cov, r))
    dof = int(r.size)
    limit = float(_st.chi2.ppf(0.99, dof))
    unit = float(g_a @ np.linalg.solve(run.cov, g_a))
    resolves = (math.sqrt(_chi2_noncentrality(dof, limit, 0.9) / unit) if unit > 0
                else math.inf)
    return Part("the model's autograd gradient (Monte Carlo) vs the claimed gradient, "
                "correlated Sigma (weighted residual)", float(dof), stat, stat / dof,
                limit / dof,
                "r^T C^-1 r / d^2, r = the mean of the one-layer model's per-prompt autograd "
                "gradients on fresh prompts at A_0 (a full-batch GD step's direction) - J^T "
                "vec(one_layer_gradient(Gamma_0)), J Lemma 1's map; C the mean's sampling "
                "covariance (per-prompt gradients / P); tolerance the chi-square(d^2) 99 % "
                "point / d^2 (an exact expectation: noise only)",
                details={"prompts": run.config.prompts, "resolves_scale_error": resolves,
                         "max_entry_gap": float(np.abs(r).max()),
                         "max_entry": float(np.abs(g_a).max())},
                kind="simulation")


def _chi2_noncentrality(dof: int, limit: float, power: float) -> float:
    """The noncentrality at which a chi-square(dof) statistic exceeds ``limit`` with
    probability ``power`` (the power of the weighted-residual test)."""
    from scipy import optimize as _opt
    from scipy import stats as _st

    return float(_opt.brentq(lambda lam: _st.ncx2.sf(limit, dof, lam) - power, 1e-9, 1e6))


# Pilot of the one-layer fits' sizes (``run_fit``, seed 0, 12 000 prompts, 80 iterations,
# 100 000 evaluation prompts; run while this design was written, before the parts below
# existed): only the relative standard errors were read, of the fitted mean diagonal
# (tr Gamma / d over gamma*, from the fit's sandwich covariance) and of the fresh-prompt
# loss; no part's error was computed.
ONE_LAYER_FIT_PILOT = {
    "sphere": {"prompts": 12_000, "scale_se": 0.0048, "eval_prompts": 100_000,
               "eval_se": 0.0019},
    "gamma": {"prompts": 12_000, "scale_se": 0.0535, "eval_prompts": 100_000,
              "eval_se": 0.0134},
    "correlated": {"eval_prompts": 100_000, "eval_se": 0.00328},
}


#: The margin of one_layer_optimum's correlated loss part.  That part holds the fitted
#: model's Monte Carlo loss to one_layer_loss at the same fitted Gamma, an exact expectation,
#: so no model mismatch enters it and its margin is what the evaluation affords to resolve.
#: A quarter of PRECISION puts a 1 % whole-output error of the moments the loss consumes
#: beyond it (at Gamma*(Sigma): moment4 x 1.01 moves the loss by 0.90 %,
#: sample_cov_second_moment x 1.01 by 3.86 %; computed in stop 66).  Design change of stop 66,
#: said so: stop 65's `tdcheck mutate linear_attention` left moment4's [0] x 1.05 (1.26 % of
#: this loss) and sample_cov_second_moment's [5] x 1.05 (0.66 %) inconclusive under the 1 %
#: margin; the evaluation prompts follow from the power calculation at this margin.
CORRELATED_LOSS_TOLERANCE = PRECISION / 4


# The claim's fit parts once all are judged (thorough): the correlated loss, and per
# covariate law (sphere, Gamma) the scale and the loss.  The power is joint over them (the
# laws' prompt streams are disjoint, ``numerics.linear_attention._LAW_STREAM``).
ONE_LAYER_FIT_PARTS = 5


def one_layer_fit_sizes_needed(law: str, power: float = 0.9,
                               parts: int = ONE_LAYER_FIT_PARTS) -> dict[str, int]:
    """Fit prompts (whole thousands) and evaluation prompts (whole chunks of 20 000) at
    which ``parts`` independent parts judged at their tolerance tau with 99 % intervals all
    pass with probability ``power`` when the theory is exact (tau: :data:`PRECISION`, the
    correlated loss part's :data:`CORRELATED_LOSS_TOLERANCE`).

    A part's error is |Z| s (s its relative s.e.) and it passes when |Z| s + z_0.995 s <=
    tau, i.e. |Z| <= t with t = tau / s - z_0.995: probability 2 Phi(t) - 1.
    Each part needs 2 Phi(t) - 1 >= p = power^(1/parts), so t = Phi^-1((1 + p) / 2) (the
    two-sided quantile at p) and s = tau / (z_0.995 + t), scaled from
    :data:`ONE_LAYER_FIT_PILOT` by s ~ 1 / sqrt(size)."""
    pilot = ONE_LAYER_FIT_PILOT[law]
    per_part = power ** (1 / parts)
    tau = CORRELATED_LOSS_TOLERANCE if law == "correlated" else PRECISION
    target = tau / (normal_quantile(0.99) + normal_quantile(per_part))
    out = {"eval_prompts": int(math.ceil(pilot["eval_prompts"] * (pilot["eval_se"] / target)
                                         ** 2 / 20_000) * 20_000)}
    if "scale_se" in pilot:
        out["prompts"] = int(math.ceil(pilot["prompts"] * (pilot["scale_se"] / target) ** 2
                                       / 1000) * 1000)
    return out


def one_layer_optimum_power(profile: str) -> PowerPlan | None:
    """one_layer_optimum's power plan at ``profile``: the sphere fit's prompts against
    :func:`one_layer_fit_sizes_needed` (the correlated evaluation is sized with it); None at
    the smoke size, whose fits are below it and only reported.  The Gamma law's fit parts
    are judged only where their own sizes reach the calculation (thorough); below, they are
    details, so they do not make the claim undecidable."""
    if profile == "test":
        return None
    need = one_layer_fit_sizes_needed("sphere")["prompts"]
    have = int(nl.SIZES.at("fit_sphere", profile)["prompts"])
    return PowerPlan(decides=have >= need, have=have, needed=need,
                     unit="sphere fit prompts",
                     design="one_layer_fit_sizes_needed: the five fit parts (correlated "
                            "loss; sphere and Gamma scale and loss) pass jointly with power "
                            "0.9 at 99 % intervals when the theory is exact, from "
                            "ONE_LAYER_FIT_PILOT's standard errors; the Gamma law's two are "
                            "judged only at thorough")


def _underpowered(fit: nl.FitResult, law: str) -> str | None:
    """Why ``fit`` is too small to judge its parts (None when it is not)."""
    need = one_layer_fit_sizes_needed(law)
    have = {"prompts": fit.config.prompts, "eval_prompts": fit.config.eval_prompts}
    short = [f"{k} {have[k]} < {v}" for k, v in need.items() if have[k] < v]
    return "; ".join(short) or None


def _theory_float(fn: Callable, *args) -> float:
    """``float(fn(*args))``, a theory output that is not a finite number being
    InadmissibleTheory (a failed part with the reason, never a crash of the check)."""
    try:
        value = float(fn(*args))
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"{getattr(fn, '__name__', fn)} gave no number: "
                                 f"{type(exc).__name__}: {exc}") from exc
    if not math.isfinite(value):
        raise InadmissibleTheory(f"{getattr(fn, '__name__', fn)} gave {value}")
    return value


def _judged_or_details(fit: nl.FitResult, law: str, parts: list[Part], details: dict
                       ) -> tuple[list[Part], dict | None]:
    """The one rule for the fit parts: judged where the fit's sizes reach
    :func:`one_layer_fit_sizes_needed`; below that, not parts at all (they neither pass
    nor block) but reported in the claim's details with the reason."""
    why = _underpowered(fit, law)
    if why is None:
        return parts, None
    return [], details | {"not_judged": why, "needed": one_layer_fit_sizes_needed(law),
                          **{p.name: {"claimed": p.predicted, "observed": p.observed,
                                      "error": p.error, "interval": [p.lower, p.upper]}
                             for p in parts}}


def _fitted_loss_parts(fit: nl.FitResult) -> tuple[list[Part], dict | None]:
    """The fitted one-layer model's torch loss on fresh prompts at the correlated Sigma
    against ``theory.linear_attention.one_layer_loss`` at the same fitted Gamma.

    ``one_layer_loss`` is an exact expectation (over the prompt and w* ~ N(0, I)) through
    E[Sigma_hat^2] (``sample_cov_second_moment``, ``moment4``); the torch side is the
    model's own forward on ``eval_prompts`` fresh prompts, averaged exactly over w*
    (label averaging), so the only gap is Monte Carlo noise, which the 99 % interval
    carries.  Tolerance :data:`CORRELATED_LOSS_TOLERANCE` (0.25 %: no model mismatch enters,
    so the margin is what the evaluation resolves), the same for check and control; the
    evaluation prompts come from the power calculation (:func:`one_layer_fit_sizes_needed`)."""
    gamma = sp.Matrix(_lemma1_gamma(fit.A[0]))
    claimed = _theory_float(la.one_layer_loss, gamma, sp.Matrix(_CORRELATED), 20)
    part = _relative_deviation(
        "fitted model's torch loss vs one_layer_loss at its Gamma, correlated Sigma",
        claimed, fit.eval_loss, fit.eval_se,
        "|torch loss of the fitted one-layer model on fresh prompts (exact over w*) - "
        "one_layer_loss(Gamma_fit, Sigma, n)| / one_layer_loss, Sigma = AhnPGD's spectrum "
        "rotated, n = 20; an exact expectation, so only the evaluation's noise (in the 99 % "
        "interval); tolerance 0.25 % (CORRELATED_LOSS_TOLERANCE: no model mismatch enters, "
        "so the margin is what the evaluation resolves, a quarter of PRECISION)",
        kind="simulation", tolerance=CORRELATED_LOSS_TOLERANCE)
    return _judged_or_details(fit, "correlated", [part],
                              {"eval_prompts": fit.config.eval_prompts})


def _rotation_fit_parts(law: str, gamma_star: float, f1: float, seed: int, ctx: Context
                        ) -> tuple[list[Part], dict | None]:
    """The one-layer model fitted by L-BFGS on ``law`` covariates (sphere or Setting 3's
    Gamma law) against the claimed rotation-invariant optimum gamma* I and its loss f1*.

    Gamma_fit comes from the fit's P-prompt minimiser (one Newton step from L-BFGS's, exact
    for this quadratic loss) through Lemma 1 (``gd_preconditioners``), its covariance
    J C J^T from the fit's sandwich covariance C of vec(A) (:func:`_lemma1_jacobian`).
    1. tr(Gamma_fit) / d against gamma*, s.e. from J C J^T (details also give the
       chi-square over all d^2 entries against gamma* I);
    2. the fitted model's torch loss on fresh prompts against f1*.  The fit sits off the
       population minimum by r ~ N(0, C), so its loss exceeds f1* by r^T H r / 2 (the loss
       is quadratic in A), of mean tr(H C) / 2 and variance tr((H C)^2) / 2 (H the fit's
       Hessian; ``FitResult.excess_mean``, ``excess_var``): the observed side is the torch
       loss less that mean, the variance joins the evaluation's in the 99 % interval.
    Both at tolerance PRECISION, the same for check and control; judged or reported by
    :func:`_judged_or_details` (the Gamma law below thorough is reported)."""
    from scipy import stats as _st

    fit = nl.run_fit(nl.FitConfig(1, seed, None, "identity", covariates=law,
                                  **ctx.size(nl.SIZES, f"fit_{law}")),
                     cache=ctx.cache, device=ctx.device)
    d = fit.A.shape[-1]
    jac = _lemma1_jacobian(d)
    gamma_fit = _lemma1_gamma(fit.newton[0])
    cov = jac @ fit.cov @ jac.T
    ones = np.eye(d).ravel()
    scale = float(np.trace(gamma_fit)) / d
    scale_se = math.sqrt(max(float(ones @ cov @ ones), 0.0)) / d
    r = gamma_fit.ravel() - gamma_star * ones
    stat = float(r @ np.linalg.solve(cov, r))
    corrected = fit.eval_loss - fit.excess_mean
    loss_se = math.sqrt(fit.eval_se**2 + max(fit.excess_var, 0.0))
    parts = [
        _relative_deviation(
            f"{law}: fitted tr(Gamma)/d vs gamma*", gamma_star, scale, scale_se,
            f"{law} covariates: |tr(Gamma_fit)/d - gamma*| / gamma*, Gamma_fit from the "
            "one-layer model fitted by L-BFGS (one Newton step: the P-prompt minimiser) "
            "through Lemma 1; s.e. from the fit's sandwich covariance (99 % interval); "
            "tolerance 1 % (PRECISION) in the parameter itself", kind="simulation"),
        _relative_deviation(
            f"{law}: fitted model's torch loss vs f1*", f1, corrected, loss_se,
            f"{law} covariates: |torch loss of the fitted model on fresh prompts (exact over "
            "w*) - the fit's mean excess tr(H C)/2 - f1*| / f1*; the evaluation's noise and "
            "the excess's own spread (tr((H C)^2)/2) in the 99 % interval; tolerance 1 % "
            "(PRECISION)", kind="simulation"),
    ]
    details = {"prompts": fit.config.prompts, "eval_prompts": fit.config.eval_prompts,
               "grad_norm": fit.grad_norm, "chi2_all_entries": stat,
               "chi2_99": float(_st.chi2.ppf(0.99, r.size)),
               "relative_excess_mean": fit.excess_mean / f1 if f1 else math.nan,
               "signed": {"scale": scale / gamma_star - 1 if gamma_star else math.nan,
                          "loss": corrected / f1 - 1 if f1 else math.nan}}
    for i, part in enumerate(parts):
        parts[i] = replace(part, details={**part.details, **details})
    return _judged_or_details(fit, law, parts, details)


def _correlated_fit(seed: int, ctx: Context) -> nl.FitResult:
    """The one-layer L-BFGS fit at the correlated Sigma (``SIZES["fit_correlated"]``)."""
    return nl.run_fit(nl.FitConfig(1, seed, _CORRELATED, "identity",
                                   **ctx.size(nl.SIZES, "fit_correlated")),
                      cache=ctx.cache, device=ctx.device)


def _correlated_fit_part(preconditioner: Callable, seed: int, ctx: Context) -> Part:
    """The trained one-layer model at a correlated Sigma against the claimed Gamma*(Sigma).

    Design (before any run of it): the one-layer B = 0 model fitted by L-BFGS on P fixed
    prompts (``numerics.linear_attention.run_fit``, P from ``SIZES["fit_correlated"]``:
    12 000 at quick) with x ~ N(0, Sigma), Sigma = AhnPGD's spectrum (1, 1, 1/4, 1/16, 1) rotated
    (rotation 0, where Gamma* is not a multiple of I and its tr(Sigma)/n I term is not
    proportional to Sigma^-1), w* ~ N(0, I), n = 20.  For one layer the loss is a quadratic
    in A, so the P-prompt minimiser (one Newton step from L-BFGS's, exact for a quadratic)
    sits from the population one by -H_P^-1 g_P(A*), normal to first order with the sandwich
    covariance C = H^-1 V H^-1 / P (``fit_sampling_law``).  It is compared in Gamma:
    Gamma_fit = ``gd_preconditioners`` of the fitted A (Lemma 1) with covariance J C J^T
    (:func:`_lemma1_jacobian`), and under the claim r = vec(Gamma_fit) - vec(Gamma*) gives
    r^T (J C J^T)^-1 r ~ chi-square(d^2): the tolerance is its 99 % point, derived, no
    constant.  Power: a relative error delta in Gamma* gives noncentrality
    delta^2 g*^T (J C J^T)^-1 g*, so the run's own C says which delta it resolves with power
    0.9 (details ``resolves_scale_error``)."""
    from scipy import stats as _st

    fit = _correlated_fit(seed, ctx)
    gamma_c = _theory_array("optimal_preconditioner", preconditioner, sp.Matrix(_CORRELATED),
                            20, shape=(5, 5))
    jac = _lemma1_jacobian(gamma_c.shape[0])
    weight = np.linalg.inv(jac @ fit.cov @ jac.T)
    g_claim = gamma_c.ravel()
    r = _lemma1_gamma(fit.newton[0]).ravel() - g_claim
    stat = float(r @ weight @ r)
    dof = int(r.size)
    limit = float(_st.chi2.ppf(0.99, dof))
    unit = float(g_claim @ weight @ g_claim)
    resolves = (math.sqrt(_chi2_noncentrality(dof, limit, 0.9) / unit) if unit > 0
                else math.inf)
    return Part("trained Gamma at a correlated Sigma vs Gamma*(Sigma) (weighted residual)",
                float(dof), stat, stat / dof, limit / dof,
                "r^T C_G^-1 r / d^2, r = vec(Gamma_fit) - vec(Gamma*(Sigma)), Gamma_fit from "
                "the one-layer model fitted by L-BFGS on the fit's P prompts (one Newton "
                "step, exact for this quadratic loss) through Lemma 1, C_G = J C J^T with C "
                "the fit's sandwich covariance H^-1 V H^-1 / P; tolerance the chi-square(d^2) "
                "99 % point / d^2 (the fit's own sampling law)",
                details={"prompts": fit.config.prompts, "grad_norm": fit.grad_norm,
                         "max_entry_gap": float(np.abs(r).max()),
                         "resolves_scale_error": resolves,
                         "gamma_star_offdiag_max": float(np.abs(
                             gamma_c - np.diag(np.diag(gamma_c))).max())},
                kind="simulation")


@cache
def _setting1_curvature() -> float:
    """The smallest eigenvalue of the Hessian of ``theory.linear_attention.one_layer_loss``
    in the 25 entries of Gamma at Setting 1 (Sigma = I, n = 20); the loss is quadratic in
    Gamma, so the Hessian is constant (2 M (x) Sigma, M = E[Sigma_hat^2])."""
    g = sp.Matrix(5, 5, sp.symbols("g0:25", real=True))
    hess = sp.hessian(la.one_layer_loss(g, sp.eye(5), 20), list(g))
    return float(np.linalg.eigvalsh(np.array(hess.evalf(), dtype=float)).min())


def trace_allowance(gammas: np.ndarray, f: Callable[[np.ndarray], float]
                    ) -> tuple[float, list[float]]:
    """How far each trained Gamma_m's trace may sit from Gamma*'s, relative, given its
    optimisation gap, and the mean over members (the trace part's allowance).

    Derivation (ours): f is quadratic in Gamma with constant Hessian H, and Gamma* is its
    stationary point, so e_m = f(Gamma_m) - f(Gamma*) = (1/2) vec(D)^T H vec(D) >=
    (lambda_min(H)/2) |D|_F^2 with D = Gamma_m - Gamma*; by Cauchy-Schwarz |tr D| <= sqrt(d)
    |D|_F.  Hence |tr Gamma_m / tr Gamma* - 1| <= sqrt(d) excess_bound(e_m, lambda_min(H),
    0, f*) / |tr Gamma*|, and the mean of the members' ratios is within the mean of their
    bounds.  Everything is the paper's (``la.optimal_preconditioner`` and the lambdified
    ``la.one_layer_loss`` ``f``), so the allowance is the same for check and control; a
    member whose loss is below f(Gamma*) gets 0 (the paper's Gamma* would not be the
    minimum)."""
    d = gammas.shape[1]
    paper = _theory_array("optimal_preconditioner", la.optimal_preconditioner, sp.eye(d), 20,
                          shape=(d, d))
    f_star = f(paper)
    curvature = _setting1_curvature()
    tr_star = abs(float(np.trace(paper)))
    bounds = [math.sqrt(d) * excess_bound(f(g) - f_star, curvature, 0.0, f_star) / tr_star
              for g in gammas]
    return float(np.mean(bounds)), bounds


def _trained_gamma_parts(gamma_star: np.ndarray, f: Callable, f_star: float,
                         f_closed: float, run) -> list[Part]:
    """one_layer_optimum's trained parts: the trained Gamma's scale against Gamma*'s over
    members, and per member the exact excess loss of its Gamma and the torch model's
    evaluation loss against f*."""
    parts: list[Part] = []
    norm = float(np.linalg.norm(gamma_star))
    members = run.A.shape[0]
    # one layer: Gamma = -A^T (Lemma 1)
    gammas = np.array([la.gd_preconditioners(run.A[m])[0] for m in range(members)])
    # The trained Gamma against Gamma* in the parameter itself, with the run's own noise:
    # members (own init, own minibatches) scatter about what training converges to, so the
    # Student-t interval over members (M - 1 dof) on the mean of tr Gamma_m / tr Gamma* - 1
    # carries the optimiser's jitter; the allowance is each member's own optimisation gap
    # carried to the trace (trace_allowance).  The trace is the direction a slip in Gamma*'s
    # scale moves; the full Frobenius distance of the member mean is reported (details):
    # its noise floor, the members' spread / sqrt(M), is not below 1 % at quick's members.
    ratio = np.trace(gammas, axis1=1, axis2=2) / np.trace(gamma_star) - 1.0
    r_mean, r_se = float(ratio.mean()), float(ratio.std(ddof=1) / math.sqrt(members))
    q = t_quantile(0.99, members - 1)
    mean_gamma = gammas.mean(0)
    spread = math.sqrt(float(((gammas - mean_gamma) ** 2).sum()) / (members - 1)) / norm
    allowance, per_member = trace_allowance(gammas, f)
    parts.append(Part.bounded(
        "trained step scale tr Gamma / tr Gamma* over members", 1.0, 1.0 + r_mean,
        abs(r_mean), max(0.0, abs(r_mean) - q * r_se), abs(r_mean) + q * r_se, allowance,
        "|mean over members of tr Gamma_m / tr Gamma* - 1|, Gamma_m = -A_m^T trained; "
        "Student-t interval over members (M - 1 dof: the run's own noise); allowance: what "
        "each member's optimisation gap admits (trace_allowance: sqrt(d) times the "
        "distance its exact excess loss allows, by the curvature of one_layer_loss, over "
        "|tr Gamma*|; on the paper's Gamma*, the same for check and control), mean over "
        "members",
        se=r_se, dof=members - 1,
        details={"members": members, "per_member": ratio.tolist(),
                 "allowance_per_member": per_member,
                 "mean_frobenius_distance": float(np.linalg.norm(mean_gamma - gamma_star))
                 / norm, "member_spread": spread}, kind="simulation"))
    for m in range(members):
        # the excess part: theory's exact loss evaluated at the trained Gamma (the observed
        # side is the trained model's parameters); the torch part the model's own loss
        parts.extend(_member_loss_parts(
            m, run, f_star, float(f(gammas[m])), "|f(Gamma_trained) - f(Gamma*)| / f(Gamma*), "
            "exact: training reached the claimed optimum to 1 % of its value", f_closed,
            "f*", "the closed form f*"))
    return parts


def _member_loss_parts(m: int, run, target: float, exact: float, excess_model: str,
                       torch_target: float, label: str, what: str) -> list[Part]:
    """A trained member's two loss parts: the theory's exact loss at its trained
    parameters against ``target`` (``excess_model`` says which), and the torch model's own
    loss on fresh prompts (exact over w*) against ``torch_target`` (``what``), both within
    PRECISION, the evaluation prompts' error in the 99 % interval."""
    return [
        Part(f"member {m}: excess loss", target, exact, abs(exact - target) / target,
             PRECISION, excess_model, kind="simulation"),
        _relative_deviation(
            f"member {m}: torch evaluation loss vs {label}", torch_target,
            float(run.eval_loss[m]), float(run.eval_se[m]),
            f"|torch loss - {label}| / {label}, the trained torch model's loss on fresh "
            f"prompts (exact over w*) vs {what}; tolerance 1 % (PRECISION: training reached "
            "it, see the excess part), the same for check and control; the evaluation "
            f"prompts' own error (s.e. / {label}) in the 99 % interval", kind="simulation")]


def _rotation_parts(rotation: Callable, n: int, seed: int, ctx: Context,
                    unjudged: dict) -> list[Part]:
    """one_layer_optimum's rotation-invariant parts, for sphere and Gamma covariates: the
    fit against gamma* and f1* (:func:`_rotation_fit_parts`; a fit too weak to judge goes
    into ``unjudged``), the Monte Carlo loss at gamma* I against f1*, and gamma*'s
    minimality against 0.9 gamma* and 1.1 gamma*."""
    parts: list[Part] = []
    contexts = ctx.size(nl.SIZES, "rotation_contexts")
    for cov, moments in (("sphere", la.sphere_moments()), ("gamma", la.gamma_moments())):
        g_star, f1 = _theory_array(f"rotation_invariant_optimum ({cov})", rotation, 5, n,
                                   *moments, shape=(2,))
        fit_parts, fit_details = _rotation_fit_parts(cov, g_star, f1, seed, ctx)
        parts.extend(fit_parts)
        if fit_details is not None:
            unjudged[cov] = fit_details
        losses = nl.rotation_invariant_losses((g_star, 0.9 * g_star, 1.1 * g_star), cov,
                                              contexts, seed + 7)
        k = losses.shape[1]
        mean = float(losses[0].mean())
        se = float(losses[0].std(ddof=1) / math.sqrt(k))
        parts.append(_relative_deviation(
            f"{cov}: loss at gamma* I vs f1*", f1, mean, se,
            f"{cov} covariates: |Monte Carlo loss at gamma* I (exactly averaged over w* and "
            "x_q) - f1*| / f1*, the closed form f1*; tolerance 1 % (PRECISION), the same for "
            "check and control; noise (s.e. / f1*) in the 99 % interval",
            # a Monte Carlo evaluation of the loss at fixed gamma (no model trained)
            kind="symbolic"))
        diffs = np.stack([losses[1] - losses[0], losses[2] - losses[0]])
        gap = diffs.mean(1)
        j = int(gap.argmin())
        gap_se = float(diffs[j].std(ddof=1) / math.sqrt(k))
        q = normal_quantile(0.99)
        parts.append(Part.bounded(
            f"{cov}: gamma* is minimal", 0.0, float(gap[j]), -float(gap[j]),
            -float(gap[j]) - q * gap_se, -float(gap[j]) + q * gap_se, 0.0,
            f"{cov}: the loss at 0.9 gamma* and 1.1 gamma* minus the loss at gamma* on the "
            "same contexts (common random numbers) must be > 0; 99 % interval",
            details={"gap_low": float(gap[0]), "gap_high": float(gap[1])}, kind="symbolic"))
    return parts


@claim(
    statement="a trained one-layer model converges to Gamma* = ((1+1/n)Sigma + "
              "tr(Sigma)/n I)^-1 with loss f*; the one-layer loss has gradient "
              "2 (Sigma Gamma S - Sigma^2); for sphere and Gamma covariates gamma* I is "
              "optimal with loss f1*",
    source="AhnPGD Thm 1; ZFB; the gradient and the rotation-invariant optimum are our "
           "derivation",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"seed": _SEEDS}),
    theory={"preconditioner": la.optimal_preconditioner,
            "rotation": la.rotation_invariant_optimum,
            "optimum_loss": la.optimal_one_layer_loss,
            "gradient": la.one_layer_gradient},
    control={"preconditioner": sigma_n_dropped_preconditioner,
             "rotation": la.rotation_invariant_optimum,
             "optimum_loss": sigma_n_dropped_loss, "gradient": la.one_layer_gradient},
    control_description="one near miss: Gamma* with the (1 + 1/n) Sigma term read as Sigma, "
                        "(Sigma + tr(Sigma)/n I)^-1 (4 % in its scale at Sigma = I), with "
                        "the loss at it as f*; the gradient and the rotation-invariant "
                        "optimum are the theory's",
    cost="slow",
    power=one_layer_optimum_power,
    examples=(Example({"seed": 0}, via="seed 0: the run the learned_steps figure draws"),),
    notes="The trained Gamma's scale (tr Gamma, the mean step) is held to Gamma*'s "
          "in the parameter itself, with a Student-t interval over the run's members "
          "(SIZES 'gd_family_one': 8 at quick), within what each member's own optimisation "
          "gap admits (trace_allowance, stop 69; it replaced a bare 1 %): the loss is "
          "quadratic in Gamma, so the exact excess e_m bounds |Gamma_m - Gamma*|_F by "
          "sqrt(2 e_m / lambda_min) (lambda_min = 2.6, the Hessian of one_layer_loss at "
          "Sigma = I, n = 20), and the trace by sqrt(d) times that.  The Frobenius distance "
          "keeps the optimiser's per-entry jitter (details); the excess-loss part bounds it. "
          "The torch "
          "evaluation loss (fresh prompts, exact over w*) is judged against the closed form "
          "f* with its Monte Carlo error in the interval. At a correlated Sigma (AhnPGD's "
          "spectrum rotated, where Gamma*'s tr(Sigma)/n I term is not proportional to "
          "Sigma^-1) the one-layer model fitted by L-BFGS on the fit's prompts (SIZES 'fit_correlated') "
          "is held to Gamma*(Sigma) in all d^2 entries by its own sampling law (the sandwich "
          "covariance; the loss is quadratic in A, so the law is first-order exact): a "
          "chi-square 99 % point, no constant; details give the relative scale error in "
          "Gamma* the run resolves with power 0.9. The same fit's torch loss on fresh "
          "prompts is held to one_layer_loss at the fitted Gamma (an exact expectation "
          "through E[Sigma_hat^2], so a slip in sample_cov_second_moment or moment4 shows "
          "in the trained model's loss). For sphere and Gamma covariates the one-layer "
          "model is fitted the same way (each law on its own prompt stream) and its "
          "tr(Gamma)/d and fresh-prompt loss (less the fit's mean excess tr(H C)/2) are "
          "held to gamma* and f1* (1 %, the fit's sandwich, the evaluation's noise and the "
          "excess's spread in the intervals). Their sizes come from a power calculation "
          "(one_layer_fit_sizes_needed: all five fit parts pass jointly with power 0.9 "
          "when the theory is exact, treating them as independent: the laws' streams are "
          "disjoint, and a law's scale and loss parts share one fit, so they are only "
          "approximately so; the excess's spread in the loss part's interval is not in "
          "that calculation, being of second order) on a pilot written before these parts "
          "(ONE_LAYER_FIT_PILOT: only standard errors read). The claimed gradient is held "
          "to the model's autograd gradient (the mean of per-prompt gradients on fresh "
          "prompts, a full-batch GD step's direction) at a fixed non-symmetric point and "
          "the correlated Sigma by its own sampling law (chi-square over d^2 entries; "
          "prompts sized to resolve a 10 % scale error at quick, 5 % at ci, 2 % at "
          "thorough, from a pilot's 9.6 % at 20 000 prompts at the earlier point A_0 = "
          "-Gamma_0^T; the quick run of d074052 at the present point resolved 9.65 %, the "
          "ci run of e54f17e 4.66 %; thorough's figure follows from 1 / sqrt(P), not from a "
          "run). The Gamma law's heavy tail "
          "(E G^2 = 11) needs about 8e6 fit prompts, sized only at thorough (not yet run "
          "there; its pilot s.e. under that tail is itself uncertain); below it those two "
          "parts are reported in the details (fits_not_judged), not judged, and gamma* "
          "for that law is judged by the Monte Carlo parts alone. Design changes after "
          "runs (said so): (1) the first quick run (seed 0) sized each part for power 0.9 "
          "on its own and left both sphere parts inconclusive (0.555 % [0, 1.23 %] and "
          "0.655 % [0, 1.28 %] against 1 %); (2) the sizes were then set for joint power "
          "0.9 over the five parts, but with a one-sided quantile for a two-sided error "
          "(a referee read found it: true joint power 0.81), and that run (same prompt "
          "streams, so not fresh evidence) held; (3) the formula is now two-sided, each "
          "covariate law draws its own stream (so the sphere parts are judged on prompts "
          "no earlier run saw), and the loss part removes the fit's mean excess, which "
          "the first design called negligible without measuring it. The outcome at this "
          "design stands whatever it is: the quick run of d074052 (seed 0) held, sphere "
          "0.008 % [0, 0.54 %] and 0.025 % [0, 0.50 %]. The correlated loss part's prompts "
          "are not fresh: its fit's 12 000 and the first 240 000 of its 260 000 evaluation "
          "prompts are those of runs (2) and the first, in which it passed (0.175 % and "
          "0.239 %); its size was changed with the others, after those outcomes. The "
          "Monte Carlo parts at gamma* I draw both laws' contexts from one stream (seed + "
          "7: the Gamma contexts are the sphere directions times sqrt(G)), as before this "
          "change.  Stop 66 (design change, said so): the correlated loss part's margin is "
          "now 0.25 % (CORRELATED_LOSS_TOLERANCE: the part compares an exact expectation "
          "with its Monte Carlo estimate at the same fitted Gamma, so no model mismatch "
          "enters; a quarter of PRECISION puts a 1 % whole-output slip of moment4 or "
          "sample_cov_second_moment beyond it), after stop 65's mutate run left two single-"
          "entry slips of those functions inconclusive under 1 %; its evaluation prompts "
          "follow (4 120 000, of which the first 260 000 are those the earlier runs used).  "
          "Its first quick run at this design (stop 66, seed 0, the code of this change): "
          "passes, 0.022 % [0, 0.154 %] against 0.25 % (fit and evaluation 66 s at one "
          "thread, idle).  Stop 68 (control change, chosen after stop 67's referee read; its "
          "outcome first seen in the run quoted here): the control "
          "bundled four misses (Gamma* without the tr(Sigma)/n term, 24 % in its scale at "
          "Sigma = I, and that Gamma*'s loss, half the gradient, the Gaussian rotation "
          "optimum), so any one far miss rejected it; it is now one near miss, (Sigma + "
          "tr(Sigma)/n I)^-1 with the loss at it as f* (so the closed-form part agrees with "
          "itself), 4 % in Gamma*'s scale at Sigma = I and 2.2 % (Frobenius) at the "
          "correlated Sigma.  Its first quick run (seed 0, one thread, a one-thread "
          "campaign beside it) rejects it by the trace part (3.73 % [2.81 %, 4.30 %] "
          "against 1 %; the theory 0.116 % [0, 0.705 %]), the correlated fit's weighted "
          "residual (2.13 against 1.77; the theory 1.33; that fit resolves a 4.4 % scale "
          "error with power 0.9, so its rejection of a 2.2 % miss is not a powered one) "
          "and the symbolic stationarity part; under it the per-member loss parts pass by "
          "design (the loss is flat to first order about Gamma*).  At ci (stop 68, commit "
          "9ee4524, one thread, a one-thread campaign beside it, 223 s): holds (worst part "
          "the correlated loss, 0.156 % against 0.25 %), and the control is rejected by the "
          "same three parts: trace 3.70 % [3.07 %, 4.08 %] (the theory 0.157 % [0, 0.553 "
          "%]), the fit 3.08 against 1.77 (the theory 0.91; at ci's prompts the fit "
          "resolves 3.6 %), and stationarity.  The gradient and the rotation-invariant optimum are judged by their own "
          "parts under tdcheck mutate.  Stop 69 (allowance change, after stop 68's referee "
          "read found the earlier reason wrong: the isotropic loss at Sigma = I does give a "
          "bound, through the trace's Cauchy-Schwarz): the trace part's bare 1 % became "
          "trace_allowance, derived before any run used it; the runs quoted above were "
          "judged against 1 %.",
)
def check_one_layer_optimum(params: dict, ctx: Context, *, preconditioner: Callable,
                            rotation: Callable, optimum_loss: Callable,
                            gradient: Callable) -> Evidence:
    """AhnPGD Thm 1 / ZFB on Setting 1 (d = 5, n = 20), the gradient of the one-layer loss
    (our derivation), and the rotation-invariant optimum (our derivation) for sphere and
    Gamma covariates.

    Trained parts: the trained Gamma's scale against the claimed Gamma*'s (in the
    parameter, within what the members' optimisation gap admits, :func:`trace_allowance`;
    interval over members), the exact excess loss of the trained Gamma
    (``one_layer_loss``), and the torch model's Monte Carlo evaluation loss against the
    closed form f* (``optimal_one_layer_loss``; noise in the interval); the model's autograd
    gradient against ``one_layer_gradient`` (:func:`_gradient_step_part`); at a correlated
    Sigma the L-BFGS fit against Gamma*(Sigma) (:func:`_correlated_fit_part`) and its
    fresh-prompt loss against ``one_layer_loss`` (:func:`_fitted_loss_parts`); for sphere
    and Gamma covariates the fit against gamma* and f1* (:func:`_rotation_fit_parts`).
    """
    sigma, n = sp.eye(5), 20
    gamma_star = _theory_array("optimal_preconditioner", preconditioner, sigma, n,
                               shape=(5, 5))
    f = one_layer_loss_setting1()
    f_closed = _theory_float(optimum_loss, sigma, n)
    f_star = f(gamma_star)
    if f_closed == 0:
        raise InadmissibleTheory("the claimed optimum loss is 0: no relative error exists")
    run = _gd_family(1, params["seed"], ctx)
    parts = []
    # The closed-form f* against the exact loss at the closed-form Gamma*: two derivations
    # of the same number (float64 rounding of a 25-term quadratic, 1e-12 relative).
    parts.append(Part("closed-form f* vs one_layer_loss(Gamma*)", f_closed, f_star,
                      abs(f_star - f_closed) / f_closed, 1e-12,
                      "|f(Gamma*) - f*| / f*, both exact (sympy): float64 rounding",
                      kind="symbolic"))
    parts.extend(_trained_gamma_parts(gamma_star, f, f_star, f_closed, run))
    # The claimed gradient against the derivative of the exact loss (whose value the torch
    # evaluation part ties to the model), at a fixed non-symmetric point away from Gamma*
    # (there the gradient is O(1) and a transpose slip shows): both exact, float rounding.
    g_claim = _theory_array("one_layer_gradient", gradient, sp.Matrix(_GRADIENT_POINT), sigma,
                            n, shape=(5, 5))
    g_exact = _loss_gradient_setting1(_GRADIENT_POINT)
    g_err = float(np.abs(g_claim - g_exact).max() / np.abs(g_exact).max())
    parts.append(Part(
        "one-layer gradient vs d one_layer_loss / d Gamma", float(np.linalg.norm(g_exact)),
        float(np.linalg.norm(g_claim)), g_err, 1e-10,
        "max entry |one_layer_gradient - sympy derivative of one_layer_loss| / max |entry| at a "
        "fixed non-symmetric Gamma; both exact: float64 rounding of 25-term sums (1e-10)",
        kind="symbolic"))
    # the claimed gradient at the step part's point (Gamma_0 of A_0 by Lemma 1), once
    g_step = _theory_array("one_layer_gradient", gradient,
                           sp.Matrix(_lemma1_gamma(_STEP_POINT)), sp.Matrix(_CORRELATED), 20,
                           shape=(5, 5))
    parts.append(_gradient_step_part(g_step, params["seed"], ctx))
    parts.append(_stationarity_correlated(preconditioner))
    parts.append(_correlated_fit_part(preconditioner, params["seed"], ctx))
    unjudged = {}
    fit_parts, fit_details = _fitted_loss_parts(_correlated_fit(params["seed"], ctx))
    parts.extend(fit_parts)
    if fit_details is not None:
        unjudged["correlated"] = fit_details
    parts.extend(_rotation_parts(rotation, n, params["seed"], ctx, unjudged))
    return Evidence(tuple(parts), {"gamma_star": float(gamma_star[0, 0]), "f_star": f_star,
                                   "fits_not_judged": unjudged})


# ---------------------------------------------------------------------- ZFB balanced flow
def _zfb_profile(ctx: Context, size: str | None = None) -> str:
    """The running profile, or ``size`` where that is smaller (a positive control's design
    size, capped at the running profile's)."""
    if size is not None and PROFILES.index(size) < PROFILES.index(ctx.profile):
        return size
    return ctx.profile


def _zfb(seed: int, ctx: Context, size: str | None = None) -> nl.ZFBResult:
    """The ZFB run of ``seed`` at :func:`_zfb_profile`'s size."""
    return nl.run_zfb(nl.ZFBConfig(seed=seed, **nl.SIZES.at("zfb", _zfb_profile(ctx, size))),
                      cache=ctx.cache, device=ctx.device)


#: the level of a max-|t| part (Bonferroni over its entries): 0.1 %, not 1 %, because a
#: calibration of these heavy-tailed Hessians at a smaller chunk size put 2 of 40 null
#: replicates over the 99 % point; at t_(1 - 0.0005/p) tails several times heavier than
#: normal's keep it near its nominal rate, for about 13 % less resolution
LEVEL_MAX_T = 0.001


def _max_t_part(name: str, chunks: np.ndarray, predicted: np.ndarray, reason: str,
                details: dict | None = None, bar: float = 0.05) -> Part:
    """Chunk means of a Monte Carlo quantity against a prediction, entry by entry: the
    largest |t| = |mean - predicted| / se over the p entries (se from the k chunks, Student-t
    with k - 1 dof) against the Bonferroni point t_{1 - LEVEL_MAX_T/(2p), k-1}: noise only,
    no constant.  Chosen over Hotelling's T^2, which a calibration run found too liberal on
    these heavy-tailed Hessians (40 replicates of 128 chunks of 2000 prompts at the balanced
    limit: 2 of 40 over its 99 % point, mean T^2/p 1.40 against F's 1.21); the entrywise t
    needs no covariance inverse and Bonferroni is conservative (at quick's 128 x 20 000, 40
    null replicates: none over its 99 % point).  Details give the relative scale
    error of the prediction it resolves with power 0.9 (normal approximation: the largest
    max(|predicted|, |mean|) / se must reach t_crit + z_0.9); where that is over ``bar`` (the project's 5 %:
    a simulation part must see a few-per-cent error) the part is not measured at this size
    (inconclusive, never a pass).  Its level is its own 0.1 %: the runner's Holm step takes
    parts with a single standard error, which this has not; the claim's power plan counts it
    (:func:`balanced_flow_members`)."""
    from scipy import stats as _st

    chunks = np.asarray(chunks, dtype=float)
    k, dof = chunks.shape
    se = chunks.std(0, ddof=1) / math.sqrt(k)
    mean = chunks.mean(0)
    if not np.all(se > 0):  # an entry the prompts do not move: nothing to test it with
        return Part.unmeasured(name, 0.0, "an entry does not vary over the chunks",
                               kind="simulation")
    r = mean - predicted
    stat = float(np.max(np.abs(r) / se))
    limit = float(_st.t.ppf(1 - LEVEL_MAX_T / (2 * dof), k - 1))
    # what it resolves, from the data as well as the prediction: a prediction of 0 must not
    # make its own part unmeasured
    reach = float(np.max(np.maximum(np.abs(predicted), np.abs(mean)) / se))
    resolves = (limit + float(_st.norm.ppf(0.9))) / reach if reach > 0 else math.inf
    part = Part(name, float(dof), stat, stat, limit,
                reason + "; the largest |t| over the entries against the Bonferroni 99.9 % "
                "point t_(1 - 0.0005/p, k-1) (noise only)",
                details={"chunks": k, "entries": dof, "resolves_scale_error": resolves,
                         "worst_entry": int(np.argmax(np.abs(r) / se)),
                         "max_entry_gap": float(np.abs(r).max()),
                         "max_entry": float(np.abs(predicted).max()), **(details or {})},
                kind="simulation")
    if not resolves <= bar:
        return replace(part, lower=0.0, upper=math.inf, measured=False,
                       error_model=part.error_model + f" (not measured: resolves a "
                       f"{100 * resolves:.3g} % scale error at this size, over the "
                       f"{100 * bar:g} % bar)")
    return part


def _curvature_parts(run: nl.ZFBResult, curvature: Callable, seed: int, ctx: Context,
                     size: str | None = None, hessian_size: dict | None = None) -> list[Part]:
    """The off-block curvature A(u, U) that :func:`_drift_allowance` takes (its dA/dy) as a
    prediction about the trained model: the Hessian of ZFB's own loss in the off-block
    entries o, by torch autograd (Monte Carlo over fresh prompts,
    ``numerics.linear_attention.run_zfb_hessian``), at the run's states.

    - at the members' mean end state y_T, against A(y_T);
    - its change from the shared start y_0 to y_T (both on the same prompts), against
      dA/dy at the midpoint applied to y_T - y_0: exact, not a first-order step, because A is
      a polynomial of degree 2 in y (o enters the read-out c^T Sigma_hat e through
      c = a + u w* and e = U x_q + (b . x_q) w*, so the o-quadratic terms carry u^2, u U or
      U U, besides a constant from the target's cross term; a test holds theory's A to
      degree 2), so its derivative is linear in y and the midpoint rule integrates it
      exactly.

    Both expectations are exact (the population Hessian at o = 0 of the model's loss, which
    A claims to be): no model mismatch, noise only (:func:`_max_t_part`, over the 21
    entries of the symmetric 6 x 6 upper triangle)."""
    d = run.U.shape[-1]
    y0 = np.array([run.u[0, 0], *run.U[0, 0].flatten()], dtype=float)
    y_t = np.array([run.u[:, -1].mean(), *run.U[:, -1].mean(0).flatten()], dtype=float)
    hes = nl.run_zfb_hessian(nl.ZFBHessianConfig(
        states=(tuple(float(v) for v in y_t), tuple(float(v) for v in y0)), seed=seed,
        **(hessian_size or nl.SIZES.at("zfb_hessian", _zfb_profile(ctx, size)))),
        cache=ctx.cache, device=ctx.device).hessians
    try:
        a_fn, da_fn = curvature(tuple(run.lam), run.n)
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"balanced_off_block_curvature_numeric gave no pair of "
                                 f"functions: {type(exc).__name__}: {exc}") from exc
    a_t = _theory_array("the off-block curvature A(y_T)", a_fn, y_t, shape=(2 * d, 2 * d))
    da = _theory_array("the off-block curvature's dA/dy at the midpoint", da_fn,
                       (y0 + y_t) / 2, shape=(y0.size, 2 * d, 2 * d))
    step = np.einsum("sij,s->ij", da, y_t - y0)
    iu = np.triu_indices(2 * d)
    return [
        _max_t_part("the model's off-block Hessian at its end state (torch, Monte "
                        "Carlo) vs the curvature A(u, U)", hes[0][:, iu[0], iu[1]],
                        a_t[iu], "the mean over chunks of the Hessian of ZFB's loss in "
                        "o = (W_PV[d, :d], W_KQ[d, :d]) at o = 0, the members' mean end "
                        "state, against balanced_off_block_curvature there",
                        {"state": "members' mean at T"}),
        _max_t_part("the change of the model's off-block Hessian from start to end "
                        "vs dA/dy at the midpoint x (y_T - y_0)",
                        (hes[0] - hes[1])[:, iu[0], iu[1]], step[iu],
                        "the Hessian's change between the shared start and the members' "
                        "mean end state, on the same prompts, against dA/dy((y_0 + y_T)/2) "
                        "(y_T - y_0), exact for A of degree 2 in y"),
    ]


def _gamma_path(states: np.ndarray) -> np.ndarray:
    """Gamma = u U^T along states (u, U row-major) of ``theory.linear_attention.balanced_flow``."""
    states = np.asarray(states)
    return la.reduced_gamma(states[:, 0], states[:, 1:].reshape(-1, 3, 3))


# Pilots of the power calculation (:func:`balanced_flow_members`): runs of balanced_flow at
# seed 0 with the map parts' intervals as now (the allowance from the recorded off-block
# moments, its jackknife error in the interval; commit 03e130c), quick's at 27 members and
# ci's at 8; per map-based part (error, per-member spread = (upper - error) / t_{0.995, M-1}
# x sqrt(M), tolerance: M - 1 dof, not the Welch dof the interval used, which the report
# does not record).  Thorough plans from ci's (the same run but for its members).
BALANCED_FLOW_PILOT: dict[str, dict[str, tuple[float, float, float]]] = {
    "quick": {
        "Gamma(t) of torch GD tracks the GD map of the flow (RMS over t)": (0.00471, 0.00969,
                                                                           0.0125),
        "Gamma(T) of torch GD vs the GD map's Gamma(T)": (0.00741, 0.0113, 0.0156),
        "u(T) of torch GD vs u from the map's Gamma(T) and the run's balance": (0.00306,
                                                                               0.0033,
                                                                               0.00893),
        # the converged-run parts: quick's run at 562fcb2 (session 50, 41 members), before
        # the u part's interval took the allowance's jackknife term
        "Gamma of torch GD run to convergence vs the claimed limit u_inf U_inf^T": (
            0.00630, 0.0111, 0.01586),
        "u of torch GD run to convergence vs the claimed u_inf": (0.04385, 0.00313, 0.1039),
        # the Gamma part at Sigma = R Lambda R^T (stop 70): no run of its own before the design;
        # the rotated run is the diagonal problem in rotated coordinates (the loss is
        # invariant under x -> R x, the parts' norms under the conjugation), so its error
        # and spread are distributed as the diagonal run's: that run's pilot values
        "Gamma of torch GD run to convergence vs the claimed limit u_inf U_inf^T"
        " (Sigma = R Lambda R^T)": (0.00630, 0.0111, 0.01586),
    },
    "ci": {
        "Gamma(t) of torch GD tracks the GD map of the flow (RMS over t)": (0.00213, 0.00474,
                                                                           0.00326),
        "Gamma(T) of torch GD vs the GD map's Gamma(T)": (0.00167, 0.00558, 0.00374),
        "u(T) of torch GD vs u from the map's Gamma(T) and the run's balance": (0.00068,
                                                                               0.000926,
                                                                               0.00198),
    },
}


#: the false-alarm budget of balanced_flow's two curvature parts (each a max-|t| test at
#: its own LEVEL_MAX_T), taken off the claim's 0.1 before the interval parts share the rest
BALANCED_FLOW_CURVATURE_LEVEL = 2 * LEVEL_MAX_T


def balanced_flow_members(profile: str) -> dict[str, int | None]:
    """Members each interval part of balanced_flow needs at ``profile`` to pass with the
    claim's power 0.9 (union bound: the two curvature parts' 0.1 % each
    (:data:`BALANCED_FLOW_CURVATURE_LEVEL`) off first, the rest shared by the pilot's parts;
    99 % intervals),
    from :data:`BALANCED_FLOW_PILOT` (thorough: ci's), the pilot's error taken as the true
    one: a part passes when its interval's upper end is below the tolerance, i.e. when the
    interval on tolerance - error lies above 0 (``numerics.stats.samples_for_power``,
    noncentral t; None: no member count does)."""
    pilot = BALANCED_FLOW_PILOT["ci" if profile == "thorough" else profile]
    power = 1 - (0.1 - BALANCED_FLOW_CURVATURE_LEVEL) / len(pilot)
    return {name: samples_for_power(tol - err, spread, power=power, confidence=0.99)
            for name, (err, spread, tol) in pilot.items()}


def balanced_flow_power(profile: str) -> PowerPlan | None:
    """balanced_flow's power plan at ``profile``: the ZFB members it runs against the most
    any map-based part needs (:func:`balanced_flow_members`); None at the smoke size, whose
    run (its own tolerance) has no pilot."""
    if profile not in BALANCED_FLOW_PILOT and profile != "thorough":
        return None
    need = list(balanced_flow_members(profile).values())
    needed = None if None in need else max(need)
    have = int(nl.SIZES.at("zfb", profile)["members"])
    return PowerPlan(decides=needed is not None and have >= needed, have=have, needed=needed,
                     unit="ZFB members",
                     design="balanced_flow_members: each interval part in the pilot passes "
                            "with power 1 - 0.098/(its parts) (99 % t intervals) at the "
                            "pilot's error and spread, the curvature parts' 0.1 % each taken "
                            "off first "
                            "(BALANCED_FLOW_PILOT; quick's has the converged-run parts, ci's "
                            "not: no ci run of them; thorough from ci's)")


_MAP_PARTS = ("Gamma(t) of torch GD tracks the GD map of the flow (RMS over t)",
              "Gamma(T) of torch GD vs the GD map's Gamma(T)")


def _map_gaps(profile: str, seed: int, wrong) -> dict[str, float]:
    """How far the GD map of the flow ``wrong`` lies from the paper's flow's map, from the
    run's own shared start (``zfb_init`` at ``seed``, no training) at the profile's lr and
    steps, relative to the paper's map's ||Gamma(T)||: RMS over the record, and at T (the
    two map parts of balanced_flow)."""
    size = nl.SIZES.at("zfb", profile)
    cfg = nl.ZFBConfig(seed=seed, **size)
    init = nl.zfb_init(3, cfg.sigma0)(torch.Generator().manual_seed(seed))
    y0 = np.array([float(init["PV"][3, 3]), *init["KQ"][:3, :3].numpy().flatten()])
    lam = sp.diag(*nl.ZFB_LAMBDA)
    rec = np.arange(0, cfg.steps + 1, cfg.record_every)
    if rec[-1] != cfg.steps:
        rec = np.append(rec, cfg.steps)
    right = _gamma_path(_gd_map(la.balanced_flow(lam, nl.ZFB_N), y0, cfg.lr, cfg.steps)[rec])
    other = _gamma_path(_gd_map(wrong(lam, nl.ZFB_N), y0, cfg.lr, cfg.steps)[rec])
    gap = np.linalg.norm(right - other, axis=(1, 2)) / float(np.linalg.norm(right[-1]))
    return {_MAP_PARTS[0]: float(np.sqrt(np.mean(gap**2))), _MAP_PARTS[1]: float(gap[-1])}


def _members_for_gaps(profile: str, gaps: dict[str, float]) -> dict[str, tuple[float, int | None]]:
    """(gap, members) per map part: the fewest members for the part's 99 % interval to lie
    above its tolerance with power 0.9 when the torch mean sits on the paper's map (the
    deviation is then the gap), with the pilot's spread and tolerance
    (:data:`BALANCED_FLOW_PILOT`; thorough: ci's); None: the gap is inside the tolerance."""
    pilot = BALANCED_FLOW_PILOT["ci" if profile == "thorough" else profile]
    out = {}
    for name, g in gaps.items():
        _, spread, tol = pilot[name]
        out[name] = (g, samples_for_power(g - tol, spread, power=0.9, confidence=0.99))
    return out


def balanced_flow_control_members(profile: str, seed: int = 0
                                   ) -> dict[str, tuple[float, int | None]]:
    """The power calculation of the n + 1 control for balanced_flow's two Gamma map parts
    at ``profile``: (gap, members) per part (:func:`_map_gaps` of the n + 1 flow,
    :func:`_members_for_gaps`).  One rejecting part rejects the control.  None: the gap is
    inside the tolerance, no member count resolves n from n + 1 on that part."""
    return _members_for_gaps(profile, _map_gaps(profile, seed, _wrong_flow))


def balanced_flow_scale_members(profile: str, delta: float, seed: int = 0
                                ) -> dict[str, dict[str, tuple[float, int | None]]]:
    """The power calculation of balanced_flow's resolution rung ``delta`` on its two map
    parts at ``profile``: for the flow's whole right-hand side times 1 + delta and 1 -
    delta (the resolution ladder's two mutants of ``balanced_flow``), (gap, members) per
    part as for the control (:func:`_map_gaps`, :func:`_members_for_gaps`).  The rung is
    resolved where, for each sign, some part's member count is within the run's."""
    out = {}
    for sign, factor in (("+", 1 + delta), ("-", 1 - delta)):
        def scaled(lam, n, _f=factor):
            sys = la.balanced_flow(lam, n)
            return replace(sys, rhs=sys.rhs * _f)
        out[sign] = _members_for_gaps(profile, _map_gaps(profile, seed, scaled))
    return out


def _wrong_flow(lam, n):
    """Control flow: n + 1 in the 1/n terms of the loss (a near miss: one context token
    too many, the slip the torch parts must resolve)."""
    return la.balanced_flow(lam, n + 1)


@claim(
    statement="ZFB's balance ||W_PV||^2 - ||W_KQ||^2 (u^2 - ||U||^2 on the block "
              "family) is a flow invariant: plain GD on the full one-layer model "
              "changes it by exactly lr^2 (||g_PV||^2 - ||g_KQ||^2) per step; "
              "Gamma = u U^T tracks the (u, U) flow at matched time and ends at "
              "Gamma* (balanced limit), at the diagonal Lambda and at a rotated Sigma = R "
              "Lambda R^T; the off-block curvature A(u, U) that bounds the "
              "noise-induced drift is the full model's Hessian in the off-block entries (at the "
              "run's states)",
    source="ZFB (conservation law, limit); the per-step GD identity and the off-block "
           "curvature are our derivation",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"seed": _SEEDS}),
    theory={"sign": -1, "limit": la.balanced_limit, "flow_of": la.balanced_flow,
            "preconditioner": la.optimal_preconditioner,
            "curvature": la.balanced_off_block_curvature_numeric},
    control={"sign": -1, "limit": la.balanced_limit, "flow_of": _wrong_flow,
             "preconditioner": la.optimal_preconditioner,
             "curvature": la.balanced_off_block_curvature_numeric},
    control_description="the flow with n + 1 in its 1/n terms (one context token too "
                        "many), the paper's invariant and limit kept: a near miss that the "
                        "torch parts and the flow's limit parts must resolve",
    cost="slow",
    examples=(Example({"seed": 0}, via="seed 0: the run the zfb_torch_vs_ode figure draws"),),
    expected_at={"ci": "inconclusive"},
    measured_at="quick",
    power=balanced_flow_power,
    positive=Positive({"seed": 0, "size": "quick"},
                      "the same check at quick's ZFB size (46 members, the power "
                      "calculation's count there; capped at the running profile's size), "
                      "where the map-based parts decide"),
    notes="Members share one init and draw independent minibatches "
          "(numerics.linear_attention.run_zfb): their spread is the noise model.  The torch "
          "parts compare the member mean with the discrete GD map of the flow under test "
          "(not its ODE: torch GD is a discrete map, so against the ODE the error is the "
          "discretisation gap itself, in details as ode_vs_map), within a derived bound on "
          "the noise-induced drift of the mean (_drift_allowance).  Session 29 replaced "
          "that bound's off-block term (6 max|off|^2 times the operator norms of dA/dy) by "
          "the recorded off-block second moments with the curvature from theory "
          "(balanced_off_block_curvature, tested against torch's Hessian): the allowance "
          "fell about 6-fold (quick's tracking tolerance 0.087 -> 0.0144, ci's 0.0197 -> "
          "0.0033, in 4- and 8-member runs), and the control became the near miss n + 1 "
          "alone (before: n doubled, bundled with the sum as the invariant and Gamma* "
          "without its tr/n term, which the exact parts rejected whatever the flow).  "
          "The earlier expectations (holds at quick with 4 members, at ci with 8) were "
          "re-planned from those runs: quick 27 members.  A referee then noted "
          "that the allowance is a plug-in of the members' moments, so its jackknife error "
          "now enters the intervals (_allowance_with_se); the 27-member quick run with it "
          "(03e130c: holds) and an 8-member ci run are the pilots of BALANCED_FLOW_PILOT, "
          "from which balanced_flow_members gives quick 41 members (now its size; the run "
          "at 27 is the pilot, not the verdict; a run at 40, from a pilot tolerance "
          "mis-rounded to 0.0157, was replaced), ci 347 (it has 8: inconclusive expected), "
          "thorough's 1000 decide.  Whether the torch parts resolve n from n + 1 "
          "(balanced_flow_control_members, a power calculation from the run's own start, "
          "no training): the n + 1 map lies 2.5 % (RMS over t) and 3.6 % (at T) of "
          "||Gamma(T)|| from the n map at quick's configuration, 2.9 % and 3.8 % at ci's; "
          "with the pilots' spreads and tolerances, 13 and 8 members give those parts power "
          "0.9 to reject the control at quick (it had 41 then, 46 now), 4 and 4 at ci (it has 8).  "
          "Resolution (stop 66): 10 % at quick, 5 % weakly (`tdcheck mutate --resolution` on "
          "52cc45c; the ladder scales the flow's whole right-hand side).  Which size reaches "
          "5 % (balanced_flow_scale_members, the same calculation for the ladder's +/- delta "
          "flows; 0.2 s, no training): the RMS map part needs 42 (+5 %) and 29 (-5 %) members "
          "at quick's configuration (it has 46: the pilot's own error, which the calculation "
          "leaves out, is why one sign stayed weak), and 6 and 6 at ci's; ci's 8 members "
          "do not let the parts pass (347 needed, expected inconclusive), so the size is "
          "thorough's (ci's configuration, 1000 members), where 2 % needs 36 and 32 "
          "members and 1 % sits at the tolerance (gaps 0.0033 against 0.0033: no member "
          "count for +1 %, about 91 000 for -1 %).  "
          "Session 50 added the curvature parts (_curvature_parts): the allowance's "
          "balanced_off_block_curvature had been held to torch's Hessian only by a unit "
          "test and was listed as unjudged.  They test it against the model's autograd "
          "Hessian (run_zfb_hessian) at the members' mean end state and in its change from "
          "the start, entry by entry (max |t|, Bonferroni 99.9 %; noise only), and do not "
          "decide where they resolve more than a 5 % scale error.  They see A where the "
          "run's nearly diagonal path puts weight: its off-diagonal coefficients in U's "
          "off-diagonal directions stay near 0 along the run (A[1,0], A[2,1] under 0.5 % of "
          "A[0,0] at the mid-run state of quick's seed-0 run, computed in session 50) and "
          "are not resolved.  Their size (128 chunks of "
          "20 000 prompts at quick) came from two pilots before any run of the claim: per-"
          "entry standard errors 0.2-1.5 % at 2e5 prompts at the balanced limit, and at "
          "quick's size at a perturbed balanced-limit state a Hotelling T^2 that resolved a "
          "0.5 % scale error and rejected a 5 % slip in any one of three diagonal entries "
          "and A at n + 1.  A calibration run (40 replicates of 128 x 2000 prompts at the "
          "balanced limit) then found Hotelling's T^2 too liberal on these heavy-tailed "
          "Hessians (2 of 40 over its 99 % point), so the parts use the entrywise t, whose "
          "calibration at that size was also 2 of 40 over its 99 % point (its median as "
          "under the null, its tail heavier; 2 of 40 cannot tell either from a calibrated "
          "test), at the 0.1 % level, whose point tolerates tails several times heavier: "
          "at quick's 20 000 prompts per chunk a calibration (40 null replicates of 128 x "
          "20 000 prompts at the balanced limit, run after the mutation measurement) put 0 "
          "of 40 over the 99 % point, its median 2.08 against 2.16 for 21 independent "
          "|t|'s.  The same session added the "
          "converged-run parts (_converged_limit_parts): the claimed limit had been judged "
          "only by the theory's own integrated flow, the torch run stopping at T, where the "
          "paper flow's GD map is still 4.6 % of ||Gamma*|| from Gamma* at quick.  A second "
          "ZFB run, 2.5 times quick's steps (where that map is 5.5e-5 from Gamma*), is held "
          "to (u_inf, U_inf) with the drift allowance at its end and the map's remaining "
          "way as tolerance; its first T steps repeat the main run (the same trajectory "
          "continued).  Its length came from the map alone, before the run.  Its first "
          "quick run (562fcb2, 41 members; held) is the pilot of its two parts in "
          "BALANCED_FLOW_PILOT; with them, and the curvature parts' level taken off the "
          "claim's 0.1, balanced_flow_members asked 46 members at quick (the existing "
          "Gamma(T) part's need rose from 41 as its share of the power fell), so quick now "
          "runs 46; after the curvature parts' level went from 1 % to 0.1 % (a second "
          "referee read, before any 46-member run was read) it asks 45, and quick keeps 46 "
          "(power above 0.9).  The verdict at quick is the 46-member run's, not the pilot's.  "
          "Stop 70 (issue 33): the claimed limit was held to a trained model only at the "
          "diagonal Lambda, where U_inf's off-diagonal entries are 0; at Sigma = R Lambda "
          "R^T only the theory's own integrated flow met them (tdcheck mutate on 906aea4: "
          "balanced_limit's [1][1] and [1][3] x 1.05 and [1][6] sign flip moved no "
          "simulation part).  A part now holds the limit's Gamma at Sigma = R Lambda R^T (R "
          "the rational rotation of the flow's rotated parts) to a converged ZFB run of its "
          "own (ZFBConfig.rotation: data x ~ N(0, R Lambda R^T) from its own stream, the "
          "same start rotated), with the same statistic and allowance, the allowance "
          "computed on the run seen in the diagonal coordinates (ZFBResult.unrotated; the "
          "loss is invariant under x -> R x with w* ~ N(0, I), the norms under the "
          "conjugation).  Its pilot values are the diagonal converged Gamma part's (the "
          "same distribution, by that invariance).  What it can see: errors of the limit "
          "that vanish at a diagonal Lambda (off-diagonal entries, a form that is not "
          "rotation-equivariant).  Its resolution is coarse: |U_inf| / ||U_inf|| at R "
          "Lambda R^T is 0.138 at [0, 1], 0.166 at [1, 2], 0.029 at [0, 2] (balanced_limit, "
          "stop 70), and a slip of one entry moves Gamma by that fraction of the slip, "
          "against a tolerance near 0.015 of ||Gamma|| (quick): a slip of one large "
          "off-diagonal entry of about 10-20 % is what it can refute, not 5 %.  A first "
          "design (stop 70, a referee read before any mutation run of it) had a u part "
          "there too and drew the same data stream as the diagonal run: the u part "
          "repeats the diagonal one (u_inf is rotation-invariant) and was dropped; the "
          "stream is now its own.  balanced_flow_members, over six interval parts, asks 46 "
          "members at quick (47 with the dropped u part), which quick runs.  Expected stays as "
          "planned (ZFB's limit holds for any Sigma).",
)
def check_balanced_flow(params: dict, ctx: Context, *, sign: int, limit: Callable,
                        flow_of: Callable, preconditioner: Callable,
                        curvature: Callable = la.balanced_off_block_curvature_numeric
                        ) -> Evidence:
    """ZFB: Q = ||W_PV||^2 + sign ||W_KQ||^2 (ZFB: sign = -1) under GD, Gamma(t) along the
    run, and the end state.

    If Q is a flow invariant, one GD step changes it by exactly
    ``theory.linear_attention.gd_invariant_change`` = lr^2 (||g_PV||^2 + sign ||g_KQ||^2).
    """
    run = _zfb(params["seed"], ctx, params.get("size"))
    lr, steps = run.lr, run.steps
    lam, n = sp.diag(*run.lam), run.n
    series = run.balance if sign < 0 else run.sum
    # Every relative error below is relative to the run's own ||mean Gamma(T)||, the same
    # number for check and control.
    norm = float(np.linalg.norm(run.gamma[:, -1].mean(0)))
    sys = _claimed_flow(flow_of, lam, n)
    members = run.u.shape[0]
    parts = []
    for m in range(members):
        inc = la.gd_invariant_change(lr, run.grad_sq_pv[m], run.grad_sq_kq[m], sign)
        predicted = np.concatenate([[0.0], np.cumsum(inc)])[steps]
        observed = series[m] - series[m, 0]
        scale = 1 + float(np.abs(series[m]).max())
        # Rounding: each recorded Q sums 2 (d + 1)^2 = 32 squares (<= 32 eps relative) and
        # each step's increment the same; over K steps <= 2 * 32 K eps * scale.
        tol = 64 * len(inc) * EPS * scale
        parts.append(Part(f"member {m}: invariant changes by lr^2 (|g_PV|^2 +- |g_KQ|^2)",
                          float(predicted[-1]), float(observed[-1]),
                          float(np.abs(observed - predicted).max()), tol,
                          "exact GD identity of a flow invariant; float64 rounding of the "
                          "squared norms, 64 K eps x scale over K steps",
                          details={"drift": float(np.abs(observed).max())},
                          # both sides from the torch run (its recorded balance and its own
                          # gradient norms) through the theory's per-step identity
                          kind="simulation"))
    # The claimed limit: the flow under test, integrated from the run's shared start far
    # past T, must end at the claimed balanced limit (u_inf, Gamma* = u_inf U_inf^T).
    # Allowance: how far that flow still moves between 20 T and 40 T (it has not quite
    # arrived) + the integrator's relative tolerance (1e-10, x 1e3 headroom).
    y0 = np.array([run.u[0, 0], *run.U[0, 0].flatten()])
    t_end = float(run.time[-1])
    limit_parts, gamma_star = _limit_parts(sys, y0, t_end, lam, n, limit, preconditioner, norm)
    parts.extend(limit_parts)
    # The same at a covariance that is not diagonal (ZFB's limit holds for any Sigma): Sigma =
    # R Lambda R^T with R an exact rational rotation, the flow from the rotated start (u, R U
    # R^T), which the flow's rotation equivariance maps to the rotated path.
    rot = _ROTATION
    rot_start = np.array([y0[0], *(np.array(rot, dtype=float) @ y0[1:].reshape(3, 3)
                                   @ np.array(rot.T, dtype=float)).flatten()])
    sigma_rot = rot * lam * rot.T
    parts.extend(_limit_parts(_claimed_flow(flow_of, sigma_rot, n), rot_start, t_end,
                              sigma_rot, n, limit, preconditioner, norm,
                              " (Sigma = R Lambda R^T)")[0])
    # The torch run against the discrete GD map of the flow under test (its rhs, the run's lr,
    # start and steps): torch GD is a discrete map plus minibatch noise, so its member mean
    # differs from that map only by the noise-induced drift, which :func:`_drift_allowance`
    # bounds from the members' own recorded moments (the same allowance for check and
    # control); the interval at each time is the members' spread with the allowance's own
    # jackknife error (_allowance_with_se; Student-t, Welch-Satterthwaite dof, _welch).
    rec = np.asarray(run.steps)
    ref = _gd_map(sys, y0, lr, int(rec[-1]))[rec]
    parts.extend(tolerance_from_theory(p, _ALLOWANCE_CURVATURE) for p in _map_parts(
        run, ref, _allowance_with_se(run, norm, curvature=curvature), norm))
    # The allowance's curvature (our derivation) against the model's own Hessian.
    parts.extend(_curvature_parts(run, curvature, params["seed"], ctx, params.get("size")))
    # The claimed limit against the model itself, trained until the flow has arrived.
    parts.extend(_converged_limit_parts(params["seed"], ctx, params.get("size"), limit,
                                        curvature))
    # The same at a covariance that is not diagonal: the limit's off-diagonal structure
    # (ZFB's theorem holds for any Sigma) against a model trained there.
    parts.extend(_converged_limit_parts(params["seed"], ctx, params.get("size"), limit,
                                        curvature, rotation=_ROTATION))
    disc = _ode_vs_map(run, y0, norm)
    return Evidence(tuple(parts), {"members": members, "lr": lr, "ode_vs_map": disc,
                                   "to_claimed_limit": float(np.linalg.norm(
                                       run.gamma[:, -1].mean(0)
                                       - gamma_star) / norm)})


# A rational rotation (the Cayley transform (I - S)(I + S)^-1 of a skew-symmetric S), so that
# Sigma = R Lambda R^T stays exact in sympy.
_SKEW = sp.Matrix([[0, sp.Rational(1, 2), 0], [-sp.Rational(1, 2), 0, sp.Rational(1, 3)],
                   [0, -sp.Rational(1, 3), 0]])
_ROTATION = (sp.eye(3) - _SKEW) * (sp.eye(3) + _SKEW).inv()


# The limit parts' allowance is the flow under test's own remaining motion (declared with
# verify.claims.tolerance_from_theory): the flow integrated is the theory's, so is its motion.
_LIMIT_DRIFT = (
    "a-posteriori allowance for the integration horizon: the flow under test's own motion "
    "from 20 T to 40 T (+ 1e-7 integrator), which bounds the distance left to that flow's "
    "own limit; a flow with another limit keeps its distance from the claimed Gamma* while "
    "its motion dies out, so a wrong flow cannot grow the allowance into a pass (seed 0, "
    "test profile: the n + 1 control's allowance 7 % above the paper flow's, its errors 400 "
    "to 6500 times either)")


#: how far past the run's own scale a flow under test may go before it is read as escaping:
#: the state (u, U) scales as ||Gamma||^(1/2), so 1e3 x that scale is Gamma a million times
#: the run's, where no claimed limit near the run can be reached
ESCAPE_FACTOR = 1e3


def _bounded_flow(system, y0: np.ndarray, t_end: float, t_eval: list[float], norm: float
                  ) -> np.ndarray:
    """``system`` integrated from ``y0`` to ``t_end``, the states at ``t_eval`` [T, state].

    A flow under test that leaves max |y| <= ESCAPE_FACTOR x max(1, max |y0|, norm^(1/2))
    (``norm``: the run's own ||Gamma||, the same for check and control) stops there and
    raises InadmissibleTheory: a wrong flow that ascends the loss blows up, and LSODA would
    otherwise crawl towards the blow-up for as long as a mutant's time limit allows."""
    bound = ESCAPE_FACTOR * max(1.0, float(np.max(np.abs(y0))), math.sqrt(norm))
    sol = integrate(system, y0, t_end, t_eval=t_eval,
                    events=(lambda t, y: bound - float(np.max(np.abs(y))),))
    if sol.t_event is not None:
        raise InadmissibleTheory(
            f"the flow under test ({system.name}) leaves max |y| <= {bound:.3g} at "
            f"t = {sol.t_event:.4g} of {t_end:.4g} (ESCAPE_FACTOR x the run's scale): it "
            "does not settle near the run")
    return sol.y.T


def _claimed_flow(flow_of: Callable, sigma: sp.Matrix, n: int):
    """The claimed reduced flow ``flow_of(sigma, n)``; an exception of the theory function is
    InadmissibleTheory (a failed part with the reason, never a crash of the check)."""
    try:
        return flow_of(sigma, n)
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"balanced_flow gave no system: {type(exc).__name__}: "
                                 f"{exc}") from exc


def _claimed_limit(limit: Callable, sigma: sp.Matrix, n: int, shape: tuple[int, int]
                   ) -> tuple[float, np.ndarray]:
    """The claimed balanced limit (u_inf, U_inf) = ``limit(sigma, n)`` as a finite nonzero
    float and a finite float matrix of ``shape``; anything else (an exception of the theory
    function, a symbol left in, a wrong shape) is InadmissibleTheory, a failed part with the
    reason, never a crash of the check."""
    try:
        u_inf, u_mat = limit(sigma, n)
        u_inf = float(u_inf)
        u_mat = np.array(sp.Matrix(u_mat).evalf(), dtype=float)
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"balanced_limit gave no (u, U): {type(exc).__name__}: "
                                 f"{exc}") from exc
    if u_mat.shape != shape or not math.isfinite(u_inf) or u_inf == 0 \
            or not np.all(np.isfinite(u_mat)):
        raise InadmissibleTheory(f"balanced_limit gave u = {u_inf}, U of shape {u_mat.shape}")
    return u_inf, u_mat


def _limit_parts(system, y0: np.ndarray, t_end: float, sigma: sp.Matrix, n: int,
                 limit: Callable, preconditioner: Callable, norm: float, where: str = ""
                 ) -> tuple[list[Part], np.ndarray]:
    """The flow ``system`` integrated from ``y0`` far past ``t_end`` against the claimed
    balanced limit ``limit(sigma, n)`` and Gamma* = ``preconditioner(sigma, n)``: parts for
    Gamma, U and u (relative to ``norm``), and the split's recomposed Gamma*."""
    # Allowance: how far that flow still moves between 20 T and 40 T (it has not quite
    # arrived) + the integrator's relative tolerance (1e-10, x 1e3 headroom).
    far = _bounded_flow(system, y0, 40 * t_end, [20 * t_end, 40 * t_end], norm)
    g_far = _gamma_path(far)
    settle = float(np.linalg.norm(g_far[1] - g_far[0]) / norm) + 1e-7
    u_inf, u_mat = _claimed_limit(limit, sigma, n, (sigma.rows, sigma.rows))
    gamma_star = la.reduced_gamma(u_inf, u_mat)
    # The claimed Gamma* itself (AhnPGD Thm 1 / ZFB), not its recomposed split, so that the
    # flow's Gamma = u U^T is held to a matrix that does not go through reduced_gamma.
    gamma_claim = _theory_array("optimal_preconditioner", preconditioner, sigma, n,
                                shape=(sigma.rows, sigma.rows))
    lim_err = float(np.linalg.norm(g_far[1] - gamma_claim) / norm)
    parts = [Part(f"the flow's limit Gamma = u U^T vs the claimed Gamma*{where}", 0.0, lim_err,
                  lim_err, settle,
                  "||Gamma_ode(40 T) - Gamma*|| / ||Gamma*||, the flow under test from the "
                  "run's shared start; allowance its own remaining motion, "
                  "||Gamma_ode(40 T) - Gamma_ode(20 T)|| / ||Gamma*||, + 1e-7 (integrator)",
                  details={"u_ode": float(far[1, 0]),
                           "split_recomposes": float(np.linalg.norm(gamma_star - gamma_claim)
                                                     / norm)}, kind="symbolic")]
    # The balanced split's matrix U_inf against the flow's U(40 T) in the state itself.
    # Allowance: U = Gamma^T / u moves at most as fast as Gamma and u together (relative),
    # so twice the u allowance below; + 1e-7 (integrator).
    big_u = far[1, 1:].reshape(3, 3)
    big_u_err = float(np.linalg.norm(big_u - u_mat) / np.linalg.norm(u_mat))
    parts.append(Part(f"the flow's U vs the balanced U_inf = Gamma*/||Gamma*||^1/2{where}", 0.0,
                      big_u_err, big_u_err, 2 * (settle * 2 + 1e-7) + 1e-7,
                      "||U_ode(40 T) - U_inf|| / ||U_inf|| (the balanced split's matrix); "
                      "allowance: U = Gamma^T / u moves at most by Gamma's and u's relative "
                      "motion together, twice the u allowance, + 1e-7 (integrator)",
                      kind="symbolic"))
    u_err = abs(float(far[1, 0]) - u_inf) / u_inf
    parts.append(Part(f"the flow's u vs the balanced u_inf = ||Gamma*||^1/2{where}", u_inf,
                      float(far[1, 0]), u_err, settle * 2 + 1e-7,
                      "|u_ode(40 T) - u_inf| / u_inf (the balanced split of the limit); "
                      "allowance twice the flow's remaining relative motion (u ~ ||Gamma||^1/2 "
                      "moves at most half as fast, x 4 headroom) + 1e-7", kind="symbolic"))
    return [tolerance_from_theory(p, _LIMIT_DRIFT) for p in parts], gamma_star


_ALLOWANCE_CURVATURE = (
    "the drift allowance takes dA/dy from the claim's balanced_off_block_curvature (our "
    "derivation), the same function for check and control; a wrong one that grew the "
    "allowance would fail this claim's curvature parts, which hold it to the model's own "
    "Hessian")


_CONVERGED_SETTLE = (
    "the paper flow's GD map (the drift allowance's) at T_c against where it stands at "
    "40 T_c, plus its motion from 20 T_c to 40 T_c: the map's remaining way to its limit, "
    "added to the drift allowance; it moves with the theory only through that flow and the "
    "allowance's curvature (both judged by this claim's other parts), not through the "
    "limit under test, and where it exceeds a tenth of the allowance the map has not "
    "arrived and the part does not decide")


def _converged_limit_parts(seed: int, ctx: Context, size: str | None, limit: Callable,
                           curvature: Callable = la.balanced_off_block_curvature_numeric,
                           rotation: sp.Matrix | None = None) -> list[Part]:
    """The claimed balanced limit against torch GD trained until the flow has arrived: a
    second ZFB run (``numerics.linear_attention.run_zfb`` at SIZES "zfb_converged": the
    profile's run, longer; its first T steps repeat the main run's exactly, the same seed,
    init and data stream: the same trajectory continued, not independent evidence) whose
    member mean sits at the limit up to the noise-induced drift.

    - Gamma: ||mean torch Gamma(T_c) - u_inf U_inf^T|| / ||mean Gamma(T_c)||, (u_inf,
      U_inf) = ``limit``.  The drift allowance (:func:`_allowance_with_se`) bounds the mean's
      distance from the paper flow's GD map at T_c, and the map's remaining way to its
      limit (:data:`_CONVERGED_SETTLE`) the map's distance from the limit: their sum is the
      tolerance.  Interval: the members' spread and the allowance's jackknife error
      (Welch), as :func:`_map_parts`.  Where the map has not arrived (its remaining way
      over a tenth of the allowance: the smoke size) the part does not decide.
    - u: |mean torch u(T_c) - u_inf| / u_inf.  A member's u is fixed by its ||Gamma|| and
      its balance b (``balanced_split_scale``; u_inf is its b = 0 value), and du/db,
      du/d||Gamma|| <= 1 / (2 u) (as in :func:`_map_parts`), so the allowance is (max |b|
      over members + 6 max_off^2 + ||Gamma|| x the Gamma tolerance) / (2 min u(T_c)),
      relative to u_inf (first order: the curvature of u in ||Gamma|| and b, and E||Gamma_m||
      - ||E Gamma||, are left out; the start is balanced, b_0 = 0).  Interval: the members'
      spread and the allowance's jackknife error (Welch).

    ``rotation`` (an exact orthogonal R): the Gamma part at Sigma = R Lambda R^T, a run of
    its own (``ZFBConfig.rotation``: data x ~ N(0, R Lambda R^T) from its own stream, the
    same start rotated, R U_0 R^T), against ``limit(R Lambda R^T, n)``; no u part there
    (u_inf = ||Gamma*||^1/2 is invariant under the rotation).  Its allowance is computed on
    the run seen in the diagonal coordinates (``ZFBResult.unrotated``): the model's loss is
    invariant under x -> R x (w* ~ N(0, I)), the Frobenius norms the parts take are
    invariant under the conjugation, and the allowance's curvature is derived for a
    diagonal Lambda."""
    rot = None if rotation is None else tuple(
        tuple(float(v) for v in row) for row in np.array(rotation.evalf(), dtype=float))
    run = nl.run_zfb(nl.ZFBConfig(seed=seed, rotation=rot,
                                  **nl.SIZES.at("zfb_converged", _zfb_profile(ctx, size))),
                     cache=ctx.cache, device=ctx.device)
    view = run.unrotated()
    lam, n = sp.diag(*run.lam), run.n
    sigma = lam if rotation is None else rotation * lam * rotation.T
    where = "" if rotation is None else " (Sigma = R Lambda R^T)"
    g_full = run.gamma[:, -1]  # [M, d, d], read from the model (not reduced_gamma)
    members = g_full.shape[0]
    mean = g_full.mean(0)
    u_inf, u_mat = _claimed_limit(limit, sigma, n, mean.shape)
    norm = float(np.linalg.norm(mean))
    steps = int(run.steps[-1])
    geo = _map_geometry(view, curvature, extra_steps=39 * steps)
    allow = _allowance_with_se(view, norm, curvature=curvature, geometry=geo)
    g_far = _gamma_path(geo["phi"][[steps, 20 * steps, 40 * steps]])
    settle = float(np.linalg.norm(g_far[0] - g_far[2]) + np.linalg.norm(g_far[2] - g_far[1])
                   ) / norm
    arrived = settle <= 0.1 * float(allow["gamma"][-1])
    claimed = la.reduced_gamma(u_inf, u_mat)
    dev = float(np.linalg.norm(mean - claimed)) / norm
    se_mean = math.sqrt(float(((g_full - mean) ** 2).sum()) / (members - 1) / members) / norm
    jack_dof = int(allow["jackknife_dof"])
    se, dof = _welch(np.array([se_mean]), members - 1, allow["gamma_se"][-1:], jack_dof)
    se, q = float(se[0]), t_quantile(0.99, dof)
    tol = float(allow["gamma"][-1]) + settle
    model = ("tolerance the noise-induced drift of the member mean at T_c (_drift_allowance) "
             "+ the paper flow's GD map's remaining way to its limit (T_c -> 40 T_c, + its "
             "motion 20 T_c -> 40 T_c); interval the members' spread and the allowance's "
             "jackknife error, Student-t, Welch dof")
    u_end = run.u[:, -1]
    scale = 2 * float(u_end.min()) * abs(u_inf)
    u_dev = abs(float(u_end.mean()) - u_inf) / abs(u_inf)
    u_tol = (float(np.abs(run.balance[:, -1]).max()) + float(allow["off_balance"][-1])
             + norm * tol) / scale
    u_se, u_dof = _welch(np.array([float(u_end.std(ddof=1)) / math.sqrt(members) / abs(u_inf)]),
                         members - 1, np.array([norm * float(allow["gamma_se"][-1]) / scale]),
                         jack_dof)
    u_se, u_q = float(u_se[0]), t_quantile(0.99, u_dof)
    details = {"steps": steps, "members": members, "settle": settle, "arrived": arrived,
               "drift_allowance": float(allow["gamma"][-1])}
    why = "" if arrived else (" (not measured: the paper flow's map has not arrived by T_c "
                              "at this size; quick's run is the first that measures it)")
    parts = (
        Part.bounded("Gamma of torch GD run to convergence vs the claimed limit u_inf U_inf^T"
                     + where,
                     0.0, dev, dev, max(0.0, dev - q * se), dev + q * se, tol,
                     "||mean torch Gamma(T_c) - u_inf U_inf^T|| / ||mean Gamma(T_c)||, "
                     "(u_inf, U_inf) the claimed balanced limit; " + model + why,
                     se=se, dof=dof, details=details, kind="simulation"),
        Part.bounded("u of torch GD run to convergence vs the claimed u_inf" + where, u_inf,
                     float(u_end.mean()), u_dev, max(0.0, u_dev - u_q * u_se),
                     u_dev + u_q * u_se, u_tol,
                     "|mean torch u(T_c) - u_inf| / u_inf; allowance (max |balance| + 6 "
                     "max_off^2 + ||Gamma|| x the Gamma tolerance) / (2 min u(T_c) u_inf): "
                     "u moves at most 1 / (2 u) per unit of balance or of ||Gamma||; "
                     "interval the members' spread and the allowance's jackknife error "
                     "(Welch)" + why,
                     se=u_se, dof=u_dof, details=details, kind="simulation"))
    if rotation is not None:
        # u_inf = ||Gamma*||^1/2 does not change under the rotation: a u part there would
        # repeat the diagonal one's test and take a share of the claim's power
        parts = parts[:1]
    if not arrived:  # the run cannot decide: neither a pass nor a failure
        parts = tuple(replace(p, lower=0.0, upper=math.inf, measured=False) for p in parts)
    return [tolerance_from_theory(p, _CONVERGED_SETTLE) for p in parts]


def _gd_map(system, y0: np.ndarray, lr: float, steps: int) -> np.ndarray:
    """The discrete GD map y <- y + lr rhs(y) of ``system`` (the rhs lambdified), ``steps``
    steps from ``y0``: every iterate [steps + 1, state]."""
    rhs = system.lambdify("numpy")
    y = np.array(y0, dtype=float)
    out = [y.copy()]
    for _ in range(int(steps)):
        y = y + lr * np.asarray(rhs(0.0, y), dtype=float).reshape(-1)
        out.append(y.copy())
    return np.array(out)


@cache
def _flow_derivatives(lam: tuple[float, ...], n: int) -> tuple:
    """The paper's balanced flow at Lambda = diag(``lam``) and its first three derivatives
    in the state: (system, J(y), d2F(y), d3F) lambdified, d3F a constant (F is cubic in
    the state, so float() fails otherwise).  Cached: the jackknife of
    :func:`_allowance_with_se` asks for them once per group."""
    sys = la.balanced_flow(sp.diag(*lam), n)
    state = sp.Matrix(sys.state)
    jac = lambdify_numeric([list(sys.state)], sys.rhs.jacobian(state), "numpy")
    d2 = lambdify_numeric([list(sys.state)], sp.Array([[[sp.diff(f, x, y) for y in sys.state]
                                                    for x in sys.state] for f in sys.rhs]),
                     "numpy")
    d3 = np.array([[[[float(sp.diff(f, x, y, z)) for z in sys.state] for y in sys.state]
                    for x in sys.state] for f in sys.rhs], dtype=float)
    return sys, jac, d2, d3


def _drift_allowance(run: nl.ZFBResult, norm: float, geometry: dict | None = None
                     ) -> dict[str, np.ndarray]:
    """A bound (from the members' recorded moments), at each recorded time relative to
    ``norm``, on ||E[torch member mean Gamma] -
    Gamma of the discrete GD map of ``theory.linear_attention.balanced_flow``|| (the paper's
    flow, the run's lr and start: the same allowance for check and control); also the
    off-block bound on each member's block balance (``off_balance``, absolute).

    Derivation (ours).  Members run theta <- theta - lr (grad L(theta) + xi), E xi = 0, so the
    mean state y_bar of (u, U) moves by lr E[F(y, o)] exactly (F = -grad_y L, L the
    population loss of the full model), and E F = F(y_bar) + r with the noise-induced drift
    r = (1/2) d2F : C + (1/6) d3F : m3 - (1/2) tr(dA/dy E[o o^T]) (F is cubic in y, so the
    y-series ends; A the off-block curvature
    ``theory.linear_attention.balanced_off_block_curvature``; no second-order o-y cross
    moments: the loss is even in o at fixed y, by the symmetry (w*, o) -> (-w*, -o), so
    d_o F = 0 at o = 0 for every y).  C and m3 are the members' own recorded
    covariance and third central moments of (u, U), E[o o^T] their mean of o o^T over the
    recorded off-block entries o = (a, b) (which start at 0; the raw moment, as the expansion is
    about o = 0).  All three are the members' sample estimates: the allowance is a plug-in
    bound, whose own sampling error :func:`_allowance_with_se` puts into the parts'
    intervals.  To first order the gap e to the map obeys e' = (I + lr J) e + lr r (J = dF/dy
    at the map's state), so Gamma's gap at step K is sum_k lr G_k r_k with
    G_k = T_K (I + lr J_{K-1}) ... (I + lr J_{k+1}), T_K = dGamma/dy at the map's state: the
    bound sum_k lr ||G_k||_F |r_k|.  Gamma is invariant under (u, U) -> (c u, U / c), along
    which the noise moves the balance, so this sum does not grow with the record as the
    state's gap does.  Plus the members' own Cov(u, U^T) (mean Gamma is not Gamma of the mean
    state) and rounding, 64 eps ||Gamma|| per step (as the invariant parts).  Moments are
    interpolated linearly between recorded steps, derivatives taken at the map's state; left
    out: terms of higher order in the fluctuations (E|o|^2 |dy|, E|o|^4) and in e.
    """
    geo = _map_geometry(run) if geometry is None else geometry
    phi, d2_k, da_k, prop, d3 = geo["phi"], geo["d2"], geo["da"], geo["prop"], geo["d3"]
    nst = phi.shape[1]
    members = run.u.shape[0]
    rec = np.asarray(run.steps)
    y = np.concatenate([run.u[..., None], run.U.reshape(members, len(rec), -1)], -1)
    dy = y - y.mean(0)
    cov = np.einsum("mti,mtj->tij", dy, dy) / (members - 1)
    m3 = (np.einsum("mti,mtj,mtk->tijk", dy, dy, dy) * members
          / ((members - 1) * (members - 2)) if members > 2
          else np.zeros((len(rec), nst, nst, nst)))
    off2 = np.einsum("mti,mtj->tij", run.off_entries, run.off_entries) / members
    steps = int(rec[-1])
    # the moments interpolated linearly between recorded steps, at every step k < steps
    k = np.arange(steps)
    j = np.minimum(np.searchsorted(rec, k, side="right") - 1, len(rec) - 2)
    f = (k - rec[j]) / (rec[j + 1] - rec[j])

    def lerp(a: np.ndarray) -> np.ndarray:
        w = f.reshape(-1, *([1] * (a.ndim - 1)))
        return (1 - w) * a[j] + w * a[j + 1]

    r_y = (0.5 * np.einsum("kfij,kij->kf", d2_k, lerp(cov))
           + np.einsum("fijl,kijl->kf", d3, lerp(m3)) / 6)
    r_o = -0.5 * np.einsum("kfij,kij->kf", da_k, lerp(off2))
    rho = np.linalg.norm(r_y + r_o, axis=1)
    # sum_k lr ||G_k||_F rho_k for every record at once: G starts as dGamma/dy at the
    # record's map state and takes a step of the map's linearisation per k going back
    d = run.U.shape[-1]
    g = geo["tangent"].copy()  # [records, d^2, state]
    acc = np.zeros(len(rec))
    for kk in range(steps - 1, -1, -1):
        live = rec > kk
        acc[live] += run.lr * np.linalg.norm(g[live], axis=(1, 2)) * rho[kk]
        g[live] = g[live] @ prop[kk]
    bound = acc + geo["rounding"]
    cross = np.einsum("mt,mtij->tji", dy[..., 0], dy[..., 1:].reshape(members, len(rec), d, d))
    bound += np.linalg.norm(cross / (members - 1), axis=(1, 2))
    return {"gamma": bound / norm, "off_balance": 6 * (run.off**2).max(0)}


def _map_geometry(run: nl.ZFBResult, curvature: Callable = la.balanced_off_block_curvature_numeric,
                  extra_steps: int = 0) -> dict[str, np.ndarray]:
    """What :func:`_drift_allowance` takes from the paper's flow alone (the members share
    one start, so a subset of them has the same): the GD map's states ``phi``, at every step
    d2F (``d2``), dA/dy (``da``, from ``curvature``: the claim's, which its curvature parts
    judge; a malformed one is InadmissibleTheory) and the linearised step I + lr J
    (``prop``), the constant d3F, dGamma/dy at each record's map state (``tangent``) and the
    rounding term.  ``extra_steps``: the map is run that many steps past the record (``phi``
    holds them; the converged-limit parts read the map's remaining way there)."""
    if getattr(run.config, "rotation", None) is not None:
        raise ValueError("a rotated ZFB run: pass its unrotated() view (the geometry is the "
                         "diagonal Lambda's)")
    sys, jac, d2, d3 = _flow_derivatives(tuple(run.lam), run.n)
    nst = len(sys.state)
    try:
        _, d_a = curvature(tuple(run.lam), run.n)
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"balanced_off_block_curvature_numeric gave no pair of "
                                 f"functions: {type(exc).__name__}: {exc}") from exc
    rec = np.asarray(run.steps)
    steps = int(rec[-1])
    y0 = np.array([run.u[0, 0], *run.U[0, 0].flatten()])
    phi = _gd_map(sys, y0, run.lr, steps + int(extra_steps))
    d2_k = np.array([np.asarray(d2(phi[k]), dtype=float) for k in range(steps)])
    shape = (nst, 2 * run.U.shape[-1], 2 * run.U.shape[-1])
    # a map that leaves the finite numbers (a wrong flow blowing up) gives a non-finite
    # allowance, which fails the parts that take it; only a malformed curvature at a finite
    # state is inadmissible
    da_k = np.array([_theory_array("the off-block curvature's dA/dy on the map", d_a, phi[k],
                                   shape=shape) if np.all(np.isfinite(phi[k]))
                     else np.full(shape, np.nan) for k in range(steps)])
    prop = np.array([np.eye(nst) + run.lr * np.asarray(jac(phi[k]), dtype=float)
                     for k in range(steps)])
    d = run.U.shape[-1]
    tangent = np.zeros((len(rec), d * d, nst))  # dGamma/dy at the map's state, Gamma = u U^T
    rounding = np.zeros(len(rec))
    for i, kk in enumerate(rec):
        uu, mat = phi[kk, 0], phi[kk, 1:].reshape(d, d)
        tangent[i, :, 0] = mat.T.flatten()
        for r_ in range(d):
            for c_ in range(d):
                tangent[i, r_ * d + c_, 1 + c_ * d + r_] = uu
        rounding[i] = 64 * EPS * float(np.linalg.norm(uu * mat)) * int(kk)
    return {"phi": phi, "d2": d2_k.reshape(steps, nst, nst, nst),
            "da": da_k.reshape(steps, nst, *da_k.shape[-2:]), "prop": prop, "d3": d3,
            "tangent": tangent, "rounding": rounding}


def _allowance_with_se(run: nl.ZFBResult, norm: float, groups: int = 10,
                       curvature: Callable = la.balanced_off_block_curvature_numeric,
                       geometry: dict | None = None) -> dict[str, np.ndarray | int]:
    """:func:`_drift_allowance` with the standard error of its Gamma part (``gamma_se``, at
    each recorded time), a grouped jackknife over the members (min(M, ``groups``) groups;
    ``jackknife_dof`` = groups - 1): the allowance is a plug-in of the members' moments, so
    its own sampling error goes into the parts' intervals, beside the spread of the mean."""
    geo = _map_geometry(run, curvature) if geometry is None else geometry
    allow = _drift_allowance(run, norm, geo)
    members = run.u.shape[0]
    parts = np.array_split(np.arange(members), min(members, groups))
    leave_out = np.array([_drift_allowance(run.member_subset(np.setdiff1d(np.arange(members), g)),
                                           norm, geo)["gamma"] for g in parts])
    k = len(parts)
    var = (k - 1) / k * ((leave_out - leave_out.mean(0)) ** 2).sum(0)
    return {**allow, "gamma_se": np.sqrt(var), "jackknife_dof": k - 1}


def _welch(se_a: np.ndarray, dof_a: int, se_b: np.ndarray, dof_b: int
           ) -> tuple[np.ndarray, int]:
    """sqrt(se_a^2 + se_b^2) and its Welch-Satterthwaite degrees of freedom (the smallest
    over the entries, floored)."""
    a, b = np.asarray(se_a) ** 2, np.asarray(se_b) ** 2
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        dof = np.where(total > 0, total**2 / (a**2 / dof_a + b**2 / dof_b), dof_a)
    return np.sqrt(total), max(1, int(np.floor(np.min(dof))))


def _map_parts(run: nl.ZFBResult, ref: np.ndarray, allow: dict[str, np.ndarray], norm: float
               ) -> list[Part]:
    """Torch GD against ``ref``, the discrete GD map of the flow under test (states at the
    recorded steps), with the allowance ``allow`` (:func:`_drift_allowance`, relative to
    ``norm`` = the run's ||mean Gamma(T)||): the member mean of Gamma along the record (RMS
    over t) and at T, and u(T) (the balanced split's scalar in the torch run itself)."""
    g_full = run.gamma  # [M, T, d, d], read from the model (not reduced_gamma)
    members = g_full.shape[0]
    mean = g_full.mean(0)
    g_ref = _gamma_path(ref)
    dev = np.linalg.norm(mean - g_ref, axis=(1, 2)) / norm
    se_mean = np.sqrt(((g_full - mean) ** 2).sum((0, 2, 3)) / (members - 1) / members) / norm
    se, dof = _welch(se_mean, members - 1, allow["gamma_se"], int(allow["jackknife_dof"]))
    q = t_quantile(0.99, dof)
    tol = allow["gamma"]

    def rms(v: np.ndarray) -> float:
        return float(np.sqrt(np.mean(v**2)))

    model = ("allowance the noise-induced drift of the member mean from the GD map "
             "(_drift_allowance: second order in the fluctuations, from the members' recorded "
             "(u, U) moments and off-block second moments, the paper's flow and the full model's "
             "off-block curvature, propagated by the map's linearisation; the same for check "
             "and control); interval: the members' spread and the allowance's own jackknife "
             "error (_allowance_with_se), Student-t with Welch-Satterthwaite dof")
    # u(T): a member's block balance u^2 - ||U||^2 is its full balance (recorded: data, the
    # same for check and control) minus ||a||^2 - ||b||^2, within 6 max_off^2; with Gamma it
    # fixes u (theory.linear_attention.balanced_split_scale).  From
    # ||Gamma||^2 = u^2 (u^2 - b) and u^2 + ||U||^2 >= 2 ||Gamma||: du/db <= 1 / (2 u) and
    # du/d||Gamma|| <= 1 / (2 u), so the allowance is (6 max_off^2 + the Gamma allowance at
    # T, absolute) / (2 u).
    g_norm = float(np.linalg.norm(g_ref[-1]))
    b_end = run.balance[:, -1]
    u_pred = la.balanced_split_scale(g_norm, b_end)
    u_end = run.u[:, -1]
    u_ref = abs(float(u_end.mean()))
    diff = u_end - u_pred
    u_dev = abs(float(diff.mean())) / u_ref
    # (u at the run's own smallest u(T), data: the same allowance for check and control)
    u_scale = 2 * float(u_end.min()) * u_ref
    u_tol = float(allow["off_balance"][-1] + norm * tol[-1]) / u_scale
    u_se, u_dof = _welch(np.array([float(diff.std(ddof=1)) / math.sqrt(members) / u_ref]),
                         members - 1, np.array([norm * float(allow["gamma_se"][-1]) / u_scale]),
                         int(allow["jackknife_dof"]))
    u_se, u_q = float(u_se[0]), t_quantile(0.99, u_dof)
    return [
        Part.bounded("Gamma(t) of torch GD tracks the GD map of the flow (RMS over t)", 0.0,
                     rms(dev), rms(dev), rms(np.maximum(dev - q * se, 0.0)), rms(dev + q * se),
                     rms(tol),
                     "RMS over recorded t of ||mean torch Gamma(t) - Gamma_map(t)|| / ||mean "
                     "Gamma(T)||, the map y <- y + lr rhs(y) of the flow under test from the "
                     "run's start; tolerance the RMS of the drift allowance; " + model,
                     details={"max_dev": float(dev.max()),
                              "worst_time": float(run.time[int(dev.argmax())])},
                     kind="simulation"),
        Part.bounded("Gamma(T) of torch GD vs the GD map's Gamma(T)", 0.0, float(dev[-1]),
                     float(dev[-1]), max(0.0, float(dev[-1] - q * se[-1])),
                     float(dev[-1] + q * se[-1]), float(tol[-1]),
                     "||mean torch Gamma(T) - Gamma_map(T)|| / ||mean Gamma(T)||; " + model,
                     se=float(se[-1]), dof=dof, kind="simulation"),
        Part.bounded("u(T) of torch GD vs u from the map's Gamma(T) and the run's balance",
                     float(u_pred.mean()), float(u_end.mean()), u_dev,
                     max(0.0, u_dev - u_q * u_se), u_dev + u_q * u_se, u_tol,
                     "|mean (torch u(T) - u_pred)| / |mean u(T)|, u_pred^2 = (b + sqrt(b^2 + 4 "
                     "||Gamma_map(T)||^2)) / 2 with each member's own balance b(T); allowance "
                     "(6 max_off^2 + the Gamma allowance at T) / (2 u) (du/db and du/d||Gamma|| "
                     "<= 1/(2u)); " + model,
                     se=u_se, dof=u_dof,
                     details={"u_map": float(ref[-1, 0]),
                              "max_off_block": float(run.off.max()),
                              "balance_drift": float(np.abs(run.balance[:, -1]
                                                            - run.balance[:, 0]).max())},
                     kind="simulation"),
    ]


def _ode_vs_map(run: nl.ZFBResult, y0: np.ndarray, norm: float) -> dict[str, float]:
    """Context only (details): the gap between the discrete GD map of
    ``theory.linear_attention.balanced_flow`` and its integrated flow, relative to
    ``norm``: RMS over the recorded times and at T, in Gamma."""
    sys = la.balanced_flow(sp.diag(*run.lam), run.n)
    disc = _gd_map(sys, y0, run.lr, int(run.steps[-1]))[run.steps]
    path = _bounded_flow(sys, y0, float(run.time[-1]), list(run.time), norm)
    gap = np.linalg.norm(_gamma_path(disc) - _gamma_path(path), axis=(1, 2)) / norm
    return {"rms": float(np.sqrt(np.mean(gap**2))), "gamma_end": float(gap[-1])}


# ---------------------------------------------------------------------- multilayer floor
@cache
def equal_step_optimum(layers: int) -> tuple[float, tuple[float, ...]]:
    """The equal-step stationary point (a saddle for L >= 2; stationary by the permutation
    symmetry of the steps): the control of multilayer_floor until stop 69 (a far miss,
    38 % above the floor at L = 2), kept for the tests of the steps part's allowance."""
    from scipy.optimize import minimize_scalar

    a = sp.Symbol("a")
    f = lambdify_numeric(a, la.gd_loss([a] * layers, 5, 20), "numpy")
    res = minimize_scalar(f, bounds=(0.01, 3), method="bounded", options={"xatol": 1e-10})
    return float(res.fun), (float(res.x),) * layers


@cache
def _floor_paper(layers: int) -> tuple[float, tuple[float, ...]]:
    return la.gd_floor(layers, 5, 20)


@cache
def n_plus_one_floor(layers: int) -> tuple[float, tuple[float, ...]]:
    """Control, a near miss through the theory: the exact floor and steps of ``gd_floor``
    with one context example too many (n = 21 for the runs' 20), an off-by-one in n; the
    floor sits 7.5 % (L = 2) and 11 % (L = 3) below the paper's, the steps 0.4-2 % away."""
    return la.gd_floor(layers, 5, 21)


def segment_curvature(hess: Callable, start: np.ndarray, end: np.ndarray) -> float:
    """Smallest Hessian eigenvalue of the exact loss on the segment start -> end (11 points):
    f(end) - f(start) >= (min curvature / 2) |end - start|^2 at a stationary ``start``.
    A Hessian that is not finite (a wrong loss) is InadmissibleTheory, a failed part."""
    out = math.inf
    for s in np.linspace(0, 1, 11):
        h = np.array(hess(start + s * (end - start)), float)
        if not np.all(np.isfinite(h)):
            raise InadmissibleTheory(f"the claimed loss's Hessian is not finite at "
                                     f"{start + s * (end - start)}")
        try:
            out = min(out, float(np.linalg.eigvalsh(h).min()))
        except np.linalg.LinAlgError as exc:
            raise InadmissibleTheory(f"the claimed loss's Hessian has no eigenvalues: {exc}"
                                     ) from exc
    return out


# The evaluation prompts of the floor claim's torch-loss part (a power calculation), per
# depth.  The part passes when |loss - floor| + z se < 1 % of the floor; the eval loss
# estimates the exact loss at the trained parameters, which lies above the floor by their
# exact excess.  At Holm's strictest level over the two members' parts (conservative: a pass
# reads the unadjusted 99 % upper end, verify.claims.holm) and 90 % power per part the s.e.
# must be (tolerance - excess) / (z(1 - 0.01/2) + z_0.9): floor_eval_prompts_needed(L).
# Pilots (s.e. absolute, at their prompts; "excess" relative to the floor):
# - L = 2: ci's first run at 6750882 (2 members, 200 000 prompts): s.e. 0.00125 and an exact
#   relative excess of at most 4.24e-4, which left that part undecided.
# - L = 3: the first quick run with L = 3 pinned (dc22ce6, ci's 2000 steps, 2 members,
#   440 000 prompts, planned at L = 2): s.e. 6.4e-4 and 6.7e-4, |loss - floor| 5.7e-4 and
#   5.8e-4 (tolerance 1.34e-3), both inconclusive.  Its exact excess was not recorded, so the
#   planning excess is the larger observed |loss - floor|, 5.8e-4 absolute: conservative
#   (the observed error is the excess plus evaluation noise of about its size).
# Adam steps each depth needs to reach its floor (the claim's notes): L = 3 at ci's 2000 (the
# learned-steps figure's run); a shorter run of that depth measures nothing about it.
FLOOR_MIN_STEPS = {3: 2000}
FLOOR_EVAL_PILOT = {"prompts": 200_000, "se": 0.00125, "excess": 4.24e-4, "parts": 2}
FLOOR_EVAL_PILOTS = {2: FLOOR_EVAL_PILOT,
                     3: {"prompts": 440_000, "se": 6.7e-4, "error_abs": 5.8e-4, "parts": 2}}


def floor_eval_prompts_needed(power: float = 0.9, layers: int = 2) -> int:
    """Evaluation prompts for the floor claim's torch-loss part to decide at depth
    ``layers`` at its pilot's excess and spread (:data:`FLOOR_EVAL_PILOTS`, Setting 1), in
    whole chunks of 20 000 (the evaluation's chunk)."""
    pilot = FLOOR_EVAL_PILOTS[layers]
    floor = float(_floor_paper(layers)[0])
    excess = pilot["excess"] if "excess" in pilot else pilot["error_abs"] / floor
    z = normal_quantile(1 - 0.01 / pilot["parts"])
    z_power = normal_quantile(2 * power - 1)  # two-sided 2p - 1 = one-sided p
    se = (PRECISION - excess) * floor / (z + z_power)
    prompts = pilot["prompts"] * (pilot["se"] / se) ** 2
    return int(math.ceil(prompts / 20_000) * 20_000)


# The trained-steps part's allowance is about the claimed steps by construction (declared
# with verify.claims.tolerance_from_theory).
_STEPS_DRIFT = (
    "the curvature bound about the claimed point x* (excess_bound): with lambda > 0 the "
    "least curvature of the exact gd_loss on the segment to the trained steps and g its "
    "gradient at x*, |trained - x*| <= (|g| + sqrt(|g|^2 + 2 lambda e)) / lambda, e = "
    "gd_loss(trained) - gd_loss(x*), so it admits no more than the exact loss does around "
    "x*; |g| is admitted up to sqrt(eps) |grad gd_loss(0)| only (where the stationarity part "
    "passes this is the bound itself, unchanged; beyond it x* is not the claimed minimiser "
    "and the tighter allowance is the premise's); it is 0 where the curvature is not positive (x* not a minimum, e.g. "
    "the equal-step saddle); it does not tell two minima apart, the part 'claimed steps are "
    "stationary for gd_loss' (sqrt(eps), the same for check and control) pins x*")


@claim(
    statement="with B = 0, trained 2- and 3-layer models have A_l proportional to I, "
              "steps at the exact minimiser, and reach the exact pure-GD floor",
    source="AhnPGD Thms 2-3 (floors computed exactly here: our derivation)",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"layers": st.sampled_from([2, 3]), "seed": _SEEDS}),
    theory={"optimum": _floor_paper},
    control={"optimum": n_plus_one_floor},
    control_description="a near miss: gd_floor's floor and steps at n + 1 = 21 context "
                        "examples for the runs' 20 (7.5 % below the floor at L = 2, 11 % "
                        "at L = 3; steps 0.4-2 % away)",
    cost="slow",
    measured_at="quick",
    examples=(Example({"layers": 2, "seed": 0},
                      via="L = 2, the depth quick's 300 Adam steps train to the floor"),
              Example({"layers": 3, "seed": 0},
                      via="L = 3, trained at ci's 2000 steps from quick on (SIZES "
                          "'gd_family_deep', the run the learned-steps figure shares)")),
    notes="Pinned L = 2 (quick's 300 Adam steps reach the exact floor) and L = 3, which "
          "needs about 2000 steps (FLOOR_MIN_STEPS): SIZES 'gd_family_deep' trains it at "
          "ci's 2000 from quick on; a shorter run (the test profile's smoke run) measures "
          "nothing about the trained L = 3 model, and its trained parts say so (not "
          "measured). Until df7f95e L = 3 was only drawn, at ci. The first quick run with L = "
          "3 pinned (dc22ce6, under load) passed every part of it but the torch evaluation "
          "loss vs floor, inconclusive for both members (errors 5.7e-4 and 5.8e-4, s.e. "
          "6.4e-4 and 6.7e-4 at 440 000 prompts, tolerance 1.34e-3): the evaluation prompts "
          "were planned at L = 2.  That run is now L = 3's pilot (FLOOR_EVAL_PILOTS[3], its "
          "larger observed error as the planning excess, its exact excess not having been "
          "recorded): floor_eval_prompts_needed(layers=3) asks 5 780 000 prompts, which SIZES "
          "'gd_family_deep' evaluates at quick, ci and thorough (set before any run at that "
          "size; the 'about 2.8 million' an earlier version of this note gave is not what this calculation gives). "
          "The evaluation prompts of L = 2 (SIZES gd_family) come from "
          "floor_eval_prompts_needed(): the pilot's 200 000 left the torch-loss part "
          "undecided (ci at 6750882; quick too).  Issue 33 (stop 65): the trained-steps "
          "allowance took the claimed steps' own residual gradient, so claimed steps 5 % off "
          "widened it to at least their distance and passed (tdcheck mutate on 732672e: gd_floor's "
          "[1][0] and [1][1] x 1.05 moved no simulation part); the gradient is now admitted "
          "up to the stationarity part's sqrt(eps) only, the claim's premise.  On the cached "
          "quick runs (hand run of this check) the paper's steps keep the same allowances "
          "(0.0073 and 0.0056 at L = 2, 0.031 and 0.042 at L = 3) and each 5 % slip of a "
          "step fails the part (errors 0.017-0.065 against allowances below 2e-6).  The "
          "Dist(A_l, I) part's 0.05 is still a bare threshold (referee read, stop 67).  A "
          "derivation tried in stop 68 (probe scripts beside commit f5b535f, not part of "
          "the claim): in Setting 1 (Sigma = I, w* ~ N(0, I)) the expected loss at the "
          "claimed steps (A_l = -a_l I) is invariant under simultaneous conjugation of the "
          "A_l by O(d), so its Hessian has one L x L block for every symmetric traceless "
          "direction and one for every antisymmetric one (Schur's lemma; the trace block is "
          "separate), and where both are positive definite, sum_l ||A_l - alpha_l I||^2 <= "
          "2 e / lambda_off to second order, lambda_off their least eigenvalue and e the "
          "trained model's excess over the floor (the Monte Carlo Hessian of finitely many "
          "prompts only estimates this structure).  The torch model's Monte Carlo Hessian (autograd "
          "on label_averaged_errors, 20 000 prompts) gives lambda_off 0.28 at L = 2 and "
          "0.052 at L = 3 (s.e. of an entry up to 0.043; 0.064 at 100 000 prompts, s.e. "
          "0.029, 142 s for one direction at one thread under load 3): at L = 3 the loss is "
          "nearly flat off the identity (0.052 is about 1.2 s.e. from 0), and an excess of "
          "0.9 % of the floor (about the upper end of the ci run's worst 99 % interval on "
          "the torch evaluation loss, 0.89 %; its point value 0.42 %, the exact excess "
          "0.13-0.24 %) "
          "admits a Dist of about 0.2, four times the threshold, a rough figure outside the "
          "second-order regime.  So the derived allowance would be far "
          "looser than 0.05, and at quick's cost it cannot be estimated to better than half "
          "its size; an exact Wishart expectation of the Hessian (theory/) is what it needs.  "
          "Stop 69 (control change, after stop 68's referee read found the control a far "
          "miss: the equal-step saddle sits 38 % above the floor at L = 2): the control is "
          "gd_floor at n + 1 = 21 for the runs' 20 (n_plus_one_floor), 7.5 % below the "
          "floor at L = 2 and 11 % at L = 3, chosen before any run of it.",
)
def check_multilayer_floor(params: dict, ctx: Context, *, optimum: Callable) -> Evidence:
    """AhnPGD Thms 2-3 on trained B = 0 models, Setting 1."""
    layers = params["layers"]
    try:
        floor, steps = optimum(layers)
        floor, steps = float(floor), np.array(steps, dtype=float)
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"gd_floor gave no (floor, steps): {type(exc).__name__}: "
                                 f"{exc}") from exc
    if steps.shape != (layers,) or not (math.isfinite(floor) and np.all(np.isfinite(steps))):
        raise InadmissibleTheory(f"gd_floor gave floor {floor}, steps of shape {steps.shape}")
    a_sym = sp.symbols(f"a1:{layers + 1}", real=True)
    loss = la.gd_loss(a_sym, 5, 20)
    f = lambdify_numeric([a_sym], loss, "numpy")
    hess = lambdify_numeric([a_sym], sp.hessian(loss, a_sym), "numpy")
    grad = lambdify_numeric([a_sym], [sp.diff(loss, v) for v in a_sym], "numpy")
    grad_star = float(np.linalg.norm(np.array(grad(steps), dtype=float)))
    run = _gd_family(layers, params["seed"], ctx)
    short = (run.config.steps < FLOOR_MIN_STEPS[layers] if layers in FLOOR_MIN_STEPS
             else False)
    # The claimed steps must be a stationary point of the exact loss (a minimiser is): the
    # residual gradient relative to its size at a = 0.  Tolerance sqrt(eps): a loss of O(1)
    # in float64 resolves its gradient to about sqrt(eps) relative (BFGS, gtol 1e-12,
    # stops there on precision loss at the latest).  This pins the claimed steps
    # themselves; the trained-steps part below only bounds their distance to them.
    grad_zero = float(np.linalg.norm(np.array(grad(np.zeros(layers)), dtype=float)))
    # the trained-steps bound admits the claimed steps' residual gradient only up to what
    # the stationarity part accepts (sqrt(eps) of |grad gd_loss(0)|): the claim is that they
    # are the exact minimiser, so a bound widened by a larger gradient would be about a
    # point the claim does not name (and would pass any slip of the steps)
    grad_allowed = min(grad_star, math.sqrt(EPS) * grad_zero)
    parts = [Part("claimed steps are stationary for gd_loss", 0.0, grad_star,
                  grad_star / grad_zero, math.sqrt(EPS),
                  "||grad gd_loss(claimed steps)|| / ||grad gd_loss(0)||, exact loss (sympy); "
                  "tolerance sqrt(eps), the resolution of a float64 gradient of an O(1) loss",
                  details={"claimed_steps": steps.tolist()}, kind="symbolic")]
    if short:
        why = (f"L = {layers}: the run stops at step {run.config.steps}, before the "
               f"{FLOOR_MIN_STEPS[layers]} this depth needs to reach its floor "
               "(FLOOR_MIN_STEPS); quick's SIZES 'gd_family_deep' runs them")
        parts += [Part.unmeasured(f"member {m}: {what}", 0.0, why, kind="simulation")
                  for m in range(run.A.shape[0])
                  for what in ("Dist(A_l, I)", "steps vs exact minimiser", "excess loss",
                               "torch evaluation loss vs floor")]
        return Evidence(tuple(parts), {"floor": floor, "claimed_steps": steps.tolist()})
    for m in range(run.A.shape[0]):
        a = run.A[m]
        dist = nl.dist_to_identity(torch.as_tensor(a)).numpy()
        # the trained layers' steps through Lemma 1's map (gd_step_sizes reads them with
        # gd_preconditioners), checked numeric: a malformed map fails, never crashes
        fitted = _theory_array("gd_step_sizes of the trained layers", la.gd_step_sizes, a,
                               shape=(layers,))
        exact = float(f(fitted))
        excess = exact - floor
        parts.append(Part(f"member {m}: Dist(A_l, I)", 0.0, float(dist.max()),
                          float(dist.max()), 0.05,
                          "max over layers of min_alpha ||A_l - alpha I|| / ||A_l||; "
                          "threshold 0.05 for 'proportional to I' (our choice)",
                          kind="simulation"))
        step_err = float(np.linalg.norm(fitted - steps))
        curv = segment_curvature(hess, steps, fitted)
        # The excess over the exact loss at the claimed steps themselves (not over the
        # claimed floor, a separate output that the excess parts judge): the bound is then
        # about the claimed point alone (excess_bound), and a low claimed floor cannot
        # widen it.  The paper's floor is gd_loss at its steps, so this is its excess.
        at_steps = exact - float(f(steps))
        parts.append(tolerance_from_theory(Part(
            f"member {m}: steps vs exact minimiser", 0.0, step_err, step_err,
            excess_bound(at_steps, curv, grad_allowed, floor),
            "||trained steps - claimed steps||, the trained steps read through Lemma 1 "
            "(gd_step_sizes: the sorted mean diagonals of gd_preconditioners(A_l) = -A_l^T); "
            "allowance (|g| + sqrt(|g|^2 + 2 lambda_min e)) / lambda_min "
            "with e the exact excess gd_loss(trained) - gd_loss(claimed steps), lambda_min the "
            "least curvature of gd_loss on the segment and g the residual gradient at the "
            "claimed steps, admitted up to sqrt(eps) |grad gd_loss(0)| (the stationarity "
            "part's resolution: the claim names a minimiser); 0 if the least curvature on the "
            "segment is <= 0 (not a minimum)",
            details={"trained_steps": fitted.tolist(), "claimed_steps": steps.tolist(),
                     "excess": excess, "excess_at_steps": at_steps, "curvature": curv},
            # the trained steps against the claimed ones (the allowance from the theory's
            # exact loss): the observed side is the trained model
            kind="simulation"), _STEPS_DRIFT))
        # theory's exact loss at the trained steps (observed side trained), and the torch
        # model's own loss on fresh prompts against the floor: the one part that no
        # consistent error of gd_loss and gd_floor together can pass
        parts.extend(_member_loss_parts(
            m, run, floor, exact, "|gd_loss(trained steps) - floor| / floor, exact: training "
            "reached the claimed floor to 1 % (the precision of AhnPGD's Monte Carlo floors)",
            floor, "floor", "the claimed floor"))
    return Evidence(tuple(parts), {"floor": floor, "claimed_steps": steps.tolist()})


# ---------------------------------------------------------------------- A ~ Sigma^-1
def ridge_slipped_preconditioners(sigma, steps):
    """Control, a near miss through the theory (preconditioner_inverse_cov's since stop 69):
    ``inverse_cov_preconditioners`` at Sigma + delta I, delta a quarter of Sigma's smallest
    eigenvalue (a ridge term in the inverse).  After the best free multiple (the fit takes
    one per layer) it is 4.7 % of Sigma^-1 away in Frobenius norm at any rotation of
    AhnPGD's spectrum, about twice the claim's measured resolution (2 %, tilts, f6c6387);
    a ridge of 5 % of that eigenvalue would be 1 %, below it."""
    s = sp.Matrix(sigma)
    delta = 0.25 * float(np.linalg.eigvalsh(np.array(s.evalf(), dtype=float)).min())
    return la.inverse_cov_preconditioners(s + delta * sp.eye(s.rows), steps)


def _gls(y: np.ndarray, weight: np.ndarray, columns: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, float]:
    """Generalised least squares of ``y`` on ``columns`` [k, p] under the weight (inverse
    covariance) ``weight``: (coefficients, their covariance, the weighted residual
    r^T weight r)."""
    info = columns.T @ weight @ columns
    coef = np.linalg.solve(info, columns.T @ weight @ y)
    r = y - columns @ coef
    return coef, np.linalg.inv(info), float(r @ weight @ r)


def _layer_columns(preconditioners: list, layers: int) -> np.ndarray:
    """The fitted A's coordinates [L d^2, L] of one free multiple per layer of the given
    preconditioners: A_l = -P_l^T (``la.gd_preconditioners`` is its own inverse)."""
    d = preconditioners[0].shape[0]
    cols = np.zeros((layers * d * d, layers))
    for layer, p in enumerate(preconditioners):
        block = np.zeros((layers, d, d))
        (block[layer],) = la.gd_preconditioners([np.asarray(p, dtype=float)])
        cols[:, layer] = block.ravel()
    return cols


# The least prompt count at which the fit's residual stopped exceeding its 99 % point (the
# claim's notes: the weighted residual of the isotropic fit read 106.9 and 71.9 at 3 000
# prompts, seeds 0 and 1, against a 99 % point of 73.7; 57.6 at 12 000, seed 0).  Below it
# the error model is not trusted, and the claim's parts are reported as not measured.  A
# calibration over ten seeds (the claim's notes, inverse_cov_fit_calibration) found the
# statistic about 1.2 times its chi-square mean at 12 000 and at 24 000 prompts alike.
FIT_CALIBRATED_PROMPTS = 12_000


def _claimed_preconditioners(preconditioners: Callable, sigma: np.ndarray, steps
                             ) -> list[np.ndarray]:
    """``preconditioners(Sigma, steps)`` as finite float matrices of Sigma's shape, one per
    layer; anything else is InadmissibleTheory (a failed part with the reason)."""
    try:
        out = list(preconditioners(sp.Matrix(sigma), steps))
    except Exception as exc:  # any failure of a wrong theory is its failure, not ours
        raise InadmissibleTheory(f"the claimed preconditioners: {type(exc).__name__}: "
                                 f"{exc}") from exc
    if len(out) != len(steps):
        raise InadmissibleTheory(f"{len(out)} preconditioners claimed for {len(steps)} layers")
    return [_theory_array(f"preconditioner {i}", lambda m: m, m, shape=np.shape(sigma))
            for i, m in enumerate(out)]


def _inverse_cov_statistics(fit, claimed: list, layers: int, steps) -> dict:
    """preconditioner_inverse_cov's statistics of one fit: the weighted residual of the
    fit's vec(A) (one Newton step from L-BFGS's) on one free multiple per layer of the
    ``claimed`` preconditioners and on multiples of I, under the fit's sandwich covariance,
    with its degrees of freedom, and the fitted steps (the multiples times ``steps``,
    sorted: the loss is symmetric under permuting commuting layers; equal to ``steps`` if
    the steps are gd_floor's)."""
    y = fit.newton.ravel()
    weight = np.linalg.inv(fit.cov)
    coef, coef_cov, resid = _gls(y, weight, _layer_columns(claimed, layers))
    d = claimed[0].shape[0]
    _, _, resid_i = _gls(y, weight, _layer_columns([np.eye(d)] * layers, layers))
    order = np.argsort(coef * np.array(steps))
    return {"dof": y.size - layers, "resid": resid, "resid_identity": resid_i,
            "coef_cov": coef_cov, "order": order,
            "fitted_steps": (coef * np.array(steps))[order]}


def inverse_cov_fit_calibration(ctx: Context, seeds: Sequence[int], prompts: int,
                                layers: int = 2, rotation: int = 0,
                                iterations: int | None = None) -> dict:
    """A calibration study of preconditioner_inverse_cov's error model (issue 33): the
    claim's fit at ``prompts`` prompts for each seed, its weighted residual on the
    theory's preconditioners (la.inverse_cov_preconditioners) and its fitted steps against
    gd_floor's.  If the sandwich law is calibrated, the residuals are chi-square with
    ``dof`` degrees of freedom, independent over seeds, so their sum is chi-square with
    ``len(seeds) * dof``; the steps' relative gaps show a finite-P bias as a common sign."""
    from scipy import stats as _st

    sigma = nl.rotated_covariance(rotation)
    _, steps = _floor_paper(layers)
    claimed = _claimed_preconditioners(la.inverse_cov_preconditioners, sigma, steps)
    iters = iterations or int(ctx.size(nl.SIZES, "fit")["iterations"])
    resid, gaps, se = [], [], []
    for seed in seeds:
        fit = nl.run_fit(nl.FitConfig(layers, int(seed), sigma, "inverse", prompts=prompts,
                                      iterations=iters), cache=ctx.cache, device=ctx.device)
        st_ = _inverse_cov_statistics(fit, claimed, layers, steps)
        resid.append(st_["resid"])
        gaps.append((st_["fitted_steps"] / np.sort(np.array(steps)) - 1).tolist())
        se.append((np.sqrt(np.diag(st_["coef_cov"])) * np.array(steps))[st_["order"]]
                  .tolist())
    dof = int(st_["dof"])
    total = float(np.sum(resid))
    n = len(resid)
    return {"prompts": prompts, "iterations": iters, "seeds": list(map(int, seeds)),
            "dof": dof, "residuals": resid, "limit_99": float(_st.chi2.ppf(0.99, dof)),
            "exceed_99": int(np.sum(np.array(resid) > _st.chi2.ppf(0.99, dof))),
            "sum": total, "sum_interval_99": [float(_st.chi2.ppf(0.005, n * dof)),
                                              float(_st.chi2.ppf(0.995, n * dof))],
            "sum_p_upper": float(_st.chi2.sf(total, n * dof)),
            "step_gaps": gaps, "step_se": se}


@claim(
    statement="with x ~ N(0, Sigma), Sigma != I, and w* ~ N(0, Sigma^-1), the trained "
              "B = 0 family has A_l proportional to Sigma^-1 (and not to I)",
    source="AhnPGD Thm 3 (their Fig. 1/2 protocol)",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"rotation": st.integers(0, 1000),
                                    "layers": st.sampled_from([2, 3]), "seed": _SEEDS}),
    theory={"preconditioners": la.inverse_cov_preconditioners},
    control={"preconditioners": ridge_slipped_preconditioners},
    shape_only={"inverse_cov_preconditioners": "Thm 3 says A_l is proportional to "
                "Sigma^-1: the fit takes one free multiple per layer, so a whole-output "
                "scale of the claimed preconditioners is absorbed (an equivalent mutant)"},
    control_description="a near miss: A_l proportional to (Sigma + delta I)^-1, delta a "
                        "quarter of Sigma's smallest eigenvalue (a ridge term; 4.7 % of "
                        "Sigma^-1 in Frobenius norm after the best free multiple)",
    cost="slow",
    measured_at="quick",
    examples=(Example({"rotation": 0, "layers": 2, "seed": 0},
                      via="AhnPGD's Fig. 1/2 spectrum (1, 1, 1/4, 1/16, 1) under rotation 0, "
                          "the smallest depth the theorem covers"),),
    notes="Fitted by L-BFGS on P fixed prompts (as the authors' LBFGS notebook), at the "
          "profile's prompt count and iteration budget (numerics.linear_attention.SIZES "
          "'fit'). The finite-sample allowance is the fit's own sampling law: the sandwich "
          "covariance H^-1 V H^-1 / P of the P-prompt minimiser about the population one "
          "(numerics.linear_attention.fit_sampling_law), the same for check and control. "
          "quick fits 12 000 prompts: at 3 000 the residual exceeded its 99 % point (the "
          "isotropic fit's residual statistic read 106.9 and 71.9 at seeds 0 and 1 against a "
          "mean of 48 and a 99 % point of 73.7; 57.6 at 12 000 prompts, seed 0; runs of this "
          "session; a later study over ten seeds, below, found the law about 20 % too tight "
          "at 12 000 as well). The fitted steps against gd_floor's are reported (details), not judged: "
          "those runs put them 1-2.5 % above gd_floor's, several sandwich s.e., a gap not "
          "yet explained (finite-P bias of the minimiser, or the s.e.).  Issue 33 "
          "(calibration over seeds and sizes, session of 2026-12-06, "
          "inverse_cov_fit_calibration at rotation 0, L = 2, 80 iterations, seeds 0-9; "
          "designed before it ran: if the sandwich law is calibrated, the residuals are "
          "chi-square(48) and their sum over seeds chi-square(48 x seeds)).  It is not: at "
          "12 000 prompts the ten residuals sum to 581 (mean 58.1; seed 0 reads 61.5 in this "
          "study) against a 99 % interval of [404, 564] "
          "(upper p 0.001), one of ten above the 99 % point (79.3, seed 3); at 24 000 to 585 "
          "(mean 58.5, upper p 0.0007, one above: 91.9, seed 1); at 48 000 (seeds 0-2) "
          "to 159 (mean 52.9, within [104, 191]).  Over the 23 fits the statistic reads 1.20 "
          "times its chi-square mean (99 % interval for one common factor [1.08, 1.34]; per "
          "size 1.21, 1.22, 1.10) and 2 of 23 exceed the 99 % point.  It does not grow with "
          "P, which rules out a fixed population misfit of the claimed family (its "
          "noncentrality grows with P: from 58.1 at 12 000 it predicts means of 68 at 24 000 "
          "and 88 at 48 000), and the fits have converged (the Newton step moves A by at "
          "most 0.03 s.e., seeds 0-4 at 12 000 and 24 000).  A calibration on the claimed "
          "family cannot tell a sandwich law too tight by about 20 % from a misfit whose "
          "effect stays constant in P; read as the former, the part is stricter than its "
          "stated level.  The tolerance is kept (the 99 % point): at a factor of 1.20 [1.08, "
          "1.34] a correct family fails this part with probability 0.09 [0.03, 0.23], not "
          "0.01, so a pass stands and a single-seed failure would not be a finding.  Along "
          "the fitted steps the spread over seeds is 0.98 and 1.40 times the mean sandwich "
          "s.e. at 12 000, 1.39 and 1.25 at 24 000 (an s.d. from ten seeds is uncertain by "
          "about a quarter).  The steps' gap to gd_floor's is 1.64 % and 1.12 % at 12 000 "
          "(s.e. over seeds 0.20 % and 0.32 %), 0.95 % and 0.88 % at 24 000 (s.e. 0.23 %, "
          "0.22 %) and 0.94 % and 0.84 % at 48 000 (three seeds; s.e. 0.20 %, 0.39 %): the "
          "first layer's drops from 12 000 to 24 000 (by 0.69 +- 0.30 %), the second's "
          "change (0.24 +- 0.39 %) is noise, and a remainder near 0.9 %, 4 s.e. from zero at "
          "24 000 and not shrinking at 48 000, is not what a 1/P bias of the minimiser "
          "alone gives; still reported, not judged.  Resolution (stop 66, `tdcheck mutate "
          "linear_attention --resolution-only` at quick on f6c6387, idle): 2 %, by tilting "
          "inverse_cov_preconditioners (shape_only: a whole-output scale is absorbed by the "
          "free multiples, so it read > 50 % before); gd_floor, gd_loss, gd_preconditioners "
          "and trace_moments enter only through the steps, which the free multiples absorb, "
          "so no simulation part takes them.  Stop 69 (control change, after stop 68's "
          "referee read found the control a far miss: Thm 1's shape for the wrong prior, "
          "64.5 against 1.54 per degree of freedom at ci): the control is "
          "ridge_slipped_preconditioners, 4.7 % of Sigma^-1 off in shape, sized from the "
          "claim's measured resolution (2 %) before any run of it.",
)
def check_preconditioner_inverse_cov(params: dict, ctx: Context, *,
                                     preconditioners: Callable) -> Evidence:
    """AhnPGD Thm 3: L-BFGS fit on P fixed prompts with x ~ N(0, Sigma), w* ~ N(0,
    Sigma^-1), against the claimed preconditioners (``preconditioners(Sigma, steps)``,
    steps from ``gd_floor``).

    Error model (our derivation): the P-prompt minimiser sits from the population one by
    -H^-1 (mean of P per-prompt gradients), normal to first order with the sandwich
    covariance ``fit.cov`` (one Newton step removes the optimiser's remaining error,
    ``fit.newton``).  If the population A_l are multiples of the claimed shapes, the
    weighted residual of vec(A) on one free multiple per layer is chi-square with L d^2 - L
    degrees of freedom: its 99 % point is how far a P-prompt fit can sit from the claimed
    family, for check and control alike.  A shape proportional to I must sit beyond that
    point (the sample size tells Sigma^-1 from I).
    """
    from scipy import stats as _st

    sigma = nl.rotated_covariance(params["rotation"])
    layers, seed = params["layers"], params["seed"]
    size = ctx.size(nl.SIZES, "fit")
    fit = nl.run_fit(nl.FitConfig(layers, seed, sigma, "inverse", **size), cache=ctx.cache,
                     device=ctx.device)
    _, steps = _floor_paper(layers)
    claimed = _claimed_preconditioners(preconditioners, sigma, steps)
    st_ = _inverse_cov_statistics(fit, claimed, layers, steps)
    dof, resid, resid_i, coef_cov, order, fitted_steps = (
        st_[k] for k in ("dof", "resid", "resid_identity", "coef_cov", "order",
                         "fitted_steps"))
    limit = float(_st.chi2.ppf(0.99, dof))
    if size["prompts"] < FIT_CALIBRATED_PROMPTS:
        # the fit runs (its numbers in details), but its error model is not trusted here
        why = (f"{size['prompts']} prompts: below {FIT_CALIBRATED_PROMPTS}, where the fit's "
               "residual stopped exceeding its 99 % point (not measured)")
        seen = {"residual_per_dof": resid / dof, "residual_identity_per_dof": resid_i / dof,
                "limit_per_dof": limit / dof}
        return Evidence(tuple(replace(Part.unmeasured(name, 0.0, why, kind="simulation"),
                                      details=seen)
                              for name in ("fitted A_l vs multiples of the claimed "
                                           "preconditioners (weighted residual)",
                                           "A_l proportional to I is told apart at this P")))
    return Evidence((
        Part("fitted A_l vs multiples of the claimed preconditioners (weighted residual)",
             float(dof), resid, resid / dof, limit / dof,
             "r^T C^-1 r / (L d^2 - L), r the residual of the fit's vec(A) (one Newton step "
             "from L-BFGS's) on one free multiple per layer of the claimed preconditioner, "
             "C the fit's sandwich covariance H^-1 V H^-1 / P; tolerance the chi-square 99 % "
             "point / dof: how far a P-prompt fit sits from the population optimum.  "
             "Calibration (claim notes, inverse_cov_fit_calibration, seeds 0-9): the "
             "statistic reads 1.20 [1.08, 1.34] times its chi-square mean, so a correct "
             "family fails here with probability about 0.09 [0.03, 0.23], not 0.01: a pass "
             "stands, one failing seed is not a finding",
             details={"fitted_steps": fitted_steps.tolist(), "claimed_steps": list(steps),
                      "step_se": (np.sqrt(np.diag(coef_cov)) * np.array(steps))[order].tolist(),
                      "newton_shift": float(np.abs(fit.newton - fit.A).max()),
                      "grad_norm": fit.grad_norm, "dof": dof}, kind="simulation"),
        Part("A_l proportional to I is told apart at this P", limit, resid_i,
             (limit - resid_i) / dof, 0.0,
             "the same weighted residual for multiples of I must exceed the chi-square 99 % "
             "point (a power check on the data, the same for check and control)",
             details={"residual_identity": resid_i}, kind="simulation"),
    ))


# ---------------------------------------------------------------------- optimisers
SETTINGS_1_3 = ("setting1", "setting2", "setting3")
PROTOCOL_STEPS = 1250  # the authors' condition-number table stops at it. 1250
Source = Callable[..., nl.ComparisonResult]


def _real_run(setting: str, seed: int, ctx: Context, attention: str = "linear"
              ) -> nl.ComparisonResult:
    return nl.run_comparison(nl.comparison_config(setting, ctx.profile, attention, seed),
                             cache=ctx.cache, device=ctx.device)


def synthetic_run(setting: str, seed: int, ctx: Context, attention: str = "linear",
                  effect: float = 1.5, seeds: int = 6) -> nl.ComparisonResult:
    """A run whose orderings are known (the positive controls): Adam's loss decays twice as
    fast, SGD-momentum's robust condition number and directional smoothness are e^effect
    (about 4.5) times Adam's, inside the range of the paper's Fig. 2 row 3 ratios, with
    log-normal seed noise of s.d. 0.3 per member; along Adam the smoothness follows the
    gradient norm beyond the common decay.  Six seeds, as the paper, unless ``seeds`` says
    otherwise (a median over seeds needs at least 8 for a 99 % interval)."""
    rng = np.random.default_rng(seed + sum(map(ord, setting)))
    steps = np.arange(0, 1251, 50)
    cfg = nl.ComparisonRun(setting=setting, attention=attention, seeds=seeds, steps=1250)
    members = 2 * seeds
    noise = rng.normal(0, 0.3, size=(members, 1))
    rate = np.where(np.arange(members) % 2 == 1, 2.0, 1.0)[:, None]
    eval_loss = np.exp(-rate * steps / 400 + noise + 0.05 * rng.normal(size=(members, len(steps))))
    eval_loss[1::2, 0] = eval_loss[0::2, 0]
    adam = (np.arange(members) % 2 == 1)[:, None]
    r = np.exp(2 + np.where(adam, 0.0, effect) + rng.normal(0, 0.3, size=(members, 2)))
    # The eigenvalue definition gets its own draw (the same effect, its own seed noise), so
    # its parts are not the diagonal ones rescaled: they must find the effect on their own.
    r_eig = np.exp(3 + np.where(adam, 0.0, effect) + rng.normal(0, 0.3, size=(members, 2)))
    trend = np.exp(-steps[:-1] / 600)
    g = trend * np.exp(0.5 * rng.normal(size=(members, len(steps) - 1)))
    smooth = np.where(adam, 1.0, math.exp(effect)) * g**0.8 * np.exp(
        0.1 * rng.normal(size=g.shape))
    return nl.ComparisonResult(
        config=cfg, lr={"sgdm": 0.02, "adam": 0.02}, eval_steps=steps, eval_loss=eval_loss,
        train_loss=eval_loss, hess_steps=np.array([750, 1250]), r_diag=r, r_eig=r_eig,
        r0_diag=np.full(seeds, 5.0), r0_eig=np.full(seeds, 9.0), init_gap=0.0,
        smooth_steps=steps[:-1], smooth=smooth, grad_norm=g)


def _short(run: nl.ComparisonResult) -> str | None:
    """Why ``run`` cannot measure the claims' windows (None when it can)."""
    if run.config.steps < PROTOCOL_STEPS:
        return (f"the run stops at it. {run.config.steps}, before the protocol's windows "
                f"(its. 250-{PROTOCOL_STEPS}); --profile ci runs them")
    return None


# ---------------------------------------------------------------------- comparison power
# The seed count that decides the optimiser-comparison claims.  A claim with m statistical
# parts holds only if every part passes, and a pass reads the part's unadjusted 99 % upper
# end (verify.claims.holm adjusts only the lower ends, the failure side: "holds" is an
# intersection-union test), so each part is planned at 99 % with power 1 - 0.1/m (the
# claim's power >= 0.9 by the union bound).  The pilot is the first ci run of these claims
# (commit 6750882: the paper's 6 seeds, 1250 iterations, each seed on its own evaluation
# batch).
# * In Setting 3 the Adam gap and the directional-smoothness ratio are judged on the median
#   over seeds (heavy_tailed, verify.error_models.signed_median_over_seeds): the Gamma covariates put
#   prompts in a seed's evaluation batch on which a trained model errs by orders of
#   magnitude (the pilot's seed 1: Adam's evaluation loss 812, its training loss near 0.2;
#   both optimisers' median smoothness over 100 times the other seeds'), so one seed moves
#   a mean anywhere.  Planning: each seed's statistic is <= 0 with the probability
#   (k + 1/2) / 7 for the pilot's k of 6 such seeds (k = 0 gives 1/14, not 0), through the
#   binomial law of the order-statistic interval (numerics.stats.samples_for_sign_power).
#   Chosen after the pilot and before any run of thorough, the profile that decides.
# * The condition-number ratios and the partial correlation keep the Student-t interval on
#   the mean: planning spread the pilot's per-seed s.d.; planning effect the paper's own
#   number where it publishes one (the R_med ratios of Fig. 2 row 3, mean (std) over its 6
#   seeds, as the mean of the log under a log-normal law; the same number for the
#   eigenvalue parts, the paper's definition of the ratio, though the published numbers are
#   diagonal-based and the pilot's eigenvalue means are below 0 in 3 of its 6 eigenvalue
#   parts), else the pilot's mean (numerics.stats.samples_for_power, noncentral t).
# The spreads are ci's 1250-iteration ones; thorough's windows for the Adam gap reach 10 000
# iterations.  Thorough's seeds start at 6 (SIZES["comparison"] seed_offset), disjoint from
# the pilot's 0-5; its expected outcome was registered before the pilot.
COMPARISON_CONFIDENCE, COMPARISON_POWER = 0.99, 0.9
#: the parts judged on the median over seeds (above; heavy_tailed)
MEDIAN_PARTS = (("adam_beats_sgd", "setting3"), ("directional_smoothness", "setting3"))
#: (claim, part label) -> (mean, s.d., seeds <= 0) over the pilot's 6 seeds of the part's
#: per-seed statistic (the claims' parts, in their order)
COMPARISON_PILOT: dict[tuple[str, str], tuple[float, float, int]] = {
    ("adam_beats_sgd", "setting1"): (2.454, 0.410, 0),
    ("adam_beats_sgd", "setting2"): (0.0751, 0.0245, 0),
    ("adam_beats_sgd", "setting3"): (-0.539, 2.647, 1),
    ("condition_number_ratio", "setting1 diag 750"): (0.838, 0.592, 1),
    ("condition_number_ratio", "setting1 diag 1250"): (0.133, 0.800, 3),
    ("condition_number_ratio", "setting1 eig 750"): (0.148, 0.582, 3),
    ("condition_number_ratio", "setting1 eig 1250"): (-0.480, 0.533, 4),
    ("condition_number_ratio", "setting2 diag 750"): (0.053, 0.599, 2),
    ("condition_number_ratio", "setting2 diag 1250"): (1.197, 0.986, 1),
    ("condition_number_ratio", "setting2 eig 750"): (-0.449, 0.534, 5),
    ("condition_number_ratio", "setting2 eig 1250"): (0.600, 0.478, 1),
    ("condition_number_ratio", "setting3 diag 750"): (0.637, 1.579, 1),
    ("condition_number_ratio", "setting3 diag 1250"): (1.241, 1.714, 2),
    ("condition_number_ratio", "setting3 eig 750"): (0.319, 1.775, 2),
    ("condition_number_ratio", "setting3 eig 1250"): (-0.548, 4.096, 3),
    ("directional_smoothness", "setting1"): (3.255, 0.455, 0),
    ("directional_smoothness", "setting2"): (0.923, 0.335, 0),
    ("directional_smoothness", "setting3"): (0.444, 1.384, 1),
    ("generalised_smoothness", "setting1"): (0.783, 0.252, 0),
    ("generalised_smoothness", "setting2"): (0.582, 0.436, 1),
    ("generalised_smoothness", "setting3"): (0.991, 0.570, 0),
}
#: (setting, iteration) -> the paper's R_med(SGDM) / R_med(Adam), mean (std) over 6 seeds
PAPER_RMED_RATIO: dict[tuple[str, int], tuple[float, float]] = {
    ("setting1", 750): (1.76, 0.40), ("setting1", 1250): (1.58, 0.41),
    ("setting2", 750): (3.14, 0.97), ("setting2", 1250): (5.98, 2.86),
    ("setting3", 750): (9.57, 13.3), ("setting3", 1250): (6.53, 3.55),
}


def log_normal_mean_log(mean: float, std: float) -> float:
    """E[log X] of a log-normal X with the given mean and standard deviation:
    log(mean) - s^2 / 2 with s^2 = log(1 + std^2 / mean^2)."""
    if not (mean > 0 and std >= 0):
        raise ValueError(f"need mean > 0 and std >= 0, got {mean}, {std}")
    return math.log(mean) - math.log1p((std / mean) ** 2) / 2


def planning_effect(claim_id: str, label: str) -> float:
    """The effect a Student-t part of :data:`COMPARISON_PILOT` is planned for (above)."""
    if claim_id == "condition_number_ratio":
        setting, _, it = label.split()
        return log_normal_mean_log(*PAPER_RMED_RATIO[(setting, int(it))])
    return COMPARISON_PILOT[(claim_id, label)][0]


def planning_negative(claim_id: str, label: str, pilot_seeds: int = 6) -> float:
    """The probability a seed's statistic is <= 0, for a median part (above)."""
    return (COMPARISON_PILOT[(claim_id, label)][2] + 0.5) / (pilot_seeds + 1)


def _labels(claim_id: str) -> list[str]:
    return [lab for c, lab in COMPARISON_PILOT if c == claim_id]


def _part_power(claim_id: str, label: str, seeds: int) -> float:
    if (claim_id, label) in MEDIAN_PARTS:
        return median_sign_power(planning_negative(claim_id, label), seeds,
                                 COMPARISON_CONFIDENCE)
    eff = planning_effect(claim_id, label)
    if eff <= 0:
        return 0.0
    return t_interval_power(eff, COMPARISON_PILOT[(claim_id, label)][1], seeds,
                            COMPARISON_CONFIDENCE)


def comparison_seeds_needed() -> dict[tuple[str, str], int | None]:
    """(claim, part) -> seeds for the part to decide the paper's sign with power 1 - 0.1/m
    (m the claim's parts; None: no seed count does at the planning values)."""
    counts = {}
    for cid in sorted({c for c, _ in COMPARISON_PILOT}):
        power = 1 - (1 - COMPARISON_POWER) / len(_labels(cid))
        for lab in _labels(cid):
            if (cid, lab) in MEDIAN_PARTS:
                counts[(cid, lab)] = samples_for_sign_power(
                    planning_negative(cid, lab), power, COMPARISON_CONFIDENCE)
            else:
                counts[(cid, lab)] = samples_for_power(
                    planning_effect(cid, lab), COMPARISON_PILOT[(cid, lab)][1], power=power,
                    confidence=COMPARISON_CONFIDENCE)
    return counts


def comparison_power_at(seeds: int) -> dict[str, float]:
    """claim -> the union bound on the power of the claim's decision at ``seeds`` (max(0,
    1 - the sum over its parts of their miss probabilities))."""
    return {cid: max(0.0, 1.0 - sum(1.0 - _part_power(cid, lab, seeds)
                                    for lab in _labels(cid)))
            for cid in sorted({c for c, _ in COMPARISON_PILOT})}


@cache
def _comparison_needed() -> dict[tuple[str, str], int | None]:
    return comparison_seeds_needed()


def comparison_power(claim_id: str) -> Callable[[str], PowerPlan]:
    """The power plan of comparison claim ``claim_id`` by profile: the union-bound power of
    its decision at the profile's seeds (:func:`comparison_power_at`; below 2 seeds no
    interval exists: power 0) against :data:`COMPARISON_POWER`, and the most seeds any of
    its parts needs (:func:`comparison_seeds_needed`)."""
    def plan(profile: str) -> PowerPlan:
        have = int(nl.comparison_config("setting1", profile).seeds)
        needs = [_comparison_needed()[(claim_id, lab)] for lab in _labels(claim_id)]
        needed = None if None in needs else max(needs)
        power = comparison_power_at(have)[claim_id] if have >= 2 else 0.0
        return PowerPlan(decides=power >= COMPARISON_POWER, have=have, needed=needed,
                         unit="seeds",
                         design=f"comparison_seeds_needed / comparison_power_at: power "
                                f"{COMPARISON_POWER:g} over the claim's parts (union bound), "
                                f"99 % intervals, planning values COMPARISON_PILOT",
                         power=power)
    return plan


def heavy_tailed(run: nl.ComparisonResult) -> bool:
    """Whether the run's covariates are Setting 3's Gamma ones, whose evaluation batches
    hold prompts that make the per-seed statistics heavy-tailed: those parts are judged on
    the median seed (comparison power notes), the Gaussian settings' on the mean."""
    return nl.get_setting(run.config.setting).covariates == "gamma"


def _over_seeds(run: nl.ComparisonResult, name: str, per_seed: np.ndarray, what: str,
                details: dict) -> Part:
    """``per_seed`` judged > 0 by :func:`heavy_tailed`'s rule: the order-statistic
    interval on the median, else the Student-t interval on the mean (99 %)."""
    if heavy_tailed(run):
        return signed_median_over_seeds(
            name, per_seed, f"{what}; claim > 0 for the median seed, order-statistic "
            "interval (99 %; Gamma covariates: heavy-tailed per-seed values)", details=details,
            kind="simulation")
    return signed_over_seeds(name, per_seed, f"{what}; claim > 0, Student-t over seeds (99 %)",
                             details=details, kind="simulation")


def adam_gap(run: nl.ComparisonResult, sign: int, label: str) -> Part:
    """Per seed, the mean over checkpoints from it. 500 of log L_SGDM - log L_Adam on the
    seed's evaluation batch; claim > 0 over seeds (:func:`_over_seeds`)."""
    name = f"{label}: log-loss gap SGDM - Adam"
    if _short(run):
        return Part.unmeasured(name, 0.0, _short(run), kind="simulation")
    sgdm, adam = run.split("eval_loss")
    keep = run.eval_steps >= 500
    per_seed = sign * (np.log(sgdm[:, keep]) - np.log(adam[:, keep])).mean(1)
    frac = float(np.mean((np.log(sgdm).mean(0) - np.log(adam).mean(0))[keep] > 0))
    return _over_seeds(run, name, per_seed,
                       f"{label}: per seed, mean log-loss gap over the checkpoints from it. "
                       "500 (the paper's Fig. 2 row 1)",
                       {"fraction_of_checkpoints_adam_below": frac,
                        "final_loss_sgdm": sgdm[:, -1].tolist(),
                        "final_loss_adam": adam[:, -1].tolist()})


@claim(
    statement="empirical: in Settings 1-3 (3 layers, README learning rates, clipping), "
              "Adam's loss is below SGD-momentum's after iteration 500 (to the end of the "
              "run: 1250 iterations at ci, the paper's 10 000 at thorough): the per-seed "
              "mean log-loss gap is positive (Setting 3: for the median seed, a statistic "
              "switched from the mean after the pilot, the first ci run at 6750882)",
    source="Ahn et al. Fig. 2 row 1, Section 3.2",
    theory={"sign": 1, "source": _real_run},
    control={"sign": -1, "source": _real_run},
    control_description=_NULL_CONTROL + " (Adam no better than SGD-momentum)",
    notes=_EMPIRICAL_NOTE + _REFUTED_NULL_NOTE + "An earlier two-seed run of the protocol had Adam below SGD-momentum at every "
          "checkpoint after it. 500 in all three settings; a short run showed SGD-momentum "
          "ahead in Setting 2 early on: early iterations are not the claim. Setting 3 is "
          "judged on the median seed: one pilot seed's Adam model scores 812 on its seed's evaluation "
          "batch (its training loss ends near 0.2: Setting 3's Gamma covariates put prompts "
          "in a batch of 1000 on which a trained model errs by orders of magnitude), which "
          "made the pilot's Student-t interval on the mean gap useless (-0.54 [-4.9, 3.8]) "
          "and would have left the claim without power at any seed count; the statistic was "
          "switched from the mean to the median after that pilot (the first ci run of the "
          "claim, at commit 6750882, seeds 0-5), before any thorough run.  Settings 1-3 need 4, 6 and "
          "54 seeds (a 99 % median interval needs at least 8). " + _POWER_NOTE
          + _COMPARISON_NOTE + " Thorough campaign (commit a699076, 140 seeds x 3 settings x "
          "10 000 its, report results/thorough/linear_attention/comparison_claims.md): refuted "
          "in Setting 2, SGDM - Adam log-loss gap -0.388 [-0.605, -0.17] (99 %), a finding; "
          "Settings 1 and 3 hold. expected stays the paper's holds.  The statement it "
          "refutes, and where: Fig. 2 row 1 of Ahn et al. (the loss curves, 'Adam > SGD', "
          "with the training protocol of Section 3.2) shows Adam's loss below SGD-"
          "momentum's in each of Settings 1-3; the refutation is Setting 2's, at the "
          "protocol of the authors' code (3 layers, its README learning rates, clipping, "
          "10 000 iterations) with 140 seeds where the authors' plot averages 6.",
    positive=_synthetic("Adam's loss decays twice as fast (Setting 3 at its design's "
                        "seeds)", source=design_synthetic("adam_beats_sgd")),
    power=comparison_power("adam_beats_sgd"),
    **_slow("inconclusive", measured_at="thorough"),
)
def check_adam_beats_sgd(params: dict, ctx: Context, *, sign: int, source: Source) -> Evidence:
    return Evidence(tuple(adam_gap(source(s, params["seed"], ctx), sign, s)
                          for s in SETTINGS_1_3))


# ---------------------------------------------------------------------- noise tails
NoiseSource = Callable[..., np.ndarray]  # (setting, layers, seed, ctx[, design]) -> norms
GAMMA_L3, SPHERE_L3, GAUSS_L8, GAUSS_L2 = (("setting3", 3), ("sphere", 3), ("setting1", 8),
                                           ("setting1", 2))


def _real_noise(setting: str, layers: int, seed: int, ctx: Context) -> np.ndarray:
    """Noise norms at init at the profile's size (``SIZES["noise"]``: the authors' batch
    1000 and g_full from 1e5 prompts from quick on)."""
    return nl.run_init_noise(nl.NoiseConfig(setting, layers, seed=seed,
                                            **ctx.size(nl.SIZES, "noise")),
                             cache=ctx.cache, device=ctx.device)


def _depth_noise(setting: str, layers: int, seed: int, ctx: Context,
                 design: str | None = None) -> np.ndarray:
    """Noise norms for the depth claim, one model seed, at ``SIZES["depth_noise"]`` of the
    context's profile (or of ``design``)."""
    size = (ctx.size(nl.SIZES, "depth_noise") if design is None
            else nl.SIZES.at("depth_noise", design))
    return nl.run_init_noise(nl.NoiseConfig(setting, layers, seed=seed, **size),
                             cache=ctx.cache, device=ctx.device)


# The depth claim's design (a power calculation, fixed before any run): the Hill index of
# the top 5 % of m samples has a relative standard error of about 1 / sqrt(k), k = m / 20,
# so one seed's log Hill ratio (two independent estimates) has s.e. sqrt(2 / k).  Below
# k = 25 (m = 500) that is above 0.28 per seed, and a 99 % Student-t interval over a few
# seeds spans more than a factor 2 in the Hill index: no power, the part is not measured.
# ci's samples (1000 per seed, k = 50: s.e. 0.2 per seed) clear that bar.  The seed count
# is a second power calculation (depth_seeds_needed): the pilot, ci's first run of the claim
# (commit 6750882, model seeds 0-5, 6 seeds), gave a per-seed log ratio of mean 0.403 and
# s.d. 0.262 (above the 0.2 of the estimator alone: the model seeds differ too), whose 99 %
# interval over 6 seeds did not decide; for 90 % power at that effect and spread the
# interval needs depth_seeds_needed() seeds, which ci and thorough run, from seed 6 on so
# that they are disjoint from the pilot's.
DEPTH_MIN_TOP = 25
DEPTH_PILOT = (0.403, 0.262)
DEPTH_FIRST_SEED = 6  # the pinned example's first model seed, after the pilot's 0-5


def depth_power(profile: str) -> PowerPlan:
    """heavy_tailed_noise_depth's power plan at ``profile``: its model seeds
    (``SIZES["depth_seeds"]``) against :func:`depth_seeds_needed`."""
    needed, have = depth_seeds_needed(), int(nl.SIZES.at("depth_seeds", profile))
    return PowerPlan(decides=have >= needed, have=have, needed=needed, unit="model seeds",
                     design="depth_seeds_needed: power 0.9 for the 99 % interval over seeds "
                            "at the pilot's effect and spread (DEPTH_PILOT)")


def depth_seeds_needed(power: float = 0.9, confidence: float = 0.99) -> int:
    """Model seeds for the depth claim's interval to decide at the pilot's effect and
    spread (:data:`DEPTH_PILOT`) with probability ``power``."""
    n = samples_for_power(*DEPTH_PILOT, power=power, confidence=confidence)
    if n is None:  # the pilot's effect is positive: a count exists
        raise ValueError("no seed count reaches the power asked for")
    return n
# The positive control's effect: a factor-2 gap in the Hill index (log ratio -0.69), about
# twice the smallest gap ci's design resolves, far below the old Pareto-vs-chi gap.
SYNTHETIC_TAILS = (3.0, 6.0)


def synthetic_noise(setting: str, layers: int, seed: int, ctx: Context,
                    design: str | None = None) -> np.ndarray:
    """Positive-control noise with a known tail: Pareto norms with tail index 3 for the
    first case named heavy ("setting3"), index 6 otherwise (:data:`SYNTHETIC_TAILS`), at the
    depth claim's sample count of profile ``design`` (None: the context's)."""
    size = (ctx.size(nl.SIZES, "depth_noise") if design is None
            else nl.SIZES.at("depth_noise", design))
    alpha = SYNTHETIC_TAILS[0] if setting == "setting3" else SYNTHETIC_TAILS[1]
    # each tail its own stream: with one stream for both, the two Hill indices came from the
    # same exponentials and their ratio was exactly the tails' ratio at every seed (no
    # spread, so the control showed no power; a referee read, stop 68)
    rng = np.random.default_rng([seed, layers, int(alpha)])
    return rng.pareto(alpha, size["samples"]) + 1.0


# The covariate-tail claim's design (a power calculation, written before its verdict run):
# one model seed is no finding, so the claim is an interval over model seeds of the per-seed
# log Hill ratio (Gamma / sphere, 3 layers, the profile's noise samples).  Pilot: quick's
# noise size (300 minibatches of 1000 prompts, g_full from 1e5) at model seeds 0-5, a run of
# this session at commit 4adaf2b: per-seed log ratios -1.742, -1.894, -1.949, -1.334,
# -0.819, -2.195 (mean -1.655, s.d. 0.499).  For 90 % power at that effect and spread the
# 99 % Student-t interval needs tail_seeds_needed() seeds (5), which quick, ci and thorough
# run (ci's and thorough's larger sample counts only shrink the per-seed spread), from
# model seed 6 on so that they are disjoint from the pilot's.
TAIL_PILOT = (1.655, 0.499)
TAIL_FIRST_SEED = 6


def tail_seeds_needed(power: float = 0.9, confidence: float = 0.99) -> int:
    """Model seeds for the covariate-tail claim's interval to decide at the pilot's effect
    and spread (:data:`TAIL_PILOT`) with probability ``power``."""
    n = samples_for_power(*TAIL_PILOT, power=power, confidence=confidence)
    if n is None:
        raise ValueError("no seed count reaches the power asked for")
    return n


def tail_power(profile: str) -> PowerPlan | None:
    """heavy_tailed_noise's power plan at ``profile``: its model seeds
    (``SIZES["noise_seeds"]``) against :func:`tail_seeds_needed`; none at the test profile,
    whose seed count is a smoke count, not a design."""
    if profile == "test":
        return None
    needed, have = tail_seeds_needed(), int(nl.SIZES.at("noise_seeds", profile))
    return PowerPlan(decides=have >= needed, have=have, needed=needed, unit="model seeds",
                     design="tail_seeds_needed: power 0.9 for the 99 % interval over seeds "
                            "at the pilot's effect and spread (TAIL_PILOT)")


def tail_positive_seeds(power: float = 0.9, confidence: float = 0.99) -> int:
    """Seeds for the covariate-tail claim's positive control to hold with probability
    ``power``: its effect is :data:`SYNTHETIC_TAILS`' factor 2 in the Hill index (log ratio
    ln 2), and one seed's log Hill ratio on the top 5 % of ci's 1000 samples (k = 50 per
    tail) has s.e. sqrt(2 / k) = 0.2 (the depth claim's design note)."""
    k = nl.SIZES.at("noise", "ci")["samples"] / 20
    n = samples_for_power(math.log(SYNTHETIC_TAILS[1] / SYNTHETIC_TAILS[0]),
                          math.sqrt(2 / k), power=power, confidence=confidence)
    if n is None:
        raise ValueError("no seed count reaches the power asked for")
    return n


def _pareto_positive(description: str, **theory) -> Positive:
    """The noise claims' positive control: their own check at model seed 0 on synthetic
    Pareto norms, the heavy case named "setting3" (tail index 3) and the light one "sphere"
    (index 6, :data:`SYNTHETIC_TAILS`); ``theory`` adds the noise source and its design."""
    return Positive({"seed": 0}, description,
                    theory={"heavy": ("setting3", 3), "light": ("sphere", 3), **theory})


def synthetic_noise_ci(setting: str, layers: int, seed: int, ctx: Context) -> np.ndarray:
    """:func:`synthetic_noise` at ci's sample count (1000 per seed, the covariate claim's
    and the depth claim's at ci), whatever the running profile."""
    return synthetic_noise(setting, layers, seed, ctx, design="ci")


@claim(
    statement="empirical: at initialisation the stochastic-gradient noise ||g_B - g|| has a "
              "heavier tail (smaller Hill index) for Gamma covariates (Setting 3) than for "
              "spherical ones, 3 layers, over model seeds",
    source="Ahn et al. Fig. 7, Section 4.1",
    theory={"heavy": GAMMA_L3, "light": SPHERE_L3, "source": _real_noise},
    control={"heavy": SPHERE_L3, "light": GAMMA_L3, "source": _real_noise},
    control_description="the null, no difference: the part claims the Gamma case's log Hill "
                        "ratio is at least 0 (tolerance 0), so it fails, rejecting the null, "
                        "exactly when the interval over seeds lies below 0",
    notes=_EMPIRICAL_NOTE + "Minibatches of the authors' 1000 prompts, g_full from 1e5 "
          "prompts, at the profile's sample count (the paper's 10 000 at thorough); the "
          "paper judges tails by eye, we by a Hill index on the top 5 % per model seed, "
          "with a Student-t interval over model seeds (one seed is no finding).  Until "
          "4adaf2b the claim was decided on one model seed (seed 0) by a bootstrap over its "
          "noise samples; the seed count is now tail_seeds_needed()'s (TAIL_PILOT: a pilot "
          "at quick's size on seeds 0-5), on seeds 6 on, disjoint from the pilot's.  "
          "Positive control (stop 69, after a referee read found the claim had none; "
          "designed before its first run): the same check on Pareto norms with tail "
          "indices 3 and 6 (SYNTHETIC_TAILS, a factor 2 in the Hill index, about a third "
          "of the pilot's effect in the log) at ci's 1000 samples per seed, on "
          "tail_positive_seeds() seeds (the power calculation's, at every profile).",
    positive=_pareto_positive("the same seed-level check on Pareto norms with tail indices "
                              "3 and 6 (a factor-2 gap in the Hill index) at ci's 1000 "
                              "samples per seed, on tail_positive_seeds() seeds (power 0.9)",
                              source=synthetic_noise_ci, seeds="positive"),
    power=tail_power,
    **(_slow() | {"examples": (Example(
        {"seed": TAIL_FIRST_SEED},
        via="model seeds from 6 on: disjoint from the pilot's 0-5 (tail_seeds_needed)"),)}),
)
def check_heavy_tailed_noise(params: dict, ctx: Context, *, heavy: tuple[str, int],
                             light: tuple[str, int], source: NoiseSource,
                             seeds: str | None = None) -> Evidence:
    """At the authors' init, per model seed: log(Hill(heavy) / Hill(light)) (top 5 %);
    claim < 0 over seeds (Student-t, 99 %; the estimator noise of each seed is part of the
    seed spread).  Seeds: ``SIZES["noise_seeds"]`` (:func:`tail_seeds_needed`), or
    :func:`tail_positive_seeds` for the positive control (``seeds="positive"``)."""
    seeds = (tail_positive_seeds() if seeds == "positive"
             else ctx.size(nl.SIZES, "noise_seeds"))
    label = f"{heavy[0]} L={heavy[1]} vs {light[0]} L={light[1]}"
    per_seed, hills = [], []
    for k in range(seeds):
        x_h = source(*heavy, params["seed"] + k, ctx)
        x_l = source(*light, params["seed"] + k, ctx)
        hills.append((measure.hill_tail_index_top5(x_h), measure.hill_tail_index_top5(x_l)))
        with np.errstate(divide="ignore", invalid="ignore"):
            per_seed.append(float(np.log(hills[-1][0]) - np.log(hills[-1][1])))
    return Evidence((signed_over_seeds(
        "log Hill ratio over model seeds, heavy / light", -np.array(per_seed),
        f"{label}: per model seed, log Hill(heavy) / Hill(light) (top 5 % of the noise "
        "samples); claim < 0 (heavier tail), Student-t over model seeds (99 %)",
        details={"cases": label, "hill_heavy_light": hills, "first_seed": params["seed"]},
        kind="simulation"),))


@claim(
    statement="empirical: at initialisation the stochastic-gradient noise has a heavier tail "
              "(smaller Hill index) for 8 layers than for 2 (Setting 1 data), over model "
              "seeds",
    source="Ahn et al. Fig. 8, Section 4.2",
    theory={"heavy": GAUSS_L8, "light": GAUSS_L2, "source": _depth_noise, "design": None},
    control={"heavy": GAUSS_L2, "light": GAUSS_L8, "source": _depth_noise, "design": None},
    control_description="the null, no difference: the part claims the 8-layer log Hill "
                        "ratio is at least 0 (tolerance 0), so it fails, rejecting the null, "
                        "exactly when the interval over seeds lies below 0",
    notes=_EMPIRICAL_NOTE + "Decided over model seeds by the interval rule (one seed is no finding). The "
          "design comes from two power calculations (DEPTH_MIN_TOP, depth_seeds_needed): "
          "quick's smoke budget (4 seeds x 120 samples at batch 200, a Hill index on 6 "
          "points) has no power and is reported as not measured; --profile ci measures it "
          "(1000 samples per seed at the authors' batch 1000, g_full from 1e5 prompts) and "
          "is expected to hold there, as the paper's Fig. 8 states.  Its seed count was 6 "
          "until the pilot (ci at 6750882, seeds 0-5) left the interval undecided; it is now "
          "the calculation's, on seeds disjoint from the pilot's, and expected stays the "
          "paper's.  Its first run (session 28, ci at ec4f6f5, seeds 6-15) did not decide "
          "either: 0.217 [-0.079, 0.513], about half the pilot's effect; the seeds stay the "
          "calculation's (raising them after this run would be sampling to a verdict).  The "
          "ci campaign of the whole row (commit e54f17e, 2026-12-06, the same seeds) gives "
          "the same interval, so at ci this claim is not as expected: the registered design "
          "does not decide it.  Its next registered measurement is thorough's (the same "
          "seeds x 10 000 samples), sized for a GPU (a first CPU campaign of it, one thread, "
          "was stopped after about 4 minutes, before its first run finished) and run on "
          "the CPU in stop 68: its thorough campaign (a clone of a4ee86d, "
          "one thread, the pinned example only: --drawn 0; 20 noise runs in about 103 "
          "minutes beside another one-thread process; report "
          "results/thorough/linear_attention/heavy_tailed_noise_depth.md): holds, the "
          "per-seed log Hill ratio (2 layers over 8) 0.238, 99 % interval [0.120, 0.355] "
          "over seeds 6-15 (per seed 0.028-0.353; Hill index 9.3-13.1 at 8 layers, "
          "12.5-15.1 at 2, on the top 500 of 10 000 samples), so the null is rejected and "
          "Fig. 8's statement holds at the authors' sample count (the pinned example; the "
          "profile's drawn examples were not run).  The effect is about "
          "the ci run's (0.217) with 40 % of its interval's width (0.235 against 0.592): "
          "the per-seed estimates on 500 top points instead of ci's 50 narrowed it (the "
          "estimator's own s.e. per seed, sqrt(2/k), from 0.20 to 0.063).  At ci the claim "
          "stays not as expected.  "
          "The positive control is the same check at ci's design on Pareto norms "
          "with a factor-2 gap in the tail index.  Until stop 68 both tails drew the same "
          "stream, so every seed's ratio was exactly ln 2 (no spread: the control showed no "
          "power; the thorough report above was written then); each tail now has its own "
          "stream, and at ci's design (seed 0) it passes at 0.648, 99 % interval [0.386, "
          "0.909] (per seed 0.17-0.99).",
    positive=_pareto_positive("the same seed-level check at ci's design (ci's seeds x 1000 "
                              "samples) on Pareto norms with tail indices 3 and 6 (a factor-2 "
                              "gap in the Hill index, twice the smallest ci resolves)",
                              source=synthetic_noise, design="ci"),
    power=depth_power,
    **(_slow("inconclusive") | {"examples": (Example(
        {"seed": DEPTH_FIRST_SEED},
        via="model seeds from 6 on: disjoint from the pilot's 0-5 (depth_seeds_needed)"),)}),
)
def check_heavy_tailed_noise_depth(params: dict, ctx: Context, *, heavy: tuple[str, int],
                                   light: tuple[str, int], source: NoiseSource,
                                   design: str | None = None) -> Evidence:
    """Over model seeds: per seed, log(Hill(heavy) / Hill(light)); Student-t over seeds (the
    estimator noise of each seed is part of the seed spread).  ``design``: the profile
    whose seed and sample counts to use (None: the context's)."""
    seeds = (ctx.size(nl.SIZES, "depth_seeds") if design is None
             else nl.SIZES.at("depth_seeds", design))
    samples = (ctx.size(nl.SIZES, "depth_noise") if design is None
               else nl.SIZES.at("depth_noise", design))["samples"]
    label = f"{heavy[0]} L={heavy[1]} vs {light[0]} L={light[1]}"
    name = "log Hill ratio over seeds, heavy / light case"
    # Below DEPTH_MIN_TOP top points the design has no power (decided by the sample count,
    # not by the samples): the runs are drawn all the same, reported in details only.
    per_seed, hills, top = [], [], []
    for k in range(seeds):
        x_h = source(*heavy, params["seed"] + k, ctx, design)
        x_l = source(*light, params["seed"] + k, ctx, design)
        hills.append((measure.hill_tail_index_top5(x_h), measure.hill_tail_index_top5(x_l)))
        per_seed.append(math.log(hills[-1][0] / hills[-1][1]))
        top.append(min(len(x_h), len(x_l)) // 20)
    if min(top) < DEPTH_MIN_TOP:  # the design's samples (or a source's) are too few
        return Evidence((Part.unmeasured(
            name, 0.0, f"{label}: a Hill index on {min(top)} top points of {samples} samples "
            f"(< {DEPTH_MIN_TOP}: no power, see DEPTH_MIN_TOP); --profile ci measures it",
            kind="simulation"),), {"cases": label, "samples": samples, "hill_heavy_light": hills})
    return Evidence((signed_over_seeds(
        name, -np.array(per_seed),
        f"{label}: per model seed, log Hill(heavy) / Hill(light) (top 5 %); claim < 0 "
        "(heavier tail), Student-t over seeds (99 %)",
        details={"cases": label, "hill_heavy_light": hills, "top_points": min(top)},
        kind="simulation"),))


# ---------------------------------------------------------------------- condition numbers
def null_control_power(seeds: int) -> float:
    """A lower bound on the probability that condition_number_ratio's null control (half the
    paper's effect, :func:`condition_parts` with ``half=True``) is rejected at ``seeds``: the
    largest, over the parts, of the power of the part's 99 % interval to lie above half the
    published log ratio (planning effect the published one, :func:`planning_effect`; spread
    the pilot's, :data:`COMPARISON_PILOT`).  One rejecting part rejects the control."""
    cid = "condition_number_ratio"
    return max(t_interval_power(planning_effect(cid, lab) / 2, COMPARISON_PILOT[(cid, lab)][1],
                                seeds, COMPARISON_CONFIDENCE) for lab in _labels(cid))


def _half_published(setting: str, step: int) -> float:
    """Half the paper's log R_med ratio at (setting, it.), its log-normal mean log."""
    return log_normal_mean_log(*PAPER_RMED_RATIO[(setting, step)]) / 2


def condition_parts(run: nl.ComparisonResult, sign: int, label: str,
                    half: bool = False) -> list[Part]:
    """log R_med(SGDM) - log R_med(Adam) per seed at it. 750 and 1250, both definitions;
    Student-t over seeds; claim > 0 (ratio > 1).  ``half`` (the null control, with sign -1):
    the statistic is taken less half the paper's log ratio at that setting and iteration
    (:func:`_half_published`), so the part claims the ratio is at most half the published
    effect."""
    parts = []
    for definition in ("diag", "eig"):
        sgdm, adam = run.split(f"r_{definition}")
        for step in (750, PROTOCOL_STEPS):
            name = f"{label}, {definition}, it. {step}: log R_med ratio"
            if step not in set(int(h) for h in run.hess_steps):
                parts.append(Part.unmeasured(name, 0.0,
                                             f"no Hessian at it. {step} in this run "
                                             f"({_short(run) or 'not requested'})",
                                             kind="simulation"))
                continue
            j = [int(h) for h in run.hess_steps].index(step)
            log_ratio = np.log(sgdm[:, j]) - np.log(adam[:, j])
            offset = _half_published(label, step) if half else 0.0
            per_seed = sign * (log_ratio - offset)
            claim_text = ("claim > 0 (the paper's Fig. 2 row 3)" if not half else
                          f"null: the log ratio at most {offset:.4g}, half the paper's")
            parts.append(signed_over_seeds(
                name, per_seed,
                f"{label}, R_med by {definition} at it. {step}: per-seed log of "
                f"R_med(SGDM)/R_med(Adam); {claim_text}, Student-t over seeds",
                details={"per_seed_ratio": np.exp(log_ratio).tolist(), "null_offset": offset},
                kind="simulation"))
    return parts


@claim(
    statement="empirical: the robust condition number ratio R_med(SGDM)/R_med(Adam) exceeds "
              "1 at "
              "iterations 750 and 1250 in Settings 1-3, under the code's definition (Hessian "
              "diagonal) and the paper's (eigenvalues), seed by seed interval",
    source="Ahn et al. Fig. 2 row 3, Section 2.3, footnote 1",
    theory={"sign": 1, "source": _real_run, "half": False},
    control={"sign": -1, "source": _real_run, "half": True},
    control_description="the null, half the published effect: each part claims the per-seed "
                        "log ratio is at most half the log of the paper's R_med ratio at that "
                        "setting and iteration (Fig. 2 row 3, PAPER_RMED_RATIO); it fails, "
                        "rejecting the null, when the interval over seeds lies above that",
    notes=_EMPIRICAL_NOTE + _REFUTED_NULL_NOTE + "At ci, e54f17e's campaign (2026-12-06, an earlier session's machine, whose CPU "
          "was not recorded) refuted it: Setting 1, eigenvalues, it. 1250, log R_med ratio "
          "-0.79, error interval [0.357, 1.224] (99 %). The same code and seeds on this "
          "session's machine (campaign of dd8600b, 2026-12-07: an AVX-512 Xeon) leave every "
          "part inconclusive; that part's per-seed ratios are 0.54, 0.80, 0.42, 0.53, 1.78, "
          "0.78 against e54f17e's 0.35, 0.71, 0.41, 0.45, 0.37, 0.52 (mean log -0.337, 99 % "
          "interval [-1.18, 0.51]).  Between the two machines the per-seed ratios moved by "
          "setting: Setting 2 not at all (to the report's digits), Setting 1 at it. 750 by "
          "at most 3 % and at it. 1250 by a median factor e^0.21-e^0.28 (up to e^1.7), "
          "Setting 3 already at it. 750 (median e^0.66-e^0.82) and more at 1250.  Not the "
          "thread count: Setting 1's run retrained here at 1 and at 2 threads (2026-12-07, "
          "one comparison) is the same bit for bit.  The BLAS kernel can do it: held to "
          "AVX2 (MKL_ENABLE_INSTRUCTIONS=AVX2) the same Setting 1 run moves that part's "
          "per-seed ratios by -42 % to +44 % (0.54, 0.76, 0.52, 0.40, 2.56, 0.45; interval "
          "[-1.52, 0.74]) while at it. 750 they move by at most 1.6 %; that rerun does not "
          "reproduce e54f17e's values, so the earlier machine's kernels are a cause "
          "consistent with the data, not one identified.  So float rounding, grown through "
          "float32 training, redraws the late per-seed values in Settings 1 and 3; a "
          "6-seed verdict there is one draw of it, and with 12 parts, each refuting when its "
          "two-sided 99 % interval lies below 0 (0.5 % at a true ratio of 1), a false "
          "refutation somewhere has a chance of up to about 6 % (union bound) even without "
          "it: "
          "e54f17e's refutation does not reproduce here and is not a finding (reports now "
          "record the machine: numerics.machine).  Thorough's 140 seeds over "
          "10 000 iterations put that part at -0.125, inconclusive, and refute Setting 2's at "
          "it. 750 (below).  The expected outcomes stay the plan's.  "
          "The null is half the paper's published effect "
          "(null_control_power: at thorough's 140 seeds some part rejects it with power "
          "above 0.99 at the paper's effects and the pilot's spreads; at ci's 6, 0.63 at "
          "most). Decided by the Student-t interval over seeds of the log ratio: per-seed ratios "
          "spread widely on both sides of 1, so a verdict on a few pinned seeds is no "
          "finding. Its parts need 6-140 seeds (Setting 1 diag at it. 1250: 91; Setting 3 "
          "eig at it. 1250: 140). " + _POWER_NOTE + _COMPARISON_NOTE
          + " Thorough campaign (commit a699076, 140 seeds, report "
          "results/thorough/linear_attention/comparison_claims.md): refuted at Setting 2, "
          "eig, it. 750, log R_med ratio -0.202 [-0.346, -0.058] (99 %), a finding; eight "
          "parts hold, three inconclusive. expected stays the paper's holds.  The statement "
          "it refutes, and where: Section 2.3 of Ahn et al. defines R_med^OPT = lambda_max("
          "Hessian) / lambda_median(Hessian) (the eigenvalue definition this part uses), and "
          "Fig. 2 row 3's table reports R_med^SGD / R_med^Adam = 3.14 (0.97) in Setting 2 at "
          "iteration 750 (mean (s.d.) over 6 seeds), a ratio above 1; the refutation is at "
          "that setting and iteration, at the authors' protocol, with 140 seeds.",
    positive=_synthetic("R_med(SGDM) = 4.5 x R_med(Adam)"),
    power=comparison_power("condition_number_ratio"),
    **_slow("inconclusive", measured_at="thorough"),
)
def check_condition_number_ratio(params: dict, ctx: Context, *, sign: int,
                                 source: Source, half: bool = False) -> Evidence:
    parts, gaps = [], []
    for s in SETTINGS_1_3:
        run = source(s, params["seed"], ctx)
        parts += condition_parts(run, sign, s, half)
        gaps.append(run.init_gap)
    # At it. 0 the ratio is exactly 1 (shared initialisation): recorded, not a part, since
    # it cannot tell the claim from its control.
    return Evidence(tuple(parts), {"init_gap": max(gaps)})


# ---------------------------------------------------------------------- smoothness
def smoothness_part(run: nl.ComparisonResult, sign: int, label: str) -> Part:
    """Per seed, log of median SGDM / median Adam directional smoothness over the
    checkpoints from it. 250 (the paper: 250-2000, which the thorough run keeps through
    ``smooth_until``); claim > 0 (Adam smaller)."""
    name = f"{label}: log smoothness ratio SGDM/Adam"
    if _short(run):
        return Part.unmeasured(name, 0.0, _short(run), kind="simulation")
    sgdm, adam = run.split("smooth")
    keep = run.smooth_steps >= 250
    med_s, med_a = np.median(sgdm[:, keep], 1), np.median(adam[:, keep], 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_seed = sign * (np.log(med_s) - np.log(med_a))
    return _over_seeds(run, name, per_seed,
                       f"{label}: per seed, log of the median directional smoothness SGDM / "
                       "Adam over the window (the paper's Fig. 2 row 4; a non-positive median "
                       "smoothness gives no finite log: against the claim)",
                       {"median_sgdm": med_s.tolist(), "median_adam": med_a.tolist()})


@claim(
    statement="empirical: the directional smoothness along the update (median over the "
              "checkpoints from iteration 250 to the run's end at ci, 1250, and to the "
              "paper's 2000 at thorough) is smaller for Adam than for SGD-momentum "
              "in Settings 1-3 (Setting 3: for the median seed, a statistic switched from "
              "the mean after the pilot, the first ci run at 6750882)",
    source="Ahn et al. Fig. 2 row 4, Section 2.4",
    theory={"sign": 1, "source": _real_run},
    control={"sign": -1, "source": _real_run},
    control_description=_NULL_CONTROL + " (Adam's smoothness no smaller)",
    notes=_EMPIRICAL_NOTE + "An earlier two-seed run of the protocol found Adam's median below "
          "SGD-momentum's in all three settings. Setting 3 is judged on the median seed (changed "
          "after the "
          "pilot, before any thorough run: its Setting 3 spread came from the one seed whose "
          "evaluation batch holds the prompts of adam_beats_sgd's notes, where both "
          "optimisers' median smoothness is over 100 times the other seeds'). Settings 1-3 "
          "need 4, 7 and 54 seeds (the pilot: the first ci run at 6750882, seeds 0-5). "
          + _POWER_NOTE + _COMPARISON_NOTE,
    positive=_synthetic("SGDM's smoothness 4.5 x Adam's (Setting 3 at its design's seeds)",
                        source=design_synthetic("directional_smoothness")),
    power=comparison_power("directional_smoothness"),
    **_slow("inconclusive", measured_at="thorough"),
)
def check_directional_smoothness(params: dict, ctx: Context, *, sign: int,
                                 source: Source) -> Evidence:
    return Evidence(tuple(smoothness_part(source(s, params["seed"], ctx), sign, s)
                          for s in SETTINGS_1_3))


def _detrended(values: np.ndarray, steps: np.ndarray, degree: int = 3) -> np.ndarray:
    """Residuals of ``values`` after least squares on a polynomial in the iteration."""
    t = (steps - steps.mean()) / max(float(np.ptp(steps)), 1.0)
    basis = np.vander(t, degree + 1)
    coef, *_ = np.linalg.lstsq(basis, values, rcond=None)
    return values - basis @ coef


def generalised_part(run: nl.ComparisonResult, sign: int, label: str) -> Part:
    """Partial correlation of log ||grad f|| and log directional smoothness along Adam,
    given a cubic trend in the iteration (both series decay along training; an i.i.d. null
    would count that common trend as association).  Per seed, Fisher z of the partial
    correlation over the checkpoints with positive curvature (the authors' log drops the
    rest); Student-t over seeds on the mean z; claim > 0 (the paper's Fig. 6, Definition 1)."""
    name = f"{label}: partial correlation given the iteration"
    if _short(run):
        return Part.unmeasured(name, 0.0, _short(run), kind="simulation")
    _, s_all = run.split("smooth")
    _, g_all = run.split("grad_norm")
    z = []
    points = []
    for s, g in zip(s_all, g_all, strict=True):
        keep = (s > 0) & (g > 0)
        steps = run.smooth_steps[keep]
        points.append(int(keep.sum()))
        if keep.sum() < 8:
            z.append(math.nan)
            continue
        rs = _detrended(np.log(s[keep]), steps)
        rg = _detrended(np.log(g[keep]), steps)
        r = float(np.corrcoef(rs, rg)[0, 1]) if rs.std() > 0 and rg.std() > 0 else 0.0
        z.append(math.atanh(max(min(r, 0.999999), -0.999999)))
    return signed_over_seeds(name, sign * np.array(z),
                             f"{label}: per seed, Fisher z of the correlation of log ||grad f|| "
                             "and log smoothness along Adam after removing a cubic trend in the "
                             "iteration from both; claim > 0, Student-t over seeds (99 %)",
                             details={"points": points,
                                      "partial_r": np.tanh(np.array(z)).tolist()},
                             kind="simulation")


@claim(
    statement="empirical: along Adam's trajectory the directional smoothness grows with the "
              "gradient "
              "norm beyond their common trend in the iteration ((L0, L1)-smoothness): "
              "positive partial correlation of their logarithms given the iteration, "
              "Settings 1-3",
    source="Ahn et al. Fig. 6, Section 2.5, Definition 1",
    theory={"sign": 1, "source": _real_run},
    control={"sign": -1, "source": _real_run},
    control_description=_NULL_CONTROL + " (no positive partial correlation)",
    notes=_EMPIRICAL_NOTE + "A rank correlation against an i.i.d. null counts the common decay of both series "
          "along training as association (tests/test_verify_optimisers.py shows such a trend "
          "alone gives a large Spearman rho), so the trend is removed first. Whether the "
          "association survives it is for the data to decide: Settings 1-3 need 6, 15 and "
          "10 seeds. " + _POWER_NOTE + _COMPARISON_NOTE,
    positive=_synthetic("smoothness ~ ||grad||^0.8 beyond the common trend"),
    power=comparison_power("generalised_smoothness"),
    **_slow("inconclusive", measured_at="thorough"),
)
def check_generalised_smoothness(params: dict, ctx: Context, *, sign: int,
                                 source: Source) -> Evidence:
    return Evidence(tuple(generalised_part(source(s, params["seed"], ctx), sign, s)
                          for s in SETTINGS_1_3))


# ---------------------------------------------------------------------- softmax
@claim(
    statement="empirical, open (reviewers' question), one hypothesis: with softmax attention "
              "as the "
              "authors write it, trained the same way (Setting 1 rates), Adam's loss is still "
              "below SGD-momentum's from iteration 500 on (adam_beats_sgd's window: 40 % of "
              "ci's 1250 iterations, 5 % of thorough's 10 000; the Adam-vs-SGD statistic, "
              "seed-level interval)",
    source="Ahn et al. Fig. 4; the reviews' softmax question",
    theory={"sign": 1, "source": _real_run},
    control={"sign": -1, "source": _real_run},
    control_description=_NULL_CONTROL + " (Adam no better than SGD-momentum)",
    notes=_EMPIRICAL_NOTE + "With the authors' 1/n factor and value corner fixed to 1, |TF| <= ((1 + 1/n)"
          "^L - 1) max_j |y_j| for any parameters (tested): softmax attention cannot "
          "fit the task, so Fig. 4's linear/softmax gap is a capacity limit of that "
          "layer.  No power calculation: an open question has no effect size to plan "
          "for, so an interval that does not exclude 0 says only that these seeds do not "
          "decide it, not that the advantage is absent.  " + _COMPARISON_NOTE,
    positive=_synthetic("Adam's loss decays twice as fast"),
    **_slow("open", kind="open-question"),
)
def check_softmax_carries_over(params: dict, ctx: Context, *, sign: int,
                               source: Source) -> Evidence:
    """Hypothesis (reviews): Adam's advantage over SGD-momentum carries over to softmax
    attention (the authors' layer), Setting 1 rates: the Adam-vs-SGD statistic on the
    softmax run.  Details give the linear-vs-softmax losses (Fig. 4)."""
    soft = source("setting1", params["seed"], ctx, "softmax")
    part = adam_gap(soft, sign, "softmax, setting1")
    return Evidence((part,), {"final_loss_softmax": soft.eval_loss[:, -1].tolist()})


def claims() -> list[Claim]:
    """The row's claims, in source order."""
    return declared(__name__)
