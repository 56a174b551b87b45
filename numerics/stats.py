"""Sampling error: intervals on means, bootstrap, median-of-means, seed-level intervals.

Every statistical verdict in tdcheck states an interval on its error at a confidence level
(99 % unless a claim says otherwise).  These helpers produce such intervals from samples;
they hold no state, and every random draw (the bootstrap) takes a seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

__all__ = [
    "Bootstrap",
    "bootstrap",
    "mean_interval",
    "median_interval",
    "median_of_means",
    "median_sign_power",
    "normal_quantile",
    "one_sided_quantile",
    "samples_for_power",
    "samples_for_sign_power",
    "t_interval_power",
    "t_quantile",
    "upper_tail",
]


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")


def normal_quantile(confidence: float = 0.99) -> float:
    """Two-sided standard-normal quantile: 2.5758 at 99 %."""
    _check_confidence(confidence)
    return float(_st.norm.ppf(0.5 + confidence / 2))


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student-t quantile with ``dof`` degrees of freedom."""
    _check_confidence(confidence)
    if dof < 1:
        raise ValueError(f"dof must be >= 1, got {dof}")
    return float(_st.t.ppf(0.5 + confidence / 2, dof))


def upper_tail(z: float, dof: int | None = None) -> float:
    """P(Z > z) for a standard normal (``dof`` None) or Student-t with ``dof`` dof."""
    if dof is None:
        return float(_st.norm.sf(z))
    if dof < 1:
        raise ValueError(f"dof must be >= 1, got {dof}")
    return float(_st.t.sf(z, dof))


def one_sided_quantile(alpha: float, dof: int | None = None) -> float:
    """The z with P(Z > z) = ``alpha`` (normal, or Student-t with ``dof`` dof)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return float(_st.norm.isf(alpha) if dof is None else _st.t.isf(alpha, dof))


def t_interval_power(effect: float, sd: float, n: int, confidence: float = 0.99) -> float:
    """Probability that the two-sided Student-t interval of :func:`mean_interval` over ``n``
    samples of mean ``effect`` > 0 and standard deviation ``sd`` lies wholly above 0 (the
    sign decided): P(T' > t_q) for T' noncentral t with n - 1 dof and noncentrality
    effect sqrt(n) / sd, t_q the interval's quantile.  Normal samples assumed."""
    _check_confidence(confidence)
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if not sd > 0:
        raise ValueError(f"sd must be > 0, got {sd}")
    q = t_quantile(confidence, n - 1)
    return float(_st.nct.sf(q, n - 1, effect * np.sqrt(n) / sd))


def samples_for_power(effect: float, sd: float, power: float = 0.9,
                      confidence: float = 0.99, max_n: int = 100_000) -> int | None:
    """The fewest samples whose :func:`t_interval_power` reaches ``power``: a seed count
    from a planning effect and spread (a pilot's, or a published one).  None when
    ``effect`` <= 0 (no sample count decides a sign the planning effect does not have) or
    when more than ``max_n`` would be needed."""
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")
    if effect <= 0:
        return None
    if t_interval_power(effect, sd, max_n, confidence) < power:
        return None
    lo, hi = 2, max_n  # power grows with n: bisect for the first n that reaches it
    while lo < hi:
        mid = (lo + hi) // 2
        if t_interval_power(effect, sd, mid, confidence) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _median_rank(n: int, confidence: float) -> int:
    """The largest l with P(Binom(n, 1/2) < l) <= (1 - confidence) / 2 (0 when none): the
    interval [X_(l), X_(n + 1 - l)] (1-indexed order statistics) covers the median with
    probability >= ``confidence`` for any continuous law."""
    alpha = (1 - confidence) / 2
    rank = int(_st.binom.ppf(alpha, n, 0.5))  # smallest k with P(B <= k) >= alpha
    while rank > 0 and _st.binom.cdf(rank - 1, n, 0.5) > alpha:
        rank -= 1
    while _st.binom.cdf(rank, n, 0.5) <= alpha:
        rank += 1
    return rank


def median_interval(x: Sequence[float] | np.ndarray, confidence: float = 0.99
                    ) -> tuple[float, float, float]:
    """(median, lower, upper) with the distribution-free order-statistic interval on the
    median (binomial ranks); (median, -inf, inf) when ``x`` is too short for ``confidence``
    (at 99 % that is fewer than 8 samples).  For statistics over seeds whose law has heavy
    tails, where a Student-t interval on the mean is neither valid nor powerful."""
    _check_confidence(confidence)
    a = np.sort(np.asarray(x, dtype=float).ravel())
    if a.size < 1:
        raise ValueError("x needs at least one sample")
    rank = _median_rank(a.size, confidence)
    med = float(np.median(a))
    if rank < 1:
        return med, -math.inf, math.inf
    return med, float(a[rank - 1]), float(a[a.size - rank])


def median_sign_power(p_neg: float, n: int, confidence: float = 0.99) -> float:
    """Probability that :func:`median_interval` over ``n`` samples lies wholly above 0 when
    each sample is <= 0 with probability ``p_neg``: fewer than l of them are (l its rank)."""
    if not 0 <= p_neg < 1:
        raise ValueError(f"p_neg must lie in [0, 1), got {p_neg}")
    rank = _median_rank(n, confidence)
    return float(_st.binom.cdf(rank - 1, n, p_neg)) if rank >= 1 else 0.0


def samples_for_sign_power(p_neg: float, power: float = 0.9, confidence: float = 0.99,
                           max_n: int = 100_000) -> int | None:
    """The fewest samples whose :func:`median_sign_power` reaches ``power`` (None for
    ``p_neg`` >= 1/2, or beyond ``max_n``).  The power is not monotone in n (the binomial
    ranks step), so the first n is searched in order."""
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")
    if p_neg >= 0.5:
        return None
    for n in range(2, max_n + 1):
        if median_sign_power(p_neg, n, confidence) >= power:
            return n
    return None


def mean_interval(x: Sequence[float] | np.ndarray, confidence: float = 0.99
                  ) -> tuple[float, float, float, float]:
    """(mean, lower, upper, standard error) of the mean of ``x`` with a Student-t interval.

    The t quantile (n - 1 degrees of freedom) is right when the spread is estimated from the
    same few samples, as for seed-level intervals over a handful of members.
    """
    a = np.asarray(x, dtype=float).ravel()
    if a.size < 2:
        raise ValueError(f"x needs at least 2 samples for an interval, got {a.size}")
    m = float(a.mean())
    se = float(a.std(ddof=1) / np.sqrt(a.size))
    q = t_quantile(confidence, a.size - 1)
    return m, m - q * se, m + q * se, se


@dataclass(frozen=True)
class Bootstrap:
    """A percentile bootstrap: the estimate, the interval, and how many resamples gave a
    non-finite statistic (they are left out of the quantiles and reported, never hidden)."""

    estimate: float
    lower: float
    upper: float
    n_boot: int
    nonfinite: int


def bootstrap(
    x: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float],
    confidence: float = 0.99,
    n_boot: int = 2000,
    seed: int = 0,
    max_nonfinite: float = 0.5,
) -> Bootstrap:
    """Percentile bootstrap of ``statistic`` over samples ``x`` (rows resampled).

    For statistics whose sampling law is not known in closed form (Hill indices, quantile
    ratios of heavy-tailed samples).  Resamples whose statistic is not finite are counted in
    ``nonfinite``; more than ``max_nonfinite`` of them raises ``ValueError``.
    """
    _check_confidence(confidence)
    a = np.asarray(x, dtype=float)
    if a.shape[0] < 2:
        raise ValueError(f"x needs at least 2 samples, got {a.shape[0]}")
    if n_boot < 10:
        raise ValueError(f"n_boot must be >= 10, got {n_boot}")
    rng = np.random.default_rng(seed)
    est = float(statistic(a))
    idx = rng.integers(0, a.shape[0], size=(n_boot, a.shape[0]))
    boots = np.array([statistic(a[i]) for i in idx], dtype=float)
    finite = boots[np.isfinite(boots)]
    bad = int(n_boot - finite.size)
    if bad > max_nonfinite * n_boot:
        raise ValueError(f"bootstrap statistic was non-finite on {bad} of {n_boot} resamples")
    lo, hi = np.quantile(finite, [0.5 - confidence / 2, 0.5 + confidence / 2])
    return Bootstrap(est, float(lo), float(hi), n_boot, bad)


def median_of_means(x: Sequence[float] | np.ndarray, groups: int) -> float:
    """Median of the means of ``groups`` consecutive blocks of ``x`` (robust to heavy tails)."""
    a = np.asarray(x, dtype=float).ravel()
    if not 1 <= groups <= a.size:
        raise ValueError(f"groups must lie in [1, {a.size}], got {groups}")
    return float(np.median([b.mean() for b in np.array_split(a, groups)]))
