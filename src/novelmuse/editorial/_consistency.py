"""Consistency review (seed 004 一致性审查): reviewer role → issues → decision by severity only.

Any critical or major issue → repair; minor issues are recorded and do not block. The model's own
`passed` flag is recorded and ignored; when it contradicts the severities, the disagreement is counted.
Every issue's quote must be found exactly once in the chapter text (contract, corrected within the
call budget, else the step fails closed); its offsets are stored.
"""

from __future__ import annotations

from ..llm import ModelCallFailed
from ..roles import chapter_quote
from ..roles.reviewer import REVIEW, ReviewRequest
from ..roles.writer import REPAIR, RepairRequest
from ..text import paragraph_at, sha256_hex, split_paragraphs
from ._calls import Caller, failed_closed
from ._models import ConsistencyRound, IssueOut
from ._outcomes import NO_MODEL, StepOutcome
from ._repair import targeted_rewrite
from ._state import LoopState

BLOCKING = frozenset({"critical", "major"})


def review_request(state: LoopState) -> ReviewRequest:
    """The reviewer's request for the current text."""
    return ReviewRequest(
        chapter=state.chapter, title=state.title, chapter_text=state.text, memory=state.memory, unit=state.unit
    )


async def review_round(state: LoopState, caller: Caller, round_no: int, step: str) -> ConsistencyRound | None:
    """One reviewer call on the current text; None when it failed closed (recorded as error)."""
    try:
        report, _ = await caller.call(REVIEW.render(review_request(state)))
    except ModelCallFailed as exc:
        state.error_code = exc.code
        state.add(StepOutcome.error(step, exc.code, failed_closed("the reviewer's answer", exc)))
        return None
    paragraphs = split_paragraphs(state.text)
    issues: list[IssueOut] = []
    for issue in report.issues:
        m = chapter_quote(state.text, issue.quote)  # ok: the contract held
        issues.append(
            IssueOut(
                severity=issue.severity,
                type=issue.type,
                quote=issue.quote,
                start=m.start,
                end=m.end,
                paragraph=paragraph_at(paragraphs, m.start),
                explanation=issue.explanation,
                fix_hint=issue.fix_hint,
                open=False,
            )
        )
    blocking = sum(1 for i in issues if i.severity in BLOCKING)
    rnd = ConsistencyRound(
        round=round_no,
        text_sha256=sha256_hex(state.text),
        issues=issues,
        blocking=blocking,
        model_passed=report.passed,
        model_disagrees=report.passed is not None and report.passed != (blocking == 0),
    )
    state.consistency.append(rnd)
    minor = len(issues) - blocking
    if blocking:
        state.add(StepOutcome.failed(step, f"{blocking} critical/major issue(s), {minor} minor"))
    else:
        state.add(StepOutcome.passed(step, f"no critical/major issue; {minor} minor recorded"))
    return rnd


def _issue_paragraphs(state: LoopState, rnd: ConsistencyRound) -> list[int]:
    """The paragraphs covered by the blocking issues' quotes."""
    paragraphs = split_paragraphs(state.text)
    out: set[int] = set()
    for issue in rnd.issues:
        if issue.severity in BLOCKING:
            out.update(p.index for p in paragraphs if p.start < issue.end and issue.start < p.end)
    return sorted(out)


async def consistency_loop(state: LoopState, caller: Caller) -> None:
    """Review → (critical/major) → repair → re-review, bounded by `review.repair_rounds`/`rereview_rounds`."""
    if not caller.configured("reviewer"):
        state.add(StepOutcome.skipped("consistency_review", NO_MODEL))
        return
    last = await review_round(state, caller, 0, "consistency_review")
    if last is None:
        return
    for r in range(state.config.repair_rounds):
        if not last.blocking:
            break
        targets = _issue_paragraphs(state, last)
        blocking = [i for i in last.issues if i.severity in BLOCKING]
        request = RepairRequest(state.chapter, state.text, state.rules, targets, blocking, state.memory, state.unit)
        out = await targeted_rewrite(
            state, caller, step="repair", kind="consistency_repair", task=REPAIR, request=request
        )
        if out.status != "passed" or r >= state.config.rereview_rounds:
            break  # not repaired, or repaired without a re-review: the issues stay open (unverified)
        nxt = await review_round(state, caller, r + 1, "re_review")
        if nxt is None:
            return
        last = nxt
    if last.blocking:
        # the last review's blocking issues are what remains open when the bound is reached
        idx = next(k for k, rnd in enumerate(state.consistency) if rnd is last)
        state.consistency[idx] = last.model_copy(
            update={"issues": [i.model_copy(update={"open": i.severity in BLOCKING}) for i in last.issues]}
        )
