"""The editor's task: `REVIEW`, the 7-dimension review of one chapter (seed 004 七维评审)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...llm import Contract, Violation
from ...text import chapter_label
from .._quotes import quote_violation
from .._task import RoleTask
from .schema import FORESHADOW_DIM, EditorReport


@dataclass(frozen=True)
class EditorRequest:
    """Review the chapter's current text.

    `fatigue`: (phrase, count, limit) of every fatigue word over its limit in this text (the editor's
    reference). `neutral_foreshadow`: the chapter is one of the book's first `neutral_chapters`, where
    伏笔健康 may get a neutral score with empty evidence.
    """

    chapter: int
    title: str
    chapter_text: str
    preferences: str
    fatigue: Sequence[tuple[str, int, int]]
    neutral_foreshadow: bool
    neutral_chapters: int
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


def _fields(r: EditorRequest) -> Mapping[str, object]:
    note = (
        f"本章是本书前 {r.neutral_chapters} 章之一:伏笔尚未展开,伏笔健康可给中性分,"
        "evidence 可为空字符串;该维不计入裁决。"
        if r.neutral_foreshadow
        else "正常评分,须引用原文举证。"
    )
    return {
        "chapter_label": chapter_label(r.unit, r.chapter),
        "title": r.title,
        "style": r.preferences.strip() or "(作者没有写文风要求)",
        "fatigue": "\n".join(f"{phrase}:{count} 次(上限 {limit})" for phrase, count, limit in r.fatigue) or "(无超限)",
        "foreshadow_note": note,
        "chapter_text": r.chapter_text,
    }


def evidence_contract(chapter_text: str, neutral_foreshadow: bool) -> Contract[EditorReport]:
    """Each dimension's evidence is found exactly once in the chapter (empty allowed only for a neutral 伏笔健康)."""

    def check(report: EditorReport) -> list[Violation]:
        found: list[Violation] = []
        for name, dim in report.dims.by_name().items():
            if neutral_foreshadow and name == FORESHADOW_DIM and not dim.evidence.strip():
                continue
            violation = quote_violation(chapter_text, dim.evidence, f"dims.{name}.evidence")
            if violation is not None:
                found.append(violation)
        return found

    return check


REVIEW: RoleTask[EditorRequest, EditorReport] = RoleTask(
    role="editor",
    name="review",
    schema=EditorReport,
    system=("editor/system.txt",),
    user=("editor/input.txt",),
    fields=_fields,
    contracts=lambda r: [evidence_contract(r.chapter_text, r.neutral_foreshadow)],
)
