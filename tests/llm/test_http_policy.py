"""The fail-closed call policy over real HTTP: ModelSession → openai/anthropic provider → loopback server.

For each case the server's request counter, the receipts written and the outcome are asserted exactly, for both
the OpenAI chat-completions server and the Anthropic messages server.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest
from pydantic import BaseModel

from novelmuse.book import AnthropicProviderConfig, OpenAIProviderConfig, find_book
from novelmuse.llm import (
    Message,
    ModelCallFailed,
    ModelSession,
    StructuredResult,
    Violation,
    cost_summary,
    list_receipts,
)
from novelmuse.llm._provider_anthropic import AnthropicProvider
from novelmuse.llm._provider_openai import OpenAIProvider
from novelmuse.store import connect

from .calls import task_call
from .loopback import TRANSPORT, Kind, LoopbackServer, Reply

KEY = "sk-policy-test-KEY-9f8e7d6c5b4a"
MODEL = {"openai": "deepseek-chat", "anthropic": "claude-test-model-1"}
TEXT = "却说张飞拍马赶到关下，关上矢石如雨，不得进而回。"


class Quote(BaseModel):
    """A tiny schema with a contract: the quote must occur in TEXT."""

    quote: str


def quote_found(value: Quote) -> list[Violation]:
    if value.quote and value.quote in TEXT:
        return []
    return [Violation("CONTRACT_QUOTE_NOT_FOUND", f"quote {value.quote!r} is not in the text")]


GOOD = {"quote": "张飞拍马赶到关下"}
BAD = {"quote": "关羽温酒斩华雄"}


def write_book(
    root: Path,
    kind: Kind,
    base_url: str,
    *,
    timeout_s: float = 5.0,
    extra: str = "",
    model: str | None = None,
    max_concurrency: int = 4,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "book.toml").write_text(
        f"""[book]
title = "policy"

[providers.p]
kind = "{kind}"
base_url = "{base_url}"
api_key_env = "MUSE_TEST_HTTP_KEY"
timeout_s = {timeout_s}
max_concurrency = {max_concurrency}
transport = "{TRANSPORT["now"]}"

[roles]
default = "p:{model or MODEL[kind]}"
{extra}
""",
        encoding="utf-8",
    )
    return root


@dataclass
class Outcome:
    result: StructuredResult[Quote] | None = None
    error: ModelCallFailed | None = None
    receipts: list[tuple[int, str, str | None]] = field(default_factory=list)  # (attempt, outcome, code)


def call_once(root: Path) -> Outcome:
    book = find_book(root)
    out = Outcome()

    async def go() -> None:
        async with ModelSession.open(book, run_kind="test") as session:
            try:
                out.result = await session.call(
                    task_call(
                        "reviewer",
                        Quote,
                        [Message(role="system", content="引用原文。"), Message(role="user", content=TEXT)],
                        contracts=[quote_found],
                        prompt_sha256="0" * 64,
                    )
                )
            except ModelCallFailed as exc:
                out.error = exc

    asyncio.run(go())
    conn = connect(book.db_path)
    try:
        out.receipts = [(r.attempt, r.outcome, r.error_code) for r in list_receipts(conn)]
    finally:
        conn.close()
    return out


@pytest.fixture(params=[(k, t) for k in ("openai", "anthropic") for t in ("sdk", "http")], ids="-".join)
def kind(request: pytest.FixtureRequest) -> Iterator[Kind]:
    kind, TRANSPORT["now"] = request.param
    yield kind
    TRANSPORT["now"] = "sdk"


@pytest.fixture
def server(kind: Kind):
    with LoopbackServer(kind, default=Reply(content=GOOD)) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MUSE_TEST_HTTP_KEY", KEY)
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))


@pytest.fixture
def book_root(tmp_path: Path, kind: Kind, server: LoopbackServer) -> Path:
    return write_book(tmp_path / "book", kind, server.base_url)


def ok(out: Outcome) -> StructuredResult[Quote]:
    assert out.error is None, (out.error.code, out.error.diagnostics) if out.error else None
    assert out.result is not None
    return out.result


def failed(out: Outcome, code: str) -> ModelCallFailed:
    assert out.result is None
    assert out.error is not None
    assert out.error.code == code, (out.error.code, out.error.diagnostics)
    assert out.error.exit_code == 3
    return out.error


def test_success_first_time(server: LoopbackServer, book_root: Path) -> None:
    result = ok(call_once(book_root))
    assert result.value == Quote(**GOOD)
    assert server.count == 1
    assert result.attempts == 1


def test_500_then_success_resends_the_same_input(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(status=500))
    out = call_once(book_root)
    ok(out)
    assert server.count == 2
    assert out.receipts == [(1, "failed", "MODEL_SERVER_ERROR"), (2, "ok", None)]
    assert server.requests[0].raw == server.requests[1].raw  # no correction: the same request again


def _receipt_costs(root: Path) -> list[tuple[str | None, float | None]]:
    conn = connect(find_book(root).db_path)
    try:
        return [(r.error_code, r.cost) for r in list_receipts(conn)]
    finally:
        conn.close()


def test_a_503_with_no_price_is_resent_and_recorded_with_cost_0(
    server: LoopbackServer, tmp_path: Path, kind: Kind
) -> None:
    """Seed 000: only a failure with a trusted cost is resent. An error response bills no tokens, so its cost is
    known — 0 — whatever the price table says (here the model has no price at all); the answer that follows has an
    unknown cost (no price), and says so."""
    root = write_book(tmp_path / "unpriced", kind, server.base_url, model="unpriced-test-model-1")
    server.queue(Reply(status=503))
    out = call_once(root)
    ok(out)
    assert server.count == 2
    assert _receipt_costs(root) == [("MODEL_SERVER_ERROR", 0.0), (None, None)]


def test_a_timeout_after_sending_has_an_unknown_cost_and_is_not_resent(
    server: LoopbackServer, tmp_path: Path, kind: Kind
) -> None:
    root = write_book(tmp_path / "slow", kind, server.base_url, timeout_s=0.3)
    server.queue(Reply(delay_s=3.0))
    failed(call_once(root), "MODEL_TIMEOUT")
    assert server.count == 1
    assert _receipt_costs(root) == [("MODEL_TIMEOUT", None)]  # may have been billed: unknown, never 0


def test_429_then_success(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(status=429))
    out = call_once(book_root)
    ok(out)
    assert server.count == 2
    assert out.receipts == [(1, "failed", "MODEL_RATE_LIMITED"), (2, "ok", None)]


def test_429_three_times_fails_closed_at_the_bound(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(status=429), Reply(status=429), Reply(status=429))
    out = call_once(book_root)
    err = failed(out, "MODEL_RATE_LIMITED")
    assert server.count == 3
    assert [r[2] for r in out.receipts] == ["MODEL_RATE_LIMITED"] * 3
    assert err.diagnostics["bound_reached"] is True


def test_timeout_is_not_resent_because_its_cost_is_unknown(server: LoopbackServer, tmp_path: Path, kind: Kind) -> None:
    root = write_book(tmp_path / "slow", kind, server.base_url, timeout_s=0.3)
    server.queue(Reply(delay_s=3.0))
    out = call_once(root)
    failed(out, "MODEL_TIMEOUT")
    assert server.count == 1
    assert out.receipts == [(1, "failed", "MODEL_TIMEOUT")]


def test_connection_reset_after_sending_is_not_resent(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(drop=True))
    out = call_once(book_root)
    failed(out, "MODEL_CONNECTION")
    assert server.count == 1


def test_401_is_never_retried(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(status=401))
    out = call_once(book_root)
    assert "HTTP 401" in failed(out, "MODEL_AUTH").what  # the provider's own (content-free) account
    assert server.count == 1
    assert out.receipts == [(1, "failed", "MODEL_AUTH")]


def test_400_invalid_request_is_never_retried(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(status=400))
    failed(call_once(book_root), "MODEL_INVALID_REQUEST")
    assert server.count == 1


def test_invalid_json_output_then_corrected(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(content='{"quote": "张飞'))
    out = call_once(book_root)
    ok(out)
    assert server.count == 2
    assert out.receipts == [(1, "failed", "MODEL_OUTPUT_NOT_JSON"), (2, "ok", None)]
    second = json.dumps(server.requests[1].json, ensure_ascii=False)
    assert '{\\"quote\\": \\"张飞' in second  # the draft is carried back
    assert "MODEL_OUTPUT_NOT_JSON" in second  # with the exact reason


def test_invalid_json_response_body_fails_closed_at_once(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(invalid_json=True))
    out = call_once(book_root)
    failed(out, "MODEL_BAD_RESPONSE")
    assert server.count == 1


def test_truncated_by_length_then_corrected(server: LoopbackServer, book_root: Path, kind: Kind) -> None:
    server.queue(Reply(content='{"quote": "张', finish="length" if kind == "openai" else "max_tokens"))
    out = call_once(book_root)
    ok(out)
    assert server.count == 2
    assert out.receipts == [(1, "failed", "MODEL_TRUNCATED"), (2, "ok", None)]


def test_truncated_three_times_fails_closed(server: LoopbackServer, book_root: Path, kind: Kind) -> None:
    cut = Reply(content='{"quote": "张', finish="length" if kind == "openai" else "max_tokens")
    server.queue(cut, cut, cut)
    out = call_once(book_root)
    failed(out, "MODEL_TRUNCATED")
    assert server.count == 3


def test_wrong_model_is_never_retried(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(content=GOOD, model="some-other-model"))
    out = call_once(book_root)
    failed(out, "MODEL_MISMATCH")
    assert server.count == 1
    assert out.receipts == [(1, "failed", "MODEL_MISMATCH")]


def test_missing_usage_is_never_retried(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(content=GOOD, usage=False))
    out = call_once(book_root)
    failed(out, "MODEL_USAGE_MISSING")
    assert server.count == 1
    assert out.receipts == [(1, "failed", "MODEL_USAGE_MISSING")]


@pytest.mark.parametrize("tokens", [10**20, 2**63 - 1, 2**63, -1, 1_000_000_001])
def test_absurd_usage_fails_closed_with_the_receipt_kept(
    server: LoopbackServer, tmp_path: Path, kind: Kind, tokens: int
) -> None:
    """A token count from outside that is negative or beyond any real request (> 10^9) is MODEL_USAGE_INVALID:
    never retried, never stored as a count (an SQLite INTEGER cannot even hold 10^20), its cost unknown — and the
    receipt is kept, so `muse cost` says unknown instead of crashing or under-reporting."""
    prices = "".join(f'[prices."{m}"]\ninput = 1.0\noutput = 2.0\n' for m in MODEL.values())
    root = write_book(tmp_path / "book", kind, server.base_url, extra=prices)
    names = ("prompt_tokens", "completion_tokens") if kind == "openai" else ("input_tokens", "output_tokens")
    server.queue(Reply(content=GOOD, usage={names[0]: tokens, names[1]: 5}))
    out = call_once(root)
    failed(out, "MODEL_USAGE_INVALID")
    assert server.count == 1 and out.receipts == [(1, "failed", "MODEL_USAGE_INVALID")]
    conn = connect(root / ".muse" / "muse.db")
    try:
        (receipt,) = list_receipts(conn)
        assert receipt.input_tokens is None and receipt.output_tokens is None and receipt.cost is None
        assert receipt.response_sha256 is not None  # the raw response is kept in the vault as evidence
        summary = cost_summary(conn)
        assert summary.total.cost is None and summary.total.unknown_cost_attempts == 1
    finally:
        conn.close()


def test_schema_invalid_then_corrected(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(content={"text": "张飞"}))
    out = call_once(book_root)
    ok(out)
    assert out.receipts == [(1, "failed", "MODEL_SCHEMA_INVALID"), (2, "ok", None)]
    assert server.count == 2


def test_contract_failure_then_corrected(server: LoopbackServer, book_root: Path) -> None:
    server.queue(Reply(content=BAD), Reply(content=GOOD))
    out = call_once(book_root)
    result = ok(out)
    assert result.value.quote == GOOD["quote"]
    assert server.count == 2
    assert out.receipts == [(1, "failed", "CONTRACT_QUOTE_NOT_FOUND"), (2, "ok", None)]
    second = json.dumps(server.requests[1].json, ensure_ascii=False)
    assert "关羽温酒斩华雄" in second  # the draft and the violation's detail go into the correction


def test_three_contract_failures_fail_closed_after_exactly_three_requests(
    server: LoopbackServer, book_root: Path
) -> None:
    server.queue(Reply(content=BAD), Reply(content=BAD), Reply(content=BAD), Reply(content=GOOD))
    out = call_once(book_root)
    err = failed(out, "CONTRACT_QUOTE_NOT_FOUND")
    assert server.count == 3
    assert server.pending == 1  # the good fourth answer was never asked for
    assert out.receipts == [(i, "failed", "CONTRACT_QUOTE_NOT_FOUND") for i in (1, 2, 3)]
    assert err.diagnostics["bound_reached"] is True
    assert "关羽" not in json.dumps(err.diagnostics, ensure_ascii=False)  # codes and counts only


def test_missing_key_sends_nothing(server: LoopbackServer, book_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSE_TEST_HTTP_KEY")
    out = call_once(book_root)
    failed(out, "MODEL_KEY_MISSING")
    assert server.count == 0


def test_budget_without_price_refuses_before_sending(server: LoopbackServer, tmp_path: Path, kind: Kind) -> None:
    extra = "\n[budget]\nmax_cost = 1.0\n"
    root = write_book(tmp_path / "budget", kind, server.base_url, extra=extra, model="unpriced-model-x")
    out = call_once(root)
    failed(out, "MODEL_COST_UNKNOWN")
    assert server.count == 0
    assert out.receipts == [(1, "refused", "MODEL_COST_UNKNOWN")]


def test_priced_call_records_cost_and_hashes(server: LoopbackServer, tmp_path: Path, kind: Kind) -> None:
    model = MODEL[kind]
    extra = f'\n[prices."{model}"]\ninput = 1.0\noutput = 2.0\n\n[budget]\nmax_cost = 1.0\n'
    root = write_book(tmp_path / "priced", kind, server.base_url, extra=extra)
    usage = (
        {"prompt_tokens": 1000, "completion_tokens": 500}
        if kind == "openai"
        else {"input_tokens": 1000, "output_tokens": 500}
    )
    server.queue(Reply(content=GOOD, usage=usage))
    result = ok(call_once(root))
    receipt = result.final_receipt
    assert (receipt.input_tokens, receipt.output_tokens) == (1000, 500)
    assert receipt.cost == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1_000_000)
    assert receipt.provider_kind == kind
    assert receipt.resolved_model == model
    assert receipt.response_sha256 is not None and len(receipt.response_sha256) == 64


def test_the_key_never_reaches_db_vault_or_receipts(server: LoopbackServer, book_root: Path) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}"}}
    server.queue(Reply(status=500, error_body=echo), Reply(status=401, error_body=echo))
    out = call_once(book_root)
    err = failed(out, "MODEL_AUTH")
    assert server.count == 2
    assert server.requests[0].headers.get("authorization", "").endswith(KEY)  # it was used on the wire
    needle = KEY.encode()
    files = [p for p in (book_root / ".muse").rglob("*") if p.is_file()]
    assert any("vault" in p.parts for p in files)
    for path in files:
        assert needle not in path.read_bytes(), path
    assert KEY not in str(err) and KEY not in json.dumps(err.diagnostics)


def test_connection_refused_is_resent_up_to_the_bound(tmp_path: Path, kind: Kind) -> None:
    """Nothing was sent, so the cost is known (0) and the transient error is resent — 3 attempts, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once the socket is closed
    suffix = "/v1" if kind == "openai" else ""
    url = f"http://127.0.0.1:{port}{suffix}"
    out = call_once(write_book(tmp_path / "refused", kind, url))
    err = failed(out, "MODEL_CONNECTION")
    assert out.receipts == [(i, "failed", "MODEL_CONNECTION") for i in (1, 2, 3)]
    assert err.diagnostics["bound_reached"] is True
    # a typo'd port must not read as an outage: the one error line names the URL that refused, and the fix says
    # where that URL is configured
    line = err.render()
    assert f"connection refused at {url}" in line, line
    assert "base_url" in err.fix and "[providers.p]" in err.fix, err.fix


@pytest.mark.parametrize(
    ("cause", "said"),
    [
        (ConnectionRefusedError(111, "Connect call failed"), "connection refused at {url}"),
        (socket.gaierror(-2, "Name or service not known"), "cannot resolve the host of {url}"),
        (OSError(113, "No route to host"), "cannot connect to {url} (No route to host)"),
    ],
)
def test_a_failed_connect_names_the_url_and_why(kind: Kind, cause: OSError, said: str) -> None:
    """The SDK wraps the socket error twice (SDK error → httpx ConnectError → OSError): what the user reads is the
    socket's reason and the configured URL, never 'Connection error.' (no network: the chain is built here)."""
    url = "http://127.0.0.1:9/v1"
    connect = httpx2.ConnectError("All connection attempts failed")
    connect.__cause__ = cause
    provider: OpenAIProvider | AnthropicProvider
    if kind == "openai":
        provider = OpenAIProvider("p", OpenAIProviderConfig(kind="openai", base_url=url), Path("."))
        sdk: Exception = openai.APIConnectionError(request=httpx2.Request("POST", url))
    else:
        provider = AnthropicProvider("p", AnthropicProviderConfig(kind="anthropic", base_url=url), Path("."))
        sdk = anthropic.APIConnectionError(request=httpx2.Request("POST", url))
    sdk.__cause__ = connect
    err = provider.classify(sdk, None)
    assert (err.code, err.transient, err.cost_known) == ("MODEL_CONNECTION", True, True)
    assert said.format(url=url) in str(err), str(err)
    assert "[providers.p]" in err.fix


@pytest.mark.parametrize("limit", [2, 8])
def test_the_per_provider_concurrency_limit_holds_on_the_wire(
    server: LoopbackServer, tmp_path: Path, kind: Kind, limit: int
) -> None:
    server.default = Reply(content=GOOD, delay_s=0.15)
    book = find_book(write_book(tmp_path / f"c{limit}", kind, server.base_url, max_concurrency=limit))

    async def go() -> list[StructuredResult[Quote]]:
        async with ModelSession.open(book, run_kind="test") as session:
            messages = [Message(role="user", content=TEXT)]
            calls = (session.call(task_call("reviewer", Quote, messages, contracts=[quote_found])) for _ in range(8))
            return await asyncio.gather(*calls)

    results = asyncio.run(go())
    assert len(results) == 8 and all(r.value == Quote(**GOOD) for r in results)
    assert server.count == 8
    assert server.max_in_flight == limit  # never more than the limit, and the limit is really used


def tool_mode_book(tmp_path: Path, srv: LoopbackServer) -> Path:
    root = write_book(tmp_path / "tool", "anthropic", srv.base_url)
    toml = (root / "book.toml").read_text(encoding="utf-8")
    (root / "book.toml").write_text(toml.replace("timeout_s = ", 'structured = "tool"\ntimeout_s = '), encoding="utf-8")
    return root


def test_anthropic_tool_mode_contract_failure_then_corrected(tmp_path: Path) -> None:
    with LoopbackServer("anthropic") as srv:
        srv.queue(Reply(content=BAD), Reply(content=GOOD))
        out = call_once(tool_mode_book(tmp_path, srv))
        assert srv.count == 2
        assert all(r.json["tool_choice"]["type"] == "tool" for r in srv.requests)
    assert ok(out).value == Quote(**GOOD)
    assert out.receipts == [(1, "failed", "CONTRACT_QUOTE_NOT_FOUND"), (2, "ok", None)]


def test_anthropic_tool_mode_three_failures_fail_closed(tmp_path: Path) -> None:
    with LoopbackServer("anthropic") as srv:
        srv.queue(Reply(content={"text": "x"}), Reply(content=BAD), Reply(content=BAD), Reply(content=GOOD))
        out = call_once(tool_mode_book(tmp_path, srv))
        assert srv.count == 3
    failed(out, "CONTRACT_QUOTE_NOT_FOUND")
    assert [r[2] for r in out.receipts] == [
        "MODEL_SCHEMA_INVALID",
        "CONTRACT_QUOTE_NOT_FOUND",
        "CONTRACT_QUOTE_NOT_FOUND",
    ]


def test_a_request_over_the_models_context_is_never_sent(server: LoopbackServer, tmp_path: Path, kind: Kind) -> None:
    """book.toml [context_windows] sets the endpoint's window: a request whose input bound + output cap exceeds it
    is refused before sending (the server counts nothing), with a receipt saying so."""
    model = MODEL[kind]
    extra = f'\n[calls]\nmax_output_tokens = 64\n\n[context_windows]\n"p:{model}" = 200\n'
    out = call_once(write_book(tmp_path / "ctx", kind, server.base_url, extra=extra))
    err = failed(out, "MODEL_CONTEXT_EXCEEDED")
    assert server.count == 0
    assert out.receipts == [(1, "refused", "MODEL_CONTEXT_EXCEEDED")]
    assert f"exceeds the 200-token context of {model}" in err.what


def test_the_context_window_table_is_versioned_hashed_and_overridden_per_provider_and_model(
    tmp_path: Path, kind: Kind
) -> None:
    from novelmuse.llm import ContextWindows

    builtin = ContextWindows.load()
    assert builtin.window("any", "deepseek-chat") == 128_000 and builtin.window("any", "no-such-model") is None
    book = find_book(
        write_book(tmp_path / "o", kind, "http://127.0.0.1:9", extra='[context_windows]\n"p:deepseek-chat" = 8192\n')
    )
    mine = ContextWindows.load(book.config.context_windows)
    assert mine.window("p", "deepseek-chat") == 8192 and mine.window("other", "deepseek-chat") == 128_000
    assert mine.sha256 != builtin.sha256 and len(mine.sha256) == 64 and mine.version == builtin.version


@pytest.mark.parametrize("key", ["deepseek-chat", "nope:deepseek-chat", "p:"])
def test_a_context_window_key_must_name_a_provider_and_a_model(tmp_path: Path, kind: Kind, key: str) -> None:
    from novelmuse.errors import InputError

    root = write_book(tmp_path / "k", kind, "http://127.0.0.1:9", extra=f'[context_windows]\n"{key}" = 8192\n')
    with pytest.raises(InputError) as info:
        find_book(root)
    assert info.value.code == "CONFIG_INVALID" and "context_windows" in info.value.what
