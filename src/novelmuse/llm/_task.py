"""A prepared model call and its identity: `TaskRef`, `Correction`, `TaskCall`.

`llm` sits below `roles`, so it cannot know which roles and prompts exist: a role task in `roles/` renders
every message and hands the model layer a `TaskCall`; the session runs it under the fail-closed policy and
records its `TaskRef` in the run (`run_tasks`). The model layer never builds a prompt from strings — even
the message that asks for a corrected draft is rendered by the task's `Correction`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

from ._types import Contract, Message

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class TaskRef:
    """Which role task a call used, exactly: what a run records for every call it made.

    `version` is the task's registered version; `prompt_sha256` binds the bytes of every template file the
    task renders; `schema_sha256` the strict output schema sent to the provider (empty for a task without an
    output schema of its own, such as the correction message).
    """

    role: str
    task: str
    version: int
    prompt_sha256: str
    schema_sha256: str


@dataclass(frozen=True)
class Correction:
    """How a call asks again after a draft was rejected by a local check (rendered by a role task).

    `messages(draft, reasons)` gives the messages appended to the original ones: the rejected draft as the
    assistant's turn and the exact reasons as the user's. `ref` is recorded when a correction is sent.
    """

    ref: TaskRef
    messages: Callable[[str, Sequence[str]], tuple[Message, ...]]


@dataclass(frozen=True)
class TaskCall(Generic[T]):
    """Everything one logical call needs: built only by `roles` (RoleTask.render), run by `ModelSession.call`.

    The model is the one configured for `ref.role`; `schema_name` is the output schema's name on the wire;
    `max_output_tokens` overrides `[calls] max_output_tokens` for a task that needs a tiny answer.
    """

    ref: TaskRef
    schema: type[T]
    messages: tuple[Message, ...]
    correction: Correction
    contracts: tuple[Contract[T], ...] = ()
    schema_name: str = ""
    max_output_tokens: int | None = None

    @property
    def role(self) -> str:
        """The role whose configured model answers this call."""
        return self.ref.role

    @property
    def wire_schema_name(self) -> str:
        """The schema name sent to the provider (the schema class's name unless the task names it)."""
        return self.schema_name or self.schema.__name__
