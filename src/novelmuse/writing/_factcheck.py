"""New canonical facts in a candidate: declared, sourced, or blocked (新增 Canonical 事实必须申报; 没有可靠事实来源
的硬结论必须阻断).

A *new canonical fact* is a change to what the canon (the cards, as of N−1) says: a state or ability value of a
card that differs from its value as of N−1 (a death, a move, a title, a revival), a relation of two cards that
starts or ends, or a new entity the outline introduces. Two sources say which facts the candidate asserts:

- the writer's own `declared_facts` (each with its quote, located by the deterministic part), and
- the fact extractor run on the CANDIDATE text (its events, states and relations, each quote located exactly
  once in the candidate by the extractor's contract), diffed against the as-of state.

Rules, each a blocking item:

- ``undeclared_fact``: an extracted state/relation change of a card that no declared fact of that kind names
  (by any name of the card); an entity the outline introduces (new setting of kind entity) that the text
  writes without a declared fact of kind entity naming it;
- ``unsourced_fact``: a new canonical fact — extracted or declared — that no new-setting declaration of the
  confirmed outline allows (same kind family: entity / state+ability / relation, naming the card by any name):
  the writer's declaration says the fact is new, it does not make it true;
- ``acts``: an extracted event whose actors (who act or speak) include a character dead or absent as of N−1
  that the outline does not declare (memory's CARD_DEAD_ACTS rule, applied to the candidate).

A *new entity* (a name that is no card and that the outline does not introduce) is a new canonical fact too
(issue 11: "new entity, state change, relation, ability"): when the extractor gives it a state or a relation, it
needs a declared fact of kind entity naming it (else ``undeclared_fact``) and a new-setting declaration of the
outline allowing it (else ``unsourced_fact``). When it only acts or speaks in an event (a walk-on — a messenger,
an innkeeper, 创作自由边界's invented action and dialogue), it is a warning that names it, never a block.

A restated fact (the same value as of N−1) and an event of living characters never block.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from ..book import FineOutline
from ..memory import Card, CardSet, MemoryState
from ..roles import normalized
from ..roles.extractor import FactCardOutput, FactEvent, FactRelation, FactState
from ..roles.writer import DeclaredFact
from ..text import NormalizedText, locate_quote
from ._detector import DetectorItem
from ._hardcheck import Unavailable
from ._plan import is_dead_value
from ._vocab import vocabulary

Family = Literal["entity", "state", "relation"]
_FAMILY: dict[str, Family] = {"entity": "entity", "state": "state", "ability": "state", "relation": "relation"}


def _names(card: Card) -> set[str]:
    return {card.id, *card.all_names}


def _declares(declared: Sequence[DeclaredFact], family: Family, names: Collection[str], cards: CardSet) -> bool:
    """Whether a declared fact of `family` names one of `names` (its subject resolved through the cards)."""
    for d in declared:
        if _FAMILY[d.kind] != family:
            continue
        card = cards.resolve(d.subject)
        if d.subject.strip() in names or (card is not None and card.id in names):
            return True
    return False


def _sourced(outline: FineOutline, family: Family, names: Collection[str]) -> bool:
    """Whether a new-setting declaration of the outline allows a fact of `family` about one of `names`
    (a version-1 setting without a kind allows any family)."""
    return any(
        (s.kind is None or _FAMILY[s.kind] == family) and any(e in names for e in s.entities)
        for s in outline.new_settings
    )


def _item(
    ident: str,
    check: Literal["undeclared_fact", "unsourced_fact", "acts"],
    source: Literal["text", "extractor"],
    detail: str,
    quote: str = "",
    span: tuple[int, int] | None = None,
    severity: Literal["high", "warning"] = "high",
) -> DetectorItem:
    return DetectorItem(
        id=ident,
        check=check,
        source=source,
        verdict="fail",
        severity=severity,
        detail=detail,
        quote=quote,
        start=span[0] if span else None,
        end=span[1] if span else None,
    )


def declaration_items(
    text: str, declared: Sequence[DeclaredFact], outline: FineOutline, cards: CardSet
) -> list[DetectorItem]:
    """What the declarations alone decide (no model): every declared fact needs a source in the outline, every
    entity the outline introduces that the text writes needs a declaration."""
    items: list[DetectorItem] = []
    for i, d in enumerate(declared):
        card = cards.resolve(d.subject)
        names = _names(card) if card is not None else {d.subject.strip()}
        family = _FAMILY[d.kind]
        if not _sourced(outline, family, names):
            items.append(
                _item(
                    f"declared:{i}:source",
                    "unsourced_fact",
                    "text",
                    f"declared {d.kind} of {d.subject} ({d.statement}): no new-setting declaration of the outline "
                    f"allows a {family} fact about {d.subject}",
                    d.quote,
                )
            )
    for name in sorted(outline.declared_entities()):
        card = cards.resolve(name)
        names = _names(card) if card is not None else {name}
        shown = [n for n in (card.all_names if card else [name]) if n in text]
        if shown and not _declares(declared, "entity", names, cards):
            start = text.find(shown[0])
            items.append(
                _item(
                    f"entity:{name}",
                    "undeclared_fact",
                    "text",
                    f"{name} enters the story here (the outline introduces it) but no declared fact of kind entity "
                    "names it",
                    shown[0],
                    (start, start + len(shown[0])),
                )
            )
    return items


def _span(norm: NormalizedText, quote: str) -> tuple[int, int] | None:
    m = locate_quote(norm, quote)
    return (m.start, m.end) if m.ok else None


def extracted_items(
    text: str,
    extracted: FactCardOutput,
    declared: Sequence[DeclaredFact],
    outline: FineOutline,
    cards: CardSet,
    state: MemoryState,
    unavailable: dict[str, Unavailable],
) -> list[DetectorItem]:
    """The extractor's view of the candidate, diffed against the as-of state (N−1) and the declarations."""
    before = outline.chapter - 1
    norm = normalized(text)
    abilities = vocabulary().ability_attributes
    items: list[DetectorItem] = []

    def new_fact(ident: str, family: Family, what: str, names: set[str], quote: str) -> None:
        span = _span(norm, quote)
        if not _declares(declared, family, names, cards):
            items.append(_item(ident, "undeclared_fact", "extractor", f"{what}: not declared", quote, span))
        if not _sourced(outline, family, names):
            items.append(
                _item(
                    f"{ident}:source",
                    "unsourced_fact",
                    "extractor",
                    f"{what}: no new-setting declaration of the outline allows it",
                    quote,
                    span,
                )
            )

    introduced = outline.declared_entities()  # new entities the outline introduces: declaration_items checks them

    def new_entity(ident: str, name: str, what: str, quote: str) -> None:
        """A state or relation of a name that is no card: the text brings a new entity into the canon."""
        if name not in introduced:
            new_fact(ident, "entity", f"new entity {name} ({what})", {name}, quote)

    for i, ev in enumerate(extracted.events):
        assert isinstance(ev, FactEvent)
        for actor in sorted({a.strip() for a in ev.actors if a.strip()}):
            if cards.resolve(actor) is None and actor not in introduced:
                items.append(
                    _item(
                        f"fact:events[{i}]:new:{actor}",
                        "undeclared_fact",
                        "extractor",
                        f"{actor} acts but is no card and the outline does not introduce it: a walk-on is free, "
                        "a character the story keeps needs a card or a new-setting declaration",
                        ev.quote,
                        _span(norm, ev.quote),
                        severity="warning",
                    )
                )
        gone = [unavailable[c.id] for a in ev.actors if (c := cards.resolve(a)) is not None and c.id in unavailable]
        for u in gone:
            state_word = "dead" if u.why == "dead" else "not yet in the story"
            items.append(
                _item(
                    f"fact:events[{i}]:{u.card_id}",
                    "acts",
                    "extractor",
                    f"{u.name} is {state_word} as of chapter {before} but acts: {ev.summary}",
                    ev.quote,
                    _span(norm, ev.quote),
                )
            )
    for i, st in enumerate(extracted.states):
        assert isinstance(st, FactState)
        card = cards.resolve(st.entity)
        if card is None:
            new_entity(f"fact:states[{i}]", st.entity.strip(), f"{st.attribute} = {st.value}", st.quote)
            continue
        attr = st.attribute.strip().lower()
        value = "dead" if attr == "status" and is_dead_value(st.value) else st.value.strip()
        now = state.index.value_at(card.id, attr, before)
        was = None if now is None else ("dead" if attr == "status" and is_dead_value(now.value) else str(now.value))
        if was is not None and was.strip() == value:
            continue  # restated: the canon already says so
        family: Family = "state"
        kind = "ability" if attr in abilities else "state"
        what = f"{kind} change of {card.name}: {attr} {was or '(none)'} → {value}"
        new_fact(f"fact:states[{i}]", family, what, _names(card), st.quote)
    for i, rel in enumerate(extracted.relations):
        assert isinstance(rel, FactRelation)
        a, b = cards.resolve(rel.source), cards.resolve(rel.target)
        if a is None or b is None:
            for name, card in ((rel.source.strip(), a), (rel.target.strip(), b)):
                if card is None:
                    what = f"{rel.relation} of {rel.source} and {rel.target}"
                    new_entity(f"fact:relations[{i}]:{name}", name, what, rel.quote)
            continue
        holds = any(r.type == rel.relation and r.target == b.id for r in state.index.card_as_of(a.id, before).relations)
        if holds == (rel.change == "start"):
            continue  # the relation already holds (or already ended)
        what = f"relation {a.name} —{rel.relation}→ {b.name} {'starts' if rel.change == 'start' else 'ends'}"
        new_fact(f"fact:relations[{i}]", "relation", what, _names(a) | _names(b), rel.quote)
    return items
