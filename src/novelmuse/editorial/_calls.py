"""How the loop reaches a model: a role task's call, through `llm.ModelSession`, with every call id and task kept.

The loop never sees a provider and never builds a message: each step renders its role task's request
(`roles.<role>.<TASK>.render(request)`) and hands the call to the `Caller`. The `Caller` wraps the session the
entry point opened: it says whether a role is configured, makes the call, and remembers the logical call ids
(of successes and of failures, so the review record can sum tokens and cost from the receipts) and the role
tasks the calls used (the review's resume key).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from ..llm import ModelCallFailed, ModelSession, TaskCall, TaskRef

T = TypeVar("T", bound=BaseModel)


@dataclass
class Caller:
    """One model session seen by the loop (None = no model layer session at all)."""

    session: ModelSession | None
    call_ids: list[str] = field(default_factory=list)
    tasks: list[TaskRef] = field(default_factory=list)

    def configured(self, role: str) -> bool:
        """Whether `role` (or `default`) names a model; False → the step is skipped(no model configured)."""
        return self.session is not None and self.session.is_configured(role)

    async def call(self, task: TaskCall[T]) -> tuple[T, str]:
        """One logical call; returns the validated value and its call id, or raises ModelCallFailed."""
        assert self.session is not None
        try:
            result = await self.session.call(task)
        except ModelCallFailed as exc:
            self.remember([exc.call_id, *(r.call_id for r in exc.receipts)], exc.tasks)
            raise
        self.remember([result.call_id], result.tasks)
        return result.value, result.call_id

    def remember(self, call_ids: Iterable[str | None], tasks: Iterable[TaskRef] = ()) -> None:
        """Keep logical call ids and the tasks they used (each once), in order."""
        for cid in call_ids:
            if cid and cid not in self.call_ids:
                self.call_ids.append(cid)
        for ref in tasks:
            if ref not in self.tasks:
                self.tasks.append(ref)


def failed_closed(who: str, exc: ModelCallFailed) -> str:
    """A failed-closed step's detail: whose answer, what the model layer said, where (role, model, call) and the
    fix — so `muse review` can print the one error line the model layer would have printed."""
    return f"{who} failed closed: {exc.what}, {exc.where} — {exc.fix or 'see `muse calls` for the receipts'}"
