"""The editorial loop (seed 004): consistency review with bounded repair, the 7-dimension editor, the arbiter.

Hard rules run in the loop (forbidden phrases → targeted paragraph rewrite; fatigue → editor reference;
preferences → writer prompt). A finalised chapter whose file is the finalised text gets its fact card
(the `facts` step, extractor role). Every step ends as exactly one `StepOutcome`.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ..memory import MemoryContext, memory_context, previous_ending
    from ._loop import chapter_status, open_items, run_loop
    from ._models import (
        SCHEMA_VERSION,
        ArbiterOut,
        ChapterReview,
        ChapterStatus,
        ConsistencyRound,
        DimOut,
        EditorRound,
        FactsOut,
        IssueOut,
        PreflightOut,
        RejectedOut,
        RepairOut,
        UsageOut,
    )
    from ._outcomes import NO_MODEL, StepOutcome
    from ._records import find_current_review, mark_revision_applied, stored_revision
    from ._review import ApplyHook, config_sha256, review_chapter
    from ._revisions import revision_bytes
    from ._rules_step import RuleView, load_rule_view, rule_view
    from ._run import ReviewRun, RunSummary, facts_error, review_chapters
    from ._splice import assert_only_changed, changed_paragraphs, paragraph_diff, splice_paragraphs
    from ._verdict import Verdict, compute_verdict

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "NO_MODEL",
    "SCHEMA_VERSION",
    "ApplyHook",
    "ArbiterOut",
    "ChapterReview",
    "ChapterStatus",
    "ConsistencyRound",
    "DimOut",
    "EditorRound",
    "FactsOut",
    "IssueOut",
    "MemoryContext",
    "PreflightOut",
    "RejectedOut",
    "RepairOut",
    "ReviewRun",
    "RuleView",
    "RunSummary",
    "StepOutcome",
    "UsageOut",
    "Verdict",
    "assert_only_changed",
    "changed_paragraphs",
    "chapter_status",
    "compute_verdict",
    "config_sha256",
    "facts_error",
    "find_current_review",
    "load_rule_view",
    "mark_revision_applied",
    "memory_context",
    "open_items",
    "paragraph_diff",
    "previous_ending",
    "review_chapter",
    "review_chapters",
    "revision_bytes",
    "rule_view",
    "run_loop",
    "splice_paragraphs",
    "stored_revision",
]
