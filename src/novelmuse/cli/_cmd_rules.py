"""`muse rules lint` and `muse rules show`: what rules.txt says, and the effective rule set with its sha256."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..reports import lint_notes, render_lint, render_show, show_notes
from ..rules import lint_rules, show_rules
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, finish, open_book

rules_app = typer.Typer(
    help="Hard rules (禁止 / 疲劳词 / 偏好): lint rules.txt, show the effective rule set.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(rules_app, name="rules")


@rules_app.command("lint")
def lint_cmd(
    book: BookOpt = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", help="Lint this rules file instead of the book's rules.txt (no book needed).", show_default=False
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Show every parsed rule, every unparsed line (not enforced) and every problem with its line numbers.

    Exit 1 when the file has errors (syntax errors, contradictions) — the same convention as `muse check` —
    and 0 otherwise (warnings and unparsed lines do not fail the lint); exit 2 when the file cannot be read.
    """
    path = file if file is not None else open_book(book).rules_path
    report = lint_rules(path, must_exist=file is not None)
    for note in lint_notes(report):
        err_console.print(note, markup=False)
    if json_out:
        emit_json(report)
    else:
        render_lint(report, console)
    finish("ok" if report.passed else "findings")


@rules_app.command("show")
def show_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Print the effective rule set — built-in defaults overridden by rules.txt, plus book.toml's length limits —
    with where each rule came from, and its sha256. Exit 2 if rules.txt has errors (see `muse rules lint`)."""
    report = show_rules(open_book(book))
    for note in show_notes(report):
        err_console.print(note, markup=False)
    if json_out:
        emit_json(report)
    else:
        render_show(report, console)
