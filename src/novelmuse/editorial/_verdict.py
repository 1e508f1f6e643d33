"""The editor's verdict, computed from the scores (seed 004), never taken from the model.

    any dimension < 50 or overall < 60 → rewrite
    overall < 70 or two (or more) dimensions < 65 → polish
    otherwise → accept

Dimensions listed in `ignore` (伏笔健康 in the first chapters, where foreshadowing has not unfolded yet)
take no part in the dimension rules; their score is still stored, marked neutral.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final, Literal

Verdict = Literal["rewrite", "polish", "accept"]

REWRITE_DIM_BELOW: Final = 50
REWRITE_OVERALL_BELOW: Final = 60
POLISH_OVERALL_BELOW: Final = 70
POLISH_DIM_BELOW: Final = 65
POLISH_DIM_COUNT: Final = 2


def compute_verdict(overall: int, scores: Mapping[str, int], ignore: Collection[str] = ()) -> Verdict:
    """The verdict for an overall score and per-dimension scores (pure, total)."""
    considered = [s for d, s in scores.items() if d not in ignore]
    if overall < REWRITE_OVERALL_BELOW or any(s < REWRITE_DIM_BELOW for s in considered):
        return "rewrite"
    if overall < POLISH_OVERALL_BELOW or sum(1 for s in considered if s < POLISH_DIM_BELOW) >= POLISH_DIM_COUNT:
        return "polish"
    return "accept"
