"""The arbiter role: keep rewriting or accept and continue, after a rewrite still below threshold."""

from .schema import ArbiterDecision

__all__ = ["ArbiterDecision"]
