"""judging (see DESIGN.md layers)."""
