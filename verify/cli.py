"""The ``tdcheck`` command line: list, equations, verify, figures, bench."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump)."""

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _papers(args_papers: Sequence[str]) -> list[str]:
    from verify.registry import get_paper, implemented  # noqa: PLC0415

    if not args_papers:
        return list(implemented())
    for p in args_papers:
        info = get_paper(p)
        if info.status == "planned":
            raise ValueError(f"paper {p!r} is planned: it has no claims yet")
    return list(args_papers)


def _cmd_list(args) -> int:
    from verify.registry import PAPERS, claims_for  # noqa: PLC0415

    for pid, info in PAPERS.items():
        print(f"{pid:18s} {info.status:12s} {info.title}")
        if info.status != "planned":
            for c in claims_for(pid):
                print(f"    {c.id:40s} [{c.kind}, expected {c.expected}, {c.cost}]")
    return 0


def _cmd_equations(args) -> int:
    import importlib  # noqa: PLC0415

    import sympy as sp  # noqa: PLC0415

    _papers([args.paper])
    module = importlib.import_module(f"theory.{args.paper}")
    for name, expr in module.equations().items():
        if args.latex:
            print(f"% {name}\n{sp.latex(expr)}\n")
        else:
            print(f"{name}:\n    {sp.sstr(expr)}\n")
    return 0


def _cache(args):
    from numerics.cache import RunCache, default_cache_dir  # noqa: PLC0415

    if getattr(args, "no_cache", False):
        return RunCache(None)
    return RunCache(Path(args.cache_dir) if getattr(args, "cache_dir", None) else default_cache_dir())


def _cmd_verify(args) -> int:
    import time  # noqa: PLC0415

    from numerics.device import select_device  # noqa: PLC0415
    from verify.claims import Context  # noqa: PLC0415
    from verify.registry import claims_for  # noqa: PLC0415
    from verify.report import metadata, summary_line, to_json, to_table, write_reports  # noqa: PLC0415
    from verify.runner import get_profile, run_claims  # noqa: PLC0415

    profile = get_profile(args.profile)
    device = str(select_device(args.device))
    print(f"tdcheck: device {device}, profile {profile.name}", file=sys.stderr)
    papers = _papers(args.paper)
    claims = [c for p in papers for c in claims_for(p)]
    if args.claim:
        wanted = set(args.claim)
        unknown = wanted - {c.id for c in claims}
        if unknown:
            raise ValueError(f"unknown claim id(s): {', '.join(sorted(unknown))}")
        claims = [c for c in claims if c.id in wanted]
    started = time.time()
    ctx = Context(device=device, profile=profile.name, cache=_cache(args))
    results = run_claims(claims, profile, ctx, progress=_progress(args))
    meta = metadata(profile.name, device, started, time.time() - started)
    data = to_json(results, meta)
    print(to_table(data))
    md, js = write_reports(results, Path(args.out), meta)
    print(f"\n{summary_line(data)}; report: {md} ({js.name} beside it)")
    return 0 if all(r.ok for r in results) else 1


def _progress(args) -> bool:
    return not getattr(args, "no_progress", False) and sys.stderr.isatty()


def _cmd_report(args) -> int:
    import json  # noqa: PLC0415

    from verify.report import summary_line, to_markdown  # noqa: PLC0415

    folder = Path(args.dir)
    js = folder / "report.json" if folder.is_dir() else folder
    if not js.exists():
        raise ValueError(f"no report.json at {js}")
    data = json.loads(js.read_text())
    md = js.with_name("report.md")
    md.write_text(to_markdown(data))
    print(f"{summary_line(data)}; wrote {md}")
    return 0 if data["summary"]["ok"] == data["summary"]["claims"] else 1


def _cmd_figures(args) -> int:
    from figures.registry import RenderError, render  # noqa: PLC0415
    from numerics.device import select_device  # noqa: PLC0415

    device = str(select_device(args.device))
    papers = _papers(args.paper)
    try:
        written = render(papers, Path(args.out), quick=args.quick, device=device,
                         progress=_progress(args), cache=_cache(args))
    except RenderError as exc:
        for path in exc.written:
            print(path)
        for line in exc.failed:
            print(f"tdcheck: figure failed: {line}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


def _cmd_bench(args) -> int:
    from numerics.bench import run_bench  # noqa: PLC0415
    from numerics.device import select_device  # noqa: PLC0415

    device = select_device(args.device)
    if any(m < 1 for m in args.members):
        raise ValueError(f"members must be >= 1, got {args.members}")
    if args.steps < 1:
        raise ValueError(f"steps must be >= 1, got {args.steps}")
    table, path = run_bench(Path(args.out), device=device, members=tuple(args.members),
                            steps=args.steps)
    print(table)
    print(f"\nbench: {path}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tdcheck", description="Symbolic-numeric checks of theories of "
                     "transformer training dynamics.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="papers and their claim ids").set_defaults(fn=_cmd_list)

    eq = sub.add_parser("equations", help="derived equations of a paper")
    eq.add_argument("paper")
    eq.add_argument("--latex", action="store_true")
    eq.set_defaults(fn=_cmd_equations)

    ve = sub.add_parser("verify", help="run the claims and write report.md / report.json")
    ve.add_argument("paper", nargs="*")
    ve.add_argument("--profile", default="quick", help="quick | ci | thorough")
    ve.add_argument("--device", default="cpu", help="cpu | cuda | auto")
    ve.add_argument("--out", default="tdcheck-report")
    ve.add_argument("--claim", action="append", help="run only this claim id (repeatable)")
    ve.add_argument("--no-progress", action="store_true")
    ve.add_argument("--no-cache", action="store_true", help="recompute every simulation run")
    ve.add_argument("--cache-dir", default=None, help="run cache folder (default "
                    "$TDCHECK_CACHE_DIR or ~/.cache/tdcheck)")
    ve.set_defaults(fn=_cmd_verify)

    rp = sub.add_parser("report", help="re-render report.md from a report.json")
    rp.add_argument("dir", help="a folder holding report.json, or the file itself")
    rp.set_defaults(fn=_cmd_report)

    fi = sub.add_parser("figures", help="regenerate the papers' figures (PNG, PDF, data)")
    fi.add_argument("paper", nargs="*")
    fi.add_argument("--quick", action="store_true", help="fewer seeds and coarser grids")
    fi.add_argument("--device", default="cpu")
    fi.add_argument("--out", default="tdcheck-figures")
    fi.add_argument("--no-progress", action="store_true")
    fi.add_argument("--no-cache", action="store_true", help="recompute every simulation run")
    fi.add_argument("--cache-dir", default=None, help="run cache folder (as for verify)")
    fi.set_defaults(fn=_cmd_figures)

    be = sub.add_parser("bench", help="ensemble trainer: stacked vs sequential members")
    be.add_argument("--out", default="tdcheck-bench")
    be.add_argument("--device", default="auto")
    be.add_argument("--members", type=int, nargs="+", default=[1, 8, 64])
    be.add_argument("--steps", type=int, default=20)
    be.set_defaults(fn=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 claims off expectation, 2 bad input)."""
    try:
        args = _parser().parse_args(argv)
        return int(args.fn(args))
    except _UsageError as exc:
        print(f"tdcheck: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"tdcheck: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head, say
        return 0
    except KeyboardInterrupt:
        print("tdcheck: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
