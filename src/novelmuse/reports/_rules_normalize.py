"""Terminal rendering of `muse rules normalize`: each unparsed line, the rules proposed for it, what was written.

A skip is printed as `skipped (reason)` and never reads as a pass; proposals without `--write` say plainly
that nothing was written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import Outcome

if TYPE_CHECKING:  # in signatures only: `muse check` renders proposals without loading the normalizer's role
    from ..roles.normalizer import NormalizeReport


def normalize_outcome(report: NormalizeReport) -> Outcome:
    """not_evaluated while unparsed lines stay unread because no model is configured (a skip is not a pass); ok
    when the model answered, or when there was nothing to normalise (no rules.txt, no unparsed line)."""
    return "not_evaluated" if report.status == "skipped" and report.unparsed_lines else "ok"


def render_normalize(report: NormalizeReport, console: Console) -> None:
    """Print the report for a person (the JSON form is the report model itself)."""
    if report.status == "skipped":
        console.print(Text(f"rules normalize: skipped ({report.skip_reason})", style="yellow"))
        if report.unparsed_lines:
            console.print(f"{report.unparsed_lines} unparsed line(s) in {report.rules_path} stay as they are.")
        return
    table = Table(title=f"rules normalize — {report.rules_path}", show_lines=True)
    table.add_column("line", justify="right")
    table.add_column("original")
    table.add_column("proposed rules")
    table.add_column("note")
    for p in report.proposals:
        rules = Text()
        for i, r in enumerate(p.rules):
            if i:
                rules.append("\n")
            rules.append(r.rendered, style="dim" if r.already_present else "bold")
            if r.already_present:
                rules.append(" (already present)", style="dim")
        if not p.rules:
            rules.append("(no rule — left unchanged)", style="dim")
        table.add_row(str(p.line), p.original, rules, p.note)
    console.print(table)
    if report.shown_earlier:
        console.print(f"the proposals shown earlier by call {report.call_id} (rules.txt unchanged; no new model call)")
    else:
        cost = "cost unknown" if report.cost is None else f"cost {report.cost:.6f}"
        tokens = f"{report.input_tokens}+{report.output_tokens} tokens"
        console.print(f"{report.attempts} attempt(s), {tokens}, {cost}, call {report.call_id}")
    if report.written:
        console.print(
            Text(f"written: {report.written_rules} rule(s) added to {report.rules_path}", style="green")
            + Text(" (each original line kept as a # comment above its rules)")
        )
    elif report.write_requested:
        console.print("nothing new to write: every proposed rule is already in rules.txt or no rule was proposed")
    else:
        console.print("not written — rerun with --write to add these rules to rules.txt")
