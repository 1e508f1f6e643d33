"""`muse report` (the static HTML report), `muse status` (where the book stands) and `muse export` (the book as
one TXT, Markdown or EPUB file)."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from .. import reports  # lazy: `muse status` must not load the HTML report or the exporter
from ..errors import InputError
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, open_book, parse_range


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
    result = reports.build_report(opened, out, chapter=chapter, span=parse_range(range_))
    if json_out:
        emit_json(result)
    else:
        reports.render_report_written(result, console)
    if open_:
        webbrowser.open(Path(result.index).as_uri())


@app.command("status")
def status_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """One screen: chapters and gaps, what is stale (registry, index, fact cards), review and gate states,
    overdue foreshadows, unenforced rules lines, spend vs budget — and the next command for each problem.

    Read only. Exit 0 whenever the status could be gathered (problems are listed, not failed on); 2 for bad
    input (no book).
    """
    doc = reports.book_status(open_book(book))
    if json_out:
        emit_json(doc)
    else:
        reports.render_status(doc, console)


@app.command("export")
def export_cmd(
    book: BookOpt = None,
    fmt: Annotated[
        str, typer.Option("--format", help="txt (round trip with `muse import`), md or epub.", show_default=True)
    ] = "txt",
    out: Annotated[
        Path | None, typer.Option("--out", help="File to write (default: ./<title>.<format>).", show_default=False)
    ] = None,
    range_: Annotated[str | None, typer.Option("--range", help="Only chapters A-B.", show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Export the book as one file: chapter headings as imported, the text exactly as in the chapter files.

    TXT round-trips: `muse import` of it gives identical chapter files (checked before writing; any chapter
    that could not come back byte for byte is named). EPUB 3 has a table of contents and book.toml's title,
    author and language. Exit 0; 2 for bad input (EXPORT_EXISTS without --force, an unknown format).
    """
    if fmt not in ("txt", "md", "epub"):
        raise InputError(
            "USAGE", f"--format {fmt!r} is not txt, md or epub", "command line", "use --format txt|md|epub"
        )
    result = reports.export_book(open_book(book), fmt, out, span=parse_range(range_), force=force)  # type: ignore[arg-type]
    if json_out:
        emit_json(result)
    else:
        reports.render_export(result, console, err_console)
