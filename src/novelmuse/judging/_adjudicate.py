"""Quality-gate adjudication: a deterministic verdict from a stable panel report and rule-layer hard blocks.

passed only if the three critical dimensions (canon_compliance, character_voice, scene_structure) are all
≥ their threshold (4.0) on the panel's score and no rule-layer hard block (source_safety,
output_compliance, static_contract) fired. Anything else is failed, with one reason per cause; a hard
block that was not evaluated is a reason too (unknown is not passed); a block the rule layer found nothing to
check for (`not_applicable`, e.g. static_contract without an outline) is listed and does not fail. An item whose
panel is not stable cannot be adjudicated: the outcome is error(code). Non-critical dimensions below their
threshold only produce suggestions; they never fail a candidate.

The hard blocks come from the rule layer (`rules.hard_blocks`), computed by the service that builds the request;
a caller's override (`muse judge --hard-blocks`) can only make a block fire, never pass (`merge_hard_blocks`).
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

HardBlockState = Literal["passed", "fired", "not_applicable"]


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
    record_id: str | None = None  # the stored decision (table gate_decisions), once recorded


def adjudicate_quality_gate(
    report: PanelReport,
    rubric: Rubric,
    candidate_id: str,
    hard_blocks: Mapping[str, str] | None,
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
        elif state not in ("passed", "not_applicable"):
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


def merge_hard_blocks(computed: Mapping[str, str] | None, overrides: Mapping[str, str]) -> dict[str, str]:
    """The rule layer's states with a caller's overrides applied: an override can only make a block fire (a
    recorded ``fired (override)``), never pass one the rule layer fired or did not evaluate."""
    merged = dict(computed or {})
    for name, state in overrides.items():
        if state == "fired":
            merged[name] = "fired"
    return merged
