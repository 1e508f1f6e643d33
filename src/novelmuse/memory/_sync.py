"""`muse sync`: bring derived memory up to date after the author edited, added or removed chapters.

1. Re-index (chunks, tokens, mentions) only the chapters whose sha256 changed since they were indexed
   (all of them when card names/aliases changed), and forget removed ones.
2. Record the chapter files in the chapter registry.
3. Fact cards: every chapter without a fact card bound to its current sha256 is re-extracted in chapter
   order when an extractor model is configured; otherwise it is marked ``stale`` — visibly, with the step
   reported as ``skipped(no model configured)``. A failed extraction fails closed (the step is
   ``error(CODE)``; later chapters are not extracted, since their validation depends on earlier ones).
4. Replay the whole memory in chapter order to report the current problems.

Idempotent: a second sync re-indexes nothing and writes no row. Chapter files are only ever read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..book import Book, read_chapter_file
from ..errors import MuseError
from ..llm import ModelSession
from ..store import register_chapters
from ._cards import load_cards
from ._extract import extract_facts
from ._index import IndexUpdate, update_index
from ._replay import MemoryProblem, replay

ROLE = "extractor"


@dataclass
class SyncResult:
    """What a sync found and did."""

    index: IndexUpdate
    facts_step: str  # passed / skipped(no model configured) / error(CODE) / passed (nothing to do)
    facts_extracted: list[int] = field(default_factory=list)
    facts_stale: list[int] = field(default_factory=list)
    facts_error: tuple[int, str] | None = None
    facts_rejected: int = 0
    problems: list[MemoryProblem] = field(default_factory=list)
    run_id: str | None = None


async def sync(
    book: Book, session: ModelSession, *, progress: Callable[[str, int, int], None] | None = None
) -> SyncResult:
    """Run the sync steps (see the module doc) in the entry point's model session (its run starts only when a
    fact card is extracted); never writes an author's file."""
    cards = load_cards(book)
    index = update_index(book, cards, progress=progress)
    register_chapters(
        book.db,
        [book.chapter_record(read_chapter_file(n, p)) for n, p in book.chapter_paths().items()],
        remove_others=True,
    )
    state = replay(book, cards=cards)
    todo = [n for n, s in state.facts_status.items() if s != "current"]
    result = SyncResult(index, "passed")
    if not todo:
        result.problems = state.problems
        return result
    if not session.is_configured(ROLE):
        result.facts_step = "skipped(no model configured)"
        result.facts_stale = todo
        result.problems = state.problems
        return result
    result.run_id = session.start().run_id
    for i, n in enumerate(todo):
        try:
            fc = await extract_facts(session, book, n, cards=cards)
        except MuseError as exc:
            result.facts_step = f"error({exc.code})"
            result.facts_error = (n, exc.code)
            result.facts_stale = todo[i:]
            break
        result.facts_extracted.append(n)
        result.facts_rejected += len(fc.validation.rejected)
        if progress:
            progress("extracting facts", i + 1, len(todo))
    result.problems = replay(book, cards=cards).problems
    return result
