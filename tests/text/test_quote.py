"""Quote location after normalisation, against a naive oracle."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from novelmuse.text import count_chars, count_paragraphs, locate_quote, normalize_for_match, split_paragraphs


def test_quote_found_once_with_original_offsets() -> None:
    text = "玄德曰：“吾乃汉室宗亲。”\n\n张飞大怒，ＡＢＣ　在此。"
    m = locate_quote(text, "张飞 大怒")
    assert m.ok and text[m.start : m.end] == "张飞大怒"
    m = locate_quote(text, "ABC在此")  # half-width query, full-width text with an ideographic space
    assert m.ok and text[m.start : m.end] == "ＡＢＣ　在此"


def test_quote_failures_have_codes() -> None:
    text = "哈哈哈，天下大势，分久必合。"
    assert locate_quote(text, "哈哈").status == "not_unique"  # overlapping placements are ambiguous
    assert locate_quote(text, "曹操").error_code == "CONTRACT_QUOTE_NOT_FOUND"
    assert locate_quote(text, "  ").error_code == "CONTRACT_QUOTE_EMPTY"
    assert locate_quote(text, "天下", min_chars=4).error_code == "CONTRACT_QUOTE_TOO_SHORT"


def test_combining_marks_are_composed() -> None:
    text = "Cafe\u0301 开张"
    m = locate_quote(text, "Caf\u00e9")
    assert m.ok and text[m.start : m.end] == "Cafe\u0301"


@given(st.text(alphabet="甲乙丙 　\n", max_size=30), st.text(alphabet="甲乙丙", min_size=1, max_size=3))
def test_quote_matches_naive_oracle(text: str, quote: str) -> None:
    squeezed = "".join(text.split())
    naive = sum(1 for i in range(len(squeezed)) if squeezed.startswith(quote, i))
    m = locate_quote(text, quote)
    assert m.occurrences == min(naive, 2)
    if naive == 1:
        assert "".join(text[m.start : m.end].split()) == quote


@given(st.text(max_size=200))
def test_normalized_offsets_are_monotonic(text: str) -> None:
    norm = normalize_for_match(text)
    assert len(norm.starts) == len(norm.text)
    assert list(norm.starts) == sorted(norm.starts)


def test_count_chars_excludes_all_whitespace() -> None:
    assert count_chars("第一回\u3000桃园 结义\n\n\t一二三") == 10
    assert count_chars("") == 0


def test_paragraphs_are_lines_with_exact_offsets() -> None:
    text = "　　第一段。\n\n第二段\r\n  \n第三段"
    paras = split_paragraphs(text)
    assert [p.text for p in paras] == ["　　第一段。", "第二段", "第三段"]
    assert all(text[p.start : p.end] == p.text for p in paras)


@given(
    st.lists(st.sampled_from(["段", " ", "\u3000", "\r", "\n", "\t", "\x0b", "\x85", "a"]), max_size=40).map("".join)
)
def test_count_paragraphs_equals_split_paragraphs(text: str) -> None:
    assert count_paragraphs(text) == len(split_paragraphs(text))
