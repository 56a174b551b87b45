"""The verdict engine and the reports, on toy claims whose truth is known."""

import json
import math
from functools import partial

import numpy as np
import pytest
from hypothesis import strategies as st

from numerics.cache import RunCache, code_digest
from numerics.ensemble import DivergenceError
from numerics.stats import bootstrap, mean_interval, median_of_means, normal_quantile
from theory.flow import InadmissibleTheory
from verify.claims import Claim, Context, Evidence, Part, PositiveControl, combine
from verify.report import metadata, to_json, to_markdown, to_table, write_reports
from verify.runner import INADMISSIBLE_PART, Profile, run_claim

PROFILE = Profile("test", fast=20, slow=1, gpu=0)
META = {"commit": None, "versions": {}, "device": "cpu", "profile": "test", "started": "-",
        "seconds": 0.0}


def _check(params, ctx, *, slope):
    # "x^2 >= slope * x - 1 for x in [0, 3]": true for slope 2 (AM-GM), false for slope 3.
    # Part "inequality" is exact; part "range" is identical under both theories.
    x = params["x"]
    lhs, rhs = x * x, slope * x - 1
    return Evidence((Part("inequality", rhs, lhs, max(0.0, rhs - lhs), 0.0, "exact"),
                     Part("range", 3.0, x, max(0.0, x - 3.0), 0.0, "exact")))


def _claim(slope_true, slope_control, expected="holds", positive=None):
    return Claim(id="toy.amgm", paper="toy", statement="x^2 >= 2x - 1", source="AM-GM",
                 kind="symbolic", strategy=st.fixed_dictionaries({"x": st.floats(0, 3)}),
                 check=partial(_check, slope=slope_true),
                 control=partial(_check, slope=slope_control),
                 control_description=f"slope {slope_control}", expected=expected,
                 positive_control=positive)


def test_part_interval_rule():
    assert Part("a", 0, 1, 1, 2, "-").status == "pass"
    assert Part("a", 0, 1, 1, 0.5, "-").status == "fail"
    assert Part("a", 0, 1, 1, 1.5, "-", lower=0.5, upper=2.0).status == "inconclusive"
    assert Part("a", 0, 1, 1, 0.2, "-", lower=0.5, upper=2.0).status == "fail"
    assert Part("a", 0, math.nan, math.nan, 1, "-").status == "fail"
    d = Part.deviation("d", 1.0, 1.1, se=0.01, tolerance=0.2, error_model="-")
    assert d.lower == pytest.approx(0.1 - normal_quantile(0.99) * 0.01)
    assert d.status == "pass"
    with pytest.raises(ValueError):
        Part("a", 0, 1, 1, 1, "-", lower=2, upper=1)


def test_evidence_status_and_combine():
    p, f, i = (Part("p", 0, 0, 0, 1, "-"), Part("f", 0, 2, 2, 1, "-"),
               Part("i", 0, 1, 1, 1.5, "-", lower=0, upper=2))
    assert Evidence((p,)).status == "holds"
    assert Evidence((p, i)).status == "inconclusive"
    assert Evidence((p, i, f)).status == "refuted"
    ev = combine(Evidence((p,)), Evidence((f,), {"k": 1}))
    assert ev.names == ("p", "f") and ev.details == {"k": 1} and ev.worst.name == "f"
    with pytest.raises(ValueError):
        combine(Evidence((p,)), Evidence((p,)))


def test_true_claim_holds_and_control_is_rejected_by_the_discriminating_part():
    r = run_claim(_claim(2, 3), PROFILE)
    assert r.outcome == "holds" and r.control_rejected and r.ok
    assert r.control_rejected_by == ("inequality",)  # "range" never discriminates
    assert r.examples_drawn >= 10 and not r.short


def test_false_claim_is_refuted_with_shrunk_example_and_control_not_applicable():
    pc = PositiveControl("x = 1 is a double root", lambda ctx: _check({"x": 1.0}, ctx, slope=2))
    r = run_claim(_claim(3, 3, expected="refuted", positive=pc), PROFILE)
    assert r.outcome == "refuted" and r.control_rejected is None and r.ok
    assert 0.38 < r.falsifying_example["x"] < 2.62  # x^2 - 3x + 1 < 0 there
    assert r.positive_passed


def test_control_identical_to_the_theory_is_flagged():
    r = run_claim(_claim(2, 2), PROFILE)
    assert r.outcome == "holds" and r.control_rejected is False and not r.ok
    assert any("control" in p for p in r.problems())


def test_control_failing_only_where_the_theory_fails_is_not_rejected():
    # Both theories fail part "bad" on every example: a control "rejected" there proves nothing.
    def check(params, ctx, *, k):
        return Evidence((Part("good", 0, 0, 0, 1, "exact"),
                         Part("bad", 0, 5 + k, 5 + k, 1, "exact",
                              lower=0.0, upper=10.0)))  # inconclusive under both

    c = Claim(id="toy.nd", paper="toy", statement="-", source="-", kind="symbolic",
              strategy=st.just({}), check=partial(check, k=0), control=partial(check, k=1),
              control_description="-", expected="inconclusive",
              positive_control=PositiveControl("-", lambda ctx: Evidence(
                  (Part("good", 0, 0, 0, 1, "exact"),))))
    r = run_claim(c, PROFILE)
    assert r.outcome == "inconclusive" and r.control_rejected is False and not r.ok


def test_positive_control_failure_fails_the_claim():
    pc = PositiveControl("wrong case", lambda ctx: _check({"x": 2.0}, ctx, slope=3))
    r = run_claim(_claim(3, 3, expected="refuted", positive=pc), PROFILE)
    assert r.outcome == "refuted" and r.positive_passed is False and not r.ok


def test_non_holds_claim_needs_a_positive_control():
    with pytest.raises(ValueError, match="positive_control"):
        _claim(3, 3, expected="refuted")


def test_crashing_check_is_an_error_not_a_pass():
    def boom(params, ctx):
        raise RuntimeError("boom")

    c = Claim(id="toy.boom", paper="toy", statement="-", source="-", kind="symbolic",
              strategy=st.fixed_dictionaries({"x": st.floats(0, 1)}), check=boom,
              control=partial(_check, slope=3), control_description="-")
    r = run_claim(c, PROFILE)
    assert r.outcome == "error" and "boom" in r.error_message and not r.ok


def _inadmissible(params, ctx, *, slope):
    if slope != 2:  # a wrong theory whose derivation has no admissible solution
        raise InadmissibleTheory("no positive root of the toy condition")
    return _check(params, ctx, slope=2)


def _diverging(params, ctx, *, slope):
    if slope != 2:  # the full model diverges at the set-up a wrong theory gave
        raise DivergenceError("member 0 diverged at step 9: loss = nan (lr = 0.4)")
    return _check(params, ctx, slope=2)


@pytest.mark.parametrize("fn", [_inadmissible, _diverging])
def test_an_inadmissible_theory_fails_a_part_with_its_reason_not_the_check(fn):
    def toy(slope):
        return Claim(id="toy.inadmissible", paper="toy", statement="-", source="-",
                     kind="symbolic", strategy=st.fixed_dictionaries({"x": st.floats(0, 3)}),
                     check=partial(fn, slope=slope), control=partial(fn, slope=3),
                     control_description="-")

    wrong = run_claim(toy(3), PROFILE)
    assert wrong.outcome == "refuted" and not wrong.raised and wrong.error_message is None
    part = wrong.worst.part(INADMISSIBLE_PART)
    assert part.failed and part.kind == "symbolic"
    assert ("no positive root" in part.error_model) or ("diverged" in part.error_model)
    # under the paper's theory the control's crash is a failed part too, not a control
    # error; it has no twin in the check, so it does not count as a rejection
    right = run_claim(toy(2), PROFILE)
    assert right.outcome == "holds" and right.control_error is None
    assert right.control_rejected is False


def test_report_schema_and_rerender(tmp_path):
    pc = PositiveControl("x = 1", lambda ctx: _check({"x": 1.0}, ctx, slope=2))
    results = [run_claim(_claim(2, 3), PROFILE),
               run_claim(_claim(3, 3, expected="refuted", positive=pc), PROFILE)]
    meta = metadata("test", "cpu", 0.0, 1.0)
    assert set(meta) == {"commit", "versions", "device", "platform", "profile", "seed", "started",
                         "seconds"}
    assert set(meta["versions"]) == {"python", "torch", "sympy", "numpy", "scipy", "hypothesis"}
    md, js = write_reports(results, tmp_path, meta)
    data = json.loads(js.read_text())
    assert {"version", "metadata", "summary", "claims"} <= set(data)
    assert data["summary"]["ok"] == 2 and data["summary"]["controls_rejected"] == 1
    assert data["summary"]["controls_not_applicable"] == 1
    c0, c1 = data["claims"]
    assert c0["control_rejected_by"] == ["inequality"] and c1["control_rejected"] is None
    assert c1["positive_control"]["passed"] is True
    for c in data["claims"]:
        assert {"name", "predicted", "observed", "error", "lower", "upper", "tolerance",
                "passed", "error_model"} <= set(c["parts"][0])
        assert c["examples_drawn"] <= c["examples_requested"] or c["outcome"] == "refuted"
    text = md.read_text()
    assert text.splitlines()[2].startswith("**1 held, 1 refuted (findings)")
    assert "2 of 2 as expected" in text.splitlines()[2]
    assert to_markdown(data) == text  # report.md is a pure function of report.json
    assert "refuted" in to_table(to_json(results, META))


def test_stats_helpers():
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, 400)
    m, lo, hi, se = mean_interval(x)
    assert lo < 1.0 < hi and se == pytest.approx(2.0 / 20, rel=0.15)
    b = bootstrap(x, np.mean, n_boot=400, seed=1)
    est, blo, bhi = b.estimate, b.lower, b.upper
    assert blo < est < bhi and blo == pytest.approx(lo, abs=0.15)
    assert median_of_means(np.r_[np.zeros(9), 1e9], 5) == 0.0


def test_run_cache(tmp_path):
    calls = []
    cache = RunCache(tmp_path)
    f = lambda: calls.append(1) or {"v": len(calls)}
    assert cache.get_or_compute(("cfg", 1), f, "toy") == {"v": 1}
    assert cache.get_or_compute(("cfg", 1), f, "toy") == {"v": 1} and len(calls) == 1
    assert cache.get_or_compute(("cfg", 2), f, "toy") == {"v": 2}
    assert RunCache(None).get_or_compute(("cfg", 1), f, "toy") == {"v": 3}


def test_code_digest_ignores_prose_not_code():
    base = 'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    prose = '# a comment\ndef f(x):\n    """Another doc,\n    on two lines."""\n\n    return x + 1\n'
    assert code_digest(base) == code_digest(prose)
    assert code_digest(base) != code_digest(base.replace("x + 1", "x + 2"))
    assert code_digest(base) != code_digest(base.replace('"""Doc."""', 'y = "Doc."'))
    only_doc = 'def g():\n    """Doc."""\n'
    assert code_digest(only_doc) != code_digest('def g():\n    """Doc."""\n    return 1\n')


def test_context_pick():
    assert Context(profile="test").pick(test=1, quick=2) == 1
    assert Context(profile="ci").pick(test=1, quick=2) == 2
    assert Context(profile="thorough").pick(test=1, quick=2, ci=3) == 3


def test_unmeasured_part_is_inconclusive_never_a_pass():
    p = Part.unmeasured("late window", 0.0, "the run stops before iteration 750")
    assert p.status == "inconclusive" and not p.measured
    assert Evidence((Part("a", 0, 0, 0, 1, "-"), p)).status == "inconclusive"


def test_expected_by_profile():
    pc = PositiveControl("x = 1", lambda ctx: _check({"x": 1.0}, ctx, slope=2))
    c = Claim(id="toy.p", paper="toy", statement="-", source="-", kind="symbolic",
              strategy=st.fixed_dictionaries({"x": st.floats(0, 3)}),
              check=partial(_check, slope=2), control=partial(_check, slope=3),
              control_description="-", expected="inconclusive", expected_at={"test": "holds"},
              positive_control=pc)
    assert c.expected_for("quick") == "inconclusive" and c.expected_for("test") == "holds"
    r = run_claim(c, PROFILE)
    assert r.expected == "holds" and r.ok
    assert to_json([r], META)["claims"][0]["expected"] == "holds"


_DRAWS = """
import json, sys
from hypothesis import strategies as st
{imports}
from verify.claims import Claim, Evidence, Part
from verify.runner import run_claim

seen = []

def check(params, ctx, *, k):
    seen.append(params["x"])
    return Evidence((Part("p", 0.0, 0.0, 0.0, 1.0, "exact"),))

c = Claim.paired(check, id="t.draws", paper="t", statement="s", source="s", kind="symbolic",
                 strategy=st.fixed_dictionaries({{"x": st.floats(-1e3, 1e3)}}),
                 theory={{"k": 1}}, control={{"k": 2}}, control_description="c")
run_claim(c, "quick")
print(json.dumps(seen))
"""


def test_drawn_examples_do_not_depend_on_loaded_modules():
    """Hypothesis mixes constants of loaded modules into its draws unless the runner
    stops it: a claim must draw the same examples alone and beside every row."""
    import json
    import subprocess
    import sys

    def draws(imports: str) -> list:
        out = subprocess.run([sys.executable, "-c", _DRAWS.format(imports=imports)],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    alone = draws("")
    beside = draws("import verify.markov, verify.scan_snap, verify.cooccurrence")
    assert len(alone) >= 12 and alone == beside


def test_t_interval_power_matches_simulation_and_samples_for_power_is_its_inverse():
    """The power of the sign decision by mean_interval is the noncentral-t probability (a
    Monte Carlo of 4000 normal samples of size 10 agrees within 4 s.e.), and samples_for_power is the
    first n that reaches the power asked for."""
    from numerics.stats import samples_for_power, t_interval_power

    rng = np.random.default_rng(0)
    effect, sd, n = 0.4, 0.26, 10
    x = rng.normal(effect, sd, (4000, n))
    lower = np.array([mean_interval(row)[1] for row in x])
    simulated = float((lower > 0).mean())
    exact = t_interval_power(effect, sd, n)
    assert abs(simulated - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000)
    need = samples_for_power(effect, sd, power=0.9)
    assert t_interval_power(effect, sd, need) >= 0.9 > t_interval_power(effect, sd, need - 1)
    assert samples_for_power(-0.1, 1.0) is None
    assert samples_for_power(1e-6, 1.0, max_n=1000) is None


def test_a_worst_member_part_drifts_only_if_a_members_allowance_moves():
    from verify.error_models import worst_member

    def check(params, ctx, *, shift, allowances):
        # the theory picks which member is worst (shift), the allowances are its own
        pred = np.array([0.0, shift])
        return Evidence((worst_member("m", pred, np.zeros(2), np.array(allowances), "per member",
                                      kind="symbolic"),
                         Part("r", 0.0, shift, abs(shift), 0.01, "exact", kind="symbolic")))

    for control_allowances, drifts in (((0.1, 0.2), False), ((0.1, 0.3), True)):
        c = Claim.paired(check, id="toy.members", paper="toy", statement="s", source="s",
                         kind="symbolic", strategy=st.just({}), examples=({"x": 1},),
                         control_description="c",
                         theory={"shift": 0.0, "allowances": (0.1, 0.2)},
                         control={"shift": 0.5, "allowances": control_allowances})
        r = run_claim(c, PROFILE)
        assert r.control_rejected
        assert ("m" in r.tolerance_drift) is drifts


def test_a_tolerance_that_moves_with_the_theory_is_flagged_unless_declared():
    from verify.claims import Claim, Evidence, Part, tolerance_from_theory
    from verify.report import metadata, to_json, to_markdown

    def check(params, ctx, *, scale, declare):
        # the tolerance is computed from the theory under test: it grows under the control
        part = Part("p", 1.0, 1.0 + 0.5 * scale, 0.5 * scale, tolerance=scale,
                    error_model="a tolerance proportional to the theory", kind="symbolic")
        other = Part("q", 1.0, 1.0, 0.0, 0.1, "exact", kind="symbolic")
        part = tolerance_from_theory(part, "by design") if declare else part
        fail = Part("r", 0.0, scale - 1.0, abs(scale - 1.0), 0.01, "exact", kind="symbolic")
        return Evidence((part, other, fail))

    for declare in (False, True):
        c = Claim.paired(check, id="toy.drift", paper="toy", statement="s", source="s",
                         kind="symbolic", strategy=st.just({}), examples=({"x": 1},),
                         control_description="c", theory={"scale": 1.0, "declare": declare},
                         control={"scale": 3.0, "declare": declare})
        r = run_claim(c, PROFILE)
        assert set(r.tolerance_drift) == {"p"}
        assert r.undeclared_drift == (() if declare else ("p",))
        md = to_markdown(to_json([r], metadata("test", "cpu", 0.0, 0.0)))
        assert ("undeclared" in md) is not declare
