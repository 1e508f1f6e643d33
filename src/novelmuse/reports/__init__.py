"""reports (see DESIGN.md layers)."""

from ._review import outcome_text, render_chapter, render_review_run

__all__ = ["outcome_text", "render_chapter", "render_review_run"]
