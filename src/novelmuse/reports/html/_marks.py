"""Highlights at exact offsets: split a text into lines and segments so every mark covers whole segments.

Marks may overlap (a fatigue word inside an editor's evidence quote) and may cross line breaks, so one
element per mark cannot represent them. Instead the text is cut at every line start and at every mark's
start and end; each segment lists the marks covering it. A mark's text on the page is then exactly the
concatenation of its segments, which is ``text[start:end]`` — the property the browser test checks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

#: Which mark colours a segment covered by several (the others stay listed on it and in its tooltip).
KIND_PRIORITY = {"rule": 0, "consistency": 1, "editor": 2, "judge": 3, "fact": 4}


@dataclass(frozen=True)
class Mark:
    """One highlighted span: a rule hit, a review quote, an evidence quote, a judge quote or a fact quote."""

    id: str  # unique in the page; the DOM anchor is ``m-<id>``
    kind: str  # rule / consistency / editor / judge / fact
    severity: str  # error / warning / critical / major / minor / evidence / quote / fact
    start: int  # [start, end) character offsets into the text
    end: int
    label: str  # what the tooltip says


@dataclass
class Segment:
    """A run of text covered by the same marks (none for plain text)."""

    text: str
    marks: list[Mark] = field(default_factory=list)
    starts: list[str] = field(default_factory=list)  # ids of the marks that begin here (anchors go before it)

    @property
    def mark_ids(self) -> str:
        return " ".join(m.id for m in self.marks)

    @property
    def css(self) -> str:
        """Classes of the segment: the top mark's kind and severity, plus ``multi`` when several overlap."""
        if not self.marks:
            return ""
        top = min(self.marks, key=lambda m: (KIND_PRIORITY.get(m.kind, 9), m.start))
        return f"hl k-{top.kind} s-{top.severity}" + (" multi" if len(self.marks) > 1 else "")

    @property
    def title(self) -> str:
        return "\n".join(m.label for m in self.marks)


@dataclass
class Line:
    """One line of the text: its 1-based number in the file and its segments, the line break included as the
    last segment (so a mark that crosses lines keeps its break, and the page's text is the text exactly)."""

    number: int
    segments: list[Segment]


def valid_marks(text: str, marks: list[Mark]) -> tuple[list[Mark], list[Mark]]:
    """Marks whose span lies inside `text` and is not empty, and the rest (listed as not placeable)."""
    ok = [m for m in marks if 0 <= m.start < m.end <= len(text)]
    bad = [m for m in marks if not (0 <= m.start < m.end <= len(text))]
    return ok, bad


def segment_lines(text: str, marks: list[Mark], *, first_line: int = 1) -> list[Line]:
    """Cut `text` into lines (numbered from `first_line`) and segments at every mark boundary.

    Every mark must lie inside the text (see `valid_marks`). Joining every line's segments gives back
    `text` exactly; a mark's segments joined are exactly ``text[mark.start:mark.end]``.
    """
    bounds: set[int] = {0, len(text)}
    opening: dict[int, list[Mark]] = {}
    closing: dict[int, list[Mark]] = {}
    for m in marks:
        bounds.update((m.start, m.end))
        opening.setdefault(m.start, []).append(m)
        closing.setdefault(m.end, []).append(m)
    line_ends: set[int] = set()
    pos = text.find("\n")
    while pos >= 0:
        bounds.add(pos + 1)
        line_ends.add(pos + 1)
        pos = text.find("\n", pos + 1)
    cuts = sorted(bounds)
    active: dict[str, Mark] = {}
    lines: list[Line] = []
    current: list[Segment] = []
    seen: set[str] = set()
    for a, b in itertools.pairwise(cuts):
        for m in closing.get(a, []):
            active.pop(m.id, None)
        for m in opening.get(a, []):
            active[m.id] = m
        covering = sorted(active.values(), key=lambda m: (m.start, m.id))
        starts = [m.id for m in covering if m.id not in seen]
        seen.update(starts)
        current.append(Segment(text[a:b], covering, starts))
        if b in line_ends:
            lines.append(Line(first_line + len(lines), current))
            current = []
    if current or not lines:
        lines.append(Line(first_line + len(lines), current))
    return lines
