"""Terminal rendering of `muse models check`: configuration issues, one row per role, a summary line.

A skipped role is printed as `skipped (no model configured)` and never as ok; an error shows its code.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..llm import ModelsCheckReport, RoleCheck

_STYLE = {"passed": "green", "error": "bold red", "skipped": "yellow"}


def _outcome(check: RoleCheck) -> Text:
    if check.outcome == "passed":
        return Text("passed", style=_STYLE["passed"])
    if check.outcome == "skipped":
        return Text(f"skipped ({check.reason})", style=_STYLE["skipped"])
    return Text(f"error[{check.code}]", style=_STYLE["error"])


def _details(check: RoleCheck) -> str:
    if check.outcome == "skipped":
        return ""
    parts: list[str] = []
    if check.attempts:
        parts.append(f"{check.attempts} attempt" + ("s" if check.attempts != 1 else ""))
    if check.latency_ms is not None:
        parts.append(f"{check.latency_ms} ms")
    if check.input_tokens is not None and check.output_tokens is not None:
        parts.append(f"{check.input_tokens}+{check.output_tokens} tokens")
    if check.outcome == "passed":
        parts.append("cost unknown" if check.cost is None else f"cost {check.cost:.6f}")
    elif check.reason:
        parts.append(check.reason)
    if check.sandbox is not None:
        parts.append(f"sandbox {check.sandbox}" + (" (unconfined)" if check.sandbox == "none" else ""))
    if check.hint:
        parts.append(f"hint: {check.hint}")
    return ", ".join(parts)


def render_models_check(report: ModelsCheckReport, console: Console) -> None:
    """Print the report: issues first (error lines in the CLI's error style), then the role table."""
    if report.issues:
        console.print("Model configuration:")
        for issue in report.issues:
            label = "error" if issue.severity == "error" else "warning"
            console.print(
                Text(f"  {label}[{issue.code}]: {issue.what}, {issue.where} — {issue.fix}"),
                style="red" if issue.severity == "error" else "yellow",
            )
    table = Table(title="Roles", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("role", no_wrap=True)
    table.add_column("model", overflow="fold")
    table.add_column("outcome", no_wrap=True)
    table.add_column("details", overflow="fold", ratio=1)  # the free-text column takes the remaining width
    for check in report.roles:
        model = f"{check.provider}:{check.model} ({check.kind})" if check.provider else "—"
        table.add_row(check.role, model, _outcome(check), _details(check))
    console.print(table)
    counts = {k: sum(1 for r in report.roles if r.outcome == k) for k in ("passed", "error", "skipped")}
    errors = sum(1 for i in report.issues if i.severity == "error")
    summary = f"{counts['passed']} passed, {counts['error']} error, {counts['skipped']} skipped"
    if errors:
        summary += f"; {errors} configuration error" + ("s" if errors != 1 else "")
    if report.run_id:
        summary += f"; run {report.run_id}"
    console.print(Text(f"models check: {report.status} — {summary}", style=_STYLE[report.status]))
