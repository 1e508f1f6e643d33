"""Targeted rewrites by the writer role: only the named paragraphs change, spliced back byte-safely.

Used for forbidden phrases (the hard rules), for consistency repairs (the paragraphs holding the
blocking issues' quotes) and for polishing (the writer picks at most `review.polish_max_paragraphs`).
The writer's answer is checked by a contract inside the model call, so a bad draft is corrected
within the call budget (`calls.max_attempts`) and otherwise fails closed:
  every required paragraph exactly once, no other, none blank or multi-line, none with a forbidden phrase.
"""

from __future__ import annotations

from ..llm import ModelCallFailed, Violation
from ..roles.writer import ParagraphEdits
from ..text import split_paragraphs
from ._calls import Caller, Contract, failed_closed, numbered, prompt
from ._outcomes import NO_MODEL, StepOutcome
from ._rules_step import RuleView, forbidden_hits, forbidden_in
from ._splice import splice_paragraphs
from ._state import LoopState


def writer_system_fields(rules: RuleView) -> dict[str, object]:
    """The writer's system prompt fields: forbidden phrases and the author's preferences, verbatim."""
    return {
        "forbidden": "、".join(rules.forbidden) if rules.forbidden else "(无)",
        "preferences": rules.preferences.strip() or "(作者没有写偏好)",
    }


def paragraph_contract(
    body: str,
    rules: RuleView,
    *,
    required: set[int],
    allowed: set[int],
    min_count: int = 0,
    max_count: int | None = None,
) -> Contract:
    """The writer's targeted-rewrite contract (see module docstring)."""
    count = len(split_paragraphs(body))

    def check(out: ParagraphEdits) -> list[Violation]:
        found: list[Violation] = []
        seen: set[int] = set()
        for e in out.paragraphs:
            if e.index in seen:
                found.append(Violation(code="CONTRACT_PARAGRAPH_DUPLICATE", detail=f"paragraph {e.index} given twice"))
            seen.add(e.index)
            if e.index not in allowed or not 0 <= e.index < count:
                found.append(
                    Violation(code="CONTRACT_PARAGRAPH_UNEXPECTED", detail=f"paragraph {e.index} was not asked for")
                )
            text = e.text.strip()
            if not text:
                found.append(Violation(code="CONTRACT_PARAGRAPH_EMPTY", detail=f"paragraph {e.index} is empty"))
            elif "\n" in text or "\r" in text:
                found.append(
                    Violation(code="CONTRACT_PARAGRAPH_MULTILINE", detail=f"paragraph {e.index} must stay one line")
                )
            bad = forbidden_in(e.text, rules)
            if bad:
                found.append(
                    Violation(
                        code="CONTRACT_FORBIDDEN_PHRASE",
                        detail=f"paragraph {e.index} still contains forbidden: {'、'.join(bad)}",
                    )
                )
        missing = sorted(required - seen)
        if missing:
            found.append(Violation(code="CONTRACT_PARAGRAPH_MISSING", detail=f"paragraphs {missing} are missing"))
        if len(seen) < min_count:
            found.append(Violation(code="CONTRACT_PARAGRAPH_MISSING", detail=f"give at least {min_count} paragraph"))
        if max_count is not None and len(seen) > max_count:
            found.append(
                Violation(code="CONTRACT_PARAGRAPH_TOO_MANY", detail=f"at most {max_count} paragraphs, got {len(seen)}")
            )
        return found

    return check


async def targeted_rewrite(
    state: LoopState,
    caller: Caller,
    *,
    step: str,
    kind: str,
    task: str,
    required: set[int],
    allowed: set[int],
    task_fields: dict[str, object],
    min_count: int = 0,
    max_count: int | None = None,
) -> StepOutcome:
    """Ask the writer for new texts of some paragraphs and splice them in; one step outcome."""
    if not caller.configured("writer"):
        return state.add(StepOutcome.skipped(step, NO_MODEL))
    p = prompt("writer", task)
    fields: dict[str, object] = {"chapter": state.chapter, "numbered": numbered(state.text), **task_fields}
    contract = paragraph_contract(
        state.text, state.rules, required=required, allowed=allowed, min_count=min_count, max_count=max_count
    )
    try:
        value, _ = await caller.call(
            "writer", ParagraphEdits, p.messages(writer_system_fields(state.rules), fields), [contract], p.sha256
        )
    except ModelCallFailed as exc:
        state.error_code = exc.code
        return state.add(StepOutcome.error(step, exc.code, failed_closed("the writer's answer", exc)))
    edits = {e.index: e.text for e in value.paragraphs}
    new = splice_paragraphs(state.text, edits)  # asserts every other paragraph is byte-identical
    state.change_text(new, step, kind, sorted(edits))
    return state.add(StepOutcome.passed(step, f"rewrote paragraphs {sorted(edits)}"))


async def fix_forbidden(state: LoopState, caller: Caller) -> None:
    """The hard-rule step: find forbidden phrases; rewrite only their paragraphs; verify they are gone."""
    hits = forbidden_hits(state.text, state.rules)
    warn = f"; {len(state.fatigue)} fatigue warning(s) for the editor" if state.fatigue else ""
    if not hits:
        state.add(StepOutcome.passed("rules", "no forbidden phrase" + warn))
        return
    targets = sorted({i for h in hits for i in h.paragraphs})
    phrases = [h.phrase for h in hits]
    state.add(StepOutcome.failed("rules", f"forbidden {'、'.join(phrases)} in paragraphs {targets}" + warn))
    out = await targeted_rewrite(
        state,
        caller,
        step="forbidden_rewrite",
        kind="forbidden_rewrite",
        task="paragraphs",
        required=set(targets),
        allowed=set(targets),
        task_fields={"indices": "、".join(map(str, targets)), "phrases": "、".join(phrases)},
    )
    if out.status == "passed":
        remaining = forbidden_hits(state.text, state.rules)
        if remaining:  # the contract makes this unreachable; checked again because it is the rule
            state.steps[-1] = StepOutcome.failed(
                "forbidden_rewrite", f"still contains {'、'.join(h.phrase for h in remaining)}"
            )
