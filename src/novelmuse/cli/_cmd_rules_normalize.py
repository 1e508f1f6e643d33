"""`muse rules normalize [--write]`: a model proposes structured rules for the lines rules.txt's parser left."""

from __future__ import annotations

from typing import Annotated

import typer

from ..reports import normalize_outcome, render_normalize
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
    Exit 4 (not evaluated) when unparsed lines remain and no model is configured: skipped(no model
    configured) is never a pass; exit 0 when there is nothing to normalise (no rules.txt, no unparsed line).
    """
    b = open_book(book)
    report = in_session(b, "rules-normalize", lambda session: run_normalize(b, session, write=write))
    outcome = normalize_outcome(report)
    if json_out:
        emit_json(report, outcome)
    else:
        render_normalize(report, console)
    finish(outcome)
