"""`muse search` in the terminal: its chapters, best first, each with its best chunk.

Apart from the JSON document (`_memory.SearchDoc`): the terminal shows the search's own result, so a search
loads neither pydantic's document classes nor the other memory commands' renderings (issue "the first hour":
display commands fast). `SearchDoc` has the same fields, and renders the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ..memory import SearchResult
    from ._locations import ChapterLines
    from ._memory import SearchDoc


def _parts(word: str, tokens: list[str]) -> list[str]:
    """The tokens that are only parts of `word` (a sub-word or a character of it)."""
    return [t for t in tokens if t != word and t in word]


def render_search(console: Console, doc: SearchDoc | SearchResult, lines: ChapterLines | None = None) -> None:
    """Chapters best first, each with its best chunk (its file and line, offsets, snippet); "no results" when
    none."""
    console.print(f"query tokens: {' / '.join(doc.tokens) or '(none in the index)'}", markup=False)
    if doc.missing:
        console.print(f"not in the book as written: {'、'.join(doc.missing)}", markup=False)
        only_parts = doc.tokens and not set(doc.tokens) - {c for w in doc.missing for c in _parts(w, doc.tokens)}
        if only_parts and doc.chapters:
            console.print(
                f"none of the query's own words is in the book: the hits below match only {' / '.join(doc.tokens)}",
                markup=False,
            )
    scope = f" before chapter {doc.before}" if doc.before is not None else ""
    if not doc.chapters:
        why = (
            f" (none of the query's words is in the book; ranking only {' / '.join(doc.tokens)} would be noise: "
            "search for a word the book writes)"
            if doc.missing and doc.tokens
            else ""
        )
        console.print(f"no results{scope}{why}", markup=False)
        return
    for c in doc.chapters:
        where = ", ".join(
            [p for p in ("heading" if c.in_heading else "", f"{c.chunks} chunks" if c.chunks else "") if p]
        )
        console.print(f"{c.rank:>2}. ch.{c.chapter} {c.heading}  score {c.score:.2f} ({where})", markup=False)
        if c.best is not None:
            text = " ".join(c.best.text.split())
            snippet = text if len(text) <= 80 else text[:80] + "…"
            at = lines.at(c.chapter, c.best.start, text=c.best.text) if lines is not None else None
            where = f"{at} " if at else ""
            console.print(f"      {where}[{c.best.start}:{c.best.end}] {snippet}", markup=False)
