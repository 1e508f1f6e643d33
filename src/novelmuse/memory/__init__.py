"""memory (see DESIGN.md layers)."""
