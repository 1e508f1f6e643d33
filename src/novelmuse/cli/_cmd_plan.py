"""`muse plan lint` (the book's plan checked against itself and the book) and `muse plan draft` (the plan agent,
大纲+设定智能体, behind its entry guard)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import Outcome
from ..reports import bill_lines, plan_draft_outcome, render_plan_draft, render_plan_lint
from ..writing import lint_plan, read_premise
from ._app import app
from ._common import (
    BookOpt,
    JsonOpt,
    YesOpt,
    confirm_bill,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    open_book,
    say_before,
)

if TYPE_CHECKING:
    from ..llm import Bill

DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show the guard's verdict and the exact prompt; no model call.")
]

plan_app = typer.Typer(
    help="The book's plan (大纲 and 设定, plan/): lint it; draft it from a premise (the plan agent).",
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


@plan_app.command("draft")
def plan_draft(
    premise: Annotated[
        str, typer.Option("--premise", help="The premise: a file, or the text itself (genre, protagonist, hook, …).")
    ],
    chapters: Annotated[int, typer.Option("--chapters", help="How many chapters the plan covers.")] = 100,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Draft the book's plan (大纲 and 设定) and card drafts for its main characters and places from a premise.

    A real run needs verified, passed Gate A and Gate B receipts for the current outliner configuration (the
    fine-outline agent's own gates: a replay of an outliner set) and a probed planner model (exit 3 naming what is
    missing). The draft waits on the author's desk (`muse drafts`): nothing reaches plan/ or cards/ until you accept
    it; revise it or reject it. Its bill comes first."""
    _plan_stage(read_premise(premise), chapters, dry_run=dry_run, yes=yes, book=book, json_out=json_out)


@plan_app.command("extend")
def plan_extend(
    chapters: Annotated[int, typer.Option("--chapters", help="How many chapters the next part covers.")] = 30,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Draft the plan's next part (an arc or a volume) after the last chapter it covers, from the accepted plan and
    the memory as of the last written chapter (what happened, open foreshadows, overdue first).

    The accepted outline is kept word for word and the new volumes appended; new settings go into files of their
    own. The same guard, bill and desk as `muse plan draft`."""
    _plan_stage(None, chapters, dry_run=dry_run, yes=yes, book=book, json_out=json_out)


def _plan_stage(premise: str | None, chapters: int, *, dry_run: bool, yes: bool, book: BookOpt, json_out: bool) -> None:
    from ..replay import draft_plan, plan_draft_dry_run

    b = open_book(book)
    command = "muse plan draft" if premise is not None else "muse plan extend"
    if dry_run:
        doc = plan_draft_dry_run(b, premise, chapters=chapters)
    else:

        def bill(plan_bill: Bill) -> None:
            say_before(bill_lines(command.removeprefix("muse "), plan_bill), json_out=json_out)
            confirm_bill(b, plan_bill, yes=yes, json_out=json_out, command=command)

        doc = in_session(
            b, "plan-draft", lambda session: draft_plan(b, session, premise, chapters=chapters, on_bill=bill)
        )
    if json_out:
        emit_json(doc)
    else:
        render_plan_draft(console, doc)
        if doc.error is not None:
            e = doc.error
            err_console.print(f"error[{e['code']}]: {e['what']}, {e['where']} — {e['fix']}", markup=False)
    finish(plan_draft_outcome(doc))
