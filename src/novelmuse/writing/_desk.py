"""The author's desk (Shadow 与用户三决策): what a model made for the book is a shadow draft until the author
decides — accept, revise or reject — and every decision is a row.

Drafts of three kinds sit on the desk:

- **chapter** — a `muse write` run's drafts (``write_drafts``; the run's final draft is the one to decide on,
  `--all` lists the drafts repaired or re-asked on the way) and the author's revisions of them (purpose
  ``author_revision``, bound to the draft they revise and to its manifest);
- **review** — the text a `muse review` run made (editorial's ``revisions`` rows);
- **outline** — the fine-outline agent's drafts (``outline_drafts``) and the author's revisions of them;
- **plan** — the plan agent's drafts (``plan_drafts``): a bundle of the plan's outline, settings and card drafts,
  decided on as one (`_plan_draft`), and the author's revisions of them.

A draft is named by its id or its short form (`short_id`: the id's letter and its last six characters). Reject
records a reason and the draft can never be accepted; revise makes the author's text a new draft, checked at once
by the deterministic part of the detector (chapters) or the outline lint (outlines), that is accepted through the
same preflight as any draft (`_accept`). Every kept version of a replaced file is listed by `chapter_revisions`
and put back by `restore_revision`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..book import (
    Book,
    FileRevision,
    FineOutline,
    file_revisions,
    find_revision,
    kept_bytes,
    load_outlines,
    outline_paths,
    parse_chapter_file,
    parse_outline,
    read_chapter_file,
)
from ..editorial import StepOutcome
from ..errors import InputError
from ..memory import load_cards
from ..roles import chapter_quote
from ..roles.writer import DeclaredFact
from ..store import new_id, transaction, utc_now
from ..text import count_chars, edit_distance, sha256_hex
from ._desk_doc import (
    DecisionOut,
    DeskDraft,
    DetectorSummary,
    DiffSide,
    DraftDiffDoc,
    DraftKind,
    DraftsDoc,
    DraftShowDoc,
    RejectDoc,
    RestoreDoc,
    ReviseDoc,
    RevisionOut,
    RevisionsDoc,
    StatsDoc,
    StatsRow,
)
from ._detector import DetectorReport
from ._drafts import DraftDoc, close_dead_writes, drafts_dir, store_draft, store_report, write_process_alive
from ._outlines import LintProblem, lint_draft

#: The statuses of a write run's final draft (what the run ended as); `error` reads as failed at the desk.
_RUN_STATUS = {"passed": "passed", "held_for_author": "held_for_author", "skipped": "skipped", "error": "failed"}
SEMANTIC_NOT_RUN = (
    "not run on the author's revision: the deterministic checks ran; the semantic detector runs when the revision"
    " is accepted, if a detector model is configured"
)


# ---------------------------------------------------------------------------------------------------- names


def short_id(draft_id: str) -> str:
    """What the author types: the id's letter and its last six characters (``D4KZ9QX``; ``V…`` for a review's
    text, whose ids start ``rev_``)."""
    letter = "V" if draft_id.startswith("rev_") else draft_id[:1]
    return letter + draft_id[-6:]


@dataclass(frozen=True)
class DraftRef:
    kind: DraftKind
    id: str


def settle(book: Book) -> None:
    """Finish what a killed command left: a pending file replacement (and its decision), write runs whose process
    is gone. Every desk command starts with it, so what it reads is settled."""
    book.settle()
    close_dead_writes(book.db)


def _candidates(db: sqlite3.Connection, token: str) -> list[DraftRef]:
    t = token.strip()
    up = t.upper()
    found: list[DraftRef] = []
    for kind, table, where in (
        ("chapter", "write_drafts", "id"),
        ("review", "revisions", "id"),
        ("outline", "outline_drafts", "id"),
        ("plan", "plan_drafts", "id"),
    ):
        rows = db.execute(
            f"SELECT {where} FROM {table} WHERE {where} = ? OR {where} LIKE ?", (t, f"%{t[-6:]}")
        ).fetchall()
        for (draft_id,) in rows:
            if draft_id == t or short_id(draft_id).upper() == up:
                found.append(DraftRef(kind, draft_id))  # type: ignore[arg-type]
    return found


def resolve(book: Book, token: str) -> DraftRef:
    """The draft `token` names (its id or short id); DRAFT_NOT_FOUND / DRAFT_AMBIGUOUS (exit 2)."""
    if len(token.strip()) < 4:
        raise InputError(
            "DRAFT_NOT_FOUND", f"{token!r} is not a draft id", "command line", "`muse drafts` lists the drafts"
        )
    found = _candidates(book.db, token)
    if not found:
        raise InputError(
            "DRAFT_NOT_FOUND", f"no draft {token!r}", str(book.root), "`muse drafts` lists the drafts and their ids"
        )
    if len(found) > 1:
        raise InputError(
            "DRAFT_AMBIGUOUS",
            f"{token!r} names {len(found)} drafts: {', '.join(r.id for r in found)}",
            "command line",
            "give the full id",
        )
    return found[0]


# ------------------------------------------------------------------------------------------------ decisions


def _decision(row: sqlite3.Row) -> DecisionOut:
    import json

    return DecisionOut(
        id=row["id"],
        draft_id=row["draft_id"],
        decision=row["decision"],
        mode=row["mode"],
        text_sha256=row["text_sha256"],
        reason=row["reason"],
        preflight=[StepOutcome.model_validate(x) for x in json.loads(row["preflight_json"])],
        overrides=json.loads(row["overrides_json"]),
        revision_draft_id=row["revision_draft_id"],
        revision_sha256=row["revision_sha256"],
        edit_chars=row["edit_chars"],
        file_revision_id=row["file_revision_id"],
        run_id=row["run_id"],
        decided_at=row["decided_at"],
    )


def decisions_of(book: Book, draft_id: str) -> list[DecisionOut]:
    """Every decision on a draft, oldest first (an accept whose file write never finished is not one)."""
    rows = book.db.execute(
        "SELECT d.* FROM draft_decisions d LEFT JOIN file_revisions f ON f.id = d.file_revision_id"
        " WHERE d.draft_id = ? AND (d.file_revision_id IS NULL OR f.state = 'done') ORDER BY d.id",
        (draft_id,),
    ).fetchall()
    return [_decision(r) for r in rows]


def _latest_decisions(book: Book) -> dict[str, DecisionOut]:
    rows = book.db.execute(
        "SELECT d.* FROM draft_decisions d LEFT JOIN file_revisions f ON f.id = d.file_revision_id"
        " WHERE d.file_revision_id IS NULL OR f.state = 'done' ORDER BY d.id"
    ).fetchall()
    return {r["draft_id"]: _decision(r) for r in rows}


def decision_row(
    *,
    kind: DraftKind,
    draft_id: str,
    chapter: int,
    text_sha256: str,
    decision: str,
    mode: str,
    reason: str = "",
    preflight: Iterable[StepOutcome] = (),
    overrides: Iterable[str] = (),
    revision_draft_id: str | None = None,
    revision_sha256: str | None = None,
    edit_chars: int | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """A decision row's values (`insert_decision` writes it, alone or in a file revision's transaction)."""
    import json

    return {
        "id": new_id("K"),
        "draft_kind": kind,
        "draft_id": draft_id,
        "chapter": chapter,
        "text_sha256": text_sha256,
        "decision": decision,
        "mode": mode,
        "reason": reason,
        "preflight_json": json.dumps([p.model_dump(mode="json") for p in preflight], ensure_ascii=False),
        "overrides_json": json.dumps(list(overrides)),
        "revision_draft_id": revision_draft_id,
        "revision_sha256": revision_sha256,
        "edit_chars": edit_chars,
        "file_revision_id": None,
        "run_id": run_id,
        "decided_at": utc_now(),
    }


def insert_decision(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    """Write one decision row (inside the caller's transaction)."""
    columns = ", ".join(row)
    conn.execute(f"INSERT INTO draft_decisions ({columns}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def _record(book: Book, row: dict[str, Any]) -> DecisionOut:
    with transaction(book.db) as conn:
        insert_decision(conn, row)
    got = book.db.execute("SELECT * FROM draft_decisions WHERE id = ?", (row["id"],)).fetchone()
    return _decision(got)


def refuse_rejected(book: Book, ref: DraftRef) -> None:
    """DRAFT_REJECTED (exit 2) when the author rejected this draft: a rejected draft can never be accepted."""
    for d in decisions_of(book, ref.id):
        if d.decision == "reject":
            raise InputError(
                "DRAFT_REJECTED",
                f"draft {short_id(ref.id)} was rejected on {d.decided_at[:19]}"
                + (f" ({d.reason})" if d.reason else "")
                + ": a rejected draft can never be accepted",
                "muse drafts",
                "write the chapter again (`muse write N`), or revise another draft",
            )


# ----------------------------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class Loaded:
    """One draft with everything a desk command needs."""

    draft: DeskDraft
    text: str  # the chapter body (chapter and review kinds) or the outline's YAML
    declared: list[DeclaredFact]
    report: DetectorReport | None  # the newest detector report on exactly this text
    report_sha256: str | None
    manifest_sha256: str | None
    bound_sha256: str | None  # the chapter (or outline) file when the draft was made: None = no file
    path: Path  # the file an accept writes
    run: sqlite3.Row | None = None  # the write run (chapter kind)
    bases: dict[str, str] | None = None  # plan kind: each file's sha256 when drafted ("" = none)


def _chapter_loaded(book: Book, row: sqlite3.Row, run: sqlite3.Row, decision: DecisionOut | None) -> Loaded:
    doc = DraftDoc.model_validate_json(row["body"])
    revises: str | None = None
    if doc.purpose == "author_revision":
        got = book.db.execute(
            "SELECT draft_id FROM draft_decisions WHERE revision_draft_id = ? LIMIT 1", (row["id"],)
        ).fetchone()
        revises = got[0] if got is not None else None
    rep = book.db.execute(
        "SELECT sha256, body FROM detector_reports WHERE draft_id = ? AND candidate_sha256 = ?"
        " ORDER BY id DESC LIMIT 1",
        (row["id"], doc.text_sha256),
    ).fetchone()
    report = DetectorReport.model_validate_json(rep["body"]) if rep is not None else None
    last = book.db.execute(
        "SELECT id FROM write_drafts WHERE write_id = ? AND purpose != 'author_revision' ORDER BY seq DESC LIMIT 1",
        (run["id"],),
    ).fetchone()
    final = run["final_draft_id"] == row["id"] or (
        run["final_draft_id"] is None and last is not None and last[0] == row["id"]
    )
    status = _chapter_status(doc, run, report, final)
    draft = DeskDraft(
        id=row["id"],
        short=short_id(row["id"]),
        kind="chapter",
        chapter=doc.chapter,
        origin=doc.purpose,
        write_id=run["id"],
        run_id=run["run_id"],
        arm=doc.arm,
        writer_config_sha256=run["writer_config_sha256"],
        status=status,
        final=final or doc.purpose == "author_revision",
        chars=count_chars(doc.text),
        text_sha256=doc.text_sha256,
        revises=revises,
        created_at=row["created_at"],
        decision=decision,
    )
    return Loaded(
        draft=draft,
        text=doc.text,
        declared=list(doc.declared_facts),
        report=report,
        report_sha256=rep["sha256"] if rep is not None else None,
        manifest_sha256=doc.manifest_sha256,
        bound_sha256=run["chapter_file_sha256"],
        path=book.chapter_path(doc.chapter),
        run=run,
    )


def _chapter_status(doc: DraftDoc, run: sqlite3.Row, report: DetectorReport | None, final: bool) -> str:
    if doc.purpose == "author_revision":
        if report is None:
            return "unchecked"
        return "failed" if any(i.severity == "high" and i.verdict == "fail" for i in report.items) else "checked"
    if run["status"] == "running":
        return "writing" if write_process_alive(run) else "interrupted"
    if not final:
        return "superseded"
    return "interrupted" if run["status"] == "interrupted" else _RUN_STATUS.get(run["status"], run["status"])


def _review_loaded(book: Book, row: sqlite3.Row, decision: DecisionOut | None) -> Loaded:
    path = book.chapter_path(row["chapter"])
    chapter = parse_chapter_file(row["chapter"], path, row["text"].encode("utf-8"))
    record = book.db.execute(
        "SELECT status, run_id, chapter_sha256 FROM review_records WHERE id = ?", (row["record_id"],)
    ).fetchone()
    status = record["status"] if record is not None else "unknown"
    if row["applied_at"] and decision is None:
        status = "applied"
    draft = DeskDraft(
        id=row["id"],
        short=short_id(row["id"]),
        kind="review",
        chapter=row["chapter"],
        origin="review",
        run_id=record["run_id"] if record is not None else None,
        status=status,
        chars=count_chars(chapter.body),
        text_sha256=sha256_hex(chapter.body),
        created_at=row["created_at"],
        decision=decision,
    )
    return Loaded(
        draft=draft,
        text=chapter.body,
        declared=[],
        report=None,
        report_sha256=None,
        manifest_sha256=None,
        bound_sha256=row["base_sha256"],
        path=path,
    )


def _outline_loaded(book: Book, row: sqlite3.Row, decision: DecisionOut | None) -> Loaded:
    draft = DeskDraft(
        id=row["id"],
        short=short_id(row["id"]),
        kind="outline",
        chapter=row["chapter"],
        origin="outline" if row["kind"] == "draft" else "author_revision",
        run_id=row["run_id"],
        status="drafted" if row["kind"] == "draft" else "revised",
        chars=count_chars(row["text"]),
        text_sha256=row["text_sha256"],
        revises=row["revises_id"],
        created_at=row["created_at"],
        decision=decision,
    )
    path = outline_paths(book).get(row["chapter"]) or book.outlines_dir / f"{row['chapter']:04d}.yaml"
    return Loaded(
        draft=draft,
        text=row["text"],
        declared=[],
        report=None,
        report_sha256=None,
        manifest_sha256=None,
        bound_sha256=row["base_sha256"],
        path=path,
    )


def _plan_loaded(book: Book, row: sqlite3.Row, decision: DecisionOut | None) -> Loaded:
    draft = DeskDraft(
        id=row["id"],
        short=short_id(row["id"]),
        kind="plan",
        chapter=0,
        origin="plan" if row["kind"] == "draft" else "author_revision",
        run_id=row["run_id"],
        status="drafted" if row["kind"] == "draft" else "revised",
        chars=count_chars(row["text"]),
        text_sha256=row["text_sha256"],
        revises=row["revises_id"],
        created_at=row["created_at"],
        decision=decision,
    )
    return Loaded(
        draft=draft,
        text=row["text"],
        declared=[],
        report=None,
        report_sha256=None,
        manifest_sha256=None,
        bound_sha256=None,
        path=book.root / "plan",
        bases=json.loads(row["base_json"]),
    )


def load(book: Book, ref: DraftRef) -> Loaded:
    """The draft `ref` with its text, checks and binding."""
    decisions = decisions_of(book, ref.id)
    decision = decisions[-1] if decisions else None
    db = book.db
    if ref.kind == "chapter":
        row = db.execute("SELECT * FROM write_drafts WHERE id = ?", (ref.id,)).fetchone()
        run = db.execute("SELECT * FROM write_runs WHERE id = ?", (row["write_id"],)).fetchone()
        return _chapter_loaded(book, row, run, decision)
    if ref.kind == "review":
        return _review_loaded(book, db.execute("SELECT * FROM revisions WHERE id = ?", (ref.id,)).fetchone(), decision)
    if ref.kind == "plan":
        return _plan_loaded(book, db.execute("SELECT * FROM plan_drafts WHERE id = ?", (ref.id,)).fetchone(), decision)
    return _outline_loaded(
        book, db.execute("SELECT * FROM outline_drafts WHERE id = ?", (ref.id,)).fetchone(), decision
    )


def load_token(book: Book, token: str) -> Loaded:
    """The draft named by `token` (settling first)."""
    settle(book)
    return load(book, resolve(book, token))


# ------------------------------------------------------------------------------------------------ listing


def list_drafts(
    book: Book, chapter: int | None = None, *, all_drafts: bool = False, read_only: bool = False
) -> DraftsDoc:
    """`muse drafts [N]`: the drafts on the desk, oldest first — each write run's final draft and the author's
    revisions, review texts, fine-outline drafts (`all_drafts`: also the drafts repaired or re-asked on the way).
    Drafts of replay experiments are not the book's and are not listed. `read_only` (status, the report) leaves
    what a killed command left unsettled (a decision whose file was never written is not shown either way)."""
    if not read_only:
        settle(book)
    latest = _latest_decisions(book)
    db = book.db
    where, args = ("AND r.chapter = ?", (chapter,)) if chapter is not None else ("", ())
    out: list[DeskDraft] = []
    runs = {
        r["id"]: r
        for r in db.execute(f"SELECT * FROM write_runs r WHERE r.origin = 'write' {where} ORDER BY r.id", args)
    }
    if runs:
        rows = db.execute(
            "SELECT d.* FROM write_drafts d JOIN write_runs r ON r.id = d.write_id"
            f" WHERE r.origin = 'write' {where} ORDER BY d.created_at, d.id",
            args,
        ).fetchall()
        for row in rows:
            loaded = _chapter_loaded(book, row, runs[row["write_id"]], latest.get(row["id"]))
            if all_drafts or loaded.draft.final:
                out.append(loaded.draft)
    where_c = "WHERE chapter = ?" if chapter is not None else ""
    for row in db.execute(f"SELECT * FROM revisions {where_c} ORDER BY id", args):
        out.append(_review_loaded(book, row, latest.get(row["id"])).draft)
    for row in db.execute(f"SELECT * FROM outline_drafts {where_c} ORDER BY id", args):
        out.append(_outline_loaded(book, row, latest.get(row["id"])).draft)
    if chapter is None:
        for row in db.execute("SELECT * FROM plan_drafts ORDER BY id"):
            out.append(_plan_loaded(book, row, latest.get(row["id"])).draft)
    out.sort(key=lambda d: (d.created_at, d.id))
    return DraftsDoc(chapter=chapter, drafts=out)


def _summary(loaded: Loaded) -> DetectorSummary | None:
    report = loaded.report
    if report is None or loaded.report_sha256 is None:
        return None
    figures = report.computed
    blocking = report.blocking_items()
    waiting = [
        i
        for i in blocking
        if report.semantic.status == "skipped" and i.check == "constraint" and i.verdict == "unknown"
    ]
    checked = [i for i in blocking if i not in waiting]
    return DetectorSummary(
        report_sha256=loaded.report_sha256,
        outcome=report.semantic if waiting and not checked else report.outcome,
        coverage=figures.coverage if figures.constraints else None,
        constraints=figures.constraints,
        high_severity=figures.high_severity,
        warnings=figures.warnings,
        blocking=[f"[{i.id}] {i.detail}" for i in checked],
        awaiting_semantic=len(waiting),
    )


def show_draft(book: Book, token: str) -> DraftShowDoc:
    """`muse drafts show ID`: the draft's text, its declared facts, its detector report in brief, its manifest."""
    loaded = load_token(book, token)
    return DraftShowDoc(
        draft=loaded.draft,
        text=loaded.text,
        declared_facts=loaded.declared,
        detector=_summary(loaded),
        manifest_sha256=loaded.manifest_sha256,
        decisions=decisions_of(book, loaded.draft.id),
    )


def _current_side(book: Book, loaded: Loaded) -> DiffSide:
    d = loaded.draft
    if d.kind == "plan":  # the files the draft would write, as they are now (a missing one shown empty)
        now = {
            p: (book.root / p).read_text("utf-8", "replace") if (book.root / p).is_file() else ""
            for p in loaded.bases or {}
        }
        text = "".join(f"===== {p} =====\n{t.rstrip()}\n" for p, t in now.items())
        return DiffSide(label="plan/ 与 cards/（现状）", sha256=sha256_hex(text), text=text)
    if d.kind == "outline":
        path = outline_paths(book).get(d.chapter)
        label = f"outlines/{d.chapter:04d}.yaml"
        if path is None:
            return DiffSide(label=label + "（无）", sha256=None, text="")
        data = path.read_bytes()
        return DiffSide(label=label, sha256=sha256_hex(data), text=data.decode("utf-8", "replace"))
    found = book.probe_chapter_file(d.chapter)
    label = f"{book.chapter_label(d.chapter)} {loaded.path.relative_to(book.root).as_posix()}"
    if found is None:
        return DiffSide(label=label + "（尚无此章）", sha256=None, text="")
    chapter = read_chapter_file(d.chapter, found)
    return DiffSide(label=label, sha256=chapter.sha256, text=chapter.body)


def diff_draft(book: Book, token: str, against: str | None = None) -> DraftDiffDoc:
    """`muse drafts diff ID [--against ID2]`: the draft against the chapter (or outline) as it is now, or against
    another draft."""
    loaded = load_token(book, token)
    if against is None:
        old = _current_side(book, loaded)
    else:
        other = load(book, resolve(book, against))
        old = DiffSide(label=f"草稿 {other.draft.short}", sha256=other.draft.text_sha256, text=other.text)
    new = DiffSide(label=f"草稿 {loaded.draft.short}", sha256=loaded.draft.text_sha256, text=loaded.text)
    return DraftDiffDoc(draft=loaded.draft, old=old, new=new, identical=old.text == new.text)


# ----------------------------------------------------------------------------------------------- reject


def reject_draft(book: Book, token: str, reason: str = "") -> RejectDoc:
    """`muse drafts reject ID [--reason TEXT]`: recorded; the draft can never be accepted afterwards."""
    loaded = load_token(book, token)
    d = loaded.draft
    if d.decision is not None and d.decision.decision == "accept":
        raise InputError(
            "DRAFT_ALREADY_ACCEPTED",
            f"draft {d.short} was accepted on {d.decision.decided_at[:19]}: it is the book's text now",
            "muse drafts reject",
            f"`muse revisions {d.chapter}` lists the versions it replaced; restore one to undo the accept",
        )
    refuse_rejected(book, DraftRef(d.kind, d.id))
    row = decision_row(
        kind=d.kind, draft_id=d.id, chapter=d.chapter, text_sha256=d.text_sha256, decision="reject", mode="manual",
        reason=reason.strip(),
    )  # fmt: skip
    decision = _record(book, row)
    return RejectDoc(draft=d.model_copy(update={"decision": decision}), decision=decision)


# ----------------------------------------------------------------------------------------------- revise


def _located(text: str, declared: list[DeclaredFact]) -> tuple[list[DeclaredFact], list[str]]:
    """The declarations whose quote is still found exactly once in the edited text, and those the edit dropped."""
    kept: list[DeclaredFact] = []
    dropped: list[DeclaredFact] = []
    for fact in declared:
        m = chapter_quote(text, fact.quote) if fact.quote.strip() else None
        (kept if m is not None and m.ok else dropped).append(fact)
    return kept, [f"{f.subject}：{f.statement}" for f in dropped]


def deterministic_failures(report: DetectorReport) -> list[str]:
    """The high-severity items the report's deterministic checks failed (what blocks an author's revision)."""
    return [f"[{i.id}] {i.detail}" for i in report.items if i.severity == "high" and i.verdict == "fail"]


def revise_draft(book: Book, token: str, text: str) -> ReviseDoc:
    """`muse drafts revise ID --from FILE`: the author's text becomes a new draft bound to the original (the
    revise decision records both hashes and the edit distance), checked at once — the detector's deterministic
    part for a chapter (forbidden phrases, length, located declarations, dead characters acting, hard-constraint
    key names and time markers), the lint for an outline."""
    loaded = load_token(book, token)
    d = loaded.draft
    refuse_rejected(book, DraftRef(d.kind, d.id))
    if d.kind == "review":
        raise InputError(
            "DRAFT_REVISE_UNSUPPORTED",
            f"{d.short} is the text of a review run; it is accepted or rejected as it is",
            "muse drafts revise",
            f"accept it and edit chapters/{d.chapter:04d}.md, or reject it and revise by hand",
        )
    if text == loaded.text:
        raise InputError(
            "DRAFT_UNCHANGED",
            "the revised text is the draft's own text: there is nothing to record",
            "muse drafts revise",
            "edit the text, then revise again",
        )
    if d.kind == "outline":
        return _revise_outline(book, loaded, text)
    if d.kind == "plan":
        return _revise_plan(book, loaded, text)
    return _revise_chapter(book, loaded, text)


def _revise_chapter(book: Book, loaded: Loaded, text: str) -> ReviseDoc:
    from ._build import build_context
    from ._gate import gate_for

    assert loaded.run is not None and loaded.manifest_sha256 is not None
    body = text.strip("\n")
    if not body.strip():
        raise InputError("DRAFT_EMPTY", "the revised text is empty", "muse drafts revise", "give the chapter's text")
    declared, dropped = _located(body, loaded.declared)
    build = build_context(book, loaded.draft.chapter, arm=loaded.run["arm"])
    gate = gate_for(build)
    not_run = StepOutcome.skipped("detector", SEMANTIC_NOT_RUN)
    report = gate.report(body, declared, None, not_run, None, StepOutcome.skipped("extractor", SEMANTIC_NOT_RUN))
    report = report.model_copy(update={"manifest_sha256": loaded.manifest_sha256})
    seq = book.db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM write_drafts WHERE write_id = ?", (loaded.run["id"],))
    doc = DraftDoc(
        chapter=loaded.draft.chapter,
        arm=loaded.run["arm"],
        purpose="author_revision",
        evidence_round=0,
        repair_round=0,
        manifest_sha256=loaded.manifest_sha256,
        text=body,
        text_sha256=sha256_hex(body),
        declared_facts=declared,
        evidence_requests=[],
    )
    new_id_, _ = store_draft(book, loaded.run["id"], int(seq.fetchone()[0]), doc, None)
    store_report(book, loaded.run["id"], new_id_, report)
    failures = deterministic_failures(report)
    check = [
        StepOutcome.failed("detector", f"{len(failures)} blocking: " + "; ".join(failures[:5]))
        if failures
        else StepOutcome.passed("detector", "the deterministic checks hold"),
        not_run,
    ]
    distance = edit_distance(loaded.text, body)
    row = decision_row(
        kind="chapter",
        draft_id=loaded.draft.id,
        chapter=loaded.draft.chapter,
        text_sha256=loaded.draft.text_sha256,
        decision="revise",
        mode="manual",
        preflight=check,
        revision_draft_id=new_id_,
        revision_sha256=doc.text_sha256,
        edit_chars=distance,
    )
    decision = _record(book, row)
    revision = load(book, DraftRef("chapter", new_id_)).draft
    return ReviseDoc(
        ok=not failures,
        original=loaded.draft.model_copy(update={"decision": decision}),
        revision=revision,
        decision=decision,
        edit_chars=distance,
        edit_share=distance / max(1, len(loaded.text)),
        check=check,
        dropped_declarations=dropped,
    )


def lint_outline_text(book: Book, chapter: int, text: str) -> list[LintProblem]:
    """The outline lint of an outline that is not a file yet (a draft or its revision) against the book before it;
    a YAML or schema error is one error problem."""
    where = f"outlines/{chapter:04d}.yaml"
    try:
        outline = parse_outline(book.root / where, text=text, expect_chapter=chapter)
    except InputError as exc:
        return [LintProblem(severity="error", code=exc.code, message=exc.what, where=exc.where or where)]
    return lint_outline(book, outline)


def lint_outline(book: Book, outline: FineOutline) -> list[LintProblem]:
    """`lint_draft` with the book's cards, the outlines and chapters before the outline's chapter."""
    n = outline.chapter
    shas = {c: read_chapter_file(c, p).sha256 for c, p in book.chapter_paths().items() if c < n}
    return lint_draft(book, outline, cards=load_cards(book), outlines=load_outlines(book, before=n), chapter_shas=shas)


def lint_steps(problems: list[LintProblem]) -> list[StepOutcome]:
    """The lint as one preflight step: passed (warnings named), or failed naming the errors."""
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity == "warning"]
    if errors:
        return [StepOutcome.failed("lint", "; ".join(f"{p.code} {p.where}: {p.message}" for p in errors[:5]))]
    note = f"{len(warnings)} warning(s): " + "; ".join(p.code for p in warnings[:5]) if warnings else ""
    return [StepOutcome.passed("lint", note)]


def store_outline_draft(
    book: Book,
    chapter: int,
    text: str,
    *,
    kind: str = "draft",
    revises: str | None = None,
    run_id: str | None = None,
    call_id: str | None = None,
    base_sha256: str | bool | None = True,
) -> str:
    """Keep a fine-outline draft (file under ``.muse/drafts/outlines/`` + row), bound to the outline file as it
    is now (or to `base_sha256`, the one its original was bound to); its id."""
    sha = sha256_hex(text)
    path = drafts_dir(book) / "outlines" / f"{chapter:04d}-{sha[:12]}.yaml"
    from ..book import atomic_write_text

    if not (path.is_file() and sha256_hex(path.read_bytes()) == sha):
        atomic_write_text(path, text)
    if base_sha256 is True:
        existing = outline_paths(book).get(chapter)
        base = sha256_hex(existing.read_bytes()) if existing is not None else None
    else:
        base = base_sha256 or None
    draft_id = new_id("O")
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO outline_drafts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                draft_id,
                chapter,
                kind,
                revises,
                text,
                sha,
                path.relative_to(book.root).as_posix(),
                base,
                run_id,
                call_id,
                utc_now(),
            ),
        )
    return draft_id


def _revise_outline(book: Book, loaded: Loaded, text: str) -> ReviseDoc:
    d = loaded.draft
    check = lint_steps(lint_outline_text(book, d.chapter, text))
    new = store_outline_draft(
        book, d.chapter, text, kind="author_revision", revises=d.id, base_sha256=loaded.bound_sha256
    )
    return _revised(book, loaded, text, DraftRef("outline", new), check)


def _revise_plan(book: Book, loaded: Loaded, text: str) -> ReviseDoc:
    from ._plan_draft import revise_steps, store_plan_draft

    check = revise_steps(book, text)
    if check[0].step == "bundle" and check[0].status == "failed":  # not a bundle at all: nothing to keep
        raise InputError("PLAN_BUNDLE_INVALID", check[0].detail, "muse drafts revise", "keep the bundle's file lines")
    new = store_plan_draft(book, text, kind="author_revision", revises=loaded.draft.id, bases=loaded.bases)
    return _revised(book, loaded, text, DraftRef("plan", new), check)


def _revised(book: Book, loaded: Loaded, text: str, new: DraftRef, check: list[StepOutcome]) -> ReviseDoc:
    """Record the revise decision on `loaded` (its revision `new`, checked by `check`) and the document showing it."""
    d = loaded.draft
    distance = edit_distance(loaded.text, text)
    row = decision_row(
        kind=d.kind,
        draft_id=d.id,
        chapter=d.chapter,
        text_sha256=d.text_sha256,
        decision="revise",
        mode="manual",
        preflight=check,
        revision_draft_id=new.id,
        revision_sha256=sha256_hex(text),
        edit_chars=distance,
    )
    decision = _record(book, row)
    return ReviseDoc(
        ok=all(s.status == "passed" for s in check),
        original=d.model_copy(update={"decision": decision}),
        revision=load(book, new).draft,
        decision=decision,
        edit_chars=distance,
        edit_share=distance / max(1, len(loaded.text)),
        check=check,
    )


# ------------------------------------------------------------------------------------------------- stats


def drafts_stats(book: Book) -> StatsDoc:
    """`muse drafts stats`: per writer configuration and arm, the final drafts `muse write` made and what the
    author decided on each — accepted, revised (with how much of the draft the edit changed), rejected, undecided.
    Each draft counts once: revised if the author revised it, else by its accept or reject."""
    settle(book)
    rows: dict[tuple[str | None, str | None], dict[str, Any]] = {}
    drafts = [d for d in list_drafts(book).drafts if d.kind == "chapter" and d.origin != "author_revision"]
    for d in drafts:
        key = (d.writer_config_sha256, d.arm)
        acc = rows.setdefault(
            key, {"drafts": 0, "accepted": 0, "revised": 0, "rejected": 0, "undecided": 0, "automatic": 0, "shares": []}
        )
        acc["drafts"] += 1
        decisions = decisions_of(book, d.id)
        revises = [x for x in decisions if x.decision == "revise"]
        accepts = [x for x in decisions if x.decision == "accept"]
        if revises:
            acc["revised"] += 1
            length = len(load(book, DraftRef("chapter", d.id)).text)  # the distance counts every character
            acc["shares"] += [(x.edit_chars or 0) / max(1, length) for x in revises]
        elif accepts:
            acc["accepted"] += 1
            acc["automatic"] += sum(1 for x in accepts if x.mode == "automatic")
        elif any(x.decision == "reject" for x in decisions):
            acc["rejected"] += 1
        else:
            acc["undecided"] += 1
    out = [
        StatsRow(
            writer_config_sha256=cfg,
            arm=arm,
            drafts=acc["drafts"],
            accepted=acc["accepted"],
            revised=acc["revised"],
            rejected=acc["rejected"],
            undecided=acc["undecided"],
            automatic=acc["automatic"],
            mean_edit_share=sum(acc["shares"]) / len(acc["shares"]) if acc["shares"] else None,
            edit_shares=[round(s, 6) for s in acc["shares"]],
        )
        for (cfg, arm), acc in sorted(rows.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or ""))
    ]
    return StatsDoc(rows=out)


# --------------------------------------------------------------------------------------------- revisions


def _file_of(book: Book, target: str, outline: bool) -> tuple[Path, str]:
    """The author's file `target` names: a chapter number (its text, or with `outline` its fine outline), or a path
    relative to the book (``rules.txt``, ``cards/guan-yu.yaml``, ``plan/outline.md``)."""
    if target.isdigit():
        chapter = int(target)
        if outline:
            path = outline_paths(book).get(chapter) or book.outlines_dir / f"{chapter:04d}.yaml"
        else:
            path = book.chapter_path(chapter)
        return path, path.relative_to(book.root).as_posix()
    rel = Path(os.path.normpath(target)).as_posix()
    first = rel.split("/")[0]
    if (
        Path(rel).is_absolute()
        or first not in _AUTHOR_FOLDERS | {"rules.txt"}
        or (first != "rules.txt") == (rel == first)
    ):
        raise InputError(
            "REVISION_TARGET",
            f"{target!r} is neither a chapter number nor an author's file of the book",
            "command line",
            "give a chapter number, or a path like rules.txt, outlines/0011.yaml, cards/guan-yu.yaml, plan/outline.md",
        )
    return book.root / rel, rel


_AUTHOR_FOLDERS = {"chapters", "outlines", "cards", "plan"}


def _revision_out(r: FileRevision) -> RevisionOut:
    return RevisionOut(
        id=r.id,
        path=r.path,
        kind=r.kind,
        sha256=r.old_sha256,
        size=r.old_size,
        replaced_by_sha256=r.new_sha256,
        command=r.command,
        note=r.note,
        created_at=r.created_at,
    )


def file_history(book: Book, target: str, *, outline: bool = False) -> RevisionsDoc:
    """`muse revisions N|FILE [--outline]`: the author's file as it is now and every version a command replaced."""
    settle(book)
    path, rel = _file_of(book, target, outline)
    revisions = file_revisions(book.db, rel)
    current = sha256_hex(path.read_bytes()) if path.is_file() else None
    return RevisionsDoc(
        target=target, path=rel, current_sha256=current, revisions=[_revision_out(r) for r in revisions]
    )


def restore_revision(book: Book, target: str, revision_id: str, *, outline: bool = False) -> RestoreDoc:
    """`muse revisions restore N|FILE REV`: put the kept version back — itself a replacement that keeps the current
    bytes first (so a restore can be undone the same way). A version that was "no file" removes the file."""
    settle(book)
    rev = find_revision(book.db, revision_id)
    rel = _file_of(book, target, outline)[1]
    if rev is None or rev.path != rel:
        raise InputError(
            "REVISION_NOT_FOUND",
            f"no kept version {revision_id!r} of {rel}",
            rel,
            f"`muse revisions {target}{' --outline' if outline else ''}` lists them",
        )
    data = kept_bytes(book.state_dir, rev.old_sha256, rel) if rev.old_sha256 is not None else None
    path = book.root / rev.path
    current = sha256_hex(path.read_bytes()) if path.is_file() else ""
    if (data is None and not current) or (data is not None and sha256_hex(data) == current):
        raise InputError(
            "REVISION_IS_CURRENT", f"{rel} already has the bytes of {revision_id}", rel, "nothing to restore"
        )
    kept = book.replace_file(
        path,
        data,
        expect_sha256=current,
        kind=rev.kind,
        chapter=rev.chapter,
        command=f"muse revisions restore {target} {revision_id}",
        note=f"restore {revision_id}",
    )
    return RestoreDoc(target=target, path=rev.path, restored=_revision_out(rev), kept=_revision_out(kept))
