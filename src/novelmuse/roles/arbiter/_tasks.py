"""The arbiter's task: `DECIDE` keep rewriting or accept and continue (seed 004 失败裁定)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...text import chapter_label
from .._reviews import ConsistencyRoundView, EditorRoundView, reviews_json_lines
from .._task import RoleTask
from .schema import ArbiterDecision

MAX_DIFF_CHARS = 20_000


@dataclass(frozen=True)
class ArbiterRequest:
    """Every review of the chapter so far and the rewrite's paragraph diff (unified, one paragraph a line)."""

    chapter: int
    consistency: Sequence[ConsistencyRoundView]
    editor: Sequence[EditorRoundView]
    diff: str
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


def bounded_diff(diff: str) -> str:
    """The diff, cut at MAX_DIFF_CHARS with an explicit marker (never silently)."""
    if len(diff) > MAX_DIFF_CHARS:
        cut = len(diff) - MAX_DIFF_CHARS
        diff = diff[:MAX_DIFF_CHARS] + f"\n…(差异过长,后 {cut} 字未显示)"
    return diff


def _fields(r: ArbiterRequest) -> Mapping[str, object]:
    return {
        "chapter_label": chapter_label(r.unit, r.chapter),
        "reports": reviews_json_lines(r.consistency, r.editor),
        "diff": bounded_diff(r.diff),
    }


DECIDE: RoleTask[ArbiterRequest, ArbiterDecision] = RoleTask(
    role="arbiter",
    name="decide",
    schema=ArbiterDecision,
    system=("arbiter/system.txt",),
    user=("arbiter/input.txt",),
    fields=_fields,
)
