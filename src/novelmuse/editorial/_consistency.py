"""Consistency review (seed 004 一致性审查): reviewer role → issues → decision by severity only.

Any critical or major issue → repair; minor issues are recorded and do not block. The model's own
`passed` flag is recorded and ignored; when it contradicts the severities, the disagreement is counted.
Every issue's quote must be found exactly once in the chapter text (contract, corrected within the
call budget, else the step fails closed); its offsets are stored.
"""

from __future__ import annotations

from ..llm import ModelCallFailed, Violation
from ..roles.reviewer import ConsistencyReport
from ..text import NormalizedText, locate_quote, paragraph_at, sha256_hex, split_paragraphs
from ._calls import Caller, Contract, failed_closed, normalized, prompt
from ._models import ConsistencyRound, IssueOut
from ._outcomes import NO_MODEL, StepOutcome
from ._repair import targeted_rewrite
from ._state import LoopState

QUOTE_MIN_CHARS = 4
BLOCKING = frozenset({"critical", "major"})


def quote_contract(body: str) -> Contract:
    """Every issue quotes the chapter verbatim, found exactly once (after normalisation)."""
    norm = normalized(body)

    def check(report: ConsistencyReport) -> list[Violation]:
        found = (quote_violation(norm, issue.quote, f"issues[{i}].quote") for i, issue in enumerate(report.issues))
        return [v for v in found if v is not None]

    return check


def quote_violation(norm: NormalizedText, quote: str, field: str) -> Violation | None:
    """The contract violation of one model-given quote (None when it is found exactly once in the chapter); the
    detail, for the correction message only, names the field and says what a valid quote is."""
    m = locate_quote(norm, quote, min_chars=QUOTE_MIN_CHARS)
    if not m.error_code:
        return None
    return Violation(
        code=m.error_code,
        detail=f"{field} 「{quote[:60]}」: {m.status} — copy one sentence verbatim (≥{QUOTE_MIN_CHARS} characters) "
        "that occurs exactly once in the chapter",
    )


def _join(lines: list[str], empty: str) -> str:
    return "\n".join(lines) if lines else empty


async def review_round(state: LoopState, caller: Caller, round_no: int, step: str) -> ConsistencyRound | None:
    """One reviewer call on the current text; None when it failed closed (recorded as error)."""
    p = prompt("reviewer", "input")
    mem = state.memory
    missing = f"(无:{mem.note})"
    fields: dict[str, object] = {
        "chapter": state.chapter,
        "prev_chapter": max(state.chapter - 1, 0),
        "title": state.title,
        "card_states": _join(mem.card_states, missing if not mem.available else "(无)"),
        "foreshadows": _join(mem.foreshadows, missing if not mem.available else "(无)"),
        "previous_ending": mem.previous_ending or "(无:没有上一章)",
        "chapter_text": state.text,
    }
    try:
        report, _ = await caller.call(
            "reviewer", ConsistencyReport, p.messages({}, fields), [quote_contract(state.text)], p.sha256
        )
    except ModelCallFailed as exc:
        state.error_code = exc.code
        state.add(StepOutcome.error(step, exc.code, failed_closed("the reviewer's answer", exc)))
        return None
    paragraphs = split_paragraphs(state.text)
    norm = normalized(state.text)
    issues: list[IssueOut] = []
    for issue in report.issues:
        m = locate_quote(norm, issue.quote, min_chars=QUOTE_MIN_CHARS)  # ok: the contract held
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


def _report_text(rnd: ConsistencyRound) -> str:
    lines = []
    for n, i in enumerate(x for x in rnd.issues if x.severity in BLOCKING):
        lines.append(f"{n + 1}. [{i.severity}/{i.type}] 第{i.paragraph}段「{i.quote}」")
        lines.append(f"   问题:{i.explanation}\n   建议:{i.fix_hint}")
    return "\n".join(lines)


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
        out = await targeted_rewrite(
            state,
            caller,
            step="repair",
            kind="consistency_repair",
            task="repair",
            required=set(targets),
            allowed=set(targets),
            task_fields={"indices": "、".join(map(str, targets)), "report": _report_text(last)},
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
