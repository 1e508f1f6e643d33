"""Panel arithmetic in exact fractions: agreement within 0.5, third-judge trigger, median of three.

Scores are multiples of the rubric's step (0.5), so they are compared as `Fraction`s: a difference of
exactly 0.5 is *within* the tolerance and never triggers a third judge; 1.0 does. No float slack anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from typing import TypeVar

K = TypeVar("K")

TOLERANCE = Fraction(1, 2)


def within(a: Fraction, b: Fraction, tolerance: Fraction = TOLERANCE) -> bool:
    """True when |a − b| ≤ tolerance (0.5 exactly counts as agreement)."""
    return abs(a - b) <= tolerance


def disagreements(first: Mapping[K, Fraction], second: Mapping[K, Fraction]) -> list[K]:
    """The keys whose two scores differ by more than the tolerance (the third-judge trigger)."""
    return [k for k in first if not within(first[k], second[k])]


def median3(a: Fraction, b: Fraction, c: Fraction) -> Fraction:
    return sorted((a, b, c))[1]


def any_pair_within(values: Sequence[Fraction]) -> bool:
    """True when some pair of the values is within the tolerance."""
    return any(within(x, y) for x, y in combinations(values, 2))


def combine_two(first: Mapping[K, Fraction], second: Mapping[K, Fraction]) -> dict[K, Fraction]:
    """Two agreeing judges (or a warn-only profile): the mean of the two scores, exactly."""
    return {k: (first[k] + second[k]) / 2 for k in first}


def combine_three(
    first: Mapping[K, Fraction], second: Mapping[K, Fraction], third: Mapping[K, Fraction]
) -> tuple[dict[K, Fraction], list[K]]:
    """After a third judge: per key the median of three if any pair is within 0.5; else the key is unstable.

    The rule applies to every key once a third judge ran (a key the first two agreed on has a pair within
    0.5 by construction, so it gets the median too). Any unstable key makes the whole item invalid_unstable.
    """
    scores: dict[K, Fraction] = {}
    unstable: list[K] = []
    for k in first:
        values = (first[k], second[k], third[k])
        if any_pair_within(values):
            scores[k] = median3(*values)
        else:
            unstable.append(k)
    return scores, unstable
