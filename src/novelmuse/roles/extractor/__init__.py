"""The extractor role: the fact card (事实卡) of one finalised chapter (seed 004) — task `EXTRACT`."""

from ._tasks import EXTRACT, ExtractRequest, quotes_found_once
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
    "EXTRACT",
    "MIN_QUOTE_CHARS",
    "ExtractRequest",
    "FactCardOutput",
    "FactEvent",
    "FactForeshadow",
    "FactRelation",
    "FactState",
    "quote_problems",
    "quotes_found_once",
]
