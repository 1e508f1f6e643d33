"""Normalisation for matching quotes: NFC, full/half-width folding, whitespace removed — with offsets kept."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


def _fold_char(ch: str) -> str:
    code = ord(ch)
    if 0xFF01 <= code <= 0xFF5E:  # full-width ASCII variants → ASCII
        return chr(code - 0xFEE0)
    return ch


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """A normalised string and, for each of its characters, the [start, end) span it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a [start, end) span of the normalised text back to the original text."""
        return self.starts[start], self.ends[end - 1]


def normalize_for_match(text: str) -> NormalizedText:
    """Normalise `text` for quote matching and keep a map back to the original offsets.

    Steps: Unicode NFC, full-width ASCII (！ to ～) folded to half-width, all whitespace removed
    (including U+3000). A model that re-spaces or re-widths a quote still matches; a different
    character never does.
    """
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    # NFC per grapheme-ish run: normalise each base character with its combining marks together.
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        chunk = text[i:j]
        if not chunk.isascii():
            chunk = unicodedata.normalize("NFC", chunk)
        for ch in chunk:
            if ch.isspace():
                continue
            out.append(_fold_char(ch))
            starts.append(i)
            ends.append(j)
        i = j
    return NormalizedText("".join(out), tuple(starts), tuple(ends))


def normalize_quote(quote: str) -> str:
    """The normalised form of a quote alone (same steps as `normalize_for_match`)."""
    return normalize_for_match(quote).text
