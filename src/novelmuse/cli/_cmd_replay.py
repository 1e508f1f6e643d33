"""`muse replay register / run / status / report` (issue 12): pre-registered evaluation sets and replay runs.

The CLI only parses and renders: the run itself — its one model session included — belongs to replay's trusted
orchestrator (`replay.run_replay`), the one non-CLI entry point allowed to open a session.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import InputError
from ..reports import bill_lines, render_dry_run, render_register, render_replay_report, render_run, run_outcome
from ..writing import Arm
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
    open_book,
    say_before,
    step_line,
)

if TYPE_CHECKING:
    from ..llm import Bill
    from ..replay import Event

replay_app = typer.Typer(
    help="Replay experiments: pre-registered sets, A/B/C arms, blind oracle panels (then `muse gate evaluate`).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(replay_app, name="replay")


@replay_app.command("register")
def register_cmd(
    set_file: Annotated[
        Path, typer.Argument(help="The set file (YAML; see docs/guide/replay.md#set-files).", metavar="SET.yaml")
    ],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Freeze a set of items (chapter N, its confirmed outline sha256, scene type, oracle assertions) and pin it by
    sha256. Registering the same content again is a no-op; an edited file is a new set."""
    from ..replay import register_set  # replay is loaded per command: `muse replay runs` needs no signing keys

    doc = register_set(open_book(book), set_file)
    if json_out:
        emit_json(doc)
    else:
        render_register(console, doc)


def _arms(value: str) -> list[Arm]:
    out: list[Arm] = []
    for part in value.split(","):
        arm = part.strip().upper()
        if arm not in ("A", "B", "C") or arm in out:
            raise InputError("USAGE", f"--arms {value!r}: {part!r} is not A, B or C, or is named twice", "--arms", "")
        out.append("A" if arm == "A" else "B" if arm == "B" else "C")
    return out


def _default_arms(available: list[Arm]) -> list[Arm]:
    """Every arm of the set, the gated ones first (A, C, then B)."""
    return sorted(available, key="ACB".index)


@replay_app.command("run")
def run_cmd(
    set_ref: Annotated[str, typer.Argument(help="A registered set: its sha256 (prefix), name or file.", metavar="SET")],
    arms: Annotated[
        str | None,
        typer.Option("--arms", help="Arms to run (A, C gated; B diagnostic). Default: every arm of the set."),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Samples in flight at once (1–64).")] = 4,
    seed: Annotated[str | None, typer.Option("--seed", help="Order plan seed (default: set sha256).")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new run instead of resuming the unfinished one.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Build contexts and the plan; no model.")] = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run (or resume) a replay of a registered set: per item and arm, context → writer → detector (a writer set) or
    the outliner's draft and the reference lint (an outliner set), then one blind oracle panel per item. Its bill
    (what is left to do) comes first; above [budget] confirm_above it asks (without a terminal: needs --yes). Exit 0
    when every sample and panel is ok, 3 when any failed closed (named)."""
    b = open_book(book)
    from ..replay import replay_dry_run, resolve_set, run_replay

    doc = resolve_set(b, set_ref)
    picked = _arms(arms) if arms is not None else _default_arms(doc.arms_available)
    if dry_run:
        dry = replay_dry_run(b, doc, picked, seed)
        if json_out:
            emit_json(dry)
        else:
            render_dry_run(console, dry)
        return
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        tasks: dict[tuple[str, str | None], object] = {}

        def progress(event: Event) -> None:
            key = (event.item_id, event.arm)
            if key not in tasks:
                tasks[key] = bar.add_task(f"{event.item_id} {event.arm or 'panel'}", total=1)
            task = tasks[key]
            bar.update(task, description=f"{event.item_id} {event.arm or 'panel'} · {event.stage}")  # type: ignore[arg-type]
            step_line(f"{event.item_id} {event.arm or 'panel'} · {event.stage}")
            if event.done:
                bar.update(task, completed=1)  # type: ignore[arg-type]

        def plan(bill: Bill) -> None:
            say_before(bill_lines(f"replay run of {doc.name}", bill), json_out=json_out)
            confirm_bill(b, bill, yes=yes, json_out=json_out, command="muse replay run")

        out = asyncio.run(
            run_replay(b, doc, picked, concurrency=concurrency, seed=seed, new=new, progress=progress, on_plan=plan)
        )
    if json_out:
        emit_json(out)
    else:
        render_run(console, out)
    finish(run_outcome(out))


@replay_app.command("runs")
def runs_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Every replay run, newest first: its set, kind, arms, status and how many of its samples ended."""
    from ..replay import list_runs

    doc = list_runs(open_book(book))
    if json_out:
        emit_json(doc)
        return
    if not doc.runs:
        console.print("no replay run yet — `muse replay run SET` starts one", markup=False)
        return
    for r in doc.runs:
        console.print(
            f"{r.id}  {r.status:<11} {r.kind:<13} set {r.set_name} ({r.set_sha256[:12]})  arms {','.join(r.arms)}  "
            f"samples {r.samples}/{r.planned}  started {r.started_at[:19]}  writer {r.writer_config_sha256[:12]}",
            markup=False,
        )
    console.print("details: `muse replay status RUN`", markup=False)


@replay_app.command("status")
def status_cmd(
    run_id: Annotated[str, typer.Argument(help="The replay run id (RR…).", metavar="RUN")],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """A run as stored: its configuration hashes, every sample (pending ones too) and panel."""
    b = open_book(book)
    from ..replay import load_run, run_doc

    out = run_doc(b, load_run(b, run_id).id)
    if json_out:
        emit_json(out)
    else:
        render_run(console, out)


@replay_app.command("report")
def report_cmd(
    run_id: Annotated[str, typer.Argument(help="The replay run id (RR…).", metavar="RUN")],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Per dimension and scene type C−A and B−A, per-id detector/panel agreement, arm B by new-character share,
    and the judges' reliability figures (the gates decide: `muse gate evaluate`)."""
    from ..replay import replay_report

    out = replay_report(open_book(book), run_id)
    if json_out:
        emit_json(out)
    else:
        render_replay_report(console, out)
