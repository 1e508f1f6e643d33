"""`muse models check`: validate the model configuration and send one tiny structured call per role."""

from __future__ import annotations

import typer

from ..reports import render_models_check
from ..roles.common import check_models
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, finish, in_session, open_book

models_app = typer.Typer(
    name="models",
    help="Check the configured models.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(models_app, name="models")


@models_app.command("check")
def models_check(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Validate providers, roles, keys, pins and prices, then send one tiny structured call per role.

    Exit 0 when every configured role passed (unconfigured roles are reported as skipped), 2 for a
    configuration error, 3 when a role's call failed closed.
    """
    b = open_book(book)
    report = in_session(b, "models-check", lambda session: check_models(b, session))
    if json_out:
        emit_json(report, report.outcome)
    else:
        render_models_check(report, console)
    finish(report.outcome)
