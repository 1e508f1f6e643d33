"""The verification checkpoint: a clean deep walk lets the next one parse and recompute only the entries after it,
and never at the cost of what verification catches — every byte is still covered by the chain and the last
signature, every bound artefact still re-hashed, every new entry still checked in full, and a checkpoint that does
not fit (another head, a damaged row, another verifier) is no checkpoint."""

from __future__ import annotations

import json

import pytest

from novelmuse.book import Book
from novelmuse.replay import verify_journal
from novelmuse.replay._verified import load_checkpoint

from .test_journal import failed_doc, issue, lines, problems, six, write_lines

__all__ = ["six"]  # the fixture: a journal of six entries


def _doc(book: Book) -> dict[str, object]:
    """Everything a walk reports but the counters of the work it did."""
    report = verify_journal(book, listing=True).model_dump(mode="json")
    return {k: v for k, v in report.items() if k not in ("signatures_checked", "artefacts_checked")}


def _full(book: Book) -> dict[str, object]:
    book.db.execute("DELETE FROM gate_verified")
    return _doc(book)


def test_a_clean_walk_keeps_a_checkpoint_and_the_next_walk_reports_exactly_the_same(six: Book) -> None:
    first = _doc(six)
    signer = str(first["signer"])
    point = load_checkpoint(six, signer)
    assert point is not None and point.through_seq == 6 and len(point.listing) == 6
    assert _doc(six) == first  # from the checkpoint …
    assert _full(six) == first  # … and without it
    issue(six, "B", run="RUN4")  # entries after the checkpoint: checked in full, listed after the earlier ones
    after = _doc(six)
    assert [e["seq"] for e in after["listing"]] == list(range(1, 9))  # type: ignore[index, union-attr]
    assert after == _full(six)
    assert load_checkpoint(six, signer).through_seq == 8  # type: ignore[union-attr]


def test_a_changed_byte_before_the_checkpoint_is_still_caught(six: Book) -> None:
    assert problems(six) == []
    old = lines(six)
    line = bytearray(old[2])
    at = line.index(b'"outcome":"') + 12
    line[at] = ord("X")
    write_lines(six, [old[0], old[1], bytes(line), *old[3:]])
    assert (3, "GATE_ENTRY_HASH") in problems(six)


def test_artefacts_bound_before_the_checkpoint_are_still_rehashed(six: Book) -> None:
    assert problems(six) == []
    body = json.loads(lines(six)[4])["body"]
    manifest = six.root / body["bindings"]["manifests"][3]["locator"]
    manifest.write_text("changed after the checkpoint", encoding="utf-8")
    assert problems(six) == [(2, "GATE_ARTEFACT_CHANGED"), (5, "GATE_ARTEFACT_CHANGED")]
    manifest.unlink()
    assert problems(six) == [(2, "GATE_ARTEFACT_MISSING"), (5, "GATE_ARTEFACT_MISSING")]


def test_a_hand_written_gate_input_after_the_checkpoint_is_still_caught(six: Book) -> None:
    assert problems(six) == []
    path = six.root / ".muse/replay/RUN1/gate-input.json"
    path.write_text(json.dumps(json.loads(path.read_bytes()), indent=1), encoding="utf-8")
    found = problems(six)
    assert found and {seq for seq, _ in found} == {2, 5} and {c for _, c in found} == {"GATE_ARTEFACT_CHANGED"}


def test_a_receipt_after_the_checkpoint_for_a_report_before_it_is_checked(six: Book) -> None:
    """Seq 3 (B, failed) is checkpointed; a receipt appended for it later is unearned, named by its seq."""
    from novelmuse.replay import default_key_path, load_signing_key
    from novelmuse.replay._chain import encode_entry, line_sha256

    assert problems(six) == []
    old = lines(six)
    receipt = json.loads(old[4])["body"]
    report = json.loads(old[2])
    receipt |= {"report_seq": 3, "report_entry_sha256": report["sha256"], "gate": "B", "run_id": "RUN2"}
    key = load_signing_key(default_key_path())
    line, _ = encode_entry(7, line_sha256(old[-1].rstrip(b"\n")), "receipt", receipt, key)
    write_lines(six, [*old, line + b"\n"])
    found = problems(six)
    assert (7, "GATE_RECEIPT_UNEARNED") in found


@pytest.mark.parametrize("damage", ["UPDATE gate_verified SET body = '{'", "UPDATE gate_verified SET verifier = 'x'"])
def test_a_checkpoint_that_does_not_fit_is_no_checkpoint(six: Book, damage: str) -> None:
    first = _doc(six)
    six.db.execute(damage)
    assert _doc(six) == first


def test_a_failed_report_after_a_checkpoint_keeps_its_note_and_problem_free_walks_only(six: Book) -> None:
    assert problems(six) == []
    issue(six, "A", failed_doc(), run="RUN5")
    assert problems(six) == []
    (six.root / ".muse/replay/RUN5/gate-input.json").unlink()  # a failed run's artefacts may be deleted: a note
    report = verify_journal(six)
    assert report.ok and [(n.seq, n.code) for n in report.notes] == [(7, "GATE_REPORT_NOT_RECHECKED")]
