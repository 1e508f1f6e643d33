"""`muse replay register / run --dry-run / status`, `muse gate input / evaluate` on a recorded run, tampering
with what the store holds, and a real (non-scripted) model: its probe receipt and a non-zero CLI exit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from novelmuse.book import find_book
from novelmuse.llm import _provider_cli
from novelmuse.replay import build_gate_input, gate_input_bytes, resolve_set, verify_journal
from novelmuse.replay._builder import gate_input_rebuilder
from novelmuse.replay._guard import store_reader

from ..llm.test_cli_provider import MODEL as CLI_MODEL
from ..llm.test_cli_provider import install_fake
from ..writing.write_helpers import draft
from .replay_helpers import RoleFake, registered, replay_book, run, set_file, with_signer


@pytest.fixture
def recorded(tmp_path: Path, muse: Any) -> tuple[Any, str]:
    """A book with the gate key (in the `muse` fixture's user config) and one clean run of the one-item set."""
    book = with_signer(replay_book(tmp_path / "b"), Path(__import__("os").environ["MUSE_CONFIG"]))
    out = run(book, registered(book), RoleFake())
    return book, out.run_id


def test_register_dry_run_status_and_the_gates_from_the_command_line(recorded: tuple[Any, str], muse: Any) -> None:
    book, run_id = recorded
    r = muse("replay", "register", set_file(book), "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    reg = json.loads(r.stdout)
    assert not reg["newly_registered"] and reg["items"] == 1 and any("insufficient" in n for n in reg["notes"])
    r = muse("replay", "run", "one", "--dry-run", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    dry = json.loads(r.stdout)
    assert dry["status"] == "dry_run" and sorted(dry["items"][0]["order"]) == ["A", "B", "C"]
    calls = book.db.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0]
    r = muse("replay", "status", run_id, "--json", "--book", book.root)
    assert r.exit_code == 0 and json.loads(r.stdout)["ok"]
    r = muse("replay", "report", run_id, "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    deltas = {(d["arm"], d["dimension"], d["scene_type"]): d for d in rep["deltas"]}
    assert {a for a, _, _ in deltas} == {"B", "C"} and all(d["mean_delta"] == 0 for d in deltas.values())
    assert rep["agreement"] and all(a["pairs"] == 2 and a["agreed"] == 2 for a in rep["agreement"])
    assert [b["bucket"] for b in rep["diagnostic_b"]] == ["0", "<=1/3", ">1/3"]
    assert rep["reliability"]["items"] == 1
    assert "mean Δ" in muse("replay", "report", run_id, "--book", book.root).stdout
    r = muse("gate", "input", run_id, "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    gi = json.loads(r.stdout)
    written = (book.root / gi["path"]).read_bytes()
    assert hashlib.sha256(written).hexdigest() == gi["sha256"]
    assert muse("gate", "input", run_id, "--book", book.root).exit_code == 0
    assert (book.root / gi["path"]).read_bytes() == written  # byte-identical rebuild
    r = muse("gate", "evaluate", run_id, "--gate", "B", "--json", "--book", book.root)
    assert r.exit_code == 4, r.stderr  # one clean item: insufficient (not evaluated)
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "insufficient" and doc["receipt_seq"] is None and doc["report"]["mode"] == "offline_replay"
    assert book.db.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0] == calls  # the gates call no model
    assert muse("gate", "evaluate", run_id, "--gate", "X", "--book", book.root).exit_code == 2
    nope = muse("replay", "status", "RRnope", "--book", book.root)
    assert nope.exit_code == 2 and "muse replay runs" in nope.stderr
    listed = json.loads(muse("replay", "runs", "--json", "--book", book.root).stdout)["runs"]
    assert [(r["id"], r["set_name"], r["status"]) for r in listed] == [(run_id, "one", "finished")]
    assert listed[0]["samples"] == listed[0]["planned"] == 3
    assert run_id in muse("replay", "runs", "--book", book.root).stdout
    report = verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)))
    assert report.ok and report.reports == 1
    r = muse("report", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    page = (book.root / ".muse" / "report" / "replay.html").read_text(encoding="utf-8")
    assert run_id in page and "insufficient" in page and "Gate journal" in page


def test_scores_never_change_a_verdict_and_tampering_fails_the_gate_naming_it(
    recorded: tuple[Any, str], muse: Any
) -> None:
    book, run_id = recorded
    before = build_gate_input(book, run_id)
    # every score of the panel report changed (and re-sealed, so it still hashes): no verdict moves
    pid, body = book.db.execute("SELECT id, report_json FROM judge_panels").fetchone()
    from novelmuse.judging import PanelReport

    report = PanelReport.model_validate_json(body)
    rescored = report.model_copy(
        update={"scores": [s.model_copy(update={"score": 6 - s.score}) for s in report.scores]}
    ).seal()
    book.db.execute(
        "UPDATE judge_panels SET report_json = ?, report_sha256 = ? WHERE id = ?",
        (rescored.model_dump_json(), rescored.report_sha256, pid),
    )
    book.db.commit()
    after = build_gate_input(book, run_id)
    assert [(s.detector, s.panel) for s in after.samples] == [(s.detector, s.panel) for s in before.samples]
    assert [s.scores for s in after.samples] != [s.scores for s in before.samples]
    # a report edited in place (not re-sealed): its samples become hash anomalies, the gate fails naming it
    book.db.execute("UPDATE judge_panels SET report_json = ? WHERE id = ?", (body.replace("成立", "不成立"), pid))
    book.db.commit()
    r = muse("gate", "evaluate", run_id, "--gate", "A", "--json", "--book", book.root)
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "failed" and {a["code"] for a in doc["report"]["anomalies"]} == {"PANEL_REPORT_CHANGED"}
    # a manifest file edited: the sample that used it is a hash anomaly naming it
    (m,) = {s.manifest_sha256 for s in before.samples if s.arm == "A"}
    path = book.root / ".muse" / "manifests" / f"{m}.json"
    path.chmod(0o644)
    path.write_bytes(path.read_bytes() + b" ")
    gi = build_gate_input(book, run_id)
    assert [s.anomaly.code for s in gi.samples if s.arm == "A" and s.anomaly] == ["MANIFEST_CHANGED"]
    assert gate_input_bytes(gi) == gate_input_bytes(build_gate_input(book, run_id))


def test_a_real_model_needs_its_probe_and_a_non_zero_cli_exit_fails_only_its_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, muse: Any
) -> None:
    monkeypatch.setattr(_provider_cli, "find_sandbox", lambda platform, path_env: ("none", None))
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", "sk-test-key-for-the-fake")
    fake = install_fake(tmp_path / "bin")
    written = {"output": draft(requests=[])["output"]}
    probe = {"output": {"ok": True, "echo": "muse-writer"}}
    fake.control(responses=[probe, {"mode": "exit", "exit_code": 1}, written])
    cli = (
        f'\n[providers.cli]\nkind = "claude-cli"\npath = "{fake.path}"\n'
        f'sha256 = "{hashlib.sha256(fake.path.read_bytes()).hexdigest()}"\nversion = "2.1.211"\n'
        'api_key_env = "MUSE_TEST_CLI_KEY"\nallow_unsandboxed = true\n'  # as on a machine without a sandbox
    )
    roles = f'default = "s:scripted-model-1"\nwriter = "cli:{CLI_MODEL}"\n'
    book = replay_book(tmp_path / "b", extra_toml="\n[calls]\nmax_attempts = 1\n", roles=roles, providers=cli)
    doc = registered(book)
    r = muse("replay", "run", "one", "--book", book.root)
    assert r.exit_code == 2 and "error[REPLAY_PROBE_MISSING]" in r.stderr and "writer" in r.stderr
    muse("models", "check", "--book", book.root)  # the writer's probe passes (the scripted roles need none)
    out = run(find_book(book.root), resolve_set(book, doc.sha256), RoleFake(), concurrency=1)
    codes = sorted(s.code or "" for s in out.samples)
    assert codes[0] == "" and codes[-1].startswith("MODEL_") and codes.count("") == 2, codes
    assert out.panels[0].code == "PANEL_NOT_RUN"
    assert len(fake.records()) == 4  # the probe, and one writer call per arm: no retry, no other model
