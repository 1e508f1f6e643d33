"""A clean replay on a set large enough to decide (12 items): Gate A and Gate B pass through the one issuer,
their receipts bind the run's artefacts, and what consumes them — the fine-outline entry guard and `muse
write`'s promotion — admit on gate inputs rebuilt from the store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from novelmuse.replay import (
    check_fine_outline_entry,
    evaluate_run,
    gate_input_rebuilder,
    promoted_arm,
    run_replay,
    verify_journal,
    writer_config,
)
from novelmuse.replay._guard import store_reader

from .replay_helpers import ManyOutlinesFake, many_items, with_signer


def test_both_gates_pass_and_their_receipts_admit_the_fine_outline_stage_and_promote_arm_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config = tmp_path / "userconf" / "config.toml"
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    book, doc = many_items(tmp_path / "b", 12)
    book = with_signer(book, user_config)
    out = asyncio.run(run_replay(book, doc, ["A", "C"], concurrency=8, providers={"s": ManyOutlinesFake()}))
    assert out.ok, [s.code for s in out.samples if s.code]
    assert promoted_arm(book).arm == "A"  # no receipt yet
    a = evaluate_run(book, out.run_id, "A")
    b = evaluate_run(book, out.run_id, "B")
    assert (a.outcome, b.outcome) == ("passed", "passed"), (a.report.summary, b.report.summary)
    assert a.receipt_seq is not None and b.receipt_seq is not None
    assert b.run_config_sha256 == writer_config(book).sha256
    assert not any(c.name.startswith("diagnostic") for c in b.report.checks) and b.report.diagnostic == []
    report = verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)))
    assert report.ok and report.receipts == 2
    guard = check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert guard.admitted, guard.summary()
    choice = promoted_arm(book)
    assert choice.arm == "C" and choice.receipt_seq == b.receipt_seq
    # a manifest edited after the receipts: the rebuilt gate input no longer matches, nothing is admitted
    manifest = next((book.root / ".muse" / "manifests").glob("*.json"))
    manifest.chmod(0o644)
    manifest.write_bytes(manifest.read_bytes() + b" ")
    assert not check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book)).admitted
    assert promoted_arm(book).arm == "A"
