"""Terminal renderings of `muse outline show/lint/confirm` and `muse context [verify]` (Rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..writing import ConfirmResult, ContextDoc, LintProblem, OutlineLintDoc, OutlineShowDoc, VerifyDoc
from ._locations import ChapterLines

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


#: Unselected candidates and cuts listed in the terminal (all of them are in --json).
MAX_ROWS = 12


def render_context(console: Console, doc: ContextDoc, lines: ChapterLines | None = None) -> None:
    """The built context: outline and memory inputs, blocks and budgets, the window, facts, excerpts (each located
    as ``chapters/0002.md:17 [start:end]``), cuts."""

    def span(chapter: int, start: int, end: int) -> str:
        at = lines.at(chapter, start) if lines is not None else None
        return (f"{at} " if at else f"ch.{chapter} ") + f"[{start}:{end}]"

    m = doc.manifest
    console.print(f"context of chapter {doc.chapter} (arm {doc.arm}): manifest {doc.manifest_sha256}")
    console.print(f"  stored at {escape(doc.manifest_path)}")
    console.print(
        f"outline {escape(m.outline.path)} (version {m.outline.version}, scene type {m.outline.scene_type or '-'}), "
        f"confirmed sha256 {m.outline.sha256}; {len(m.outline.constraint_ids)} hard constraint(s)"
    )
    facts = f"{len(m.fact_cards)} fact card(s)"
    if m.facts_missing:
        facts += f", {len(m.facts_missing)} chapter(s) without one (written from the cards alone there)"
    console.print(
        f"memory as of chapter {doc.chapter - 1}: {len(m.cards)} card(s) concerned, {facts}; index of "
        f"{m.index.chapters} chapter(s), fingerprint {m.index.fingerprint[:16]}…"
    )
    for w in m.withheld:
        console.print(
            f"  [yellow]withheld[/yellow] {escape(w.card_id)} {escape(w.key)}: its source is in chapter "
            f"{w.source_chapter} (≥ {doc.chapter})"
        )
    table = Table(title="blocks (characters without whitespace)", show_header=True, header_style="bold")
    for col in ("block", "kind", "budget", "used"):
        table.add_column(col)
    for b in m.blocks:
        table.add_row(b.name, "protected" if b.protected else "reducible", str(b.budget), str(b.used))
    console.print(table)
    window = (
        ", ".join(f"{p.chapter} ({p.kept_chars}/{p.chars})" for p in m.prior_chapters) or "none (the first chapter)"
    )
    console.print(f"continuous window ({len(m.prior_chapters)} chapter(s), kept/total): {window}")
    console.print(f"facts ({len(doc.context.facts)} line(s)):")
    for f in doc.context.facts:
        console.print(f"  - {escape(f.text)} 〔{escape(f.basis)}〕")
    if m.settings_omitted:
        console.print(
            f"  [yellow]{m.settings_omitted} more settings line(s)[/yellow] name this chapter's characters but are "
            "over the settings cap: shorten plan/settings, or split what concerns other chapters"
        )
    spans = Table(title="selected raw text", show_header=True, header_style="bold")
    for col in ("purpose", "chapter", "span", "chars", "located by"):
        spans.add_column(col)
    for s in m.spans:
        spans.add_row(
            escape(s.purpose), str(s.chapter), span(s.chapter, s.start, s.end), str(s.chars), escape(s.located_by)
        )
    console.print(spans)
    empty = [s.purpose for s in m.slots if not s.filled]
    if empty:
        console.print(f"slots without raw text: {escape('、'.join(empty))}")
    for c in m.cuts[:MAX_ROWS]:
        where = f"{c.slot} " if c.slot else ""
        console.print(f"  cut {c.block} {escape(where)}{span(c.chapter, c.start, c.end)} {c.chars} chars: {c.reason}")
    if len(m.cuts) > MAX_ROWS:
        console.print(f"  … {len(m.cuts) - MAX_ROWS} more cut(s) (--json lists all)")
    console.print(f"{len(m.unselected)} candidate span(s) not selected (--json lists each with its reason)")
    for u in m.unselected[:MAX_ROWS]:
        console.print(f"  {escape(u.slot)} {span(u.chapter, u.start, u.end)}: {escape(u.reason)}")


def render_verify(console: Console, doc: VerifyDoc) -> None:
    """Whether the rebuild matched the stored manifest, and where it did not."""
    if doc.ok:
        console.print(f"chapter {doc.chapter} (arm {doc.arm}): rebuilt manifest is identical ({doc.stored_sha256})")
        return
    console.print(
        f"chapter {doc.chapter} (arm {doc.arm}): [red]differs[/red] — stored {doc.stored_sha256}, "
        f"rebuilt {doc.rebuilt_sha256}"
    )
    if not doc.file_ok:
        console.print("  the stored manifest file is missing or does not hash to its name")
    for d in doc.differences:
        console.print(f"  {escape(d.path)}: {escape(str(d.stored))} → {escape(str(d.rebuilt))}")
    if doc.more_differences:
        console.print(f"  … {doc.more_differences} more difference(s) (--json)")
