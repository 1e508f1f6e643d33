"""Terminal rendering of a stretch of the book (`muse write A-B`, `--continue`, `--status`): the plan before the first
call, then one row per chapter — its state, its draft, how it was decided — where the run stopped and why, what the
author does next, and what the command spent (the same figures as `muse cost --run`)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..writing import StretchDoc, StretchPlan
from ._accept import bill_lines
from ._spend import spend_text

_STATE = {
    "todo": "[dim]to write[/dim]",
    "writing": "[yellow]writing (interrupted)[/yellow]",
    "drafted": "drafted — waiting for a decision",
    "accepted": "[green]accepted[/green] (facts not extracted yet)",
    "refused": "[red]not accepted[/red]",
    "extracted": "[green]accepted, facts extracted[/green]",
}


def stretch_plan_lines(plan: StretchPlan) -> list[str]:
    """Before the first call: the run (new or resumed), the chapters still to do, and the bill."""
    head = f"{'resuming' if plan.resumed else 'starting'} run {plan.stretch_id}: chapters {plan.first}-{plan.last}, "
    head += f"{plan.mode} mode; to do: " + (", ".join(map(str, plan.todo)) if plan.todo else "nothing")
    return [head, *bill_lines(f"the run's bill for {len(plan.todo)} chapter(s)", plan.bill)]


def render_stretch(console: Console, doc: StretchDoc) -> None:
    """The run: one row per chapter, then where it stopped and what to do next, then the spend."""
    console.print(
        f"run {doc.id}: chapters {doc.first}-{doc.last}, {doc.mode} mode, arm {doc.arm} — [bold]{doc.status}[/bold]"
    )
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("chapter", "state", "draft", "detector gate", "decision"):
        table.add_column(col)
    for c in doc.chapters:
        table.add_row(
            str(c.chapter),
            _STATE.get(c.state, escape(c.state)),
            c.draft_short or "—",
            escape(c.write_status or "—"),
            escape(c.decision or "—"),
        )
    console.print(table)
    if doc.stop_chapter is not None and doc.status != "finished":
        console.print(f"stopped at chapter {doc.stop_chapter}: {escape(doc.stop_reason)}")
    elif doc.stop_reason:
        console.print(escape(doc.stop_reason))
    if doc.next_step:
        console.print(f"next: {escape(doc.next_step)}")
    if doc.run_id:
        s = doc.spent
        console.print(f"this command (run {doc.run_id}): {spend_text(s.model_dump())}")
    t = doc.total_spent
    console.print(f"the whole run ({len(doc.run_ids)} command(s)): {spend_text(t.model_dump())}")
