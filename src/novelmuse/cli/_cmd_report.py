"""`muse report` (the static HTML report), `muse status` (where the book stands) and `muse export` (the book as
one TXT, Markdown or EPUB file)."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..reports._status import book_status, render_status
from ..reports.html import build_report
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, open_book, parse_range


@app.command("report")
def report_cmd(
    book: BookOpt = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder to write (default: .muse/report).", show_default=False)
    ] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open the overview in the default browser.")] = False,
    chapter: Annotated[int | None, typer.Option("--chapter", help="Only chapter N.", show_default=False)] = None,
    range_: Annotated[str | None, typer.Option("--range", help="Only chapters A-B.", show_default=False)] = None,
    json_out: JsonOpt = False,
) -> None:
    """Write a self-contained static HTML report: every chapter with each rule hit, review quote, editor
    evidence and judge quote highlighted at its stored offsets; reviews, revisions (character diffs), the
    foreshadow ledger, cards as of any chapter, judge panels, cost. Built from the book's files and
    .muse/muse.db only — no model is called; the pages need no network.
    """
    if chapter is not None and range_ is not None:
        raise InputError("USAGE", "--chapter and --range were both given", "command line", "give one of them")
    opened = open_book(book)
    result = build_report(opened, out, chapter=chapter, span=parse_range(range_))
    if json_out:
        emit_json(result)
    else:
        for note in result.notes:
            console.print(f"note: {note}", markup=False)
        console.print(
            f"report written: {result.index}  ({result.pages} pages, {result.bytes / 1024:,.0f} KiB; "
            f"overview {result.overview_bytes / 1024:,.0f} KiB)",
            markup=False,
        )
    if open_:
        webbrowser.open(Path(result.index).as_uri())


@app.command("status")
def status_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """One screen: chapters and gaps, what is stale (registry, index, fact cards), review and gate states,
    overdue foreshadows, unenforced rules lines, spend vs budget — and the next command for each problem.

    Read only. Exit 0 whenever the status could be gathered (problems are listed, not failed on); 2 for bad
    input (no book).
    """
    doc = book_status(open_book(book))
    if json_out:
        emit_json(doc)
    else:
        render_status(doc, console)
