"""The gate chain end to end on honest inputs (tests/replay/honest.py: twelve distinct items, probed models, a
writer whose arm C really differs and really scores higher): Gate A and Gate B pass through the one issuer, their
receipts admit the fine-outline stage and promote arm C — and every way a receipt could carry no evidence is
refused: identical arms, a later failed evaluation, gates from two runs, canned or unprobed models, copied items."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml

from novelmuse.errors import InputError
from novelmuse.replay import (
    by_configuration,
    check_fine_outline_entry,
    evaluate_run,
    gate_input_rebuilder,
    promoted_arm,
    register_set,
    run_doc,
    run_replay,
    verify_journal,
    writer_config,
)
from novelmuse.replay._guard import store_reader

from .honest import KEY_ENV, HonestModels, honest_book, probe

BROKEN = {9, 10, 11, 12}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "userconf" / "config.toml"))
    monkeypatch.setenv(KEY_ENV, "not-a-real-key")
    return tmp_path


def _run(book, doc, models, new: bool = False):  # type: ignore[no-untyped-def]
    return asyncio.run(run_replay(book, doc, ["A", "C"], concurrency=8, new=new, providers={"s": models}))


def _codes(guard) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in guard.findings]


def test_an_honest_writer_passes_both_gates_and_its_receipts_admit_and_promote(env: Path) -> None:
    book, doc, markers = honest_book(env / "b")
    models = HonestModels(markers, BROKEN)
    asyncio.run(probe(book, models))
    out = _run(book, doc, models)
    shown = [s.chapter for s in run_doc(book, out.run_id).samples]
    assert shown == sorted(shown) and shown[0] == 9 and shown[-1] == 20  # chapter order: ch9 … ch20, not ch10 first
    assert out.ok, [s.code for s in out.samples if s.code]
    assert promoted_arm(book).arm == "A"  # no receipt yet
    a, b = evaluate_run(book, out.run_id, "A"), evaluate_run(book, out.run_id, "B")
    assert (a.outcome, b.outcome, a.models, b.models) == ("passed", "passed", "real", "real"), (
        a.report.summary,
        b.report.summary,
    )
    assert a.receipt_seq is not None and b.receipt_seq is not None
    assert b.run_config_sha256 == writer_config(book).sha256
    report = verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)))
    assert report.ok and report.receipts == 2
    guard = check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert guard.admitted, guard.summary()
    choice = promoted_arm(book)
    assert choice.arm == "C" and choice.receipt_seq == b.receipt_seq
    # a later evaluation of the same writer that fails revokes the pass (no shopping among reruns)
    same = HonestModels(markers, BROKEN, identical=True)
    again = _run(book, doc, same, new=True)
    failed = evaluate_run(book, again.run_id, "B")
    improvement = next(c for c in failed.report.checks if c.name == "improvement")
    assert failed.outcome == "failed" and "no detectable difference" in improvement.detail
    refused = check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert not refused.admitted and "GUARD_LATEST_FAILED" in _codes(refused)
    assert f"revokes the pass of seq {b.report_seq}" in refused.summary()
    assert promoted_arm(book).arm == "A"
    (shown,) = by_configuration(
        verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)), listing=True).listing or [],
        writer_config(book).sha256,
    )
    assert shown.current and (shown.runs, shown.evaluations) == (2, 3)  # `muse gate show`: every evaluation counted
    assert shown.latest["B"].outcome == "failed" and shown.latest["B"].receipt_seq is None
    # a pass of Gate B in a third run does not pair with Gate A of the first: one run must pass both
    third = _run(book, doc, models, new=True)
    assert evaluate_run(book, third.run_id, "B").outcome == "passed"
    split = check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book))
    assert not split.admitted and _codes(split) == ["GUARD_RUNS_DIFFER"]
    assert evaluate_run(book, third.run_id, "A").outcome == "passed"
    assert check_fine_outline_entry(book, gate_inputs=gate_input_rebuilder(book)).admitted


def test_identical_arms_fail_both_gates_and_earn_nothing(env: Path) -> None:
    book, doc, markers = honest_book(env / "b")
    models = HonestModels(markers, BROKEN, identical=True)
    asyncio.run(probe(book, models))
    out = _run(book, doc, models)
    a, b = evaluate_run(book, out.run_id, "A"), evaluate_run(book, out.run_id, "B")
    assert (a.outcome, b.outcome) == ("failed", "failed")
    assert a.report.summary == "failed: kappa, fails_each_side" and b.report.summary == "failed: improvement"
    assert a.receipt_seq is None and b.receipt_seq is None


def test_unprobed_or_canned_models_never_earn_a_receipt(env: Path) -> None:
    book, doc, markers = honest_book(env / "b")
    models = HonestModels(markers, BROKEN)  # never probed: a real run is refused before it calls anything
    with pytest.raises(InputError) as exc:
        _run(book, doc, models)
    assert exc.value.code == "REPLAY_PROBE_MISSING" and models.calls == []
    toml = (book.root / "book.toml").read_text(encoding="utf-8").replace('kind = "openai"', 'kind = "scripted"')
    (book.root / "script.yaml").write_text("default: []\n", encoding="utf-8")
    toml = toml.replace('base_url = "http://127.0.0.1:9/v1"', 'script = "script.yaml"').replace(
        f'api_key_env = "{KEY_ENV}"\n', ""
    )
    (book.root / "book.toml").write_text(toml, encoding="utf-8")
    from novelmuse.book import find_book

    scripted = find_book(book.root)
    canned = HonestModels(markers, BROKEN, kind="scripted")
    out = _run(scripted, doc, canned, new=True)
    b = evaluate_run(scripted, out.run_id, "B")
    assert (b.outcome, b.models, b.receipt_seq) == ("passed", "canned", None) and "scripted" in b.models_note
    guard = check_fine_outline_entry(scripted, gate_inputs=gate_input_rebuilder(scripted))
    assert "GUARD_NOT_REAL_MODELS" in _codes(guard) and promoted_arm(scripted).arm == "A"


def test_a_set_of_copies_of_one_outline_is_refused(env: Path) -> None:
    book, _doc, _markers = honest_book(env / "b", items=2)
    first = (book.root / "outlines" / "0009.yaml").read_text(encoding="utf-8")
    copy = first.replace("chapter: 9", "chapter: 10")
    (book.root / "outlines" / "0010.yaml").write_text(copy, encoding="utf-8")
    from novelmuse.book import find_book
    from novelmuse.writing import confirm_outline, read_outline

    book = find_book(book.root)
    confirm_outline(book, 10)
    items = [
        {"id": f"ch{n}", "chapter": n, "outline_sha256": read_outline(book, n).sha256, "scene_type": "battle"}
        for n in (9, 10)
    ]
    path = book.root / "copies.yaml"
    path.write_text(yaml.safe_dump({"name": "copies", "items": items}, allow_unicode=True), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        register_set(book, path)
    assert exc.value.code == "REPLAY_SET_DUPLICATE" and "100% alike" in exc.value.what
    twice = [items[0], {**items[0], "id": "ch9-again"}]  # one chapter registered twice under two ids
    path.write_text(yaml.safe_dump({"name": "twice", "items": twice}, allow_unicode=True), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        register_set(book, path)
    assert exc.value.code == "REPLAY_SET_INVALID" and "named by two items" in exc.value.what
    shutil.rmtree(book.root / ".muse" / "replay", ignore_errors=True)
