"""editorial (see DESIGN.md layers)."""
