"""``tdcheck mutate`` on the example row: the score separates a claim that consumes its
theory from a deliberately toothless one (which re-types the formula instead of calling it)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import sympy as sp

from theory import example as te
from theory.flow import ReducedSystem
from verify.mutate import Mutant, _mutant_kinds, apply_mutation, leaves, mutants_for, mutate_row


def test_leaves_and_mutations_of_each_kind():
    sys = te.system()
    paths = leaves(sys)
    assert [k for _, k in paths] == ["numeric", "numeric"]
    mutated = apply_mutation(sys, paths[1][0], "scale+", 0.05)
    assert isinstance(mutated, ReducedSystem)
    assert sp.simplify(mutated.rhs[1] - sp.Rational(21, 20) * sys.rhs[1]) == 0
    assert mutated.rhs[0] == sys.rhs[0]
    pair = (1.0, np.array([2.0, 3.0]))
    (p0, _), (p1, _) = leaves(pair)
    assert apply_mutation(pair, p0, "sign", 0.05)[0] == -1.0
    assert np.allclose(apply_mutation(pair, p1, "scale-", 0.05)[1], [1.9, 2.85])
    assert apply_mutation("local", (), "swap", 0.05) == "global"
    assert apply_mutation(True, (), "swap", 0.05) is False
    twin = apply_mutation(te.balance_twin, leaves(te.balance_twin)[0][0], "scale+", 0.1)
    assert twin(2.0, 1.0) == pytest.approx(1.1 * 3.0)


def test_mutant_count_is_capped_deterministically():
    structure = [((("idx", i),), "numeric") for i in range(5)]
    first = mutants_for("f", structure, 0.05, cap=4)
    assert len(first) == 4 and first == mutants_for("f", structure, 0.05, cap=4)
    assert first[0].label == "f: [0] x 1.05"
    assert Mutant.from_json(first[-1].to_json()) == first[-1]
    assert len(mutants_for("g", None, 0.05)) == 3  # never called: whole-output mutants


def test_a_tuple_keyed_leaf_survives_the_json_round_trip():
    """A mutant reaches its child process as JSON, which turns a tuple key into a list: the
    mutation must still find the leaf (a dict keyed by partitions, say)."""
    value = {(1, 2): 1.0, (3,): 2.0}
    path = next(p for p, _ in leaves(value) if p[0][1] == (1, 2))
    mutant = Mutant.from_json(json.loads(json.dumps(Mutant("f", path, "sign", 0.05).to_json())))
    assert apply_mutation(value, mutant.path, mutant.op, mutant.delta) == {(1, 2): -1.0, (3,): 2.0}


def test_an_immutable_matrix_or_rhs_is_mutated_not_silently_kept():
    """sympy's simplify returns immutable matrices: a mutant of one of their entries (or of
    such an rhs) must change it, not fall through the failed assignment unchanged."""
    x = sp.Symbol("x")
    m = sp.ImmutableMatrix([[1, x], [x, 2]])
    out = apply_mutation(m, (("entry", 3),), "sign", 0.05)
    assert isinstance(out, sp.ImmutableMatrix) and out[3] == -2 and m[3] == 2
    sys = te.system()
    frozen = ReducedSystem(state=sys.state, params=sys.params, rhs=sys.rhs.as_immutable(),
                           loss=sys.loss)
    path = leaves(frozen)[0][0]
    assert sp.simplify(apply_mutation(frozen, path, "sign", 0.05).rhs[0] + sys.rhs[0]) == 0


TOOTHLESS = '''
"""A deliberately toothless copy of example.saddle: its theory re-types the eigenvalues."""
from verify import example as ve
from verify.claims import Claim


def claims():
    base = next(c for c in ve.claims() if c.id == "example.saddle")
    return [Claim.paired(
        ve.check_saddle, id=base.id, paper=base.paper, statement=base.statement,
        source=base.source, kind=base.kind, strategy=base.strategy, examples=base.examples,
        theory={"eigenvalues": lambda c: (-abs(c), abs(c))},
        control={"eigenvalues": lambda c: (-abs(c) / 2, abs(c) / 2)},
        control_description="halved")]
'''


def test_score_separates_a_consuming_claim_from_a_toothless_one(tmp_path, monkeypatch):
    sound = mutate_row("example", "test", functions=["saddle_eigenvalues"], max_mutants=2,
                       jobs=2)
    assert sound.mutants == 2 and sound.killed == 2
    assert sound.functions["saddle_eigenvalues"]["consumed_by"] == ["example.saddle"]
    assert set(sound.claim_seconds) == {"example.saddle"}  # where the mutation time went
    assert all(m["seconds"] >= 0 for m in sound.functions["saddle_eigenvalues"]["mutants"])
    (tmp_path / "toothless_example.py").write_text(textwrap.dedent(TOOTHLESS))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    weak = mutate_row("example", "test", functions=["saddle_eigenvalues"], max_mutants=2,
                      jobs=2, claims_module="toothless_example")
    assert weak.baseline["example.saddle"]["ok"]  # the toothless claim still "holds"
    assert weak.functions["saddle_eigenvalues"]["consumed_by"] == []
    assert weak.killed == 0 and weak.score == 0.0 < sound.score == 1.0


def test_a_claim_judges_by_change_from_the_map_run_kill_weak_defect():
    """Against the map run: holds -> refuted is a kill, holds -> inconclusive weak; a claim
    not settled in the map run (inconclusive) that changes outcome is weak, one whose control
    verdict changes is a kill; a check that raises is a defect, never a kill."""
    from verify.mutate import _detect

    settled = {"outcome": "holds", "ok": True, "control_rejected": True,
               "positive_passed": None, "control_error": None, "positive_error": None}
    assert _detect(settled, dict(settled)) is None
    assert _detect(settled, {**settled, "outcome": "refuted"}) == ("kill", "refutation")
    assert _detect(settled, {**settled, "outcome": "inconclusive"}) == ("weak", "inconclusive")
    assert _detect(settled, {**settled, "control_rejected": False}) == ("kill", "control")
    raised = _detect(settled, {**settled, "outcome": "error",
                               "message": "IndexError: index 3 is out of bounds\ntraceback"})
    assert raised == ("defect", "check raised: IndexError: index 3 is out of bounds")
    # a control that raises is a defect, not a "control no longer rejected" kill
    assert _detect(settled, {**settled, "control_rejected": False,
                             "control_error": "ValueError: x"})[0] == "defect"
    assert _detect(settled, {"error": "timed out after 60 s", "timed_out": True})[0] == "timeout"
    unsettled = {**settled, "outcome": "inconclusive", "ok": False, "control_rejected": None}
    assert _detect(unsettled, dict(unsettled)) is None
    assert _detect(unsettled, {**unsettled, "outcome": "refuted"})[0] == "weak"
    assert _detect(unsettled, {**unsettled, "control_rejected": True}) == (
        "kill", "changed control")


def test_simulation_parts_reject_pass_to_fail_and_weakly_otherwise():
    from verify.mutate import _sim_moves

    base = {"outcome": "holds", "kinds": {"exact": ["symbolic", "pass"],
                                           "run": ["simulation", "pass"],
                                           "untagged": [None, "pass"]}}
    moved = {"kinds": {"exact": ["symbolic", "fail"], "run": ["simulation", "fail"],
                       "untagged": [None, "fail"]}}
    assert _sim_moves(base, moved) == (["run: pass -> fail"], [])
    assert _sim_moves(base, {"kinds": {"run": ["simulation", "inconclusive"]}}) == (
        [], ["run: pass -> inconclusive"])
    assert _sim_moves(base, {"kinds": {"exact": ["symbolic", "fail"]}}) == ([], [])
    unsettled = {"outcome": "inconclusive", "kinds": {"run": ["simulation", "inconclusive"]}}
    assert _sim_moves(unsettled, {"kinds": {"run": ["simulation", "fail"]}}) == (
        [], ["run: inconclusive -> fail"])


def test_permutation_mutants_for_index_valued_functions():
    """A MUTANT_KINDS function's integer leaves get index mutants (swap, reverse, rotate;
    +/- 1; drop/add a member); float leaves beside them keep their numeric mutants; an
    unregistered function's integer array is listed as an integer leaf with no mutant."""
    order = (1, 2, 0)
    assert leaves(order, index=True) == [((), "permutation")]
    muts = mutants_for("ranking", leaves(order, index=True), 0.05, index=True)
    assert [m.op for m in muts] == ["swap01", "reverse", "rotate"]
    assert [apply_mutation(order, m.path, m.op, m.delta) for m in muts] == [
        (2, 1, 0), (0, 2, 1), (2, 0, 1)]
    arr = np.array([[0, 1], [2, 3], [4, 5]])
    assert apply_mutation(arr, (), "rotate", 0.05).tolist() == [[2, 3], [4, 5], [0, 1]]
    assert arr.tolist() == [[0, 1], [2, 3], [4, 5]]  # a copy, not in place
    mixed = (np.array([2, 0]), 0.5, 3)
    assert leaves(mixed, index=True) == [((("idx", 0),), "transposition"),
                                         ((("idx", 1),), "numeric"), ((("idx", 2),), "index")]
    assert apply_mutation(mixed, (("idx", 0),), "swap01", 0.05)[0].tolist() == [0, 2]
    assert apply_mutation(mixed, (("idx", 2),), "prev", 0.05)[2] == 2
    assert apply_mutation(0, (), "prev", 0.05) == 1  # stays a valid index
    assert apply_mutation(frozenset({1, 4}), (), "drop", 0.05) == frozenset({1})
    assert apply_mutation(frozenset({1, 4}), (), "add", 0.05) == frozenset({1, 4, 5})
    assert leaves(np.array([2, 0, 1])) == [((), "integer")]
    assert mutants_for("f", leaves(np.array([2, 0, 1])), 0.05) == []
    assert len(mutants_for("g", None, 0.05, index=True)) == 3


def test_set_mutants_for_token_sets_held_as_sequences():
    """A function registered "set" (a token set as a sorted tuple, e.g. scan_snap's G_DT(n))
    gets drop/add mutants on each set, never permutations (a permuted set is the same set)."""
    from theory import scan_snap

    dts = ((1, 2, 5), (3,), ())
    structure = leaves(dts, index="set")
    assert structure == [((("idx", 0),), "set"), ((("idx", 1),), "set")]
    muts = mutants_for("distinct_tokens", structure, 0.05, index="set")
    assert [(m.path, m.op) for m in muts] == [((("idx", 0),), "drop"), ((("idx", 0),), "add"),
                                              ((("idx", 1),), "drop"), ((("idx", 1),), "add")]
    got = [apply_mutation(dts, m.path, m.op, m.delta) for m in muts]
    assert got == [((1, 2), (3,), ()), ((1, 2, 5, 6), (3,), ()), ((1, 2, 5), (), ()),
                   ((1, 2, 5), (3, 4), ())]
    assert [m.op for m in mutants_for("common_tokens", None, 0.05, index="set")] == [
        "drop", "add"]
    assert scan_snap.MUTANT_KINDS["distinct_tokens"] == "set"
    assert _mutant_kinds(scan_snap)["common_tokens"] == "set"


def test_shape_mutants_for_scale_free_functions():
    """A function registered "shape" (a weight no consumer can see the scale of, e.g.
    scan_snap's c~) gets tilts along its last axis and the sign flip, never the equivalent
    scale mutants; its integer leaves stay unmutated (not index-valued) and the tilt is the
    same at every position of the leading axes."""
    from theory import scan_snap

    c = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0]])
    structure = leaves(c, index="shape")
    assert structure == [((), "numeric")]
    muts = mutants_for("unnormalised_attention", structure, 0.05, index="shape")
    assert [m.op for m in muts] == ["shape+", "shape-", "sign"]
    up, down = (apply_mutation(c, (), op, 0.05) for op in ("shape+", "shape-"))
    assert np.allclose(up / c, [[1.05, 0.95, 1.05]] * 2)
    assert np.allclose(down / c, [[0.95, 1.05, 0.95]] * 2)
    assert not np.allclose((up / c) / (up / c)[0, 0], 1.0)  # no single multiple undoes it
    assert "along its last axis" in muts[0].label
    assert leaves(np.array([2, 0, 1]), index="shape") == [((), "integer")]
    assert [m.op for m in mutants_for("w", None, 0.05, index="shape")] == [
        "shape+", "shape-", "sign"]
    assert np.allclose(apply_mutation(lambda: c, (), "shape+", 0.05)() / c, up / c)
    assert _mutant_kinds(scan_snap)["unnormalised_attention"] == "shape"


def test_whole_output_scale_scales_every_numeric_leaf():
    value = (2.0, {"w": np.array([1.0, -1.0])}, "local")
    out = apply_mutation(value, (), "all+", 0.1)
    assert out[0] == pytest.approx(2.2) and np.allclose(out[1]["w"], [1.1, -1.1])
    assert out[2] == "local"
    sys = te.system()
    scaled = apply_mutation(sys, (), "all-", 0.5)
    assert all(sp.simplify(scaled.rhs[i] - sys.rhs[i] / 2) == 0 for i in range(2))


SIMROW_THEORY = '''
"""A synthetic theory row for the tests of tdcheck mutate (not a paper)."""
__all__ = ["eigen", "gain", "offset", "ranking", "rate", "slots", "spread"]
MUTANT_KINDS = {"ranking": "permutation"}


def eigen(c):
    return (-abs(c), abs(c))


def gain(c):
    return 2.0 * c


def rate(c):
    return float(c)


def slots():
    return 3.0


def ranking():
    return (1, 2, 0)


def offset(c):
    return c + 1.0


def spread(c):
    return 2.0 * abs(c)
'''

#: the synthetic rows' shared head: imports and the tiny "full model"'s config
_SYNTHETIC_HEAD = '''
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from numerics.cache import run_function
from verify.claims import Claim, Evidence, Example, Part
from verify.error_models import exact, worst_member


@dataclass(frozen=True)
class Tiny:
    c: float
'''

SIMROW_CLAIMS = '''
"""Synthetic claims on simrow_theory: each built to answer mutants in one known way."""
import simrow_theory as th
''' + _SYNTHETIC_HEAD + '''

@run_function("simrow.tiny", full_model=True, smoke=lambda: Tiny(1.0))
def tiny(config):
    """The "full model": the Hessian spectrum of (a b - c)^2 / 2 at the origin, some
    scores and a rate, computed without the theory."""
    c = config.c
    return {"spectrum": np.linalg.eigvalsh(np.array([[0.0, -c], [-c, 0.0]])),
            "scores": np.array([1.0, 3.0, 2.0]), "rate": c}


def _run(params, ctx):
    return tiny(Tiny(params["c"]), cache=ctx.cache)


def sees(params, ctx, *, eig):
    """A simulation part with a 3 % allowance: it rejects a 5 % slip."""
    c = params["c"]
    pred = np.sort(np.array([float(v) for v in eig(c)]))
    return Evidence((worst_member("spectrum vs the tiny model", pred, _run(params, ctx)["spectrum"],
                                  0.03 * abs(c), "3 % of |c|", kind="simulation"),))


def blind(params, ctx, *, g):
    """An exact part that sees any slip, a simulation part too loose to see one."""
    c, h = params["c"], 1e-3
    fd = ((c + h) ** 2 - (c - h) ** 2) / (2 * h)
    sym = exact("gain vs a central difference of c^2", g(c), fd, 1e-9, "rounding",
                kind="symbolic")
    sim = exact("gain vs the tiny model (loose)", g(c), 2 * _run(params, ctx)["spectrum"][1],
                10.0, "deliberately loose", kind="simulation")
    return Evidence((sym, sim))


def noisy(params, ctx, *, r):
    """A simulation part with an interval +/- 0.035 on its error, tolerance 0.06."""
    c = params["c"]
    pred, obs = r(c), _run(params, ctx)["rate"]
    err = abs(pred - obs)
    return Evidence((Part.bounded("rate vs the tiny model", pred, obs, err, max(0.0, err - 0.035),
                                  err + 0.035, 0.06, "interval +/- 0.035", kind="simulation"),))


def sized(params, ctx, *, eig, sp):
    """The spectrum again, its allowance sized by another theory function (1.5 % of it):
    that function moves only the tolerance."""
    c = params["c"]
    pred = np.sort(np.array([float(v) for v in eig(c)]))
    return Evidence((worst_member("spectrum vs the tiny model (allowance from spread)", pred,
                                  _run(params, ctx)["spectrum"], 0.015 * sp(c),
                                  "1.5 % of theory.spread", kind="simulation"),))


def raises(params, ctx, *, n):
    """A check that raises (a defect) when the theory is not a whole number."""
    k = n()
    if k != int(k):
        raise ValueError(f"slots must be a whole number, got {k}")
    filled = np.ones(int(k))
    observed = _run(params, ctx)["spectrum"].size + 1
    return Evidence((exact("slots vs the tiny model", float(filled.size), observed, 0.0,
                           "exact count", kind="simulation"),))


def ordering(params, ctx, *, rank):
    observed = tuple(int(i) for i in np.argsort(-_run(params, ctx)["scores"]))
    wrong = sum(a != b for a, b in zip(rank(), observed, strict=True))
    return Evidence((exact("ordering vs the tiny model", 0.0, wrong, 0.0, "exact",
                           kind="simulation"),))


def pure(params, ctx, *, off):
    c = params["c"]
    return Evidence((exact("offset vs c + 1", off(c), c + 1.0, 1e-12, "rounding",
                           kind="symbolic"),))


_STRATEGY = st.fixed_dictionaries({"c": st.just(1.0)})


def _claim(fn, theory, control, **fields):
    return Claim.paired(fn, id=f"simrow.{fn.__name__}", paper="simrow",
                        statement=fn.__name__, source="synthetic", kind="symbolic",
                        strategy=_STRATEGY, theory=theory, control=control,
                        control_description="a near miss", cost="slow",
                        examples=(Example({"c": 1.0}),), **fields)


def claims():
    return [
        _claim(sees, {"eig": th.eigen}, {"eig": lambda c: tuple(v / 2 for v in th.eigen(c))}),
        _claim(blind, {"g": th.gain}, {"g": lambda c: th.gain(c) / 2}),
        _claim(noisy, {"r": th.rate}, {"r": lambda c: 2 * th.rate(c)}),
        _claim(raises, {"n": th.slots}, {"n": lambda: th.slots() + 1}),
        _claim(sized, {"eig": th.eigen, "sp": th.spread},
               {"eig": lambda c: tuple(v / 2 for v in th.eigen(c)), "sp": th.spread}),
        _claim(ordering, {"rank": th.ranking}, {"rank": lambda: tuple(reversed(th.ranking()))},
               qualitative="an ordering only"),
        _claim(pure, {"off": th.offset}, {"off": lambda c: th.offset(c) + 1}),
    ]
'''


@pytest.fixture(scope="session")
def simrow(tmp_path_factory):
    """The synthetic row mutated once (3 mutants per function) with its resolution.
    Session-scoped: under ``--dist loadgroup`` its two tests share a worker but not always
    consecutively, and a module-scoped fixture was torn down between them and built twice
    (33-35 s each, pytest --durations on d2a5a52)."""
    folder = tmp_path_factory.mktemp("simrow")
    (folder / "simrow_theory.py").write_text(textwrap.dedent(SIMROW_THEORY))
    (folder / "simrow_claims.py").write_text(textwrap.dedent(SIMROW_CLAIMS))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(folder))
        return mutate_row("simrow", "test", max_mutants=3, jobs=2, resolution=True,
                          claims_module="simrow_claims", theory_module="simrow_theory")


@pytest.mark.xdist_group("simrow")  # one worker builds the module fixture once
def test_simulation_score_weak_kills_and_exception_defects(simrow):
    """eigen: a simulation part rejects every mutant; gain: an exact part kills them, the
    loose simulation part stays passing; rate: a 5 % slip only turns the simulation part
    inconclusive (weak), a sign flip fails it; slots: the check raises (defects, no kill);
    ranking: permutation mutants, rejected; offset: no simulation claim consumes it."""
    assert all(simrow.baseline[c]["ok"] for c in simrow.baseline), simrow.baseline
    f = simrow.functions
    assert [f[n]["simulation"] for n in ("eigen", "gain", "rate", "slots", "ranking",
                                         "spread", "offset")] == [True] * 6 + [False]
    status = {n: [m["status"] for m in f[n]["mutants"]] for n in f}
    assert status == {"eigen": ["kill"] * 3, "gain": ["kill"] * 3,
                      "rate": ["weak", "weak", "kill"], "slots": ["defect"] * 3,
                      "ranking": ["kill"] * 3, "offset": ["kill"] * 3,
                      "spread": ["survived", "survived", "kill"]}
    sim = {n: [m["simulation"] for m in f[n]["mutants"]] for n in f}
    assert sim == {"eigen": ["rejected"] * 3, "gain": ["survived"] * 3,
                   "rate": ["weak", "weak", "rejected"], "slots": ["defect"] * 3,
                   "ranking": ["rejected"] * 3, "offset": [None] * 3,
                   "spread": ["survived", "survived", "rejected"]}
    assert [m["label"].split(": ")[1] for m in f["ranking"]["mutants"]] == [
        "output entries 0 and 1 swapped", "output reversed", "output rotated by one"]
    js = simrow.to_json()
    assert (js["mutants"], js["killed"], js["weak"], js["exceptions"], js["timeouts"]) == (
        21, 16, 2, 3, 0)
    assert js["score"] == pytest.approx(16 / 21)
    assert (js["simulation"]["mutants"], js["simulation"]["rejected"],
            js["simulation"]["weak"], js["simulation"]["defect"]) == (18, 8, 2, 3)
    assert js["simulation"]["score"] == pytest.approx(8 / 18)
    assert {d["claim"] for d in js["defects"]} == {"simrow.raises"}
    assert any("ValueError: slots must be a whole number" in d["message"] for d in js["defects"])
    assert any("negative dimensions" in d["message"] for d in js["defects"])  # the sign flip


def test_resolution_ladder_on_the_synthetic_row(simrow):
    """A 3 % allowance resolves 5 %; an interval +/- 0.035 against 0.06 resolves 10 % (5 %
    weakly); a loose part and a raising check resolve nothing up to 50 %; a qualitative
    claim is n/a without running."""
    res = simrow.resolution
    assert res["simrow.sees"]["delta"] == 0.05 and res["simrow.sees"]["functions"] == ["eigen"]
    assert [g["result"] for g in res["simrow.sees"]["rungs"]] == [
        "not rejected", "not rejected", "rejected"]
    assert len(res["simrow.sees"]["rungs"][0]["tried"]) == 1  # a failing rung stops early
    assert res["simrow.sees"]["by_function"] == {
        "eigen": {"delta": 0.05, "weak_delta": 0.05, "moves_simulation": True,
                  "moves_compared_values": True}}
    # spread sizes sized's allowance only: its own rung is > 50 % (a tolerance that shrinks
    # by half still holds an exact prediction); no claim of the row resolves spread, so it
    # stays in the claim's rung (_cover_allowances: test_allowance_only_needs_cover)
    assert res["simrow.sized"]["delta"] == "> 50 %"
    assert res["simrow.sized"]["allowance_uncovered"] == ["spread"]
    assert res["simrow.sized"]["allowance_only"] == []
    assert res["simrow.sized"]["rung_functions"] == ["eigen", "spread"]
    assert res["simrow.sized"]["by_function"]["spread"] == {
        "delta": "> 50 %", "weak_delta": None, "moves_simulation": True,
        "moves_compared_values": False}
    assert res["simrow.noisy"]["delta"] == 0.10 and res["simrow.noisy"]["weak_delta"] == 0.05
    assert res["simrow.blind"]["delta"] == "> 50 %"
    # a check that raises under every mutant gives no evidence that its function stays out
    # of what the simulation parts compare: the function keeps its rung (> 50 %)
    assert res["simrow.raises"]["delta"] == "> 50 %"
    assert res["simrow.raises"]["not_in_simulation_parts"] == []
    assert res["simrow.raises"]["rung_functions"] == res["simrow.raises"]["functions"]
    assert {t["verdict"] for g in res["simrow.raises"]["rungs"] for t in g["tried"]} == {"defect"}
    assert res["simrow.ordering"]["delta"] == "n/a: qualitative (signs or orderings only)"
    assert res["simrow.ordering"]["rungs"] == []
    assert "simrow.pure" not in res
    from verify.mutate import headline, row_summary

    assert headline(row_summary(simrow.to_json())) == (
        "76% (2 weak, 3 exceptions), simulation 44% of 18, resolution <= 5 % for 1 of 6 "
        "simulation claims (1 qualitative)")


@pytest.mark.xdist_group("simrow")  # one worker builds the module fixture once
def test_list_shows_the_kept_mutation_summary(simrow, tmp_path, monkeypatch, capsys):
    """`tdcheck mutate` keeps each row's summary beside the run cache; `tdcheck list` reads
    it with no flag (kept here under the example row's name, since list shows registered
    rows), and a later resolution-only run keeps the earlier score."""
    import dataclasses

    from verify.cli import main
    from verify.mutate import kept_path, write_mutation_reports

    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no tdcheck-report folder here
    row = dataclasses.replace(simrow, paper="example")
    md, js = write_mutation_reports([row], tmp_path / "out", {"commit": "abc1234"})
    assert "Exception defects" in md.read_text() and "### Resolution" in md.read_text()
    kept = json.loads(kept_path("example").read_text())
    assert kept["score"] == pytest.approx(16 / 21) and kept["commit"] == "abc1234"
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "mutation score 76% (2 weak, 3 exceptions), simulation 44% of 18," in \
        " ".join(out.split())
    assert max(len(line) for line in out.splitlines()) <= 80
    only = dataclasses.replace(row, functions={}, resolution_only=True,
                               resolution={"example.x": {"delta": 0.02}})
    write_mutation_reports([only], tmp_path / "elsewhere", {"commit": "def5678"})
    kept = json.loads(kept_path("example").read_text())
    assert kept["score"] == pytest.approx(16 / 21) and kept["commit"] == "abc1234"
    assert kept["resolution"] == {"example.x": {"delta": 0.02, "weak_delta": None,
                                                "seconds": None}}
    assert main(["list", "--json"]) == 0
    rows = {r["paper"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["example"]["mutation"]["resolution"] == {"k": 1, "n": 1, "qualitative": 0}


TWICE = '''
"""The example row's saddle claim twice: two claims that consume one function."""
import dataclasses

from verify import example as ve


def claims():
    base = next(c for c in ve.claims() if c.id == "example.saddle")
    return [base, dataclasses.replace(base, id="example.saddle_again")]
'''


def test_a_mutant_stops_at_its_first_detecting_claim(tmp_path, monkeypatch):
    """Default: the consuming claims run cheapest first and the first detection ends the
    mutant's run (one claim named); ``every_claim`` runs and names both."""
    (tmp_path / "twice_example.py").write_text(textwrap.dedent(TWICE))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    kw = {"functions": ["saddle_eigenvalues"], "max_mutants": 2, "jobs": 2,
          "claims_module": "twice_example"}
    first = mutate_row("example", "test", **kw)
    every = mutate_row("example", "test", every_claim=True, **kw)
    assert first.functions["saddle_eigenvalues"]["consumed_by"] == [
        "example.saddle", "example.saddle_again"]
    assert first.killed == every.killed == 2
    assert all(len(m["by"]) == 1 for m in first.functions["saddle_eigenvalues"]["mutants"])
    assert all(len(m["by"]) == 2 for m in every.functions["saddle_eigenvalues"]["mutants"])


def test_leaves_exactly_zero_get_no_mutants():
    """With zeros=True (the map pass) an exact zero leaf (sympy 0, integer 0) has kind
    "zero" and no mutants: scaling or flipping it is the function itself; a float 0 keeps
    its mutants (its sign flip is -0.0), as do nonzero leaves and sympy expressions that
    are not the number 0."""
    x = sp.Symbol("x")
    value = (sp.Rational(1, 6), sp.S.Zero, 0.0, x - x + 1, np.zeros(3), 0)
    kinds = [k for _, k in leaves(value, zeros=True)]
    assert kinds == ["numeric", "zero", "numeric", "numeric", "numeric", "zero"]
    assert [k for _, k in leaves(value)] == ["numeric"] * 6  # without zeros: unchanged
    muts = mutants_for("rates", leaves(value, zeros=True), 0.05, cap=0)
    assert {m.path for m in muts} == {(("idx", i),) for i in (0, 2, 3, 4)}


def test_kills_by_the_domain_check_alone_are_counted_apart():
    """A refutation in which only a non-prediction part (admissibility, unusable output)
    fails and no other part's worst status over the examples moved is a domain kill; one
    where a prediction's part also moved, or a control kill, is not; the row counts a
    mutant whose every killing claim is a domain kill."""
    from verify.mutate import NON_PREDICTION_PARTS, RowResult, _domain_kill

    adm = NON_PREDICTION_PARTS[0]
    base = {"kinds": {"Eqn 11": ["symbolic", "pass"], "run": ["simulation", "pass"]}}
    only_domain = {"kinds": {adm: ["symbolic", "fail"], "Eqn 11": ["symbolic", "pass"],
                             "run": ["simulation", "pass"]}}
    also_prediction = {"kinds": {adm: ["symbolic", "fail"], "Eqn 11": ["symbolic", "fail"],
                                 "run": ["simulation", "pass"]}}
    assert _domain_kill(base, only_domain, "refutation")
    assert not _domain_kill(base, also_prediction, "refutation")
    assert not _domain_kill(base, only_domain, "control")
    assert not _domain_kill(base, {"kinds": {"Eqn 11": ["symbolic", "fail"]}}, "refutation")
    # a check with several theory inputs names one usability part per input
    per_input = {"kinds": {"Gamma: theory output usable": ["symbolic", "fail"],
                           "Eqn 11": ["symbolic", "pass"], "run": ["simulation", "pass"]}}
    assert _domain_kill(base, per_input, "refutation")

    def entry(domain):
        return {"label": "f: output sign flip", "killed": True, "status": "kill",
                "by": {"c": "refutation", "d": "refutation"}, "domain": domain}

    row = RowResult("p", "quick", functions={"f": {"mutants": [
        entry({"c": True, "d": True}), entry({"c": True, "d": False}), entry({})]}})
    assert row.domain_only == 1


def test_map_runs_record_theory_calls_hidden_behind_a_derivation_cache(monkeypatch):
    """A run computed in the map pass starts with the derivation caches outside theory/
    emptied, so a derivation an earlier run cached (numerics.rank_increase's
    _quadratic_log_system) calls theory again and the run's key records the call; else a
    mutant is served that run unmutated from the map's cache."""
    import functools
    import sys
    import types

    from verify.mutate import _MapObserver

    fake = types.ModuleType("numerics._fake_derivations")

    @functools.cache
    def derivation(x):
        return x + 1

    fake.derivation = derivation
    monkeypatch.setitem(sys.modules, "numerics._fake_derivations", fake)
    derivation(1)
    assert derivation.cache_info().currsize == 1
    with _MapObserver().computing("key"):
        assert derivation.cache_info().currsize == 0


def test_a_run_computed_by_another_map_process_charges_its_calls(tmp_path):
    """Side by side, a map process served a run that another process computed charges its
    claim with that run's theory calls (read from the calls written beside the run)."""
    from verify.claims import ROLE
    from verify.mutate import _MapObserver

    a, b = _MapObserver(tmp_path), _MapObserver(tmp_path)
    a.claim, b.claim = "row.a", "row.b"
    with a.computing("k"):
        a.called("f")
    token = ROLE.set("check")
    try:
        b.served("k")
    finally:
        ROLE.reset(token)
    assert b.roles == {"f": {"row.b": {"check"}}}
    assert b.key_calls == {"k": {"f"}}


SHARED_CLAIMS = '''
"""Three claims served one run whose set-up calls the theory (a teacher from gain)."""
from dataclasses import dataclass

from hypothesis import strategies as st

import simrow_theory as th
from numerics.cache import run_function
from verify.claims import Claim, Evidence, Example
from verify.error_models import exact


@dataclass(frozen=True)
class Teacher:
    c: float


@run_function("shared.teacher", full_model=True, smoke=lambda: Teacher(1.0))
def teacher(config):
    return {"target": th.gain(config.c)}


def check(params, ctx, *, off):
    got = teacher(Teacher(params["c"]), cache=ctx.cache)["target"]
    return Evidence((exact("offset vs the teacher", off(params["c"]), got - 1.0, 1e-12,
                           "rounding", kind="simulation"),))


def _claim(i):
    return Claim.paired(check, id=f"shared.c{i}", paper="shared", statement="s",
                        source="synthetic", kind="symbolic",
                        strategy=st.fixed_dictionaries({"c": st.just(1.0)}),
                        theory={"off": th.offset}, control={"off": lambda c: c},
                        control_description="a near miss", cost="slow",
                        examples=(Example({"c": 1.0}),))


def claims():
    return [_claim(i) for i in range(3)]
'''


def test_the_parallel_map_pass_equals_the_serial_one(tmp_path, monkeypatch):
    """One process per claim, two at a time, gives the serial pass's roles, run-call sets,
    output structures and baselines: on the synthetic row, and on three claims sharing a
    run whose set-up calls the theory (the third is served the run another process
    computed, and is charged with its call all the same)."""
    from verify.mutate import _map_pass

    folder = tmp_path / "row"
    folder.mkdir()
    (folder / "simrow_theory.py").write_text(textwrap.dedent(SIMROW_THEORY))
    (folder / "simrow_claims.py").write_text(textwrap.dedent(SIMROW_CLAIMS))
    (folder / "shared_claims.py").write_text(textwrap.dedent(SHARED_CLAIMS))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    for row in ("simrow", "shared"):
        maps = {}
        for jobs in (1, 2):
            root = tmp_path / f"{row}{jobs}"
            root.mkdir()
            maps[jobs] = _map_pass(row, "test", str(root), jobs, f"{row}_claims",
                                   "simrow_theory")
        one, two = maps[1], maps[2]
        assert "error" not in one and "error" not in two
        assert two["roles"] == one["roles"]
        assert two["key_calls"] == one["key_calls"]
        assert two["structures"] == one["structures"]
        assert list(two["baseline"]) == list(one["baseline"])
        for cid, base in one["baseline"].items():
            assert {k: v for k, v in two["baseline"][cid].items() if k != "seconds"} == \
                {k: v for k, v in base.items() if k != "seconds"}
    assert set(one["roles"]["gain"]) == {"shared.c0", "shared.c1", "shared.c2"}


def test_merged_maps_take_a_structure_from_the_first_claim_in_the_rows_order():
    """The parallel pass hands claims out costly first; the merge still takes a function's
    output structure from the first claim in the row's order (as the serial pass), and a
    leaf stays "zero" only where every claim saw 0."""
    from verify.mutate import _merge_maps

    def one(cid, structure):
        return {"functions": ["f"], "roles": {"f": {cid: ["check"]}}, "key_calls": {},
                "structures": {"f": structure}, "baseline": {cid: {"outcome": "holds"}},
                "seconds": 1.0}

    first = one("row.a", [[[0], "numeric"], [[1], "zero"]])
    second = one("row.b", [[[0], "numeric"], [[1], "numeric"], [[2], "numeric"]])
    merged = _merge_maps([first, second], ["row.a", "row.b"], 2.0)
    assert merged["structures"]["f"] == [[[0], "numeric"], [[1], "numeric"]]
    assert list(merged["baseline"]) == ["row.a", "row.b"]
    assert merged["roles"]["f"] == {"row.a": ["check"], "row.b": ["check"]}


def test_a_rounding_level_change_does_not_move_a_simulation_part():
    """--resolution leaves out a function whose mutants change a simulation part's numbers
    by float rounding only (a scale a statement takes in ratios), not by more."""
    from verify.mutate import MOVE_RTOL, _moves_simulation

    base = {"kinds": {"run": ["simulation", "pass"]},
            "parts": {"run": [0.0, 0.0796, 0.0796, 0.0796, 0.0796, 0.25]}}
    nudged = {"parts": {"run": [0.0, 0.0796 * (1 + MOVE_RTOL / 10), 0.0796, 0.0796, 0.0796,
                                0.25]}, "kinds": {"run": ["simulation", "pass"]}}
    moved = {"parts": {"run": [0.0, 0.0797, 0.0797, 0.0797, 0.0797, 0.25]},
             "kinds": {"run": ["simulation", "pass"]}}
    assert not _moves_simulation(base, nudged)
    assert _moves_simulation(base, moved)
    assert _moves_simulation(base, {"parts": {"run": [0.0, "inf", 0, 0, 0, 0.25]}})


def test_a_tolerance_only_change_is_not_a_move_of_the_compared_values():
    """--resolution names a function whose mutants move only a simulation part's tolerance
    (a model-mismatch allowance it sizes) as allowance-only; a move of the prediction,
    observation, error or its interval is a move of what the part compares."""
    from verify.mutate import _moves_simulation, _moves_value

    base = {"kinds": {"run": ["simulation", "pass"]},
            "parts": {"run": [1.0, 1.01, 0.01, 0.01, 0.01, 0.05]}}
    wider = {"kinds": {"run": ["simulation", "pass"]},
             "parts": {"run": [1.0, 1.01, 0.01, 0.01, 0.01, 0.07]}}
    shifted = {"kinds": {"run": ["simulation", "pass"]},
               "parts": {"run": [1.05, 1.01, 0.04, 0.04, 0.04, 0.05]}}
    assert _moves_simulation(base, wider) and not _moves_value(base, wider)
    assert _moves_simulation(base, shifted) and _moves_value(base, shifted)


def test_allowance_only_needs_cover():
    """An allowance-only function leaves a claim's rung only where another claim of the row
    resolves it at 5 % or finer; otherwise its own rung counts in the claim's answer."""
    from verify.mutate import _cover_allowances

    def entry(delta, rung, by, allowance=()):
        return {"delta": delta, "rung_functions": list(rung), "allowance_only": list(allowance),
                "by_function": {f: {"delta": d} for f, d in by.items()}}

    answers = {"a": entry(0.02, ["f"], {"f": 0.02, "g": "> 50 %"}, ["g"]),
               "b": entry(0.05, ["g"], {"g": 0.05}),
               "c": entry(0.01, ["f"], {"f": 0.01, "h": 0.2}, ["h"]),
               "d": entry(0.01, ["f"], {"f": 0.01, "k": "> 50 %"}, ["k"]),
               "e": {"delta": "n/a: qualitative (signs or orderings only)"}}
    for e, weak in zip(answers.values(), (0.02, 0.05, 0.01, 0.01, None), strict=True):
        e["weak_delta"] = weak
    answers["c"]["by_function"]["h"]["weak_delta"] = 0.1
    answers["d"]["by_function"]["k"]["weak_delta"] = None
    _cover_allowances(answers)
    assert answers["a"]["delta"] == 0.02 and answers["a"]["allowance_only"] == ["g"]
    assert "allowance_uncovered" not in answers["a"]
    assert answers["c"]["delta"] == 0.2 and answers["c"]["allowance_uncovered"] == ["h"]
    assert answers["c"]["unconfirmed"] and answers["c"]["weak_delta"] == 0.1
    assert answers["c"]["rung_functions"] == ["f", "h"]
    assert answers["d"]["delta"] == "> 50 %" and answers["d"]["weak_delta"] is None
    assert answers["e"]["delta"].startswith("n/a")  # no rung functions: covers nothing


def test_placement_only_needs_cover_like_an_allowance():
    """A declared placement leaves a claim's rung where another claim resolves it at 5 % or
    finer, and is put back (its own rung counting) where none does."""
    from verify.mutate import _cover_allowances

    def entry(delta, rung, by, placement=()):
        return {"delta": delta, "rung_functions": list(rung), "allowance_only": [],
                "placement_only": list(placement), "weak_delta": delta,
                "by_function": {f: {"delta": d, "weak_delta": d} for f, d in by.items()}}

    answers = {"a": entry(0.01, ["f"], {"f": 0.01, "t0": "> 50 %"}, ["t0"]),
               "b": entry(0.01, ["t0"], {"t0": 0.01}),
               "c": entry(0.01, ["f"], {"f": 0.01, "u": 0.2}, ["u"])}
    _cover_allowances(answers)
    assert answers["a"]["delta"] == 0.01 and answers["a"]["placement_only"] == ["t0"]
    assert "placement_uncovered" not in answers["a"]
    assert answers["c"]["delta"] == 0.2 and answers["c"]["placement_uncovered"] == ["u"]
    assert answers["c"]["rung_functions"] == ["f", "u"] and answers["c"]["unconfirmed"]
    # a declared correction (Claim.correction_only) is covered by the same rule
    more = {"a": dict(entry(0.01, ["f"], {"f": 0.01, "t0": 0.5}), correction_only=["t0"]),
            "b": entry(0.01, ["t0"], {"t0": 0.01}),
            "c": dict(entry(0.02, ["f"], {"f": 0.02, "s": 0.5}), correction_only=["s"])}
    _cover_allowances(more)
    assert more["a"]["delta"] == 0.01 and more["a"]["correction_only"] == ["t0"]
    assert more["c"]["delta"] == 0.5 and more["c"]["correction_uncovered"] == ["s"]


def test_check_only_carries_every_examples_compared_values(tmp_path):
    """The resolution's mutant runs (_check_only) record every example's simulation-part
    values, as the map's baseline does (``compared``), so _moves_value can compare them."""
    from numerics.cache import RunCache
    from verify.claims import Context
    from verify.mutate import _check_only
    from verify.registry import claims_for

    claim = next(c for c in claims_for("example") if c.id == "example.end_point")
    out = _check_only(claim, "test", Context(profile="test", cache=RunCache(tmp_path)))
    sims = [n for n, (kind, _) in out["kinds"].items() if kind == "simulation"]
    assert sims and set(sims) <= set(out["compared"])
    assert all(len(v) >= 1 for v in out["compared"].values())


def test_a_worst_member_switch_is_not_a_move_of_the_compared_values():
    """A tolerance that moves the worst member to another changes the reported part's
    numbers but not the members' compared values (``compared``, from member_values): no
    move; a changed member value is one."""
    from verify.mutate import _moves_value

    kinds = {"run": ["simulation", "pass"]}
    members = [[[0.0, 0.020, 0.020], [0.0, 0.027, 0.027]]]
    base = {"kinds": kinds, "parts": {"run": [0.0, 0.020, 0.020, 0.020, 0.020, 0.025]},
            "compared": {"run": members}}
    switched = {"kinds": kinds, "parts": {"run": [0.0, 0.027, 0.027, 0.027, 0.027, 0.036]},
                "compared": {"run": members}}
    moved = {"kinds": kinds, "parts": {"run": [0.0, 0.027, 0.027, 0.027, 0.027, 0.036]},
             "compared": {"run": [[[0.0, 0.021, 0.021], [0.0, 0.027, 0.027]]]}}
    assert not _moves_value(base, switched)
    assert _moves_value(base, moved)


def test_a_near_cancelled_error_moving_by_rounding_is_no_move():
    """An error that is the difference of nearly equal predicted and observed values moves
    by their rounding (3e-15 on 1.8e-6, 1.6e-9 relative: seen on cooccurrence.sandwich under
    a whole-output scale of a trajectory its onset does not depend on): no move; a change of
    the predicted value itself is one."""
    from verify.mutate import _moves_value

    kinds = {"run": ["simulation", "pass"]}
    row = [3.994063367364271, 3.9940704574221915, 1.7751475065441724e-06]
    base = {"kinds": kinds, "parts": {}, "compared": {"run": [[row]]}}
    rounded = {"kinds": kinds, "parts": {}, "compared": {"run": [[
        [3.9940633673642827, 3.9940704574221915, 1.7751475036575926e-06]]]}}
    shifted = {"kinds": kinds, "parts": {}, "compared": {"run": [[
        [3.9941, 3.9940704574221915, 2.9e-05]]]}}
    assert not _moves_value(base, rounded)
    assert _moves_value(base, shifted)


def test_tilt_scales_numeric_leaves_alternately():
    value = ([np.array([[1.0, 2.0], [3.0, 4.0]])], 5.0, "label")
    up = apply_mutation(value, (), "tilt+", 0.1)
    down = apply_mutation(value, (), "tilt-", 0.1)
    # the array is one leaf whose entries alternate; the next leaf takes the other sign
    assert np.allclose(up[0][0], [[1.1, 1.8], [3.3, 3.6]]) and up[1] == pytest.approx(4.5)
    assert np.allclose(down[0][0], [[0.9, 2.2], [2.7, 4.4]]) and down[1] == pytest.approx(5.5)
    matrix = apply_mutation(sp.Matrix([[1, 2], [3, 4]]), (), "tilt+", 0.5)
    assert matrix == sp.Matrix([[sp.Rational(3, 2), 1], [sp.Rational(9, 2), 2]])
    assert up[2] == down[2] == "label"


SHAPEROW_THEORY = '''
"""A synthetic row whose one claim holds its theory only up to a free multiple."""
__all__ = ["shape", "window"]


def shape():
    return (1.0, 2.0, 3.0)


def window():
    return 1.0
'''

SHAPEROW_CLAIMS = '''
import shaperow_theory as th
''' + _SYNTHETIC_HEAD + '''

@run_function("shaperow.tiny", full_model=True, smoke=lambda: Tiny(1.0))
def tiny(config):
    return {"v": 7.0 * config.c * np.array([1.0, 2.0, 3.0])}


def proportional(params, ctx, *, s):
    """The observed vector against one free multiple of the claimed shape: the relative
    residual within 3 %."""
    v = tiny(Tiny(params["c"]), cache=ctx.cache)["v"]
    t = np.array([float(x) for x in s()])
    a = float(v @ t / (t @ t))
    r = float(np.linalg.norm(v - a * t) / np.linalg.norm(v))
    return Evidence((exact("v vs a multiple of the shape", 0.0, r, 0.03, "3 %",
                           kind="simulation"),))


def placed(params, ctx, *, s):
    """:func:`proportional` with the observed vector read through a window that moves its
    middle entry by 1 % of the window's slip: a 50 % slip moves the residual by about 0.3 %,
    which the 3 % part cannot see."""
    v = tiny(Tiny(params["c"]), cache=ctx.cache)["v"]
    v = v * (1 + 0.01 * (float(th.window()) - 1) * np.array([0.0, 1.0, 0.0]))
    t = np.array([float(x) for x in s()])
    a = float(v @ t / (t @ t))
    r = float(np.linalg.norm(v - a * t) / np.linalg.norm(v))
    return Evidence((exact("v vs a multiple of the shape", 0.0, r, 0.03, "3 %",
                           kind="simulation"),))


def _claim(name, check=proportional, **fields):
    return Claim.paired(check, id=f"shaperow.{name}", paper="shaperow",
                        statement=name, source="synthetic", kind="reduced-vs-full",
                        strategy=st.fixed_dictionaries({"c": st.just(1.0)}),
                        theory={"s": th.shape}, control={"s": lambda: (1.0, 2.0, 4.0)},
                        control_description="a near miss", cost="slow",
                        examples=(Example({"c": 1.0}),), **fields)


def claims():
    return [_claim("scaled"),
            _claim("tilted", shape_only={"shape": "held up to a free multiple"}),
            _claim("placed", check=placed, shape_only={"shape": "held up to a free multiple"},
                   placement_only={"window": "places the read-out only"})]
'''


def test_resolution_tilts_a_function_held_only_up_to_a_multiple(tmp_path):
    """A claim that fits a free multiple absorbs a whole-output scale (no rung moves its
    part); declared shape_only, the ladder tilts the function instead and the 3 % part
    rejects the 5 % tilts (a relative residual of 4.4 and 4.6 %), not the 2 % ones."""
    (tmp_path / "shaperow_theory.py").write_text(textwrap.dedent(SHAPEROW_THEORY))
    (tmp_path / "shaperow_claims.py").write_text(textwrap.dedent(SHAPEROW_CLAIMS))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(tmp_path))
        mp.setenv("TDCHECK_CACHE_DIR", str(tmp_path / "cache"))
        row = mutate_row("shaperow", "test", jobs=1, resolution_only=True,
                         claims_module="shaperow_claims", theory_module="shaperow_theory")
    res = row.resolution
    assert res["shaperow.scaled"]["delta"] == "> 50 %"  # a scale moves r by rounding only
    assert res["shaperow.tilted"]["delta"] == 0.05
    assert res["shaperow.tilted"]["shape_only"] == {"shape": "held up to a free multiple"}
    labels = [t["mutant"] for g in res["shaperow.tilted"]["rungs"] for t in g["tried"]]
    assert "shape: output (numeric leaves alternately x 1.05 and x 0.95)" in labels
    # a declared placement that moves the compared value but no verdict leaves the ladder's
    # rung; no claim of the row resolves `window`, so the cover puts it back (> 50 %)
    placed = res["shaperow.placed"]
    assert placed["by_function"]["window"]["moves_compared_values"]
    assert placed["by_function"]["window"]["delta"] == "> 50 %"
    assert placed["placement_declared"] == {"window": "places the read-out only"}
    assert placed["placement_uncovered"] == ["window"] and placed["placement_only"] == []
    assert placed["delta"] == "> 50 %"


def _fake_ladder(monkeypatch, claims: dict, response):
    """:func:`verify.mutate._resolution` on a synthetic map: ``claims`` {cid: (consumed
    functions, extra baseline fields)}, each with one simulation part ``p`` that passes at
    error 0 against tolerance 1; ``response(cid, function, op, delta)`` gives the part's
    error under that mutant (a string raises: an exception defect).  No process starts."""
    import verify.mutate as vm

    def child(kind, payload, timeout):
        m = payload["mutant"]
        (cid,) = payload["ids"]
        err = response(cid, m["function"], m["op"], m["delta"])
        if isinstance(err, str):
            return {"error": err}
        status = "pass" if err <= 1 else "fail"
        return {cid: {"kinds": {"p": ["simulation", status]},
                      "parts": {"p": [0.0, err, err, err, err, 1.0]}}}

    monkeypatch.setattr(vm, "_child", child)
    fns = sorted({f for fs, _ in claims.values() for f in fs})
    mp = {"baseline": {cid: {"kinds": {"p": ["simulation", "pass"]},
                             "parts": {"p": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]},
                             "seconds": 0.0, **extra} for cid, (_, extra) in claims.items()},
          "roles": {f: {cid: ["check"] for cid, (fs, _) in claims.items() if f in fs}
                    for f in fns},
          "unjudged": {}, "mutant_kinds": {}, "key_calls": {},
          "structures": {f: [[[], "numeric"]] for f in fns}}
    return vm._resolution(mp, "-", "fake", "quick", 1, None, None, 600.0)


def test_ladder_keeps_unseen_tilts_raising_placements_and_uncovered_approximate_shapes(
        monkeypatch):
    """The resolution ladder's declared kinds, on a synthetic map (fake mutant runs):

    * a placement covered by another claim's scale rung leaves the rung;
    * a placement whose mutant raises stays in it;
    * a shape_only function none of whose tilts moves the part keeps its rung (> 50 %);
    * a shape_approx function whose whole-output slip no other claim resolves makes the
      answer > 50 %, and a tilt rung covers nothing."""
    def response(cid, f, op, d):
        if f == "window":
            if cid == "row.pinned":
                return 200 * d  # rejected from 1 %
            if cid == "row.raising" and d >= 0.5:
                return "IndexError: the window left the grid"
            return 0.1 * d  # moved, never rejected
        if f == "shape":
            if cid == "row.unseen":
                return 0.0  # no tilt moves it
            return 30 * d if op.startswith("tilt") else 0.0  # tilts seen from 5 %
        return 0.0
    claims = {"row.pinned": (["window"], {}),
              "row.placed": (["window", "shape"], {"placement_only": {"window": "-"},
                                                    "shape_only": {"shape": "-"}}),
              "row.raising": (["window", "shape"], {"placement_only": {"window": "-"},
                                                     "shape_only": {"shape": "-"}}),
              "row.unseen": (["shape"], {"shape_only": {"shape": "-"}}),
              "row.approx": (["shape"], {"shape_approx": {"shape": "-"}})}
    res = _fake_ladder(monkeypatch, claims, response)
    assert res["row.pinned"]["delta"] == 0.01
    assert res["row.placed"]["placement_only"] == ["window"]
    assert res["row.placed"]["delta"] == 0.05 and "placement_uncovered" not in res["row.placed"]
    assert "window" in res["row.raising"]["rung_functions"]
    assert res["row.raising"]["placement_only"] == [] and res["row.raising"]["delta"] == "> 50 %"
    assert res["row.unseen"]["tilt_unseen"] == ["shape"]
    assert res["row.unseen"]["delta"] == "> 50 %" and res["row.unseen"]["not_in_simulation_parts"] == []
    # shape's tilt rungs (5 % in placed, raising, approx) cover nothing: no claim scales it
    assert res["row.approx"]["by_function"]["shape"]["delta"] == 0.05
    assert res["row.approx"]["shape_uncovered"] == ["shape"] and res["row.approx"]["delta"] == "> 50 %"
