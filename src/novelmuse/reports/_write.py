"""Terminal rendering of `muse write N` and `muse write show N`: steps, manifest versions (hash chain),
evidence requests, drafts and detector reports — every hash in full, every skip labelled as a skip."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..book import Book
from ..errors import Outcome
from ..writing import DetectorReport, WriteDoc, WriteShowDoc, WriteStatus, short_id

_STATUS = {
    "passed": "[green]passed[/green]",
    "held_for_author": "[red]held_for_author[/red]",
    "skipped": "[yellow]skipped[/yellow]",
    "error": "[red]error[/red]",
    "dry_run": "dry run",
}


def _report_lines(console: Console, report: DetectorReport, indent: str = "    ") -> None:
    f = report.computed
    claimed = report.claimed
    claim = f" (the detector claimed {claimed.coverage:.2f})" if claimed.coverage is not None else ""
    coverage = "n/a" if f.coverage is None else f"{f.coverage:.2f}"
    console.print(
        f"{indent}candidate {report.candidate_sha256}: {report.outcome.label}; coverage {coverage}"
        f" ({f.constraints_passed}/{f.constraints}){claim}, {f.high_severity} blocking, {f.warnings} warning(s);"
        f" detector {report.semantic.label}, facts {report.facts.label}"
    )
    for item in report.items:
        if item.verdict == "pass":
            continue
        mark = "[red]✗[/red]" if item.blocks else "[yellow]![/yellow]"
        quote = f" 「{escape(item.quote)}」" if item.quote else ""
        what = escape(f"[{item.check}, {item.verdict}]")
        console.print(f"{indent}  {mark} {escape(item.id)} {what} {escape(item.detail)}{quote}")


def render_write_run(console: Console, doc: WriteDoc, book: Book | None = None) -> None:
    """One write run: its status, steps, manifests, evidence, drafts and reports (or the dry run's prompt)."""
    head = f"write chapter {doc.chapter} (arm {doc.arm}): {_STATUS[doc.status]}"
    if doc.reason:
        head += f" — {escape(doc.reason)}"
    if doc.error_code:
        head += f" [red]error[{doc.error_code}][/red]"
    console.print(head)
    if doc.arm_choice is not None:
        console.print(f"  arm {doc.arm}: {escape(doc.arm_choice.reason)}")
    console.print(f"  write id {doc.write_id}" + (f", model run {doc.run_id}" if doc.run_id else ""))
    steps = Table(title="steps", show_header=True, header_style="bold")
    for col in ("step", "outcome", "detail"):
        steps.add_column(col)
    for s in doc.steps:
        steps.add_row(s.step, escape(s.label), escape(s.detail))
    console.print(steps)
    for m in doc.manifests:
        chain = f" ← {m.previous_sha256}" if m.previous_sha256 else ""
        console.print(
            f"  manifest round {m.round}: {m.sha256}{chain} (evidence {m.evidence_used}/{m.evidence_budget} chars)"
        )
    for e in doc.evidence:
        console.print(
            f"  evidence {e.round}-{e.seq + 1} {e.kind} 「{escape(e.target)}」: {e.status} — {escape(e.detail)}"
        )
    if doc.constraints:
        console.print("hard constraints the detector checks (key names the text must write):")
        for c in doc.constraints:
            keys = "、".join(c.key_names) or "-"
            marker = f"; marker 「{escape(c.marker)}」" if c.marker else ""
            console.print(f"  {escape(c.id)}: {escape(c.text)} — names: {escape(keys)}{marker}")
    if doc.unavailable:
        console.print(f"may not act or speak: {escape('、'.join(doc.unavailable))}")
    reports = {r.draft_id: r for r in doc.reports}
    for d in doc.drafts:
        asks = f", {len(d.evidence_requests)} evidence request(s)" if d.evidence_requests else ""
        console.print(
            f"  draft {d.seq} ({d.purpose}, round {d.evidence_round}, repair {d.repair_round}): {d.chars} chars, "
            f"{d.declared_facts} declared fact(s){asks}; text {d.text_sha256}, file {escape(d.path)}"
        )
        if d.id in reports:
            _report_lines(console, reports[d.id].report)
    for p in doc.prompts:
        console.print(f"--- {p.role} ---")
        console.print(escape(p.content))
    if doc.resumed is not None:
        r = doc.resumed
        console.print(
            f"  resumed {r.write_id}: {r.drafts} draft(s), {r.reports} report(s) and {r.calls} gate answer(s) reused"
        )
    if doc.accept is not None:
        from ._accept import render_accept  # loaded only for a run that accepted

        render_accept(console, doc.accept)
    elif doc.final_draft_id is not None and doc.status in ("passed", "held_for_author"):
        short = short_id(doc.final_draft_id)
        what = "take it over with" if doc.status == "held_for_author" else "decide with"
        console.print(
            f"draft {short} waits for your decision: read it with `muse drafts show {short}`"
            f" (`muse drafts diff {short}`), then {what} `muse drafts accept|revise|reject {short}`"
        )
    if doc.review is not None:
        from ._review import render_review_run  # loaded only for a run that reviewed

        render_review_run(console, doc.review, book)
    if doc.usage.calls:
        cost = f"{doc.usage.cost:.4f}" if doc.usage.cost is not None else "unknown"
        console.print(
            f"  {doc.usage.calls} model call(s), {doc.usage.input_tokens} input / {doc.usage.output_tokens} output "
            f"tokens, cost {cost}"
        )


def render_write_show(console: Console, doc: WriteShowDoc) -> None:
    """Every write run of a chapter, oldest first, with its drafts and reports."""
    if not doc.runs:
        console.print(f"chapter {doc.chapter}: no write run yet (`muse write {doc.chapter}`)")
        return
    for row in doc.runs:
        console.print(
            f"{row.write_id} {row.started_at} arm {row.arm}: {_STATUS.get(row.status, row.status)}"
            + (f" — {escape(row.reason)}" if row.reason else "")
            + (f" error[{row.error_code}]" if row.error_code else "")
        )
        if row.document is None:
            console.print(f"  manifest {row.manifest_sha256} (no document: the run did not end)")
            continue
        render_write_run(console, row.document.model_copy(update={"prompts": [], "constraints": []}))


_OUTCOMES: dict[WriteStatus, Outcome] = {
    "passed": "ok",
    "dry_run": "ok",
    "held_for_author": "findings",
    "skipped": "not_evaluated",
    "error": "failed_closed",
}


def write_outcome(doc: WriteDoc) -> Outcome:
    """ok: passed (or a dry run) and, with --apply, accepted (and with --review, reviewed clean); findings: held for
    the author, a preflight check failed (or open review issues); not_evaluated: a model step was skipped, or the
    accept's quality gate could not run — never ok; failed_closed: a step failed closed."""
    base = _OUTCOMES[doc.status]
    if base == "ok" and doc.accept is not None:
        from ._accept import accept_outcome

        base = accept_outcome(doc.accept)
    if base == "ok" and doc.review is not None:
        from ._review import review_outcome

        return review_outcome(doc.review)
    return base


def write_note(doc: WriteDoc) -> str | None:
    """The one line for stderr when the run did not pass: the error, or why the draft was held or not checked."""
    if doc.status == "error":
        return doc.error
    if doc.status in ("held_for_author", "skipped"):
        return (
            f"note: chapter {doc.chapter} {doc.status}: {doc.reason} — every draft and report is kept "
            f"(`muse write show {doc.chapter}`); nothing was written to the chapter file"
        )
    return None
