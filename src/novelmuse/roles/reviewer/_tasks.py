"""The reviewer's task: `REVIEW`, the consistency review of one chapter against the story memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ...llm import Contract, Violation
from ...text import chapter_label
from .._quotes import quote_violation
from .._task import RoleTask
from .schema import ConsistencyReport


class StoryMemory(Protocol):
    """What the reviewer is told about the story so far (built by `memory.memory_context`)."""

    @property
    def available(self) -> bool: ...
    @property
    def note(self) -> str: ...
    @property
    def card_states(self) -> Sequence[str]: ...
    @property
    def foreshadows(self) -> Sequence[str]: ...
    @property
    def previous_ending(self) -> str: ...


@dataclass(frozen=True)
class ReviewRequest:
    """Review chapter `chapter` (its current text) against the memory as of the chapter before."""

    chapter: int
    title: str
    chapter_text: str
    memory: StoryMemory
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


def _lines(lines: Sequence[str], empty: str) -> str:
    return "\n".join(lines) if lines else empty


def _fields(r: ReviewRequest) -> Mapping[str, object]:
    mem = r.memory
    empty = "(无)" if mem.available else f"(无:{mem.note})"
    return {
        "chapter_label": chapter_label(r.unit, r.chapter),
        "prev_label": chapter_label(r.unit, max(r.chapter - 1, 0)),
        "title": r.title,
        "card_states": _lines(mem.card_states, empty),
        "foreshadows": _lines(mem.foreshadows, empty),
        "previous_ending": mem.previous_ending or "(无:没有上一章)",
        "chapter_text": r.chapter_text,
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
