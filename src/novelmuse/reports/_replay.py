"""Terminal rendering of `muse replay register / run / status / report` and `muse gate input / evaluate`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import Outcome
from ._spend import spend_text

if TYPE_CHECKING:  # annotations only: rendering a listing never loads the gates' machinery
    from ..replay import DryRunDoc, GateDoc, GateInputDoc, RegisterDoc, ReplayReport, RunDoc

_STYLE = {"passed": "green", "failed": "red", "insufficient": "yellow"}


def render_register(console: Console, doc: RegisterDoc) -> None:
    """The set's sha256 (what runs and receipts name), its items per scene type, and why a gate would be short."""
    state = "registered" if doc.newly_registered else "already registered (same content)"
    console.print(f"set {doc.name} ({doc.kind}, {doc.items} items) {state}", markup=False)
    console.print(f"  sha256 {doc.sha256}", markup=False)
    console.print(f"  frozen as {doc.path}", markup=False)
    if doc.scene_types:
        console.print("  scene types: " + ", ".join(f"{k} {v}" for k, v in doc.scene_types.items()), markup=False)
    for note in doc.notes:
        console.print(Text(f"  note: {note}", style="yellow"))


def render_dry_run(console: Console, doc: DryRunDoc) -> None:
    """What a run would do: the plan, the configuration hash, roles, missing probes, and each item's arm order."""
    console.print(
        f"dry run of set {doc.set_name} ({doc.kind}): arms {','.join(doc.arms)}, plan {doc.plan_sha256[:12]}…, "
        f"configuration {doc.config_sha256[:12]}…, at least {doc.calls_at_least} model calls — nothing written",
        markup=False,
    )
    for role, target in doc.roles.items():
        console.print(f"  {role}: {target or '(no model configured)'}", markup=False)
    if doc.probes_missing:
        console.print(f"  no successful probe yet: {', '.join(doc.probes_missing)}", markup=False)
    if doc.resumes:
        console.print(f"  a run would resume {doc.resumes}", markup=False)
    table = Table("item", "chapter", "scene type", "order", "targets")
    for item in doc.items:
        table.add_row(item.item_id, str(item.chapter), item.scene_type or "-", " ".join(item.order), str(item.targets))
    console.print(table)


def render_run(console: Console, doc: RunDoc) -> None:
    """The run's hashes, then one row per sample and per panel (code and detail when not ok)."""
    head = Text(f"replay run {doc.run_id} of set {doc.set_name} ({doc.kind}, {doc.mode}): ")
    head.append(doc.status, style="green" if doc.ok else "red" if doc.status == "finished" else "yellow")
    if doc.resumed:
        head.append(f"  (resumed; {doc.redone} unfinished step(s) redone)")
    console.print(head)
    console.print(
        f"  arms {','.join(doc.arms)}, seed {doc.seed[:12]}…, plan {doc.plan_sha256[:12]}…, configuration "
        f"{doc.config_sha256[:12]}…, writer configuration {doc.writer_config_sha256[:12]}…",
        markup=False,
    )
    table = Table("item", "arm", "pos", "status", "writer", "candidate", "code")
    for s in doc.samples:
        table.add_row(
            s.item_id,
            s.arm,
            str(s.position),
            s.status,
            s.write_status or "-",
            (s.candidate_sha256 or "-")[:12],
            s.code or "",
        )
    console.print(table)
    panels = Table("item", "panel", "status", "code")
    for p in doc.panels:
        panels.add_row(p.item_id, p.panel_id or "-", p.panel_status or p.status, p.code or "")
    console.print(panels)
    if doc.spent is not None:
        console.print(f"model run {doc.model_run_id}: {spend_text(doc.spent)}", markup=False)
    for note in doc.notes:
        console.print(Text(f"note: {note}", style="yellow"))


def run_outcome(doc: RunDoc) -> Outcome:
    """A finished run whose every sample and panel is ok exits 0; any that failed closed, 3."""
    return "ok" if doc.ok else "failed_closed" if doc.status == "finished" else "interrupted"


def render_gate_input(console: Console, doc: GateInputDoc) -> None:
    """Where the gate input was written, its sha256, and the samples that are not ok."""
    console.print(f"gate input of run {doc.run_id}: {doc.path}", markup=False)
    console.print(f"  sha256 {doc.sha256}, {doc.samples} samples, {len(doc.not_ok)} not ok", markup=False)
    for line in doc.not_ok:
        console.print(f"  not ok: {line}", markup=False)


def render_gate(console: Console, doc: GateDoc) -> None:
    """The gate's outcome and summary, its anomalies and checks, and the journal entries written."""
    r = doc.report
    head = Text(f"Gate {doc.gate} on run {doc.run_id} ({r.mode}): ")
    head.append(r.outcome, style=_STYLE.get(r.outcome, ""))
    head.append(f" — {r.summary}")
    console.print(head)
    for a in r.anomalies[:20]:
        where = "/".join(x for x in (a.item_id, a.arm) if x) or "run"
        console.print(f"  anomaly {a.category} {a.code} at {where} {a.detail}".rstrip(), markup=False)
    if len(r.anomalies) > 20:
        console.print(f"  … {len(r.anomalies) - 20} more anomalies (--json lists all)", markup=False)
    for c in r.checks:
        mark = "pass" if c.passed else "FAIL"
        console.print(f"  {mark} {c.name}: {c.detail}", markup=False)
    receipt = f", receipt seq {doc.receipt_seq}" if doc.receipt_seq is not None else " (no receipt: not passed)"
    console.print(f"  journaled in {doc.journal}: report seq {doc.report_seq}{receipt}", markup=False)


def gate_outcome(doc: GateDoc) -> Outcome:
    """Exit 0 passed, 1 failed, 4 insufficient (not evaluated: the set is too small to decide)."""
    if doc.outcome == "passed":
        return "ok"
    return "findings" if doc.outcome == "failed" else "not_evaluated"


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def render_replay_report(console: Console, doc: ReplayReport) -> None:
    """Per dimension and scene type C−A and B−A, per-id agreement, B by new-character share, judge reliability."""
    console.print(
        f"replay run {doc.run_id} ({doc.mode}): {doc.samples} samples, {len(doc.not_ok)} not ok", markup=False
    )
    for line in doc.not_ok:
        console.print(f"  not ok: {line}", markup=False)
    table = Table("arm − A", "dimension", "scene type", "items", "mean Δ")
    for d in doc.deltas:
        table.add_row(d.arm, d.dimension, d.scene_type or "all", str(d.items), _f(d.mean_delta))
    console.print(table)
    agree = Table("kind", "id", "pairs", "detector = panel")
    for a in doc.agreement:
        agree.add_row(a.kind, a.id, str(a.pairs), str(a.agreed))
    console.print(agree)
    for b in doc.diagnostic_b:
        means = ", ".join(f"{k} {_f(v)}" for k, v in b.mean_delta.items())
        console.print(f"  B − A, new characters {b.bucket} ({b.items} items): {means}", markup=False)
    r = doc.reliability
    console.print(
        f"  judges: {r.items} panels, third-judge rate {r.third_judge_rate}, invalid rate {r.invalid_rate}, "
        f"mean |judge1 − judge2| {r.mean_abs_diff}, alpha {r.alpha_interval}",
        markup=False,
    )
