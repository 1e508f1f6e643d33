"""Terminal renderings of `muse outline show/lint/confirm` and `muse context` (Rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..writing import ConfirmResult, LintProblem, OutlineLintDoc, OutlineShowDoc

_STATE = {
    "confirmed": "[green]confirmed[/green]",
    "unconfirmed": "[yellow]not confirmed[/yellow]",
    "changed": "[red]changed since confirmed[/red]",
}


def _problems(console: Console, problems: list[LintProblem]) -> None:
    for p in problems:
        colour = "red" if p.severity == "error" else "yellow"
        console.print(f"  [{colour}]{p.severity}[/{colour}] {p.code}: {escape(p.message)} ({escape(p.where)})")


def render_outline_show(console: Console, doc: OutlineShowDoc) -> None:
    """The outline's items with their constraint ids (hard constraints marked), confirmation and problems."""
    scene = doc.scene_type or "-"
    console.print(
        f"outline {doc.chapter} ({escape(doc.path)}, version {doc.version}, scene type {scene}): "
        f"{_STATE[doc.confirmation.state]}"
    )
    console.print(f"  sha256 {doc.sha256}")
    if doc.confirmation.state == "changed":
        console.print(f"  confirmed sha256 {doc.confirmation.confirmed_sha256}")
    table = Table(show_header=True, header_style="bold")
    for col in ("id", "kind", "hard", "text", "line"):
        table.add_column(col)
    for item in doc.items:
        table.add_row(escape(item.id), item.kind, "yes" if item.hard else "", escape(item.text), str(item.line))
    console.print(table)
    _problems(console, doc.problems)


def render_outline_lint(console: Console, doc: OutlineLintDoc) -> None:
    """One line per outline (errors, warnings, confirmation), then its problems; a summary."""
    for o in doc.outlines:
        state = _STATE[o.confirmation] if o.confirmation else "[red]does not parse[/red]"
        console.print(f"{o.chapter:04d} {escape(o.path)}: {o.errors} error(s), {o.warnings} warning(s); {state}")
        _problems(console, o.problems)
    console.print(f"{len(doc.outlines)} outline(s): {doc.errors} error(s), {doc.warnings} warning(s)")


def render_confirm(console: Console, result: ConfirmResult) -> None:
    """What `muse outline confirm` recorded."""
    c = result.confirmation
    verb = "confirmed" if result.newly_confirmed else "already confirmed"
    console.print(f"outline {c.chapter} {verb}: sha256 {c.current_sha256}")
    _problems(console, result.lint.problems)
