"""`muse write N [--arm A|C] [--dry-run] [--apply] [--review]` and `muse write show N` (issue 11); the arm is
the promoted one unless forced (issue 13 item 6, `replay.promoted_arm`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ..errors import InputError
from ..replay import promoted_arm
from ..reports import render_write_run, render_write_show, write_note, write_outcome
from ..text import MAX_CHAPTER_NUMBER
from ..writing import write_chapter, write_dry_run, write_history
from ._app import app
from ._common import BookOpt, JsonOpt, chapter_target, console, emit_json, err_console, finish, in_session, open_book


@app.command("write")
def write(
    target: Annotated[str, typer.Argument(help="The chapter number N, or `show`.", metavar="N|show")],
    chapter: Annotated[
        int | None,
        typer.Argument(help="With `show`: the chapter.", min=0, max=MAX_CHAPTER_NUMBER, show_default=False),
    ] = None,
    arm: Annotated[
        str | None,
        typer.Option(
            "--arm",
            help="Force C (card-located readback) or A (generic retrieval). Default: C once a verified, passed Gate B "
            "receipt of the current writer configuration promotes it, A until then.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Build the context and the prompt; call no model.")
    ] = False,
    apply: Annotated[
        bool, typer.Option("--apply", help="Write a passed draft as the chapter file (only if unchanged meanwhile).")
    ] = False,
    review: Annotated[
        bool, typer.Option("--review", help="With --apply: run the editorial loop (`muse review`) on the chapter.")
    ] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write chapter N from its confirmed fine outline: writer (with evidence rounds), the detector gate, at most
    two repairs. Exit 0 passed, 1 held for the author, 3 a step failed closed, 4 not evaluated (no model).

    `muse write show N` lists the chapter's write runs: manifests, evidence, drafts, detector reports, hashes."""
    b = open_book(book)
    if target == "show":
        if chapter is None:
            raise InputError("USAGE", "`muse write show` needs a chapter number", "command line", "e.g. write show 11")
        shown = write_history(b, chapter)
        if json_out:
            emit_json(shown)
        else:
            render_write_show(console, shown)
        return
    if chapter is not None:
        raise InputError("USAGE", f"unexpected argument {chapter}", "command line", "muse write N [--arm A|C]")
    number = chapter_target(target, "show", "muse write N, or muse write show N")
    choice = promoted_arm(b, force=arm)
    picked, record = choice.arm, choice.record()
    if dry_run:
        if apply or review:
            raise InputError("USAGE", "--dry-run calls no model: nothing to apply or review", "command line", "")
        doc = write_dry_run(b, number, picked, arm_choice=record)
    else:
        with Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
            disable=not err_console.is_terminal,
        ) as bar:
            task = bar.add_task(f"writing chapter {number}", total=None)

            def progress(step: str) -> None:
                bar.update(task, description=f"chapter {number} · {step}")

            doc = in_session(
                b,
                "write",
                lambda s: write_chapter(
                    b, s, number, arm=picked, apply=apply, review=review, progress=progress, arm_choice=record
                ),
            )
    if json_out:
        emit_json(doc)
    else:
        render_write_run(console, doc, b)
    note = write_note(doc)
    if note:
        err_console.print(note, markup=False)
    finish(write_outcome(doc))
