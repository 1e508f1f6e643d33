"""Benchmark calls of the model layer: a `TaskCall` for a benchmark schema, outside any role's registered tasks.

Services get their calls only from `roles` (RoleTask.render); the benchmarks of the model layer call it directly
with their own schemas and messages, under a test task ref (`task="test"`), with the real correction message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel

from novelmuse.llm import Contract, Message, TaskCall, TaskRef, model_schema_sha256
from novelmuse.roles import correction

T = TypeVar("T", bound=BaseModel)


def task_call(
    role: str,
    schema: type[T],
    messages: Sequence[Message],
    contracts: Sequence[Contract[T]] = (),
    prompt_sha256: str = "0" * 64,
    *,
    max_output_tokens: int | None = None,
    schema_name: str = "",
) -> TaskCall[T]:
    """A call of role `role` asking for `schema` with exactly `messages`."""
    return TaskCall(
        ref=TaskRef(role, "test", 1, prompt_sha256, model_schema_sha256(schema)),
        schema=schema,
        messages=tuple(messages),
        correction=correction(role),
        contracts=tuple(contracts),
        schema_name=schema_name,
        max_output_tokens=max_output_tokens,
    )
