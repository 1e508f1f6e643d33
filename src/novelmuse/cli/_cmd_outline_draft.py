"""`muse outline draft N [--dry-run]`: the fine-outline agent, behind the fine-outline entry guard."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..book import Book
from ..reports import outline_draft_error, outline_draft_outcome, render_outline_draft
from ._cmd_writing import ChapterArg, outline_app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, finish, in_session, open_book

if TYPE_CHECKING:
    from ..llm import ModelSession


@outline_app.command("draft")
def outline_draft(
    chapter: ChapterArg,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the guard's verdict and the exact prompt; no model call.")
    ] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Draft chapter N's fine outline (细纲智能体) from plan/ and the story memory as of N−1.

    A real run needs verified, passed Gate A and Gate B receipts for the current writer configuration — the latest
    evaluation of each, from one replay run, on real probed models — and a probed outliner (exit 3 naming what is
    missing). The draft waits on the author's desk (`muse drafts`), never in outlines/ by itself: accept it (its
    admitting receipts are checked again, then lint, then it is confirmed), revise it or reject it."""
    b = open_book(book)
    if dry_run:
        doc = outline_draft_dry_run(b, chapter)
    else:
        doc = in_session(b, "outline-draft", lambda session: draft_fine_outline(b, session, chapter))
    if json_out:
        emit_json(doc)
    else:
        render_outline_draft(console, doc)
        if (error := outline_draft_error(doc)) is not None:
            err_console.print(error, markup=False)
    finish(outline_draft_outcome(doc))


def outline_draft_dry_run(book: Book, chapter: int) -> Any:
    """`replay.outline_draft_dry_run`, imported when a draft is asked for (never by `muse outline show`)."""
    from ..replay import outline_draft_dry_run as dry_run

    return dry_run(book, chapter)


async def draft_fine_outline(book: Book, session: ModelSession, chapter: int) -> Any:
    """`replay.draft_fine_outline`, imported when a draft is asked for (never by `muse outline show`)."""
    from ..replay import draft_fine_outline as draft

    return await draft(book, session, chapter)
