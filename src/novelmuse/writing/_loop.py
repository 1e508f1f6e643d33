"""The writer loop (seed 003 steps 4–5, 补证环, 返修环): from a confirmed fine outline to a checked draft.

    build (round 0) → writer ─ evidence requests? → evidence round k (≤ evidence_rounds) → writer … →
    detector gate ─ passed → a shadow draft for the author's decision (`muse drafts accept`)
                   └ blocked → repair k (≤ repair_rounds) → detector gate … → held_for_author

- The writer gets the WriterContext and nothing else: its messages are the `WRITE` / `WRITE_FINAL` task's, a
  pure function of the context. While evidence rounds remain its schema has an `evidence_requests` field; the
  call after the last allowed round (and every repair) uses a schema without one.
- The gate on each draft: the deterministic part, the `detector` role (the candidate and the hard
  constraints only) and the fact extractor on the CANDIDATE text, the two calls concurrently; assembled into
  one report bound to the candidate's sha256 (`DetectorGate.report`).
- A blocked draft goes back to the writer with the detector's blocking items only (`WRITE_REPAIR`: the same
  context, the last draft, the items) — at most `repair_rounds` times (seed cap 2); still blocked →
  `held_for_author`. A model the gate needs that is not configured → `skipped(...)`: not evaluated, never
  passed, no repair. A call that fails closed → `error(CODE)`. Every draft, manifest version and report is
  kept whatever the end.

The caller (the CLI, or replay's orchestrator) owns the model session: several chapters or arms may run
concurrently in one session; a run touches only its own rows and content-addressed files.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..book import Book
from ..editorial import NO_MODEL, StepOutcome
from ..errors import FailedClosed, InputError
from ..llm import BYTES_PER_OUTPUT_TOKEN, Bill, ModelSession, NotConfigured, StructuredResult, TaskCall, total_bill
from ..memory import extraction_context
from ..roles.detector import DETECT, DetectRequest
from ..roles.extractor import EXTRACT, ExtractRequest
from ..roles.writer import WRITE_REPAIR, ChapterDraft, FinalChapterDraft, WriteRepairRequest
from ..text import sha256_hex
from ._build import ContextBuild, build_context
from ._detector import DetectorReport
from ._drafts import (
    DraftDoc,
    DraftPurpose,
    begin_write,
    chapter_file_sha256,
    close_dead_writes,
    end_write,
    resume_write,
    store_draft,
    store_gate_call,
    store_report,
)
from ._evidence import answer_requests, evidence_budget
from ._gate import DetectorGate, gate_for
from ._manifest import Arm, ArmChoiceRef, EvidenceRef
from ._store import store_manifest
from ._write_doc import (
    DraftOut,
    ManifestOut,
    ReportOut,
    ResumeMode,
    ResumeOut,
    UsageOut,
    WriteDoc,
    WritePlan,
    WriteStatus,
)
from ._writer import draft_out, manifest_out

Draft = ChapterDraft | FinalChapterDraft
Progress = Callable[[str], None]


@dataclass
class _Kept:
    """What an interrupted write run had stored: drafts by seq, reports and gate answers by draft id."""

    drafts: dict[int, tuple[str, DraftDoc, str, str | None]]  # seq → (draft id, doc, sha256, call id)
    reports: dict[str, tuple[str, str, DetectorReport, list[str]]]  # draft id → (report id, sha256, report, calls)
    answers: dict[tuple[str, str], tuple[str, str]]  # (draft id, role) → (call id, value JSON)

    @classmethod
    def load(cls, book: Book, write_id: str) -> _Kept:
        db = book.db
        drafts = {
            int(r["seq"]): (r["id"], DraftDoc.model_validate_json(r["body"]), r["sha256"], r["call_id"])
            for r in db.execute(
                "SELECT * FROM write_drafts WHERE write_id = ? AND purpose != 'author_revision' ORDER BY seq",
                (write_id,),
            )
        }
        answers = {
            (r["draft_id"], r["role"]): (r["call_id"], r["value_json"])
            for r in db.execute("SELECT * FROM write_gate_calls WHERE write_id = ?", (write_id,))
        }
        reports: dict[str, tuple[str, str, DetectorReport, list[str]]] = {}
        for r in db.execute("SELECT * FROM detector_reports WHERE write_id = ? ORDER BY id", (write_id,)):
            calls = [answers[(r["draft_id"], role)][0] for role in _GATE_ROLES if (r["draft_id"], role) in answers]
            reports[r["draft_id"]] = (r["id"], r["sha256"], DetectorReport.model_validate_json(r["body"]), calls)
        return cls(drafts, reports, answers)


_GATE_ROLES = ("detector", "extractor")


@dataclass
class _Run:
    """One write run: the current build (manifest version), the gate, and everything recorded so far."""

    book: Book
    session: ModelSession
    write_id: str
    build: ContextBuild
    gate: DetectorGate
    progress: Progress
    steps: list[StepOutcome] = field(default_factory=list)
    manifests: list[ManifestOut] = field(default_factory=list)
    evidence: list[EvidenceRef] = field(default_factory=list)
    drafts: list[DraftOut] = field(default_factory=list)
    reports: list[ReportOut] = field(default_factory=list)
    usage: UsageOut = field(default_factory=UsageOut)
    texts: dict[str, str] = field(default_factory=dict)  # draft id → its text
    current: str = "write"  # the step under way (what a failure is recorded as)
    kept: _Kept | None = None  # what an interrupted run of this write had stored (resume)
    reused: ResumeOut | None = None

    def step(self, outcome: StepOutcome) -> None:
        self.steps.append(outcome)
        self.progress(f"{outcome.step}: {outcome.label}" + (f" — {outcome.detail}" if outcome.detail else ""))

    async def call(self, task: TaskCall[Any]) -> StructuredResult[Any]:
        """One model call in the caller's session, its tokens and cost added to the run's usage."""
        result = await self.session.call(task)
        cost = self.usage.cost
        self.usage = UsageOut(
            calls=self.usage.calls + 1,
            input_tokens=self.usage.input_tokens + result.input_tokens,
            output_tokens=self.usage.output_tokens + result.output_tokens,
            cost=None if cost is None or result.cost is None else cost + result.cost,
        )
        return result

    def keep(self, draft: Draft, purpose: DraftPurpose, repair_round: int, call_id: str) -> str:
        """Store a draft bound to the current manifest version; its id."""
        seq = len(self.drafts)
        doc = DraftDoc(
            chapter=self.build.chapter,
            arm=self.build.arm,
            purpose=purpose,
            evidence_round=self.build.manifest.round,
            repair_round=repair_round,
            manifest_sha256=self.build.manifest_sha256,
            text=draft.text,
            text_sha256=sha256_hex(draft.text),
            declared_facts=draft.declared_facts,
            evidence_requests=draft.evidence_requests if isinstance(draft, ChapterDraft) else [],
        )
        draft_id, sha = store_draft(self.book, self.write_id, seq, doc, call_id)
        self.drafts.append(draft_out(draft_id, seq, doc, sha, call_id))
        self.texts[draft_id] = draft.text
        return draft_id


def _reuse_draft(run: _Run, purpose: DraftPurpose, call: TaskCall[Any]) -> tuple[str, Draft] | None:
    """The draft an interrupted run stored for this very call (same seq, purpose and manifest version), if any."""
    if run.kept is None or (stored := run.kept.drafts.get(len(run.drafts))) is None:
        return None
    draft_id, doc, sha, call_id = stored
    if doc.purpose != purpose or doc.manifest_sha256 != run.build.manifest_sha256:
        run.kept = None  # the run took another path from here: nothing after this point is reused
        return None
    draft: Draft
    if call.schema is ChapterDraft:
        draft = ChapterDraft(text=doc.text, declared_facts=doc.declared_facts, evidence_requests=doc.evidence_requests)
    else:
        draft = FinalChapterDraft(text=doc.text, declared_facts=doc.declared_facts)
    run.drafts.append(draft_out(draft_id, len(run.drafts), doc, sha, call_id))
    run.texts[draft_id] = doc.text
    assert run.reused is not None
    run.reused.drafts += 1
    return draft_id, draft


async def _write(run: _Run, purpose: DraftPurpose, call: TaskCall[Any], repair_round: int = 0) -> tuple[str, Draft]:
    """One writer call (or the draft an interrupted run stored for it); the draft is stored before anything looks
    at it."""
    run.current = "write" if purpose != "repair" else f"repair_{repair_round}"
    reused = _reuse_draft(run, purpose, call)
    if reused is not None:
        draft_id, draft = reused
        run.step(StepOutcome.passed(run.current, f"draft {len(run.drafts) - 1}: kept from the interrupted run"))
        return draft_id, draft
    result = await run.call(call)
    draft = result.value
    draft_id = run.keep(draft, purpose, repair_round, result.call_id)
    asks = len(draft.evidence_requests) if isinstance(draft, ChapterDraft) else 0
    detail = f"draft {len(run.drafts) - 1}: {run.drafts[-1].chars} characters"
    detail += f", {len(draft.declared_facts)} declared fact(s)" + (f", {asks} evidence request(s)" if asks else "")
    run.step(StepOutcome.passed(run.current, detail))
    return draft_id, draft


async def _optional(run: _Run, draft_id: str, role: str, task: TaskCall[Any]) -> tuple[Any, StepOutcome, str | None]:
    """A gate call a book may leave unconfigured: (value, passed, call id), or (None, skipped(no model
    configured), None). The answer is stored as soon as the call ends; an answer an interrupted run stored for
    this draft is reused instead of calling again."""
    if not run.session.is_configured(role):
        return None, StepOutcome.skipped(role, NO_MODEL), None
    if run.kept is not None and (stored := run.kept.answers.get((draft_id, role))) is not None:
        assert run.reused is not None
        run.reused.calls += 1
        return task.schema.model_validate_json(stored[1]), StepOutcome.passed(role), stored[0]
    try:
        result = await run.call(task)
    except NotConfigured:
        return None, StepOutcome.skipped(role, NO_MODEL), None
    store_gate_call(run.book, run.write_id, draft_id, role, result.call_id, result.value.model_dump_json())
    return result.value, StepOutcome.passed(role), result.call_id


async def _detect(run: _Run, draft_id: str, draft: Draft) -> DetectorReport:
    """The gate on one draft: the detector role and the extractor, concurrently, then the report (the
    deterministic part included), stored bound to the draft."""
    run.current = "detector"
    if run.kept is not None and (stored := run.kept.reports.get(draft_id)) is not None:
        report_id, sha, report, calls = stored
        run.reports.append(ReportOut(id=report_id, draft_id=draft_id, sha256=sha, report=report, call_ids=calls))
        assert run.reused is not None
        run.reused.reports += 1
        run.step(report.outcome.model_copy(update={"detail": _figures(report) + " — kept from the interrupted run"}))
        return report
    text = draft.text
    detect = DETECT.render(
        DetectRequest(candidate=text, candidate_sha256=sha256_hex(text), constraints=run.gate.constraint_lines())
    )
    got = await asyncio.gather(
        _optional(run, draft_id, "detector", detect),
        _optional(run, draft_id, "extractor", extract_call(run.build, text)),
        return_exceptions=True,
    )
    for outcome in got:
        if isinstance(outcome, BaseException):
            raise outcome  # both calls have ended: nothing is left running
    (semantic, semantic_step, semantic_call), (facts, facts_step, facts_call) = got  # type: ignore[misc]
    report = run.gate.report(text, draft.declared_facts, semantic, semantic_step, facts, facts_step)
    report_id, sha = store_report(run.book, run.write_id, draft_id, report)
    calls = [c for c in (semantic_call, facts_call) if c is not None]
    run.reports.append(ReportOut(id=report_id, draft_id=draft_id, sha256=sha, report=report, call_ids=calls))
    run.step(report.outcome.model_copy(update={"detail": _figures(report)}))
    return report


def _figures(report: DetectorReport) -> str:
    figures = report.computed
    coverage = "n/a (no hard constraint)" if figures.constraints == 0 else f"{figures.coverage:.2f}"
    return f"coverage {coverage}, {figures.high_severity} blocking, {figures.warnings} warning(s)"


def repair_items(report: DetectorReport) -> list[str]:
    """The blocking items as the writer reads them: the constraint id (never a card id) or the kind of check,
    what failed, and the offending sentence."""
    lines = []
    for item in report.blocking_items():
        label = item.id if item.check == "constraint" else item.check
        quote = f"（正文：「{item.quote}」）" if item.quote else ""
        lines.append(f"[{label}] {item.detail}{quote}")
    return lines


async def _loop(run: _Run) -> tuple[WriteStatus, str | None, str | None]:
    """(status, reason, the last draft's id); raises what fails closed."""
    cfg = run.book.config.writing
    if not run.session.is_configured("writer"):
        run.step(StepOutcome.skipped("write", NO_MODEL))
        return "skipped", f"write: {NO_MODEL}", None
    draft_id, draft = await _write(run, "draft", run.build.rendered.call)
    rounds = 0
    while isinstance(draft, ChapterDraft) and draft.evidence_requests:
        rounds += 1  # the writer could ask only while rounds < evidence_rounds: its schema had the field
        run.current = f"evidence_{rounds}"
        got = answer_requests(run.build, draft.evidence_requests, rounds, allow_requests=rounds < cfg.evidence_rounds)
        run.build = got.build
        store_manifest(run.book, run.build)
        run.manifests.append(manifest_out(run.book, run.build))
        run.evidence += got.refs
        run.step(StepOutcome.passed(f"evidence_{rounds}", f"{got.served} of {len(got.refs)} request(s) served"))
        draft_id, draft = await _write(run, "evidence", run.build.rendered.call)
    repairs = 0
    while True:
        report = await _detect(run, draft_id, draft)
        if report.outcome.status == "passed":
            return "passed", None, draft_id
        skipped = [p.step for p in (report.semantic, report.facts) if p.status == "skipped"]
        if skipped:
            return "skipped", f"{' and '.join(skipped)}: {NO_MODEL} — the draft was not fully checked", draft_id
        if repairs >= cfg.repair_rounds:
            return "held_for_author", f"still blocked after {repairs} repair round(s)", draft_id
        repairs += 1
        call = WRITE_REPAIR.render(
            WriteRepairRequest(context=run.build.context, draft=draft.text, items=repair_items(report))
        )
        draft_id, draft = await _write(run, "repair", call, repairs)


def require_tool_less(book: Book) -> None:
    """WRITER_TOOLS_FORBIDDEN (exit 2) when the writer or the detector is served by a provider that would send
    its output schema as a forced tool call (an Anthropic-compatible endpoint with ``structured = "tool"``): both
    roles are tool-less (seed 003: 无工具 Writer; 隔离 Semantic Detector, 无工具/会话)."""
    for role in ("writer", "detector"):
        target = book.config.role_target(role)
        if target is None:
            continue
        provider = book.config.providers[target[0]]
        if getattr(provider, "structured", None) == "tool":
            raise InputError(
                "WRITER_TOOLS_FORBIDDEN",
                f"the {role} is served by provider {target[0]!r}, which sends the output schema as a forced tool "
                '(structured = "tool")',
                f"book.toml [providers.{target[0]}]",
                'the writer and the detector are tool-less: use structured = "output_format" or another provider '
                "for these roles",
            )


def _interrupted_run(book: Book, build: ContextBuild, writer_config_sha256: str | None) -> sqlite3.Row | None:
    """The newest interrupted write run this build may resume: same chapter, arm, first manifest, writer
    configuration and chapter file (the file an accept may replace), begun by `muse write`."""
    close_dead_writes(book.db)
    row: sqlite3.Row | None = book.db.execute(
        "SELECT * FROM write_runs WHERE chapter = ? AND arm = ? AND origin = 'write' ORDER BY id DESC LIMIT 1",
        (build.chapter, build.arm),
    ).fetchone()
    if row is None or row["status"] != "interrupted" or row["manifest_sha256"] != build.manifest_sha256:
        return None
    if row["writer_config_sha256"] != writer_config_sha256:
        return None
    if row["chapter_file_sha256"] != chapter_file_sha256(book, build.chapter):
        return None
    return row


def extract_call(build: ContextBuild, text: str) -> TaskCall[Any]:
    """The extractor's call on a candidate, told the cards and the open foreshadows as of N−1."""
    inputs = build.inputs
    memory = extraction_context(inputs.book, build.chapter, inputs.cards, state=inputs.state, outline=inputs.outline)
    return EXTRACT.render(
        ExtractRequest(
            chapter=build.chapter,
            title=inputs.outline.title,
            chapter_text=text,
            known_cards=[line.text for line in memory.known_cards],
            open_foreshadows=[line.text for line in memory.open_foreshadows],
            max_plants=inputs.book.config.memory.max_plants_per_chapter,
            unit=inputs.book.heading_unit,  # named the book's way, like every extraction
        )
    )


def write_bill(session: ModelSession, build: ContextBuild, *, margin: int = 0) -> Bill:
    """The most one write of this chapter may cost, before anything is sent: the writer's first draft, every
    evidence round and every repair; the detector and the extractor on every draft that is checked (the first
    and each repair) — each call within `[calls] max_attempts` requests (see `llm._bill`). `margin`: input tokens
    added to every call (a later chapter of a stretch bounded from this chapter's prompts)."""
    cfg = build.inputs.book.config
    draft_tokens = cfg.calls.max_output_tokens * BYTES_PER_OUTPUT_TOKEN
    checked = 1 + cfg.writing.repair_rounds
    parts = []
    if session.is_configured("writer"):
        # a later call holds the evidence served (≤ the reserve, ≤ 4 bytes a character) or the draft to repair
        extra = max(4 * evidence_budget(build), draft_tokens + 2048)
        writes = 1 + cfg.writing.evidence_rounds + cfg.writing.repair_rounds
        parts.append(session.bill(build.rendered.call, writes, extra_input_tokens=extra + margin))
    gate = gate_for(build)
    if session.is_configured("detector"):
        detect = DETECT.render(DetectRequest(candidate="", candidate_sha256="", constraints=gate.constraint_lines()))
        parts.append(session.bill(detect, checked, extra_input_tokens=draft_tokens + margin))
    if session.is_configured("extractor"):
        parts.append(session.bill(extract_call(build, ""), checked, extra_input_tokens=draft_tokens + margin))
    notes = [] if parts else ["no model is configured for the writer, the detector or the extractor: no call"]
    return total_bill(parts, notes)


async def write_chapter(
    book: Book,
    session: ModelSession,
    chapter: int,
    *,
    arm: Arm = "C",
    progress: Progress | None = None,
    build: ContextBuild | None = None,
    arm_choice: ArmChoiceRef | None = None,
    shadow: bool = False,
    writer_config_sha256: str | None = None,
    resume: ResumeMode = "auto",
    origin: Literal["write", "replay"] = "write",
    on_plan: Callable[[WritePlan], None] | None = None,
) -> WriteDoc:
    """Write chapter `chapter` from its confirmed outline with arm `arm` (see the module docstring): a shadow
    draft, never the chapter file.

    A chapter that has a file already is written only with `shadow` (CHAPTER_EXISTS otherwise: the author's text
    is never replaced by a write; an accept of the shadow draft asks for it explicitly). `resume` "auto" resumes
    the newest interrupted run of the same chapter, arm, first manifest and writer configuration, "require" fails
    (WRITE_NOTHING_TO_RESUME) when there is none, "never" starts afresh. `on_plan` is told the bill and the resume
    before the first call. `build` is the chapter's context when the caller built it already (replay builds both
    arms first to check they share one frame); it must be a first build (round 0) of this chapter and arm.
    `arm_choice` is how `muse write` chose the arm (promoted, baseline or forced), recorded in the manifest;
    `writer_config_sha256` the writer configuration receipts bind, recorded with the run (the author's decisions
    are counted per configuration)."""
    require_tool_less(book)
    if not shadow and book.probe_chapter_file(chapter) is not None:
        raise InputError(
            "CHAPTER_EXISTS",
            f"{book.chapter_label(chapter)} already has a file: `muse write` never replaces the author's text",
            str(book.chapter_path(chapter)),
            f"`muse write {chapter} --shadow` writes a draft beside it for comparison",
        )
    if build is None:
        build = build_context(book, chapter, arm=arm, arm_choice=arm_choice)
    elif (build.chapter, build.arm, build.manifest.round) != (chapter, arm, 0):
        raise ValueError(f"a build of chapter {build.chapter} arm {build.arm} round {build.manifest.round} was given")
    interrupted = _interrupted_run(book, build, writer_config_sha256) if resume != "never" else None
    if resume == "require" and interrupted is None:
        raise InputError(
            "WRITE_NOTHING_TO_RESUME",
            f"no interrupted write of {book.chapter_label(chapter)} (arm {arm}) can be resumed: none, or its context,"
            " writer configuration or chapter file changed since",
            "muse write --resume",
            f"run `muse write {chapter}` to start a new write",
        )
    kept = _Kept.load(book, interrupted["id"]) if interrupted is not None else None
    reused = ResumeOut(write_id=interrupted["id"], stored_drafts=len(kept.drafts)) if interrupted and kept else None
    bill = write_bill(session, build)
    if on_plan is not None:
        on_plan(WritePlan(chapter=chapter, arm=arm, shadow=shadow, bill=bill, resume=reused))
    if interrupted is not None:
        write_id, began = interrupted["id"], interrupted["chapter_file_sha256"]
        resume_write(book, write_id)
    else:
        write_id, began = begin_write(book, build, writer_config_sha256=writer_config_sha256, origin=origin)
    run = _Run(book, session, write_id, build, gate_for(build), progress or (lambda _: None))
    run.kept, run.reused = kept, reused
    run.manifests.append(manifest_out(book, build))
    run.step(StepOutcome.passed("context", f"manifest {build.manifest_sha256[:12]}"))
    status: WriteStatus
    error_code = error = final = None
    try:
        status, reason, final = await _loop(run)
    except FailedClosed as exc:  # ModelCallFailed included: every draft and report so far stays recorded
        status, reason, error_code, error = "error", None, exc.code, exc.render()
        run.step(StepOutcome.error(run.current, exc.code, exc.what))
    doc = WriteDoc(
        ok=status == "passed",
        write_id=write_id,
        run_id=session.run_id if session.started else None,
        chapter=chapter,
        arm=arm,
        arm_choice=build.manifest.arm_choice,
        status=status,
        reason=reason,
        error_code=error_code,
        error=error,
        shadow=began is not None,
        steps=run.steps,
        manifests=run.manifests,
        evidence=run.evidence,
        drafts=run.drafts,
        reports=run.reports,
        final_draft_id=final,
        bill=bill,
        resumed=run.reused,
        usage=run.usage,
    )
    end_write(book, doc)
    return doc
