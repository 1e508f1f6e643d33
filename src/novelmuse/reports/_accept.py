"""Terminal rendering of an accept (the preflight, what was written or why nothing was) and of the bill a paid step
prints before its first call; how an accept ends."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..editorial import StepOutcome
from ..errors import Outcome
from ..llm import Bill
from ..writing import AcceptDoc, DecisionOut, DeskDraft

KIND = {"chapter": "正文", "review": "审改", "outline": "细纲", "plan": "规划"}
_DECISION = {"accept": "[green]accepted[/green]", "revise": "[cyan]revised[/cyan]", "reject": "[red]rejected[/red]"}


def bill_lines(what: str, bill: Bill) -> list[str]:
    """The bill before a paid step, one line per role and the total: calls (and requests), the upper bound of
    input and output tokens, the worst-case cost (unknown when a model has no price)."""
    if bill.empty:
        return [f"{what}: no model call planned"] + [f"note: {n}" for n in bill.notes]

    def cost(c: float | None) -> str:
        return "unknown (a model has no price)" if c is None else f"≤ {c:.4f}"

    lines = [
        f"{what}: at most {bill.calls} call(s) ({bill.requests} request(s) with corrections), ≤ {bill.input_tokens:,}"
        f" input and ≤ {bill.output_tokens:,} output tokens, cost {cost(bill.cost)}"
    ]
    lines += [
        f"  {r.role} ({r.model}): ≤ {r.calls} call(s), ≤ {r.input_tokens:,} in / ≤ {r.output_tokens:,} out, cost"
        f" {cost(r.cost)}"
        for r in bill.roles
    ]
    return lines + [f"note: {n}" for n in bill.notes]


def decision_text(d: DecisionOut | None) -> str:
    if d is None:
        return "—"
    label = _DECISION[d.decision]
    if d.mode != "manual":
        label += f" ({d.mode})"
    return label


def draft_head(d: DeskDraft) -> str:
    arm = f", arm {d.arm}" if d.arm else ""
    of = "plan/ and cards/" if d.kind == "plan" else f"chapter {d.chapter}"
    return (
        f"draft {d.short} ({d.id}) — {KIND[d.kind]} of {of}, {escape(d.origin)}{arm}: {d.status};"
        f" {d.chars} characters, text {d.text_sha256[:12]}…; decision: {decision_text(d.decision)}"
    )


def steps_table(console: Console, steps: list[StepOutcome]) -> None:
    table = Table(show_header=True, header_style="bold")
    for col in ("check", "outcome", "detail"):
        table.add_column(col)
    for s in steps:
        table.add_row(s.step, escape(s.label), escape(s.detail))
    console.print(table)


def render_accept(console: Console, doc: AcceptDoc) -> None:
    """The preflight's checks, what was overridden, and what was written (or why nothing was)."""
    console.print(draft_head(doc.draft))
    steps_table(console, list(doc.preflight))
    if doc.overrides:
        console.print(f"let through on request: {', '.join(doc.overrides)} (recorded in the decision)")
    if doc.status == "accepted":
        kept = f"; the text it replaced is kept as revision {doc.file_revision_id}" if doc.replaced_sha256 else ""
        console.print(f"[green]accepted[/green]: written to {escape(doc.written or '')}{kept}")
    else:
        console.print(f"[red]{doc.status}[/red]: {escape(doc.reason or '')} — nothing was written")
    if doc.calls:
        cost = "unknown" if doc.cost is None else f"{doc.cost:.4f}"
        console.print(
            f"  {doc.calls} model call(s), {doc.input_tokens} input / {doc.output_tokens} output tokens, cost {cost}"
        )


_ACCEPT_OUTCOMES: dict[str, Outcome] = {
    "accepted": "ok",
    "refused": "findings",
    "not_evaluated": "not_evaluated",
    "error": "failed_closed",
}


def accept_outcome(doc: AcceptDoc) -> Outcome:
    """accepted: ok; refused by a check: findings; the gate could not run: not_evaluated; a call failed closed."""
    return _ACCEPT_OUTCOMES[doc.status]


def accept_note(doc: AcceptDoc) -> str | None:
    """The one stderr line when nothing was written: why, and what to do."""
    d = doc.draft
    if doc.status == "not_evaluated":
        return (
            f"error[{doc.error_code}]: {doc.reason} — nothing was written; configure a judge model, or accept without"
            f" the quality gate: `muse drafts accept {d.short} --without-gate` (recorded in the decision)"
        )
    if doc.status == "refused":
        fix = f"`muse drafts revise {d.short}` to take the text over, or `muse drafts reject {d.short}`"
        if doc.reason and doc.reason.startswith("manifest"):
            fix = f"`muse drafts accept {d.short} --accept-changed-memory` (recorded), or write the chapter again"
        return f"error[{doc.error_code}]: {doc.reason} — nothing was written; {fix}"
    if doc.status == "error":
        return f"error[{doc.error_code}]: {doc.reason} — nothing was written"
    return None
