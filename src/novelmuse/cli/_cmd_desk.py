"""The author's desk: `muse drafts [N]`, `muse drafts show|diff|accept|revise|reject|stats`, and `muse revisions N`,
`muse revisions restore N REV`."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click import Context  # the Click that Typer vendors

from ..book import read_user_file
from ..errors import InputError, Outcome
from ..limits import MAX_CHAPTER_NUMBER
from ..reports import (
    accept_note,
    accept_outcome,
    bill_lines,
    render_accept,
    render_draft_diff,
    render_draft_show,
    render_drafts,
    render_reject,
    render_restore,
    render_revise,
    render_revisions,
    render_stats,
)
from ..writing import (
    AcceptOptions,
    accept_draft,
    diff_draft,
    drafts_stats,
    file_history,
    list_drafts,
    reject_draft,
    restore_revision,
    revise_draft,
    show_draft,
)
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
    in_session,
    open_book,
    outline_admission_problems,
    say_before,
)

DraftArg = Annotated[str, typer.Argument(help="The draft's id or short id (as `muse drafts` lists it).", metavar="ID")]
ChapterOpt = Annotated[
    int | None, typer.Argument(help="Only this chapter's drafts.", min=0, max=MAX_CHAPTER_NUMBER, show_default=False)
]


class _NumberGroup(typer.core.TyperGroup):
    """`muse drafts N` is `muse drafts list N` (and `muse revisions N` is `muse revisions list N`): a chapter number
    where a subcommand would be."""

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        if args and args[0].isdigit():
            args = ["list", *args]
        return super().resolve_command(ctx, args)


drafts_app = typer.Typer(
    help="The author's desk: drafts a model made for the book wait here for your decision — accept, revise, reject.",
    cls=_NumberGroup,
    invoke_without_command=True,
)
app.add_typer(drafts_app, name="drafts")


def _list(chapter: int | None, all_drafts: bool, book: Path | None, json_out: bool) -> None:
    doc = list_drafts(open_book(book), chapter, all_drafts=all_drafts)
    if json_out:
        emit_json(doc)
    else:
        render_drafts(console, doc)


AllOpt = Annotated[bool, typer.Option("--all", help="Also the drafts repaired or re-asked on the way.")]


@drafts_app.callback()
def drafts(ctx: typer.Context, all_drafts: AllOpt = False, book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """List the drafts waiting on the desk (`muse drafts [N]`): chapter drafts of `muse write`, the texts of
    `muse review`, fine-outline drafts of `muse outline draft` — each with its status and your decision."""
    if ctx.invoked_subcommand is None:
        _list(None, all_drafts, book, json_out)


@drafts_app.command("list")
def drafts_list(
    chapter: ChapterOpt = None, all_drafts: AllOpt = False, book: BookOpt = None, json_out: JsonOpt = False
) -> None:
    """List the drafts (of chapter N): id, kind, chapter, status, characters, created, decision."""
    _list(chapter, all_drafts, book, json_out)


@drafts_app.command("show")
def drafts_show(draft: DraftArg, book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Print a draft's text (paged on a terminal), its declared facts, its detector report, its manifest."""
    doc = show_draft(open_book(book), draft)
    if json_out:
        emit_json(doc)
    else:
        render_draft_show(console, doc, page=console.is_terminal)


@drafts_app.command("diff")
def drafts_diff(
    draft: DraftArg,
    against: Annotated[
        str | None, typer.Option("--against", help="Compare with this draft instead of the current file.", metavar="ID")
    ] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show a draft against the chapter (or outline) as it is now, or against another draft, character by character."""
    doc = diff_draft(open_book(book), draft, against)
    if json_out:
        emit_json(doc)
    else:
        render_draft_diff(console, doc)


@drafts_app.command("accept")
def drafts_accept(
    draft: DraftArg,
    without_gate: Annotated[
        bool,
        typer.Option(
            "--without-gate", help="Accept even though the quality gate cannot run (no judge model); recorded."
        ),
    ] = False,
    accept_changed_memory: Annotated[
        bool,
        typer.Option(
            "--accept-changed-memory",
            help="Accept a draft whose context no longer rebuilds as it was written (the memory changed); recorded.",
        ),
    ] = False,
    replace_author_text: Annotated[
        bool,
        typer.Option(
            "--replace-author-text",
            help="Replace the chapter's existing text (yours; kept as a revision, see `muse revisions`); recorded.",
        ),
    ] = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Accept a draft: accept_preflight (the file is what you had when the draft was made, the context rebuilds
    identically, the detector passed on exactly this text, the rules hold, the quality gate passes), then the
    chapter file is written — keeping its title — and the text it replaces is kept as a revision.

    Exit 0 accepted, 1 a check failed, 2 bad input (a rejected draft, a file changed since the draft), 3 a step
    failed closed, 4 the quality gate could not run (no judge model; nothing written unless --without-gate)."""
    b = open_book(book)
    options = AcceptOptions(
        without_gate=without_gate, accept_changed_memory=accept_changed_memory, replace_author_text=replace_author_text
    )

    admission = outline_admission_problems  # a drafted outline's admitting receipts are checked again

    def bill(got: Any) -> None:  # the quality gate's judges: above [budget] confirm_above it asks (or needs --yes)
        say_before(bill_lines("accept", got), json_out=json_out)
        confirm_bill(b, got, yes=yes, json_out=json_out, command=f"muse drafts accept {draft}")

    if any(b.config.role_target(role) for role in ("judge", "detector")):
        doc = in_session(b, "accept", lambda s: accept_draft(b, s, draft, options, on_bill=bill, admission=admission))
    else:  # no model could be called: no model session (nor the model layer) is needed
        doc = asyncio.run(accept_draft(b, None, draft, options, admission=admission))
    outcome = accept_outcome(doc)
    if json_out:
        emit_json(doc, outcome)
    else:
        render_accept(console, doc)
    if (note := accept_note(doc)) is not None:
        err_console.print(note, markup=False)
    finish(outcome)


def _edit(text: str, suffix: str) -> str:
    """Open `text` in $VISUAL / $EDITOR and return what the author saved."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise InputError(
            "EDITOR_NOT_SET",
            "no editor to open the draft in ($VISUAL and $EDITOR are unset)",
            "environment",
            "set $EDITOR, or save the edited text to a file and pass `--from FILE`",
        )
    fd, name = tempfile.mkstemp(prefix="muse-draft-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        rc = subprocess.call([*shlex.split(editor), name])
        if rc != 0:
            raise InputError(
                "EDITOR_FAILED", f"the editor exited with {rc}: nothing was recorded", editor, "save and quit normally"
            )
        return Path(name).read_text(encoding="utf-8")
    finally:
        os.unlink(name)


@drafts_app.command("revise")
def drafts_revise(
    draft: DraftArg,
    from_: Annotated[
        Path | None,
        typer.Option(
            "--from", help="The edited text (UTF-8); default: open the draft in $VISUAL / $EDITOR.", metavar="FILE"
        ),
    ] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Take a draft over: your edited text becomes a new draft bound to it (how much you changed is recorded),
    checked at once — then `muse drafts accept` it. Exit 1 when the edited text fails a check."""
    b = open_book(book)
    if from_ is not None:
        raw = read_user_file(from_, what="edited draft", kind="DRAFT")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError("DRAFT_ENCODING", "the edited text is not UTF-8", str(from_), "save it as UTF-8") from None
    else:
        shown = show_draft(b, draft)
        text = _edit(shown.text, ".yaml" if shown.draft.kind == "outline" else ".md")
    doc = revise_draft(b, draft, text)
    outcome: Outcome = "ok" if doc.ok else "findings"
    if json_out:
        emit_json(doc, outcome)
    else:
        render_revise(console, doc)
    finish(outcome)


@drafts_app.command("reject")
def drafts_reject(
    draft: DraftArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (recorded with the decision).")] = "",
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Reject a draft, with your reason: it is kept, and can never be accepted."""
    doc = reject_draft(open_book(book), draft, reason)
    if json_out:
        emit_json(doc)
    else:
        render_reject(console, doc)


@drafts_app.command("stats")
def drafts_stats_cmd(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Your decisions per writer configuration and arm: accepted, revised (and how much you changed), rejected —
    the one measure of the writer that comes from you, not from a model."""
    doc = drafts_stats(open_book(book))
    if json_out:
        emit_json(doc)
    else:
        render_stats(console, doc)


class _TargetGroup(typer.core.TyperGroup):
    """`muse revisions N|FILE` is `muse revisions list N|FILE`."""

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["list", *args]
        return super().resolve_command(ctx, args)


revisions_app = typer.Typer(
    help="Every version of a chapter, outline, card, plan or rules file a command replaced, kept and restorable.",
    no_args_is_help=True,
    cls=_TargetGroup,
)
app.add_typer(revisions_app, name="revisions")


OutlineOpt = Annotated[bool, typer.Option("--outline", help="The chapter's fine outline instead of its text.")]
TargetArg = Annotated[
    str,
    typer.Argument(
        help="A chapter number, or an author's file of the book (rules.txt, cards/guan-yu.yaml, plan/outline.md).",
        metavar="N|FILE",
    ),
]


@revisions_app.command("list")
def revisions_list(
    target: TargetArg, outline: OutlineOpt = False, book: BookOpt = None, json_out: JsonOpt = False
) -> None:
    """List the kept versions of chapter N's file, or of another file of yours (oldest first)."""
    doc = file_history(open_book(book), target, outline=outline)
    if json_out:
        emit_json(doc)
    else:
        render_revisions(console, doc)


@revisions_app.command("restore")
def revisions_restore(
    target: TargetArg,
    revision: Annotated[str, typer.Argument(help="The revision id (`muse revisions N` lists them).", metavar="REV")],
    outline: OutlineOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Put a kept version back; the text the file has now is kept first (a restore can be undone the same way)."""
    doc = restore_revision(open_book(book), target, revision, outline=outline)
    if json_out:
        emit_json(doc)
    else:
        render_restore(console, doc)
