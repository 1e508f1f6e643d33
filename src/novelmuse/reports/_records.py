"""The stored review records as the overview and `muse status` read them: every review of each chapter, parsed,
and whether each is bound to the chapter's text now — without the HTML report's templates."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from pydantic import ValidationError

from ..editorial import ChapterReview

MAIN_STEPS = ("consistency_review", "editor_review")


def review_state(doc: ChapterReview | None, current: bool) -> tuple[str, str]:
    """The overview's review status and its label — skipped is its own state, never a pass."""
    if doc is None:
        return "not_reviewed", "not reviewed"
    if not current:
        return "stale", "stale (file changed since the review)"
    if doc.status == "error":
        return "error", f"error({doc.error_code})"
    if doc.status == "not_reviewed":
        skipped = next((s for s in doc.steps if s.step in MAIN_STEPS and s.status == "skipped"), None)
        if skipped is not None:
            return "skipped", skipped.label
        return "not_reviewed", "not reviewed"
    return doc.status, doc.status


@dataclass
class StoredReview:
    doc: ChapterReview
    ended_at: str
    current: bool
    cost: float | None


def load_reviews(conn: sqlite3.Connection, shas: dict[int, str]) -> dict[int, list[StoredReview]]:
    """Every review record per chapter (oldest first), parsed; whether each is bound to the file now."""
    rows = conn.execute(
        "SELECT r.chapter, r.chapter_sha256, r.result_sha256, r.report_json, r.ended_at, r.cost, v.applied_at"
        " FROM review_records r LEFT JOIN revisions v ON v.id = r.revision_id ORDER BY r.chapter, r.ended_at, r.id"
    ).fetchall()
    out: dict[int, list[StoredReview]] = {}
    for row in rows:
        try:
            doc = ChapterReview.model_validate_json(row["report_json"])
        except ValidationError:  # another schema version: not shown rather than guessed
            continue
        sha = shas.get(row["chapter"])
        current = sha is not None and (
            sha == row["chapter_sha256"] or (row["applied_at"] is not None and sha == row["result_sha256"])
        )
        out.setdefault(row["chapter"], []).append(StoredReview(doc, row["ended_at"], current, row["cost"]))
    return out
