"""The optimiser-comparison checks (claims 7-11) on synthetic runs with known orderings.

The real runs take minutes (they are `slow` in tests/test_verify_claims.py and run in
`tdcheck verify`); here each check and its control see a run whose answer is known, so a
check that could not fail, or a control that could not be rejected, is caught in CI.
"""

import numpy as np
import pytest

from verify import linear_attention as vl

STEPS = np.arange(0, 1251, 50)


def _synthetic(adam_better: bool) -> dict:
    """Two seeds, members ordered (sgdm, adam, sgdm, adam)."""
    good, bad = np.exp(-STEPS / 400.0), np.exp(-STEPS / 800.0)
    sgdm, adam = (bad, good) if adam_better else (good, bad)
    r_small, r_large = np.array([10.0, 12.0]), np.array([30.0, 40.0])
    r_s, r_a = (r_large, r_small) if adam_better else (r_small, r_large)
    smooth_small, smooth_large = np.full(25, 0.1), np.full(25, 2.0)
    s_s, s_a = (smooth_large, smooth_small) if adam_better else (smooth_small, smooth_large)
    return {
        "eval_steps": STEPS,
        "eval_loss": np.stack([sgdm, adam, sgdm * 1.01, adam * 1.01]),
        "hess_steps": np.array([750, 1250]),
        "r_diag": np.stack([r_s, r_a, r_s, r_a]),
        "r_eig": np.stack([r_s, r_a, r_s, r_a]) * 3,
        "init_gap": 0.0,
        "smooth_steps": STEPS[:-1],
        "smooth": np.stack([s_s, s_a, s_s, s_a]),
    }


@pytest.mark.parametrize("adam_better", [True, False])
def test_ordering_checks_and_controls_are_complementary(adam_better):
    run = _synthetic(adam_better)
    evidence = {
        "adam": (vl._adam_gap(run, 1, "x"), vl._adam_gap(run, -1, "x")),
        "condition": (vl._condition_ratio(run, 1, "x"), vl._condition_ratio(run, -1, "x")),
        "smooth": (vl._smoothness(run, 1, "x"), vl._smoothness(run, -1, "x")),
    }
    for name, (check, control) in evidence.items():
        check = check if isinstance(check, list) else [check]
        control = control if isinstance(control, list) else [control]
        assert all(ev.passed for ev in check) is adam_better, name
        assert any(not ev.passed for ev in control) is adam_better, name
    assert evidence["condition"][0][0].details["definitions_agree"]


def test_adam_gap_tolerates_a_few_wrong_checkpoints_but_not_many():
    run = _synthetic(True)
    loss = run["eval_loss"].copy()
    late = np.flatnonzero(STEPS >= 500)
    loss[1::2, late[:1]] = loss[0::2, late[:1]] * 1.5  # one wrong checkpoint of 16
    assert vl._adam_gap({**run, "eval_loss": loss}, 1, "x").passed
    loss[1::2, late[:4]] = loss[0::2, late[:4]] * 1.5  # four of 16: 25%
    assert not vl._adam_gap({**run, "eval_loss": loss}, 1, "x").passed


def test_smoothness_with_non_positive_reference_fails():
    run = _synthetic(True)
    run["smooth"] = -np.abs(run["smooth"])
    assert not vl._smoothness(run, 1, "x").passed


def test_tail_check_separates_pareto_from_gaussian_norms_and_not_equal_laws():
    rng = np.random.default_rng(0)
    pareto = rng.pareto(3.0, 1000) + 1.0  # tail index 3
    light = np.linalg.norm(rng.normal(size=(1000, 150)), axis=1)  # chi_150: very light
    assert vl._tail_evidence(pareto, light, "x").passed
    assert not vl._tail_evidence(light, pareto, "x").passed  # the control ordering
    twin = np.linalg.norm(rng.normal(size=(1000, 150)), axis=1)
    assert not vl._tail_evidence(twin, light, "x").passed  # same law: no separation


def test_generalised_smoothness_check_reads_the_trend():
    rng = np.random.default_rng(1)
    g = np.exp(rng.normal(size=(4, 25)))
    run = {"grad_norm": g, "smooth": g**0.8 * np.exp(0.1 * rng.normal(size=g.shape))}
    assert vl._generalised(run, 1, "x").passed and not vl._generalised(run, -1, "x").passed
    run["smooth"] = 1 / run["smooth"]
    assert not vl._generalised(run, 1, "x").passed and vl._generalised(run, -1, "x").passed
    run["smooth"] = np.exp(rng.normal(size=g.shape))  # no association: neither passes
    assert not vl._generalised(run, 1, "x").passed and not vl._generalised(run, -1, "x").passed
