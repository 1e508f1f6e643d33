"""`muse rules lint` and `muse rules show`: what rules.txt says, and the effective rule set with its sha256."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..reports._check import render_lint, render_show
from ..rules import (
    LintCounts,
    LintReport,
    ShowReport,
    load_book_rules,
    parse_rules,
    read_rules_file,
    rules_file_state,
)
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, open_book

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
    if file is not None:
        path = file
        text = read_rules_file(path)
        if text is None:
            raise InputError("RULES_NOT_FOUND", "no such rules file", str(path), "check the path")
    else:
        path = open_book(book).rules_path
        text = read_rules_file(path)
    rs = parse_rules(text or "")
    state = rules_file_state(text, rs)
    report = LintReport(
        passed=not rs.errors,
        path=str(path),
        file=state,
        forbidden=list(rs.forbidden),
        fatigue=list(rs.fatigue),
        preferences=list(rs.preferences),
        unparsed=list(rs.unparsed),
        problems=list(rs.problems),
        counts=LintCounts(
            forbidden=len(rs.forbidden),
            fatigue=len(rs.fatigue),
            preferences=len(rs.preferences),
            unparsed=len(rs.unparsed),
            errors=len(rs.errors),
            warnings=len(rs.warnings),
        ),
    )
    if state == "missing":
        err_console.print(f"note: no rules file at {path}: only the built-in defaults apply", markup=False)
    if json_out:
        emit_json(report)
    else:
        render_lint(report, console)
    if not report.passed:
        raise typer.Exit(1)


@rules_app.command("show")
def show_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Print the effective rule set — built-in defaults overridden by rules.txt, plus book.toml's length limits —
    with where each rule came from, and its sha256. Exit 2 if rules.txt has errors (see `muse rules lint`)."""
    loaded = load_book_rules(open_book(book))
    report = ShowReport(path=str(loaded.path), file=loaded.file, effective=loaded.effective)
    if loaded.file != "present":
        err_console.print(f"note: rules.txt is {loaded.file}: only the built-in defaults apply", markup=False)
    if json_out:
        emit_json(report)
    else:
        render_show(report, console)
