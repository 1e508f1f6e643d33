"""Terminal rendering of `muse judge` and `muse rubrics`.

The panel table shows random candidate ids; the unblinding (id → arm → file) is printed after it, once the
panel has ended. A skipped run says skipped(no model configured) in its own colour, never passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import Outcome
from ..judging import JUDGE_SCHEMA_VERSION, DimensionRanking, JudgeDoc, JudgeOutcome, JudgeSummary, Rubric

_STYLE = {
    "stable": "green",
    "passed": "green",
    "invalid": "bold red",
    "invalid_unstable": "bold red",
    "failed": "red",
    "error": "bold red",
    "skipped": "yellow",
    "pass": "green",
    "fail": "red",
    "split": "yellow",
}


def _fmt(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "n/a"
    text = f"{x:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _ranking(r: DimensionRanking) -> str:
    """Best first; candidates that share a rank are joined by ``=`` (a tie is not a preference)."""
    out = ""
    for i, cid in enumerate(r.order):
        if i:
            out += " = " if r.ranks[cid] == r.ranks[r.order[i - 1]] else " > "
        out += cid
    return out


def _item(doc: JudgeOutcome) -> str:
    """The item as the author named it, with the blind reference the judges saw."""
    return f"{doc.item_id} (blind ref {doc.item_ref})" if doc.item_id else doc.item_ref


def render_judge(console: Console, doc: JudgeOutcome) -> None:
    """Everything a panel did: outcome, judges, scores, rankings, verdicts, gate, reliability, unblinding."""
    head = Text(
        f"judge  {doc.rubric.id} (v{doc.rubric.version}, sha256 {doc.rubric.sha256[:12]}…)  item {_item(doc)}  "
    )
    label = doc.outcome if doc.outcome != "skipped" else f"skipped({doc.reason})"
    if doc.outcome in ("invalid", "invalid_unstable") and doc.reason:
        label += f" [{doc.reason}]"
    head.append(label, style=_STYLE[doc.outcome])
    console.print(head)
    report = doc.report
    if report is None:
        console.print(Text("no judge model was called; nothing was scored", style="yellow"))
        return
    judges = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("judge", "order", "model", "attempts", "outcome"):
        judges.add_column(col)
    for j in report.judges:
        outcome = Text(
            j.outcome if j.outcome == "ok" else f"failed({j.error_code})", style="green" if j.outcome == "ok" else "red"
        )
        judges.add_row(str(j.slot), " ".join(j.order), j.model or "?", str(j.attempts), outcome)
    console.print(judges)
    for w in report.warnings:
        console.print(Text(w, style="yellow"))
    if report.status == "invalid":
        failed = next((j for j in report.judges if j.outcome == "failed"), None)
        cause = (
            f"judge {failed.slot} failed closed ({failed.error_code})" if failed else "the panel ended without a report"
        )
        console.print(
            Text(f"{cause}: the item is invalid — no scores, no winner, not counted in gate statistics", style="red")
        )
    elif report.status == "invalid_unstable":
        console.print(
            Text(
                f"{report.disagreements} score(s) differed by more than 0.5; {report.unstable_cells} remained unstable "
                "after the third judge: no scores, no winner, not counted in gate statistics",
                style="red",
            )
        )
    else:
        ids = [c.candidate_id for c in report.candidates]
        scores = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        scores.add_column("dimension")
        for cid in ids:
            scores.add_column(cid, justify="right")
        scores.add_column("ranking")
        by_cell = {(s.candidate_id, s.dimension_id): s for s in report.scores}
        dims = list(dict.fromkeys(s.dimension_id for s in report.scores))
        ranking = {r.dimension_id: r for r in report.rankings}
        for d in dims:
            cells = []
            for cid in ids:
                s = by_cell[(cid, d)]
                cells.append(f"{_fmt(s.score)} ({'/'.join(_fmt(v) for v in s.judge_scores)})")
            scores.add_row(d, *cells, _ranking(ranking[d]))
        console.print(scores)
        if report.third_judge:
            console.print(Text("a third judge ran; scores are medians of three", style="dim"))
        if report.verdicts:
            verdicts = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
            for col in ("candidate", "target", "verdict", "judges"):
                verdicts.add_column(col)
            for v in report.verdicts:
                verdicts.add_row(
                    v.candidate_id, v.target_id, Text(v.verdict, style=_STYLE[v.verdict]), "/".join(v.judge_verdicts)
                )
            console.print(verdicts)
    if doc.evidence is not None:
        ev = doc.evidence
        items = ev.get("items")
        count = len(items) if isinstance(items, list) else 0
        note = f"evidence pack of chapter {ev.get('chapter')}: {ev.get('source')}, {count} item(s) — {ev.get('note')}"
        console.print(Text(note, style="dim"))
    for g in doc.gate:
        line = Text(f"quality gate {g.candidate_id}: ")
        line.append(g.outcome if g.outcome != "error" else f"error({g.code})", style=_STYLE[g.outcome])
        line.append("  hard blocks: " + ", ".join(f"{k} {v}" for k, v in g.hard_blocks.items()))
        console.print(line)
        for reason in g.reasons:
            console.print(f"  - {reason}", markup=False)
        for sug in g.suggestions:
            note = f"  suggestion: {sug.dimension_id} {_fmt(sug.score)} < {_fmt(sug.threshold)} — {sug.question}"
            console.print(Text(note, style="dim"))
    if doc.reliability is not None:
        rel = doc.reliability
        console.print(
            f"reliability: mean |judge1 − judge2| {_fmt(rel.mean_abs_diff)}, third-judge rate "
            f"{_fmt(rel.third_judge_rate)}, invalid_unstable rate {_fmt(rel.invalid_unstable_rate)}, "
            f"Krippendorff alpha (interval) {_fmt(rel.alpha_interval, 3)}"
        )
    if doc.unblinded:
        console.print(Text("unblinded (after the panel ended):", style="bold"))
        for cid, arm in doc.unblinded.items():
            console.print(f"  {cid} = {arm} {doc.sources.get(arm, '')}".rstrip())
    if doc.lessons:
        new = sum(1 for lesson in doc.lessons if lesson.created)
        console.print(Text(f"lessons: {new} registered, {len(doc.lessons) - new} already known", style="dim"))


def render_rubrics(console: Console, rubrics: Sequence[Rubric]) -> None:
    """The registered rubrics: profile, id, version, scale, sha256, then the dimensions (critical marked *)."""
    for r in rubrics:
        scale = f"{_fmt(r.scale.min)}–{_fmt(r.scale.max)} step {_fmt(r.scale.step)}"
        head = Text(f"{r.profile}", style="bold")
        head.append(f"  {r.id}  v{r.version}  {scale}  sha256 {r.sha256}")
        console.print(head)
        console.print("  " + ", ".join(f"{d.id}*" if d.critical else d.id for d in r.dimensions))
        if r.scene_types:
            console.print("  scene types: " + ", ".join(r.scene_types))
        if r.hard_blocks:
            console.print("  hard blocks (rule layer, never judged): " + ", ".join(r.hard_blocks))
    console.print(Text("* critical dimension", style="dim"))


def render_gate_decisions(console: Console, doc: JudgeSummary) -> None:
    """Every stored quality-gate decision: when, where from, the chapter and arm, outcome, hard blocks, reasons."""
    if not doc.gates:
        return
    table = Table(title="quality-gate decisions", title_justify="left", header_style="bold", box=None)
    for col in ("decided", "origin", "chapter", "arm", "candidate", "rubric", "outcome", "hard blocks", "reasons"):
        table.add_column(col, overflow="fold")
    for g in doc.gates:
        outcome = Text(g.outcome if g.outcome != "error" else f"error({g.code})", style=_STYLE[g.outcome])
        blocks = ", ".join(f"{k} {v}" for k, v in g.hard_blocks.items())
        table.add_row(
            g.created_at,
            g.origin,
            "" if g.chapter is None else str(g.chapter),
            g.arm,
            g.candidate_sha256[:12],
            f"{g.rubric.id} v{g.rubric.version}",
            outcome,
            blocks,
            "; ".join(g.reasons),
        )
    console.print(table)


def render_judge_summary(console: Console, doc: JudgeSummary) -> None:
    """Per rubric version: items, per-arm means, deltas against arm A, reliability; then every gate decision."""
    render_gate_decisions(console, doc)
    if not doc.rubrics:
        console.print(Text("no finished judge panels", style="yellow"))
        return
    for block in doc.rubrics:
        agg = block.aggregate
        head = Text(f"{agg.rubric.id} v{agg.rubric.version}", style="bold")
        head.append(f"  items {agg.items_total}, stable {agg.items_stable}, excluded {agg.items_excluded}")
        console.print(head)
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("dimension", "scene type", "arm", "items", "mean", "delta vs A"):
            table.add_column(col)
        deltas = {(d.arm, d.dimension_id, d.scene_type): d for d in agg.deltas}
        for m in agg.means:
            d = deltas.get((m.arm, m.dimension_id, m.scene_type))
            delta = "" if d is None else "n/a" if d.mean_delta is None else f"{d.mean_delta:+.2f} ({d.items})"
            if d is not None and d.withheld:
                delta += f" [{d.withheld} withheld]"
            table.add_row(m.dimension_id, m.scene_type or "", m.arm, str(m.items), _fmt(m.mean), delta)
        console.print(table)
        for g in agg.structure:
            console.print(
                f"structure gate (结构门) arm {g.arm}: {g.items} item(s) — {g.passed} passed, {g.failed} failed, "
                f"{g.split} split, {g.no_standard} without a standard (no assertion or constraint)",
                markup=False,
            )
        if any(d.withheld for d in agg.deltas):
            note = (
                "withheld: items whose two judges differed by more than 0.5 on that score "
                "(stability warning) give no delta"
            )
            console.print(Text(note, style="dim"))
        rel = block.reliability
        console.print(
            f"reliability: mean |judge1 − judge2| {_fmt(rel.mean_abs_diff)}, third-judge rate "
            f"{_fmt(rel.third_judge_rate)}, invalid_unstable rate {_fmt(rel.invalid_unstable_rate)}, "
            f"invalid rate {_fmt(rel.invalid_rate)}, Krippendorff alpha (interval) {_fmt(rel.alpha_interval, 3)}"
        )


def judge_outcome(doc: JudgeOutcome) -> Outcome:
    """failed_closed: the item is invalid (a judge failed closed) or invalid_unstable; findings: a quality-gate
    adjudication failed; not_evaluated: skipped (no judge model configured); else ok."""
    if doc.outcome in ("invalid", "invalid_unstable"):
        return "failed_closed"
    if any(g.outcome != "passed" for g in doc.gate):
        return "findings"
    return "not_evaluated" if doc.outcome == "skipped" else "ok"


def judge_error(doc: JudgeOutcome) -> str | None:
    """The one error line of a panel that produced no scores, else None."""
    if doc.outcome not in ("invalid", "invalid_unstable"):
        return None
    return (
        f"error[{doc.reason or 'JUDGE_INVALID'}]: the panel is {doc.outcome}, item {_item(doc)} — "
        "no scores were produced; see `muse calls` for the receipts"
    )


class RubricRow(JudgeDoc):
    """One registered rubric in `muse rubrics --json`."""

    profile: str
    id: str
    version: int
    sha256: str
    file: str
    scale: dict[str, float]
    dimensions: list[str]
    critical: list[str]
    scene_types: list[str]
    hard_blocks: list[str]


class RubricsDoc(JudgeDoc):
    """`muse rubrics --json`."""

    schema_version: int = JUDGE_SCHEMA_VERSION
    rubrics: list[RubricRow]


def rubrics_doc(rubrics: Sequence[Rubric]) -> RubricsDoc:
    """The registered rubrics as JSON."""
    return RubricsDoc(
        rubrics=[
            RubricRow(
                profile=r.profile,
                id=r.id,
                version=r.version,
                sha256=r.sha256,
                file=r.file,
                scale={"min": r.scale.min, "max": r.scale.max, "step": r.scale.step},
                dimensions=r.dimension_ids,
                critical=r.critical_ids,
                scene_types=list(r.scene_types),
                hard_blocks=r.hard_blocks,
            )
            for r in rubrics
        ]
    )
