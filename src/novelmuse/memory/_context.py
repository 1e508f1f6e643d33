"""Memory context: the story so far as a model is told it — built here, once, for every role that reads it.

- `memory_context(book, chapter, memory)` → `MemoryContext`, what the consistency reviewer reads: card states
  as of the chapter before, active foreshadows, and the previous chapter's ending. Card states and the ledger
  come from `replay` (author cards + fine outlines + accepted fact cards); when that is unavailable (no cards/
  or outlines/, an error while loading) the context says so explicitly (`available=False` with a note) — the
  review still runs on the text and its record shows that it ran without memory, never pretending it had it.
- `extraction_context(book, chapter, cards)` → `ExtractionContext`, what the fact extractor reads: the known
  cards (names and aliases) and the foreshadows still open before the chapter, plus the chapter's own outline
  plants (to be confirmed under the author's ids, not planted again under new ones).

Every line keeps the source pointers of the facts it states (card file and line, fact card and receipt), so a
judgement made on it can be traced back; the text is what the model reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..book import Book, FineOutline
from ..errors import FailedClosed
from ..text import split_paragraphs
from ._asof import CardState, Source
from ._cards import CardSet
from ._ledger import ActiveList
from ._replay import MemoryCursor, MemoryState, replay

PREVIOUS_ENDING_CHARS = 400


@dataclass(frozen=True)
class ContextLine:
    """One line of memory context as a model reads it, and where its facts came from."""

    text: str
    sources: tuple[Source, ...] = ()


@dataclass(frozen=True)
class MemoryContext:
    """What the consistency reviewer is told about the story so far."""

    available: bool
    note: str
    card_lines: tuple[ContextLine, ...] = ()
    foreshadow_lines: tuple[ContextLine, ...] = ()
    previous_ending: str = ""

    @property
    def card_states(self) -> list[str]:
        """Each card's state as of the chapter before, one line per card."""
        return [line.text for line in self.card_lines]

    @property
    def foreshadows(self) -> list[str]:
        """Each active foreshadow with its age and payoff chapter, one line each."""
        return [line.text for line in self.foreshadow_lines]


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


def story_memory(book: Book) -> MemoryState | str:
    """The book's story memory (cards + fine outlines + accepted fact cards), or why it is unavailable."""
    if not book.cards_dir.is_dir() and not book.outlines_dir.is_dir():
        return "no cards/ or outlines/ in this book"
    try:
        return replay(book)
    except FailedClosed as exc:  # a broken card or outline is bad input: it ends the command (exit 2), as everywhere
        return f"story memory could not be loaded ({exc.code})"


def _card_lines(states: dict[str, CardState]) -> tuple[ContextLine, ...]:
    lines: list[ContextLine] = []
    for card in states.values():
        attrs = "，".join(f"{k}={v.value}" for k, v in sorted(card.attributes.items()))
        rels = "，".join(f"{r.type}→{r.target}" for r in card.relations)
        alias = f"(又名{'、'.join(card.aliases)})" if card.aliases else ""
        text = f"{card.name}{alias}[{card.type}]: " + ";".join(x for x in (attrs, rels) if x)
        sources = [v.source for _, v in sorted(card.attributes.items())] + [r.source for r in card.relations]
        lines.append(ContextLine(text, tuple(sources)))
    return tuple(lines)


def _foreshadow_lines(active: ActiveList, label: Callable[[int], str]) -> tuple[ContextLine, ...]:
    """One line per active foreshadow, its chapters named the book's way (`label`: 第3回 in a book of 回)."""
    lines = []
    for f in active.items:
        due = f",预计{label(f.payoff_chapter)}回收" if f.payoff_chapter else ""
        late = ",已逾期" if f.overdue else ""
        text = f"{f.id}: {f.description}({label(f.planted_chapter)}埋设,已 {f.age} 章{due}{late})"
        lines.append(ContextLine(text, (f.source,)))
    return tuple(lines)


def memory_context(book: Book, chapter: int, memory: MemoryState | str | None = None) -> MemoryContext:
    """The reviewer's memory for `chapter`: as-of card states, active foreshadows, previous ending.

    `memory` is a replayed state to reuse across chapters (or the reason it is unavailable); by
    default the book's memory is replayed here.
    """
    ending = previous_ending(book, chapter)
    got = story_memory(book) if memory is None else memory
    if isinstance(got, str):
        return MemoryContext(False, got, previous_ending=ending)
    as_of = chapter - 1
    try:
        cards = _card_lines(got.as_of(as_of)) if as_of >= 1 else ()
        foreshadows = _foreshadow_lines(got.active_foreshadows(as_of), book.chapter_label) if as_of >= 1 else ()
    except FailedClosed as exc:
        return MemoryContext(False, f"story memory could not be queried ({exc.code})", previous_ending=ending)
    return MemoryContext(True, f"story memory as of chapter {as_of}", cards, foreshadows, ending)


@dataclass(frozen=True)
class ExtractionContext:
    """What the fact extractor is told before reading chapter `chapter`."""

    chapter: int
    known_cards: tuple[ContextLine, ...]  # every card: name and aliases
    open_foreshadows: tuple[ContextLine, ...]  # active before the chapter, then the chapter's own outline plants


def extraction_context(
    book: Book,
    chapter: int,
    cards: CardSet,
    *,
    cursor: MemoryCursor | None = None,
    state: MemoryState | None = None,
    outline: FineOutline | None = None,
    advance: bool = True,
) -> ExtractionContext:
    """The extractor's context for `chapter` (deterministic: same files → same context).

    `cursor`: the memory replayed in chapter order, advanced here to just before `chapter` (a sync keeps one for
    all its chapters: a replay per chapter made its bookkeeping quadratic); a fresh one otherwise. `state` (the
    memory replayed through chapter − 1) and `outline` (the chapter's own fine outline) are for a caller that
    holds them already — the writer, extracting the facts of a candidate of chapter N as of N − 1. `advance=False`:
    the cursor stays where the caller put it (a concurrent sync, whose chapters just before are still in flight)."""
    if state is not None:
        active = state.active_foreshadows(max(chapter - 1, 0))
        outlines = state.outlines
    else:
        cursor = cursor if cursor is not None else MemoryCursor(book, cards)
        if advance:
            cursor.advance(chapter - 1)
        active = cursor.active_foreshadows(max(chapter - 1, 0))
        outlines = cursor.outlines
    known = tuple(
        ContextLine(f"{c.name}：{'、'.join(c.aliases) or '（无别名）'}", (Source("author", c.file, c.line),))
        for c in sorted(cards.cards.values(), key=lambda c: c.id)
    )
    label = book.chapter_label
    lines = [
        ContextLine(f"{a.id}：{a.description}（{label(a.planted_chapter)}埋设）", (a.source,)) for a in active.items
    ]
    # this chapter's own outline plants: the model should report them under the author's ids (a confirmation),
    # not plant them again under new ids (a duplicate entry that also counts against the plant cap)
    outline = outline if outline is not None else outlines.get(chapter)  # every outline is loaded
    if outline is not None:
        lines += [ContextLine(f"{p.id}：{p.description}（本章细纲埋设）") for p in outline.plants]
    return ExtractionContext(chapter, known, tuple(lines))
