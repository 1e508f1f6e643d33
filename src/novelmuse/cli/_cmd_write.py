"""`muse write N [--arm A|C] [--dry-run] [--shadow] [--resume|--new] [--apply [--review]]` and `muse write show N`;
the arm is the promoted one unless forced (`replay.promoted_arm`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ..errors import InputError
from ..reports import accept_note, bill_lines, render_write_run, render_write_show, write_note, write_outcome
from ..text import MAX_CHAPTER_NUMBER
from ..writing import AcceptOptions, WritePlan, write_and_accept, write_dry_run, write_history
from ._app import app
from ._common import (
    BookOpt,
    JsonOpt,
    chapter_target,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    open_book,
    promoted_arm,
    say_before,
    writer_config_sha256,
)


def _plan_lines(plan: WritePlan) -> list[str]:
    """Before the first call: the run it resumes (what is reused), and the bill."""
    lines = []
    if plan.resume is not None:
        lines.append(
            f"resuming the interrupted write {plan.resume.write_id}: its {plan.resume.stored_drafts} stored draft(s),"
            " their detector reports and gate answers are reused; only the calls that never finished are made"
        )
    return lines + bill_lines(f"write chapter {plan.chapter} (arm {plan.arm})", plan.bill)


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
    shadow: Annotated[
        bool,
        typer.Option(
            "--shadow", help="The chapter has your text: write a draft beside it for comparison (never replaces it)."
        ),
    ] = False,
    resume: Annotated[
        bool, typer.Option("--resume", help="Resume the interrupted write of N (an error when there is none).")
    ] = False,
    new: Annotated[
        bool, typer.Option("--new", help="Start a new write even if an interrupted one could resume.")
    ] = False,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Then accept the draft this run made: the same preflight as `muse drafts accept` (quality gate"
            " included), never a new run.",
        ),
    ] = False,
    review: Annotated[
        bool, typer.Option("--review", help="With --apply: then run the editorial loop (`muse review`) on the chapter.")
    ] = False,
    without_gate: Annotated[
        bool, typer.Option("--without-gate", help="With --apply: accept although no judge model can run the gate.")
    ] = False,
    replace_author_text: Annotated[
        bool,
        typer.Option("--replace-author-text", help="With --apply --shadow: replace your text (kept as a revision)."),
    ] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write chapter N from its confirmed fine outline — a draft for your decision: writer (with evidence rounds),
    the detector gate, at most two repairs.

    The draft waits on your desk (`muse drafts`); the chapter file is never touched. Its bill is printed before
    the first call. An interrupted write of N is resumed by the rerun (what it stored is reused).
    Exit 0 passed, 1 held for the author, 3 a step failed closed, 4 not evaluated (no model).

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
    usage = _usage_problem(
        dry_run=dry_run, apply=apply, review=review, resume=resume, new=new, flags=(without_gate, replace_author_text)
    )
    if usage:
        code = "USAGE_WRITE_REVIEW" if review and not apply else "USAGE"
        raise InputError(code, usage, "command line", "see `muse write --help`")
    choice = promoted_arm(b, force=arm)
    picked, record = choice.arm, choice.record()
    if dry_run:
        doc = write_dry_run(b, number, picked, arm_choice=record)
    else:
        options = AcceptOptions(without_gate=without_gate, replace_author_text=replace_author_text) if apply else None
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

            def accept_bill(got: Any) -> None:
                say_before(bill_lines("accept", got), json_out=json_out)

            doc = in_session(
                b,
                "write",
                lambda s: write_and_accept(
                    b,
                    s,
                    number,
                    accept=options,
                    review=review,
                    on_bill=accept_bill,
                    arm=picked,
                    progress=progress,
                    arm_choice=record,
                    shadow=shadow,
                    writer_config_sha256=writer_config_sha256(b),
                    resume="require" if resume else "never" if new else "auto",
                    on_plan=lambda plan: say_before(_plan_lines(plan), json_out=json_out),
                ),
            )
    outcome = write_outcome(doc)
    if json_out:
        emit_json(doc, outcome)
    else:
        render_write_run(console, doc, b)
    note = write_note(doc) or (accept_note(doc.accept) if doc.accept is not None else None)
    if note:
        err_console.print(note, markup=False)
    finish(outcome)


def _usage_problem(
    *, dry_run: bool, apply: bool, review: bool, resume: bool, new: bool, flags: tuple[bool, bool]
) -> str | None:
    if dry_run and (apply or review or resume):
        return "--dry-run calls no model: nothing to apply, review or resume"
    if review and not apply:
        return "--review runs the editorial loop on the accepted chapter: it needs --apply"
    if resume and new:
        return "--resume and --new contradict each other"
    if any(flags) and not apply:
        return "--without-gate and --replace-author-text are options of the accept: they need --apply"
    return None
