"""The editor's output: overall score, seven dimension scores with evidence, its own verdict, notes.

The JSON keys of the dimensions are the seed's Chinese names (设定一致性 …); Python attributes are
English aliases. The model's `verdict` is recorded beside the computed one, never used.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

DIMENSIONS: Final = ("设定一致性", "人设一致性", "节奏平衡", "叙事连贯", "伏笔健康", "钩子质量", "审美品质")
FORESHADOW_DIM: Final = "伏笔健康"


class DimScore(BaseModel):
    """One dimension: a score and a verbatim evidence quote from the chapter."""

    model_config = ConfigDict(extra="forbid")

    score: int = Field(ge=0, le=100)
    evidence: str


class EditorDims(BaseModel):
    """The seven dimensions, keyed by their Chinese names in JSON."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    setting: DimScore = Field(alias="设定一致性")
    character: DimScore = Field(alias="人设一致性")
    pacing: DimScore = Field(alias="节奏平衡")
    coherence: DimScore = Field(alias="叙事连贯")
    foreshadow: DimScore = Field(alias="伏笔健康")
    hook: DimScore = Field(alias="钩子质量")
    aesthetics: DimScore = Field(alias="审美品质")

    def by_name(self) -> dict[str, DimScore]:
        """Dimension name (Chinese, in seed order) → score and evidence."""
        dumped = {name: getattr(self, field) for field, name in _FIELD_NAMES.items()}
        return {name: dumped[name] for name in DIMENSIONS}


_FIELD_NAMES: Final = {
    name: str(info.alias) for name, info in EditorDims.model_fields.items() if info.alias is not None
}


class EditorReport(BaseModel):
    """The editor's whole answer."""

    model_config = ConfigDict(extra="forbid")

    overall: int = Field(ge=0, le=100)
    dims: EditorDims
    verdict: Literal["rewrite", "polish", "accept"]
    notes: list[str]
