"""Replay runs end to end on the sample book (issue 12 items 1–4): register, the sealed plan, the run, resume,
per-sample failure codes, and the GateInputBuilder rebuilding from the store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from novelmuse.book import find_book
from novelmuse.errors import FailedClosed, InputError
from novelmuse.replay import build_gate_input, gate_input_bytes, resolve_set
from novelmuse.replay._runs import samples_of

from .replay_helpers import RoleFake, registered, replay_book, run, set_file


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One clean run of the one-item set with arms A, B, C (module-scoped: copy it before editing)."""
    root = tmp_path_factory.mktemp("replay") / "book"
    book = replay_book(root)
    doc = registered(book)
    out = run(book, doc, RoleFake())
    return root, out.run_id


def copy(src: Path, dst: Path):  # type: ignore[no-untyped-def]
    shutil.copytree(src, dst, symlinks=True)
    return find_book(dst)


def test_a_clean_run_writes_every_arm_and_judges_the_item_once(clean: tuple[Path, str]) -> None:
    root, run_id = clean
    book = find_book(root)
    from novelmuse.replay import run_doc

    doc = run_doc(book, run_id)
    assert doc.ok and doc.status == "finished" and doc.arms == ["A", "B", "C"]
    assert sorted(s.arm for s in doc.samples) == ["A", "B", "C"]
    assert all(s.status == "done" and s.code is None and s.candidate_sha256 for s in doc.samples)
    assert sorted(s.position for s in doc.samples) == [0, 1, 2]
    (panel,) = doc.panels
    assert panel.status == "done" and panel.panel_status == "stable"
    gi = build_gate_input(book, run_id)
    assert [s.ok for s in gi.samples] == [True, True, True]
    (item,) = gi.items
    assert {t.kind for t in item.targets} >= {"event", "result", "assertion"}
    for s in gi.samples:
        assert s.receipts and set(s.scores) == set(gi.rubric.dimensions)
        assert {p.key for p in s.panel} == {t.key for t in item.targets}
        assert {d.key for d in s.detector} == {t.key for t in item.targets if t.kind != "assertion"}
    assert gate_input_bytes(build_gate_input(book, run_id)) == gate_input_bytes(gi)  # byte-identical rebuild


def test_the_plan_is_sealed_before_the_first_call_and_a_tampered_plan_fails_closed(
    clean: tuple[Path, str], tmp_path: Path
) -> None:
    book = copy(clean[0], tmp_path / "b")
    row = book.db.execute("SELECT plan_json, plan_sha256, started_at FROM replay_runs").fetchone()
    first = book.db.execute("SELECT MIN(started_at) FROM model_calls").fetchone()[0]
    assert row[2] <= first  # the run row (with its plan) exists before the first model call
    tampered = row[0].replace('["A","B","C"]', '["C","B","A"]').replace('["B","C","A"]', '["A","C","B"]')
    book.db.execute("UPDATE replay_runs SET plan_json = ?", (tampered,))
    book.db.commit()
    with pytest.raises(FailedClosed) as exc:
        build_gate_input(book, clean[1])
    assert exc.value.code.startswith("ORDER_PLAN_")


def test_a_resumed_run_repeats_no_finished_sample_and_equals_the_uninterrupted_run(
    clean: tuple[Path, str], tmp_path: Path
) -> None:
    book = copy(clean[0], tmp_path / "b")
    run_id = clean[1]
    before = gate_input_bytes(build_gate_input(book, run_id))
    # an interrupted process: the run is still `running`, one sample and the panel never ended
    book.db.execute("UPDATE replay_runs SET status = 'running', ended_at = NULL")
    book.db.execute("UPDATE replay_samples SET status = 'running' WHERE arm = 'B'")
    book.db.execute("DELETE FROM replay_panels")
    book.db.commit()
    fake = RoleFake()
    out = run(book, resolve_set(book, "one"), fake)
    assert out.run_id == run_id and out.resumed and out.redone == 1 and out.ok
    roles = [r for r, _ in fake.calls]
    assert roles.count("writer") == 1 and roles.count("judge") == 2  # only arm B rewritten, then the one panel
    after = build_gate_input(book, run_id)
    assert [s.arm for s in after.samples] == ["A", "B", "C"] and all(s.ok for s in after.samples)
    assert len(gate_input_bytes(after)) > 0 and before != b""


def test_a_resume_with_another_configuration_is_refused(clean: tuple[Path, str], tmp_path: Path) -> None:
    book = copy(clean[0], tmp_path / "b")
    book.db.execute("UPDATE replay_runs SET status = 'running'")
    book.db.commit()
    with (book.root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[providers.t]\nkind = "scripted"\nscript = "script.yaml"\n')
    text = (
        (book.root / "book.toml")
        .read_text(encoding="utf-8")
        .replace('default = "s:scripted-model-1"', 'default = "s:scripted-model-1"\njudge = "s:scripted-model-2"')
    )
    (book.root / "book.toml").write_text(text, encoding="utf-8")
    book = find_book(book.root)
    fake = RoleFake()
    with pytest.raises(InputError) as exc:
        run(book, resolve_set(book, "one"), fake)
    assert exc.value.code == "REPLAY_CONFIG_CHANGED" and "writer" in exc.value.what
    assert fake.calls == []


def test_an_edited_set_file_is_a_new_set_and_a_run_names_registered_sets_only(tmp_path: Path) -> None:
    book = replay_book(tmp_path / "b")
    first = registered(book)
    path = set_file(book, assertions=1)
    with pytest.raises(InputError) as exc:
        resolve_set(book, str(path))
    assert exc.value.code == "REPLAY_SET_NOT_REGISTERED"
    second = registered(book, assertions=1)
    assert second.sha256 != first.sha256 and len(second.items[0].assertions) == 1
    assert samples_of(book.db, "nope") == {}


def test_the_bill_comes_first_bounds_every_call_and_the_spend_is_what_muse_cost_says(tmp_path: Path, muse) -> None:  # type: ignore[no-untyped-def]
    book = replay_book(tmp_path / "book")
    doc = registered(book)
    bills: list[Any] = []
    out = run(book, doc, RoleFake(), on_plan=bills.append)
    (bill,) = bills
    assert {r.role for r in bill.roles} >= {"writer", "detector", "judge"}
    cost = json.loads(muse("cost", "--run", out.model_run_id, "--book", book.root, "--json").stdout)
    made = {line["key"]: line["calls"] for line in cost["by_role"]}
    planned = {r.role: r.calls for r in bill.roles}
    assert made and all(made[role] <= planned[role] for role in made), (made, planned)
    assert out.spent == {k: cost["total"][k] for k in ("calls", "input_tokens", "output_tokens", "cost")}
