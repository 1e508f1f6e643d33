"""The 7-dimension editor (seed 004 七维评审), polish and rewrite.

Every dimension's evidence must be a verbatim quote found exactly once in the chapter (contract,
corrected within the call budget, else the step fails closed). The verdict is computed from the
scores (`compute_verdict`); the model's own verdict is stored beside it and disagreements counted.

伏笔健康 in the first `review.neutral_foreshadow_chapters` chapters (default and cap 3, seed 004 前3章"可给"
中性分): the model may give a neutral score with empty evidence; only then is the dimension marked `neutral`
and ignored by the computed verdict (rather than substituting a made-up value such as 70), so an early
chapter is judged on the six dimensions that mean something there. The window is a permission, not an
exemption: when the editor does quote foreshadow evidence in those chapters, its score counts.
"""

from __future__ import annotations

from ..llm import ModelCallFailed
from ..roles import chapter_quote
from ..roles.editor import FORESHADOW_DIM, REVIEW, EditorRequest
from ..roles.writer import POLISH, REWRITE, PolishRequest, RewriteRequest
from ..text import sha256_hex, split_paragraphs
from ._calls import Caller, failed_closed
from ._models import DimOut, EditorRound
from ._outcomes import NO_MODEL, StepOutcome
from ._repair import targeted_rewrite
from ._rules_step import fatigue_hits
from ._state import LoopState
from ._verdict import compute_verdict


def editor_request(state: LoopState) -> EditorRequest:
    """The editor's request for the current text."""
    return EditorRequest(
        chapter=state.chapter,
        title=state.title,
        chapter_text=state.text,
        preferences=state.rules.preferences,
        # counted on the text being judged (a rewrite or repair may have changed it since the rules step)
        fatigue=[(f.phrase, f.actual, f.limit) for f in fatigue_hits(state.text, state.rules)],
        neutral_foreshadow=state.neutral_foreshadow,
        neutral_chapters=state.config.neutral_foreshadow_chapters,
        unit=state.unit,
    )


async def editor_round(state: LoopState, caller: Caller, round_no: int, step: str) -> EditorRound | None:
    """One editor call on the current text; None when it failed closed (recorded as error)."""
    neutral = state.neutral_foreshadow
    try:
        report, call_id = await caller.call(REVIEW.render(editor_request(state)))
    except ModelCallFailed as exc:
        state.error_code = exc.code
        state.add(StepOutcome.error(step, exc.code, failed_closed("the editor's answer", exc)))
        return None
    dims: list[DimOut] = []
    for name, dim in report.dims.by_name().items():
        is_neutral = neutral and name == FORESHADOW_DIM and not dim.evidence.strip()  # no evidence given
        m = chapter_quote(state.text, dim.evidence)
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
    neutral_dims = {d.name for d in dims if d.neutral}
    computed = compute_verdict(report.overall, {d.name: d.score for d in dims}, ignore=neutral_dims)
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


async def rewrite(state: LoopState, caller: Caller, rnd: EditorRound) -> StepOutcome:
    """The writer rewrites the whole chapter from the editor's report (verdict `rewrite`)."""
    if not caller.configured("writer"):
        return state.add(StepOutcome.skipped("rewrite", NO_MODEL))
    try:
        request = RewriteRequest(state.chapter, state.text, state.rules, rnd, state.memory, state.unit)
        value, _ = await caller.call(REWRITE.render(request))
    except ModelCallFailed as exc:
        state.error_code = exc.code
        return state.add(StepOutcome.error("rewrite", exc.code, failed_closed("the writer's rewrite", exc)))
    new = value.text.replace("\r", "").strip("\n") + "\n"
    state.change_text(new, "rewrite", "rewrite", None)
    return state.add(StepOutcome.passed("rewrite", f"chapter rewritten ({len(split_paragraphs(new))} paragraphs)"))


async def polish(state: LoopState, caller: Caller, rnd: EditorRound) -> StepOutcome:
    """Targeted polish of at most `review.polish_max_paragraphs` paragraphs chosen by the writer from the notes."""
    request = PolishRequest(
        state.chapter, state.text, state.rules, rnd, state.config.polish_max_paragraphs, state.memory, state.unit
    )
    return await targeted_rewrite(state, caller, step="polish", kind="polish", task=POLISH, request=request)
