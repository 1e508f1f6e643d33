"""Terminal and JSON shapes of `muse calls`, `muse cost` and `muse vault recover`.

An unknown cost is printed as `unknown` (JSON: null with `unknown_cost_attempts` > 0), never as 0.
"""

from __future__ import annotations

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..llm import CallDetail, CallRecord, CostLine, CostSummary, Receipt, RecoveryReport


class CallsReport(BaseModel):
    """`muse calls --json`: logical calls (outcome, diagnostics) and their receipts (one per attempt), in order."""

    run_id: str | None
    calls: list[CallRecord]
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
    modes_tightened: int = 0  # vault files found readable by others, made 0600 again
    recovered_calls: list[str]
    interrupted_runs: list[str]
    interrupted_attempts: int = 0  # in flight when their run's process died: cost unknown

    @classmethod
    def of(cls, report: RecoveryReport) -> VaultRecoverReport:
        """Wrap a recovery report for output."""
        return cls.model_validate(report.to_json())


def _cost(value: float | None) -> Text:
    return Text("unknown", style="yellow") if value is None else Text(f"{value:.6f}")


def render_calls(report: CallsReport, console: Console) -> None:
    """Per logical call a header (role, model, outcome, diagnostics codes), then one line per attempt."""
    if not report.receipts:
        console.print("no model calls recorded" + (f" for run {report.run_id}" if report.run_id else ""))
        return
    by_call: dict[str, list[Receipt]] = {}
    for r in report.receipts:
        by_call.setdefault(r.call_id, []).append(r)
    for call in report.calls:
        head = Text(f"{call.started_at[:10]} {call.started_at[11:19]}  {call.id}  {call.role}  ")
        head.append(f"{call.provider}:{call.requested_model} ({call.provider_kind})  ")
        if call.status == "ok":
            head.append("ok", style="green")
        elif call.status == "failed":
            head.append(f"failed[{call.error_code}]", style="bold red")
        else:
            head.append(call.status, style="yellow")
        head.append(f"  {call.attempts} attempt" + ("s" if call.attempts != 1 else ""))
        codes = call.diagnostics.get("codes") or {}
        if codes:
            head.append("  " + ", ".join(f"{code}×{n}" for code, n in codes.items()), style="yellow")
        console.print(head)
        for r in by_call.get(call.id, []):
            line = Text(f"    #{r.attempt} ")
            if r.outcome == "ok":
                line.append("ok", style="green")
            else:
                line.append(f"{r.outcome}[{r.error_code}]" if r.error_code else r.outcome, style="red")
            if r.resolved_model not in (None, r.requested_model):
                line.append(f"  answered by {r.resolved_model}", style="red")
            if r.input_tokens is not None:
                line.append(f"  {r.input_tokens}+{r.output_tokens} tokens")
            line.append("  cost ")
            line.append_text(_cost(r.cost))
            if r.latency_ms is not None:
                line.append(f"  {r.latency_ms:.0f} ms")
            console.print(line)
    console.print(f"{len(report.receipts)} attempts in {len(report.calls)} calls")


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
            notes.append(
                f"{line.key}: {line.unknown_cost_attempts} attempts of unknown cost"
                " (no price, no usage, or in flight when a run was killed)"
            )
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
    if report.modes_tightened:
        console.print(f"  {report.modes_tightened} vault file(s) readable by others made private (0600) again")
    for call_id in report.recovered_calls:
        console.print(f"  recovered {call_id}")
    for run_id in report.interrupted_runs:
        console.print(f"  run {run_id} marked interrupted")
    if report.interrupted_attempts:
        console.print(
            f"  {report.interrupted_attempts} attempt(s) were in flight: marked interrupted, cost unknown "
            "(the provider may have billed them; see `muse cost`)"
        )


def render_call_detail(detail: CallDetail, console: Console) -> None:
    """One call whole: its header and diagnostics, then each attempt's request in brief and its raw answer."""
    console.print(
        f"{detail.call_id}  {detail.role}  {detail.provider}  {detail.status}  schema {detail.schema_name}",
        markup=False,
    )
    if detail.diagnostics:
        console.print(f"diagnostics: {detail.diagnostics}", markup=False)
    for a in detail.attempts:
        head = Text(f"── attempt {a.attempt}: ")
        head.append(
            a.outcome if a.error_code is None else f"{a.outcome}[{a.error_code}]",
            style="green" if a.outcome == "ok" else "red",
        )
        model = a.resolved_model or a.requested_model
        tokens = f", {a.input_tokens}+{a.output_tokens} tokens" if a.input_tokens is not None else ""
        head.append(f"  {model}{tokens}")
        console.print(head)
        sent = ", ".join(f"{m['role']} {m['chars']:,} chars" for m in a.messages) or "not in the vault"
        console.print(f"   sent: {sent} (request {a.request_sha256[:16]}…)", markup=False)
        if a.answer is None:
            console.print("   answer: none (nothing came back, or the vault no longer holds it)", markup=False)
            continue
        more = (
            f" — the first {len(a.answer):,} of {a.answer_chars:,} characters" if a.answer_chars > len(a.answer) else ""
        )
        console.print(f"   answer{more}:", markup=False)
        console.print(a.answer, markup=False, highlight=False)
