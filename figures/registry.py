"""Registry of figure functions and the gallery page listing them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from numerics.context import Context

__all__ = ["FIGURES", "FigureSpec", "RenderError", "draw", "figure", "render", "write_gallery"]


@dataclass(frozen=True)
class FigureSpec:
    paper: str
    name: str
    reproduces: str
    caption: str
    fn: Callable[..., list[Path]]


FIGURES: dict[str, FigureSpec] = {}


def figure(paper: str, name: str, reproduces: str, caption: str):
    """Register ``fn(out: Path, ctx: Context) -> list[Path]`` as the figure ``name``.

    ``ctx`` (:class:`numerics.context.Context`) carries the profile, device and the run cache
    shared with ``tdcheck verify``: a figure reads its sizes from the row's size table at
    ``ctx.profile`` and gets its runs through the row's run functions, so a figure drawn
    after a verify at the same profile trains nothing new.
    """

    def wrap(fn):
        FIGURES[f"{paper}.{name}"] = FigureSpec(paper, name, reproduces, caption, fn)
        return fn

    return wrap


def _load(paper: str) -> list[FigureSpec]:
    importlib.import_module(f"figures.{paper}")
    return [spec for spec in FIGURES.values() if spec.paper == paper]


def draw(spec: FigureSpec, out: Path, ctx: Context) -> list[Path]:
    """One figure into ``out`` at ``ctx``'s profile, device and cache."""
    return spec.fn(out, ctx)


def render(papers: Sequence[str], out: Path, ctx: Context | None = None,
           progress: bool = True) -> list[Path]:
    """Draw every figure of ``papers`` into ``out/<paper>/`` and write the gallery."""
    ctx = ctx or Context()
    specs = [spec for paper in papers for spec in _load(paper)]
    iterator = specs
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(specs, desc="figures", unit="fig")
    written: list[Path] = []
    failed: list[str] = []
    for spec in iterator:
        try:
            written += draw(spec, Path(out) / spec.paper, ctx)
        except Exception as exc:  # one broken figure must not lose the others
            failed.append(f"{spec.paper}.{spec.name}: {type(exc).__name__}: {exc}")
    written.append(write_gallery(specs, Path(out)))
    if failed:
        raise RenderError(written, failed)
    return written


class RenderError(RuntimeError):
    """Some figures failed; ``written`` holds what the others wrote."""

    def __init__(self, written: list[Path], failed: list[str]):
        super().__init__("figures failed: " + "; ".join(failed))
        self.written = written
        self.failed = failed


def write_gallery(specs: Sequence[FigureSpec], out: Path) -> Path:
    """``gallery.md`` and ``gallery.html`` (images by relative path, no network) in ``out``."""
    lines = ["# tdcheck figure gallery", "",
             "Theory is drawn as lines, simulation as points or bands. Each figure has a PNG, "
             "a PDF and the plotted data (`.npz`) beside it.", "",
             "| paper | figure | reproduces | what it shows |", "|---|---|---|---|"]
    for s in specs:
        lines.append(f"| {s.paper} | ![{s.name}]({s.paper}/{s.name}.png) `{s.name}` | "
                     f"{s.reproduces} | {s.caption} |")
    path = Path(out) / "gallery.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    cards = "\n".join(
        f'<figure><a href="{escape(s.paper)}/{escape(s.name)}.pdf">'
        f'<img src="{escape(s.paper)}/{escape(s.name)}.png" alt="{escape(s.name)}"></a>'
        f"<figcaption><b>{escape(s.paper)} / {escape(s.name)}</b> "
        f"({escape(s.reproduces)}): {escape(s.caption)}</figcaption></figure>"
        for s in specs)
    (Path(out) / "gallery.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>tdcheck figures</title>"
        "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}"
        "figure{display:inline-block;width:560px;vertical-align:top;margin:8px}"
        "img{width:100%}</style></head><body><h1>tdcheck figure gallery</h1>"
        "<p>Theory as lines, simulation as points or bands; click a figure for its PDF. "
        "The plotted data (.npz) lies beside each image.</p>\n" + cards + "\n</body></html>\n")
    return path
