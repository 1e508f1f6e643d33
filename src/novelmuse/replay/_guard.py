"""The fine-outline entry guard (seed 003: 细纲入口验完整 hash 链; 第二阶段才用已验签 receipt 启动细纲 real-run).

The layer above the writer — the fine-outline agent — may run for real only once the writer below has passed
its gates, and the guard is what proves it. A real run is admitted only when all of these hold:

1. the whole journal verifies (`verify_journal`, deep: every line's hash, seq and link, the covering
   signature, every receipt's report, every report recomputed from its gate input, every bound artefact
   re-hashed) — any problem is named by its seq;
2. the journal holds a passed **Gate A** and a passed **Gate B** receipt whose `run_config_sha256` is the
   book's writer configuration *now* (`writer_config`) — a receipt earned by another writer (an older prompt,
   another model, another gate spec or budget) does not count, and the refusal says which receipts exist for
   which configurations;
3. every gate input is **rebuilt from the store**, never read from a file: the guard's artefact reader
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

from collections.abc import Callable
from typing import Final, Literal

from pydantic import BaseModel

from ..book import Book
from ..errors import FailedClosed, MuseError
from ._gates import GateName
from ._input import GateInput, gate_input_bytes
from ._journal import journal_location
from ._receipt import ArtefactReader, ArtefactRef, book_artefacts
from ._verify import EntrySummary, verify_journal
from ._writer_config import WriterConfig, writer_config

GUARD_SCHEMA: Final = 1
#: Rebuild the gate input a receipt binds (by its ref) from the replay run in the store; None when the store
#: holds no run that rebuilds it.
GateInputRebuilder = Callable[[ArtefactRef], GateInput | None]
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
    """The guard's verdict for the fine-outline stage (`admitted` only with no finding)."""

    schema_version: int = GUARD_SCHEMA
    stage: Literal["fine_outline", "promotion"] = "fine_outline"
    admitted: bool
    writer_config_sha256: str
    writer_config: WriterConfig
    journal: str
    verified: Literal["passed", "failed", "empty", "not_run"]
    entries: int
    receipts: dict[str, int | None]  # gate → seq of the receipt that admits it (the newest), None when none does
    findings: list[GuardFinding]

    def summary(self) -> str:
        """One line naming everything missing (or the receipts that admit the stage)."""
        if self.admitted:
            by = " and ".join(f"Gate {gate} receipt seq {seq}" for gate, seq in self.receipts.items())
            return f"admitted by {by} for writer configuration {self.writer_config_sha256[:12]}…"
        return "; ".join(f.line() for f in self.findings)


def store_reader(book: Book, rebuild: GateInputRebuilder | None) -> ArtefactReader:
    """The guard's artefact reader: book files, pinned specs and rubrics as usual, but a gate input only as
    `rebuild` rebuilds it from the store (never a file; GATE_INPUT_BUILDER_MISSING without a rebuilder)."""
    files = book_artefacts(book)

    def read(ref: ArtefactRef) -> bytes | None:
        if ref.kind != "gate_input":
            return files(ref)
        if rebuild is None:
            raise FailedClosed(
                "GATE_INPUT_BUILDER_MISSING",
                "gate inputs are only accepted as rebuilt from the store by the replay orchestrator's "
                "GateInputBuilder, and none was given",
                ref.locator,
                "pass the store's GateInputBuilder (replay.gate_input_rebuilder)",
            )
        rebuilt = rebuild(ref)
        if rebuilt is None:
            raise FailedClosed(
                "GATE_INPUT_NOT_IN_STORE",
                "no replay run in the store rebuilds this gate input (hand-written or self-computed?)",
                ref.locator,
                "only gate inputs built from a recorded replay run count",
            )
        return gate_input_bytes(rebuilt)

    return read


def _receipt_findings(
    gate: GateName, config: WriterConfig, listing: list[EntrySummary], verified: bool
) -> tuple[int | None, list[GuardFinding]]:
    """The newest receipt of `gate` that admits `config` (None when none does) and why the others do not."""
    current = config.sha256
    receipts = [e for e in listing if e.kind == "receipt" and e.gate == gate]
    findings: list[GuardFinding] = []
    mine: list[int] = []
    for e in receipts:
        if e.run_config_sha256 != current:
            continue
        if e.gate_spec_sha256 != config.gate_spec.sha256:  # the configuration names a spec the receipt does not bind
            what = f"claims writer configuration {current[:12]}… but binds another gate spec than it names"
            findings.append(GuardFinding(code="GUARD_RECEIPT_INCONSISTENT", what=what, seq=e.seq, gate=gate))
        else:
            mine.append(e.seq)
    if mine and verified:
        return max(mine), findings
    what = f"no verified, passed Gate {gate} receipt for writer configuration {current}"
    others = sorted({(e.run_config_sha256 or "?")[:12] for e in receipts if e.run_config_sha256 != current})
    if mine:
        what += f" (receipt seq {max(mine)} is for it, but the journal does not verify)"
    elif others:
        seqs = ", ".join(str(e.seq) for e in receipts if e.run_config_sha256 != current)
        what += (
            f" (Gate {gate} receipt seq {seqs} was earned by writer configuration {', '.join(others)}…: the writer "
            "changed since — rerun the replay experiments for this one)"
        )
    return None, [*findings, GuardFinding(code="GUARD_NO_RECEIPT", what=what, gate=gate)]


def check_fine_outline_entry(book: Book, *, gate_inputs: GateInputRebuilder | None = None) -> EntryGuard:
    """The guard's verdict (see the module doc): verify the whole journal through `store_reader(book,
    gate_inputs)` and look for passed Gate A and Gate B receipts of the current writer configuration."""
    return receipt_verdict(book, "fine_outline", _GATES, gate_inputs)


def receipt_verdict(
    book: Book,
    stage: Literal["fine_outline", "promotion"],
    gates: tuple[GateName, ...],
    gate_inputs: GateInputRebuilder | None,
) -> EntryGuard:
    """Whether the verified journal holds a passed receipt of every gate of `gates` for the current writer
    configuration, with every finding when it does not (the guard's and promotion's one evaluation)."""
    config = writer_config(book)
    current = config.sha256
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
    for gate in gates:
        receipts[gate], why = _receipt_findings(gate, config, listing, verified == "passed")
        findings += why
    return EntryGuard(
        stage=stage,
        admitted=not findings,
        writer_config_sha256=current,
        writer_config=config,
        journal=journal_location(book),
        verified=verified,
        entries=entries,
        receipts=receipts,
        findings=findings,
    )


def guard_refusal(guard: EntryGuard) -> FailedClosed:
    """The error of a refused guard: FINE_OUTLINE_GUARD (exit 3), naming every finding."""
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
