"""`muse outline draft N`: the entry guard's verdict, the draft (or the dry run's prompt), how it ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from ..errors import Outcome
from ._spend import spend_text

if TYPE_CHECKING:  # annotations only: `muse outline show` (same command group) never loads replay
    from ..replay import EntryGuard, OutlineRangeDoc, OutlineStageDoc
    from ..writing import OutlineDraftDoc


def render_guard(console: Console, guard: EntryGuard, *, enforced: bool) -> None:
    """An entry guard's verdict (the fine-outline stage's or the plan stage's): admitted by which receipts, or every
    finding of a refusal (`enforced`) or of what a real run would be refused for (a dry run)."""
    if guard.admitted:
        console.print(f"entry guard: [green]admitted[/green] — {escape(guard.summary())}")
        return
    verdict = "[red]refused[/red]" if enforced else "[yellow]would refuse a real run[/yellow]"
    console.print(
        f"entry guard: {verdict} — a real run needs verified, passed Gate A and Gate B receipts for "
        f"{escape(guard.measured)} (journal {escape(guard.journal)}: {guard.verified}, {guard.entries} entries)"
    )
    for f in guard.findings:
        console.print(f"  [red]✗[/red] {escape(f.line())}")


def _inputs(console: Console, draft: OutlineDraftDoc) -> None:
    i = draft.inputs
    parts = ", ".join(f"{m.label} {m.role} {m.where}" for m in i.materials)
    console.print(f"  material: {escape(parts) or 'none'}")
    overdue = set(i.overdue)
    shown = "、".join(f + ("（逾期）" if f in overdue else "") for f in i.foreshadows) or "none"
    cards = "、".join(i.cards) or "none"
    console.print(f"  memory as of chapter {i.as_of}: cards {escape(cards)}; open foreshadows {escape(shown)}")
    if i.facts_missing:
        console.print(f"  chapters without a fact card (written from the cards alone): {i.facts_missing}")
    console.print(f"  characters: {i.chars['total']} of {i.budget} (\\[writing] context_chars)")


def _outline(console: Console, draft: OutlineDraftDoc) -> None:
    o = draft.outline or {}
    console.print(f"  《{escape(str(o.get('title', '')))}》 {o.get('scene_type')} — {escape(str(o.get('goal', '')))}")
    for event in o.get("hard_events", []):
        basis = "、".join(draft.basis.get(event["id"], [])) or "invented — check it"
        console.print(
            f"  {event['id']} {escape(event['text'])} → {escape(event['result'])}  [dim](basis: {escape(basis)})[/dim]"
        )
    for f in o.get("foreshadows", []):
        console.print(f"  {f['op']} {escape(f['id'])} {escape(f.get('description') or f.get('note') or '')}")
    console.print(f"  hook: {escape(str(o.get('hook', '')))}")
    for note in draft.notes:
        console.print(f"  [yellow]note[/yellow] {escape(note)}")
    for w in draft.warnings:
        console.print(f"  [yellow]warning[/yellow] {w.code}: {escape(w.message)} ({escape(w.where)})")


def render_outline_draft(console: Console, doc: OutlineStageDoc) -> None:
    """The guard, then the draft written (where, what, notes, warnings, next step) or the dry run's prompt."""
    render_guard(console, doc.guard, enforced=doc.status != "dry_run")
    draft = doc.draft
    if doc.status == "refused" or draft is None:
        console.print(f"preview the prompt without a model call: muse outline draft {doc.chapter} --dry-run")
        return
    if doc.status == "dry_run":
        console.print(f"dry run of chapter {doc.chapter}'s fine-outline draft: no model call, nothing written")
        _inputs(console, draft)
        console.print(f"prompt (messages sha256 {draft.messages_sha256}):")
        for m in draft.messages or []:
            console.print(f"── {m['role']} ──", markup=False)
            console.print(m["content"], markup=False)
        return
    if doc.status == "skipped":
        console.print(f"chapter {doc.chapter}: skipped({escape(draft.reason)}) — nothing drafted")
        _inputs(console, draft)
        return
    console.print(
        f"drafted the fine outline of chapter {doc.chapter}: draft {draft.short} ({escape(draft.written_to or '')},"
        f" sha256 {draft.file_sha256}) — a draft on your desk, [yellow]not in outlines/ and not confirmed[/yellow]"
    )
    if draft.author_outline:
        console.print(
            f"  {escape(draft.author_outline)} is the author's outline and was left untouched: compare the draft "
            f"with it (`muse drafts diff {draft.short}`); accepting it would replace yours (kept as a revision)"
        )
    _inputs(console, draft)
    _outline(console, draft)
    cost = f"{draft.cost:.4f}" if draft.cost is not None else "unknown"
    console.print(
        f"  run {draft.run_id}: {draft.attempts} attempt(s), {draft.input_tokens} in / {draft.output_tokens} out "
        f"tokens, cost {cost}"
    )
    console.print(
        f"decide: `muse drafts accept {draft.short}` (lint clean, then written and confirmed),"
        f" `muse drafts revise {draft.short}` or `muse drafts reject {draft.short}`"
    )


def render_outline_range(console: Console, doc: OutlineRangeDoc) -> None:
    """The guard once, then one line per chapter drafted (where it waits) and the next step."""
    render_guard(console, doc.guard, enforced=True)
    if doc.status == "refused":
        console.print(
            f"preview one chapter's prompt without a model call: muse outline draft {doc.chapters[0]} --dry-run"
        )
        return
    for one in doc.drafts:
        draft = one.draft
        if draft is None or one.status != "drafted":
            reason = escape(draft.reason) if draft is not None else ""
            console.print(f"chapter {one.chapter}: {one.status}({reason}) — nothing drafted")
            continue
        title = escape(str((draft.outline or {}).get("title", "")))
        console.print(
            f"chapter {one.chapter}: draft {draft.short} 《{title}》 ({escape(draft.written_to or '')}) — on your "
            "desk, [yellow]not in outlines/ and not confirmed[/yellow]"
        )
    if doc.spent is not None:
        console.print(f"run {doc.run_id}: {spend_text(doc.spent)}", markup=False)
    shorts = [d.draft.short for d in doc.drafts if d.draft is not None and d.draft.short]
    if shorts:
        console.print(
            f"decide in order: `muse drafts show {shorts[0]}`, then `muse drafts accept|revise|reject {shorts[0]}`, …"
        )


def outline_draft_outcome(doc: OutlineStageDoc | OutlineRangeDoc) -> Outcome:
    """refused → failed_closed (3), skipped → not_evaluated, drafted / dry run → ok."""
    if doc.status == "refused":
        return "failed_closed"
    return "not_evaluated" if doc.status == "skipped" else "ok"


def outline_draft_error(doc: OutlineStageDoc | OutlineRangeDoc) -> str | None:
    """The one error line for stderr when the guard refused."""
    if doc.error is None:
        return None
    e = doc.error
    return f"error[{e['code']}]: {e['what']}, {e['where']} — {e['fix']}"
