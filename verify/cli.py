"""The ``tdcheck`` command line: list, equations, verify, report, figures, bench, sweep."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

PROFILE_CHOICES = ("test", "quick", "ci", "thorough")
DEVICE_CHOICES = ("auto", "cpu", "cuda")

COMMANDS = {
    "list": ("papers and their claim ids", "tdcheck list"),
    "equations": ("the derived equations of a paper (text, LaTeX file or JSON)",
                  "tdcheck equations markov --latex"),
    "verify": ("run the claims; write report.md and report.json",
               "tdcheck verify markov --profile quick"),
    "mutate": ("inject slips into a row's theory; score how many its claims catch",
               "tdcheck mutate markov --profile quick"),
    "report": ("re-render report.md from a report.json", "tdcheck report tdcheck-report"),
    "figures": ("regenerate the papers' figures (PNG, PDF, data, gallery)",
                "tdcheck figures markov --open"),
    "bench": ("speed of the stacked trainer against a plain torch loop",
              "tdcheck bench --out tdcheck-bench"),
    "sweep": ("train over a parameter grid and draw the phase diagram",
              "tdcheck sweep markov phase --grid p=0.05:0.95:5 q=0.05:0.95:5"),
    "checkpoints": ("list a run cache's training checkpoints; prune stale ones",
                    "tdcheck checkpoints --prune-older 7"),
}

#: exit codes of ``tdcheck`` (``tdcheck verify -h`` and the README list them)
EXIT_OK, EXIT_NOT_AS_EXPECTED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
EXIT_CODES = (
    "exit codes:\n"
    "  0  every claim as expected (a documented finding, expected refuted, is as expected;\n"
    "     so is a claim 'not settled at this budget' where its power plan says the profile\n"
    "     cannot decide it)\n"
    "  1  a claim not as expected: a new finding (refuted where expected to hold, or the\n"
    "     reverse), undecided where its design decides, a control not rejected, a positive\n"
    "     control not passing\n"
    "  2  usage or bad input (unknown paper, claim or option; an unwritable --out)\n"
    "  3  an error: a check, control or positive control raised, or tdcheck itself did\n"
    "     (takes precedence over 1)\n"
    "`make verify` wraps this command: make exits 2 whenever its recipe fails and prints\n"
    "tdcheck's own code as 'Error N'; a script wanting the code runs .venv/bin/tdcheck.")
EPILOG = "examples:\n" + "\n".join(f"  {ex}" for _, ex in COMMANDS.values()) + (
    "\n\n`tdcheck COMMAND -h` gives a command's options.\n\n" + EXIT_CODES)


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and a suggestion for a mistyped command."""

    def error(self, message: str):  # type: ignore[override]
        if "invalid choice" in message and "argument COMMAND" in message:
            bad = message.split("'")[1] if "'" in message else ""
            close = difflib.get_close_matches(bad, list(COMMANDS), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise _UsageError(f"unknown command '{bad}'{hint} (commands: {', '.join(COMMANDS)})")
        raise _UsageError(message)


def _papers(args_papers: Sequence[str]) -> list[str]:
    from verify.registry import get_paper, implemented

    if not args_papers:
        return list(implemented())
    for p in args_papers:
        info = get_paper(p)
        if info.status == "planned":
            raise ValueError(f"paper {p!r} is planned: it has no claims yet")
    return list(args_papers)


def _device(args) -> str:
    """Resolve ``--device`` once and say which device was chosen."""
    from numerics.device import select_device

    if getattr(args, "plan", False) and args.device.startswith("cuda"):
        # --plan trains nothing, so it may plan for a GPU this machine does not have
        device = args.device if ":" in args.device else "cuda:0"
        print(f"tdcheck: planning for {device} (nothing runs here)", file=sys.stderr)
        return device
    device = str(select_device(args.device))
    print(f"tdcheck: device {device}" + (" (auto)" if args.device == "auto" else ""),
          file=sys.stderr)
    return device


def _progress(args) -> bool:
    """Progress bars only on a terminal, and never with --no-progress."""
    return not getattr(args, "no_progress", False) and sys.stderr.isatty()


def _writable(folder: Path) -> None:
    """Create ``folder`` now, so a path that cannot hold the report fails before the run."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".tdcheck-write-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--out {folder}: cannot write there ({exc.strerror or exc})") from None


def _cache(args):
    from numerics.cache import RunCache, default_cache_dir

    if getattr(args, "no_cache", False):
        return RunCache(None)
    folder = getattr(args, "cache_dir", None)
    return RunCache(Path(folder) if folder else default_cache_dir())


# ---------------------------------------------------------------------- list
def _cmd_list(args) -> int:
    from verify.registry import PAPERS, claims_for

    rows = []
    for pid, info in PAPERS.items():
        claims = claims_for(pid) if info.status != "planned" else []
        rows.append({"paper": pid, "status": info.status, "title": info.title,
                     "claims": [{"id": c.id, "kind": c.kind, "expected": c.expected,
                                 "cost": c.cost} for c in claims]})
    from verify.mutate import headline, kept_summaries, row_summary
    from verify.report import mutation_summary

    # the last `tdcheck mutate` of each row, kept beside the run cache; --report DIR's
    # mutation.json first when given (and the default report folder for rows not kept)
    kept = {p: row_summary(r) for p, r in kept_summaries().items()}
    folder = mutation_summary(Path(args.report or "tdcheck-report")) or {"rows": {}}
    mutation = {**folder["rows"], **kept} if args.report is None else {**kept, **folder["rows"]}
    for row in rows:
        score = mutation.get(row["paper"])
        row["mutation_score"] = None if score is None else score.get("score")
        row["mutation"] = score
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = 80
    for row in rows:
        print(f"{row['paper']} ({row['status']}, {len(row['claims'])} claims)")
        if row["mutation"] is not None:
            s = row["mutation"]
            at = ", ".join(x for x in (s.get("profile"), s.get("commit")) if x)
            for line in textwrap.wrap(f"mutation score {headline(s)}" + (f" ({at})" if at else ""),
                                      width - 4):
                print(f"    {line}")
        for line in textwrap.wrap(row["title"], width - 4):
            print(f"    {line}")
        for c in row["claims"]:
            short = c["id"].split(".", 1)[1]
            tag = f"{c['expected']}, {c['cost']}"
            room = width - 6 - len(tag) - 2
            name = short if len(short) <= room else short[: room - 1] + "~"
            print(f"      {name:<{room}}  {tag}")
    print("\n(ids are PAPER.NAME, e.g. markov.basins; `tdcheck list --json` for scripts)")
    return 0


# ---------------------------------------------------------------------- equations
def _equations(paper: str) -> list[tuple[str, object, str]]:
    """(name, sympy expression, source) for a paper, in the module's order."""
    import importlib

    _papers([paper])
    module = importlib.import_module(f"theory.{paper}")
    out = []
    for name, expr, source in module.equations():
        out.append((name, expr, source or f"theory.{paper}"))
    return out


def _tidy(expr, seconds: float = 2.0):
    """A readable form: x*sign(x) folded to |x|, then ``simplify`` under a time budget.

    Simplification is cosmetic (the derived form is what the checks use), so a slow or
    failing simplification falls back to the derived form.
    """
    import signal
    import threading

    import sympy as sp

    if not isinstance(expr, sp.Basic):
        return expr
    folded = expr
    for sgn in expr.atoms(sp.sign):
        arg = sgn.args[0]
        if isinstance(arg, sp.Symbol) and not isinstance(arg, sp.Dummy):
            folded = folded.subs(sgn * arg, sp.Abs(arg))
    if sp.count_ops(folded) > 60 or threading.current_thread() is not threading.main_thread():
        return folded

    def _timeout(signum, frame):
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, _timeout)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        cand = sp.simplify(folded)

        def symbolic_powers(e) -> int:  # log((x**p * y**q)**(1/r)) reads worse than a sum
            return sum(1 for pw in e.atoms(sp.Pow) if not pw.exp.is_number)

        better = (sp.count_ops(cand) <= sp.count_ops(folded)
                  and symbolic_powers(cand) <= symbolic_powers(folded))
        return cand if better else folded
    except Exception:  # TimeoutError or a simplification bug: keep the derived form
        return folded
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _cmd_equations(args) -> int:
    import sympy as sp

    eqs = [(n, _tidy(e), s) for n, e, s in _equations(args.paper)]
    if args.format == "json":
        print(json.dumps([{"name": n, "source": s, "sympy": sp.srepr(e), "text": sp.sstr(e),
                           "latex": sp.latex(e)} for n, e, s in eqs], indent=1))
        return 0
    if args.latex:
        path = Path(args.out or f"{args.paper}-equations.tex")
        body = "\n".join(
            f"\\subsection*{{{_tex_escape(n)}}}\n\\noindent\\textit{{{_tex_escape(s)}}}\n"
            f"\\begin{{dmath*}}\n{sp.latex(e)}\n\\end{{dmath*}}\n" for n, e, s in eqs)
        path.write_text(
            "\\documentclass[10pt]{article}\n\\usepackage[margin=2cm]{geometry}\n"
            "\\usepackage{amsmath,amssymb}\n\\usepackage{breqn}\n\\begin{document}\n"
            f"\\section*{{tdcheck: derived equations of \\texttt{{{_tex_escape(args.paper)}}}}}\n"
            f"{body}\\end{{document}}\n")
        print(f"wrote {path} ({len(eqs)} equations; compile with pdflatex)")
        return 0
    for n, e, s in eqs:
        print(f"{n}  [{s}]\n    {sp.sstr(e)}")
    return 0


def _tex_escape(text: str) -> str:
    table = {"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#",
             "$": r"\$", "{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\~{}"}
    return "".join(table.get(ch, ch) for ch in text)


# ---------------------------------------------------------------------- verify / report
def _cmd_verify(args) -> int:
    import time

    from verify.backends import require_ray, run_claims_on
    from verify.claims import Context
    from verify.registry import claims_for
    from verify.report import (
        metadata,
        mutation_summary,
        summary_line,
        to_json,
        to_table,
        write_reports,
    )
    from verify.runner import get_profile

    if args.backend == "ray":
        require_ray()  # a missing Ray is one line naming the extra, before any work
    profile = get_profile(args.profile)
    if args.drawn is not None:
        if args.drawn < 0:
            raise ValueError(f"--drawn must be >= 0, got {args.drawn}")
        profile = dataclasses.replace(profile, slow=args.drawn, gpu=args.drawn)
    papers = _papers(args.paper)
    claims = [c for p in papers for c in claims_for(p)]
    if args.claim:
        wanted = set(args.claim)
        unknown = wanted - {c.id for c in claims}
        if unknown:
            raise ValueError(f"unknown claim id(s): {', '.join(sorted(unknown))}")
        claims = [c for c in claims if c.id in wanted]
    _writable(Path(args.out))
    device = _device(args)
    if args.plan and args.resume:
        from verify.campaign import Campaign

        campaign = Campaign(Path(args.resume), profile.name, seed=args.seed,
                            drawn=args.drawn, device=device)
        stored, todo = campaign.split(claims)
        print(f"campaign {args.resume}: {len(stored)} of {len(claims)} claims stored; "
              f"the plan counts the {len(todo)} left", flush=True)
        return _plan(args, todo, profile, device, cache=campaign.cache())
    if args.plan:
        return _plan(args, claims, profile, device)
    if args.resume:
        return _resume(args, claims, profile, device)
    started = time.time()
    ctx = Context(device=device, profile=profile.name, cache=_cache(args),
                  progress=_progress(args), seed=args.seed)
    results = run_claims_on(args.backend, claims, profile, ctx, progress=_progress(args),
                            address=args.address)
    meta = metadata(profile.name, device, started, time.time() - started, seed=args.seed,
                    drawn=args.drawn)
    data = to_json(results, meta, mutation_summary(Path(args.out)))
    print(to_table(data))
    md, _ = write_reports(results, Path(args.out), meta)
    print(f"\n{summary_line(data)}. Report: {md} (and report.json beside it).")
    return _exit_code([r.raised for r in results], [r.ok for r in results])


def _resume(args, claims, profile, device: str) -> int:
    """``verify --resume DIR``: run the claims not yet stored in the campaign, store each as
    it ends, and report them all (:mod:`verify.campaign`)."""
    import time

    from verify.backends import run_claims_on
    from verify.campaign import Campaign
    from verify.claims import Context
    from verify.report import (
        claim_json,
        from_entries,
        metadata,
        mutation_summary,
        summary_line,
        to_table,
        write_entries,
    )

    if args.no_cache or args.cache_dir:
        raise ValueError("--resume keeps its runs in DIR/runs: drop --no-cache / --cache-dir")
    campaign = Campaign(Path(args.resume), profile.name, seed=args.seed, drawn=args.drawn,
                        device=device)
    stored, todo = campaign.split(claims)
    print(f"campaign {args.resume}: {len(stored)} of {len(claims)} claims stored, "
          f"{len(todo)} to run", flush=True)
    started = time.time()
    ctx = Context(device=device, profile=profile.name, cache=campaign.cache(),
                  progress=_progress(args), seed=args.seed)
    results = run_claims_on(args.backend, todo, profile, ctx, progress=_progress(args),
                            address=args.address,
                            on_result=lambda r: campaign.record(r.claim, claim_json(r)))
    ran = {r.claim.id: claim_json(r) for r in results}
    entries = [stored[c.id] if c.id in stored else ran[c.id] for c in claims]
    meta = metadata(profile.name, device, started, time.time() - started, seed=args.seed,
                    drawn=args.drawn)
    from numerics.cache import made_on_summary

    meta["campaign"] = {"dir": str(args.resume), "stored": len(stored), "ran": len(todo),
                        "runs_made_on": made_on_summary(campaign.runs)}
    data = from_entries(entries, meta, mutation_summary(Path(args.out)))
    print(to_table(data))
    md, _ = write_entries(entries, Path(args.out), meta)
    print(f"\n{summary_line(data)}. Report: {md} (and report.json beside it).")
    return _exit_code([bool(e.get("raised")) for e in entries],
                      [bool(e.get("ok")) for e in entries])


def _exit_code(raised: Sequence[bool], ok: Sequence[bool]) -> int:
    """3 if any claim raised, else 1 if any is not as expected, else 0 (:data:`EXIT_CODES`)."""
    if any(raised):
        return EXIT_ERROR
    return EXIT_OK if all(ok) else EXIT_NOT_AS_EXPECTED


def _plan(args, claims, profile, device: str, cache=None) -> int:
    from verify.claims import Context
    from verify.plan import plan_report, throughput
    from verify.runner import plan_claim

    ctx = Context(device=device, profile=profile.name,
                  cache=cache if cache is not None else _cache(args), seed=args.seed)
    plans = [plan_claim(c, profile, ctx) for c in claims]
    text, data = plan_report(plans, throughput(device, args.plan_rate), profile.name, device)
    path = Path(args.out) / "plan.json"
    path.write_text(json.dumps(data, indent=1, default=str))
    print(text)
    print(f"plan: {path}")
    return 0


def _cmd_report(args) -> int:
    from verify.report import summary_line, to_markdown

    folder = Path(args.dir)
    js = folder / "report.json" if folder.is_dir() else folder
    if not js.exists():
        raise ValueError(f"no report.json at {js}")
    data = json.loads(js.read_text())
    if "summary" not in data:
        raise ValueError(f"{js} is not a tdcheck report of version 2 or later")
    md = js.with_name("report.md")
    md.write_text(to_markdown(data))
    print(f"{summary_line(data)}. Wrote {md}.")
    claims = data["claims"]
    raised = [bool(c.get("raised", c["outcome"] == "error")) for c in claims]
    return _exit_code(raised, [bool(c["ok"]) for c in claims])


def _cmd_mutate(args) -> int:
    import time

    from verify.mutate import headline, row_summary, run_mutate, write_mutation_reports
    from verify.report import metadata

    if args.backend == "ray":
        from verify.backends import require_ray

        require_ray()
    papers = _papers(args.paper) if args.paper else list(_papers([]))
    if args.max_mutants < 1:
        raise ValueError(f"--max-mutants must be >= 1, got {args.max_mutants}")
    if not 0 < args.delta < 1:
        raise ValueError(f"--delta must lie in (0, 1), got {args.delta}")
    if args.resolution_budget <= 0:
        raise ValueError(f"--resolution-budget must be > 0, got {args.resolution_budget}")
    _writable(Path(args.out))
    started = time.time()
    rows = run_mutate(papers, args.profile, functions=args.function or None, jobs=args.jobs,
                      max_mutants=args.max_mutants, delta=args.delta,
                      progress=_progress(args), backend=args.backend, address=args.address,
                      every_claim=args.every_claim, resolution=args.resolution,
                      resolution_only=args.resolution_only,
                      resolution_budget=args.resolution_budget)
    meta = metadata(args.profile, "cpu", started, time.time() - started)
    md, js = write_mutation_reports(rows, Path(args.out), meta)
    for r in rows:
        data = r.to_json()
        if not r.resolution_only:
            print(f"{r.paper}: mutation score {100 * r.score:.0f}% ({r.killed} of {r.mutants} "
                  f"mutants killed, {r.weak} of them weakly; {r.exceptions} exception defects, "
                  f"{r.timeouts} timeouts; {len(data['unconsumed'])} public functions no check "
                  f"consumes) in {r.seconds:.0f} s")
            sim = data["simulation"]
            print(f"{r.paper}: simulation score "
                  + (f"{100 * sim['score']:.0f}% ({sim['rejected']} of {sim['mutants']} "
                     f"mutants rejected by a simulation part, {sim['weak']} weakly)"
                     if sim["mutants"] else "n/a (no function a simulation claim consumes)"))
        if r.resolution is not None:
            print(f"{r.paper}: {headline(row_summary(data)).split(', ')[-1]} "
                  f"in {r.resolution_seconds:.0f} s")
    print(f"Report: {md} (and {js.name} beside it).")
    return 0


# ---------------------------------------------------------------------- figures / bench
def _cmd_figures(args) -> int:
    from figures.registry import RenderError, render

    papers = _papers(args.paper)
    device = _device(args)
    failed: list[str] = []
    try:
        from verify.claims import Context

        profile = "test" if args.quick else args.profile
        ctx = Context(device=device, profile=profile, cache=_cache(args),
                      progress=_progress(args))
        written = render(papers, Path(args.out), ctx, progress=_progress(args))
    except RenderError as exc:
        written, failed = exc.written, exc.failed
    for path in written:
        print(path)
    gallery = Path(args.out) / "gallery.html"
    print(f"gallery: {gallery}")
    if args.open:
        import webbrowser

        webbrowser.open(gallery.resolve().as_uri())
    for line in failed:
        print(f"tdcheck: figure failed: {line}", file=sys.stderr)
    return 1 if failed else 0


def _cmd_checkpoints(args) -> int:
    """List (and with --prune-older, remove) the checkpoints of a run cache."""
    from numerics import checkpoint
    from numerics.cache import CHECKPOINTS, default_cache_dir

    root = Path(args.cache) if args.cache else default_cache_dir()
    if (root / "runs").is_dir() and not (root / CHECKPOINTS).is_dir():
        root = root / "runs"  # a --resume campaign folder keeps its runs there
    folder = root / CHECKPOINTS
    found = checkpoint.entries(folder)
    print(f"checkpoints in {folder}: {len(found)}")
    for e in found:
        done = ("?" if e.step is None else f"step {e.step}") if e.done is None \
            else f"{100 * e.done:.1f}%"
        wall = "" if e.wall is None else f", {e.wall / 3600:.2f} h of training"
        print(f"  {e.key}-{e.index}: {done} done{wall}; written {e.age_s / 3600:.1f} h ago, "
              f"{e.size / 2**20:.1f} MiB")
    if args.prune_older is not None:
        if args.prune_older < 0:
            raise ValueError(f"--prune-older must be >= 0 days, got {args.prune_older}")
        gone = checkpoint.prune(folder, args.prune_older * 86400.0)
        print(f"removed {len(gone)} not written for {args.prune_older:g} days "
              f"({sum(e.size for e in gone) / 2**20:.1f} MiB)")
    return EXIT_OK


def _cmd_bench(args) -> int:
    from numerics.bench import run_bench
    from numerics.device import select_device

    if any(m < 1 for m in args.members):
        raise ValueError(f"members must be >= 1, got {args.members}")
    if args.steps < 1:
        raise ValueError(f"steps must be >= 1, got {args.steps}")
    device = select_device(_device(args))
    table, path = run_bench(Path(args.out), device=device, members=tuple(args.members),
                            steps=args.steps, loop_members=args.loop_members,
                            member_chunk=args.member_chunk or "auto", compile=args.compile,
                            memory=not args.no_memory)
    from figures.bench import draw_bench

    plot = draw_bench(json.loads(path.read_text()), path.parent)
    from verify.plan import bench_path

    keep = bench_path(str(device))  # what --plan reads for this device
    keep.parent.mkdir(parents=True, exist_ok=True)
    keep.write_text(path.read_text())
    print(table)
    print(f"\nbench: {path} and {plot}")
    return 0


def _cmd_sweep(args) -> int:
    import json as _json
    from functools import partial

    from numerics.sweep import PhaseSweep, parse_grid, run_phase_sweep
    from verify.backends import map_on, require_ray

    if args.backend == "ray":
        require_ray()
    grids = dict(parse_grid(g) for g in args.grid)
    if set(grids) != {"p", "q"}:
        raise ValueError(f"--grid needs exactly p=... and q=..., got {', '.join(grids)}")
    device = _device(args)
    sweep = PhaseSweep(grids["p"], grids["q"], members=args.members, steps=args.steps,
                       seed=args.seed, device=device)
    gpus = 1.0 if device.startswith("cuda") else 0.0
    if args.chunks is not None and args.chunks < 1:
        raise ValueError(f"--chunks must be >= 1, got {args.chunks}")
    chunks = args.chunks or (len(grids["q"]) if args.backend == "ray" else 1)
    data = run_phase_sweep(sweep, partial(map_on, args.backend, address=args.address,
                                          gpus=gpus, progress=_progress(args)), chunks=chunks)
    from figures.sweep import draw_phase

    out = Path(args.out)
    paths = draw_phase(data, out)
    summary = {"sweep": {k: v for k, v in sweep.__dict__.items()},
               "agreement": float(data["agreement"]),
               "seconds": float(data["seconds"].sum()), "chunks": chunks,
               "member_steps_per_s": float(data["member_steps_per_s"]),
               "files": [str(x) for x in paths]}
    (out / "markov_phase.json").write_text(_json.dumps(summary, indent=1))
    for x in paths:
        print(x)
    print(f"agreement with p + q = 1: {summary['agreement']:.0%} of distinguishable points; "
          f"{summary['member_steps_per_s']:.0f} member-steps/s ({chunks} stacked group(s))")
    return 0


# ---------------------------------------------------------------------- parser
def _add_device(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", choices=DEVICE_CHOICES,
                   help="auto (CUDA when present, else CPU), cpu or cuda; default auto")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="torch intra-op threads for every run, mutant and local task "
                        "(sets TDCHECK_THREADS; default: that variable, else each run's own "
                        "default; 1 is often fastest on a loaded machine)")


def _add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true", help="recompute every simulation run")
    p.add_argument("--cache-dir", default=None,
                   help="run cache folder (default $TDCHECK_CACHE_DIR or ~/.cache/tdcheck)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tdcheck", description="Symbolic-numeric checks of theories of "
                     "transformer training dynamics.", epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    li = sub.add_parser("list", help=COMMANDS["list"][0])
    li.add_argument("--json", action="store_true", help="machine-readable output")
    li.add_argument("--report", default=None,
                    help="a folder whose mutation.json gives the mutation scores (default: the "
                         "last `tdcheck mutate` of each row, kept beside the run cache)")
    li.set_defaults(fn=_cmd_list)

    eq = sub.add_parser("equations", help=COMMANDS["equations"][0])
    eq.add_argument("paper")
    eq.add_argument("--latex", action="store_true",
                    help="write a standalone .tex file (see --out) instead of printing")
    eq.add_argument("--format", choices=("text", "json"), default="text")
    eq.add_argument("--out", default=None, help="the .tex file (default PAPER-equations.tex)")
    eq.set_defaults(fn=_cmd_equations)

    ve = sub.add_parser("verify", help=COMMANDS["verify"][0], epilog=EXIT_CODES,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ve.add_argument("paper", nargs="*", help="papers to verify (default: all implemented)")
    ve.add_argument("--profile", default="quick", choices=PROFILE_CHOICES,
                    help="sizes and examples per claim (default quick)")
    _add_device(ve)
    ve.add_argument("--out", default="tdcheck-report")
    ve.add_argument("--claim", action="append", help="run only this claim id (repeatable)")
    ve.add_argument("--plan", action="store_true",
                    help="train nothing: list each claim's runs, member-steps, FLOP and the "
                         "estimated time on the device (from tdcheck bench), and the total")
    ve.add_argument("--plan-rate", type=float, default=None,
                    help="with --plan: a sustained FLOP/s to assume instead of the bench's")
    ve.add_argument("--seed", type=int, default=0,
                    help="shift every simulation seed and hypothesis's draws by this much "
                         "(default 0: the registered run)")
    ve.add_argument("--drawn", type=int, default=None, metavar="N",
                    help="drawn examples per slow claim instead of the profile's (pinned "
                         "examples always run; 0: pinned only, e.g. a paper-scale profile "
                         "on a CPU); the report says so")
    ve.add_argument("--no-progress", action="store_true")
    _add_cache(ve)
    ve.add_argument("--resume", default=None, metavar="DIR",
                    help="a resumable campaign in DIR: each finished run (DIR/runs) and "
                         "claim (DIR/claims) is stored as it ends, and a rerun with the same "
                         "DIR, profile, seed and code skips what is stored; the report "
                         "is the same as one uninterrupted run's")
    ve.add_argument("--backend", default="serial", choices=("serial", "ray"),
                    help="serial (this process) or ray: each claim a Ray task (needs "
                         "tdcheck[ray]); default serial")
    ve.add_argument("--address", default=None,
                    help="with --backend ray: a running Ray cluster to join (default: start "
                         "Ray locally in this process)")
    ve.set_defaults(fn=_cmd_verify)

    mu = sub.add_parser("mutate", help=COMMANDS["mutate"][0])
    mu.add_argument("paper", nargs="*", help="rows to mutate (default: all implemented)")
    mu.add_argument("--profile", default="quick", choices=("test", "quick"),
                    help="sizes of the claims the mutants run (default quick)")
    mu.add_argument("--function", action="append",
                    help="mutate only this public theory function (repeatable)")
    mu.add_argument("--jobs", type=int, default=None,
                    help="mutants run in parallel processes (default: the CPU count)")
    mu.add_argument("--max-mutants", type=int, default=6, help="mutants per function (default 6)")
    mu.add_argument("--delta", type=float, default=0.05,
                    help="relative scale of the scale mutants (default 0.05; a row may set "
                         "a larger one per function, with its reason)")
    mu.add_argument("--out", default="tdcheck-report",
                    help="folder for mutation.json / mutation.md (beside report.json)")
    mu.add_argument("--backend", default="serial", choices=("serial", "ray"),
                    help="serial (local processes) or ray (one task per mutant)")
    mu.add_argument("--address", default=None, help="with --backend ray: a cluster to join")
    mu.add_argument("--every-claim", action="store_true",
                    help="run every consuming claim on each mutant (default: stop at the first "
                         "that kills it, cheapest first, and the report names that one; the "
                         "mutants of functions a simulation claim consumes run every claim)")
    mu.add_argument("--resolution", action="store_true",
                    help="also measure each simulation claim's resolution: the smallest "
                         "scale (1, 2, 5, 10, 20, 50 %%) its simulation parts reject")
    mu.add_argument("--resolution-only", action="store_true",
                    help="the map pass and the resolution only (the row's earlier score is "
                         "kept)")
    mu.add_argument("--resolution-budget", type=float, default=1200.0, metavar="SECONDS",
                    help="wall time per row for the map pass and the resolution (default "
                         "1200); claims run cheapest first, each starting with its "
                         "share of what is left; one whose share runs out says 'not "
                         "settled', one with none left 'not started'")
    mu.add_argument("--no-progress", action="store_true")
    mu.add_argument("--threads", type=int, default=None, metavar="N",
                    help="torch threads per mutant process (sets TDCHECK_THREADS; default 1)")
    mu.set_defaults(fn=_cmd_mutate)

    rp = sub.add_parser("report", help=COMMANDS["report"][0],
                        epilog="exit codes: as tdcheck verify's, from the report's claims "
                               "(0 as expected, 1 not as expected, 2 bad input, 3 a claim "
                               "raised)")
    rp.add_argument("dir", help="a folder holding report.json, or the file itself")
    rp.set_defaults(fn=_cmd_report)

    fi = sub.add_parser("figures", help=COMMANDS["figures"][0])
    fi.add_argument("paper", nargs="*")
    fi.add_argument("--profile", default="quick", choices=PROFILE_CHOICES,
                    help="sizes (the row's size table, as tdcheck verify): after a verify at "
                         "the same profile the figures train nothing new; default quick")
    fi.add_argument("--quick", action="store_true",
                    help="the smoke sizes, same as --profile test")
    _add_device(fi)
    fi.add_argument("--out", default="tdcheck-figures")
    fi.add_argument("--open", action="store_true", help="open gallery.html in a browser")
    fi.add_argument("--no-progress", action="store_true")
    _add_cache(fi)
    fi.set_defaults(fn=_cmd_figures)

    be = sub.add_parser("bench", help=COMMANDS["bench"][0])
    be.add_argument("--out", default="tdcheck-bench")
    _add_device(be)
    be.add_argument("--members", type=int, nargs="+", default=[1, 8, 64, 256])
    be.add_argument("--steps", type=int, default=20)
    be.add_argument("--loop-members", type=int, default=4,
                    help="loop members timed per K (the loop time is scaled to K)")
    be.add_argument("--member-chunk", type=int, default=None,
                    help="members per vmapped call (default: 16 on CPU for vmapped models, "
                         "all at once on GPU or for a model's folded loss)")
    be.add_argument("--compile", action="store_true",
                    help="also torch.compile the stacked step (compile time not counted)")
    be.add_argument("--no-memory", action="store_true",
                    help="skip the memory-per-member probe (two fresh processes per model)")
    be.set_defaults(fn=_cmd_bench)

    ck = sub.add_parser("checkpoints", help=COMMANDS["checkpoints"][0],
                        description="A run's checkpoints are cleared when it is stored; those "
                                    "left are campaigns under way or orphans (a run stopped "
                                    "and not asked for again, or whose code changed). A "
                                    "campaign under way rewrites its file every 10 minutes "
                                    "(TDCHECK_CHECKPOINT_SECONDS).")
    ck.add_argument("--cache", default=None,
                    help="the run cache (default ~/.cache/tdcheck or TDCHECK_CACHE_DIR), or a "
                         "--resume campaign folder")
    ck.add_argument("--prune-older", type=float, default=None, metavar="DAYS",
                    help="remove checkpoints not written for DAYS days")
    ck.set_defaults(fn=_cmd_checkpoints)

    sw = sub.add_parser("sweep", help=COMMANDS["sweep"][0])
    sw.add_argument("paper", choices=("markov",))
    sw.add_argument("name", choices=("phase",))
    sw.add_argument("--grid", nargs=2, required=True, metavar="AXIS=START:STOP:N",
                    help="p=0.05:0.95:N q=0.05:0.95:N")
    sw.add_argument("--members", type=int, default=2, help="ensemble size per grid point")
    sw.add_argument("--steps", type=int, default=1000)
    sw.add_argument("--seed", type=int, default=0)
    sw.add_argument("--backend", default="serial", choices=("serial", "ray"),
                    help="serial, or ray: one Ray task per group of points (needs tdcheck[ray])")
    sw.add_argument("--address", default=None, help="with --backend ray: a cluster to join")
    sw.add_argument("--chunks", type=int, default=None,
                    help="groups of grid points, each trained as one stacked ensemble "
                         "(default: 1, the whole grid; with ray, one group per q row)")
    sw.add_argument("--no-progress", action="store_true")
    _add_device(sw)
    sw.add_argument("--out", default="tdcheck-sweep")
    sw.set_defaults(fn=_cmd_sweep)
    return parser


def _set_threads(n: int | None) -> None:
    """``--threads N``: the thread policy's override (``numerics.threads``) for this process
    and the processes it starts."""
    if n is None:
        return
    from numerics.threads import ENV

    if n < 1:
        raise ValueError(f"--threads must be >= 1, got {n}")
    os.environ[ENV] = str(n)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (:data:`EXIT_CODES`: 0 as expected, 1 a claim not
    as expected, 2 usage or bad input, 3 an error)."""
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        parser.print_help()
        return 0
    try:
        args = parser.parse_args(argv)
        if getattr(args, "fn", None) is None:
            parser.print_help()
            return 0
        _set_threads(getattr(args, "threads", None))
        return int(args.fn(args))
    except _UsageError as exc:
        print(f"tdcheck: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"tdcheck: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into head, say
        return 0
    except KeyboardInterrupt:
        print("tdcheck: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # tdcheck itself failed: exit 3, never 1 (not as expected)
        import traceback

        traceback.print_exc()
        print(f"tdcheck: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
