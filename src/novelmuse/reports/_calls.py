"""Terminal and JSON shapes of `muse calls`, `muse cost` and `muse vault recover`.

An unknown cost is printed as `unknown` (JSON: null with `unknown_cost_attempts` > 0), never as 0.
"""

from __future__ import annotations

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..llm import CostLine, CostSummary, Receipt, RecoveryReport


class CallsReport(BaseModel):
    """`muse calls --json`: receipts in the order they happened (one per attempt)."""

    run_id: str | None
    receipts: list[Receipt]


class CostReport(BaseModel):
    """`muse cost --json`: tokens and cost summed overall, by role and by run."""

    run_id: str | None
    total: CostLine
    by_role: list[CostLine]
    by_run: list[CostLine]

    @classmethod
    def of(cls, summary: CostSummary, run_id: str | None) -> CostReport:
        """Wrap a service summary for output."""
        return cls(run_id=run_id, total=summary.total, by_role=summary.by_role, by_run=summary.by_run)


class VaultRecoverReport(BaseModel):
    """`muse vault recover --json`."""

    leases: int
    completed: int
    active: int
    crashed: int
    orphans_removed: int
    recovered_calls: list[str]
    interrupted_runs: list[str]

    @classmethod
    def of(cls, report: RecoveryReport) -> VaultRecoverReport:
        """Wrap a recovery report for output."""
        return cls.model_validate(report.to_json())


def _cost(value: float | None) -> Text:
    return Text("unknown", style="yellow") if value is None else Text(f"{value:.6f}")


def render_calls(report: CallsReport, console: Console) -> None:
    """One line per attempt (grep-friendly): when, call, attempt, role, provider:model, outcome, usage."""
    if not report.receipts:
        console.print("no model calls recorded" + (f" for run {report.run_id}" if report.run_id else ""))
        return
    for r in report.receipts:
        line = Text(f"{r.started_at[:10]} {r.started_at[11:19]}  {r.call_id} #{r.attempt}  {r.role}  ")
        line.append(f"{r.provider}:{r.requested_model} ({r.provider_kind})")
        if r.resolved_model not in (None, r.requested_model):
            line.append(f" → {r.resolved_model}", style="red")
        line.append("  ")
        if r.outcome == "ok":
            line.append("ok", style="green")
        else:
            line.append(f"{r.outcome}[{r.error_code}]", style="red")
        if r.input_tokens is not None:
            line.append(f"  {r.input_tokens}+{r.output_tokens} tokens")
        line.append("  cost ")
        line.append_text(_cost(r.cost))
        if r.latency_ms is not None:
            line.append(f"  {r.latency_ms:.0f} ms")
        console.print(line)
    calls = len({r.call_id for r in report.receipts})
    console.print(f"{len(report.receipts)} attempts in {calls} calls")


def _cost_table(title: str, lines: list[CostLine], console: Console) -> None:
    table = Table(title=title, show_header=True, header_style="bold", title_justify="left")
    table.add_column("", overflow="fold")
    for col in ("calls", "attempts", "failed", "input", "output"):
        table.add_column(col, justify="right")
    table.add_column("cost", justify="right", no_wrap=True, min_width=8)
    notes: list[str] = []
    for line in lines:
        label = line.key + (f" ({line.kind}, {line.status})" if line.kind else "")
        table.add_row(
            label,
            str(line.calls),
            str(line.attempts),
            str(line.failed_attempts + line.refused_attempts),
            str(line.input_tokens + line.cache_read_tokens + line.cache_write_tokens),
            str(line.output_tokens),
            _cost(line.cost),
        )
        if line.unknown_cost_attempts:
            notes.append(f"{line.key}: {line.unknown_cost_attempts} attempts of unknown cost (no price or no usage)")
    console.print(table)
    for note in notes:
        console.print(Text(note, style="yellow"))


def render_cost(report: CostReport, console: Console) -> None:
    """Tokens and cost by role, by run, and in total."""
    if report.total.attempts == 0:
        console.print("no model calls recorded")
        return
    _cost_table("by role", report.by_role, console)
    _cost_table("by run", report.by_run, console)
    _cost_table("total", [report.total], console)


def render_vault_recover(report: VaultRecoverReport, console: Console) -> None:
    """What the recovery pass found and removed."""
    console.print(
        f"vault: {report.leases} leases scanned, {report.completed} completed, {report.active} active, "
        f"{report.crashed} crashed → {report.orphans_removed} orphan files removed"
    )
    for call_id in report.recovered_calls:
        console.print(f"  recovered {call_id}")
    for run_id in report.interrupted_runs:
        console.print(f"  run {run_id} marked interrupted")
