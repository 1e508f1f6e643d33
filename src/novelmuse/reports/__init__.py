"""reports (see DESIGN.md layers)."""
