"""Loader for the story-memory page: the foreshadow ledger as a timeline, and every card's state as of
any chapter (a chapter selector), with each value's source linked into the chapter pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...memory import MemoryState, Source
from ._chapters import fact_mark_id
from ._env import page_name


@dataclass
class Track:
    """One foreshadow on the timeline: plant → advances → resolve (or still open), overdue in red."""

    id: str
    description: str
    planted: int
    advanced: list[int]
    resolved: int | None
    payoff: int | None
    overdue: bool
    overdue_from: int | None  # where the overdue stretch starts: the payoff chapter (or plant + default age)
    origin: str
    source: str
    source_link: str | None


@dataclass
class MemoryPage:
    chapters: list[int]
    last: int
    tracks: list[Track]
    cards_json: dict[str, Any]  # embedded for the chapter selector
    card_count: int
    problems: list[tuple[int, str, str, str]] = field(default_factory=list)  # chapter, code, item, detail
    facts_status: dict[int, str] = field(default_factory=dict)


def source_link(src: Source, current_fact_ids: dict[int, str], pages: set[int]) -> str | None:
    """Link to the chapter page where a value's source is: the fact card's quote when that card is the
    chapter's current one (its offsets index into the file now), else the chapter page itself."""
    if src.chapter is None or src.chapter not in pages:
        return None
    page = page_name(src.chapter)
    if (
        src.kind == "fact"
        and src.start is not None
        and src.end is not None
        and current_fact_ids.get(src.chapter) == src.fact_card_id
    ):
        return f"{page}#m-{fact_mark_id(src.start, src.end)}"
    return page


def _describe(src: Source) -> str:
    if src.kind == "author":
        return f"{src.file}:{src.line}"
    return f"fact card {src.fact_card_id} · ch.{src.chapter} [{src.start}:{src.end}]"


def build_memory_page(
    state: MemoryState, chapters: list[int], current_fact_ids: dict[int, str], pages: set[int]
) -> MemoryPage:
    """The ledger tracks and the cards' states per chapter (diff-encoded: an entry only where a card changes)."""
    last = max(chapters) if chapters else 0
    overdue = {a.id: a for a in state.active_foreshadows(last).items}
    tracks: list[Track] = []
    for item in sorted(state.ledger.items.values(), key=lambda f: (f.planted_chapter, f.id)):
        act = overdue.get(item.id)
        is_over = bool(act and act.overdue)
        over_from: int | None = None
        if is_over and act is not None:
            if act.overdue_rule == "payoff" and item.payoff_chapter is not None:
                over_from = item.payoff_chapter
            elif state.overdue_default_age is not None:
                over_from = item.planted_chapter + state.overdue_default_age
        tracks.append(
            Track(
                item.id,
                item.description,
                item.planted_chapter,
                sorted(item.advanced),
                item.resolved_chapter,
                item.payoff_chapter,
                is_over,
                over_from,
                item.origin,
                _describe(item.source),
                source_link(item.source, current_fact_ids, pages),
            )
        )
    cards: dict[str, Any] = {}
    names = {cid: card.name for cid, card in state.cards.cards.items()}
    for cid, card in state.cards.cards.items():
        entries: list[dict[str, Any]] = []
        prev: Any = None
        for n in [0, *chapters] if 0 not in chapters else chapters:
            st = state.index.card_as_of(cid, n)
            snap = {
                "attrs": [
                    [k, str(v.value), v.since, _describe(v.source), source_link(v.source, current_fact_ids, pages)]
                    for k, v in sorted(st.attributes.items())
                ],
                "rels": [
                    [
                        r.type,
                        names.get(r.target, r.target),  # the card's name, as the author reads it (not its id)
                        r.since,
                        _describe(r.source),
                        source_link(r.source, current_fact_ids, pages),
                    ]
                    for r in sorted(st.relations, key=lambda r: (r.type, r.target))
                ],
            }
            if snap != prev:
                entries.append({"from": n, **snap})
                prev = snap
        cards[cid] = {
            "name": card.name,
            "type": card.type,
            "aliases": list(card.aliases),
            "file": f"{card.file}:{card.line}",
            "states": entries,
        }
    return MemoryPage(
        chapters=chapters,
        last=last,
        tracks=tracks,
        cards_json=cards,
        card_count=len(cards),
        problems=[(p.chapter, p.code, p.item, p.detail) for p in state.problems],
        facts_status=dict(state.facts_status),
    )
