"""Every claim at small size: outcome equals its expectation, control rejected."""

import pytest

from verify import linear_attention as vl
from verify import markov as vm
from verify.claims import Context
from verify.runner import Profile, run_claim

CLAIMS = {c.id: c for c in vm.claims() + vl.claims()}
# Pinned examples for slow claims; a few drawn examples for fast ones.
SMALL = Profile("test", fast=6, slow=0, gpu=0)


# The optimiser-comparison claims train 3-layer models for minutes each (tdcheck verify runs
# them); in CI their checks run on synthetic runs (test_verify_optimisers.py) and their
# numerics at smoke size (test_linear_attention.py, the figure tests).
HEAVY = {"linear_attention.adam_beats_sgd", "linear_attention.heavy_tailed_noise",
         "linear_attention.heavy_tailed_noise_depth", "linear_attention.generalised_smoothness",
         "linear_attention.condition_number_ratio", "linear_attention.directional_smoothness",
         "linear_attention.softmax_carries_over"}


@pytest.mark.parametrize("claim_id", [
    pytest.param(c, marks=pytest.mark.slow) if c in HEAVY else c for c in CLAIMS])
def test_claim_matches_expectation_and_control_rejected(claim_id):
    result = run_claim(CLAIMS[claim_id], SMALL, Context(profile="test"))
    assert result.outcome != "error", result.error_message
    assert result.matches_expected, (result.outcome, result.worst)
    assert result.control_rejected, (result.control_worst, result.control_error)


def test_every_claim_is_complete():
    for c in CLAIMS.values():
        assert c.source and c.statement and c.control_description
        assert c.check.func is c.control.func, "control must run the same check"
        assert c.examples or c.cost == "fast"


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", [c for c, v in CLAIMS.items() if v.cost == "slow"])
def test_slow_claims_with_drawn_examples(claim_id):
    result = run_claim(CLAIMS[claim_id], Profile("slow", fast=50, slow=2, gpu=0))
    assert result.matches_expected and result.control_rejected
