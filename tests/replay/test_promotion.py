"""Promotion: `muse write` uses arm C only with a verified, passed Gate B receipt of the current writer
configuration whose gate input the store rebuilds; otherwise arm A, saying why; `--arm` forces either."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from novelmuse.book import Book
from novelmuse.cli import _cmd_write, _cmd_writing
from novelmuse.errors import InputError
from novelmuse.replay import promoted_arm, writer_config_sha256
from novelmuse.text import sha256_hex

from ._helpers import Store, issue, sample_gate_book


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
    issue(gate_book, "B", store, run="RUN3")  # this writer's pass, but Gate A passed in another run
    split = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert split.arm == "A" and "GUARD_RUNS_DIFFER" in split.reason
    issue(gate_book, "A", store, run="RUN3")
    choice = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert (choice.arm, choice.promoted, choice.receipt_seq) == ("C", "C", 6)
    assert choice.reason == "promoted by Gate B receipt seq 6"
    # no GateInputBuilder (this version's default): nothing can be re-checked, nothing is promoted
    no_builder = promoted_arm(gate_book, gate_inputs=None)
    assert no_builder.arm == "A" and "GATE_INPUT_BUILDER_MISSING" in no_builder.reason
    # a tampered journal promotes nothing
    journal = gate_book.root / ".muse" / "gates" / "journal.jsonl"
    journal.write_bytes(journal.read_bytes().replace(b'"mode":"offline_replay"', b'"mode":"offline_replaY"', 1))
    tampered = promoted_arm(gate_book, gate_inputs=store.rebuild)
    assert tampered.arm == "A" and "seq 1" in tampered.reason


def test_arm_forces_either_and_says_what_promotion_would_do(gate_book: Book, store: Store) -> None:
    forced = promoted_arm(gate_book, force="c", gate_inputs=store.rebuild)
    assert (forced.arm, forced.forced, forced.promoted) == ("C", True, "A")
    assert forced.reason.startswith("forced by --arm (promotion would use arm A, the baseline — arm C is not")
    issue(gate_book, "A", store)
    issue(gate_book, "B", store)
    back = promoted_arm(gate_book, force="A", gate_inputs=store.rebuild)
    assert (back.arm, back.forced, back.promoted, back.receipt_seq) == ("A", True, "C", 4)
    with pytest.raises(InputError) as exc:
        promoted_arm(gate_book, force="B")
    assert exc.value.code == "USAGE"


# ── muse write: the promoted arm, said and recorded in the manifest ──────────────────────────────────────


@pytest.fixture
def sample(tmp_path: Path, user_config: Path, muse) -> Book:  # type: ignore[no-untyped-def]
    book = sample_gate_book(tmp_path)
    assert muse("outline", "confirm", "11", "--book", book.root).exit_code == 0
    return book


@pytest.fixture
def cli(muse, user_config: Path, monkeypatch: pytest.MonkeyPatch, store: Store):  # type: ignore[no-untyped-def]
    """`muse` in-process whose promotion rebuilds gate inputs from `store` (the replay orchestrator's store)."""
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    monkeypatch.setattr(_cmd_write, "promoted_arm", functools.partial(promoted_arm, gate_inputs=store.rebuild))
    monkeypatch.setattr(_cmd_writing, "promoted_arm", functools.partial(promoted_arm, gate_inputs=store.rebuild))
    return muse


def _manifest(book: Book, doc: dict[str, Any]) -> dict[str, Any]:
    return json.loads((book.root / doc["manifests"][0]["path"]).read_bytes())


def test_muse_write_uses_arm_a_and_says_so_until_c_is_promoted(cli, sample: Book, store: Store) -> None:  # type: ignore[no-untyped-def]
    r = cli("write", "11", "--dry-run", "--json", "--book", sample.root)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["arm"] == "A" and doc["arm_choice"]["forced"] is False and doc["arm_choice"]["receipt_seq"] is None
    assert _manifest(sample, doc)["arm_choice"] == doc["arm_choice"]  # recorded in the manifest
    human = cli("write", "11", "--dry-run", "--book", sample.root)
    assert "write chapter 11 (arm A)" in human.stdout and "arm C is not promoted" in human.stdout

    issue(sample, "A", store)
    issue(sample, "B", store)
    doc = json.loads(cli("write", "11", "--dry-run", "--json", "--book", sample.root).stdout)
    assert doc["arm"] == "C" and doc["arm_choice"]["receipt_seq"] == 4 and doc["arm_choice"]["forced"] is False
    assert doc["arm_choice"]["writer_config_sha256"] == writer_config_sha256(sample)
    forced = json.loads(cli("write", "11", "--arm", "A", "--dry-run", "--json", "--book", sample.root).stdout)
    assert forced["arm"] == "A" and _manifest(sample, forced)["arm_choice"]["forced"] is True
    assert _manifest(sample, forced)["arm_choice"]["promoted"] == "C"
    bad = cli("write", "11", "--arm", "B", "--book", sample.root)
    assert bad.exit_code == 2 and "not a writing arm" in bad.stderr


def test_a_context_built_without_a_choice_keeps_its_manifest_bytes(muse, sample: Book) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(muse("context", "11", "--json", "--book", sample.root).stdout)
    assert "arm_choice" not in doc["manifest"]  # `muse context` (and replay's arms) choose nothing
    assert muse("context", "verify", "11", "--book", sample.root).exit_code == 0


def test_muse_context_shows_the_context_muse_write_would_build_and_says_which(  # type: ignore[no-untyped-def]
    cli, sample: Book, store: Store
) -> None:
    """The context a user inspects is the writer's: arm A until a Gate B receipt promotes C, named on stderr."""
    r = cli("context", "11", "--book", sample.root)
    assert r.exit_code == 0 and "arm A: the arm `muse write` would use" in r.stderr
    assert json.loads(cli("context", "11", "--json", "--book", sample.root).stdout)["arm"] == "A"
    issue(sample, "A", store)
    issue(sample, "B", store)
    promoted = cli("context", "11", "--book", sample.root)
    assert promoted.exit_code == 0 and "arm C: the arm `muse write` would use" in promoted.stderr
    assert json.loads(cli("context", "11", "--json", "--book", sample.root).stdout)["arm"] == "C"
    assert json.loads(cli("context", "11", "--arm", "B", "--json", "--book", sample.root).stdout)["arm"] == "B"
