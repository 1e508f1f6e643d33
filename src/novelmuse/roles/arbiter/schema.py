"""The arbiter's output: a decision and its reason (persisted)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ArbiterDecision(BaseModel):
    """Keep rewriting, or accept the chapter as it is and continue."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["keep_rewriting", "accept_and_continue"]
    reason: str = Field(min_length=1)
