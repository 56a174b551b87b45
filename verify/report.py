"""Reports: ``report.json`` (stable keys), ``report.md`` rendered from it, a terminal table.

report.json (version 2)::

    {"version", "metadata": {"commit", "versions": {python, torch, sympy, numpy, scipy,
                             hypothesis}, "device", "platform" (numerics.machine.facts),
                             "profile", "started", "seconds",
                             "campaign" (--resume: dir, stored, ran, runs_made_on)},
     "summary": {"claims", "outcomes": {holds, refuted, inconclusive, error}, "as_expected",
                 "ok", "controls_rejected", "controls_not_applicable",
                 "controls_not_rejected", "positive_controls": {required, passed}},
     "claims": [{"id", "paper", "statement", "source", "kind", "expected", "outcome",
                 "verdict", "ok", "problems", "matches_expected",
                 "control_rejected" (true | false | null = not applicable),
                 "control_rejected_by" [part names],
                 "parts": [{name, kind, predicted, observed, error, lower, upper,
                            confidence, tolerance, passed, status, error_model, details}]
                          (worst example; kind: symbolic | simulation | published | null),
                 "part_kinds": {part name: kind}, "full_model_runs": [run tags],
                 "worst": {predicted, observed, error, tolerance}  (its worst part),
                 "worst_example", "falsifying_example", "details",
                 "examples", "examples_drawn", "examples_requested", "short", "seconds",
                 "control": {description, rejected, rejected_by, example, parts, error},
                 "positive_control": {description, passed, parts, error} | null,
                 "pinned": [{params, via}], "notes", "message",
                 "raised" (the check, control or positive control raised),
                 "power": {decides, have, needed, unit, design, power, band, statistic}
                          | null (the claim's power plan at this profile),
                 "settles_at": {profile, expected, size?, needed?, unit?} | null (for a
                          claim expected inconclusive here: the first profile expected to
                          settle it, with its plan's size there; for one decided inside
                          its plan's indifference band: {profile: null, expected, band,
                          intervals: {part: {error, lower, upper}}}),
                 "in_band": bool (decided inside the plan's indifference band: a finding)}]}

``to_markdown`` and ``to_table`` read only this dictionary, so ``tdcheck report DIR``
re-renders a report from its JSON.  Numbers quoted in report.md come from the evidence of
the run, never from text written earlier.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from verify.claims import Evidence, Part
from verify.runner import ClaimResult

__all__ = [
    "REPORT_VERSION",
    "band_lines",
    "claim_json",
    "from_entries",
    "metadata",
    "mutation_summary",
    "to_json",
    "to_markdown",
    "to_table",
    "unsettled_lines",
    "write_entries",
    "write_reports",
]

REPORT_VERSION = "2"


def _num(x: Any) -> Any:
    """JSON-safe values (inf/nan as strings, numpy/torch scalars as Python numbers)."""
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    if isinstance(x, Mapping):
        return {str(k): _num(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_num(v) for v in x]
    if hasattr(x, "tolist"):
        return _num(x.tolist())
    if hasattr(x, "item"):
        return _num(x.item())
    try:
        return _num(float(x))
    except (TypeError, ValueError):
        return str(x)


def _part(p: Part) -> dict:
    return {"name": p.name, "kind": p.kind, "predicted": _num(p.predicted), "observed": _num(p.observed),
            "error": _num(p.error), "lower": _num(p.lower), "upper": _num(p.upper),
            "confidence": p.confidence, "tolerance": _num(p.tolerance), "measured": p.measured,
            "passed": p.passed, "status": p.status, "error_model": p.error_model,
            "details": _num(dict(p.details))}


def _parts(ev: Evidence | None) -> list[dict]:
    return [] if ev is None else [_part(p) for p in ev.parts]


def metadata(profile: str, device: str, started: float, seconds: float, seed: int = 0,
             drawn: int | None = None) -> dict:
    """Commit, package versions, device, profile, start time and duration of a run;
    ``drawn``: the drawn examples per slow claim when they override the profile's."""
    versions = {"python": platform.python_version()}
    for mod in ("torch", "sympy", "numpy", "scipy", "hypothesis"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # a missing optional package is reported as such
            versions[mod] = None
    try:
        root = Path(__file__).resolve().parent.parent
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout
        if commit and dirty.strip():
            commit += "+dirty"
    except (OSError, subprocess.SubprocessError):
        commit = None
    from numerics.machine import facts

    return {"commit": commit, "versions": versions, "device": device, "profile": profile,
            "platform": facts(),
            "seed": int(seed), **({"drawn": int(drawn)} if drawn is not None else {}),
            "started": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(),
            "seconds": round(float(seconds), 2)}


def verdict(r: ClaimResult) -> str:
    if r.ok:
        return "as expected (in band)" if r.in_band is not None else "as expected"
    if r.outcome == "error":
        return "ERROR"
    if not r.matches_expected:
        return "UNEXPECTED"
    if not r.control_ok:
        return "CONTROL NOT REJECTED"
    return "POSITIVE CONTROL FAILED"


def _claim_json(r: ClaimResult) -> dict:
    c = r.claim
    wpart = r.worst.worst if r.worst is not None else None
    pos = None
    if c.positive_control is not None:
        pos = {"description": c.positive_control.description, "passed": r.positive_passed,
               "parts": _parts(r.positive), "error": r.positive_error}
    return {
        "id": c.id, "paper": c.paper, "statement": c.statement, "source": c.source,
        "kind": c.kind, "expected": r.expected, "outcome": r.outcome, "verdict": verdict(r),
        "ok": r.ok, "problems": r.problems(), "matches_expected": r.matches_expected,
        "control_rejected": r.control_rejected,
        "control_rejected_by": list(r.control_rejected_by),
        "parts": _parts(r.worst),
        "part_kinds": {n: v["kind"] for n, v in r.parts_seen.items()},
        "tolerance_drift": _num(r.tolerance_drift),
        "full_model_runs": sorted(r.full_model_runs),
        "worst": None if wpart is None else {
            "part": wpart.name, "predicted": _num(wpart.predicted),
            "observed": _num(wpart.observed), "error": _num(wpart.error),
            "tolerance": _num(wpart.tolerance), "status": wpart.status,
            "deciding": _num(wpart.lower if wpart.status == "fail" else wpart.upper)},
        "worst_example": _num(r.worst_example),
        "falsifying_example": _num(r.falsifying_example),
        "details": _num(dict(r.worst.details)) if r.worst is not None else None,
        "examples": int(r.examples_drawn), "examples_drawn": int(r.examples_drawn),
        "examples_failed": int(r.examples_failed),
        "unmeasured": [p.name for p in (r.worst.parts if r.worst is not None else ())
                       if not p.measured],
        "examples_requested": int(r.examples_requested), "short": r.short,
        "seconds": round(float(r.seconds), 3),
        "control": {"description": c.control_description, "rejected": r.control_rejected,
                    "rejected_by": list(r.control_rejected_by),
                    "example": _num(r.control_example), "parts": _parts(r.control_evidence),
                    "error": r.control_error},
        "positive_control": pos,
        "pinned": [{"params": _num(dict(ex.params)), "via": ex.via} for ex in c.examples],
        "notes": c.notes, "message": r.error_message, "raised": r.raised,
        "power": None if r.plan is None else r.plan.to_json(),
        "settles_at": _num(r.settles_at()),
        "in_band": r.in_band is not None,
    }


def summary(claims: Sequence[Mapping]) -> dict:
    outcomes = {k: sum(c["outcome"] == k for c in claims)
                for k in ("holds", "refuted", "inconclusive", "error")}
    pcs = [c["positive_control"] for c in claims if c["positive_control"] is not None]
    return {
        "claims": len(claims), "outcomes": outcomes,
        "unmeasured": sum(c["outcome"] == "inconclusive" and bool(c.get("unmeasured"))
                          for c in claims),
        "as_expected": sum(bool(c["matches_expected"]) for c in claims),
        "ok": sum(bool(c["ok"]) for c in claims),
        "controls_rejected": sum(c["control_rejected"] is True for c in claims),
        "controls_not_applicable": sum(c["control_rejected"] is None for c in claims),
        "controls_not_rejected": sum(c["control_rejected"] is False for c in claims),
        "positive_controls": {"required": len(pcs), "passed": sum(p["passed"] is True for p in pcs)},
        "short": sum(bool(c["short"]) for c in claims),
        "raised": sum(bool(c.get("raised")) for c in claims),
        "unsettled_by_design": sum(c["outcome"] == "inconclusive"
                                   and c["expected"] == "inconclusive" for c in claims),
        "in_band": sum(_in_band(c) for c in claims),
    }


def claim_json(r: ClaimResult) -> dict:
    """One claim's report entry (what report.json lists under ``claims``)."""
    return _claim_json(r)


def to_json(results: Sequence[ClaimResult], meta: Mapping[str, Any],
            mutation: Mapping[str, Any] | None = None) -> dict:
    """The report dictionary; ``mutation`` is the summary of the last ``tdcheck mutate``
    found beside the report (``{"commit", "profile", "rows": {paper: {score, ...}}}``)."""
    return from_entries([_claim_json(r) for r in results], meta, mutation)


def from_entries(claims: Sequence[Mapping], meta: Mapping[str, Any],
                 mutation: Mapping[str, Any] | None = None) -> dict:
    """The report dictionary from claims' report entries (:func:`claim_json`; a resumed
    campaign's stored entries, :mod:`verify.campaign`)."""
    claims = [dict(c) for c in claims]
    data = {"version": REPORT_VERSION, "metadata": dict(meta), "summary": summary(claims),
            "claims": claims}
    if mutation:
        data["mutation"] = dict(mutation)
    return data


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, float):
        return f"{x:.3g}" if math.isfinite(x) else str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, str):
        try:
            return _fmt(float(x))
        except ValueError:
            return x
    return str(x)


def _examples(c: Mapping) -> str:
    """``drawn/requested``, with ``, F failed`` when examples were refuted."""
    out = f"{c['examples_drawn']}/{c['examples_requested']}"
    failed = c.get("examples_failed", 0)
    return out + (f", {failed} failed" if failed else "")


def _control_word(c: Mapping) -> str:
    if c["control_rejected"] is None:
        return "n/a"
    return "rejected" if c["control_rejected"] else "NOT rejected"


def summary_line(data: Mapping) -> str:
    """What was settled first (held, refuted, not settled at this budget, errors), then the
    mutation score where one was run, then "as expected" (the regression guard)."""
    s = data["summary"]
    o = s["outcomes"]
    unmeasured = s.get("unmeasured", 0)
    unsettled = f"{o['inconclusive']} not settled at this budget"
    notes = []
    if "unsettled_by_design" in s:
        notes.append(f"{s['unsettled_by_design']} of them by their design")
    if unmeasured:
        notes.append(f"{unmeasured} unmeasured at this profile")
    if s.get("in_band"):
        notes.append(f"{s['in_band']} decided inside their design's indifference band: "
                     "findings")
    if notes:
        unsettled += f" ({', '.join(notes)})"
    line = (f"{o['holds']} held, {o['refuted']} refuted (findings), {unsettled}, "
            f"{o['error']} errors, of {s['claims']} claims")
    mutation = data.get("mutation")
    if mutation:
        from verify.mutate import headline

        scores = "; ".join(f"{p} {headline(v)}" for p, v in mutation["rows"].items())
        line += f"; mutation score {scores} (mutate at {mutation.get('commit', '?')})"
    return (line + f"; {s['ok']} of {s['claims']} as expected "
            f"(controls {s['controls_rejected']} rejected, {s['controls_not_applicable']} "
            f"n/a, {s['controls_not_rejected']} not rejected; positive controls "
            f"{s['positive_controls']['passed']}/{s['positive_controls']['required']})")


def _in_band(c: Mapping) -> bool:
    return bool(c.get("in_band"))


def _settles_text(c: Mapping) -> str:
    """Where a claim expected inconclusive at this profile is expected to settle."""
    at = c.get("settles_at") or {}
    if at.get("profile") is None:
        return "no profile settles it (open or budget-limited everywhere)"
    out = f"settles at {at['profile']} (expected {at['expected']})"
    if at.get("size") is not None:
        out += f" with {at['size']} {at['unit']}"
        if at.get("needed") is not None:
            out += f", its power plan needing {at['needed']}"
    return out


def unsettled_lines(data: Mapping) -> list[str]:
    """One line per claim expected inconclusive at this profile ("not settled at this
    budget", as expected): why, and the profile and size that would settle it."""
    out = []
    for c in data["claims"]:
        if c["expected"] != "inconclusive":
            continue
        why = ""
        if c.get("power") is not None:
            p = c["power"]
            need = "no size decides" if p["needed"] is None else f"needs {p['needed']}"
            why = f"power plan: {need} {p['unit']}, this profile runs {p['have']}; "
        elif c.get("unmeasured"):
            why = "parts not measured at this profile; "
        out.append(f"{c['id']} ({c['outcome']}): {why}{_settles_text(c)}")
    return out


def band_lines(data: Mapping) -> list[str]:
    """One line per claim decided inside its power plan's indifference band (a finding, as
    expected): the band and each undecided part's error and interval."""
    out = []
    for c in data["claims"]:
        if not _in_band(c):
            continue
        at, p = c["settles_at"], c["power"]
        parts = "; ".join(f"{k} {_fmt(v['error'])} [{_fmt(v['lower'])}, {_fmt(v['upper'])}]"
                          for k, v in at["intervals"].items())
        out.append(f"{c['id']} (inconclusive on the paper's statement, expected "
                   f"{at['expected']}): {parts}, inside ({_fmt(at['band'][0])}, "
                   f"{_fmt(at['band'][1])}), the band between the planning values its design "
                   f"is powered at ({p['have']} {p['unit']}): the truth lies there, where no "
                   "registered profile decides the statement")
    return out


def to_table(data: Mapping) -> str:
    """Plain-text table for the terminal, from a report dictionary."""
    rows = [("claim", "expected", "outcome", "control", "worst part: deciding/tol", "ex",
             "s", "verdict")]
    for c in data["claims"]:
        w = c["worst"]
        rows.append((
            c["id"], c["expected"], c["outcome"], _control_word(c),
            f"{_fmt(w.get('deciding', w['error']))}/{_fmt(w['tolerance'])}" if w else "-",
            _examples(c), f"{c['seconds']:.1f}",
            c["verdict"],
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    unsettled = unsettled_lines(data)
    if unsettled:
        lines += ["", f"Not settled at this budget by design ({len(unsettled)}, as expected):"]
        lines += [f"  {line}" for line in unsettled]
    banded = band_lines(data)
    if banded:
        lines += ["", f"Decided inside the design's indifference band ({len(banded)}, "
                      "findings):"]
        lines += [f"  {line}" for line in banded]
    lines += ["", summary_line(data)]
    return "\n".join(lines)


def _parts_md(parts: Sequence[Mapping], rejected_by: Sequence[str] = ()) -> list[str]:
    out = ["| part | kind | predicted | observed | error [lower, upper] | tolerance | margin | "
           "status |" + (" rejects control |" if rejected_by is not None else ""),
           "|---|---|---|---|---|---|---|---|" + ("---|" if rejected_by is not None else "")]
    for p in parts:
        interval = ("" if p["lower"] == p["upper"] else
                    f" [{_fmt(p['lower'])}, {_fmt(p['upper'])}]"
                    + (f" ({100 * p['confidence']:.0f}%)" if p.get("confidence") else ""))
        try:
            margin = _fmt(float(p["tolerance"]) - float(p["upper"]))
        except (TypeError, ValueError):
            margin = "-"
        row = (f"| {p['name']} | {p.get('kind') or 'unset'} | {_fmt(p['predicted'])} | "
               f"{_fmt(p['observed'])} | "
               f"{_fmt(p['error'])}{interval} | {_fmt(p['tolerance'])} | {margin} | "
               f"{p['status']} |")
        if rejected_by is not None:
            row += (" yes |" if p["name"] in rejected_by else " |")
        out.append(row)
    return out


def _facts_text(facts: Mapping | None) -> str:
    """One machine's :func:`numerics.machine.facts` in a few words."""
    if not facts:
        return "not recorded"
    text = f"{facts.get('cpu') or facts.get('machine')}"
    if facts.get("simd"):
        text += f" (SIMD up to {facts['simd'][-1]})"
    if facts.get("torch_cpu_capability"):
        text += f", torch kernels {facts['torch_cpu_capability']}"
    if facts.get("torch_threads"):
        text += f", {facts['torch_threads']} thread(s)"
    if facts.get("env"):
        text += ", " + ", ".join(f"{k}={v}" for k, v in sorted(facts["env"].items()))
    return text


def machine_lines(meta: Mapping) -> list[str]:
    """Where the report and its stored runs were computed (float rounding differs between
    machines' kernels, and long training can amplify it: :mod:`numerics.machine`)."""
    out = []
    if "platform" in meta:
        out.append(f"Machine: {_facts_text(meta['platform'])}.")
    made_on = (meta.get("campaign") or {}).get("runs_made_on")
    if made_on:
        out.append("Campaign runs made on: " + "; ".join(
            f"{m['runs']} on {_facts_text(m['facts'])}" for m in made_on) + ".")
    return [" ".join(out), ""] if out else []


def to_markdown(data: Mapping) -> str:
    """report.md from a report dictionary (what ``tdcheck report DIR`` re-renders)."""
    meta = data.get("metadata", {})
    out = [
        "# tdcheck verification report", "",
        f"**{summary_line(data)}.**", "",
        f"Profile `{meta.get('profile')}`, device `{meta.get('device')}`, commit "
        f"`{meta.get('commit')}`, started {meta.get('started')}, {meta.get('seconds')} s."
        + (f" Drawn examples per slow claim: {meta['drawn']} (`--drawn`, not the profile's)."
           if "drawn" in meta else ""), "",
        *machine_lines(meta),
        "Each claim's check returns named parts; a part *passes* when the upper end of the "
        "interval on its error is within the tolerance (a model-mismatch allowance), *fails* "
        "when the lower end exceeds it, and is *inconclusive* otherwise. The outcome is "
        "*refuted* if a part failed, *inconclusive* if one was inconclusive, else *holds*. The "
        "negative control (a near-miss wrong theory through the same check) is *rejected* only "
        "by a part that passed under the paper's theory and failed under the control; it is "
        "*n/a* when no part passed. `expected = refuted` marks a documented finding; such "
        "claims carry a positive control that must pass. Every example the profile asks for "
        "is run (\"2/13, 1 failed\": one of 13 refuted). A claim with several statistical "
        "parts controls its family-wise error (Holm's step-down on the parts' lower ends); "
        "the table shows each worst part's deciding end (the upper end when it passes, the "
        "lower end when it fails) against its tolerance.", "",
        "| claim | expected | outcome | verdict | control | worst part: deciding end / tolerance | "
        "examples | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in data["claims"]:
        w = c["worst"]
        ex = _examples(c) + (" (short)" if c["short"] else "")
        out.append(
            f"| `{c['id']}` | {c['expected']} | **{c['outcome']}** | {c['verdict']} | "
            f"{_control_word(c)} | "
            f"{(w['part'] + ': ' + _fmt(w.get('deciding', w['error'])) + ' / ' + _fmt(w['tolerance'])) if w else '-'}"
            f" | {ex} | {c['seconds']:.1f} |")
    out.append("")
    unsettled = unsettled_lines(data)
    if unsettled:
        out += ["## Not settled at this budget", "",
                "Claims whose expected outcome at this profile is *inconclusive*: their "
                "power plan (or parts this profile does not measure) says its size cannot "
                "decide them. They are as expected when inconclusive; each line names the "
                "profile, and the size, that would settle it.", ""]
        out += [f"- `{line.split(' ', 1)[0]}` {line.split(' ', 1)[1]}" for line in unsettled]
        out.append("")
    banded = band_lines(data)
    if banded:
        out += ["## Decided inside the design's indifference band (findings)", "",
                "Claims undecided on the paper's statement where their power plan decides, "
                "whose every undecided interval lies between the two planning values the "
                "design is powered at: the run has decided that the truth is there, where the "
                "design promised no decision on the statement. A finding about the paper's "
                "statement (neither held nor refuted at any registered size), as expected.", ""]
        out += [f"- `{line.split(' ', 1)[0]}` {line.split(' ', 1)[1]}" for line in banded]
        out.append("")
    for c in data["claims"]:
        out += [f"## `{c['id']}`", "", f"**Claim.** {c['statement']}", "",
                f"**Source.** {c['source']}. **Kind.** {c['kind']}. **Expected.** "
                f"{c['expected']}. **Outcome.** {c['outcome']}. **Verdict.** {c['verdict']}.",
                ""]
        if c["problems"]:
            out += ["**Problems.** " + "; ".join(c["problems"]) + ".", ""]
        if c.get("power") is not None:
            p = c["power"]
            need = "no size decides" if p["needed"] is None else f"needs {p['needed']} {p['unit']}"
            out += [f"**Power plan at this profile.** {need}, this profile runs {p['have']}"
                    + (f" (power {_fmt(p['power'])})" if p.get("power") is not None else "")
                    + f": {'decides' if p['decides'] else 'cannot decide'}"
                    + (f" for a truth outside the band ({_fmt(p['band'][0])}, "
                       f"{_fmt(p['band'][1])})"
                       if p.get("band") else "") + f". {p['design']}.", ""]
        if c.get("pinned"):
            out += ["Pinned examples: " + "; ".join(
                f"`{json.dumps(ex['params'])}`" + (f" ({ex['via']})" if ex["via"] else "")
                for ex in c["pinned"]) + ".", ""]
        if c["parts"]:
            label = "falsifying example" if c["falsifying_example"] is not None else "worst example"
            out += [f"Parts at the {label} `{json.dumps(c['worst_example'])}`:", ""]
            out += _parts_md(c["parts"], c["control_rejected_by"]) + [""]
            out += ["Error models:", ""]
            out += [f"- *{p['name']}*: {p['error_model']}" for p in c["parts"]] + [""]
        if c["details"]:
            out += ["Details:", "", "```json", json.dumps(c["details"], indent=1), "```", ""]
        drift = c.get("tolerance_drift") or {}
        if drift:
            out += ["**Tolerance under the control.** " + "; ".join(
                f"*{n}* {_fmt(v['check'])} -> {_fmt(v['control'])} "
                + (f"(declared: {v['declared']})" if v.get("declared") else
                   "(**undeclared**: a tolerance computed from the theory under test can grow "
                   "under a wrong theory and let the control pass)")
                for n, v in drift.items()) + ".", ""]
        ctl = c["control"]
        line = f"**Negative control** ({ctl['description']}): {_control_word(c)}"
        if ctl["rejected_by"]:
            line += f" by {', '.join(ctl['rejected_by'])}"
        if ctl["example"] is not None:
            line += f" at `{json.dumps(ctl['example'])}`"
        out += [line + ".", ""]
        if ctl["parts"]:
            out += _parts_md(ctl["parts"], None) + [""]
        if ctl["error"]:
            out += [f"Control error: `{ctl['error']}`", ""]
        pc = c["positive_control"]
        if pc is not None:
            out += [f"**Positive control** ({pc['description']}): "
                    + ("passed" if pc["passed"] else "**did not pass**") + ".", ""]
            if pc["parts"]:
                out += _parts_md(pc["parts"], None) + [""]
            if pc["error"]:
                out += [f"Positive control error: `{pc['error']}`", ""]
        if c["notes"]:
            out += [f"Note: {c['notes']}", ""]
        if c["message"]:
            out += ["```", c["message"], "```", ""]
    return "\n".join(out)


def mutation_summary(out_dir: Path) -> dict | None:
    """The scores of ``out_dir/mutation.json`` (written by ``tdcheck mutate``), if any: per
    row the score, the simulation score and the resolution counts
    (:func:`verify.mutate.row_summary`)."""
    path = Path(out_dir) / "mutation.json"
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        from verify.mutate import row_summary

        return {"commit": data.get("metadata", {}).get("commit"),
                "profile": data.get("metadata", {}).get("profile"),
                "rows": {p: row_summary(r) for p, r in data["rows"].items()}}
    except (ValueError, KeyError, TypeError):
        return None


def write_reports(results: Sequence[ClaimResult], out_dir: Path, meta: Mapping[str, Any]
                  ) -> tuple[Path, Path]:
    """Write report.json and report.md (rendered from the JSON) into ``out_dir``."""
    return write_entries([_claim_json(r) for r in results], out_dir, meta)


def write_entries(claims: Sequence[Mapping], out_dir: Path, meta: Mapping[str, Any]
                  ) -> tuple[Path, Path]:
    """Write report.json and report.md from claims' report entries (:func:`from_entries`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = from_entries(claims, meta, mutation_summary(out_dir))
    md, js = out_dir / "report.md", out_dir / "report.json"
    js.write_text(json.dumps(data, indent=2, allow_nan=False))
    md.write_text(to_markdown(data))
    return md, js
