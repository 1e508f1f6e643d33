"""roles (see DESIGN.md layers)."""
