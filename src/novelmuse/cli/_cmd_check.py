"""`muse check`: the deterministic hard-rule check of a book's chapters (exit 1 on error findings)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..book import Chapter
from ..editorial import review_notes
from ..errors import InputError, MuseError
from ..reports import check_notes, check_outcome, render_check, render_normalize
from ..roles.normalizer import CheckNormalizeDoc, check_and_propose
from ..rules import CheckReport, check_book
from ._app import app
from ._common import (
    CHAPTER_MAX,
    BookOpt,
    JsonOpt,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    open_book,
    parse_range,
)


@app.command("check")
def check_cmd(
    directory: Annotated[
        Path | None, typer.Argument(help="Book directory (same as --book).", show_default=False)
    ] = None,
    book: BookOpt = None,
    chapter: Annotated[
        int | None, typer.Option("--chapter", help="Check only chapter N.", show_default=False, min=0, max=CHAPTER_MAX)
    ] = None,
    range_: Annotated[
        str | None, typer.Option("--range", help="Check chapters A-B (inclusive).", show_default=False)
    ] = None,
    normalize: Annotated[
        bool,
        typer.Option(
            "--normalize",
            help="Also ask the normalizer model for rules for the rules.txt lines that parse as no rule, and show "
            "them (nothing is written: `muse rules normalize --write` applies them).",
        ),
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Check chapters against the hard rules (rules.txt over the built-in AI-flavour defaults) and the chapter
    length limits of book.toml.

    Forbidden phrases and length outside [min_chars, max_chars] are errors; fatigue words above their limit
    are warnings. A rules.txt line that parses as no rule is not enforced: with no error finding the outcome is
    `incomplete` (exit 4), naming the line; `muse rules normalize` (or `--normalize` here, to see the proposals
    at once) turns such lines into rules. Exit 1 if any error finding; 4 (not evaluated) when the check is
    incomplete or there was no chapter to check; else 0; 3 when the normalizer's call failed closed; exit 2 for
    bad input (RULES_SYNTAX, RULES_CONTRADICTION, RULES_ENCODING, CHAPTER_NOT_FOUND, BOOK_NOT_FOUND). Also
    records each checked
    chapter's sha256 and counts in the chapter registry (skipped, with a note, on a read-only book).
    """
    if directory is not None and book is not None and directory.resolve() != book.resolve():
        raise InputError("USAGE", "both DIR and --book were given and they differ", "command line", "give one")
    if chapter is not None and range_ is not None:
        raise InputError("USAGE", "--chapter and --range were both given", "command line", "give one of them")
    opened = open_book(directory if directory is not None else book)
    span = parse_range(range_)
    report: CheckReport = (
        in_session(opened, "rules-normalize", lambda s: check_and_propose(opened, s, chapter=chapter, span=span))
        if normalize
        else check_book(opened, chapter=chapter, span=span)
    )
    for note in check_notes(report):
        err_console.print(note, markup=False)
    outcome = check_outcome(report)
    if json_out:
        emit_json(report, outcome)
    else:
        shas = {c.number: c.sha256 for c in report.chapters}

        def chapter_of(number: int) -> Chapter | None:
            try:
                ch = opened.read_chapter(number)
            except MuseError:
                return None
            return ch if ch.sha256 == shas.get(number) else None  # changed meanwhile: offsets only

        render_check(report, console, chapter_of)
        if isinstance(report, CheckNormalizeDoc) and report.normalize is not None:
            render_normalize(report.normalize, console)
    for note in review_notes(opened, {c.number: c.sha256 for c in report.chapters}):  # muse review's open issues
        (err_console if json_out else console).print(note, markup=False)
    finish(outcome)
