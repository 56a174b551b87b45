"""Error models that several rows share: one place, one rule each.

Every function returns a :class:`verify.claims.Part` and takes its ``kind`` (``symbolic``,
``simulation`` or ``published``: what the two sides are, :data:`verify.claims.PART_KINDS`).  A row uses these rather than its own
variant, so that, for instance, "an interval over seeds needs at least two seeds" is one rule
of the engine, not one per row.

- :func:`exact`: a deterministic comparison (no sampling noise; the tolerance is rounding or
  a derived discretisation bound).
- :func:`worst_member`: a deterministic comparison per member with a per-member allowance;
  the part is the member with the largest error / allowance.
- :func:`over_seeds`: a statistic with one value per seed (member), Student-t interval over
  seeds, other noise (an evaluation batch) added in quadrature.  With one seed the part says
  which noise its interval covers, or is not decided.
- :func:`signed_over_seeds`: a claimed-positive statistic per seed (an ordering: "A beats
  B"), tolerance 0: passes when the whole interval is on the claimed side.
- :func:`identically_zero`: a symbolic identity (a drift, a residual) proved with
  :func:`theory.flow.simplify_zero`, which probes numerically before ``simplify``.
- :func:`log_slope`: the least-squares slope of ``log y`` on ``log x`` over a window, with a
  Student-t interval from the residuals (a late-window power law in ``t``, an order of
  convergence in a step).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from numerics.stats import mean_interval, median_interval, t_quantile
from theory.flow import simplify_zero
from verify.claims import Part, PartKind, _f

__all__ = [
    "exact",
    "identically_zero",
    "log_slope",
    "over_seeds",
    "real",
    "signed_median_over_seeds",
    "signed_over_seeds",
    "worst_member",
]


def real(x: Any) -> float:
    """``x`` as a real float; NaN when it is a complex number with a non-zero imaginary part.

    A wrong theory can hand a check a complex value (the log of a negative probability, the
    square root of a negative curvature).  Read through this, it becomes a NaN, and a part
    with a NaN number fails (:class:`verify.claims.Part`) with the value in its numbers,
    instead of the check raising ``TypeError: Cannot convert complex to float``.  Anything
    that is neither real nor complex still raises: that is a defect of the check, not of
    the theory.  (The same rule as a part's own numbers, ``verify.claims._f``.)"""
    return _f(x)


def exact(name: str, predicted: float, observed: float, tolerance: float, error_model: str,
          details: Mapping[str, Any] | None = None, *, kind: PartKind | None = None) -> Part:
    """``|observed - predicted|`` against ``tolerance``, no interval (deterministic).  A
    complex side (a wrong theory's) fails the part: :func:`real`."""
    pred, obs = real(predicted), real(observed)
    err = abs(obs - pred)
    return Part(name, pred, obs, err, real(tolerance), error_model, details=dict(details or {}),
                kind=kind)


def worst_member(name: str, predicted: np.ndarray, observed: np.ndarray,
                 allowance: np.ndarray | float, error_model: str,
                 details: Mapping[str, Any] | None = None, *,
                 kind: PartKind | None = None) -> Part:
    """Per-member deterministic errors ``|observed - predicted|`` (the last axis, if any, is
    a vector whose Euclidean norm is taken) against per-member ``allowance``; the part
    reports the member whose error / allowance is largest."""
    pred, obs = np.asarray(predicted, float), np.asarray(observed, float)
    diff = obs - pred
    err = np.sqrt((diff**2).sum(-1)) if diff.ndim > 1 else np.abs(diff)
    tol = np.broadcast_to(np.asarray(allowance, float), err.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(tol > 0, err / tol, np.where(err > 0, np.inf, 0.0))
    ratio = np.where(np.isfinite(err), ratio, np.inf)
    k = int(np.argmax(ratio))
    pick = (lambda a: float(np.linalg.norm(a[k]))) if pred.ndim > 1 else (lambda a: float(a[k]))
    # every member's allowance (up to MEMBER_TOLERANCES of them): the runner's drift test
    # compares these, so a part whose allowances stay put while the theory picks another
    # worst member is not read as a tolerance that moves with the theory
    members = ({"member_tolerances": [float(t) for t in tol.ravel()]}
               if tol.size <= MEMBER_TOLERANCES else {})
    return Part(name, pick(pred), pick(obs), float(err[k]), float(tol[k]), error_model,
                details={"member": k, "members": int(err.size),
                         "max_ratio": float(ratio[k]), **members, **dict(details or {})},
                kind=kind)


#: at most this many per-member allowances are kept in a worst-member part's details
MEMBER_TOLERANCES = 256


def over_seeds(name: str, predicted: float, values: np.ndarray, tolerance: float,
               error_model: str, *, extra_se: float = 0.0, extra_noise: str = "",
               confidence: float = 0.99, details: Mapping[str, Any] | None = None,
               kind: PartKind | None = None) -> Part:
    """``|mean(values) - predicted|`` with an interval over seeds.

    Two or more seeds: Student-t with (seeds - 1) degrees of freedom on the seed standard
    error, ``extra_se`` (e.g. the evaluation batch's standard error, named by
    ``extra_noise``) added in quadrature.  One seed: the interval covers ``extra_noise``
    only and the part says so; with no ``extra_se`` either, the part is not decided
    (inconclusive): a single draw is no finding either way.
    """
    x = np.asarray(values, dtype=float).ravel()
    det = {"per_seed": x.tolist(), "seeds": int(x.size), **dict(details or {})}
    if x.size == 0 or not np.all(np.isfinite(x)):
        return Part(name, predicted, math.nan, math.nan, tolerance,
                    error_model + " (a seed gave a non-finite value)", details=det, kind=kind)
    if x.size >= 2:
        mean, _, _, se = mean_interval(x, confidence)
        det["interval_covers"] = "seeds" + (f" and {extra_noise}" if extra_se else "")
        return Part.deviation(name, predicted, mean, math.hypot(se, extra_se), tolerance,
                              error_model, confidence=confidence, dof=x.size - 1, details=det,
                              kind=kind)
    if extra_se > 0:
        det["interval_covers"] = f"{extra_noise or 'the stated noise'} only (one seed: the " \
                                 "seed-to-seed variance is not in the interval)"
        return Part.deviation(name, predicted, float(x[0]), extra_se, tolerance, error_model,
                              confidence=confidence, details=det, kind=kind)
    err = abs(float(x[0]) - float(predicted))
    return Part(name, predicted, float(x[0]), err, tolerance,
                error_model + " (one seed and no other noise estimate: not decided)",
                details=det, lower=0.0, upper=math.inf, measured=False, kind=kind)


def signed_over_seeds(name: str, per_seed: np.ndarray, error_model: str, *,
                      confidence: float = 0.99, details: Mapping[str, Any] | None = None,
                      kind: PartKind | None = None) -> Part:
    """A statistic claimed positive, one value per seed: ``error = -mean``, tolerance 0.

    Passes when the whole interval lies on the claimed side, fails when it lies on the
    other; fewer than two seeds give no interval and the part is not decided.
    """
    x = np.asarray(per_seed, dtype=float).ravel()
    det = {"per_seed": x.tolist(), "seeds": int(x.size), **dict(details or {})}
    if x.size and not np.all(np.isfinite(x)):
        return Part(name, 0.0, float(np.mean(x)), math.nan, 0.0,
                    error_model + " (a seed gave a non-finite statistic)", details=det,
                    kind=kind)
    if x.size < 2:
        mean = float(x.mean()) if x.size else math.nan
        return Part(name, 0.0, mean, -mean, 0.0,
                    error_model + " (fewer than 2 seeds: no interval, not decided)",
                    details=det, measured=False, kind=kind)
    mean, lo, hi, se = mean_interval(x, confidence)
    det["se"] = se
    return Part.bounded(name, 0.0, mean, -mean, -hi, -lo, 0.0, error_model, confidence, det, kind=kind)


def signed_median_over_seeds(name: str, per_seed: np.ndarray, error_model: str, *,
                             confidence: float = 0.99,
                             details: Mapping[str, Any] | None = None,
                             kind: PartKind | None = None) -> Part:
    """A statistic claimed positive for the typical seed, one value per seed: ``error =
    -median``, tolerance 0, with the distribution-free order-statistic interval on the
    median (``numerics.stats.median_interval``).  For per-seed statistics with heavy tails,
    where one seed can carry a Student-t interval on the mean anywhere; too few seeds for
    the confidence (fewer than 8 at 99 %) leave the part not decided."""
    x = np.asarray(per_seed, dtype=float).ravel()
    det = {"per_seed": x.tolist(), "seeds": int(x.size), **dict(details or {})}
    if x.size == 0:
        return Part(name, 0.0, math.nan, math.nan, 0.0, error_model + " (no seeds)",
                    details=det, measured=False, kind=kind)
    # a non-finite seed counts as the most negative value (against the claim), so the
    # ranks still decide; the interval's ends stay finite numbers of the sample
    worst = -float(np.finfo(float).max)
    med, lo, hi = median_interval(np.where(np.isfinite(x), x, worst), confidence)
    det["negative_seeds"] = int(np.sum(~(x > 0)))
    if not math.isfinite(lo):
        return Part(name, 0.0, med, -med, 0.0,
                    error_model + f" ({x.size} seeds: too few for a {confidence:.0%} "
                    "interval on the median, not decided)", details=det, measured=False,
                    kind=kind)
    return Part.bounded(name, 0.0, med, -med, -hi, -lo, 0.0, error_model, confidence, det, kind=kind)


def identically_zero(name: str, expr: sp.Expr, error_model: str = "",
                     details: Mapping[str, Any] | None = None, *,
                     kind: PartKind | None = "symbolic") -> Part:
    """A symbolic identity: ``expr`` must simplify to 0 (exact: error 0 or 1, tolerance 0)."""
    reduced = simplify_zero(expr)
    bad = 0.0 if reduced == 0 else 1.0
    model = error_model or ("exact: the expression must simplify to 0 (expand, then a "
                            "numeric probe at random points, then cancel / simplify)")
    return Part(name, 0.0, bad, bad, 0.0, model,
                details={"residual": str(reduced)[:500], **dict(details or {})}, kind=kind)


def log_slope(name: str, x: np.ndarray, y: np.ndarray, predicted: float, tolerance: float,
              error_model: str, *, confidence: float = 0.99,
              details: Mapping[str, Any] | None = None, kind: PartKind | None = None) -> Part:
    """Slope of ``log y`` on ``log x`` (least squares) against ``predicted``, with a
    Student-t interval (``len(x) - 2`` dof) from the fit's residuals."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if lx.size < 3 or not (np.all(np.isfinite(lx)) and np.all(np.isfinite(ly))):
        return Part(name, predicted, math.nan, math.nan, tolerance,
                    error_model + " (fewer than 3 points or a non-positive value)",
                    details=dict(details or {}), kind=kind)
    slope, icpt = np.polyfit(lx, ly, 1)
    resid = ly - (slope * lx + icpt)
    dof = lx.size - 2
    sxx = float(((lx - lx.mean()) ** 2).sum())
    se = math.sqrt(float((resid**2).sum()) / dof / sxx) if sxx > 0 else math.inf
    err = abs(float(slope) - predicted)
    half = t_quantile(confidence, dof) * se
    return Part.bounded(name, predicted, float(slope), err, max(0.0, err - half), err + half,
                        tolerance, error_model, confidence,
                        {"se": se, "points": int(lx.size), **dict(details or {})}, kind=kind)
