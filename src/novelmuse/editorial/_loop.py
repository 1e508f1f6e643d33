"""The editorial loop's state machine for one chapter (seed 004), every loop bounded by config.

    rules ── forbidden? → targeted paragraph rewrite (writer) ─┐
    consistency review ── critical/major? → repair → re-review (≤ repair_rounds / rereview_rounds)
    editor (7-dim) ── accept → done
                   ├─ polish → one targeted polish
                   └─ rewrite → rewrite → editor re-review ── still rewrite? → arbiter
                                  ↑ keep_rewriting (≤ rewrite_rounds, ≤ arbiter_rounds) ┘
                                                    └─ polish? → one targeted polish
    after any whole-chapter rewrite: one consistency review of the final text (issues stay open)

A step that fails closed ends the loop (`error`); the main steps not reached are recorded as
skipped with that reason. With no model configured, model steps are `skipped(no model configured)`
and the rule step still runs.
"""

from __future__ import annotations

from ..text import split_paragraphs
from ._arbiter import arbitrate
from ._calls import Caller
from ._consistency import BLOCKING, consistency_loop, review_round
from ._editor import editor_round, polish, rewrite
from ._models import ChapterStatus, EditorRound
from ._outcomes import NO_MODEL, StepOutcome
from ._repair import rules_step
from ._rules_step import fatigue_hits, forbidden_hits, length_outcome
from ._state import LoopState
from ._verdict import POLISH_DIM_BELOW

MAIN_STEPS = ("rules", "consistency_review", "editor_review")
AFTER_ERROR = "an earlier step failed closed"
EMPTY_CHAPTER = "the chapter has no text"
NOT_REQUESTED = "not requested (--no-editor)"


async def _editor_loop(state: LoopState, caller: Caller) -> None:
    if not state.editor_enabled:
        state.add(StepOutcome.skipped("editor_review", NOT_REQUESTED))
        return
    if not caller.configured("editor"):
        state.add(StepOutcome.skipped("editor_review", NO_MODEL))
        return
    current = await editor_round(state, caller, 0, "editor_review")
    if current is None:
        return
    rounds = arbiter_calls = 0
    while current.computed_verdict == "rewrite":
        if rounds >= state.config.rewrite_rounds:
            state.editor_open = _standing(current, f"bound of {state.config.rewrite_rounds} rewrite round(s) reached")
            state.add(StepOutcome.failed("rewrite", f"bound of {state.config.rewrite_rounds} rewrite round(s) reached"))
            return
        before = state.text
        out = await rewrite(state, caller, current)
        if out.status != "passed":
            state.editor_open = _standing(current, f"the rewrite was {out.label}") if out.status == "skipped" else None
            return
        rounds += 1
        nxt = await editor_round(state, caller, rounds, "editor_rereview")
        if nxt is None:
            return
        current = nxt
        if current.computed_verdict != "rewrite":
            break
        if arbiter_calls >= state.config.arbiter_rounds:
            state.editor_open = _standing(current, f"bound of {state.config.arbiter_rounds} arbiter call(s) reached")
            state.add(StepOutcome.failed("arbiter", f"bound of {state.config.arbiter_rounds} arbiter call(s) reached"))
            return
        if not caller.configured("arbiter"):
            state.editor_open = _standing(current, f"the arbiter was skipped({NO_MODEL})")
            state.add(StepOutcome.skipped("arbiter", NO_MODEL))
            return
        decision = await arbitrate(state, caller, arbiter_calls, before)
        arbiter_calls += 1
        if decision is None:
            return
        if decision.decision == "accept_and_continue":
            # 带病定稿留给人: the arbiter ends the rewriting, it does not make the scores pass
            state.editor_open = _standing(current, f"the arbiter accepted and continued: {decision.reason}")
            return
    if current.computed_verdict == "polish":  # the first review's verdict, or the re-review's after a rewrite
        out = await polish(state, caller, current)
        # the polish it asked for never ran: not finalized clean
        state.editor_open = _standing(current, f"the polish was {out.label}") if out.status == "skipped" else None


def _standing(rnd: EditorRound, why: str) -> str:
    """The open item a verdict left standing: which verdict, on which scores, and why nothing more was done."""
    low = [f"{d.name} {d.score}" for d in rnd.dims if not d.neutral and d.score < POLISH_DIM_BELOW]
    scores = f"overall {rnd.overall}" + (f"; {', '.join(low)}" if low else "")
    return f"editor: computed verdict {rnd.computed_verdict} still stands (round {rnd.round}: {scores}) — {why}"


async def _post_rewrite_review(state: LoopState, caller: Caller) -> None:
    """A whole-chapter rewrite replaced the text the consistency review saw: review the final text once.

    Its blocking issues stay open (no further repair: the bounds were spent), so a rewritten chapter is
    never reported `finalized` on the strength of a review of a text that no longer exists.
    """
    for rnd in state.consistency:  # issues of earlier texts are superseded by this review
        if any(i.open for i in rnd.issues):
            idx = state.consistency.index(rnd)
            state.consistency[idx] = rnd.model_copy(
                update={"issues": [i.model_copy(update={"open": False}) for i in rnd.issues]}
            )
    final = await review_round(state, caller, len(state.consistency), "post_rewrite_review")
    if final is not None and final.blocking:
        state.consistency[-1] = final.model_copy(
            update={"issues": [i.model_copy(update={"open": i.severity in BLOCKING}) for i in final.issues]}
        )


async def run_loop(state: LoopState, caller: Caller) -> None:
    """Run every step on `state` in order; stops at the first error (fail closed)."""
    state.fatigue = fatigue_hits(state.text, state.rules)
    if not split_paragraphs(state.text):
        state.add(StepOutcome.passed("rules", "the chapter has no text"))
        for step in MAIN_STEPS[1:]:
            state.add(StepOutcome.skipped(step, EMPTY_CHAPTER))
        return
    await rules_step(state, caller)
    if state.error_code is None:
        await consistency_loop(state, caller)
    if state.error_code is None:
        await _editor_loop(state, caller)
    if state.error_code is None and any(r.kind == "rewrite" for r in state.repairs) and caller.configured("reviewer"):
        await _post_rewrite_review(state, caller)
    if state.error_code is not None:
        reached = {s.step for s in state.steps}
        for step in MAIN_STEPS:
            if step not in reached:
                state.add(StepOutcome.skipped(step, AFTER_ERROR))


def open_items(state: LoopState) -> list[str]:
    """What is open when the loop ended, one line each: blocking consistency issues, forbidden phrases left, a
    length outside book.toml's limits (as `muse check` would fail it), a standing rewrite verdict (a bound, the
    arbiter's accept_and_continue) or a polish/rewrite that was skipped."""
    items = [
        f"consistency: [{i.severity}/{i.type}] ¶{i.paragraph} 「{i.quote}」 {i.explanation}"
        for r in state.consistency
        for i in r.issues
        if i.open
    ]
    items += [
        f"forbidden: {h.phrase} ×{h.count} in paragraphs {h.paragraphs}"
        for h in forbidden_hits(state.text, state.rules)
    ]
    length = length_outcome(state.text, state.rules, state.chapter)
    if length.outcome == "failed":
        items.append(f"length: {length.chars} characters, outside {length.min_chars or '—'}–{length.max_chars or '—'}")
    if state.editor_open:
        items.append(state.editor_open)
    return items


def chapter_status(state: LoopState) -> ChapterStatus:
    """error > not_reviewed > finalized_with_issues > finalized.

    not_reviewed: the consistency review did not run, or the editor was wanted but did not run.
    """
    if state.error_code is not None:
        return "error"
    skipped = {s.step: s.reason for s in state.steps if s.status == "skipped"}
    if "consistency_review" in skipped or skipped.get("editor_review", NOT_REQUESTED) != NOT_REQUESTED:
        return "not_reviewed"
    if open_items(state):
        return "finalized_with_issues"
    return "finalized"


__all__ = ["BLOCKING", "chapter_status", "open_items", "run_loop"]
