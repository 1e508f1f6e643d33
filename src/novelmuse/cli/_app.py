"""The Typer application; each command group lives in its own module and registers itself here."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__
from ..errors import exit_code

app = typer.Typer(
    name="muse",
    help=(
        "novelmuse — an AI editorial room for long Chinese web novels.\n\n"
        "\b\nExit codes (every command):\n"
        "  0    done: everything asked for was evaluated and passed\n"
        "  1    a check ran and found errors, or a quality gate failed\n"
        "  2    bad input or usage; nothing was changed\n"
        "  3    a model or gate step failed closed\n"
        "  4    not evaluated: a step was skipped (no model configured, an unenforced rules.txt line, …)"
        " — skip is never 0\n"
        "  70   a novelmuse bug (error[INTERNAL]; rerun with MUSE_DEBUG=1)\n"
        "  130  interrupted (Ctrl-C); rerun to resume"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(ctx: typer.Context, value: bool) -> None:
    if value:
        typer.echo(f"muse {__version__}")
        ctx.exit(exit_code("ok"))  # before any command runs: nothing else to do


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the novelmuse version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """novelmuse — an AI editorial room for long Chinese web novels."""


@app.command()
def version() -> None:
    """Print the novelmuse version."""
    typer.echo(__version__)


# Command modules register their commands on `app` when imported (one line per module, below).
from . import (  # noqa: E402
    _cmd_book,  # noqa: F401  muse init, muse import
    _cmd_check,  # noqa: F401  muse check
    _cmd_gate,  # noqa: F401  muse gate keygen/verify/show/reindex/input/evaluate
    _cmd_judge,  # noqa: F401  muse judge, muse rubrics
    _cmd_memory,  # noqa: F401  muse cards show/lint, ledger, search, mentions, sync, facts extract
    _cmd_models,  # noqa: F401  muse calls, muse cost, muse vault recover
    _cmd_models_check,  # noqa: F401  muse models check
    _cmd_outline_draft,  # noqa: F401  muse outline draft
    _cmd_replay,  # noqa: F401  muse replay register/run/status/report
    _cmd_report,  # noqa: F401  muse report, muse status, muse export
    _cmd_review,  # noqa: F401  muse review
    _cmd_rules,  # noqa: F401  muse rules lint, muse rules show
    _cmd_rules_normalize,  # noqa: F401  muse rules normalize
    _cmd_write,  # noqa: F401  muse write N, muse write show N
    _cmd_writing,  # noqa: F401  muse outline show/lint/confirm, muse context
)
