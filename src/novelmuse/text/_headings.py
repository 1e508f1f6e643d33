"""Chapter heading lines: the rule that tells a heading line from prose (splitting a novel is `_split`).

The rule that tells a heading from prose (tested on all 240 headings of 三国演义 and 红楼梦, with no
false positive):

1. A heading is a whole line. After stripping whitespace (ASCII, U+3000, ``\\r``) the line is
   ``第<number><unit><title?>`` with unit 章 / 回 / 节, or ``Chapter <digits><title?>`` (any case).
   The number is Arabic, full-width or Chinese (see `parse_number`); spaces around it are allowed.
2. The title is optional. It may follow the unit directly (``第一章风起``) or after a separator: spaces,
   U+3000, a colon (``:``/``：``), ``.``, ``、``, ``-`` or a dash.
3. The title is at most `MAX_TITLE_CHARS` characters (counted without whitespace), contains no 。,
   does not end in sentence punctuation that continues or ends prose (``。，、；：…`` and their ASCII
   forms), and does not end in a closing quote right after sentence punctuation (``好！”``).
   A title ending in ！ or ？ alone is allowed: web-novel titles do that. A title that only marks the end
   of a chapter (``第一章完``, ``第一章（完）``) is not a heading either.

``第N卷`` (a volume) is recognised explicitly but is *not* a chapter: the line stays in the body of the
chapter (or prologue) it falls in and is listed separately, so the author can see it. A volume and a
chapter on one line (``第一卷 潜龙 第一章 少年``, common in web-novel downloads) is that chapter's heading,
with the volume number recorded in `Heading.volume`.

Splitting uses one unit: the unit of the first 章/回/Chapter heading, else 节. Heading lines of another
unit (e.g. 第一节 inside chapters) stay in the body and are listed too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from ..limits import MAX_CHAPTER_NUMBER
from ._count import count_chars
from ._numerals import CHINESE_NUMERAL_CHARS, parse_number

HeadingUnit = Literal["章", "回", "节", "卷", "Chapter"]
InlineRule = Literal["indent", "separator", "couplet", "untitled", "author"]

MAX_TITLE_CHARS: Final = 40

_NUM = rf"[0-9０-９]+|[{CHINESE_NUMERAL_CHARS}]+"
_SEP = r"[\s:：.．、\-—–]"
_CN_HEADING = re.compile(rf"第[ \t\u3000]*(?P<num>{_NUM})[ \t\u3000]*(?P<unit>[章回节卷])(?P<rest>.*)", re.DOTALL)
_EN_HEADING = re.compile(rf"(?i:chapter)[ \t\u3000]*(?P<num>[0-9０-９]+)(?P<rest>(?:{_SEP}.*)?)", re.DOTALL)
_INNER_CHAPTER = re.compile(rf"(?:^|[ \t\u3000])(第[ \t\u3000]*(?:{_NUM})[ \t\u3000]*[章回节])")
_BAD_END: Final = frozenset("。，、；：…,;:.")
_SENTENCE_END: Final = frozenset("。！？!?…")
_CLOSING_QUOTES: Final = frozenset("”」』\"'’")
#: A "title" that only says the chapter ended (第一章完, 第一章（完）) marks an end, not a new chapter.
_END_MARKERS: Final = frozenset({"完", "终", "完结", "结束", "（完）", "(完)", "【完】", "（终）", "(终)"})


@dataclass(frozen=True, slots=True)
class Heading:
    """A recognised heading line: its unit, number, the number as written, and the title (may be "")."""

    unit: HeadingUnit
    number: int
    numeral: str
    title: str
    text: str  # the whole line, stripped
    volume: int | None = None  # a chapter heading after a volume on the same line: 第一卷 潜龙 第一章 少年

    @property
    def is_volume(self) -> bool:
        return self.unit == "卷"


def _title_ok(title: str) -> bool:
    if not title:
        return True
    if count_chars(title) > MAX_TITLE_CHARS or "。" in title or title in _END_MARKERS:
        return False
    last = title[-1]
    if last in _BAD_END:
        return False
    return not (last in _CLOSING_QUOTES and len(title) > 1 and title[-2] in _SENTENCE_END)


def parse_heading(line: str) -> Heading | None:
    """The heading on this line (whole line, see the module rules), or None when it is prose."""
    # a byte-order mark left at the start of a line (files concatenated from BOM'd UTF-8 files) is not text
    stripped = line.strip().lstrip("\ufeff").strip()
    if not stripped or len(stripped) > 200:
        return None
    unit: HeadingUnit
    m = _CN_HEADING.fullmatch(stripped)
    if m:
        unit = m.group("unit")  # type: ignore[assignment]
    else:
        m = _EN_HEADING.fullmatch(stripped)
        if not m:
            return None
        unit = "Chapter"
    numeral = m.group("num")
    number = parse_number(numeral)
    if number is None or number > MAX_CHAPTER_NUMBER:
        return None
    rest = m.group("rest")
    title = rest.strip().lstrip(":：.．、-—–").strip()
    if not _title_ok(title):
        return None
    if unit == "卷" and title:
        inner = _INNER_CHAPTER.search(title)
        if inner is not None:
            chapter = parse_heading(title[inner.start(1) :])
            if chapter is not None and not chapter.is_volume:
                return Heading(chapter.unit, chapter.number, chapter.numeral, chapter.title, stripped, number)
    return Heading(unit, number, numeral, title, stripped)


@dataclass(frozen=True, slots=True)
class HeadingLine:
    """A heading found in a text: 1-based line number and the [start, end) span of the raw line
    (end includes the line's ``\\n`` when there is one)."""

    line_no: int
    start: int
    end: int
    heading: Heading
    #: None for a whole heading line; for a heading that runs into the chapter's text on the same line, the rule
    #: that found where its title ends (see `_split`): the body starts at `end`, inside the line.
    inline: InlineRule | None = None

    def raw(self, text: str) -> str:
        """The line exactly as in the text, with its line break (an inline heading: up to its text)."""
        return text[self.start : self.end]


def chapter_label(unit: str | None, number: int) -> str:
    """How a book whose headings use `unit` names chapter `number` in messages: 第23回, 第23节, Chapter 23, or
    第23章 when the unit is unknown; chapter 0 is the prologue, 序."""
    if number == 0:
        return "序"
    if unit == "Chapter":
        return f"Chapter {number}"
    return f"第{number}{unit if unit in ('回', '节') else '章'}"


def heading_unit(headings: Iterable[str]) -> HeadingUnit | None:
    """The unit most of these chapter headings use (章, 回, 节 or Chapter; volumes do not count), or None when
    none is a numbered chapter heading — what `chapter_label` needs to name chapters the book's way."""
    counts: Counter[HeadingUnit] = Counter()
    for line in headings:
        heading = parse_heading(line)
        if heading is not None and not heading.is_volume:
            counts[heading.unit] += 1
    return counts.most_common(1)[0][0] if counts else None


def find_headings(text: str) -> list[HeadingLine]:
    """Every heading line of `text`, in order, with line numbers and raw spans (lines end at ``\\n``)."""
    out: list[HeadingLine] = []
    pos = 0
    line_no = 0
    n = len(text)
    while pos < n:
        line_no += 1
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl + 1
        # Cheap pre-filter: a heading line starts (after blanks) with 第 or C/c.
        first = pos
        while first < end and text[first] in " \t\u3000\ufeff":
            first += 1
        if first < end and text[first] in "第Cc":
            h = parse_heading(text[pos:end])
            if h is not None:
                out.append(HeadingLine(line_no, pos, end, h))
        pos = end
    return out
