"""The writer's outputs for the editorial loop."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ParagraphEdit(BaseModel):
    """One paragraph's new text, by its 0-based index in the chapter body."""

    model_config = ConfigDict(extra="forbid")

    index: int
    text: str


class ParagraphEdits(BaseModel):
    """Targeted rewrite: only the paragraphs listed change."""

    model_config = ConfigDict(extra="forbid")

    paragraphs: list[ParagraphEdit]


class ChapterRewrite(BaseModel):
    """A whole new chapter body (the editor's `rewrite` verdict)."""

    model_config = ConfigDict(extra="forbid")

    text: str
