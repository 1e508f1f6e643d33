"""Reviewing a range of chapters in order, resumable, in the model session the entry point opened."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from ..book import Book, read_chapter_file
from ..llm import ModelSession
from ..memory import MemoryState, memory_context, story_memory
from ._facts_step import STEP as FACTS_STEP
from ._models import SCHEMA_VERSION, ChapterReview, Disagreements, PreflightOut
from ._outcomes import StepOutcome
from ._preflight import ChapterPlan, plan_chapter, plan_doc, refuse_review_before_apply, refuse_unsendable
from ._review import REVIEW_ROLES, ApplyHook, is_current, review_chapter
from ._rules_step import RuleView, load_rule_view
from ._state import LoopState


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
    facts_failed: int  # chapters whose fact card has rejected items (shown in each chapter's `facts`)
    facts_error: int  # chapters whose `facts` step failed closed (their review stays recorded)
    disagreements: Disagreements  # summed over the chapters: the model's own pass flag / verdict vs the computed
    calls: int = 0  # logical model calls; under `muse review`, every call of the command (`muse cost --run`)
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
    preflight: PreflightOut | None = None  # what the run was to send first, estimated before any request


def plan_review(
    book: Book,
    session: ModelSession,
    numbers: list[int],
    *,
    rules: RuleView,
    memory: MemoryState | str,
    resume: bool,
    editor: bool,
) -> PreflightOut | None:
    """The run's preflight: size every chapter the run may review with a model, refuse at once what can never be
    sent (see `_preflight`), and return the plan; None when no review role has a model (nothing is sent).

    A chapter whose review is current is resumed, not sent — unless an extractor runs in this run before it: new
    facts change the memory a later chapter is reviewed with, so from the first chapter reviewed now on, every
    chapter is checked."""
    if not any(session.is_configured(r) for r in REVIEW_ROLES):
        return None
    facts_change_memory = session.is_configured("extractor")
    paths = book.chapter_paths()  # listed once: the numbers were selected from it
    plans: list[ChapterPlan] = []
    for n in numbers:
        chapter = read_chapter_file(n, paths[n])
        context = memory_context(book, n, memory)
        if resume and not (plans and facts_change_memory) and is_current(book, chapter, rules, context, editor=editor):
            continue
        state = LoopState.begin(book, chapter, rules, context, editor=editor)
        plans.append(plan_chapter(book, session, state, chapter))
    refuse_unsendable(book, plans)
    return plan_doc(book, plans)


def summarize(reviews: list[ChapterReview], selected: list[int], run_id: str | None) -> ReviewRun:
    """The run document for the reviews done (resumed ones count as done; they spend only a fact-card
    extraction their `facts` step made in this run)."""
    done = {r.chapter for r in reviews}
    fresh = [r for r in reviews if not r.resumed]
    # a resumed chapter spends only what its facts step extracted in this run
    late = [f for r in reviews if r.resumed and (f := r.facts) is not None and f.extracted and f.run_id == run_id]
    cost: float | None = 0.0
    for c in [*(r.usage.cost for r in fresh), *(f.cost for f in late)]:
        cost = None if cost is None or c is None else cost + c
    facts = [s.status for r in reviews for s in r.steps if s.step == FACTS_STEP]
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
        facts_failed=facts.count("failed"),
        facts_error=facts.count("error"),
        disagreements=Disagreements(
            reviewer_pass_flag=sum(r.disagreements.reviewer_pass_flag for r in reviews),
            editor_verdict=sum(r.disagreements.editor_verdict for r in reviews),
        ),
        calls=sum(r.usage.calls for r in fresh) + len(late),
        input_tokens=sum(r.usage.input_tokens for r in fresh) + sum(f.input_tokens for f in late),
        output_tokens=sum(r.usage.output_tokens for r in fresh) + sum(f.output_tokens for f in late),
        cost=cost,
    )
    return ReviewRun(
        ok=summary.error == 0 and summary.facts_error == 0, run_id=run_id, chapters=reviews, summary=summary
    )


def facts_error(doc: ChapterReview) -> StepOutcome | None:
    """The chapter's `facts` step when it failed closed (the review itself is recorded), else None."""
    return next((s for s in doc.steps if s.step == FACTS_STEP and s.status == "error"), None)


async def review_chapters(
    book: Book,
    session: ModelSession,
    numbers: list[int],
    *,
    apply: ApplyHook | None = None,
    resume: bool = True,
    editor: bool = True,
    rerun: bool = False,
    on_chapter: Callable[[ChapterReview], None] | None = None,
    on_plan: Callable[[PreflightOut], None] | None = None,
) -> ReviewRun:
    """Review chapters in order; a chapter that fails closed (or whose facts step does) stops the run.

    The run starts (and its id is the document's `run_id`) when any review role has a model. A rerun
    resumes: chapters whose record matches their current bytes and configuration are not reviewed again
    (they come back with `resumed: true`). An interruption leaves the chapters already recorded recorded.
    Before any request, the preflight (`plan_review`) refuses what can never be sent and hands its plan to
    `on_plan`. With `apply` (the desk's accept of each revision), a chapter edited since its review is refused unless
    `rerun` (or not `resume`) asks for the new review that applying it would need.
    """
    if apply is not None and resume and not rerun and any(session.is_configured(r) for r in REVIEW_ROLES):
        refuse_review_before_apply(book, numbers)
    rules = load_rule_view(book)
    memory = story_memory(book)
    plan = plan_review(book, session, numbers, rules=rules, memory=memory, resume=resume, editor=editor)
    if plan is not None and on_plan is not None:
        on_plan(plan)
    if any(session.is_configured(r) for r in REVIEW_ROLES):
        session.start()
    reviews: list[ChapterReview] = []
    for n in numbers:
        doc = await review_chapter(
            book, n, session, apply=apply, resume=resume, rules=rules, memory_state=memory, editor=editor
        )
        reviews.append(doc)
        if on_chapter is not None:
            on_chapter(doc)
        if doc.status == "error" or facts_error(doc) is not None:
            break  # later chapters' memory would lack this one's facts: a rerun resumes here
        if doc.facts is not None and doc.facts.extracted and doc.facts.run_id == session.run_id:
            memory = story_memory(book)  # the next chapter is reviewed with this chapter's facts
    run = summarize(reviews, numbers, session.run_id if session.started else None)
    return run.model_copy(update={"preflight": plan})
