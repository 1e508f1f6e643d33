"""Counting many phrases in many texts at once, with `str.count` semantics for every phrase.

One Aho-Corasick automaton (ahocorasick-rs, over bytes) is built per phrase set and reused for every scan. A
scan joins the texts, encodes them once in a fixed-width encoding (UTF-16-LE when every character is in the
BMP, else UTF-32-LE) so that byte offset / width is the character offset, and asks the automaton for *all*
overlapping matches. Then, vectorised with numpy:

- matches that do not start on a character boundary, or that run past the end of their own text, are dropped;
- for each phrase, `str.count` keeps a match only if it starts at or after the end of the last kept one
  (non-overlapping, leftmost: 哈哈 occurs once in 哈哈哈). A phrase that cannot overlap itself (no proper
  prefix equal to a suffix) keeps all its matches, so the per-match Python loop runs only for the few
  self-overlapping phrases.

Why not pyahocorasick: its per-character child lookup is linear in the number of distinct next characters, so
1,000 CJK phrases scan at ~100 ns/char (measured in benchmarks/bench_rules.py's design; ~7x a naive loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import ahocorasick_rs
import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def _self_overlaps(phrase: str) -> bool:
    """True when two occurrences of `phrase` can overlap (it has a proper border, e.g. 哈哈, aba)."""
    return any(phrase[:k] == phrase[-k:] for k in range(1, len(phrase)))


def _encodable_bmp(phrase: str) -> bool:
    return all(ord(ch) < 0xD800 or 0xE000 <= ord(ch) <= 0xFFFF for ch in phrase)


@dataclass(frozen=True)
class ScanResult:
    """Per (text, phrase): the kept matches' start offsets (character offsets into that text), sorted."""

    texts: int
    phrases: int
    keys: IntArray  # sorted unique group keys: text * phrases + phrase
    group_start: IntArray  # index into `starts` of each group's first match
    group_count: IntArray  # kept matches per group (= str.count)
    starts: IntArray  # all kept match starts, grouped by key, ascending within a group
    _index: dict[int, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index.update({int(k): i for i, k in enumerate(self.keys.tolist())})

    def count(self, text: int, phrase: int) -> int:
        """How many times phrase `phrase` occurs in text `text` (exactly `texts[text].count(phrases[phrase])`)."""
        i = self._index.get(text * self.phrases + phrase)
        return 0 if i is None else int(self.group_count[i])

    def group_range(self, text: int) -> tuple[int, int]:
        """[lo, hi) of the groups of text `text`; its matches are `starts[group_start[lo] : end of group hi-1]`,
        contiguous, because groups are sorted by text first."""
        lo = int(np.searchsorted(self.keys, text * self.phrases, side="left"))
        hi = int(np.searchsorted(self.keys, (text + 1) * self.phrases, side="left"))
        return lo, hi

    def counts(self, text: int) -> dict[int, int]:
        """Phrase index → count, for every phrase that occurs in text `text` at least once."""
        lo, hi = self.group_range(text)
        return dict(
            zip(
                (self.keys[lo:hi] - text * self.phrases).tolist(),
                self.group_count[lo:hi].tolist(),
                strict=True,
            )
        )

    def match_starts(self, text: int, phrase: int) -> IntArray:
        """Start offsets (ascending) of the kept occurrences of `phrase` in `text`."""
        i = self._index.get(text * self.phrases + phrase)
        if i is None:
            return np.zeros(0, dtype=np.int64)
        s = int(self.group_start[i])
        return self.starts[s : s + int(self.group_count[i])]


class PhraseMatcher:
    """A compiled set of phrases; `scan` counts and locates all of them in any number of texts in one pass."""

    def __init__(self, phrases: Sequence[str]):
        if len(set(phrases)) != len(phrases):
            raise ValueError("phrases must be unique")
        if any(not p for p in phrases):
            raise ValueError("phrases must not be empty")
        self.phrases: tuple[str, ...] = tuple(phrases)
        self.lengths: IntArray = np.array([len(p) for p in phrases], dtype=np.int64)
        self._overlapping = np.array([_self_overlaps(p) for p in phrases], dtype=bool)
        # UTF-16 automaton: only phrases made of BMP non-surrogate characters can occur in an all-BMP text.
        bmp = [i for i, p in enumerate(phrases) if _encodable_bmp(p)]
        self._bmp_ids: IntArray = np.array(bmp, dtype=np.int64)
        self._ac16 = ahocorasick_rs.BytesAhoCorasick([phrases[i].encode("utf-16-le") for i in bmp]) if bmp else None
        self._ac32: ahocorasick_rs.BytesAhoCorasick | None = None

    def _automaton32(self) -> ahocorasick_rs.BytesAhoCorasick:
        if self._ac32 is None:
            self._ac32 = ahocorasick_rs.BytesAhoCorasick([p.encode("utf-32-le", "surrogatepass") for p in self.phrases])
        return self._ac32

    def _raw_matches(self, joined: str) -> tuple[IntArray, IntArray]:
        """(phrase ids, character starts) of every overlapping occurrence in `joined`, in any order."""
        width, ids_map, data, ac = 4, None, b"", None
        try:
            data = joined.encode("utf-16-le")
            if len(data) == 2 * len(joined):
                width, ids_map, ac = 2, self._bmp_ids, self._ac16
        except UnicodeEncodeError:  # lone surrogates: only the code-point-exact UTF-32 path is right
            pass
        if width == 4:
            data = joined.encode("utf-32-le", "surrogatepass")
            ac = self._automaton32()
        if ac is None or not data:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        found = ac.find_matches_as_indexes(data, overlapping=True)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        arr = np.array(found, dtype=np.int64)
        ids, starts = arr[:, 0], arr[:, 1]
        aligned = starts % width == 0
        if not aligned.all():
            ids, starts = ids[aligned], starts[aligned]
        if ids_map is not None:
            ids = ids_map[ids]
        return ids, starts // width

    def scan(self, texts: Sequence[str]) -> ScanResult:
        """Count and locate every phrase in every text; offsets in the result are per text."""
        n_texts, n_phr = len(texts), len(self.phrases)
        lens = np.array([len(t) for t in texts], dtype=np.int64)
        offsets = np.zeros(n_texts, dtype=np.int64)
        if n_texts > 1:
            offsets[1:] = np.cumsum(lens[:-1] + 1)  # texts are joined with one separator character
        ids, starts = self._raw_matches("\n".join(texts))
        text_of = np.searchsorted(offsets, starts, side="right") - 1
        local = starts - offsets[text_of]
        inside = local + self.lengths[ids] <= lens[text_of]  # drops matches through a separator
        ids, local, text_of = ids[inside], local[inside], text_of[inside]
        keys = text_of * n_phr + ids
        order = np.lexsort((local, keys))
        keys, local = keys[order], local[order]
        if self._overlapping.any():
            keys, local = self._drop_overlaps(keys, local, n_phr)
        uniq, first, count = np.unique(keys, return_index=True, return_counts=True)
        return ScanResult(n_texts, n_phr, uniq, first.astype(np.int64), count.astype(np.int64), local)

    def _drop_overlaps(self, keys: IntArray, local: IntArray, n_phr: int) -> tuple[IntArray, IntArray]:
        """Apply str.count's leftmost non-overlapping rule to the groups of self-overlapping phrases."""
        need = self._overlapping[keys % n_phr]
        if not need.any():
            return keys, local
        keep = np.ones(len(keys), dtype=bool)
        idx = np.flatnonzero(need)
        k_list = keys[idx].tolist()
        s_list = local[idx].tolist()
        len_list = self.lengths[keys[idx] % n_phr].tolist()
        last_key, next_free = -1, 0
        for j, (k, s, ln) in enumerate(zip(k_list, s_list, len_list, strict=True)):
            if k != last_key:
                last_key, next_free = k, s + ln
            elif s < next_free:
                keep[idx[j]] = False
            else:
                next_free = s + ln
        return keys[keep], local[keep]
