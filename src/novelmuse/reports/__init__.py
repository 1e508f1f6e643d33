"""reports (see DESIGN.md layers)."""

from ._check import check_notes, render_check, render_lint, render_show
from ._review import outcome_text, render_chapter, render_review_run, render_revision_diffs

__all__ = [
    "check_notes",
    "outcome_text",
    "render_chapter",
    "render_check",
    "render_lint",
    "render_review_run",
    "render_revision_diffs",
    "render_show",
]
