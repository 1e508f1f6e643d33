"""`strict_json_schema`: a pydantic model's JSON schema in the form strict structured outputs accept.

OpenAI's strict mode (and it is harmless elsewhere) wants every object closed
(``additionalProperties: false``) with every property listed in ``required``; optional fields stay
optional by their type (``anyOf [..., {"type": "null"}]``), not by omission. ``default`` values are
dropped (strict mode rejects them; the pydantic model still applies its defaults when validating).
References are inlined, so the schema is one self-contained tree; a recursive model cannot be
inlined and is refused (no role schema is recursive). ``$ref`` siblings such as ``description``
are kept beside the inlined schema. Free-form mappings (``dict[str, X]``) keep their
``additionalProperties`` schema: strict endpoints may refuse them, so role schemas avoid them.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from ..text import sha256_json


def _inline(node: Any, defs: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise ValueError(f"unsupported $ref {ref!r}")
        name = ref.removeprefix("#/$defs/")
        if name in stack:
            raise ValueError(f"recursive schema through {name!r} cannot be made strict")
        target = _inline(copy.deepcopy(defs[name]), defs, (*stack, name))
        siblings = {k: _inline(v, defs, stack) for k, v in node.items() if k not in ("$ref", "default")}
        return {**target, **siblings}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$defs", "default"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {prop: _inline(sub, defs, stack) for prop, sub in value.items()}
        else:
            out[key] = _inline(value, defs, stack)
    if out.get("type") == "object" or "properties" in out:
        props = out.get("properties")
        if isinstance(props, dict):
            out["required"] = list(props)
            out["additionalProperties"] = False
        elif "additionalProperties" not in out:
            out["additionalProperties"] = False
    return out


@lru_cache(maxsize=256)
def cached_strict_schema(model: type[BaseModel]) -> tuple[dict[str, Any], str]:
    """(strict schema, its sha256), computed once per model class; the dict must be treated as read-only."""
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    result = _inline(schema, defs, ())
    assert isinstance(result, dict)
    return result, schema_sha256(result)


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, closed, all-required, defaults dropped and references inlined (a fresh copy)."""
    return copy.deepcopy(cached_strict_schema(model)[0])


def schema_sha256(schema: dict[str, Any]) -> str:
    """The sha256 recorded in receipts for an output schema."""
    return sha256_json(schema)


def model_schema_sha256(model: type[BaseModel]) -> str:
    """The sha256 of a model's strict schema: what receipts and task refs record as `schema_sha256`."""
    return cached_strict_schema(model)[1]
