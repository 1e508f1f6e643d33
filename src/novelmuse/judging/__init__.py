"""Blind judge panels (seed 000): versioned rubrics, the blind input builder and leak check, the judge
report contract, the 2+1 panel, quality-gate adjudication, lessons and judge reliability.

Scoring only: no candidate is changed, no threshold loosened.
"""

from ._arith import TOLERANCE, combine_three, combine_two, disagreements, median3, within
from ._blind import (
    QUOTE_MIN_CHARS,
    BlindInput,
    BlindItem,
    Candidate,
    SealedArmMap,
    Target,
    blind_order,
    build_blind_item,
    candidate_ids,
    judge_messages,
    quote_hints,
)
from ._contract import ArrayCounts, ContractResult, Finding, check_report
from ._leak import LeakGuard
from ._reliability import PanelScores, Reliability, krippendorff_alpha_interval, reliability
from ._rubrics import HARD_BLOCKS, PROFILES, SCENE_TYPES, Rubric, list_rubrics, load_rubric

__all__ = [
    "HARD_BLOCKS",
    "PROFILES",
    "QUOTE_MIN_CHARS",
    "SCENE_TYPES",
    "TOLERANCE",
    "ArrayCounts",
    "BlindInput",
    "BlindItem",
    "Candidate",
    "ContractResult",
    "Finding",
    "LeakGuard",
    "PanelScores",
    "Reliability",
    "Rubric",
    "SealedArmMap",
    "Target",
    "blind_order",
    "build_blind_item",
    "candidate_ids",
    "check_report",
    "combine_three",
    "combine_two",
    "disagreements",
    "judge_messages",
    "krippendorff_alpha_interval",
    "list_rubrics",
    "load_rubric",
    "median3",
    "quote_hints",
    "reliability",
    "within",
]
