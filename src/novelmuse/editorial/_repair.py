"""Targeted rewrites by the writer role: only the named paragraphs change, spliced back byte-safely.

Used for forbidden phrases (the hard rules, task `writer.PARAGRAPHS`), for consistency repairs (the paragraphs
holding the blocking issues' quotes, `writer.REPAIR`) and for polishing (the writer picks at most
`review.polish_max_paragraphs`, `writer.POLISH`). The writer's answer is checked by its task's contract inside
the model call, so a bad draft is corrected within the call budget (`calls.max_attempts`) and otherwise fails
closed: every required paragraph exactly once, no other, none blank or multi-line, none with a forbidden phrase.
"""

from __future__ import annotations

from typing import TypeVar

from ..llm import ModelCallFailed
from ..roles import RoleTask
from ..roles.writer import PARAGRAPHS, ParagraphEdits, ParagraphsRequest
from ..rules import length_text
from ._calls import Caller, failed_closed
from ._models import ForbiddenHit
from ._outcomes import NO_MODEL, StepOutcome
from ._rules_step import forbidden_hits, length_outcome
from ._splice import splice_paragraphs
from ._state import LoopState

Req = TypeVar("Req")


async def targeted_rewrite(
    state: LoopState, caller: Caller, *, step: str, kind: str, task: RoleTask[Req, ParagraphEdits], request: Req
) -> StepOutcome:
    """Ask the writer (`task` for `request`) for new texts of some paragraphs and splice them in; one step outcome."""
    if not caller.configured("writer"):
        return state.add(StepOutcome.skipped(step, NO_MODEL))
    try:
        value, _ = await caller.call(task.render(request))
    except ModelCallFailed as exc:
        state.error_code = exc.code
        return state.add(StepOutcome.error(step, exc.code, failed_closed("the writer's answer", exc)))
    edits = {e.index: e.text for e in value.paragraphs}
    new = splice_paragraphs(state.text, edits)  # asserts every other paragraph is byte-identical
    state.change_text(new, step, kind, sorted(edits))
    return state.add(StepOutcome.passed(step, f"rewrote paragraphs {sorted(edits)}"))


def forbidden_request(state: LoopState, hits: list[ForbiddenHit]) -> ParagraphsRequest:
    """The writer's request to rewrite the paragraphs holding `hits` (the forbidden phrases of the current text)."""
    targets = sorted({i for h in hits for i in h.paragraphs})
    return ParagraphsRequest(
        state.chapter, state.text, state.rules, targets, [h.phrase for h in hits], state.memory, state.unit
    )


async def rules_step(state: LoopState, caller: Caller) -> None:
    """The hard-rule step: the length against book.toml (as `muse check` says it; no step repairs it), forbidden
    phrases (rewrite only their paragraphs, then verify they are gone), fatigue words (for the editor)."""
    hits = forbidden_hits(state.text, state.rules)
    length = length_outcome(state.text, state.rules, state.chapter)
    warn = f"; {len(state.fatigue)} fatigue warning(s) for the editor" if state.fatigue else ""
    found = [length_text(length)] + (["no forbidden phrase"] if not hits else [])
    if not hits:
        outcome = StepOutcome.failed if length.outcome == "failed" else StepOutcome.passed
        state.add(outcome("rules", "; ".join(found) + warn))
        return
    request = forbidden_request(state, hits)
    forbidden = f"forbidden {'、'.join(request.phrases)} in paragraphs {list(request.targets)}"
    state.add(StepOutcome.failed("rules", "; ".join([forbidden, *found]) + warn))
    out = await targeted_rewrite(
        state, caller, step="forbidden_rewrite", kind="forbidden_rewrite", task=PARAGRAPHS, request=request
    )
    if out.status == "passed":
        remaining = forbidden_hits(state.text, state.rules)
        if remaining:  # the contract makes this unreachable; checked again because it is the rule
            state.steps[-1] = StepOutcome.failed(
                "forbidden_rewrite", f"still contains {'、'.join(h.phrase for h in remaining)}"
            )
