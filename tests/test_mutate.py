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
from verify.mutate import Mutant, apply_mutation, leaves, mutants_for, mutate_row


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


def test_a_claim_not_as_expected_judges_by_change_from_the_map_run():
    """An unsettled claim (inconclusive where holds was expected) detects a mutant that moves
    its outcome or control, and not one that leaves both as the map run had them."""
    from verify.mutate import _changed

    base = {"outcome": "inconclusive", "ok": False, "control_rejected": None,
            "positive_passed": None, "control_error": None, "positive_error": None}
    assert _changed(base, dict(base)) is None
    assert _changed(base, {**base, "outcome": "refuted"}) == "changed outcome"
    assert _changed(base, {**base, "control_rejected": True}) == "changed control"
    assert _changed(base, {"error": "boom"}) == "exception"


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
