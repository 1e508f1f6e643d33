"""Panel arithmetic at the 0.5 boundary and Krippendorff's alpha against published values."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.judging import (
    PanelScores,
    combine_three,
    combine_two,
    disagreements,
    krippendorff_alpha_interval,
    median3,
    reliability,
    within,
)


def test_exactly_half_a_point_is_agreement_one_point_is_not() -> None:
    assert within(F(4), F(9, 2)) and within(F(9, 2), F(4))
    assert not within(F(4), F(5))
    assert disagreements({"x": F(4), "y": F(3)}, {"x": F(9, 2), "y": F(4)}) == ["y"]
    assert disagreements({"x": F(0)}, {"x": F(1, 2)}) == []


def test_median_of_three_when_any_pair_is_within_half_a_point() -> None:
    scores, unstable = combine_three({"x": F(2)}, {"x": F(4)}, {"x": F(9, 2)})
    assert scores == {"x": F(4)} and unstable == []
    scores, unstable = combine_three({"x": F(2)}, {"x": F(4)}, {"x": F(3)})
    assert scores == {} and unstable == ["x"]  # 2, 3, 4: every pair differs by 1 or more
    scores, unstable = combine_three({"x": F(1), "y": F(3)}, {"x": F(5), "y": F(3)}, {"x": F(3), "y": F(5)})
    assert unstable == ["x"] and scores == {"y": F(3)}


def test_mean_of_two_is_exact() -> None:
    assert combine_two({"x": F(4)}, {"x": F(9, 2)}) == {"x": F(17, 4)}


@given(st.lists(st.integers(0, 20), min_size=3, max_size=3))
def test_median3_is_the_middle_value(values: list[int]) -> None:
    a, b, c = (F(v, 2) for v in values)
    assert median3(a, b, c) == sorted((a, b, c))[1]


def test_alpha_matches_krippendorffs_published_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 observers × 12 units with
    # missing values: interval alpha = 0.849.
    n = None
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3]
    c = [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]
    alpha = krippendorff_alpha_interval(list(zip(a, b, c, d, strict=True)))
    assert alpha == pytest.approx(0.849, abs=5e-4)


def test_alpha_hand_computed_two_coders() -> None:
    # Units (1,2), (3,3), (5,4): n = 6 values {1,2,3,3,5,4}, mean 3.
    # D_o = (1/6)·Σ_u Σ_{i≠j} δ²/(m_u−1) = (1/6)·(2·1 + 0 + 2·1) = 2/3.
    # D_e = Σ_{i≠j} δ² / (n(n−1)) = (2·6·Σv² − 2·(Σv)²)/30 = (2·6·64 − 2·324)/30 = 120/30 = 4.
    # alpha = 1 − (2/3)/4 = 5/6.
    assert krippendorff_alpha_interval([(1, 2), (3, 3), (5, 4)]) == pytest.approx(5 / 6)
    assert krippendorff_alpha_interval([(1, 1), (2, 2)]) == 1.0
    assert krippendorff_alpha_interval([(3, 3), (3, 3)]) is None  # no variation: undefined, never 1.0
    assert krippendorff_alpha_interval([(1, None), (None, 2)]) is None


def test_run_reliability_figures() -> None:
    stable = PanelScores("stable", False, {("c1", "d1"): [F(4), F(9, 2)], ("c1", "d2"): [F(3), F(3)]})
    third = PanelScores("stable", True, {("c1", "d1"): [F(2), F(4), F(4)], ("c1", "d2"): [F(3), F(3), F(3)]})
    unstable = PanelScores("invalid_unstable", True, {("c1", "d1"): [F(1), F(5), F(3)], ("c1", "d2"): [F(3)] * 3})
    invalid = PanelScores("invalid", False, {("c1", "d1"): [F(4)]})
    r = reliability([stable, third, unstable, invalid])
    assert r.items == 4 and r.items_with_two_judges == 3
    assert r.third_judge_rate == pytest.approx(2 / 3)
    assert r.invalid_unstable_rate == pytest.approx(1 / 3)
    assert r.invalid_rate == pytest.approx(1 / 4)
    d1 = next(d for d in r.dimensions if d.dimension_id == "d1")
    assert d1.mean_abs_diff == pytest.approx((0.5 + 2 + 4) / 3)
    assert r.alpha_interval is not None and r.alpha_interval < 0.5
