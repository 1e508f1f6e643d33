"""jieba word segmentation for BM25, with every card name and alias in the dictionary.

A private `jieba.Tokenizer` (never the global one, so other users of jieba are unaffected), quiet on
initialisation, with `add_word` for each name so 曹操引兵追赶 segments as 曹操/引兵/追赶. Tokens that are
only whitespace or punctuation are dropped.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # jieba loads lazily: every `muse` command would pay its import otherwise
    import jieba

TOKENIZER_VERSION = "jieba-0.42-hmm-names100k-v1"  # bump when tokenisation changes: every chapter is then re-indexed

#: The dictionary frequency given to card names and aliases: high enough that a name is always one token.
NAME_FREQ = 100_000

_WORDY = re.compile(r"[\w\u3400-\u9fff]")


def _is_wordy(tok: str) -> bool:
    return bool(_WORDY.search(tok)) and not all(unicodedata.category(ch).startswith("P") for ch in tok)


@lru_cache(maxsize=4)
def _jieba_with(words: tuple[str, ...]) -> jieba.Tokenizer:
    """A private, initialised jieba tokenizer with `words` added (loading the dictionary takes ~0.5 s,
    so one per lexicon is kept for the process)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)  # jieba logs "Building prefix dict…" to stderr otherwise
    tk = jieba.Tokenizer()
    tk.initialize()
    for w in words:  # names win over the dictionary's own splits (曹/操引兵 without this)
        if len(w) > 1:
            tk.add_word(w, freq=NAME_FREQ)
    return tk


class Tokenizer:
    """Segment Chinese text into BM25 tokens."""

    def __init__(self, words: list[str]):
        self._tk = _jieba_with(tuple(sorted(set(words))))

    def tokens(self, text: str) -> list[str]:
        """The tokens of `text` (punctuation and whitespace dropped)."""
        return [t for t in self._tk.lcut(text) if _is_wordy(t)]

    def query_tokens(self, text: str, vocab: dict[str, int] | set[str]) -> list[str]:
        """Query tokens that occur in the index's `vocab`.

        A query word the index never saw (an idiom like 三顾茅庐 that jieba keeps whole, while the text
        writes 三顾草庐) is replaced by its known sub-words (jieba's search mode: 三顾, 茅庐). Single
        characters are used only when nothing longer of the query is known (they match too much: 结义 →
        结/义 would rank every 麴义 first), so a query is never silently empty.
        """
        words: list[str] = []
        chars: list[str] = []
        for t in self.tokens(text):
            if t in vocab:
                words.append(t)
                continue
            subs = [s for s in self._tk.lcut_for_search(t) if s != t and len(s) > 1 and s in vocab and _is_wordy(s)]
            words.extend(subs)
            chars.extend(ch for ch in t if ch in vocab and _is_wordy(ch))
        return words or chars
