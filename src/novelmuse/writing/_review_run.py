"""`--apply`: the runs that end with an accept at the author's desk — `muse review` (the editorial loop on chapters,
then the quality gate on each final text, and each revision accepted) and `muse write N --apply` (the chapter
written, then the draft the run made accepted — never a new run).

`[review] quality_gate = false` or `--no-gate` leaves the gate out, said so; with the gate wanted and no judge model it
is `skipped(no model configured)` — not evaluated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from ..book import Book
from ..editorial import ChapterReview, PreflightOut, ReviewRun, StepOutcome, review_chapters
from ..llm import Bill, ModelSession, run_spend, total_bill
from ._accept import JUDGE_ROLE, NOT_REQUESTED, AcceptOptions, accept_draft
from ._desk import DraftRef
from ._desk_doc import AcceptDoc
from ._drafts import end_write
from ._loop import write_chapter
from ._quality_gate import AFTER_ERROR, ChapterGate, final_text, gate_bill, gate_chapter
from ._write_doc import WriteDoc


class ReviewGateRun(ReviewRun):
    """The `muse review --json` document: the review run, each reviewed chapter's quality gate, and (`--apply`)
    the accept of each revision."""

    gates: list[ChapterGate] = Field(default_factory=list)
    accepts: list[AcceptDoc] = Field(default_factory=list)


async def review_and_gate(
    book: Book,
    session: ModelSession,
    numbers: list[int],
    *,
    apply: bool = False,
    without_gate: bool = False,
    resume: bool = True,
    editor: bool = True,
    gate: bool = True,
    rerun: bool = False,
    on_chapter: Callable[[ChapterReview], None] | None = None,
    on_plan: Callable[[PreflightOut], None] | None = None,
    on_gate: Callable[[ChapterGate], None] | None = None,
) -> ReviewGateRun:
    """`muse review`: review the chapters (seed 004), then put each final text through the quality gate (seed 000)
    — see the module docstring. The first gate that fails closed stops the gates after it (their chapters say so).
    With `apply`, each revision is accepted at the author's desk as soon as it is made (the same preflight as
    `muse drafts accept`: the file unchanged since the review, the rules, the quality gate — which `without_gate`
    lets through when it cannot run); the accepts are in the document."""
    wanted = gate and book.config.review.quality_gate
    accepts: list[AcceptDoc] = []

    async def accept(doc: ChapterReview) -> bool:
        assert doc.revision is not None
        got = await accept_draft(
            book,
            session,
            DraftRef("review", doc.revision.id),
            AcceptOptions(without_gate=without_gate, gate=wanted),
            mode="apply",
            command=f"muse review {doc.chapter} --apply",
        )
        accepts.append(got)
        return got.status == "accepted"

    said: list[PreflightOut] = []

    def plan(preflight: PreflightOut) -> None:  # the judges' panel of each chapter joins the review's bill
        if wanted and preflight.bill is not None and session.is_configured(JUDGE_ROLE):
            panels = [r for n in preflight.chapters for r in gate_bill(book, session, n, _gated_text(book, n))]
            parts = [*preflight.bill.roles, *panels]
            notes = [*preflight.bill.notes, "the quality gate's judges on each chapter's final text are included"]
            preflight = preflight.model_copy(update={"bill": total_bill(parts, notes)})
        said.append(preflight)
        if on_plan is not None:
            on_plan(preflight)

    run = await review_chapters(
        book,
        session,
        numbers,
        apply=accept if apply else None,
        resume=resume,
        editor=editor,
        rerun=rerun,
        on_chapter=on_chapter,
        on_plan=plan,
    )
    gates: list[ChapterGate] = []
    stopped = False
    for doc in run.chapters:
        if doc.status == "error":
            continue
        if not wanted or stopped:
            g = ChapterGate(chapter=doc.chapter, status="skipped", reason=AFTER_ERROR if stopped else NOT_REQUESTED)
        else:
            g = await gate_chapter(book, session, doc.chapter, final_text(book, doc), resume=resume)
            stopped = g.status == "error"
        gates.append(g)
        if on_gate is not None:
            on_gate(g)
    run_id = session.run_id if session.started else run.run_id
    summary = run.summary
    if session.started:  # everything the command spent — reviews, facts, the judges, the accepts' gates
        spent = run_spend(session.conn, session.run_id)
        summary = summary.model_copy(
            update={
                "calls": spent.calls,
                "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
                "cost": spent.cost,
            }
        )
    preflight = said[0].model_dump() if said else run.model_dump()["preflight"]
    return ReviewGateRun(
        **{**run.model_dump(), "run_id": run_id, "summary": summary.model_dump(), "preflight": preflight},
        gates=gates,
        accepts=accepts,
    )


def _gated_text(book: Book, chapter: int) -> str:
    """The longest text the gate may judge for `chapter`: its text now, or a rewrite up to the writer's output cap
    (≤ 4 bytes a token), whichever is longer."""
    body = book.read_chapter(chapter).body
    longest = book.config.calls.max_output_tokens * 4 // 3
    return body if len(body) >= longest else body + "字" * (longest - len(body))


async def write_and_accept(
    book: Book,
    session: ModelSession,
    chapter: int,
    *,
    accept: AcceptOptions | None,
    review: bool = False,
    on_bill: Callable[[Bill], None] | None = None,
    **write: Any,
) -> WriteDoc:
    """`muse write N [--apply [--review]]`: write the chapter (a shadow draft); with `accept`, then accept the draft
    this run made — the same preflight and records as `muse drafts accept`, never a new run — and with `review`,
    put the accepted chapter through the editorial loop in the same session."""
    doc = await write_chapter(book, session, chapter, **write)
    if accept is None or doc.status != "passed" or doc.final_draft_id is None:
        return doc
    got = await accept_draft(
        book,
        session,
        DraftRef("chapter", doc.final_draft_id),
        accept,
        mode="apply",
        command=f"muse write {chapter} --apply",
        on_bill=on_bill,
    )
    doc = doc.model_copy(update={"accept": got, "applied": got.written})
    if got.written:
        doc.steps.append(StepOutcome.passed("accept", got.written))
    else:
        doc.steps.append(StepOutcome.failed("accept", got.reason or got.status))
    if review and got.written:
        doc = doc.model_copy(update={"review": await review_chapters(book, session, [chapter])})
    end_write(book, doc)
    return doc
