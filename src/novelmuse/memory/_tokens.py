"""Word segmentation for BM25: card names are whole tokens, the text between them is cut by jieba-rs.

Rule: the text is first split at every card name and alias, found leftmost-longest like the mention index
(`MentionMatcher`), so each name is one token (曹操引兵追赶 → 曹操/引兵/追赶) whatever the dictionary says; the
pieces between names are segmented by rjieba (jieba-rs, the Rust port of jieba: the same dictionary and the same
tokens as jieba — checked on both vendored novels — ~20× faster, and its dictionary loads in ~0.1 s instead of
jieba's ~0.8 s per process). Tokens that are only whitespace or punctuation are dropped.

Because names never enter the segmenter's dictionary, a new card changes the tokens of exactly the chunks that
contain one of its names (`update_index` re-tokenises only those), and a name of any length costs time linear in
its length (jieba's `add_word` stored every prefix of a word: a 20,000-character name took 65 s and 547 MB).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import version
from typing import TYPE_CHECKING

from ._mentions import MentionMatcher

if TYPE_CHECKING:  # rjieba loads lazily (~0.1 s for its dictionary): only indexing and searching need it
    import rjieba

_WORDY = re.compile(r"[\w\u3400-\u9fff]")


def tokenizer_version() -> str:
    """What the stored tokens depend on besides the text and the names: a change re-indexes every chapter."""
    return f"rjieba-{version('rjieba')}-names-split-v2"


_WORDINESS: dict[str, bool] = {}  # token → wordy: a book has ~50k distinct tokens and millions of occurrences


def _is_wordy(tok: str) -> bool:
    known = _WORDINESS.get(tok)
    if known is None:
        known = bool(_WORDY.search(tok)) and not all(unicodedata.category(ch).startswith("P") for ch in tok)
        if len(_WORDINESS) < 1_000_000:  # bounded memory
            _WORDINESS[tok] = known
    return known


@lru_cache(maxsize=1)
def _segmenter() -> rjieba.Jieba:
    """rjieba's default segmenter: importing rjieba builds it (~0.1 s); a second `Jieba()` would build another."""
    import rjieba

    return rjieba._DEFAULT_JIEBA


class Tokenizer:
    """Segment Chinese text into BM25 tokens, with every name in `words` kept whole."""

    def __init__(self, words: list[str]):
        self._names = MentionMatcher({w: w for w in words})
        self._jieba: rjieba.Jieba | None = None

    def _cut(self, text: str, *, search: bool = False) -> list[str]:
        if self._jieba is None:
            self._jieba = _segmenter()
        return self._jieba.cut_for_search(text) if search else self._jieba.cut(text)

    def _pieces(self, text: str) -> list[tuple[str, bool]]:
        """Every token of `text` in order, with True for a card name (never cut further)."""
        out: list[tuple[str, bool]] = []
        pos = 0
        for m in self._names.find(text):
            if m.start > pos:
                out.extend((t, False) for t in self._cut(text[pos : m.start]))
            out.append((m.name, True))
            pos = m.end
        if pos < len(text):
            out.extend((t, False) for t in self._cut(text[pos:]))
        return [(t, is_name) for t, is_name in out if _is_wordy(t)]

    def tokens(self, text: str) -> list[str]:
        """The tokens of `text` (punctuation and whitespace dropped) — `_pieces` without the name flags, on the
        indexing hot path (a million characters are ~700,000 tokens)."""
        out: list[str] = []
        pos = 0
        for _, start, end in self._names.spans(text):
            if start > pos:
                out.extend(self._cut(text[pos:start]))
            out.append(text[start:end])
            pos = end
        if pos < len(text):
            out.extend(self._cut(text[pos:]))
        wordy = _WORDINESS  # most tokens are known and wordy: one lookup each
        return [t for t in out if wordy.get(t) or (t not in wordy and _is_wordy(t))]

    def query_tokens(self, text: str, known: Callable[[set[str]], set[str]]) -> list[str]:
        """The query's tokens that occur in the index (`known` returns the subset of a set of words it holds).

        A compound query is also matched by its parts: each query word contributes itself (when the index
        has it) and the sub-words of two or more characters that jieba's search mode finds in it and the
        index has (三顾茅庐 → 三顾, 茅庐 when the text writes 三顾草庐; a card name is never cut). Single
        characters are used only when nothing longer of the query is known (they match too much: 结义 →
        结/义 would rank every 麴义 first), so a query is never silently empty.
        """
        pieces = self._pieces(text)
        words: list[str] = []
        chars: list[str] = []
        for t, is_name in pieces:
            words.append(t)
            if not is_name and len(t) > 2:
                words.extend(s for s in self._cut(t, search=True) if s != t and len(s) > 1 and _is_wordy(s))
            chars.extend(ch for ch in t if _is_wordy(ch))
        have = known(set(words) | set(chars))
        found = [w for w in dict.fromkeys(words) if w in have]
        return found or [c for c in dict.fromkeys(chars) if c in have]
