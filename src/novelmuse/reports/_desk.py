"""Terminal rendering of the author's desk: `muse drafts` (list, show, diff, accept, revise, reject, stats),
`muse revisions`, and the bill a paid step prints before its first call."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..writing import (
    DraftDiffDoc,
    DraftsDoc,
    DraftShowDoc,
    RejectDoc,
    RestoreDoc,
    ReviseDoc,
    RevisionsDoc,
    StatsDoc,
)
from ._accept import KIND, decision_text, draft_head, steps_table
from ._diffs import diff_text
from .html._diff import char_diff

_STATUS_STYLE = {
    "passed": "green",
    "checked": "green",
    "held_for_author": "red",
    "failed": "red",
    "skipped": "yellow",
    "interrupted": "yellow",
    "unchecked": "yellow",
    "superseded": "dim",
}


def render_drafts(console: Console, doc: DraftsDoc) -> None:
    """The drafts on the desk, oldest first, with what to type for each."""
    if not doc.drafts:
        where = f" for chapter {doc.chapter}" if doc.chapter is not None else ""
        console.print(f"no drafts{where} yet: `muse write N` (a chapter) or `muse outline draft N` (a fine outline)")
        return
    table = Table(show_header=True, header_style="bold")
    for col in ("id", "kind", "chapter", "from", "arm", "status", "chars", "created", "decision"):
        table.add_column(col)
    for d in doc.drafts:
        style = _STATUS_STYLE.get(d.status, "")
        status = f"[{style}]{d.status}[/{style}]" if style else d.status
        origin = d.origin + (f" of {d.revises[-6:]}" if d.revises else "")
        table.add_row(
            d.short,
            KIND[d.kind],
            str(d.chapter) if d.kind != "plan" else "—",
            escape(origin),
            d.arm or "",
            status,
            str(d.chars),
            d.created_at[:16].replace("T", " "),
            decision_text(d.decision),
        )
    console.print(table)
    waiting = [d for d in doc.drafts if d.decision is None and d.status in ("passed", "held_for_author", "checked")]
    if waiting:
        first = waiting[-1]
        console.print(
            f"{len(waiting)} draft(s) wait for your decision — read one with `muse drafts show {first.short}`, then"
            f" `muse drafts accept|revise|reject {first.short}`"
        )


def render_draft_show(console: Console, doc: DraftShowDoc, *, page: bool) -> None:
    """A draft's text (through the pager on a terminal), its declared facts, its detector report in brief."""

    def body() -> None:
        console.print(draft_head(doc.draft))
        if doc.manifest_sha256:
            console.print(f"manifest {doc.manifest_sha256}")
        if doc.detector is not None:
            det = doc.detector
            coverage = "n/a" if det.coverage is None else f"{det.coverage:.2f}"
            console.print(
                f"detector: {escape(det.outcome.label)}; coverage {coverage} of {det.constraints} hard constraint(s),"
                f" {det.high_severity} blocking, {det.warnings} warning(s)"
            )
            for line in det.blocking:
                console.print(f"  [red]✗[/red] {escape(line)}")
            if det.awaiting_semantic:
                console.print(
                    f"  {det.awaiting_semantic} constraint(s) await the semantic detector: it runs when you accept"
                )
        for fact in doc.declared_facts:
            console.print(f"declared: {escape(fact.subject)} — {escape(fact.statement)} 「{escape(fact.quote)}」")
        for d in doc.decisions:
            reason = f" — {escape(d.reason)}" if d.reason else ""
            console.print(f"{d.decided_at[:19]} {decision_text(d)}{reason}")
        console.rule()
        console.print(Text(doc.text))

    if page:
        with console.pager(styles=True):
            body()
    else:
        body()


def render_draft_diff(console: Console, doc: DraftDiffDoc) -> None:
    """The draft against the current text (or another draft), character by character inside each changed line."""
    console.print(f"--- {escape(doc.old.label)}")
    console.print(f"+++ {escape(doc.new.label)}")
    if doc.identical:
        console.print("（两者相同 — identical）")
        return
    diff = char_diff(doc.old.text, doc.new.text)
    for h in diff.hunks:
        if h.kind == "same":
            console.print(Text(f"  （{h.lines} 行未改）", style="dim"))
            continue
        console.print(
            Text(f"@@ 第{h.base_line}行 → 第{h.new_line}行  删 {h.deleted} 字 · 增 {h.inserted} 字", style="cyan")
        )
        console.print(diff_text(h.pieces))


def render_revise(console: Console, doc: ReviseDoc) -> None:
    console.print(f"revised {doc.original.short} → new draft {doc.revision.short} ({doc.revision.id})")
    console.print(f"edit distance {doc.edit_chars} characters ({doc.edit_share:.1%} of the draft)")
    steps_table(console, list(doc.check))
    for line in doc.dropped_declarations:
        console.print(f"  declaration dropped (its quote is no longer in the text): {escape(line)}")
    if doc.ok:
        console.print(f"next: `muse drafts accept {doc.revision.short}`")
    else:
        console.print(
            f"[red]the revision does not pass its checks[/red]: fix it with `muse drafts revise {doc.revision.short}`"
        )


def render_reject(console: Console, doc: RejectDoc) -> None:
    reason = f" ({escape(doc.decision.reason)})" if doc.decision.reason else ""
    console.print(f"rejected draft {doc.draft.short}{reason}: it can never be accepted")


def render_stats(console: Console, doc: StatsDoc) -> None:
    """The author's decisions per writer configuration and arm."""
    if not doc.rows:
        console.print("no chapter drafts yet")
        return
    table = Table(show_header=True, header_style="bold")
    for col in ("writer configuration", "arm", "drafts", "accepted", "revised", "rejected", "undecided", "edited"):
        table.add_column(col)
    for r in doc.rows:
        edited = "—" if r.mean_edit_share is None else f"{r.mean_edit_share:.1%} (mean of {len(r.edit_shares)})"
        auto = f" ({r.automatic} automatic)" if r.automatic else ""
        table.add_row(
            (r.writer_config_sha256 or "unknown")[:12],
            r.arm or "",
            str(r.drafts),
            f"{r.accepted}{auto}",
            str(r.revised),
            str(r.rejected),
            str(r.undecided),
            edited,
        )
    console.print(table)


def render_revisions(console: Console, doc: RevisionsDoc) -> None:
    now = doc.current_sha256[:12] + "…" if doc.current_sha256 else "no file"
    console.print(f"{escape(doc.path)} now: {now}")
    if not doc.revisions:
        console.print("no version of it was replaced by novelmuse")
        return
    table = Table(show_header=True, header_style="bold")
    for col in ("revision", "when", "kept", "replaced by", "command"):
        table.add_column(col)
    for r in doc.revisions:
        kept = f"{r.sha256[:12]}… ({r.size:,} bytes)" if r.sha256 else "no file"
        table.add_row(
            r.id, r.created_at[:19].replace("T", " "), kept, (r.replaced_by_sha256 or "removed")[:12], escape(r.command)
        )
    console.print(table)
    console.print(f"put one back with `muse revisions restore {doc.target} REVISION` (the current text is kept first)")


def render_restore(console: Console, doc: RestoreDoc) -> None:
    console.print(
        f"restored {escape(doc.path)} to the version kept as {doc.restored.id};"
        f" the text it had is kept as {doc.kept.id}"
    )
