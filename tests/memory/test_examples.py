"""The sample book's cards and fine outlines are valid, and their source pointers quote the chapters."""

from __future__ import annotations

from novelmuse.book import find_book, load_outlines
from novelmuse.memory import lint_cards, replay

from ..conftest import SAMPLE_BOOK


def test_sample_cards_lint_clean_and_sources_point_into_chapters() -> None:
    book = find_book(SAMPLE_BOOK)
    cards, problems = lint_cards(book)
    assert problems == []
    assert {"刘备", "关羽", "张飞", "曹操"} <= {c.name for c in cards.cards.values()}
    spans = [e.span for c in cards.cards.values() for es in c.attributes.values() for e in es if e.span]
    assert len(spans) >= 5
    for s in spans:
        assert s.end - s.start >= 4 and book.read_chapter(s.chapter).body[s.start : s.end].strip()


def test_sample_outlines_drive_the_ledger_without_a_model() -> None:
    book = find_book(SAMPLE_BOOK)
    outlines = load_outlines(book)
    assert sorted(outlines) == [1, 2, 11] and all(o.plants for o in outlines.values())  # 11: for the writer
    state = replay(book)
    assert state.problems == []
    at2 = {a.id: a for a in state.active_foreshadows(2).items}
    assert set(at2) == {"F-weapons", "F-dongzhuo", "F-outer-troops"}  # F-reward was resolved in chapter 2
    assert at2["F-weapons"].last_advanced_chapter == 2 and not at2["F-weapons"].overdue
    assert state.active_foreshadows(6).items[-1].overdue  # F-outer-troops: payoff by 3
    dong = state.card_as_of("董贼", 9).attributes["status"]
    assert dong.value == "dead" and book.read_chapter(9).body[dong.source.start : dong.source.end].startswith("一戟")
