"""Fact-card extraction through the extractor role (seed 004 事实卡).

One logical model call per chapter (task `roles.extractor.EXTRACT`): the prompt lists the known cards and the
active foreshadows before the chapter (`extraction_context`), then the chapter text. The call's contract
requires every item's quote to be found exactly once in the chapter (`roles.extractor.quote_problems`): a
violation is sent back as a correction and, after the call budget (`calls.max_attempts`), the call fails
closed (ModelCallFailed, exit 3) — never a default card. The accepted output is stored bound to the chapter's
sha256 and the accepted attempt's receipt, then validated deterministically (rejected items are returned,
never dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..book import Book
from ..llm import ModelSession
from ..roles.extractor import EXTRACT, ExtractRequest
from ._cards import CardSet, load_cards
from ._context import extraction_context
from ._facts import FactCard, store_fact_card
from ._replay import FactValidation, validate_fact_card


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


def extract_request(book: Book, chapter_number: int, cards: CardSet) -> ExtractRequest:
    """The extractor's request for one chapter (deterministic: same files → same request, same messages)."""
    chapter = book.read_chapter(chapter_number)
    context = extraction_context(book, chapter_number, cards)
    return ExtractRequest(
        chapter=chapter_number,
        title=chapter.title,
        chapter_text=chapter.body,
        known_cards=[line.text for line in context.known_cards],
        open_foreshadows=[line.text for line in context.open_foreshadows],
        max_plants=book.config.memory.max_plants_per_chapter,
    )


async def extract_facts(
    session: ModelSession, book: Book, chapter_number: int, *, cards: CardSet | None = None
) -> FactCardResult:
    """Extract, store and validate the fact card of one chapter (raises ModelCallFailed / NotConfigured)."""
    cards = cards if cards is not None else load_cards(book)
    chapter = book.read_chapter(chapter_number)
    call = EXTRACT.render(extract_request(book, chapter_number, cards))
    result = await session.call(call)
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
    validation = validate_fact_card(book, card, cards=cards)
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
