"""The `anthropic` provider: the Messages API through the official anthropic SDK.

One `send` is exactly one HTTP request: the SDK's retries are off (`max_retries=0`) and the timeout is the
request's `timeout_s` (passed explicitly, which also keeps the SDK from computing its own non-streaming timeout).
The key comes only from the configured environment variable and is passed explicitly, so the SDK consults no
other credential source (ANTHROPIC_AUTH_TOKEN, profiles); `base_url` none → https://api.anthropic.com.

Structured output uses the Messages API's own mechanism in the installed SDK (anthropic 2.x):
`output_config={"format": {"type": "json_schema", "schema": …}}`, the schema passed through the SDK's public
`anthropic.transform_schema` (which closes objects and moves unsupported constraints such as `minimum` into
descriptions — the policy above still validates the full pydantic schema). The answer is the text of the
content blocks, which is the JSON document. System messages go to the `system` parameter, in order.

Anthropic-compatible endpoints without structured outputs (several third-party gateways): `structured = "tool"`
in the provider config sends the schema as the `input_schema` of one tool and forces that tool
(`tool_choice={"type": "tool", "name": …}`); the answer is the tool call's `input`, serialised as JSON text, and
the `tool_use` stop reason of that forced call counts as a normal stop.

Finish: `end_turn`/`stop_sequence` → stop, `max_tokens`/`model_context_window_exceeded` → length,
`refusal` → filtered, `tool_use` → tool_use, anything else → other. Usage: `input_tokens` (already excludes
cached input), `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
from anthropic._constants import ANTHROPIC_API_VERSION  # the `anthropic-version` the installed SDK sends

from ..book import AnthropicProviderConfig
from ._provider_http import KeyedClient, SdkErrors, SdkProvider, bad_response, json_body, schema_name
from ._secrets import scrub, scrub_text
from ._types import Finish, ProviderRequest, ProviderResponse
from ._usage import anthropic_usage

ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"

TOOL_DESCRIPTION = "Give your answer as the input of this tool, following its input schema exactly."

_SDK_ERRORS = SdkErrors(
    status=anthropic.APIStatusError, timeout=anthropic.APITimeoutError, connection=anthropic.APIConnectionError
)

_FINISH: dict[str, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "filtered",
    "tool_use": "tool_use",
}


class AnthropicProvider(SdkProvider[AnthropicProviderConfig, anthropic.AsyncAnthropic]):
    """One configured Anthropic Messages endpoint (see the module docstring)."""

    kind = "anthropic"
    errors = _SDK_ERRORS
    base_error = anthropic.AnthropicError

    path = "/v1/messages"

    def __init__(self, name: str, config: AnthropicProviderConfig, book_root: Path) -> None:
        base_url = str(config.base_url or ANTHROPIC_DEFAULT_BASE_URL)
        clients = KeyedClient(anthropic.AsyncAnthropic, base_url=base_url, timeout_s=config.timeout_s)
        super().__init__(name, config, book_root, clients)

    def auth_headers(self, key: str) -> dict[str, str]:
        """The key and the API version, as the installed SDK sends them (anthropic 2.x: the key as a bearer token)."""
        return {
            "Authorization": f"Bearer {key}",
            "anthropic-version": ANTHROPIC_API_VERSION,
            "Accept": "application/json",
        }

    def build_params(self, request: ProviderRequest) -> dict[str, Any]:
        """The Messages API parameters for one request (pure: no key, no I/O)."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        schema = anthropic.transform_schema(request.json_schema)
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": min(request.max_output_tokens, self.config.max_tokens),
            "messages": [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"],
        }
        if self.config.structured == "tool":
            name = schema_name(request.schema_name)
            params["tools"] = [{"name": name, "description": TOOL_DESCRIPTION, "input_schema": schema}]
            params["tool_choice"] = {"type": "tool", "name": name}
        else:
            params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        if system:
            params["system"] = system
        return params

    async def post(self, client: anthropic.AsyncAnthropic, params: dict[str, Any], timeout_s: float) -> bytes:
        """One Messages request; its raw body."""
        raw_response = await client.messages.with_raw_response.create(**params, timeout=timeout_s)
        body: bytes = raw_response.http_response.content
        return body

    def parse(self, request: ProviderRequest, raw: bytes, key: str) -> ProviderResponse:
        """Read a Messages body (in tool mode, the forced tool call's input)."""
        tool = schema_name(request.schema_name) if self.config.structured == "tool" else None
        return parse_message(self.name, raw, key, tool=tool)


def parse_message(provider: str, raw: bytes, key: str | None = None, *, tool: str | None = None) -> ProviderResponse:
    """Read a Messages API body: the text blocks (or, in tool mode, the input of the forced tool call as JSON
    text), stop reason, model and usage (absent → None)."""
    body = json_body(provider, raw, key)
    if not isinstance(body.get("content"), list):
        raise bad_response(provider, raw, key, "the response is not a message with content blocks")
    texts = [
        block["text"]
        for block in body["content"]
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    text = "".join(texts) if texts else None
    stop_reason = str(body.get("stop_reason"))
    finish = _FINISH.get(stop_reason, "other")
    if tool is not None:
        calls = [
            block.get("input")
            for block in body["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == tool
        ]
        if calls:
            text = json.dumps(calls[0], ensure_ascii=False)
            if finish == "tool_use":  # the forced call is the normal end of a tool-mode answer
                finish = "stop"
    model = body.get("model")
    return ProviderResponse(
        text=scrub_text(text, key),
        raw=scrub(raw, key),
        resolved_model=model if isinstance(model, str) else None,
        finish=finish,
        usage=anthropic_usage(body.get("usage")),
        is_error=body.get("type") == "error",
        extra={"stop_reason": stop_reason},
    )
