"""The openai provider against a real loopback chat-completions server: one attempt = one request, classified."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from novelmuse.book import OpenAIProviderConfig
from novelmuse.llm import strict_json_schema
from novelmuse.llm._provider_openai import OpenAIProvider, parse_chat_completion, schema_name, strict_schema
from novelmuse.llm._types import Message, ProviderError, ProviderRequest, ProviderResponse
from novelmuse.llm._usage import invalid_counts

from .loopback import TRANSPORT, LoopbackServer, Reply

KEY = "sk-test-0123456789abcdefSECRET"
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


@pytest.fixture
def server(transport: str) -> Iterator[LoopbackServer]:
    with LoopbackServer("openai") as srv:
        yield srv


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", KEY)


def make_provider(base_url: str | None, **cfg: Any) -> OpenAIProvider:
    config = OpenAIProviderConfig(
        kind="openai", base_url=base_url, api_key_env="TEST_OPENAI_KEY", **{"transport": TRANSPORT["now"], **cfg}
    )
    return OpenAIProvider("ds", config, Path("."))


def make_request(timeout_s: float = 5.0, model: str = "deepseek-chat") -> ProviderRequest:
    return ProviderRequest(
        provider="ds",
        model=model,
        messages=[Message(role="system", content="你是编辑。"), Message(role="user", content="第一回")],
        schema_name="Ok Output",
        json_schema=SCHEMA,
        max_output_tokens=64,
        timeout_s=timeout_s,
    )


def send(provider: OpenAIProvider, request: ProviderRequest | None = None) -> ProviderResponse:
    async def go() -> ProviderResponse:
        try:
            return await provider.send(request or make_request())
        finally:
            await provider.aclose()

    return asyncio.run(go())


def send_error(provider: OpenAIProvider, request: ProviderRequest | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        send(provider, request)
    return info.value


def test_success_is_one_request_with_strict_json_schema(server: LoopbackServer) -> None:
    server.queue(Reply(content={"ok": True}))
    resp = send(make_provider(server.base_url))
    assert server.count == 1
    assert resp.text == '{"ok": true}'
    assert resp.resolved_model == "deepseek-chat"
    assert resp.finish == "stop"
    assert resp.usage is not None and resp.usage.input_tokens > 0 and resp.usage.output_tokens > 0
    assert json.loads(resp.raw)["object"] == "chat.completion"
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers.get("x-stainless-retry-count", "no SDK") == {"sdk": "0", "http": "no SDK"}[TRANSPORT["now"]]
    body = sent.json
    assert body["model"] == "deepseek-chat"
    assert body["max_tokens"] == 64
    assert body["messages"][0] == {"role": "system", "content": "你是编辑。"}
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "Ok_Output"
    assert fmt["json_schema"]["schema"] == {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "additionalProperties": False,
        "required": ["ok"],
    }


def test_json_object_mode_carries_the_schema_in_a_system_message(server: LoopbackServer) -> None:
    send(make_provider(server.base_url, structured="json_object"))
    body = server.requests[0].json
    assert body["response_format"] == {"type": "json_object"}
    first = body["messages"][0]
    assert first["role"] == "system" and "JSON" in first["content"]
    assert json.loads(first["content"].split("\n", 1)[1]) == SCHEMA
    assert body["messages"][1:] == [{"role": "system", "content": "你是编辑。"}, {"role": "user", "content": "第一回"}]


def test_official_endpoint_uses_max_completion_tokens() -> None:
    params = make_provider(None).build_params(make_request())
    assert params["max_completion_tokens"] == 64 and "max_tokens" not in params


def test_cached_prompt_tokens_are_split_from_input(server: LoopbackServer) -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 60}}
    server.queue(Reply(usage=usage))
    resp = send(make_provider(server.base_url))
    assert resp.usage is not None
    assert (resp.usage.input_tokens, resp.usage.cache_read_tokens, resp.usage.output_tokens) == (40, 60, 7)


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "filtered"),
        ("tool_calls", "tool_use"),
        ("x", "other"),
    ],
)
def test_finish_reason_mapping(server: LoopbackServer, finish: str, expected: str) -> None:
    server.queue(Reply(finish=finish))
    assert send(make_provider(server.base_url)).finish == expected


def test_refusal_is_filtered(server: LoopbackServer) -> None:
    body = {
        "model": "deepseek-chat",
        "choices": [{"message": {"role": "assistant", "content": None, "refusal": "no"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }
    server.queue(Reply(body=body))
    resp = send(make_provider(server.base_url))
    assert resp.finish == "filtered" and resp.text is None


def test_wrong_model_and_missing_usage_are_reported_as_seen(server: LoopbackServer) -> None:
    server.queue(Reply(model="deepseek-reasoner", usage=False))
    resp = send(make_provider(server.base_url))
    assert resp.resolved_model == "deepseek-reasoner"
    assert resp.usage is None


def test_partial_usage_counts_as_missing(server: LoopbackServer) -> None:
    server.queue(Reply(usage={"prompt_tokens": 5}))
    assert send(make_provider(server.base_url)).usage is None


@pytest.mark.parametrize(
    ("status", "code", "transient"),
    [
        (429, "MODEL_RATE_LIMITED", True),
        (500, "MODEL_SERVER_ERROR", True),
        (503, "MODEL_SERVER_ERROR", True),
        (408, "MODEL_SERVER_ERROR", True),
        (401, "MODEL_AUTH", False),
        (403, "MODEL_PERMISSION", False),
        (402, "MODEL_BILLING", False),
        (400, "MODEL_INVALID_REQUEST", False),
        (404, "MODEL_INVALID_REQUEST", False),
        (422, "MODEL_INVALID_REQUEST", False),
    ],
)
def test_status_classification_one_request_each(
    server: LoopbackServer, status: int, code: str, transient: bool
) -> None:
    server.queue(Reply(status=status))
    err = send_error(make_provider(server.base_url))
    assert server.count == 1  # the SDK's retries are off: 429/5xx are not resent underneath the policy
    assert (err.code, err.transient, err.cost_known, err.status) == (code, transient, True, status)
    assert b"loopback status" in err.raw


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
    assert (err.code, err.transient, err.cost_known) == ("MODEL_CONNECTION", True, False)
    assert server.count == 1


def test_connection_refused_sent_nothing_so_cost_is_known(transport: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    err = send_error(make_provider(f"http://127.0.0.1:{port}/v1"))
    assert (err.code, err.transient, err.cost_known) == ("MODEL_CONNECTION", True, True)


def test_invalid_json_body_is_a_bad_response_not_retried(server: LoopbackServer) -> None:
    server.queue(Reply(invalid_json=True))
    err = send_error(make_provider(server.base_url))
    assert (err.code, err.transient, err.cost_known) == ("MODEL_BAD_RESPONSE", False, False)
    assert err.raw.startswith(b'{"id"')


def test_missing_key_sends_nothing(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_OPENAI_KEY")
    err = send_error(make_provider(server.base_url))
    assert err.code == "MODEL_KEY_MISSING" and not err.transient
    assert "TEST_OPENAI_KEY" in str(err)
    assert server.count == 0


def test_empty_key_counts_as_missing(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "  ")
    assert send_error(make_provider(server.base_url)).code == "MODEL_KEY_MISSING"
    assert server.count == 0


def test_key_echoed_by_the_server_is_scrubbed(server: LoopbackServer) -> None:
    server.queue(Reply(status=401, error_body={"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    err = send_error(make_provider(server.base_url))
    assert KEY.encode() not in err.raw and b"[REDACTED]" in err.raw
    assert KEY not in str(err) and KEY not in repr(err.args)
    assert err.__cause__ is None and err.__suppress_context__


def test_key_in_a_successful_body_is_scrubbed(server: LoopbackServer) -> None:
    server.queue(Reply(content={"ok": True, "echo": KEY}))
    resp = send(make_provider(server.base_url))
    assert KEY.encode() not in resp.raw
    assert resp.text is not None and KEY not in resp.text and "[REDACTED]" in resp.text
    assert resp.usage is not None  # parsed before scrubbing


@pytest.mark.parametrize("placeholder", ["k", "ollama", "EMPTY"])
def test_placeholder_keys_are_not_scrubbed_from_ordinary_text(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, placeholder: str
) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", placeholder)  # what local servers (Ollama, vLLM) accept
    server.queue(Reply(content={"ok": True, "note": "tokens from ollama, EMPTY is fine"}))
    resp = send(make_provider(server.base_url))
    assert resp.usage is not None and resp.usage.output_tokens > 0  # "k" inside "tokens" is untouched
    assert resp.text is not None and "tokens from ollama, EMPTY is fine" in resp.text
    assert b"[REDACTED]" not in resp.raw


def test_concurrent_sends_share_one_client(server: LoopbackServer) -> None:
    server.default = Reply(delay_s=0.2)
    provider = make_provider(server.base_url)

    async def go() -> list[ProviderResponse]:
        try:
            return await asyncio.gather(*(provider.send(make_request()) for _ in range(20)))
        finally:
            await provider.aclose()

    start = time.monotonic()
    results = asyncio.run(go())
    assert len(results) == 20 and server.count == 20
    assert time.monotonic() - start < 2.0  # 20 × 0.2 s serial would be 4 s


class Inner(BaseModel):
    quote: str
    start: int | None = None


class Outer(BaseModel):
    issues: list[Inner]
    verdict: str = "ok"
    notes: dict[str, int] = {}


def test_strict_schema_closes_every_object_and_requires_every_property() -> None:
    original = Outer.model_json_schema()
    before = json.dumps(original, sort_keys=True)
    strict = strict_schema(original)
    assert json.dumps(original, sort_keys=True) == before  # not mutated
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["issues", "verdict", "notes"]
    inner = strict["$defs"]["Inner"]
    assert inner["additionalProperties"] is False and inner["required"] == ["quote", "start"]
    assert "default" not in inner["properties"]["start"]
    assert strict_schema(strict) == strict  # idempotent


def test_strict_schema_leaves_property_names_alone() -> None:
    schema = {
        "type": "object",
        "properties": {"properties": {"type": "string"}, "default": {"type": "string", "default": None}},
    }
    strict = strict_schema(schema)
    assert strict["properties"]["properties"] == {"type": "string"}
    assert strict["properties"]["default"] == {"type": "string"}
    assert strict["required"] == ["properties", "default"]


@pytest.mark.parametrize(("name", "expected"), [("Ok Output", "Ok_Output"), ("", "output"), ("审查", "__")])
def test_schema_name_is_api_safe(name: str, expected: str) -> None:
    assert schema_name(name) == expected


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
            {"choices": st.lists(st.fixed_dictionaries({"message": _json, "finish_reason": _json}), max_size=2)},
            optional={"model": _json, "usage": _json},
        ),
    )
)
def test_parse_never_crashes_on_odd_bodies(body: Any) -> None:
    raw = json.dumps(body).encode()
    try:
        resp = parse_chat_completion("ds", raw)
    except ProviderError as exc:
        assert exc.code == "MODEL_BAD_RESPONSE"
        return
    assert resp.text is None or isinstance(resp.text, str)
    assert resp.resolved_model is None or isinstance(resp.resolved_model, str)
    if resp.usage is not None:
        assert resp.usage.input_tokens >= 0 and resp.usage.cache_read_tokens >= 0


def test_strict_schema_leaves_the_call_layers_schema_unchanged() -> None:
    schema = strict_json_schema(Outer)
    assert strict_schema(schema) == schema


def test_a_changed_key_gets_a_fresh_client(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = make_provider(server.base_url)

    async def go() -> None:
        try:
            await provider.send(make_request())
            monkeypatch.setenv("TEST_OPENAI_KEY", KEY + "-rotated")
            await provider.send(make_request())
        finally:
            await provider.aclose()

    asyncio.run(go())
    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {KEY}", f"Bearer {KEY}-rotated"]


_count = st.one_of(st.integers(min_value=-3, max_value=10**7), st.none(), st.booleans(), st.text(max_size=3))


@settings(max_examples=300, deadline=None)
@given(prompt=_count, completion=_count, cached=_count, with_details=st.booleans())
def test_usage_against_a_naive_oracle(prompt: Any, completion: Any, cached: Any, with_details: bool) -> None:
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    if with_details:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    body = {"model": "m", "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}], "usage": usage}
    got = parse_chat_completion("ds", json.dumps(body).encode()).usage

    def count(v: Any) -> int | None:  # any int is read as reported; whether it is possible is the policy's check
        return v if type(v) is int else None

    p, c = count(prompt), count(completion)
    if p is None or c is None:
        assert got is None
        return
    k = 0 if not with_details or count(cached) is None else min(count(cached), p)  # type: ignore[type-var]
    assert got is not None
    expected = (p - k, c, k) if k >= 0 else (p, c, k)
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens) == expected
    assert bool(invalid_counts(got)) == (min(p, c, k) < 0)  # a negative count is MODEL_USAGE_INVALID, never missing


def test_an_explicit_official_base_url_also_uses_max_completion_tokens() -> None:
    params = make_provider("https://api.openai.com/v1").build_params(make_request())
    assert params["max_completion_tokens"] == 64 and "max_tokens" not in params


def test_any_other_sdk_failure_is_classified_without_its_message(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    if transport != "sdk":
        pytest.skip("a failure inside the SDK: the thin client has no SDK")
    import openai.resources.chat.completions.completions as completions

    async def boom(*args: Any, **kwargs: Any) -> Any:
        raise openai.OpenAIError(f"client-side check failed; body quoted {KEY}")

    monkeypatch.setattr(completions.AsyncCompletions, "create", boom)
    err = send_error(make_provider(server.base_url))
    assert (err.code, err.transient, err.cost_known) == ("MODEL_PROVIDER_ERROR", False, False)
    assert "OpenAIError" in str(err) and KEY not in str(err)
    assert server.count == 0
