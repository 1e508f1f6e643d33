"""Reviewing a range of chapters in order, resumable, with one model session for the whole run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from ..book import Book
from ..llm import ModelSession
from ._memory_ctx import load_memory
from ._models import SCHEMA_VERSION, ChapterReview, Disagreements
from ._review import _ROLES, review_chapter
from ._rules_step import load_rule_view


class RunSummary(BaseModel):
    """Counts over the chapters of one `muse review` run."""

    model_config = ConfigDict(extra="forbid")

    chapters: int
    reviewed: int
    resumed: int
    not_run: list[int]  # chapters left after a chapter failed closed (rerun to resume)
    finalized: int
    finalized_with_issues: int
    not_reviewed: int
    error: int
    disagreements: Disagreements  # summed over the chapters: the model's own pass flag / verdict vs the computed
    input_tokens: int
    output_tokens: int
    cost: float | None


class ReviewRun(BaseModel):
    """The `muse review --json` document."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    ok: bool
    run_id: str | None
    chapters: list[ChapterReview]
    summary: RunSummary


def summarize(reviews: list[ChapterReview], selected: list[int], run_id: str | None) -> ReviewRun:
    """The run document for the reviews done (resumed ones count as done, with zero new usage)."""
    done = {r.chapter for r in reviews}
    fresh = [r for r in reviews if not r.resumed]
    cost: float | None = 0.0
    for r in fresh:
        cost = None if cost is None or r.usage.cost is None else cost + r.usage.cost
    by_status = {s: sum(1 for r in reviews if r.status == s) for s in ("finalized", "finalized_with_issues")}
    summary = RunSummary(
        chapters=len(selected),
        reviewed=len(fresh),
        resumed=len(reviews) - len(fresh),
        not_run=[n for n in selected if n not in done],
        finalized=by_status["finalized"],
        finalized_with_issues=by_status["finalized_with_issues"],
        not_reviewed=sum(1 for r in reviews if r.status == "not_reviewed"),
        error=sum(1 for r in reviews if r.status == "error"),
        disagreements=Disagreements(
            reviewer_pass_flag=sum(r.disagreements.reviewer_pass_flag for r in reviews),
            editor_verdict=sum(r.disagreements.editor_verdict for r in reviews),
        ),
        input_tokens=sum(r.usage.input_tokens for r in fresh),
        output_tokens=sum(r.usage.output_tokens for r in fresh),
        cost=cost,
    )
    return ReviewRun(ok=summary.error == 0, run_id=run_id, chapters=reviews, summary=summary)


async def review_chapters(
    book: Book,
    numbers: list[int],
    *,
    apply: bool = False,
    resume: bool = True,
    editor: bool = True,
    on_chapter: Callable[[ChapterReview], None] | None = None,
) -> ReviewRun:
    """Review chapters in order; a chapter that fails closed stops the run (the rest stay `not_run`).

    A rerun resumes: chapters whose record matches their current bytes and configuration are not
    reviewed again (they come back with `resumed: true`).
    """
    rules = load_rule_view(book)
    memory = load_memory(book)
    session: ModelSession | None = None
    if any(book.config.role_target(r) for r in _ROLES):
        session = ModelSession.open(book, run_kind="review")
    reviews: list[ChapterReview] = []
    try:
        for n in numbers:
            doc = await review_chapter(
                book, n, session, apply=apply, resume=resume, rules=rules, memory_state=memory, editor=editor
            )
            reviews.append(doc)
            if on_chapter is not None:
                on_chapter(doc)
            if doc.status == "error":
                break
    except (KeyboardInterrupt, asyncio.CancelledError):
        if session is not None:  # the chapters already recorded stay recorded; a rerun resumes after them
            await session.aclose("interrupted")
        raise
    finally:
        if session is not None:
            await session.aclose()  # no-op when already closed
    return summarize(reviews, numbers, session.run_id if session else None)
