"""The reviewer role: consistency review of one chapter (seed 004 一致性审查)."""

from .schema import ISSUE_TYPES, SEVERITIES, ConsistencyReport, ReviewIssue

__all__ = ["ISSUE_TYPES", "SEVERITIES", "ConsistencyReport", "ReviewIssue"]
