"""`muse check`: the deterministic hard-rule check of a book's chapters (exit 1 on error findings)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..book import Chapter, read_chapter_file
from ..errors import InputError, MuseError
from ..reports import check_notes, check_outcome, review_notes, write_check_json
from ..rules import check_chapters
from ._app import app
from ._common import CHAPTER_MAX, BookOpt, JsonOpt, console, err_console, finish, in_session, open_book, parse_range


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
    pretty: Annotated[
        bool, typer.Option("--pretty", help="With --json: indent the document (compact otherwise).")
    ] = False,
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

    --json prints one compact document with every hit ([paragraph, start, end]); --pretty indents it.
    """
    if directory is not None and book is not None and directory.resolve() != book.resolve():
        raise InputError("USAGE", "both DIR and --book were given and they differ", "command line", "give one")
    if chapter is not None and range_ is not None:
        raise InputError("USAGE", "--chapter and --range were both given", "command line", "give one of them")
    if pretty and not json_out:
        raise InputError("USAGE", "--pretty was given without --json", "command line", "add --json, or drop --pretty")
    opened = open_book(directory if directory is not None else book)
    report = check_chapters(opened, chapter=chapter, span=parse_range(range_))
    proposals = None
    if normalize and report.rules.unparsed:  # a model call: the normalizer and the model layer load only here
        from ..roles.normalizer import run_normalize

        proposals = in_session(opened, "rules-normalize", lambda s: run_normalize(opened, s, write=False))
    for note in check_notes(report):
        err_console.print(note, markup=False)
    outcome = check_outcome(report)
    if json_out:
        extra = {"normalize": proposals} if normalize else {}
        write_check_json(report, sys.stdout, pretty=pretty, extra=extra, outcome=outcome)
    else:
        from ..reports import render_check, render_normalize  # Rich: the terminal's only (not --json's)

        shas = {c.number: c.sha256 for c in report.chapters}
        try:
            paths = opened.chapter_paths()  # listed once, not per chapter shown
        except MuseError:  # changed meanwhile (say, a FIFO planted): offsets only, as for a changed chapter
            paths = {}

        def chapter_of(number: int) -> Chapter | None:
            try:
                ch = read_chapter_file(number, paths[number]) if number in paths else None
            except MuseError:
                return None
            return ch if ch is not None and ch.sha256 == shas.get(number) else None  # changed meanwhile: offsets only

        render_check(report, console, chapter_of)
        if proposals is not None:
            render_normalize(proposals, console)
    for note in review_notes(opened, {c.number: c.sha256 for c in report.chapters}):  # muse review's open issues
        (err_console if json_out else console).print(note, markup=False)
    finish(outcome)
