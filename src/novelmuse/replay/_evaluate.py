"""`muse gate input RUN` and `muse gate evaluate RUN --gate A|B` (issue 12 item 5): the gate input of a replay run,
rebuilt from the store by the one GateInputBuilder, and Gate A / Gate B through the one issuer.

Only real, probed models earn receipts (`run_models`): a run answered by the scripted provider, or by a model never
probed with its exact id, is journaled with its report marked as such and no receipt, whatever its outcome.

The issuer re-hashes every binding through the store reader, whose `gate_input` artefacts come only from the
GateInputBuilder (never from the file written beside the run), journals the report first and a signed
receipt only for a passed report — binding the gate input, the gate spec, the rubric, the registered set,
every manifest the gate input names and the configuration of the agent the run measured (`run_config_sha256`: the
writer's, or the outliner's for an outliner set's run, under the fine-outline stage's own gate spec).
"""

from __future__ import annotations

from pydantic import BaseModel

from ..book import Book, atomic_write_bytes
from ..judging import load_rubric
from ..text import sha256_hex
from ._builder import build_gate_input, gate_input_locator, gate_input_rebuilder, keep_damaged_input
from ._gates import GateName, GateReport
from ._guard import store_reader
from ._input import gate_input_bytes
from ._journal import GateIssuer, journal_location
from ._orchestrator import probed, roles_of, stage_config
from ._outliner import prompt_location
from ._receipt import ArtefactRef, ModelsEvidence, ReceiptBindings, file_ref, rubric_ref, spec_ref
from ._runs import RunRow, load_run
from ._sets import private_dirs, set_location
from ._spec import load_gate_spec
from ._stored import manifest_location
from ._writer_config import ModelPin


class GateInputDoc(BaseModel):
    """`muse gate input RUN --json`."""

    schema_version: int = 1
    ok: bool
    run_id: str
    path: str  # relative to the book
    sha256: str
    samples: int
    not_ok: list[str]  # item/arm: code of every sample that is not ok


class GateDoc(BaseModel):
    """`muse gate evaluate RUN --gate A|B --json`: the report as journaled, and where."""

    schema_version: int = 1
    ok: bool
    gate: GateName
    outcome: str
    models: ModelsEvidence  # only `real` lets a passed report earn a receipt
    models_note: str
    run_id: str
    journal: str
    report_seq: int
    receipt_seq: int | None
    gate_input_sha256: str
    run_config_sha256: str
    report: GateReport


def _write(book: Book, run_id: str, data: bytes) -> str:
    relative = gate_input_locator(run_id)
    path = book.root / relative
    private_dirs(book, path.parent)
    atomic_write_bytes(path, data, mode=0o600)
    return relative


def gate_input_doc(book: Book, run_id: str) -> GateInputDoc:
    """Build the run's gate input from the store and write it beside the run (`muse gate input`)."""
    gi = build_gate_input(book, run_id)
    data = gate_input_bytes(gi)
    relative = _write(book, gi.run_id, data)
    not_ok = [f"{s.item_id}/{s.arm}: {s.anomaly.code}" for s in gi.samples if s.anomaly is not None]
    return GateInputDoc(
        ok=not not_ok,
        run_id=gi.run_id,
        path=relative,
        sha256=sha256_hex(data),
        samples=len(gi.samples),
        not_ok=not_ok,
    )


def run_models(book: Book, row: RunRow) -> tuple[ModelsEvidence, str]:
    """Whether real, probed models answered the run: `canned` when a gated role was served by the scripted provider
    (canned answers, not a model), `unprobed` when a model was never probed with its exact id (`muse models check`),
    else `real` — read from the configuration the run recorded, not the book's configuration now."""
    pins = [ModelPin.model_validate(m) for m in stage_config(row.config).get("models", [])]
    used = [m for m in pins if m.model is not None and (m.role in roles_of(row.kind))]
    canned = [f"{m.role} ({m.kind}:{m.model})" for m in used if m.kind == "scripted"]
    if canned:
        return "canned", f"canned answers, not a model: {', '.join(canned)}"
    unprobed = [f"{m.role} ({m.kind}:{m.model})" for m in used if not probed(book, m.role, m.kind or "", m.model or "")]
    if unprobed:
        return "unprobed", f"never probed with its exact id (`muse models check`): {', '.join(unprobed)}"
    if not used:
        return "unprobed", "the run recorded no model"
    return "real", ""


def evaluate_run(book: Book, run_id: str, gate: GateName) -> GateDoc:
    """Gate `gate` on replay run `run_id` through the one issuer (see the module doc), under the gate spec of the
    agent the run measured: the writer's, or the fine-outline stage's for an outliner run."""
    row = load_run(book, run_id)
    outliner = row.kind == "outliner"
    models, note = run_models(book, row)
    gi = build_gate_input(book, row.id)
    keep_damaged_input(book, gi)  # what it saw, should a damaged artefact be restored later
    data = gate_input_bytes(gi)
    relative = _write(book, gi.run_id, data)
    # a writer sample's manifest is its context manifest; an outliner sample's, the prompt its draft was made from
    manifests = sorted({s.manifest_sha256 for s in gi.samples if s.manifest_sha256 is not None})
    locations = [prompt_location(book, row.id, sha) if outliner else manifest_location(book, sha) for sha in manifests]
    bindings = ReceiptBindings(
        gate_input=ArtefactRef(kind="gate_input", locator=relative, sha256=sha256_hex(data)),
        gate_spec=spec_ref(load_gate_spec(stage="fine_outline" if outliner else "writer")),
        rubric=rubric_ref(load_rubric("fine_outline_replay" if outliner else "writer_replay")),
        eval_set=file_ref(book, "set", set_location(book, row.set_sha256)),
        manifests=[file_ref(book, "manifest", where) for where in locations],
        run_config_sha256=row.writer_config_sha256,
    )
    with GateIssuer.open(book, reader=store_reader(book, gate_input_rebuilder(book))) as issuer:
        issued = issuer.issue(gate, gi, bindings, models, note)
    return GateDoc(
        ok=issued.report.outcome == "passed",
        gate=gate,
        outcome=issued.report.outcome,
        models=models,
        models_note=note,
        run_id=row.id,
        journal=journal_location(book),
        report_seq=issued.report_entry.seq,
        receipt_seq=issued.receipt_entry.seq if issued.receipt_entry else None,
        gate_input_sha256=issued.report.gate_input_sha256,
        run_config_sha256=row.writer_config_sha256,
        report=issued.report,
    )
