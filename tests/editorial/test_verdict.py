"""The computed verdict at every threshold boundary of seed 004 (49/50, 59/60, 64/65, 69/70)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from novelmuse.editorial import compute_verdict
from novelmuse.roles.editor import DIMENSIONS, FORESHADOW_DIM


def dims(default: int = 80, **over: int) -> dict[str, int]:
    scores = dict.fromkeys(DIMENSIONS, default)
    names = {"a": DIMENSIONS[0], "b": DIMENSIONS[1], "f": FORESHADOW_DIM}
    for key, value in over.items():
        scores[names[key]] = value
    return scores


def test_dimension_49_rewrites_50_does_not() -> None:
    assert compute_verdict(90, dims(a=49)) == "rewrite"
    assert compute_verdict(90, dims(a=50)) == "accept"  # one dimension < 65 alone is not polish
    assert compute_verdict(90, dims(a=49, b=90)) == "rewrite"
    assert compute_verdict(90, dims(a=50, b=64)) == "polish"


def test_one_dimension_below_65_alone_accepts() -> None:
    assert compute_verdict(90, dims(a=64)) == "accept"
    assert compute_verdict(90, dims(a=50, b=65)) == "accept"


def test_overall_59_rewrites_60_polishes() -> None:
    assert compute_verdict(59, dims()) == "rewrite"
    assert compute_verdict(60, dims()) == "polish"


def test_overall_69_polishes_70_accepts() -> None:
    assert compute_verdict(69, dims()) == "polish"
    assert compute_verdict(70, dims()) == "accept"


def test_two_dimensions_64_polish_65_accept() -> None:
    assert compute_verdict(90, dims(a=64, b=64)) == "polish"
    assert compute_verdict(90, dims(a=64, b=65)) == "accept"
    assert compute_verdict(90, dims(a=65, b=65)) == "accept"


def test_neutral_foreshadow_ignored_only_when_asked() -> None:
    assert compute_verdict(90, dims(f=10)) == "rewrite"
    assert compute_verdict(90, dims(f=10), ignore={FORESHADOW_DIM}) == "accept"
    assert compute_verdict(90, dims(a=64, f=60), ignore={FORESHADOW_DIM}) == "accept"
    assert compute_verdict(90, dims(a=64, f=60)) == "polish"


def test_exhaustive_boundary_grid() -> None:
    """Every combination of boundary values against the rule written out longhand."""
    values = (0, 49, 50, 59, 60, 64, 65, 69, 70, 100)
    for overall, a, b in itertools.product(values, repeat=3):
        scores = dims(a=a, b=b)
        low50 = a < 50 or b < 50
        low65 = (a < 65) + (b < 65)
        if overall < 60 or low50:
            want = "rewrite"
        elif overall < 70 or low65 >= 2:
            want = "polish"
        else:
            want = "accept"
        assert compute_verdict(overall, scores) == want, (overall, a, b)


@given(st.integers(0, 100), st.lists(st.integers(0, 100), min_size=7, max_size=7))
def test_verdict_matches_oracle(overall: int, scores: list[int]) -> None:
    mapping = dict(zip(DIMENSIONS, scores, strict=True))
    if any(s < 50 for s in scores) or overall < 60:
        want = "rewrite"
    elif overall < 70 or sum(s < 65 for s in scores) >= 2:
        want = "polish"
    else:
        want = "accept"
    assert compute_verdict(overall, mapping) == want
