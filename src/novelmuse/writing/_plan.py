"""The retrieval plan (seed 003 step 2: 检索规划与卡索引按 asOf 重建当前态，带出历史来源指针).

From the confirmed outline of chapter N and the memory replayed through N−1 (cards, accepted fact cards,
the foreshadow ledger) the plan lists, deterministically:

- every entity the outline concerns (its `entities`, the names in its declarations, and the cards named in its
  events, results, beats, hook and goal), with its state as of N−1 — each value and relation with its source
  pointer — where it last appeared (the mention index, chapters < N) and when its state last changed;
- every foreshadow the outline advances or resolves, with where it was planted;
- the slots of raw text an arm fills: fact readback (the foreshadow's planting, where a state was
  established, the last appearance) and style evidence (voice, action habits, ability in use, chapter-end
  hooks), in a fixed priority order that is also the budget's cut order (last slot cut first).

A value or relation whose source pointer lies in chapter N or later is withheld (never shown, listed in the
manifest): nothing from the future enters, not even through the author's card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..book import Book, FineOutline
from ..errors import InputError
from ..memory import (
    DEAD_VALUES,
    Card,
    CardSet,
    ChapterMentions,
    MemoryState,
    MentionMatcher,
    Source,
    card_mentions,
    mention_names,
)
from ..text import chapter_label
from ._vocab import vocabulary

SlotKind = Literal["foreshadow", "state", "last", "voice", "action", "ability", "hook"]
Section = Literal["readback", "style"]
HOOK_SLOTS = 2


@dataclass(frozen=True)
class Fact:
    """One value or relation of an entity as of N−1: the neutral line the writer reads, and its source."""

    key: str  # "attr:status", "rel:结义兄弟:liu-bei"
    text: str
    since: int
    source: Source
    raw_value: str  # the value as stored (e.g. for an ability, the phrase to look for)


@dataclass(frozen=True)
class Withheld:
    """A value or relation left out because its source lies in chapter ≥ N."""

    card_id: str
    key: str
    since: int
    source_chapter: int


@dataclass
class EntityPlan:
    """An entity of the outline: its card (None for a newly declared one) and what is known as of N−1."""

    name: str
    card: Card | None
    facts: list[Fact] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)
    mentions: list[ChapterMentions] = field(default_factory=list)  # chapters < N, ascending
    dead: bool = False
    declared: bool = False  # introduced by a kind: entity declaration of this outline

    @property
    def last_seen(self) -> int | None:
        """The last chapter before N that names the entity (any name or alias)."""
        return self.mentions[-1].chapter if self.mentions else None

    @property
    def last_changed(self) -> Fact | None:
        """The most recent state or relation change as of N−1."""
        return max(self.facts, key=lambda f: (f.since, f.key), default=None)


@dataclass(frozen=True)
class ForeshadowPlan:
    """A foreshadow the outline advances or resolves, and where it was planted."""

    op: Literal["advance", "resolve"]
    id: str
    description: str
    planted_chapter: int
    payoff_chapter: int | None
    source: Source


@dataclass(frozen=True)
class Slot:
    """One piece of raw text an arm may fill. `key` is for the manifest only (it may hold card ids);
    `purpose` is what the writer reads."""

    key: str
    kind: SlotKind
    section: Section
    purpose: str
    entity: EntityPlan | None = None
    foreshadow: ForeshadowPlan | None = None


@dataclass
class RetrievalPlan:
    """The deterministic plan of one chapter's context."""

    chapter: int
    entities: list[EntityPlan]
    foreshadows: list[ForeshadowPlan]
    slots: list[Slot]
    unit: str | None = None  # the book's heading unit: how the writer's context names chapters (第N回, 第N章)

    @property
    def withheld(self) -> list[Withheld]:
        """Every value or relation left out because its source lies in chapter N or later."""
        return [w for e in self.entities for w in e.withheld]


def basis(source: Source, unit: str | None = None) -> str:
    """The writer-visible pointer of a source: its chapter named the book's way (``第77回`` in a book of 回,
    ``第77章``), or ``作者设定`` for an author's card value with no chapter span. Never a file name or a card id."""
    return chapter_label(unit, source.chapter) if source.chapter is not None else "作者设定"


def value_word(value: object, attribute: str, cards: CardSet) -> str:
    """How a card value is shown to the writer: a dead status as one word, a card id by its card's name."""
    vocab = vocabulary()
    text = str(value).strip()
    if attribute == "status" and is_dead_value(text):
        return vocab.dead_word
    if text in cards.cards:  # a value naming another card by id (e.g. holder: sun-jian) is shown by its name
        return cards.cards[text].name
    return vocab.value_words.get(text, text)


def card_facts(
    card: Card, state: MemoryState, cards: CardSet, chapter: int, unit: str | None = None
) -> tuple[list[Fact], list[Withheld]]:
    """A card's values and relations as of `chapter` − 1 as writer-visible facts (chapters named by `unit`, the
    book's heading unit), and what was withheld because its source lies in `chapter` or later."""
    vocab = vocabulary()
    cs = state.index.card_as_of(card.id, chapter - 1)
    facts: list[Fact] = []
    withheld: list[Withheld] = []
    for attr, v in sorted(cs.attributes.items()):
        key = f"attr:{attr}"
        if v.source.chapter is not None and v.source.chapter >= chapter:
            withheld.append(Withheld(card.id, key, v.since, v.source.chapter))
            continue
        label = vocab.attribute_words.get(attr, attr)
        text = f"{card.name}的{label}：{value_word(v.value, attr, cards)}（自{chapter_label(unit, v.since)}起）"
        facts.append(Fact(key, text, v.since, v.source, str(v.value)))
    for r in sorted(cs.relations, key=lambda r: (r.type, r.target)):
        key = f"rel:{r.type}:{r.target}"
        if r.source.chapter is not None and r.source.chapter >= chapter:
            withheld.append(Withheld(card.id, key, r.since, r.source.chapter))
            continue
        other = cards.cards[r.target].name if r.target in cards.cards else r.target
        facts.append(
            Fact(key, f"{card.name}与{other}：{r.type}（自{chapter_label(unit, r.since)}起）", r.since, r.source, "")
        )
    return facts, withheld


def _outline_names(outline: FineOutline, cards: CardSet) -> list[str]:
    """Entity names in outline order: `entities`, declarations, then cards named in the outline's texts."""
    names = list(outline.entities)
    names += [e for s in outline.new_settings for e in s.entities]
    texts = [outline.goal, outline.hook, *(b.text for b in outline.beats)]
    texts += [t for ev in outline.hard_events for t in (ev.text, ev.result)]
    matcher = MentionMatcher(mention_names(cards))
    for text in texts:
        names += [cards.cards[m.card_id].name for m in matcher.find(text)]
    return names


def _foreshadows(outline: FineOutline, state: MemoryState) -> list[ForeshadowPlan]:
    out: list[ForeshadowPlan] = []
    for f in outline.foreshadows:
        if f.op == "plant":
            continue
        item = state.ledger.items.get(f.id)
        active = item is not None and item.planted_chapter < outline.chapter
        if (
            item is None
            or not active
            or (item.resolved_chapter is not None and item.resolved_chapter < outline.chapter)
        ):
            raise InputError(
                "CONTEXT_FORESHADOW_INACTIVE",
                f"the outline's {f.op} of {f.id!r} names no foreshadow active as of chapter {outline.chapter - 1}",
                outline.path,
                f"run `muse outline lint {outline.chapter}` and fix the outline or the ledger",
            )
        out.append(ForeshadowPlan(f.op, f.id, item.description, item.planted_chapter, item.payoff_chapter, item.source))
    return out


def is_dead_value(value: object) -> bool:
    """Whether a status value is one of the dead words of memory's status vocabulary."""
    return str(value).strip().lower() in DEAD_VALUES


def _is_dead(facts: list[Fact]) -> bool:
    return any(f.key == "attr:status" and is_dead_value(f.raw_value) for f in facts)


def entity_plan(book: Book, card: Card, state: MemoryState, chapter: int, unit: str | None) -> EntityPlan:
    """One carded entity as of `chapter` − 1: its values and relations with sources (chapters named by `unit`),
    its mentions before."""
    facts, withheld = card_facts(card, state, state.cards, chapter, unit)
    mentions = card_mentions(book.db, card, before=chapter).chapters
    return EntityPlan(card.name, card, facts, withheld, mentions, _is_dead(facts))


def plan_chapter(book: Book, outline: FineOutline, state: MemoryState, unit: str | None) -> RetrievalPlan:
    """The retrieval plan of the outline's chapter from the memory replayed through the chapter before; `unit` is
    the heading unit of the chapters before it (how the writer's context names chapters: 第N回 in a book of 回)."""
    cards = state.cards
    n = outline.chapter
    declared = outline.declared_entities()
    entities: list[EntityPlan] = []
    seen: set[str] = set()
    for name in _outline_names(outline, cards):
        card = cards.resolve(name)
        key = card.id if card is not None else f"new:{name}"
        if key in seen:
            continue
        seen.add(key)
        if card is None:
            entities.append(EntityPlan(name, None, declared=name in declared))
            continue
        entities.append(entity_plan(book, card, state, n, unit))
    foreshadows = _foreshadows(outline, state)
    return RetrievalPlan(n, entities, foreshadows, _slots(entities, foreshadows), unit)


def _slots(entities: list[EntityPlan], foreshadows: list[ForeshadowPlan]) -> list[Slot]:
    """Fact slots first (foreshadow plantings, then per entity: where its state was set, its last appearance),
    then style slots (per character: voice, action habits, ability in use; then chapter-end hooks)."""
    vocab = vocabulary()
    carded = [e for e in entities if e.card is not None]
    chars = [e for e in carded if e.card is not None and e.card.type == "character"]
    slots = [
        Slot(f"foreshadow:{f.id}", "foreshadow", "readback", f"伏笔「{f.id}」的由来", foreshadow=f) for f in foreshadows
    ]
    for e in carded:
        assert e.card is not None
        if any(f.source.chapter is not None and f.source.start is not None for f in e.facts):
            slots.append(Slot(f"state:{e.card.id}", "state", "readback", f"{e.name}的现状由来", entity=e))
    for e in carded:
        assert e.card is not None
        slots.append(Slot(f"last:{e.card.id}", "last", "readback", f"{e.name}此前出场", entity=e))
    for e in chars:
        assert e.card is not None
        slots.append(Slot(f"voice:{e.card.id}", "voice", "style", f"{e.name}的说话方式", entity=e))
    for e in chars:
        assert e.card is not None
        slots.append(Slot(f"action:{e.card.id}", "action", "style", f"{e.name}的举止", entity=e))
    for e in chars:
        assert e.card is not None
        if any(f.key.removeprefix("attr:").lower() in vocab.ability_attributes for f in e.facts):
            slots.append(Slot(f"ability:{e.card.id}", "ability", "style", f"{e.name}的能力表现", entity=e))
    slots += [Slot(f"hook:{i + 1}", "hook", "style", f"章末钩子（{i + 1}）") for i in range(HOOK_SLOTS)]
    return slots
