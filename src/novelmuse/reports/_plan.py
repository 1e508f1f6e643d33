"""Terminal rendering of `muse plan lint` and `muse plan draft`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..errors import Outcome
from ..writing import PlanLintDoc
from ._outline_draft import render_guard

if TYPE_CHECKING:  # annotations only: `muse plan lint` never loads replay
    from ..replay import PlanStageDoc


def render_plan_lint(console: Console, doc: PlanLintDoc) -> None:
    """The volumes found, then every problem with its file:line, then the counts."""
    console.print(f"plan: {', '.join(doc.files)}", markup=False)
    console.print(
        f"volumes: {', '.join(doc.volumes) if doc.volumes else 'none (no heading names chapters)'}", markup=False
    )
    for p in doc.problems:
        style = "red" if p.severity == "error" else "yellow"
        console.print(Text(f"  {p.severity} {p.code}: {p.message} ({p.where})", style=style))
    console.print(
        f"{len(doc.volumes)} volume(s), {doc.foreshadows} planned foreshadow(s), {doc.characters} character(s) in the "
        f"settings: {doc.errors} error(s), {doc.warnings} warning(s)",
        markup=False,
    )


def render_plan_draft(console: Console, doc: PlanStageDoc) -> None:
    """The guard's verdict, then the draft on the desk (its files, notes and the next step) or the dry run's
    prompt."""
    render_guard(console, doc.guard, enforced=doc.status != "dry_run")
    draft = doc.draft
    if draft is None:
        console.print("--dry-run shows the prompt a real run would send, without a model call")
        return
    span = f"chapters {draft.first_chapter}–{draft.last_chapter}"
    if doc.status == "dry_run":
        console.print(f"dry run of the plan draft ({span}): no model call, nothing written")
        console.print(f"prompt (messages sha256 {draft.messages_sha256}):")
        for m in draft.messages or []:
            console.print(f"── {m['role']} ──", markup=False)
            console.print(m["content"], markup=False)
        return
    if doc.status == "skipped":
        console.print(f"plan draft: skipped({escape(draft.reason)}) — nothing drafted")
        return
    console.print(
        f"drafted the plan ({span}): draft {draft.short} ({escape(draft.written_to or '')}) — a draft on your desk, "
        "[yellow]nothing written to plan/ or cards/[/yellow]"
    )
    for path in draft.files:
        kept = " (exists: kept as a revision when replaced)" if path in draft.replaces else ""
        console.print(f"  {escape(path)}{kept}")
    for note in draft.notes:
        console.print(f"  [yellow]note[/yellow] {escape(note)}")
    cost = f"{draft.cost:.4f}" if draft.cost is not None else "unknown"
    console.print(
        f"  run {draft.run_id}: {draft.attempts} attempt(s), {draft.input_tokens} in / {draft.output_tokens} out "
        f"tokens, cost {cost}"
    )
    console.print(
        f"decide: `muse drafts show {draft.short}`, then `muse drafts accept {draft.short}` (plan lint and card "
        f"checks, then written), `muse drafts revise {draft.short} --from FILE` or `muse drafts reject {draft.short}`"
    )


def plan_draft_outcome(doc: PlanStageDoc) -> Outcome:
    """refused → failed_closed (3), skipped → not_evaluated (4), drafted / dry run → ok."""
    if doc.status == "refused":
        return "failed_closed"
    return "not_evaluated" if doc.status == "skipped" else "ok"
