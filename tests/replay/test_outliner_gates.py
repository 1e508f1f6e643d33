"""The fine-outline stage's own gates end to end (tests/replay/honest_outliner.py: twelve distinct target chapters,
probed models, an outliner whose candidate arm really drafts closer to the reference): Gate A and Gate B pass
through the one issuer under the stage's own gate spec, their receipts bind the outliner configuration (not the
writer's) and admit the plan stage — and identical arms fail Gate B, a later failed evaluation revokes the pass."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from novelmuse.replay import (
    check_plan_entry,
    evaluate_run,
    gate_input_rebuilder,
    outliner_config,
    run_replay,
    verify_journal,
    writer_config,
)
from novelmuse.replay._guard import store_reader

from .honest_outliner import KEY_ENV, HonestOutliner, honest_outliner_book, probe

BROKEN = {9, 10, 11, 12}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "userconf" / "config.toml"))
    monkeypatch.setenv(KEY_ENV, "not-a-real-key")
    return tmp_path


def _run(book, doc, models, new: bool = False):  # type: ignore[no-untyped-def]
    return asyncio.run(run_replay(book, doc, ["A", "C"], concurrency=8, new=new, providers={"s": models}))


def test_an_honest_outliner_passes_its_own_gates_and_admits_the_plan_stage(env: Path) -> None:
    book, doc = honest_outliner_book(env / "b")
    models = HonestOutliner(BROKEN)
    asyncio.run(probe(book, models))
    models.calls.clear()
    refused = check_plan_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert not refused.admitted and {f.code for f in refused.findings} >= {"GUARD_NO_RECEIPT"}
    out = _run(book, doc, models)
    assert out.ok, [(s.item_id, s.arm, s.code, s.detail) for s in out.samples if s.code]
    assert set(models.calls) == {"outliner", "judge"}  # no writer, detector or extractor
    a, b = evaluate_run(book, out.run_id, "A"), evaluate_run(book, out.run_id, "B")
    assert (a.outcome, b.outcome, a.models, b.models) == ("passed", "passed", "real", "real"), (
        a.report.summary,
        b.report.summary,
    )
    assert a.report.gate_spec.id == "outline-gate-spec-v1" and a.report.rubric.id.startswith("fine-outline")
    assert b.run_config_sha256 == outliner_config(book).sha256 != writer_config(book).sha256
    fails = next(c for c in a.report.checks if c.name == "fails_each_side")
    assert fails.figures["detector_fails"] == fails.figures["panel_fails"] == 8  # E1 and R1 of four broken drafts
    report = verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)))
    assert report.ok and report.receipts == 2
    guard = check_plan_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert guard.admitted, guard.summary()
    assert guard.receipts == {"A": a.receipt_seq, "B": b.receipt_seq}
    # the outliner's receipts say nothing about the writer: the fine-outline stage is still refused
    from novelmuse.replay import check_fine_outline_entry

    assert not check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book)).admitted
    # identical arms: no measured improvement, and the failed evaluation revokes the pass
    same = HonestOutliner(BROKEN, identical=True)
    again = _run(book, doc, same, new=True)
    failed = evaluate_run(book, again.run_id, "B")
    improvement = next(c for c in failed.report.checks if c.name == "improvement")
    assert failed.outcome == "failed" and "no detectable difference" in improvement.detail
    revoked = check_plan_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert not revoked.admitted and "GUARD_LATEST_FAILED" in [f.code for f in revoked.findings]
