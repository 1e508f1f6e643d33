"""Promotion: `muse write` uses arm C only with a verified, passed Gate B receipt of the current writer
configuration whose gate input the store rebuilds; otherwise arm A, saying why; `--arm` forces either."""

from __future__ import annotations

import pytest

from novelmuse.book import Book
from novelmuse.errors import InputError
from novelmuse.replay import promoted_arm, writer_config_sha256
from novelmuse.text import sha256_hex

from ._helpers import Store, issue


@pytest.fixture
def store() -> Store:
    return Store()


def test_arm_a_until_a_gate_b_receipt_of_this_writer_promotes_c(gate_book: Book, store: Store) -> None:
    first = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert (first.arm, first.forced, first.receipt_seq) == ("A", False, None)
    assert "arm C is not promoted" in first.reason and writer_config_sha256(gate_book) in first.reason
    issue(gate_book, "A", store)  # Gate A alone promotes nothing
    assert promoted_arm(gate_book, gate_inputs=store.rebuild).arm == "A"
    issue(gate_book, "B", store, run="RUN2", config=sha256_hex("an older writer"))  # another writer's pass
    older = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert older.arm == "A" and "seq 4" in older.reason
    issue(gate_book, "B", store, run="RUN3")
    choice = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert (choice.arm, choice.promoted, choice.receipt_seq) == ("C", "C", 6)
    assert choice.reason == "arm C promoted by Gate B receipt seq 6"
    # no GateInputBuilder (this version's default): nothing can be re-checked, nothing is promoted
    assert promoted_arm(gate_book).arm == "A" and "GATE_INPUT_BUILDER_MISSING" in promoted_arm(gate_book).reason
    # a tampered journal promotes nothing
    journal = gate_book.root / ".muse" / "gates" / "journal.jsonl"
    journal.write_bytes(journal.read_bytes().replace(b'"mode":"offline_replay"', b'"mode":"offline_replaY"', 1))
    tampered = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert tampered.arm == "A" and "seq 1" in tampered.reason


def test_arm_forces_either_and_says_what_promotion_would_do(gate_book: Book, store: Store) -> None:
    forced = promoted_arm(gate_book, force="c", gate_inputs=store.rebuild)
    assert (forced.arm, forced.forced, forced.promoted) == ("C", True, "A")
    assert forced.reason.startswith("arm C forced by --arm (promotion would use A")
    issue(gate_book, "B", store)
    back = promoted_arm(gate_book, force="A", gate_inputs=store.rebuild)
    assert (back.arm, back.forced, back.promoted, back.receipt_seq) == ("A", True, "C", 2)
    with pytest.raises(InputError) as exc:
        promoted_arm(gate_book, force="B")
    assert exc.value.code == "USAGE"
