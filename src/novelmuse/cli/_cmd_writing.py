"""Writer-context commands: `muse outline show/lint/confirm`, `muse context N`, `muse context verify N`."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import EXIT_FINDINGS
from ..reports import render_confirm, render_outline_lint, render_outline_show
from ..text import MAX_CHAPTER_NUMBER
from ..writing import confirm_outline, lint_outlines, show_outline
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, open_book

outline_app = typer.Typer(
    help="Fine outlines (细纲): show with constraint ids, lint against cards and ledger, confirm.",
    no_args_is_help=True,
)
app.add_typer(outline_app, name="outline")

ChapterArg = Annotated[int, typer.Argument(help="Chapter number.", min=0, max=MAX_CHAPTER_NUMBER)]


@outline_app.command("show")
def outline_show(chapter: ChapterArg, book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Print a chapter's fine outline with the constraint id of every item and whether it is confirmed."""
    doc = show_outline(open_book(book), chapter)
    if json_out:
        emit_json(doc)
    else:
        render_outline_show(console, doc)


@outline_app.command("lint")
def outline_lint(
    chapter: Annotated[
        int | None, typer.Argument(help="One chapter (default: every outline).", min=0, max=MAX_CHAPTER_NUMBER)
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every outline (the default).")] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check outlines against the cards and the foreshadow ledger as of each chapter. Exit 1 on an error."""
    b = open_book(book)
    doc = lint_outlines(b, None if all_ or chapter is None else [chapter])
    if json_out:
        emit_json(doc)
    else:
        render_outline_lint(console, doc)
    if not doc.ok:
        raise typer.Exit(EXIT_FINDINGS)


@outline_app.command("confirm")
def outline_confirm(chapter: ChapterArg, book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Confirm a chapter's outline (已确认细纲): its sha256 is recorded; any later edit unconfirms it."""
    result = confirm_outline(open_book(book), chapter)
    if json_out:
        emit_json(
            {
                "ok": True,
                "chapter": chapter,
                "newly_confirmed": result.newly_confirmed,
                "confirmation": result.confirmation.model_dump(mode="json"),
                "lint": result.lint.model_dump(mode="json"),
            }
        )
    else:
        render_confirm(console, result)
