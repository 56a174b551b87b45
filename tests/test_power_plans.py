"""Power plans (``Claim.power``), "not settled at this budget" in the reports, exit codes."""

import json
from functools import partial

from hypothesis import strategies as st

from verify.claims import Claim, Evidence, Part, PositiveControl, PowerPlan
from verify.cli import EXIT_ERROR, EXIT_NOT_AS_EXPECTED, EXIT_OK, _exit_code, main
from verify.report import to_json, to_markdown, to_table, unsettled_lines
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


def _estimate(params, ctx, *, rate):
    """A rate part (tolerance 1/2) whose interval straddles the tolerance at estimate
    ``rate``: inconclusive."""
    return Evidence((Part("rate_a", 0.0, rate, rate, 0.5, "-", lower=0.3, upper=0.62),
                     Part("other", 0.0, 0.0, 0.0, 1.0, "-")))


def _other_fails(params, ctx):
    return Evidence((Part("other", 0.0, 2.0, 2.0, 1.0, "-"),))


def _banded(rate: float) -> Claim:
    def plan(profile: str) -> PowerPlan:
        return PowerPlan(decides=True, have=86, needed=86, unit="runs", design="toy band",
                         power=0.9, band=(0.3, 0.7), statistic="rate_")
    pos = PositiveControl("-", lambda ctx: Evidence((Part("p", 0, 0, 0, 1, "-"),)))
    return Claim(id="toy.banded", paper="toy", statement="-", source="-", kind="symbolic",
                 strategy=st.fixed_dictionaries({"x": st.just(0)}),
                 check=partial(_estimate, rate=rate), control=_other_fails,
                 control_description="-", expected="holds", positive_control=pos,
                 power=plan)


def test_undecided_inside_the_plans_band_is_not_settled_at_this_budget():
    """A powered design undecided with its estimate between the planning values it was
    powered at (the indifference band) is as expected, listed with the band and estimate;
    the same outcome with the estimate outside the band is a powered design that failed."""
    inside = run_claim(_banded(0.49), QUICK)
    assert inside.outcome == "inconclusive" and inside.expected == "holds"
    assert inside.in_band == {"rate_a": 0.49} and inside.matches_expected and inside.ok
    assert inside.problems() == []
    assert inside.settles_at() == {"profile": None, "band": [0.3, 0.7],
                                   "estimates": {"rate_a": 0.49}, "expected": "holds"}
    data = to_json([inside], META)
    assert data["claims"][0]["in_band"] and data["summary"]["unsettled_by_design"] == 1
    (line,) = unsettled_lines(data)
    assert "inside the band (0.3, 0.7)" in line and "rate_a 0.49" in line
    assert "outside the band (0.3, 0.7)" in to_markdown(data)
    json.dumps(data, allow_nan=False)
    outside = run_claim(_banded(0.25), QUICK)
    assert outside.outcome == "inconclusive" and outside.in_band is None
    assert not outside.ok and "its power plan decides" in outside.problems()[0]
    assert unsettled_lines(to_json([outside], META)) == []


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
