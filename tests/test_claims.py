"""Every claim of every implemented paper, at smoke size, through the same code as verify.

The ``test`` profile shrinks sizes and steps (``Context.pick``) and draws 3 examples for fast
claims; the full-size runs belong to ``tdcheck verify``.  At smoke size a statistical part
may lack power, so ``inconclusive`` is accepted; anything else must be exactly as expected
(control rejected by a discriminating part, positive control passed).
"""

import pytest

from verify.claims import Context
from verify.registry import claims_for, implemented
from verify.runner import run_claim

CLAIMS = {c.id: c for p in implemented() for c in claims_for(p)}


@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_claim_at_smoke_size(claim_id):
    claim = CLAIMS[claim_id]
    result = run_claim(claim, "test", Context(profile="test"))
    assert result.outcome != "error", result.error_message
    assert result.control_error is None, result.control_error
    assert result.positive_error is None, result.positive_error
    if result.outcome == "inconclusive" and result.expected != "inconclusive":
        return  # smoke size lacks power; tdcheck verify decides
    assert result.ok, result.problems()


def test_every_claim_is_complete():
    assert CLAIMS, "no implemented paper has claims"
    for c in CLAIMS.values():
        assert c.source and c.statement and c.control_description
        assert c.check.func is c.control.func, "control must run the same check"
        assert c.examples or c.cost == "fast", f"{c.id}: slow claims need pinned examples"
        if c.expected != "holds":
            assert c.positive_control is not None and c.positive_control.description
