"""The one issuer and the CAS journal: report first, receipt only after passed, bindings checked before anything is
written, and every kind of tampering named by seq by the verifier."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novelmuse.book import Book, find_book
from novelmuse.errors import FailedClosed
from novelmuse.replay import (
    GateIssuer,
    Issued,
    ReceiptBindings,
    rebuild_index,
    verify_journal,
)
from novelmuse.replay._chain import encode_entry
from novelmuse.replay._keys import SigningKey

from ._helpers import honest_doc, prepare_run, sample

JOURNAL = Path(".muse/gates/journal.jsonl")


def issue(book: Book, gate: str, doc: dict | None = None, run: str = "RUN1") -> Issued:
    gi, bindings = prepare_run(book, doc or honest_doc(), run)
    with GateIssuer.open(book) as issuer:
        return issuer.issue(gate, gi, bindings)  # type: ignore[arg-type]


def lines(book: Book) -> list[bytes]:
    return (book.root / JOURNAL).read_bytes().splitlines(keepends=True)


def write_lines(book: Book, new: list[bytes]) -> None:
    (book.root / JOURNAL).write_bytes(b"".join(new))


def problems(book: Book, **kw: object) -> list[tuple[int | None, str]]:
    report = verify_journal(book, **kw)  # type: ignore[arg-type]
    assert report.ok is (not report.problems)
    return [(p.seq, p.code) for p in report.problems]


def failed_doc() -> dict:
    doc = honest_doc()
    sample(doc, "i02", "C").update(ok=False, anomaly={"category": "system", "code": "MODEL_TIMEOUT"})
    return doc


@pytest.fixture
def six(gate_book: Book) -> Book:
    """A journal of 6 entries: A passed (1, 2), B failed (3), B passed (4, 5), A insufficient (6)."""
    issue(gate_book, "A")
    issue(gate_book, "B", failed_doc(), run="RUN2")
    issue(gate_book, "B")
    issue(gate_book, "A", honest_doc(n=4), run="RUN3")
    assert len(lines(gate_book)) == 6
    return gate_book


def test_passed_writes_report_then_receipt_binding_everything(gate_book: Book) -> None:
    gi, bindings = prepare_run(gate_book, honest_doc())
    with GateIssuer.open(gate_book) as issuer:
        out = issuer.issue("B", gi, bindings)
    assert out.report.outcome == "passed" and out.report_entry.seq == 1 and out.receipt_entry is not None
    report, receipt = (json.loads(x) for x in lines(gate_book))
    assert (report["kind"], receipt["kind"]) == ("report", "receipt")
    assert receipt["prev_sha256"] != report["prev_sha256"] == "0" * 64
    body = receipt["body"]
    assert body["report_seq"] == 1 and body["report_entry_sha256"] == report["sha256"]
    assert body["report_sha256"] == report["body"]["report_sha256"]
    assert ReceiptBindings.model_validate(body["bindings"]) == bindings  # report, input, spec, rubric, set, manifests
    assert len(body["bindings"]["manifests"]) == 36
    v = verify_journal(gate_book, listing=True)
    assert v.ok and v.outcome == "passed" and (v.entries, v.reports, v.receipts) == (2, 1, 1)
    assert v.artefacts_checked == 40 and v.listing is not None and v.listing[0].receipt_seq == 2


@pytest.mark.parametrize(("doc", "outcome"), [(failed_doc(), "failed"), (honest_doc(n=5), "insufficient")])
def test_failed_or_insufficient_writes_only_the_report(gate_book: Book, doc: dict, outcome: str) -> None:
    out = issue(gate_book, "A", doc)
    assert out.report.outcome == outcome and out.receipt_entry is None
    assert [json.loads(x)["kind"] for x in lines(gate_book)] == ["report"]
    assert verify_journal(gate_book).ok


def test_bindings_that_disagree_or_no_longer_rehash_write_nothing(gate_book: Book) -> None:
    gi, bindings = prepare_run(gate_book, honest_doc())
    wrong = bindings.model_copy(update={"manifests": bindings.manifests[1:]})
    with GateIssuer.open(gate_book) as issuer:
        with pytest.raises(FailedClosed) as exc:
            issuer.issue("A", gi, wrong)
        assert exc.value.code == "GATE_BINDING_MISMATCH"
        (gate_book.root / bindings.manifests[0].locator).write_text("edited", encoding="utf-8")
        with pytest.raises(FailedClosed) as exc:
            issuer.issue("A", gi, bindings)
        assert exc.value.code == "GATE_ARTEFACT_CHANGED"
    assert not (gate_book.root / JOURNAL).exists()


def test_a_flipped_byte_anywhere_is_named(six: Book) -> None:
    original = lines(six)
    for index, where in [(2, b'"outcome":"'), (3, b'"signature":"'), (4, b'"sha256":"')]:
        line = bytearray(original[index])
        at = line.index(where) + len(where) + 3
        line[at] = ord("A") if line[at] != ord("A") else ord("B")
        write_lines(six, [*original[:index], bytes(line), *original[index + 1 :]])
        found = problems(six)
        assert found and found[0][0] == index + 1, found
        assert {c for _, c in found} & {"GATE_ENTRY_HASH", "GATE_ENTRY_LINK", "GATE_SIGNATURE", "GATE_ENTRY_MALFORMED"}
    write_lines(six, original)
    assert problems(six) == []


def test_deleted_reordered_inserted_entries_are_named(six: Book) -> None:
    original = lines(six)
    write_lines(six, original[:2] + original[3:])
    assert (4, "GATE_ENTRY_SEQ") in problems(six) and (4, "GATE_ENTRY_LINK") in problems(six)
    write_lines(six, [original[0], original[2], original[1], *original[3:]])
    found = problems(six)
    assert {(3, "GATE_ENTRY_SEQ"), (2, "GATE_ENTRY_SEQ"), (4, "GATE_ENTRY_LINK")} <= set(found)
    write_lines(six, [*original[:3], original[2], *original[3:]])
    assert (3, "GATE_ENTRY_SEQ") in problems(six)


def test_a_passed_report_whose_receipt_never_came_is_noted(six: Book) -> None:
    """As after a crash between the report and its receipt: not a problem, but never read as a receipt."""
    original = lines(six)
    write_lines(six, original[:4])
    six.db.execute("DELETE FROM gate_entries WHERE seq > 4")
    report = verify_journal(six)
    assert report.ok and [(n.seq, n.code) for n in report.notes] == [(4, "GATE_RECEIPT_MISSING")]


def test_a_truncated_tail_is_named_by_the_store_witness(six: Book) -> None:
    original = lines(six)
    write_lines(six, original[:4])
    assert problems(six) == [(5, "GATE_JOURNAL_TRUNCATED"), (6, "GATE_JOURNAL_TRUNCATED")]
    with pytest.raises(FailedClosed) as exc:
        issue(six, "A", run="RUN4")
    assert exc.value.code == "GATE_JOURNAL_DIVERGED"  # never issued onto a journal cut behind the index
    (six.root / JOURNAL).unlink()
    assert (1, "GATE_JOURNAL_TRUNCATED") in problems(six)


def test_a_torn_last_line_is_named_and_never_extended(six: Book) -> None:
    original = lines(six)
    write_lines(six, [*original[:5], original[5][:40]])
    assert (6, "GATE_ENTRY_TORN") in problems(six)
    with pytest.raises(FailedClosed) as exc:
        issue(six, "A", run="RUN4")
    assert exc.value.code == "GATE_JOURNAL_TORN"


def test_an_entry_signed_by_another_key_is_a_forged_signature(six: Book) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    original = lines(six)
    last = json.loads(original[-1])
    from novelmuse.replay._chain import line_sha256

    stranger = SigningKey(Ed25519PrivateKey.generate())
    forged, _ = encode_entry(7, line_sha256(original[-1].rstrip(b"\n")), "report", last["body"], stranger)
    write_lines(six, [*original, forged + b"\n"])
    assert (7, "GATE_SIGNATURE") in problems(six)
    with pytest.raises(FailedClosed) as exc:
        issue(six, "A", run="RUN4")
    assert exc.value.code == "GATE_JOURNAL_CORRUPT"  # nothing is issued onto an entry that does not verify
    # a signature swapped in from another entry breaks the next entry's link (and its own check)
    sig3 = json.loads(original[2])["signature"].encode()
    sig4 = json.loads(original[3])["signature"].encode()
    write_lines(six, [*original[:3], original[3].replace(sig4, sig3), *original[4:]])
    found = problems(six)
    assert (4, "GATE_SIGNATURE") in found and (5, "GATE_ENTRY_LINK") in found


def test_receipt_artefacts_that_no_longer_rehash_are_named(six: Book) -> None:
    body = json.loads(lines(six)[4])["body"]
    manifest = six.root / body["bindings"]["manifests"][3]["locator"]
    manifest.write_text("changed after the receipt", encoding="utf-8")
    assert problems(six) == [(2, "GATE_ARTEFACT_CHANGED"), (5, "GATE_ARTEFACT_CHANGED")]  # both receipts of RUN1
    manifest.unlink()
    assert problems(six) == [(2, "GATE_ARTEFACT_MISSING"), (5, "GATE_ARTEFACT_MISSING")]


def test_a_hand_written_gate_input_never_passes(six: Book) -> None:
    path = six.root / ".muse/replay/RUN1/gate-input.json"
    doc = json.loads(path.read_bytes())
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")  # same content, not the builder's bytes
    found = problems(six)
    assert found and {seq for seq, _ in found} == {2, 5} and {c for _, c in found} == {"GATE_ARTEFACT_CHANGED"}


def test_a_report_that_does_not_follow_from_its_gate_input_is_named(gate_book: Book, user_config: Path) -> None:
    """Even the key holder cannot journal a self-computed report: the verifier recomputes it."""
    issue(gate_book, "A", failed_doc())
    original = lines(gate_book)
    entry = json.loads(original[0])
    body = entry["body"]
    body["report"] |= {"outcome": "passed", "anomalies": [], "summary": "passed: all 2 checks"}
    from novelmuse.replay import load_signing_key, report_sha256
    from novelmuse.replay._gates import GateReport

    body["report_sha256"] = report_sha256(GateReport.model_validate(body["report"]))
    key = load_signing_key(user_config.parent / "keys" / "gate_ed25519.pem")
    write_lines(gate_book, [encode_entry(1, "0" * 64, "report", body, key)[0] + b"\n"])
    rebuild_index(gate_book, force=True)
    assert problems(gate_book) == [(1, "GATE_REPORT_NOT_RECOMPUTED")]


def test_the_index_is_derived_and_rebuilt(six: Book) -> None:
    conn = six.db
    before = [tuple(r) for r in conn.execute("SELECT * FROM gate_entries ORDER BY seq")]
    assert [r[0] for r in before] == [1, 2, 3, 4, 5, 6]
    conn.execute("DELETE FROM gate_entries")
    assert rebuild_index(six) == 6
    assert [tuple(r) for r in conn.execute("SELECT * FROM gate_entries ORDER BY seq")] == before
    original = lines(six)
    write_lines(six, original[:4])
    with pytest.raises(FailedClosed) as exc:
        rebuild_index(six)
    assert exc.value.code == "GATE_JOURNAL_DIVERGED"  # the index is the only witness of entries 5 and 6
    assert rebuild_index(six, force=True) == 4
    write_lines(six, original[:2] + original[3:4])
    conn.execute("DELETE FROM gate_entries")
    with pytest.raises(FailedClosed) as exc:
        rebuild_index(six, force=True)
    assert exc.value.code == "GATE_JOURNAL_CORRUPT"  # never from a broken chain


def test_a_symlinked_journal_is_refused(gate_book: Book, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    (gate_book.root / JOURNAL).parent.mkdir(parents=True)
    os.symlink(target, gate_book.root / JOURNAL)
    with pytest.raises(FailedClosed) as exc:
        issue(gate_book, "A")
    assert exc.value.code == "GATE_JOURNAL_UNSAFE"
    assert target.read_bytes() == b""


def test_the_issuer_needs_the_books_signer(gate_book: Book, user_config: Path) -> None:
    text = (gate_book.root / "book.toml").read_text(encoding="utf-8")
    other = "ed25519:" + base64.b64encode(b"\x01" * 32).decode()
    (gate_book.root / "book.toml").write_text(text.split("[gate]")[0] + f'[gate]\nsigner = "{other}"\n')
    with pytest.raises(Exception) as exc:
        issue(find_book(gate_book.root), "A")
    assert getattr(exc.value, "code", None) == "GATE_SIGNER_MISMATCH"


def test_a_receipt_for_a_failed_or_missing_report_is_named(gate_book: Book, user_config: Path) -> None:
    """Even the key holder cannot make a receipt stand for a report that did not pass, or for no report."""
    from novelmuse.replay import load_signing_key
    from novelmuse.replay._chain import line_sha256

    gi, bindings = prepare_run(gate_book, failed_doc())
    with GateIssuer.open(gate_book) as issuer:
        out = issuer.issue("A", gi, bindings)
    assert out.receipt_entry is None
    report_line = lines(gate_book)[0].rstrip(b"\n")
    report = json.loads(report_line)
    receipt = {
        "schema_version": "gate-receipt-v1", "gate": "A", "outcome": "passed", "mode": "offline_replay",
        "run_id": "RUN1", "report_seq": 1, "report_entry_sha256": report["sha256"],
        "report_sha256": report["body"]["report_sha256"], "bindings": bindings.model_dump(mode="json"),
        "signer": report["body"]["signer"], "issued_at": report["body"]["issued_at"],
    }  # fmt: skip
    key = load_signing_key(user_config.parent / "keys" / "gate_ed25519.pem")
    forged, _ = encode_entry(2, line_sha256(report_line), "receipt", receipt, key)
    write_lines(gate_book, [report_line + b"\n", forged + b"\n"])
    assert (2, "GATE_RECEIPT_UNEARNED") in problems(gate_book)
    assert problems(gate_book, deep=False) == []  # the chain itself is intact: only the deep check sees it
    orphan, _ = encode_entry(2, line_sha256(report_line), "receipt", receipt | {"report_seq": 7}, key)
    write_lines(gate_book, [report_line + b"\n", orphan + b"\n"])
    assert (2, "GATE_RECEIPT_ORPHAN") in problems(gate_book, deep=False)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_single_changed_byte_is_caught(six: Book, data: st.DataObject) -> None:
    """Property: changing any one byte of the journal, to anything, never verifies — even without the index."""
    path = six.root / JOURNAL
    original = path.read_bytes()
    at = data.draw(st.integers(min_value=0, max_value=len(original) - 1))
    new = data.draw(st.integers(min_value=0, max_value=255).filter(lambda b: b != original[at]))
    path.write_bytes(original[:at] + bytes([new]) + original[at + 1 :])
    try:
        six.db.execute("SAVEPOINT no_witness")
        six.db.execute("DELETE FROM gate_entries")  # the chain alone must catch it
        assert not verify_journal(six, deep=False).ok
    finally:
        six.db.execute("ROLLBACK TO no_witness")
        six.db.execute("RELEASE no_witness")
        path.write_bytes(original)
