"""The outliner's output: the draft fine outline (细纲) of one chapter, in the shape of a version-2 outline.

Ids are not the model's to choose: hard events, beats, settings and anchors get ``E1…``, ``B1…``, ``S1…``,
``T1…`` by position (`OutlineDraft.to_outline`), so the draft always has the constraint-id shape the writer,
the detector and the judges share. Foreshadow ids are the ledger's (advance / resolve) or new (plant).
Each hard event names the material it follows (`basis`: the labels of the input, empty when invented), and
`notes` tell the author what the draft assumed or needs decided — neither is part of the outline itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...book import FineOutline, SceneType


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DraftEvent(_Item):
    """A hard event (硬事件) and its result, which the writer may not change."""

    text: str
    result: str
    basis: list[str] = Field(description="labels of the material it follows (P1…, a foreshadow id, 上章); [] if new")


class DraftBeat(_Item):
    """An adjustable beat (可调节拍)."""

    text: str


class DraftForeshadow(_Item):
    """A foreshadow operation: plant 埋设 (new id), advance 强化 / resolve 回收 (an active ledger id)."""

    op: Literal["plant", "advance", "resolve"]
    id: str
    description: str = Field(description="what is planted (plant only; empty otherwise)")
    payoff_chapter: int | None = Field(description="plant only: the chapter it is paid off by; null otherwise")
    note: str = Field(description="how it is advanced or resolved (may be empty)")


class DraftSetting(_Item):
    """A new-setting declaration (新设定声明)."""

    kind: Literal["entity", "state", "relation", "ability"]
    text: str
    entities: list[str]


class DraftAnchor(_Item):
    """A time anchor; `marker` is a phrase the chapter text must contain ("" when none)."""

    text: str
    marker: str


class OutlineDraft(BaseModel):
    """The outliner's whole answer for one chapter."""

    model_config = ConfigDict(extra="forbid")

    title: str
    scene_type: SceneType
    goal: str
    hard_events: list[DraftEvent]
    beats: list[DraftBeat]
    foreshadows: list[DraftForeshadow]
    hook: str
    new_settings: list[DraftSetting]
    time_anchors: list[DraftAnchor]
    entities: list[str]
    notes: list[str] = Field(description="for the author: assumptions made, questions to decide (at most 5)")

    def outline_data(self, chapter: int) -> dict[str, Any]:
        """The version-2 outline of `chapter` as plain data (ids by position; basis and notes left out)."""
        data: dict[str, Any] = {"version": 2, "chapter": chapter, "title": self.title, "scene_type": self.scene_type}
        data["goal"] = self.goal
        data["hard_events"] = [{"id": f"E{i}", "text": e.text, "result": e.result} for i, e in _n(self.hard_events)]
        data["beats"] = [{"id": f"B{i}", "text": b.text} for i, b in _n(self.beats)]
        foreshadows: list[dict[str, Any]] = []
        for f in self.foreshadows:
            item: dict[str, Any] = {"op": f.op, "id": f.id}
            if f.op == "plant":
                item["description"] = f.description
                if f.payoff_chapter is not None:
                    item["payoff_chapter"] = f.payoff_chapter
            if f.note.strip():
                item["note"] = f.note
            foreshadows.append(item)
        data["foreshadows"] = foreshadows
        data["hook"] = self.hook
        data["new_settings"] = [
            {"id": f"S{i}", "kind": s.kind, "text": s.text, "entities": list(s.entities)}
            for i, s in _n(self.new_settings)
        ]
        data["time_anchors"] = [
            {"id": f"T{i}", "text": t.text, **({"marker": t.marker} if t.marker.strip() else {})}
            for i, t in _n(self.time_anchors)
        ]
        data["entities"] = list(self.entities)
        return data

    def to_outline(self, chapter: int) -> FineOutline:
        """The draft as a validated version-2 `FineOutline` of `chapter` (pydantic ValidationError otherwise)."""
        return FineOutline.model_validate(self.outline_data(chapter))


def _n(items: list[Any]) -> list[tuple[int, Any]]:
    return [(i + 1, x) for i, x in enumerate(items)]
