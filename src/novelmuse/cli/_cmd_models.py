"""`muse calls`, `muse cost`, `muse vault recover`: what the model layer recorded, and vault upkeep."""

from __future__ import annotations

from typing import Annotated

import typer

from ..llm import cost_summary, list_calls, list_receipts, recover_vault, require_run
from ..reports import (
    CallsReport,
    CostReport,
    VaultRecoverReport,
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
def calls(book: BookOpt = None, run: RunOpt = None, json_out: JsonOpt = False) -> None:
    """List model calls and their receipts (one per attempt), oldest first."""
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
