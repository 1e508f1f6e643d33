"""The parsed form of a rules file (seed 004's line syntax): pydantic models, so lint and show can print them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ForbiddenRule(_Frozen):
    """`禁止:` — any occurrence of the phrase is an error finding."""

    phrase: str
    line: int


class FatigueRule(_Frozen):
    """`疲劳词:` — more than `limit` occurrences in one chapter is a warning finding."""

    phrase: str
    limit: int
    line: int


class Preference(_Frozen):
    """`偏好:` — kept verbatim (the text after the colon) for injection into writing prompts."""

    text: str
    line: int


class UnparsedLine(_Frozen):
    """A line that is not clearly a rule: never dropped, never enforced; a model normaliser may read it later."""

    text: str
    line: int
    reason: str


class RuleProblem(_Frozen):
    """A syntax error, contradiction or duplicate, with every line it concerns."""

    code: str  # RULES_SYNTAX / RULES_CONTRADICTION (errors), RULES_DUPLICATE / RULES_NOT_NFC (warnings)
    severity: Severity
    message: str
    lines: tuple[int, ...]


class RuleSet(_Frozen):
    """Everything one rules file says, in file order; the first of duplicate rules is the one kept."""

    forbidden: tuple[ForbiddenRule, ...] = ()
    fatigue: tuple[FatigueRule, ...] = ()
    preferences: tuple[Preference, ...] = ()
    unparsed: tuple[UnparsedLine, ...] = ()
    problems: tuple[RuleProblem, ...] = ()

    @property
    def errors(self) -> tuple[RuleProblem, ...]:
        """Problems that make the rule set unusable (syntax errors, contradictions)."""
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[RuleProblem, ...]:
        """Problems that are reported but do not stop a check (identical duplicates, non-NFC phrases)."""
        return tuple(p for p in self.problems if p.severity == "warning")
