"""The entity mention index: where each card is named, by an Aho-Corasick automaton over names and aliases.

Rule (documented, tested against a naive scan): matches are *leftmost-longest and non-overlapping* over the
names and aliases of ALL cards together — scanning the text left to right, at each position the longest
name starting there is taken and the scan continues after it. So 关云长 counts once for 关羽 (not also as
云长), and a name inside another card's longer name is not counted for the shorter one.
"""

from __future__ import annotations

from dataclasses import dataclass

import ahocorasick


@dataclass(frozen=True, slots=True)
class Mention:
    """One mention: the card, the [start, end) span and the name as written."""

    card_id: str
    start: int
    end: int
    name: str


class MentionMatcher:
    """An automaton over every name → card id."""

    def __init__(self, names: dict[str, str]):
        self._empty = not names
        self._auto = ahocorasick.Automaton()
        for name, card_id in names.items():
            if name:
                self._auto.add_word(name, (card_id, name))
        if not self._empty:
            self._auto.make_automaton()

    def find(self, text: str) -> list[Mention]:
        """Leftmost-longest, non-overlapping mentions in `text`, in order."""
        if self._empty:
            return []
        # Every (overlapping) match, then the greedy leftmost-longest pass. (pyahocorasick's own `iter_long`
        # skips matches after a failed longer candidate, so it is not used.)
        longest: dict[int, tuple[str, str]] = {}
        for end_idx, (card_id, name) in self._auto.iter(text):
            start = end_idx + 1 - len(name)
            best = longest.get(start)
            if best is None or len(name) > len(best[1]):
                longest[start] = (card_id, name)
        out: list[Mention] = []
        pos = 0
        for start in sorted(longest):
            if start < pos:
                continue
            card_id, name = longest[start]
            out.append(Mention(card_id, start, start + len(name), name))
            pos = start + len(name)
        return out


def naive_mentions(text: str, names: dict[str, str]) -> list[Mention]:
    """The same rule by brute force (the benchmark's and the tests' baseline)."""
    by_len = sorted((n for n in names if n), key=len, reverse=True)
    out: list[Mention] = []
    i = 0
    while i < len(text):
        for n in by_len:
            if text.startswith(n, i):
                out.append(Mention(names[n], i, i + len(n), n))
                i += len(n)
                break
        else:
            i += 1
    return out
