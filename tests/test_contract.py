"""The row contract, executable: what every paper (and the example row) must provide.

For each row: the four modules ``theory/``, ``numerics/``, ``verify/``, ``figures/<paper>.py``
exist, each with an ``__all__`` (kept sorted by ruff's RUF022); ``theory.<paper>.equations()`` returns
:class:`theory.flow.Equation` records; ``verify.<paper>.claims()`` returns claims declared
with ``@claim`` (so the control runs the check's own function) whose pinned examples say why
they are pinned.  Across the code, imports only go downward:
theory <- numerics <- verify, figures (and only the CLI reaches figures from verify).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from theory.flow import Equation
from verify.registry import PAPERS, claims_for

ROOT = Path(__file__).resolve().parent.parent
ROWS = [p for p, info in PAPERS.items() if info.status in ("implemented", "partial", "example")]
LAYERS = ("theory", "numerics", "verify", "figures")
# the step of README's "Adding a paper" that builds each layer (named in failure messages)
STEP = {"theory": 1, "numerics": 2, "verify": 3, "figures": 4, "registry": 5}
# what each layer may import from the project (the CLI may import everything)
ALLOWED = {"theory": {"theory"}, "numerics": {"theory", "numerics"},
           "verify": {"theory", "numerics", "verify"}, "figures": {"theory", "numerics", "figures"}}


@pytest.mark.parametrize("paper", ROWS)
def test_row_has_four_modules_with_all(paper):
    for layer in LAYERS:
        module = importlib.import_module(f"{layer}.{paper}")
        names = getattr(module, "__all__", None)
        if layer == "figures":  # figures register themselves; __all__ optional
            names = names or []
        assert names is not None, (f"{layer}.{paper} has no __all__ (README, Adding a "
                                   f"paper, step {STEP[layer]})")
        missing = [n for n in names if not hasattr(module, n)]
        assert not missing, (f"{layer}.{paper}.__all__ names missing objects {missing} "
                             f"(README, Adding a paper, step {STEP[layer]})")


@pytest.mark.parametrize("paper", ROWS)
def test_equations_are_records(paper):
    eqs = importlib.import_module(f"theory.{paper}").equations()
    assert isinstance(eqs, list) and eqs, (f"theory.{paper}.equations() must return a "
                                           "non-empty list (README, Adding a paper, step 1)")
    for eq in eqs:
        assert isinstance(eq, Equation), (f"{paper}: {eq!r} is not an Equation record "
                                          "(README, Adding a paper, step 1)")
        assert eq.name and eq.source, (f"{paper}: equation {eq.name!r} lacks a name or "
                                       "source (README, Adding a paper, step 1)")


@pytest.mark.parametrize("paper", ROWS)
def test_claims_are_declared_beside_their_checks(paper):
    step = "(README, Adding a paper, step 3)"
    claims = claims_for(paper)
    assert claims, f"verify.{paper}.claims() returned no claim {step}"
    for c in claims:
        assert c.id.startswith(f"{paper}."), f"{c.id} must start with {paper}. {step}"
        assert c.function is not None, f"{c.id}: declare it with @claim on its check {step}"
        assert c.check.func is c.function and c.control.func is c.function, \
            f"{c.id}: the control must run the check's own function (@claim) {step}"
        assert set(c.theory) == set(c.control_theory), \
            f"{c.id}: theory and control must set the same keywords {step}"
        for ex in c.examples:
            assert ex.via, f"{c.id}: pinned example {dict(ex.params)} does not say why {step}"


def _project_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out & set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_only_go_downward(layer):
    bad = []
    for path in sorted((ROOT / layer).glob("*.py")):
        if layer == "verify" and path.name == "cli.py":
            continue
        upward = _project_imports(path) - ALLOWED[layer]
        if upward:
            bad.append(f"{layer}/{path.name} imports {sorted(upward)}")
    assert not bad, "; ".join(bad)


@pytest.mark.parametrize("paper", ROWS)
def test_every_check_function_is_a_claim(paper):
    """Every module-level ``check_*`` function of ``verify.<paper>`` is the function of a
    declared claim: a check whose ``@claim`` decorator is lost in an edit (it happened, to
    cooccurrence.phase2_margins) drops the claim from the row silently otherwise."""
    module = importlib.import_module(f"verify.{paper}")
    checks = {name for name, value in vars(module).items()
              if name.startswith("check_") and callable(value)
              and getattr(value, "__module__", None) == module.__name__}
    used = {getattr(c.function, "__name__", None) for c in claims_for(paper)}
    assert checks <= used, (f"verify.{paper}: check functions without a claim: "
                            f"{sorted(checks - used)}")
