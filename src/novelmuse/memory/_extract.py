"""Fact-card extraction through the extractor role (seed 004 事实卡).

One logical model call per chapter: the prompt lists the known cards and the active foreshadows before the
chapter, then the chapter text. The call's contract requires every item's quote to be found exactly once
in the chapter (`roles.extractor.quote_problems`): a violation is sent back as a correction and, after the
call budget (`calls.max_attempts`), the call fails closed (ModelCallFailed, exit 3) — never a default card.
The accepted output is stored bound to the chapter's sha256 and the accepted attempt's receipt, then
validated deterministically (rejected items are returned, never dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..book import Book
from ..llm import Message, ModelSession, Violation
from ..roles import load_prompt
from ..roles.extractor import FactCardOutput, quote_problems
from ..text import normalize_for_match, sha256_json
from ._cards import CardSet, load_cards
from ._facts import FactCard, store_fact_card
from ._replay import FactValidation, replay, validate_fact_card

ROLE = "extractor"


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


def prompt_sha256() -> str:
    """The hash of the extractor's prompt templates (system + input), recorded with every fact card."""
    return sha256_json([load_prompt(ROLE, "system").sha256, load_prompt(ROLE, "input").sha256])


def build_messages(book: Book, chapter_number: int, cards: CardSet) -> list[Message]:
    """The extractor's messages for one chapter (deterministic: same files → same messages)."""
    chapter = book.read_chapter(chapter_number)
    state = replay(book, cards=cards, upto=chapter_number - 1)
    active = state.active_foreshadows(max(chapter_number - 1, 0))
    card_lines = [
        f"{c.name}：{'、'.join(c.aliases) or '（无别名）'}" for c in sorted(cards.cards.values(), key=lambda c: c.id)
    ]
    fs_lines = [f"{a.id}：{a.description}（第{a.planted_chapter}章埋设）" for a in active.items]
    # this chapter's own outline plants: the model should report them under the author's ids (a confirmation),
    # not plant them again under new ids (a duplicate entry that also counts against the plant cap)
    outline = state.outlines.get(chapter_number)  # every outline is loaded, not only those replayed
    if outline is not None:
        fs_lines += [f"{p.id}：{p.description}（本章细纲埋设）" for p in outline.plants]
    user = load_prompt(ROLE, "input").render(
        chapter=chapter_number,
        title=chapter.title,
        cards="\n".join(card_lines) or "（无）",
        foreshadows="\n".join(fs_lines) or "（无）",
        max_plants=book.config.memory.max_plants_per_chapter,
        chapter_text=chapter.body,
    )
    return [Message(role="system", content=load_prompt(ROLE, "system").text), Message(role="user", content=user)]


async def extract_facts(
    session: ModelSession, book: Book, chapter_number: int, *, cards: CardSet | None = None
) -> FactCardResult:
    """Extract, store and validate the fact card of one chapter (raises ModelCallFailed / NotConfigured)."""
    cards = cards if cards is not None else load_cards(book)
    chapter = book.read_chapter(chapter_number)
    norm = normalize_for_match(chapter.body)

    def quotes_found_once(out: FactCardOutput) -> list[Violation]:
        return [Violation(code=code, detail=detail) for code, detail in quote_problems(norm, out)]

    result = await session.call(
        role=ROLE,
        schema=FactCardOutput,
        messages=build_messages(book, chapter_number, cards),
        contracts=[quotes_found_once],
        prompt_sha256=prompt_sha256(),
    )
    final = result.final_receipt
    card = store_fact_card(
        book.db,
        chapter,
        result.value,
        prompt_sha256=prompt_sha256(),
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
