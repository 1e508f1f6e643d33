"""The one character-counting function used everywhere (chapter length, budgets, reports)."""

from __future__ import annotations


def count_chars(text: str) -> int:
    """Count the characters of `text` that are not whitespace.

    Whitespace is what `str.isspace` says it is: ASCII blanks, newlines, the full-width space U+3000
    and the other Unicode spaces. Punctuation counts. This is the length an author sees as 字数
    (characters without spaces), and it is the only length novelmuse uses.
    """
    return len("".join(text.split()))
