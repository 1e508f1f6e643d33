"""The latest recorded review of each chapter (tables of migration 0004_editorial), as `muse check` shows it.

Here rather than in `editorial` so that `muse check` reads it without loading the editorial loop and the model
layer behind it (issue 17 item 1).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class ReviewStatus:
    """The latest review of a chapter, as `muse check` shows it."""

    chapter: int
    status: str
    open_issues: int
    record_id: str
    current: bool  # the review is bound to the file's current bytes


def latest_reviews(conn: sqlite3.Connection, current_sha256: dict[int, str]) -> dict[int, ReviewStatus]:
    """The latest review per chapter, and whether it still matches the chapter file on disk."""
    rows = conn.execute(
        "SELECT r.id, r.chapter, r.status, r.open_issues, r.chapter_sha256, r.result_sha256, v.applied_at"
        " FROM review_records r LEFT JOIN revisions v ON v.id = r.revision_id"
        " ORDER BY r.chapter, r.ended_at, r.id"
    ).fetchall()
    out: dict[int, ReviewStatus] = {}
    for row in rows:
        sha = current_sha256.get(row["chapter"])
        current = sha is not None and (
            sha == row["chapter_sha256"] or (row["applied_at"] is not None and sha == row["result_sha256"])
        )
        out[row["chapter"]] = ReviewStatus(row["chapter"], row["status"], row["open_issues"], row["id"], current)
    return out
