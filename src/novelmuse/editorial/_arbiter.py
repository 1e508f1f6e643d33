"""The arbiter (seed 004 失败裁定): after a rewrite whose re-review is still below threshold, one call
sees every review report and the rewrite's paragraph diff and decides keep-rewriting or
accept-and-continue, with a reason. Escalate to a judge instead of replaying without end; the
number of arbiter calls and rewrite rounds is bounded by `review.arbiter_rounds` / `rewrite_rounds`.
"""

from __future__ import annotations

import json

from ..llm import ModelCallFailed
from ..roles.arbiter import ArbiterDecision
from ._calls import Caller, failed_closed, prompt
from ._models import ArbiterOut
from ._outcomes import StepOutcome
from ._splice import paragraph_diff
from ._state import LoopState

MAX_DIFF_CHARS = 20_000


def reports_text(state: LoopState) -> str:
    """Every review so far, as compact JSON lines: consistency issues (severity, type, quote, explanation) and
    editor reports (scores with their evidence, computed verdict, notes) — what the arbiter's prompt promises."""
    lines = []
    for c in state.consistency:
        issues = [
            {"severity": i.severity, "type": i.type, "quote": i.quote, "explanation": i.explanation} for i in c.issues
        ]
        lines.append(
            json.dumps({"consistency_round": c.round, "blocking": c.blocking, "issues": issues}, ensure_ascii=False)
        )
    for e in state.editor:
        lines.append(
            json.dumps(
                {
                    "editor_round": e.round,
                    "overall": e.overall,
                    "dims": {d.name: {"score": d.score, "evidence": d.evidence} for d in e.dims},
                    "verdict": e.computed_verdict,
                    "notes": e.notes,
                },
                ensure_ascii=False,
            )
        )
    return "\n".join(lines)


def bounded_diff(before: str, after: str) -> str:
    """The paragraph diff, cut at MAX_DIFF_CHARS with an explicit marker (never silently)."""
    diff = paragraph_diff(before, after)
    if len(diff) > MAX_DIFF_CHARS:
        cut = len(diff) - MAX_DIFF_CHARS
        diff = diff[:MAX_DIFF_CHARS] + f"\n…(差异过长,后 {cut} 字未显示)"
    return diff


async def arbitrate(state: LoopState, caller: Caller, round_no: int, before: str) -> ArbiterOut | None:
    """One arbiter call; the decision is recorded (and persisted with the review record)."""
    p = prompt("arbiter", "input")
    fields: dict[str, object] = {
        "chapter": state.chapter,
        "reports": reports_text(state),
        "diff": bounded_diff(before, state.text),
    }
    try:
        value, call_id = await caller.call("arbiter", ArbiterDecision, p.messages({}, fields), [], p.sha256)
    except ModelCallFailed as exc:
        state.error_code = exc.code
        state.add(StepOutcome.error("arbiter", exc.code, failed_closed("the arbiter's answer", exc)))
        return None
    out = ArbiterOut(round=round_no, decision=value.decision, reason=value.reason)
    state.arbiter.append(out)
    state.arbiter_call_ids.append(call_id)
    state.add(StepOutcome.passed("arbiter", f"{value.decision}: {value.reason}"))
    return out
