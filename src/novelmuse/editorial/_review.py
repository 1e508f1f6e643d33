"""`review_chapter`: run the loop on one chapter, keep the original, store the record and the revision.

The review record is bound to the sha256 of the file it reviewed, to a configuration hash (review bounds, call
policy, role targets, rule set, memory context) and to the role tasks its calls used (role, task, version,
prompt and schema sha256, as the run recorded them): a later run with the same file and configuration, whose
tasks are all unchanged, finds it and does not review again (resume). A prompt edit thus invalidates only the
reviews whose calls rendered that prompt — tuning the writer's rewrite prompt leaves alone every review that
never rewrote.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from ..book import Book, Chapter, atomic_write_bytes
from ..llm import ModelSession, list_receipts
from ..memory import MemoryContext, MemoryState, current_fact_cards, memory_context
from ..store import new_id, utc_now
from ..text import sha256_hex, sha256_json
from ._calls import Caller
from ._facts_step import STEP as FACTS_STEP
from ._facts_step import facts_step
from ._loop import chapter_status, open_items, run_loop
from ._models import (
    ChapterReview,
    Disagreements,
    MemorySummary,
    RevisionOut,
    RoleUsage,
    RulesSummary,
    UsageOut,
)
from ._preflight import plan_chapter, refuse_unsendable
from ._records import find_current_review, record_facts, save_review
from ._revisions import base_path, revision_bytes, revision_path
from ._rules_step import RuleView, fatigue_hits, forbidden_hits, length_outcome, load_rule_view
from ._state import LoopState

#: `--apply`: accept the review's revision (the author's desk: preflight, revision store, decision row); True when
#: the revision became the chapter file.
ApplyHook = Callable[[ChapterReview], Awaitable[bool]]

LOOP_VERSION = 2  # 2: the prompts left the configuration hash for the recorded task refs
REVIEW_ROLES = ("reviewer", "editor", "writer", "arbiter")


def config_sha256(book: Book, rules: RuleView, memory: MemoryContext, *, editor: bool = True) -> str:
    """Everything but the prompts that decides what a review does, hashed: with the chapter's sha256 and the
    recorded task refs, the resume key."""
    cfg = book.config
    return sha256_json(
        {
            "loop_version": LOOP_VERSION,
            "editor": editor,
            "review": cfg.review.model_dump(exclude={"quality_gate"}),  # the gate is not part of the loop
            "calls": cfg.calls.model_dump(),
            "roles": {r: list(t) if (t := cfg.role_target(r)) else None for r in REVIEW_ROLES},
            "rules": rules.sha256,
            "memory": [memory.available, memory.card_states, memory.foreshadows, memory.previous_ending],
        }
    )


def is_current(book: Book, chapter: Chapter, rules: RuleView, memory: MemoryContext, *, editor: bool) -> bool:
    """Whether a review of the chapter's bytes under this configuration is recorded (a rerun resumes it)."""
    cfg_sha = config_sha256(book, rules, memory, editor=editor)
    return find_current_review(book.db, chapter.number, chapter.sha256, cfg_sha) is not None


def usage_of(book: Book, call_ids: Iterable[str]) -> UsageOut:
    """Tokens and cost of the given logical calls, summed from their receipts (unknown cost stays unknown)."""
    by_role: dict[str, RoleUsage] = {}
    calls = attempts = tin = tout = 0
    cost: float | None = 0.0
    for cid in call_ids:
        receipts = list_receipts(book.db, call_id=cid)
        if not receipts:
            continue
        calls += 1
        role = receipts[0].role
        ru = by_role.get(role) or RoleUsage(calls=0, attempts=0, input_tokens=0, output_tokens=0, cost=0.0)
        r_in = sum(r.input_tokens or 0 for r in receipts)
        r_out = sum(r.output_tokens or 0 for r in receipts)
        sent = [r for r in receipts if r.outcome != "refused"]
        r_cost: float | None = None if any(r.cost is None for r in sent) else sum(r.cost or 0.0 for r in sent)
        attempts += len(receipts)
        tin += r_in
        tout += r_out
        cost = None if cost is None or r_cost is None else cost + r_cost
        by_role[role] = RoleUsage(
            calls=ru.calls + 1,
            attempts=ru.attempts + len(receipts),
            input_tokens=ru.input_tokens + r_in,
            output_tokens=ru.output_tokens + r_out,
            cost=None if ru.cost is None or r_cost is None else ru.cost + r_cost,
        )
    return UsageOut(calls=calls, attempts=attempts, input_tokens=tin, output_tokens=tout, cost=cost, by_role=by_role)


async def review_chapter(
    book: Book,
    number: int,
    session: ModelSession | None,
    *,
    apply: ApplyHook | None = None,
    resume: bool = True,
    rules: RuleView | None = None,
    memory_state: MemoryState | str | None = None,
    editor: bool = True,
) -> ChapterReview:
    """Review chapter `number` (seed 004 loop); store the record and, if the text changed, a revision.

    With `apply`, the revision is handed to the author's desk to be accepted (the hook writes it, or says why not).
    Then the `facts` step extracts the fact card when the file on disk is the finalised text.
    With `resume`, a record of the same file bytes and configuration whose role tasks are unchanged is returned
    instead (resumed=True).
    `rules` and `memory_state` let a run over many chapters load them once; `editor=False` leaves
    the (optional, costly) 7-dimension editor out.
    """
    chapter = book.read_chapter(number)
    raw = chapter.path.read_bytes()
    rules = rules if rules is not None else load_rule_view(book)
    memory = memory_context(book, number, memory_state)
    cfg_sha = config_sha256(book, rules, memory, editor=editor)
    if resume:
        found = find_current_review(book.db, number, chapter.sha256, cfg_sha)
        if found is not None:
            return await _resume(book, chapter, found.model_copy(update={"resumed": True}), session, apply=apply)
    started = utc_now()
    state = LoopState.begin(book, chapter, rules, memory, editor=editor)
    if session is not None and any(session.is_configured(r) for r in REVIEW_ROLES):
        refuse_unsendable(book, [plan_chapter(book, session, state, chapter)])  # the run's preflight, for this text
    caller = Caller(session)
    await run_loop(state, caller)
    status = chapter_status(state)
    left = open_items(state) if status != "error" else []
    changed = state.text != chapter.body and status != "error"
    final_text = state.text if changed else chapter.body  # a review that failed closed changes nothing
    usage = usage_of(book, caller.call_ids)
    new_bytes = revision_bytes(chapter, raw, state.text) if changed else raw
    record_id = new_id("rvw_")
    revision: RevisionOut | None = None
    if changed:
        rev_id = new_id("rev_")
        rev_path, orig_path = revision_path(book, number, rev_id), base_path(book, number, rev_id)
        atomic_write_bytes(orig_path, raw)
        atomic_write_bytes(rev_path, new_bytes)
        revision = RevisionOut(
            id=rev_id,
            sha256=sha256_hex(new_bytes),
            path=str(rev_path.relative_to(book.root)),
            base_path=str(orig_path.relative_to(book.root)),
            applied=False,
        )
    doc = ChapterReview(
        record_id=record_id,
        chapter=number,
        title=state.title,
        chapter_sha256=chapter.sha256,
        config_sha256=cfg_sha,
        status=status,
        error_code=state.error_code,
        steps=state.steps,
        rules=RulesSummary(
            ruleset_sha256=rules.sha256,
            forbidden=forbidden_hits(chapter.body, rules),
            fatigue=fatigue_hits(chapter.body, rules),
            forbidden_remaining=forbidden_hits(final_text, rules),
            preferences_injected=bool(rules.preferences.strip()) and "writer" in usage.by_role,
            length=length_outcome(chapter.body, rules, number),
            length_final=length_outcome(final_text, rules, number),
        ),
        memory=MemorySummary(
            available=memory.available,
            note=memory.note,
            card_states=len(memory.card_states),
            active_foreshadows=len(memory.foreshadows),
            previous_ending_chars=len(memory.previous_ending),
        ),
        consistency=state.consistency,
        editor=state.editor,
        arbiter=state.arbiter,
        repairs=state.repairs,
        disagreements=Disagreements(
            reviewer_pass_flag=sum(1 for r in state.consistency if r.model_disagrees),
            editor_verdict=sum(1 for e in state.editor if not e.agrees),
        ),
        open_issues=len(left),
        open_items=left,
        result_sha256=sha256_hex(new_bytes),
        revision=revision,
        usage=usage,
    )
    run_id = session.run_id if session is not None and session.started else None
    save_review(
        book.db,
        doc,
        state,
        run_id=run_id,
        tasks=caller.tasks,
        started_at=started,
        revision_text=new_bytes.decode("utf-8") if changed else None,
    )
    if apply is not None and revision is not None and await apply(doc):
        doc = doc.model_copy(update={"revision": revision.model_copy(update={"applied": True})})
    outcome, facts = await facts_step(book, doc, caller)
    doc = doc.model_copy(
        update={"steps": [*doc.steps, outcome], "facts": facts, "usage": usage_of(book, caller.call_ids)}
    )
    record_facts(book.db, doc)
    return doc


async def _resume(
    book: Book, chapter: Chapter, doc: ChapterReview, session: ModelSession | None, *, apply: ApplyHook | None
) -> ChapterReview:
    """A review already done for these bytes and configuration: only --apply and the `facts` step may be due.

    With `apply`, its stored revision is handed to the desk now, exactly as a fresh review would have handed it.
    Its fact card is kept when it is still the chapter's current card; otherwise (none yet: no model
    then, the extraction failed closed, the record predates the step) the step runs now and the
    record is updated. The review's own usage stays as recorded; a new extraction's tokens are in `facts`.
    """
    if apply is not None and doc.revision is not None and not doc.revision.applied and await apply(doc):
        doc = doc.model_copy(update={"revision": doc.revision.model_copy(update={"applied": True})})
    kept = next((s for s in doc.steps if s.step == FACTS_STEP), None)
    if kept is not None and kept.status in ("passed", "failed") and doc.facts is not None:
        current = current_fact_cards(book.db, {doc.chapter: doc.facts.chapter_sha256}).get(doc.chapter)
        if current is not None and current.id == doc.facts.fact_card_id:
            return doc
    outcome, facts = await facts_step(book, doc, Caller(session))
    if outcome == kept and facts == doc.facts:
        return doc
    steps = [s for s in doc.steps if s.step != FACTS_STEP]
    doc = doc.model_copy(update={"steps": [*steps, outcome], "facts": facts})
    record_facts(book.db, doc)
    return doc
