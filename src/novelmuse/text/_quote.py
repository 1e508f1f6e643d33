"""Locate an evidence quote: verbatim, found exactly once after normalisation, with offsets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._normalize import NormalizedText, normalize_for_match, normalize_quote

QuoteStatus = Literal["ok", "empty", "too_short", "not_found", "not_unique"]

#: Stable error codes for each failed status, used by every contract that checks quotes.
QUOTE_ERROR_CODES: dict[str, str] = {
    "empty": "CONTRACT_QUOTE_EMPTY",
    "too_short": "CONTRACT_QUOTE_TOO_SHORT",
    "not_found": "CONTRACT_QUOTE_NOT_FOUND",
    "not_unique": "CONTRACT_QUOTE_NOT_UNIQUE",
}


@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """Where a quote was found: status, number of (possibly overlapping) occurrences, and the span."""

    status: QuoteStatus
    occurrences: int
    start: int = -1
    end: int = -1

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def error_code(self) -> str | None:
        """The stable contract error code, or None when the quote is fine."""
        return QUOTE_ERROR_CODES.get(self.status)


def _count_overlapping(haystack: str, needle: str, limit: int = 2) -> tuple[int, int]:
    """Occurrences (stopping at `limit`) and the first position."""
    first = haystack.find(needle)
    if first < 0:
        return 0, -1
    count, pos = 1, first
    while count < limit:
        pos = haystack.find(needle, pos + 1)
        if pos < 0:
            break
        count += 1
    return count, first


def locate_quote(text: str | NormalizedText, quote: str, *, min_chars: int = 1) -> QuoteMatch:
    """Find `quote` in `text` after normalising both; ok only if it occurs exactly once.

    Overlapping occurrences count (a quote that can be placed at two positions does not locate one
    place). `min_chars` is the least number of normalised characters a quote must have so that its
    uniqueness means something. The returned span indexes the original `text`. Pass a
    `NormalizedText` when checking many quotes against one text.
    """
    norm = text if isinstance(text, NormalizedText) else normalize_for_match(text)
    needle = normalize_quote(quote)
    if not needle:
        return QuoteMatch("empty", 0)
    if len(needle) < min_chars:
        return QuoteMatch("too_short", 0)
    count, first = _count_overlapping(norm.text, needle)
    if count == 0:
        return QuoteMatch("not_found", 0)
    if count > 1:
        return QuoteMatch("not_unique", count)
    start, end = norm.span(first, first + len(needle))
    return QuoteMatch("ok", 1, start, end)
