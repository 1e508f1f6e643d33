"""Splitting a whole novel into prologue + chapters at its heading lines, byte-exact — and never losing a chapter
whose heading runs into its text on the same line (issue 15 item 1).

Splitting uses one unit: the unit of the first 章/回/Chapter heading line, else 节. Heading lines of another
unit (e.g. 第一节 inside chapters) stay in the body and are listed too.

**Inline headings.** Novels as they circulate sometimes run a heading into the chapter's first text
(``第一百回　汉兵劫寨破曹真　武侯斗阵辱仲达却说众将……``): too long to be a heading line, such a line used to be
absorbed silently into the previous chapter. A line that starts with the *next expected* chapter heading (the
number after the chapter it is in — before the first heading line, any number below that line's — and a number
no heading line of the book has) and goes on with text is an inline heading. It is split where its title ends
when the book itself makes that unambiguous — a pattern counts when at least `MIN_EVIDENCE` heading lines show
it, and the line's own title is assumed to follow it — by the first of these rules that applies
(`HeadingLine.inline` says which; the import reports it per chapter):

1. ``untitled`` — the book's heading lines have no titles: the text starts right after the number.
2. ``indent`` — the first run of two or more spaces (``　　``, the paragraph indent), before any prose mark, ends
   the title, when no heading line of the book has such a run inside its title (and the title before it has the
   book's number of parts, if the book has one).
3. ``separator`` — the book's heading lines all have titles of k space-separated parts, and the line has exactly
   k runs of spaces before its first prose mark (，。、；：…“” …): the k-th run ends the title.
4. ``couplet`` — the book's titles are two-part couplets (回目) and the line has one run of spaces before its
   first prose mark, the very separator the book's titles use: the second half is as long as the first. Taken
   only when every heading line of the book is such an equal-halved couplet, or when the text after it starts
   like a chapter (话说, 却说, 且说 …).

Otherwise the line is *ambiguous* (`SplitText.ambiguous`): the import stops and names every such line. A line
whose unit is followed directly by a prose mark (``第二回，``) or whose number a heading line already has
(``第二回合`` in a book with a 第二回 heading line) is prose and stays in the body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from ..limits import MAX_CHAPTER_NUMBER
from ._headings import _NUM, Heading, HeadingLine, HeadingUnit, InlineRule, _title_ok, find_headings
from ._numerals import parse_number


@dataclass(frozen=True, slots=True)
class ChapterPart:
    """One chapter of a split text: its heading line and the body that follows it, verbatim."""

    heading_line: HeadingLine
    body: str

    @property
    def number(self) -> int:
        return self.heading_line.heading.number


@dataclass(frozen=True, slots=True)
class AmbiguousHeading:
    """A line that starts with the next expected chapter heading and goes on with text, where the end of the
    title cannot be told (or, in a text without heading lines, any line that starts like a heading)."""

    line_no: int
    number: int
    text: str  # the line, stripped
    why: str = ""  # why the end of its title cannot be told from the book's own headings


@dataclass(frozen=True)
class SplitText:
    """A novel split by heading lines: prologue (text before the first heading) + chapters.

    ``prologue + "".join(raw heading line + body)`` is the input exactly (see `rejoin`).
    """

    prologue: str
    chapters: list[ChapterPart]
    unit: HeadingUnit | None
    volumes: list[HeadingLine] = field(default_factory=list)  # 第N卷 lines (kept in bodies)
    other_headings: list[HeadingLine] = field(default_factory=list)  # other units (kept in bodies)
    ambiguous: list[AmbiguousHeading] = field(default_factory=list)  # inline headings that could not be split


#: Heading lines that must show a title pattern before it is used to split an inline heading.
MIN_EVIDENCE: Final = 3
_BLANKS: Final = " \t\u3000\ufeff"
_RUN = re.compile(r"[ \t\u3000]+")
_LEAD = re.compile(r"[ \t\u3000:：.．、\-—–]*")
#: A chapter heading at the start of a line (after an optional volume: 第二卷 飞龙 第三章); the English form has
#: empty `vnum` and `unit` groups (unit "" = Chapter) so both are read alike.
_PREFIXES: Final = (
    re.compile(
        rf"(?:第[ \t\u3000]*(?P<vnum>{_NUM})[ \t\u3000]*卷.*?[ \t\u3000]+)?"
        rf"第[ \t\u3000]*(?P<num>{_NUM})[ \t\u3000]*(?P<unit>[章回节])"
    ),
    re.compile(r"(?P<vnum>)(?i:chapter)[ \t\u3000]*(?P<num>[0-9０-９]+)(?P<unit>)"),
)
#: Marks of running prose: a title has none of them, so the text has begun at the first one.
_PROSE_MARKS: Final = frozenset('，。、；：…“”‘’「」『』,;"')
#: Right after the unit, these make the line prose (第二回，他又输了), never a heading.
_PROSE_AFTER_UNIT: Final = frozenset("，。、；！？…,;!?")
#: How a chapter of a classic novel begins: evidence that the text, not the title, starts here.
_OPENERS: Final = (
    "话说",
    "却说",
    "且说",
    "再说",
    "单说",
    "却表",
    "话表",
    "且表",
    "上回说到",
    "书接上回",
    "诗曰",
    "词曰",
)


@dataclass(frozen=True)
class _TitleShape:
    """What the book's heading lines say about its titles."""

    parts: int | None  # every title has this many space-separated parts (0: no titles); None if they differ
    couplets: bool  # every title is two parts of equal length
    wide_runs: bool  # some title holds a run of two or more spaces
    separators: frozenset[str]  # the runs of spaces inside the titles (between a couplet's halves: "　")

    @classmethod
    def of(cls, lines: list[HeadingLine]) -> _TitleShape:
        """The shape; a pattern (part count, couplets) counts only when MIN_EVIDENCE heading lines show it."""
        split = [_RUN.split(hl.heading.title) if hl.heading.title else [] for hl in lines]
        counts = {len(parts) for parts in split}
        enough = len(lines) >= MIN_EVIDENCE
        return cls(
            parts=counts.pop() if enough and len(counts) == 1 else None,
            couplets=enough and all(len(p) == 2 and len(p[0]) == len(p[1]) for p in split),
            wide_runs=any(len(m.group()) > 1 for hl in lines for m in _RUN.finditer(hl.heading.title)),
            separators=frozenset(m.group() for hl in lines for m in _RUN.finditer(hl.heading.title)),
        )


def _title_end(rest: str, shape: _TitleShape) -> tuple[InlineRule, int, int] | None:
    """Where the title ends and the text begins in `rest` (the line after the number, unit and separator,
    trailing whitespace removed): (rule, end of title, start of text), or None when that is not certain."""
    if shape.parts == 0:
        return "untitled", 0, 0
    runs = [(m.start(), m.end()) for m in _RUN.finditer(rest)]
    prose = next((i for i, ch in enumerate(rest) if ch in _PROSE_MARKS), len(rest))
    if not shape.wide_runs:
        wide = next(((a, b) for a, b in runs if b - a > 1), None)
        title = rest[: wide[0]] if wide is not None else ""
        parts_ok = shape.parts is None or len(_RUN.split(title)) == shape.parts
        if wide is not None and 0 < wide[0] < prose and _title_ok(title) and parts_ok:
            return "indent", wide[0], wide[1]
    before = [(a, b) for a, b in runs if a < prose]
    if shape.parts is not None and len(before) == shape.parts:
        a, b = before[-1]
        if _title_ok(rest[:a]):
            return "separator", a, b
    if shape.parts == 2 and len(before) == 1:
        a, b = before[0]
        end = b + a  # the second half of a couplet is as long as the first
        second = rest[b:end]
        if (
            end < len(rest)
            and end <= prose
            and rest[a:b] in shape.separators  # a stray space (a character lost in extraction) is no separator
            and not any(ch in _BLANKS for ch in second)
            and _title_ok(rest[:end])
            and (shape.couplets or rest.startswith(_OPENERS, end))
        ):
            return "couplet", end, end
    return None


def _why_not(rest: str, shape: _TitleShape) -> str:
    """Why `_title_end` could not cut `rest` (the line after its heading prefix), in a reader's words."""
    prose = next((i for i, ch in enumerate(rest) if ch in _PROSE_MARKS), len(rest))
    before = [m for m in _RUN.finditer(rest) if m.start() < prose]
    if shape.parts is None:
        return "the book's titles have no one shape (the same number of parts) to cut this one by"
    if shape.parts == 2 and len(before) == 1:
        a, b = before[0].start(), before[0].end()
        if rest[a:b] not in shape.separators:
            return f"the space between its halves ({rest[a:b]!r}) is not the one the book's titles use"
        if not shape.couplets and not rest.startswith(_OPENERS, b + a):
            return (
                f"its halves would be {a} and {a} characters, but not every title of the book is an equal-halved "
                "couplet and the text after it does not start like a chapter (话说, 却说 …)"
            )
    return (
        f"the book's titles have {shape.parts} part(s); this line has {len(before)} run(s) of spaces before its "
        "first punctuation"
    )


def _lines(text: str) -> list[tuple[int, int, int]]:
    """(line number, start, end) of every line; `end` includes the line's ``\\n``."""
    out = []
    pos, n, line_no = 0, len(text), 0
    while pos < n:
        line_no += 1
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl + 1
        out.append((line_no, pos, end))
        pos = end
    return out


def _prefix(text: str, pos: int, end: int, unit: HeadingUnit | None) -> tuple[int, re.Match[str]] | None:
    """The heading prefix that starts the line [pos, end) (after blanks), in `unit` (any chapter unit if None)."""
    first = pos
    while first < end and text[first] in _BLANKS:
        first += 1
    if first >= end or text[first] not in "第Cc":
        return None
    for pattern in _PREFIXES:
        m = pattern.match(text, first, end)
        if m is None:
            continue
        if unit is None or (m.group("unit") or "Chapter") == unit:
            return first, m
    return None


def _inline_headings(
    text: str, found: list[HeadingLine], unit: HeadingUnit, splits: dict[int, int]
) -> tuple[list[HeadingLine], list[AmbiguousHeading]]:
    """Inline headings of `unit` (see the module docstring): those split, and those that could not be. `splits`
    (line number → column where the chapter's text begins, 1-based) cuts a line the author decided."""
    chapter_lines = [hl for hl in found if hl.heading.unit == unit]
    numbers = {hl.heading.number for hl in chapter_lines}
    at_line = {hl.start: hl for hl in found}
    shape = _TitleShape.of(chapter_lines)
    previous: int | None = None  # the chapter the current line is in (None: before any heading)
    following = iter([hl.heading.number for hl in chapter_lines])  # in line order
    upcoming = next(following, None)  # the number of the next heading line
    accepted: list[HeadingLine] = []
    ambiguous: list[AmbiguousHeading] = []
    for line_no, pos, end in _lines(text):
        hl = at_line.get(pos)
        if hl is not None:
            if hl.heading.unit == unit:
                previous, upcoming = hl.heading.number, next(following, None)
            continue
        hit = _prefix(text, pos, end, unit)
        if hit is None:
            continue
        first, m = hit
        number = parse_number(m.group("num"))
        if number is None or number > MAX_CHAPTER_NUMBER or number in numbers:
            continue
        if (previous is not None and number != previous + 1) or (upcoming is not None and number >= upcoming):
            continue  # not the next chapter (before the first heading line: any number below it)
        content_end = end
        while content_end > m.end() and text[content_end - 1] in "\r\n":
            content_end -= 1
        if m.end() < content_end and text[m.end()] in _PROSE_AFTER_UNIT:
            continue  # 第二回，他又输了: prose
        lead = _LEAD.match(text, m.end(), content_end)
        start = lead.end() if lead is not None else m.end()
        rest = text[start:content_end].rstrip()
        decided = _title_end(rest, shape) if rest else None
        if line_no in splits:  # the author said where the text begins (`muse import --split LINE:COLUMN`)
            cut = pos + splits[line_no] - 1 - start
            decided = ("author", cut, cut) if 0 < cut <= len(rest) else None
        previous = number
        if decided is None:
            why = (
                f"--split {line_no}:{splits[line_no]} is not inside its title's line"
                if line_no in splits
                else _why_not(rest, shape)
            )
            ambiguous.append(AmbiguousHeading(line_no, number, text[first:content_end].strip(), why))
            continue
        rule, title_end, body_start = decided
        vnum = m.group("vnum")
        heading = Heading(
            unit,
            number,
            m.group("num"),
            rest[:title_end].strip(),
            text[first : start + title_end].strip(),
            parse_number(vnum) if vnum else None,
        )
        accepted.append(HeadingLine(line_no, pos, start + body_start, heading, inline=rule))
    return accepted, ambiguous


def _loose_headings(text: str) -> list[AmbiguousHeading]:
    """In a text without any heading line: every line that starts like a chapter heading and goes on with text."""
    out = []
    for line_no, pos, end in _lines(text):
        hit = _prefix(text, pos, end, None)
        if hit is not None and (number := parse_number(hit[1].group("num"))) is not None:
            out.append(AmbiguousHeading(line_no, number, text[hit[0] : end].strip()))
    return out


def _choose_unit(found: list[HeadingLine]) -> HeadingUnit | None:
    for hl in found:
        if hl.heading.unit in ("章", "回", "Chapter"):
            return hl.heading.unit
    return "节" if any(hl.heading.unit == "节" for hl in found) else None


def split_chapters(text: str, splits: dict[int, int] | None = None) -> SplitText:
    """Split a novel into prologue + chapters at its heading lines (and its inline headings, see the module
    docstring); bodies are kept verbatim. `splits` says, for inline headings the book's own headings cannot cut,
    where their text begins (line → 1-based column)."""
    found = find_headings(text)
    unit = _choose_unit(found)
    volumes = [hl for hl in found if hl.heading.is_volume]
    others = [hl for hl in found if not hl.heading.is_volume and hl.heading.unit != unit]
    if unit is None:
        return SplitText(text, [], None, volumes, others, _loose_headings(text))
    inline, ambiguous = _inline_headings(text, found, unit, splits or {})
    chapter_lines = sorted([hl for hl in found if hl.heading.unit == unit] + inline, key=lambda hl: hl.start)
    parts: list[ChapterPart] = []
    for i, hl in enumerate(chapter_lines):
        body_end = chapter_lines[i + 1].start if i + 1 < len(chapter_lines) else len(text)
        parts.append(ChapterPart(hl, text[hl.end : body_end]))
    return SplitText(text[: chapter_lines[0].start], parts, unit, volumes, others, ambiguous)


def rejoin(split: SplitText, source: str | None = None) -> str:
    """Put a split text back together: prologue + each chapter's heading line + body.

    With `source` (the text that was split) the raw heading lines are used and the result is `source`
    exactly. Without it, each heading line is its normalised form (`Heading.text` + ``\\n``), which is
    what the chapter files hold.
    """
    pieces = [split.prologue]
    for part in split.chapters:
        if source is not None:
            pieces.append(part.heading_line.raw(source))
        else:
            pieces.append(part.heading_line.heading.text + "\n")
        pieces.append(part.body)
    return "".join(pieces)
