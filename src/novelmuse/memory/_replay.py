"""Replay: rebuild the story memory from the author's files plus recorded fact cards, in chapter order.

For each chapter: first the author's fine-outline foreshadow operations, then the chapter's current fact
card (bound to the chapter file's sha256 now), validated item by item against the state so far:

- ``FORESHADOW_PLANT_CAP``: more than `memory.max_plants_per_chapter` new plants in the chapter (outline
  plants count first; the fact card's plants are taken in text order and the excess is rejected);
- ``FORESHADOW_UNKNOWN`` / ``FORESHADOW_RESOLVED``: advance or resolve of an item never planted / already
  resolved; ``FORESHADOW_DUPLICATE``: a plant of an id that already exists; ``FORESHADOW_PAYOFF_PAST``: a
  plant due by a chapter before the one that plants it;
- ``CARD_DEAD_ACTS``: an event whose actors (who act or speak — being named is fine) include a card whose
  status is dead (a word of ``memory/data/status.toml``) at the end of the previous chapter, unless the
  chapter's fine outline declares that card in a new-setting declaration (新设定声明);
- ``CARD_DEAD_REVIVED``: a status change that brings a dead card back, without that declaration;
- ``FACT_UNKNOWN_ENTITY``: a state or relation change about a name that is no card.

Rejected items are kept and shown (never silently dropped); accepted state and relation changes feed the
as-of index with their fact-card source pointers.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from ..book import Book, FineOutline, load_outlines
from ..roles.extractor import FactEvent, FactForeshadow, FactRelation, FactState
from ..text import sha256_hex
from ._asof import CardIndex, CardState, Source
from ._cards import CardSet, load_cards
from ._facts import FactCard, current_fact_cards, latest_fact_cards
from ._files import FileHashes
from ._ledger import ActiveList, Foreshadow, Ledger, MemoryProblem


@dataclass(frozen=True)
class StatusVocabulary:
    """The reviewed list of status words (``memory/data/status.toml``), with its version and sha256."""

    version: str
    sha256: str
    dead: frozenset[str]


def _load_status_vocabulary() -> StatusVocabulary:
    text = (resources.files("novelmuse.memory") / "data" / "status.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    return StatusVocabulary(str(data["version"]), sha256_hex(text), frozenset(w.lower() for w in data["dead"]))


STATUS_VOCABULARY = _load_status_vocabulary()
DEAD_VALUES = STATUS_VOCABULARY.dead
FactsStatus = Literal["current", "stale", "missing"]


@dataclass
class FactValidation:
    """The deterministic verdict on one fact card: accepted items and rejected items with codes."""

    chapter: int
    fact_card_id: str
    accepted: list[str] = field(default_factory=list)  # "events[0]", "foreshadows[1]", …
    rejected: list[MemoryProblem] = field(default_factory=list)


@dataclass
class MemoryState:
    """The replayed memory: as-of card index, foreshadow ledger, validations and problems."""

    cards: CardSet
    index: CardIndex
    ledger: Ledger
    outlines: dict[int, FineOutline]
    facts_status: dict[int, FactsStatus]
    validations: dict[int, FactValidation]
    problems: list[MemoryProblem]
    overdue_default_age: int | None

    def card_as_of(self, name: str, chapter: int) -> CardState:
        """One card (by id, name or alias) at the end of `chapter`."""
        return self.index.card_as_of(self.cards.require(name).id, chapter)

    def as_of(self, chapter: int) -> dict[str, CardState]:
        """Every card at the end of `chapter`."""
        return self.index.as_of(chapter)

    def active_foreshadows(self, as_of: int, limit: int | None = None, *, overdue_only: bool = False) -> ActiveList:
        """Planted, unresolved foreshadows at the end of `as_of` (see `Ledger.active`)."""
        return self.ledger.active(
            as_of, overdue_default_age=self.overdue_default_age, limit=limit, overdue_only=overdue_only
        )


def _is_dead(index: CardIndex, card_id: str, chapter: int) -> bool:
    v = index.value_at(card_id, "status", chapter)
    return v is not None and str(v.value).strip().lower() in DEAD_VALUES


class _Replayer:
    def __init__(self, book: Book, cards: CardSet):
        self.book = book
        self.cards = cards
        self.index = CardIndex(cards)
        self.ledger = Ledger()
        self.cap = book.config.memory.max_plants_per_chapter
        self.problems: list[MemoryProblem] = []
        self._outline_ops: dict[int, set[tuple[str, str]]] = {}

    def _rel(self, path: str) -> str:
        try:
            return str(Path(path).relative_to(self.book.root))
        except ValueError:
            return path

    def apply_outline(self, outline: FineOutline) -> None:
        c = outline.chapter
        ops = self._outline_ops.setdefault(c, set())
        file = self._rel(outline.path)
        plants = 0
        for i, op in enumerate(outline.foreshadows):
            line = outline.foreshadow_line(i)
            src = Source("author", file, line, c)
            where = f"{file}:{line}"
            status = self.ledger.status(op.id)
            if op.op == "plant":
                if status != "unknown":
                    self.problems.append(
                        MemoryProblem("FORESHADOW_DUPLICATE", c, "outline", where, f"{op.id!r} was already planted")
                    )
                    continue
                plants += 1
                if plants > self.cap:
                    self.problems.append(
                        MemoryProblem(
                            "FORESHADOW_PLANT_CAP",
                            c,
                            "outline",
                            where,
                            f"plant {plants} of chapter {c} exceeds the cap of {self.cap} (kept: the outline is yours)",
                        )
                    )
                self.ledger.plant(Foreshadow(op.id, op.description, c, "outline", src, op.payoff_chapter))
            elif status != "active":
                code = "FORESHADOW_UNKNOWN" if status == "unknown" else "FORESHADOW_RESOLVED"
                self.problems.append(MemoryProblem(code, c, "outline", where, f"{op.op} of {status} {op.id!r}"))
                continue
            elif op.op == "advance":
                self.ledger.advance(op.id, c)
            else:
                self.ledger.resolve(op.id, c, src)
            ops.add((op.op, op.id))

    def apply_fact_card(self, card: FactCard, outline: FineOutline | None) -> FactValidation:
        c = card.chapter
        val = FactValidation(c, card.id)
        outline_ops = self._outline_ops.get(c, set())
        declared = outline is not None and outline.new_settings
        plants = sum(1 for op, _ in outline_ops if op == "plant")
        located = [(kind, i, item, span) for (kind, i, item), span in zip(card.output.items(), card.spans, strict=True)]
        located.sort(key=lambda t: (t[3][0], t[0], t[1]))  # text order: the first plants in the text are kept

        def reject(code: str, name: str, detail: str) -> None:
            val.rejected.append(MemoryProblem(code, c, "fact", name, detail))

        for kind, i, item, (start, end) in located:
            name = f"{kind}s[{i}]"
            src = Source("fact", chapter=c, start=start, end=end, receipt_id=card.receipt_id, fact_card_id=card.id)
            if isinstance(item, FactEvent):
                dead = []
                for actor in item.actors:
                    ac = self.cards.resolve(actor)
                    if ac is None or not _is_dead(self.index, ac.id, c - 1):
                        continue
                    names = {ac.id, *ac.all_names}
                    if not (declared and outline is not None and outline.declares(names)):
                        dead.append(ac.name)
                if dead:
                    reject("CARD_DEAD_ACTS", name, f"{', '.join(dead)} is dead but acts or speaks: {item.summary}")
                    continue
            elif isinstance(item, FactForeshadow):
                status = self.ledger.status(item.id)
                if (item.op, item.id) in outline_ops:
                    pass  # the author's outline already declared this very operation: a confirmation
                elif item.op == "plant":
                    if status != "unknown":
                        reject("FORESHADOW_DUPLICATE", name, f"{item.id!r} was already planted")
                        continue
                    if item.payoff_chapter is not None and item.payoff_chapter < c:
                        reject(
                            "FORESHADOW_PAYOFF_PAST",
                            name,
                            f"plant {item.id!r} is due by chapter {item.payoff_chapter}, before chapter {c} plants it",
                        )
                        continue
                    if plants >= self.cap:
                        reject(
                            "FORESHADOW_PLANT_CAP",
                            name,
                            f"plant {item.id!r} would be plant {plants + 1} of chapter {c}; the cap is {self.cap}",
                        )
                        continue
                    plants += 1
                    self.ledger.plant(Foreshadow(item.id, item.description, c, "fact", src, item.payoff_chapter))
                elif status != "active":
                    code = "FORESHADOW_UNKNOWN" if status == "unknown" else "FORESHADOW_RESOLVED"
                    reject(
                        code,
                        name,
                        f"{item.op} of {'an unknown' if status == 'unknown' else 'a resolved'} foreshadow {item.id!r}",
                    )
                    continue
                elif item.op == "advance":
                    self.ledger.advance(item.id, c)
                else:
                    self.ledger.resolve(item.id, c, src)
            elif isinstance(item, FactRelation):
                a, b = self.cards.resolve(item.source), self.cards.resolve(item.target)
                if a is None or b is None:
                    missing = item.source if a is None else item.target
                    reject("FACT_UNKNOWN_ENTITY", name, f"{missing!r} is not a card")
                    continue
                rel_value = True if item.change == "start" else None
                self.index.add_fact_change(a.id, ("rel", item.relation, b.id), c, rel_value, src)
            elif isinstance(item, FactState):
                ent = self.cards.resolve(item.entity)
                if ent is None:
                    reject("FACT_UNKNOWN_ENTITY", name, f"{item.entity!r} is not a card")
                    continue
                attr = item.attribute.strip().lower()
                value = item.value.strip()
                if attr == "status" and value.lower() in DEAD_VALUES:
                    value = "dead"
                elif (
                    attr == "status"
                    and _is_dead(self.index, ent.id, c - 1)
                    and not (outline is not None and outline.declares({ent.id, *ent.all_names}))
                ):
                    reject("CARD_DEAD_REVIVED", name, f"{ent.name} is dead; status {value!r} needs a declaration")
                    continue
                self.index.add_fact_change(ent.id, ("attr", attr), c, value, src)
            val.accepted.append(name)
        val.rejected.sort(key=lambda p: p.item)
        return val


def chapter_shas(book: Book, paths: dict[int, Path] | None = None) -> dict[int, str]:
    """Chapter number → sha256 of its file now, reading only the files whose stat moved (`FileHashes`)."""
    paths = paths if paths is not None else book.chapter_paths()  # one listing
    hashes = FileHashes(book.db, book.root)
    shas = {n: hashes.sha256(p) for n, p in paths.items()}
    with contextlib.suppress(sqlite3.Error):  # a read-only database: the files are hashed again next time
        hashes.save()
    return shas


class MemoryCursor:
    """The memory replayed in chapter order up to a chapter, advanced chapter by chapter.

    `muse sync` extracts the chapters without a current fact card in order; each extraction needs the memory
    just before its chapter (its prompt lists the active foreshadows) and validates the new card against it.
    One cursor serves the whole sync: every chapter is replayed once (it was replayed twice per extracted
    chapter, re-hashing every chapter file each time — quadratic: 4 s / 19 s / 65 s of bookkeeping for 1M /
    2.5M / 5M characters). `replay` is a cursor advanced to the end.
    """

    def __init__(
        self,
        book: Book,
        cards: CardSet | None = None,
        *,
        paths: dict[int, Path] | None = None,
        outlines: dict[int, FineOutline] | None = None,
        shas: dict[int, str] | None = None,
    ):
        self.book = book
        self.cards = cards if cards is not None else load_cards(book)
        self.paths = paths if paths is not None else book.chapter_paths()
        self.outlines = outlines if outlines is not None else load_outlines(book)
        self.shas = shas if shas is not None else chapter_shas(book, self.paths)
        self.current = current_fact_cards(book.db, self.shas)
        self.validations: dict[int, FactValidation] = {}
        self._r = _Replayer(book, self.cards)
        self._todo = sorted(set(self.outlines) | set(self.current))
        self._next = 0  # index into _todo of the next chapter to apply

    def advance(self, upto: int | None = None) -> None:
        """Apply the outline and current fact card of every chapter ≤ `upto` (all when None) not applied yet."""
        while self._next < len(self._todo) and (upto is None or self._todo[self._next] <= upto):
            c = self._todo[self._next]
            self._next += 1
            if c in self.outlines:
                self._r.apply_outline(self.outlines[c])
            if c in self.current:
                self.validations[c] = self._r.apply_fact_card(self.current[c], self.outlines.get(c))

    def apply_new(self, card: FactCard) -> FactValidation:
        """Validate a fact card of chapter n against the memory before n (its outline applied first); the card
        is then the chapter's current one and the cursor stands after chapter n."""
        n = card.chapter
        self.advance(n - 1)
        if self._next < len(self._todo) and self._todo[self._next] == n:
            self._next += 1  # chapter n is applied here, with the new card (not an older one)
        outline = self.outlines.get(n)
        if outline is not None:
            self._r.apply_outline(outline)
        validation = self._r.apply_fact_card(card, outline)
        self.current[n] = card
        self.validations[n] = validation
        return validation

    def active_foreshadows(self, as_of: int) -> ActiveList:
        """The ledger's active items at `as_of` (the cursor must not have passed it)."""
        return self._r.ledger.active(as_of, overdue_default_age=self.book.config.memory.overdue_default_age)

    def state(self) -> MemoryState:
        """The memory as replayed so far."""
        latest = latest_fact_cards(self.book.db)
        status: dict[int, FactsStatus] = {}
        for n in self.shas:
            status[n] = "current" if n in self.current else ("stale" if n in latest else "missing")
        problems = list(self._r.problems) + [p for v in self.validations.values() for p in v.rejected]
        problems.sort(key=lambda p: (p.chapter, p.origin != "outline", p.item))
        return MemoryState(
            self.cards,
            self._r.index,
            self._r.ledger,
            self.outlines,
            status,
            dict(self.validations),
            problems,
            self.book.config.memory.overdue_default_age,
        )


def replay(
    book: Book,
    *,
    cards: CardSet | None = None,
    upto: int | None = None,
    outlines: dict[int, FineOutline] | None = None,
    chapter_shas: dict[int, str] | None = None,
) -> MemoryState:
    """Rebuild the memory of `book` (through chapter `upto`, default all) from its files and fact cards.

    `outlines` replaces the book's outline files (e.g. only those before a frozen chapter, or only those that
    parse, for a lint that reports the others); `chapter_shas` (number → sha256 of the file) the chapters
    read from disk, for a caller that has just read them (a frozen replay passes only those before N)."""
    cursor = MemoryCursor(book, cards, outlines=outlines, shas=chapter_shas)
    cursor.advance(upto)
    return cursor.state()


def validate_fact_card(book: Book, card: FactCard, *, cards: CardSet | None = None) -> FactValidation:
    """Validate one fact card against the memory replayed up to its chapter (its outline applied first)."""
    return MemoryCursor(book, cards).apply_new(card)


def active_foreshadows(book_or_state: object, as_of: int, limit: int | None = None) -> ActiveList:
    """Every planted, unresolved foreshadow at the end of chapter `as_of` (from a Book or a MemoryState).

    With `limit`, the result's `left_out` says how many items were not returned (never truncated silently).
    """
    if isinstance(book_or_state, MemoryState):
        state = book_or_state
    elif isinstance(book_or_state, Book):
        state = replay(book_or_state)
    else:
        raise TypeError("active_foreshadows takes a Book or a MemoryState")
    return state.active_foreshadows(as_of, limit)
