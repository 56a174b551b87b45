"""The independence contract: a full-model run computes its dynamics from the model and
torch autograd only.

For every row, every run function declared ``full_model=True`` (``numerics.cache.RUNS``)
is run at its ``smoke`` size with every public function of ``theory.<row>`` replaced by one
that raises, except those the run declares in ``uses_theory`` (with the reason) for its
set-up: an initialisation, sizes, a teacher.  A run that needs any other theory function
integrates the theory, and is ``symbolic`` by definition (``full_model=False``).  The
registry test beside it asks every run of the project to say which it is.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

import pytest

from numerics.cache import RUNS
from verify.mutate import _clear_caches, _patch_everywhere, _public_functions
from verify.registry import PAPERS

ROWS = [p for p, info in PAPERS.items() if info.status in ("implemented", "partial", "example")]
# rank_increase's "simulations" integrate the theory's own log flow and its analytic gradient
# (issue: a real trained model behind every simulation); its row replaces them
NOT_YET_INDEPENDENT: dict[str, str] = {}


def _row_runs(paper: str) -> list:
    importlib.import_module(f"numerics.{paper}")
    return [info for info in RUNS.values() if info.module == f"numerics.{paper}"]


class TheoryCalled(AssertionError):
    """A full-model run called a theory function it did not declare."""


@contextlib.contextmanager
def _theory_raises(paper: str, allowed) -> Iterator[list[str]]:
    theory = importlib.import_module(f"theory.{paper}")
    saved = {name: getattr(theory, name) for name in _public_functions(theory)}
    called: list[str] = []
    for name in saved:
        if name in allowed:
            continue

        def raiser(*args, _name=name, **kwargs):
            called.append(_name)
            raise TheoryCalled(f"the full-model run called theory.{paper}.{_name}")

        _patch_everywhere(theory, name, raiser)
    _clear_caches()
    try:
        yield called
    finally:
        for name, fn in saved.items():
            if name not in allowed:
                _patch_everywhere(theory, name, fn)  # every reference to the raiser goes back
        _clear_caches()


@pytest.mark.parametrize("paper", ROWS)
def test_every_run_says_whether_it_is_the_full_model(paper):
    for info in _row_runs(paper):
        assert info.full_model is not None, (
            f"run {info.tag} ({info.module}.{info.name}) must declare full_model=True (it "
            "trains the model by torch autograd on its own loss) or False (it integrates or "
            "evaluates the theory): numerics.cache.run_function")
        if info.full_model:
            assert info.smoke is not None, (
                f"full-model run {info.tag} needs smoke= (a test-size config) for the "
                "independence test")
            theory = importlib.import_module(f"theory.{paper}")
            unknown = sorted(set(info.uses_theory) - set(_public_functions(theory)))
            assert not unknown, f"run {info.tag}: uses_theory names {unknown}, not public " \
                                f"functions of theory.{paper}"
            assert all(why.strip() for why in info.uses_theory.values()), \
                f"run {info.tag}: every uses_theory entry needs its reason"


def _full_runs() -> list:
    out = []
    for paper in ROWS:
        for info in _row_runs(paper):
            if info.full_model:
                # strict xfail: a row listed in NOT_YET_INDEPENDENT (with its reason, empty
                # today) fails the suite the day its runs become independent
                marks = ([pytest.mark.xfail(reason=NOT_YET_INDEPENDENT[paper], strict=True)]
                         if paper in NOT_YET_INDEPENDENT else [])
                out.append(pytest.param(paper, info.tag, id=info.tag, marks=marks))
    return out


@pytest.mark.parametrize(("paper", "tag"), _full_runs())
def test_full_model_run_takes_no_dynamics_from_theory(paper, tag):
    info = RUNS[tag]
    config = info.smoke()
    with _theory_raises(paper, set(info.uses_theory)) as called:
        try:
            info.compute(config)
        except TheoryCalled:
            pass
    assert not called, (f"full-model run {tag} called theory.{paper}.{called[0]} (and "
                        f"{len(called) - 1} more calls): declare it in uses_theory with the "
                        "reason if it is set-up, else the run integrates the theory and is "
                        "full_model=False")


def test_every_row_has_a_full_model_run():
    for paper in ROWS:
        assert any(i.full_model for i in _row_runs(paper)), \
            f"row {paper} declares no full-model run"
