"""`muse plan lint`: the book's plan (大纲 and 设定) checked against itself and the book."""

from __future__ import annotations

import typer

from ..errors import Outcome
from ..reports import render_plan_lint
from ..writing import lint_plan
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, finish, open_book

plan_app = typer.Typer(
    help="The book's plan (大纲 and 设定, plan/): lint its volumes, foreshadows and characters.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(plan_app, name="plan")


@plan_app.command("lint")
def plan_lint(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Check the plan: its volumes cover the book without gaps or overlaps, every planned foreshadow is resolved
    within the plan or marked open, every character its settings name has a card.

    Exit 0 no errors (warnings are shown), 1 errors, 2 bad input (no plan)."""
    doc = lint_plan(open_book(book))
    outcome: Outcome = "ok" if doc.ok else "findings"
    if json_out:
        emit_json(doc, outcome)
    else:
        render_plan_lint(console, doc)
    finish(outcome)
