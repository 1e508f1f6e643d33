"""The call policy matrix: exact request counts, receipts and outcomes for every branch."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from novelmuse.book import Book
from novelmuse.errors import InputError
from novelmuse.llm import (
    Message,
    ModelCallFailed,
    ModelSession,
    NotConfigured,
    ProviderError,
    ProviderRequest,
    ProviderResponse,
    StructuredResult,
    Usage,
    Violation,
    list_receipts,
)
from novelmuse.llm._provider_scripted import ScriptedProvider

from .calls import task_call
from .conftest import FakeProvider, ok_response

TEXT = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。"


class Issue(BaseModel):
    quote: str
    severity: Literal["error", "warning"]


class Review(BaseModel):
    issues: list[Issue]
    summary: str


GOOD = {"issues": [{"quote": "分久必合", "severity": "warning"}], "summary": "ok"}
BAD_QUOTE = {"issues": [{"quote": "曹操大笑", "severity": "error"}], "summary": "bad"}


def quotes_found(review: Review) -> list[Violation]:
    return [
        Violation("CONTRACT_QUOTE_NOT_FOUND", f"quote {issue.quote!r} is not in the text")
        for issue in review.issues
        if issue.quote not in TEXT
    ]


MESSAGES = [Message(role="system", content="你是审稿人。"), Message(role="user", content=TEXT)]


def run_call(
    book: Book, *, contracts: Sequence[Any] = (quotes_found,), role: str = "reviewer", **open_kw: Any
) -> tuple[StructuredResult[Review] | ModelCallFailed, ModelSession]:
    async def go() -> tuple[StructuredResult[Review] | ModelCallFailed, ModelSession]:
        session = ModelSession.open(book, run_kind="test", **open_kw)
        try:
            result: StructuredResult[Review] | ModelCallFailed = await session.call(
                task_call(role=role, schema=Review, messages=MESSAGES, contracts=contracts, prompt_sha256="p" * 64)
            )
        except ModelCallFailed as exc:
            result = exc
        finally:
            await session.aclose()
        return result, session

    return asyncio.run(go())


def scripted(session: ModelSession) -> ScriptedProvider:
    provider = session.provider("s")
    assert isinstance(provider, ScriptedProvider)
    return provider


def test_first_attempt_accepted(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    assert result.value == Review.model_validate(GOOD)
    assert result.attempts == 1 and result.final_receipt.outcome == "ok"
    assert len(scripted(session).requests) == 1
    rows = list_receipts(book.db, session.run_id)
    assert [r.outcome for r in rows] == ["ok"]
    assert rows[0].provider_kind == "scripted" and rows[0].prompt_sha256 == "p" * 64
    status = book.db.execute("SELECT status FROM runs WHERE id = ?", (session.run_id,)).fetchone()[0]
    assert status == "ok"


def test_500_then_success_resends_same_input(make_book: Any) -> None:
    book = make_book({"reviewer": [{"error": {"code": "MODEL_TRANSIENT", "status": 500}}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    reqs = scripted(session).requests
    assert len(reqs) == 2
    assert reqs[0].canonical() == reqs[1].canonical()  # same input, no correction
    assert [(r.outcome, r.error_code) for r in result.receipts] == [("failed", "MODEL_TRANSIENT"), ("ok", None)]
    assert result.receipts[0].request_sha256 == result.receipts[1].request_sha256
    assert result.receipts[0].diagnostics == {"status": 500}
    assert result.cost == 0.0  # the failed request had a known cost, the model is priced (free)


def test_429_then_success(make_book: Any) -> None:
    book = make_book({"default": [{"error": {"code": "MODEL_RATE_LIMITED", "status": 429}}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    assert len(scripted(session).requests) == 2
    assert result.receipts[0].error_code == "MODEL_RATE_LIMITED"


def test_timeouts_fail_closed_after_bound(make_book: Any) -> None:
    book = make_book({"reviewer": [{"error": {"code": "MODEL_TIMEOUT"}}] * 4})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed)
    assert result.code == "MODEL_TIMEOUT" and result.exit_code == 3
    assert len(scripted(session).requests) == 3
    assert result.diagnostics["bound_reached"] is True
    assert result.diagnostics["codes"] == {"MODEL_TIMEOUT": 3}
    assert len(result.receipts) == 3
    status = book.db.execute("SELECT status FROM runs WHERE id = ?", (session.run_id,)).fetchone()[0]
    assert status == "failed"


def test_401_is_never_retried(make_book: Any) -> None:
    book = make_book({"reviewer": [{"error": {"code": "MODEL_AUTH", "status": 401}}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed)
    assert result.code == "MODEL_AUTH"
    assert len(scripted(session).requests) == 1
    assert result.diagnostics["attempts"] == 1 and result.diagnostics["bound_reached"] is False


def test_transient_with_unknown_cost_is_not_retried(make_book: Any) -> None:
    book = make_book({"reviewer": [{"error": {"code": "MODEL_TIMEOUT", "cost_known": False}}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_TIMEOUT"
    assert len(scripted(session).requests) == 1
    assert result.receipts[0].cost is None


def test_invalid_json_then_good_carries_draft_and_reason(make_book: Any) -> None:
    book = make_book({"reviewer": [{"raw_text": "{not json"}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    reqs = scripted(session).requests
    assert len(reqs) == 2
    second = reqs[1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert second[2].content == "{not json"
    assert "MODEL_OUTPUT_NOT_JSON" in second[3].content
    assert result.receipts[0].error_code == "MODEL_OUTPUT_NOT_JSON"


def test_fenced_json_is_accepted(make_book: Any) -> None:
    fenced = "```json\n" + json.dumps(GOOD, ensure_ascii=False) + "\n```"
    book = make_book({"reviewer": [{"raw_text": fenced}]})
    result, _ = run_call(book)
    assert isinstance(result, StructuredResult) and result.attempts == 1


def test_schema_invalid_then_good(make_book: Any) -> None:
    bad = {"issues": [{"quote": "分久必合", "severity": "fatal"}]}  # bad literal, missing summary
    book = make_book({"reviewer": [{"output": bad}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    correction = scripted(session).requests[1].messages[-1].content
    assert "MODEL_SCHEMA_INVALID" in correction and "summary" in correction and "issues.0.severity" in correction
    assert result.receipts[0].diagnostics == {"schema_errors": 2}


def test_truncated_draft_gets_a_correction(make_book: Any) -> None:
    book = make_book({"reviewer": [{"raw_text": '{"issues": [', "finish": "length"}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    assert result.receipts[0].error_code == "MODEL_TRUNCATED"
    assert "MODEL_TRUNCATED" in scripted(session).requests[1].messages[-1].content


def test_filtered_is_not_retried(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD, "finish": "filtered"}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_FILTERED"
    assert len(scripted(session).requests) == 1


def test_wrong_model_is_never_accepted_nor_retried(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD, "model": "scripted-model-2"}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_MISMATCH"
    assert len(scripted(session).requests) == 1
    assert result.receipts[0].resolved_model == "scripted-model-2"


def test_missing_usage_fails_closed(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD, "usage": None}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_USAGE_MISSING"
    assert len(scripted(session).requests) == 1
    assert result.receipts[0].input_tokens is None and result.receipts[0].cost is None


def test_error_flag_fails_closed(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD, "is_error": True}, {"output": GOOD}]})
    result, _ = run_call(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_ERROR_FLAG"


def test_contract_failure_then_corrected(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": BAD_QUOTE}, {"output": GOOD}]})
    result, session = run_call(book)
    assert isinstance(result, StructuredResult)
    reqs = scripted(session).requests
    assert len(reqs) == 2
    assert "曹操大笑" in reqs[1].messages[-1].content  # the exact reason reaches the model
    assert reqs[1].messages[2].content == json.dumps(BAD_QUOTE, ensure_ascii=False)  # the draft too
    first = result.receipts[0]
    assert first.error_code == "CONTRACT_QUOTE_NOT_FOUND"
    assert first.diagnostics == {"violations": {"CONTRACT_QUOTE_NOT_FOUND": 1}}
    assert "曹操" not in json.dumps(first.to_json(), ensure_ascii=False)  # codes and counts only


def test_three_contract_failures_fail_closed_after_exactly_three(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": BAD_QUOTE}] * 4})
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed)
    assert result.code == "CONTRACT_QUOTE_NOT_FOUND" and result.exit_code == 3
    assert len(scripted(session).requests) == 3
    assert result.diagnostics == {
        "attempts": 3,
        "max_attempts": 3,
        "codes": {"CONTRACT_QUOTE_NOT_FOUND": 3},
        "violations": {"CONTRACT_QUOTE_NOT_FOUND": 3},
        "counts": {},
        "bound_reached": True,
    }
    row = book.db.execute("SELECT status, error_code, attempts, diagnostics_json FROM model_calls").fetchone()
    assert tuple(row[:3]) == ("failed", "CONTRACT_QUOTE_NOT_FOUND", 3)
    assert json.loads(row[3]) == result.diagnostics
    assert "曹操" not in row[3]
    # each correction carries only the latest draft: the input does not grow per round
    assert [len(r.messages) for r in scripted(session).requests] == [2, 4, 4]


def test_bound_is_configurable(make_book: Any) -> None:
    """A configuration may lower the seeds' bound of 3 (book.toml refuses a higher one: tests/book/test_config)."""
    book = make_book({"reviewer": [{"output": BAD_QUOTE}] * 5}, extra_toml="\n[calls]\nmax_attempts = 2\n")
    result, session = run_call(book)
    assert isinstance(result, ModelCallFailed)
    assert len(scripted(session).requests) == 2


def test_script_exhausted_fails_closed(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": BAD_QUOTE}]})
    result, _ = run_call(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_SCRIPT_EXHAUSTED"
    assert [r.error_code for r in result.receipts] == ["CONTRACT_QUOTE_NOT_FOUND", "MODEL_SCRIPT_EXHAUSTED"]


def test_not_configured(make_book: Any) -> None:
    book = make_book(None)

    async def go() -> None:
        async with ModelSession.open(book, run_kind="test") as session:
            assert not session.is_configured("reviewer")
            with pytest.raises(NotConfigured) as info:
                await session.call(task_call(role="reviewer", schema=Review, messages=MESSAGES))
            assert info.value.code == "MODEL_NOT_CONFIGURED" and info.value.exit_code == 4

    asyncio.run(go())


def test_role_specific_target_wins(make_book: Any) -> None:
    book = make_book(
        {"judge": [{"output": GOOD}], "default": [{"output": GOOD}]},
        extra_toml='judge = "s:scripted-model-1"\n',
    )
    result, session = run_call(book, role="judge")
    assert isinstance(result, StructuredResult) and session.is_configured("judge")


def test_unclassified_provider_exception_fails_closed(make_book: Any) -> None:
    book = make_book({"reviewer": []})

    def boom(request: ProviderRequest, n: int) -> ProviderResponse | ProviderError:
        raise RuntimeError("socket exploded")

    fake = FakeProvider("s", boom)
    result, _ = run_call(book, providers={"s": fake})
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_PROVIDER_ERROR"
    assert len(fake.requests) == 1 and fake.closed


def test_contract_exception_is_a_bug_and_propagates(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD}]})

    def broken(review: Review) -> list[Violation]:
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        run_call(book, contracts=[broken])
    rows = list_receipts(book.db)
    assert [r.error_code for r in rows] == ["CONTRACT_ERROR"]


def test_fake_provider_exact_transport_sequence(make_book: Any) -> None:
    book = make_book({"reviewer": []})

    def behaviour(request: ProviderRequest, n: int) -> ProviderResponse | ProviderError:
        if n == 1:
            return ProviderError("MODEL_CONNECTION", "reset", transient=True, raw=b"reset")
        if n == 2:
            return ok_response(request, BAD_QUOTE)
        return ok_response(request, GOOD, usage=Usage(10, 5, cache_read_tokens=7))

    fake = FakeProvider("s", behaviour)
    result, _ = run_call(book, providers={"s": fake})
    assert isinstance(result, StructuredResult)
    assert len(fake.requests) == 3
    assert fake.requests[0].canonical() == fake.requests[1].canonical()
    assert len(fake.requests[2].messages) == 4
    assert [r.error_code for r in result.receipts] == ["MODEL_CONNECTION", "CONTRACT_QUOTE_NOT_FOUND", None]
    assert result.input_tokens == 110 and result.output_tokens == 25
    assert result.receipts[2].cache_read_tokens == 7


def test_concurrency_limit_is_honoured(make_book: Any) -> None:
    book = make_book({"reviewer": []})
    fake = FakeProvider("s", lambda req, n: ok_response(req, GOOD), max_concurrency=2, delay_s=0.02)

    async def go() -> list[StructuredResult[Review]]:
        async with ModelSession.open(book, run_kind="test", providers={"s": fake}) as session:
            calls = [session.call(task_call(role="reviewer", schema=Review, messages=MESSAGES)) for _ in range(8)]
            return list(await asyncio.gather(*calls))

    results = asyncio.run(go())
    assert len(results) == 8 and len({r.call_id for r in results}) == 8
    assert fake.max_in_flight == 2
    assert len(fake.requests) == 8


def test_concurrent_calls_all_run_in_parallel_up_to_the_limit(make_book: Any) -> None:
    book = make_book({"reviewer": []})
    fake = FakeProvider("s", lambda req, n: ok_response(req, GOOD), max_concurrency=50, delay_s=0.05)

    async def go() -> None:
        async with ModelSession.open(book, run_kind="test", providers={"s": fake}) as session:
            await asyncio.gather(
                *(session.call(task_call(role="reviewer", schema=Review, messages=MESSAGES)) for _ in range(20))
            )

    asyncio.run(go())
    assert fake.max_in_flight == 20


def test_cancellation_is_recorded_and_propagates(make_book: Any) -> None:
    book = make_book({"reviewer": []})
    fake = FakeProvider("s", lambda req, n: ok_response(req, GOOD), delay_s=5)

    async def go() -> str:
        async with ModelSession.open(book, run_kind="test", providers={"s": fake}) as session:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(session.call(task_call(role="reviewer", schema=Review, messages=MESSAGES)), 0.1)
            return session.run_id

    run_id = asyncio.run(go())
    (receipt,) = list_receipts(book.db, run_id)
    assert receipt.outcome == "failed" and receipt.error_code == "MODEL_CANCELLED"
    row = book.db.execute("SELECT status, error_code FROM model_calls").fetchone()
    assert tuple(row) == ("failed", "MODEL_CANCELLED")
    leases = list((book.vault_dir / "leases").iterdir())
    assert [p.suffix for p in leases] == [".done"]  # nothing left for recovery to treat as a crash


def test_message_list_must_not_be_empty(make_book: Any) -> None:
    book = make_book({"reviewer": [{"output": GOOD}]})

    async def go() -> None:
        async with ModelSession.open(book, run_kind="test") as session:
            await session.call(task_call(role="reviewer", schema=Review, messages=[]))

    with pytest.raises(InputError) as info:
        asyncio.run(go())
    assert info.value.code == "MODEL_NO_MESSAGES"


@given(st.text(max_size=40), st.sampled_from(["", "json", "JSON", "js on"]), st.sampled_from(["", "\n", "  \n"]))
def test_fence_stripping_against_a_naive_oracle(body: str, tag: str, pad: str) -> None:
    """Only a fence wrapping the whole reply is removed; its language tag only when it is one word."""
    from novelmuse.llm._policy import _strip_fence

    fenced = f"{pad}```{tag}\n{body}\n```{pad}"
    out = _strip_fence(fenced)
    if tag.isalnum():
        assert out == body + "\n"
    else:
        assert out == f"{tag}\n{body}\n"
    if not body.strip().startswith("```"):  # anything not wrapped in a fence is left exactly as it is
        assert _strip_fence(body) == body


def test_two_sessions_of_one_book_share_the_provider_limit(make_book: Any) -> None:
    book = make_book({"reviewer": []}, max_concurrency=2)
    fake = FakeProvider("s", lambda req, n: ok_response(req, GOOD), max_concurrency=2, delay_s=0.03)

    async def one_session() -> None:
        async with ModelSession.open(book, run_kind="test", providers={"s": fake}) as session:
            await asyncio.gather(
                *(session.call(task_call(role="reviewer", schema=Review, messages=MESSAGES)) for _ in range(4))
            )

    async def go() -> None:
        await asyncio.gather(one_session(), one_session())

    asyncio.run(go())
    assert len(fake.requests) == 8 and fake.max_in_flight == 2
