"""strict_json_schema: closed objects, all properties required, defaults dropped, references inlined."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, create_model

from novelmuse.llm import schema_sha256, strict_json_schema


class Evidence(BaseModel):
    quote: str = Field(description="verbatim")
    start: int | None = None


class Dimension(BaseModel):
    name: Literal["plot", "style"]
    score: float = Field(ge=0, le=10)
    evidence: list[Evidence]


class Judgement(BaseModel):
    dimensions: list[Dimension]
    best: Evidence | None = None
    tags: list[str] = []
    note: str = "none"


def walk(node: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(node, dict):
        out.append(node)
        for value in node.values():
            out.extend(walk(value))
    elif isinstance(node, list):
        for value in node:
            out.extend(walk(value))
    return out


def assert_strict(schema: dict[str, Any]) -> None:
    for node in walk(schema):
        assert "$ref" not in node and "$defs" not in node and "default" not in node
        if "properties" in node:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])


def test_nested_lists_optionals_literals() -> None:
    schema = strict_json_schema(Judgement)
    assert_strict(schema)
    assert schema["required"] == ["dimensions", "best", "tags", "note"]
    dim = schema["properties"]["dimensions"]["items"]
    assert dim["properties"]["name"] == {"enum": ["plot", "style"], "title": "Name", "type": "string"}
    assert dim["properties"]["evidence"]["items"]["properties"]["quote"]["description"] == "verbatim"
    best = schema["properties"]["best"]["anyOf"]
    assert best[1] == {"type": "null"} and best[0]["required"] == ["quote", "start"]
    # the pydantic model still applies its defaults when validating what a model returns
    assert Judgement.model_validate({"dimensions": []}).note == "none"


def test_the_source_schema_is_not_mutated_and_hash_is_stable() -> None:
    before = Judgement.model_json_schema()
    first = strict_json_schema(Judgement)
    assert Judgement.model_json_schema() == before
    assert schema_sha256(first) == schema_sha256(strict_json_schema(Judgement))
    assert schema_sha256(first) != schema_sha256(strict_json_schema(Dimension))


class Node(BaseModel):
    children: list[Node]


def test_recursive_models_are_refused() -> None:
    with pytest.raises(ValueError, match="recursive"):
        strict_json_schema(Node)


_leaf = st.sampled_from([int, str, float, bool, int | None, list[str], Literal["a", "b"]])


@st.composite
def models(draw: st.DrawFn, depth: int = 0) -> type[BaseModel]:
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=0, max_size=4, unique=True))
    fields: dict[str, Any] = {}
    for name in names:
        if depth < 2 and draw(st.booleans()):
            sub = draw(models(depth + 1))
            kind = draw(st.sampled_from(["plain", "list", "optional"]))
            tp: Any = sub if kind == "plain" else list[sub] if kind == "list" else sub | None  # type: ignore[valid-type]
        else:
            tp = draw(_leaf)
        fields[name] = (tp, None) if draw(st.booleans()) and tp in (int | None,) else (tp, ...)
    return create_model(f"M{depth}_{draw(st.integers(0, 10**6))}", **fields)


@settings(max_examples=60, deadline=None)
@given(models())
def test_any_generated_model_becomes_strict(model: type[BaseModel]) -> None:
    """Oracle: every object node is closed and all-required, and nothing refers outside the tree."""
    schema = strict_json_schema(model)
    assert_strict(schema)
    assert set(schema["properties"]) == set(model.model_fields)
