"""Reports: a terminal table, ``report.md`` and ``report.json`` (stable schema).

report.json::

    {"version", "profile", "device",
     "claims": [{"id", "paper", "statement", "source", "kind", "expected",
                 "outcome" ("holds" | "refuted" | "error"), "control_rejected" (bool),
                 "worst": {"predicted", "observed", "error", "tolerance"}, "examples" (int),
                 "seconds"}]}

Each claim entry also carries ``matches_expected``, ``error_model``, ``control``,
``falsifying_example``, ``details`` and ``message``; consumers may ignore them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.runner import ClaimResult

__all__ = ["REPORT_VERSION", "to_json", "to_markdown", "to_table", "write_reports"]

REPORT_VERSION = "1"


def _num(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    if isinstance(x, dict):
        return {str(k): _num(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_num(v) for v in x]
    if hasattr(x, "item"):
        return _num(x.item())
    return x


def _evidence(ev) -> dict | None:
    if ev is None:
        return None
    return {"predicted": _num(float(ev.predicted)), "observed": _num(float(ev.observed)),
            "error": _num(float(ev.error)), "tolerance": _num(float(ev.tolerance))}


def to_json(results: Sequence[ClaimResult], profile: str, device: str) -> dict:
    claims = []
    for r in results:
        c = r.claim
        claims.append({
            "id": c.id,
            "paper": c.paper,
            "statement": c.statement,
            "source": c.source,
            "kind": c.kind,
            "expected": c.expected,
            "outcome": r.outcome,
            "control_rejected": bool(r.control_rejected),
            "worst": _evidence(r.worst),
            "examples": int(r.examples),
            "seconds": round(float(r.seconds), 3),
            "matches_expected": r.matches_expected,
            "error_model": r.worst.error_model if r.worst else None,
            "details": _num(dict(r.worst.details)) if r.worst else None,
            "falsifying_example": _num(r.falsifying_example),
            "control": {
                "description": c.control_description,
                "worst": _evidence(r.control_worst),
                "example": _num(r.control_example),
                "error": r.control_error,
            },
            "notes": c.notes,
            "message": r.error_message,
        })
    return {"version": REPORT_VERSION, "profile": profile, "device": device, "claims": claims}


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}" if math.isfinite(x) else str(x)
    return str(x)


def _verdict(r: ClaimResult) -> str:
    if r.ok:
        return "ok"
    if not r.control_rejected:
        return "CONTROL NOT REJECTED"
    return "UNEXPECTED"


def to_table(results: Sequence[ClaimResult]) -> str:
    """Plain-text table for the terminal."""
    rows = [("claim", "expected", "outcome", "control", "error/tol", "examples", "s", "verdict")]
    for r in results:
        w = r.worst
        rows.append((
            r.claim.id, r.claim.expected, r.outcome,
            "rejected" if r.control_rejected else "NOT rejected",
            f"{_fmt(w.error)}/{_fmt(w.tolerance)}" if w else "-",
            str(r.examples), f"{r.seconds:.1f}", _verdict(r),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    bad = sum(not r.ok for r in results)
    lines.append("")
    lines.append(f"{len(results)} claims: {sum(r.outcome == 'holds' for r in results)} held, "
                 f"{sum(r.outcome == 'refuted' for r in results)} refuted, "
                 f"{sum(r.outcome == 'error' for r in results)} errors; "
                 f"{bad} differ from expectation or have an unrejected control")
    return "\n".join(lines)


def to_markdown(results: Sequence[ClaimResult], profile: str, device: str) -> str:
    out = [
        "# tdcheck verification report",
        "",
        f"Profile `{profile}`, device `{device}`. An outcome is *holds* when no example "
        "broke the claim, *refuted* when one did (its numbers are below), *error* when the "
        "check crashed. Every claim's negative control (a deliberately wrong theory run "
        "through the same check) must be *rejected*. `expected = refuted` marks a "
        "documented finding: a paper claim that did not reproduce.",
        "",
        "| claim | expected | outcome | control | worst error / tolerance | examples | s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        w = r.worst
        out.append(
            f"| `{r.claim.id}` | {r.claim.expected} | **{r.outcome}** | "
            f"{'rejected' if r.control_rejected else '**NOT rejected**'} | "
            f"{_fmt(w.error) + ' / ' + _fmt(w.tolerance) if w else '-'} | {r.examples} | "
            f"{r.seconds:.1f} |"
        )
    out.append("")
    for r in results:
        c = r.claim
        out += [f"## `{c.id}`", "", f"**Claim.** {c.statement}", "",
                f"**Source.** {c.source}. **Kind.** {c.kind}. **Expected.** {c.expected}. "
                f"**Outcome.** {r.outcome}" + ("" if r.matches_expected else " (UNEXPECTED)") + ".", ""]
        if r.worst is not None:
            w = r.worst
            out += [f"Worst case: predicted {_fmt(w.predicted)}, observed {_fmt(w.observed)}, "
                    f"error {_fmt(w.error)} against tolerance {_fmt(w.tolerance)}.", "",
                    f"Error model: {w.error_model}", ""]
            details = {k: v for k, v in w.details.items() if k != "all_parts"}
            if details:
                out += ["```", json.dumps(_num(details), indent=1)[:3000], "```", ""]
        if r.falsifying_example is not None:
            out += [f"Falsifying example: `{json.dumps(_num(r.falsifying_example))}`", ""]
        out.append(f"Control ({c.control_description}): "
                   + ("rejected" if r.control_rejected else "NOT rejected")
                   + (f" at `{json.dumps(_num(r.control_example))}`" if r.control_example else "")
                   + (f", error {_fmt(r.control_worst.error)} vs tolerance "
                      f"{_fmt(r.control_worst.tolerance)}" if r.control_worst else "") + ".")
        out.append("")
        if c.notes:
            out += [f"Note: {c.notes}", ""]
        if r.error_message:
            out += ["```", r.error_message, "```", ""]
    return "\n".join(out)


def write_reports(results: Sequence[ClaimResult], out_dir: Path, profile: str, device: str) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md, js = out_dir / "report.md", out_dir / "report.json"
    md.write_text(to_markdown(results, profile, device))
    js.write_text(json.dumps(to_json(results, profile, device), indent=2))
    return md, js
