"""Context windows: how many tokens (input + output) one request to a model may hold.

`llm/data/context_windows.toml` (versioned) knows the vendors' windows per full model id; book.toml
`[context_windows]` overrides them per provider and model (``"provider:full-model-id" = tokens``). The effective
table is hashed like the price table. A model in neither has an unknown window: nothing is checked against it and
callers say so — a window is never guessed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..text import sha256_json


@cache
def _builtin() -> tuple[str, dict[str, int]]:
    raw = (resources.files("novelmuse.llm") / "data" / "context_windows.toml").read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(raw)
    return str(data["version"]), {str(k): int(v) for k, v in data.get("models", {}).items()}


@dataclass(frozen=True)
class ContextWindows:
    """Known context windows: the built-in table by model id, the book's overrides by provider and model."""

    version: str
    models: dict[str, int]  # full model id → tokens (built in)
    overrides: dict[str, int]  # "provider:full-model-id" → tokens (book.toml)
    sha256: str

    @classmethod
    def load(cls, book_overrides: dict[str, int] | None = None) -> ContextWindows:
        """The built-in table with the book's [context_windows] over it."""
        version, models = _builtin()
        overrides = dict(sorted((book_overrides or {}).items()))
        digest = sha256_json({"version": version, "models": dict(sorted(models.items())), "overrides": overrides})
        return cls(version, models, overrides, digest)

    def window(self, provider: str, model: str) -> int | None:
        """The context window of `model` at `provider`, or None when unknown."""
        return self.overrides.get(f"{provider}:{model}", self.models.get(model))
