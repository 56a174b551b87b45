"""Claims of Tian et al., *Scan and Snap* (NeurIPS 2023): the ``scan_snap`` row.

Each claim is declared on its check function with :func:`verify.claims.claim`: ``theory``
and ``control`` are the keyword arguments that make the one check test the paper's theory and
a near-miss wrong one (a perturbed coefficient, the form printed in the paper where it is
wrong, a swapped sign, a wrong time), so the control runs the same code by construction.  The
checks call :mod:`theory.scan_snap` themselves, so an error there fails a claim.  Equation,
lemma and figure numbers are those of arXiv 2305.16380v4.

Sizes come from the row's one table, :data:`numerics.scan_snap.SIZES`, which the figures
read too.  Closed forms and reduced ODEs run at the paper's sizes; the full-model runs follow
the authors' logged commands (Fig. 4: ``num_last = 2``, zero init, ``lr_z = 1``; Fig. 6:
random init, momentum 0.9, 100 iterations, batch 128, L = 128), with more seeds than the
published 10 where a statistic needs them.  Below ``thorough`` only the Fig. 6 panel
``num_last = 1`` runs; ``thorough`` runs every SGD claim at the authors' configuration with
1000 seeds per statistic (scan_order_sgd: 16 280, from its power calculation) and all four
Fig. 6 panels, sized for one GPU and not yet run (its
verdicts are unknown).  Sampling noise enters as Student-t intervals over seeds (99 %); each
tolerance says which model mismatch it allows for; "our threshold" marks a tolerance that is
ours, not the paper's.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch
from hypothesis import strategies as st
from scipy.integrate import cumulative_trapezoid, quad, solve_ivp
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from numerics import scan_snap as ns
from numerics.stats import mean_interval, t_quantile
from theory import scan_snap as ts
from theory.flow import InadmissibleTheory, admissible, lambdify_numeric
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
from verify.error_models import over_seeds, signed_over_seeds

__all__ = ["claims", "etaz_monotone_power", "ratio_monotone_power",
           "scan_order_sgd_power"]

_EPS = float(np.finfo(float).eps)
_CONF = 0.99


# ---------------------------------------------------------------------- theory's times
# The checks place their time grids at the theory's t0, t0' and gamma's peak; a wrong theory
# that puts one at a non-positive or non-finite time is inadmissible (a failed part with the
# reason, verify.runner), not a numpy error from a grid with a negative end.
def _t0(M: int, K: int, eta_Y: float) -> float:
    return admissible("t0 (theory.scan_snap.snap_time)", ts.snap_time(M, K, eta_Y), lower=0.0)


def _t0p(M: int, K: int, eta_Y: float) -> float:
    return admissible("t0' (theory.scan_snap.scan_time)", ts.scan_time(M, K, eta_Y), lower=0.0)


def _t_peak(M: int, K: int, eta_Y: float) -> float:
    return admissible("gamma's peak time (theory.scan_snap.speed_peak_time)",
                      ts.speed_peak_time(M, K, eta_Y), lower=0.0)


# ---------------------------------------------------------------------- shared runs
def _size(ctx: Context, name: str):
    return ctx.size(ns.SIZES, name)


def _sgd(config: ns.SGDConfig, ctx: Context) -> ns.SGDResult:
    """The SGD ensemble at ``ctx``'s profile, through the run cache (check and control, and
    the figures, share it)."""
    return ns.sgd_run(config, ctx)


def _flow(cfg: ns.FlowConfig, ctx: Context) -> ns.FlowResult:
    return ns.run_population_flow(cfg, cache=ctx.cache)


def _column_run(ctx: Context) -> ns.SGDResult:
    """The panel-1 sweep's columns for the eta_Z-monotonicity claim (``column_ratios``: the
    ratio-10 column alone, or the whole sweep where it is run anyway)."""
    return _sgd(ns.fig6_column_config(1, _size(ctx, "column_ratios"),
                                      _size(ctx, "column_seeds")), ctx)


# ---------------------------------------------------------------------- index-valued theory
# Four theory functions return token indices, not numbers: distinct_tokens (G_DT(n) per
# class), common_tokens (G_CT), winners (the argmax DT per class, or None) and scan_order (a
# class's DTs in the order they lose attention); predicted_drift_signs returns a sign per
# token.  A wrong theory may return something that is no index (a float, a negative or
# too-large integer, a repeated token) or no sign: the checks read these outputs through the
# validators below, which turn such an output into a failed part with the reason (never an
# IndexError from the check, nor a negative index that numpy would silently read from the
# end).  An exception raised inside the theory call itself (a theory function that indexes
# with another's invalid output) is reported the same way.
class _InvalidTheory(Exception):
    """A theory output that no check can use as what it claims to be."""


def _theory(fn: Callable, *args, what: str):
    """``fn(*args)``; an exception raised inside the theory call becomes :class:`_InvalidTheory`."""
    try:
        return fn(*args)
    except (IndexError, KeyError, TypeError, ValueError, ArithmeticError) as e:
        raise _InvalidTheory(f"{what} raised {type(e).__name__}: {e}") from e


def _attention(probs, z) -> np.ndarray:
    """:func:`theory.scan_snap.unnormalised_attention` at (P(l|n), z): c~_l = P(l|n) e^{z_l}
    is a weight, >= 0 and finite; an output outside that domain (a flipped sign) fails the
    part with the reason (InadmissibleTheory), where the ratios and squares the checks take
    of it would otherwise hide the sign."""
    c = np.asarray(ts.unnormalised_attention(probs, z), dtype=float)
    bad = ~np.isfinite(c) | (c < 0)
    if np.any(bad):
        raise InadmissibleTheory(
            "unnormalised attention c~ = P(l|n) e^{z_l} (theory.scan_snap."
            f"unnormalised_attention) must be finite and >= 0; {int(bad.sum())} of {c.size} "
            f"entries are not (e.g. {c[bad].flat[0]!r})")
    return c


def _gain(z, z0, power: float) -> np.ndarray:
    """:func:`theory.scan_snap.attention_gain`, chi = e^{p (z - z(0))}: finite and > 0 for
    any logits; an output outside that domain fails the part with the reason
    (InadmissibleTheory), where the logarithms the checks take of it would give NaN."""
    chi = np.asarray(ts.attention_gain(z, z0, power), dtype=float)
    bad = ~np.isfinite(chi) | (chi <= 0)
    if np.any(bad):
        raise InadmissibleTheory(
            "attention gain chi = e^{p (z - z(0))} (theory.scan_snap.attention_gain) must be "
            f"finite and > 0; {int(bad.sum())} of {chi.size} entries are not "
            f"(e.g. {chi[bad].flat[0]!r})")
    return chi


def _relative_gain(c_l, c_lp) -> np.ndarray:
    """:func:`theory.scan_snap.relative_gain` of two attention series, as a float array of
    their shape: an output of another shape fails the part with the reason
    (InadmissibleTheory) instead of an IndexError in the check."""
    c_l = np.asarray(c_l, dtype=float)
    r = np.asarray(ts.relative_gain(c_l, c_lp), dtype=float)
    if r.shape != c_l.shape:
        raise InadmissibleTheory(
            f"relative gain r_l/l' (theory.scan_snap.relative_gain) has shape {r.shape}, "
            f"not its inputs' {c_l.shape}")
    return r


def _dominant(P, z0, n: int, d) -> int:
    """Theorem 3's dominant DT of class n from the start ``z0`` (theory.scan_snap.winners:
    the largest c~(0); from Z(0) = 0 the largest P), as a position in ``d`` (class n's DTs);
    a winner that is not one of them fails the part with the reason (InadmissibleTheory)."""
    P = np.asarray(P, dtype=float)
    try:
        win = _winner_list(_theory(ts.winners, P, z0, what="winners"), P.shape[0],
                           P.shape[1], "winners")[n]
    except _InvalidTheory as e:
        raise InadmissibleTheory(str(e)) from e
    d = [int(j) for j in d]
    if win not in d:
        raise InadmissibleTheory(f"winners (theory.scan_snap.winners) gives {win!r} for class "
                                 f"{n}, not one of its DTs {d}")
    return d.index(win)


def _worst(*values) -> float:
    """The largest of ``values``, NaN if any is NaN (Python's max would drop a NaN that
    comes first and hide a wrong theory's undefined error)."""
    return float(np.max(np.asarray(values, dtype=float)))


def _index(v, size: int, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise _InvalidTheory(f"{what}: {v!r} is not an integer token index")
    if not 0 <= int(v) < size:
        raise _InvalidTheory(f"{what}: token index {int(v)} outside [0, {size})")
    return int(v)


def _indices(seq, size: int, what: str) -> tuple[int, ...]:
    """Distinct token indices in [0, size)."""
    if isinstance(seq, (str, bytes)) or not hasattr(seq, "__iter__"):
        raise _InvalidTheory(f"{what}: {seq!r} is not a sequence of token indices")
    out = tuple(_index(v, size, what) for v in seq)
    if len(set(out)) != len(out):
        raise _InvalidTheory(f"{what}: a token appears twice in {out}")
    return out


def _token_sets(value, K: int, size: int, what: str) -> tuple[tuple[int, ...], ...]:
    """One set of distinct token indices per class (K of them)."""
    sets = tuple(_indices(d, size, what) for d in _sequence(value, what))
    if len(sets) != K:
        raise _InvalidTheory(f"{what}: {len(sets)} token sets for {K} classes")
    return sets


def _support_types(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Section 3.2's token types read off the support of P (a definition, not the theory
    under test): with Omega(l) the classes whose P(l|n) > 0, a (K, L) mask whose row n marks
    G_DT(n) = {l : Omega(l) = {n}}, and an (L,) mask of G_CT = {l : |Omega(l)| > 1}.  The
    simulation parts judge the theory's sign for every token of a type, so a theory that
    leaves a token out of its sets cannot shrink its own test."""
    support = np.asarray(P) > 0
    count = support.sum(axis=0)
    return support & (count == 1)[None, :], count > 1


def _token_partition(P: np.ndarray, dt_sets: Sequence[Sequence[int]], ct_ids: Sequence[int]
                     ) -> Part:
    """Section 3.2's token types from the support of P: with Omega(l) the classes whose
    P(l|n) > 0, G_DT(n) = {l : Omega(l) = {n}} for each class and G_CT = {l : |Omega(l)| >
    1}.  The part fails, naming the tokens, where the theory's sets differ (a CT left out,
    a DT in another class's set, a token with no mass); it sits beside the simulation
    parts, which still judge the sets."""
    dt_types, ct_type = _support_types(P)
    bad: dict[str, list[int]] = {}
    for n, d in enumerate(dt_sets):
        want = {int(j) for j in np.nonzero(dt_types[n])[0]}
        diff = sorted(want ^ {int(j) for j in d})
        if diff:
            bad[f"G_DT({n})"] = diff
    diff = sorted({int(j) for j in np.nonzero(ct_type)[0]} ^ {int(j) for j in ct_ids})
    if diff:
        bad["G_CT"] = diff
    wrong = float(sum(len(v) for v in bad.values()))
    return Part("token types partition the context tokens (Section 3.2)", 0.0, wrong, wrong,
                0.0, "exact: distinct_tokens and common_tokens against the token types of "
                "P's support; " + (f"tokens misplaced: {bad}" if bad else "none misplaced"),
                kind="symbolic")


def _winner_list(value, K: int, size: int, what: str) -> tuple[int | None, ...]:
    """One token index (or None: no DT) per class."""
    out = tuple(None if v is None else _index(v, size, what) for v in _sequence(value, what))
    if len(out) != K:
        raise _InvalidTheory(f"{what}: {len(out)} winners for {K} classes")
    return out


def _sign_list(value, size: int, what: str) -> np.ndarray:
    """A sign (-1, 0 or +1) per token (size of them)."""
    out = _sequence(value, what)
    if len(out) != size:
        raise _InvalidTheory(f"{what}: {len(out)} signs for {size} tokens")
    bad = [v for v in out if isinstance(v, bool) or v not in (-1, 0, 1)]
    if bad:
        raise _InvalidTheory(f"{what}: {bad[0]!r} is not a sign (-1, 0 or +1)")
    return np.array([int(v) for v in out])


def _sequence(value, what: str) -> tuple:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise _InvalidTheory(f"{what}: {value!r} is not a sequence")
    return tuple(value)


def _unusable(what: str, e: _InvalidTheory) -> Part:
    """One part of a check with several theory inputs: ``what``'s output is unusable."""
    return Part(f"{what}: theory output usable", 0.0, math.nan, math.inf, 0.0,
                f"the theory's output is not what it claims: {e}", kind="symbolic")


def _invalid(e: _InvalidTheory) -> Evidence:
    """The evidence of a check whose theory output is unusable: one failed part, the reason."""
    return Evidence((Part("theory output usable (token indices, signs)", 0.0, math.nan,
                          math.inf, 0.0, f"the theory's output is not what it claims: {e}",
                          kind="symbolic"),), {"invalid theory output": str(e)})


# ---------------------------------------------------------------------- strategies
_M = st.integers(2, 5000)
_K = st.integers(1, 20)
_RATE = st.floats(0.05, 20.0, allow_nan=False)


def _c0() -> st.SearchStrategy:
    # C0 away from 1, where the printed Eqn 14 and the corrected one coincide
    return st.one_of(st.floats(0.05, 0.8), st.floats(1.25, 20.0))


_NONE = st.just({})
_decoder = st.fixed_dictionaries({"M": _M, "eta_Y": _RATE})
_FIG4_VIA = "the authors' Fig. 4 command (figure_4.log)"
_DT_PERM = 1  # DataConfig.dt_perm_seed of the permuted layout
_FIG4_PERM_VIA = ("the Fig. 4 command with each class's DT masses permuted against the token "
                  "ids (dt_perm_seed = 1)")
_FIG6_VIA = "the authors' Fig. 6 sweep (figure_6.log), panel num_last = 1"
_snap = st.fixed_dictionaries({"M": _M, "K": _K, "eta_Y": _RATE, "eta_Z": _RATE, "C0": _c0()})


# ---------------------------------------------------------------------- 1. Lemma 6
def _wrong_decoder_scale(t: float, M: int, eta_Y: float) -> float:
    """Lemma 6 with (M-1) M h replaced by M^2 h (a perturbed coefficient)."""
    u = M * eta_Y * t
    if u == 0:
        return 0.0
    # both u/M and log1p(u) lie above the root (expm1(x) >= x; M x >= 0), and the smaller
    # keeps expm1 finite at every t (u/M + 1 overflowed at M = 1000 past 50 t0)
    return brentq(lambda x: math.expm1(x) + M * x - u, 0.0, min(u / M, math.log1p(u)),
                  xtol=1e-300, rtol=4 * _EPS) / M


@claim(
    id="decoder_scale",
    statement="h(t) solves e^{Mh} + (M-1) M h = M eta_Y t + 1 along h' = eta_Y/((M-1)+e^{Mh})",
    source="Lemma 6, Eqn 44-45",
    kind="symbolic",
    strategy=_decoder,
    theory={"root": ts.decoder_scale},
    control={"root": _wrong_decoder_scale},
    control_description="implicit equation with (M-1) M h replaced by M^2 h",
    examples=(Example({"M": 1000, "eta_Y": 1.0}, via="Fig. 8 (M = 1000, eta_Y = 1)"),
              Example({"M": 2, "eta_Y": 20.0},
                      via="boundary case: the smallest vocabulary, the largest rate")),
)
def _check_lemma6(params: dict, ctx: Context, *, root: Callable) -> Evidence:
    M, eta_Y = params["M"], params["eta_Y"]
    t_end = 50 * _t0(M, 1, eta_Y)
    times = np.r_[1e-9 / (M * eta_Y), np.geomspace(1e-3 / (M * eta_Y), t_end, 25)]
    # integrate in x = M h, which is O(1): x' = M eta_Y/((M-1) + e^x)
    sol = solve_ivp(lambda t, x: ts.decoder_rate_scaled(x, M, eta_Y), (0.0, t_end), [0.0],
                    method="DOP853", t_eval=times, rtol=1e-13, atol=1e-30)
    ode = sol.y[0] / M
    pred = np.array([root(t, M, eta_Y) for t in times])
    rel = np.abs(pred - ode) / ode
    i = int(np.argmax(rel))
    return Evidence((Part(
        "h(t) vs integrated ODE", pred[i], ode[i], float(rel.max()), 1e-9,
        "DOP853 at rtol 1e-13 over <= 26 output times: accumulated relative error < 1e-10 "
        "(measured ~1e-12); root to machine precision",
        details={"t_worst": float(times[i]), "t_end": t_end}, kind="symbolic"),))


# ---------------------------------------------------------------------- 2. Lemma 7
def _decoder_gd(M: int, eta_Y: float, steps: int) -> np.ndarray:
    """One class's decoder logits w_n = Y^T f_n (|f_n| = 1, Lemma 3) under ``steps`` plain
    gradient-descent steps of rate eta_Y on the cross-entropy of class n = 0, from w = 0,
    the gradient by torch autograd (float64): returns (w_n[n] - w_n[j]) / M after each step
    [steps + 1] (t = 0 first), which Lemma 5's w_n(s) = (M-1) h*(s) zeta_n makes h*(s)."""
    w = torch.zeros(M, dtype=torch.float64, requires_grad=True)
    target = torch.zeros(1, dtype=torch.long)
    out = [0.0]
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(w[None], target)
        (g,) = torch.autograd.grad(loss, w)
        with torch.no_grad():
            w -= eta_Y * g
        out.append(float(w.detach()[0] - w.detach()[1]) / M)
    return np.array(out)


@claim(
    id="decoder_gap",
    statement="0 <= h*(s) - h(s) <= 2 eta_Y/M for the discrete recursion h*, and h*(s) "
              "is the decoder's gradient-descent step: w_n(s) = (M-1) h*(s) zeta_n for one "
              "class's logits under s steps of rate eta_Y",
    source="Lemma 5 (Eqn 31-33), Lemma 7",
    kind="symbolic",
    strategy=_decoder,
    theory={"sign": 1},
    control={"sign": -1},
    control_description="the opposite order h(s) >= h*(s)",
    examples=(Example({"M": 50, "eta_Y": 2.0}, via="Fig. 8 (M = 50, eta_Y = 2)"),
              Example({"M": 1000, "eta_Y": 4.0}, via="Fig. 8 (M = 1000, eta_Y = 4)")),
    notes="Lemma 7 is an inequality that holds with slack: at Fig. 8's sizes the largest gap "
          "is a small fraction of 2 eta_Y/M, so a bound scaled by 1 +/- 5 % (a mutant of "
          "theory.scan_snap.decoder_gap_bound) is still a true bound and no check of Lemma 7 "
          "can tell it from the printed one; its sign is checked.  What decides is h*(s) "
          "itself (issue: Lemma 5's recursion was unpinned): the first part compares Eqn 33 "
          "with one class's decoder logits under s plain gradient-descent steps of rate "
          "eta_Y on the cross-entropy, the gradient by torch autograd, through Lemma 5's "
          "w_n(s) = (M-1) h*(s) zeta_n, i.e. h*(s) = (w_n[n] - w_n[j])/M, at every step of "
          "the grid; Fig. 8's staircase is h* at integer s.",
)
def _check_lemma7(params: dict, ctx: Context, *, sign: int) -> Evidence:
    M, eta_Y = params["M"], params["eta_Y"]
    S = _size(ctx, "decoder_steps")
    grid = sorted(set(range(20)) | set(range(0, S + 1, max(1, S // 100))))
    g = np.array([ts.decoder_scale_steps(s, M, eta_Y) - ts.decoder_scale(s, M, eta_Y)
                  for s in grid])
    hs = ts.decoder_scale_steps(S, M, eta_Y)
    bound = ts.decoder_gap_bound(M, eta_Y)
    rounding = 64 * _EPS * max(hs, 1e-300) / bound
    viol = max(0.0, -float(np.min(sign * g))) / bound
    # Eqn 33 against the decoder's own gradient descent (Lemma 5), at every step of the grid
    gd = _decoder_gd(M, eta_Y, S)
    hs_grid = np.array([ts.decoder_scale_steps(s, M, eta_Y) for s in grid[1:]])
    gd_rel = np.abs(hs_grid - gd[grid[1:]]) / gd[grid[1:]]
    k = int(np.argmax(gd_rel))
    return Evidence((
        Part("h*(s) of Eqn 33 vs the decoder's gradient descent", float(hs_grid[k]),
             float(gd[grid[1 + k]]), float(gd_rel[k]), 32 * S * _EPS,
             "float64 rounding of two S-step recursions (the theory's and the logits' "
             "descent, one rounding of |w| ~ M h per step each): 32 S eps relative",
             details={"s_worst": int(grid[1 + k]), "steps": S}, kind="symbolic"),
        Part("sign of h* - h", 0.0, float(np.min(sign * g)) / bound, viol, rounding,
             "the recursion and the root carry ~S eps relative rounding (64 eps of h allowed)", kind="symbolic"),
        Part("gap within 2 eta_Y/M", 1.0, float(np.max(np.abs(g))) / bound,
             float(np.max(np.abs(g))) / bound, 1.0, "Lemma 7's bound itself (exact claim)", kind="symbolic"),
    ), {"max_gap": float(np.max(np.abs(g))), "bound": bound, "steps": S})


# ---------------------------------------------------------------------- 2b. Lemmas 3-6 in the model
def _wrong_integrated_speed(t, M, K, eta_Y, eta_Z) -> float:
    """Gamma with (M-1)^2 replaced by M^2."""
    return ts.integrated_speed(t, M, K, eta_Y, eta_Z) * M**2 / (M - 1) ** 2


def _wrong_speed_control(t, M, K, eta_Y) -> float:
    """gamma with (M-1)^2 replaced by M^2 (the slip of the Gamma control)."""
    return ts.speed_control(t, M, K, eta_Y) * M**2 / (M - 1) ** 2


def _decoder_readouts(flow: ns.FlowResult, facts: ns.Facts, q1: float, q0: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From the model's Y at each saved time: h read through Lemma 5's w_n = (M-1) h zeta_n
    entry by entry, w_n[n] / (M-1) at the class's own output and -w_n[j] at every other
    (zeta_n's entries are 1 and -1/(M-1)) [T, K, M]; gamma read through f_n . Y(e_n -
    alpha_n) = w_n . (e_n - alpha_n) = gamma q_1 [T, K]; and gamma read through the
    cross-class coefficient f_n' . Y(e_n - alpha_n) = gamma q_0, n' != n [T, K (K-1)] (the
    coefficient Theorem 1's leading order sets to 0)."""
    Z = torch.zeros(facts.M, facts.M, dtype=torch.float64)
    F_rows = ns.class_features(Z, facts)
    off = ~np.eye(facts.K, dtype=bool)
    own = np.zeros((facts.K, facts.M), dtype=bool)
    own[np.arange(facts.K), facts.label] = True
    hs, gammas, cross = [], [], []
    for Y in flow.Y:
        Yt = torch.as_tensor(Y)
        W = (F_rows @ Yt).numpy()
        R = ns.decoder_residuals(Yt, Z, facts).numpy()
        hs.append(np.where(own, W / (facts.M - 1), -W))
        gammas.append(np.sum(W * R, axis=1) / q1)
        cross.append((W @ R.T)[off] / q0)  # entry (n', n): f_n' . Y(e_n - alpha_n)
    return np.array(hs), np.array(gammas), np.array(cross)


def _relative_part(name: str, pred: np.ndarray, seen: np.ndarray, loose: np.ndarray,
                   times: np.ndarray, floor: float, model: str) -> Part:
    """The relative error |seen - pred| / |seen| at every (time, entry) in units of the
    allowance at that time: the largest 2 |seen - loose| / |seen| over the entries at that
    time and its neighbours (the solver's a-posteriori error, not left to a chance agreement
    of the two solves at one entry) + ``floor`` (rounding).  The part's error is the largest
    ratio against 1, so the tolerance does not move with the entry a theory makes worst."""
    T = len(times)
    rel = (np.abs(seen - pred) / np.abs(seen)).reshape(T, -1)
    est = np.max((2 * np.abs(seen - loose) / np.abs(seen)).reshape(T, -1), axis=1)
    local = np.array([est[max(0, i - 1): i + 2].max() for i in range(T)])
    allow = (local + floor)[:, None]
    ratio = np.where(np.isfinite(rel), rel / allow, np.inf)
    ti, ei = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return Part(name, float(pred.reshape(T, -1)[ti, ei]), float(seen.reshape(T, -1)[ti, ei]),
                float(ratio[ti, ei]), 1.0, "in units of the allowance at each saved time: " + model,
                details={"t_worst": float(times[ti]), "relative_error": float(rel[ti, ei]),
                         "allowance": float(allow[ti, 0]),
                         "max_relative_error": float(np.nanmax(rel)),
                         "allowance_per_time": allow[:, 0].tolist()}, kind="simulation")


_DECODER_TOL = ("allowance: twice the relative change of the model's read-outs between the "
                "flow at rtol 1e-9 / atol 1e-11 and at rtol 1e-11 / atol 1e-13 (the "
                "a-posteriori error of the tighter run, with a 2x margin on the looser run's, "
                "which the difference estimates), its largest over the entries at the time "
                "and its neighbours, + 1e-9, the looser solve's rtol: at the first saved "
                "times the two solves share their first RK45 step and agree exactly, so "
                "their difference says nothing there, while the error of that step's dense "
                "output is held near the requested rtol (measured with the flows of commit 73bf4a5: the "
                "tight solve 3.1e-12 from a 40-digit root of Lemma 6 at t = 0.02, M = 23); "
                "64 M eps of rounding in the read-outs (sums of at most M products) is "
                "below it.  No model mismatch is allowed: with f frozen and F^T F = I the "
                "reduction is exact")


def _dense_times(facts: ns.Facts, eta_Y: float) -> np.ndarray:
    """The dense saved times of the Gamma and snap parts (fixed by the data, not by the
    theory): t = 0, then K/eta_Y geomspace(1e-6, 10 M, 400)."""
    return np.r_[0.0, facts.K / eta_Y * np.geomspace(1e-6, 10 * facts.M, 400)]


def _gamma_integral_part(times: np.ndarray, g: np.ndarray, M: int, K: int, eta_Y: float,
                         gamma_int: Callable) -> Part:
    """The model's int_0^t gamma (``g``: its f_n . Y(e_n - alpha_n)/q_1, averaged over the
    classes, at the dense saved times of :func:`_dense_times`) by the trapezoid rule,
    against theory.scan_snap.integrated_speed at eta_Z = 1 at every 8th saved time from
    K/eta_Y 1e-2 on (the other parts' first time; there the first segment [0, t_1] weighs
    nothing).  Allowance: the change when every second point is dropped (the trapezoid's
    O(d^2) error is then 4x, so that change is 3x the error at full density; on the
    theory's own gamma at both examples the ratio is 0.34), + 1e-9, 100x the dense solve's
    rtol 1e-11 (the relative accuracy of the model's gamma; far below the quadrature's)."""
    full = np.r_[0.0, cumulative_trapezoid(g, times)]
    half = np.r_[0.0, cumulative_trapezoid(g[::2], times[::2])]
    at = np.arange(8, len(times), 8)  # even indices, on both grids
    at = at[times[at] >= 1e-2 * K / eta_Y]
    seen, coarse = full[at], half[at // 2]
    try:
        pred = np.array([_theory(lambda t=t: float(gamma_int(t, M, K, eta_Y, 1.0)),
                                 what="integrated_speed") for t in times[at]])
    except _InvalidTheory as e:
        return _unusable("Gamma", e)
    rel = np.abs(seen - pred) / np.abs(seen)
    allow = np.abs(seen - coarse) / np.abs(seen) + 1e-9
    ratio = np.where(np.isfinite(rel), rel / allow, np.inf)
    k = int(np.argmax(ratio))
    return Part(
        "Gamma(t)/eta_Z vs the model's int_0^t gamma (trapezoid)", float(pred[k]),
        float(seen[k]), float(ratio[k]), 1.0,
        "in units of the allowance at each compared time: the trapezoid's change when every "
        "second saved time is dropped (3x its error at full density) + 1e-9 (100x the dense "
        "solve's rtol 1e-11)", details={"t_worst": float(times[at][k]), "relative_error": float(rel[k]),
                          "allowance": float(allow[k]),
                          "largest_allowance": float(np.max(allow))}, kind="simulation")


def _no_snap_delta(M) -> float:
    """Control: Theorem 4's t0 as printed, the (1 + delta') factor dropped."""
    return 0.0


def _crossing_log_time(x: np.ndarray, log_t: np.ndarray, x_star: float
                       ) -> tuple[float, float]:
    """ln t where the increasing x(t) first reaches x_star, linear in (x, ln t) between the
    bracketing saved times, and the bound on that interpolation's error: (dx)^2/8 max|f''|
    for f = ln t as a function of x, f'' from the second divided differences of the two
    point triples around the bracket, doubled (the curvature is itself estimated).  (nan,
    inf) if x never reaches x_star inside the grid's interior."""
    i = int(np.argmax(x >= x_star))
    if not x[i] >= x_star or i < 2 or i + 1 >= len(x):
        return math.nan, math.inf
    w = (x_star - x[i - 1]) / (x[i] - x[i - 1])
    lt = float(log_t[i - 1] + w * (log_t[i] - log_t[i - 1]))

    def second(j: int) -> float:  # 2 f[x_{j-1}, x_j, x_{j+1}]
        d1 = (log_t[j] - log_t[j - 1]) / (x[j] - x[j - 1])
        d2 = (log_t[j + 1] - log_t[j]) / (x[j + 1] - x[j])
        return 2 * (d2 - d1) / (x[j + 1] - x[j - 1])

    curv = max(abs(second(i - 1)), abs(second(i)))
    return lt, 2 * (x[i] - x[i - 1]) ** 2 / 8 * curv


def _snap_crossing_part(times: np.ndarray, h_model: np.ndarray, M: int, K: int,
                        eta_Y: float, t0: Callable, delta: Callable) -> Part:
    """Lemma 8's upper end on the model's own h: the time t_m at which M h_model reaches the
    larger root x* of e^x = (M-1) x (a root finder on the definition, no theory), read by
    linear interpolation in ln t on the dense saved times, against t0 (1 + delta')
    (theory.scan_snap.snap_time and snap_delta).  Allowance: the interpolation's error
    bound (:func:`_crossing_log_time`, an error in ln t, so relative in t) + 1e-8 for the
    solve: its relative error on x (rtol 1e-11) times x* (< 3 ln M) times d ln t/dx (< 1
    at the crossing) is below 1e-9 for every M of the strategy, so 1e-8 has a 10x margin."""
    L = math.log(M)
    x_star = brentq(lambda x: x - math.log((M - 1) * x), L, 3 * L, xtol=1e-14, rtol=4 * _EPS)
    log_tm, bound = _crossing_log_time(M * h_model[1:], np.log(times[1:]), x_star)
    t_m = math.exp(log_tm)
    try:
        pred = _theory(lambda: float(t0(M, K, eta_Y)) * (1.0 + float(delta(M))),
                       what="snap_time (1 + snap_delta)")
    except _InvalidTheory as e:
        return _unusable("t0 (1 + delta')", e)
    rel = abs(t_m - pred) / t_m
    allow = bound + 1e-8
    return Part(
        "t0 (1 + delta') vs the time the model's M h reaches Lemma 8's x*", pred, t_m,
        rel / allow if math.isfinite(rel) else math.inf, 1.0,
        "in units of the allowance: linear interpolation's error bound (dx)^2/8 max|f''| "
        "(f = ln t of x, f'' from divided differences, doubled) + 1e-8 for the solve (its "
        "rtol 1e-11 on x times x* < 3 ln M times d ln t/dx < 1, with a 10x margin)",
        details={"x_star": x_star, "t_model": t_m, "relative_error": rel, "allowance": allow},
        kind="simulation")


def _wrong_peak_scale(M) -> float:
    """gamma's peak condition with M - 1 replaced by M: e^x (x - 1) = M."""
    return ts.speed_peak_scale(M + 1)


def _wrong_peak_time(M, K, eta_Y) -> float:
    """The peak time of the same slip (Lemma 6 and the peak condition at M + 1)."""
    return ts.speed_peak_time(M + 1, K, eta_Y)


def _wrong_rate(x, M, eta_Y):
    """Lemma 6's ODE with (M - 1) replaced by M: x' = M eta_Y/(M + e^x)."""
    return ts.decoder_rate_scaled(x, M + 1, eta_Y) * M / (M + 1)


def _wrong_steps(s: int, M: int, eta_Y: float) -> float:
    """Eqn 33 with (M - 1) replaced by M: h*(s) = h*(s-1) + eta_Y/(M + e^{M h*(s-1)})."""
    h = 0.0
    for _ in range(int(s)):
        h += eta_Y / (M + math.exp(M * h))
    return h


def _wrong_loss(t, M, K, eta_Y) -> float:
    """The loss of the same slip: Lemma 6 and the cross-entropy with (M-1) replaced by M."""
    x = M * _wrong_decoder_scale(t / K, M, eta_Y)
    return math.log1p(M * math.exp(-x))


def _model_losses(flow: ns.FlowResult, facts: ns.Facts) -> np.ndarray:
    """The model's population loss (numerics.scan_snap.population_loss, Z = 0) at each
    saved state of ``flow`` [T, 1]."""
    Z = torch.zeros(facts.M, facts.M, dtype=torch.float64)
    return np.array([[float(ns.population_loss({"Y": torch.as_tensor(Y), "Z": Z}, facts))]
                     for Y in flow.Y])


def _loss_part(runs: list, times: np.ndarray, facts: ns.Facts, eta_Y: float, floor: float,
               loss: Callable) -> Part:
    """theory.scan_snap.decoder_loss against the model's own population loss along its flow,
    with the h parts' allowance (the two solves' difference, :func:`_relative_part`): the
    loss moves with h by d ln L/d ln x <= x, which the solves' difference carries, and its
    rounding (a log-softmax difference, about eps/L relative: ~1e-13 at the largest x of
    the examples, L ~ 1.6e-3) is under the floor."""
    loose, seen = (_model_losses(r, facts) for r in runs)
    M, K = facts.M, facts.K
    try:
        pred = np.array([[_theory(lambda t=t: float(loss(t, M, K, eta_Y)),
                                  what="decoder_loss")] for t in times])
    except _InvalidTheory as e:
        return _unusable("decoder_loss", e)
    return _relative_part("the population loss (decoder_loss) vs the model's", pred, seen,
                          loose, times, floor, "the model's loss at its own state; "
                          + _DECODER_TOL)


def _parabola_peak(u: np.ndarray, g: np.ndarray) -> tuple[float, float]:
    """The peak of g sampled on the uniform grid u: the vertex of the parabola through the
    largest sample and its two neighbours, and a bound on its error.  With spacing D, the
    true peak u* and the middle point u0 = u* + c D (|c| <= 1/2), Taylor expansion of g
    about u* (sympy, our derivation) gives vertex - u* = D^2 g3/(2 g2) (c^2 - 1/3)
    + D^3 [g4/(12 g2) (4 c^3 - c) - g3^2/(6 g2^2) (3 c^3 - c)] + O(D^4), with gk the k-th
    derivative at u*; |c^2 - 1/3| <= 1/3 and |4 c^3 - c|, |3 c^3 - c| <= 1/4 bound it by
    |g3| D^2/(6 |g2|) + D^3 (|g4|/(48 |g2|) + g3^2/(24 g2^2)).  g2, g3, g4 from the five
    samples' central differences, the bound doubled (they are themselves estimated, at u0
    rather than u*).  (nan, inf) when the largest sample lies within two points of the
    grid's ends."""
    i = int(np.argmax(g))
    if i < 2 or i + 2 >= len(g):
        return math.nan, math.inf
    D = float(u[i + 1] - u[i])
    d2 = (g[i - 1] - 2 * g[i] + g[i + 1]) / D**2
    d3 = (g[i + 2] - 2 * g[i + 1] + 2 * g[i - 1] - g[i - 2]) / (2 * D**3)
    d4 = (g[i - 2] - 4 * g[i - 1] + 6 * g[i] - 4 * g[i + 1] + g[i + 2]) / D**4
    vertex = float(u[i] + D * (g[i - 1] - g[i + 1]) / (2 * (g[i - 1] - 2 * g[i] + g[i + 1])))
    bound = (abs(d3) * D**2 / (6 * abs(d2))
             + D**3 * (abs(d4) / (48 * abs(d2)) + d3**2 / (24 * d2**2)))
    return vertex, 2 * bound


def _speed_peak_parts(times: np.ndarray, g_model: np.ndarray, x_model: np.ndarray, M: int,
                      K: int, eta_Y: float, peak_time: Callable,
                      peak_scale: Callable) -> tuple[Part, Part]:
    """gamma's peak on the model's own flow: the time of the largest f_n . Y(e_n - alpha_n)
    /q_1 (the dense saved times, uniform in ln t) by :func:`_parabola_peak`, against
    theory.scan_snap.speed_peak_time; and the model's x = M h at that time (linear in ln t
    between saved times) against speed_peak_scale.  Allowances: the vertex's bound (an
    error in ln t, so relative in t) + 1e-8 (the dense solve's rtol 1e-11 on gamma moves
    the vertex by about rtol g/(g2 D), below 1e-9 at these grids); for x, that error times
    the model's |dx/d ln t| near the vertex, plus linear interpolation's D^2/8 |x''|, over
    x, + 1e-8.  Each part reads its own theory function: an unusable one fails its part."""
    u = np.log(times[1:])
    vertex, bound = _parabola_peak(u, g_model[1:])
    x = x_model[1:]
    t_m = x_m = allow_t = allow_x = math.nan
    if math.isfinite(vertex):
        t_m = math.exp(vertex)
        allow_t = bound + 1e-8
        x_m = float(np.interp(vertex, u, x))
        i = int(np.clip(np.searchsorted(u, vertex), 2, len(u) - 2))
        D = float(u[i] - u[i - 1])
        slope = max(abs(float(x[i] - x[i - 1])), abs(float(x[i + 1] - x[i]))) / D
        curv = max(abs(float(x[j + 1] - 2 * x[j] + x[j - 1])) for j in (i - 1, i)) / D**2
        allow_x = (allow_t * slope + D**2 / 8 * curv) / x_m + 1e-8

    def part(name: str, what: str, fn: Callable, seen: float, allow: float,
             model: str) -> Part:
        try:
            pred = _theory(lambda: float(fn()), what=what)
        except _InvalidTheory as e:
            return _unusable(what, e)
        rel = abs(seen - pred) / abs(seen)
        units = rel / allow if math.isfinite(rel) and math.isfinite(allow) else math.inf
        return Part(name, pred, seen, units, 1.0, model,
                    details={"relative_error": rel, "allowance": allow}, kind="simulation")

    return (
        part("gamma's peak time (speed_peak_time) vs the model's", "speed_peak_time",
             lambda: peak_time(M, K, eta_Y), t_m, allow_t,
             "in units of the allowance: the parabola vertex's error bound (D^2 and D^3 "
             "terms, doubled, _parabola_peak) + 1e-8 for the solve"),
        part("x = M h at gamma's peak (speed_peak_scale) vs the model's", "speed_peak_scale",
             lambda: peak_scale(M), x_m, allow_x,
             "in units of the allowance: the vertex's error times the model's |dx/d ln t|, "
             "plus linear interpolation's D^2/8 |x''|, relative, + 1e-8"))


def _rate_part(flow: ns.FlowResult, facts: ns.Facts, eta_Y: float, rate: Callable) -> Part:
    """Lemma 6's ODE against the model's own gradient at its flow's saved states: the
    model's dx/dt (x = M h read entry by entry as w_n[n] M/(M-1) and -M w_n[j]; dW/dt =
    F (-eta_Y grad_Y L), the gradient by torch autograd on the population loss) against
    theory.scan_snap.decoder_rate_scaled at each entry's own x, over K (the class
    probability: h runs on t/K).  Allowance per entry: the state's departure from Lemma 5's
    form moves the model's rate by at most 2 M max|h_e - h_med| relative (the softmax row
    shifts by at most (M-1) max|dh|) and the prediction by M |dh| (|d ln x'/dx| < 1), hence
    4 M spread; and the own entry's rate 1 - alpha_n[n] = (M-1)/(e^x + M - 1) is a
    difference rounded to eps relative to 1, i.e. eps (e^x + M - 1)/(M - 1) relative,
    with 64 M eps for the readouts' sums of M products."""
    M, K = facts.M, facts.K
    return _model_rate_part(flow, facts, eta_Y, lambda h: rate(M * h, M, eta_Y) / K,
                            "Lemma 6's x' (decoder_rate_scaled) vs the model's gradient",
                            "decoder_rate_scaled")


def _reduced_h_rate(system, M: int) -> Callable:
    """x' = M h' of Lemma 4's reduced system (:func:`theory.scan_snap.reduced_system`, its
    first row) at logits z = 0 (eta_Z = 0 keeps them there), as a function of h (any
    array): the reduced system's decoder row, read where the model's F is frozen."""
    state = tuple(system.state)
    expr = system.rhs[0]
    fixed = expr.subs({z: 0 for z in state[1:]}) if len(state) > 1 else expr
    fn = lambdify_numeric((state[0],), fixed)
    return lambda h: M * np.broadcast_to(np.asarray(fn(h), dtype=float), np.shape(h))


def _reduced_h_part(flow: ns.FlowResult, facts: ns.Facts, eta_Y: float,
                    system_of: Callable) -> Part:
    """Lemma 4's reduced system, its decoder row h' (theory.scan_snap.reduced_system), against
    the model's own gradient at its flow's saved states, entry by entry, as
    :func:`_rate_part` (the same readout, allowance and units): with F frozen and F^T F = I
    the reduced system's h row is exact (Lemmas 3-6), so it must give the model's rate as
    decoder_rate_scaled does."""
    what = "reduced_system (h row)"
    try:
        system = _theory(lambda: system_of(facts.probs, facts.M, eta_Y, 1.0), what=what)
        rows = getattr(getattr(system, "rhs", None), "shape", None)
        want = np.asarray(facts.probs).shape[1] + 1
        if rows is None or rows[0] != want:
            raise _InvalidTheory(f"{what}: not a reduced system of L + 1 = {want} rows "
                                 f"(got {rows})")
        predict = _reduced_h_rate(system, facts.M)
    except _InvalidTheory as e:
        return _unusable(what, e)
    return _model_rate_part(flow, facts, eta_Y, predict,
                            "Lemma 4's reduced system, h row, vs the model's gradient", what)


def _model_rate_part(flow: ns.FlowResult, facts: ns.Facts, eta_Y: float,
                     predict: Callable, name: str, what: str) -> Part:
    """A prediction of x' = M h' at each entry's own h (``predict(h)``, h [K, M]) against the
    model's own x' at its flow's saved states, in units of :func:`_rate_part`'s allowance;
    the worst state and entry.  An unusable prediction (raising, not real, of another
    shape) fails the part with the reason."""
    M, K = facts.M, facts.K
    Z = torch.zeros(M, M, dtype=torch.float64)
    F_rows = ns.class_features(Z, facts)
    own = np.zeros((K, M), dtype=bool)
    own[np.arange(K), facts.label] = True
    worst = (-1.0, 0.0, 0.0, 0.0, 0.0)
    for i, Y in enumerate(flow.Y):
        if flow.t[i] <= 0:
            continue
        Yt = torch.tensor(Y, requires_grad=True)
        (gY,) = torch.autograd.grad(ns.population_loss({"Y": Yt, "Z": Z}, facts), Yt)
        W = (F_rows @ Yt.detach()).numpy()
        Wdot = (F_rows @ (-eta_Y * gY)).numpy()
        h = np.where(own, W / (M - 1), -W)
        seen = M * np.where(own, Wdot / (M - 1), -Wdot)
        try:
            raw = np.asarray(_theory(lambda h=h: predict(h), what=what))
            if raw.dtype.kind not in "biuf":
                raise _InvalidTheory(f"{what}: values of dtype {raw.dtype}, not real numbers")
            pred = raw.astype(float)
            if pred.shape != seen.shape:
                raise _InvalidTheory(f"{what}: shape {pred.shape} for x of shape {seen.shape}")
        except _InvalidTheory as e:
            return _unusable(f"x' ({what})", e)
        spread = float(np.max(np.abs(h - np.median(h))))
        allow = 4 * M * spread + 64 * M * _EPS * (np.exp(M * h) + M - 1) / (M - 1)
        err = np.abs(seen - pred) / np.abs(seen)
        ratio = np.where(np.isfinite(err), err / allow, np.inf)
        k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        if ratio[k] > worst[0]:
            worst = (float(ratio[k]), float(pred[k]), float(seen[k]), float(flow.t[i]),
                     float(allow[k]))
    r, p, o, t, a = worst
    return Part(name, p, o, r, 1.0,
                "in units of the allowance at each state and entry: 4 M times the state's "
                "spread of h over entries (its departure from Lemma 5's form) + 64 M eps "
                "(e^x + M - 1)/(M - 1) (the own entry's 1 - alpha rounding)",
                details={"t_worst": t, "allowance": a}, kind="simulation")


def _gd_steps_part(run: ns.PopulationGDResult, eta_Y: float, steps: Callable) -> Part:
    """Eqn 33's h*(s) against the model's plain population gradient descent, read entry by
    entry through Lemma 5's w_n(s) = (M-1) h*(s) zeta_n (w_n[n]/(M-1) and -w_n[j]) at every
    step; the rate per class is eta_Y/K (the loss averages the K classes, and with F F^T =
    I class n's logits move by class n's gradient alone).  Allowance: float64 rounding, 32
    (S + M) eps relative (one rounding of h's increment per step on both sides, and the
    readout's sum of M products)."""
    facts = run.facts
    M, K = facts.M, facts.K
    S = run.logits.shape[0] - 1
    own = np.zeros((K, M), dtype=bool)
    own[np.arange(K), facts.label] = True
    h = np.where(own[None], run.logits / (M - 1), -run.logits)[1:]
    try:
        # every step (a slip that only shows at small s must not hide behind the last one)
        pred = np.array([_theory(lambda s=s: float(steps(s, M, eta_Y / K)),
                                 what="decoder_scale_steps") for s in range(1, S + 1)])
    except _InvalidTheory as e:
        return _unusable("h*(s) (decoder_scale_steps)", e)
    rel = np.abs(h - pred[:, None, None]) / np.abs(h)
    rel = np.where(np.isfinite(rel), rel, np.inf)
    k = np.unravel_index(int(np.argmax(rel)), rel.shape)
    allow = 32 * (S + M) * _EPS
    return Part("Eqn 33's h*(s) vs the model's population gradient descent",
                float(pred[k[0]]), float(h[k]), float(rel[k]), allow,
                f"float64 rounding: 32 (S + M) eps = {allow:.1e} relative (S = {S} steps, "
                f"M = {M}): one rounding of the increment per step on each side and the "
                "readout's sum of M products; no model mismatch (F^T F = I, f frozen)",
                details={"s_worst": int(k[0]) + 1, "steps": S}, kind="simulation")


@claim(
    id="decoder_full_model",
    statement="The exact algebra of Lemmas 3-6 in the model (small M, outside Theorem 1's "
              "M >> 100, which these lemmas do not need): "
              "with f frozen (eta_Z = 0, Assumption 1c's limit, the setting of Section 4) "
              "and classes whose attended bags are orthogonal (Dataset2 without CTs, so "
              "F^T F = I and Lemma 3 holds for the true update), the model's own population "
              "gradient flow of Y gives W = F^T Y with rows w_n = (M-1) h(t/K) zeta_n, h from "
              "Lemma 6, and f_n . Y(e_n - alpha_n) = gamma(t) q_1 and f_n' . Y(e_n - "
              "alpha_n) = gamma(t) q_0 for n' != n (Theorem 1's speed control, with its "
              "exact overlaps), at every time; the time integral of that gamma is "
              "Gamma(t)/eta_Z = K (M-1)^2 h(t/K)^2/(2 eta_Y) (Eqn 118-129); and M h leaves "
              "Lemma 8's window (reaches the larger root x* of e^x = (M-1) x) at Theorem "
              "4's snap time t0 (1 + delta'), with our exact delta'; the model's own "
              "gradient moves x = M h as Lemma 6's ODE x' = M eta_Y/((M-1) + e^x) (per "
              "t/K), gamma peaks where e^x (x - 1) = M - 1 at the time Lemma 6 gives that "
              "x; and plain population gradient descent (rate eta_Y, so eta_Y/K per "
              "class) gives w_n(s) = (M-1) h*(s) zeta_n with Eqn 33's h*(s) at every step; "
              "the model's population loss is log(1 + (M-1) e^{-M h(t/K)}), the "
              "cross-entropy of Lemma 5's logits",
    source="Lemma 3 (Eqn 8), Lemma 5 (Eqn 31-33), Lemma 6 (Eqn 44-45), Theorem 1 (Eqn 9), "
           "Eqn 118-129 (Gamma), Lemma 8 and Theorem 4 (t0 (1 + delta')); Section 2's "
           "zeta_n, q_1, q_0; gamma's peak (dgamma/dh = 0) and the loss of Lemma 5's "
           "logits are our derivations",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"K": st.integers(2, 3), "num_unique": st.integers(3, 20),
                                    "eta_Y": st.floats(0.05, 1.0)}),
    theory={"root": ts.decoder_scale, "gamma": ts.speed_control, "overlaps": ts.zeta_overlaps,
            "gamma_int": ts.integrated_speed, "t0": ts.snap_time, "delta": ts.snap_delta,
            "rate": ts.decoder_rate_scaled, "peak_time": ts.speed_peak_time,
            "peak_scale": ts.speed_peak_scale, "steps": ts.decoder_scale_steps,
            "loss": ts.decoder_loss, "system": ts.reduced_system},
    control={"root": _wrong_decoder_scale, "gamma": _wrong_speed_control,
             "overlaps": ts.zeta_overlaps, "gamma_int": _wrong_integrated_speed,
             "t0": ts.snap_time, "delta": _no_snap_delta, "rate": _wrong_rate,
             "peak_time": _wrong_peak_time, "peak_scale": _wrong_peak_scale,
             "steps": _wrong_steps, "loss": _wrong_loss, "system": ts.reduced_system},
    control_description="Lemma 6, its ODE, Eqn 33, gamma, its peak, Gamma and the loss "
                        "with (M-1) replaced by M (e^{Mh} + M^2 h, M^2 h/(...), e^x (x - 1) "
                        "= M, log(1 + M e^{-x})): a slip of order 1/M; the snap at t0 as "
                        "printed (delta' = 0)",
    cost="slow",
    examples=(Example({"K": 2, "num_unique": 10, "eta_Y": 1.0},
                      via="Dataset2's num_last = 1 classes without CTs (M = 23) at Fig. 8's "
                          "eta_Y = 1"),
              Example({"K": 3, "num_unique": 20, "eta_Y": 0.05},
                      via="boundary case: three classes, 20 DTs each (M = 64), the "
                          "smallest rate")),
    notes="The first comparison of Lemmas 3-6 and gamma with the model itself rather than "
          "with a reduced decoder: the run is numerics.scan_snap.run_population_flow (Y "
          "by torch autograd on the class-averaged loss) with eta_Z = 0, so F stays at "
          "P's rows normalised; without CTs the classes' bags have disjoint supports and "
          "F^T F = I, where Eqn 26's modification is the true update (reduced_magnitude "
          "and reduced_magnitude_eqn26 cover F^T F != I).  Times: K/eta_Y times "
          "geomspace(1e-2, 10 M, 10), from h ~ eta_Y t/(M K) to x = M h of about 3 ln M, "
          "fixed by the data, not by the theory.  A relative slip of 1e-7 in h or gamma "
          "exceeds every time's allowance (largest 2.8e-8 on the example M = 64 at quick, "
          "commit 73bf4a5's flows; details.allowance_per_time), so the parts resolve the "
          "theory's own closed forms.  Referee read (this stop): h is read entry by entry "
          "(w_n[n]/(M-1) and -w_n[j]), not as differences, so a shift of w_n along 1 "
          "would show; the allowance is the solver's estimate taken over the time's "
          "entries and neighbours plus the looser solve's rtol.  The first design (the "
          "per-entry estimate + 1e-10, a floor without a derivation) held at 0.21; a "
          "second, with only the rounding floor 64 M eps, failed at the first saved time "
          "(3.1e-12 against 3.3e-13 relative), where the two solves agree exactly and "
          "the difference estimates nothing; hence the rtol floor, derived above, not "
          "fitted to that run.  The Gamma part (integrated_speed against the model's "
          "int gamma) was added after that read; its first grid (geomspace from 1e-4 "
          "K/eta_Y, compared from there) failed at the first compared times, 9.2e-7 "
          "against 2.0e-7 relative: the segment [0, t_1] carries an error that dropping "
          "every second point does not scale (its coarse twin [0, t_2] is barely longer); "
          "on the theory's own gamma the same quadrature missed by 9.3e-7 there, so it "
          "was the quadrature, not the model.  The grid now starts at 1e-6 K/eta_Y and "
          "is compared from 1e-2 K/eta_Y, where the error / estimate ratio on the "
          "theory's gamma is 0.34 at both examples.  The snap part (t0 (1 + delta') against "
          "the time the model's M h reaches Lemma 8's x*) first took the halving change as "
          "its allowance too; at quick it sat at 0.86 of it (M = 64), since linear "
          "interpolation's error depends on where the crossing falls in each grid's "
          "bracket, so the change need not be 3x the error.  It now uses the derived "
          "interpolation bound (dx)^2/8 max|f''| with the curvature from divided "
          "differences, doubled (0.46 of it at quick, M = 23).  "
          "Issue 34 (the model as witness of more of the decoder's theory): four parts "
          "added, each a full-model read-out against one theory function that only "
          "theory-against-theory checks had judged: Lemma 6's ODE (decoder_rate_scaled) "
          "against the model's own autograd gradient at the flow's saved states, entry by "
          "entry; gamma's peak time (speed_peak_time) and x = M h there (speed_peak_scale) "
          "against the parabola vertex of the model's gamma on the dense times; and Eqn "
          "33's h*(s) (decoder_scale_steps, Lemma 5) against the model trained by plain "
          "population gradient descent (numerics.scan_snap.run_population_gd, 2000 steps "
          "at quick) at every step.  Their allowances are derived in their helpers "
          "(_parabola_peak, _rate_part, _gd_steps_part) before the first run.  A fifth: "
          "the model's population loss along its flow against theory.scan_snap."
          "decoder_loss, log(1 + (M-1) e^{-M h(t/K)}) (our derivation: the cross-entropy "
          "of Lemma 5's logits), with the h parts' allowance.  A referee read then added "
          "the parabola vertex's D^3 term to its bound (the D^2 term alone was exceeded "
          "1.05x at M = 11 with exact derivatives; the doubling had covered it).  At quick "
          "(this code), examples M = 23 / M = 64, in units of each allowance: peak time "
          "0.194 / 0.191 (relative errors 1.0e-4 / 2.0e-4), peak x 0.052 / 0.117, the ODE "
          "0.00098 / 0.00045, the loss 0.0125 / 0.0070, and Eqn 33 1.6e-15 / 2.5e-15 "
          "against 1.4e-11 / 1.5e-11; the control's M - 1 -> M slips fail all five.  The "
          "test profile's 200 GD steps reach only x ~ 2.6-3.1 at the strategy's smallest "
          "rates (before gamma's peak), quick's 2000 reach x = 5.9-10.7.  Stop 70 (issue "
          "34): Lemma 4's reduced system (theory.scan_snap.reduced_system), its h row at "
          "z = 0, against the same model gradient with _rate_part's readout and "
          "allowance: here (F frozen, F^T F = I) that row is exact, and it had no part "
          "that a slip of it could fail (the magnitude claims read only the z rows).  A "
          "probe before the part was added (stop 70's code, quick's two pinned examples, "
          "one run of both parts): 0.00073 / 0.00045 allowance units, the same as "
          "decoder_rate_scaled's part in that run (the 0.00098 above is an earlier code's "
          "run); the row times 1.05 gives about 1e11.  What it adds over that part is only "
          "that reduced_system's h row is decoder_rate_scaled / (K M) (a symbolic identity "
          "also), witnessed on the model: the z rows are judged by reduced_magnitude.  The control keeps the paper's reduced system (its "
          "M - 1 -> M slip is the other functions').",
)
def _check_decoder_full(params: dict, ctx: Context, *, root: Callable, gamma: Callable,
                        overlaps: Callable, gamma_int: Callable, t0: Callable,
                        delta: Callable, rate: Callable, peak_time: Callable,
                        peak_scale: Callable, steps: Callable, loss: Callable,
                        system: Callable) -> Evidence:
    K, eta_Y = int(params["K"]), float(params["eta_Y"])
    data = ns.DataConfig(num_last=1, num_next_per_last=K, num_common=0,
                         num_unique_per_next=int(params["num_unique"]))
    facts = ns.make_facts(data)
    M = facts.M
    times = K / eta_Y * np.geomspace(1e-2, 10 * M, 10)
    runs = [ns.run_population_flow(ns.FlowConfig(data=data, eta_Y=eta_Y, eta_Z=0.0,
                                                 t_eval=tuple(float(t) for t in times),
                                                 rtol=rtol, atol=atol), cache=ctx.cache)
            for rtol, atol in ((1e-9, 1e-11), (1e-11, 1e-13))]
    try:
        q1, q0 = _theory(lambda: tuple(float(q) for q in overlaps(M)), what="zeta_overlaps")
        h_pred = np.array([_theory(lambda t=t: float(root(t / K, M, eta_Y)),
                                   what="decoder_scale") for t in times])[:, None, None]
        g_pred = np.array([_theory(lambda t=t: float(gamma(t, M, K, eta_Y)),
                                   what="speed_control") for t in times])[:, None]
    except _InvalidTheory as e:
        return _invalid(e)
    (h_loose, g_loose, c_loose), (h_seen, g_seen, c_seen) = (
        _decoder_readouts(r, facts, q1, q0) for r in runs)
    floor = max(1e-9, 64 * M * _EPS)
    dense_t = _dense_times(facts, eta_Y)
    dense = ns.run_population_flow(ns.FlowConfig(data=data, eta_Y=eta_Y, eta_Z=0.0,
                                                 t_eval=tuple(float(t) for t in dense_t),
                                                 rtol=1e-11, atol=1e-13), cache=ctx.cache)
    h_dense, g_dense, _ = _decoder_readouts(dense, facts, q1, q0)
    gd = ns.run_population_gd(ns.PopulationGDConfig(data=data, eta_Y=eta_Y, eta_Z=0.0,
                                                    steps=_size(ctx, "decoder_steps")),
                              cache=ctx.cache)
    return Evidence((
        _relative_part("h(t/K) of Lemma 6 vs the model's w_n[n]/(M-1) and -w_n[j]",
                       np.broadcast_to(h_pred, h_seen.shape), h_seen, h_loose, times, floor,
                       "Lemmas 3 and 5 make every entry of w_n give h; " + _DECODER_TOL),
        _relative_part("gamma(t) vs the model's f_n . Y(e_n - alpha_n) / q_1",
                       np.broadcast_to(g_pred, g_seen.shape), g_seen, g_loose, times, floor,
                       "q_1 from theory.scan_snap.zeta_overlaps; " + _DECODER_TOL),
        _relative_part("gamma(t) vs the model's f_n' . Y(e_n - alpha_n) / q_0 (n' != n)",
                       np.broadcast_to(g_pred, c_seen.shape), c_seen, c_loose, times, floor,
                       "q_0 = -M/(M-1)^2 from theory.scan_snap.zeta_overlaps (Theorem 1's "
                       "exact cross-class coefficient at E = 0); " + _DECODER_TOL),
        _gamma_integral_part(dense_t, g_dense.mean(axis=1), M, K, eta_Y, gamma_int),
        _snap_crossing_part(dense_t, h_dense.mean(axis=(1, 2)), M, K, eta_Y, t0, delta),
        *_speed_peak_parts(dense_t, g_dense.mean(axis=1), M * h_dense.mean(axis=(1, 2)), M,
                           K, eta_Y, peak_time, peak_scale),
        _rate_part(runs[1], facts, eta_Y, rate),
        _reduced_h_part(runs[1], facts, eta_Y, system),
        _loss_part(runs, times, facts, eta_Y, floor, loss),
        _gd_steps_part(gd, eta_Y, steps),
    ), {"M": M, "K": K, "times": times.tolist(), "q_1": q1, "q_0": q0})


# ---------------------------------------------------------------------- 3. Gamma
@claim(
    id="integrated_speed",
    statement="eta_Z int_0^t gamma = eta_Z K (M-1)^2 h(t/K)^2/(2 eta_Y)",
    source="Eqn 118-129 (change of variables dt = K((M-1)+e^{Mh})/eta_Y dh)",
    kind="symbolic",
    strategy=st.fixed_dictionaries({"M": _M, "K": _K, "eta_Y": _RATE, "eta_Z": _RATE}),
    theory={"gamma_int": ts.integrated_speed},
    control={"gamma_int": _wrong_integrated_speed},
    control_description="Gamma with (M-1)^2 replaced by M^2",
    examples=(Example({"M": 1000, "K": 10, "eta_Y": 1.0, "eta_Z": 0.5},
                      via="Fig. 3 (K = 10, M = 1000, eta_Z = 0.5, eta_Y = 1)"),),
)
def _check_gamma(params: dict, ctx: Context, *, gamma_int: Callable) -> Evidence:
    M, K, eY, eZ = params["M"], params["K"], params["eta_Y"], params["eta_Z"]
    t0 = _t0(M, K, eY)
    worst = (0.0, 0.0, 0.0, 0.0)
    prev_t, acc = 0.0, 0.0
    peak = _t_peak(M, K, eY)
    for t in np.geomspace(1e-3 * t0, 30 * t0, 12):
        pts = [p for p in (peak,) if prev_t < p < t]
        val, _ = quad(lambda s: eZ * ts.speed_control(s, M, K, eY), prev_t, t, points=pts or None,
                      epsabs=0.0, epsrel=1e-13, limit=200)
        acc += val
        prev_t = t
        pred = gamma_int(t, M, K, eY, eZ)
        rel = abs(pred - acc) / acc
        if rel > worst[0]:
            worst = (rel, pred, acc, t)
    return Evidence((Part(
        "Gamma closed form vs quadrature", worst[1], worst[2], worst[0], 1e-9,
        "adaptive Gauss-Kronrod at epsrel 1e-13 over 12 panels: accumulated < 1e-11",
        details={"t_worst": worst[3]}, kind="symbolic"),))


# ---------------------------------------------------------------------- 4. Theorem 4
@claim(
    id="growth_exponent",
    statement="B(t) = 1/4 ln(1 + 4 Gamma(t)/C0) integrates Theorem 4's common-token "
              "system; the printed 1/4 ln(C0 + 4 Gamma) does not, and misses only the "
              "constant -1/4 ln C0 (printed(t) - printed(0) = B(t))",
    source="Theorem 4, Eqn 13-14, 118-129",
    kind="symbolic",
    strategy=_snap,
    theory={"growth": ts.growth_exponent},
    control={"growth": ts.printed_growth_exponent},
    control_description="Eqn 14/129 as printed: 1/4 ln(C0 + 4 Gamma)",
    examples=(Example({"M": 1000, "K": 10, "eta_Y": 1.0, "eta_Z": 0.5, "C0": 0.1},
                      via="Fig. 3 (eta_Y = 1) with C0 = 0.1"),
              Example({"M": 100, "K": 1, "eta_Y": 10.0, "eta_Z": 1.0, "C0": 3.0},
                      via="Fig. 9 (M = 100, nu = 10) with C0 = 3, above 1")),
)
def _check_theorem4(params: dict, ctx: Context, *, growth: Callable) -> Evidence:
    M, K, eY, eZ, C0 = (params[k] for k in ("M", "K", "eta_Y", "eta_Z", "C0"))
    t0 = _t0(M, K, eY)
    times = np.r_[0.0, np.geomspace(1e-3 * t0, 100 * t0, 30)]
    t, h, B_ode = ns.run_snap_system(ns.SnapConfig(M, K, eY, eZ, C0, tuple(times)),
                                     cache=ctx.cache)
    pred = np.array([growth(x, M, K, eY, eZ, C0) for x in t])
    err = np.abs(pred - B_ode) / (1.0 + np.abs(B_ode))
    i = int(np.argmax(err))
    h_rel = max(abs(ts.decoder_scale(x / K, M, eY) - y) / max(y, 1e-300)
                for x, y in zip(t[1:], h[1:], strict=True))
    # what is wrong in Eqn 14/129 as printed is its constant only: the printed form less its
    # t = 0 value (1/4 ln C0) is the integrated B at every t
    printed = np.array([ts.printed_growth_exponent(x, M, K, eY, eZ, C0) for x in t])
    p_err = np.abs(printed - printed[0] - B_ode) / (1.0 + np.abs(B_ode))
    k = int(np.argmax(p_err))
    ode = "LSODA rtol 1e-12 on (h, z) over 5 decades of t: error < 1e-7 (1 + |B|)"
    return Evidence((
        Part("B(0) = 0", 0.0, pred[0], abs(pred[0]), 0.0, "definition B_n(0) = 0 (Eqn 12): exact", kind="symbolic"),
        Part("B(t) vs integrated snap system", pred[i], B_ode[i], float(err[i]), 1e-7, ode,
             details={"t_worst": float(t[i]), "h_rel_err": h_rel}, kind="symbolic"),
        Part("printed Eqn 14 less its t = 0 value vs integrated snap system", B_ode[k],
             printed[k] - printed[0], float(p_err[k]), 1e-7, ode,
             details={"t_worst": float(t[k]), "printed(0)": float(printed[0])}, kind="symbolic"),
    ))


# ---------------------------------------------------------------------- 5. exact scalings
def _wrong_growth(t, M, K, eta_Y, eta_Z, C0) -> float:
    """B with Gamma proportional to eta_Z/eta_Y^2 (a wrong power of eta_Y): the theory's B
    with eta_Z replaced by eta_Z/eta_Y (Gamma is linear in eta_Z)."""
    return ts.growth_exponent(t, M, K, eta_Y, eta_Z / eta_Y, C0)


@claim(
    id="rate_scalings",
    statement="B(t; lam eta_Y, lam eta_Z) = B(lam t; eta_Y, eta_Z), and B(t0) does not "
              "depend on eta_Z at fixed nu = eta_Y/eta_Z",
    source="Theorem 4 consequences (b), (d); Fig. 9; the exact form is our derivation",
    kind="symbolic",
    strategy=st.fixed_dictionaries({"M": _M, "K": _K, "eta_Y": _RATE, "eta_Z": _RATE,
                                    "C0": _c0(), "lam": st.floats(0.1, 10.0)}),
    theory={"growth": ts.growth_exponent},
    control={"growth": _wrong_growth},
    control_description="Gamma proportional to eta_Z/eta_Y^2 instead of eta_Z/eta_Y",
    examples=(Example({"M": 100, "K": 1, "eta_Y": 10.0, "eta_Z": 1.0, "C0": 1.0, "lam": 4.0},
                      via="Fig. 9, left panel (M = 100, nu = 10, K = 1, C0 = 1)"),
              Example({"M": 10000, "K": 1, "eta_Y": 1.0, "eta_Z": 1.0, "C0": 1.0, "lam": 0.5},
                      via="Fig. 9, right panel (M = 10000, nu = 1, K = 1, C0 = 1)")),
)
def _check_scaling(params: dict, ctx: Context, *, growth: Callable) -> Evidence:
    M, K, eY, eZ, C0, lam = (params[k] for k in ("M", "K", "eta_Y", "eta_Z", "C0", "lam"))
    t0 = _t0(M, K, eY)
    worst = 0.0
    for t in np.geomspace(1e-2 * t0, 30 * t0, 9):
        a = growth(t, M, K, lam * eY, lam * eZ, C0)
        b = growth(lam * t, M, K, eY, eZ, C0)
        worst = max(worst, abs(a - b) / (abs(b) + 1e-300))
    nu = eY / eZ
    dots = [growth(_t0(M, K, nu * z), M, K, nu * z, z, C0) for z in (0.5, 1, 2, 4, 8)]
    spread = (max(dots) - min(dots)) / abs(np.mean(dots))
    return Evidence((
        Part("B(t; lam eta_Y, lam eta_Z) = B(lam t)", 0.0, worst, worst, 1e-10,
             "exact identity (h depends on eta_Y t/K only); 1e-10 allows the root's rounding", kind="symbolic"),
        Part("B(t0) equal across eta_Z at fixed nu (Fig. 9)", float(np.mean(dots)), spread,
             spread, 1e-10, "exact identity; 1e-10 allows rounding", details={"B_t0": dots}, kind="symbolic"),
    ))


# ---------------------------------------------------------------------- 6. Eqn 14 regimes
def _printed_regime(t, M, K, eta_Y, eta_Z, C0, regime) -> float:
    """Eqn 14 as printed: 1/4 ln(C0 + 4 Gamma_regime) (the corrected form plus 1/4 ln C0,
    the offset the printed equation carries; the regime form itself comes from theory)."""
    return ts.growth_exponent_regime(t, M, K, eta_Y, eta_Z, C0, regime) + 0.25 * math.log(C0)


@st.composite
def _regime_region(draw) -> dict:
    """Inside the paper's region: Theorem 1's M >> 100 (M in [1000, 1e5]) and Assumption 2's
    M >> K^2 (K in [2, 10], so K^2 <= 100); Assumption 2 with the Theorem 4 model (f_n.f_n' ~
    e^{2z}/rho_0^2, C0 = 1/(K E0^2), E0 < 1/K) gives C0 > K (K-1)^2: C0 = K (K-1)^2 10^a,
    a in [0, 3]; Assumption 1c's eta_Y >> eta_Z: nu = eta_Y/eta_Z in [1, 100]."""
    M, K = draw(st.integers(1000, 100_000)), draw(st.integers(2, 10))
    eta_Y, nu = draw(st.floats(0.1, 10.0)), 10 ** draw(st.floats(0.0, 2.0))
    C0 = K * (K - 1) ** 2 * 10 ** draw(st.floats(0.0, 3.0))
    return {"M": M, "K": K, "eta_Y": eta_Y, "eta_Z": eta_Y / nu, "C0": C0}


def _regime_bounds(M: int) -> tuple[float, float]:
    """Leading corrections of Eqn 14's two forms, as relative errors of B (our derivation).

    Both forms replace x = M h, the root of expm1(x) + (M-1) x = u (u = M eta_Y t/K), by a
    one-term solution: early x ~ u/M, late x ~ ln u.  Early: expm1(x) - x > 0 is dropped, so
    x = u/M - (expm1(x) - x)/M, a relative error eps = (expm1(x) - x)/(M x), largest at the
    window's end t0'/3 (x ~ ln M/3).  Late: (M-1) x is dropped from e^x, so
    x = ln u + ln(1 - (M-1) x/u), eps ~ (M-1)/u, largest at the window's start 10 t0
    (u = 20 M ln M).  Gamma ~ x^2 doubles eps; B = 1/4 ln(1 + 4 Gamma/C0) has relative error
    at most Gamma's (d ln B/d ln Gamma <= 1).  Returns (early, late) bounds 2 eps, x 1.25 for
    the next order (the next term is O(eps^2) relative, well inside 25 %)."""
    x = math.log(M) / 3
    early = 2 * (math.expm1(x) - x) / (M * x)
    late = 2 * (M - 1) / (20 * M * math.log(M))
    return 1.25 * early, 1.25 * late


def _regime_errors(params: dict, regime_fn: Callable) -> tuple[float, float, float]:
    M, K, eY, eZ, C0 = (params[k] for k in ("M", "K", "eta_Y", "eta_Z", "C0"))
    t0p, t0 = _t0p(M, K, eY), _t0(M, K, eY)

    def rel(t, regime):
        exact = ts.growth_exponent(t, M, K, eY, eZ, C0)
        return abs(regime_fn(t, M, K, eY, eZ, C0, regime) - exact) / exact

    early = max(rel(t, "early") for t in np.linspace(t0p / 300, t0p / 3, 40))
    late = max(rel(t, "late") for t in np.geomspace(10 * t0, 1e5 * t0, 40))
    span = np.geomspace(t0p / 300, 1e5 * t0, 160)
    best = max(min(rel(t, "early"), rel(t, "late")) if t > t0p / 3 else rel(t, "early")
               for t in span)
    return early, late, best


_REGIME_FIG3 = {"M": 1000, "K": 10, "eta_Y": 1.0, "eta_Z": 0.5, "C0": 810.0}
_REGIME_EDGE = {"M": 100_000, "K": 2, "eta_Y": 1.0, "eta_Z": 1.0, "C0": 2.0}


@claim(
    id="regimes_large_M",
    statement="Eqn 14's regime forms (with -1/4 ln C0 restored) approach B within their "
              "leading correction: the early form for t <= t0'/3, the late form for "
              "t >= 10 t0, inside the paper's region (M in [1e3, 1e5] >> 100, K in [2, 10], "
              "C0 > K (K-1)^2 from Assumption 2, nu = eta_Y/eta_Z in [1, 100])",
    source="Eqn 14, Lemma 9; the correction bounds are our derivation",
    kind="symbolic",
    strategy=_regime_region(),
    theory={"regime_fn": ts.growth_exponent_regime},
    control={"regime_fn": _printed_regime},
    control_description="Eqn 14 as printed: 1/4 ln(C0 + 4 Gamma_regime)",
    examples=(Example(_REGIME_FIG3, via="Fig. 3's M, K and eta_Z (eta_Y = 1) with the "
                                        "smallest C0 of Assumption 2, K (K-1)^2 = 810"),
              Example(_REGIME_EDGE, via="boundary case: the largest M, the smallest K and "
                                        "C0 = K (K-1)^2 = 2")),
    notes="The tolerances are the forms' own leading corrections (a relative 2 eps in "
          "Gamma, see _regime_bounds), not fixed percentages: the late form's correction "
          "is 1/(10 ln M), about 1.4 % at M = 1000, so a fixed 1 % (the earlier threshold, "
          "from our summary, not the paper) was not the paper's statement.",
)
def _check_regimes(params: dict, ctx: Context, *, regime_fn: Callable) -> Evidence:
    early, late, _ = _regime_errors(params, regime_fn)
    e_tol, l_tol = _regime_bounds(params["M"])
    why = ("leading correction of the one-term root of Lemma 6 (our derivation, x 1.25 for "
           "the next order): early 2 (expm1(x) - x)/(M x) at x = ln M/3, late 2 (M-1)/u at "
           "u = 20 M ln M")
    return Evidence((
        Part("early form, t <= t0'/3", 0.0, early, early, e_tol, why, kind="symbolic"),
        Part("late form, t >= 10 t0", 0.0, late, late, l_tol, why, kind="symbolic"),
    ), {"t0'": ts.scan_time(params["M"], params["K"], params["eta_Y"]),
        "t0": ts.snap_time(params["M"], params["K"], params["eta_Y"]),
        "C0 nu/K": params["C0"] * params["eta_Y"] / params["eta_Z"] / params["K"]})


@claim(
    id="regimes_transition",
    statement="Our strengthening of Eqn 14: the better of its two forms is within 10 % of B "
              "at every t, including the window t0'/3 < t < 10 t0 that Eqn 14 leaves "
              "open, inside the paper's region (as for regimes_large_M)",
    source="Eqn 14 (the paper states the forms for t < t0' and t >= t0 only); the 10 % "
           "threshold is ours",
    kind="symbolic",
    strategy=_regime_region(),
    theory={"regime_fn": ts.growth_exponent_regime},
    control={"regime_fn": _printed_regime},
    control_description="Eqn 14 as printed: 1/4 ln(C0 + 4 Gamma_regime)",
    expected="refuted",
    examples=(Example(_REGIME_FIG3, via="Fig. 3's M, K and eta_Z with C0 = K (K-1)^2"),
              Example(_REGIME_EDGE, via="boundary case: the largest M, K = 2, "
                                        "C0 = K (K-1)^2")),
    positive=Positive({"M": 100_000, "K": 2, "eta_Y": 1.0, "eta_Z": 10.0, "C0": 2.0},
                      "the same check at C0 nu/K = 0.1 (nu = 0.1, outside Assumption 1c), "
                      "where the transition is narrow"),
    notes="A statement of ours, not the paper's: Eqn 14 gives no form between t0'/3 and "
          "10 t0.  The error of the better form there grows with C0 nu/K (not with M), and "
          "Assumption 2 forces C0 nu/K >= (K-1)^2 nu >= 1, so inside the paper's region it "
          "exceeds 10 % for most draws; the report lists the failed draws.",
)
def _check_transition(params: dict, ctx: Context, *, regime_fn: Callable) -> Evidence:
    _, _, best = _regime_errors(params, regime_fn)
    return Evidence((Part(
        "better form, all t", 0.0, best, best, 0.10,
        "our threshold (10 %), not the paper's: Eqn 14 has no form in the transition", kind="symbolic"),),
        {"C0 nu/K": params["C0"] * params["eta_Y"] / params["eta_Z"] / params["K"]})


# ---------------------------------------------------------------------- 7. gamma peak
@claim(
    id="speed_peak",
    statement="gamma(t) peaks where e^x (x-1) = M-1 with x = M h(t/K), and before "
              "t0' = K ln M/eta_Y for M >= 19",
    source="Theorem 1 (Eqn 9), Lemma 9; the peak condition is our derivation",
    kind="symbolic",
    strategy=st.fixed_dictionaries({"M": st.integers(19, 100_000), "K": _K, "eta_Y": _RATE}),
    theory={"peak": ts.speed_peak_time},
    control={"peak": ts.scan_time},
    control_description="gamma peaking at the scan time t0'",
    examples=(Example({"M": 1000, "K": 10, "eta_Y": 1.0}, via="Fig. 3 (M = 1000, K = 10)"),),
    notes="Below M = 19 the peak comes after t0'; the time ratio depends on M only.",
)
def _check_peak(params: dict, ctx: Context, *, peak: Callable) -> Evidence:
    M, K, eY = params["M"], params["K"], params["eta_Y"]
    t0p = _t0p(M, K, eY)
    res = minimize_scalar(lambda u: -ts.speed_control(math.exp(u), M, K, eY),
                          bounds=(math.log(t0p) - 12, math.log(t0p) + 6), method="bounded",
                          options={"xatol": 1e-10})
    t_num = math.exp(res.x)
    t_pred = peak(M, K, eY)
    rel = abs(t_pred - t_num) / t_num
    return Evidence((
        Part("peak time vs numeric argmax", t_pred, t_num, rel, 1e-4,
             "bounded Brent on ln t at xatol 1e-10: a flat maximum locates t to ~sqrt(eps) "
             "relative (measured < 1e-5)", kind="symbolic"),
        Part("peak before t0'", 1.0, t_num / t0p, t_num / t0p, 1.0,
             "our derivation: the peak precedes t0' = K ln M/eta_Y (exact inequality)", kind="symbolic"),
    ))


# ---------------------------------------------------------------------- 8. late gamma
def _late_speed_allowance(t: float, M: int, K: int, eta_Y: float) -> float:
    """The remainder of gamma/asymptote - 1 at t, to leading order, x 1.5 for the next
    order (as large_t_asymptote's), + 1e-12 for rounding.  With u = M eta_Y t/K and x = M h,
    gamma/asymptote = x u/(((M-1) + e^x) ln u) and Lemma 6 puts e^x = u + 1 - (M-1) x, so the
    ratio is 1 + ((M-1) x - M)/u + (1 - (M-1) x)/(u ln u) + ..., x ~ ln u: the leading
    remainder is at most ((M-1) ln u + M)/u, and the next term has the opposite sign."""
    u = M * eta_Y * t / K
    return 1.5 * ((M - 1) * math.log(u) + M) / u + 1e-12


@claim(
    id="late_speed",
    statement="gamma ~ ((M-1)/M)^2 K ln(M eta_Y t/K)/(eta_Y t) at large t (from 1e4 t0 "
              "on, within the asymptote's own leading remainder ((M-1) ln u + M)/u, u = M "
              "eta_Y t/K); Theorem 1(b)'s printed ln(eta_Y t/K) is not",
    source="Lemma 9, Theorem 1(b)",
    kind="symbolic",
    strategy=st.fixed_dictionaries({"M": st.integers(2, 100_000), "K": _K, "eta_Y": _RATE}),
    theory={"printed": False},
    control={"printed": True},
    control_description="Theorem 1(b) as printed: K ln(eta_Y t/K)/(eta_Y t)",
    examples=(Example({"M": 1000, "K": 10, "eta_Y": 1.0}, via="Fig. 3 (M = 1000, K = 10)"),),
    notes="What this separates: at fixed M the printed form is asymptotically right up to "
          "the factor ((M-1)/M)^2 (ln(eta_Y t/K) and ln(M eta_Y t/K) differ by ln M, which "
          "the growing log absorbs as t -> infinity); what fails is uniformity in M: over "
          "a fixed window in units of t0 the printed form's error grows with M, because "
          "the missing ln M is a fixed fraction of ln(M eta_Y t/K) there.  Until issue 34's "
          "referee read the tolerance was a bare 1 % ('measured'); the true worst error "
          "at the pinned example is about 2.6e-4 (the referee's computation), so a 1 % band "
          "could not see the ((M-1)/M)^2 prefactor at M >= 200.  The allowance is now the "
          "leading remainder, derived in _late_speed_allowance (a run over M = 2 ... 1e5, K "
          "= 1, 3, 10, eta_Y = 0.1, 1, 10 before the change put the true error at 0.77-0.91 "
          "of the unscaled remainder).",
)
def _check_late_speed(params: dict, ctx: Context, *, printed: bool) -> Evidence:
    M, K, eY = params["M"], params["K"], params["eta_Y"]
    t0 = _t0(M, K, eY)
    worst = (0.0, 0.0, 0.0, 0.0)
    for t in np.geomspace(1e4 * t0, 1e8 * t0, 9):
        r = ts.speed_control(t, M, K, eY) / ts.late_speed_asymptote(t, M, K, eY, printed)
        allow = _late_speed_allowance(t, M, K, eY)
        units = abs(r - 1) / allow if math.isfinite(r) else math.inf
        if units >= worst[0]:
            worst = (units, float(r - 1), allow, float(t))
    units, err, allow, t_w = worst
    return Evidence((Part(
        "gamma / asymptote - 1 for t in [1e4, 1e8] t0", 0.0, err, units, 1.0,
        "in units of the allowance at each t: the asymptote's remainder to leading order, "
        "((M-1) ln u + M)/u with u = M eta_Y t/K (from Lemma 6's e^x = u + 1 - (M-1) x), x "
        "1.5 for the next order, + 1e-12 for rounding",
        details={"t_worst": t_w, "allowance": allow}, kind="symbolic"),))


# ---------------------------------------------------------------------- 8b. Eqn 132
def _printed_asymptote(t, M, K, eta_Y, eta_Z, C0) -> float:
    """Eqn 132 as printed: 1/2 ln ln(M eta_Y t/K) + 1/4 ln(2K (M-1)^2/(M^2 nu)), no C0."""
    return ts.growth_exponent_asymptote(t, M, K, eta_Y, eta_Z, C0) + 0.25 * math.log(C0)


@claim(
    id="large_t_asymptote",
    statement="B(t) -> 1/2 ln ln(M eta_Y t/K) + 1/4 ln(2K (M-1)^2/(M^2 nu C0)) at large "
              "t (Eqn 132 with -1/4 ln C0 restored)",
    source="Eqn 132-133",
    kind="symbolic",
    strategy=_snap,
    theory={"asym": ts.growth_exponent_asymptote},
    control={"asym": _printed_asymptote},
    control_description="Eqn 132 as printed (no -1/4 ln C0)",
    examples=(Example({"M": 1000, "K": 10, "eta_Y": 1.0, "eta_Z": 1.0, "C0": 0.1},
                      via="Fig. 3's M and K with C0 = 0.1"),),
)
def _check_asymptote(params: dict, ctx: Context, *, asym: Callable) -> Evidence:
    M, K, eY, eZ, C0 = (params[k] for k in ("M", "K", "eta_Y", "eta_Z", "C0"))
    t0 = _t0(M, K, eY)
    nu = eY / eZ
    worst, allowance = 0.0, 0.0
    for t in np.geomspace(1e4 * t0, 1e8 * t0, 9):
        L = math.log(M * eY * t / K)
        worst = max(worst, abs(ts.growth_exponent(t, M, K, eY, eZ, C0) - asym(t, M, K, eY, eZ, C0)))
        # the dropped (1 + o(1)): 1/4 ln(1 + C0/(4 Gamma)) ~ C0 nu M^2/(8 K (M-1)^2 L^2), plus
        # 1/2 ln(M h/L) ~ -(M-1) K/(2 M eta_Y t)
        allowance = max(allowance, C0 * nu * M**2 / (8 * K * (M - 1) ** 2 * L**2)
                        + (M - 1) * K / (2 * M * eY * t))
    tol = 1.5 * allowance + 1e-6
    return Evidence((Part(
        "|B - Eqn 132| for t in [1e4, 1e8] t0", 0.0, worst, worst, tol,
        "the (1 + o(1)) that Eqn 132 drops, estimated to leading order (x 1.5 for the next "
        "order); 1e-6 for rounding", kind="symbolic"),), {"allowance": allowance})


# ---------------------------------------------------------------------- 9. Theorem 3 (reduced)
@st.composite
def _probs(draw, M_min: int = 20, M_max: int = 2000, nu_max: float = 100.0,
           random_start: bool = False) -> dict:
    """K in {2, 3} classes sharing one query: n_ct CTs with class-independent mass, and
    n_dt in [2, 5] DTs per class with distinct random masses, laid out in a random order
    against the token ids (so that id order is not P order); M in [M_min, M_max], eta_Y in
    [1, 20], nu = eta_Y/eta_Z in [1, nu_max]; with ``random_start``, half the one-CT draws
    start Z from Model2's random init (``z_init_seed``, numerics.scan_snap.model2_logits)."""
    K = draw(st.integers(2, 3))
    n_ct = draw(st.integers(1, 2))
    n_dt = draw(st.integers(2, 5 if K == 2 else 3))
    L = n_ct + K * n_dt
    rows = []
    ct_mass = [draw(st.floats(0.3, 1.0)) for _ in range(n_ct)]
    for n in range(K):
        row = [0.0] * L
        for j in range(n_ct):
            row[j] = ct_mass[j]
        masses = draw(st.lists(st.floats(0.1, 1.0), min_size=n_dt, max_size=n_dt,
                               unique=True))
        order = draw(st.permutations(range(n_dt)))
        for j, v in zip(order, masses, strict=True):
            row[n_ct + n * n_dt + j] = v
        s = sum(row)
        rows.append(tuple(round(v / s, 12) for v in row))
    rows = [tuple(v / sum(r) for v in r) for r in rows]
    eta_Y = draw(st.floats(1.0, 20.0))
    nu = draw(st.floats(1.0, nu_max))
    out = {"probs": tuple(rows), "M": draw(st.integers(M_min, M_max)), "eta_Y": eta_Y,
           "eta_Z": eta_Y / nu}
    if random_start and n_ct == 1:
        # one CT only: Eqn 12 needs every CT's z' < 0, which Theorem 2 (b) gives for one CT
        # at any Z, while Corollary 2 (several CTs) assumes Z(0) = 0
        seed = draw(st.one_of(st.none(), st.integers(1, 10)))
        if seed is not None:
            out["z_init_seed"] = seed
    return out


# DT masses out of id order in both classes (P order != id order)
_EXAMPLE_PROBS = {
    "probs": ((0.4, 0.3, 0.1, 0.2, 0.0, 0.0, 0.0), (0.4, 0.0, 0.0, 0.0, 0.2, 0.3, 0.1)),
    "M": 1000, "eta_Y": 10.0, "eta_Z": 1.0}
_THM3_POINTS = 200  # output times of the Theorem 3 reduced run (quadrature of B)
_EXAMPLE_VIA = ("two classes sharing one query, one CT and three DTs each (the token types of "
                "Section 3.2) with masses out of id order, M = 1000, eta_Y/eta_Z = 10")


def _reduced(params: Mapping, t_eval, ctx: Context) -> ns.ReducedResult:
    probs = tuple(tuple(r) for r in params["probs"])
    seed = params.get("z_init_seed")
    z0 = None if seed is None else ns.model2_logits(len(probs[0]), int(params["M"]), seed)
    cfg = ns.ReducedConfig(probs, int(params["M"]), float(params["eta_Y"]),
                           float(params["eta_Z"]), tuple(t_eval), z0=z0)
    return ns.run_reduced(cfg, cache=ctx.cache)


#: the a-posteriori re-solve's tolerances are the run's rtol and atol divided by this
FINE_FACTOR = 1000.0


def _fine_reduced(res: ns.ReducedResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same trajectory as ``res`` re-solved at rtol/FINE_FACTOR, atol/FINE_FACTOR, one
    output interval at a time, so that every output time is an accepted step's end (no
    dense-output interpolation).  Returns the states at the output times [T, L + 1] (h
    first), the states at every accepted step's end [N + 1, L + 1] (t = 0 first) and, per
    output time, the accepted steps up to it [T].

    A numeric instrument for the error allowance (the observed side), not a result of the
    paper; it calls :func:`theory.scan_snap.reduced_system` itself, so the system it solves
    is the one the run solved."""
    cfg = res.config
    f = ts.reduced_system(cfg.probs, cfg.M, cfg.eta_Y, cfg.eta_Z).lambdify("numpy")
    t_out = np.asarray(res.t, dtype=float)
    y = ns.reduced_start(cfg)
    outs, ends, n_k = [y], [y], [0]
    for a, b in zip(t_out[:-1], t_out[1:], strict=True):
        sol = solve_ivp(lambda t, x: f(t, x), (float(a), float(b)), y, method="DOP853",
                        rtol=cfg.rtol / FINE_FACTOR, atol=cfg.atol / FINE_FACTOR)
        if not sol.success:
            # the theory's own flow, which the run integrated: its failure is the theory's
            raise InadmissibleTheory(f"a-posteriori re-solve of the flow under test failed: "
                                     f"{sol.message}")
        y = sol.y[:, -1]
        outs.append(y)
        ends.extend(sol.y[:, 1:].T)
        n_k.append(n_k[-1] + sol.t.size - 1)
    return np.array(outs), np.array(ends), np.array(n_k)


def _step_sum(n_k: np.ndarray, per_step: np.ndarray) -> np.ndarray:
    """Per output time, the sum of ``per_step`` [N] (one entry per accepted step, in order)
    over the steps up to it (``n_k`` from :func:`_fine_reduced`)."""
    return np.r_[0.0, np.cumsum(per_step)][n_k]


def _worse(cur: tuple[float, float], err: np.ndarray, allow: np.ndarray) -> tuple[float, float]:
    """The (error, allowance) pair with the larger error/allowance: ``cur`` or the worst
    entry of ``err`` against ``allow``."""
    err, allow = np.asarray(err, dtype=float), np.asarray(allow, dtype=float)
    k = int(np.argmax(err / allow))  # the first NaN where there is one
    if np.isnan(err[k] / allow[k]) or np.isnan(cur[0] / cur[1]):
        return (math.nan, float(allow[k]))  # an undefined error fails, never drops out
    return (float(err[k]), float(allow[k])) if err[k] / allow[k] > cur[0] / cur[1] else cur


def _local_errors(res: ns.ReducedResult) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
    """The a-posteriori re-solve of ``res`` (:func:`_fine_reduced`) with each of its steps'
    local-error bound: (fine [T, L + 1], ends [N + 1, L + 1], n_k [T], loc [N, L + 1]).

    The run's error at output time t_k is at most |run - fine| + the fine re-solve's own
    error, bounded from its tolerance: DOP853 accepts a step when the RMS over the d state
    components of err_i/(atol + rtol max(|y_i|, |y_i'|)) is < 1, so one component's local
    error is < sqrt(d) (atol + rtol max(|y_i|, |y_i'|)) (y, y' the step's two ends).  This
    trusts the estimator only for the fine re-solve, whose steps are FINE_FACTOR times more
    demanding, not for the run that is judged; the same for check and control."""
    cfg = res.config
    root_d = math.sqrt(len(cfg.probs[0]) + 1)
    fine, ends, n_k = _fine_reduced(res)
    f_rtol, f_atol = cfg.rtol / FINE_FACTOR, cfg.atol / FINE_FACTOR
    scale_end = np.maximum(np.abs(ends[:-1]), np.abs(ends[1:]))       # [N, L + 1] per step
    return fine, ends, n_k, root_d * (f_atol + f_rtol * scale_end)


def _thm3_pairs(P: np.ndarray, n: int, d: tuple[int, ...], res: ns.ReducedResult,
                errs: tuple, power: float, worst: list) -> None:
    """Class n's DT pairs (winner l0 against each other DT): the invariant's drift, Eqn 11
    and Eqn 11 from the invariant, each against its a-posteriori allowance; updates
    ``worst`` = [inv_w, id_w, from_inv_w] (error, allowance) pairs in place."""
    fine, ends, n_k, loc = errs
    # c~ over the whole row, then class n's DTs: every call reads each token's weight at
    # the token's own column (a per-token slip of the theory lands on the same token)
    ct = _attention(P[n], res.z)[:, list(d)]  # c~_l(t) [T, |d|]
    ct_e = _attention(P[n], ends[:, 1:])[:, list(d)]  # c~ at the fine steps' ends [N + 1, |d|]
    l0 = _dominant(P, res.z[0], n, d)
    for j in range(len(d)):
        if j == l0:
            continue
        # invariant 1/c~^p differences (paper: p = 2; theory's dt_invariant at p = 2,
        # the control's p = 1 is the same difference of c~^(p/2))
        inv = ts.dt_invariant(ct[:, l0] ** (power / 2), ct[:, j] ** (power / 2))
        scale = 1 / ct[0, j] ** power
        # the invariant's drift: the exact flow keeps I, so the fine re-solve's I(t_k) -
        # I(0) is at most the sum over its steps of |grad I| . (local error bound), with
        # |dI/dz_l| = p/c~_l^p (c~ from the theory, at the step ends) at the larger of the
        # step's two ends; the run's own error is that plus |I_run(t_k) - I_fine(t_k)|;
        # + 16 eps for the statistic in float64
        cols = (1 + d[l0], 1 + d[j])                                  # state columns
        dI_fine = _step_sum(n_k, sum(
            np.maximum(g[:-1], g[1:]) * loc[:, c] for g, c in
            ((power / ct_e[:, i] ** power, c) for i, c in zip((l0, j), cols, strict=True))))
        ct_f = _attention(P[n], fine[:, 1:])[:, list(d)]
        inv_f = ts.dt_invariant(ct_f[:, l0] ** (power / 2), ct_f[:, j] ** (power / 2))
        dI = np.abs(inv - inv_f) + dI_fine
        e_inv = np.abs(inv - inv[0]) / scale
        worst[0] = _worse(worst[0], e_inv[1:], dI[1:] / scale + 16 * _EPS)
        # Eqn 11: r(t) = r(0) chi_l0(t), chi = e^{p (z - z(0))}; at p = 2,
        # r - r(0) chi = -c~_l0^2 (I(t) - I(0)) and r = -c~_l0^2 I(t), so its relative
        # error is |I(t) - I(0)|/|I(t)|: the same drift bound over |I(t)|
        r = _relative_gain(ct[:, l0], ct[:, j])
        chi = _gain(res.z[:, d[l0]], res.z[0, d[l0]], power)
        rel_allow = dI[1:] / np.abs(inv[1:]) + 16 * _EPS
        worst[1] = _worse(worst[1], (np.abs(r - r[0] * chi) / np.abs(r))[1:], rel_allow)
        # Eqn 11 from the invariant: r = c~_l0^2/c~_l^2 - 1 = -c~_l0^2 (1/c~_l0^2 - 1/c~_l^2),
        # so a conserved invariant predicts r(t) = -c~_l0(t)^2 I(0) from the winner's
        # attention alone (this sees the invariant's and r's scale and sign, which the
        # homogeneous r(t) = r(0) chi(t) does not)
        r_inv = -(ct[:, l0] ** (power / 2)) ** 2 * inv[0]
        worst[2] = _worse(worst[2], (np.abs(r - r_inv) / np.abs(r))[1:], rel_allow)


def _log_trapezoid(t: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """int_0^t rate: a trapezoid in ln t (the integrand times t) over the output times, plus
    [0, t_1] where the rate is linear in t (gamma ~ t)."""
    u = np.log(t[1:])
    return np.r_[0.0, 0.5 * rate[1] * t[1] + np.r_[0.0, np.cumsum(
        0.5 * np.diff(u) * (rate[2:] * t[2:] + rate[1:-1] * t[1:-1]))]]


def _gain_bounds(f0_sq: float, B: float) -> tuple[float, float]:
    """:func:`theory.scan_snap.gain_bounds` at (f0^2, B); a B whose bound e^{2B} leaves
    float64 (B > 354) fails the part with the reason (InadmissibleTheory) instead of raising
    OverflowError: the paper's B = eta_Z int xi grows as ln t, and only a wrong coefficient
    (a flipped drive, a blown-up trajectory) takes it there."""
    try:
        return ts.gain_bounds(f0_sq, B)
    except OverflowError:
        raise InadmissibleTheory(
            f"Eqn 12's bounds (theory.scan_snap.gain_bounds) overflow float64 at B = {B:.4g} "
            "(e^{2B} > 1.8e308): B = eta_Z int xi of the theory under test is not the "
            "logarithmic growth the paper's flow has") from None


def _thm3_eqn12(P: np.ndarray, n: int, d: tuple[int, ...], res: ns.ReducedResult,
                rate: np.ndarray, power: float) -> tuple[float, float, float, float]:
    """Class n's Eqn 98 and Eqn 12 errors: (Eqn 98 integrated, Eqn 12 bounds, Eqn 12's
    sharpness at small B, its slack); ``rate`` = xi_n eta_Z / K at the output times."""
    ct = _attention(P[n], res.z)[:, list(d)]
    l0 = _dominant(P, res.z[0], n, d)
    f_sq = ct[:, l0] ** 2 / np.sum(_attention(P[n], res.z) ** 2, axis=1)  # f_l0^2, c~ from theory
    B = _log_trapezoid(res.t, rate)
    lnchi_pred = 2 * _log_trapezoid(res.t, rate * f_sq)
    chi = _gain(res.z[:, d[l0]], res.z[0, d[l0]], power)
    lnchi = np.log(chi)
    b98 = float(np.max(np.abs(lnchi[1:] - lnchi_pred[1:]) / np.abs(lnchi_pred[1:])))
    bound = 0.0
    for k in range(1, len(res.t)):
        lo, hi = _gain_bounds(float(f_sq[0]), max(float(B[k]), 0.0))
        bound = _worst(bound, max(0.0, lo - chi[k]) / abs(lo), max(0.0, chi[k] - hi) / abs(hi))
    # Eqn 12 is sharp as B -> 0: ln chi = 2 int f^2 dB lies in [2 f0^2 B, 2 f1^2 B] on
    # [0, t1] (f^2 from f0^2 to f1^2), so ln lo / ln chi and f0^2 ln hi / ln chi (both
    # f0^2 B / int f^2 dB) lie in [f0^2/f1^2, 1] at the first output time t1
    lo, hi = _gain_bounds(float(f_sq[0]), max(float(B[1]), 0.0))
    lnchi1 = float(lnchi[1])
    a = math.log(lo) / lnchi1 if lo > 0 else math.inf
    b = float(f_sq[0]) * math.log(hi) / lnchi1 if hi > 0 else math.inf
    # B(t1) = rate(t1) t1/2 is exact for rate ~ t; for rate ~ t^e it is off by |e - 1|/2
    # relative, e the local exponent between the first two output times
    e = math.log(rate[2] / rate[1]) / math.log(res.t[2] / res.t[1])
    slack = 1.0 - float(f_sq[0] / f_sq[1]) + abs(e - 1.0) / 2
    return b98, bound, max(abs(a - 1.0), abs(b - 1.0)), slack


_THM3_DRIFT = ("a-posteriori numerical allowance of the statistic the theory under test "
               "defines (the invariant's gradient, the winner's f^2 growth and rate exponent "
               "at the power it gives), derived from the solver's tolerance, not a model "
               "allowance")


def _declared_drift(ev: Evidence, why: str) -> Evidence:
    """``ev`` with every part declared to carry a tolerance computed from the theory under
    test (:func:`verify.claims.tolerance_from_theory`), with the reason."""
    return Evidence(tuple(tolerance_from_theory(p, why) for p in ev.parts), ev.details)


def _thm3_solver_parts(res, errs, K: int, M: int, eY: float, tol_model: str
                       ) -> tuple[Part, Part]:
    """dt_invariant's two solver parts: the reduced system's h against Lemma 6's h(t/K)
    (theory.scan_snap.decoder_scale) and the linear invariant Z 1 (= Z(0) 1), each with its
    a-posteriori allowance (``errs`` from :func:`_local_errors`)."""
    fine, _, n_k, loc = errs
    cfg = res.config
    # the reduced system's h is Lemma 6's h(t/K): h' depends on h alone and d h'/d h < 0, so
    # the flow does not amplify an earlier error and the re-solve's global error is at most
    # the sum of its local ones (+ 2 eps h per step for the update's rounding); the run's
    # error at t_k is at most that plus |h_run - h_fine|; + 4 eps for the reference root.
    # Compared at the output times, where the run's values come from its dense output, so
    # the interpolant's error is inside what is judged.
    h_ref = np.array([ts.decoder_scale(x / K, M, eY) for x in res.t[1:]])
    h_fine = _step_sum(n_k, loc[:, 0])[1:] + 2 * n_k[1:] * _EPS * h_ref
    h_w = _worse((0.0, 1.0), np.abs(res.h[1:] - h_ref) / h_ref,
                 (np.abs(res.h[1:] - fine[1:, 0]) + h_fine) / h_ref + 4 * _EPS)
    h_fine_w = _worse((0.0, 1.0), np.abs(fine[1:, 0] - h_ref) / h_ref,
                      h_fine / h_ref + 4 * _EPS)
    # Z 1 is linear, which Runge-Kutta steps keep exactly up to rounding: one rounding
    # (eps |z|) per stage (12) and per update (1), per component (L), per step (N)
    L = len(cfg.probs[0])
    n_all = len(res.step_t) - 1
    # Z 1 keeps its value at t = 0 (0 from Z(0) = 0, Z(0) 1 from a random start)
    zsum = float(np.max(np.abs(res.z.sum(axis=1) - res.z[0].sum()))
                 / max(float(np.abs(res.z).max()), 1e-300))
    z_allow = 13 * L * n_all * _EPS
    return (
        Part("h of the reduced system = Lemma 6 h(t/K)", 0.0, h_w[0], h_w[0], h_w[1],
             tol_model + "; h' depends on h alone with dh'/dh < 0 (no amplification); + 2 "
             "eps h per re-solve step (rounding) + 4 eps (reference root)",
             details={"re-solve steps": int(n_k[-1]), "run steps": int(len(res.step_t) - 1),
                      "re-solve against Lemma 6: error, derived allowance": h_fine_w},
             kind="symbolic"),
        Part("Z 1 conserved along the reduced system", 0.0, zsum, zsum, z_allow,
             f"linear invariant, kept by every Runge-Kutta step up to rounding: 13 L N eps "
             f"(12 stages + 1 update, L = {L} components, N = {n_all} steps), relative to "
             "max |z|", kind="symbolic"),
    )


@claim(
    id="dt_invariant",
    statement="In the reduced dynamics 1/c~_l^2 - 1/c~_l'^2 is conserved for DTs of one "
              "class, r(t) = r(0) chi(t) exactly, ln chi_l0 = 2 int f_l0^2 dB (Eqn 98) and "
              "e^{2 f0^2 B} <= chi <= e^{2 B} with B = eta_Z int xi_n computed from "
              "Theorem 1's coefficients (gamma, xi_n/gamma), not from the trajectory's z' "
              "(from Z(0) = 0 and from Model2's random Z(0); l0 the largest c~(0))",
    source="Theorem 3 (Eqn 11-12), Lemma 4; the invariant is our derivation from Eqn 98; "
           "Section 5's 'initial value as prior' (r(0) carries z(0))",
    kind="symbolic",
    strategy=_probs(random_start=True),
    theory={"power": 2.0},
    control={"power": 1.0},
    control_description="exponent 1 instead of 2 (1/c~ invariant, chi = e^{dz})",
    examples=(Example(_EXAMPLE_PROBS, via=_EXAMPLE_VIA),
              Example(dict(_EXAMPLE_PROBS, z_init_seed=1),
                      via=_EXAMPLE_VIA + ", Z(0) from Model2's random init (seed 1)")),
    notes="Issue 34 item 2: from Z(0) = 0 the terms of the reduced system that vanish at "
          "zero logits go untested, so the second pinned example (and half the drawn ones "
          "with one CT: Eqn 12 needs every CT's z' < 0, which Theorem 2 (b) gives for one CT "
          "at any Z while Corollary 2 for several CTs assumes Z(0) = 0) start the reduced "
          "system at Model2's random init U(-1/sqrt M, 1/sqrt M) "
          "(numerics.scan_snap.model2_logits), with l0 the DT of largest c~(0) (Theorem 3's "
          "dominant token); expected to hold as from zero (the derivation does not use "
          "z(0) = 0), set before its first run.  That first run (quick) failed one part "
          "at the random start, 'Z 1 = 0' (0.123 of max |z| against 9.7e-13): the part held "
          "Z 1 to 0, its value only from Z(0) = 0, while Lemma 1 conserves Z 1; it now holds "
          "Z 1 to Z(0) 1 (the same from zero), and the rerun holds on 14 of 14.  The ODE parts' numerical-error allowances are a posteriori (they replace an "
          "asserted 1e-7, and then a bound that trusted the run's own error estimator): the "
          "same trajectory is re-solved at tolerances divided by FINE_FACTOR, one output "
          "interval at a time so that every output time is a step end, and the run's error "
          "at an output time is allowed |run - re-solve| plus the re-solve's error derived "
          "from its tolerance (DOP853's acceptance test bounds one component's local error "
          "by sqrt(d) (atol + rtol |y|); h' depends on h alone and is decreasing in h, so h's "
          "global error is at most the sum over the steps; the DT invariant, which the exact "
          "flow keeps, drifts by at most the sum of |grad I| . (local error)).  Z 1 is "
          "linear and drifts by rounding only.  The h part compares at the output times, "
          "where the run's values come from its dense-output interpolant, so the "
          "interpolant's error is judged too; its details give the re-solve's own error "
          "against its derived bound.  Why (session 26, quick, --seed 2): the run's error "
          "estimator accepted a step whose local error in h exceeded its per-step "
          "tolerance, so a bound derived from the run's tolerance alone failed on an "
          "example where Lemma 6 holds; the estimator is now trusted only for the re-solve, "
          "whose tolerances are FINE_FACTOR times tighter than the run's.  Allowances are "
          "computed by the same rule for check and control, from the same two solves.",
)
def _check_theorem3(params: dict, ctx: Context, *, power: float) -> Evidence:
    P = np.array(params["probs"])
    K = P.shape[0]
    M, eY, eZ = params["M"], params["eta_Y"], params["eta_Z"]
    try:
        dts = _token_sets(_theory(ts.distinct_tokens, P, what="distinct_tokens"), K,
                          P.shape[1], "distinct_tokens")
    except _InvalidTheory as e:
        return _invalid(e)
    t0 = _t0(M, K, eY)
    tev = np.r_[0.0, np.geomspace(1e-3 * t0, 100 * t0, _THM3_POINTS)]
    res = _reduced(params, tev, ctx)
    cfg = res.config
    # numerical-error allowances, a posteriori and the same for check and control
    errs = _local_errors(res)
    # Eqn 12's B_n = eta_Z int xi_n from the theory's own coefficients at the trajectory's
    # states (gamma from Theorem 1, xi_n/gamma from dt_drive), not from the trajectory's z'
    gam = np.array([ts.speed_control(x, M, K, eY) for x in res.t])
    drive = ts.dt_drive(P, res.z)                                     # [T, K]
    worst = [(0.0, 1.0), (0.0, 1.0), (0.0, 1.0)]  # invariant, Eqn 11, from the invariant
    bound_err, b98_err, sharp_err, sharp_tol = 0.0, 0.0, 0.0, math.inf
    for n, d in enumerate(dts):
        _thm3_pairs(P, n, d, res, errs, power, worst)
        b98, bound, sharp, slack = _thm3_eqn12(P, n, d, res, (eZ / K) * gam * drive[:, n],
                                               power)
        b98_err, bound_err = _worst(b98_err, b98), _worst(bound_err, bound)
        if sharp - slack > sharp_err - sharp_tol or n == 0:
            sharp_err, sharp_tol = sharp, slack
    inv_w, id_w, from_inv_w = worst
    # trapezoid in ln t of an integrand ~ t^a has relative error a^2 du^2/12; the largest
    # exponent is a = 2 at early times (gamma ~ t, so xi t ~ t^2); x 1.5 for the next order
    du = float(np.log(res.t[2]) - np.log(res.t[1]))
    q_tol = 1.5 * (2 * du) ** 2 / 12
    quad_model = (f"B and ln chi from a trapezoid rule in ln t over {_THM3_POINTS} log-spaced "
                  f"points (step du = {du:.3g}): relative error a^2 du^2/12 for an integrand "
                  "~ t^a, largest a = 2 early (gamma ~ t); x 1.5 for the next order")
    tol_model = (f"a posteriori: |run - re-solve| + the re-solve's derived error, at the "
                 "worst output time (the largest error/allowance); the re-solve is the same "
                 f"trajectory at DOP853 rtol {cfg.rtol / FINE_FACTOR:g}, atol "
                 f"{cfg.atol / FINE_FACTOR:g} (the run's / {FINE_FACTOR:g}), each output "
                 "time a step end, its error the sum over its accepted steps of sqrt(d) "
                 f"(atol + rtol |y|), d = {len(cfg.probs[0]) + 1} state components")
    h_part, z_part = _thm3_solver_parts(res, errs, K, M, eY, tol_model)
    return _declared_drift(Evidence((
        h_part,
        z_part,
        Part("DT invariant 1/c~_l^2 - 1/c~_l'^2", 0.0, inv_w[0], inv_w[0], inv_w[1],
             tol_model + "; the exact flow keeps I, so the re-solve's drift is at most the "
             "sum over its steps of |grad I| . (local error), |dI/dz_l| = p/c~_l^p at the "
             "step's larger end; relative to 1/c~_l'(0)^p; + 16 eps", kind="symbolic"),
        Part("Eqn 11 r(t) = r(0) chi(t)", 0.0, id_w[0], id_w[0], id_w[1],
             tol_model + "; r - r(0) chi = -c~_l0^2 (I(t) - I(0)): the invariant's drift "
             "bound over |I(t)|; + 16 eps", kind="symbolic"),
        Part("Eqn 98 integrated: ln chi = 2 int f^2 dB", 0.0, b98_err, b98_err, q_tol,
             quad_model, kind="symbolic"),
        Part("Eqn 12 bounds on chi, B = eta_Z int xi", 0.0, bound_err, bound_err, q_tol,
             quad_model, kind="symbolic"),
        Part("Eqn 11 from the invariant: r(t) = -c~_l0(t)^2 I(0)", 0.0, from_inv_w[0],
             from_inv_w[0], from_inv_w[1],
             tol_model + "; r - r_inv = -c~_l0^2 (I(t) - I(0)): the invariant's drift bound "
             "over |I(t)|; + 16 eps", kind="symbolic"),
        Part("Eqn 12 sharp at small B: ln lo / ln chi, f0^2 ln hi / ln chi at t1", 1.0,
             1.0 + sharp_err, sharp_err, sharp_tol,
             "first order in B: both ratios lie in [f0^2/f1^2, 1] (f^2 grows from f0^2 to "
             "f1^2 on [0, t1]); plus |e - 1|/2 for B(t1) = rate(t1) t1/2 when rate ~ t^e "
             "(e measured between the first two output times); worst class", kind="symbolic"),
    )), _THM3_DRIFT)


# ---------------------------------------------------------------------- 9b. reduced magnitudes
#: DTs per class of the Theorem 1-region data (Dataset2's generator, num_last = 1, two next
#: tokens, num_common CTs): 120 gives M = num_common + 243 (253 with the authors' 10 CTs), so
#: that M >> 100 and M >> K^2 = 4 while |lambda_1(E)| < 1/K and min |lambda_i(E)| >= sqrt(6/M)
#: hold at Z = 0 for 9-20 CTs (Assumption 2; Dataset2 at num_last = 3, 5, 10 has K = 6, 10,
#: 20 classes on M = 79, 125, 240 and breaks M >> K^2 and |lambda_1| < 1/K)
REGION_DTS = 120


def _region_data(params: Mapping) -> ns.DataConfig:
    """Dataset2 with one query and two next tokens; ``num_common`` CTs (10, the authors', by
    default) and ``num_unique`` DTs per class (10, the authors', by default)."""
    return ns.DataConfig(num_last=1, num_common=int(params.get("num_common", 10)),
                         num_unique_per_next=int(params.get("num_unique", 10)))


def _assumption2(facts: ns.Facts, z0: np.ndarray | None = None) -> dict:
    """Assumption 2's numbers at the start (E = F^T F - I, F's rows f_n = c_n/|c_n| with
    c~ = P e^{z(0)}, theory.scan_snap.unnormalised_attention; Z(0) = 0 unless ``z0``
    [K, M] is given): M, K, |lambda_1|, min |lambda_i| against 1/K and sqrt(6/M) (the
    reconstructed lower bound Eqn 93 needs)."""
    P = facts.probs[:, : facts.n_context]
    c = P if z0 is None else _attention(P, np.asarray(z0)[:, : facts.n_context])
    f = c / np.linalg.norm(c, axis=1, keepdims=True)
    ev = np.abs(np.linalg.eigvalsh(f @ f.T - np.eye(facts.K)))
    return {"M": facts.M, "K": facts.K, "lambda_1": float(ev.max()), "1/K": 1 / facts.K,
            "min_lambda": float(ev.min()), "sqrt(6/M)": math.sqrt(6 / facts.M)}


def _printed_eqn10(P, M, eY, eZ):
    """Eqn 10 as printed, without the class probability P(n) = 1/K (eta_Z times K)."""
    return ts.reduced_system(P, M, eY, len(P) * eZ)


#: reduced_magnitude's region (and reduced_magnitude_eqn26's): Dataset2 with one query, two
#: next tokens, 9-20 CTs and REGION_DTS DTs per class, eta_Y/eta_Z in [5, 100]
_MAG_REGION = st.fixed_dictionaries({"num_common": st.integers(9, 20),
                                     "num_unique": st.just(REGION_DTS),
                                     "ratio": st.floats(5.0, 100.0)})
_PRINTED_EQN10 = ("Eqn 10 as printed, without the class probability P(n) = 1/K (eta_Z "
                  "multiplied by K)")

#: the design reduced_magnitude and reduced_magnitude_eqn26 share (region, theory, control)
_MAG_DESIGN = {"strategy": _MAG_REGION, "theory": {"system": ts.reduced_system},
               "control": {"system": _printed_eqn10}, "control_description": _PRINTED_EQN10,
               "cost": "slow", "expected": "refuted"}

_MAG_NOTES_FLOW = (
    "The population flow is the exact T -> infinity gradient flow of the Y/Z model "
    "(numerics), not a theory function, so this claim judges the magnitudes of "
    "reduced_system (its 1/K, its E' = I - (I+E)^{-1}) against an independent model.  "
    "Before t ~ K^2 Theorem 1 does not apply and the reduced rates are several times "
    "the flow's (the decoder has not yet learned), which is why the window starts there.  ")


@claim(
    id="reduced_magnitude",
    statement="Our reading, applying Theorem 1 to the model's own gradient (the paper "
              "proves it under Lemma 3's modified decoder update, Eqn 26; "
              "reduced_magnitude_eqn26 is the test under that update): in Theorem 1's region "
              "(M >> 100, Assumption 2, t >= K^2 per-sample steps), "
              "the reduced system's dz/dt (Eqn 10 with P(n) = 1/K, Theorem 1 to leading "
              "order) matches the exact population flow's dz/dt at the flow's own states, "
              "within Theorem 1's dropped terms (Dataset2's generator with one query, two "
              "next tokens, 9-20 CTs and 120 DTs per class: M = 252-263, K = 2; Assumption "
              "1c read as eta_Y/eta_Z >= 5, as for theorem3_population)",
    source="Lemma 4 (Eqn 10), Theorem 1 (Eqn 9, 85-89), Assumption 2, Lemma 1; the "
           "model's own gradient in place of Lemma 3's Eqn 26 is our reading",
    kind="reduced-vs-full",
    **_MAG_DESIGN,
    examples=(Example({"num_common": 10, "num_unique": REGION_DTS, "ratio": 10.0},
                      via="the authors' 10 CTs, 120 DTs per class (M = 253), Fig. 4's larger "
                          "ratio eta_Y/eta_Z = 10"),
              Example({"num_common": 10, "num_unique": REGION_DTS, "ratio": 5.0},
                      via="boundary case: the smallest ratio of the region, M = 253"),
              Example({"num_common": 20, "num_unique": REGION_DTS, "ratio": 100.0},
                      via="boundary case: 20 CTs (the strongest correlation of the region, "
                          "M = 263), nu = 100")),
    notes=_MAG_NOTES_FLOW
    + "Region (issue 23): Theorem 1 needs M >> 100 and Assumption 2 (M >> K^2, "
      "|lambda_1(E)| < 1/K, min |lambda_i| >= sqrt(6/M)).  Dataset2 at num_last = 3, 5, 10 "
      "(M = 79, 125, 240) has K = 6, 10, 20 classes, so M < K^2 at num_last = 5 and 10 and "
      "|lambda_1| = 3.6, 6.5, 13.7 against 1/K = 0.17, 0.1, 0.05 at Z = 0: outside the "
      "region.  The region's data keep the authors' generator with one query (K = 2) and "
      "grow the DTs per class to 120 (M = 253 at 10 CTs: |lambda_1| = 0.183 in "
      "[sqrt(6/M) = 0.154, 1/K = 0.5]); the flow solves in about 1 s at M = 240 on one CPU "
      "core, and reduced_system's build and lambdify at 250 context tokens about 33 s, hence "
      "cost slow.  Each example's details give Assumption 2's numbers at Z = 0.  "
      "Finding: the expectation was 'holds' from Theorem 1 and Lemma 4, registered before "
      "this region's first run (commit a58f37f); the first run (quick, commit 2057b17) "
      "refuted all three pinned examples, worst relative miss / allowance 8.23 / 0.0961 "
      "(10 CTs, nu = 10, at t = K^2 = 4), and a run of this check on the other two gave "
      "10.89 / 0.0961 (nu = 5) and 2.14 / 0.129 (20 CTs, nu = 100).  The reduced rates "
      "are the flow's times a common factor (9.2 on CTs and DTs alike at t = 4, 4.3 at "
      "t = 400 = 100 K^2, nu = 10), and the miss is Theorem 1's cross-class coefficient: "
      "a least-squares fit of the flow's Y(e_0 - alpha_0) on f_0, f_1 gives beta_01 = "
      "0.021 gamma at t = 4 and 0.048 gamma at t = 400 (0.049 and 0.091 at nu = 1000) "
      "against E'_01 = 0.188-0.190 and |delta_3| < 3/M = 0.012, while the f_0 coefficient is "
      "1.01-1.03 against iota = 1.034-1.035.  Eqn 94 with the flow's own Y reproduces the flow's "
      "dz/dt to below 1e-13 relative, so the gap is Theorem 1's leading order, not the flow; "
      "it shrinks with t and with nu but not within [K^2, 100 K^2] at nu <= 1000.  The "
      "positive control is the check where the reduced magnitudes pass, at Dataset2's "
      "num_last = 1 sizes (outside the region).  Whose miss (issue 34, finding 1): "
      "reduced_magnitude_eqn26 runs the same comparison with Lemma 3's modified decoder "
      "update (Eqn 26), under which Theorem 1 is proved; there the fit gives beta_01 = "
      "0.184 gamma against E'_01 = 0.175 and the reduced rates hold at nu = 10 and 100, so "
      "the miss here is the modification's (under the true update beta_01 is 0.017-0.110 "
      "gamma at the worst times, far below E'_01 = 0.19-0.34), not Theorem 1's under its own assumption "
      "(numbers in that claim's notes; the fit is in this claim's details, decoder_fit).",
    positive=Positive({"num_common": 3, "num_unique": 10, "ratio": 30.0},
                      "the same check at Dataset2's num_last = 1 sizes with 3 CTs (M = 26, "
                      "outside the region) and eta_Y/eta_Z = 30, where the reduced "
                      "magnitudes pass"),
)
@claim(
    id="reduced_magnitude_small_M",
    statement="Our strengthening, outside Theorem 1's region (at Dataset2's num_last = 1 "
              "sizes, M = 24-26, with 1-3 CTs): the reduced system's dz/dt (Eqn 10 with "
              "P(n) = 1/K, Theorem 1 to leading order) matches the exact population flow's "
              "dz/dt at the flow's own states, within Theorem 1's dropped terms, for "
              "t >= K^2 and eta_Y/eta_Z >= 5",
    source="Lemma 4 (Eqn 10), Theorem 1 (Eqn 9, 85-89), Lemma 1; the sizes are ours "
           "(Theorem 1 assumes M >> 100)",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"num_common": st.integers(1, 3),
                                    "ratio": st.floats(5.0, 100.0)}),
    theory={"system": ts.reduced_system},
    control={"system": _printed_eqn10},
    control_description=_PRINTED_EQN10,
    expected="refuted",
    examples=(Example({"num_common": 1, "ratio": 10.0},
                      via="Fig. 4's larger ratio eta_Y/eta_Z = 10 with one CT, the weakest "
                          "correlation"),
              Example({"num_common": 3, "ratio": 10.0},
                      via="the authors' Dataset2 with 3 CTs (|lambda_1| ~ 0.4 < 1/K), "
                          "eta_Y/eta_Z = 10"),
              Example({"num_common": 1, "ratio": 100.0},
                      via="boundary case: one CT, nu = 100")),
    positive=Positive({"num_common": 3, "ratio": 30.0},
                      "the same check at eta_Y/eta_Z = 30 with 3 CTs, deeper in Assumption "
                      "1c"),
    notes=_MAG_NOTES_FLOW
    + "Formerly reduced_magnitude; split off (issue 23) because M = 24-26 lies below "
      "Theorem 1's M >> 100, so this is a statement of ours beyond the paper's region.  "
      "The expectation was 'holds' on nu in [30, 100], a lower end set after a first run "
      "found misses at nu = 5 and 10: that shrank the region to make the claim pass.  "
      "The region is now nu >= 5 (the row's reading of eta_Y >> eta_Z) and the claim a "
      "finding, from a run of this check on the pinned data (ref/scan_snap): relative "
      "miss / allowance 1.67 / 0.87 (1 CT) and 0.85 / 0.40 (3 CTs) at nu = 5, "
      "0.72 / 0.67 (1 CT) and 0.36 / 0.40 (3 CTs) at nu = 10, 0.28 / 0.65 and "
      "0.23 / 0.41 at nu = 30.",
)
def _check_reduced_magnitude(params: dict, ctx: Context, *, system: Callable) -> Evidence:
    return _magnitude_evidence(params, ctx, system, ns.run_population_flow, "simulation")


@claim(
    id="reduced_magnitude_eqn26",
    statement="Theorem 1 under its own modification: with the decoder moved by Lemma 3's "
              "modified update (Eqn 26, Y' = eta_Y sum_n P(n) (f_n - F E' e_n)(e_n - "
              "alpha_n)^T) and Z by the model's own gradient, the reduced system's dz/dt "
              "(Eqn 10 with P(n) = 1/K) matches that flow's dz/dt at its own states within "
              "Theorem 1's dropped terms, on reduced_magnitude's data (M = 252-263, K = 2, "
              "t in [K^2, 100 K^2]; Assumption 1c read as eta_Y/eta_Z >= 5, our reading)",
    source="Lemma 3 and Eqn 26 (the modified update Theorem 1 is proved under), Theorem 1 "
           "(Eqn 9, 85-89), Lemma 4 (Eqn 10); issue 34's question whether "
           "reduced_magnitude's miss is Theorem 1's or the modification's",
    kind="symbolic",
    **_MAG_DESIGN,
    positive=Positive({"num_common": 10, "num_unique": REGION_DTS, "ratio": 30.0},
                      "the same check at eta_Y/eta_Z = 30, deeper in Assumption 1c (chosen "
                      "after the diagnostic run the notes describe, which showed 0.016 "
                      "there)"),
    examples=(Example({"num_common": 10, "num_unique": REGION_DTS, "ratio": 10.0},
                      via="reduced_magnitude's first example (M = 253, eta_Y/eta_Z = 10)"),
              Example({"num_common": 10, "num_unique": REGION_DTS, "ratio": 5.0},
                      via="reduced_magnitude's boundary case, the smallest ratio"),
              Example({"num_common": 20, "num_unique": REGION_DTS, "ratio": 100.0},
                      via="reduced_magnitude's boundary case, 20 CTs, nu = 100")),
    notes="A diagnostic beside reduced_magnitude, whose expectation is 'refuted' (a finding "
          "on the model's own gradient flow).  Theorem 1's back-propagated gradient rests "
          "on Lemma 3, which is exact only for Eqn 26's modified decoder update; this claim "
          "runs the same comparison with that update (numerics.scan_snap.run_eqn26_flow: "
          "Y' = eta_Y/K F (F^T F)^{-1} R, so F^T Y moves exactly as Lemma 3 says; Z by "
          "autograd), with the same data, times, tolerance and control.  Expected 'holds', "
          "registered before its first run from the derivation: with F frozen, "
          "Y(e_n - alpha_n) = gamma F (I - E')(q_1 e_n + q_0 (1 - e_n)), which is Eqn 10's "
          "leading order up to q_1 - 1 = 1/(M-1) and q_0 = -M/(M-1)^2, inside the 3/M "
          "dropped terms; the motion of F is what Assumption 1c (eta_Y >> eta_Z) neglects.  "
          "If it holds while reduced_magnitude is refuted, the miss is the modification's "
          "(the true update is not Eqn 26 to the order Theorem 1 keeps); if it is refuted "
          "too, Theorem 1 misses under its own assumption at these ratios.  Both claims' "
          "details give the least-squares coefficients of Y(e_0 - alpha_0) on f_0, f_1 "
          "over gamma (decoder_fit) against E' at the worst time.  The observed side is "
          "not the full model, hence kind symbolic.  "
          "Finding (first run: quick, the code of commit 6e78493, which registered "
          "'holds'): the worst relative miss / allowance is 0.084 / 0.097 at nu = 10 and "
          "0.012 / 0.128 at 20 CTs, nu = 100 (held), but 0.181 / 0.098 at nu = 5 (t = 400), "
          "so 'refuted' on the region's edge; the expectation was changed to 'refuted' "
          "after that run, for this reason.  What the miss looks like (details.per_time at "
          "each of the five times; the same flows run at nu = 5, 10 and 30 with 10 CTs, "
          "code of this stop's referee fixes): the miss grows with t (0.030, 0.069, 0.103, "
          "0.140, 0.181 at nu = 5) and falls with nu (0.181, 0.084, 0.016 at t = 400 for "
          "nu = 5, 10, 30), and so does how far W = F^T Y departs from Lemma 3 and 5's rows "
          "read entry by entry as h (lemma3_h_error: 0.66 to 1.81 h at nu = 5, 0.48 to "
          "1.15 h at nu = 10, 0.23 to 0.50 h at nu = 30; 43 to 45 h under the model's own "
          "gradient); the cross-class fit stays at 0.177-0.192 gamma against E'_01.  That "
          "is the signature of F's motion, the O(eta_Z/eta_Y) term Assumption 1c drops "
          "and Theorem 1's dropped terms do not include (not separated further here).  "
          "So this refutes our "
          "reading of 'eta_Y >> eta_Z' as nu >= 5, not Theorem 1's statement under its "
          "assumptions; no allowance for that term was added.  Answer to issue 34's "
          "finding 1 (reduced_magnitude): under the model's own gradient the cross-class "
          "coefficient beta_01 is 0.021, 0.017, 0.110 gamma at the three examples' worst "
          "times against E'_01 = 0.189, 0.189, 0.342; under Eqn 26 it is 0.184, 0.177, "
          "0.346 against 0.175, 0.166, 0.340 (iota: 1.01-1.05 against 1.03-1.11 under the "
          "gradient, 1.03-1.11 against 1.03-1.10 under Eqn 26).  Theorem 1 matches its "
          "modified dynamics at nu >= 10; reduced_magnitude's miss (8.23, 10.89, 2.14 times "
          "relative) is the modification's: the true update is not Eqn 26 to the order "
          "Theorem 1 keeps.",
)
def _check_magnitude_eqn26(params: dict, ctx: Context, *, system: Callable) -> Evidence:
    return _magnitude_evidence(params, ctx, system, ns.run_eqn26_flow, "symbolic")


def _decoder_fit(flow: ns.FlowResult, i: int, facts: ns.Facts, gamma: float) -> dict:
    """Theorem 1's coefficients read off a flow's state at its i-th time: the back-propagated
    g_0 = Y(e_0 - alpha_0) fitted by least squares on f_0, f_1 (K = 2) and divided by
    theory.scan_snap.speed_control's gamma, against E' of the state (reported, not judged:
    iota ~ 1 - E'_00, beta_01 ~ E'_01, Eqn 85-89)."""
    Z = np.zeros((facts.M, facts.M))
    Z[facts.query] = flow.zq[i]
    Zt, Yt = torch.as_tensor(Z), torch.as_tensor(flow.Y[i])
    F_rows = ns.class_features(Zt, facts)
    g0 = (Yt @ ns.decoder_residuals(Yt, Zt, facts)[0]).numpy()
    A = F_rows.numpy().T
    coef = np.linalg.lstsq(A, g0, rcond=None)[0] / gamma
    Ep = np.eye(facts.K) - np.linalg.inv(A.T @ A)
    return {"iota_fit": float(coef[0]), "beta_01_fit": float(-coef[1]),
            "1 - E'_00": float(1 - Ep[0, 0]), "E'_01": float(Ep[0, 1]),
            "3/M": 3.0 / facts.M}


def _magnitude_evidence(params: dict, ctx: Context, system: Callable, run: Callable,
                        kind: str) -> Evidence:
    """The reduced system's dz/dt against a population flow's (``run``: the model's own
    gradient flow, or Eqn 26's) at the flow's states, relative, against Theorem 1's dropped
    terms computed at each state (worst time of 5 in [K^2, 100 K^2])."""
    data = _region_data(params)
    facts = ns.make_facts(data)
    if len(np.unique(facts.query)) != 1:
        raise ValueError("reduced_system is Eqn 10 for classes sharing one query token")
    K = facts.K
    tev = tuple(float(x) for x in np.r_[0.0, np.geomspace(K * K, 100 * K * K, 5)])
    flow = run(ns.FlowConfig(data=data, eta_Y=float(params["ratio"]), eta_Z=1.0, t_eval=tev,
                             y_update="gradient" if run is ns.run_population_flow
                             else "eqn26"), cache=ctx.cache)
    P = facts.probs[:, : facts.n_context]
    rhs = system(P, facts.M, float(params["ratio"]), 1.0).lambdify("numpy")
    worst = (-1.0, 0.0, 0.0, 0.0, 0.0, 0)
    per_time = []
    for i, t in enumerate(flow.t[1:], 1):
        z = flow.zq[i, 0, : facts.n_context]
        h = ts.decoder_scale(t / K, facts.M, float(params["ratio"]))
        red = np.asarray(rhs(t, np.r_[h, z]), dtype=float)[1:]
        pop = flow.zdot[i, 0, : facts.n_context]
        rel = float(np.linalg.norm(red - pop) / np.linalg.norm(pop))
        c = _attention(P, z)
        f = c / np.linalg.norm(c, axis=1, keepdims=True)
        E = f @ f.T - np.eye(K)
        Ep = np.eye(K) - np.linalg.inv(np.eye(K) + E)
        lam = float(np.max(np.abs(np.linalg.eigvalsh(E))))
        beta = float(np.min(np.abs(Ep[~np.eye(K, dtype=bool)])))
        tol = lam**2 + 3.0 / (facts.M * beta)
        if rel / tol > worst[0] / max(worst[4], 1e-300) or worst[0] < 0:
            worst = (rel, t, lam, beta, tol, i)
        per_time.append({
            "t": float(t), "relative_miss": rel, "allowance": tol,
            "lemma3_h_error": _lemma3_h_error(flow, i, facts, h),
            "decoder_fit": _decoder_fit(flow, i, facts, ts.speed_control(
                t, facts.M, K, float(params["ratio"]))) if K == 2 else None})
    rel, t, lam, beta, tol, i = worst
    fit = per_time[i - 1]["decoder_fit"]
    # kind: the predicted side is the reduced system evaluated at the flow's states; the
    # observed side is the full model's population gradient flow ("simulation") or the flow
    # with Eqn 26's decoder update, the paper's own modification ("symbolic": not the model)
    return Evidence((Part(
        "|z'_reduced - z'_flow| / |z'_flow|", 0.0, rel, rel, tol,
        "Theorem 1's dropped terms at this state: |delta_2|, |delta_3| < 3/M absolute on "
        "beta ~ E'_nn' (relative 3/(M beta_min)), and E' to O(|lambda_1|^2); both computed "
        "from the flow's state (worst time of 5 in [K^2, 100 K^2]); |delta_1|'s 1/M and "
        "its sampling term (zero in a population flow) are left out, 1/M being below the "
        "3/M terms",
        details={"t": t, "lambda_1": lam, "beta_min": beta, "decoder_fit": fit,
                 "per_time": per_time,
                 "Assumption 2 at Z = 0": _assumption2(facts)}, kind=kind),))


def _lemma3_h_error(flow: ns.FlowResult, i: int, facts: ns.Facts, h: float) -> float:
    """How far the flow's W = F^T Y (F at the flow's own Z) is from Lemma 3 and 5's
    w_n = (M-1) h zeta_n with Lemma 6's h (theory.scan_snap.decoder_scale): the largest
    relative error of h read entry by entry, w_n[n]/(M-1) and -w_n[j] (reported, not
    judged: it separates Lemma 3's step from the step W -> Y that Theorem 1 takes)."""
    Z = np.zeros((facts.M, facts.M))
    Z[facts.query] = flow.zq[i]
    W = (ns.class_features(torch.as_tensor(Z), facts) @ torch.as_tensor(flow.Y[i])).numpy()
    own = np.zeros_like(W, dtype=bool)
    own[np.arange(facts.K), facts.label] = True
    return float(np.max(np.abs(np.where(own, W / (facts.M - 1), -W) - h)) / h)


# ---------------------------------------------------------------------- 10. Theorem 2 signs
def _printed_sign_eqn10(P, M, eY, eZ):
    """Eqn 10 with App. D.1's E' as printed, (I + E)^{-1} - I: the theory's E' = I - (I +
    E)^{-1} reversed, so every z row of the reduced system changes sign (h's row kept)."""
    system = ts.reduced_system(P, M, eY, eZ)
    rhs = system.rhs.as_mutable()
    for k in range(1, rhs.shape[0]):
        rhs[k] = -rhs[k]
    return dataclasses.replace(system, rhs=rhs)


def _swapped_signs(probs) -> tuple[int, ...]:
    """Theorem 2 with the common tokens' sign swapped (CTs gain)."""
    return tuple(1 if s == -1 else s for s in ts.predicted_drift_signs(probs))


_signs_data = st.fixed_dictionaries({
    "num_next_per_last": st.integers(2, 3), "num_common": st.integers(1, 6),
    "num_unique_per_next": st.integers(3, 6), "ratio": st.floats(1.0, 20.0)})


@claim(
    id="theorem2_signs",
    statement="With one shared query and symmetric classes, dz/dt > 0 for every DT and "
              "< 0 for every CT up to t0 (exact population flow, zero init); and Eqn 10's "
              "z rows (the reduced system Theorem 2 is proved from), evaluated at the "
              "flow's own states, give every token's dz/dt its sign",
    source="Theorem 2, Corollary 2 (Eqn 98, 100); Lemma 4 (Eqn 10) with Theorem 1 to "
           "leading order",
    kind="reduced-vs-full",
    strategy=_signs_data,
    theory={"signs": ts.predicted_drift_signs, "system": ts.reduced_system},
    control={"signs": _swapped_signs, "system": _printed_sign_eqn10},
    control_description="Theorem 2 with the CT sign swapped (CTs gain), and Eqn 10 with App. "
                        "D.1's E' as printed, (I + E)^{-1} - I (the sign typo the theory "
                        "fixes: every z row reversed)",
    qualitative="Theorem 2's signs: counts of tokens whose dz/dt has the wrong sign at the "
                "flow's saved times up to t0 (t0 places the window only; a sign is what the "
                "theorem states), from the sign rule and from Eqn 10's rows",
    notes="The Eqn 10 part (issue 34, stop 71): reduced_system's z rows had no simulation "
          "part that passes, since its magnitudes are a finding (reduced_magnitude: the "
          "reduced rates are a common positive factor times the flow's at K = 2, traced to "
          "Theorem 1's cross-class coefficient under the true update), so a slip of one "
          "token's row went unseen by the model.  A sign is the level at which Eqn 10 is "
          "expected to hold in the flow without a magnitude allowance, at every state, not "
          "only near Z = 0 (our derivation, from Eqn 10 as theory.scan_snap.reduced_system "
          "builds it, G = F^T F with unit diagonal, E' = I - G^{-1}): a DT l of class n "
          "alone has the row (eta_Z/K) gamma f_nl^2 sum_{k != n} E'_nk G_nk = (eta_Z/K) gamma "
          "f_nl^2 ((G^{-1})_nn - 1), and (G^{-1})_nn >= 1 for a positive-definite G with "
          "unit diagonal, strictly where class n's feature overlaps another's (every drawn "
          "dataset has a CT); for a CT with the same weight c in every class and all "
          "off-diagonal G_nk = g (Dataset2's classes have equal masses and Z(0) = 0, and the "
          "flow keeps that symmetry), E'_nk = g/((1 - g)(1 + (K - 1) g)) = e and the row is "
          "(eta_Z/K) gamma K (K - 1) e c^2 (g - 1) < 0.  A positive factor on the "
          "cross-class coefficient (reduced_magnitude's finding) moves neither sign.  "
          "Expected 'holds', set from that argument before the part's first run (no probe "
          "of it was made); first run (quick, the code of 406e002): holds on all 13 "
          "examples, no wrong sign.  The part is qualitative and resolves no few-per-cent "
          "slip of a row, only its sign (a one-row sign flip fails it).  Tolerance 0.  "
          "Floors, the strict direction: a token whose Eqn 10 row is within 1e-9 of the "
          "largest row at that time (a threshold of ours, far above float64 rounding, so "
          "that a row Eqn 10 makes vanish is read as no sign) or whose flow rate is within "
          "the flow parts' noise floor counts as a wrong sign.  The control adds App. D.1's "
          "printed E' sign to Eqn 10 (every z row reversed: the paper's own typo, the "
          "smallest miss at the level of a sign), which this part rejects beside the CT "
          "sign part's rejection of the swapped rule.",
    examples=(Example({"num_next_per_last": 2, "num_common": 10, "num_unique_per_next": 10,
                       "ratio": 10.0},
                      via="the data of Fig. 6's panel num_last = 1 (the authors' Dataset2 "
                          "defaults) at eta_Y/eta_Z = 10"),),
)
def _check_signs(params: dict, ctx: Context, *, signs: Callable,
                 system: Callable = ts.reduced_system) -> Evidence:
    data = ns.DataConfig(num_last=1, num_next_per_last=params["num_next_per_last"],
                         num_common=params["num_common"],
                         num_unique_per_next=params["num_unique_per_next"])
    facts = ns.make_facts(data)
    K = facts.K
    P = facts.probs[:, : facts.n_context]
    L = P.shape[1]
    try:
        pred = _sign_list(_theory(signs, P, what="the drift-sign rule"), L, "drift signs")
        dt_sets = _token_sets(_theory(ts.distinct_tokens, P, what="distinct_tokens"), K, L,
                              "distinct_tokens")
        ct_ids = list(_indices(_theory(ts.common_tokens, P, what="common_tokens"), L,
                               "common_tokens"))
    except _InvalidTheory as e:
        return _invalid(e)
    partition = _token_partition(P, dt_sets, ct_ids)
    dt_types, ct_mask = _support_types(P)
    dt_mask = dt_types.any(axis=0)
    eta_Z = 1.0
    eta_Y = params["ratio"] * eta_Z
    t0 = _t0(facts.M, K, eta_Y)
    tev = tuple(np.r_[0.0, np.geomspace(1e-2 * t0, t0, 8)])
    cfg = ns.FlowConfig(data=data, eta_Y=eta_Y, eta_Z=eta_Z, t_eval=tev)
    flow = _flow(cfg, ctx)
    # one shared query: every class has the same row; t = 0 is excluded (Y(0) = 0 gives z' = 0)
    zdot = flow.zdot[1:, 0, : facts.n_context]
    scale = np.max(np.abs(zdot), axis=1, keepdims=True)
    tol_abs = 1e-9 * scale  # solver noise floor on a vanishing derivative
    # the token types come from P's support (Section 3.2), not from the theory's own sets:
    # every DT must be predicted +1 and move up, every CT must be predicted -1 and move down;
    # a token whose predicted sign differs from the type's, or whose dz/dt is not beyond the
    # noise floor in the type's direction, counts as wrong
    wrong_dt = float(np.mean((zdot[:, dt_mask] <= tol_abs)
                             | (pred[dt_mask] != 1)[None, :])) if dt_mask.any() else 0.0
    wrong_ct = float(np.mean(zdot[:, ct_mask] * -1 <= tol_abs)) if ct_mask.any() else 0.0
    wrong_ct_pred = float(np.mean(np.sign(zdot[:, ct_mask]) != pred[ct_mask])) \
        if ct_mask.any() else 0.0
    wrong_eqn10, eqn10_det = _eqn10_sign_miss(system, flow, facts, eta_Y, eta_Z, zdot, tol_abs)
    return Evidence((
        Part("DT gain (dz > 0)", 0.0, wrong_dt, wrong_dt, 0.0,
             "exact population flow: a wrong sign at any saved time up to t0 refutes", kind="simulation"),
        Part("CT sign", 0.0, max(wrong_ct, wrong_ct_pred), max(wrong_ct, wrong_ct_pred), 0.0,
             "exact population flow: a wrong sign at any saved time up to t0 refutes", kind="simulation"),
        Part("Eqn 10 rows' signs at the flow's states", 0.0, wrong_eqn10, wrong_eqn10, 0.0,
             "fraction of (time, token) whose reduced_system z row at the flow's (h(t/K), z) "
             "and the flow's dz/dt differ in sign or either lies within its floor (Eqn 10: "
             "1e-9 of its largest row, our threshold; the flow: the parts above's noise "
             "floor), the strict direction: a wrong sign at any saved time up to t0 "
             "refutes", details=eqn10_det, kind="simulation"),
        partition,
    ), {"min_dt_zdot": float(zdot[:, dt_mask].min()) if dt_mask.any() else None,
        "max_ct_zdot": float(zdot[:, ct_mask].max()) if ct_mask.any() else None})


def _eqn10_sign_miss(system: Callable, flow: ns.FlowResult, facts: ns.Facts, eta_Y: float,
                     eta_Z: float, zdot: np.ndarray, tol_abs: np.ndarray) -> tuple[float, dict]:
    """The fraction of (saved time t > 0, context token) at which Eqn 10's z row
    (``system``, theory.scan_snap.reduced_system, at the flow's state with Lemma 6's
    h(t/K)) and the flow's dz/dt (``zdot`` [T, L], its floor ``tol_abs`` [T, 1]) differ in
    sign or either is within its floor; details name the tokens that do."""
    P = facts.probs[:, : facts.n_context]
    try:
        rhs = _theory(system, P, facts.M, eta_Y, eta_Z, what="reduced_system").lambdify("numpy")
    except _InvalidTheory as e:
        raise InadmissibleTheory(str(e)) from e
    red = []
    for t, z in zip(flow.t[1:], flow.zq[1:, 0, : facts.n_context], strict=True):
        h = ts.decoder_scale(t / facts.K, facts.M, eta_Y)
        red.append(np.asarray(rhs(t, np.r_[h, z]), dtype=float).reshape(-1)[1:])
    red = np.array(red)
    if red.shape != zdot.shape:
        raise InadmissibleTheory(f"reduced_system (theory.scan_snap) gives {red.shape[-1]} "
                                 f"z rows for {zdot.shape[-1]} context tokens")
    floor = 1e-9 * np.max(np.abs(red), axis=1, keepdims=True)
    agree = (red * zdot > 0) & (np.abs(red) > floor) & (np.abs(zdot) > tol_abs)
    bad = sorted({int(j) for j in np.nonzero(~agree)[1]})
    return float(np.mean(~agree)), {"tokens with a wrong or vanishing sign": bad,
                                    "times": [float(t) for t in flow.t[1:]]}


# ---------------------------------------------------------------------- 11. scan order
def _reversed_order(probs, n: int) -> tuple[int, ...]:
    return tuple(reversed(ts.scan_order(probs, n)))


def _swapped_order(probs, n: int) -> tuple[int, ...]:
    """A near miss: the theory's order with the second- and third-largest-P DTs swapped
    (the two lower DTs whose peaks come last before the winner's)."""
    seq = list(ts.scan_order(probs, n))
    if len(seq) >= 3:
        seq[-2], seq[-3] = seq[-3], seq[-2]
    return tuple(seq)


def _fig4_like_probs(perm_seed) -> tuple[tuple[float, ...], ...]:
    """The Fig. 4 data's masses (10 CTs of mass 1, DTs linspace(0.1, 1, 10)) for two
    classes sharing one query, each class's DT masses permuted against its ids
    (``perm_seed``: a numpy seed, or a pair of permutations)."""
    n_ct, n_dt = 10, 10
    if isinstance(perm_seed, int):
        rng = np.random.default_rng(perm_seed)
        perms = [rng.permutation(n_dt) for _ in range(2)]
    else:
        perms = [np.asarray(q) for q in perm_seed]
    masses = np.linspace(0.1, 1.0, n_dt)
    rows = []
    for n in range(2):
        row = np.zeros(n_ct + 2 * n_dt)
        row[:n_ct] = 1.0
        row[n_ct + n * n_dt: n_ct + (n + 1) * n_dt] = masses[perms[n]]
        rows.append(tuple(float(v) for v in row / row.sum()))
    return tuple(rows)


@st.composite
def _scan_probs(draw) -> dict:
    """Data whose lower DTs have interior peaks: the Fig. 4 data's masses (10 CTs of mass
    1, 10 DTs linspace(0.1, 1) per class) for K = 2 classes sharing one query, each class's
    DT masses in a drawn order against the token ids (id order is not P order); M in
    [300, 2000], eta_Y in [1, 20], nu = eta_Y/eta_Z in [1, 2].

    Why this region: from Z(0) = 0 a DT's share rises at first only if P_l^2 exceeds the
    share-weighted mean sum P^3/sum P (Eqn 98: z_l' is proportional to c~_l^2), and only
    such DTs can peak after t = 0; with linspace(0.1, 1, 10) three do (masses 0.8, 0.9, 1).
    Their peaks fall inside the window only where the attention moves far: heavy CTs (a
    large overlap f_n.f_n') and nu near 1.  A probe run before this claim (session 26,
    reduced ODE, 240 output times) found two interior lower-DT peaks per class with 10 CTs
    of mass 1 at M = 300 and 2000, nu = 1 and 2, and at most one with 5 CTs, mass 0.5 or 8
    DTs in most of those cells."""
    perms = tuple(tuple(draw(st.permutations(range(10)))) for _ in range(2))
    eta_Y = draw(st.floats(1.0, 20.0))
    nu = draw(st.floats(1.0, 2.0))
    return {"probs": _fig4_like_probs(perms), "M": draw(st.integers(300, 2000)),
            "eta_Y": eta_Y, "eta_Z": eta_Y / nu}


_SCAN_EXAMPLE = {"probs": _fig4_like_probs(0), "M": 1000, "eta_Y": 10.0, "eta_Z": 10.0}
_SCAN_VIA = ("the Fig. 4 data's masses (10 CTs, DTs linspace(0.1, 1, 10)) for two classes "
             "sharing one query, DT masses permuted against the ids, M = 1000, nu = 1")
_SCAN_POINTS = 240  # log-spaced output times of the scan-order run, [1e-3, 1e3] t0


@claim(
    id="scan_order",
    statement="Our extension, outside Theorem 1's region (10 CTs of mass 1 against 10 DTs "
              "per class break Assumption 2 at Z = 0, and eta_Y/eta_Z in [1, 2] is not "
              "Assumption 1c's eta_Y >> eta_Z): DTs lose attention in increasing order of "
              "P(l|n): peak times of the DT-renormalised shares are non-decreasing in P "
              "(reduced ODE), also among the lower DTs whose shares peak after t = 0",
    source="Section 5 'scan', Theorem 3; the region is ours (see the notes)",
    kind="symbolic",
    strategy=_scan_probs(),
    theory={"order": ts.scan_order},
    control={"order": _swapped_order},
    control_description="the order with the second- and third-largest-P DTs swapped",
    examples=(Example(_SCAN_EXAMPLE, via=_SCAN_VIA),
              Example(dict(_SCAN_EXAMPLE, eta_Z=5.0), via=_SCAN_VIA.replace(
                  "nu = 1", "nu = 2"))),
    notes="Issue 34 item 6: the region is drawn so that several lower DTs peak inside "
          "the window (see the strategy), and that region lies outside Theorem 1's: at the "
          "pinned example's masses |lambda_1(E)| = 0.722 at Z = 0 against Assumption 2's "
          "1/K = 0.5 (computed from the example's P when this was written), and nu = 1-2 "
          "against Assumption 1c's eta_Y >> eta_Z; from Z(0) = 0 the reduced dynamics give "
          "interior lower-DT peaks only there (the strategy's search), so the statement is "
          "labelled our extension of Section 5's scan to the reduced ODE outside the "
          "theorem's region, not a test of Theorem 3 inside it.  The second part counts only pairs of non-winning DTs whose peaks are "
          "both interior (after t = 0, before the last output time), so it tests the order "
          "among the lower DTs that ties at t = 0 leave untested.  An example with no such "
          "pair leaves that part undecided (measured = False) rather than passed.  The "
          "control swaps two adjacent lower DTs: it is rejected only where those two peak "
          "at different times.",
)
def _check_scan_order(params: dict, ctx: Context, *, order: Callable) -> Evidence:
    P = np.array(params["probs"])
    K = P.shape[0]
    try:  # predicted: per class, tokens in the order they lose attention
        seqs = [_indices(_theory(order, P, n, what="the scan order"), P.shape[1],
                         "scan order") for n in range(K)]
    except _InvalidTheory as e:
        return _invalid(e)
    t0 = _t0(params["M"], K, params["eta_Y"])
    tev = np.r_[0.0, np.geomspace(1e-3 * t0, 1e3 * t0, _SCAN_POINTS)]
    res = _reduced(params, tev, ctx)
    inversions, pairs = 0, 0
    inner_inv, inner_pairs = 0, 0
    details = {}
    for n, seq in enumerate(seqs):
        ct = _attention(P[n], res.z)
        share = ct[:, list(seq)] / ct[:, list(seq)].sum(axis=1, keepdims=True)
        tau = ns.peak_times(res.t, share)
        details[f"class {n} peak times / t0"] = (tau / t0).tolist()
        interior = (tau > 0) & (tau < res.t[-1])
        top = int(np.argmax(P[n, list(seq)]))
        for a in range(len(seq)):
            for b in range(a + 1, len(seq)):
                pairs += 1
                inv = int(tau[a] > tau[b])
                inversions += inv
                if interior[a] and interior[b] and top not in (a, b):
                    inner_pairs += 1
                    inner_inv += inv
    frac = inversions / max(pairs, 1)
    inner = inner_inv / max(inner_pairs, 1)
    details["interior pairs"] = inner_pairs
    grid = (f"exact ODE ordering on a {_SCAN_POINTS + 1}-point grid (log-spaced, "
            "[1e-3, 1e3] t0, plus t = 0)")
    return Evidence((
        Part("peak-time order of DT shares", 0.0, frac, frac, 0.0,
             grid + "; ties allowed: lowest-P tokens peak at t = 0", kind="symbolic"),
        Part("peak-time order among lower DTs with interior peaks", 0.0, inner, inner, 0.0,
             grid + "; pairs of non-winning DTs both peaking after t = 0 and before the "
             "last output time (undecided where there is none)",
             details={"pairs": inner_pairs}, measured=inner_pairs > 0, kind="symbolic"),
    ), details)


def _inversions(t: np.ndarray, shares: np.ndarray) -> float:
    """Fraction of token pairs (columns in predicted order) whose peak times are inverted."""
    tau = ns.peak_times(t, shares)
    pairs = [(a, b) for a in range(len(tau)) for b in range(a + 1, len(tau))]
    return sum(int(tau[a] > tau[b]) for a, b in pairs) / max(len(pairs), 1)


def _interior_inversions(t: np.ndarray, shares: np.ndarray, top: int) -> tuple[int, int]:
    """(inverted, pairs) over the pairs of columns (in predicted order) other than ``top``
    (the predicted winner's column) whose peaks both lie after t[0] and before t[-1]: the
    pairs whose order ties at t = 0 do not decide."""
    tau = ns.peak_times(t, shares)
    inner = [a for a in range(len(tau)) if a != top and t[0] < tau[a] < t[-1]]
    pairs = [(a, b) for i, a in enumerate(inner) for b in inner[i + 1:]]
    return sum(int(tau[a] > tau[b]) for a, b in pairs), len(pairs)


#: the interior-peak parts' pilot, the quick run at 891cf6e (Fig. 4 command, authors'
#: layout, 40 seeds x 2 classes per ratio): per ratio, the fraction of runs x classes with a
#: pair of interior lower-DT peaks (ratio 1: 44 of 80; ratio 10: 1 of 80) and the mean
#: inverted fraction over them (ratio 1: 2.0 / 44; ratio 10: one pair, so ratio 1's value is
#: the planning value there too)
INTERIOR_PILOT: dict[float, tuple[float, float]] = {1.0: (44 / 80, 2.0 / 44),
                                                   10.0: (1 / 80, 2.0 / 44)}
INTERIOR_TOL = 0.1  # the interior-peak parts' tolerance (the first part's 10 %)
INTERIOR_POWER = 0.95  # as the row's other power calculations (MONOTONE_POWER)


def _interior_runs_needed(p: float, tol: float = INTERIOR_TOL, confidence: float = _CONF,
                          power: float = INTERIOR_POWER) -> int:
    """Runs x classes with an interior pair for which the part's Clopper-Pearson upper bound
    falls below ``tol`` with probability ``power`` when the mean inverted fraction is ``p``:
    the smallest n whose bound at k = p n + z(power) sqrt(n p (1 - p)) (the summed [0, 1]
    fractions' spread taken as a Bernoulli's, which is the larger) is below ``tol``."""
    if not 0 < p < tol:
        raise ValueError(f"p must lie in (0, {tol}), got {p}")
    z = float(norm.ppf(power))
    n = 2
    while _clopper_pearson(min(p * n + z * math.sqrt(n * p * (1 - p)), n), n,
                           confidence)[1] >= tol:
        n += 1
    return n


def scan_order_sgd_seeds() -> dict[float, int]:
    """eta_Y/eta_Z -> seeds of the Fig. 4 command that scan_order_sgd's interior-peak part
    needs (power calculation from :data:`INTERIOR_PILOT`; two classes per run)."""
    return {r: math.ceil(_interior_runs_needed(p) / (2 * rate))
            for r, (rate, p) in INTERIOR_PILOT.items()}


def _seeds_plan(size: str, needed: int, profile: str, design: str) -> PowerPlan:
    """A claim's plan when its rule is "the profile's seeds (``SIZES[size]``) reach the most
    its power calculation asks of any part"."""
    have = int(ns.SIZES.at(size, profile))
    return PowerPlan(decides=have >= needed, have=have, needed=needed, unit="seeds",
                     design=design)


def scan_order_sgd_power(profile: str) -> PowerPlan:
    """scan_order_sgd's power plan: the Fig. 4 seeds against :func:`scan_order_sgd_seeds`."""
    return _seeds_plan("scan_order_seeds", max(scan_order_sgd_seeds().values()), profile,
                       "scan_order_sgd_seeds: the interior-peak part's 99 % Clopper-Pearson "
                       "bound below 0.1 with power 0.95 at INTERIOR_PILOT's rates")


@claim(
    id="scan_order_sgd",
    statement="Under SGD (Fig. 4 command) DTs also peak in increasing order of P(l|n): "
              "at most 10 % of token pairs inverted, also among the pairs of lower DTs whose "
              "shares peak after iteration 0 (which ties at t = 0 do not decide)",
    source="Section 5 'scan', Fig. 4",
    kind="reduced-vs-full",
    strategy=_NONE,
    theory={"order": ts.scan_order},
    control={"order": _reversed_order},
    control_description="the reversed order (high-P tokens drop first)",
    cost="slow",
    measured_at="thorough",
    expected_at={"test": "inconclusive", "quick": "inconclusive", "ci": "inconclusive"},
    power=scan_order_sgd_power,
    examples=(Example({"perm": None}, via=_FIG4_VIA),
              Example({"perm": _DT_PERM}, via=_FIG4_PERM_VIA)),
    positive=Positive({"perm": None}, "the same check on the same runs without the "
                      "interior-peak parts (all pairs, which the seeds of quick settle)",
                      theory={"order": ts.scan_order, "interior": False}),
    notes="Power calculation (scan_order_sgd_seeds, beside the claim): the interior-peak "
          "part decides when its 99 % Clopper-Pearson upper bound falls below 0.1; at the "
          "mean inverted fraction 2.0/44 of the quick run at 891cf6e (ratio 1, authors' "
          "layout) that takes 407 runs x classes with an interior pair for 95 % power.  "
          "That run showed how rare interior peaks are: 44 of 80 runs x classes had a pair "
          "at ratio 1 and 1 of 80 at ratio 10 (3 in the permuted layout), so ratio 1 needs "
          "370 seeds and ratio 10 16 280 (5 427 at the permuted layout's rate).  Quick's 40 "
          "seeds (ci's too) cannot afford them: inconclusive there; thorough runs the 16 280 "
          "of the calculation (scan_order_seeds, fixed before any run at that size), where "
          "'holds', the paper's expectation, is registered.  The tolerance is unchanged, and "
          "the seeds come from the calculation, not from an outcome.  The authors' layout sorts each class's DT masses into id order; the second "
          "example assigns them to the ids in a random order (a relabelling the model cannot "
          "see), so that a check confusing id order with P order fails.  "
          "At ratio 1 a few per cent of pairs are inverted: the top DTs' shares plateau after "
          "the snap and their argmax times wander under SGD noise.  With 10 runs (x 2 "
          "classes) the interval straddles the 10 % allowance; the 40 runs of quick settle "
          "it.  At smoke size (3 runs) it may come out inconclusive.  The second part per "
          "ratio (referee item 4: with every non-top DT peaking at iteration 0 the first part "
          "passes without testing the order) counts only pairs of non-winning DTs that both "
          "peak inside the record; from Z(0) = 0 the reduced dynamics give such peaks only "
          "to DTs with P_l^2 above the class's share-weighted mean (scan_order's strategy), "
          "under SGD noise other DTs may peak late too, and where few runs have such a pair "
          "the part's interval stays wide (its details count the runs x classes and pairs).",
)
def _check_scan_order_sgd(params: dict, ctx: Context, *, order: Callable,
                          ratios: tuple[float, ...] = (1.0, 10.0),
                          interior: bool = True) -> Evidence:
    f = ns.make_facts(ns.fig4_config(1, params.get("perm")).data)
    P = f.probs[:, : f.n_context]
    try:
        seqs = [list(_indices(_theory(order, P, n, what="the scan order"), P.shape[1],
                              "scan order")) for n in range(f.K)]
        win = _winner_list(_theory(ts.winners, P, what="winners"), f.K, P.shape[1], "winners")
        for n, seq in enumerate(seqs):
            if win[n] not in seq:
                raise _InvalidTheory(f"class {n}'s winner {win[n]} is not in its scan order "
                                     f"{tuple(seq)}")
    except _InvalidTheory as e:
        return _invalid(e)
    res = _sgd(ns.fig4_config(_size(ctx, "scan_order_seeds"), params.get("perm")), ctx)
    t = res.steps.astype(float)
    parts = []
    for ratio in ratios:
        fr, inner, n_inner = [], [], 0
        for i in res.select(1.0, ratio):
            c = ns.attention(res.zq[i], f)
            for n, seq in enumerate(seqs):
                share = c[:, n, seq] / c[:, n, seq].sum(axis=1, keepdims=True)
                fr.append(_inversions(t, share))
                top = seq.index(win[n])
                k, m = _interior_inversions(t, share, top)
                if m:
                    inner.append(k / m)
                    n_inner += m
        parts.append(over_seeds(
            f"inverted peak-time pairs, ratio {ratio:g}", 0.0, np.array(fr), 0.1,
            "SGD noise swaps near-tied late peaks of the top DTs: 10 % of pairs allowed (our "
            "threshold: with ties at t = 0 a Spearman correlation caps below 0.9, so "
            "inverted pairs are counted); t interval over runs x classes", confidence=_CONF, kind="simulation"))
        if not interior:
            continue
        # a run x class's inverted fraction x_i lies in [0, 1], so the Clopper-Pearson
        # interval for sum x_i "successes" in n trials covers their mean conservatively (a
        # [0, 1] variable is less spread than a Bernoulli of the same mean); it stays wide
        # where few runs have an interior pair, unlike a t interval on a few equal values
        name = f"inverted pairs among interior lower-DT peaks, ratio {ratio:g}"
        model = ("the same 10 % (our threshold), counted only over pairs of non-winning DTs "
                 "whose peaks both lie after iteration 0 and before the last (the pairs that "
                 "ties at t = 0 leave undecided), mean over the runs x classes that have such "
                 "a pair; Clopper-Pearson on the summed fractions (conservative for [0, 1] "
                 "values)")
        det = {"runs x classes with an interior pair": len(inner), "interior pairs": n_inner}
        if inner:
            k_inv, n_rc = float(np.sum(inner)), len(inner)
            lo, hi = _clopper_pearson(k_inv, n_rc, _CONF)
            mean = k_inv / n_rc
            parts.append(Part.bounded(name, 0.0, mean, mean, lo, hi, INTERIOR_TOL, model,
                                      _CONF, details=det, kind="simulation"))
        else:
            parts.append(Part(name, 0.0, math.nan, math.nan, INTERIOR_TOL, model + " (no run x class "
                              "with such a pair: not decided)", details=det, lower=0.0,
                              upper=math.inf, measured=False, kind="simulation"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 12. snap (reduced)
def _paper_delta_order(M: int) -> float:
    """ln ln M/ln M: the order Theorem 4 prints for delta' (Theta(ln ln M/ln M)), quoted as
    the paper's published statement (no constant; snap_reduced's third part adds ours)."""
    return math.log(math.log(M)) / math.log(M)


#: relative allowance of snap_reduced's t0 (1 + delta') part (its derivation beside the part)
_CROSSING_TOL = 1e-10


def _lemma8_crossing(M: int, K: int, eta_Y: float) -> float:
    """The time at which e^{M h(t/K)} overtakes (M-1) M h(t/K) for good (Lemma 8's upper
    end): the larger root x* of e^x = (M-1) x, bracketed in [ln M, 3 ln M] (M >= 300), then
    the t where M h(t/K) = x* on Lemma 6's h (a root of t, bracketed from 0 up to where
    Lemma 6's implicit equation puts it, doubled); no t0 enters."""
    L = math.log(M)
    x_star = brentq(lambda x: x - math.log((M - 1) * x), L, 3 * L, xtol=1e-14, rtol=4 * _EPS)
    hi = 2 * K * (math.exp(x_star) + (M - 1) * x_star) / (M * eta_Y)

    def gap(t: float) -> float:
        return M * ts.decoder_scale(t / K, M, eta_Y) - x_star

    # a wrong h may cross later than Lemma 6 puts it: widen the bracket (x 2, ten times);
    # an h that never reaches x* (a decreasing one) is inadmissible, not a bracket error
    for _ in range(10):
        if gap(hi) > 0:
            break
        hi *= 2
    else:
        raise InadmissibleTheory(f"M h(t/K) (theory.scan_snap.decoder_scale) never reaches "
                                 f"Lemma 8's x* = {x_star:.6g} up to t = {hi:.6g}")
    if not gap(0.0) < 0:
        raise InadmissibleTheory(f"M h(0) (theory.scan_snap.decoder_scale) = "
                                 f"{gap(0.0) + x_star:.6g} is not below x* = {x_star:.6g}")
    return brentq(gap, 0.0, hi, xtol=1e-300, rtol=4 * _EPS)


@claim(
    id="snap_reduced",
    statement="The snap in the reduced dynamics: from t0/2 to 10 t0 (t0 = 2K ln M/eta_Y) "
              "the winning DT's rate dz/d ln t falls at least as much as Theorem 4's driver "
              "t gamma(t) does, for M in [300, 5000] (Theorem 4's M >> 1) and nu in [1, 100] "
              "(the reduced dynamics, defined at every nu; nu < 5 lies below the row's "
              "reading of Assumption 1c, so that part of the range is ours); "
              "and t0 (1 + delta') is where Lemma 8's e^{M h} <= (M-1) M h ends on Lemma 6's "
              "h, delta' our closed form (~ ln ln M/ln M, the paper's Theta order)",
    source="Theorem 4 (t0 = 2 (1 + delta') K ln M/eta_Y, delta' = Theta(ln ln M/ln M)), "
           "Lemma 8, Section 6; the bound and delta's constant are our derivation",
    kind="symbolic",
    strategy=_probs(M_min=300, M_max=5000, nu_max=100.0),
    theory={"power": 1},
    control={"power": 2},
    control_description="a driver t gamma(t)^2 (gamma's power doubled)",
    examples=(Example(_EXAMPLE_PROBS, via=_EXAMPLE_VIA),
              Example(dict(_EXAMPLE_PROBS, M=1000, eta_Y=10.0, eta_Z=0.1),
                      via="the same data at nu = eta_Y/eta_Z = 100, the region's edge")),
    notes="Eqn 98: dz_l0/dt = (eta_Z/K) gamma(t) f_l0^2 (-E'_nn); the state factor "
          "f_l0^2 (-E'_nn) does not grow once CTs are suppressed, so the rate per ln t falls "
          "at least by the ratio of t gamma(t) between the two times.  This replaces a fixed "
          "3x threshold (ours, from our summary): inside the region the ratio of t gamma "
          "alone ranges over roughly 1.7-3 with M, so a fixed 3x was not the theory's "
          "prediction; the report's details give the observed and predicted ratios.  The "
          "second part makes a wrong t0 fail (issue: t0 steered the grids but decided "
          "nothing): Theorem 4's t0 (1 + delta') is the start of Lemma 9's late stage, "
          "where Lemma 8's e^{M h} <= (M-1) M h ends; the crossing is found from Lemma 6's h "
          "by root finders that do not use t0, and t*/t0 - 1 is compared with "
          "theory.scan_snap.snap_delta, our exact closed form of that crossing (x* of "
          "e^x = (M-1) x by Newton, then Lemma 6 inverted), to the root finders' precision.  "
          "Until session 45 snap_delta was the leading order ln ln M/ln M, judged within "
          "1.5/ln M: tdcheck mutate on 5cf6d85 left its x 1.05, x 0.95 and sign mutants and "
          "t0's x 1.05 alive (the allowance was ~20 % of delta' and the error's denominator "
          "was the signed delta'); the leading order is now a theory test (the closed form "
          "against ln L/L (1 + 1/L) over M = 300 ... 1e6).  The third part (session 45, "
          "from a referee read: the second tests our closed form's consistency, which a t0 "
          "changed together with snap_delta would pass) judges t*/t0 - 1, computed from t0 "
          "and the root finders only, against the paper's printed order ln ln M/ln M with "
          "our expansion's constant 1 + 1/L and its remainder bound 2 ln L/L^2: a t0 5 % "
          "off moves the ratio by ~0.2 against a band of 0.08-0.11 in the region.",
)
def _check_snap_reduced(params: dict, ctx: Context, *, power: int) -> Evidence:
    P = np.array(params["probs"])
    K = P.shape[0]
    M, eY = params["M"], params["eta_Y"]
    try:
        l0 = _winner_list(_theory(ts.winners, P, what="winners"), K, P.shape[1], "winners")[0]
        if l0 is None:
            raise _InvalidTheory("winners: no winner for class 0, which has DTs")
    except _InvalidTheory as e:
        return _invalid(e)
    t0 = _t0(M, K, eY)
    grid = np.array([t0 / 2 / 1.05, t0 / 2 * 1.05, 10 * t0 / 1.05, 10 * t0 * 1.05])
    res = _reduced(params, np.r_[0.0, grid], ctx)
    z = res.z[1:, l0]
    slope_early = (z[1] - z[0]) / math.log(grid[1] / grid[0])
    slope_late = (z[3] - z[2]) / math.log(grid[3] / grid[2])
    observed = slope_early / max(slope_late, 1e-300)

    def driver(t):
        return t * ts.speed_control(t, M, K, eY) ** power

    predicted = driver(t0 / 2) / driver(10 * t0)
    err = max(0.0, predicted / observed - 1.0)
    cross = _lemma8_crossing(M, K, eY)
    delta = admissible("delta' (theory.scan_snap.snap_delta)", ts.snap_delta(M), lower=-1.0)
    d_obs = cross / t0 - 1.0
    L = math.log(M)
    order = _paper_delta_order(M)
    band = 2 * math.log(L) / L**2
    return Evidence((Part(
        "rate fall t0/2 -> 10 t0 >= t gamma fall", predicted, observed, err, 1e-3,
        "a lower bound (one-sided): error = predicted/observed - 1 where positive; 1e-3 for "
        "the +-5 % finite-difference slopes (the driver varies by < 1e-3 relative across "
        "them on the exact ODE)", kind="symbolic"),
        Part(
        "t0 (1 + delta') vs Lemma 8's crossing e^{M h} = (M-1) M h", t0 * (1 + delta), cross,
        abs(t0 * (1 + delta) - cross) / cross, _CROSSING_TOL,
        "our closed form against root finders: the crossing t* from brentq on x* (rtol 4 "
        "eps) and on Lemma 6's h (rtol 4 eps); t* is linear in x* and its root in t has "
        "condition ~ (x* + 1)/2 ~ 4, so ~ 1e-15 relative; x 1e5 headroom: 1e-10.  A t0 or "
        "delta' 5 % off fails by orders of magnitude",
        details={"crossing": cross, "t0": t0, "delta'": delta}, kind="symbolic"),
        Part(
        "t*/t0 - 1 vs the paper's order ln ln M/ln M", 1 + 1 / L, d_obs / order,
        abs(d_obs / order - (1 + 1 / L)), band,
        "Theorem 4's delta' = Theta(ln ln M/ln M), with our constant: the crossing's "
        "expansion gives (t*/t0 - 1)/(ln ln M/ln M) = 1 + 1/L + O(ln L/L^2), L = ln M, and "
        "2 ln L/L^2 bounds the remainder over M = 300 ... 1e6 (theory test "
        "test_snap_delta_has_the_papers_order).  The observed side uses t0 "
        "(theory.scan_snap.snap_time) and the root finders, not snap_delta, so t0 is "
        "judged against the paper's order even where snap_delta were changed with it",
        details={"delta' observed": d_obs, "ln ln M/ln M": order}, kind="published"),
        ), {"t0": t0, "slopes": [slope_early, slope_late], "observed_ratio": observed,
         "driver_ratio": predicted})


# ---------------------------------------------------------------------- 13. invariants (SGD)
# Lemma 1 in the trained model (Y 1, Z 1 conserved under SGD with momentum) was the claim
# invariants_sgd, which consumed no theory function: it is a property of the model, tested
# in tests/test_scan_snap.py (test_sgd_with_momentum_keeps_lemma1s_row_sums).


# ---------------------------------------------------------------------- 14. winner (SGD)
def _second_best(probs) -> tuple[int | None, ...]:
    """A wrong winner: the DT with the second-largest P(l|n)."""
    P = np.asarray(probs)
    out = []
    for n, d in enumerate(ts.distinct_tokens(P)):
        order = sorted(d, key=lambda j: P[n, j])
        out.append(order[-2] if len(order) > 1 else None)
    return tuple(out)


@claim(
    id="winner_sgd",
    statement="From zero init the DT with the largest P(l|n) ends with the most "
              "attention in >= 9 of 10 runs, every class (Fig. 4 command, ratios 1 and 10; "
              "the 9 of 10 is ours: Theorem 3's winner is deterministic in the reduced "
              "dynamics, and SGD noise may swap near-tied tokens in a run)",
    source="Theorem 3, Fig. 4",
    kind="reduced-vs-full",
    strategy=_NONE,
    theory={"rule": ts.winners},
    control={"rule": _second_best},
    control_description="the DT with the second-largest P wins",
    cost="slow",
    examples=(Example({"perm": None}, via=_FIG4_VIA),
              Example({"perm": _DT_PERM}, via=_FIG4_PERM_VIA)),
    notes="A run misses when any class's final argmax differs from the prediction.  The "
          "interval is Clopper-Pearson on the miss fraction over runs.  Size from the "
          "bound before the run: with no miss the one-sided 99.5 % upper bound is "
          "1 - 0.005^(1/n), below 10 % from n = 51 runs; order_seeds' 40 seeds x 2 ratios "
          "= 80 runs at quick and ci (shared with scan_order_sgd) give 6.4 % with no miss "
          "and stay below 10 % with up to 1 miss (8.9 %; 2 misses give 11.1 %); the test "
          "profile's 26 seeds (52 runs) decide only with no miss.",
)
def _check_winner(params: dict, ctx: Context, *, rule: Callable) -> Evidence:
    f = ns.make_facts(ns.fig4_config(1, params.get("perm")).data)
    P = f.probs[:, : f.n_context]
    try:
        pred = _winner_list(_theory(rule, P, what="the winner rule"), f.K, P.shape[1],
                            "winners")
    except _InvalidTheory as e:
        return _invalid(e)
    res = _sgd(ns.fig4_config(_size(ctx, "order_seeds"), params.get("perm")), ctx)
    c = ns.attention(res.zq[:, -1], res.facts)[..., : res.facts.n_context]
    hit = np.ones(c.shape[0], dtype=bool)
    for n, d in enumerate(res.facts.dts):
        got = np.array(d)[np.argmax(c[:, n, list(d)], axis=1)]
        hit &= got == pred[n]
    n_runs, k = int(hit.size), int((~hit).sum())
    lo, hi = _clopper_pearson(k, n_runs, _CONF)
    miss = k / n_runs
    return Evidence((Part.bounded(
        "fraction of runs with a wrong winner", 0.0, miss, miss, lo, hi, 0.1,
        "our threshold: >= 9 of 10 runs (SGD noise may swap near-tied tokens); "
        "Clopper-Pearson interval over runs", _CONF,
        details={"runs": n_runs, "misses": k}, kind="simulation"),), {"runs": n_runs, "misses": k})


def _clopper_pearson(k: float, n: int, confidence: float) -> tuple[float, float]:
    """Exact binomial interval for k successes in n trials (two-sided ``confidence``); a
    non-integer k (a sum of [0, 1] values) gives the beta-quantile interval at that k."""
    a = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(beta_dist.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta_dist.ppf(1 - a, k + 1, n - k))
    return lo, hi


# ---------------------------------------------------------------------- 15. snap (SGD)
def _sgd_time(steps: np.ndarray, momentum: float) -> np.ndarray:
    """Per-sample time after ``steps`` heavy-ball steps at unit rate: the displacement a
    constant gradient makes, in units of one plain step, ``sum_k (1 - mu^k)/(1 - mu)`` =
    ``(s - mu (1 - mu^s)/(1 - mu))/(1 - mu)`` (the theory's time counts one expected
    per-sample update per unit; a batch-mean step is one such update in expectation, and
    momentum mu scales it by (1 - mu^k)/(1 - mu) at step k)."""
    s = np.asarray(steps, dtype=float)
    mu = float(momentum)
    if mu == 0:
        return s
    return (s - mu * (1 - mu**s) / (1 - mu)) / (1 - mu)


def _early_snap_time(M, K, eta_Y) -> float:
    """A wrong t0: Theorem 4's snap time / 2 (its leading factor 2 dropped, t0 = K ln M/eta_Y):
    an earlier snap, so that a check passing at t0 (frozen from t0 on) would be rejected
    here wherever the entropy still moves between t0/2 and t0."""
    return 0.5 * ts.snap_time(M, K, eta_Y)


@claim(
    id="snap_sgd",
    statement="Our sharpening of Fig. 2's 'frozen after t0 = O(K ln M/eta_Y)' (the paper "
              "states the order only): attention is frozen from Theorem 4's leading t0 = 2 K "
              "ln M/eta_Y itself (its 1 + delta' factor dropped, in the run's per-sample "
              "time) to the end of the 100 iterations, the DT entropy moving < 0.01 nats "
              "(Fig. 4 command, ratios 1 and 10)",
    source="Theorem 4 (t0 = 2(1 + delta') K ln M/eta_Y), Section 6, Fig. 2 ('frozen after "
           "t0 = O(K ln M/eta_Y)'), Fig. 4; the sharpening to the leading t0 is ours",
    kind="reduced-vs-full",
    strategy=_NONE,
    theory={"snap": ts.snap_time},
    control={"snap": _early_snap_time},
    control_description="t0 / 2 (Theorem 4's leading factor 2 dropped: an earlier snap)",
    cost="slow",
    expected="refuted",
    examples=(Example({}, via=_FIG4_VIA),),
    positive=Positive({}, "the same check from the run's last tenth (iterations 90-100), "
                      "where the SGD entropy has stopped moving",
                      theory={"snap": ts.snap_time, "start_step": 90}),
    notes="The freeze point is the first recorded step whose per-sample time (heavy-ball: "
          "the displacement of s momentum steps, (s - mu (1 - mu^s)/(1 - mu))/(1 - mu) "
          "plain steps) reaches the theory's t0 at the run's M, K and eta_Y, so a wrong t0 "
          "moves the window.  Theorem 4's t0 carries a factor 1 + delta', delta' = "
          "Theta(ln ln M/ln M), with an unstated constant: the check uses t0 without it.  "
          "A refutation here refutes our sharpening, not the paper's O(.) statement, "
          "whose constant is not given.  "
          "Expected refuted from the first run of this design (session 26, quick, 10 "
          "seeds): the entropy had moved only a small part of its total drop by t0 at "
          "either ratio and kept moving for tens of t0 (the report's details give the "
          "freeze step and the drop before it); the earlier design (a fixed freeze point at "
          "half the run, no theory call) held for any run that converged by then.  The "
          "negative control is t0 / 2 (stop 71, after a referee read: the earlier t0 x 10 "
          "moved the start later, and frozen from t0 implies frozen from 10 t0, so it could "
          "never be rejected where the check passes); while the check is refuted the "
          "control is refuted too, which says nothing more.  The positive control shows "
          "that the check passes where SGD has frozen (it places the window by step, not "
          "by the theory).  "
          "Issue 34's referee proposed testing the paper's own scaling instead (the freeze "
          "time ~ 1/eta_Y).  Not adopted, for these reasons: at a fixed ratio eta_Y/eta_Z "
          "(e.g. the ratio-10 column over eta_Z) scaling both rates by lambda is a time "
          "change of any gradient flow, so the freeze step ~ 1/eta_Y would hold for any "
          "model and tests only how close SGD is to its flow, not scan and snap; at a fixed "
          "eta_Z the Fig. 4 command's ratios 1 and 10 put ratio 1 outside Assumption 1c "
          "(eta_Y >> eta_Z), and Fig. 6's ratios 5 and 10 (M = 34, outside Theorem 1's M >> "
          "100) would need an allowance on the freeze-time ratio that the paper's O(.) does "
          "not give (every threshold would be ours).",
)
def _check_frozen(params: dict, ctx: Context, *, snap: Callable,
                  start_step: int | None = None) -> Evidence:
    res = _sgd(ns.fig4_config(_size(ctx, "fig4_seeds")), ctx)
    H = res.entropy()
    f, cfg = res.facts, res.config
    t = _sgd_time(res.steps, cfg.momentum)
    parts = []
    for ez in cfg.eta_Z:
        for ratio in cfg.ratio:
            idx = res.select(ez, ratio)
            t0 = float(snap(f.M, f.K, ez * ratio))
            if start_step is None:
                later = np.nonzero(t >= t0)[0]
                start = int(later[0]) if later.size else H.shape[1] - 1
            else:
                start = int(np.searchsorted(res.steps, start_step))
            change = np.abs(H[idx, -1] - H[idx, start])
            parts.append(over_seeds(
                f"|H(end) - H(t0)|, ratio {ratio:g}", 0.0, change, 0.01,
                "our threshold: frozen = DT entropy moves < 0.01 nats after the snap (the "
                "freeze point from the theory's t0 in heavy-ball per-sample time); t interval "
                "over seeds", confidence=_CONF,
                details={"t0": t0, "freeze_step": int(res.steps[start]),
                         "time_at_freeze_step": float(t[start]),
                         "drop_before": float(np.mean(H[idx, 0] - H[idx, start])),
                         "drop_total": float(np.mean(H[idx, 0] - H[idx, -1]))}, kind="simulation"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 16. Fig. 4 loss trace
# the authors' code, scan_snap/figure_4.log, ratio 1 (one seed): iteration -> (the printed
# loss, half a unit of its last printed digit)
FIG4_LOSS = {2: (2.368, 5e-4), 4: (0.733, 5e-4), 6: (0.161, 5e-4), 10: (0.0130, 5e-5),
             28: (6.2e-5, 5e-7), 48: (2.5e-5, 5e-7), 98: (2.2e-5, 5e-7)}


@claim(
    id="fig4_loss",
    statement="The Fig. 4 loss trace (figure_4.log, ratio 1) is reproduced: the theory's "
              "loss at t = 0 (decoder_loss, ln M = ln 34) at start, 2.37, 0.73, 0.16, "
              "0.013 at iterations 2-10 and 6.2e-5, 2.5e-5, 2.2e-5 at 28, 48, 98",
    source="Fig. 4; the authors' code, scan_snap/figure_4.log; Lemmas 5-6 at t = 0",
    kind="published-number",
    strategy=_NONE,
    theory={"shift": 0, "loss": ts.decoder_loss},
    control={"shift": 2, "loss": _wrong_loss},
    control_description="the published trace shifted by 2 iterations, and the theory's "
                        "loss with (M-1) replaced by M in Lemmas 5-6 (ln(M+1) at t = 0: "
                        "0.8 % above ln M at M = 34)",
    cost="slow",
    examples=(Example({}, via=_FIG4_VIA),),
    notes="Every printed value of the trace is judged the same way: the published value is "
          "one run, so the allowance is one run's 99 % spread over our seeds (q s, in "
          "decades) plus half a unit of its last printed digit.  Until issue 34's referee "
          "read, iterations 28 and 98 were judged against a floor of ours (below 1e-4), set "
          "with the log's values known; they are now judged against the printed values, "
          "with 48 added.  The change is the referee's; before making it we looked at "
          "quick's numbers there (this session, the quick Fig. 4 run at 7f94f19: our mean "
          "log10 loss -4.30, -4.66, -4.71 against the printed -4.21, -4.60, -4.66, seed sd "
          "0.050, 0.042, 0.044 decades over 10 seeds).",
)
def _check_loss_trace(params: dict, ctx: Context, *, shift: int, loss: Callable) -> Evidence:
    res = _sgd(ns.fig4_config(_size(ctx, "fig4_seeds")), ctx)
    idx = res.select(1.0, 1.0)
    logL = np.log10(res.loss[idx])
    L0 = float(res.loss[idx, 0].mean())
    f = res.facts
    # kind: the theory's loss at t = 0 (zero init, h = 0) against the SGD run is a
    # simulation part; the published trace's values against the run are published parts
    try:
        pred0 = _theory(lambda: float(loss(0.0, f.M, f.K, 1.0)), what="decoder_loss")
        parts = [Part("initial loss = decoder_loss(0) (ln M)", pred0, L0,
                      abs(L0 - pred0) / L0, 1e-12, "zero init: uniform softmax over M = 34 "
                      "tokens, exact up to rounding (relative)", kind="simulation")]
    except _InvalidTheory as e:
        parts = [_unusable("decoder_loss", e)]
    n = len(idx)
    for it, (pub, half) in FIG4_LOSS.items():
        k = min(it + shift, res.loss.shape[1] - 1)
        obs = logL[:, k]
        s = float(obs.std(ddof=1)) if n > 1 else 0.0
        q = t_quantile(_CONF, max(n - 1, 1))
        digits = math.log10(1 + half / pub)
        # the published trace is ONE run, not the mean: the allowance is the 99 % spread of a
        # single run about the mean (q s, from our seeds) plus the printed value's rounding;
        # the interval is on our mean (s/sqrt n)
        parts.append(tolerance_from_theory(Part.deviation(
            f"log10 loss at iteration {it}", math.log10(pub), float(obs.mean()),
            s / math.sqrt(n), q * s + digits,
            f"the published value is one run: allowed q s = {q * s:.3g} decades (99 % t spread "
            f"of one run over our {n} seeds) + {digits:.2g} (half a unit of the printed "
            "value's last digit); t interval on our mean", _CONF, dof=max(n - 1, 1),
            kind="published"),
            "the allowance is one run's spread over our seeds at the iteration the trace "
            "under test names (a shifted trace names another iteration)"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 17. Fig. 6 table
def _final_entropy(res: ns.SGDResult) -> np.ndarray:
    """DT entropy of the last record [members]: ``res.entropy()[:, -1]`` without the other
    records (the same numbers; at thorough a panel-10 ``entropy()`` over all 11 records of
    16 000 members costs about a minute of CPU and tens of GiB of temporaries)."""
    return ns.dt_entropy(res.zq[:, -1], res.facts)


FIG6_PUBLISHED_SEEDS = 10  # figure_6.log: seed=1..10


def _flat_table(panel: int, eta_Z: float) -> dict[float, tuple[float, float]]:
    """A wrong 'theory': entropy independent of eta_Y/eta_Z (the ratio-1 column everywhere)."""
    row = ns.PUBLISHED_FIG6[(panel, eta_Z)]
    return {r: row[1] for r in row}


def _published_row(panel: int, eta_Z: float) -> dict[float, tuple[float, float]]:
    return ns.PUBLISHED_FIG6[(panel, eta_Z)]


@claim(
    id="fig6_table",
    statement="The published Fig. 6 DT entropies of panel num_last = 1 (16 cells; all "
              "four panels, 64 cells, at profile thorough) are reproduced within the "
              "published means' own error (the printed +- is a sample SD over the authors' "
              "10 seeds, so each mean is uncertain by +-/sqrt(10))",
    source="Fig. 6; the authors' code, scan_snap/figure_6_data.pkl",
    kind="published-number",
    strategy=_NONE,
    theory={"table": _published_row},
    control={"table": _flat_table},
    control_description="entropy independent of eta_Y/eta_Z (ratio-1 column everywhere)",
    cost="slow",
    expected_at={"quick": "inconclusive"},
    examples=(Example({}, via=_FIG6_VIA),),
    positive=Positive({}, "the same check on the rows eta_Z = 1, 2, 3",
                      theory={"table": _published_row, "rows": (1.0, 2.0, 3.0)}),
    notes="At quick (20 seeds) the first run with this tolerance left one cell (eta_Z 0.5, "
          "ratio 1, whose seed spread in our runs exceeds the published one) inconclusive; "
          "ci's 40 seeds, fixed before, are expected to settle it.  "
          "Tolerance per cell: t(0.995, 9 dof) x (printed +-)/sqrt(10), the 99 % spread of "
          "a 10-seed mean about the true mean, plus 0.0005 for the printed 3 decimals; our own "
          "mean's noise is the interval.  No allowance for the entropy metric: an independent "
          "run of the authors' code reproduced the table with it.  The flat control cannot be "
          "rejected by the eta_Z = 3 row alone (its spreads are as large as its ratio "
          "effect); the other rows reject it.  Panels 3, 5 and 10 (M = 79, 125, 240) run at "
          "thorough only (sized for one GPU, see numerics.THOROUGH_CHUNK); an earlier run of "
          "panel 3 at 40 seeds outside the profiles came out below the published means in "
          "every cell.",
)
def _check_fig6(params: dict, ctx: Context, *, table: Callable, rows=None) -> Evidence:
    parts = []
    for panel in _size(ctx, "fig6_panels"):
        res = _sgd(ns.fig6_config(panel, _size(ctx, "table_seeds")), ctx)
        H = _final_entropy(res)
        for ez in rows or res.config.eta_Z:
            row = table(panel, ez)
            for ratio in res.config.ratio:
                idx = res.select(ez, ratio)
                mu, pm = row[ratio]
                m, _, _, se = mean_interval(H[idx], _CONF)
                tol = t_quantile(_CONF, FIG6_PUBLISHED_SEEDS - 1) * pm / math.sqrt(
                    FIG6_PUBLISHED_SEEDS) + 0.0005
                parts.append(tolerance_from_theory(Part.deviation(
                    f"num_last {panel}, eta_Z {ez:g}, ratio {ratio:g}", mu, m, se, tol,
                    "the published mean's own 99 % error: t(0.995, 9) x (printed +-, a sample "
                    "SD over the authors' seeds 1-10)/sqrt(10), + 0.0005 for 3 printed "
                    "decimals; t interval over our seeds", _CONF,
                    dof=len(idx) - 1,
                    details={"published": mu, "published_pm": pm}, kind="published"),
                    "the allowance is the published mean's own error, from the +- that the "
                    "table under test prints beside it"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 18-19. monotonicity
# Sizes of the two sign claims from a power calculation, fixed before their runs:
# effect = the published Fig. 6 mean difference of the pair (panel num_last = 1, PUBLISHED_FIG6),
# noise = the per-seed sd of our paired difference at a pilot size, decision = the 99 %
# two-sided t interval of the mean paired difference excluding 0, power 0.95.  The pilots:
# the quick profile's runs before session 26, the 20-seed panel-1 sweep (fig6_seeds, seeds
# 1-20) for the ratio pairs and the 40-seed ratio-10 column (column_seeds, seeds 1-40) for
# the eta_Z pairs; their sds below are what those runs gave (ddof = 1).
MONOTONE_CONF = _CONF
MONOTONE_POWER = 0.95
#: eta_Z -> sd of H(ratio 10) - H(ratio 2) over the 20 pilot seeds
RATIO_PILOT_SD = {0.5: 0.0229, 1.0: 0.0445, 2.0: 0.1683, 3.0: 0.3506}
#: (eta_Z a, eta_Z b) -> sd of H(a) - H(b) at ratio 10 over the 40 pilot seeds
ETAZ_PILOT_SD = {(0.5, 1.0): 0.0201, (1.0, 2.0): 0.2237, (2.0, 3.0): 0.1753}


def _power_seeds(effect: float, sd: float, confidence: float = MONOTONE_CONF,
                 power: float = MONOTONE_POWER) -> int:
    """Seeds n for which a paired mean difference ``effect`` with per-seed sd ``sd`` puts the
    two-sided ``confidence`` t interval clear of 0 with probability ``power``: the smallest
    n with effect sqrt(n)/sd >= t(confidence, n - 1) + z(power) (normal approximation of
    the t statistic's shift)."""
    if not (effect > 0 and sd > 0):
        raise ValueError(f"effect and sd must be positive, got {effect}, {sd}")
    z = float(norm.ppf(power))
    n = 2
    while effect * math.sqrt(n) / sd < t_quantile(confidence, n - 1) + z:
        n += 1
    return n


def ratio_monotone_seeds() -> dict[float, int]:
    """eta_Z -> seeds that the power calculation asks of ratio_monotone's pair (2, 10)."""
    row = ns.PUBLISHED_FIG6
    return {ez: _power_seeds(row[(1, ez)][10.0][0] - row[(1, ez)][2.0][0], sd)
            for ez, sd in RATIO_PILOT_SD.items()}


def etaz_monotone_seeds() -> dict[tuple[float, float], int]:
    """(eta_Z a, b) -> seeds that the power calculation asks of etaz_monotone's pair."""
    row = ns.PUBLISHED_FIG6
    return {(a, b): _power_seeds(row[(1, a)][10.0][0] - row[(1, b)][10.0][0], sd)
            for (a, b), sd in ETAZ_PILOT_SD.items()}


def ratio_monotone_power(profile: str) -> PowerPlan:
    """ratio_monotone's power plan: the panel-1 seeds against :func:`ratio_monotone_seeds`."""
    return _seeds_plan("monotone_seeds", max(ratio_monotone_seeds().values()), profile,
                       "ratio_monotone_seeds: each eta_Z's 99 % paired t interval clear of 0 "
                       "with power 0.95 at the published effect and the pilot's sd")


def etaz_monotone_power(profile: str) -> PowerPlan:
    """etaz_monotone's power plan: the ratio-10 column's seeds against
    :func:`etaz_monotone_seeds`."""
    return _seeds_plan("column_seeds", max(etaz_monotone_seeds().values()), profile,
                       "etaz_monotone_seeds: each step's 99 % paired t interval clear of 0 "
                       "with power 0.95 at the published effect and the pilot's sd")


def _swapped_growth(t, M, K, eta_Y, eta_Z, C0) -> float:
    """A wrong theory: B with the two learning rates swapped."""
    return ts.growth_exponent(t, M, K, eta_Z, eta_Y, C0)


def _negated_growth(t, M, K, eta_Y, eta_Z, C0) -> float:
    """A wrong theory: -B (the sign of Theorem 4's growth flipped)."""
    return -ts.growth_exponent(t, M, K, eta_Y, eta_Z, C0)


def _paired(res: ns.SGDResult, a: tuple[float, float], b: tuple[float, float]) -> np.ndarray:
    """H(b) - H(a) per seed (common random numbers: same init and batches)."""
    H = _final_entropy(res)
    return H[res.select(*b)] - H[res.select(*a)]


def _sign_part(name: str, diff: np.ndarray, sign: int, model: str) -> Part:
    """Prediction sign * E[diff] > 0 per seed (paired): the shared error model
    :func:`verify.error_models.signed_over_seeds` (error = -mean, tolerance 0), so the report
    shows the deciding end of the interval rather than a clipped 0."""
    return signed_over_seeds(name, sign * np.asarray(diff, dtype=float), model,
                             confidence=_CONF, kind="simulation")


def _predicted_entropy_sign(res: ns.SGDResult, a: tuple[float, float],
                            b: tuple[float, float], growth: Callable) -> int:
    """Theorem 4's sign of H(b) - H(a) for (eta_Z, ratio) cells a, b of an SGD run: a larger
    B_n means sparser attention, a lower DT entropy, so the sign is that of B(a) - B(b).

    B at the run's end in per-sample time, with momentum mu's heavy-ball long-run step:
    t = steps/(1 - mu) (the rates are the learning rates); K and M of the run's data; C0 = 1
    (the order of B between two rate pairs does not depend on C0: B is increasing in Gamma).
    """
    f, cfg = res.facts, res.config
    t = cfg.steps / (1.0 - cfg.momentum)
    Ba = growth(t, f.M, f.K, a[0] * a[1], a[0], 1.0)
    Bb = growth(t, f.M, f.K, b[0] * b[1], b[0], 1.0)
    return int(np.sign(Ba - Bb))


@claim(
    id="ratio_monotone",
    statement="At fixed eta_Z the final DT entropy orders as Theorem 4 (c)'s B at the run's "
              "end orders the ratios 2 and 10 (B larger at ratio 2, so the entropy is higher "
              "at 10), every published eta_Z",
    source="Theorem 4 (c), Fig. 6",
    kind="reduced-vs-full",
    strategy=_NONE,
    theory={"growth": ts.growth_exponent},
    control={"growth": _swapped_growth},
    control_description="B with eta_Y and eta_Z swapped (the opposite order)",
    qualitative="Theorem 4 (c): the sign of a paired entropy difference against the sign "
                "of B's difference between the two cells; a scale of B moves no sign",
    cost="slow",
    examples=(Example({}, via=_FIG6_VIA),),
    power=ratio_monotone_power,
    # from the power plan, not from a run: the smoke size's 8 seeds are fewer than eta_Z = 2
    # and 3 need; the positive control's eta_Z = 0.5 and 1 need 5 and 6
    expected_at={"test": "inconclusive"},
    positive=Positive({}, "the same check at eta_Z = 0.5 and 1",
                      theory={"growth": ts.growth_exponent, "eta_Zs": (0.5, 1.0)}),
    notes="Seeds from the power calculation above (ratio_monotone_seeds: effect = the "
          "published ratio-10 minus ratio-2 mean, noise = the 20-seed pilot's paired sd, 99 % "
          "interval, power 0.95): 5, 6, 65 and 163 seeds at eta_Z = 0.5, 1, 2, 3; quick runs "
          "the largest, 163 (ratios 2 and 10 only).  Before, the seeds had been raised until "
          "the claim held, and at 20 and 40 seeds eta_Z = 2 and 3 stayed inconclusive.  The "
          "seed spread is heavy-tailed (a few seeds reverse the sign), so the t interval's "
          "normal approximation is the weak point; the paired difference keeps the common "
          "init and batches.",
)
def _check_ratio_mono(params: dict, ctx: Context, *, growth: Callable,
                      eta_Zs=None) -> Evidence:
    res = _sgd(ns.fig6_column_config(1, _size(ctx, "monotone_ratios"),
                                     _size(ctx, "monotone_seeds")), ctx)
    parts = []
    for ez in eta_Zs or res.config.eta_Z:
        d = _paired(res, (ez, 2.0), (ez, 10.0))
        sign = _predicted_entropy_sign(res, (ez, 2.0), (ez, 10.0), growth)
        parts.append(_sign_part(f"H(ratio 10) - H(ratio 2) at eta_Z {ez:g}", d, sign,
                                "Theorem 4 (c): sign only, no allowance; paired seeds, t interval"))
    return Evidence(tuple(parts))


@claim(
    id="etaz_monotone",
    statement="At eta_Y/eta_Z = 10 the final DT entropy orders as Theorem 4 (b)'s B at the "
              "run's end orders eta_Z = 0.5, 1, 2, 3 (B grows with eta_Z, so the entropy "
              "falls)",
    source="Theorem 4 (b), Fig. 6",
    kind="reduced-vs-full",
    strategy=_NONE,
    theory={"growth": ts.growth_exponent},
    control={"growth": _negated_growth},
    control_description="the sign of B flipped (larger rates, denser attention)",
    qualitative="Theorem 4 (b): the sign of a paired entropy difference against the sign "
                "of B's difference between the two cells; a scale of B moves no sign",
    cost="slow",
    examples=(Example({}, via=_FIG6_VIA),),
    power=etaz_monotone_power,
    # from the power plan, not from a run: the smoke size's 8 seeds are fewer than the steps
    # 1 -> 2 and 2 -> 3 need; the step 0.5 -> 1 (the positive control) needs 8
    expected_at={"test": "inconclusive"},
    positive=Positive({}, "the same check on the step eta_Z 0.5 -> 1 alone, which the power "
                          "calculation decides at 8 seeds",
                      theory={"growth": ts.growth_exponent, "pairs": ((0.5, 1.0),)}),
    notes="Seeds from the power calculation above (etaz_monotone_seeds: effect = the "
          "published ratio-10 mean difference of the pair, noise = the 40-seed pilot's paired "
          "sd, 99 % interval, power 0.95): 8, 41 and 100 seeds for the steps 0.5 -> 1, 1 -> 2 "
          "and 2 -> 3; quick runs the largest, 100, on the ratio-10 column.  Before, the seeds "
          "had been raised to 40 after 20 left the step 2 -> 3 inconclusive.  At smoke size "
          "(8 seeds) it may come out inconclusive.",
)
def _check_etaz_mono(params: dict, ctx: Context, *, growth: Callable, pairs=None) -> Evidence:
    res = _column_run(ctx)
    parts = []
    for a, b in pairs or ((0.5, 1.0), (1.0, 2.0), (2.0, 3.0)):
        d = _paired(res, (a, 10.0), (b, 10.0))
        sign = -_predicted_entropy_sign(res, (a, 10.0), (b, 10.0), growth)
        parts.append(_sign_part(f"H(eta_Z {a:g}) - H(eta_Z {b:g}) at ratio 10", -d, sign,
                                "Theorem 4 (b): sign only, no allowance; paired seeds, t interval"))
    return Evidence(tuple(parts))


# ---------------------------------------------------------------------- 20. population drift
_EXPONENT_TOL = 0.25
_EXPONENT_MODEL = ("our threshold: Eqn 11 is exact only for the reduced dynamics; the statistic "
                   "is the relative error of chi's exponent read at a time t, "
                   "|ln(r(t)/r(0)) / ln chi(t) - 1|, and 0.25 is half the relative distance from "
                   "the exponent 2 to the nearest wrong integer exponents 1 and 3 (the data "
                   "must tell the exponent)")


#: Eqn 11's checks read r_{l0/l}(t) only as r(t)/r(0) and c~ only through the ratio
#: c~_l0/c~_l (and the argmax that names l0): a positive multiple of either cancels (of r
#: its sign too; a negative c~ is inadmissible, _attention), an equivalent mutant (tdcheck
#: mutate --resolution tilts them instead)
_EQN11_SHAPE_ONLY = {
    "relative_gain": "Eqn 11 is judged as r(t)/r(0): a free multiple of r cancels",
    "unnormalised_attention": "c~ enters only as c~_l0/c~_l and through the argmax naming "
                              "l0: a free multiple of c~ cancels",
}
#: the population flow's window ends at 100 t0 (theory.scan_snap.snap_time, through
#: scan_time): t0 only places the comparison, and a window fixed by the data (10 K M/eta_Y)
#: gave the same verdicts (theorem3_population's notes)
_EQN11_PLACEMENT = {
    "snap_time": "t0 only places the window's end (100 t0), whose last decade of ln chi "
                 "is where the exponent is read; a window end fixed by the data (10 K "
                 "M/eta_Y) gave the same verdicts (at the end-only statistic of that time)",
    "scan_time": "through snap_time = 2 t0' only: places the window's end",
}


#: the population flow's exponent is read at every time of the window's last decade of ln chi
#: (|ln chi(t)| >= |ln chi(T)| / EXPONENT_DECADE): Eqn 11 holds at every t, and there the
#: logits have moved by at least a tenth of their end value, far above the flow's rtol 1e-9
EXPONENT_DECADE = 10.0


def _exponent_error(grown: np.ndarray, chi: np.ndarray, along: bool) -> float:
    """``|ln(r(t)/r(0)) / ln chi(t) - 1|`` at the last time, or (``along``) the worst over
    the times of the window's last decade of ln chi (:data:`EXPONENT_DECADE`), the last one
    included; ``grown`` and ``chi`` are [T] from t = 0."""
    lc = np.log(chi)
    if not along:
        return float(np.abs(np.log(grown[-1]) / lc[-1] - 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        sel = np.abs(lc) >= np.abs(lc[-1]) / EXPONENT_DECADE
        sel[0] = False
        sel[-1] = True
        return _worst(*np.abs(np.log(grown[sel]) / lc[sel] - 1.0))


def _eqn11_errors(zq: np.ndarray, facts: ns.Facts, power: float, along: bool = False
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per run, worst over DT pairs (top DT l0 of each class vs each other DT l):

    * the relative error of Eqn 11's exponent, ``|ln(r_t/r_0) / ln chi_t - 1|`` (chi from
      :func:`theory.scan_snap.attention_gain`), at the last time, or (``along``) worst
      over the window's last decade of ln chi (:func:`_exponent_error`);
    * the largest ``|ln r(t)/(r(0) chi(t))|`` over times.

    ``zq`` [runs, T, K, M]; returns two arrays [runs].
    """
    expo = np.zeros(zq.shape[0])
    band = np.zeros(zq.shape[0])
    for n, d in enumerate(facts.dts):
        z = zq[:, :, n]
        ct = _attention(facts.probs[n], z)
        d = list(d)
        # the dominant token l0 of each run (r_{l0/l}(0) > 0 for every other DT l, Theorem
        # 3; theory.scan_snap.winners at the run's start): from Z(0) = 0 the largest
        # P(l|n), from a random Z(0) the prior may reorder tokens of similar P ("initial
        # value as prior")
        for run in range(zq.shape[0]):
            l0 = d[_dominant(facts.probs, zq[run, 0], n, d)]
            one = slice(run, run + 1)
            chi = _gain(z[one, :, l0], z[one, :1, l0], power)
            for j in d:
                if j == l0:
                    continue
                r = _relative_gain(ct[one, :, l0], ct[one, :, j])
                grown = r / r[:, :1]
                if not np.all(grown[np.isfinite(grown)] > 0):
                    # the order of c~ changed along the run: Eqn 11 (r(0) chi > 0) fails
                    band[run] = expo[run] = math.inf
                    continue
                lr = np.log(grown[:, 1:] / chi[:, 1:])
                band[run] = _worst(band[run], float(np.abs(lr).max()))
                expo[run] = _worst(expo[run], _exponent_error(grown[0], chi[0], along))
    return expo, band


@claim(
    id="theorem3_population",
    statement="In Theorem 1's region (M >> 100, Assumption 2), Eqn 11 r(t) = r(0) chi(t), "
              "chi = e^{2 dz}, holds in the exact population flow for eta_Y/eta_Z >= 5 to "
              "the point that its exponent is told: the exponent of chi that r(t)/r(0) shows "
              "is within 25 % of 2 at every time of the window's last decade of ln chi (Dataset2's generator with one query, two next tokens, the authors' "
              "10 CTs and 120 DTs per class: M = 253, K = 2), from Z(0) = 0 and from Fig. "
              "6's random Z(0) (Y(0) = 0; l0 the token with the largest c~(0))",
    source="Theorem 3 (Eqn 11), resting on Eqn 98 and Theorem 1; Section 5's 'initial "
           "value as prior' (r(0) carries z(0))",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"ratio": st.floats(5.0, 20.0),
                                    "num_unique": st.just(REGION_DTS),
                                    "z_init_seed": st.one_of(st.none(), st.integers(1, 10))}),
    theory={"power": 2.0},
    control={"power": 3.0},
    control_description="chi = e^{3 dz} (the next integer exponent)",
    shape_only=_EQN11_SHAPE_ONLY,
    placement_only=_EQN11_PLACEMENT,
    examples=(Example({"ratio": 10.0, "num_unique": REGION_DTS},
                      via="Fig. 4's larger ratio eta_Y/eta_Z = 10, M = 253"),
              Example({"ratio": 5.0, "num_unique": REGION_DTS},
                      via="boundary case: the smallest ratio of the region, M = 253"),
              Example({"ratio": 10.0, "num_unique": REGION_DTS, "z_init_seed": 1},
                      via="Fig. 6's random init of Z (nn.Linear's U(-1/sqrt M, 1/sqrt M), "
                          "seed 1), Y(0) = 0, ratio 10, M = 253")),
    notes="Issue 34 item 2: Theorem 3 was checked only from Z(0) = 0, where terms that "
          "vanish at zero initialisation go untested; the third pinned example (and half "
          "the drawn ones) start Z from Model2's random init as the authors' Fig. 6 runs "
          "do, with Y(0) = 0 kept (the decoder's reduction, Lemmas 3-6, starts there), and "
          "l0 is the token with the largest c~(0) (Theorem 3's dominant token; from Z(0) = 0 "
          "the largest P).  Expected 'holds' there too, from the derivation (the DT "
          "invariant 1/c~_l^2 - 1/c~_l'^2 does not depend on z(0)), set before its first "
          "run.  Replaces a factor-2 band on r/(r(0) chi), which chi = e^{3 dz} also passed at "
          "every ratio: the band cannot tell the exponent (the band's value is kept in the "
          "details).  Region (issue 23): Eqn 11 rests on Eqn 98, i.e. on Theorem 1, whose "
          "M >> 100 and Assumption 2 Dataset2 at num_last = 1 (M = 33, |lambda_1| = 0.72 > "
          "1/K = 0.5 at Z = 0) and at num_last = 3, 5, 10 (K = 6, 10, 20: M < K^2 at 5 and "
          "10, |lambda_1| >> 1/K) do not meet; the region's data keep one query and the "
          "authors' 10 CTs and grow the DTs per class to 120 (reduced_magnitude's "
          "REGION_DTS; M = 253, |lambda_1| = 0.183 in [sqrt(6/M), 1/K]).  The flow solves in "
          "about 1 s at M = 240.  Expected 'holds' from Theorem 3, set before this region's "
          "first run; the details give Assumption 2's numbers at Z = 0.  What the window "
          "holds (issue 34, runs of this check's flow this session; flow code unchanged since 7c6aa23): at the first "
          "example the winner's chi(T) - 1 is 1.2e-3 at T = 100 t0, so Eqn 11 is judged in "
          "its near-linear range (the DT logits move by about 6e-4; the flow's rtol 1e-9 "
          "resolves that), and the exponent statistic, a ratio of two small logarithms, is "
          "ill-conditioned: a x 1.5 scale of c~ (unnormalised_attention, which enters only "
          "in ratios) moved it by 3e-10 relative, rounding amplified about 10^6, enough "
          "for tdcheck mutate --resolution to count as a move.  A window fixed by the data "
          "instead of t0 (10 K M/eta_Y) gave the same verdicts: exponent errors 0.045, "
          "0.088, 0.047 against 0.040, 0.078, 0.041 at 100 t0 (tolerance 0.25); the window "
          "was kept.  Resolution (tdcheck mutate scan_snap --resolution, quick, commit "
          "fdfe441): 1 %, by attention_gain and by unnormalised_attention's tilt (declared "
          "shape_only: c~ enters only as c~_l0/c~_l); t0 (snap_time, through scan_time) is "
          "declared placement_only and is resolved at 1 % by decoder_full_model; "
          "relative_gain's tilt moves no simulation number (the exponent reads r only at the "
          "window's two ends, whose ratio a tilt over 21 points leaves as it is), which "
          "that run left out of the rung; the engine now keeps such a function in it "
          "(tilt_unseen, > 50 %), and on its rerun (--resolution-only, quick, commit "
          "b17f70e) the claim's resolution is > 50 %, held by relative_gain, until its "
          "statistic reads r between the ends.  Because chi - 1 is about 1e-3 here, attention_gain's "
          "1 % says that a whole-output slip of chi, or a tilt of c~, is seen, not that the "
          "exponent is told to 1 %: the part tells it to 25 %, as the statement says.  Stop 68 "
          "(design change, registered before its first run): the exponent is read at every "
          "time of the window's last decade of ln chi (|ln chi(t)| >= |ln chi(T)| / 10, "
          "EXPONENT_DECADE: the last 5 of the 21 times where chi - 1 grows linearly in t, the "
          "geometric grid's step being 1.63 to 1.76 in t at the ratios 20 to 5), not at the end alone: "
          "Eqn 11 holds at every t, and a statistic of the ends cannot see relative_gain "
          "between them.  Expected stays holds (Theorem 3), set before the run; the "
          "statistic is a maximum over a set that contains the old one, so it can only "
          "grow.  Its first quick run (stop 68, the code of this change): holds, worst "
          "0.0796 of 15 examples (ratio 5.12, Z(0) random seed 1; the same value as that "
          "example's end-only statistic, in the details), control (chi = e^{3 dz}) 0.360.  "
          "Resolution at this statistic (tdcheck mutate scan_snap --resolution, quick, "
          "commit 46c6699): 1 %, relative_gain's tilt now seen at 1 % with attention_gain "
          "and unnormalised_attention's tilt; t0 placement_only as before.",
)
@claim(
    id="theorem3_population_small_M",
    statement="Our strengthening, outside Theorem 1's region (Dataset2 at num_last = 1 as "
              "the authors run it, M = 33, 10 CTs): Eqn 11 r(t) = r(0) chi(t), chi = "
              "e^{2 dz}, holds in the exact population flow for eta_Y/eta_Z >= 5 to the "
              "point that its exponent is told: the exponent of chi that r(t)/r(0) shows is "
              "within 25 % of 2 at every time of the window's last decade of ln chi",
    source="Theorem 3 (Eqn 11); the size is ours (Theorem 1 assumes M >> 100)",
    kind="reduced-vs-full",
    strategy=st.fixed_dictionaries({"ratio": st.floats(5.0, 20.0)}),
    theory={"power": 2.0},
    control={"power": 3.0},
    control_description="chi = e^{3 dz} (the next integer exponent)",
    shape_only=_EQN11_SHAPE_ONLY,
    placement_only=_EQN11_PLACEMENT,
    expected="refuted",
    examples=(Example({"ratio": 10.0}, via="Fig. 4's larger ratio eta_Y/eta_Z = 10"),
              Example({"ratio": 5.0}, via="boundary case: the smallest ratio of the region")),
    positive=Positive({"ratio": 20.0}, "the same check at eta_Y/eta_Z = 20, deeper in "
                                       "Assumption 1c's eta_Y >> eta_Z"),
    notes="Formerly theorem3_population; split off (issue 23) because M = 33 lies below "
          "Theorem 1's M >> 100 (and |lambda_1(E)| = 0.72 > 1/K at Z = 0), on which Eqn 98 "
          "rests: a statement of ours beyond the paper's region.  The expectation was "
          "first 'holds'; the first run of this restated check (pinned examples) found the "
          "exponent's error above 25 % at eta_Y/eta_Z = 5 and at 10, so it is a finding "
          "at the authors' data size.  The report lists the failed draws.  Since stop 68 the "
          "exponent is read as in theorem3_population, at every time of the window's last "
          "decade of ln chi (a maximum over a set containing the end: a refutation at the end "
          "stays one); its first quick run at that statistic (stop 68): refuted, worst "
          "0.325, the same as its end-only value (details), and the positive control at "
          "ratio 20 passes at 0.1025.",
)
def _check_pop_drift(params: dict, ctx: Context, *, power: float) -> Evidence:
    data = _region_data(params)
    facts = ns.make_facts(data)
    eta_Y = params["ratio"]
    t_end = 100 * _t0(facts.M, facts.K, eta_Y)
    tev = tuple(np.r_[0.0, np.geomspace(1e-2, t_end, 20)])
    cfg = ns.FlowConfig(data=data, eta_Y=eta_Y, eta_Z=1.0, t_eval=tev,
                        z_init_seed=params.get("z_init_seed"))
    flow = _flow(cfg, ctx)
    expo, band = _eqn11_errors(flow.zq[None], facts, power, along=True)
    at_end, _ = _eqn11_errors(flow.zq[None], facts, power)
    e = float(expo[0])
    return Evidence((Part(
        "Eqn 11 exponent, relative error (population flow)", 0.0, e, e, _EXPONENT_TOL,
        _EXPONENT_MODEL + ", worst over the window's last decade of ln chi (|ln chi(t)| >= "
        "|ln chi(T)| / 10, the last time included: Eqn 11 holds at every t); deterministic "
        "flow (rtol 1e-9): no interval",
        details={"Assumption 2 at Z(0)": _assumption2(facts, flow.zq[0])}, kind="simulation"),),
        {"max_abs_log_band": float(band[0]), "exponent_error_at_end": float(at_end[0])})


@claim(
    id="theorem3_sgd",
    statement="Our strengthening, outside Theorem 1's region (the Fig. 4 command's data: "
              "M = 34 < 100, batch 128 of L = 128 tokens, 100 momentum steps, not the "
              "theorem's T -> infinity per-sample flow): Eqn 11 r(t) = r(0) chi(t) under SGD "
              "at eta_Y/eta_Z = 10, per run: the mean over runs of the fitted exponent's "
              "relative error is within 25 % of 2 (our threshold), and the mean over runs of "
              "each run's largest |ln r/(r(0) chi)| is within ln 2 (a factor 2, our "
              "threshold)",
    source="Theorem 3 (Eqn 11), Fig. 4; the data size, the SGD setting and both thresholds "
           "are ours (Theorem 1, on which Eqn 11 rests, assumes M >> 100 and Assumption 2)",
    kind="reduced-vs-full",
    strategy=_NONE,
    theory={"power": 2.0, "source": "sgd"},
    control={"power": 3.0, "source": "sgd"},
    control_description="chi = e^{3 dz} (the next integer exponent)",
    shape_only=_EQN11_SHAPE_ONLY,
    cost="slow",
    expected="refuted",
    examples=(Example({}, via=_FIG4_VIA),),
    positive=Positive({"flow_ratio": 100.0},
                      "the same check on the exact population flow (Fig. 4 data) at "
                      "eta_Y/eta_Z = 100, deep in Assumption 1c (at 10 the flow itself "
                      "misses the exponent band, as theorem3_population finds)",
                      theory={"power": 2.0, "source": "flow"}),
    notes="Not the paper's statement: Theorem 3 is proved for the reduced dynamics in "
          "Theorem 1's region (M >> 100, Assumption 2, T -> infinity), and the Fig. 4 data "
          "(M = 34) lie outside it, so a refutation here refutes our strengthening, not "
          "Theorem 3.  Where the thresholds come from (both ours, not the paper's): 25 % is "
          "half the relative distance from the exponent 2 to the nearest wrong integer "
          "exponents 1 and 3, so that the part tells the exponent (where Eqn 11 holds "
          "exactly, the control's e^{3 dz} gives |2/3 - 1| = 1/3); the factor 2 (ln 2 on |ln r/(r(0) chi)|) is the band of the "
          "earlier finding that this claim restates, a full-model allowance that no "
          "derivation gives.  The in-region test of Eqn 11 is theorem3_population (M = 253, "
          "exact population flow).  "
          "Restated per run with an interval over runs (a maximum over runs grows with their "
          "number).  Expected refuted from the earlier finding that several Fig. 4 runs at "
          "ratio 10 leave the factor-2 band: the band part is what that finding is about; the "
          "exponent part is new in this restatement and its outcome was not known when the "
          "expectation was set.  Runs: the 40 of order_seeds (the same Fig. 4 command, "
          "already run for scan_order_sgd), chosen because at 10 runs the 99 % t half-width "
          "of either per-run statistic, from the first run of this check, was larger than "
          "its distance to the threshold; the number was fixed before the 40-run result.  "
          "Resolution (tdcheck mutate scan_snap --resolution, quick, commit fdfe441): 50 %, "
          "attention_gain and the tilts of relative_gain and unnormalised_attention alike "
          "(all seen only by the band part): what limits it is the thresholds of this "
          "strengthening (25 % on the exponent, a factor 2 on the band), not noise, so no "
          "seed count reaches 5 %; a finer resolution would need a derived model allowance "
          "for SGD at M = 34, which nothing in the paper gives.",
)
def _check_eqn11_runs(params: dict, ctx: Context, *, power: float, source: str) -> Evidence:
    """Eqn 11 per run with eta_Y/eta_Z = 10: SGD (Fig. 4 command) or the population flow."""
    if source == "sgd":
        res = _sgd(ns.fig4_config(_size(ctx, "order_seeds")), ctx)
        zq, facts = res.zq[res.select(1.0, 10.0)], res.facts
    else:
        data = ns.DataConfig(num_last=2, num_next_per_last=1)
        facts = ns.make_facts(data)
        tev = tuple(np.r_[0.0, np.geomspace(1e-2, 1000.0, 20)])
        cfg = ns.FlowConfig(data=data, eta_Y=float(params.get("flow_ratio", 10.0)), eta_Z=1.0,
                            t_eval=tev)
        flow = _flow(cfg, ctx)
        zq = flow.zq[None]
    expo, band = _eqn11_errors(zq, facts, power)
    why = "; t interval over runs" if source == "sgd" else ""
    return Evidence((
        over_seeds(f"Eqn 11 exponent, relative error per run ({source})", 0.0, expo,
                   _EXPONENT_TOL, _EXPONENT_MODEL + ", at the last time" + why,
                   confidence=_CONF, kind="simulation")
        if len(expo) > 1 else Part(f"Eqn 11 exponent, relative error per run ({source})",
                                   0.0, float(expo[0]), float(expo[0]), _EXPONENT_TOL,
                                   _EXPONENT_MODEL + ", at the last time; deterministic flow: "
                                   "no interval", kind="simulation"),
        over_seeds(f"largest |ln r/(r(0) chi)| per run ({source})", 0.0, band, math.log(2),
                   "our threshold: a factor 2 allowed for the full model at eta_Y/eta_Z = 10"
                   + why, confidence=_CONF, kind="simulation")
        if len(band) > 1 else Part(f"largest |ln r/(r(0) chi)| per run ({source})", 0.0,
                                   float(band[0]), float(band[0]), math.log(2),
                                   "our threshold: a factor 2; deterministic flow", kind="simulation"),
    ), {"per_run_exponent_error": expo.tolist(), "per_run_band": band.tolist()})


# ---------------------------------------------------------------------- 21. residual (open)
@claim(
    id="residual_open",
    statement="Open (reviewers): with a residual connection, Section 7's "
              "LN(LN(u~) + u_q) (first example) or the authors' Model2 flag LN(u~ + e_q) "
              "(second), do scan and snap survive? Hypothesis: on one shared query the "
              "residual adds the same "
              "one-hot to every class, so CTs still fall, DT mass rises, the DT entropy "
              "drops and then freezes within the 100 iterations.",
    source="Section 7 (residual connection); a reviewers' question",
    kind="open-question",
    # a drawn example (thorough draws slow claims too) is one of the two residual forms
    strategy=st.fixed_dictionaries({"residual": st.sampled_from(("paper", "model2"))}),
    theory={"signs": ts.predicted_drift_signs},
    control={"signs": _swapped_signs},
    control_description="Theorem 2 with the CT sign swapped",
    cost="slow",
    expected="open",
    examples=(Example({"residual": "paper"},
                      via="Section 7's form on the Fig. 4 protocol, one shared query (the "
                          "paper has no residual run)"),
              Example({"residual": "model2"},
                      via="the authors' Model2 residual flag (model2.residual=true), same "
                          "protocol")),
    positive=Positive({"residual": False}, "the same check without the residual connection"),
)
def _check_residual(params: dict, ctx: Context, *, signs: Callable) -> Evidence:
    """Scan and snap under SGD on one shared query (Fig. 4 protocol), residual on or off.

    Per-token DT signs are not testable here: the lowest-P DTs appear ~0.8 times per sequence
    and their drift is below the SGD noise, so DTs are tested as the class's total DT mass.
    """
    residual = params["residual"]
    f = ns.make_facts(ns.residual_config(1, residual).data)
    P = f.probs[:, : f.n_context]
    try:
        pred = _sign_list(_theory(signs, P, what="the drift-sign rule"), P.shape[1],
                          "drift signs")
    except _InvalidTheory as e:
        return _invalid(e)
    res = _sgd(ns.residual_config(_size(ctx, "fig4_seeds"), residual), ctx)
    early = 10  # first 10 % of the 100 iterations
    dz = res.zq[:, early, 0, : f.n_context] - res.zq[:, 0, 0, : f.n_context]
    _, ct = _support_types(P)  # the CTs of P's support, whatever the theory calls them
    ct_right = float(np.mean(np.sign(dz[:, ct]) == pred[ct])) if ct.any() else 1.0
    c = ns.attention(res.zq[:, [0, early]], f)
    dt_mass = np.stack([c[:, :, n, list(d)].sum(-1) for n, d in enumerate(f.dts)], axis=-1)
    dt_up = float(np.mean(dt_mass[:, 1] > dt_mass[:, 0]))
    H = res.entropy()
    drop = float(np.mean(H[:, 0] - H[:, -1]))
    half = (H.shape[1] - 1) // 2
    moved = float(np.max([np.mean(np.abs(H[res.select(1.0, r), -1] - H[res.select(1.0, r), half]))
                          for r in res.config.ratio]))
    noise = "SGD noise: 5 % of (seed, token) pairs may go against the mean drift (our threshold)"
    return Evidence((
        Part("CT logits move with the predicted sign over the first 10 steps", 1.0, ct_right, 1 - ct_right, 0.05, noise, kind="simulation"),
        Part("class DT mass rises over the first 10 steps", 1.0, dt_up, 1 - dt_up, 0.05, noise, kind="simulation"),
        Part("scan: DT entropy drops by >= 0.02", 0.02, drop, max(0.0, 0.02 - drop), 0.0,
             "a scan moves the DT entropy (Fig. 4 drops 0.07-0.21 nats)", kind="simulation"),
        Part("snap: |H(end) - H(half)| < 0.01", 0.0, moved, moved, 0.01,
             "our threshold: frozen = moves < 0.01 nats in the second half (worst ratio)", kind="simulation"),
    ), {"entropy_drop": drop, "final_entropy": float(np.mean(H[:, -1]))})


# ---------------------------------------------------------------------- the claims
def claims() -> list[Claim]:
    """The scan_snap row's claims, in source order."""
    return declared(__name__)
