"""Terminal renderings of `muse init` and `muse import`."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..book import ImportReport, InitResult


def render_init(result: InitResult, console: Console) -> None:
    """What `muse init` created and kept, and what to do next."""
    console.print(f"initialised book in {result.book}", markup=False)
    for rel in result.created:
        console.print(f"  created {rel}", markup=False)
    for rel in result.kept:
        console.print(f"  kept    {rel} (already there)", markup=False)
    for note in result.notes:
        console.print(f"  note: {note}", markup=False)
    console.print("next: `muse import NOVEL.txt --into DIR`, or write chapters/0001.md; then `muse check`")


def render_import(report: ImportReport, console: Console, err_console: Console) -> None:
    """A table of the imported chapters (number, title, chars, path) plus the notes."""
    rows_all = ([report.prologue] if report.prologue else []) + report.chapters
    kept = set(report.unchanged)
    written = [ch for ch in rows_all if ch.number not in kept]
    if not written and rows_all:
        title = Text(f"nothing written: all {len(rows_all)} chapter file(s) of {report.book} are already this source's")
    elif kept:
        title = Text(f"imported {len(written)} chapter(s) into {report.book}; {len(kept)} already identical, kept")
    else:
        title = Text(f"imported {len(report.chapters)} chapter(s) into {report.book}")
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("heading")
    table.add_column("chars", justify="right")
    table.add_column("line", justify="right")
    table.add_column("path")
    rows = ([report.prologue] if report.prologue else []) + report.chapters
    for ch in rows:
        table.add_row(str(ch.number), Text(ch.heading), str(ch.chars), str(ch.line) if ch.line else "-", Text(ch.path))
    console.print(table)
    total = sum(ch.chars for ch in rows)
    console.print(
        f"encoding {report.encoding}; {total} characters (excluding whitespace); split by {report.unit}", markup=False
    )
    if report.initialised:
        console.print("the directory was not a book yet: initialised it (book.toml, rules.txt, …)")
    for note in report.notes:
        prefix = "warning" if note.startswith("imported with --allow-gaps") else "note"
        err_console.print(f"{prefix}: {note}", markup=False)
