"""Quality-gate decisions: stored with their inputs, listed by `muse judge-summary`, and each one's terminal lesson.

Seed 000 (score-content-quality): 评分报告与 rubric 版本是 Gate 与归因的输入证据 — every decision keeps what it was
decided on (the candidate's sha256 and chapter, the evidence pack's sha256 and summary, the rule layer's hard-block
report and any override, the rubric's id/version/sha256) beside its outcome and reasons, in table `gate_decisions`
(migration 0012). Gate 终态 lesson 由 adjudicate-quality-gate 单独登记，标题不冲突: after adjudication one gate lesson
per decision is registered in `judge_lessons` (kind ``gate``), titled 【门终态】 so it never reads like an example
lesson, and de-duplicated by normalised content exactly like them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from ..rules import HardBlockReport
from ..store import new_id, transaction, utc_now
from ._adjudicate import GateDecision
from ._doc import JudgeDoc
from ._lessons import lesson_key
from ._reports import PanelReport, RubricRef
from ._rubrics import Rubric

GATE_LESSON_TITLE = "【门终态】"


class GateRow(JudgeDoc):
    """One stored gate decision, as `muse judge-summary` lists it."""

    id: str
    panel_id: str
    run_id: str
    origin: str  # judge / review
    chapter: int | None
    candidate_id: str
    arm: str
    candidate_sha256: str
    rubric: RubricRef
    outcome: str
    code: str | None
    reasons: list[str]
    hard_blocks: dict[str, str]
    evidence_sha256: str | None
    lesson_id: str | None
    created_at: str


def gate_lesson(decision: GateDecision, rubric: Rubric, label: str | None) -> str:
    """The gate's terminal lesson: the rubric, the chapter (`label`, named the book's way: 第N回), the outcome and
    its reasons (an effect signal)."""
    where = f"{label} " if label else ""
    why = "；".join(decision.reasons) if decision.reasons else "关键维度均达标，硬阻断均未触发"
    return f"{GATE_LESSON_TITLE}[{rubric.id} v{rubric.version}] {where}{decision.outcome}：{why}"


def _register_gate_lesson(
    conn: sqlite3.Connection, text: str, *, run_id: str, panel_id: str, rubric: Rubric, candidate_sha256: str
) -> str:
    key = lesson_key(text)
    row = conn.execute("SELECT id FROM judge_lessons WHERE content_sha256 = ?", (key,)).fetchone()
    if row is not None:
        return str(row[0])
    lesson_id = new_id("jl_")
    conn.execute(
        "INSERT INTO judge_lessons (id, content_sha256, run_id, panel_id, rubric_id, rubric_version, "
        "candidate_sha256, lesson, created_at, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'gate')",
        (lesson_id, key, run_id, panel_id, rubric.id, rubric.version, candidate_sha256, text, utc_now()),
    )
    return lesson_id


def record_gate_decisions(
    conn: sqlite3.Connection,
    report: PanelReport,
    rubric: Rubric,
    decisions: Sequence[GateDecision],
    arms: Mapping[str, str],
    *,
    hard_blocks: Mapping[str, HardBlockReport] | None,
    overrides: Mapping[str, str],
    evidence: Mapping[str, Any] | None,
    chapter: int | None,
    label: str | None,
    origin: str,
    record_key: str | None,
    persist_lessons: bool,
) -> list[str]:
    """Store one row per decision (and, with `persist_lessons`, its gate lesson, naming the chapter by `label`) in
    one transaction; returns the rows' ids in the order of `decisions`."""
    sha = {c.candidate_id: c.sha256 for c in report.candidates}
    ids: list[str] = []
    with transaction(conn):
        for d in decisions:
            arm = arms[d.candidate_id]
            full = (hard_blocks or {}).get(arm)
            blocks = {"states": d.hard_blocks, "report": full.model_dump(mode="json") if full else None}
            inputs = {"evidence": _evidence_summary(evidence), "overrides": dict(overrides), "panel": report.status}
            lesson_id = None
            if persist_lessons:
                lesson_id = _register_gate_lesson(
                    conn,
                    gate_lesson(d, rubric, label),
                    run_id=report.run_id,
                    panel_id=report.panel_id,
                    rubric=rubric,
                    candidate_sha256=sha[d.candidate_id],
                )
            row_id = new_id("gd_")
            conn.execute(
                "INSERT INTO gate_decisions (id, panel_id, run_id, origin, chapter, item_ref, candidate_id, arm, "
                "candidate_sha256, rubric_id, rubric_version, rubric_sha256, outcome, code, reasons_json, "
                "hard_blocks_json, evidence_sha256, inputs_json, gate_key, lesson_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row_id,
                    report.panel_id,
                    report.run_id,
                    origin,
                    chapter,
                    report.item_ref,
                    d.candidate_id,
                    arm,
                    sha[d.candidate_id],
                    rubric.id,
                    rubric.version,
                    rubric.sha256,
                    d.outcome,
                    d.code,
                    json.dumps(d.reasons, ensure_ascii=False),
                    json.dumps(blocks, ensure_ascii=False),
                    evidence.get("sha256") if evidence else None,
                    json.dumps(inputs, ensure_ascii=False),
                    record_key,
                    lesson_id,
                    utc_now(),
                ),
            )
            ids.append(row_id)
    return ids


def _evidence_summary(evidence: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the decision row keeps of the evidence pack: everything but the item texts (the blind input, bound by
    its sha256 in the panel report, holds those)."""
    if evidence is None:
        return None
    return {k: v for k, v in evidence.items() if k != "items"}


def gate_rows(conn: sqlite3.Connection, *, run_ids: Sequence[str] = (), key: str | None = None) -> list[GateRow]:
    """Stored gate decisions (of `run_ids`, or with gate key `key`, or all), oldest first."""
    sql = "SELECT * FROM gate_decisions WHERE 1 = 1"
    args: list[str] = []
    if run_ids:
        sql += f" AND run_id IN ({', '.join('?' for _ in run_ids)})"
        args += list(run_ids)
    if key is not None:
        sql += " AND gate_key = ?"
        args.append(key)
    out: list[GateRow] = []
    for row in conn.execute(sql + " ORDER BY id", args):
        blocks = json.loads(row["hard_blocks_json"])
        out.append(
            GateRow(
                id=row["id"],
                panel_id=row["panel_id"],
                run_id=row["run_id"],
                origin=row["origin"],
                chapter=row["chapter"],
                candidate_id=row["candidate_id"],
                arm=row["arm"],
                candidate_sha256=row["candidate_sha256"],
                rubric=RubricRef(id=row["rubric_id"], version=row["rubric_version"], sha256=row["rubric_sha256"]),
                outcome=row["outcome"],
                code=row["code"],
                reasons=json.loads(row["reasons_json"]),
                hard_blocks=blocks["states"],
                evidence_sha256=row["evidence_sha256"],
                lesson_id=row["lesson_id"],
                created_at=row["created_at"],
            )
        )
    return out
