"""Canon cards: validation problems naming file and line, as-of merge rules, chunking and mention rules
checked against naive oracles with hypothesis."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import Book, find_book
from novelmuse.errors import InputError
from novelmuse.memory import (
    CardIndex,
    MentionMatcher,
    Source,
    chunk_body,
    lint_cards,
    load_cards,
    naive_mentions,
)


def book_with(tmp_path: Path, cards: dict[str, str], chapters: dict[int, str] | None = None) -> Book:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "book.toml").write_text('[book]\ntitle = "t"\n', encoding="utf-8")
    (tmp_path / "cards").mkdir()
    for name, text in cards.items():
        (tmp_path / "cards" / name).write_text(text, encoding="utf-8")
    (tmp_path / "chapters").mkdir()
    for n, body in (chapters or {}).items():
        (tmp_path / "chapters" / f"{n:04d}.md").write_text(f"# 第{n}章\n{body}", encoding="utf-8")
    return find_book(tmp_path)


A = """\
id: a
type: character
name: 甲
aliases: [阿甲]
attributes:
  status:
    - {value: alive, from: 1, to: 9}
    - {value: dead, from: 10}
relations:
  - {type: 师徒, target: b, from: 2}
"""
B = "id: b\ntype: character\nname: 乙\n"


def codes(book: Book) -> list[tuple[str, str, str]]:
    return [(p.code, p.where, p.other) for p in lint_cards(book)[1]]


def test_clean_cards_have_no_problems(tmp_path: Path) -> None:
    assert codes(book_with(tmp_path, {"a.yaml": A, "b.yaml": B})) == []


def test_overlapping_ranges_name_both_lines(tmp_path: Path) -> None:
    book = book_with(tmp_path, {"a.yaml": A.replace("from: 10}", "from: 9}"), "b.yaml": B})
    assert codes(book) == [("CARD_RANGE_OVERLAP", "cards/a.yaml:8", "cards/a.yaml:7")]
    with pytest.raises(InputError) as ei:
        load_cards(book)
    assert ei.value.code == "CARD_RANGE_OVERLAP" and ei.value.where == "cards/a.yaml:8"


def test_unknown_reference_with_hint(tmp_path: Path) -> None:
    book = book_with(tmp_path, {"a.yaml": A.replace("target: b", "target: 乙"), "b.yaml": B})
    [(code, where, _)] = codes(book)
    assert code == "CARD_UNKNOWN_REFERENCE" and where == "cards/a.yaml:10"
    assert "did you mean id 'b'" in lint_cards(book)[1][0].message


def test_alias_and_id_conflicts_name_both_files(tmp_path: Path) -> None:
    book = book_with(tmp_path, {"a.yaml": A, "b.yaml": B + "aliases: [阿甲]\n", "c.yaml": B})
    got = codes(book)
    assert ("CARD_DUPLICATE_ID", "cards/c.yaml:1", "cards/b.yaml:1") in got
    assert ("CARD_ALIAS_CONFLICT", "cards/b.yaml:4", "cards/a.yaml:4") in got  # the lines of the two aliases


def test_a_name_conflict_points_at_the_lines_that_write_the_name(tmp_path: Path) -> None:
    d = "# 乙的另一张卡\nid: d\ntype: character\nname: 丁\naliases:\n  - 小丁\n  - 乙\n"
    book = book_with(tmp_path, {"a.yaml": A, "b.yaml": B, "d.yaml": d})
    assert codes(book) == [("CARD_ALIAS_CONFLICT", "cards/d.yaml:7", "cards/b.yaml:3")]


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (A.replace("type: character", "type: hero"), 2, "type"),
        (A.replace("from: 1, to: 9", "from: 5, to: 3"), 7, "before it starts"),
        (A.replace("    - {value: dead, from: 10}", "    - {value: dead}"), 8, "from"),
        (A + "color: red\n", 11, "color"),
        ("id: a\nname: [unclosed\n", 3, "invalid YAML"),
    ],
)
def test_invalid_card_names_file_and_line(tmp_path: Path, text: str, line: int, needle: str) -> None:
    book = book_with(tmp_path, {"a.yaml": text, "b.yaml": B})
    problems = lint_cards(book)[1]
    assert problems and problems[0].where == f"cards/a.yaml:{line}", problems
    assert needle in problems[0].message


def test_source_pointer_outside_the_chapter(tmp_path: Path) -> None:
    text = A.replace("{value: dead, from: 10}", "{value: dead, from: 10, source: {chapter: 1, start: 2, end: 99}}")
    book = book_with(tmp_path, {"a.yaml": text, "b.yaml": B}, {1: "短短一章。\n"})
    assert codes(book) == [("CARD_SOURCE_OUT_OF_RANGE", "cards/a.yaml:8", None)]
    book2 = book_with(tmp_path / "x", {"a.yaml": text.replace("chapter: 1", "chapter: 7"), "b.yaml": B})
    assert [c for c, _, _ in codes(book2)] == ["CARD_SOURCE_MISSING"]


def test_as_of_merge_rules(tmp_path: Path) -> None:
    book = book_with(
        tmp_path,
        {"a.yaml": A.replace("    - {value: dead, from: 10}\n", "    - {value: dead, from: 12}\n"), "b.yaml": B},
    )
    index = CardIndex(load_cards(book))
    assert index.value_at("a", "status", 9).value == "alive"  # type: ignore[union-attr]
    assert index.value_at("a", "status", 10) is None  # the author's range ended at 9
    assert index.value_at("a", "status", 0) is None
    fact = Source("fact", chapter=10, start=0, end=4, receipt_id="R")
    assert index.add_fact_change("a", ("attr", "status"), 10, "captured", fact)
    assert index.value_at("a", "status", 11).value == "captured"  # type: ignore[union-attr]
    assert index.value_at("a", "status", 12).value == "dead"  # type: ignore[union-attr]
    # at the same chapter the author's value wins over a fact card
    assert not index.add_fact_change("a", ("attr", "status"), 12, "alive", fact)
    assert index.value_at("a", "status", 12).source.kind == "author"  # type: ignore[union-attr]
    state = index.card_as_of("a", 3)
    assert [(r.type, r.target, r.since) for r in state.relations] == [("师徒", "b", 2)]
    assert index.card_as_of("a", 1).relations == []


def test_as_of_matches_a_naive_scan(tmp_path: Path) -> None:
    import random

    rnd = random.Random(7)
    cards = {"b.yaml": B}
    expected: dict[tuple[str, int], str | None] = {}
    for i in range(30):
        starts = sorted(rnd.sample(range(1, 200), 4))
        lines = []
        for j, s in enumerate(starts):
            end = starts[j + 1] - 1 if j + 1 < len(starts) else None
            if end is not None and rnd.random() < 0.3:
                end = max(s, end - rnd.randint(0, 5))
            lines.append(f"    - {{value: v{j}, from: {s}" + (f", to: {end}}}" if end else "}"))
            for n in range(1, 201):
                if s <= n and (end is None or n <= end):
                    expected[(f"c{i}", n)] = f"v{j}"
        cards[f"c{i}.yaml"] = f"id: c{i}\ntype: item\nname: 物{i}\nattributes:\n  owner:\n" + "\n".join(lines) + "\n"
    index = CardIndex(load_cards(book_with(tmp_path, cards)))
    for i in range(30):
        for n in range(0, 201):
            v = index.value_at(f"c{i}", "owner", n)
            assert (v.value if v else None) == expected.get((f"c{i}", n)), (i, n)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet="甲乙丙。！？”\n ab", min_size=0, max_size=60), min_size=0, max_size=8),
    st.integers(min_value=3, max_value=40),
)
def test_chunks_cover_paragraphs_within_bound(paras: list[str], max_chars: int) -> None:
    body = "\n".join(paras)
    chunks = chunk_body(body, max_chars)
    covered: list[str] = []
    last_end = 0
    for c in chunks:
        assert body[c.start : c.end] == c.text and c.end - c.start <= max_chars and c.start >= last_end
        last_end = c.end
        covered.append(c.text)
    # every non-blank character of the body is in exactly one chunk
    assert "".join("".join(covered).split()) == "".join(body.split())


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet="关云长羽公", min_size=1, max_size=4), st.sampled_from(["g", "x", "y"]), max_size=6
    ),
    st.text(alphabet="关云长羽公之", max_size=40),
)
def test_mentions_equal_leftmost_longest_naive_scan(names: dict[str, str], text: str) -> None:
    assert MentionMatcher(names).find(text) == naive_mentions(text, names)
