"""`muse calls`, `muse cost`, `muse vault recover`: what the model layer recorded, and vault upkeep."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import InputError
from ..llm import call_detail, cost_summary, list_calls, list_receipts, recover_vault, require_run
from ..reports import (
    CallsReport,
    CostReport,
    VaultRecoverReport,
    render_call_detail,
    render_calls,
    render_cost,
    render_vault_recover,
)
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, open_book

RunOpt = Annotated[str | None, typer.Option("--run", help="Only this run id.", show_default=False)]

vault_app = typer.Typer(name="vault", help="The raw model vault (.muse/vault).", no_args_is_help=True)
app.add_typer(vault_app, name="vault")


@app.command()
def calls(
    show: Annotated[
        str | None, typer.Argument(help="`show`, to show one call whole.", metavar="[show]", show_default=False)
    ] = None,
    call_id: Annotated[
        str | None, typer.Argument(help="The call's id (from `muse calls`).", show_default=False)
    ] = None,
    last: Annotated[bool, typer.Option("--last", help="With show: the latest call.")] = False,
    book: BookOpt = None,
    run: RunOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """List model calls and their receipts (one per attempt), oldest first.

    `muse calls show ID` (or `show --last`) shows one call whole: each attempt's request in brief and the raw answer
    as the vault keeps it (never a key)."""
    if show is not None and show != "show":
        raise InputError("USAGE", f"unexpected argument {show!r}", "command line", "muse calls [show ID | show --last]")
    if show is not None or last:
        if (call_id is None) == (not last):
            raise InputError("USAGE", "show one call: give its id, or --last", "command line", "muse calls show ID")
        opened = open_book(book)
        detail = call_detail(opened.db, opened.vault_dir, call_id)
        if json_out:
            emit_json(detail)
        else:
            render_call_detail(detail, console)
        return
    opened = open_book(book)
    if run is not None:
        require_run(opened.db, run)
    report = CallsReport(run_id=run, calls=list_calls(opened.db, run), receipts=list_receipts(opened.db, run))
    if json_out:
        emit_json(report)
    else:
        render_calls(report, console)


@app.command()
def cost(book: BookOpt = None, run: RunOpt = None, json_out: JsonOpt = False) -> None:
    """Sum tokens and cost by role and by run (an unknown cost is shown as unknown, never 0)."""
    opened = open_book(book)
    if run is not None:
        require_run(opened.db, run)
    report = CostReport.of(cost_summary(opened.db, run), run)
    if json_out:
        emit_json(report)
    else:
        render_cost(report, console)


@vault_app.command("recover")
def vault_recover(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Remove raw files left by crashed model calls (leases whose process or run is gone)."""
    report = VaultRecoverReport.of(recover_vault(open_book(book)))
    if json_out:
        emit_json(report)
    else:
        render_vault_recover(report, console)
