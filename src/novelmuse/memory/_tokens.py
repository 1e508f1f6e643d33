"""Word segmentation for BM25: card names are whole tokens, the text between them is cut by jieba-rs.

Rule: the text is first split at every card name and alias, found leftmost-longest like the mention index
(`MentionMatcher`), so each name is one token (曹操引兵追赶 → 曹操/引兵/追赶) whatever the dictionary says; the
pieces between names are segmented by rjieba (jieba-rs, the Rust port of jieba: the same dictionary and the same
tokens as jieba — checked on both vendored novels — ~20× faster, and its dictionary loads in ~0.1 s instead of
jieba's ~0.8 s per process). Tokens that are only whitespace or punctuation are dropped. A query (up to 200
characters) is cut by a segmenter holding only the dictionary words inside it (`_querycut`: the same tokens,
without building the 349k-word dictionary per process); indexing uses the default segmenter.

Because names never enter the segmenter's dictionary, a new card changes the tokens of exactly the chunks that
contain one of its names (`update_index` re-tokenises only those), and a name of any length costs time linear in
its length (jieba's `add_word` stored every prefix of a word: a 20,000-character name took 65 s and 547 MB).
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import version
from typing import TYPE_CHECKING

from ._mentions import MentionMatcher
from ._querycut import fast_segmenter

if TYPE_CHECKING:  # rjieba loads lazily (~0.1 s for its dictionary): only indexing (and long queries) need it
    import rjieba

FAST_QUERIES = 50  # per Tokenizer: 50 fast segmenters cost about a tenth of building the default one


def tokenizer_version() -> str:
    """What the stored tokens depend on besides the text and the names: a change re-indexes every chapter."""
    return f"rjieba-{version('rjieba')}-names-split-v2"


_WORDY_SEEN: set[str] = set()  # tokens known to be words: a book has ~50k distinct tokens and millions of uses
_OTHER_SEEN: set[str] = set()  # tokens known to be punctuation or space


def _is_word_char(ch: str) -> bool:
    r"""What ``re`` matches with ``[\w\u3400-\u9fff]`` (``\w``: alphanumeric or ``_``) without compiling that class
    (~2 ms per process)."""
    return ch.isalnum() or ch == "_" or "\u3400" <= ch <= "\u9fff"


def _is_wordy(tok: str) -> bool:
    return any(map(_is_word_char, tok)) and not all(unicodedata.category(ch).startswith("P") for ch in tok)


def _words(tokens: list[str]) -> list[str]:
    """`tokens` without punctuation and whitespace: each distinct token is classified once, then a C-level
    filter keeps the words (the indexing hot path: a million characters are ~700,000 tokens)."""
    new = set(tokens).difference(_WORDY_SEEN, _OTHER_SEEN)
    if len(_WORDY_SEEN) + len(new) > 2_000_000:  # bounded memory: forget and classify again
        _WORDY_SEEN.clear()
        _OTHER_SEEN.clear()
        new = set(tokens)
    for t in new:
        (_WORDY_SEEN if _is_wordy(t) else _OTHER_SEEN).add(t)
    return list(filter(_WORDY_SEEN.__contains__, tokens))


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
        self._fast_left = FAST_QUERIES

    def _cut(self, text: str, *, search: bool = False, jieba: rjieba.Jieba | None = None) -> list[str]:
        if jieba is None:
            if self._jieba is None:
                self._jieba = _segmenter()
            jieba = self._jieba
        return jieba.cut_for_search(text) if search else jieba.cut(text)

    def _split(self, text: str, jieba: rjieba.Jieba | None = None) -> tuple[list[str], set[int]]:
        """Every token of `text` in order, punctuation included, and the positions of the card names in it."""
        out: list[str] = []
        names: set[int] = set()
        pos = 0
        for _, start, end in self._names.spans(text):
            if start > pos:
                out.extend(self._cut(text[pos:start], jieba=jieba))
            names.add(len(out))
            out.append(text[start:end])
            pos = end
        if pos < len(text):
            out.extend(self._cut(text[pos:], jieba=jieba))
        return out, names

    def _query_segmenter(self, text: str) -> rjieba.Jieba | None:
        """A segmenter for the query `text` and its substrings (None: the default one). The fast one costs
        ~0.1–0.3 ms per query, the default one ~0.1 s once per process: the fast one serves a process's first
        `FAST_QUERIES` queries (a command runs one) unless the default one is built already; a long series
        (context assembly queries every chapter) then builds the default one."""
        if self._fast_left <= 0 or "rjieba" in sys.modules:  # the package's import builds the default one
            return None
        self._fast_left -= 1
        return fast_segmenter(text)

    def tokens(self, text: str) -> list[str]:
        """The tokens of `text` (punctuation and whitespace dropped)."""
        return _words(self._split(text)[0])

    def query_words(self, text: str) -> list[str]:
        """The words the query is made of, as the query tokenizer cuts it (no sub-words): what the author asked."""
        out, _names = self._split(text, self._query_segmenter(text))
        return list(dict.fromkeys(t for t in out if _is_wordy(t)))

    def query_tokens(self, text: str, known: Callable[[set[str]], set[str]]) -> list[str]:
        """The query's tokens that occur in the index (`known` returns the subset of a set of words it holds).

        A compound query is also matched by its parts: each query word contributes itself (when the index
        has it) and the sub-words of two or more characters that jieba's search mode finds in it and the
        index has (三顾茅庐 → 三顾, 茅庐 when the text writes 三顾草庐; a card name is never cut). Single
        characters are used only when nothing longer of the query is known (they match too much: 结义 →
        结/义 would rank every 麴义 first), so a query is never silently empty.
        """
        jieba = self._query_segmenter(text)
        out, names = self._split(text, jieba)
        pieces = [(t, i in names) for i, t in enumerate(out) if _is_wordy(t)]  # a card name is never cut further
        words: list[str] = []
        chars: list[str] = []
        for t, is_name in pieces:
            words.append(t)
            if not is_name and len(t) > 2:
                subs = self._cut(t, search=True, jieba=jieba)
                words.extend(s for s in subs if s != t and len(s) > 1 and _is_wordy(s))
            chars.extend(ch for ch in t if _is_wordy(ch))
        have = known(set(words) | set(chars))
        found = [w for w in dict.fromkeys(words) if w in have]
        return found or [c for c in dict.fromkeys(chars) if c in have]
