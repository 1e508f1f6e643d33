"""The judge role: blind scoring tasks (`TASKS[profile]`, one per rubric profile) and the judge report's schema.

The report uses the seed's camelCase field names (the model answers in them). Its contract (coverage, ranges,
verbatim quotes, evidence ids) is checked by `novelmuse.judging`, which owns the rubric and the blind input.
"""

from ._schema import EVIDENCE_TYPES, EvidenceRef, JudgeReport, Ranking, ScoreEntry, VerdictEntry
from ._tasks import PROFILES, TASKS, ScoreRequest

__all__ = [
    "EVIDENCE_TYPES",
    "PROFILES",
    "TASKS",
    "EvidenceRef",
    "JudgeReport",
    "Ranking",
    "ScoreEntry",
    "ScoreRequest",
    "VerdictEntry",
]
