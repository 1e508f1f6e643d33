"""The arbiter role: keep rewriting or accept and continue, after a rewrite still below threshold — task `DECIDE`."""

from ._tasks import DECIDE, MAX_DIFF_CHARS, ArbiterRequest
from .schema import ArbiterDecision

__all__ = ["DECIDE", "MAX_DIFF_CHARS", "ArbiterDecision", "ArbiterRequest"]
