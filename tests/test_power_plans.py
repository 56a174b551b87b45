"""Power plans (``Claim.power``), "not settled at this budget" in the reports, exit codes."""

import json
from functools import partial

from hypothesis import strategies as st

from verify.claims import Claim, Evidence, Part, PositiveControl, PowerPlan
from verify.cli import EXIT_ERROR, EXIT_NOT_AS_EXPECTED, EXIT_OK, _exit_code, main
from verify.report import band_lines, to_json, to_markdown, to_table, unsettled_lines
from verify.runner import Profile, run_claim

META = {"commit": None, "versions": {}, "device": "cpu", "profile": "quick", "started": "-",
        "seconds": 0.0}
QUICK = Profile("quick", fast=2, slow=0, gpu=0)


def _undecided(params, ctx, *, width):
    """A statistical part whose interval straddles its tolerance: inconclusive; under the
    control (width 0) a deterministic part that fails."""
    if width == 0:
        return Evidence((Part("p", 0, 2, 2, 1, "-"),))
    return Evidence((Part("p", 0, 1, 1, 1.5, "-", lower=0.5, upper=1.5 + width),))


def _plan(decides_at: set[str]):
    def plan(profile: str) -> PowerPlan:
        have = 100 if profile in decides_at else 10
        return PowerPlan(decides=profile in decides_at, have=have, needed=100, unit="seeds",
                         design="toy design")
    return plan


def _claim(expected_at: dict, decides_at: set[str]) -> Claim:
    pos = PositiveControl("-", lambda ctx: Evidence((Part("p", 0, 0, 0, 1, "-"),)))
    return Claim(id="toy.powered", paper="toy", statement="-", source="-", kind="symbolic",
                 strategy=st.fixed_dictionaries({"x": st.just(0)}),
                 check=partial(_undecided, width=1.0), control=partial(_undecided, width=0),
                 control_description="-", expected="holds", expected_at=expected_at,
                 positive_control=pos, power=_plan(decides_at))


def test_not_settled_by_design_is_as_expected_and_names_where_it_settles():
    claim = _claim({"test": "inconclusive", "quick": "inconclusive"}, {"ci", "thorough"})
    assert claim.settled_at(after="quick") == "ci"
    r = run_claim(claim, QUICK)
    assert r.outcome == "inconclusive" and r.expected == "inconclusive" and r.ok
    assert r.settles_at() == {"profile": "ci", "expected": "holds", "size": 100,
                              "needed": 100, "unit": "seeds"}
    data = to_json([r], META)
    c = data["claims"][0]
    assert c["power"]["decides"] is False and c["power"]["have"] == 10
    assert data["summary"]["unsettled_by_design"] == 1 and data["summary"]["raised"] == 0
    (line,) = unsettled_lines(data)
    assert "needs 100 seeds, this profile runs 10" in line and "settles at ci" in line
    assert "Not settled at this budget by design (1, as expected)" in to_table(data)
    md = to_markdown(data)
    assert "## Not settled at this budget" in md and "cannot decide" in md
    json.dumps(data, allow_nan=False)


def test_undecided_where_the_plan_decides_is_not_as_expected():
    claim = _claim({"test": "inconclusive"}, {"quick", "ci", "thorough"})
    r = run_claim(claim, QUICK)
    assert r.outcome == "inconclusive" and r.expected == "holds" and not r.ok
    (problem,) = r.problems()
    assert "its power plan decides at this profile" in problem
    assert r.settles_at() is None
    assert unsettled_lines(to_json([r], META)) == []


def _estimate(params, ctx, *, interval):
    """A rate part (tolerance 1/2) whose interval straddles the tolerance: inconclusive."""
    lo, hi = interval
    return Evidence((Part("rate_a", 0.0, (lo + hi) / 2, (lo + hi) / 2, 0.5, "-", lower=lo,
                          upper=hi),
                     Part("other", 0.0, 0.0, 0.0, 1.0, "-")))


def _other_fails(params, ctx):
    return Evidence((Part("other", 0.0, 2.0, 2.0, 1.0, "-"),))


def _banded(interval, check=None) -> Claim:
    def plan(profile: str) -> PowerPlan:
        return PowerPlan(decides=True, have=86, needed=86, unit="runs", design="toy band",
                         power=0.9, band=(0.3, 0.7), statistic="rate_")
    pos = PositiveControl("-", lambda ctx: Evidence((Part("p", 0, 0, 0, 1, "-"),)))
    return Claim(id="toy.banded", paper="toy", statement="-", source="-", kind="symbolic",
                 strategy=st.fixed_dictionaries({"x": st.just(0)}),
                 check=check or partial(_estimate, interval=interval), control=_other_fails,
                 control_description="-", expected="holds", positive_control=pos,
                 power=plan)


def test_decided_inside_the_plans_band_is_a_finding_as_expected():
    """A powered design undecided on the statement, whose undecided interval lies wholly
    between the planning values it was powered at, has decided that the truth is there: a
    finding, as expected, listed with the band and the interval (not 'not settled')."""
    inside = run_claim(_banded((0.355, 0.623)), QUICK)
    assert inside.outcome == "inconclusive" and inside.expected == "holds"
    assert inside.in_band == {"rate_a": {"error": 0.489, "lower": 0.355, "upper": 0.623}}
    assert inside.matches_expected and inside.ok and inside.problems() == []
    assert inside.settles_at()["band"] == [0.3, 0.7]
    data = to_json([inside], META)
    c = data["claims"][0]
    assert c["in_band"] and c["verdict"] == "as expected (in band)"
    assert data["summary"]["in_band"] == 1 and data["summary"]["unsettled_by_design"] == 0
    assert unsettled_lines(data) == []
    (line,) = band_lines(data)
    assert "rate_a 0.489 [0.355, 0.623], inside (0.3, 0.7)" in line
    assert "Decided inside the design's indifference band (1, findings)" in to_table(data)
    assert "decided inside their design's indifference band: findings" in to_table(data)
    md = to_markdown(data)
    assert "## Decided inside the design's indifference band (findings)" in md
    assert "for a truth outside the band (0.3, 0.7)" in md
    json.dumps(data, allow_nan=False)


def test_an_interval_reaching_past_the_band_or_another_undecided_part_is_not_as_expected():
    """Undecided with an interval that crosses a planning value (the design failed to decide
    a truth it was powered for, or the interval is wide for another reason), or with an
    undecided part the band is not about: not as expected, with the plan in the problem."""
    def two_undecided(params, ctx):
        ev = _estimate(params, ctx, interval=(0.4, 0.6))
        return Evidence(ev.parts + (Part("spread", 0.0, 1.0, 1.0, 1.5, "-", lower=0.5,
                                         upper=2.0),))

    for claim in (_banded((0.25, 0.55)), _banded((0.45, 0.75)),
                  _banded((0.4, 0.6), check=two_undecided)):
        r = run_claim(claim, QUICK)
        assert r.outcome == "inconclusive" and r.in_band is None and not r.ok
        assert "its power plan decides" in r.problems()[0]
        assert band_lines(to_json([r], META)) == []


def test_a_band_needs_its_statistic_and_an_order():
    import pytest

    with pytest.raises(ValueError, match="go together"):
        PowerPlan(decides=True, have=1, needed=1, unit="-", design="-", band=(0.3, 0.7))
    with pytest.raises(ValueError, match="lo < hi"):
        PowerPlan(decides=True, have=1, needed=1, unit="-", design="-", band=(0.7, 0.3),
                  statistic="x")


def test_exit_codes_errors_before_not_as_expected():
    assert _exit_code([False, False], [True, True]) == EXIT_OK == 0
    assert _exit_code([False, False], [True, False]) == EXIT_NOT_AS_EXPECTED == 1
    assert _exit_code([True, False], [False, False]) == EXIT_ERROR == 3


def _raising(params, ctx):
    raise RuntimeError("boom")


def test_a_raising_check_is_exit_3_through_tdcheck_report(tmp_path):
    """``tdcheck report`` re-derives the exit code from report.json: a claim whose check
    raised gives 3, one not as expected 1, all as expected 0."""
    raising = Claim(id="toy.raises", paper="toy", statement="-", source="-", kind="symbolic",
                    strategy=st.fixed_dictionaries({"x": st.just(0)}), check=_raising,
                    control=_raising, control_description="-")
    r = run_claim(raising, QUICK)
    assert r.outcome == "error" and r.raised
    off = run_claim(_claim({"test": "inconclusive"}, {"quick", "ci", "thorough"}), QUICK)
    ok = run_claim(_claim({"test": "inconclusive", "quick": "inconclusive"},
                          {"ci", "thorough"}), QUICK)
    for results, code in (([ok], 0), ([ok, off], 1), ([ok, off, r], 3)):
        folder = tmp_path / str(code)
        folder.mkdir()
        (folder / "report.json").write_text(json.dumps(to_json(results, META)))
        assert main(["report", str(folder)]) == code


def test_verify_help_documents_the_exit_codes(capsys):
    try:
        main(["verify", "-h"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    for code in ("0  every claim as expected", "1  a claim not as expected",
                 "2  usage or bad input", "3  an error"):
        assert code in out


def test_hump_plan_is_the_design_computed_not_assumed():
    """appendix_a_hump: quick (and ci) run the design's own number of runs, which decides
    with the design's power at both of its rates; the smoke size's 4 runs cannot decide at
    any rate; thorough's 1000 decide.  Its positive control's smoke size is the fewest runs
    that can decide at all."""
    from numerics import cooccurrence as nc
    from verify import cooccurrence as vc

    design = vc._hump_design()
    needed = vc._hump_runs(**design)
    quick = vc.hump_power("quick")
    assert quick.have == quick.needed == needed and quick.decides
    assert quick.power >= design["power"]
    test = vc.hump_power("test")
    assert not test.decides and test.have == nc.SIZES.at("hump_appendix_a", "test")["runs"]
    assert all(vc._decides(test.have, p, side, 0.5, 0.99) == 0.0
               for p in (0.0, 0.3, 0.5, 0.7, 1.0) for side in ("hold", "refute"))
    assert vc.hump_power("thorough").decides and vc.hump_power("thorough").have == 1000
    assert quick.band == (design["hold_rate"], design["refute_rate"])  # the planning values
    assert quick.statistic == "runs_without_hump_"
    n = vc.HUMP_POSITIVE_SMOKE_RUNS
    assert nc.SIZES.at("hump_theory", "test")["runs"] == n
    assert vc._decides(n, 0.0, "hold", 0.5, 0.99) == 1.0
    assert vc._decides(n - 1, 0.0, "hold", 0.5, 0.99) == 0.0
