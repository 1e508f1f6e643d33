"""The pinned price table: `llm/data/prices.toml` with the book's `[prices]` over it (the book wins).

Prices are per million tokens. The effective table (both sources merged) is hashed with
`sha256_json`, and every receipt records that hash, so a cost can be recomputed later from the
exact table that produced it. A model without a price has an unknown cost (None), never 0.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..book import Price
from ..text import sha256_json
from ._types import Usage


@cache
def _builtin() -> tuple[str, dict[str, Price]]:
    raw = (resources.files("novelmuse.llm") / "data" / "prices.toml").read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(raw)
    models = {name: Price.model_validate(value) for name, value in data.get("models", {}).items()}
    return str(data["version"]), models


@dataclass(frozen=True)
class PriceTable:
    """Model id → price, its version and its sha256."""

    version: str
    models: dict[str, Price]
    sha256: str

    @classmethod
    def load(cls, book_prices: dict[str, Price] | None = None) -> PriceTable:
        """The built-in table with the book's prices over it."""
        version, builtin = _builtin()
        merged = {**builtin, **(book_prices or {})}
        digest = sha256_json({"version": version, "models": {k: v.model_dump() for k, v in sorted(merged.items())}})
        return cls(version, merged, digest)

    def price(self, model: str) -> Price | None:
        """The price of `model`, or None when unknown."""
        return self.models.get(model)

    def cost(self, model: str, usage: Usage | None) -> float | None:
        """Cost of one attempt; None (unknown) when the model has no price or usage is missing.

        `usage.input_tokens` is taken as the uncached input; cache reads and writes are priced at
        their own rate, falling back to the input rate when the table has none.
        """
        price = self.price(model)
        if price is None or usage is None:
            return None
        read_rate = price.cache_read if price.cache_read is not None else price.input
        write_rate = price.cache_write if price.cache_write is not None else price.input
        total = (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.cache_read_tokens * read_rate
            + usage.cache_write_tokens * write_rate
        )
        return total / 1_000_000

    def worst_case_cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Upper bound of one request's cost (input at the highest input-side rate); None if unpriced."""
        price = self.price(model)
        if price is None:
            return None
        in_rate = max(r for r in (price.input, price.cache_read, price.cache_write) if r is not None)
        return (input_tokens * in_rate + output_tokens * price.output) / 1_000_000
