"""The arbiter (seed 004 失败裁定): after a rewrite whose re-review is still below threshold, one call
sees every review report and the rewrite's paragraph diff and decides keep-rewriting or
accept-and-continue, with a reason. Escalate to a judge instead of replaying without end; the
number of arbiter calls and rewrite rounds is bounded by `review.arbiter_rounds` / `rewrite_rounds`.
"""

from __future__ import annotations

from ..llm import ModelCallFailed
from ..roles.arbiter import DECIDE, ArbiterRequest
from ._calls import Caller, failed_closed
from ._models import ArbiterOut
from ._outcomes import StepOutcome
from ._splice import paragraph_diff
from ._state import LoopState


async def arbitrate(state: LoopState, caller: Caller, round_no: int, before: str) -> ArbiterOut | None:
    """One arbiter call; the decision is recorded (and persisted with the review record)."""
    request = ArbiterRequest(
        state.chapter, state.consistency, state.editor, paragraph_diff(before, state.text), state.unit
    )
    try:
        value, call_id = await caller.call(DECIDE.render(request))
    except ModelCallFailed as exc:
        state.error_code = exc.code
        state.add(StepOutcome.error("arbiter", exc.code, failed_closed("the arbiter's answer", exc)))
        return None
    out = ArbiterOut(round=round_no, decision=value.decision, reason=value.reason)
    state.arbiter.append(out)
    state.arbiter_call_ids.append(call_id)
    state.add(StepOutcome.passed("arbiter", f"{value.decision}: {value.reason}"))
    return out
