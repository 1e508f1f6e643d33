"""The writer loop (seed 003 steps 4–5, 补证环, 返修环): from a confirmed fine outline to a checked draft.

    build (round 0) → writer ─ evidence requests? → evidence round k (≤ evidence_rounds) → writer … →
    detector gate ─ passed → (apply) → done
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..book import Book
from ..editorial import NO_MODEL, StepOutcome, review_chapters
from ..errors import FailedClosed, InputError
from ..llm import ModelSession, NotConfigured, StructuredResult, TaskCall
from ..memory import extraction_context
from ..roles.detector import DETECT, DetectRequest
from ..roles.extractor import EXTRACT, ExtractRequest
from ..roles.writer import WRITE_REPAIR, ChapterDraft, FinalChapterDraft, WriteRepairRequest
from ..text import sha256_hex
from ._build import ContextBuild, build_context
from ._detector import DetectorReport
from ._drafts import DraftDoc, DraftPurpose, apply_draft, begin_write, end_write, store_draft, store_report
from ._evidence import answer_requests
from ._gate import DetectorGate
from ._manifest import Arm, ArmChoiceRef, EvidenceRef
from ._store import store_manifest
from ._write_doc import DraftOut, ManifestOut, ReportOut, UsageOut, WriteDoc, WriteStatus
from ._writer import draft_out, gate_for, manifest_out

Draft = ChapterDraft | FinalChapterDraft
Progress = Callable[[str], None]


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


async def _write(run: _Run, purpose: DraftPurpose, call: TaskCall[Any], repair_round: int = 0) -> tuple[str, Draft]:
    """One writer call; the draft is stored before anything looks at it."""
    run.current = "write" if purpose != "repair" else f"repair_{repair_round}"
    result = await run.call(call)
    draft: Draft = result.value
    draft_id = run.keep(draft, purpose, repair_round, result.call_id)
    asks = len(draft.evidence_requests) if isinstance(draft, ChapterDraft) else 0
    detail = f"draft {len(run.drafts) - 1}: {run.drafts[-1].chars} characters"
    detail += f", {len(draft.declared_facts)} declared fact(s)" + (f", {asks} evidence request(s)" if asks else "")
    run.step(StepOutcome.passed(run.current, detail))
    return draft_id, draft


async def _optional(run: _Run, role: str, task: TaskCall[Any]) -> tuple[Any, StepOutcome, str | None]:
    """A gate call a book may leave unconfigured: (value, passed, call id), or (None, skipped(no model
    configured), None)."""
    if not run.session.is_configured(role):
        return None, StepOutcome.skipped(role, NO_MODEL), None
    try:
        result = await run.call(task)
    except NotConfigured:
        return None, StepOutcome.skipped(role, NO_MODEL), None
    return result.value, StepOutcome.passed(role), result.call_id


def _extract_call(run: _Run, text: str) -> TaskCall[Any]:
    """The extractor's call on a candidate, told the cards and the open foreshadows as of N−1."""
    inputs = run.build.inputs
    memory = extraction_context(
        inputs.book, run.build.chapter, inputs.cards, state=inputs.state, outline=inputs.outline
    )
    return EXTRACT.render(
        ExtractRequest(
            chapter=run.build.chapter,
            title=inputs.outline.title,
            chapter_text=text,
            known_cards=[line.text for line in memory.known_cards],
            open_foreshadows=[line.text for line in memory.open_foreshadows],
            max_plants=inputs.book.config.memory.max_plants_per_chapter,
            unit=inputs.book.heading_unit,  # named the book's way, like every extraction
        )
    )


async def _detect(run: _Run, draft_id: str, draft: Draft) -> DetectorReport:
    """The gate on one draft: the detector role and the extractor, concurrently, then the report (the
    deterministic part included), stored bound to the draft."""
    run.current = "detector"
    text = draft.text
    detect = DETECT.render(
        DetectRequest(candidate=text, candidate_sha256=sha256_hex(text), constraints=run.gate.constraint_lines())
    )
    got = await asyncio.gather(
        _optional(run, "detector", detect),
        _optional(run, "extractor", _extract_call(run, text)),
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
    out, figures = report.outcome, report.computed
    detail = f"coverage {figures.coverage:.2f}, {figures.high_severity} blocking, {figures.warnings} warning(s)"
    run.step(out.model_copy(update={"detail": detail}))
    return report


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


async def write_chapter(
    book: Book,
    session: ModelSession,
    chapter: int,
    *,
    arm: Arm = "C",
    apply: bool = False,
    review: bool = False,
    progress: Progress | None = None,
    build: ContextBuild | None = None,
    arm_choice: ArmChoiceRef | None = None,
) -> WriteDoc:
    """Write chapter `chapter` from its confirmed outline with arm `arm` (see the module docstring).

    With `apply`, a passed draft becomes ``chapters/NNNN.md`` if that file is still what it was when the run
    began (absent, or the same bytes); otherwise FILE_CHANGED_ON_DISK is raised after the run is recorded.
    With `review` (which needs `apply`: the editorial loop reviews chapter files), the applied chapter then goes
    through the editorial loop in the same session (its revision is kept, not applied: `muse review N
    --apply`). `build` is the chapter's context when the caller built it already (replay builds both arms
    first to check they share one frame); it must be a first build (round 0) of this chapter and arm.
    `arm_choice` is how `muse write` chose the arm (promoted, baseline or forced), recorded in the manifest."""
    if review and not apply:
        raise InputError(
            "USAGE_WRITE_REVIEW",
            "--review hands the passed draft to the editorial loop, which reviews chapter files: it needs --apply",
            "command line",
            f"run `muse write {chapter} --apply --review`",
        )
    require_tool_less(book)
    if build is None:
        build = build_context(book, chapter, arm=arm, arm_choice=arm_choice)
    elif (build.chapter, build.arm, build.manifest.round) != (chapter, arm, 0):
        raise ValueError(f"a build of chapter {build.chapter} arm {build.arm} round {build.manifest.round} was given")
    write_id, began = begin_write(book, build)
    run = _Run(book, session, write_id, build, gate_for(build), progress or (lambda _: None))
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
        steps=run.steps,
        manifests=run.manifests,
        evidence=run.evidence,
        drafts=run.drafts,
        reports=run.reports,
        final_draft_id=final,
        usage=run.usage,
    )
    end_write(book, doc)
    if apply and status == "passed" and final is not None:
        path = apply_draft(book, chapter, run.texts[final], build.inputs.outline.title, began)
        doc = doc.model_copy(update={"applied": str(path.relative_to(book.root))})
        doc.steps.append(StepOutcome.passed("apply", doc.applied or ""))
        end_write(book, doc)
        if review:
            run.progress("review: the editorial loop on the applied chapter")
            doc = doc.model_copy(update={"review": await review_chapters(book, session, [chapter])})
            end_write(book, doc)
    return doc
