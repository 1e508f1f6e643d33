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
`lint_cards` lists them all (every unknown key and every invalid field, each with its line).

Strict values: chapters are integers 0…`MAX_CHAPTER` (YAML ``true`` is not chapter 1), values are finite (no
NaN), names and aliases are at most `MAX_NAME_CHARS` characters, not blank, without control or invisible
format characters and without surrounding spaces; an id is not ``.``/``..``-like; a card does not relate to
itself. A parsed file is cached by its sha256 (``memory_card_cache``): 500 cards are not re-parsed per command.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sqlite3
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..book import Book, listed_files, read_chapter_file, read_user_file
from ..errors import InputError, MuseError
from ..store import StoreWriteError, transaction
from ..text import sha256_hex

CardType = Literal["character", "place", "item", "faction", "concept"]
Scalar = str | int | float | bool


#: The highest chapter number a card may name (the same bound as chapter headings).
MAX_CHAPTER = 99_999
#: The longest name or alias (characters); a name is one token and one automaton pattern: linear in its length.
MAX_NAME_CHARS = 100
#: Bump when parsing or validation rules change: every cached card is then parsed again.
PARSER_VERSION = "cards-v2"

Chapter = Field(ge=0, le=MAX_CHAPTER)  # 0 is the prologue (序, chapters/0000.md)


class _Strict(BaseModel):
    # strict: YAML `true` is not chapter 1 and `"3"` is not 3; no NaN or infinite values. Built on first use: a
    # book whose cards all come from the parse cache (search, mentions) never validates one
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, strict=True, allow_inf_nan=False, defer_build=True
    )


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a card name or alias (None when it can)."""
    if not name.strip():
        return "is blank"
    if len(name) > MAX_NAME_CHARS:
        return f"is {len(name):,} characters long (at most {MAX_NAME_CHARS})"
    if name != name.strip():
        return "starts or ends with a space"
    bad = next((ch for ch in name if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")), None)
    if bad is not None:
        return f"contains the control or invisible character U+{ord(bad):04X}"
    return None


class SourceSpan(_Strict):
    """A span of a chapter's body: [start, end) character offsets."""

    chapter: int = Chapter
    start: int = Field(ge=0)
    end: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> SourceSpan:
        if self.end <= self.start:
            raise ValueError(f"source end ({self.end}) must be greater than start ({self.start})")
        return self


class _Ranged(_Strict):
    from_: int = Field(alias="from", ge=0, le=MAX_CHAPTER)  # 0: from the prologue (序) on
    to: int | None = Field(default=None, ge=0, le=MAX_CHAPTER)
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

    @field_validator("value", mode="before")
    @classmethod
    def _scalar(cls, v: object) -> object:
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("the value is not a finite number (NaN or infinite)")
        if not isinstance(v, str | int | float | bool):
            raise ValueError("a value must be text, a number or true/false")
        return v


class RelationEntry(_Ranged):
    """A relation of `type` to another card id, valid over a chapter range."""

    type: str = Field(min_length=1)
    target: str = Field(min_length=1)


def _checked_name(v: str, what: str) -> str:
    why = name_problem(v)
    if why is not None:
        raise ValueError(f"{what} {why}")
    return v


Alias = Annotated[str, AfterValidator(lambda v: _checked_name(v, "an alias"))]


#: Names Windows reserves for devices (with any extension): an id may name a file, so it may not be one of them.
_RESERVED_FILE_NAMES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
)


class CardFile(_Strict):
    """The content of one ``cards/*.yaml`` file."""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-.\u4e00-\u9fff]{1,64}$")
    type: CardType
    name: str
    aliases: list[Alias] = []
    description: str = ""
    attributes: dict[str, list[RangedValue]] = {}
    relations: list[RelationEntry] = []

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if v.startswith(".") or ".." in v:
            raise ValueError(
                f"the id {v!r} starts with '.' or contains '..' (ids may name files: use letters, digits, -)"
            )
        if v.split(".")[0].lower() in _RESERVED_FILE_NAMES or v.endswith("."):
            raise ValueError(
                f"the id {v!r} cannot be a file name on every common system (Windows reserves it): choose another"
            )
        return v

    @field_validator("attributes")
    @classmethod
    def _attribute_keys(cls, v: dict[str, list[RangedValue]]) -> dict[str, list[RangedValue]]:
        blank = [k for k in v if not k.strip()]
        if blank:
            raise ValueError("an attribute has an empty name: give it one (e.g. office, status)")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _checked_name(v, "the name")


@dataclass(frozen=True, slots=True)
class AuthorEntry:
    """One ranged value (or relation) as written by the author, with where it was written."""

    value: Scalar
    start: int
    end: int | None
    file: str  # relative to the book root
    line: int
    span: SourceSpan | None
    note: str = ""  # the author's note on this value


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
    skipped: list[str] = field(default_factory=list)  # card files left out as invalid (lenient loading only)

    def resolve(self, name: str) -> Card | None:
        """The card called `name` (id, name or any alias), or None."""
        cid = self.by_name.get(name.strip())
        return None if cid is None else self.cards[cid]

    def require(self, name: str) -> Card:
        """Like `resolve`, but an unknown name is an error listing a few known names."""
        card = self.resolve(name)
        if card is None:
            known = ", ".join(c.name for c in list(self.cards.values())[:8]) or "none"
            skipped = f"; invalid, so not read: {', '.join(self.skipped)}" if self.skipped else ""
            if not self.cards and not self.skipped:
                raise InputError(
                    "CARD_NOT_FOUND",
                    f"no card is called {name!r}: the book has no card yet",
                    "cards/",
                    f"create one with `muse cards new {name}` (then give it its aliases and values)",
                )
            raise InputError(
                "CARD_NOT_FOUND",
                f"no card is called {name!r} (cards: {known}{', …' if len(self.cards) > 8 else ''}{skipped})",
                "cards/",
                "use a card's id, name or one of its aliases (`muse cards list`), or `muse cards new NAME`"
                + (" (or fix the invalid card files: `muse cards lint`)" if self.skipped else ""),
            )
        return card

    def lexicon(self) -> list[str]:
        """Every name and alias (sorted): the words of the tokenizer and of the mention index."""
        return sorted({n for c in self.cards.values() for n in c.all_names})


def _entries(raw: Any, key_path: tuple[Any, ...], values: list[Any], rel: str, value_of: Any) -> list[AuthorEntry]:
    from ..book import line_of

    out: list[AuthorEntry] = []
    for i, v in enumerate(values):
        out.append(AuthorEntry(value_of(v), v.from_, v.to, rel, line_of(raw, (*key_path, i)), v.source, v.note))
    return out


def _overlaps(entries: list[AuthorEntry]) -> list[tuple[AuthorEntry, AuthorEntry]]:
    ordered = sorted(entries, key=lambda e: e.start)
    out = []
    for a, b in itertools.pairwise(ordered):
        if a.end is None or a.end >= b.start:
            out.append((a, b))
    return out


def _validation_problems(exc: ValidationError, raw: Any, rel: str) -> list[CardProblem]:
    """Every error of a card (each unknown key, each bad field) with the line it is written on."""
    from ..book import line_of

    out: list[CardProblem] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        field_name = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown key {loc[-1]!r}"
        out.append(CardProblem("CARD_INVALID", f"{msg} at {field_name}", f"{rel}:{line_of(raw, loc)}"))
    return sorted(out, key=lambda p: int(p.where.rpartition(":")[2]))


class _CardInvalid(Exception):
    def __init__(self, problems: list[CardProblem]):
        super().__init__(problems[0].message)
        self.problems = problems


def _parse_card(book: Book, path: Path, data: bytes) -> Card:
    """Parse and validate one card file (`_CardInvalid` lists every problem of the file). The YAML reader is
    imported here: a book whose cards are all in the parse cache never loads it."""
    from ..book import LineDict, LineList, line_of, load_yaml_lines

    rel = path.relative_to(book.root).as_posix()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _CardInvalid([CardProblem("CARD_SYNTAX", f"not UTF-8 (byte {exc.start})", f"{rel}:1")]) from exc
    try:
        raw = load_yaml_lines(Path(rel), code_prefix="CARD", text=text)
    except MuseError as exc:
        raise _CardInvalid([CardProblem(exc.code, exc.what, exc.where)]) from exc
    if not isinstance(raw, LineDict):
        raise _CardInvalid(
            [CardProblem("CARD_INVALID", "a card file must be one mapping (id, type, name, …)", f"{rel}:1")]
        )
    try:
        model = CardFile.model_validate(raw)
    except ValidationError as exc:
        raise _CardInvalid(_validation_problems(exc, raw, rel)) from exc
    card = Card(model.id, model.type, model.name, list(model.aliases), model.description, rel, raw.line)
    aliases = raw.get("aliases")
    alias_lines = aliases.item_lines if isinstance(aliases, LineList) else []
    for i, alias in reversed(list(enumerate(model.aliases))):  # the first place an alias is written wins
        card.name_lines[alias] = alias_lines[i] if i < len(alias_lines) else line_of(raw, ("aliases",))
    card.name_lines[model.name] = line_of(raw, ("name",))
    card.name_lines.setdefault(model.id, line_of(raw, ("id",)))
    for attr, values in model.attributes.items():
        card.attributes[attr] = _entries(raw, ("attributes", attr), values, rel, lambda v: v.value)
    selfish: list[CardProblem] = []
    for i, r in enumerate(model.relations):
        line = line_of(raw, ("relations", i))
        if r.target == model.id:
            selfish.append(
                CardProblem("CARD_INVALID", f"card {model.id!r} has a relation {r.type!r} to itself", f"{rel}:{line}")
            )
        card.relations.setdefault((r.type, r.target), []).append(
            AuthorEntry(True, r.from_, r.to, rel, line, r.source, r.note)
        )
    if selfish:
        raise _CardInvalid(selfish)
    return card


def _card_json(card: Card) -> dict[str, Any]:
    def entry(e: AuthorEntry) -> list[Any]:
        span = None if e.span is None else [e.span.chapter, e.span.start, e.span.end]
        return [e.value, e.start, e.end, e.line, span, e.note]

    return {
        "id": card.id,
        "type": card.type,
        "name": card.name,
        "aliases": card.aliases,
        "description": card.description,
        "file": card.file,
        "line": card.line,
        "attributes": {a: [entry(e) for e in es] for a, es in card.attributes.items()},
        "relations": [[t, target, [entry(e) for e in es]] for (t, target), es in card.relations.items()],
        "name_lines": card.name_lines,
    }


def _card_from_json(d: dict[str, Any]) -> Card:
    file = d["file"]

    def entry(e: list[Any]) -> AuthorEntry:
        value, start, end, line, span, note = e
        src = None if span is None else SourceSpan.model_construct(chapter=span[0], start=span[1], end=span[2])
        return AuthorEntry(value, start, end, file, line, src, note)

    card = Card(d["id"], d["type"], d["name"], d["aliases"], d["description"], file, d["line"])
    card.attributes = {a: [entry(e) for e in es] for a, es in d["attributes"].items()}
    card.relations = {(t, target): [entry(e) for e in es] for t, target, es in d["relations"]}
    card.name_lines = d["name_lines"]
    return card


def _read_card(book: Book, path: Path) -> bytes:
    """A card file's bytes, read under the book's file policy (a regular file below the size cap, no link out)."""
    return read_user_file(path, what="card file", kind="CARD", book_root=book.root)


def _load_card_files(book: Book) -> list[tuple[Card | None, list[CardProblem]]]:
    """Every card file parsed (from the cache when its sha256 is unchanged), in file-name order. The cache is
    only an optimisation: a book whose database cannot be opened or written is parsed without it."""
    from ._files import FileHashes  # the stat cache lives beside the other memory tables

    try:
        conn: sqlite3.Connection | None = book.db
    except MuseError:
        conn = None
    hashes = FileHashes(conn, book.root) if conn is not None else None
    cached: dict[str, tuple[str, str]] = {}
    if conn is not None:
        rows = conn.execute("SELECT path, sha256, parsed FROM memory_card_cache WHERE version = ?", (PARSER_VERSION,))
        cached = {r[0]: (r[1], r[2]) for r in rows}
    out: list[tuple[Card | None, list[CardProblem]]] = []
    fresh: list[tuple[str, str, str]] = []
    for path in card_paths(book):
        rel = path.relative_to(book.root).as_posix()
        sha = hashes.known(path) if hashes is not None else None
        hit = cached.get(rel)
        data = b""
        if sha is None:  # changed, new, or changed too recently to trust its stat: read and hash it
            try:
                st = path.stat()
                data = _read_card(book, path)
            except OSError as exc:
                out.append((None, [CardProblem("CARD_READ", f"cannot read ({exc.strerror})", rel)]))
                continue
            except InputError as exc:
                if exc.code == "BOOK_LINK_OUTSIDE":
                    raise
                out.append((None, [CardProblem(exc.code, exc.what, rel)]))
                continue
            sha = sha256_hex(data)
            if hashes is not None:
                hashes.record(path, st, sha)
        if hit is not None and hit[0] == sha:
            parsed = json.loads(hit[1])
        else:
            if not data:
                data = _read_card(book, path)
            try:
                parsed = {"card": _card_json(_parse_card(book, path, data))}
            except _CardInvalid as exc:
                parsed = {"problems": [[p.code, p.message, p.where] for p in exc.problems]}
            fresh.append((rel, sha, json.dumps(parsed, ensure_ascii=False)))
        if "card" in parsed:
            out.append((_card_from_json(parsed["card"]), []))
        else:
            out.append((None, [CardProblem(c, m, w) for c, m, w in parsed["problems"]]))
    if conn is not None and hashes is not None and fresh:
        try:
            hashes.save()
            with transaction(conn):
                conn.executemany(
                    "INSERT OR REPLACE INTO memory_card_cache VALUES (?, ?, ?, ?)",
                    [(rel, sha, PARSER_VERSION, parsed) for rel, sha, parsed in fresh],
                )
        except (sqlite3.Error, StoreWriteError):
            pass  # a read-only database: the next command parses these files again
    return out


def card_paths(book: Book) -> list[Path]:
    """Every ``cards/*.yaml`` / ``*.yml`` file, sorted by name (directories are ignored). A FIFO, socket, device
    or broken link with such a name is refused (CARD_READ), never opened, and so is a link leading outside the
    book (BOOK_LINK_OUTSIDE) — before the parse cache could serve it."""
    if not book.cards_dir.is_dir():
        return []
    return listed_files(book.cards_dir, _is_card_name, "CARD", book_root=book.root)


def _is_card_name(name: str) -> bool:
    return os.path.splitext(name)[1] in (".yaml", ".yml")  # Path.suffix's rule: ".yaml" alone is no card


def lint_cards(book: Book, *, check_sources: bool = True) -> tuple[CardSet, list[CardProblem]]:
    """Load every card and list every problem (never raises for a card problem)."""
    problems: list[CardProblem] = []
    cards: dict[str, Card] = {}
    skipped: list[str] = []
    for card, file_problems in _load_card_files(book):
        problems.extend(file_problems)
        if card is None:
            skipped.append(file_problems[0].where.partition(":")[0])
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
            skipped.append(card.file)
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
    return CardSet(cards, by_name, skipped), problems


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
