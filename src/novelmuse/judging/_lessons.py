"""Example lessons: after a stable panel report, one lesson per candidate is registered, bound to the run,
the rubric version and the candidate's sha256, and de-duplicated by normalised content.

A lesson is an effect signal, not text to reuse: the candidate's strongest and weakest dimension with
the panel score and the reason of the judge closest to that score. Normalisation for de-duplication:
NFC, full/half-width folding, whitespace removed, case folded — the same lesson re-registered (by a
rerun of the same item, or with different spacing) is not stored twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..store import new_id, transaction, utc_now
from ..text import normalize_quote, sha256_hex
from ._panel import JudgeRecord
from ._reports import PanelReport
from ._rubrics import Rubric, as_fraction


@dataclass(frozen=True)
class Lesson:
    candidate_id: str
    candidate_sha256: str
    text: str


def lesson_key(text: str) -> str:
    """The de-duplication key: sha256 of the normalised, case-folded lesson."""
    return sha256_hex(normalize_quote(text).casefold())


def closest_reason(records: Sequence[JudgeRecord], candidate_id: str, dimension_id: str, score: Fraction) -> str:
    """The reason of the judge whose score on this cell is closest to the panel's `score` (the first such judge)."""
    best: tuple[Fraction, str] | None = None
    for rec in records:
        if rec.report is None:
            continue
        for s in rec.report.scores:
            if s.candidateId == candidate_id and s.dimensionId == dimension_id:
                gap = abs(as_fraction(s.score) - score)
                if best is None or gap < best[0]:
                    best = (gap, s.reason.strip())
    return best[1] if best else ""


def build_lessons(report: PanelReport, rubric: Rubric, records: Sequence[JudgeRecord]) -> list[Lesson]:
    """One lesson per candidate of a stable report (none for an invalid or unstable one)."""
    if report.status != "stable":
        return []
    out: list[Lesson] = []
    names = {d.id: d.name for d in rubric.dimensions}
    for cand in report.candidates:
        cells = [(as_fraction(s.score), s.dimension_id) for s in report.scores if s.candidate_id == cand.candidate_id]
        order = {d: i for i, d in enumerate(rubric.dimension_ids)}
        cells.sort(key=lambda x: (-x[0], order[x[1]]))
        (hi, hi_dim), (lo, lo_dim) = cells[0], cells[-1]
        text = (
            f"[{rubric.id} v{rubric.version}] 强项 {names[hi_dim]}({hi_dim}) {float(hi)}："
            f"{closest_reason(records, cand.candidate_id, hi_dim, hi)}；"
            f"弱项 {names[lo_dim]}({lo_dim}) {float(lo)}：{closest_reason(records, cand.candidate_id, lo_dim, lo)}"
        )
        out.append(Lesson(cand.candidate_id, cand.sha256, text))
    return out


def register_lessons(
    conn: sqlite3.Connection, lessons: Sequence[Lesson], *, run_id: str, panel_id: str, rubric: Rubric
) -> list[tuple[str, bool]]:
    """Store lessons; returns (lesson id, newly created) per lesson — a duplicate returns the existing id."""
    out: list[tuple[str, bool]] = []
    with transaction(conn):
        for lesson in lessons:
            key = lesson_key(lesson.text)
            row = conn.execute("SELECT id FROM judge_lessons WHERE content_sha256 = ?", (key,)).fetchone()
            if row is not None:
                out.append((str(row[0]), False))
                continue
            lesson_id = new_id("jl_")
            conn.execute(
                "INSERT INTO judge_lessons (id, content_sha256, run_id, panel_id, rubric_id, rubric_version, "
                "candidate_sha256, lesson, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    lesson_id,
                    key,
                    run_id,
                    panel_id,
                    rubric.id,
                    rubric.version,
                    lesson.candidate_sha256,
                    lesson.text,
                    utc_now(),
                ),
            )
            out.append((lesson_id, True))
    return out
