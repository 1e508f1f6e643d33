"""Terminal rendering of `muse plan lint`."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..writing import PlanLintDoc


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
