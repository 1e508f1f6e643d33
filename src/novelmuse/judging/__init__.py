"""Blind judge panels (seed 000): versioned rubrics, the blind input builder and leak check, the judge
report contract, the 2+1 panel, quality-gate adjudication, lessons and judge reliability.

Scoring only: no candidate is changed, no threshold loosened.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._adjudicate import GateDecision, HardBlockState, Suggestion, adjudicate_quality_gate, merge_hard_blocks
    from ._arith import TOLERANCE, combine_three, combine_two, disagreements, median3, within
    from ._blind import (
        CONTEXT_EVIDENCE,
        QUOTE_MIN_CHARS,
        BlindInput,
        BlindItem,
        Candidate,
        ContextItem,
        SealedArmMap,
        Target,
        blind_order,
        build_blind_item,
        candidate_ids,
        judge_call,
        quote_hints,
    )
    from ._contract import ArrayCounts, ContractResult, Finding, check_report
    from ._doc import JudgeDoc
    from ._gates import GATE_LESSON_TITLE, GateRow, gate_lesson, gate_rows
    from ._leak import LeakGuard
    from ._lessons import Lesson, build_lessons, lesson_key, register_lessons
    from ._panel import JudgeFn, JudgeRecord, check_item_leaks, panel_orders, run_panel, session_judge
    from ._reliability import PanelScores, Reliability, krippendorff_alpha_interval, reliability
    from ._reports import (
        Aggregate,
        CellScore,
        CellVerdict,
        DimensionRanking,
        JudgeEntry,
        PanelReport,
        RubricRef,
        aggregate,
    )
    from ._request import JudgeFiles, JudgeRequest, arm_names, hidden_card_ids, request_from_files
    from ._rubrics import HARD_BLOCKS, PROFILES, SCENE_TYPES, Rubric, list_rubrics, load_rubric
    from ._service import (
        JUDGE_SCHEMA_VERSION,
        JudgeOutcome,
        JudgeSummary,
        LessonRef,
        PanelRow,
        RubricSummary,
        judge_item,
        open_arm_map,
        panel_bill,
        panel_scores,
        run_reliability,
        summarize,
    )

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "CONTEXT_EVIDENCE",
    "GATE_LESSON_TITLE",
    "HARD_BLOCKS",
    "JUDGE_SCHEMA_VERSION",
    "PROFILES",
    "QUOTE_MIN_CHARS",
    "SCENE_TYPES",
    "TOLERANCE",
    "Aggregate",
    "ArrayCounts",
    "BlindInput",
    "BlindItem",
    "Candidate",
    "CellScore",
    "CellVerdict",
    "ContextItem",
    "ContractResult",
    "DimensionRanking",
    "Finding",
    "GateDecision",
    "GateRow",
    "HardBlockState",
    "JudgeDoc",
    "JudgeEntry",
    "JudgeFiles",
    "JudgeFn",
    "JudgeOutcome",
    "JudgeRecord",
    "JudgeRequest",
    "JudgeSummary",
    "LeakGuard",
    "Lesson",
    "LessonRef",
    "PanelReport",
    "PanelRow",
    "PanelScores",
    "Reliability",
    "Rubric",
    "RubricRef",
    "RubricSummary",
    "SealedArmMap",
    "Suggestion",
    "Target",
    "adjudicate_quality_gate",
    "aggregate",
    "arm_names",
    "blind_order",
    "build_blind_item",
    "build_lessons",
    "candidate_ids",
    "check_item_leaks",
    "check_report",
    "combine_three",
    "combine_two",
    "disagreements",
    "gate_lesson",
    "gate_rows",
    "hidden_card_ids",
    "judge_call",
    "judge_item",
    "krippendorff_alpha_interval",
    "lesson_key",
    "list_rubrics",
    "load_rubric",
    "median3",
    "merge_hard_blocks",
    "open_arm_map",
    "panel_bill",
    "panel_orders",
    "panel_scores",
    "quote_hints",
    "register_lessons",
    "reliability",
    "request_from_files",
    "run_panel",
    "run_reliability",
    "session_judge",
    "summarize",
    "within",
]
