"""A resumable campaign (``tdcheck verify --resume DIR``): a campaign stopped and resumed
writes the same report as one uninterrupted run, and skips what it stored."""

import json

import verify.runner as runner
from verify.campaign import Campaign
from verify.cli import main
from verify.registry import claims_for

ARGS = ["verify", "example", "--profile", "test", "--device", "cpu", "--no-progress"]


def _without_times(x):
    """A report's claims with the wall times (which differ between runs) taken out."""
    if isinstance(x, dict):
        return {k: _without_times(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_without_times(v) for v in x]
    return x


def _claims(folder):
    return _without_times(json.loads((folder / "report.json").read_text())["claims"])


def test_a_stopped_campaign_resumes_to_the_report_of_one_run(tmp_path, monkeypatch, capsys):
    ids = [c.id for c in claims_for("example")]
    assert len(ids) >= 2
    campaign = tmp_path / "campaign"
    real_run_claim = runner.run_claim
    ran: list[str] = []

    def stopped_after_the_first(claim, *args, **kwargs):
        if ran:
            raise KeyboardInterrupt  # the machine goes away during the second claim
        ran.append(claim.id)
        return real_run_claim(claim, *args, **kwargs)

    monkeypatch.setattr(runner, "run_claim", stopped_after_the_first)
    assert main([*ARGS, "--resume", str(campaign), "--out", str(tmp_path / "a")]) == 130
    assert not (tmp_path / "a" / "report.json").exists()
    stored = sorted(p.stem for p in (campaign / "claims").glob("*.json"))
    assert stored == [ids[0]]

    resumed: list[str] = []

    def counting(claim, *args, **kwargs):
        resumed.append(claim.id)
        return real_run_claim(claim, *args, **kwargs)

    monkeypatch.setattr(runner, "run_claim", counting)
    code = main([*ARGS, "--resume", str(campaign), "--out", str(tmp_path / "a")])
    out = capsys.readouterr().out
    assert f"1 of {len(ids)} claims stored, {len(ids) - 1} to run" in out
    assert resumed == ids[1:]  # the stored claim did not run again
    meta = json.loads((tmp_path / "a" / "report.json").read_text())["metadata"]
    made_on = meta["campaign"].pop("runs_made_on")
    assert meta["campaign"] == {"dir": str(campaign), "stored": 1, "ran": len(ids) - 1}
    # every run the campaign stored says which machine made it (this one)
    runs = len(list((campaign / "runs").glob("*.npz")))
    assert sum(m["runs"] for m in made_on) == runs
    assert all(m["facts"]["cpu"] == meta["platform"]["cpu"] for m in made_on)

    monkeypatch.setattr(runner, "run_claim", real_run_claim)
    one = main([*ARGS, "--no-cache", "--out", str(tmp_path / "b")])
    assert code == one
    assert _claims(tmp_path / "a") == _claims(tmp_path / "b")
    # a finished campaign runs nothing
    resumed.clear()
    monkeypatch.setattr(runner, "run_claim", counting)
    assert main([*ARGS, "--resume", str(campaign), "--out", str(tmp_path / "c")]) == one
    assert resumed == []
    assert _claims(tmp_path / "c") == _claims(tmp_path / "b")


def test_an_entry_stands_only_for_its_own_settings_and_code(tmp_path):
    claim = claims_for("example")[0]
    base = Campaign(tmp_path, "test", seed=0, device="cpu")
    assert base.record(claim, {"id": claim.id, "ok": True, "raised": False}) is not None
    assert base.done(claim) == {"id": claim.id, "ok": True, "raised": False}
    for other in (Campaign(tmp_path, "test", seed=1, device="cpu"),
                  Campaign(tmp_path, "quick", seed=0, device="cpu"),
                  Campaign(tmp_path, "test", seed=0, drawn=0, device="cpu"),
                  Campaign(tmp_path, "test", seed=0, device="cuda")):
        assert other.done(claim) is None
    # another code version: the stored key no longer matches
    path = tmp_path / "claims" / f"{claim.id}.json"
    stored = json.loads(path.read_text())
    stored["key"]["version"] = "0" * 16
    path.write_text(json.dumps(stored))
    assert base.done(claim) is None
    # a claim that raised is not stored (it runs again on resume); a torn file is ignored
    assert base.record(claim, {"id": claim.id, "raised": True}) is None
    path.write_text('{"key": ')
    assert base.done(claim) is None


def test_resume_refuses_a_second_cache(tmp_path, capsys):
    assert main([*ARGS, "--resume", str(tmp_path), "--no-cache"]) == 2
    assert "--resume keeps its runs in DIR/runs" in capsys.readouterr().err


def test_an_entry_does_not_stand_for_another_version_of_the_claims_module(tmp_path,
                                                                          monkeypatch):
    """A change to the code of the module that defines a claim (a check, a control, an
    allowance) changes its version, so a resumed campaign runs it again; a changed
    docstring or comment does not (the same code digest as a run's)."""
    from types import SimpleNamespace

    from verify.campaign import claim_version

    module = tmp_path / "rowmod_for_campaign_test.py"
    module.write_text('def check(p):\n    """doc"""\n    return 1\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    claim = SimpleNamespace(function=SimpleNamespace(__module__="rowmod_for_campaign_test"),
                            paper="row")
    before = claim_version(claim)
    module.write_text('def check(p):\n    """other doc"""\n    # a comment\n    return 1\n')
    assert claim_version(claim) == before
    module.write_text('def check(p):\n    """doc"""\n    return 2\n')
    assert claim_version(claim) != before
