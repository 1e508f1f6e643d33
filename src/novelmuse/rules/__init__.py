"""rules (see DESIGN.md layers)."""
