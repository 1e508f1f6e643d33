"""`muse outline draft N|A-B [--dry-run]`: the fine-outline agent, behind the fine-outline entry guard."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..book import Book
from ..errors import InputError
from ..reports import (
    bill_lines,
    outline_draft_error,
    outline_draft_outcome,
    render_outline_draft,
    render_outline_range,
)
from ._cmd_writing import outline_app
from ._common import (
    BookOpt,
    JsonOpt,
    YesOpt,
    chapter_span,
    confirm_bill,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    open_book,
    say_before,
)

if TYPE_CHECKING:
    from ..llm import Bill, ModelSession


@outline_app.command("draft")
def outline_draft(
    chapters: Annotated[str, typer.Argument(help="A chapter N, or a range A-B drafted in order.", metavar="CHAPTERS")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the guard's verdict and the exact prompt; no model call.")
    ] = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Draft chapter N's fine outline (细纲智能体) — or every chapter of A-B, in order — from plan/ and the story
    memory as of N−1.

    A real run needs verified, passed Gate A and Gate B receipts for the current writer configuration — the latest
    evaluation of each, from one replay run, on real probed models — and a probed outliner (exit 3 naming what is
    missing). Its bill comes first. A draft waits on the author's desk (`muse drafts`), never in outlines/ by itself:
    accept it (its admitting receipts are checked again, then lint, then it is confirmed), revise it or reject it.
    Each chapter of a range is drafted from the outlines accepted before it: accept them in order."""
    b = open_book(book)
    span = chapter_span(chapters, "e.g. 12, or 21-30")
    if dry_run:
        if len(span) > 1:
            raise InputError(
                "USAGE", "--dry-run shows one chapter's prompt", "--dry-run", f"dry-run one chapter, e.g. {span[0]}"
            )
        doc: Any = outline_draft_dry_run(b, span[0])
    else:

        def bill(plan_bill: Bill) -> None:
            say_before(bill_lines("outline draft", plan_bill), json_out=json_out)
            confirm_bill(b, plan_bill, yes=yes, json_out=json_out, command="muse outline draft")

        if len(span) == 1:
            doc = in_session(b, "outline-draft", lambda session: draft_fine_outline(b, session, span[0], on_bill=bill))
        else:
            doc = in_session(b, "outline-draft", lambda session: draft_fine_outlines(b, session, span, on_bill=bill))
    if json_out:
        emit_json(doc)
    elif len(span) == 1:
        render_outline_draft(console, doc)
    else:
        render_outline_range(console, doc)
    if not json_out and (error := outline_draft_error(doc)) is not None:
        err_console.print(error, markup=False)
    finish(outline_draft_outcome(doc))


def outline_draft_dry_run(book: Book, chapter: int) -> Any:
    """`replay.outline_draft_dry_run`, imported when a draft is asked for (never by `muse outline show`)."""
    from ..replay import outline_draft_dry_run as dry_run

    return dry_run(book, chapter)


async def draft_fine_outline(book: Book, session: ModelSession, chapter: int, *, on_bill: Any = None) -> Any:
    """`replay.draft_fine_outline`, imported when a draft is asked for (never by `muse outline show`)."""
    from ..replay import draft_fine_outline as draft

    return await draft(book, session, chapter, on_bill=on_bill)


async def draft_fine_outlines(book: Book, session: ModelSession, chapters: list[int], *, on_bill: Any = None) -> Any:
    """`replay.draft_fine_outlines` (a range), imported when a draft is asked for."""
    from ..replay import draft_fine_outlines as drafts

    return await drafts(book, session, chapters, on_bill=on_bill)
