"""The 7-dimension editor (seed 004 七维评审), polish and rewrite.

Every dimension's evidence must be a verbatim quote found exactly once in the chapter (contract,
corrected within the call budget, else the step fails closed). The verdict is computed from the
scores (`compute_verdict`); the model's own verdict is stored beside it and disagreements counted.

伏笔健康 in the first `review.neutral_foreshadow_chapters` chapters (default 3): the model may give a
neutral score with empty evidence; the dimension is marked `neutral` and the computed verdict ignores
it (rather than substituting a made-up value such as 70), so an early chapter is judged on the six
dimensions that mean something there.
"""

from __future__ import annotations

from ..llm import ModelCallFailed, Violation
from ..roles.editor import FORESHADOW_DIM, EditorReport
from ..roles.writer import ChapterRewrite
from ..text import locate_quote, sha256_hex, split_paragraphs
from ._calls import Caller, Contract, failed_closed, normalized, prompt
from ._consistency import QUOTE_MIN_CHARS, quote_violation
from ._models import DimOut, EditorRound
from ._outcomes import NO_MODEL, StepOutcome
from ._repair import targeted_rewrite, writer_system_fields
from ._rules_step import fatigue_hits, forbidden_in
from ._state import LoopState
from ._verdict import compute_verdict


def evidence_contract(body: str, neutral_foreshadow: bool) -> Contract:
    """Each dimension's evidence is found exactly once in the chapter (empty allowed only for a neutral 伏笔健康)."""
    norm = normalized(body)

    def check(report: EditorReport) -> list[Violation]:
        found: list[Violation] = []
        for name, dim in report.dims.by_name().items():
            if neutral_foreshadow and name == FORESHADOW_DIM and not dim.evidence.strip():
                continue
            violation = quote_violation(norm, dim.evidence, f"dims.{name}.evidence")
            if violation is not None:
                found.append(violation)
        return found

    return check


async def editor_round(state: LoopState, caller: Caller, round_no: int, step: str) -> EditorRound | None:
    """One editor call on the current text; None when it failed closed (recorded as error)."""
    p = prompt("editor", "input")
    neutral = state.neutral_foreshadow
    # counted on the text being judged (a rewrite or repair may have changed it since the rules step)
    hits = fatigue_hits(state.text, state.rules)
    fatigue = "\n".join(f"{f.phrase}:{f.actual} 次(上限 {f.limit})" for f in hits) or "(无超限)"
    note = (
        f"本章是本书前 {state.config.neutral_foreshadow_chapters} 章之一:伏笔尚未展开,伏笔健康可给中性分,"
        "evidence 可为空字符串;该维不计入裁决。"
        if neutral
        else "正常评分,须引用原文举证。"
    )
    fields: dict[str, object] = {
        "chapter": state.chapter,
        "title": state.title,
        "style": state.rules.preferences.strip() or "(作者没有写文风要求)",
        "fatigue": fatigue,
        "foreshadow_note": note,
        "chapter_text": state.text,
    }
    try:
        report, call_id = await caller.call(
            "editor", EditorReport, p.messages({}, fields), [evidence_contract(state.text, neutral)], p.sha256
        )
    except ModelCallFailed as exc:
        state.error_code = exc.code
        state.add(StepOutcome.error(step, exc.code, failed_closed("the editor's answer", exc)))
        return None
    norm = normalized(state.text)
    dims: list[DimOut] = []
    for name, dim in report.dims.by_name().items():
        is_neutral = neutral and name == FORESHADOW_DIM
        m = locate_quote(norm, dim.evidence, min_chars=QUOTE_MIN_CHARS)
        dims.append(
            DimOut(
                name=name,
                score=dim.score,
                evidence=dim.evidence,
                start=m.start,
                end=m.end,
                neutral=is_neutral,
            )
        )
    computed = compute_verdict(
        report.overall, {d.name: d.score for d in dims}, ignore={FORESHADOW_DIM} if neutral else ()
    )
    rnd = EditorRound(
        round=round_no,
        text_sha256=sha256_hex(state.text),
        overall=report.overall,
        dims=dims,
        computed_verdict=computed,
        model_verdict=report.verdict,
        agrees=computed == report.verdict,
        notes=report.notes,
    )
    state.editor.append(rnd)
    state.editor_call_ids.append(call_id)
    detail = f"verdict {computed} (model said {report.verdict}), overall {report.overall}"
    if computed == "accept":
        state.add(StepOutcome.passed(step, detail))
    else:
        state.add(StepOutcome.failed(step, detail))
    return rnd


def rewrite_contract(state: LoopState) -> Contract:
    """A whole-chapter rewrite: not empty, several paragraphs if the original had several, no forbidden phrase."""
    min_paragraphs = 2 if len(split_paragraphs(state.text)) >= 2 else 1

    def check(out: ChapterRewrite) -> list[Violation]:
        found: list[Violation] = []
        if len(split_paragraphs(out.text)) < min_paragraphs:
            found.append(Violation(code="CONTRACT_REWRITE_EMPTY", detail="the rewritten chapter has no paragraphs"))
        bad = forbidden_in(out.text, state.rules)
        if bad:
            found.append(Violation(code="CONTRACT_FORBIDDEN_PHRASE", detail=f"contains forbidden: {'、'.join(bad)}"))
        return found

    return check


def _editor_report_text(rnd: EditorRound) -> str:
    dims = "\n".join(f"- {d.name}: {d.score}" + (" (中性)" if d.neutral else f"「{d.evidence}」") for d in rnd.dims)
    notes = "\n".join(f"- {n}" for n in rnd.notes) or "(无)"
    return f"overall {rnd.overall},裁决 {rnd.computed_verdict}\n{dims}\n意见:\n{notes}"


async def rewrite(state: LoopState, caller: Caller, rnd: EditorRound) -> StepOutcome:
    """The writer rewrites the whole chapter from the editor's report (verdict `rewrite`)."""
    if not caller.configured("writer"):
        return state.add(StepOutcome.skipped("rewrite", NO_MODEL))
    p = prompt("writer", "rewrite")
    fields: dict[str, object] = {
        "chapter": state.chapter,
        "report": _editor_report_text(rnd),
        "chapter_text": state.text,
    }
    try:
        value, _ = await caller.call(
            "writer",
            ChapterRewrite,
            p.messages(writer_system_fields(state.rules), fields),
            [rewrite_contract(state)],
            p.sha256,
        )
    except ModelCallFailed as exc:
        state.error_code = exc.code
        return state.add(StepOutcome.error("rewrite", exc.code, failed_closed("the writer's rewrite", exc)))
    new = value.text.replace("\r", "").strip("\n") + "\n"
    state.change_text(new, "rewrite", "rewrite", None)
    return state.add(StepOutcome.passed("rewrite", f"chapter rewritten ({len(split_paragraphs(new))} paragraphs)"))


async def polish(state: LoopState, caller: Caller, rnd: EditorRound) -> StepOutcome:
    """Targeted polish of at most `review.polish_max_paragraphs` paragraphs chosen by the writer from the notes."""
    count = len(split_paragraphs(state.text))
    most = state.config.polish_max_paragraphs
    return await targeted_rewrite(
        state,
        caller,
        step="polish",
        kind="polish",
        task="polish",
        required=set(),
        allowed=set(range(count)),
        min_count=1,
        max_count=most,
        task_fields={"notes": _editor_report_text(rnd), "max_paragraphs": most},
    )
