"""Persistence of reviews (migration 0004_editorial): records bound to the chapter sha256, their steps,
issues, editor reports, arbiter decisions; lookups for resume and for `muse check`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ..errors import InputError
from ..llm import TaskRef
from ..roles import current_ref
from ..store import put_texts, transaction, utc_now
from ..text import sha256_hex
from ._models import ChapterReview

if TYPE_CHECKING:  # the loop's state is only annotated here: importing it would load the whole loop
    from ._state import LoopState


def save_review(
    conn: sqlite3.Connection,
    doc: ChapterReview,
    state: LoopState | None,
    *,
    run_id: str | None,
    tasks: Sequence[TaskRef],
    started_at: str,
    revision_text: str | None,
) -> None:
    """Write one review record and everything it holds in a single transaction (`tasks`: the role tasks its
    calls used, part of its resume key)."""
    ended = utc_now()
    with transaction(conn):
        conn.execute(
            "INSERT INTO review_records (id, run_id, chapter, chapter_sha256, config_sha256, status, error_code,"
            " result_sha256, revision_id, open_issues, input_tokens, output_tokens, cost, cost_known, report_json,"
            " started_at, ended_at, tasks_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                doc.record_id,
                run_id,
                doc.chapter,
                doc.chapter_sha256,
                doc.config_sha256,
                doc.status,
                doc.error_code,
                doc.result_sha256,
                doc.revision.id if doc.revision else None,
                doc.open_issues,
                doc.usage.input_tokens,
                doc.usage.output_tokens,
                doc.usage.cost,
                int(doc.usage.cost is not None),
                doc.model_dump_json(),
                started_at,
                ended,
                json.dumps([asdict(t) for t in tasks]),
            ),
        )
        if state is not None:  # the texts the stored offsets index into (shown by `muse report`)
            put_texts(conn, [state.original, *state.texts])
        for seq, s in enumerate(doc.steps):
            conn.execute(
                "INSERT INTO review_steps VALUES (?, ?, ?, ?, ?, ?, ?)",
                (doc.record_id, seq, s.step, s.status, s.reason, s.code, s.detail),
            )
        for rnd in doc.consistency:
            for seq, i in enumerate(rnd.issues):
                conn.execute(
                    "INSERT INTO review_issues VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        doc.record_id,
                        rnd.round,
                        seq,
                        rnd.text_sha256,
                        i.severity,
                        i.type,
                        i.quote,
                        i.start,
                        i.end,
                        i.paragraph,
                        i.explanation,
                        i.fix_hint,
                        int(i.open),
                    ),
                )
        call_ids = state.editor_call_ids if state else []
        for k, e in enumerate(doc.editor):
            dims = {d.name: d.model_dump(exclude={"name"}) for d in e.dims}
            conn.execute(
                "INSERT INTO editor_reports VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    doc.record_id,
                    e.round,
                    e.text_sha256,
                    e.overall,
                    json.dumps(dims, ensure_ascii=False),
                    e.computed_verdict,
                    e.model_verdict,
                    call_ids[k] if k < len(call_ids) else None,
                ),
            )
        arb_ids = state.arbiter_call_ids if state else []
        for k, a in enumerate(doc.arbiter):
            conn.execute(
                "INSERT INTO arbiter_decisions VALUES (?, ?, ?, ?, ?, ?)",
                (doc.record_id, a.round, a.decision, a.reason, arb_ids[k] if k < len(arb_ids) else None, ended),
            )
        if doc.revision is not None and revision_text is not None:
            conn.execute(
                "INSERT INTO revisions (id, chapter, record_id, base_sha256, sha256, text, created_at, applied_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (
                    doc.revision.id,
                    doc.chapter,
                    doc.record_id,
                    doc.chapter_sha256,
                    doc.revision.sha256,
                    revision_text,
                    ended,
                ),
            )


def mark_revision_applied(conn: sqlite3.Connection, revision_id: str) -> None:
    """Record, inside the caller's transaction (the one that records the file's replacement), that the review's
    revision was written to the author's file — in its row and in its review's stored document."""
    conn.execute("UPDATE revisions SET applied_at = ? WHERE id = ?", (utc_now(), revision_id))
    row = conn.execute(
        "SELECT r.id, r.report_json FROM review_records r JOIN revisions v ON v.record_id = r.id WHERE v.id = ?",
        (revision_id,),
    ).fetchone()
    if row is None:
        return
    doc = ChapterReview.model_validate_json(row[1])
    if doc.revision is not None and doc.revision.id == revision_id:
        doc = doc.model_copy(update={"revision": doc.revision.model_copy(update={"applied": True})})
        conn.execute("UPDATE review_records SET report_json = ? WHERE id = ?", (doc.model_dump_json(), row[0]))


def stored_revision(conn: sqlite3.Connection, revision_id: str, sha256: str) -> bytes:
    """The bytes of a stored revision, verified against the sha256 its review recorded."""
    row = conn.execute("SELECT text FROM revisions WHERE id = ?", (revision_id,)).fetchone()
    data = row[0].encode("utf-8") if row is not None else b""
    if sha256_hex(data) != sha256:
        raise InputError(
            "REVISION_CORRUPT",
            f"the stored revision {revision_id} is missing or does not match its sha256",
            ".muse/muse.db",
            "rerun the review with --force",
        )
    return data


def record_facts(conn: sqlite3.Connection, doc: ChapterReview, step: str = "facts") -> None:
    """Store the `facts` step of a recorded review (it runs after the record and any --apply).

    The step's row replaces an earlier one of the same record (a resumed review that extracted its
    fact card now); the stored document and the record's tokens and cost are updated with it.
    """
    outcome = next(s for s in doc.steps if s.step == step)
    with transaction(conn):
        row = conn.execute(
            "SELECT seq FROM review_steps WHERE record_id = ? AND step = ?", (doc.record_id, step)
        ).fetchone()
        if row is not None:
            seq = row[0]
            conn.execute("DELETE FROM review_steps WHERE record_id = ? AND seq = ?", (doc.record_id, seq))
        else:
            seq = conn.execute(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM review_steps WHERE record_id = ?", (doc.record_id,)
            ).fetchone()[0]
        conn.execute(
            "INSERT INTO review_steps VALUES (?, ?, ?, ?, ?, ?, ?)",
            (doc.record_id, seq, outcome.step, outcome.status, outcome.reason, outcome.code, outcome.detail),
        )
        conn.execute(
            "UPDATE review_records SET report_json = ?, input_tokens = ?, output_tokens = ?, cost = ?, cost_known = ?"
            " WHERE id = ?",
            (
                doc.model_dump_json(),
                doc.usage.input_tokens,
                doc.usage.output_tokens,
                doc.usage.cost,
                int(doc.usage.cost is not None),
                doc.record_id,
            ),
        )


def _tasks_unchanged(tasks_json: str) -> bool:
    """Whether every role task a review used is still exactly the same (same version, templates and schema)."""
    return all(current_ref(t["role"], t["task"]) == TaskRef(**t) for t in json.loads(tasks_json))


def find_current_review(
    conn: sqlite3.Connection, chapter: int, file_sha256: str, config_sha256: str
) -> ChapterReview | None:
    """The latest complete review of this exact file under this exact configuration and unchanged role tasks
    (for resume).

    A review matches when it reviewed these bytes, or when its revision was applied and produced them, and every
    role task its calls used is unchanged (a prompt edit redoes only the reviews that rendered that prompt).
    Reviews that ended in `error`, or whose stored document has another shape, never match: they are redone.
    """
    rows = conn.execute(
        "SELECT r.report_json, r.tasks_json FROM review_records r LEFT JOIN revisions v ON v.id = r.revision_id"
        " WHERE r.chapter = ? AND r.config_sha256 = ? AND r.status != 'error'"
        " AND (r.chapter_sha256 = ? OR (v.applied_at IS NOT NULL AND r.result_sha256 = ?))"
        " ORDER BY r.ended_at DESC, r.id DESC",
        (chapter, config_sha256, file_sha256, file_sha256),
    )
    row = next((r for r in rows if _tasks_unchanged(r[1])), None)
    if row is None:
        return None
    try:
        return ChapterReview.model_validate_json(row[0])
    except ValidationError:  # recorded by another schema version: review again rather than guess
        return None
