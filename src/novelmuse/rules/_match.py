"""Counting many phrases in many texts at once, with `str.count` semantics for every phrase.

One Aho-Corasick automaton (ahocorasick-rs, over bytes) is built per phrase set and reused for every scan. A
scan encodes its text once in a fixed-width encoding (UTF-16-LE when every character is in the BMP, else
UTF-32-LE) so that byte offset / width is the character offset, and asks the automaton for *all* overlapping
matches. Then:

- matches that do not start on a character boundary (or that run past the end of their own text) are dropped;
- for each phrase, `str.count` keeps a match only if it starts at or after the end of the last kept one
  (non-overlapping, leftmost: 哈哈 occurs once in 哈哈哈). A phrase that cannot overlap itself (no proper
  prefix equal to a suffix) keeps all its matches.

Two ways to do that, with the same results (tests/rules/test_match.py holds both to `str.count`):

- `occurrences(text)`: one text, plain Python over the match list — for the few thousand matches of a chapter
  or a draft, where importing numpy (~0.1 s) would cost more than the work (issue 17: a command's start-up);
- `scan(texts)`: many texts joined and processed vectorised with numpy (imported on first use), where per-match
  Python would dominate (a whole book: hundreds of thousands of matches).

Why not pyahocorasick: its per-character child lookup is linear in the number of distinct next characters, so
1,000 CJK phrases scan at ~100 ns/char (measured in benchmarks/bench_rules.py's design; ~7x a naive loop).
"""

from __future__ import annotations

import itertools
import operator
import struct
from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias

import ahocorasick_rs

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IntArray: TypeAlias = npt.NDArray[np.int64]
else:
    IntArray = Any  # numpy is imported only by the vectorised path

#: The automaton library's DFA scans ~25% faster than its contiguous NFA, but its construction grows with the
#: square of a phrase's length and with (states x byte classes): one phrase of 10,000 repeated characters took
#: 37 s to build, 100,000 more than 300 s, and 5,000 phrases of 64 characters 22 s. The DFA is therefore built
#: only for small automata (measured worst case at these bounds: 0.2 s); anything else gets the contiguous NFA,
#: whose construction is linear (100,000 characters: 15 ms).
DFA_MAX_PHRASES = 5000
DFA_MAX_PHRASE_CHARS = 64
DFA_MAX_TOTAL_CHARS = 16_384


def _use_dfa(phrases: Sequence[str]) -> bool:
    return (
        len(phrases) <= DFA_MAX_PHRASES
        and max(map(len, phrases), default=0) <= DFA_MAX_PHRASE_CHARS
        and sum(map(len, phrases)) <= DFA_MAX_TOTAL_CHARS
    )


def _self_overlaps(phrase: str) -> bool:
    """True when two occurrences of `phrase` can overlap (it has a proper border, e.g. 哈哈, aba).

    Linear: the failure function of Knuth-Morris-Pratt gives the longest proper border. Most phrases never get
    that far: without a second occurrence of the first character there is no border."""
    if len(phrase) < 2 or phrase.find(phrase[0], 1) < 0:
        return False
    border = [0] * len(phrase)
    k = 0
    for i in range(1, len(phrase)):
        while k and phrase[i] != phrase[k]:
            k = border[k - 1]
        if phrase[i] == phrase[k]:
            k += 1
        border[i] = k
    return border[-1] > 0


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
    paragraphs: IntArray  # paragraph index (text.split_paragraphs of that text) of each kept match
    _lookup: dict[int, int] = field(default_factory=dict, repr=False)  # key → group, filled on first use

    @property
    def _index(self) -> dict[int, int]:
        if not self._lookup and len(self.keys):
            self._lookup.update({k: i for i, k in enumerate(self.keys.tolist())})
        return self._lookup

    def count(self, text: int, phrase: int) -> int:
        """How many times phrase `phrase` occurs in text `text` (exactly `texts[text].count(phrases[phrase])`)."""
        i = self._index.get(text * self.phrases + phrase)
        return 0 if i is None else int(self.group_count[i])

    def group_range(self, text: int) -> tuple[int, int]:
        """[lo, hi) of the groups of text `text`; its matches are `starts[group_start[lo] : end of group hi-1]`,
        contiguous, because groups are sorted by text first."""
        lo = int(self.keys.searchsorted(text * self.phrases, side="left"))
        hi = int(self.keys.searchsorted((text + 1) * self.phrases, side="left"))
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
            return self.starts[:0]
        s = int(self.group_start[i])
        return self.starts[s : s + int(self.group_count[i])]

    def match_paragraphs(self, text: int, phrase: int) -> IntArray:
        """Paragraph indices (as `text.paragraph_at` gives them) of the kept occurrences, aligned with
        `match_starts`."""
        i = self._index.get(text * self.phrases + phrase)
        if i is None:
            return self.paragraphs[:0]
        s = int(self.group_start[i])
        return self.paragraphs[s : s + int(self.group_count[i])]


@dataclass(frozen=True)
class _Vectors:
    """The phrase set as numpy arrays, for `scan` (built on its first call: numpy is imported there)."""

    lengths: IntArray
    overlapping: npt.NDArray[np.bool_]
    bmp_ids: IntArray


class PhraseMatcher:
    """A compiled set of phrases; `scan` counts and locates all of them in any number of texts in one pass,
    `occurrences` in one text."""

    def __init__(self, phrases: Sequence[str]):
        if len(set(phrases)) != len(phrases):
            raise ValueError("phrases must be unique")
        if any(not p for p in phrases):
            raise ValueError("phrases must not be empty")
        self.phrases: tuple[str, ...] = tuple(phrases)
        self.lengths: list[int] = [len(p) for p in phrases]
        self._overlapping: list[bool] = [_self_overlaps(p) for p in phrases]
        # UTF-16 automaton: only phrases made of BMP non-surrogate characters can occur in an all-BMP text.
        self._bmp_ids: list[int] = [i for i, p in enumerate(phrases) if _encodable_bmp(p)]
        # A DFA scans faster but is bigger and slower to build (see DFA_MAX_PHRASES); never the library's own
        # choice, which picks a DFA for a few phrases however long they are.
        impl = ahocorasick_rs.Implementation
        self._impl = impl.DFA if _use_dfa(phrases) else impl.ContiguousNFA
        self._ac16 = (
            ahocorasick_rs.BytesAhoCorasick(
                [phrases[i].encode("utf-16-le") for i in self._bmp_ids], implementation=self._impl
            )
            if self._bmp_ids
            else None
        )
        self._ac32: ahocorasick_rs.BytesAhoCorasick | None = None

    @cached_property
    def _vectors(self) -> _Vectors:
        import numpy as np

        return _Vectors(
            np.array(self.lengths, dtype=np.int64),
            np.array(self._overlapping, dtype=bool),
            np.array(self._bmp_ids, dtype=np.int64),
        )

    def _automaton32(self) -> ahocorasick_rs.BytesAhoCorasick:
        if self._ac32 is None:
            self._ac32 = ahocorasick_rs.BytesAhoCorasick(
                [p.encode("utf-32-le", "surrogatepass") for p in self.phrases], implementation=self._impl
            )
        return self._ac32

    def _find(self, text: str) -> tuple[list[tuple[int, int, int]], int, bool]:
        """Every overlapping match in `text` as the automaton reports it — (pattern, byte start, byte end),
        in order of their end — the encoding's width, and whether patterns are `_bmp_ids` indices (UTF-16)."""
        try:
            data = text.encode("utf-16-le")
            if len(data) == 2 * len(text):
                found = self._ac16.find_matches_as_indexes(data, overlapping=True) if self._ac16 and data else []
                return found, 2, True
        except UnicodeEncodeError:  # lone surrogates: only the code-point-exact UTF-32 path is right
            pass
        data = text.encode("utf-32-le", "surrogatepass")
        return (self._automaton32().find_matches_as_indexes(data, overlapping=True) if data else []), 4, False

    def occurrences(self, text: str) -> dict[int, list[int]]:
        """Phrase index → start offsets (ascending) of its `str.count` occurrences in `text`, for every phrase
        that occurs; plain Python (see the module docstring)."""
        found, width, mapped = self._find(text)
        by_pattern: defaultdict[int, list[int]] = defaultdict(list)  # no empty list made per match
        for pattern, start, _end in found:
            if not start % width:
                by_pattern[pattern].append(start // width)
        out: dict[int, list[int]] = {}
        for pattern, starts in by_pattern.items():
            phrase = self._bmp_ids[pattern] if mapped else pattern
            starts.sort()  # already in order (one phrase's matches end, hence start, in order); linear then
            if self._overlapping[phrase]:
                starts = _leftmost_non_overlapping(starts, self.lengths[phrase])
            out[phrase] = starts
        return out

    def _raw_matches(self, joined: str) -> tuple[IntArray, IntArray]:
        """(phrase ids, character starts) of every overlapping occurrence in `joined`, in any order."""
        import numpy as np

        found, width, mapped = self._find(joined)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        flat = np.fromiter(itertools.chain.from_iterable(found), dtype=np.int64, count=3 * len(found))
        ids, starts = flat[0::3], flat[1::3]
        aligned = starts % width == 0
        if not aligned.all():
            ids, starts = ids[aligned], starts[aligned]
        if mapped:
            ids = self._vectors.bmp_ids[ids]
        return ids, starts // width

    def scan(self, texts: Sequence[str]) -> ScanResult:
        """Count and locate every phrase in every text; offsets and paragraphs in the result are per text.
        Vectorised (numpy, imported here)."""
        import numpy as np

        n_texts, n_phr = len(texts), len(self.phrases)
        lens = np.array([len(t) for t in texts], dtype=np.int64)
        offsets = np.zeros(n_texts, dtype=np.int64)
        if n_texts > 1:
            offsets[1:] = np.cumsum(lens[:-1] + 1)  # texts are joined with one separator character
        joined = "\n".join(texts)
        ids, starts = self._raw_matches(joined)
        text_of = np.searchsorted(offsets, starts, side="right") - 1
        local = starts - offsets[text_of]
        inside = local + self._vectors.lengths[ids] <= lens[text_of]  # drops matches through a separator
        ids, local, text_of, starts = ids[inside], local[inside], text_of[inside], starts[inside]
        paras = _paragraph_index(joined, starts, offsets[text_of])
        keys = text_of * n_phr + ids
        # The automaton reports matches in order of their end, so one phrase's matches in one text arrive in
        # order of their start: a stable sort by key groups them and keeps that order.
        order = np.argsort(keys, kind="stable")
        keys, local, paras = keys[order], local[order], paras[order]
        if len(keys) > 1 and not np.all((np.diff(keys) > 0) | (np.diff(local) > 0)):  # never seen; be exact anyway
            order = np.lexsort((local, keys))
            keys, local, paras = keys[order], local[order], paras[order]
        if self._vectors.overlapping.any():
            keep = self._non_overlapping(keys, local, n_phr)
            keys, local, paras = keys[keep], local[keep], paras[keep]
        first = np.flatnonzero(np.diff(keys, prepend=-1))  # keys are sorted: a group starts where the key changes
        count = np.diff(first, append=len(keys))
        return ScanResult(n_texts, n_phr, keys[first], first, count, local, paras)

    def _non_overlapping(self, keys: IntArray, local: IntArray, n_phr: int) -> npt.NDArray[np.bool_]:
        """Mask of the matches str.count keeps: for self-overlapping phrases, leftmost and non-overlapping."""
        import numpy as np

        keep = np.ones(len(keys), dtype=bool)
        need = self._vectors.overlapping[keys % n_phr]
        if not need.any():
            return keep
        idx = np.flatnonzero(need)
        k_list = keys[idx].tolist()
        s_list = local[idx].tolist()
        len_list = self._vectors.lengths[keys[idx] % n_phr].tolist()
        last_key, next_free = -1, 0
        for j, (k, st, ln) in enumerate(zip(k_list, s_list, len_list, strict=True)):
            if k != last_key:
                last_key, next_free = k, st + ln
            elif st < next_free:
                keep[idx[j]] = False
            else:
                next_free = st + ln
        return keep


def _leftmost_non_overlapping(starts: list[int], length: int) -> list[int]:
    """The starts `str.count` keeps among ascending `starts` of one phrase of `length` characters."""
    kept: list[int] = []
    next_free = 0
    for st in starts:
        if st >= next_free:
            kept.append(st)
            next_free = st + length
    return kept


def paragraph_indices(text: str, starts: Sequence[int]) -> list[int]:
    """The paragraph index (`text.split_paragraphs`: non-blank lines, counted from 0) holding each offset of
    `starts` (ascending or not) in `text`; plain Python: a table of every character's paragraph, built a line at
    a time, then one C-level lookup of all the offsets (half the time of a bisection per offset)."""
    if not starts:
        return []
    parts: list[bytes] = []
    paragraph = -1
    for line in text.split("\n"):
        if line and not line.isspace():
            paragraph += 1
        parts.append(_PACK_INDEX(paragraph) * (len(line) + 1))  # the line's characters and its line break
    table = array("i")
    table.frombytes(b"".join(parts))
    found = operator.itemgetter(*starts)(table)
    return list(found) if len(starts) > 1 else [found]


_PACK_INDEX = struct.Struct("i").pack


def _paragraph_index(joined: str, starts: IntArray, text_starts: IntArray) -> IntArray:
    """For matches at global `starts` (in texts beginning at global `text_starts`), the index of the paragraph
    holding each one, counted within its own text exactly as `text.split_paragraphs` counts: paragraphs are
    the lines (split on ``\\n``) holding a non-whitespace character. One `str.split` and one pass over the
    lines (not the characters), then vectorised lookups."""
    import numpy as np

    if not len(starts):
        return np.zeros(0, dtype=np.int64)
    lines = joined.split("\n")
    n = len(lines)
    line_starts = np.zeros(n, dtype=np.int64)
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=n)
    filled = (lengths > 0) & ~np.fromiter(map(str.isspace, lines), dtype=bool, count=n)  # "".isspace() is False
    np.cumsum(lengths[:-1] + 1, out=line_starts[1:])
    paragraphs_through = np.cumsum(filled)  # non-blank lines among lines [0, i]
    line_of = np.searchsorted(line_starts, starts, side="right") - 1
    first_line = np.searchsorted(line_starts, text_starts, side="left")  # a text starts on a line start
    before = np.where(first_line > 0, paragraphs_through[np.maximum(first_line - 1, 0)], 0)
    return np.asarray(paragraphs_through[line_of] - 1 - before, dtype=np.int64)
