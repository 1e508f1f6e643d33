"""Terminal rendering of `muse report` and `muse export`: what was written where."""

from __future__ import annotations

from rich.console import Console

from ._export import ExportResult
from .html import ReportResult


def render_report_written(result: ReportResult, console: Console) -> None:
    """The report's notes, then where it was written and how large it is."""
    for note in result.notes:
        console.print(f"note: {note}", markup=False)
    console.print(
        f"report written: {result.index}  ({result.pages} pages, {result.bytes / 1024:,.0f} KiB; "
        f"overview {result.overview_bytes / 1024:,.0f} KiB)",
        markup=False,
    )


def render_export(result: ExportResult, console: Console, err_console: Console) -> None:
    """Warnings on stderr, then what was exported and whether the TXT round trip was verified."""
    for w in result.warnings:
        err_console.print(f"warning: {w}", markup=False)
    trip = {"verified": "; round trip verified", "not_exact": "; round trip NOT exact (see warnings)"}
    console.print(
        f"exported {len(result.chapters)} chapter(s) to {result.out} ({result.bytes:,} bytes)"
        + trip.get(result.round_trip, ""),
        markup=False,
    )
