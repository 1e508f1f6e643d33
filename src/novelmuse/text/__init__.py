"""Chinese text utilities: counting, paragraphs, normalisation, quote location, hashing.

The lowest layer: pure functions on strings, no I/O except what `decode`/`split` modules document.
"""

from ._count import count_chars
from ._hash import canonical_json, sha256_hex, sha256_json
from ._normalize import NormalizedText, normalize_for_match, normalize_quote
from ._paragraphs import Paragraph, paragraph_at, split_paragraphs
from ._quote import QUOTE_ERROR_CODES, QuoteMatch, locate_quote

__all__ = [
    "QUOTE_ERROR_CODES",
    "NormalizedText",
    "Paragraph",
    "QuoteMatch",
    "canonical_json",
    "count_chars",
    "locate_quote",
    "normalize_for_match",
    "normalize_quote",
    "paragraph_at",
    "sha256_hex",
    "sha256_json",
    "split_paragraphs",
]
