"""Paragraph-based chunks of a chapter body, bounded in length, with offsets into the body.

Consecutive paragraphs are merged while the chunk's span stays within `max_chars` characters (web
novels write one short paragraph per line; a lone line is too little context to retrieve); a paragraph
longer than `max_chars` is split after sentence ends (。！？… plus any closing quotes), and a single
sentence longer than that is cut at `max_chars`. Every chunk is ``body[start:end]`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text import split_paragraphs

_SENTENCE_END = frozenset("。！？!?…；;")
_CLOSERS = frozenset("”’」』）)\"'")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk: its index in the chapter and its [start, end) span of the body."""

    idx: int
    start: int
    end: int
    text: str


def _sentence_cuts(text: str, base: int, max_chars: int) -> list[tuple[int, int]]:
    """Split one long paragraph [base, base+len) into pieces of ≤ max_chars, preferring sentence ends."""
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in _SENTENCE_END:
            j = i + 1
            while j < n and (text[j] in _SENTENCE_END or text[j] in _CLOSERS):
                j += 1
            ends.append(j)
            i = j
        else:
            i += 1
    if not ends or ends[-1] != n:
        ends.append(n)
    pieces: list[tuple[int, int]] = []
    start = 0
    last_ok = 0
    for e in ends:
        if e - start <= max_chars:
            last_ok = e
            continue
        if last_ok > start:
            pieces.append((start, last_ok))
            start = last_ok
        while e - start > max_chars:  # one sentence longer than the bound: hard cut
            pieces.append((start, start + max_chars))
            start += max_chars
        last_ok = e
    if start < n:
        pieces.append((start, n))
    return [(base + a, base + b) for a, b in pieces if b > a]


def chunk_body(body: str, max_chars: int) -> list[Chunk]:
    """The chunks of a chapter body (see the module doc); each span is at most `max_chars` long."""
    spans: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for p in split_paragraphs(body):
        if p.end - p.start > max_chars:
            if cur is not None:
                spans.append(cur)
                cur = None
            spans.extend(_sentence_cuts(p.text, p.start, max_chars))
        elif cur is not None and p.end - cur[0] <= max_chars:
            cur = (cur[0], p.end)
        else:
            if cur is not None:
                spans.append(cur)
            cur = (p.start, p.end)
    if cur is not None:
        spans.append(cur)
    return [Chunk(i, a, b, body[a:b]) for i, (a, b) in enumerate(spans)]
