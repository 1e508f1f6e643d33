"""The writer's outputs: paragraph edits and rewrites for the editorial loop; chapter drafts for the write task."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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


class DeclaredFact(BaseModel):
    """A new canonical fact the chapter introduces (新增 Canonical 事实必须申报), with a verbatim quote."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["entity", "state", "relation", "ability"]
    subject: str = Field(description="the character, place or thing the fact is about")
    statement: str = Field(description="the fact, in one sentence")
    quote: str = Field(description="verbatim from the chapter text, found exactly once")


class EvidenceRequest(BaseModel):
    """A request for more context (补证): a fact to check or a way of writing to imitate."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["fact", "style"]
    target: str = Field(description="the character, thing or event the evidence is about")
    reason: str


class ChapterDraft(BaseModel):
    """The write task's answer: the chapter, its declared new facts and (optional) evidence requests."""

    model_config = ConfigDict(extra="forbid")

    text: str
    declared_facts: list[DeclaredFact]
    evidence_requests: list[EvidenceRequest]


class FinalChapterDraft(BaseModel):
    """The write task's answer when no evidence round is left: no request field at all."""

    model_config = ConfigDict(extra="forbid")

    text: str
    declared_facts: list[DeclaredFact]
