"""The normalizer's output: for every unparsed rules.txt line, the structured rules it means (maybe none).

One field, `phrase`, carries the rule's words for every kind (the forbidden or fatigue phrase, or the
preference text), so one contract covers them all: it must occur verbatim in the original line.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RuleKind = Literal["forbidden", "fatigue", "preference"]
RULE_KINDS: tuple[RuleKind, ...] = ("forbidden", "fatigue", "preference")


class ProposedRule(BaseModel):
    """One structured rule; `limit` only for fatigue words (per chapter)."""

    model_config = ConfigDict(extra="forbid")

    kind: RuleKind
    phrase: str
    limit: int | None = Field(default=None)


class LineProposal(BaseModel):
    """What one original line means: zero or more rules, and the model's one-line reading of it."""

    model_config = ConfigDict(extra="forbid")

    line: int
    rules: list[ProposedRule]
    note: str = ""


class NormalizerOutput(BaseModel):
    """The normalizer's whole answer: one proposal per line it was given."""

    model_config = ConfigDict(extra="forbid")

    proposals: list[LineProposal]
