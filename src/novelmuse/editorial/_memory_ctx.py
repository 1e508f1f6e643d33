"""The memory the consistency reviewer reads: card states as of the previous chapter, active
foreshadows, and the previous chapter's ending.

One narrow function so the loop never depends on how story memory is built. The previous chapter's
ending is read from the author's file (deterministic, always available). Card states and the
foreshadow ledger come from `novelmuse.memory.replay` (author cards + fine outlines + accepted fact
cards); when that is unavailable (no cards/ or outlines/, an error while loading), the context says
so explicitly (`available=False` with a note) — the review still runs on the text and the report
shows that it ran without memory, never pretending it had it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..book import Book
from ..errors import MuseError
from ..memory import ActiveList, CardState, MemoryState, replay
from ..text import split_paragraphs

PREVIOUS_ENDING_CHARS = 400


@dataclass(frozen=True)
class MemoryContext:
    """What the reviewer is told about the story so far."""

    available: bool
    note: str
    card_states: list[str] = field(default_factory=list)
    foreshadows: list[str] = field(default_factory=list)
    previous_ending: str = ""


def previous_ending(book: Book, chapter: int, max_chars: int = PREVIOUS_ENDING_CHARS) -> str:
    """The last paragraphs (≤ `max_chars` characters) of the chapter before `chapter`, or ''."""
    before = [n for n in book.chapter_numbers() if n < chapter]
    if not before:
        return ""
    body = book.read_chapter(before[-1]).body
    picked: list[str] = []
    total = 0
    for p in reversed(split_paragraphs(body)):
        text = p.text.strip()
        if picked and total + len(text) > max_chars:
            break
        picked.append(text[-max_chars:])
        total += len(text)
    return "\n".join(reversed(picked))


def load_memory(book: Book) -> MemoryState | str:
    """The book's story memory (cards + fine outlines + accepted fact cards), or why it is unavailable."""
    if not book.cards_dir.is_dir() and not book.outlines_dir.is_dir():
        return "no cards/ or outlines/ in this book"
    try:
        return replay(book)
    except MuseError as exc:
        return f"story memory could not be loaded ({exc.code})"


def _describe_state(states: dict[str, CardState]) -> list[str]:
    lines: list[str] = []
    for card in states.values():
        attrs = "，".join(f"{k}={v.value}" for k, v in sorted(card.attributes.items()))
        rels = "，".join(f"{r.type}→{r.target}" for r in card.relations)
        alias = f"(又名{'、'.join(card.aliases)})" if card.aliases else ""
        lines.append(f"{card.name}{alias}[{card.type}]: " + ";".join(x for x in (attrs, rels) if x))
    return lines


def _describe_foreshadows(active: ActiveList) -> list[str]:
    lines = []
    for f in active.items:
        due = f",预计第{f.payoff_chapter}章回收" if f.payoff_chapter else ""
        late = ",已逾期" if f.overdue else ""
        lines.append(f"{f.id}: {f.description}(第{f.planted_chapter}章埋设,已 {f.age} 章{due}{late})")
    return lines


def memory_context(book: Book, chapter: int, memory: MemoryState | str | None = None) -> MemoryContext:
    """The reviewer's memory for `chapter`: as-of card states, active foreshadows, previous ending.

    `memory` is a replayed state to reuse across chapters (or the reason it is unavailable); by
    default the book's memory is replayed here.
    """
    ending = previous_ending(book, chapter)
    got = load_memory(book) if memory is None else memory
    if isinstance(got, str):
        return MemoryContext(False, got, previous_ending=ending)
    as_of = chapter - 1
    try:
        states = _describe_state(got.as_of(as_of)) if as_of >= 1 else []
        foreshadows = _describe_foreshadows(got.active_foreshadows(as_of)) if as_of >= 1 else []
    except MuseError as exc:
        return MemoryContext(False, f"story memory could not be queried ({exc.code})", previous_ending=ending)
    return MemoryContext(True, f"story memory as of chapter {as_of}", states, foreshadows, ending)
