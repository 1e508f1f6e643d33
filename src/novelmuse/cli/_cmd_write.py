"""`muse write N [--arm A|C] [--dry-run] [--shadow] [--resume|--new] [--apply [--review]]`, `muse write show N`, and a
stretch of the book: `muse write A-B|--until N [--auto]`, `muse write --continue`, `muse write --status`; the arm is
the promoted one unless forced (`replay.promoted_arm`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import reports, writing  # lazy: `muse write show` loads neither the accept nor a stretch
from ..errors import InputError
from ..text import MAX_CHAPTER_NUMBER
from ._app import app
from ._common import (
    BookOpt,
    JsonOpt,
    YesOpt,
    chapter_target,
    confirm_bill,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    open_book,
    parse_range,
    promoted_arm,
    say_before,
    step_line,
    writer_config_sha256,
)

if TYPE_CHECKING:
    from ..writing import StretchPlan, WritePlan


def _plan_lines(plan: WritePlan) -> list[str]:
    """Before the first call: the run it resumes (what is reused), and the bill."""
    lines = []
    if plan.resume is not None:
        lines.append(
            f"resuming the interrupted write {plan.resume.write_id}: its {plan.resume.stored_drafts} stored draft(s),"
            " their detector reports and gate answers are reused; only the calls that never finished are made"
        )
    return lines + reports.bill_lines(f"write chapter {plan.chapter} (arm {plan.arm})", plan.bill)


@app.command("write")
def write(
    target: Annotated[
        str | None,
        typer.Argument(help="The chapter N, a stretch A-B, or `show`.", metavar="N|A-B|show", show_default=False),
    ] = None,
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
    until: Annotated[
        int | None,
        typer.Option(
            "--until",
            help="Write a stretch from the first chapter without a file through N.",
            min=0,
            max=MAX_CHAPTER_NUMBER,
            show_default=False,
        ),
    ] = None,
    auto: Annotated[
        bool,
        typer.Option(
            "--auto",
            help="A stretch that accepts each draft passing both gates itself (recorded as automatic) and stops at "
            "the first that does not.",
        ),
    ] = False,
    continue_: Annotated[
        bool, typer.Option("--continue", help="Pick the stretch up where it stopped (after your decision).")
    ] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Show the last stretch: chapters, decisions, spend.")
    ] = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write chapter N from its confirmed fine outline — a draft for your decision: writer (with evidence rounds),
    the detector gate, at most two repairs.

    The draft waits on your desk (`muse drafts`); the chapter file is never touched. Its bill is printed before
    the first call. An interrupted write of N is resumed by the rerun (what it stored is reused).
    Exit 0 passed, 1 held for the author, 3 a step failed closed, 4 not evaluated (no model).

    `muse write show N` lists the chapter's write runs: manifests, evidence, drafts, detector reports, hashes.

    `muse write 11-30` (or `--until 30`) writes a stretch, chapter after chapter, each from memory that holds the
    chapters before it (an accepted chapter's fact card is extracted before the next is written). It stops after
    each draft for your decision (`muse drafts`), then `muse write --continue`; with `--auto` a draft that passes the
    detector gate and the quality gate is accepted for you, and the run stops at the first that does not. The
    run's bill comes first; above [budget] confirm_above it asks (or, without a terminal, needs --yes).
    `muse write --status` shows the run. Exit 0 finished or waiting on a passed draft, 1 a draft held or refused, 3
    a step failed closed, 4 a gate could not run."""
    b = open_book(book)
    stretch = until is not None or auto or continue_ or status or (target is not None and "-" in target)
    if stretch:
        _stretch(
            b,
            target,
            chapter,
            until,
            auto,
            continue_,
            status,
            arm,
            yes,
            json_out,
            dry_run=dry_run,
            singles=(shadow, resume, new, apply, review, without_gate, replace_author_text),
        )
        return
    if target is None:
        raise InputError(
            "USAGE",
            "`muse write` needs a chapter N, a stretch A-B, or `show N`",
            "command line",
            "e.g. `muse write 11`, `muse write 11-20`, `muse write --continue`",
        )
    if target == "show":
        if chapter is None:
            raise InputError("USAGE", "`muse write show` needs a chapter number", "command line", "e.g. write show 11")
        shown = writing.write_history(b, chapter)
        if json_out:
            emit_json(shown)
        else:
            reports.render_write_show(console, shown)
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
        doc = writing.write_dry_run(b, number, picked, arm_choice=record)
    else:
        options = (
            writing.AcceptOptions(without_gate=without_gate, replace_author_text=replace_author_text) if apply else None
        )
        with _spinner() as bar:
            task = bar.add_task(f"writing chapter {number}", total=None)

            def progress(step: str, session: Any) -> None:
                line = f"chapter {number} · {step} · {session.spent_so_far()}"
                bar.update(task, description=line)
                step_line(line)

            def accept_bill(got: Any) -> None:
                _approve(
                    b,
                    reports.bill_lines("accept", got),
                    got,
                    yes=yes,
                    json_out=json_out,
                    command=f"muse write {number}",
                )

            doc = in_session(
                b,
                "write",
                lambda s: writing.write_and_accept(
                    b,
                    s,
                    number,
                    accept=options,
                    review=review,
                    on_bill=accept_bill,
                    arm=picked,
                    progress=lambda step: progress(step, s),
                    arm_choice=record,
                    shadow=shadow,
                    writer_config_sha256=writer_config_sha256(b),
                    resume="require" if resume else "never" if new else "auto",
                    on_plan=lambda plan: _approve(
                        b, _plan_lines(plan), plan.bill, yes=yes, json_out=json_out, command=f"muse write {number}"
                    ),
                ),
            )
    outcome = reports.write_outcome(doc)
    if json_out:
        emit_json(doc, outcome)
    else:
        reports.render_write_run(console, doc, b)
    note = reports.write_note(doc) or (reports.accept_note(doc.accept) if doc.accept is not None else None)
    if note:
        err_console.print(note, markup=False)
    finish(outcome)


def _spinner() -> Any:
    """The step spinner on stderr (off a terminal it stays off: `step_line` prints a line per step instead)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )


def _approve(b: Any, lines: list[str], bill: Any, *, yes: bool, json_out: bool, command: str) -> None:
    """Print the bill, then ask for it when it is above [budget] confirm_above (`confirm_bill`)."""
    say_before(lines, json_out=json_out)
    confirm_bill(b, bill, yes=yes, json_out=json_out, command=command)


def _stretch(
    b: Any,
    target: str | None,
    chapter: int | None,
    until: int | None,
    auto: bool,
    continue_: bool,
    status: bool,
    arm: str | None,
    yes: bool,
    json_out: bool,
    *,
    dry_run: bool,
    singles: tuple[bool, ...],
) -> None:
    """A stretch of the book: start (A-B, --until), --continue, or --status (see the command's docstring)."""
    forms = sum([target is not None, until is not None, continue_, status])
    if forms != 1 or chapter is not None or any(singles) or (dry_run and (continue_ or status)):
        raise InputError(
            "USAGE",
            "a stretch is one of `muse write A-B`, `muse write --until N`, `muse write --continue`, "
            "`muse write --status` (with --auto, --arm, --yes); --shadow, --resume, --new and --apply are for one "
            "chapter",
            "command line",
            "e.g. `muse write 11-20 --auto`",
        )
    if status:
        doc = writing.stretch_status(b)
        emit_json(doc) if json_out else reports.render_stretch(console, doc)
        return
    if continue_:
        stretch_id = writing.continue_stretch(b)
        label = "muse write --continue"
    else:
        if until is not None:
            written = [n for n in b.chapter_paths() if n <= until]
            first, last = (max(written) + 1 if written else 1), until
        else:
            span = parse_range(target)
            assert span is not None
            first, last = span
        choice = promoted_arm(b, force=arm)
        if dry_run:
            _stretch_dry_run(b, first, last, choice.arm, json_out)
            return
        stretch_id = writing.begin_stretch(
            b,
            first,
            last,
            mode="auto" if auto else "manual",
            arm=choice.arm,
            arm_choice=choice.record(),
            writer_config_sha256=writer_config_sha256(b),
        )
        label = f"muse write {first}-{last}"

    def plan(got: StretchPlan) -> None:
        _approve(b, reports.stretch_plan_lines(got), got.bill, yes=yes, json_out=json_out, command=label)

    with _spinner() as bar:
        task = bar.add_task("writing", total=None)

        def progress(n: int, step: str) -> None:
            bar.update(task, description=f"chapter {n} · {step}")
            step_line(f"chapter {n} · {step}")

        doc = in_session(b, "write", lambda s: writing.run_stretch(b, s, stretch_id, progress=progress, on_plan=plan))
    emit_json(doc, doc.outcome) if json_out else reports.render_stretch(console, doc)
    finish(doc.outcome)


def _stretch_dry_run(b: Any, first: int, last: int, arm: Any, json_out: bool) -> None:
    """`muse write A-B --dry-run`: the range checked and the bill, no record and no call."""
    bill = in_session(b, "write", lambda s: writing.stretch_dry_run(b, s, first, last, arm))
    if json_out:
        emit_json({"ok": True, "first": first, "last": last, "arm": arm, "bill": bill.model_dump(mode="json")})
    else:
        for line in reports.bill_lines(f"muse write {first}-{last} (arm {arm}) would cost", bill):
            console.print(line, markup=False, soft_wrap=True)


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
