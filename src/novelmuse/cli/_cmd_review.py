"""`muse review N` / `muse review --range A-B`: the editorial loop (seed 004) on chapters."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..editorial import ChapterReview, PreflightOut
from ..errors import InputError
from ..reports import (
    bill_lines,
    preflight_notes,
    render_review_run,
    render_revision_diffs,
    review_error,
    review_outcome,
)
from ..writing import ChapterGate, review_and_gate
from ._app import app
from ._common import (
    BookOpt,
    JsonOpt,
    YesOpt,
    chapter_span,
    confirm_bill,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    open_book,
    parse_range,
    say_before,
    step_line,
)


@app.command()
def review(
    chapter: Annotated[
        str | None,
        typer.Argument(help="Chapter number N to review, or a range A-B.", show_default=False, metavar="[N|A-B]"),
    ] = None,
    range_: Annotated[
        str | None, typer.Option("--range", help="Review chapters A-B in order (resumable).", show_default=False)
    ] = None,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Accept each resulting revision: the same preflight as `muse drafts accept` (the file unchanged since"
            " the review, the rules, the quality gate); the replaced text is kept (`muse revisions`).",
        ),
    ] = False,
    without_gate: Annotated[
        bool, typer.Option("--without-gate", help="With --apply: accept although the quality gate cannot run.")
    ] = False,
    no_editor: Annotated[
        bool, typer.Option("--no-editor", help="Leave out the 7-dimension editor (rules and consistency only).")
    ] = False,
    no_gate: Annotated[
        bool, typer.Option("--no-gate", help="Leave out the quality gate (blind judges) on the final text.")
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Show each revision as a paragraph diff against the original.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Review again even if a record matches the file and configuration.")
    ] = False,
    rerun: Annotated[
        bool,
        typer.Option(
            "--rerun", help="With --apply: review a chapter edited since its review again (a new, paid review)."
        ),
    ] = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Review chapters: hard rules, consistency review with bounded repair, the 7-dimension editor, the arbiter —
    then, with a judge model configured, the quality gate on each final text (blind judges against the
    chapter's evidence pack, hard blocks from the rule layer; every decision stored, see `muse judge-summary`).

    The original text is kept; the result is a draft on your desk (`muse drafts`), written to the chapter file only
    when accepted (`muse drafts accept`, or --apply, which needs the quality gate to pass — or --without-gate).
    A finalised chapter whose file is the finalised text then gets its fact card (事实卡) from the extractor.
    Before any model call the requests are sized and what can never be sent is refused:
    a chapter over [chapters] max_chars (CHAPTER_TOO_LONG, exit 2), a request over the model's context window or
    the budget (exit 3). A failed quality gate exits 1, a gate that failed closed 3, a wanted gate without a
    judge model 4. --apply on a chapter edited since its review needs --rerun (a new, paid review).
    Exit 0 finalized with nothing open, 1 open issues (finalized with issues, a length outside the limits, or a
    forbidden phrase left because no writer model ran) or fact-card items rejected, 2 bad input, 3 a step failed
    closed (the facts step included), 4 not evaluated (a model step skipped: no model configured — never a pass).
    """
    if (chapter is None) == (range_ is None):
        raise InputError(
            "USAGE_REVIEW", "give a chapter number or a range A-B (not both)", "command line", "e.g. `muse review 3`"
        )
    if chapter is not None and "-" in chapter:  # `muse review 11-20`: the same as --range 11-20
        chapter, range_ = None, chapter
    if without_gate and not apply:
        raise InputError("USAGE", "--without-gate is an option of the accept: it needs --apply", "command line", "")
    single = chapter_span(chapter, "muse review N, or A-B")[0] if chapter is not None else None
    span = parse_range(range_)
    b = open_book(book)
    numbers = b.select_chapters(chapter=single, span=span)
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=len(numbers) < 2,
    ) as progress:
        task = progress.add_task("reviewing", total=len(numbers))

        def plan(doc: PreflightOut) -> None:  # before the first request; --json has it as "preflight"
            lines = preflight_notes(doc)
            if doc.bill is not None and doc.chapters:
                lines += bill_lines("the review's worst case", doc.bill)
            say_before(lines, json_out=json_out)
            confirm_bill(b, doc.bill, yes=yes, json_out=json_out, command="muse review")

        def done(doc: ChapterReview, session: Any) -> None:
            note = " (resumed)" if doc.resumed else ""
            progress.update(task, advance=1, description=f"{b.chapter_label(doc.chapter)} {doc.status}{note}")
            step_line(f"chapter {doc.chapter} · reviewed: {doc.status}{note} · {session.spent_so_far()}")

        def gated(gate: ChapterGate, session: Any) -> None:
            progress.update(task, description=f"{b.chapter_label(gate.chapter)} quality gate {gate.label}")
            step_line(f"chapter {gate.chapter} · quality gate: {gate.label} · {session.spent_so_far()}")

        run = in_session(
            b,
            "review",
            lambda s: review_and_gate(
                b,
                s,
                numbers,
                apply=apply,
                without_gate=without_gate,
                resume=not force,
                editor=not no_editor,
                rerun=rerun,
                gate=not no_gate,
                on_chapter=lambda doc: done(doc, s),
                on_plan=plan,
                on_gate=lambda gate: gated(gate, s),
            ),
        )
    outcome = review_outcome(run)
    if json_out:
        emit_json(run, outcome)
    else:
        render_review_run(console, run, b)
        if diff:
            render_revision_diffs(console, b, run)
    if (error := review_error(run, b.chapter_path)) is not None:
        err_console.print(error, markup=False)
    finish(outcome)
