"""The model layer's types: messages, one provider request/response, the provider interface, codes.

A *logical call* (one question to a role, with an output schema and contract checks) makes at most
`calls.max_attempts` *attempts*; each attempt is exactly one provider request and one receipt row.
Providers only translate one request into one response and classify their own failures; the call
policy (retry, correction, budget, receipts, vault) lives above them in `_policy.py`/`_session.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

Finish = Literal["stop", "length", "filtered", "tool_use", "error", "other"]
T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Violation:
    """A contract check's finding: a stable code and a detail.

    The detail goes into the correction message (and so the raw vault) only — never into receipts or
    diagnostics, which keep codes and counts.
    """

    code: str
    detail: str = ""


#: A deterministic check of a schema-valid output; its violations are sent back as a correction.
Contract = Callable[[T], list[Violation]]


class Message(BaseModel):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ProviderRequest:
    """Exactly what one attempt sends: model, messages, the output JSON schema and limits."""

    provider: str  # the provider's name in [providers]
    model: str  # the requested full model id
    messages: list[Message]
    schema_name: str
    json_schema: dict[str, Any]
    max_output_tokens: int
    timeout_s: float
    role: str = ""  # the role asking (not sent on the wire; the scripted provider serves per role)

    def canonical(self) -> dict[str, Any]:
        """The request as hashed into the receipt (no secrets are ever part of a request)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "messages": [m.model_dump() for m in self.messages],
            "schema_name": self.schema_name,
            "json_schema": self.json_schema,
            "max_output_tokens": self.max_output_tokens,
        }


@dataclass(frozen=True)
class Usage:
    """Tokens one attempt used, as the provider reported them.

    One convention across providers: `input_tokens` excludes cached input, which is counted in
    `cache_read_tokens` / `cache_write_tokens`; each is priced at its own rate (`_prices`).
    """

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass
class ProviderResponse:
    """What one attempt got back, before the policy judges it.

    `text` is the model's structured output as JSON text (parsed and validated by the policy).
    `raw` is the transport-level body as received, for the vault and the response hash.
    """

    text: str | None
    raw: bytes
    resolved_model: str | None
    finish: Finish
    usage: Usage | None
    is_error: bool = False
    sandbox: str | None = None  # claude-cli: "bwrap" / "sandbox-exec" / "none"
    extra: dict[str, Any] = field(default_factory=dict)  # non-sensitive facts worth a receipt (e.g. exit code)


class ProviderError(Exception):
    """A failed attempt classified by the provider.

    `code` is a stable code (MODEL_TRANSIENT, MODEL_TIMEOUT, MODEL_AUTH, MODEL_INVALID_REQUEST, …);
    `transient` says whether resending the same input may succeed; `cost_known` whether the failed
    attempt's cost is accounted (a transient error is only retried when it is); `fix`, when set, says how to fix
    it for this provider (e.g. which `base_url` refused the connection); `sandbox` the boundary the attempt's
    process ran in (claude-cli: bwrap / sandbox-exec / none), recorded in its receipt.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        transient: bool = False,
        cost_known: bool = True,
        raw: bytes = b"",
        status: int | None = None,
        fix: str = "",
    ):
        super().__init__(message)
        self.code = code
        self.transient = transient
        self.cost_known = cost_known
        self.raw = raw
        self.status = status
        self.fix = fix  # how to fix it, when the provider knows better than the code's generic fix
        self.sandbox: str | None = None


class Provider(Protocol):
    """One way of reaching a model. `send` makes exactly one request (the SDK's own retries are off)."""

    name: str
    kind: str
    max_concurrency: int

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        """Send one request; raise ProviderError for a classified failure."""
        ...

    async def aclose(self) -> None:
        """Release connections and temporary resources."""
        ...
