"""The detector's output: a strict semantic report on one candidate chapter (seed 003 隔离 Semantic Detector).

The detector sees only the candidate text and the hard constraints (ids and texts) and answers, for EVERY
constraint id, a verdict pass / fail / unknown with a verbatim quote from the candidate. It echoes the
candidate's sha256 (the report is bound to the text it judged). Its own `coverage` and `high_severity` claims
are recorded beside the figures novelmuse computes from the verdicts, never used (禁止常量).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["pass", "fail", "unknown"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "unknown")


class ConstraintVerdict(BaseModel):
    """The detector's verdict on one hard constraint of the outline."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="the constraint id exactly as given (E1, R1, F-plant:x, hook, S1, T1, …)")
    verdict: Verdict
    quote: str = Field(
        description="verbatim from the candidate, found exactly once: where it is fulfilled (pass) or broken (fail);"
        " empty when the text has nothing to quote"
    )
    reason: str


class DetectorOutput(BaseModel):
    """The detector's whole answer for one candidate."""

    model_config = ConfigDict(extra="forbid")

    candidate_sha256: str = Field(description="the sha256 of the candidate, exactly as given")
    verdicts: list[ConstraintVerdict]
    coverage: float = Field(description="the share of constraints that pass (recorded, never trusted)")
    high_severity: int = Field(description="how many constraints fail (recorded, never trusted)")
