"""Paragraphs of a chapter with their character offsets."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One paragraph: its 0-based index in the chapter and its [start, end) character span."""

    index: int
    start: int
    end: int
    text: str


def split_paragraphs(text: str) -> list[Paragraph]:
    """Split chapter text into paragraphs: every line that is not blank is one paragraph.

    Chinese web novels put one paragraph per line; printed editions separate them with blank lines.
    Both give the same paragraphs here. Offsets index into `text` itself, so a paragraph is
    ``text[p.start:p.end]`` exactly (without its line break; leading indentation is kept).
    """
    out: list[Paragraph] = []
    pos = 0
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        line_end = end - 1 if end > pos and text[end - 1] == "\r" else end
        if text[pos:line_end].strip():
            out.append(Paragraph(len(out), pos, line_end, text[pos:line_end]))
        pos = end + 1
    return out


def count_paragraphs(text: str) -> int:
    """``len(split_paragraphs(text))`` without building the paragraphs (a check counts them in every chapter)."""
    lines = text.split("\n")
    return len(lines) - list(map(str.strip, lines)).count("")


def paragraph_at(paragraphs: list[Paragraph], offset: int) -> int:
    """Index of the paragraph containing character `offset` (binary search), or -1 if none does."""
    lo, hi = 0, len(paragraphs)
    while lo < hi:
        mid = (lo + hi) // 2
        if paragraphs[mid].end <= offset:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(paragraphs) and paragraphs[lo].start <= offset < paragraphs[lo].end:
        return lo
    return -1
