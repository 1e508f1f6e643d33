"""`muse rules normalize [--write]`: a model proposes structured rules for the lines rules.txt's parser left."""

from __future__ import annotations

from typing import Annotated

import typer

from ..reports import render_normalize
from ..roles.normalizer import run_normalize
from ._cmd_rules import rules_app
from ._common import BookOpt, JsonOpt, console, emit_json, finish, in_session, open_book

WriteOpt = Annotated[
    bool,
    typer.Option(
        "--write",
        help="Add the proposed rules to rules.txt (the ones shown last, if rules.txt is unchanged; each original "
        "line is kept as a # comment).",
    ),
]


@rules_app.command("normalize")
def normalize_cmd(book: BookOpt = None, write: WriteOpt = False, json_out: JsonOpt = False) -> None:
    """Send the unparsed lines of rules.txt to the `normalizer` role and show the rules it proposes.

    Every proposed phrase must occur verbatim in its original line (checked; the model gets a correction
    within the call bound, then the call fails closed with exit 3). Nothing is written without --write;
    --write applies the proposals the last run showed while rules.txt is unchanged (no new call; else it
    asks the model and writes its checked answer), atomically, refused if rules.txt changed meanwhile.
    No model configured: skipped (no model configured), exit 0.
    """
    b = open_book(book)
    report = in_session(b, "rules-normalize", lambda session: run_normalize(b, session, write=write))
    if json_out:
        emit_json(report)
    else:
        render_normalize(report, console)
    finish("ok" if report.status == "passed" else "not_evaluated")
