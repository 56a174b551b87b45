"""The catalogue of papers (rows of the grid) and where their claims live."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from verify.claims import Claim

__all__ = ["ALL_PAPERS", "PAPERS", "Paper", "claims_for", "get_paper"]


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    status: str  # "implemented", "partial" (work under way), "planned", or "example" (the
    # template row: runs when named, never by default)


PAPERS: dict[str, Paper] = {
    p.id: p
    for p in (
        Paper("markov", "Makkuva et al., Local to Global (NeurIPS 2024)", "implemented"),
        Paper("scan_snap", "Tian et al., Scan and Snap (NeurIPS 2023)", "implemented"),
        Paper("rank_increase", "Boix-Adsera et al., Transformers learn through gradual rank "
              "increase (NeurIPS 2023)", "implemented"),
        Paper("cooccurrence", "Yang et al., Training dynamics of transformers to recognize "
              "word co-occurrence (NeurIPS 2024)", "implemented"),
        Paper("linear_attention", "Ahn et al., Linear attention is (maybe) all you need "
              "(ICLR 2024)", "implemented"),
        # the template row (README "Adding a paper"): run by name, not by default
        Paper("example", "Example row: a two-layer scalar linear model (the template)",
              "example"),
    )
}
ALL_PAPERS = tuple(PAPERS)


def get_paper(paper_id: str) -> Paper:
    if paper_id not in PAPERS:
        raise ValueError(f"unknown paper {paper_id!r}; papers are {', '.join(ALL_PAPERS)}")
    return PAPERS[paper_id]


def implemented() -> tuple[str, ...]:
    return tuple(p for p, info in PAPERS.items() if info.status in ("implemented", "partial"))


def claims_for(paper_id: str) -> list[Claim]:
    """The claims of one paper (``ValueError`` for an unknown or planned paper)."""
    paper = get_paper(paper_id)
    if paper.status == "planned":
        raise ValueError(f"paper {paper_id!r} is planned: it has no claims yet")
    return importlib.import_module(f"verify.{paper_id}").claims()
