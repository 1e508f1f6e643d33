"""Loaders for the book overview and the chapter pages: everything comes from the book's files and its store.

Nothing here calls a model. The deterministic rule check runs again (it is exact and takes milliseconds);
reviews, revisions, fact cards, judge panels and receipts are read from `.muse/muse.db`; the texts that
stored offsets index into come from the `texts` table (or the chapter file / a stored revision when their
sha256 matches), so every quote is shown in the very text it was found in.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from pydantic import ValidationError

from ...book import Book, Chapter, parse_chapter_file
from ...editorial import ChapterReview, StepOutcome
from ...judging import PanelReport
from ...memory import FactCard
from ...rules import ChapterOut
from ...store import get_texts
from ...text import LineIndex, paragraph_at, sha256_hex, split_paragraphs
from .._records import StoredReview, review_state
from ._diff import Diff, char_diff
from ._env import page_name
from ._marks import Line, Mark, segment_lines, valid_marks


@dataclass
class Version:
    """One text shown on a chapter page (the file now, or a text a review round read), with its marks."""

    key: str  # DOM id of its section
    sha256: str  # of the body's UTF-8
    label: str
    text: str
    lines: list[Line] = field(default_factory=list)
    current: bool = False


@dataclass
class Item:
    """One finding in the side panel, linked to its marks (one per rule hit, one quote otherwise)."""

    kind: str  # rule / consistency / editor / judge / fact
    severity: str
    title: str
    detail: str = ""
    extra: str = ""
    quote: str = ""
    version: str | None = None  # the Version.key its marks are in; None when the text is not available
    marks: list[Mark] = field(default_factory=list)
    where: list[str] = field(default_factory=list)  # "¶7 · chapters/0002.md:17" per mark
    missing: str = ""  # why it cannot be shown in the text


@dataclass
class Group:
    key: str
    title: str
    items: list[Item]
    note: str = ""


@dataclass
class RevisionView:
    id: str
    created_at: str
    applied_at: str | None
    record_id: str
    diff: Diff | None
    missing: str = ""


@dataclass
class ReviewRow:
    """One review record of the chapter, for the history table."""

    id: str
    ended_at: str
    status: str
    open_issues: int
    current: bool
    cost: float | None


@dataclass
class ChapterRow:
    """One row of the overview (and the header of a chapter page)."""

    number: int
    title: str
    path: str
    page: str  # relative link from the report root
    chars: int
    min_chars: int | None
    max_chars: int | None
    length_outcome: str
    errors: int
    warnings: int
    review: str  # finalized / finalized_with_issues / not_reviewed / skipped / stale / error
    review_label: str
    open_issues: int
    editor_overall: int | None
    editor_verdict: str | None
    gate: str
    facts: str  # current / stale / missing
    cost: float | None
    reviewed: bool


@dataclass
class ChapterPage:
    row: ChapterRow
    prev: int | None
    next: int | None
    versions: list[Version]
    groups: list[Group]
    review: ChapterReview | None
    steps: list[StepOutcome]
    history: list[ReviewRow]
    revisions: list[RevisionView]
    counts: dict[str, int]


GATE_NOT_RUN = "not evaluated"


def chapter_row(out: ChapterOut, reviews: list[StoredReview], facts: str, gate: str | None = None) -> ChapterRow:
    """The overview row of one chapter; `gate`: the outcome of the quality gate on its current text (None: none)."""
    latest = reviews[-1] if reviews else None
    doc = latest.doc if latest else None
    state, label = review_state(doc, latest.current if latest else False)
    editor = doc.editor[-1] if doc is not None and doc.editor and latest is not None and latest.current else None
    return ChapterRow(
        number=out.number,
        title=out.title,
        path=out.path,
        page=page_name(out.number),
        chars=out.chars,
        min_chars=out.length.min_chars,
        max_chars=out.length.max_chars,
        length_outcome=out.length.outcome,
        errors=out.errors,
        warnings=out.warnings,
        review=state,
        review_label=label,
        open_issues=doc.open_issues if doc is not None and latest is not None and latest.current else 0,
        editor_overall=editor.overall if editor else None,
        editor_verdict=editor.computed_verdict if editor else None,
        gate=gate or GATE_NOT_RUN,
        facts=facts,
        cost=doc.usage.cost if doc is not None else None,
        reviewed=doc is not None,
    )


def fact_mark_id(start: int, end: int) -> str:
    """The mark id of a current fact card's quote on its chapter page (memory sources link to it)."""
    return f"fact-{start}-{end}"


class _Place:
    """Where an offset of a version's body is: paragraph and file line (``chapters/0002.md:17``)."""

    def __init__(self, text: str, path: str, first_line: int):
        self.paragraphs = split_paragraphs(text)
        self.lines = LineIndex(text, first_line)
        self.path = path

    def __call__(self, start: int) -> str:
        line = self.lines.line(start)
        para = paragraph_at(self.paragraphs, start)
        where = f"{self.path}:{line}"
        return f"¶{para} · {where}" if para >= 0 else where


def _texts(book: Book, chapter: Chapter, docs: list[ChapterReview]) -> dict[str, str]:
    """sha256 → body of every text the page may need: the texts the review rounds read and the file now."""
    wanted: set[str] = set()
    for doc in docs:
        wanted.update(r.text_sha256 for r in doc.consistency)
        wanted.update(e.text_sha256 for e in doc.editor)
        for rep in doc.repairs:
            wanted.update((rep.before_sha256, rep.after_sha256))
    out = get_texts(book.db, wanted)
    out[sha256_hex(chapter.body)] = chapter.body
    return out


def _base_body(book: Book, doc: ChapterReview, texts: dict[str, str], chapter: Chapter) -> str | None:
    """The body a revision was made from: the loop's first text, the kept base file, or the file now."""
    if doc.repairs and doc.repairs[0].before_sha256 in texts:
        return texts[doc.repairs[0].before_sha256]
    if doc.revision is not None:
        path = book.root / doc.revision.base_path
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        if data and sha256_hex(data) == doc.chapter_sha256:
            return parse_chapter_file(doc.chapter, path, data).body
    return chapter.body if chapter.sha256 == doc.chapter_sha256 else None


def build_chapter_page(
    book: Book,
    out: ChapterOut,
    chapter: Chapter,
    reviews: list[StoredReview],
    row: ChapterRow,
    fact_card: FactCard | None,
    panels: list[PanelReport],
    candidates: dict[str, str],
    neighbours: tuple[int | None, int | None],
) -> ChapterPage:
    """Everything one chapter page shows: texts with marks, the side panel's findings, steps, history, diffs."""
    latest = reviews[-1].doc if reviews else None
    docs = [r.doc for r in reviews]
    texts = _texts(book, chapter, docs)
    first_line = chapter.first_line
    body_sha = sha256_hex(chapter.body)
    versions: dict[str, Version] = {body_sha: Version("v0", body_sha, f"{out.path} — the file now", chapter.body)}
    versions[body_sha].current = True
    labels = _version_labels(latest)

    def version_for(sha: str) -> Version | None:
        if sha in versions:
            return versions[sha]
        if sha not in texts:
            return None
        v = Version(f"v{len(versions)}", sha, labels.get(sha, f"text {sha[:12]}"), texts[sha])
        versions[sha] = v
        return v

    groups: list[Group] = []
    counter = iter(range(1_000_000))
    used: set[str] = set()
    places: dict[str, _Place] = {}

    def item_marks(
        item: Item, version: Version | None, spans: list[tuple[int, int]], label: str, mark_id: str = ""
    ) -> None:
        if version is None:
            item.missing = "the text this was found in is not stored (reviewed before `muse report` existed)"
            return
        item.version = version.key
        place = places.get(version.key) or places.setdefault(version.key, _Place(version.text, out.path, first_line))
        for a, b in spans:
            mid = mark_id if mark_id and mark_id not in used else f"m{next(counter)}"
            used.add(mid)
            item.marks.append(Mark(mid, item.kind, item.severity, a, b, label))
            item.where.append(place(a))

    # hard rules on the file now
    rule_items: list[Item] = []
    for f in out.findings:
        title = f"{f.rule} · {f.target}" if f.rule != "length" else f"length · {f.target} {f.limit}"
        limit = f" (limit {f.limit})" if f.limit is not None and f.rule == "fatigue" else ""
        detail = f"{f.actual} occurrence(s){limit} — {f.origin}" if f.rule != "length" else f"{f.actual} characters"
        it = Item("rule", f.severity, title, detail, quote=f.target if f.rule != "length" else "")
        if f.rule == "length":
            it.extra = f"chapter length {f.actual} vs {f.target} {f.limit} ({f.origin})"
        else:
            item_marks(it, versions[body_sha], [(a, b) for _, a, b in f.hits], f"{f.rule}: {f.target}")
        rule_items.append(it)
    groups.append(Group("rules", "Hard rules (the file now)", rule_items))

    if latest is not None:
        cons: list[Item] = []
        for rnd in latest.consistency:
            v = version_for(rnd.text_sha256)
            for i in rnd.issues:
                it = Item(
                    "consistency",
                    i.severity,
                    f"round {rnd.round} · {i.severity} · {i.type}" + (" · open" if i.open else ""),
                    i.explanation,
                    f"fix: {i.fix_hint}",
                    quote=i.quote,
                )
                item_marks(it, v, [(i.start, i.end)], f"consistency {i.severity}: {i.type}")
                cons.append(it)
        note = "" if latest.consistency else "no consistency review ran"
        groups.append(Group("consistency", "Consistency review", cons, note))
        ed: list[Item] = []
        for e in latest.editor:
            v = version_for(e.text_sha256)
            for d in e.dims:
                it = Item(
                    "editor",
                    "evidence",
                    f"round {e.round} · {d.name} {d.score}" + (" · neutral" if d.neutral else ""),
                    quote=d.evidence,
                )
                item_marks(it, v, [(d.start, d.end)], f"editor {d.name}: {d.score}")
                ed.append(it)
        note = "" if latest.editor else "no editor review ran"
        groups.append(Group("editor", "Editor evidence (7 dimensions)", ed, note))

    if fact_card is not None:
        facts: list[Item] = []
        for (kind, k, fitem), span in zip(fact_card.output.items(), fact_card.spans, strict=True):
            it = Item("fact", "fact", f"{kind} [{k}]", _fact_text(fitem), quote=fitem.quote)
            item_marks(it, versions[body_sha], [span], f"fact card {kind}", fact_mark_id(*span))
            it.extra = f"fact card {fact_card.id}"
            facts.append(it)
        groups.append(Group("facts", "Fact card (current)", facts))

    judge_items: list[Item] = []
    for p in panels:
        for c in p.candidates:
            cand = candidates.get(c.sha256)
            target, shift = _candidate_target(cand, versions) if cand is not None else (None, 0)
            if target is None:
                continue
            for j in p.judges:
                for q in j.quotes:
                    if q.candidate_id != c.candidate_id:
                        continue
                    score = next(
                        (s for s in j.scores if s.candidate_id == q.candidate_id and s.dimension_id == q.dimension_id),
                        None,
                    )
                    it = Item(
                        "judge",
                        "quote",
                        f"panel {p.panel_id[-6:]} · judge {j.slot} · {q.dimension_id} {score.score if score else ''}",
                        score.reason if score else "",
                        quote=score.quote if score else "",
                    )
                    item_marks(it, target, [(q.start - shift, q.end - shift)], f"judge {j.slot}: {q.dimension_id}")
                    judge_items.append(it)
    if judge_items:
        groups.append(Group("judge", "Judge quotes", judge_items))

    ordered = sorted(versions.values(), key=lambda v: int(v.key[1:]))
    for v in ordered:
        marks = [m for g in groups for it in g.items if it.version == v.key for m in it.marks]
        ok, bad = valid_marks(v.text, marks)
        bad_ids = {m.id for m in bad}
        for g in groups:
            for it in g.items:
                if it.version == v.key and any(m.id in bad_ids for m in it.marks):
                    it.missing = "its offsets lie outside the text"
                    kept = [(m, w) for m, w in zip(it.marks, it.where, strict=True) if m.id not in bad_ids]
                    it.marks, it.where = [m for m, _ in kept], [w for _, w in kept]
        v.lines = segment_lines(v.text, ok, first_line=first_line)

    counts = {g.key: len(g.items) for g in groups}
    history = [
        ReviewRow(r.doc.record_id, r.ended_at, r.doc.status, r.doc.open_issues, r.current, r.cost)
        for r in reversed(reviews)
    ]
    return ChapterPage(
        row=row,
        prev=neighbours[0],
        next=neighbours[1],
        versions=ordered,
        groups=groups,
        review=latest,
        steps=list(latest.steps) if latest else [],
        history=history,
        revisions=_revisions(book, chapter, docs, texts, first_line),
        counts=counts,
    )


def _fact_text(item: object) -> str:
    data = item.model_dump(exclude={"quote"}) if hasattr(item, "model_dump") else {}
    return ", ".join(f"{k}: {v}" for k, v in data.items() if v not in (None, "", [], {}))


def _candidate_target(cand: str, versions: dict[str, Version]) -> tuple[Version | None, int]:
    """The version whose body is this judged candidate (the body itself, or a file text: heading line + body)."""
    for v in list(versions.values()):
        if cand == v.text:
            return v, 0
        if cand.endswith(v.text) and cand.startswith("# ") and cand[: len(cand) - len(v.text)].count("\n") == 1:
            return v, len(cand) - len(v.text)
    return None, 0


def _version_labels(doc: ChapterReview | None) -> dict[str, str]:
    if doc is None:
        return {}
    labels: dict[str, str] = {}
    if doc.repairs:
        labels[doc.repairs[0].before_sha256] = "the file as reviewed (before the review changed it)"
    for rep in doc.repairs:
        labels[rep.after_sha256] = f"after {rep.step} ({rep.kind.replace('_', ' ')})"
    if doc.revision is not None and doc.repairs:
        state = "applied" if doc.revision.applied else "not applied"
        labels[doc.repairs[-1].after_sha256] = f"the review's result, revision {doc.revision.id} ({state})"
    return labels


def _revisions(
    book: Book, chapter: Chapter, docs: list[ChapterReview], texts: dict[str, str], first_line: int
) -> list[RevisionView]:
    by_record = {d.record_id: d for d in docs}
    rows = book.db.execute(
        "SELECT id, record_id, sha256, text, created_at, applied_at FROM revisions WHERE chapter = ?"
        " ORDER BY created_at DESC, id DESC",
        (chapter.number,),
    ).fetchall()
    out: list[RevisionView] = []
    for row in rows:
        view = RevisionView(row["id"], row["created_at"], row["applied_at"], row["record_id"], None)
        data = row["text"].encode("utf-8")
        doc = by_record.get(row["record_id"])
        if sha256_hex(data) != row["sha256"]:
            view.missing = "the stored revision does not match its sha256"
        elif doc is None:
            view.missing = "its review record is missing"
        else:
            base = _base_body(book, doc, texts, chapter)
            new = parse_chapter_file(chapter.number, chapter.path, data).body
            if base is None:
                view.missing = "the text it was made from is no longer available"
            else:
                view.diff = char_diff(base, new, first_line=first_line)
        out.append(view)
    return out


def load_panels(conn: sqlite3.Connection) -> list[PanelReport]:
    """Every finished judge panel's report (oldest first)."""
    rows = conn.execute("SELECT report_json FROM judge_panels WHERE report_json IS NOT NULL ORDER BY id").fetchall()
    out: list[PanelReport] = []
    for (raw,) in rows:
        try:
            out.append(PanelReport.model_validate_json(raw))
        except ValidationError:
            continue
    return out
