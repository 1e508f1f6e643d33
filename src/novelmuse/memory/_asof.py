"""As-of state (seed 003 step 2: 卡索引按 asOf 重建当前态，带出历史来源指针).

Every attribute and relation of every card is a sorted list of change points: the chapter a value starts
to hold, the value (None = no value from here on) and the pointer to where it came from (the author's card
file and line, or an accepted fact card: chapter, offsets and receipt id). `as_of(N)` — the state at the END
of chapter N — is one bisect per list, so a book of 1,000 chapters and 500 cards answers in milliseconds.

Merge rule: the most recent change at or before N wins. At the same chapter an author's card value wins
over a fact card (the author's files are the source of truth), and a fact card wins over the end of an
author range (`to: N-1`), which only says the author's value stopped holding.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Literal

from ._cards import AuthorEntry, Card, CardSet, Scalar

Key = tuple[str, ...]  # ("attr", name) or ("rel", type, target)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a value came from: the author's card (file:line, optional chapter span) or a fact card."""

    kind: Literal["author", "fact"]
    file: str | None = None  # an author's card file (relative to the book root) …
    line: int | None = None  # … and the line the value is written on
    chapter: int | None = None
    start: int | None = None
    end: int | None = None
    receipt_id: str | None = None
    fact_card_id: str | None = None

    def describe(self) -> str:
        """One short human form: ``cards/guan-yu.yaml:12`` or ``fact ch.77 [1234:1250] receipt R…``."""
        if self.kind == "author":
            span = f" (ch.{self.chapter} [{self.start}:{self.end}])" if self.chapter is not None else ""
            return f"{self.file}:{self.line}{span}"
        return f"fact card ch.{self.chapter} [{self.start}:{self.end}] receipt {self.receipt_id}"


@dataclass(frozen=True, slots=True)
class _Change:
    chapter: int
    value: Scalar | None
    source: Source
    author_start: bool  # an author's range start (wins over a fact at the same chapter)
    note: str = ""  # the author's note on the value (cards only)


@dataclass
class _Series:
    starts: list[int] = field(default_factory=list)
    changes: list[_Change] = field(default_factory=list)

    def put(self, change: _Change) -> bool:
        """Insert keeping order; at an equal chapter apply the merge rule. True if the change took effect."""
        i = bisect_left(self.starts, change.chapter)
        if i < len(self.starts) and self.starts[i] == change.chapter:
            if self.changes[i].author_start and not change.author_start:
                return False
            self.changes[i] = change
            return True
        self.starts.insert(i, change.chapter)
        self.changes.insert(i, change)
        return True

    def at(self, chapter: int) -> _Change | None:
        i = bisect_right(self.starts, chapter)
        return self.changes[i - 1] if i else None


@dataclass(frozen=True, slots=True)
class ValueAt:
    """An attribute's value at the queried chapter: since which chapter it holds, its source, the author's note."""

    value: Scalar
    since: int
    source: Source
    note: str = ""


@dataclass(frozen=True, slots=True)
class RelationAt:
    """A relation holding at the queried chapter: the target card's id and name, and the author's note."""

    type: str
    target: str
    since: int
    source: Source
    target_name: str = ""
    note: str = ""


@dataclass(frozen=True)
class CardState:
    """One card at the end of a chapter."""

    card_id: str
    type: str
    name: str
    aliases: list[str]
    as_of: int
    attributes: dict[str, ValueAt]
    relations: list[RelationAt]


def _author_changes(card: Card) -> dict[Key, _Series]:
    out: dict[Key, _Series] = {}
    groups: list[tuple[Key, list[AuthorEntry]]] = [(("attr", a), es) for a, es in card.attributes.items()]
    groups += [(("rel", t, target), es) for (t, target), es in card.relations.items()]
    for key, entries in groups:
        series = out.setdefault(key, _Series())
        ends: list[_Change] = []
        for e in entries:
            span = e.span
            src = Source(
                "author",
                e.file,
                e.line,
                span.chapter if span else None,
                span.start if span else None,
                span.end if span else None,
            )
            series.put(_Change(e.start, e.value, src, True, e.note))
            if e.end is not None:
                ends.append(_Change(e.end + 1, None, src, False))
        for end in ends:  # an author start at the same chapter wins over the end of the previous range
            series.put(end)
    return out


class CardIndex:
    """The as-of index over a card set plus accepted fact-card changes."""

    def __init__(self, cards: CardSet):
        self.cards = cards
        self._series: dict[str, dict[Key, _Series]] = {cid: _author_changes(c) for cid, c in cards.cards.items()}

    @classmethod
    def from_series(cls, cards: CardSet, series: dict[str, dict[Key, _Series]]) -> CardIndex:
        """An index over already-merged change series (the replay cache stores them per card)."""
        index = cls.__new__(cls)
        index.cards = cards
        index._series = series
        return index

    def series(self) -> dict[str, dict[Key, _Series]]:
        """Every card's change series (what the replay cache stores)."""
        return self._series

    def add_fact_change(self, card_id: str, key: Key, chapter: int, value: Scalar | None, source: Source) -> bool:
        """Record an accepted fact-card change; False if an author value at the same chapter overrides it."""
        return self._series[card_id].setdefault(key, _Series()).put(_Change(chapter, value, source, False))

    def value_at(self, card_id: str, attribute: str, chapter: int) -> ValueAt | None:
        """One attribute of one card at the end of `chapter`."""
        series = self._series[card_id].get(("attr", attribute))
        ch = series.at(chapter) if series else None
        return None if ch is None or ch.value is None else ValueAt(ch.value, ch.chapter, ch.source, ch.note)

    def history(self, card_id: str, chapter: int) -> dict[str, list[ValueAt]]:
        """Every value each attribute took up to the end of `chapter`, oldest first, with its source
        (seed 003: 带出历史来源指针). An attribute that stopped holding has a last entry of value None
        left out; its earlier values stay listed."""
        out: dict[str, list[ValueAt]] = {}
        for key, series in self._series[card_id].items():
            if key[0] != "attr":
                continue
            values = [
                ValueAt(ch.value, ch.chapter, ch.source, ch.note)
                for ch in series.changes
                if ch.chapter <= chapter and ch.value is not None
            ]
            if values:
                out[key[1]] = values
        return out

    def card_as_of(self, card_id: str, chapter: int) -> CardState:
        """The full state of one card at the end of `chapter`."""
        card = self.cards.cards[card_id]
        attrs: dict[str, ValueAt] = {}
        rels: list[RelationAt] = []
        for key, series in self._series[card_id].items():
            ch = series.at(chapter)
            if ch is None or ch.value is None:
                continue
            if key[0] == "attr":
                attrs[key[1]] = ValueAt(ch.value, ch.chapter, ch.source, ch.note)
            elif ch.value is not False:
                target = self.cards.cards.get(key[2])
                name = target.name if target is not None else ""
                rels.append(RelationAt(key[1], key[2], ch.chapter, ch.source, name, ch.note))
        return CardState(card.id, card.type, card.name, list(card.aliases), chapter, attrs, rels)

    def as_of(self, chapter: int) -> dict[str, CardState]:
        """Every card's state at the end of `chapter`."""
        return {cid: self.card_as_of(cid, chapter) for cid in self._series}
