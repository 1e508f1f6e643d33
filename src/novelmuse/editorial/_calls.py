"""How the loop reaches a model: by role, through `llm.ModelSession`, with every call id kept.

The loop never sees a provider. `Caller` wraps one session: it says whether a role is configured,
makes structured calls, and remembers the logical call ids (of successes and of failures) so the
review record can sum tokens and cost from the receipts afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel

from ..llm import Message, ModelCallFailed, ModelSession, Violation
from ..roles import PromptTemplate, load_prompt
from ..text import NormalizedText, normalize_for_match, sha256_json, split_paragraphs

T = TypeVar("T", bound=BaseModel)
Contract = Callable[[Any], list[Violation]]


@dataclass(frozen=True)
class Prompt:
    """A system template and a task template of one role, hashed together for the receipts."""

    system: PromptTemplate
    task: PromptTemplate

    @property
    def sha256(self) -> str:
        """sha256 over both templates' sha256 (what a receipt's prompt_sha256 binds)."""
        return sha256_json([self.system.sha256, self.task.sha256])

    def messages(self, system_fields: dict[str, object], task_fields: dict[str, object]) -> list[Message]:
        """The rendered system and user messages."""
        return [
            Message(role="system", content=self.system.render(**system_fields)),
            Message(role="user", content=self.task.render(**task_fields)),
        ]


def prompt(role: str, task: str) -> Prompt:
    """``roles/<role>/system.txt`` + ``roles/<role>/<task>.txt``."""
    return Prompt(load_prompt(role, "system"), load_prompt(role, task))


@lru_cache(maxsize=8)
def normalized(text: str) -> NormalizedText:
    """`normalize_for_match`, memoised: a chapter's text is located against by contracts and steps alike."""
    return normalize_for_match(text)


def numbered(body: str) -> str:
    """The chapter as ``[i] paragraph`` lines: how the writer is told which paragraph is which."""
    return "\n".join(f"[{p.index}] {p.text.strip()}" for p in split_paragraphs(body))


@dataclass
class Caller:
    """One model session seen by the loop (None = no model layer session at all)."""

    session: ModelSession | None
    call_ids: list[str] = field(default_factory=list)

    def configured(self, role: str) -> bool:
        """Whether `role` (or `default`) names a model; False → the step is skipped(no model configured)."""
        return self.session is not None and self.session.is_configured(role)

    async def call(
        self, role: str, schema: type[T], messages: list[Message], contracts: Sequence[Contract], prompt_sha256: str
    ) -> tuple[T, str]:
        """One logical call; returns the validated value and its call id, or raises ModelCallFailed."""
        assert self.session is not None
        try:
            result = await self.session.call(
                role=role, schema=schema, messages=messages, contracts=list(contracts), prompt_sha256=prompt_sha256
            )
        except ModelCallFailed as exc:
            self.remember([exc.call_id, *(r.call_id for r in exc.receipts)])
            raise
        self.remember([result.call_id])
        return result.value, result.call_id

    def remember(self, call_ids: Iterable[str | None]) -> None:
        """Keep logical call ids (each once) whose receipts the record's usage is summed from."""
        for cid in call_ids:
            if cid and cid not in self.call_ids:
                self.call_ids.append(cid)


def failed_closed(who: str, exc: ModelCallFailed) -> str:
    """A failed-closed step's detail: whose answer, what the model layer said, where (role, model, call) and the
    fix — so `muse review` can print the one error line the model layer would have printed."""
    return f"{who} failed closed: {exc.what}, {exc.where} — {exc.fix or 'see `muse calls` for the receipts'}"
