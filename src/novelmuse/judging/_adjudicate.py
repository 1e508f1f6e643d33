"""Quality-gate adjudication: a deterministic verdict from a stable panel report and rule-layer hard blocks.

passed only if the three critical dimensions (canon_compliance, character_voice, scene_structure) are all
≥ their threshold (4.0) on the panel's score and no rule-layer hard block (source_safety,
output_compliance, static_contract) fired. Anything else is failed, with one reason per cause; a hard
block that was not evaluated is a reason too (unknown is not passed). An item whose panel is not stable
cannot be adjudicated: the outcome is error(code). Non-critical dimensions below their threshold only
produce suggestions; they never fail a candidate.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Literal

from pydantic import Field

from ..errors import InputError
from ._doc import JudgeDoc
from ._reports import PanelReport
from ._rubrics import Rubric, as_fraction

HardBlockState = Literal["passed", "fired"]


class Suggestion(JudgeDoc):
    dimension_id: str
    score: float
    threshold: float
    question: str


class GateDecision(JudgeDoc):
    """The gate outcome for one candidate: exactly one of passed / failed / error(code)."""

    candidate_id: str
    outcome: Literal["passed", "failed", "error"]
    code: str | None = None
    reasons: list[str] = Field(default_factory=list)
    suggestions: list[Suggestion] = Field(default_factory=list)
    hard_blocks: dict[str, str] = Field(default_factory=dict)


def adjudicate_quality_gate(
    report: PanelReport,
    rubric: Rubric,
    candidate_id: str,
    hard_blocks: Mapping[str, HardBlockState] | None,
) -> GateDecision:
    """Adjudicate one candidate of a quality_gate panel (see the module docstring for the rule)."""
    if not rubric.adjudicated or report.profile != rubric.profile:
        raise InputError(
            "GATE_PROFILE", f"{rubric.profile} is not adjudicated, or the report is of another profile", "adjudication"
        )
    if report.rubric.sha256 != rubric.sha256:
        raise InputError("JUDGE_RUBRIC_MIXED", "the report was scored with another rubric version", "adjudication")
    blocks = {name: (hard_blocks or {}).get(name, "not evaluated") for name in rubric.hard_blocks}
    if report.status != "stable":
        return GateDecision(
            candidate_id=candidate_id,
            outcome="error",
            code=report.error_code or "JUDGE_INVALID",
            reasons=[f"the panel is {report.status}: no scores to adjudicate"],
            hard_blocks=blocks,
        )
    reasons: list[str] = []
    for name, state in blocks.items():
        if state == "fired":
            reasons.append(f"hard block {name} fired (rule layer)")
        elif state != "passed":
            reasons.append(f"hard block {name} was not evaluated (unknown is not passed)")
    suggestions: list[Suggestion] = []
    for dim in rubric.dimensions:
        score = as_fraction(report.score(candidate_id, dim.id))
        threshold = Fraction(str(dim.threshold)) if dim.threshold is not None else None
        if threshold is None or score >= threshold:
            continue
        if dim.critical:
            reasons.append(f"critical dimension {dim.id} scored {float(score)} < {float(threshold)}")
        else:
            suggestions.append(
                Suggestion(dimension_id=dim.id, score=float(score), threshold=float(threshold), question=dim.question)
            )
    return GateDecision(
        candidate_id=candidate_id,
        outcome="failed" if reasons else "passed",
        code="GATE_FAILED" if reasons else None,
        reasons=reasons,
        suggestions=suggestions,
        hard_blocks=blocks,
    )
