"""Verbatim quotes in a reviewer's or editor's answer: found exactly once in the chapter (after normalisation).

The contracts check them inside the call (a bad quote is corrected within the call's bound), and the editorial
loop locates the accepted quotes with the same function, so the stored offsets come from the same rule.
"""

from __future__ import annotations

from functools import lru_cache

from ..llm import Violation
from ..text import NormalizedText, QuoteMatch, locate_quote, normalize_for_match

QUOTE_MIN_CHARS = 4


@lru_cache(maxsize=8)
def normalized(text: str) -> NormalizedText:
    """`normalize_for_match`, memoised: a chapter's text is located against by contracts and steps alike."""
    return normalize_for_match(text)


@lru_cache(maxsize=1024)
def chapter_quote(chapter_text: str, quote: str) -> QuoteMatch:
    """Where `quote` is in the chapter (≥ QUOTE_MIN_CHARS characters, exactly once, after normalisation).

    Memoised: a call's contract locates a model's quotes and the step that stores them locates them again."""
    return locate_quote(normalized(chapter_text), quote, min_chars=QUOTE_MIN_CHARS)


def quote_violation(chapter_text: str, quote: str, field: str) -> Violation | None:
    """The contract violation of one model-given quote (None when it is found exactly once in the chapter); the
    detail, for the correction message only, names the field and says what a valid quote is."""
    m = chapter_quote(chapter_text, quote)
    if not m.error_code:
        return None
    return Violation(
        code=m.error_code,
        detail=f"{field} 「{quote[:60]}」: {m.status} — copy one sentence verbatim (≥{QUOTE_MIN_CHARS} characters) "
        "that occurs exactly once in the chapter",
    )
