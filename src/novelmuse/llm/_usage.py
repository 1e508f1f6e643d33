"""Token counts read from provider bodies, shared by the providers that see the same shapes.

The Anthropic Messages API and the Claude CLI's JSON result both report usage as Anthropic's `usage` object
(`input_tokens` — already excluding cached input —, `output_tokens`, `cache_read_input_tokens`,
`cache_creation_input_tokens`), so one reader serves both. Kept apart from the HTTP helpers so the CLI provider
does not load an HTTP library it never uses.
"""

from __future__ import annotations

from dataclasses import fields

from ..limits import MAX_USAGE_TOKENS
from ._types import Usage


def as_int(value: object) -> int | None:
    """A count from a JSON body: an int, whatever its size or sign (bools and anything else are 'absent'). Whether
    it is a possible count is the call policy's check (`invalid_counts`), so a negative or absurd value is named
    as such (MODEL_USAGE_INVALID), never mistaken for missing usage."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def invalid_counts(usage: Usage) -> list[str]:
    """The names of the usage's token counts that no real attempt can have: negative, or over
    `limits.MAX_USAGE_TOKENS` (e.g. 10^20, which not even an SQLite INTEGER holds)."""
    return [f.name for f in fields(usage) if not 0 <= getattr(usage, f.name) <= MAX_USAGE_TOKENS]


def anthropic_usage(usage: object) -> Usage | None:
    """Anthropic's `usage` object as `Usage`; None (missing usage) unless input and output counts are present."""
    if not isinstance(usage, dict):
        return None
    n_in = as_int(usage.get("input_tokens"))
    n_out = as_int(usage.get("output_tokens"))
    if n_in is None or n_out is None:
        return None
    return Usage(
        input_tokens=n_in,
        output_tokens=n_out,
        cache_read_tokens=as_int(usage.get("cache_read_input_tokens")) or 0,
        cache_write_tokens=as_int(usage.get("cache_creation_input_tokens")) or 0,
    )
