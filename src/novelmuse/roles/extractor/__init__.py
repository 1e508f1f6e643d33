"""The extractor role: the fact card (事实卡) of one finalised chapter (seed 004) — task `EXTRACT`."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
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

__getattr__ = lazy_getattr(__name__, __file__)

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
