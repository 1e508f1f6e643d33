"""`muse sync`: bring derived memory up to date after the author edited, added or removed chapters.

1. Re-index (chunks, tokens, mentions) only the chapters whose sha256 changed since they were indexed
   (and, when card names/aliases changed, the chapters that write a changed name), forget removed ones, and
   rebuild the BM25 postings if any stored token moved.
2. Record the chapter files in the chapter registry.
3. Fact cards: every chapter without a fact card bound to its current sha256 is re-extracted — up to
   `[calls] concurrency` calls in flight, committed in chapter order (`extract_in_order`) — when an extractor
   model is configured — after saying how many calls that is and what they cost at
   most (`ExtractionPlan`, before any call); otherwise it is marked ``stale`` — visibly, with the step
   reported as ``skipped(no model configured)`` (or ``skipped(--no-extract)``). A failed extraction fails
   closed (the step is ``error(CODE)``; later chapters are not extracted, since their validation depends on
   earlier ones). One replay cursor serves every extraction (linear bookkeeping).
4. Replay the whole memory in chapter order to report the current problems.

`dry_run` says what steps 1–3 would do (chapters to re-index, calls and their cost) and writes no index or
registry row and calls no model (only the file-hash and parsed-card caches may be filled).
Idempotent: a second sync re-indexes nothing and writes no row. Chapter files are only ever read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..book import Book, read_chapter_file
from ..errors import FailedClosed
from ..llm import ModelSession, run_spend
from ..store import register_chapters
from ._cards import load_cards
from ._extract import ExtractionPlan, extract_in_order, plan_extraction
from ._index import IndexUpdate, update_index
from ._ledger import MemoryProblem
from ._replay import MemoryCursor, replay

ROLE = "extractor"


@dataclass
class SyncResult:
    """What a sync found and did."""

    index: IndexUpdate
    facts_step: str  # passed / skipped(no model configured | --no-extract | --dry-run) / error(CODE)
    facts_extracted: list[int] = field(default_factory=list)
    facts_stale: list[int] = field(default_factory=list)
    facts_error: tuple[int, str] | None = None
    facts_rejected: int = 0
    problems: list[MemoryProblem] = field(default_factory=list)
    run_id: str | None = None
    plan: ExtractionPlan | None = None  # the extraction it makes (or would make with --dry-run)
    dry_run: bool = False
    spent: dict[str, int | float | None] | None = (
        None  # calls, input_tokens, output_tokens, cost of its run (`muse cost --run`)
    )


async def sync(
    book: Book,
    session: ModelSession,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    extract: bool = True,
    dry_run: bool = False,
    on_plan: Callable[[ExtractionPlan], None] | None = None,
    on_fact: Callable[[int, str], None] | None = None,
) -> SyncResult:
    """Run the sync steps (see the module doc) in the entry point's model session (its run starts only when a
    fact card is extracted); never writes an author's file. `on_plan` hears the extraction plan before the
    first call; `extract=False` marks stale facts without calling a model (--no-extract); `on_fact` hears each
    committed chapter with what the run has spent so far."""
    cards = load_cards(book)
    index = update_index(book, cards, steps=progress, dry_run=dry_run)
    paths = book.chapter_paths()
    if not dry_run:
        register_chapters(
            book.db, [book.chapter_record(read_chapter_file(n, p)) for n, p in paths.items()], remove_others=True
        )
    state = replay(book, cards=cards)
    todo = [n for n, s in state.facts_status.items() if s != "current"]
    result = SyncResult(index, "passed", problems=state.problems, dry_run=dry_run)
    if not todo:
        return result
    result.facts_stale = todo
    if not session.is_configured(ROLE):
        result.facts_step = "skipped(no model configured)"
        return result
    if not extract:
        result.facts_step = "skipped(--no-extract)"
        return result
    result.plan = plan_extraction(book, todo, cards=cards)
    if dry_run:
        result.facts_step = "skipped(--dry-run)"
        return result
    assert result.plan is not None
    if on_plan is not None:
        on_plan(result.plan)
    result.facts_stale = []
    result.run_id = session.start().run_id
    cursor = MemoryCursor(book, cards, paths=paths)  # one replay for all extracted chapters (linear)
    done = 0
    try:
        async for fc in extract_in_order(session, book, todo, cards, cursor, book.config.calls.concurrency):
            result.facts_extracted.append(fc.chapter)
            result.facts_rejected += len(fc.validation.rejected)
            done += 1
            if progress:
                progress("extracting facts", done, len(todo))
            if on_fact is not None:
                on_fact(fc.chapter, f"{done}/{len(todo)} · {session.spent_so_far()}")
    except FailedClosed as exc:  # bad input (a broken script, card…) ends the command instead: exit 2
        result.facts_step = f"error({exc.code})"
        result.facts_error = (todo[done], exc.code)
        result.facts_stale = todo[done:]
    result.problems = replay(book, cards=cards).problems
    result.spent = run_spend(session.conn, result.run_id).spend
    return result
