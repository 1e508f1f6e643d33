"""The `openai` provider: any OpenAI-compatible chat-completions endpoint through the official openai SDK.

DeepSeek, Qwen, Kimi, GLM, Ollama, vLLM and OpenAI itself speak this API; `base_url` in the provider config
points at the endpoint (none → https://api.openai.com/v1, never the SDK's `OPENAI_BASE_URL` variable).

One `send` is exactly one HTTP request: the SDK's own retries are off (`max_retries=0`) and the timeout is the
request's `timeout_s`. Structured output: `response_format={"type": "json_schema", "json_schema": {name, schema,
strict: true}}` (the schema made strict-mode friendly: closed objects, every property required), or, when the
config says `structured = "json_object"` (endpoints without json_schema support), JSON mode plus a system
message carrying the schema; either way the policy above validates the JSON against the pydantic schema.

The response is read from the raw body bytes (kept, scrubbed of the key, for the vault and the response hash)
rather than from the SDK's parsed object, so an odd body is seen exactly as it came. Token counts follow one
convention across providers: `input_tokens` excludes cached input, which is counted in `cache_read_tokens`
(OpenAI's `prompt_tokens` includes `prompt_tokens_details.cached_tokens`; it is split here).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import openai

from ..book import OpenAIProviderConfig
from ._provider_http import KeyedClient, SdkErrors, SdkProvider, bad_response, json_body, schema_name
from ._secrets import scrub, scrub_text
from ._types import Finish, ProviderRequest, ProviderResponse, Usage
from ._usage import as_int

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

_SDK_ERRORS = SdkErrors(
    status=openai.APIStatusError, timeout=openai.APITimeoutError, connection=openai.APIConnectionError
)

_FINISH: dict[str, Finish] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "filtered",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


class OpenAIProvider(SdkProvider[OpenAIProviderConfig, openai.AsyncOpenAI]):
    """One configured OpenAI-compatible endpoint (see the module docstring)."""

    kind = "openai"
    errors = _SDK_ERRORS
    base_error = openai.OpenAIError

    path = "/chat/completions"

    def __init__(self, name: str, config: OpenAIProviderConfig, book_root: Path) -> None:
        base_url = str(config.base_url or OPENAI_DEFAULT_BASE_URL)
        clients = KeyedClient(openai.AsyncOpenAI, base_url=base_url, timeout_s=config.timeout_s)
        super().__init__(name, config, book_root, clients)

    def auth_headers(self, key: str) -> dict[str, str]:
        """Bearer authentication, as the SDK sends it."""
        return {"Authorization": f"Bearer {key}", "Accept": "application/json"}

    def build_params(self, request: ProviderRequest) -> dict[str, Any]:
        """The chat-completions parameters for one request (pure: no key, no I/O)."""
        messages: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in request.messages]
        params: dict[str, Any] = {"model": request.model}
        if self.config.structured == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(request.schema_name),
                    "schema": strict_schema(request.json_schema),
                    "strict": True,
                },
            }
        else:
            schema_text = json.dumps(request.json_schema, ensure_ascii=False, sort_keys=True)
            instruction = f"Answer with one JSON object only, valid against this JSON schema:\n{schema_text}"
            messages.insert(0, {"role": "system", "content": instruction})
            params["response_format"] = {"type": "json_object"}
        params["messages"] = messages
        # api.openai.com wants max_completion_tokens (its reasoning models reject max_tokens); compatible
        # endpoints (DeepSeek, Ollama, vLLM, …) all understand max_tokens.
        official = urlparse(self.config.base_url or OPENAI_DEFAULT_BASE_URL).hostname == "api.openai.com"
        token_field = "max_completion_tokens" if official else "max_tokens"
        params[token_field] = request.max_output_tokens
        return params

    async def post(self, client: openai.AsyncOpenAI, params: dict[str, Any], timeout_s: float) -> bytes:
        """One chat-completions request; its raw body."""
        raw_response = await client.chat.completions.with_raw_response.create(**params, timeout=timeout_s)
        body: bytes = raw_response.http_response.content
        return body

    def parse(self, request: ProviderRequest, raw: bytes, key: str) -> ProviderResponse:
        """Read a chat.completion body."""
        return parse_chat_completion(self.name, raw, key)


def parse_chat_completion(provider: str, raw: bytes, key: str | None = None) -> ProviderResponse:
    """Read a chat.completion body: first choice's content, finish, model and usage (absent → None)."""
    body = json_body(provider, raw, key)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad_response(provider, raw, key, "the response has no choices")
    choice = choices[0]
    message_obj = choice.get("message")
    message: dict[str, Any] = message_obj if isinstance(message_obj, dict) else {}
    content = message.get("content")
    finish: Finish = _FINISH.get(str(choice.get("finish_reason")), "other")
    if message.get("refusal"):
        finish = "filtered"
    model = body.get("model")
    return ProviderResponse(
        text=scrub_text(content if isinstance(content, str) else None, key),
        raw=scrub(raw, key),
        resolved_model=model if isinstance(model, str) else None,
        finish=finish,
        usage=_usage(body.get("usage")),
        extra={"finish_reason": str(choice.get("finish_reason"))},
    )


def _usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    prompt = as_int(usage.get("prompt_tokens"))
    completion = as_int(usage.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    details = usage.get("prompt_tokens_details")
    cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else None
    cached = 0 if cached is None else min(cached, prompt)
    if cached < 0:  # impossible: kept as reported for the call policy to refuse (MODEL_USAGE_INVALID)
        return Usage(input_tokens=prompt, output_tokens=completion, cache_read_tokens=cached)
    return Usage(input_tokens=prompt - cached, output_tokens=completion, cache_read_tokens=cached)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` fit for strict mode: every object closed, every property required.

    Idempotent: a schema already made strict by the call layer passes through unchanged.
    """
    out = copy.deepcopy(schema)
    _strict_in_place(out)
    return out


def _strict_in_place(node: object) -> None:
    if isinstance(node, list):
        for item in node:
            _strict_in_place(item)
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    if node.get("type") == "object" or isinstance(props, dict):
        node.setdefault("additionalProperties", False)
        if isinstance(props, dict):
            node["required"] = list(props)
    if "default" in node and node["default"] is None:
        del node["default"]
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):  # name → schema maps: recurse into the schemas only
            for sub in value.values():
                _strict_in_place(sub)
        elif key not in ("enum", "const", "default", "examples", "required"):
            _strict_in_place(value)


_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
