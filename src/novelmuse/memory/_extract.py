"""Fact-card extraction through the extractor role (seed 004 事实卡).

One logical model call per chapter (task `roles.extractor.EXTRACT`): the prompt lists the known cards and the
active foreshadows before the chapter (`extraction_context`), then the chapter text. The call's contract
requires every item's quote to be found exactly once in the chapter (`roles.extractor.quote_problems`): a
violation is sent back as a correction and, after the call budget (`calls.max_attempts`), the call fails
closed (ModelCallFailed, exit 3) — never a default card. The accepted output is stored bound to the chapter's
sha256 and the accepted attempt's receipt, then validated deterministically (rejected items are returned,
never dropped). Before a sync makes its calls, `plan_extraction` says how many and what they cost at most.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..book import Book, Chapter, read_chapter_file
from ..llm import Bill, ModelSession
from ..roles.extractor import EXTRACT, ExtractRequest
from ._cards import CardSet, load_cards
from ._context import extraction_context
from ._facts import FactCard, store_fact_card
from ._replay import FactValidation, MemoryCursor


@dataclass(frozen=True)
class FactCardResult:
    """A stored fact card, its deterministic validation, and what the call cost."""

    chapter: int
    fact_card: FactCard
    validation: FactValidation
    call_id: str
    receipt_ids: list[str]
    attempts: int
    input_tokens: int
    output_tokens: int
    cost: float | None


def _read(book: Book, cursor: MemoryCursor | None, n: int) -> Chapter:
    path = cursor.paths.get(n) if cursor is not None else None
    return read_chapter_file(n, path) if path is not None else book.read_chapter(n)  # CHAPTER_NOT_FOUND


def extract_request(
    book: Book, chapter_number: int, cards: CardSet, *, cursor: MemoryCursor | None = None, advance: bool = True
) -> ExtractRequest:
    """The extractor's request for one chapter (deterministic: same files → same request, same messages).
    `cursor`: the memory replayed in chapter order (`muse sync` keeps one for all its chapters); `advance=False`
    leaves it where the caller put it (see `extract_in_order`)."""
    chapter = _read(book, cursor, chapter_number)
    context = extraction_context(book, chapter_number, cards, cursor=cursor, advance=advance)
    return ExtractRequest(
        chapter=chapter_number,
        title=chapter.heading or book.chapter_label(chapter_number),
        chapter_text=chapter.body,
        known_cards=[line.text for line in context.known_cards],
        open_foreshadows=[line.text for line in context.open_foreshadows],
        max_plants=book.config.memory.max_plants_per_chapter,
        unit=book.heading_unit,
    )


@dataclass(frozen=True)
class ExtractionPlan:
    """What extracting the fact cards of `chapters` will cost at most, said before any call is made.

    One logical call per chapter, each up to `max_attempts` requests. `input_tokens` bounds the input of the
    first attempts with the budget's estimator (UTF-8 bytes + framing: never under, ~3× over for Chinese);
    `max_cost` adds `max_output_tokens` per call at the model's price (None when the model has no price).
    `bill` is the whole bound — every attempt, corrections and retries included (`llm.role_bill`): what the
    command shows and asks confirmation for.
    """

    chapters: list[int]
    provider: str
    model: str
    input_tokens: int
    max_output_tokens: int
    max_attempts: int
    max_cost: float | None
    bill: Bill

    @property
    def calls(self) -> int:
        return len(self.chapters)


def plan_extraction(book: Book, chapters: list[int], *, cards: CardSet | None = None) -> ExtractionPlan | None:
    """The `ExtractionPlan` of `chapters` (in order), or None when no extractor model is configured."""
    from ..llm import (
        CallEstimate,
        PriceTable,
        ProviderRequest,
        estimate_input_tokens,
        role_bill,
        strict_json_schema,
        total_bill,
    )

    target = book.config.role_target(EXTRACT.role)
    if target is None:
        return None
    provider, model = target
    cards = cards if cards is not None else load_cards(book)
    cursor = MemoryCursor(book, cards)
    max_out = book.config.calls.max_output_tokens
    prices = PriceTable.load(book.config.prices)
    total_in = 0
    cost: float | None = 0.0
    parts = []
    for n in chapters:
        call = EXTRACT.render(extract_request(book, n, cards, cursor=cursor))
        request = ProviderRequest(
            provider=provider,
            model=model,
            messages=list(call.messages),
            schema_name=call.wire_schema_name,
            json_schema=strict_json_schema(call.schema),
            max_output_tokens=call.max_output_tokens or max_out,
            timeout_s=0.0,  # not sent: only measured
            role=call.role,
        )
        est = estimate_input_tokens(request)
        total_in += est
        one = prices.worst_case_cost(model, est, request.max_output_tokens)
        cost = None if cost is None or one is None else cost + one
        estimate = CallEstimate(EXTRACT.role, provider, model, est, request.max_output_tokens, one, None)
        parts.append(role_bill(estimate, 1, book.config.calls.max_attempts, prices.worst_case_cost))
    attempts = book.config.calls.max_attempts
    return ExtractionPlan(list(chapters), provider, model, total_in, max_out, attempts, cost, total_bill(parts))


async def extract_facts(
    session: ModelSession,
    book: Book,
    chapter_number: int,
    *,
    cards: CardSet | None = None,
    cursor: MemoryCursor | None = None,
) -> FactCardResult:
    """Extract, store and validate the fact card of one chapter (raises ModelCallFailed / NotConfigured).

    With `cursor` (the memory replayed up to before this chapter, see `MemoryCursor`) nothing is replayed
    again and the cursor moves past the chapter; without, one replay serves the prompt and the validation."""
    cards = cards if cards is not None else load_cards(book)
    cursor = cursor if cursor is not None else MemoryCursor(book, cards)
    call = EXTRACT.render(extract_request(book, chapter_number, cards, cursor=cursor))
    return _commit(session, book, chapter_number, cursor, call, await session.call(call))


def _commit(
    session: ModelSession, book: Book, chapter_number: int, cursor: MemoryCursor, call: Any, result: Any
) -> FactCardResult:
    """Store an extraction's answer bound to the chapter's bytes and receipt, and validate it (the cursor moves
    past the chapter)."""
    chapter = _read(book, cursor, chapter_number)
    final = result.final_receipt
    card = store_fact_card(
        book.db,
        chapter,
        result.value,
        prompt_sha256=call.ref.prompt_sha256,
        model=final.resolved_model or final.requested_model,
        receipt_id=final.id,
        call_id=result.call_id,
        run_id=session.run_id,
    )
    validation = cursor.apply_new(card)
    return FactCardResult(
        chapter_number,
        card,
        validation,
        result.call_id,
        [r.id for r in result.receipts],
        result.attempts,
        result.input_tokens,
        result.output_tokens,
        result.cost,
    )


async def extract_in_order(
    session: ModelSession, book: Book, chapters: list[int], cards: CardSet, cursor: MemoryCursor, concurrency: int
) -> AsyncIterator[FactCardResult]:
    """Extract the fact cards of `chapters` (ascending) with up to `concurrency` calls in flight, committed — stored
    and validated — in chapter order, each yielded as it is committed.

    Chapter k's request is built when chapter k − concurrency is committed, from the memory as of the chapter
    before the oldest one still in flight: with `concurrency` 1 that is the memory just before chapter k (the
    sequential prompt); with more, the foreshadows of the chapters still in flight are not listed (deterministic:
    the same files and concurrency give the same requests). A call that fails closed raises after the calls
    still in flight have ended (their answers are not committed: the chapters after a failure are not extracted).
    """
    tasks: list[tuple[int, Any, asyncio.Task[Any]]] = []
    committed = 0  # chapters[:committed] are stored and validated

    def dispatch(k: int) -> None:
        n = chapters[k]
        # the memory may hold every chapter before the oldest one still in flight (all before n when none is)
        cursor.advance(chapters[committed] - 1 if committed < k else n - 1)
        call = EXTRACT.render(extract_request(book, n, cards, cursor=cursor, advance=False))
        tasks.append((n, call, asyncio.ensure_future(session.call(call))))

    width = max(1, concurrency)
    for k in range(min(width, len(chapters))):
        dispatch(k)
    try:
        for k in range(len(chapters)):
            n, call, task = tasks[k]
            result = await task
            got = _commit(session, book, n, cursor, call, result)
            committed += 1
            yield got
            if k + width < len(chapters):
                dispatch(k + width)
    finally:  # after a failure: stop what is in flight and collect every outcome (none left unretrieved)
        for _, _, t in tasks:
            t.cancel()
        await asyncio.gather(*(t for _, _, t in tasks), return_exceptions=True)
