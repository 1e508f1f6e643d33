"""The judge role: blind scoring prompts (one per rubric profile) and the judge report's output schema.

The report uses the seed's camelCase field names. Its contract (coverage, ranges, verbatim quotes,
evidence ids) is checked by `novelmuse.judging`, which owns the rubric and the blind input.
"""

from ._schema import EVIDENCE_TYPES, EvidenceRef, JudgeReport, Ranking, ScoreEntry, VerdictEntry

__all__ = ["EVIDENCE_TYPES", "EvidenceRef", "JudgeReport", "Ranking", "ScoreEntry", "VerdictEntry"]
