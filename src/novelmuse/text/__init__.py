"""Chinese text utilities: counting, paragraphs, normalisation, quote location, hashing.

The lowest layer: pure functions on strings, no I/O except what `decode`/`split` modules document.
"""

from ..limits import MAX_CHAPTER_NUMBER  # re-exported: the cap lives in novelmuse.limits
from ._count import count_chars
from ._decode import DecodedText, decode_text
from ._distance import edit_distance
from ._hash import canonical_json, sha256_hex, sha256_json
from ._headings import Heading, HeadingLine, HeadingUnit, chapter_label, find_headings, heading_unit, parse_heading
from ._lines import LineIndex
from ._normalize import NormalizedText, normalize_for_match, normalize_quote
from ._numerals import CHINESE_NUMERAL_CHARS, parse_chinese_numeral, parse_number
from ._paragraphs import Paragraph, count_paragraphs, paragraph_at, split_paragraphs
from ._quote import QUOTE_ERROR_CODES, QuoteMatch, locate_quote
from ._split import AmbiguousHeading, ChapterPart, SplitText, rejoin, split_chapters

__all__ = [
    "CHINESE_NUMERAL_CHARS",
    "MAX_CHAPTER_NUMBER",
    "QUOTE_ERROR_CODES",
    "AmbiguousHeading",
    "ChapterPart",
    "DecodedText",
    "Heading",
    "HeadingLine",
    "HeadingUnit",
    "LineIndex",
    "NormalizedText",
    "Paragraph",
    "QuoteMatch",
    "SplitText",
    "canonical_json",
    "chapter_label",
    "count_chars",
    "count_paragraphs",
    "decode_text",
    "edit_distance",
    "find_headings",
    "heading_unit",
    "locate_quote",
    "normalize_for_match",
    "normalize_quote",
    "paragraph_at",
    "parse_chinese_numeral",
    "parse_heading",
    "parse_number",
    "rejoin",
    "sha256_hex",
    "sha256_json",
    "split_chapters",
    "split_paragraphs",
]
