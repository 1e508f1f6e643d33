"""The WriterContext: everything the writer sees for one chapter (seed 003 step 3), and nothing else.

It is built by `novelmuse.writing` (deterministically, from the confirmed outline, the memory as of the
chapter before and the earlier chapters' raw text) and rendered here into the write task's messages. It
holds no card id, no file name, no arm letter and no retrieval-strategy word (卡只负责定位原文，writer 不读取卡
语义): facts arrive as neutral lines with a chapter pointer, raw text as excerpts tagged with their purpose.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

CONTEXT_SCHEMA_VERSION = "writer-context-v2"  # v2: `label`, the chapter named the book's way


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OutlineLine(_Frozen):
    """One item of the confirmed outline, with its constraint id (E1, R1, F-plant:x, hook, S1, T1, B1 …)."""

    id: str
    text: str


class FactLine(_Frozen):
    """A fact the text must not contradict (写得对), with its basis: ``第77章``, ``作者设定`` or ``本章细纲``."""

    text: str
    basis: str


class Excerpt(_Frozen):
    """Raw text from an earlier chapter, tagged with its purpose (empty `text`: nothing found for it)."""

    purpose: str
    text: str


class PriorChapter(_Frozen):
    """One of the chapters just before this one (连续四章); `omitted_before` when its beginning was cut."""

    chapter: int
    title: str
    text: str
    omitted_before: bool = False


class WriterContext(_Frozen):
    """The writer-visible context of one chapter."""

    schema_version: str = CONTEXT_SCHEMA_VERSION
    chapter: int
    label: str  # how the chapters before it name a chapter: 第11回 in a book of 回, else 第11章
    title: str
    scene: str  # the outline's scene type in words ("" when none)
    goal: str
    min_chars: int | None
    max_chars: int | None
    constraints: list[OutlineLine]  # hard: events, results, foreshadow operations, hook, settings, time anchors
    beats: list[OutlineLine]  # adjustable: may be split, merged and reordered
    entities: list[str]
    facts: list[FactLine]
    prior_chapters: list[PriorChapter]
    readback: list[Excerpt]  # fact evidence from earlier chapters
    style: list[Excerpt]  # style evidence: voice, action habits, ability in use, chapter-end hooks
    forbidden: list[str]
    preferences: list[str]

    def frame(self) -> WriterContext:
        """The context with every excerpt's text blanked: two arms' contexts may differ only in excerpt text
        (完整上下文只允许原文与派生 hash 不同), so their frames must be equal."""
        return self.model_copy(
            update={
                "readback": [e.model_copy(update={"text": ""}) for e in self.readback],
                "style": [e.model_copy(update={"text": ""}) for e in self.style],
            }
        )
