"""The character edit distance (Levenshtein) of two texts, fast enough for whole chapters.

Hyyrö's bit-parallel form of Myers' algorithm: one column of the dynamic-programming table is a pair of bit
vectors (Python integers as wide as the shorter text), so two 5,000-character chapters take 5,000 steps of a few
big-integer operations each instead of 25 million table cells. Used to say how much the author changed a draft.
"""

from __future__ import annotations


def edit_distance(a: str, b: str) -> int:
    """The minimum number of single-character insertions, deletions and substitutions turning `a` into `b`."""
    if len(a) > len(b):
        a, b = b, a  # the bit vectors are as wide as the shorter text
    m = len(a)
    if m == 0:
        return len(b)
    peq: dict[str, int] = {}
    for i, ch in enumerate(a):
        peq[ch] = peq.get(ch, 0) | (1 << i)
    full = (1 << m) - 1
    last = 1 << (m - 1)
    vp, vn, score = full, 0, m
    for ch in b:
        eq = peq.get(ch, 0)
        x = eq | vn
        d0 = (((x & vp) + vp) ^ vp) | x
        hp = vn | (~(d0 | vp) & full)
        hn = vp & d0
        if hp & last:
            score += 1
        elif hn & last:
            score -= 1
        x = ((hp << 1) | 1) & full
        vn = x & d0
        vp = (((hn << 1) & full) | (~(x | d0) & full)) & full
    return score
