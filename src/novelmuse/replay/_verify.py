"""`muse gate verify` / `muse gate show`: walk the whole journal and name every problem by seq.

The walk (see `_chain` for why it is sound):

- every line must be complete, match its own sha256, have the next seq and chain to the line before it
  (a flipped byte, a deleted, reordered or inserted entry, a replaced signature → named);
- the last entry's signature must verify with the book's ``[gate] signer`` — it covers every byte before it;
  with ``all_signatures`` (or as soon as anything is wrong, to name the culprits) every entry's is checked;
- every receipt must name an earlier report entry by seq and sha256 and be that report's only receipt;
- (deep, the default) every body must parse, be of its kind's schema and be issued under the signer's key
  id, and receipts and the reports they name must validate in full; every receipt's report must have
  passed, be of its gate and run and bind the same gate input and spec; every bound artefact must re-hash;
  and every report must follow from its gate input: the gate input is read again through the artefact
  reader (the replay orchestrator rebuilds it from the store) and the gate evaluated again under the bound
  spec — a self-computed report never matches (拒绝自算 JSON);
- the store's index is a witness: an entry it holds must still be in the journal, byte for byte (a journal
  truncated or rewritten behind it is named).

Reports without a receipt are rechecked against their gate input when it can still be read (a note when it
cannot: a failed run's artefacts may be gone). Re-hashes and re-evaluations are cached within one walk, and a
clean deep walk leaves a checkpoint in the store (`_verified`): the next walk still checks the whole chain and
every bound artefact, but parses and recomputes only the entries after it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import BaseModel, ValidationError

from ..book import Book
from ..errors import FailedClosed, MuseError
from ..store import transaction
from ..text import canonical_json, sha256_hex
from ._chain import GENESIS, Entry, LineProblem, decode_entry, line_sha256
from ._gates import evaluate_gate, report_sha256
from ._index import IndexRow, clear_index, index_rows
from ._input import GateInput, parse_gate_input
from ._journal import configured_signer, read_journal, sync_index
from ._keys import PublicKey
from ._receipt import (
    RECEIPT_SCHEMA,
    REPORT_ENTRY_SCHEMA,
    ArtefactReader,
    ArtefactRef,
    ReceiptBody,
    Rehasher,
    ReportBody,
    binding_problems,
    book_artefacts,
)
from ._spec import spec_named, spec_stage
from ._verified import Bound, Checkpoint, drop_checkpoint, load_checkpoint, save_checkpoint

VERIFY_SCHEMA: Final = 1


class Problem(BaseModel):
    """One thing wrong (or, in `notes`, worth knowing) about the journal, named by the entry's seq."""

    seq: int | None
    code: str
    what: str


class EntrySummary(BaseModel):
    """One journal entry as `muse gate show` lists it."""

    seq: int
    kind: Literal["report", "receipt"]
    gate: str
    outcome: str
    run_id: str
    mode: str
    summary: str
    report_seq: int | None
    receipt_seq: int | None
    issued_at: str
    run_config_sha256: str | None = None  # the writer configuration evaluated (receipts, and reports since v2)
    gate_spec_sha256: str | None = None  # the gate spec bound
    models: str | None = None  # reports since v2: real / canned / unprobed (only real earns a receipt)


class LatestEvaluation(BaseModel):
    """The latest evaluation of one gate for one writer configuration: the one the guard and promotion use."""

    seq: int
    outcome: str
    run_id: str
    models: str | None
    receipt_seq: int | None


class ConfigurationSummary(BaseModel):
    """Every evaluation of one agent configuration (the writer's or the outliner's), as `muse gate show` groups
    them."""

    run_config_sha256: str | None  # None: v1 reports, which bound no writer configuration
    agent: Literal["writer", "outliner"] = "writer"  # by the stage of the gate spec its reports were measured by
    current: bool
    runs: int
    evaluations: int
    seqs: list[int]
    latest: dict[str, LatestEvaluation]


def by_configuration(listing: list[EntrySummary], current: str | Collection[str] | None) -> list[ConfigurationSummary]:
    """The listing's evaluations grouped per agent configuration — the writer's and the outliner's (`current`: the
    book's configurations now, listed first; then by first seq) — each with how many replay runs were evaluated and
    each gate's latest evaluation, which wins, passed or failed."""
    now = {current} if isinstance(current, str) else set(current or ())
    groups: dict[str | None, list[EntrySummary]] = {}
    for e in listing:
        if e.kind == "report":
            groups.setdefault(e.run_config_sha256, []).append(e)
    receipts = {e.report_seq: e.seq for e in listing if e.kind == "receipt"}
    out = []
    for config, reports in groups.items():
        latest: dict[str, LatestEvaluation] = {}
        for e in sorted(reports, key=lambda e: e.seq):
            latest[e.gate] = LatestEvaluation(
                seq=e.seq, outcome=e.outcome, run_id=e.run_id, models=e.models, receipt_seq=receipts.get(e.seq)
            )
        stage = spec_stage(reports[0].gate_spec_sha256 or "")
        out.append(
            ConfigurationSummary(
                run_config_sha256=config,
                agent="outliner" if stage == "fine_outline" else "writer",
                current=config is not None and config in now,
                runs=len({e.run_id for e in reports}),
                evaluations=len(reports),
                seqs=[e.seq for e in reports],
                latest=dict(sorted(latest.items())),
            )
        )
    return sorted(out, key=lambda c: (not c.current, c.seqs[0]))


class VerifyReport(BaseModel):
    """The result of walking the journal (`muse gate verify --json`; `muse gate show --json` adds `listing`)."""

    schema_version: int = VERIFY_SCHEMA
    ok: bool
    outcome: Literal["passed", "failed", "empty"]
    journal: str
    signer: str | None
    entries: int
    reports: int
    receipts: int
    head: dict[str, int | str] | None
    signatures_checked: int
    artefacts_checked: int
    problems: list[Problem]
    notes: list[Problem]
    listing: list[EntrySummary] | None = None
    configurations: list[ConfigurationSummary] | None = None  # `muse gate show`: the listing per writer configuration


_Recomputed = tuple[str | None, GateInput | None, tuple[str, str] | None]
_BODY_SCHEMA = {"report": REPORT_ENTRY_SCHEMA, "receipt": RECEIPT_SCHEMA}


@dataclass
class _Walk:
    signer: PublicKey
    artefacts: Rehasher
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    recomputed: dict[tuple[str, str, str], _Recomputed] = field(default_factory=dict)
    bound: list[Bound] = field(default_factory=list)  # what each entry checked deeply bound (for the checkpoint)

    def problem(self, seq: int | None, code: str, what: str) -> None:
        self.problems.append(Problem(seq=seq, code=code, what=what))


def verify_journal(
    book: Book,
    *,
    reader: ArtefactReader | None = None,
    all_signatures: bool = False,
    listing: bool = False,
    deep: bool = True,
) -> VerifyReport:
    """Walk the whole journal of `book` (see the module doc); `ok` only when nothing is wrong.

    `deep=False` checks the chain (every line's hash, seq and link, the covering signature, the index witness)
    and that every receipt names an earlier report entry by its sha256, and leaves out the reports' bodies and
    the artefacts (no re-hash, no recomputed report)."""
    journal = read_journal(book)
    witness = index_rows(book.db)
    if not journal.lines and journal.torn_offset is None and not witness:
        return VerifyReport(
            ok=True, outcome="empty", journal=journal.location, signer=None, entries=0, reports=0, receipts=0,
            head=None, signatures_checked=0, artefacts_checked=0, problems=[], notes=[],
            listing=[] if listing else None,
        )  # fmt: skip
    walk = _Walk(configured_signer(book), Rehasher(reader if reader is not None else book_artefacts(book)))
    entries = _walk_chain(walk, journal.lines)
    if journal.torn_offset is not None:
        seq = (entries[-1].seq + 1) if entries else len(journal.lines) + 1
        walk.problem(seq, "GATE_ENTRY_TORN", "the last line is incomplete (an interrupted append or a damaged file)")
    signatures = _check_signatures(walk, entries, all_signatures or bool(walk.problems))
    by_seq: dict[int, Entry] = {}
    for e in entries:
        by_seq.setdefault(e.seq, e)
    _check_witness(walk, witness, dict(journal.lines))
    point = _usable(book, walk, by_seq) if deep and not all_signatures else None
    through = point.through_seq if point is not None else 0
    fresh = [e for e in entries if e.seq > through]
    bodies = _bodies(walk, fresh, everything=deep or listing)
    receipts_of: dict[int, list[int]] = {k: list(v) for k, v in point.receipts_of.items()} if point else {}
    for seq, body in bodies.items():
        if by_seq[seq].kind == "receipt" and isinstance(body.get("report_seq"), int):
            receipts_of.setdefault(body["report_seq"], []).append(seq)
    earlier = _earlier_reports(walk, by_seq, bodies, through)  # reports before the checkpoint a new receipt names
    artefacts = _check_receipts(walk, by_seq, {**earlier, **bodies}, receipts_of, deep)
    if deep:
        for seq, body in bodies.items():
            if by_seq[seq].kind == "report" and seq not in receipts_of:
                _recheck(walk, seq, body, None)
                if isinstance(body.get("report"), dict) and body["report"].get("outcome") == "passed":
                    walk.notes.append(
                        Problem(seq=seq, code="GATE_RECEIPT_MISSING", what="a passed report with no receipt after it")
                    )
    if point is not None:
        artefacts += _rehash_bound(walk, point)
    reports = sum(e.kind == "report" for e in entries)
    last = entries[-1] if entries else None
    rows = _listing(by_seq, bodies, receipts_of) if deep or listing else []
    if point is not None:
        rows = _kept_listing(point, receipts_of) + rows
        walk.notes[:0] = [
            n for n in map(Problem.model_validate, point.notes)
            if not (n.code == "GATE_RECEIPT_MISSING" and n.seq in receipts_of)
        ]  # fmt: skip
    if deep and not walk.problems and journal.torn_offset is None and last is not None and last.seq > through:
        _keep(book, walk, point, last, rows, receipts_of)
    return VerifyReport(
        ok=not walk.problems,
        outcome="failed" if walk.problems else "passed",
        journal=journal.location,
        signer=walk.signer.key_id,
        entries=len(journal.lines),
        reports=reports,
        receipts=len(entries) - reports,
        head={"seq": last.seq, "sha256": last.line_sha256} if last else None,
        signatures_checked=signatures,
        artefacts_checked=artefacts,
        problems=sorted(walk.problems, key=lambda p: (p.seq or 0, p.code)),
        notes=walk.notes,
        listing=rows if listing else None,
    )


def _usable(book: Book, walk: _Walk, by_seq: dict[int, Entry]) -> Checkpoint | None:
    """The store's checkpoint, if the chain walked clean and still holds its head line byte for byte (then every
    line before it is what was verified: each line hashes the one before)."""
    if walk.problems:
        return None
    point = load_checkpoint(book, walk.signer.key_id)
    if point is None:
        return None
    head = by_seq.get(point.through_seq)
    return point if head is not None and head.line_sha256 == point.head_sha256 else None


def _earlier_reports(
    walk: _Walk, by_seq: dict[int, Entry], bodies: dict[int, dict[str, Any]], through: int
) -> dict[int, dict[str, Any]]:
    """The bodies of the reports before the checkpoint that receipts after it name (parsed only for them)."""
    wanted = {
        b["report_seq"]
        for seq, b in bodies.items()
        if by_seq[seq].kind == "receipt" and isinstance(b.get("report_seq"), int) and b["report_seq"] <= through
    }
    return _bodies(walk, [by_seq[s] for s in sorted(wanted) if s in by_seq], everything=True)


def _rehash_bound(walk: _Walk, point: Checkpoint) -> int:
    """Re-hash every artefact the entries before the checkpoint bound (each distinct one once): a change is a
    problem at each entry that bound it; a report's gate input that is gone is a note (its run may be deleted)."""
    checked = 0
    for bound in point.bound:
        for kind, locator, sha in bound.refs:
            checked += len(bound.seqs)
            problem = walk.artefacts.problem(ArtefactRef.model_construct(kind=kind, locator=locator, sha256=sha))
            if problem is None:
                continue
            for seq in bound.seqs:
                if bound.soft and problem[0] == "GATE_ARTEFACT_MISSING":
                    walk.notes.append(Problem(seq=seq, code="GATE_REPORT_NOT_RECHECKED", what="its gate input is gone"))
                else:
                    walk.problem(seq, *problem)
    return checked


def _kept_listing(point: Checkpoint, receipts_of: dict[int, list[int]]) -> list[EntrySummary]:
    """The checkpoint's listing, each report pointing at its receipt (one may have come after the checkpoint)."""
    rows = [EntrySummary.model_construct(**row) for row in point.listing]
    for row in rows:
        if row.kind == "report" and row.seq in receipts_of:
            row.receipt_seq = receipts_of[row.seq][0]
    return rows


def _keep(
    book: Book,
    walk: _Walk,
    point: Checkpoint | None,
    last: Entry,
    rows: list[EntrySummary],
    receipts_of: dict[int, list[int]],
) -> None:
    """Save what this clean deep walk established (the store may be read-only: then nothing is kept)."""
    kept = Checkpoint(
        through_seq=last.seq,
        head_sha256=last.line_sha256,
        listing=[r.model_dump(mode="json") for r in rows],
        notes=[n.model_dump(mode="json") for n in walk.notes if n.code != "GATE_REPORT_NOT_RECHECKED"],  # re-derived
        receipts_of=receipts_of,
        bound=[*(point.bound if point else []), *walk.bound],
    )
    with suppress(sqlite3.Error, MuseError):
        save_checkpoint(book, walk.signer.key_id, kept)


def _walk_chain(walk: _Walk, lines: list[tuple[int, bytes]]) -> list[Entry]:
    """Decode every line and check seq and links; returns the entries that decoded."""
    entries: list[Entry] = []
    expected, prev_sha, prev_seq = 1, GENESIS, 0
    for offset, line in lines:
        entry = decode_entry(line, offset)
        if isinstance(entry, LineProblem):
            walk.problem(expected, entry.code, f"the entry at byte {offset}: {entry.what}")
        else:
            if entry.seq != expected:
                walk.problem(
                    entry.seq,
                    "GATE_ENTRY_SEQ",
                    f"seq {entry.seq} stands where seq {expected} belongs (after seq {prev_seq}): an entry was "
                    "deleted, inserted or moved",
                )
            if entry.prev_sha256 != prev_sha:
                walk.problem(entry.seq, "GATE_ENTRY_LINK", "does not chain to the line before it (prev_sha256)")
            entries.append(entry)
            prev_seq = expected = entry.seq
        expected += 1
        prev_sha = line_sha256(line)
    return entries


def _check_signatures(walk: _Walk, entries: list[Entry], every: bool) -> int:
    targets = entries if every else entries[-1:]
    for e in targets:
        if not e.signed_by(walk.signer):
            walk.problem(
                e.seq, "GATE_SIGNATURE", f"the signature does not verify with [gate] signer {walk.signer.key_id}"
            )
    return len(targets)


def _check_witness(walk: _Walk, witness: list[IndexRow], lines: dict[int, bytes]) -> None:
    """Every entry the store's index holds must still be the journal's line at its offset, byte for byte."""
    for row in witness:
        line = lines.get(row.offset)
        if line is None:
            walk.problem(row.seq, "GATE_JOURNAL_TRUNCATED", "the store's index holds this entry; the journal does not")
        elif line_sha256(line) != row.line_sha256:
            walk.problem(row.seq, "GATE_JOURNAL_REWRITTEN", "the journal's entry differs from the one the index holds")


def _bodies(walk: _Walk, entries: list[Entry], *, everything: bool) -> dict[int, dict[str, Any]]:
    """Parsed bodies by seq — every entry's, or only the receipts' — each of its kind's schema and issued under
    the signer's key id (the first entry of a duplicated seq wins)."""
    out: dict[int, dict[str, Any]] = {}
    for e in entries:
        if not everything and e.kind != "receipt":
            continue
        try:
            body = e.body()
        except ValueError:
            body = {}
        if body.get("schema_version") != _BODY_SCHEMA[e.kind]:
            walk.problem(e.seq, "GATE_ENTRY_BODY", f"not a {e.kind} body of schema {_BODY_SCHEMA[e.kind]}")
        elif body.get("signer") != walk.signer.key_id:
            walk.problem(e.seq, "GATE_SIGNATURE", f"issued under key id {body.get('signer')}, not {walk.signer.key_id}")
        else:
            out.setdefault(e.seq, body)
    return out


def _check_receipts(
    walk: _Walk,
    by_seq: dict[int, Entry],
    bodies: dict[int, dict[str, Any]],
    receipts_of: dict[int, list[int]],
    deep: bool,
) -> int:
    """Every receipt names an earlier report entry by seq and sha256 and is its only receipt; deep: that report
    passed, is of the receipt's gate and run, and everything is typed, re-hashed and recomputed."""
    checked = 0
    for seq, receipt in bodies.items():
        if by_seq[seq].kind != "receipt":
            continue
        report_seq = receipt.get("report_seq")
        target = by_seq.get(report_seq) if isinstance(report_seq, int) and report_seq < seq else None
        if target is None or target.kind != "report" or receipt.get("report_entry_sha256") != target.sha256:
            walk.problem(seq, "GATE_RECEIPT_ORPHAN", f"does not bind an earlier report entry (names seq {report_seq})")
            continue
        if receipts_of[target.seq][0] != seq:
            walk.problem(seq, "GATE_RECEIPT_DUPLICATE", f"report seq {target.seq} already has a receipt")
        report = bodies.get(target.seq)
        if not deep or report is None:
            continue  # chain only, or the report's body is already named as invalid
        try:
            typed = ReceiptBody.model_validate(receipt)
            typed_report = ReportBody.model_validate(report)
        except ValidationError as exc:
            walk.problem(seq, "GATE_ENTRY_BODY", f"the receipt or its report is not well formed ({exc.error_count()})")
            continue
        r = typed_report.report
        if typed.report_sha256 != typed_report.report_sha256:
            walk.problem(seq, "GATE_RECEIPT_ORPHAN", f"does not bind report seq {target.seq} by its report's sha256")
        if typed_report.models not in (None, "real"):
            walk.problem(
                seq,
                "GATE_RECEIPT_UNEARNED",
                f"follows a report (seq {target.seq}) decided on {typed_report.models} models: only real, probed "
                "models earn a receipt",
            )
        if (r.outcome, r.gate, r.run_id) != ("passed", typed.gate, typed.run_id):
            walk.problem(
                seq,
                "GATE_RECEIPT_UNEARNED",
                f"follows a {r.outcome} gate {r.gate} report (seq {target.seq}): a receipt is only ever issued for a "
                "passed report of its own gate and run",
            )
        if typed.bindings.gate_input != typed_report.gate_input or typed.bindings.gate_spec != typed_report.gate_spec:
            walk.problem(seq, "GATE_BINDING_MISMATCH", "binds another gate input or spec than its report")
        refs = typed.bindings.all()
        checked += len(refs)
        walk.bound.append(Bound([(r.kind, r.locator, r.sha256) for r in refs], [seq]))
        _recheck(walk, target.seq, report, (seq, typed))
    return checked


def _recheck(walk: _Walk, seq: int, body: dict[str, Any], receipt: tuple[int, ReceiptBody] | None) -> None:
    """Recompute report `seq` from its gate input under its spec; for its receipt, re-hash every binding."""
    try:
        report = body["report"]
        recorded = body["report_sha256"]
        gate_input_ref = ArtefactRef.model_validate(body["gate_input"])
        named = report["gate_spec"]
        spec = (report["gate"], named["id"], named["version"], named["sha256"])
    except (KeyError, TypeError, ValidationError) as exc:
        walk.problem(seq, "GATE_ENTRY_BODY", f"the report is not well formed ({type(exc).__name__})")
        return
    if sha256_hex(canonical_json(report)) != recorded:
        walk.problem(seq, "GATE_REPORT_HASH", "the report does not match the sha256 recorded beside it")
        return
    if receipt is None:
        walk.bound.append(Bound([(gate_input_ref.kind, gate_input_ref.locator, gate_input_ref.sha256)], [seq], True))
    digest, gate_input, problem = _recompute(walk, gate_input_ref, *spec)
    if problem is not None and problem[0] == "GATE_ARTEFACT_MISSING" and receipt is None:
        walk.notes.append(Problem(seq=seq, code="GATE_REPORT_NOT_RECHECKED", what="its gate input is gone"))
        return
    if problem is not None:
        walk.problem(receipt[0] if receipt else seq, *problem)
        return
    if digest != recorded:
        walk.problem(
            seq,
            "GATE_REPORT_NOT_RECOMPUTED",
            "the report does not follow from its gate input under its spec (a self-computed report?)",
        )
    if receipt is not None and gate_input is not None:
        # the gate input re-hashed to the report's binding, so that is its digest (no re-serialisation)
        for code, what in binding_problems(
            gate_input, receipt[1].bindings, walk.artefacts, gate_input_digest=gate_input_ref.sha256
        ):
            walk.problem(receipt[0], code, what)


def _recompute(walk: _Walk, ref: ArtefactRef, gate: str, spec_id: str, version: int, spec_sha: str) -> _Recomputed:
    """(sha256 of the report recomputed from the gate input, the gate input, None) — or (None, None, problem);
    once per (gate input, spec, gate) within a walk."""
    key = (ref.sha256, spec_sha, gate)
    if key not in walk.recomputed:
        walk.recomputed[key] = _evaluate_again(walk, ref, gate, spec_id, version, spec_sha)
    return walk.recomputed[key]


def _evaluate_again(walk: _Walk, ref: ArtefactRef, gate: str, spec_id: str, version: int, spec_sha: str) -> _Recomputed:
    missing = walk.artefacts.problem(ref)  # None: it re-hashes, so these are the bytes that were bound
    if missing is not None:
        return None, None, missing
    data = walk.artefacts.read(ref)
    assert data is not None
    if gate not in ("A", "B"):
        return None, None, ("GATE_ENTRY_BODY", f"unknown gate {gate!r}")
    try:
        gate_input = parse_gate_input(data, ref.locator)
        spec = spec_named(spec_id, version)
    except MuseError as exc:
        return None, None, ("GATE_INPUT_UNUSABLE", f"cannot recompute the report ({exc.code}: {exc.what})")
    if spec is None:
        return None, None, ("GATE_INPUT_UNUSABLE", f"the report's gate spec {spec_id}@{version} is not registered")
    if spec.sha256 != spec_sha:
        return None, None, ("GATE_ARTEFACT_CHANGED", f"gate spec v{spec.version} is not the one the report used")
    return report_sha256(evaluate_gate("A" if gate == "A" else "B", gate_input, spec)), gate_input, None


def _listing(
    by_seq: dict[int, Entry], bodies: dict[int, dict[str, Any]], receipts_of: dict[int, list[int]]
) -> list[EntrySummary]:
    out: list[EntrySummary] = []
    for seq, b in bodies.items():
        try:
            if by_seq[seq].kind == "report":
                r = b["report"]
                row = EntrySummary(
                    seq=seq, kind="report", gate=r["gate"], outcome=r["outcome"], run_id=r["run_id"], mode=r["mode"],
                    summary=r["summary"], report_seq=None,
                    receipt_seq=receipts_of[seq][0] if seq in receipts_of else None, issued_at=b["issued_at"],
                    run_config_sha256=b.get("run_config_sha256"), gate_spec_sha256=r["gate_spec"]["sha256"],
                    models=b.get("models"),
                )  # fmt: skip
            else:
                row = EntrySummary(
                    seq=seq, kind="receipt", gate=b["gate"], outcome=b["outcome"], run_id=b["run_id"], mode=b["mode"],
                    summary=f"binds report seq {b['report_seq']}, its gate input, spec, rubric, set and "
                    f"{len(b['bindings']['manifests'])} manifests",
                    report_seq=b["report_seq"], receipt_seq=None, issued_at=b["issued_at"],
                    run_config_sha256=b["bindings"]["run_config_sha256"],
                    gate_spec_sha256=b["bindings"]["gate_spec"]["sha256"],
                )  # fmt: skip
        except (KeyError, TypeError, ValidationError):
            continue  # named as GATE_ENTRY_BODY by the checks
        out.append(row)
    return out


def rebuild_index(book: Book, *, force: bool = False) -> int:
    """Rebuild the store's index from the journal (returns the rows indexed).

    Refused (GATE_JOURNAL_CORRUPT) while the journal does not verify as a chain, and (GATE_JOURNAL_DIVERGED)
    while the index knows entries the journal lacks or holds differently — rebuilding then would erase the
    only witness of a truncation; `force` rebuilds anyway, after you have decided the journal is right."""
    report = verify_journal(book, deep=False)
    witness = [p for p in report.problems if p.code in ("GATE_JOURNAL_TRUNCATED", "GATE_JOURNAL_REWRITTEN")]
    if witness and not force:
        raise FailedClosed(
            "GATE_JOURNAL_DIVERGED",
            f"the index holds entries the journal lacks or holds differently (first: seq {witness[0].seq})",
            report.journal,
            "restore the journal from a backup; `muse gate reindex --force` discards the index's record of them",
        )
    broken = [p for p in report.problems if p not in witness]
    if broken:
        raise FailedClosed(
            "GATE_JOURNAL_CORRUPT",
            f"the journal does not verify (seq {broken[0].seq}: {broken[0].code})",
            report.journal,
            "run `muse gate verify`; an index is only built from an intact chain",
        )
    conn = book.db
    drop_checkpoint(book)
    with transaction(conn):
        clear_index(conn)
    return sync_index(book, conn, configured_signer(book))
