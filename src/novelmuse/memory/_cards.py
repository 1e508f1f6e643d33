"""Canon cards (``cards/*.yaml``): load, validate with file:line errors, resolve any name or alias.

One card per file::

    id: guan-yu
    type: character                      # character / place / item / faction / concept
    name: 关羽
    aliases: [云长, 关公, 关云长]
    attributes:
      status:                            # values valid over chapter ranges; `to` is inclusive, absent = open
        - {value: alive, from: 1, to: 76}
        - value: dead
          from: 77
          source: {chapter: 77, start: 1234, end: 1250}   # offsets into chapter 77's body
    relations:
      - {type: 结义兄弟, target: liu-bei, from: 1}

Problems found across the card set: overlapping ranges of one attribute or relation, a relation to an
unknown card id, a name or alias claimed by two cards (both places named), duplicate ids, bad types,
source pointers outside their chapter. Codes are ``CARD_*``; loading raises the first (exit 2),
`lint_cards` lists them all.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..book import Book, LineDict, LineList, line_of, load_yaml_lines, read_chapter_file, validate_located
from ..errors import InputError, MuseError

CardType = Literal["character", "place", "item", "faction", "concept"]
Scalar = str | int | float | bool


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class SourceSpan(_Strict):
    """A span of a chapter's body: [start, end) character offsets."""

    chapter: int = Field(ge=0)  # 0 is the prologue (序, chapters/0000.md)
    start: int = Field(ge=0)
    end: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> SourceSpan:
        if self.end <= self.start:
            raise ValueError(f"source end ({self.end}) must be greater than start ({self.start})")
        return self


class _Ranged(_Strict):
    from_: int = Field(alias="from", ge=0)  # 0: from the prologue (序) on
    to: int | None = Field(default=None, ge=0)
    source: SourceSpan | None = None
    note: str = ""

    @model_validator(mode="after")
    def _range(self) -> _Ranged:
        if self.to is not None and self.to < self.from_:
            raise ValueError(f"range ends (to: {self.to}) before it starts (from: {self.from_})")
        return self


class RangedValue(_Ranged):
    """An attribute value valid from chapter `from` through `to` (inclusive; open when absent)."""

    value: Scalar


class RelationEntry(_Ranged):
    """A relation of `type` to another card id, valid over a chapter range."""

    type: str = Field(min_length=1)
    target: str = Field(min_length=1)


class CardFile(_Strict):
    """The content of one ``cards/*.yaml`` file."""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-.\u4e00-\u9fff]{1,64}$")
    type: CardType
    name: str = Field(min_length=1)
    aliases: list[str] = []
    description: str = ""
    attributes: dict[str, list[RangedValue]] = {}
    relations: list[RelationEntry] = []

    @model_validator(mode="after")
    def _names(self) -> CardFile:
        for a in self.aliases:
            if not a.strip():
                raise ValueError("an alias is empty")
        return self


@dataclass(frozen=True, slots=True)
class AuthorEntry:
    """One ranged value (or relation) as written by the author, with where it was written."""

    value: Scalar
    start: int
    end: int | None
    file: str  # relative to the book root
    line: int
    span: SourceSpan | None


@dataclass
class Card:
    """A loaded, validated canon card."""

    id: str
    type: CardType
    name: str
    aliases: list[str]
    description: str
    file: str
    line: int
    attributes: dict[str, list[AuthorEntry]] = field(default_factory=dict)
    relations: dict[tuple[str, str], list[AuthorEntry]] = field(default_factory=dict)  # (type, target) →
    name_lines: dict[str, int] = field(default_factory=dict)  # id, name or alias → the line it is written on

    def line_of_name(self, name: str) -> int:
        """The line where this card writes `name` (its id, name or an alias); the card's first line otherwise."""
        return self.name_lines.get(name, self.line)

    @property
    def all_names(self) -> list[str]:
        """Name first, then aliases (deduplicated, in order)."""
        return list(dict.fromkeys([self.name, *self.aliases]))


@dataclass(frozen=True, slots=True)
class CardProblem:
    """One problem in the card set: stable code, message, where (file:line) and, for conflicts, the other place."""

    code: str
    message: str
    where: str
    other: str | None = None

    def to_error(self, more: int = 0) -> InputError:
        """The problem as the exception `load_cards` raises."""
        what = self.message + (f" (also at {self.other})" if self.other else "")
        if more:
            what += f" (+{more} more problems)"
        return InputError(self.code, what, self.where, "fix the card file (run `muse cards lint` to list all)")


@dataclass
class CardSet:
    """Every card of the book, with a lookup by id, name or alias."""

    cards: dict[str, Card]
    by_name: dict[str, str]  # any name or alias (and the id) → card id

    def resolve(self, name: str) -> Card | None:
        """The card called `name` (id, name or any alias), or None."""
        cid = self.by_name.get(name.strip())
        return None if cid is None else self.cards[cid]

    def require(self, name: str) -> Card:
        """Like `resolve`, but an unknown name is an error listing a few known names."""
        card = self.resolve(name)
        if card is None:
            known = ", ".join(c.name for c in list(self.cards.values())[:8]) or "none"
            raise InputError(
                "CARD_NOT_FOUND",
                f"no card is called {name!r} (cards: {known}{', …' if len(self.cards) > 8 else ''})",
                "cards/",
                "use a card's id, name or one of its aliases",
            )
        return card

    def lexicon(self) -> list[str]:
        """Every name and alias (sorted): the words of the tokenizer and of the mention index."""
        return sorted({n for c in self.cards.values() for n in c.all_names})


def _entries(raw: Any, key_path: tuple[Any, ...], values: list[Any], rel: str, value_of: Any) -> list[AuthorEntry]:
    out: list[AuthorEntry] = []
    for i, v in enumerate(values):
        out.append(AuthorEntry(value_of(v), v.from_, v.to, rel, line_of(raw, (*key_path, i)), v.source))
    return out


def _overlaps(entries: list[AuthorEntry]) -> list[tuple[AuthorEntry, AuthorEntry]]:
    ordered = sorted(entries, key=lambda e: e.start)
    out = []
    for a, b in itertools.pairwise(ordered):
        if a.end is None or a.end >= b.start:
            out.append((a, b))
    return out


def _parse_card(book: Book, path: Path) -> Card:
    rel = str(path.relative_to(book.root))
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("CARD_SYNTAX", f"not UTF-8 (byte {exc.start})", f"{rel}:1", "save the file as UTF-8") from exc
    raw = load_yaml_lines(Path(rel), code_prefix="CARD", text=text)
    if not isinstance(raw, LineDict):
        raise InputError("CARD_INVALID", "a card file must be one mapping (id, type, name, …)", f"{rel}:1", "")
    model = validate_located(CardFile, raw, Path(rel), code="CARD_INVALID", fix="fix the card (see README: cards)")
    card = Card(model.id, model.type, model.name, list(model.aliases), model.description, rel, raw.line)
    aliases = raw.get("aliases")
    alias_lines = aliases.item_lines if isinstance(aliases, LineList) else []
    for i, alias in reversed(list(enumerate(model.aliases))):  # the first place an alias is written wins
        card.name_lines[alias] = alias_lines[i] if i < len(alias_lines) else line_of(raw, ("aliases",))
    card.name_lines[model.name] = line_of(raw, ("name",))
    card.name_lines.setdefault(model.id, line_of(raw, ("id",)))
    for attr, values in model.attributes.items():
        card.attributes[attr] = _entries(raw, ("attributes", attr), values, rel, lambda v: v.value)
    rel_lines = raw.get("relations", LineList())
    for i, r in enumerate(model.relations):
        line = rel_lines.item_lines[i] if isinstance(rel_lines, LineList) else raw.line
        card.relations.setdefault((r.type, r.target), []).append(AuthorEntry(True, r.from_, r.to, rel, line, r.source))
    return card


def card_paths(book: Book) -> list[Path]:
    """Every ``cards/*.yaml`` / ``*.yml`` file, sorted by name."""
    if not book.cards_dir.is_dir():
        return []
    return sorted(p for p in book.cards_dir.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def lint_cards(book: Book, *, check_sources: bool = True) -> tuple[CardSet, list[CardProblem]]:
    """Load every card and list every problem (never raises for a card problem)."""
    problems: list[CardProblem] = []
    cards: dict[str, Card] = {}
    for path in card_paths(book):
        try:
            card = _parse_card(book, path)
        except MuseError as exc:
            problems.append(CardProblem(exc.code, exc.what, exc.where))
            continue
        if card.id in cards:
            first = cards[card.id]
            problems.append(
                CardProblem(
                    "CARD_DUPLICATE_ID",
                    f"card id {card.id!r} is used by two files",
                    f"{card.file}:{card.line_of_name(card.id)}",
                    f"{first.file}:{first.line_of_name(card.id)}",
                )
            )
            continue
        cards[card.id] = card
    by_name: dict[str, str] = {}
    for card in cards.values():
        for name in [card.id, *card.all_names]:
            owner = by_name.get(name)
            if owner is not None and owner != card.id:
                other = cards[owner]
                problems.append(
                    CardProblem(
                        "CARD_ALIAS_CONFLICT",
                        f"{name!r} is claimed by card {card.id!r} and by card {owner!r}",
                        f"{card.file}:{card.line_of_name(name)}",
                        f"{other.file}:{other.line_of_name(name)}",
                    )
                )
                continue
            by_name[name] = card.id
    for card in cards.values():
        for attr, entries in card.attributes.items():
            for a, b in _overlaps(entries):
                problems.append(
                    CardProblem(
                        "CARD_RANGE_OVERLAP",
                        f"card {card.id!r} attribute {attr!r}: ranges from {a.start} and from {b.start} overlap",
                        f"{card.file}:{b.line}",
                        f"{card.file}:{a.line}",
                    )
                )
        for (rtype, target), entries in card.relations.items():
            if target not in cards:
                hint = f" (did you mean id {by_name[target]!r}?)" if target in by_name else ""
                problems.append(
                    CardProblem(
                        "CARD_UNKNOWN_REFERENCE",
                        f"card {card.id!r} relation {rtype!r} names unknown card id {target!r}{hint}",
                        f"{card.file}:{entries[0].line}",
                    )
                )
            for a, b in _overlaps(entries):
                problems.append(
                    CardProblem(
                        "CARD_RANGE_OVERLAP",
                        f"card {card.id!r} relation {rtype!r}→{target!r}: ranges from {a.start} and {b.start} overlap",
                        f"{card.file}:{b.line}",
                        f"{card.file}:{a.line}",
                    )
                )
    if check_sources:
        problems.extend(_check_sources(book, cards))
    return CardSet(cards, by_name), problems


def _check_sources(book: Book, cards: dict[str, Card]) -> list[CardProblem]:
    lengths: dict[int, int | None] = {}
    paths = book.chapter_paths()
    out: list[CardProblem] = []
    for card in cards.values():
        all_entries = [e for es in card.attributes.values() for e in es]
        all_entries += [e for es in card.relations.values() for e in es]
        for e in all_entries:
            if e.span is None:
                continue
            n = e.span.chapter
            if n not in lengths:
                lengths[n] = len(read_chapter_file(n, paths[n]).body) if n in paths else None
            length = lengths[n]
            if length is None:
                out.append(
                    CardProblem(
                        "CARD_SOURCE_MISSING", f"source names chapter {n}, which does not exist", f"{e.file}:{e.line}"
                    )
                )
            elif e.span.end > length:
                out.append(
                    CardProblem(
                        "CARD_SOURCE_OUT_OF_RANGE",
                        f"source span {e.span.start}-{e.span.end} is outside chapter {n} ({length} characters)",
                        f"{e.file}:{e.line}",
                    )
                )
    return out


def load_cards(book: Book) -> CardSet:
    """Load and validate every card; the first problem is raised (InputError, exit 2)."""
    cards, problems = lint_cards(book, check_sources=False)
    if problems:
        raise problems[0].to_error(len(problems) - 1)
    return cards
