"""`muse init DIR` and `muse import FILE --into DIR`: create a book project, split a novel into it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from ..book import import_novel, init_book
from ..errors import InputError
from ..reports import render_import, render_init
from ._app import app
from ._common import JsonOpt, console, emit_json, err_console


@app.command("init")
def init_cmd(
    directory: Annotated[Path, typer.Argument(help="Directory of the new book (created if missing).")],
    title: Annotated[str | None, typer.Option("--title", help="Book title (default: the directory name).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Create a book project: book.toml, rules.txt, chapters/, outlines/, cards/ and .gitignore.

    Refuses (exit 2, BOOK_EXISTS) to overwrite an existing book.toml; existing files are kept.
    """
    result = init_book(directory, title=title)
    if json_out:
        emit_json({"ok": True, **result.model_dump(mode="json")})
    else:
        render_init(result, console)


@app.command("import")
def import_cmd(
    file: Annotated[Path, typer.Argument(help="The novel as one text file (UTF-8 or GB18030).")],
    into: Annotated[Path, typer.Option("--into", help="Book directory (created and initialised if not a book).")],
    allow_gaps: Annotated[
        bool, typer.Option("--allow-gaps", help="Import even when chapter numbers are missing (listed as warnings).")
    ] = False,
    title: Annotated[
        str | None, typer.Option("--title", help="Title for a newly created book (default: the file name).")
    ] = None,
    split: Annotated[
        list[str] | None,
        typer.Option(
            "--split",
            help="LINE:COLUMN — where a heading that runs into its text ends: the chapter's text begins at that "
            "column of that line (repeat for several lines).",
            show_default=False,
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Split a novel into chapters/NNNN.md by its heading lines (第N章 / 第N回 / 第N节 / Chapter N).

    Bodies are kept byte-exact; text before the first heading becomes chapters/0000.md (`# 序`).
    Never overwrites an existing chapter file. Exit 2 on bad input, duplicates or (without --allow-gaps) gaps.
    """
    splits = _splits(split or [])
    if err_console.is_terminal:
        with Progress(console=err_console, transient=True) as bar:
            task = bar.add_task("writing chapters", total=None)

            def step(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            report = import_novel(file, into, allow_gaps=allow_gaps, title=title, progress=step, splits=splits)
    else:
        report = import_novel(file, into, allow_gaps=allow_gaps, title=title, splits=splits)
    if json_out:
        emit_json({"ok": True, **report.model_dump(mode="json")})
    else:
        render_import(report, console, err_console)


def _splits(values: list[str]) -> dict[int, int]:
    """``--split LINE:COLUMN`` values as line → column (both from 1)."""
    out: dict[int, int] = {}
    for value in values:
        line, sep, column = value.partition(":")
        if not (sep and line.strip().isdigit() and column.strip().isdigit()) or int(line) < 1 or int(column) < 1:
            raise InputError("USAGE", f"--split {value!r} is not LINE:COLUMN", "--split", "e.g. --split 4370:22")
        out[int(line)] = int(column)
    return out
