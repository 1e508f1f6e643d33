"""Heading detection and splitting: the corpus (240 headings, no false positive) and generated books."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from novelmuse.text import find_headings, parse_heading, rejoin, split_chapters
from tests.conftest import HONGLOU, SANGUO
from tests.text.test_numerals import to_chinese


@pytest.mark.parametrize(
    ("line", "unit", "number", "title"),
    [
        ("第一回　宴桃园豪杰三结义　斩黄巾英雄首立功", "回", 1, "宴桃园豪杰三结义　斩黄巾英雄首立功"),
        ("第一百十九回　假投降巧计成虚话", "回", 119, "假投降巧计成虚话"),
        ("第一百零一章 风起", "章", 101, "风起"),
        ("第12章：少年", "章", 12, "少年"),
        ("第１２章:少年", "章", 12, "少年"),
        ("第一章风起云涌", "章", 1, "风起云涌"),
        ("第 3 章 重逢", "章", 3, "重逢"),
        ("  第三节  ", "节", 3, ""),
        ("第十章 怎么可能！", "章", 10, "怎么可能！"),
        ("第二章 “师父”", "章", 2, "“师父”"),
        ("第五章 风起（上）\r\n", "章", 5, "风起（上）"),
        ("Chapter 7", "Chapter", 7, ""),
        ("CHAPTER 12: The Storm", "Chapter", 12, "The Storm"),
        ("chapter 3 - Home", "Chapter", 3, "Home"),
        ("第一卷 潜龙", "卷", 1, "潜龙"),
    ],
)
def test_headings_recognised(line: str, unit: str, number: int, title: str) -> None:
    h = parse_heading(line)
    assert h is not None, line
    assert (h.unit, h.number, h.title) == (unit, number, title)
    assert h.text == line.strip()


def test_a_byte_order_mark_before_a_heading_is_not_text() -> None:
    """Novels concatenated from UTF-8 files with BOMs carry U+FEFF at the start of later headings: those
    lines are still headings (the pre-filter of find_headings skips the BOM, so parse_heading must too)."""
    h = parse_heading("\ufeff第二章 乙\n")
    assert h is not None and (h.number, h.title, h.text) == (2, "乙", "第二章 乙")
    text = "第一章 甲\n正文。\n\ufeff第二章 乙\n正文。\n\ufeff 第三章 丙\n正文。\n"
    split = split_chapters(text)
    assert [(c.number, c.heading_line.line_no) for c in split.chapters] == [(1, 1), (2, 3), (3, 5)]
    assert rejoin(split, text) == text


@pytest.mark.parametrize(
    "line",
    [
        "第四回中，既将薛家母子在荣府中寄居等事，略已表明。",  # 红楼梦 ch. 5: prose that starts like a heading
        "第一回说到此处。",
        "第一回说到…",
        "第三日包管有十万枝箭。",
        "第一镇后将军、南阳太守袁术",
        "第十章 他大叫：“好！”",
        "第一章，",
        "第一章完",  # an end marker, not a new chapter
        "第十回（完）",
        "第一章" + "长" * 41,
        "　　他翻到第一章。",
        "第章 无号",
        "第百章",
        "Chapter one",
        "Chapter 3 of the book was long.",
        "Chapters 1",
        "",
    ],
)
def test_prose_is_not_a_heading(line: str) -> None:
    assert parse_heading(line) is None


@pytest.mark.parametrize("path", [SANGUO, HONGLOU], ids=["sanguo", "honglou"])
def test_corpus_has_exactly_its_120_headings(path) -> None:  # type: ignore[no-untyped-def]
    text = path.read_text(encoding="utf-8")
    split = split_chapters(text)
    assert [c.number for c in split.chapters] == list(range(1, 121))
    assert all(c.heading_line.heading.unit == "回" for c in split.chapters)
    assert len(find_headings(text)) == 120  # no volume, no other unit, no false positive
    assert split.prologue == ""
    assert rejoin(split, source=text) == text
    # each heading line is the line as in the source, stripped; bodies sit between them verbatim
    lines = text.split("\n")
    for c in split.chapters:
        assert lines[c.heading_line.line_no - 1].strip() == c.heading_line.heading.text
    assert split.chapters[118].heading_line.heading.text.startswith("第一百十九回")
    assert rejoin(split) == text  # the corpus heading lines are already normalised


def test_volume_and_chapter_on_one_line_is_the_chapter() -> None:
    h = parse_heading("第一卷 潜龙在渊 第一章 少年")
    assert h is not None and (h.unit, h.number, h.title, h.volume) == ("章", 1, "少年", 1)
    h = parse_heading("第二卷　第12章：重逢")
    assert h is not None and (h.unit, h.number, h.title, h.volume) == ("章", 12, "重逢", 2)
    h = parse_heading("第三卷 风云第一章")  # no boundary before 第: a volume title, not a chapter
    assert h is not None and h.is_volume and h.title == "风云第一章"
    split = split_chapters("第一卷 潜龙 第一章 少年\n正文一。\n第二章 青年\n正文二。\n")
    assert [c.number for c in split.chapters] == [1, 2] and split.volumes == [] and split.prologue == ""


def test_prologue_volumes_and_other_units_stay_in_text() -> None:
    text = "书名：风起\n作者：某\n\n第一卷 潜龙\n第一章 少年\n正文一。\n第一节 小节\n正文二。\n第二章 青年\n正文三。"
    split = split_chapters(text)
    assert split.unit == "章"
    assert split.prologue == "书名：风起\n作者：某\n\n第一卷 潜龙\n"
    assert [c.number for c in split.chapters] == [1, 2]
    assert split.chapters[0].body == "正文一。\n第一节 小节\n正文二。\n"
    assert split.chapters[1].body == "正文三。"
    assert [v.line_no for v in split.volumes] == [4]
    assert [o.line_no for o in split.other_headings] == [7]
    assert rejoin(split, source=text) == text


def test_sections_are_chapters_when_nothing_else_is() -> None:
    split = split_chapters("第一节 甲\n一\n第二节 乙\n二\n")
    assert split.unit == "节" and [c.number for c in split.chapters] == [1, 2]


def test_no_heading_means_all_prologue() -> None:
    split = split_chapters("只有一段文字。\n又一段。")
    assert split.chapters == [] and split.unit is None and split.prologue == "只有一段文字。\n又一段。"


# --- generated books ---------------------------------------------------------------------------

_PROSE = "天下大势分久必合合久必分。，！？“”：\u3000 \r😀é\u0301的一了是我第回章"
_prose_chars = st.sampled_from(list(_PROSE))
_prose_line = st.text(_prose_chars, min_size=0, max_size=30).filter(lambda s: "\n" not in s)
_title = st.text(st.sampled_from(list("风起云涌少年英雄斩黄巾　 ")), max_size=12)


@st.composite
def generated_book(draw: st.DrawFn) -> tuple[str, list[int], list[str]]:
    """A book: prose prologue lines, then chapters with headings in varied styles and prose bodies."""
    n = draw(st.integers(min_value=0, max_value=8))
    start = draw(st.integers(min_value=1, max_value=2000))
    numbers = list(range(start, start + n))
    unit = draw(st.sampled_from(["章", "回"]))
    lines: list[str] = [f"｛{line}" for line in draw(st.lists(_prose_line, max_size=3))]  # prologue
    headings: list[str] = []
    for num in numbers:
        style = draw(st.sampled_from(["cn", "cn_one_ten", "arabic", "fullwidth"]))
        if style == "arabic":
            numeral = str(num)
        elif style == "fullwidth":
            numeral = str(num).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
        else:
            numeral = to_chinese(num, one_ten=style == "cn_one_ten")
        sep = draw(st.sampled_from(["", " ", "　", "：", ":"]))
        title = draw(_title).strip()
        indent = draw(st.sampled_from(["", "  ", "　　"]))
        trail = draw(st.sampled_from(["", " ", "\r"]))
        heading = f"{indent}第{numeral}{unit}{sep if title else ''}{title}{trail}"
        headings.append(heading)
        lines.append(heading)
        # body lines never form a heading: prose starts with a non-heading character
        lines.extend(f"　　{line}。" for line in draw(st.lists(_prose_line, max_size=4)))
    ending = draw(st.sampled_from(["", "\n"]))
    return "\n".join(lines) + ending, numbers, headings


@settings(max_examples=150, deadline=None)
@given(generated_book())
def test_split_rejoin_generated_books(book: tuple[str, list[int], list[str]]) -> None:
    text, numbers, headings = book
    split = split_chapters(text)
    assert [c.number for c in split.chapters] == numbers
    assert rejoin(split, source=text) == text
    # the normalised rejoin differs from the input only in the heading lines (stripped, "\n"-ended)
    expected_lines = text.split("\n")
    for c in split.chapters:
        expected_lines[c.heading_line.line_no - 1] = expected_lines[c.heading_line.line_no - 1].strip()
    expected = "\n".join(expected_lines)
    if split.chapters and not split.chapters[-1].body and not text.endswith("\n"):
        expected += "\n"  # a heading on the very last line gains its line break
    assert rejoin(split) == expected
    assert [c.heading_line.heading.text for c in split.chapters] == [h.strip() for h in headings]


_title_chars = st.sampled_from(list("风起云涌少年英雄斩黄巾（）“”！？ 　·ABCabc123"))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=99_999),
    st.sampled_from(["章", "回", "节", "卷"]),
    st.sampled_from(["cn", "arabic", "fullwidth"]),
    st.sampled_from(["", " ", "　", "：", ":", " - ", "\t"]),
    st.text(_title_chars, max_size=40),
)
def test_any_well_formed_heading_parses_back(number: int, unit: str, style: str, sep: str, title: str) -> None:
    if style == "cn":
        numeral = to_chinese(number)
    elif style == "arabic":
        numeral = str(number)
    else:
        numeral = str(number).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    title = title.strip()
    assume(not (len(title) > 1 and title[-1] == "”" and title[-2] in "！？"))  # 好！” ends a quoted sentence
    h = parse_heading(f"第{numeral}{unit}{sep if title else ''}{title}")
    assert h is not None
    assert (h.number, h.unit, h.title) == (number, unit, title)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("第一二十百章回节卷 　，。！？“”：…天下")), max_size=60))
def test_prose_with_sentence_punctuation_is_never_a_heading(text: str) -> None:
    line = text + "。"
    assert parse_heading(line) is None
    assert parse_heading("　　" + text + "，") is None
