"""llm (see DESIGN.md layers)."""
