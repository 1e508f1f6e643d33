"""The `facts` step: the fact card (事实卡, seed 004) of a chapter `muse review` finalised.

It runs after the review is recorded (and after `--apply` wrote the revision), through the extractor
role of the same model session, and only when the chapter file on disk *is* the finalised text: a fact
card is bound to the sha256 of the file's bytes (memory's rule), so a stored but unapplied revision
gets ``skipped(revision not applied)``, never a card of text the book does not hold. A chapter that
already has a current fact card (same file bytes) is not extracted again. Rejected items
(FORESHADOW_PLANT_CAP, …) make the step ``failed`` and are kept in the document, never dropped.
"""

from __future__ import annotations

from ..book import Book
from ..errors import FailedClosed
from ..llm import ModelCallFailed
from ..memory import FactCard, FactValidation, current_fact_cards, extract_facts, validate_fact_card
from ..text import sha256_hex
from ._calls import Caller
from ._models import ChapterReview, FactsOut, RejectedOut
from ._outcomes import NO_MODEL, StepOutcome

STEP = "facts"
ROLE = "extractor"
AFTER_ERROR = "an earlier step failed closed"
NOT_FINALIZED = "the chapter was not finalized"
NOT_APPLIED = "revision not applied"


def _facts_out(
    card: FactCard, validation: FactValidation, *, extracted: bool, tokens: tuple[int, int, float | None]
) -> FactsOut:
    return FactsOut(
        fact_card_id=card.id,
        chapter_sha256=card.chapter_sha256,
        receipt_id=card.receipt_id,
        call_id=card.call_id,
        run_id=card.run_id,
        extracted=extracted,
        accepted=validation.accepted,
        rejected=[RejectedOut(code=p.code, item=p.item, detail=p.detail) for p in validation.rejected],
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cost=tokens[2],
    )


def _outcome(facts: FactsOut) -> StepOutcome:
    """passed, or failed when the deterministic validation rejected items (they stay listed)."""
    how = "extracted" if facts.extracted else "already current, not extracted again"
    detail = (
        f"fact card {facts.fact_card_id} ({how}) bound to sha256 {facts.chapter_sha256[:12]}…"
        f" and receipt {facts.receipt_id}: {len(facts.accepted)} accepted, {len(facts.rejected)} rejected"
    )
    if facts.rejected:
        codes = ", ".join(sorted({r.code for r in facts.rejected}))
        return StepOutcome.failed(STEP, f"{detail} ({codes})")
    return StepOutcome.passed(STEP, detail)


async def facts_step(book: Book, doc: ChapterReview, caller: Caller) -> tuple[StepOutcome, FactsOut | None]:
    """Extract (or find) the fact card of the reviewed chapter, if the file on disk is the finalised text."""
    n = doc.chapter
    if doc.status == "error":
        return StepOutcome.skipped(STEP, AFTER_ERROR), None
    if book.config.role_target(ROLE) is None:
        return StepOutcome.skipped(STEP, NO_MODEL, "no extractor model: the chapter's facts stay missing"), None
    if doc.status == "not_reviewed":
        return StepOutcome.skipped(STEP, NOT_FINALIZED), None
    on_disk = sha256_hex(book.chapter_path(n).read_bytes())
    if on_disk != doc.result_sha256:
        return StepOutcome.skipped(
            STEP,
            NOT_APPLIED,
            f"the chapter file is not the finalised text: run `muse review {n} --apply`,"
            " or `muse sync` after editing the file yourself",
        ), None
    try:
        card = current_fact_cards(book.db, {n: on_disk}).get(n)
        if card is not None:
            found = _facts_out(card, validate_fact_card(book, card), extracted=False, tokens=(0, 0, 0.0))
            return _outcome(found), found
        if caller.session is None or not caller.configured(ROLE):
            return StepOutcome.skipped(STEP, NO_MODEL), None
        try:
            result = await extract_facts(caller.session, book, n)
        except ModelCallFailed as exc:
            caller.remember([exc.call_id, *(r.call_id for r in exc.receipts)])
            raise
        caller.remember([result.call_id])
        out = _facts_out(
            result.fact_card,
            result.validation,
            extracted=True,
            tokens=(result.input_tokens, result.output_tokens, result.cost),
        )
        return _outcome(out), out
    except FailedClosed as exc:  # fails closed: the review stays recorded, the facts stay missing (bad input: exit 2)
        said = f"{exc.what}, {exc.where} — {exc.fix}" if exc.fix else f"{exc.what}, {exc.where}"
        return StepOutcome.error(STEP, exc.code, f"no fact card stored: {said}"), None
