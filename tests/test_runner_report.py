"""The runner and the reports, on toy claims whose truth is known."""

import json
from functools import partial

from hypothesis import strategies as st

from verify.claims import Claim, Evidence
from verify.report import to_json, to_markdown, to_table, write_reports
from verify.runner import Profile, run_claim

PROFILE = Profile("test", fast=20, slow=1, gpu=0)


def _check(params, ctx, *, slope):
    # "x^2 >= slope * x - 1 for x in [0, 3]": true for slope 2 (AM-GM), false for slope 3.
    x = params["x"]
    lhs, rhs = x * x, slope * x - 1
    return Evidence(rhs, lhs, max(0.0, rhs - lhs), 0.0, "exact inequality")


def _claim(slope_true, slope_control, expected="holds"):
    return Claim(id="toy.amgm", paper="toy", statement="x^2 >= 2x - 1", source="AM-GM",
                 kind="symbolic", strategy=st.fixed_dictionaries({"x": st.floats(0, 3)}),
                 check=partial(_check, slope=slope_true),
                 control=partial(_check, slope=slope_control),
                 control_description="slope 3", expected=expected)


def test_true_claim_holds_and_control_is_rejected():
    r = run_claim(_claim(2, 3), PROFILE)
    assert r.outcome == "holds" and r.control_rejected and r.ok
    assert r.examples >= 10


def test_false_claim_is_refuted_with_shrunk_example():
    r = run_claim(_claim(3, 3, expected="holds"), PROFILE)
    assert r.outcome == "refuted" and not r.ok
    assert 0.38 < r.falsifying_example["x"] < 2.62  # x^2 - 3x + 1 < 0 there


def test_control_that_cannot_fail_is_flagged():
    r = run_claim(_claim(2, 2), PROFILE)
    assert r.outcome == "holds" and not r.control_rejected and not r.ok


def test_crashing_check_is_an_error_not_a_pass():
    def boom(params, ctx):
        raise RuntimeError("boom")

    c = Claim(id="toy.boom", paper="toy", statement="-", source="-", kind="symbolic",
              strategy=st.fixed_dictionaries({"x": st.floats(0, 1)}), check=boom,
              control=partial(_check, slope=3), control_description="-")
    r = run_claim(c, PROFILE)
    assert r.outcome == "error" and "boom" in r.error_message and not r.ok


def test_report_schema(tmp_path):
    results = [run_claim(_claim(2, 3), PROFILE), run_claim(_claim(3, 3), PROFILE)]
    md, js = write_reports(results, tmp_path, "test", "cpu")
    data = json.loads(js.read_text())
    assert set(data) == {"version", "profile", "device", "claims"}
    keys = {"id", "paper", "statement", "source", "kind", "expected", "outcome",
            "control_rejected", "worst", "examples", "seconds"}
    for c in data["claims"]:
        assert keys <= set(c)
        assert c["outcome"] in ("holds", "refuted", "error")
        assert set(c["worst"]) == {"predicted", "observed", "error", "tolerance"}
        assert isinstance(c["examples"], int) and isinstance(c["control_rejected"], bool)
    assert "toy.amgm" in md.read_text() and "refuted" in to_table(results)
    assert to_json(results, "test", "cpu")["claims"][1]["outcome"] == "refuted"
    assert "Falsifying example" in to_markdown(results, "test", "cpu")
