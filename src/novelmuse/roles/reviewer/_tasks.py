"""The reviewer's task: `REVIEW`, the consistency review of one chapter against the story memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...llm import Contract, Violation
from ...text import chapter_label
from .._quotes import quote_violation
from .._reviews import StoryMemory, memory_fields
from .._task import RoleTask
from .schema import ConsistencyReport


@dataclass(frozen=True)
class ReviewRequest:
    """Review chapter `chapter` (its current text) against the memory as of the chapter before."""

    chapter: int
    title: str
    chapter_text: str
    memory: StoryMemory
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


def _fields(r: ReviewRequest) -> Mapping[str, object]:
    return {
        "chapter_label": chapter_label(r.unit, r.chapter),
        "title": r.title,
        "chapter_text": r.chapter_text,
        **memory_fields(r.chapter, r.memory, r.unit),
    }


def quote_contract(chapter_text: str) -> Contract[ConsistencyReport]:
    """Every issue quotes the chapter verbatim, found exactly once (after normalisation)."""

    def check(report: ConsistencyReport) -> list[Violation]:
        found = (quote_violation(chapter_text, i.quote, f"issues[{n}].quote") for n, i in enumerate(report.issues))
        return [v for v in found if v is not None]

    return check


REVIEW: RoleTask[ReviewRequest, ConsistencyReport] = RoleTask(
    role="reviewer",
    name="review",
    schema=ConsistencyReport,
    system=("reviewer/system.txt",),
    user=("reviewer/input.txt",),
    fields=_fields,
    contracts=lambda r: [quote_contract(r.chapter_text)],
)
