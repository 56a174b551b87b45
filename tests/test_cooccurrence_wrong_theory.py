"""cooccurrence row: a wrong theory fails a part with a reason, the check never raises.

The wrong theories are the shapes ``tdcheck mutate`` makes (a function's output sign-flipped
or scaled by 1 +- 5 %), written here through the row's own near-miss wrapper.
"""

from __future__ import annotations

import numpy as np
import pytest

from numerics.cache import RunCache
from numerics.context import Context
from theory import cooccurrence as tc
from verify import cooccurrence as vc


def _flipped(name: str) -> vc._Theory:
    fn = getattr(tc, name)
    return vc._Theory(f"{name} sign-flipped",
                      ((name, lambda *a, **k: -np.asarray(fn(*a, **k), dtype=float)),))


def _frozen_g3(*args, **kwargs):
    Y = np.array(tc.private_trajectory(*args, **kwargs), dtype=float)
    Y[2] = Y[2, :1]  # G(mu3) stays at its start: -dG3 = 0, the sandwich never holds
    return Y


def test_sandwich_onset_past_the_run_fails_the_part():
    """A reduction whose sandwich never starts puts the predicted onset past the run: the
    upper-side part fails with that reason (formerly np.min over an empty window raised)."""
    wrong = vc._Theory("G(mu3) frozen", (("private_trajectory", _frozen_g3),))
    ev = vc.check_sandwich({"seed": 0}, Context(profile="test"), theory=wrong)
    part = ev.part("upper_side_margin")
    assert part.failed and "past the run" in part.error_model
    assert ev.part("onset_vs_reduction").failed


@pytest.fixture(scope="module")
def phase1_cache(tmp_path_factory):
    """One run cache for the phase1 tests of this module: the same two test-profile runs
    (the run and its half-step twin) serve every theory."""
    return RunCache(tmp_path_factory.mktemp("phase1_runs"))


@pytest.mark.parametrize("name", ["softmax_change", "private_margins", "private_beta_sq",
                                  "private_trajectory"])
def test_phase1_sign_flips_fail_parts(name, phase1_cache):
    """Each of these sign flips raised in check_phase1 (a log of a negative predicted value,
    a division by a zero predicted time): now some part fails and the check returns."""
    ev = vc.check_phase1({"seed": 0}, Context(profile="test", cache=phase1_cache),
                         theory=_flipped(name))
    assert ev.status == "refuted", [(p.name, p.status) for p in ev.parts]


def test_phase1_allowances_are_the_papers(phase1_cache):
    """initial_output_sd entered check_phase1 only through allowances (t_cls, S_constant);
    they now take the member's own measured spread (_g_sd), so its sign flip (which once
    raised, then failed parts through a negative allowance) leaves every part as it is
    under the paper's theory."""
    ctx = Context(profile="test", cache=phase1_cache)
    ref = vc.check_phase1({"seed": 0}, ctx, theory=tc)
    ev = vc.check_phase1({"seed": 0}, ctx, theory=_flipped("initial_output_sd"))
    assert ([(p.name, p.error, p.tolerance) for p in ev.parts]
            == [(p.name, p.error, p.tolerance) for p in ref.parts])


def test_phase1_paired_parts_fail_on_unusable_output(phase1_cache):
    """A theory whose score_drift or s_drift gives output of the wrong shape (not a shape
    ``tdcheck mutate`` makes), or whose canonical_velocity has no Gamma, fails the paired
    and whole-Gram parts with an infinite error (and a reason) instead of raising in them."""
    ctx = Context(profile="test", cache=phase1_cache)
    scalar = vc._Theory("score_drift a scalar", (("score_drift", lambda *a, **k: 1.0),))
    listed = vc._Theory("s_drift a pair", (("s_drift", lambda *a, **k: [1.0, 2.0]),))
    run = vc._run(vc._main_config(ctx, 0), ctx)
    half = vc._run(vc._half_step(run.config), ctx)
    i = vc._classified(run, 0)
    grid = np.linspace(0.0, float(run.tau[0, i]), 801)
    Yi = vc._private(tc, run.config, grid, vc._start(run, 0))
    kappa = run.config.s0 ** 2 * run.config.m
    out = vc._phase1_paired(scalar, run, half, 0, i, grid, Yi, kappa)
    assert out["dA_p"][0] == np.inf and np.isfinite(out["dA_p"][1])
    out = vc._phase1_paired(listed, run, half, 0, i, grid, Yi, kappa)
    assert out["S_law"][0] == np.inf and out["S_red"][0] == np.inf
    no_gamma = vc._Theory("canonical_velocity without A", (("canonical_velocity",
                                                            lambda *a, **k: {}),))
    out = vc._phase1_paired(no_gamma, run, half, 0, i, grid, Yi, kappa)
    for key in ("dA_f", "dp_f"):
        assert out[key][0] == np.inf and np.isfinite(out[key][1])
        assert "KeyError" in out[key][2]["why"]


@pytest.fixture(scope="module")
def structure_paper(phase1_cache):
    """check_attention_structure under the paper's theory at the test profile (seed 0: the
    run and its half-step twin are phase1's, in the shared cache)."""
    return vc.check_attention_structure({"seed": 0}, Context(profile="test",
                                                             cache=phase1_cache), theory=tc)


def test_comparable_size_is_read_through_the_reduction(structure_paper, phase1_cache):
    """Eq. (3)'s 'comparable size' against the predicted spread of the four coefficients:
    the paper's reduction passes, the key/query slip (which the bare factor 3 let through)
    fails it."""
    assert structure_paper.part("comparable_vs_reduction").passed
    ev = vc.check_attention_structure({"seed": 0}, Context(profile="test", cache=phase1_cache),
                                      theory=vc.KEY_QUERY)
    assert ev.part("comparable_vs_reduction").failed
    # the slip is in Gamma itself, so the whole-vocabulary Gamma is transposed too, and so
    # is the class-level one (score_drift)
    assert ev.part("magnitudes_whole_gram").failed
    assert ev.part("magnitudes_class_level").failed


def _gamma_scaled(factor: float):
    def loss_gradients(*args, **kwargs):
        r, gam = tc.loss_gradients(*args, **kwargs)
        return r, factor * gam
    return loss_gradients


def test_whole_gram_magnitudes_see_a_two_percent_gamma(structure_paper, phase1_cache):
    """magnitudes_whole_gram (C12..C32 at T* against the whole-Gram prediction): the paper's
    theory passes; Gamma = -dL/dA scaled by 1.02 fails it (its allowance is about 1 % at the
    test profile, mostly S's drift beyond s_drift, the kept term and the Gram motion, derived
    in _structure_terms, not fitted); a loss_gradients that raises fails it with the reason,
    and a score_drift that raises (in the same check) fails magnitudes_class_level,
    magnitudes and comparable_vs_reduction with theirs, instead of the check raising."""
    ctx = Context(profile="test", cache=phase1_cache)
    assert structure_paper.part("magnitudes_whole_gram").passed
    ev = vc.check_attention_structure({"seed": 0}, ctx, theory=vc._Theory(
        "Gamma x 1.02", (("loss_gradients", _gamma_scaled(1.02)),)))
    assert ev.part("magnitudes_whole_gram").failed
    raising = vc._Theory("no Gamma, no score drift", (
        ("loss_gradients", lambda *a, **k: {}["Gamma"]),
        ("score_drift", lambda *a, **k: {}["C"])))
    ev = vc.check_attention_structure({"seed": 0}, ctx, theory=raising)
    for name in ("magnitudes_whole_gram", "magnitudes_class_level"):
        part = ev.part(name)
        assert part.failed and part.error == np.inf
        assert any("KeyError" in m.get("why", "") for m in part.details["members"])
    for name in ("magnitudes", "comparable_vs_reduction"):
        assert ev.part(name).failed and "KeyError" in ev.part(name).details["why"]
    assert ev.part("magnitudes").error == np.inf


def _scaled(name: str, factor: float):
    def fn(*args, **kwargs):
        return factor * np.asarray(getattr(tc, name)(*args, **kwargs), dtype=float)
    return fn


def test_class_level_magnitudes_see_score_drift(structure_paper, phase1_cache, monkeypatch):
    """magnitudes_class_level (C12..C32 at T* against theory.score_drift with the member's
    Gram blocks, corrected by what the class-level form leaves out): under the paper's
    theory its error is magnitudes_whole_gram's (the corrected class-level prediction is
    the whole-Gram one up to rounding) and it passes; score_drift scaled by 1.02 or 0.98, or
    class_gamma by 1.02 or 0.98 (a module patch, as tdcheck mutate makes), fails a member by
    at least 1.5 x its allowance: the slip moves every entry by 2 % of the class-level
    prediction, and the allowance is magnitudes_whole_gram's (under 1 % at the test
    profile: 0.0067-0.0097 on 1f71b1c, derived in _structure_terms) plus rounding.  The
    slips are judged member by member (_class_level_member, the part's own function) to
    spare whole checks; the check-level failures are in the two tests above."""
    ctx = Context(profile="test", cache=phase1_cache)
    part = structure_paper.part("magnitudes_class_level")
    assert part.passed
    # the identity: rounding of sums over the data set's slots, far below the allowances
    assert abs(part.error - structure_paper.part("magnitudes_whole_gram").error) < 1e-9
    run = vc._run(vc._main_config(ctx, 0), ctx)
    half = vc._run(vc._half_step(run.config), ctx)
    shared = [vc._structure_member(tc, run, half, k)[5] for k in range(run.config.members)]

    def worst(theory) -> float:
        out = [vc._class_level_member(theory, run, k, sh) for k, sh in enumerate(shared)]
        return max(e / tol for _, e, tol, _ in out)

    assert worst(tc) <= 1.0
    for factor in (1.02, 0.98):
        assert worst(vc._Theory(f"score_drift x {factor}",
                                (("score_drift", _scaled("score_drift", factor)),))) >= 1.5
    gamma = tc.class_gamma
    for factor in (1.02, 0.98):
        monkeypatch.setattr(tc, "class_gamma",
                            lambda *a, _f=factor, **k: _f * np.asarray(gamma(*a, **k)))
        ratio = worst(tc)
        monkeypatch.undo()
        assert ratio >= 1.5


def test_four_class_tracks_unusable_theory_fails_parts(tmp_path):
    """four_class_tracks under a theory whose trajectory is a scalar and whose initial rates
    are not numbers (shapes no mutant makes, but a wrong theory may): both parts fail with
    the reason, the check returns, and the allowances (the run's alone) stay as under the
    paper's theory."""
    ctx = Context(profile="test", cache=RunCache(tmp_path))
    ref = vc.check_four_class_tracks({"seed": 0}, ctx, theory=tc)
    wrong = vc._Theory("unusable four-class theory", (
        ("class_trajectory", lambda *a, **k: 1.0),
        ("initial_rates", lambda *a, **k: ("a", "b", "c"))))
    ev = vc.check_four_class_tracks({"seed": 0}, ctx, theory=wrong)
    assert ev.status == "refuted"
    assert ev.part("path").failed and "stops at 0" in ev.part("path").error_model
    rates = ev.part("initial_rates")
    assert rates.failed and "no initial rates" in rates.error_model
    assert rates.details["member_tolerances"] == ref.part("initial_rates").details[
        "member_tolerances"]


def test_four_class_tracks_paper_theory_holds_and_frozen_mu3_fails(tmp_path):
    """At the smoke size the paper's four-class system tracks the run within the bound and
    the near miss (mu3 frozen) does not: the path part decides."""
    ctx = Context(profile="test", cache=RunCache(tmp_path))
    ok = vc.check_four_class_tracks({"seed": 0}, ctx, theory=tc)
    bad = vc.check_four_class_tracks({"seed": 0}, ctx, theory=vc.MU3_FROZEN)
    assert ok.part("path").passed and ok.part("initial_rates").passed
    assert bad.part("path").failed and bad.part("path").observed > 2.0


def test_onset_helpers_give_reasons_not_raises():
    """The onset readings of phase2_margins and sandwich: a reference onset at 0 (a margin
    positive from the start, as under a sign-flipped class_margins patched into the paper's
    module by ``tdcheck mutate``) and GD runs that cross a different number of times give an
    infinite value with a reason, never a ZeroDivisionError or a silently paired event."""
    rel, why = vc._onset_reference(0.0, 0.1, "margin")
    assert rel == np.inf and "no positive finite margin onset" in why
    taus = np.linspace(0.0, 4.0, 5)
    once = np.array([[-1.0, -0.5, 0.5, 1.0, 2.0]])
    twice = np.array([[-1.0, 0.5, -0.5, 1.0, 2.0]])
    reads = [vc._held_from(taus, once), vc._held_from(taus, twice)]
    on, step, interp, why = vc._extrapolated_onset(
        reads, [vc._sign_changes(once), vc._sign_changes(twice)])
    assert on == np.inf and "different number of times" in why
    on, _, _, why = vc._extrapolated_onset([reads[0], reads[0]], [vc._sign_changes(once)] * 2)
    assert np.isfinite(on) and on > 0 and why == ""


def test_sandwich_sides_have_no_pole():
    """The sandwich's sides are linear in the rates: a rate of mu1 or mu2 that changes sign
    gives finite sides (the ratio form had a pole there, read as a crossing)."""
    taus = np.linspace(0.0, 3.0, 4)
    G = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, -0.5], [0.0, 0.0, -1.0], [1.0, 1.0, -3.0]])
    _, sides = vc._sandwich_sides(taus, G)
    assert np.all(np.isfinite(sides))


def test_phase2_margins_fails_a_sign_flipped_margin_map():
    """A sign-flipped class_margins (the theory's prediction side only: the observed margins
    are read off the data's class layout) fails onset_vs_reduction with the check returning."""
    ev = vc.check_phase2_margins({"seed": 0}, Context(profile="test"),
                                 theory=_flipped("class_margins"))
    assert ev.part("onset_vs_reduction").failed
    assert ev.part("signs_at_end").passed  # the run's own margins, not the theory's
