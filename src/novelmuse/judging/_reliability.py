"""Judge reliability per run: agreement between judges, third-judge and invalid_unstable rates, and
Krippendorff's alpha with the interval metric (implemented here, checked against published values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ._doc import JudgeDoc


def _sum_sq_diffs(values: Sequence[Fraction]) -> Fraction:
    """Σ over ordered pairs (i ≠ j) of (v_i − v_j)², in O(n): 2·n·Σv² − 2·(Σv)²."""
    n = len(values)
    total = sum(values, Fraction(0))
    squares = sum((v * v for v in values), Fraction(0))
    return 2 * n * squares - 2 * total * total


def krippendorff_alpha_interval(units: Sequence[Sequence[Fraction | float | int | None]]) -> float | None:
    """Krippendorff's alpha, interval metric δ² = (a − b)², for units × coders data (None = no value).

    Only units with at least two values are pairable. α = 1 − D_o / D_e with
    D_o = (1/n) Σ_u Σ_{i≠j∈u} δ²/(m_u − 1) and D_e = Σ_{i≠j} δ² / (n(n − 1)) over all n pairable values.
    Returns None when alpha is undefined (fewer than two pairable values, or no variation at all:
    D_e = 0 — e.g. every judge gave every candidate the same score).
    """
    pairable = [
        [Fraction(str(v)) if isinstance(v, float) else Fraction(v) for v in unit if v is not None] for unit in units
    ]
    pairable = [u for u in pairable if len(u) >= 2]
    all_values = [v for u in pairable for v in u]
    n = len(all_values)
    if n < 2:
        return None
    d_e = _sum_sq_diffs(all_values) / (n * (n - 1))
    if d_e == 0:
        return None
    d_o = sum((_sum_sq_diffs(u) / (len(u) - 1) for u in pairable), Fraction(0)) / n
    return float(1 - d_o / d_e)


@dataclass(frozen=True)
class PanelScores:
    """One item's judge scores for reliability: per cell (candidate, dimension), the judges' scores in slot order."""

    status: str  # stable / invalid_unstable / invalid
    third_judge: bool
    cells: dict[tuple[str, str], list[Fraction]]  # (candidateId, dimensionId) → [judge1, judge2, (judge3)]


class DimensionAgreement(JudgeDoc):
    dimension_id: str
    cells: int
    mean_abs_diff: float | None  # judge 1 vs judge 2 on this dimension


class Reliability(JudgeDoc):
    """Reliability figures of one run (printed in the run summary)."""

    items: int
    items_with_two_judges: int
    third_judge_rate: float | None
    invalid_unstable_rate: float | None
    invalid_rate: float | None
    mean_abs_diff: float | None
    dimensions: list[DimensionAgreement]
    alpha_interval: float | None


def reliability(panels: Sequence[PanelScores]) -> Reliability:
    """Figures over the panels of a run.

    - mean absolute difference: between judge 1 and judge 2, per dimension and overall, over every cell of
      every item where both first judges returned a contract-valid report;
    - third-judge rate and invalid_unstable rate: over those same items;
    - invalid rate: items where a judge failed closed, over all items;
    - Krippendorff's alpha (interval): units are the cells, coders the judge slots (1, 2, 3 when it ran).
    """
    complete = [p for p in panels if all(len(v) >= 2 for v in p.cells.values()) and p.cells]
    by_dim: dict[str, list[Fraction]] = {}
    units: list[list[Fraction | float | int | None]] = []
    for p in complete:
        for (_, dim), scores in p.cells.items():
            by_dim.setdefault(dim, []).append(abs(scores[0] - scores[1]))
            units.append(list(scores))
    diffs = [d for ds in by_dim.values() for d in ds]
    return Reliability(
        items=len(panels),
        items_with_two_judges=len(complete),
        third_judge_rate=_rate(sum(p.third_judge for p in complete), len(complete)),
        invalid_unstable_rate=_rate(sum(p.status == "invalid_unstable" for p in complete), len(complete)),
        invalid_rate=_rate(sum(p.status == "invalid" for p in panels), len(panels)),
        mean_abs_diff=_mean(diffs),
        dimensions=[
            DimensionAgreement(dimension_id=d, cells=len(ds), mean_abs_diff=_mean(ds)) for d, ds in by_dim.items()
        ],
        alpha_interval=krippendorff_alpha_interval(units),
    )


def _rate(k: int, n: int) -> float | None:
    return None if n == 0 else k / n


def _mean(values: Sequence[Fraction]) -> float | None:
    return None if not values else float(sum(values, Fraction(0)) / len(values))
