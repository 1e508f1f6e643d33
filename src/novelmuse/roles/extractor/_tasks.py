"""The extractor's task: `EXTRACT` the fact card of one finalised chapter (seed 004 事实卡)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...llm import Contract, Violation
from ...text import chapter_label
from .._quotes import normalized
from .._task import RoleTask
from .schema import FactCardOutput, quote_problems


@dataclass(frozen=True)
class ExtractRequest:
    """Extract the facts of chapter `chapter`, told the known cards and the foreshadows still open before it
    (lines built by `memory.extraction_context`) and the book's cap on new plants per chapter."""

    chapter: int
    title: str
    chapter_text: str
    known_cards: Sequence[str]
    open_foreshadows: Sequence[str]
    max_plants: int
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


def _fields(r: ExtractRequest) -> Mapping[str, object]:
    return {
        "chapter_label": chapter_label(r.unit, r.chapter),
        "title": r.title,
        "cards": "\n".join(r.known_cards) or "（无）",
        "foreshadows": "\n".join(r.open_foreshadows) or "（无）",
        "max_plants": r.max_plants,
        "chapter_text": r.chapter_text,
    }


def quotes_found_once(chapter_text: str) -> Contract[FactCardOutput]:
    """Every item's quote is found exactly once in the chapter (`quote_problems`)."""
    norm = normalized(chapter_text)  # memoised: a candidate's text is located against by several checks

    def check(out: FactCardOutput) -> list[Violation]:
        return [Violation(code=code, detail=detail) for code, detail in quote_problems(norm, out)]

    return check


EXTRACT: RoleTask[ExtractRequest, FactCardOutput] = RoleTask(
    role="extractor",
    name="extract",
    schema=FactCardOutput,
    system=("extractor/system.txt",),
    user=("extractor/input.txt",),
    fields=_fields,
    contracts=lambda r: [quotes_found_once(r.chapter_text)],
)
