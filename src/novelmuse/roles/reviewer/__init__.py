"""The reviewer role: consistency review of one chapter (seed 004 一致性审查) — task `REVIEW`."""

from .._reviews import StoryMemory
from ._tasks import REVIEW, ReviewRequest, quote_contract
from .schema import ISSUE_TYPES, SEVERITIES, ConsistencyReport, ReviewIssue

__all__ = [
    "ISSUE_TYPES",
    "REVIEW",
    "SEVERITIES",
    "ConsistencyReport",
    "ReviewIssue",
    "ReviewRequest",
    "StoryMemory",
    "quote_contract",
]
