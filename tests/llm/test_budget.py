"""Budgets: worst-case reservation before sending, settlement after, refusal before any request,
atomic accounting under concurrency, the deadline, unknown cost under a budget."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from novelmuse.book import Budget
from novelmuse.llm import (
    Message,
    ModelCallFailed,
    ModelSession,
    ProviderRequest,
    RunBudget,
    estimate_input_tokens,
    list_receipts,
)
from novelmuse.llm._budget import MESSAGE_OVERHEAD_TOKENS

from .calls import task_call
from .conftest import FakeProvider, ok_response


class Out(BaseModel):
    answer: str


MESSAGES = [Message(role="user", content="桃园结义" * 10)]
PRICES = '\n[prices."scripted-model-1"]\ninput = 1.0\noutput = 2.0\n'


def request(messages: list[Message], max_out: int = 100) -> ProviderRequest:
    return ProviderRequest("p", "m", messages, "Out", {"type": "object"}, max_out, 10.0)


@given(st.lists(st.text(max_size=200), min_size=1, max_size=5))
def test_estimator_never_below_characters_or_bytes(contents: list[str]) -> None:
    """Byte-level BPE never yields more tokens than bytes: the estimate bounds every tokenizer of that kind."""
    req = request([Message(role="user", content=c) for c in contents])
    est = estimate_input_tokens(req)
    payload = sum(len(c.encode()) for c in contents)
    assert est >= payload >= sum(len(c) for c in contents)
    assert est == payload + len(b'{"type":"object"}') + MESSAGE_OVERHEAD_TOKENS * (len(contents) + 1)


def test_reserve_and_settle_tokens() -> None:
    budget = RunBudget(Budget(max_tokens=1000))
    first = budget.reserve(600, None)
    assert not isinstance(first, str)
    refused = budget.reserve(500, None)  # 600 in flight + 500 > 1000
    assert isinstance(refused, str) and "max_tokens" in refused
    budget.settle(first, 100, None)
    assert budget.spent_tokens == 100 and budget.reserved_tokens == 0
    assert not isinstance(budget.reserve(500, None), str)


def test_unknown_usage_keeps_the_worst_case_spent() -> None:
    budget = RunBudget(Budget(max_cost=1.0))
    res = budget.reserve(100, 0.4)
    assert not isinstance(res, str)
    budget.settle(res, None, None)
    assert budget.spent_tokens == 100 and budget.spent_cost == pytest.approx(0.4)
    budget.settle(res, 1, 0.0)  # settling twice changes nothing
    assert budget.spent_tokens == 100


def test_cost_limit_and_unknown_cost() -> None:
    budget = RunBudget(Budget(max_cost=1.0))
    assert isinstance(budget.reserve(1, None), str)
    ok = budget.reserve(1, 0.9)
    assert not isinstance(ok, str)
    assert isinstance(budget.reserve(1, 0.2), str)


def test_deadline_with_a_fake_clock() -> None:
    now = [100.0]
    budget = RunBudget(Budget(deadline_s=10), clock=lambda: now[0])
    assert budget.remaining_s() == 10
    now[0] = 109.5
    assert budget.remaining_s() == pytest.approx(0.5)
    assert not isinstance(budget.reserve(1, None), str)
    now[0] = 110.0
    reason = budget.reserve(1, None)
    assert isinstance(reason, str) and "deadline" in reason
    assert RunBudget(Budget()).remaining_s() is None and not RunBudget(Budget()).has_limits


def call_once(book: Any, **open_kw: Any) -> tuple[Any, ModelSession]:
    async def go() -> tuple[Any, ModelSession]:
        async with ModelSession.open(book, run_kind="test", **open_kw) as session:
            try:
                return await session.call(task_call(role="writer", schema=Out, messages=MESSAGES)), session
            except ModelCallFailed as exc:
                return exc, session

    return asyncio.run(go())


def call_in_sequence(book: Any, n: int, **open_kw: Any) -> list[Any]:
    """`n` calls one after another in one session: each result, or the ModelCallFailed it raised."""

    async def go() -> list[Any]:
        out: list[Any] = []
        async with ModelSession.open(book, run_kind="test", **open_kw) as session:
            for _ in range(n):
                try:
                    out.append(await session.call(task_call(role="writer", schema=Out, messages=MESSAGES)))
                except ModelCallFailed as exc:
                    out.append(exc)
        return out

    return asyncio.run(go())


def test_budget_refusal_happens_before_sending(make_book: Any) -> None:
    book = make_book({"writer": [{"output": {"answer": "x"}}]}, extra_toml="\n[budget]\nmax_tokens = 500\n" + PRICES)
    result, session = call_once(book)
    assert isinstance(result, ModelCallFailed) and result.code == "BUDGET_EXCEEDED"
    assert session.provider("s").requests == []  # type: ignore[attr-defined]
    (receipt,) = list_receipts(book.db)
    assert receipt.outcome == "refused" and receipt.error_code == "BUDGET_EXCEEDED"
    assert receipt.cost == 0.0 and receipt.input_tokens == 0 and receipt.response_sha256 is None
    assert not (book.vault_dir / "leases").exists() or not any((book.vault_dir / "leases").iterdir())


def test_unknown_cost_is_refused_when_a_budget_is_set(make_book: Any) -> None:
    book = make_book(
        {"writer": [{"output": {"answer": "x"}}]}, model="no-price-model", extra_toml="\n[budget]\ndeadline_s = 60\n"
    )
    result, session = call_once(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_COST_UNKNOWN"
    assert session.provider("s").requests == []  # type: ignore[attr-defined]


def test_unknown_cost_is_allowed_without_a_budget(make_book: Any) -> None:
    book = make_book({"writer": [{"output": {"answer": "x"}}]}, model="no-price-model")
    result, _ = call_once(book)
    assert result.value.answer == "x" and result.cost is None


def test_cost_budget_admits_within_and_refuses_beyond(make_book: Any) -> None:
    # worst case of one request ≈ (est_in + 8192 max output) tokens; output at 2.0/M → about 0.017
    script = {"writer": [{"output": {"answer": "x"}}] * 3}
    book = make_book(script, extra_toml="\n[budget]\nmax_cost = 0.02\n" + PRICES)

    results = call_in_sequence(book, 3)
    # the actual spend is tiny (characters), so every call fits after settlement
    assert all(not isinstance(r, ModelCallFailed) for r in results)
    tight = make_book(script, extra_toml="\n[budget]\nmax_cost = 0.01\n" + PRICES)
    result, _ = call_once(tight)
    assert isinstance(result, ModelCallFailed) and result.code == "BUDGET_EXCEEDED"


def test_concurrent_calls_reserve_atomically(make_book: Any) -> None:
    """Three concurrent calls whose worst cases only fit two at a time: the third is refused, never sent."""
    est = estimate_input_tokens(ProviderRequest("s", "scripted-model-1", MESSAGES, "Out", _schema(), 100, 1.0))
    limit = 2 * (est + 100) + 10
    extra = f"\n[budget]\nmax_tokens = {limit}\n[calls]\nmax_output_tokens = 100\n"
    book = make_book({"writer": []}, extra_toml=extra)
    fake = FakeProvider("s", lambda req, n: ok_response(req, {"answer": "x"}, usage=None), delay_s=0.05)

    async def go() -> list[Any]:
        async with ModelSession.open(book, run_kind="test", providers={"s": fake}) as session:
            calls = [session.call(task_call(role="writer", schema=Out, messages=MESSAGES)) for _ in range(3)]
            return list(await asyncio.gather(*calls, return_exceptions=True))

    results = asyncio.run(go())
    codes = sorted(r.code for r in results if isinstance(r, ModelCallFailed))
    # usage missing → the two sent calls fail MODEL_USAGE_MISSING and keep their worst case spent
    assert codes == ["BUDGET_EXCEEDED", "MODEL_USAGE_MISSING", "MODEL_USAGE_MISSING"]
    assert len(fake.requests) == 2


def _schema() -> dict[str, Any]:
    from novelmuse.llm import strict_json_schema

    return strict_json_schema(Out)


def test_deadline_refuses_and_clips_timeouts(make_book: Any) -> None:
    book = make_book({"writer": []}, extra_toml="\n[budget]\ndeadline_s = 0.3\n" + PRICES)
    seen: list[float] = []

    def behaviour(req: ProviderRequest, n: int) -> Any:
        seen.append(req.timeout_s)
        return ok_response(req, {"answer": "x"})

    fake = FakeProvider("s", behaviour, delay_s=0.2)

    results = call_in_sequence(book, 3, providers={"s": fake})
    assert not isinstance(results[0], ModelCallFailed)
    assert seen[0] <= 0.3  # the provider's 120 s timeout is clipped to the time left
    assert isinstance(results[-1], ModelCallFailed) and results[-1].code == "BUDGET_EXCEEDED"


def test_joining_a_run_carries_its_spend(make_book: Any) -> None:
    book = make_book({"writer": [{"output": {"answer": "x"}}] * 2}, extra_toml=PRICES)
    first, session = call_once(book)
    spent = first.input_tokens + first.output_tokens

    async def go() -> RunBudget:
        async with ModelSession.open(book, run_kind="test", run_id=session.run_id) as joined:
            return joined.budget

    budget = asyncio.run(go())
    assert budget.spent_tokens == spent and budget.spent_cost == pytest.approx(first.cost)


@given(
    st.integers(0, 5000),
    st.lists(st.tuples(st.integers(1, 800), st.integers(0, 800), st.booleans()), min_size=1, max_size=40),
)
def test_reservations_never_let_the_run_exceed_its_token_limit(limit: int, ops: list[tuple[int, int, bool]]) -> None:
    """Oracle: with usage never above its reservation, spent + reserved never exceeds the limit, whatever the
    interleaving of reservations and settlements (each op reserves; every other one settles the oldest)."""
    budget = RunBudget(Budget(max_tokens=limit))
    open_: list[tuple[Any, int]] = []
    for want, used, settle_now in ops:
        res = budget.reserve(want, None)
        if isinstance(res, str):
            assert budget.spent_tokens + budget.reserved_tokens + want > limit
        else:
            open_.append((res, min(used, want)))
        if settle_now and open_:
            r, u = open_.pop(0)
            budget.settle(r, u, None)
        assert budget.spent_tokens + budget.reserved_tokens <= limit
    for r, u in open_:
        budget.settle(r, u, None)
    assert budget.reserved_tokens == 0 and budget.spent_tokens <= limit
