"""The fine-outline entry guard (seed 003: 细纲入口验完整 hash 链; 第二阶段才用已验签 receipt 启动细纲 real-run).

The layer above the writer — the fine-outline agent — may run for real only once the writer below has passed
its gates, and the guard is what proves it. A real run is admitted only when all of these hold:

1. the whole journal verifies (`verify_journal`, deep: every line's hash, seq and link, the covering
   signature, every receipt's report, every report recomputed from its gate input, every bound artefact
   re-hashed) — any problem is named by its seq;
2. the stage's own model, the outliner, is a real model probed with its exact id (`muse models check`) — never
   the scripted provider;
3. for the book's writer configuration *now* (`writer_config`), the **latest evaluation** of Gate A and of Gate B
   — passed or failed — passed, on real probed models, with its receipt, and both from **one replay run**: a failed
   evaluation after a pass revokes it until a later pass (no shopping for the pass among reruns), and a receipt
   earned by another writer (an older prompt or code, another model, gate spec or budget) does not count;
4. every gate input is **rebuilt from the store**, never read from a file: the guard's artefact reader
   (`store_reader`) serves a bound ``gate_input`` only through a `GateInputRebuilder` — the replay
   orchestrator's GateInputBuilder, which rebuilds it from the run's manifests, receipts and strict reports —
   so a hand-written or self-computed gate-input.json never re-hashes, even when someone with the signing key
   issued it (拒绝自算 JSON). Callers pass `gate_input_rebuilder(book)` (replay/_builder.py; the outline
   stage and promotion do by default); without a rebuilder no gate input can be rebuilt and nothing is
   admitted (`GATE_INPUT_BUILDER_MISSING`); a dry run is exempt.

`check_fine_outline_entry` returns the verdict with every finding; `require_fine_outline_entry` raises
`FINE_OUTLINE_GUARD` (exit 3) naming them. Nothing here writes anything.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel

from ..book import Book
from ..errors import FailedClosed, MuseError
from ._gates import GateName
from ._journal import journal_location
from ._outliner_config import OutlinerConfig, outliner_config
from ._reader import GateInputRebuilder as GateInputRebuilder  # re-exported: the replay modules import them here
from ._reader import store_reader as store_reader
from ._verify import EntrySummary, verify_journal
from ._writer_config import WriterConfig, writer_config

GUARD_SCHEMA: Final = 1
_GATES: Final[tuple[GateName, ...]] = ("A", "B")


class GuardFinding(BaseModel):
    """One reason the guard refuses: a stable code, what is missing or wrong, and the journal seq or gate."""

    code: str
    what: str
    seq: int | None = None
    gate: GateName | None = None

    def line(self) -> str:
        """One short human line."""
        where = f"seq {self.seq}: " if self.seq is not None else ""
        return f"{where}{self.what} ({self.code})"


class EntryGuard(BaseModel):
    """The guard's verdict for a stage (`admitted` only with no finding): the fine-outline stage and promotion stand
    on the writer's receipts; the plan stage (the third agent) on the outliner's (`outliner_config`)."""

    schema_version: int = GUARD_SCHEMA
    stage: Literal["fine_outline", "promotion", "plan"] = "fine_outline"
    admitted: bool
    writer_config_sha256: str
    writer_config: WriterConfig
    outliner_config_sha256: str | None = None  # the plan stage: the outliner configuration its receipts must be of
    outliner_config: OutlinerConfig | None = None
    journal: str
    verified: Literal["passed", "failed", "empty", "not_run"]
    entries: int
    receipts: dict[str, int | None]  # gate → seq of the receipt that admits it (the newest), None when none does
    findings: list[GuardFinding]

    @property
    def measured(self) -> str:
        """The configuration whose receipts the stage needs, as the guard names it (which agent, short hash)."""
        if self.outliner_config_sha256 is not None:
            return f"outliner configuration {self.outliner_config_sha256[:12]}…"
        return f"writer configuration {self.writer_config_sha256[:12]}…"

    def summary(self) -> str:
        """One line naming everything missing (or the receipts that admit the stage)."""
        if self.admitted:
            by = " and ".join(f"Gate {gate} receipt seq {seq}" for gate, seq in self.receipts.items())
            return f"admitted by {by} for {self.measured}"
        return "; ".join(f.line() for f in self.findings)


def _receipt_findings(
    gate: GateName, config: WriterConfig | OutlinerConfig, listing: list[EntrySummary], verified: bool
) -> tuple[EntrySummary | None, list[GuardFinding]]:
    """The receipt of the latest evaluation of `gate` for `config` (the writer's or the outliner's) when that
    evaluation passed on real models (None otherwise), and why not. The latest evaluation wins, passed or failed: a
    failed report after a pass revokes it until a later pass."""
    current = config.sha256
    agent = "outliner" if isinstance(config, OutlinerConfig) else "writer"
    reports = [e for e in listing if e.kind == "report" and e.gate == gate and e.run_config_sha256 == current]
    receipts = {e.report_seq: e for e in listing if e.kind == "receipt" and e.gate == gate}
    if not reports:
        what = f"no Gate {gate} evaluation for {agent} configuration {current}"
        spec = config.gate_spec.sha256  # receipts of the other agent are measured by another spec: not named here
        others = [e for e in listing if e.gate == gate and e.kind == "receipt" and e.gate_spec_sha256 == spec]
        if others:
            seqs = ", ".join(str(e.seq) for e in others)
            configs = ", ".join(sorted({(e.run_config_sha256 or "?")[:12] for e in others}))
            what += (
                f" (Gate {gate} receipt seq {seqs} was earned by {agent} configuration {configs}…: the {agent} "
                "changed since — rerun the replay experiments for this one)"
            )
        return None, [GuardFinding(code="GUARD_NO_RECEIPT", what=what, gate=gate)]
    latest = max(reports, key=lambda e: e.seq)
    earlier = [e.seq for e in reports if e.outcome == "passed" and e.seq < latest.seq]
    if latest.outcome != "passed":
        revoked = f": it revokes the pass of seq {max(earlier)}" if earlier else ""
        what = f"the latest Gate {gate} evaluation (seq {latest.seq}, run {latest.run_id}) is {latest.outcome}{revoked}"
        return None, [GuardFinding(code="GUARD_LATEST_FAILED", what=what, seq=latest.seq, gate=gate)]
    if latest.models not in ("real", None):
        what = f"the latest Gate {gate} evaluation (seq {latest.seq}) passed on {latest.models} models: no receipt"
        return None, [GuardFinding(code="GUARD_NOT_REAL_MODELS", what=what, seq=latest.seq, gate=gate)]
    receipt = receipts.get(latest.seq)
    if receipt is None:
        what = f"the latest Gate {gate} evaluation (seq {latest.seq}) passed but has no receipt"
        return None, [GuardFinding(code="GATE_RECEIPT_MISSING", what=what, seq=latest.seq, gate=gate)]
    if receipt.gate_spec_sha256 != config.gate_spec.sha256:
        what = f"claims {agent} configuration {current[:12]}… but binds another gate spec than it names"
        return None, [GuardFinding(code="GUARD_RECEIPT_INCONSISTENT", what=what, seq=receipt.seq, gate=gate)]
    if not verified:
        what = f"Gate {gate} receipt seq {receipt.seq} is for it, but the journal does not verify"
        return None, [GuardFinding(code="GUARD_NO_RECEIPT", what=what, seq=receipt.seq, gate=gate)]
    return receipt, []


def check_fine_outline_entry(book: Book, *, gate_inputs: GateInputRebuilder | None = None) -> EntryGuard:
    """The guard's verdict (see the module doc): verify the whole journal through `store_reader(book,
    gate_inputs)` and look for passed Gate A and Gate B receipts of the current writer configuration; the outliner
    the stage would call must be a real model, probed with its exact id."""
    verdict = receipt_verdict(book, "fine_outline", _GATES, gate_inputs)
    problem = outliner_problem(book)
    if problem is None:
        return verdict
    finding = GuardFinding(code="GUARD_OUTLINER_UNPROBED", what=problem)
    return verdict.model_copy(update={"admitted": False, "findings": [*verdict.findings, finding]})


def outliner_problem(book: Book, role: str = "outliner") -> str | None:
    """Why a stage's own model — the fine-outline stage's outliner, or the plan stage's planner — may not be called
    (the scripted provider, or never probed with its exact model id by `muse models check`); None when it may (or
    when no model is configured for `role`: nothing is called)."""
    from ._orchestrator import probed  # the orchestrator's probe bookkeeping (imported here: it loads the writer)

    target = book.config.role_target(role)
    if target is None:
        return None
    kind = book.config.providers[target[0]].kind
    if kind == "scripted":
        return f"the {role} ({target[0]}:{target[1]}) is the scripted provider: canned answers, not a model"
    if not probed(book, role, kind, target[1]):
        return (
            f"the {role} ({kind}:{target[1]}) was never probed with its exact id: run `muse models check` before its "
            "first real call"
        )
    return None


def check_plan_entry(book: Book, *, gate_inputs: GateInputRebuilder | None = None) -> EntryGuard:
    """The plan stage's guard (the third agent, 大纲+设定智能体): the same evaluation as the fine-outline guard, one
    stage up — the verified journal must hold passed Gate A and Gate B receipts of the **outliner** configuration
    now (latest evaluation wins, one run, real probed models, code bound), and the planner a real model probed with
    its exact id."""
    verdict = receipt_verdict(book, "plan", _GATES, gate_inputs)
    problem = outliner_problem(book, "planner")
    if problem is None:
        return verdict
    finding = GuardFinding(code="GUARD_PLANNER_UNPROBED", what=problem)
    return verdict.model_copy(update={"admitted": False, "findings": [*verdict.findings, finding]})


def receipt_verdict(
    book: Book,
    stage: Literal["fine_outline", "promotion", "plan"],
    gates: tuple[GateName, ...],
    gate_inputs: GateInputRebuilder | None,
) -> EntryGuard:
    """Whether the verified journal holds a passed receipt of every gate of `gates` for the current configuration of
    the agent below the stage — the writer's, or the outliner's for the plan stage — with every finding when it does
    not (the guards' and promotion's one evaluation)."""
    writer = writer_config(book)
    outliner = outliner_config(book) if stage == "plan" else None
    config: WriterConfig | OutlinerConfig = outliner if outliner is not None else writer
    findings: list[GuardFinding] = []
    if gate_inputs is None:
        findings.append(
            GuardFinding(
                code="GATE_INPUT_BUILDER_MISSING",
                what="no GateInputBuilder was given to rebuild gate inputs from the store, so no receipt can be "
                "re-checked",
            )
        )
    listing: list[EntrySummary] = []
    verified: Literal["passed", "failed", "empty", "not_run"] = "not_run"
    entries = 0
    try:
        report = verify_journal(book, reader=store_reader(book, gate_inputs), listing=True)
    except MuseError as exc:  # no [gate] signer, an unsafe journal path: nothing can be verified
        findings.append(GuardFinding(code=exc.code, what=f"the journal cannot be verified: {exc.what}"))
    else:
        verified, entries, listing = report.outcome, report.entries, report.listing or []
        findings += [GuardFinding(code=p.code, what=p.what, seq=p.seq) for p in report.problems]
    receipts: dict[str, int | None] = {}
    admitting: dict[str, EntrySummary] = {}
    for gate in gates:
        entry, why = _receipt_findings(gate, config, listing, verified == "passed")
        receipts[gate] = entry.seq if entry is not None else None
        if entry is not None:
            admitting[gate] = entry
        findings += why
    runs = {e.run_id for e in admitting.values()}
    if len(admitting) == len(gates) and len(runs) > 1:
        named = ", ".join(f"Gate {g} from run {e.run_id}" for g, e in sorted(admitting.items()))
        findings.append(
            GuardFinding(
                code="GUARD_RUNS_DIFFER",
                what=f"the gates must be passed by one and the same replay run: {named}",
            )
        )
    return EntryGuard(
        stage=stage,
        admitted=not findings,
        writer_config_sha256=writer.sha256,
        writer_config=writer,
        outliner_config_sha256=outliner.sha256 if outliner is not None else None,
        outliner_config=outliner,
        journal=journal_location(book),
        verified=verified,
        entries=entries,
        receipts=receipts,
        findings=findings,
    )


def guard_refusal(guard: EntryGuard) -> FailedClosed:
    """The error of a refused guard: FINE_OUTLINE_GUARD, or PLAN_GUARD for the plan stage (exit 3), naming every
    finding."""
    if guard.stage == "plan":
        return FailedClosed(
            "PLAN_GUARD",
            f"a real plan draft needs verified, passed Gate A and Gate B receipts for {guard.measured}: "
            f"{guard.summary()}",
            guard.journal,
            "pass the fine-outline agent's gates first (an outliner set's replay), or preview with --dry-run "
            "(no model call)",
        )
    return FailedClosed(
        "FINE_OUTLINE_GUARD",
        f"a real fine-outline run needs verified, passed Gate A and Gate B receipts for writer configuration "
        f"{guard.writer_config_sha256[:12]}…: {guard.summary()}",
        guard.journal,
        "pass the writer's gates first (replay experiments), or preview with --dry-run (no model call)",
    )


def require_fine_outline_entry(book: Book, *, gate_inputs: GateInputRebuilder | None = None) -> EntryGuard:
    """The guard's verdict when it admits the stage; FINE_OUTLINE_GUARD (exit 3) naming every finding otherwise."""
    guard = check_fine_outline_entry(book, gate_inputs=gate_inputs)
    if not guard.admitted:
        raise guard_refusal(guard)
    return guard
