"""reports (see DESIGN.md layers)."""

from ._check import check_notes, render_check, render_lint, render_show
from ._review import outcome_text, render_chapter, render_review_run, render_revision_diffs
from ._writing import render_confirm, render_context, render_outline_lint, render_outline_show, render_verify

__all__ = [
    "check_notes",
    "outcome_text",
    "render_chapter",
    "render_check",
    "render_confirm",
    "render_context",
    "render_lint",
    "render_outline_lint",
    "render_outline_show",
    "render_review_run",
    "render_revision_diffs",
    "render_show",
    "render_verify",
]
