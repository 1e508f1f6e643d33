"""`muse report`: load everything once, render every page from the Jinja2 templates, write the folder.

A section is a loader plus a template (`SECTIONS`); the chapter pages are the one section with many pages.
Replay runs with the gate journal's report/receipt chain are the `replay` section (issue 12).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...book import Book, Chapter, atomic_write_bytes, read_chapter_file
from ...errors import InputError, MuseError
from ...judging import PanelReport, gate_rows
from ...llm import CostSummary, cost_summary
from ...memory import FactCard, MemoryState, current_fact_cards, replay
from ...replay import gate_input_rebuilder, replay_report, run_doc, runs_of, store_reader, verify_journal
from ...rules import CheckReport, check_book
from ...text import sha256_hex
from ...writing import list_drafts, list_stretches
from .._records import StoredReview, load_reviews
from ._chapters import ChapterPage, ChapterRow, build_chapter_page, chapter_row, load_panels
from ._env import common_context, page_name, template_env
from ._judging import build_judging, candidate_texts
from ._memory import build_memory_page
from ._plots import chapter_plot, cost_plot, timeline

REVIEW_STATES = (
    ("finalized", "finalized"),
    ("finalized_with_issues", "with issues"),
    ("skipped", "skipped"),
    ("not_reviewed", "not reviewed"),
    ("stale", "stale"),
    ("error", "error"),
)


class ReportResult(BaseModel):
    """`muse report --json`: where the report was written and what it holds."""

    schema_version: int = 1
    ok: bool = True
    out: str  # the report folder
    index: str  # the overview page (open this)
    pages: int
    chapters: list[int]
    bytes: int  # all pages together
    overview_bytes: int
    notes: list[str]


@dataclass
class ReportData:
    """Everything loaded once from the book and its store, shared by every page."""

    book: Book
    check: CheckReport
    chapters: dict[int, Chapter]
    reviews: dict[int, list[StoredReview]]
    rows: list[ChapterRow]
    memory: MemoryState | None
    memory_error: str
    panels: list[PanelReport]
    candidates: dict[str, str]
    cost: CostSummary
    span: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Section:
    """One page of the report beside the overview: a loader for its template's context, and the template."""

    key: str
    title: str
    filename: str
    template: str
    load: Callable[[ReportData], dict[str, Any]]


def _load(book: Book, chapter: int | None, span: tuple[int, int] | None) -> ReportData:
    check = check_book(book, chapter=chapter, span=span, update=False)
    paths = book.chapter_paths()
    chapters = {c.number: read_chapter_file(c.number, paths[c.number]) for c in check.chapters}
    all_shas = {n: read_chapter_file(n, p).sha256 for n, p in paths.items()}
    conn = book.db
    reviews = load_reviews(conn, all_shas)
    memory: MemoryState | None = None
    memory_error = ""
    try:
        memory = replay(book)
    except MuseError as exc:
        memory_error = f"the story memory could not be replayed: {exc.render()}"
    facts = memory.facts_status if memory is not None else {}
    # the latest quality gate `muse review` ran on a chapter's text as it is now (a gate of another text is stale)
    gates = {
        g.chapter: g.outcome if g.outcome != "error" else f"error({g.code})"
        for g in gate_rows(conn)
        if g.origin == "review" and g.chapter in chapters and g.candidate_sha256 == sha256_hex(chapters[g.chapter].body)
    }
    rows = [
        chapter_row(out, reviews.get(out.number, []), facts.get(out.number, "missing"), gates.get(out.number))
        for out in check.chapters
    ]
    panels = load_panels(conn)
    label = "" if chapter is None and span is None else (f"chapter {chapter}" if chapter is not None else "")
    if span is not None:
        label = f"chapters {span[0]}–{span[1]}"
    data = ReportData(
        book,
        check,
        chapters,
        reviews,
        rows,
        memory,
        memory_error,
        panels,
        candidate_texts(conn, panels),
        cost_summary(conn),
        label,
    )
    if memory_error:
        data.notes.append(memory_error)
    for c in check.rules.unparsed_lines:
        data.notes.append(f"rules.txt line {c} is not a rule and is not enforced — see `muse rules lint`")
    return data


def _overview(data: ReportData) -> dict[str, Any]:
    rows = data.rows
    by_review: dict[str, int] = {}
    for r in rows:
        by_review[r.review] = by_review.get(r.review, 0) + 1
    reviewed = [r for r in rows if r.reviewed]
    review_cost = None if any(r.cost is None for r in reviewed) else sum(r.cost or 0.0 for r in reviewed)
    limits = data.book.config.chapters
    plot = chapter_plot(
        [
            {
                "number": r.number,
                "label": f"{r.number} {r.title}",
                "chars": r.chars,
                "length": r.length_outcome,
                "page": r.page,
                "score": r.editor_overall,
                "verdict": r.editor_verdict,
            }
            for r in rows
        ],
        limits.min_chars,
        limits.max_chars,
    )
    return {
        "o": {
            "rows": rows,
            "span": data.span,
            "total_chars": sum(r.chars for r in rows),
            "errors": sum(r.errors for r in rows),
            "warnings": sum(r.warnings for r in rows),
            "by_review": by_review,
            "reviewed": len(reviewed),
            "review_cost": review_cost if reviewed else None,
            "cost_total": data.cost.total,
            "rules_sha": data.check.rules.sha256,
            "plot": plot,
            "cost_roles": cost_plot("by role", data.cost.by_role),
            "cost_runs": cost_plot("by run", data.cost.by_run, label="run"),
            "notes": data.notes,
        },
        "review_states": REVIEW_STATES,
    }


def _memory(data: ReportData) -> dict[str, Any]:
    shas = {n: c.sha256 for n, c in data.chapters.items()}
    return _memory_context(data.book, data.memory, data.memory_error, shas)


def _memory_context(book: Book, memory: MemoryState | None, error: str, shas: dict[int, str]) -> dict[str, Any]:
    """The memory page of the chapters `shas` names (number → sha256 of the file now)."""
    if memory is None:
        return {"error": error or "no story memory", "mem": None, "timeline": None, "as_of": 0}
    numbers = book.chapter_numbers()
    current = {n: fc.id for n, fc in current_fact_cards(book.db, shas).items()}
    page = build_memory_page(memory, numbers, current, set(shas))
    first = min(numbers) if numbers else 0
    return {"error": "", "mem": page, "timeline": timeline(page.tracks, first, page.last), "as_of": page.last}


def memory_context(book: Book) -> dict[str, Any]:
    """The template context of the memory page (`memory.html`) for the whole book, loading only what it shows
    (the memory replay and the chapters' hashes, not the rule check or the reviews the other pages need)."""
    try:
        memory, error = replay(book), ""
    except MuseError as exc:
        memory, error = None, f"the story memory could not be replayed: {exc.render()}"
    shas = {n: read_chapter_file(n, p).sha256 for n, p in book.chapter_paths().items()}
    return _memory_context(book, memory, error, shas)


def _judging(data: ReportData) -> dict[str, Any]:
    return {"runs": build_judging(data.book.db, data.panels, data.candidates)}


def _desk(data: ReportData) -> dict[str, Any]:
    """Every draft on the author's desk with the latest decision on it (its preflight, overrides, what it kept)."""
    drafts = list_drafts(data.book, read_only=True).drafts
    decided = [d.decision for d in drafts if d.decision is not None]
    undecided = [d for d in drafts if d.decision is None]
    return {
        "drafts": drafts,
        "kinds": {"chapter": "正文", "review": "审改", "outline": "细纲", "plan": "规划"},
        "waiting": sum(1 for d in undecided if d.status in ("passed", "checked", "finalized", "drafted", "revised")),
        "held": sum(1 for d in undecided if d.status in ("held_for_author", "finalized_with_issues")),
        "counts": {k: sum(1 for x in decided if x.decision == k) for k in ("accept", "revise", "reject")},
        "stretches": list_stretches(data.book),
    }


def _replay(data: ReportData) -> dict[str, Any]:
    """Every replay run (samples, panels, and for a writer run its report) and the gate journal's chain."""
    book = data.book
    runs: list[dict[str, Any]] = []
    for row in runs_of(book.db):
        entry: dict[str, Any] = {"id": row.id, "error": "", "run": None, "report": None}
        try:
            entry["run"] = run_doc(book, row.id)
            if row.kind == "writer":
                entry["report"] = replay_report(book, row.id)
        except MuseError as exc:  # a tampered run is shown as such, the rest of the report still renders
            entry["error"] = f"{exc.code}: {exc.what}"
        runs.append(entry)
    try:
        chain = verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)), listing=True)
        chain_error = ""
    except MuseError as exc:
        chain, chain_error = None, f"{exc.code}: {exc.what}"
    return {"runs": runs, "chain": chain, "chain_error": chain_error}


SECTIONS: tuple[Section, ...] = (
    Section("overview", "Overview", "index.html", "overview.html", _overview),
    Section("memory", "Story memory", "memory.html", "memory.html", _memory),
    Section("desk", "Desk", "desk.html", "desk.html", _desk),
    Section("judging", "Judging", "judging.html", "judging.html", _judging),
    Section("replay", "Replay & gates", "replay.html", "replay.html", _replay),
)


def section_context(book: Book, key: str) -> dict[str, Any]:
    """The template context of one section of the report (`SECTIONS`), loaded for the whole book."""
    section = next(s for s in SECTIONS if s.key == key)
    return section.load(_load(book, None, None))


def chapter_context(book: Book, number: int) -> dict[str, Any]:
    """The template context of one chapter page (`chapter.html`), loading only that chapter's check; raises
    CHAPTER_NOT_FOUND (or the chapter file's own error) like `muse report --chapter N`."""
    book.read_chapter(number)
    data = _load(book, number, None)
    numbers = book.chapter_numbers()
    at = numbers.index(number)
    neighbours = (numbers[at - 1] if at > 0 else None, numbers[at + 1] if at + 1 < len(numbers) else None)
    return {"c": _chapter_page(data, 0, neighbours, _fact_cards(data))}


def _fact_cards(data: ReportData) -> dict[int, FactCard]:
    return current_fact_cards(data.book.db, {n: c.sha256 for n, c in data.chapters.items()})


def _chapter_page(
    data: ReportData, k: int, neighbours: tuple[int | None, int | None], fact_cards: dict[int, FactCard]
) -> ChapterPage:
    row = data.rows[k]
    n = row.number
    return build_chapter_page(
        data.book,
        next(c for c in data.check.chapters if c.number == n),
        data.chapters[n],
        data.reviews.get(n, []),
        row,
        fact_cards.get(n),
        data.panels,
        data.candidates,
        neighbours,
    )


def _write(path: Path, text: str) -> int:
    """Write a page atomically (a reader never sees half a page); its size in bytes."""
    data = text.encode("utf-8")
    atomic_write_bytes(path, data)
    return len(data)


def build_report(
    book: Book, out: Path | None = None, *, chapter: int | None = None, span: tuple[int, int] | None = None
) -> ReportResult:
    """Write the static HTML report of `book` (default folder ``.muse/report``) and say what was written.

    Reads the book's files and its store only; never calls a model. `chapter` / `span` limit the overview
    and the chapter pages (memory and judging always cover the whole book).
    """
    folder = (out or book.state_dir / "report").resolve()
    if folder.exists() and not folder.is_dir():
        raise InputError("REPORT_OUT", f"{folder} exists and is not a folder", "--out", "name a folder")
    data = _load(book, chapter, span)
    env = template_env()
    common = {
        **common_context(book),
        "nav": [{"key": s.key, "title": s.title, "href": s.filename} for s in SECTIONS],
    }
    written: dict[str, int] = {}
    for s in SECTIONS:
        ctx = {**common, **s.load(data), "root": "", "active": s.key}
        written[s.filename] = _write(folder / s.filename, env.get_template(s.template).render(ctx))
    chapter_tpl = env.get_template("chapter.html")
    numbers = sorted(data.chapters)
    fact_cards = _fact_cards(data)
    for k, row in enumerate(data.rows):
        n = row.number
        neighbours = (numbers[k - 1] if k > 0 else None, numbers[k + 1] if k + 1 < len(numbers) else None)
        page = _chapter_page(data, k, neighbours, fact_cards)
        ctx = {**common, "c": page, "root": "../", "active": "chapters"}
        written[page_name(n)] = _write(folder / page_name(n), chapter_tpl.render(ctx))
    return ReportResult(
        out=str(folder),
        index=str(folder / "index.html"),
        pages=len(written),
        chapters=numbers,
        bytes=sum(written.values()),
        overview_bytes=written["index.html"],
        notes=data.notes,
    )


__all__ = [
    "SECTIONS",
    "ReportResult",
    "Section",
    "build_report",
    "chapter_context",
    "memory_context",
    "section_context",
]
