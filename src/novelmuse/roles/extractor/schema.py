"""The extractor's output: a fact card (事实卡, seed 004) of one finalised chapter.

Four lists — timeline events (with the cards that act or speak in them), foreshadow operations
(plant / advance / resolve, with ids), relationship changes and state changes (death, location,
possession, …). Every item carries a verbatim quote that must be found exactly once in the chapter
(`quote_problems`, the call's contract); its offsets are stored. Nothing here is trusted beyond its
structure: the memory layer validates every item deterministically afterwards.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...text import NormalizedText, locate_quote, normalize_for_match

#: The least number of characters (after normalisation) of a source quote: shorter quotes locate nothing.
MIN_QUOTE_CHARS = 4


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    quote: str = Field(description="verbatim from the chapter, found exactly once, at least 4 characters")


class FactEvent(_Item):
    """A timeline event; `actors` are the cards that act or speak in it (not those merely named)."""

    summary: str
    actors: list[str]


class FactForeshadow(_Item):
    """A foreshadow operation: plant 埋设, advance 强化, resolve 回收."""

    op: Literal["plant", "advance", "resolve"]
    id: str
    description: str
    payoff_chapter: int | None


class FactRelation(_Item):
    """A relationship that starts or ends in this chapter."""

    source: str
    target: str
    relation: str
    change: Literal["start", "end"]


class FactState(_Item):
    """A state change of one card: `status` (alive/dead), `location`, `possession`, …"""

    entity: str
    attribute: str
    value: str


class FactCardOutput(BaseModel):
    """The extractor's whole answer for one chapter."""

    model_config = ConfigDict(extra="forbid")

    events: list[FactEvent]
    foreshadows: list[FactForeshadow]
    relations: list[FactRelation]
    states: list[FactState]

    def items(self) -> list[tuple[str, int, _Item]]:
        """Every item as (kind, index within its list, item), in a fixed order."""
        out: list[tuple[str, int, _Item]] = []
        for kind, items in (
            ("event", self.events),
            ("foreshadow", self.foreshadows),
            ("relation", self.relations),
            ("state", self.states),
        ):
            out.extend((kind, i, item) for i, item in enumerate(items))
        return out


def quote_problems(body: str | NormalizedText, output: FactCardOutput) -> list[tuple[str, str]]:
    """(code, detail) for every item whose quote is not found exactly once in the chapter body.

    Codes are `text.QUOTE_ERROR_CODES` (CONTRACT_QUOTE_NOT_FOUND / _NOT_UNIQUE / _TOO_SHORT / _EMPTY);
    the detail names the item, for the correction message only.
    """
    norm = body if isinstance(body, NormalizedText) else normalize_for_match(body)
    out: list[tuple[str, str]] = []
    for kind, i, item in output.items():
        m = locate_quote(norm, item.quote, min_chars=MIN_QUOTE_CHARS)
        if not m.ok:
            code = m.error_code or "CONTRACT_QUOTE_NOT_FOUND"
            reason = {
                "CONTRACT_QUOTE_NOT_FOUND": "is not in the chapter text",
                "CONTRACT_QUOTE_NOT_UNIQUE": f"occurs {m.occurrences}+ times; quote a longer, unique passage",
                "CONTRACT_QUOTE_TOO_SHORT": f"is shorter than {MIN_QUOTE_CHARS} characters",
                "CONTRACT_QUOTE_EMPTY": "is empty",
            }[code]
            out.append((code, f"{kind}s[{i}].quote {item.quote[:40]!r} {reason}"))
    return out
