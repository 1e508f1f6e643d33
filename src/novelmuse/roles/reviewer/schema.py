"""The reviewer's output: issues with severity, type, a verbatim quote, explanation and fix hint.

`passed` is the model's own verdict if it gives one; it is recorded and never used (seed 004: the
decision uses severity only).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["critical", "major", "minor"]
IssueType = Literal["timeline", "character", "setting", "foreshadow", "object", "logic", "other"]
SEVERITIES: tuple[Severity, ...] = ("critical", "major", "minor")
ISSUE_TYPES: tuple[IssueType, ...] = ("timeline", "character", "setting", "foreshadow", "object", "logic", "other")


class ReviewIssue(BaseModel):
    """One consistency problem, located by a quote found exactly once in the chapter."""

    model_config = ConfigDict(extra="forbid")

    severity: Severity
    type: IssueType
    quote: str
    explanation: str
    fix_hint: str


class ConsistencyReport(BaseModel):
    """The reviewer's whole answer."""

    model_config = ConfigDict(extra="forbid")

    issues: list[ReviewIssue]
    passed: bool | None = None  # optional: the model may leave it out (recorded, never used)
