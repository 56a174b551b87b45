"""The three-way level reading of markov.multi_state (verify/markov.py): bands and
classification on synthetic loss paths."""

from types import SimpleNamespace

import numpy as np

from verify import markov as vm


def _run(paths, se=1e-5):
    paths = np.asarray(paths, dtype=float)
    return SimpleNamespace(steps=np.arange(paths.shape[1]) * 100,
                           eval_loss=paths, eval_se=np.full_like(paths, se))


def test_band_widens_below_by_the_second_half_drop_and_above_to_the_previous_record():
    # seed 0 settled at 1.0; seed 1 still falling (drop 0.02 over the second half);
    # seed 2 just leaving 1.0 (last record 0.9999)
    res = _run([[1.0] * 5, [1.05, 1.04, 1.03, 1.02, 1.01], [1.0, 1.0, 1.0, 1.0, 0.9999]])
    lower, upper = vm._seed_bands(res)
    z = 2.5758293035489004
    assert np.allclose(lower, [1.0 - z * 1e-5, 1.01 - 0.02 - z * 1e-5,
                               0.9999 - 0.0001 - z * 1e-5])
    assert np.allclose(upper, [1.0 + z * 1e-5, 1.02 + z * 1e-5, 1.0 + z * 1e-5])
    # the falling seed may still reach 1.0: its band holds it
    at = vm._classify(res.eval_loss[:, -1], lower, upper, {"a": 1.0, "b": 0.5})
    assert at == ["a", "a", "a"]
    # settled over its second half at 1.1: at neither
    flat = _run([[1.2, 1.15, 1.1, 1.1, 1.1]])
    assert vm._classify(flat.eval_loss[:, -1], *vm._seed_bands(flat), {"a": 1.0}) == [None]


def test_a_seed_between_the_levels_is_at_neither_not_at_the_nearer():
    res = _run([[1.62, 1.61, 1.6016, 1.6016, 1.6016]])
    lower, upper = vm._seed_bands(res)
    assert vm._classify(res.eval_loss[:, -1], lower, upper,
                        {"unigram": 1.6094, "bigram": 1.5727}) == [None]
    part = vm._fraction_part("x", np.array([False]), "test")
    assert part.error == 1.0


def test_partial_levels_exclude_the_two_paper_levels():
    levels = vm._partial_levels(5, 0.9)
    assert set(levels) == {"(1, 4)", "(2, 3)", "(1, 1, 3)", "(1, 2, 2)", "(1, 1, 1, 2)"}
    assert vm._partial_levels(2, 0.5) == {}


def test_a_fraction_with_no_seed_to_judge_is_not_measured_not_held():
    part = vm._fraction_part("x", np.array([], dtype=bool), "test", extra=1)
    assert not part.measured and part.status == "inconclusive"
    assert part.details["seeds"] == 0 and part.details["extra"] == 1


def test_a_full_run_is_read_as_ended_only_at_a_critical_set_after_its_approach():
    """canonical_ode_resembles_full reads a full GD run at its nearest critical set only once
    it has ended.  The a13b844 quick records on the loss-comparison chain (u 0.339, 0.452,
    0.776 at T/4, T/2, T against u* = 2.234: still escaping) have not; a run oscillating
    with u(T) = u(T/2) has not (the window catches it); a run that stalls away from both
    critical sets has not; a converged one has, at u* or on the unigram line."""
    from verify.markov import _run_ended

    t = np.linspace(0.0, 200.0, 21)
    rounding, u_star = 1e-12 * 3.234, 2.2335922215070942
    escaping = np.interp(t, [0, 50, 100, 200], [-1.0, 0.3393836912053948, 0.45247132411867275,
                                                0.7761223175634631])
    oscillating = u_star + 0.3 * np.cos(np.pi * t / 20) * np.exp(-t / 400)
    oscillating[-1] = oscillating[10]  # u(T) = u(T/2) exactly: the two-point test is fooled
    stalled = np.where(t < 50, t / 50, 1.0)  # flat at u = 1: no motion, no critical set
    converged = u_star - 3.0 * np.exp(-t / 5.0)
    on_unigram = 1e-3 * np.exp(-t / 5.0)
    for gap, ended in ((escaping, False), (oscillating, False), (stalled, False),
                       (converged, True), (on_unigram, True)):
        assert _run_ended(t, gap, u_star, rounding)[4] is ended
    assert _run_ended(t, oscillating, u_star, rounding)[2] == 0.0  # moved: fooled alone


def test_states_levels_control_is_a_near_miss_and_off_level_seeds_get_their_partition():
    """markov.states_levels_full: the control's S - 1 levels are 3-20 % from the paper's
    (outside a settled seed's band, which holds the bigram level); a seed settled at the
    (1, 1, 1, 2) partial level is reported at that partition, in details only."""
    lv = vm._states_levels(5, 0.1)
    bigram = lv["bigram"]
    partial = float(vm.tm.symmetric_partition_loss(0.1, (1, 1, 1, 2)))
    near = vm._states_levels_one_fewer(5, 0.1)
    assert 0.03 < 1 - near["bigram"] / bigram < 0.1
    assert 0.1 < 1 - near["unigram"] / lv["unigram"] < 0.2
    res = _run([[1.6, 0.6, bigram, bigram, bigram], [1.6, 0.8, partial, partial, partial]])
    lower, upper = vm._seed_bands(res)
    assert lower[0] <= bigram <= upper[0] and not lower[0] <= near["bigram"] <= upper[0]
    at = np.array([lo <= bigram <= hi for lo, hi in zip(lower, upper, strict=True)])
    assert at.tolist() == [True, False]
    assert vm._partition_of_seeds(res, 5, 0.1, at) == {
        "seeds_not_at_bigram": [1], "their_partition_level": ["[1, 1, 1, 2]"]}
    assert vm._partition_of_seeds(res, 5, 0.1, np.array([True, True])) == {}


def test_partial_levels_control_is_a_near_miss_through_the_same_function():
    """markov.partial_levels_full: the theory gives every partition's level (one block: ln
    S); the control's, at p + 0.02, keep ln S but move every partial level down by more
    than a settled seed's band, so a seed settled at (1, 1, 3) is a hit for the check and a
    miss for the control; a seed at ln S is a miss for both."""
    lv = vm._partition_levels(5, 0.9)
    assert abs(lv[(5,)] - vm.real(vm.tm.symmetric_unigram_loss(5))) < 1e-14
    partial = {str(k): v for k, v in lv.items() if 1 < len(k) < 5}
    assert sorted(partial) == sorted(str(k) for k in [(1, 4), (2, 3), (1, 1, 3), (1, 2, 2),
                                                      (1, 1, 1, 2)])
    moved = vm._partition_levels_moved_p(5, 0.9)
    assert moved[(5,)] == lv[(5,)]
    shifts = [lv[k] - moved[k] for k in lv if 1 < len(k) < 5]
    assert 0.003 < min(shifts) and max(shifts) < 0.014
    moved_partial = {str(k): v for k, v in moved.items() if 1 < len(k) < 5}
    level = lv[(1, 1, 3)]
    res = _run([[1.61, 1.60, level, level, level], [lv[(5,)]] * 5])
    lower, upper = vm._seed_bands(res)
    final = res.eval_loss[:, -1]
    assert vm._classify(final, lower, upper, partial) == [str((1, 1, 3)), None]
    assert vm._classify(final, lower, upper, moved_partial) == [None, None]


def test_seeds_power_plans_the_fewest_seeds_with_power_09():
    plan = vm.partial_levels_power("quick")
    assert plan.needed == 18 and plan.power >= 0.9
    assert vm._fraction_pass_power(17, 0.9) < 0.9 <= vm._fraction_pass_power(18, 0.9)
    assert vm.partial_levels_power("test") is None
    assert vm.states_levels_power("quick").needed == 15


def test_a_run_below_the_unigram_loss_from_its_start_confirms_no_global_prediction():
    """canonical_ode_resembles_full's end set on a run that has not ended (stop 66): a start
    already below H(pi) reads 'global' by descent whatever the dynamics, so a 'global'
    prediction is not decided there; a 'local' prediction is still refuted (a descending
    run below H(pi) cannot reach the unigram line); a start above H(pi) that descends
    below it decides 'global'."""
    from theory import markov as tm

    p, q = 0.2, 0.3
    h_pi = float(tm.unigram_loss(p, q))
    u_star = float(tm.optimal_gap(p, q))
    below = SimpleNamespace(loss=np.linspace(h_pi - 0.01, h_pi - 0.05, 11))
    above = SimpleNamespace(loss=np.linspace(h_pi + 0.05, h_pi - 0.05, 11))
    status = {
        (name, predicted): vm._resemble_full_end_set(res, predicted, p, q, u_star, 0.5,
                                                     ended=False).status
        for name, res in (("below", below), ("above", above))
        for predicted in ("global", "local")}
    assert status == {("below", "global"): "inconclusive", ("below", "local"): "fail",
                      ("above", "global"): "pass", ("above", "local"): "fail"}


def test_good_init_escapes_reads_its_level_from_the_basin_rule_at_the_canonical_start():
    """good_init_escapes (stop 66): the authors' Fig. 4 constants read (e, w) = (sqrt 2, -16)
    at the start, the paper's rule puts that in Gamma*'s basin and the control's (the other
    regime's) in the local one; a rule that raises or names no basin is the theory's
    failure (InadmissibleTheory), not a crash; a run with no record at iteration 0 is."""
    import pytest

    from theory import markov as tm
    from theory.flow import InadmissibleTheory

    start = np.zeros((3, 2, 9))
    start[:, 0, :2] = (np.sqrt(2.0), -16.0)
    res = SimpleNamespace(canonical=start, steps=np.array([0, 50]))
    assert vm._start_basins(tm.basin, res, 0.5, 0.8) == ["global"] * 3
    assert vm._start_basins(vm._swapped_rule, res, 0.5, 0.8) == ["local"] * 3

    def raises(e, w, p, q):
        raise ZeroDivisionError("slip")

    for rule in (raises, lambda e, w, p, q: "saddle"):
        with pytest.raises(InadmissibleTheory):
            vm._start_basins(rule, res, 0.5, 0.8)
    with pytest.raises(ValueError):
        vm._start_basins(tm.basin, SimpleNamespace(canonical=start, steps=np.array([50, 100])),
                         0.5, 0.8)


def test_a_fraction_over_fewer_than_eight_seeds_is_reported_not_judged():
    """Below 8 seeds the 99 % Clopper-Pearson lower end of 'all seeds hit' is under 1/2, so
    the part could never pass: every fraction part reports it instead (stop 66; multi_state's
    positive control at the test profile's 4 seeds)."""
    four = vm._fraction_part("x", np.ones(4, dtype=bool), "test")
    eight = vm._fraction_part("x", np.ones(8, dtype=bool), "test")
    assert not four.measured and four.status == "inconclusive"
    assert "reported, not judged" in four.error_model
    assert eight.measured and eight.status == "pass"
