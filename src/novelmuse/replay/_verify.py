"""`muse gate verify` / `muse gate show`: walk the whole journal and name every problem by seq.

The walk (see `_chain` for why it is sound):

- every line must be complete, match its own sha256, have the next seq and chain to the line before it
  (a flipped byte, a deleted, reordered or inserted entry, a replaced signature → named);
- the last entry's signature must verify with the book's ``[gate] signer`` — it covers every byte before it;
  with ``all_signatures`` (or as soon as anything is wrong, to name the culprits) every entry's is checked;
- every body must be a valid report or receipt body signed under the signer's key id;
- every receipt must follow a ``passed`` report of the same gate, bind that report's sha256, be that report's
  only receipt, bind artefacts that still re-hash, and its report must follow from its gate input: the gate
  input is read again through the artefact reader (the replay orchestrator rebuilds it from the store), and
  the gate is evaluated again under the bound spec — a self-computed report never matches (拒绝自算 JSON);
- the store's index is a witness: an entry it holds must still be in the journal, byte for byte (a journal
  truncated or rewritten behind it is named).

Reports without a receipt are rechecked against their gate input when it can still be read (a note when it
cannot: a failed run's artefacts may be gone). Re-hashes and re-evaluations are cached within one walk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import BaseModel

from ..book import Book
from ..errors import FailedClosed, MuseError
from ..store import transaction
from ._chain import GENESIS, Entry, LineProblem, decode_entry, line_sha256
from ._gates import evaluate_gate, report_sha256
from ._index import IndexRow, clear_index, index_rows
from ._input import GateInput, parse_gate_input
from ._journal import configured_signer, parse_body, read_journal, sync_index
from ._keys import PublicKey
from ._receipt import (
    ArtefactReader,
    ArtefactRef,
    ReceiptBody,
    ReportBody,
    binding_problems,
    book_artefacts,
    rehash_problem,
)
from ._spec import load_gate_spec

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


@dataclass
class _Walk:
    signer: PublicKey
    reader: ArtefactReader
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    recomputed: dict[tuple[str, str, str], tuple[str | None, GateInput | None, tuple[str, str] | None]] = field(
        default_factory=dict
    )

    def problem(self, seq: int | None, code: str, what: str) -> None:
        self.problems.append(Problem(seq=seq, code=code, what=what))


Body = ReportBody | ReceiptBody


def verify_journal(
    book: Book,
    *,
    reader: ArtefactReader | None = None,
    all_signatures: bool = False,
    listing: bool = False,
    deep: bool = True,
) -> VerifyReport:
    """Walk the whole journal of `book` (see the module doc); `ok` only when nothing is wrong. `deep=False`
    leaves out the artefacts (no re-hash, no recomputed report): the chain, signatures, bodies and links only."""
    journal = read_journal(book)
    witness = index_rows(book.db)
    if not journal.lines and journal.torn_offset is None and not witness:
        return VerifyReport(
            ok=True, outcome="empty", journal=journal.location, signer=None, entries=0, reports=0, receipts=0,
            head=None, signatures_checked=0, artefacts_checked=0, problems=[], notes=[],
            listing=[] if listing else None,
        )  # fmt: skip
    walk = _Walk(configured_signer(book), _cached(reader if reader is not None else book_artefacts(book)))
    entries = _walk_chain(walk, journal.lines)
    if journal.torn_offset is not None:
        seq = (entries[-1].seq + 1) if entries else len(journal.lines) + 1
        walk.problem(seq, "GATE_ENTRY_TORN", "the last line is incomplete (an interrupted append or a damaged file)")
    signatures = _check_signatures(walk, entries, all_signatures or bool(walk.problems))
    _check_witness(walk, witness, {e.seq: e for e in entries})
    bodies = _check_bodies(walk, entries)
    receipts_of: dict[int, list[int]] = {}
    for seq, body in bodies.items():
        if isinstance(body, ReceiptBody):
            receipts_of.setdefault(body.report_seq, []).append(seq)
    artefacts = _check_receipts(walk, bodies, receipts_of, deep)
    for seq, body in bodies.items():
        if deep and isinstance(body, ReportBody) and seq not in receipts_of:
            _recheck(walk, seq, body, None)
    reports = sum(e.kind == "report" for e in entries)
    last = entries[-1] if entries else None
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
        listing=_listing(bodies, receipts_of) if listing else None,
    )


def _cached(reader: ArtefactReader) -> ArtefactReader:
    cache: dict[tuple[str, str], bytes | None] = {}

    def read(ref: ArtefactRef) -> bytes | None:
        key = (ref.kind, ref.locator)
        if key not in cache:
            cache[key] = reader(ref)
        return cache[key]

    return read


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


def _check_witness(walk: _Walk, witness: list[IndexRow], by_seq: dict[int, Entry]) -> None:
    for row in witness:
        entry = by_seq.get(row.seq)
        if entry is None:
            walk.problem(row.seq, "GATE_JOURNAL_TRUNCATED", "the store's index holds this entry; the journal does not")
        elif entry.line_sha256 != row.line_sha256:
            walk.problem(row.seq, "GATE_JOURNAL_REWRITTEN", "the journal's entry differs from the one the index holds")


def _check_bodies(walk: _Walk, entries: list[Entry]) -> dict[int, Body]:
    """Every valid body by seq (the first entry of a duplicated seq wins); invalid ones and foreign key ids named."""
    bodies: dict[int, Body] = {}
    for e in entries:
        body = parse_body(e)
        if isinstance(body, str):
            walk.problem(e.seq, "GATE_ENTRY_BODY", f"not a valid {e.kind} body ({body})")
            continue
        if body.signer != walk.signer.key_id:
            walk.problem(e.seq, "GATE_SIGNATURE", f"issued under key id {body.signer}, not {walk.signer.key_id}")
        bodies.setdefault(e.seq, body)
    return bodies


def _check_receipts(walk: _Walk, bodies: dict[int, Body], receipts_of: dict[int, list[int]], deep: bool) -> int:
    checked = 0
    for seq, receipt in bodies.items():
        if not isinstance(receipt, ReceiptBody):
            continue
        report_body = bodies.get(receipt.report_seq)
        if not isinstance(report_body, ReportBody) or receipt.report_seq >= seq:
            walk.problem(seq, "GATE_RECEIPT_ORPHAN", f"names seq {receipt.report_seq}, which is no earlier report")
            continue
        report = report_body.report
        if receipt.report_sha256 != report_body.report_sha256:
            walk.problem(seq, "GATE_RECEIPT_ORPHAN", f"does not bind report seq {receipt.report_seq} by its sha256")
        if report.outcome != "passed" or report.gate != receipt.gate or report.run_id != receipt.run_id:
            walk.problem(
                seq,
                "GATE_RECEIPT_UNEARNED",
                f"follows a {report.outcome} gate {report.gate} report (seq {receipt.report_seq}): a receipt is "
                "only ever issued for a passed report of its own gate",
            )
        if receipts_of[receipt.report_seq][0] != seq:
            walk.problem(seq, "GATE_RECEIPT_DUPLICATE", f"report seq {receipt.report_seq} already has a receipt")
        if receipt.bindings.gate_input != report_body.gate_input or receipt.bindings.gate_spec != report_body.gate_spec:
            walk.problem(seq, "GATE_BINDING_MISMATCH", "binds another gate input or spec than its report")
        if deep:
            checked += len(receipt.bindings.all())
            _recheck(walk, receipt.report_seq, report_body, (seq, receipt))
    return checked


def _recheck(walk: _Walk, seq: int, body: ReportBody, receipt: tuple[int, ReceiptBody] | None) -> None:
    """Recompute report `seq` from its gate input under its spec; for its receipt, re-hash every binding."""
    if report_sha256(body.report) != body.report_sha256:
        walk.problem(seq, "GATE_REPORT_HASH", "the report does not match the sha256 recorded beside it")
        return
    digest, gate_input, problem = _recompute(walk, body)
    if problem is not None and problem[0] == "GATE_ARTEFACT_MISSING" and receipt is None:
        walk.notes.append(Problem(seq=seq, code="GATE_REPORT_NOT_RECHECKED", what="its gate input is gone"))
        return
    if problem is not None:
        walk.problem(receipt[0] if receipt else seq, *problem)
        return
    if digest != body.report_sha256:
        walk.problem(
            seq,
            "GATE_REPORT_NOT_RECOMPUTED",
            "the report does not follow from its gate input under its spec (a self-computed report?)",
        )
    if receipt is not None and gate_input is not None:
        for code, what in binding_problems(gate_input, receipt[1].bindings, walk.reader):
            walk.problem(receipt[0], code, what)


def _recompute(walk: _Walk, body: ReportBody) -> tuple[str | None, GateInput | None, tuple[str, str] | None]:
    """(sha256 of the report recomputed from the gate input, the gate input, None) — or (None, None, problem)."""
    report = body.report
    key = (body.gate_input.sha256, report.gate_spec.sha256, report.gate)
    if key not in walk.recomputed:
        walk.recomputed[key] = _evaluate_again(walk, body)
    return walk.recomputed[key]


def _evaluate_again(walk: _Walk, body: ReportBody) -> tuple[str | None, GateInput | None, tuple[str, str] | None]:
    missing = rehash_problem(body.gate_input, walk.reader)
    if missing is not None:
        return None, None, missing
    data = walk.reader(body.gate_input)
    assert data is not None
    report = body.report
    try:
        gate_input = parse_gate_input(data, body.gate_input.locator)
        spec = load_gate_spec(report.gate_spec.version)
    except MuseError as exc:
        return None, None, ("GATE_INPUT_UNUSABLE", f"cannot recompute the report ({exc.code}: {exc.what})")
    if spec.sha256 != report.gate_spec.sha256:
        return None, None, ("GATE_ARTEFACT_CHANGED", f"gate spec v{spec.version} is not the one the report used")
    return report_sha256(evaluate_gate(report.gate, gate_input, spec)), gate_input, None


def _listing(bodies: dict[int, Body], receipts_of: dict[int, list[int]]) -> list[EntrySummary]:
    out: list[EntrySummary] = []
    for seq, b in bodies.items():
        if isinstance(b, ReportBody):
            r = b.report
            row = EntrySummary(
                seq=seq, kind="report", gate=r.gate, outcome=r.outcome, run_id=r.run_id, mode=r.mode, summary=r.summary,
                report_seq=None, receipt_seq=receipts_of[seq][0] if seq in receipts_of else None, issued_at=b.issued_at,
            )  # fmt: skip
        else:
            row = EntrySummary(
                seq=seq, kind="receipt", gate=b.gate, outcome=b.outcome, run_id=b.run_id, mode=b.mode,
                summary=f"binds report seq {b.report_seq}, its gate input, spec, rubric, set and "
                f"{len(b.bindings.manifests)} manifests",
                report_seq=b.report_seq, receipt_seq=None, issued_at=b.issued_at,
            )  # fmt: skip
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
    with transaction(conn):
        clear_index(conn)
    return sync_index(book, conn, configured_signer(book))
