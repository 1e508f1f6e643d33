"""The extractor role: the fact card (事实卡) of one finalised chapter (seed 004)."""

from .schema import (
    MIN_QUOTE_CHARS,
    FactCardOutput,
    FactEvent,
    FactForeshadow,
    FactRelation,
    FactState,
    quote_problems,
)

__all__ = [
    "MIN_QUOTE_CHARS",
    "FactCardOutput",
    "FactEvent",
    "FactForeshadow",
    "FactRelation",
    "FactState",
    "quote_problems",
]
