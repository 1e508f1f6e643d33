"""The issue's checks on the real corpus: as-of deaths, mention counts, episode search."""

from __future__ import annotations

import json

import pytest

from novelmuse.book import Book
from novelmuse.memory import (
    MentionMatcher,
    SearchIndex,
    Tokenizer,
    card_mentions,
    load_cards,
    mention_names,
    naive_mentions,
    replay,
)

DEATHS = {"关羽": 77, "曹操": 78, "张飞": 81, "刘备": 85}
ALIASES = {
    "云长": "关羽",
    "关公": "关羽",
    "关云长": "关羽",
    "孟德": "曹操",
    "曹丞相": "曹操",
    "翼德": "张飞",
    "玄德": "刘备",
    "刘玄德": "刘备",
    "刘皇叔": "刘备",
}


@pytest.mark.parametrize("name", sorted(DEATHS))
def test_as_of_status_on_both_sides_of_each_death(sanguo_book: Book, name: str) -> None:
    state = replay(sanguo_book)
    death = DEATHS[name]
    before = state.card_as_of(name, death - 1).attributes["status"]
    after = state.card_as_of(name, death).attributes["status"]
    later = state.card_as_of(name, 120).attributes["status"]
    assert before.value == "alive" and after.value == "dead" and later.value == "dead"
    assert after.since == death
    assert after.source.kind == "author" and after.source.file == f"cards/{state.cards.require(name).id}.yaml"
    assert after.source.chapter == death and after.source.start is not None
    body = sanguo_book.read_chapter(death).body
    assert body[after.source.start : after.source.end] in {
        "于是关公父子皆遇害",
        "却说曹操身亡",
        "割了张飞首级",
        "言毕驾崩",
    }


@pytest.mark.parametrize(("alias", "name"), sorted(ALIASES.items()))
def test_any_alias_resolves(sanguo_book: Book, alias: str, name: str) -> None:
    state = replay(sanguo_book)
    assert state.card_as_of(alias, 10).name == name


def test_mentions_equal_naive_count_over_all_aliases(muse, sanguo_book: Book) -> None:
    cards = load_cards(sanguo_book)
    names = mention_names(cards)
    guan = cards.require("关羽")
    r = muse("mentions", "关羽", "--json", "--book", sanguo_book.root)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    got = {c["chapter"]: c["count"] for c in doc["chapters"]}
    assert doc["names"] == ["关羽", "云长", "关公", "关云长"] and doc["total"] == sum(got.values())
    expected = {}
    for n in sanguo_book.chapter_numbers():
        chapter = sanguo_book.read_chapter(n)
        count = sum(1 for m in naive_mentions(chapter.body, names) if m.card_id == "guan-yu")
        count += sum(1 for m in naive_mentions(chapter.heading, names) if m.card_id == "guan-yu")  # its 回目 too
        if count:
            expected[n] = count
    assert got == expected
    assert max(got) >= 97  # mentioned (memories, titles) long after his death in ch. 77
    assert sum(v for k, v in got.items() if k > 77) > 20
    assert doc["last_chapter"] == max(got)
    # An independent oracle with plain str.count: 关云长 contains 云长, so its occurrences are taken off once.
    for n in sanguo_book.chapter_numbers():
        chapter = sanguo_book.read_chapter(n)
        text = chapter.heading + "\n" + chapter.body
        plain = sum(text.count(a) for a in ("关羽", "关公", "关云长", "云长")) - text.count("关云长")
        assert got.get(n, 0) == plain, n
    before = card_mentions(sanguo_book.db, guan, before=77, headings=MentionMatcher(names))
    assert before.last_chapter == 76 and before.total == sum(v for k, v in got.items() if k < 77)


@pytest.mark.parametrize(
    ("query", "before", "chapters"),
    [("桃园结义", 10, {1}), ("温酒斩华雄", 20, {5}), ("三顾茅庐", 40, {37, 38})],
)
@pytest.mark.parametrize("isolated", [False, True])
def test_episode_search_ranks_its_chapter_first(
    sanguo_book: Book, query: str, before: int, chapters: set[int], isolated: bool
) -> None:
    index = SearchIndex(sanguo_book, load_cards(sanguo_book))
    hits = index.search(query, before=before, k=5, isolated=isolated)
    assert hits and hits[0].chapter in chapters
    assert all(h.chapter < before for h in hits)
    body = sanguo_book.read_chapter(hits[0].chapter).body
    assert body[hits[0].start : hits[0].end] == hits[0].text


def test_names_are_tokens(sanguo_book: Book) -> None:
    assert Tokenizer(load_cards(sanguo_book).lexicon()).tokens("曹操引兵追赶") == ["曹操", "引兵", "追赶"]


def test_query_tokens_fall_back_to_known_subwords_then_characters(sanguo_book: Book) -> None:
    tok = Tokenizer(load_cards(sanguo_book).lexicon())
    vocab = {"桃园", "三顾", "茅庐", "结", "义", "曹操", "三英", "吕布", "战"}

    def known(words: set[str]) -> set[str]:
        return words & vocab

    assert tok.query_tokens("桃园结义", known) == ["桃园"]  # 结/义 alone would match every 麴义
    assert tok.query_tokens("三顾茅庐", known) == ["三顾", "茅庐"]
    assert tok.query_tokens("结义", known) == ["结", "义"]  # nothing longer known: characters, never empty
    assert tok.query_tokens("曹操引兵", known) == ["曹操"]
    assert tok.query_tokens("三英战吕布", known) == ["三英", "吕布"]  # a compound query matches its parts


def test_rjieba_cuts_exactly_like_jieba(sanguo_book: Book) -> None:
    """The index is cut by rjieba (jieba-rs) for speed; its tokens must be jieba's own (the benchmark checks the
    whole of 红楼梦; this checks a sample of 三国演义, default and search modes)."""
    import logging

    import jieba
    import rjieba

    jieba.setLogLevel(logging.WARNING)
    tk = jieba.Tokenizer()
    text = "".join(sanguo_book.read_chapter(n).body for n in (1, 37, 120))
    paragraphs = [p for p in text.split("\n") if p.strip()]
    assert [tk.lcut(p) for p in paragraphs] == [rjieba.cut(p) for p in paragraphs]
    assert [tk.lcut_for_search(p) for p in paragraphs[:50]] == [rjieba.cut_for_search(p) for p in paragraphs[:50]]
