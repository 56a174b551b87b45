"""The one thread policy (numerics.threads): TDCHECK_THREADS overrides every default."""

import pytest
import torch

from numerics.threads import ENV, thread_count, threads


def test_default_is_the_callers_and_the_variable_overrides(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert thread_count() is None and thread_count(1) == 1
    monkeypatch.setenv(ENV, "3")
    assert thread_count() == 3 and thread_count(1) == 3


def test_threads_sets_and_restores(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    before = torch.get_num_threads()
    with threads(default=1) as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("raw", ["0", "-2", "two"])
def test_bad_values_are_refused(monkeypatch, raw):
    monkeypatch.setenv(ENV, raw)
    with pytest.raises(ValueError, match=ENV):
        thread_count()


def test_cli_option_sets_the_variable(monkeypatch):
    import os

    from verify.cli import _set_threads

    monkeypatch.setenv(ENV, "1")  # recorded, so the teardown restores the caller's state
    _set_threads(2)
    assert os.environ[ENV] == "2"
