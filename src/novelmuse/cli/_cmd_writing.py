"""Writer-context commands: `muse outline show/lint/confirm`, `muse context N`, `muse context verify N`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from ..book import outline_paths
from ..errors import InputError, MuseError, exit_code
from ..reports import (
    ChapterLines,
    render_confirm,
    render_context,
    render_outline_lint,
    render_outline_show,
    render_verify,
)
from ..text import MAX_CHAPTER_NUMBER
from ..writing import confirm_outline, lint_outlines, show_outline
from ._app import app
from ._common import (
    BookOpt,
    JsonOpt,
    chapter_span,
    chapter_target,
    console,
    emit_json,
    err_console,
    finish,
    open_book,
    outline_admission_problems,
    promoted_arm,
)

if TYPE_CHECKING:
    from ..replay import ArmChoice
    from ..writing import Arm

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
        str | None,
        typer.Argument(help="One chapter N, or a range A-B (default: every outline).", metavar="[N|A-B]"),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every outline (the default).")] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check outlines against the cards and the foreshadow ledger as of each chapter. Exit 1 on an error."""
    wanted = None if all_ or chapter is None else chapter_span(chapter, "muse outline lint N, or A-B")
    b = open_book(book)
    if wanted is not None and len(wanted) > 1:  # a range: the outlines it holds (none at all is a usage error)
        have = set(outline_paths(b))
        wanted = [n for n in wanted if n in have]
        if not wanted:
            raise InputError("OUTLINE_NOT_FOUND", f"no outline in chapters {chapter}", "outlines/", "write one first")
    doc = lint_outlines(b, wanted)
    if json_out:
        emit_json(doc)
    else:
        render_outline_lint(console, doc)
    finish("ok" if doc.ok else "findings")


@outline_app.command("confirm")
def outline_confirm(
    chapter: Annotated[str, typer.Argument(help="Chapter number N, or a range A-B.", metavar="N|A-B")],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Confirm a chapter's outline (已确认细纲): its sha256 is recorded; any later edit unconfirms it. An outline the
    fine-outline agent drafted is confirmed only while the receipts that admitted it still hold. With A-B, every
    outline of the range in one go: those that cannot be confirmed (missing, lint errors) are named, the others
    confirmed (exit 2 when any could not be)."""
    chapters = chapter_span(chapter, "muse outline confirm N, or A-B")
    b = open_book(book)
    if len(chapters) == 1:
        result = confirm_outline(b, chapters[0], admission=outline_admission_problems)
        if json_out:
            emit_json(_confirm_json(chapters[0], result))
        else:
            render_confirm(console, result)
        return
    done: list[dict[str, Any]] = []
    refused: list[MuseError] = []
    for n in chapters:
        try:
            result = confirm_outline(b, n, admission=outline_admission_problems)
        except MuseError as exc:  # named below, the range goes on: one bad outline does not hold back the rest
            refused.append(exc)
            continue
        done.append(_confirm_json(n, result))
        if not json_out:
            render_confirm(console, result)
    if json_out:
        emit_json({"ok": not refused, "confirmed": done, "refused": [e.to_json() for e in refused]})
    for error in refused if not json_out else []:
        err_console.print(error.render(), markup=False)
    if refused:
        finish(max((e.outcome for e in refused), key=exit_code))  # the worst of the refusals


def _confirm_json(chapter: int, result: Any) -> dict[str, Any]:
    return {
        "ok": True,
        "chapter": chapter,
        "newly_confirmed": result.newly_confirmed,
        "confirmation": result.confirmation.model_dump(mode="json"),
        "lint": result.lint.model_dump(mode="json"),
    }


@app.command("context")
def context(
    target: Annotated[str, typer.Argument(help="The chapter number N, or `verify`.", metavar="N|verify")],
    chapter: Annotated[
        int | None,
        typer.Argument(
            help="With `verify`: the chapter to rebuild.", min=0, max=MAX_CHAPTER_NUMBER, show_default=False
        ),
    ] = None,
    arm: Annotated[
        str | None,
        typer.Option(
            "--arm",
            help="A (generic retrieval), B (card-only), C (card-located); default: the arm `muse write` would use.",
            show_default=False,
        ),
    ] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Build chapter N's writer context and manifest (no model call): `muse context N [--arm A|B|C]`.

    By default the context `muse write N` would build (arm A until a Gate B receipt promotes C), and it says which.
    `muse context verify N` rebuilds it and compares with the stored manifest (exit 1 when it differs)."""
    from ..writing import build_and_save, verify_context  # the context builder: loaded by this command only

    forced = _arm(arm) if arm is not None else None
    b = open_book(book)
    choice = None if forced is not None else promoted_arm(b)
    picked = forced or (choice.arm if choice is not None else "A")
    if target == "verify":
        if chapter is None:
            raise InputError("USAGE", "`muse context verify` needs a chapter number", "command line", "e.g. verify 12")
        with _indexing() as progress:
            doc = verify_context(b, chapter, picked, progress=progress)
        _say_arm(choice, json_out)
        if json_out:
            emit_json(doc)
        else:
            render_verify(console, doc)
        finish("ok" if doc.ok else "findings")
        return
    number = chapter_target(target, "verify", "muse context N, or muse context verify N")
    if chapter is not None:
        raise InputError("USAGE", f"unexpected argument {chapter}", "command line", "muse context N [--arm A|B|C]")
    with _indexing() as progress:
        built = build_and_save(b, number, picked, progress=progress)
    _say_arm(choice, json_out)
    if json_out:
        emit_json(built)
    else:
        render_context(console, built, ChapterLines(b))


@contextmanager
def _indexing() -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr while chapters before N are (re-)indexed; nothing when the index is current."""
    with Progress(
        TextColumn("indexing chapters"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task: list[TaskID] = []

        def progress(done: int, total: int) -> None:
            if not task:
                task.append(bar.add_task("index", total=total))
            bar.update(task[0], completed=done)

        yield progress


def _say_arm(choice: ArmChoice | None, json_out: bool) -> None:
    """Name the arm `muse write` would use, and why (stderr), when the context was built with it by default."""
    if choice is not None and not json_out:
        err_console.print(f"arm {choice.arm}: the arm `muse write` would use — {choice.reason}", markup=False)


def _arm(value: str) -> Arm:
    from ..writing import ARMS

    for arm in ARMS:
        if value.strip().upper() == arm:
            return arm
    raise InputError("USAGE", f"--arm {value!r} is not an arm", "--arm", "use A, B or C")
