"""The judge report: what one blind judge returns (camelCase fields as in seed 000).

Fields are deliberately loose where the contract is stricter (evidence `type` is a string, `score` a
number): a report that parses but breaks the contract gets a correction naming the exact problem
(e.g. CONTRACT_EVIDENCE_CARD_INDEX) instead of a generic schema error.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: The only evidence types a blind judge may cite; a blind input has no cards, so `card_index` is refused.
EVIDENCE_TYPES = ("candidate", "fine_outline", "oracle_assertion", "judge_inference")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvidenceRef(_Model):
    """One piece of evidence: its type and an id that exists in this blind input."""

    type: str = Field(description="one of: candidate, fine_outline, oracle_assertion, judge_inference")
    id: str = Field(description="an id from the input: a candidateId, a fine outline item id, or an assertion id")


class ScoreEntry(_Model):
    """One candidate × dimension score with its reason and a verbatim quote from that candidate."""

    candidateId: str
    dimensionId: str
    score: float
    reason: str
    candidateQuote: str
    evidenceRefs: list[EvidenceRef]


class Ranking(_Model):
    """The complete ranking of all candidates (best first) on one dimension."""

    dimensionId: str
    order: list[str]


class VerdictEntry(_Model):
    """One candidate's verdict on one oracle assertion or hard constraint."""

    candidateId: str
    targetId: str
    verdict: str = Field(description="pass or fail")
    reason: str


class JudgeReport(_Model):
    """A blind judge's whole report for one item."""

    scores: list[ScoreEntry]
    rankings: list[Ranking]
    verdicts: list[VerdictEntry]
