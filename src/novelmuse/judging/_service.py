"""Judge one item end to end: build the blind input, check leaks, run the panel through the model layer,
persist the report and the sealed arm map, unblind after the panel, adjudicate the quality gate (with the rule
layer's hard blocks the request carries) and store every gate decision with its inputs, register lessons and
compute the run's reliability figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Literal

from pydantic import Field

from ..book import Book
from ..errors import InputError, MuseError
from ..llm import ModelSession, RoleBill
from ..rules import HardBlockReport
from ..store import new_id, put_texts, transaction, utc_now
from ._adjudicate import GateDecision, adjudicate_quality_gate, merge_hard_blocks
from ._blind import BlindItem, SealedArmMap, build_blind_item, judge_call
from ._doc import JudgeDoc
from ._gates import GateRow, gate_rows, record_gate_decisions
from ._leak import check_future_text
from ._lessons import build_lessons, closest_reason, register_lessons
from ._panel import JUDGE_ROLE, JudgeRecord, check_item_leaks, run_panel, session_judge
from ._reliability import PanelScores, Reliability, reliability
from ._reports import Aggregate, PanelReport, RubricRef, aggregate
from ._request import JudgeRequest
from ._rubrics import PROFILES, Rubric, as_fraction, load_rubric

#: Seed 000: each fresh judge makes at most three calls (format corrections and transient retries share them).
MAX_CALLS_PER_JUDGE = 3
#: A panel: two judges, and a third only when they disagree by more than the rubric allows.
PANEL_JUDGES = 3


class LessonRef(JudgeDoc):
    id: str
    candidate_id: str
    created: bool


#: The version of the `muse judge` / `muse judge-summary` documents (2: snake_case keys; 1 was camelCase).
JUDGE_SCHEMA_VERSION = 2


class JudgeOutcome(JudgeDoc):
    """The result of `muse judge` (its --json document)."""

    schema_version: int = JUDGE_SCHEMA_VERSION
    outcome: Literal["stable", "invalid", "invalid_unstable", "skipped"]
    reason: str | None = None
    run_id: str | None = None
    rubric: RubricRef
    item_id: str = ""  # the item as the author named it (--item), or derived from the candidates' sha256
    item_ref: str  # the blind reference the judges see
    arm_map_sha256: str
    report: PanelReport | None = None
    unblinded: dict[str, str] | None = None  # candidateId → arm, opened only after the panel ended
    gate: list[GateDecision] = Field(default_factory=list)
    reliability: Reliability | None = None
    lessons: list[LessonRef] = Field(default_factory=list)
    sources: dict[str, str] = Field(default_factory=dict)  # arm → where the caller got it (e.g. the file path)
    #: quality_gate: the evidence pack the judges read (source, chapter, sha256, items) and, per arm, the rule
    #: layer's hard-block report — what every gate decision was decided on
    evidence: dict[str, Any] | None = None
    hard_block_reports: dict[str, HardBlockReport] = Field(default_factory=dict)  # arm → the rule layer's report
    #: a structured_summary rubric (fine_outline_replay): per candidate id, the seed's minimal report shape
    #: {profile, scores: {dimension: {score, evidence}}}, stored beside the full report
    minimal: dict[str, dict[str, Any]] | None = None


def panel_scores(report: PanelReport) -> PanelScores:
    """The judges' scores of one panel, per cell and in slot order, for the reliability figures."""
    cells: dict[tuple[str, str], list[Fraction]] = {}
    for judge in sorted(report.judges, key=lambda j: j.slot):
        if judge.outcome == "ok":
            for s in judge.scores:
                cells.setdefault((s.candidate_id, s.dimension_id), []).append(as_fraction(s.score))
    return PanelScores(status=report.status, third_judge=report.third_judge, cells=cells)


def run_reliability(book: Book, run_id: str) -> Reliability:
    """Reliability over every finished panel of one run, from the stored reports."""
    rows = book.db.execute(
        "SELECT report_json FROM judge_panels WHERE run_id = ? AND report_json IS NOT NULL ORDER BY id", (run_id,)
    ).fetchall()
    return reliability([panel_scores(PanelReport.model_validate_json(r[0])) for r in rows])


def _seal_arm_map(book: Book, panel_id: str, run_id: str, item: BlindItem, rubric: Rubric) -> None:
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO judge_panels (id, run_id, item_ref, profile, rubric_id, rubric_version, rubric_sha256, "
            "scene_type, status, third_judge, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', 0, ?)",
            (
                panel_id,
                run_id,
                item.blind.itemRef,
                rubric.profile,
                rubric.id,
                rubric.version,
                rubric.sha256,
                item.blind.policy.sceneType,
                utc_now(),
            ),
        )
        conn.execute(
            "INSERT INTO judge_arm_maps (panel_id, sha256, payload, sealed_at) VALUES (?, ?, ?, ?)",
            (panel_id, item.arm_map.sha256, item.arm_map.payload, utc_now()),
        )
        put_texts(conn, [c.text for c in item.blind.candidates])  # what the quote offsets index into


def _store_report(book: Book, report: PanelReport, records: Sequence[JudgeRecord]) -> None:
    with transaction(book.db) as conn:
        conn.execute(
            "UPDATE judge_panels SET status = ?, error_code = ?, third_judge = ?, report_json = ?, report_sha256 = ? "
            "WHERE id = ?",
            (
                report.status,
                report.error_code,
                int(report.third_judge),
                report.model_dump_json(),
                report.report_sha256,
                report.panel_id,
            ),
        )
        for entry, rec in zip(report.judges, sorted(records, key=lambda r: r.slot), strict=True):
            conn.execute(
                "INSERT INTO judge_reports (panel_id, slot, call_id, receipt_ids, model, input_sha256, "
                "report_sha256, report_json, error_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    report.panel_id,
                    entry.slot,
                    entry.call_id,
                    json.dumps(entry.receipt_ids),
                    entry.model,
                    entry.input_sha256,
                    entry.report_sha256,
                    rec.report.model_dump_json() if rec.ok and rec.report is not None else None,
                    entry.error_code,
                ),
            )


def minimal_report(
    report: PanelReport, rubric: Rubric, records: Sequence[JudgeRecord]
) -> dict[str, dict[str, Any]] | None:
    """Seed 000's minimal shape of a stable structured_summary panel, per candidate id: {profile, scores: {dim:
    {score, evidence}}} — the panel's score and, as evidence, the structured summary of the judge closest to it."""
    if rubric.evidence != "structured_summary" or report.status != "stable":
        return None
    out: dict[str, dict[str, Any]] = {}
    for c in report.candidates:
        scores = {
            s.dimension_id: {
                "score": s.score,
                "evidence": closest_reason(records, c.candidate_id, s.dimension_id, as_fraction(s.score)),
            }
            for s in report.scores
            if s.candidate_id == c.candidate_id
        }
        out[c.candidate_id] = {"profile": rubric.profile, "scores": scores}
    return out


def _store_minimal(
    book: Book, report: PanelReport, rubric: Rubric, records: Sequence[JudgeRecord]
) -> dict[str, dict[str, Any]] | None:
    minimal = minimal_report(report, rubric, records)
    if minimal is not None:
        with transaction(book.db) as conn:
            conn.execute(
                "UPDATE judge_panels SET minimal_json = ? WHERE id = ?",
                (json.dumps(minimal, ensure_ascii=False), report.panel_id),
            )
    return minimal


def open_arm_map(book: Book, report: PanelReport) -> dict[str, str]:
    """Unblind a finished panel: load its sealed arm map, check the hash sealed into the report, mark it opened."""
    row = book.db.execute(
        "SELECT m.sha256, m.payload, p.status FROM judge_arm_maps m JOIN judge_panels p ON p.id = m.panel_id "
        "WHERE m.panel_id = ?",
        (report.panel_id,),
    ).fetchone()
    if row is None or row["status"] == "running":
        raise InputError(
            "JUDGE_ARM_MAP_UNAVAILABLE",
            "the arm map opens only after its panel has ended",
            f"panel {report.panel_id}",
            "wait for the panel to finish",
        )
    arms = SealedArmMap(row["payload"], row["sha256"]).open(report.arm_map_sha256)
    with transaction(book.db) as conn:
        conn.execute(
            "UPDATE judge_arm_maps SET opened_at = COALESCE(opened_at, ?) WHERE panel_id = ?",
            (utc_now(), report.panel_id),
        )
    return arms


def _blind_item(book: Book, request: JudgeRequest, rubric: Rubric) -> BlindItem:
    return build_blind_item(
        item_id=request.item_id,
        seed=request.seed,
        rubric=rubric,
        candidates=request.candidates,
        scene_type=request.scene_type,
        outline=request.outline,
        assertions=request.assertions,
        constraints=request.constraints,
        context=request.context,
        max_calls_per_judge=book.config.calls.max_attempts,
        given_order=request.given_order,
        unknown_verdicts=request.unknown_verdicts,
    )


def panel_bill(book: Book, session: ModelSession, request: JudgeRequest) -> list[RoleBill]:
    """The most the 2+1 panel on `request` may cost, before anything is sent: two judges and the conditional
    third, each within `[calls] max_attempts` requests; [] when no judge model is configured."""
    if not session.is_configured(JUDGE_ROLE):
        return []
    item = _blind_item(book, request, load_rubric(request.profile))
    return [session.bill(judge_call(item.blind), PANEL_JUDGES)]


async def judge_item(
    book: Book,
    session: ModelSession,
    request: JudgeRequest,
    *,
    on_judge: Callable[[int, str], None] | None = None,
) -> JudgeOutcome:
    """Judge one item with the 2+1 panel, in the session the entry point opened; a book without a judge model
    ends skipped(no model configured). The deterministic steps (rubric load, blind input, leak check) run
    either way."""
    rubric = load_rubric(request.profile)
    if book.config.calls.max_attempts > MAX_CALLS_PER_JUDGE:
        raise InputError(
            "JUDGE_MAX_ATTEMPTS",
            f"[calls] max_attempts = {book.config.calls.max_attempts}, but a judge may make at most "
            f"{MAX_CALLS_PER_JUDGE} calls (corrections and transient retries share those three calls)",
            "book.toml [calls]",
            f"set max_attempts to {MAX_CALLS_PER_JUDGE} or less",
        )
    item = _blind_item(book, request, rubric)
    check_item_leaks(item, request.guard)
    check_future_text(item.blind, request.future_texts, f"blind input of {item.blind.itemRef}")
    base = JudgeOutcome(
        outcome="skipped",
        rubric=RubricRef(id=rubric.id, version=rubric.version, sha256=rubric.sha256),
        item_id=request.item_id,
        item_ref=item.blind.itemRef,
        arm_map_sha256=item.arm_map.sha256,
        sources=dict(request.sources),
        evidence=dict(request.evidence) if request.evidence is not None else None,
        hard_block_reports=dict(request.hard_blocks or {}),
    )
    if not session.is_configured(JUDGE_ROLE):
        return base.model_copy(update={"reason": "no model configured"})
    run_id = session.start().run_id  # the panel is recorded under the run before its first call
    panel_id = new_id("jp_")
    _seal_arm_map(book, panel_id, run_id, item, rubric)
    try:
        report, records = await run_panel(
            item,
            rubric,
            session_judge(session, rubric, request.guard),
            guard=request.guard,
            run_id=run_id,
            panel_id=panel_id,
            on_judge=on_judge,
        )
    except MuseError as exc:  # e.g. the vault or the store refused: the panel ended without a report
        with transaction(book.db) as conn:
            conn.execute(
                "UPDATE judge_panels SET status = 'invalid', error_code = ? WHERE id = ?", (exc.code, panel_id)
            )
        raise
    _store_report(book, report, records)
    minimal = _store_minimal(book, report, rubric, records)
    arms = open_arm_map(book, report)
    gate: list[GateDecision] = []
    if rubric.adjudicated:
        gate = _adjudicate_and_record(book, request, report, rubric, arms)
    lessons: list[LessonRef] = []
    if report.status == "stable" and request.persist_lessons:
        built = build_lessons(report, rubric, records)
        stored = register_lessons(book.db, built, run_id=run_id, panel_id=panel_id, rubric=rubric)
        lessons = [
            LessonRef(id=lid, candidate_id=lesson.candidate_id, created=created)
            for lesson, (lid, created) in zip(built, stored, strict=True)
        ]
    return base.model_copy(
        update={
            "outcome": report.status,
            "reason": report.error_code,
            "run_id": run_id,
            "report": report,
            "unblinded": arms,
            "gate": gate,
            "reliability": reliability([panel_scores(report)]),
            "lessons": lessons,
            "minimal": minimal,
        }
    )


def _adjudicate_and_record(
    book: Book, request: JudgeRequest, report: PanelReport, rubric: Rubric, arms: dict[str, str]
) -> list[GateDecision]:
    """Adjudicate every candidate with its own hard blocks (the rule layer's states, overrides applied) and store
    each decision with its inputs and gate lesson."""
    computed = request.hard_blocks or {}
    gate = [
        adjudicate_quality_gate(
            report,
            rubric,
            c.candidate_id,
            merge_hard_blocks(
                computed[arms[c.candidate_id]].states() if arms[c.candidate_id] in computed else None,
                request.hard_block_overrides,
            ),
        )
        for c in report.candidates
    ]
    ids = record_gate_decisions(
        book.db,
        report,
        rubric,
        gate,
        arms,
        hard_blocks=request.hard_blocks,
        overrides=request.hard_block_overrides,
        evidence=request.evidence,
        chapter=request.chapter,
        label=None if request.chapter is None else book.chapter_label(request.chapter),
        origin=request.origin,
        record_key=request.record_key,
        persist_lessons=request.persist_lessons,
    )
    return [d.model_copy(update={"record_id": rid}) for d, rid in zip(gate, ids, strict=True)]


class PanelRow(JudgeDoc):
    panel_id: str
    run_id: str
    item_ref: str
    status: str
    scene_type: str | None
    third_judge: bool


class RubricSummary(JudgeDoc):
    """Every finished panel scored under one rubric version: per-arm means, deltas and reliability."""

    aggregate: Aggregate
    reliability: Reliability
    panels: list[PanelRow]


class JudgeSummary(JudgeDoc):
    """The `muse judge-summary` document: one block per rubric version (scores never mix across versions)."""

    schema_version: int = JUDGE_SCHEMA_VERSION
    runs: list[str]
    rubrics: list[RubricSummary]
    gates: list[GateRow] = Field(default_factory=list)  # every stored quality-gate decision, with its inputs


def summarize(book: Book, *, run_ids: Sequence[str] = (), profile: str | None = None) -> JudgeSummary:
    """Aggregate stored panels (of `run_ids`, or all) by rubric version: arm means, B−A / C−A deltas, reliability.

    Arm maps are opened here (each checked against the hash sealed in its report); invalid and
    invalid_unstable items are listed but never enter the means or deltas.
    """
    if profile is not None and profile not in PROFILES:
        raise InputError(
            "JUDGE_PROFILE_UNKNOWN", f"unknown profile {profile!r}", "--profile", f"use one of {', '.join(PROFILES)}"
        )
    sql = "SELECT report_json FROM judge_panels WHERE report_json IS NOT NULL"
    args: list[str] = []
    if run_ids:
        sql += f" AND run_id IN ({', '.join('?' for _ in run_ids)})"
        args += list(run_ids)
    if profile is not None:
        sql += " AND profile = ?"
        args.append(profile)
    reports = [PanelReport.model_validate_json(r[0]) for r in book.db.execute(sql + " ORDER BY id", args)]
    groups: dict[tuple[str, int, str], list[PanelReport]] = {}
    for rep in reports:
        groups.setdefault((rep.rubric.id, rep.rubric.version, rep.rubric.sha256), []).append(rep)
    blocks: list[RubricSummary] = []
    for (rid, version, sha), reps in groups.items():
        rubric = _rubric_for(reps[0].profile, rid, version, sha)
        with_arms = [(rep, open_arm_map(book, rep) if rep.status == "stable" else {}) for rep in reps]
        blocks.append(
            RubricSummary(
                aggregate=aggregate(rubric, with_arms),
                reliability=reliability([panel_scores(rep) for rep in reps]),
                panels=[
                    PanelRow(
                        panel_id=rep.panel_id,
                        run_id=rep.run_id,
                        item_ref=rep.item_ref,
                        status=rep.status,
                        scene_type=rep.scene_type,
                        third_judge=rep.third_judge,
                    )
                    for rep in reps
                ],
            )
        )
    gates = gate_rows(book.db, run_ids=run_ids) if profile in (None, "quality_gate") else []
    runs = sorted({rep.run_id for rep in reports} | {g.run_id for g in gates})
    return JudgeSummary(runs=runs, rubrics=blocks, gates=gates)


def _rubric_for(profile: str, rubric_id: str, version: int, sha256: str) -> Rubric:
    rubric = load_rubric(profile, version=version)
    if (rubric.id, rubric.sha256) != (rubric_id, sha256):
        raise InputError(
            "JUDGE_RUBRIC_MIXED",
            f"stored reports were scored with {rubric_id} v{version} (sha256 {sha256[:12]}…), which is not the "
            "registered rubric of that version",
            "judge_panels",
            "restore the registered rubric file; a changed rubric is a new version",
        )
    return rubric
