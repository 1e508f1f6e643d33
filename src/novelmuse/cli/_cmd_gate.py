"""`muse gate keygen / verify / show / reindex / input / evaluate`: the signing key, the journal of gate reports
and receipts, and the gates of a replay run.

Gates are evaluated only on a replay run, from the store (issue 12: `input` and `evaluate` take a run id and
rebuild its gate input): there is deliberately no command that evaluates a gate from a JSON file a user hands
in (拒绝自算 JSON).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from .. import replay  # lazy: each command loads only the replay modules it calls
from ..book import Book, load_user_config
from ..errors import InputError
from ..reports import (
    KeygenResult,
    ReindexResult,
    gate_outcome,
    render_gate,
    render_gate_input,
    render_gate_show,
    render_gate_verify,
    render_keygen,
    render_reindex,
)
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, finish, open_book

gate_app = typer.Typer(
    help="Gate receipts: the signing key, and the CAS journal of gate reports and signed receipts.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(gate_app, name="gate")


def _book_if_any(book: Path | None) -> Book | None:
    """The book named by --book (which must exist), else the one around the current directory, else None."""
    if book is not None:
        return open_book(book)
    try:
        return open_book(None)
    except InputError as exc:
        if exc.code != "BOOK_NOT_FOUND":
            raise
        return None


@gate_app.command("keygen")
def keygen_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Make the Ed25519 key that signs gate receipts, at the user config's [gate] key_path (default
    ~/.config/novelmuse/keys/gate_ed25519.pem; file 0600, directory 0700), and print its public key for
    book.toml [gate] signer. Refuses a path inside a book and never overwrites an existing key."""
    target = _book_if_any(book)
    path = replay.key_path(target.config if target is not None else load_user_config())
    public = replay.generate_key(path)
    doc = KeygenResult(
        key_path=str(path), signer=public.text, key_id=public.key_id, book=str(target.root) if target else None
    )
    if json_out:
        emit_json(doc)
    else:
        render_keygen(console, doc)


@gate_app.command("verify")
def verify_cmd(
    all_signatures: Annotated[
        bool,
        typer.Option("--all-signatures", help="Check every entry's signature, not only the last one's."),
    ] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Walk the whole journal: hashes, links and seqs of every entry, the signature that covers them, every
    receipt's report and bound artefacts (re-hashed), every report recomputed from its gate input. Exit 0
    when intact (or empty), 3 when anything is wrong — each problem named by seq."""
    b = open_book(book)
    doc = replay.verify_journal(
        b, reader=replay.store_reader(b, gate_input_rebuilder(b)), all_signatures=all_signatures
    )
    _finish(doc, json_out, render_gate_verify)


@gate_app.command("show")
def show_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """List every gate evaluation per agent configuration — the writer's and the outliner's (the current ones
    first) — with how many replay runs were
    evaluated and each gate's latest evaluation — the one that counts, passed or failed — then every report and
    receipt in chain order, after verifying the journal (exit 3 when it does not verify: the listing is still
    printed, under the problems)."""
    b = open_book(book)
    doc = replay.verify_journal(b, reader=replay.store_reader(b, gate_input_rebuilder(b)), listing=True)
    current = [replay.writer_config_sha256(b), replay.outliner_config_sha256(b)]  # which ones are current: hashes only
    doc = doc.model_copy(update={"configurations": replay.by_configuration(doc.listing or [], current)})
    _finish(doc, json_out, render_gate_show)


@gate_app.command("reindex")
def reindex_cmd(
    force: Annotated[
        bool,
        typer.Option("--force", help="Rebuild even when the index holds entries the journal lost (its only record)."),
    ] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Rebuild the store's gate index from the journal (only from a chain that verifies)."""
    b = open_book(book)
    indexed = replay.rebuild_index(b, force=force)
    doc = ReindexResult(journal=replay.journal_location(b), indexed=indexed)
    if json_out:
        emit_json(doc)
    else:
        render_reindex(console, doc)


def gate_input_rebuilder(b: Book) -> Callable[[Any], Any]:
    """The store's GateInputRebuilder, loaded on its first call: a walk that only checks entries below the
    verification checkpoint rebuilds nothing, so `muse gate show` need not load the builder. (Tests replace this
    name to rebuild from the runs they recorded.)"""
    built: list[Callable[[Any], Any]] = []

    def rebuild(ref: Any) -> Any:
        if not built:
            built.append(replay.gate_input_rebuilder(b))
        return built[0](ref)

    return rebuild


def _finish(doc: replay.VerifyReport, json_out: bool, render: Callable[[Console, replay.VerifyReport], None]) -> None:
    if json_out:
        emit_json(doc)
    else:
        render(console, doc)
    if not doc.ok:
        first = doc.problems[0]
        if not json_out:
            err_console.print(
                f"error[GATE_JOURNAL_INVALID]: {len(doc.problems)} problem(s) in the gate journal, first at seq "
                f"{first.seq} ({first.code}), {doc.journal} — nothing in it can be trusted until it is restored; "
                "only novelmuse's issuer may write it",
                markup=False,
            )
        finish("failed_closed")


@gate_app.command("input")
def input_cmd(
    run_id: Annotated[str, typer.Argument(help="The replay run id (RR…).", metavar="RUN")],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Build the run's gate-input.json from the store (manifests, receipts, strict reports — every artefact
    re-hashed) and write it beside the run; rebuilding gives the same bytes."""
    doc = replay.gate_input_doc(open_book(book), run_id)
    if json_out:
        emit_json(doc)
    else:
        render_gate_input(console, doc)


@gate_app.command("evaluate")
def evaluate_cmd(
    run_id: Annotated[str, typer.Argument(help="The replay run id (RR…).", metavar="RUN")],
    gate: Annotated[str, typer.Option("--gate", help="A (is the detector trustworthy?) or B (is C better than A?).")],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Evaluate Gate A or B on a replay run through the one issuer: the report is journaled, and a signed receipt
    only when it passed. Exit 0 passed, 1 failed, 4 insufficient (the set is too small to decide)."""
    picked = gate.strip().upper()
    if picked not in ("A", "B"):
        raise InputError("USAGE", f"--gate {gate!r} is not a gate", "--gate", "use A or B")
    doc = replay.evaluate_run(open_book(book), run_id, "A" if picked == "A" else "B")
    if json_out:
        emit_json(doc)
    else:
        render_gate(console, doc)
    finish(gate_outcome(doc))
