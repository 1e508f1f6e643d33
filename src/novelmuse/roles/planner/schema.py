"""The planner's output: a draft of the book's plan (大纲 and 设定) and card drafts for its main characters and places.

Chapter ranges are the model's to choose, but they must cover the book from chapter 1 without a gap or an overlap
(volumes, and each volume's arcs inside it); foreshadows are planted and resolved inside the plan or marked open
(`resolved_chapter` null). The contract renders the draft as the plan's files and runs the book's plan lint on them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SettingTopic = Literal["world", "power", "factions", "places", "characters"]
CardKind = Literal["character", "place", "item", "faction", "concept"]


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanArc(_Item):
    """One arc of a volume: its chapter range, its main events in order and how it ends."""

    title: str
    first_chapter: int
    last_chapter: int
    events: list[str]
    result: str


class PlanVolume(_Item):
    """One volume (卷): its chapter range, what it is about and its arcs."""

    title: str
    first_chapter: int
    last_chapter: int
    summary: str
    arcs: list[PlanArc]


class PlanForeshadow(_Item):
    """A foreshadow the plan lays across chapters: planted at one, resolved at a later one (null: left open)."""

    id: str = Field(description="F- and a short pinyin or English name, e.g. F-jade-seal")
    description: str
    planted_chapter: int
    resolved_chapter: int | None


class PlanEntry(_Item):
    """One entry of a settings file: a name and what holds for it."""

    name: str
    text: str


class PlanSetting(_Item):
    """One settings file: its topic (world, power or rank system, factions, places, the main characters)."""

    topic: SettingTopic
    entries: list[PlanEntry]


class PlanCard(_Item):
    """A canon card draft for a main character, place, faction, item or concept the settings introduce."""

    name: str
    kind: CardKind
    aliases: list[str]
    description: str


class PlanDraft(BaseModel):
    """The planner's whole answer."""

    model_config = ConfigDict(extra="forbid")

    title: str
    main_line: str = Field(description="the book's main line in one or two sentences")
    volumes: list[PlanVolume]
    foreshadows: list[PlanForeshadow]
    ending: str
    settings: list[PlanSetting]
    cards: list[PlanCard]
    notes: list[str] = Field(description="for the author: assumptions made, questions to decide (at most 5)")
