"""Step outcomes: every step of the editorial loop ends as exactly one of four things.

``passed`` / ``failed`` / ``skipped(reason)`` / ``error(code)`` — one shape for the terminal, the
``--json`` document and the database, so a skipped step can never be read as a passed one (seed 004:
the consistency review that "passed" for months while it was silently skipped).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

Status = Literal["passed", "failed", "skipped", "error"]

NO_MODEL = "no model configured"


class StepOutcome(BaseModel):
    """How one step ended. `reason` is set only for skipped, `code` only for error."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step: str
    status: Status
    reason: str | None = None
    code: str | None = None
    detail: str = ""

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if self.status == "skipped":
            if not self.reason:
                raise ValueError("a skipped step needs a reason")
            if self.code is not None:
                raise ValueError("a skipped step has no error code")
        elif self.status == "error":
            if not self.code:
                raise ValueError("an error step needs a code")
            if self.reason is not None:
                raise ValueError("an error step has no skip reason")
        elif self.reason is not None or self.code is not None:
            raise ValueError(f"a {self.status} step has neither a skip reason nor an error code")
        return self

    @classmethod
    def passed(cls, step: str, detail: str = "") -> StepOutcome:
        """The step ran and its check held."""
        return cls(step=step, status="passed", detail=detail)

    @classmethod
    def failed(cls, step: str, detail: str = "") -> StepOutcome:
        """The step ran and its check did not hold (e.g. issues remain after the repair bound)."""
        return cls(step=step, status="failed", detail=detail)

    @classmethod
    def skipped(cls, step: str, reason: str, detail: str = "") -> StepOutcome:
        """The step did not run, and says why."""
        return cls(step=step, status="skipped", reason=reason, detail=detail)

    @classmethod
    def error(cls, step: str, code: str, detail: str = "") -> StepOutcome:
        """The step could not complete (failed closed) with a stable code."""
        return cls(step=step, status="error", code=code, detail=detail)

    @property
    def label(self) -> str:
        """The one rendering used everywhere: ``passed``, ``failed``, ``skipped(reason)``, ``error(CODE)``."""
        if self.status == "skipped":
            return f"skipped({self.reason})"
        if self.status == "error":
            return f"error({self.code})"
        return self.status
