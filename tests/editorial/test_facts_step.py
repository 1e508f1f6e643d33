"""The `facts` step of `muse review`: the fact card (事实卡) of a finalised chapter, bound to the file on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import find_book
from novelmuse.memory import replay
from novelmuse.text import sha256_hex, split_paragraphs

from .helpers import (
    as_json,
    body_of,
    db_rows,
    editor_output,
    issue,
    make_book,
    paragraph_of,
    receipts_by_role,
    requests_of,
    sanguo_chapters,
    unique_sentences,
)

CLEAN = {"output": {"issues": [], "passed": True}}


def card(events: list[str] | None = None, plants: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """A fact card: one event per quote, one plant per (id, quote)."""
    return {
        "events": [{"summary": "事件", "actors": [], "quote": q} for q in events or []],
        "foreshadows": [
            {"op": "plant", "id": fid, "description": f"伏笔{fid}", "payoff_chapter": None, "quote": q}
            for fid, q in plants or []
        ],
        "relations": [],
        "states": [],
    }


def facts_step(ch: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in ch["steps"] if s["step"] == "facts"]
    return step


def test_unchanged_chapter_gets_its_fact_card_bound_to_the_file_and_receipt(tmp_path: Path, muse) -> None:
    bodies = [b for _, b in sanguo_chapters(2)]
    q1 = unique_sentences(bodies[0], 2, skip=3)
    script = {
        "reviewer": [{**CLEAN, "match": f"【第{n}回 ·"} for n in (1, 2)],
        "editor": [{"output": editor_output(bodies[n - 1]), "match": f"【第{n}回 ·"} for n in (1, 2)],
        "extractor": [
            {"output": card([q1[0]], [("F-tianshu", q1[1])]), "match": "第1回 · 事实提取输入"},
            {"output": card([unique_sentences(bodies[1], 1)[0]]), "match": "第2回 · 事实提取输入"},
        ],
    }
    root = make_book(tmp_path / "b", chapters=2, script=script)
    (root / "cards").mkdir()  # story memory is available (empty card set): fact cards feed it
    r = muse("review", "--range", "1-2", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    ch = doc["chapters"][0]
    assert ch["status"] == "finalized" and ch["revision"] is None
    step = facts_step(ch)
    assert step["status"] == "passed" and step["reason"] is None and step["code"] is None
    assert ch["steps"][-1] == step  # the last step: it runs on the recorded, finalised text
    file_sha = sha256_hex((root / "chapters" / "0001.md").read_bytes())
    facts = ch["facts"]
    assert facts["chapter_sha256"] == file_sha == ch["result_sha256"] == ch["chapter_sha256"]
    assert facts["extracted"] is True and facts["run_id"] == doc["run_id"]
    assert sorted(facts["accepted"]) == ["events[0]", "foreshadows[0]"] and facts["rejected"] == []
    assert facts["input_tokens"] > 0 and ch["usage"]["by_role"]["extractor"]["calls"] == 1
    # the stored fact card: bound to the file's sha256 and to the extractor's receipt of this run
    rows = db_rows(root, "SELECT id, chapter, chapter_sha256, receipt_id, run_id FROM fact_cards ORDER BY id")
    assert rows[0] == (facts["fact_card_id"], 1, file_sha, facts["receipt_id"], doc["run_id"])
    assert db_rows(root, "SELECT role, outcome FROM receipts WHERE id = ?", facts["receipt_id"]) == [
        ("extractor", "ok")
    ]
    # the database holds the step like every other one
    steps = db_rows(root, "SELECT step, status, reason, code FROM review_steps WHERE record_id = ?", ch["record_id"])
    assert steps[-1] == ("facts", "passed", None, None)
    stored = as_json(db_rows(root, "SELECT report_json FROM review_records WHERE id = ?", ch["record_id"])[0][0])
    assert stored["facts"] == facts and stored["steps"][-1] == step
    # memory now holds the chapter's facts, and chapter 2 was reviewed with them (memory reloaded in the run)
    book = find_book(root)
    assert [a.id for a in replay(book).active_foreshadows(1).items] == ["F-tianshu"]
    (reviewer_2,) = [m for m in requests_of(root, "reviewer") if "【第2回 ·" in m[1]["content"]]
    assert "F-tianshu" in reviewer_2[1]["content"]
    # a rerun resumes both chapters and extracts nothing again (their fact cards are current)
    r = muse("review", "--range", "1-2", "--book", root, "--json")
    again = as_json(r.stdout)
    assert [c["resumed"] for c in again["chapters"]] == [True, True]
    assert [facts_step(c)["status"] for c in again["chapters"]] == ["passed", "passed"]
    assert receipts_by_role(root)["extractor"] == 2 and again["summary"]["input_tokens"] == 0
    # the terminal shows the step and the card
    human = muse("review", "1", "--book", root).stdout
    assert any(ln.startswith("facts") and "passed" in ln for ln in human.splitlines())
    assert f"fact card {facts['fact_card_id']}" in human


def test_rejected_items_fail_the_step_and_are_shown(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    qs = unique_sentences(body, 4, skip=3)
    root = make_book(
        tmp_path / "b",
        script={
            "reviewer": [CLEAN],
            "editor": [{"output": editor_output(body)}],
            "extractor": [{"output": card(plants=[(f"F{i}", q) for i, q in enumerate(qs)])}],
        },
    )
    r = muse("review", "1", "--book", root, "--json")
    assert r.exit_code == 1, r.stderr  # a finding, like `muse facts show` with a rejected item
    doc = as_json(r.stdout)
    ch = doc["chapters"][0]
    assert ch["status"] == "finalized"
    step = facts_step(ch)
    assert step["status"] == "failed" and "FORESHADOW_PLANT_CAP" in step["detail"]
    assert [(x["code"], x["item"]) for x in ch["facts"]["rejected"]] == [("FORESHADOW_PLANT_CAP", "foreshadows[3]")]
    assert len(ch["facts"]["accepted"]) == 3 and doc["summary"]["facts_failed"] == 1 and doc["ok"] is True
    human = muse("review", "1", "--book", root)
    assert human.exit_code == 1 and "REJECTED [FORESHADOW_PLANT_CAP] foreshadows[3]" in human.stdout


def test_no_extractor_configured_is_skipped_never_passed(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    root = make_book(
        tmp_path / "b",
        script={"reviewer": [CLEAN], "editor": [{"output": editor_output(body)}]},
        roles=False,
        extra_toml='[roles]\nreviewer = "s:scripted-model-1"\neditor = "s:scripted-model-1"\n',
    )
    r = muse("review", "1", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized"
    step = facts_step(ch)
    assert (step["status"], step["reason"], step["code"]) == ("skipped", "no model configured", None)
    assert ch["facts"] is None and "extractor" not in receipts_by_role(root)
    assert db_rows(root, "SELECT count(*) FROM fact_cards") == [(0,)]
    assert ("facts", "skipped", "no model configured") in db_rows(root, "SELECT step, status, reason FROM review_steps")
    human = muse("review", "1", "--book", root).stdout
    (line,) = [ln for ln in human.splitlines() if ln.startswith("facts")]
    assert "skipped(no model configured)" in line and "passed" not in line


def test_revision_is_extracted_only_once_applied_and_bound_to_the_new_file(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    new_para = split_paragraphs(body)[target].text.strip() + "（此句为修订所加）"
    script = {
        "reviewer": [{"output": {"issues": [issue(quote, "major")], "passed": False}}, CLEAN],
        "writer": [{"output": {"paragraphs": [{"index": target, "text": new_para}]}}],
        "editor": [{"output": editor_output(body)}],
        # the quote exists only in the revised text: the card can only bind to the applied revision
        "extractor": [{"output": card(["此句为修订所加"])}],
    }
    root = make_book(tmp_path / "b", script=script)
    original = (root / "chapters" / "0001.md").read_bytes()
    r = muse("review", "1", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized" and ch["revision"]["applied"] is False
    step = facts_step(ch)
    assert (step["status"], step["reason"]) == ("skipped", "revision not applied")
    assert "--apply" in step["detail"] and "muse sync" in step["detail"]
    assert ch["facts"] is None and "extractor" not in receipts_by_role(root)
    assert (root / "chapters" / "0001.md").read_bytes() == original
    # with --apply (a fresh session replays the script from the top): extracted from the new file
    r = muse("review", "1", "--book", root, "--json", "--apply", "--force")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["revision"]["applied"] is True and facts_step(ch)["status"] == "passed"
    new_sha = sha256_hex((root / "chapters" / "0001.md").read_bytes())
    assert new_sha != sha256_hex(original)
    assert ch["facts"]["chapter_sha256"] == new_sha == ch["revision"]["sha256"] == ch["result_sha256"]
    assert db_rows(root, "SELECT chapter_sha256 FROM fact_cards") == [(new_sha,)]
    book = find_book(root)
    (fc,) = replay(book).validations.values()
    assert fc.rejected == [] and replay(book).facts_status[1] == "current"
    # resuming the applied review finds the current card and extracts nothing
    r = muse("review", "1", "--book", root, "--json")
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["resumed"] is True and facts_step(ch)["status"] == "passed"
    assert receipts_by_role(root)["extractor"] == 1


def test_extraction_failing_closed_is_an_error_and_the_review_stays_recorded(tmp_path: Path, muse) -> None:
    bodies = [b for _, b in sanguo_chapters(2)]
    bad = card(["这句话根本不在正文里出现过"])
    script: dict[str, Any] = {
        "reviewer": [{**CLEAN, "match": f"【第{n}回 ·"} for n in (1, 2)],
        "editor": [{"output": editor_output(bodies[n - 1]), "match": f"【第{n}回 ·"} for n in (1, 2)],
        "extractor": [{"output": bad}] * 3 + [{"output": card()}] * 2,
    }
    root = make_book(tmp_path / "b", chapters=2, script=script)
    r = muse("review", "--range", "1-2", "--book", root, "--json")
    assert r.exit_code == 3  # a step failed closed
    doc = as_json(r.stdout)
    assert doc["ok"] is False and doc["summary"]["facts_error"] == 1 and doc["summary"]["not_run"] == [2]
    ch = doc["chapters"][0]
    assert ch["status"] == "finalized" and ch["error_code"] is None  # the review itself finalised
    step = facts_step(ch)
    assert (step["status"], step["code"], step["reason"]) == ("error", "CONTRACT_QUOTE_NOT_FOUND", None)
    assert ch["facts"] is None and ch["usage"]["by_role"]["extractor"]["attempts"] == 3
    assert receipts_by_role(root) == {"reviewer": 1, "editor": 1, "extractor": 3}
    assert "error[CONTRACT_QUOTE_NOT_FOUND]: chapter 1: the facts step failed closed" in r.stderr
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("error[")]  # one, naming the role and the fix
    assert "role extractor (s:scripted-model-1)" in line and "rerun `muse review 1` or `muse sync`" in line
    assert "role extractor" in step["detail"] and step["detail"].startswith("no fact card stored: ")
    # the review record is intact, with its steps and the error
    assert db_rows(root, "SELECT chapter, status FROM review_records") == [(1, "finalized")]
    steps = db_rows(root, "SELECT step, status, code FROM review_steps ORDER BY seq")
    assert steps[:3] == [
        ("rules", "passed", None),
        ("consistency_review", "passed", None),
        ("editor_review", "passed", None),
    ]
    assert steps[3] == ("facts", "error", "CONTRACT_QUOTE_NOT_FOUND")
    assert db_rows(root, "SELECT count(*) FROM fact_cards") == [(0,)]
    # a rerun resumes the review (no reviewer or editor call) and extracts the fact card now
    (root / "script.yaml").write_text(
        yaml.safe_dump({**script, "extractor": [{"output": card()}] * 2}, allow_unicode=True), encoding="utf-8"
    )
    r = muse("review", "--range", "1-2", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert [(c["resumed"], facts_step(c)["status"]) for c in doc["chapters"]] == [(True, "passed"), (False, "passed")]
    assert receipts_by_role(root) == {"reviewer": 2, "editor": 2, "extractor": 5}
    assert doc["summary"]["input_tokens"] > doc["chapters"][1]["usage"]["input_tokens"]  # ch. 1's extraction counts
    record_1 = doc["chapters"][0]["record_id"]
    assert db_rows(root, "SELECT status, code FROM review_steps WHERE record_id = ? AND step = 'facts'", record_1) == [
        ("passed", None)
    ]
