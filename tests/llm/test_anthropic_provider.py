"""The anthropic provider against a real loopback Messages server: one attempt = one request, classified."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from novelmuse.book import AnthropicProviderConfig
from novelmuse.llm import strict_json_schema
from novelmuse.llm._provider_anthropic import AnthropicProvider, parse_message
from novelmuse.llm._types import Message, ProviderError, ProviderRequest, ProviderResponse

from .loopback import TRANSPORT, LoopbackServer, Reply, serving_in_subprocess

KEY = "sk-ant-test-0123456789SECRET"
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": 1}}}


@pytest.fixture
def server(transport: str) -> Iterator[LoopbackServer]:
    with LoopbackServer("anthropic") as srv:
        yield srv


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "ambient-token-must-not-be-used")


def make_provider(base_url: str | None, **cfg: Any) -> AnthropicProvider:
    config = AnthropicProviderConfig(
        kind="anthropic", base_url=base_url, api_key_env="TEST_ANTHROPIC_KEY", **{"transport": TRANSPORT["now"], **cfg}
    )
    return AnthropicProvider("claude", config, Path("."))


def make_request(timeout_s: float = 5.0, max_output_tokens: int = 64) -> ProviderRequest:
    return ProviderRequest(
        provider="claude",
        model="claude-test-model-1",
        messages=[
            Message(role="system", content="你是编辑。"),
            Message(role="user", content="第一回"),
            Message(role="assistant", content='{"ok": 1}'),
            Message(role="system", content="只输出 JSON。"),
            Message(role="user", content="fix: ok must be a boolean"),
        ],
        schema_name="Ok",
        json_schema=SCHEMA,
        max_output_tokens=max_output_tokens,
        timeout_s=timeout_s,
    )


def send(provider: AnthropicProvider, request: ProviderRequest | None = None) -> ProviderResponse:
    async def go() -> ProviderResponse:
        try:
            return await provider.send(request or make_request())
        finally:
            await provider.aclose()

    return asyncio.run(go())


def send_error(provider: AnthropicProvider, request: ProviderRequest | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        send(provider, request)
    return info.value


def test_success_is_one_request_with_output_format(server: LoopbackServer) -> None:
    server.queue(Reply(content={"ok": True, "n": 2}))
    resp = send(make_provider(server.base_url))
    assert server.count == 1
    assert json.loads(resp.text or "") == {"ok": True, "n": 2}
    assert resp.resolved_model == "claude-test-model-1"
    assert resp.finish == "stop" and not resp.is_error
    assert resp.usage is not None and resp.usage.output_tokens > 0
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    # anthropic 2.x sends the API key as a bearer token; the ambient ANTHROPIC_AUTH_TOKEN is not consulted
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers.get("x-stainless-retry-count", "no SDK") == {"sdk": "0", "http": "no SDK"}[TRANSPORT["now"]]
    body = sent.json
    assert body["model"] == "claude-test-model-1"
    assert body["max_tokens"] == 64
    assert body["system"] == "你是编辑。\n\n只输出 JSON。"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["additionalProperties"] is False
    assert "minimum" not in fmt["schema"]["properties"]["n"]  # moved into the description by the SDK


def test_max_tokens_is_capped_by_the_provider_config(server: LoopbackServer) -> None:
    send(make_provider(server.base_url, max_tokens=32), make_request(max_output_tokens=1000))
    assert server.requests[0].json["max_tokens"] == 32


def test_cache_tokens_are_read(server: LoopbackServer) -> None:
    usage = {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5}
    server.queue(Reply(usage=usage))
    u = send(make_provider(server.base_url)).usage
    assert u is not None
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (10, 4, 90, 5)


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "filtered"),
        ("tool_use", "tool_use"),
        ("pause_turn", "other"),
    ],
)
def test_stop_reason_mapping(server: LoopbackServer, stop: str, expected: str) -> None:
    server.queue(Reply(finish=stop))
    assert send(make_provider(server.base_url)).finish == expected


def test_text_blocks_are_joined_and_other_blocks_ignored(server: LoopbackServer) -> None:
    body = {
        "type": "message",
        "model": "claude-test-model-1",
        "content": [
            {"type": "thinking", "thinking": "…"},
            {"type": "text", "text": '{"ok"'},
            {"type": "text", "text": ": true}"},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    server.queue(Reply(body=body))
    assert send(make_provider(server.base_url)).text == '{"ok": true}'


def test_wrong_model_and_missing_usage_are_reported_as_seen(server: LoopbackServer) -> None:
    server.queue(Reply(model="claude-haiku-4-5", usage=False))
    resp = send(make_provider(server.base_url))
    assert resp.resolved_model == "claude-haiku-4-5" and resp.usage is None


@pytest.mark.parametrize(
    ("status", "code", "transient"),
    [
        (429, "MODEL_RATE_LIMITED", True),
        (500, "MODEL_SERVER_ERROR", True),
        (529, "MODEL_SERVER_ERROR", True),
        (401, "MODEL_AUTH", False),
        (403, "MODEL_PERMISSION", False),
        (400, "MODEL_INVALID_REQUEST", False),
        (404, "MODEL_INVALID_REQUEST", False),
        (413, "MODEL_INVALID_REQUEST", False),
    ],
)
def test_status_classification_one_request_each(
    server: LoopbackServer, status: int, code: str, transient: bool
) -> None:
    server.queue(Reply(status=status))
    err = send_error(make_provider(server.base_url))
    assert server.count == 1
    assert (err.code, err.transient, err.cost_known, err.status) == (code, transient, True, status)


def test_timeout_after_sending_is_transient_with_unknown_cost(server: LoopbackServer) -> None:
    server.queue(Reply(delay_s=3.0))
    start = time.monotonic()
    err = send_error(make_provider(server.base_url), make_request(timeout_s=0.3))
    assert time.monotonic() - start < 2.0
    assert (err.code, err.transient, err.cost_known) == ("MODEL_TIMEOUT", True, False)
    assert server.count == 1


def test_connection_reset_after_sending_has_unknown_cost(server: LoopbackServer) -> None:
    server.queue(Reply(drop=True))
    err = send_error(make_provider(server.base_url))
    assert (err.code, err.cost_known) == ("MODEL_CONNECTION", False)


def test_invalid_json_body_is_a_bad_response(server: LoopbackServer) -> None:
    server.queue(Reply(invalid_json=True))
    assert send_error(make_provider(server.base_url)).code == "MODEL_BAD_RESPONSE"


def test_missing_key_sends_nothing(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_ANTHROPIC_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ambient-key-must-not-be-used")
    err = send_error(make_provider(server.base_url))
    assert err.code == "MODEL_KEY_MISSING"
    assert server.count == 0


def test_key_echoed_by_the_server_is_scrubbed(server: LoopbackServer) -> None:
    error = {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {KEY}"}}
    server.queue(Reply(status=401, error_body=error))
    err = send_error(make_provider(server.base_url))
    assert err.code == "MODEL_AUTH"
    assert KEY.encode() not in err.raw and KEY not in str(err)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        _json,
        st.fixed_dictionaries(
            {"content": st.lists(st.one_of(_json, st.fixed_dictionaries({"type": st.just("text"), "text": _json})))},
            optional={"model": _json, "usage": _json, "stop_reason": _json, "type": _json},
        ),
    )
)
def test_parse_never_crashes_on_odd_bodies(body: Any) -> None:
    try:
        resp = parse_message("claude", json.dumps(body).encode())
    except ProviderError as exc:
        assert exc.code == "MODEL_BAD_RESPONSE"
        return
    assert resp.text is None or isinstance(resp.text, str)
    assert resp.finish in ("stop", "length", "filtered", "tool_use", "other")


def test_loopback_server_in_a_separate_process_serves_and_counts(transport: str) -> None:
    with serving_in_subprocess("anthropic", delay_s=0.01) as base_url:
        resp = send(make_provider(base_url))
        assert resp.resolved_model == "claude-test-model-1" and resp.finish == "stop"
        assert httpx2.get(f"{base_url}/_loopback/count").text == "1"


class Inner(BaseModel):
    quote: str
    start: int | None = None
    kind: Literal["plant", "resolve"] = "plant"


class Outer(BaseModel):
    issues: list[Inner]
    score: int = Field(ge=1, le=10)


def test_nested_call_layer_schema_keeps_closed_objects_and_required_fields() -> None:
    request = make_request()
    request = ProviderRequest(**{**request.__dict__, "json_schema": strict_json_schema(Outer)})
    schema = make_provider(None).build_params(request)["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False and schema["required"] == ["issues", "score"]
    inner = schema["properties"]["issues"]["items"]
    assert inner["additionalProperties"] is False and inner["required"] == ["quote", "start", "kind"]
    assert inner["properties"]["kind"]["enum"] == ["plant", "resolve"]
    assert "minimum" not in schema["properties"]["score"]  # unsupported by the API: moved into the description
    assert "1" in schema["properties"]["score"].get("description", "")


def test_tool_mode_forces_one_tool_call_with_the_schema(server: LoopbackServer) -> None:
    server.queue(Reply(content={"ok": True, "n": 3}))
    resp = send(make_provider(server.base_url, structured="tool"))
    assert server.count == 1
    body = server.requests[0].json
    assert "output_config" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "Ok"}
    (tool,) = body["tools"]
    assert tool["name"] == "Ok" and tool["input_schema"]["additionalProperties"] is False
    assert json.loads(resp.text or "") == {"ok": True, "n": 3}
    assert resp.finish == "stop"  # the forced tool call is the normal end


def test_tool_mode_truncated_and_missing_tool_call(server: LoopbackServer) -> None:
    server.queue(Reply(content={"ok": True}, finish="max_tokens"))
    assert send(make_provider(server.base_url, structured="tool")).finish == "length"
    text_only = {
        "type": "message",
        "model": "claude-test-model-1",
        "content": [{"type": "text", "text": "I would rather talk."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    server.queue(Reply(body=text_only))
    resp = send(make_provider(server.base_url, structured="tool"))
    assert (resp.text, resp.finish) == ("I would rather talk.", "stop")  # not JSON: the policy asks for a correction


def test_any_other_sdk_failure_is_classified_without_its_message(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    if transport != "sdk":
        pytest.skip("a failure inside the SDK: the thin client has no SDK")
    import anthropic
    import anthropic.resources.messages.messages as messages

    async def boom(*args: Any, **kwargs: Any) -> Any:
        raise anthropic.AnthropicError(f"client-side check failed; body quoted {KEY}")

    monkeypatch.setattr(messages.AsyncMessages, "create", boom)
    err = send_error(make_provider(server.base_url))
    assert (err.code, err.transient, err.cost_known) == ("MODEL_PROVIDER_ERROR", False, False)
    assert "AnthropicError" in str(err) and KEY not in str(err)
    assert server.count == 0
