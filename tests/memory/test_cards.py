"""Canon cards: validation problems naming file and line, as-of merge rules, chunking and mention rules
checked against naive oracles with hypothesis."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
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


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ('id: a\ntype: character\nname: "  "\n', 3, "the name is blank"),
        ('id: a\ntype: character\nname: "关\\u200b羽"\n', 3, "U+200B"),
        ('id: a\ntype: character\nname: 甲\naliases: [阿甲, "\\a乙"]\n', 4, "an alias contains the control"),
        ('id: a\ntype: character\nname: " 甲"\n', 3, "starts or ends with a space"),
        ("id: ..\ntype: character\nname: 甲\n", 1, "contains '..'"),
        ("id: a..b\ntype: character\nname: 甲\n", 1, "contains '..'"),
        ("id: .a\ntype: character\nname: 甲\n", 1, "starts with '.'"),
        ("id: con\ntype: character\nname: 甲\n", 1, "cannot be a file name"),
        ("id: NUL.txt\ntype: character\nname: 甲\n", 1, "cannot be a file name"),
        ("id: lpt9\ntype: character\nname: 甲\n", 1, "cannot be a file name"),
        ('id: a\ntype: character\nname: 甲\nattributes:\n  "":\n    - {value: x, from: 1}\n', 5, "empty name"),
        ("id: 12\ntype: character\nname: 甲\n", 1, "valid string"),
        (A.replace("target: b", "target: a"), 10, "relation '师徒' to itself"),
        (A.replace("{value: dead, from: 10}", "{value: .nan, from: 10}"), 8, "finite"),
        (A.replace("{value: dead, from: 10}", "{value: .inf, from: 10}"), 8, "finite"),
        (A.replace("from: 10}", "from: 1000000}"), 8, "less than or equal to 99999"),
        (A.replace("from: 10}", "from: true}"), 8, "valid integer"),
        (A.replace("from: 10}", 'from: "10"}'), 8, "valid integer"),
        (A.replace("to: 9}", "to: yes}"), 7, "valid integer"),
        (
            A.replace(
                "{value: dead, from: 10}", "{value: dead, from: 10, source: {chapter: 100000000, start: 0, end: 3}}"
            ),
            8,
            "99999",
        ),
    ],
)
def test_strict_card_values_are_refused_with_file_and_line(tmp_path: Path, text: str, line: int, needle: str) -> None:
    """Issue 18.4: blank or control-character names, '..' ids, self-relations, NaN, absurd and boolean
    chapters are errors naming file:line (they were accepted)."""
    book = book_with(tmp_path, {"a.yaml": text, "b.yaml": B})
    problems = lint_cards(book)[1]
    assert problems and problems[0].where == f"cards/a.yaml:{line}", problems
    assert problems[0].code == "CARD_INVALID" and needle in problems[0].message, problems[0].message


def test_lint_names_every_unknown_key_with_its_line(tmp_path: Path) -> None:
    text = A.replace("name: 甲\n", "name: 甲\ncolour: red\n") + "weight: 3\n"
    text = text.replace("{value: dead, from: 10}", "{value: dead, from: 10, sauce: x}")
    book = book_with(tmp_path, {"a.yaml": text, "b.yaml": B})
    got = [(p.where, p.message) for p in lint_cards(book)[1]]
    assert [w for w, _ in got] == ["cards/a.yaml:4", "cards/a.yaml:9", "cards/a.yaml:12"], got
    assert all("unknown key" in m for _, m in got)
    assert {m.split("'")[1] for _, m in got} == {"colour", "sauce", "weight"}


def test_a_huge_name_is_refused_fast_and_names_cost_linear_time(tmp_path: Path) -> None:
    """A 20,000-character name took 65 s and 547 MB in `sync` (jieba's add_word stored every prefix). It is
    refused by the length cap, and even without the cap a name is one automaton pattern: linear."""
    import time

    from novelmuse.memory import Tokenizer

    huge = "甲乙" * 10_000
    book = book_with(tmp_path, {"a.yaml": f"id: a\ntype: character\nname: {huge}\n"}, {1: "正文。\n"})
    t0 = time.process_time()
    problems = lint_cards(book)[1]
    assert problems[0].code == "CARD_INVALID" and "20,000 characters long" in problems[0].message
    text = ("丙丁" * 500 + huge) * 3
    tok = Tokenizer([huge, "丙丁"])
    assert tok.tokens(text).count(huge) == 3
    assert time.process_time() - t0 < 5


def test_parsed_cards_are_cached_by_sha256_and_invalidated_exactly_when_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novelmuse.memory import _cards

    book = book_with(tmp_path, {"a.yaml": A, "b.yaml": B})
    parsed: list[str] = []
    real = _cards._parse_card

    def counting(book: Book, path: Path, data: bytes) -> _cards.Card:
        parsed.append(path.name)
        return real(book, path, data)

    monkeypatch.setattr(_cards, "_parse_card", counting)
    first = load_cards(book)
    assert sorted(parsed) == ["a.yaml", "b.yaml"]
    parsed.clear()
    again = load_cards(book)
    assert parsed == [] and again.cards["a"].attributes == first.cards["a"].attributes
    assert again.cards["a"].relations == first.cards["a"].relations and again.by_name == first.by_name
    (book.cards_dir / "b.yaml").write_text(B + "aliases: [小乙]\n", encoding="utf-8")
    assert load_cards(book).resolve("小乙") is not None and parsed == ["b.yaml"]
    parsed.clear()
    (book.cards_dir / "a.yaml").write_text(A.replace("from: 10", "from: 11"), encoding="utf-8")  # same size
    assert load_cards(book).cards["a"].attributes["status"][1].start == 11 and parsed == ["a.yaml"]


_RESERVED = ["con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.sampled_from([*_RESERVED, "guan-yu", "a1", "console", "nully", "com10", "关羽"]),
    upper=st.booleans(),
    ext=st.sampled_from(["", ".txt", ".yaml"]),
)
def test_an_id_is_refused_exactly_when_some_system_cannot_name_a_file_with_it(
    tmp_path: Path, base: str, upper: bool, ext: str
) -> None:
    """Against the naive oracle: the part before the first dot, lower-cased, is a Windows device name."""
    card_id = (base.upper() if upper else base) + ext
    root = Path(tempfile.mkdtemp(prefix="ids-", dir=tmp_path))
    book = book_with(root, {"a.yaml": f"id: {card_id}\ntype: character\nname: 甲\n"})
    problems = [p for p in lint_cards(book)[1] if "cannot be a file name" in p.message]
    assert bool(problems) == (card_id.split(".")[0].lower() in _RESERVED), (card_id, problems)
