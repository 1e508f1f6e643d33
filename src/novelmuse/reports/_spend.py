"""What a run spent, in one phrase — the figures `muse cost --run` gives, an unknown cost shown as unknown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def spend_text(spent: Mapping[str, Any]) -> str:
    """``12 call(s), 3,400 in / 1,200 out, cost 0.0123`` from a run's calls, input_tokens, output_tokens, cost."""
    cost = "unknown" if spent["cost"] is None else f"{spent['cost']:.4f}"
    return f"{spent['calls']} call(s), {spent['input_tokens']:,} in / {spent['output_tokens']:,} out, cost {cost}"
