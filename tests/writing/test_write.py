"""`muse write 11` on the sample book with the scripted provider: evidence rounds and their bounds, the detector
gate, bounded repair, held_for_author, fail-closed reports, skips, --apply, --dry-run and `write show`."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from novelmuse.errors import exit_code
from novelmuse.processes import pid_alive
from novelmuse.text import sha256_hex

from ..editorial.helpers import editor_output
from ..reliability.harness import muse_killed
from .write_helpers import (
    IDS_11,
    as_json,
    chapter_text,
    detector,
    draft,
    facts,
    judges,
    sample_book,
    writer_calls,
)


def _request(target: str, kind: str = "fact") -> dict[str, str]:
    return {"kind": kind, "target": target, "reason": "核对"}


def test_a_draft_with_an_evidence_round_passes_and_is_applied(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [draft(requests=[_request("关羽", "style")]), draft(requests=[])],
        "detector": [detector()],
        "extractor": [facts()],
        "judge": judges(),
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--apply", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    assert "write chapter 11 (arm C): at most" in r.stderr and "accept: at most 3 call(s)" in r.stderr  # bills first
    doc = as_json(r.stdout)
    assert doc["status"] == "passed" and doc["ok"]
    assert [s["step"] for s in doc["steps"]] == ["context", "write", "evidence_1", "write", "detector", "accept"]
    checks = {c["step"]: c["status"] for c in doc["accept"]["preflight"]}
    assert checks == dict.fromkeys(("file", "manifest", "detector", "rules", "quality_gate"), "passed")
    assert doc["accept"]["decision"]["mode"] == "apply" and doc["accept"]["replaced_sha256"] is None
    m0, m1 = doc["manifests"]
    assert (m0["round"], m1["round"], m1["previous_sha256"]) == (0, 1, m0["sha256"])
    for m in (m0, m1):
        assert sha256_hex((book.root / m["path"]).read_bytes()) == m["sha256"]
    (served,) = doc["evidence"]
    assert served["status"] == "served" and served["card_id"] == "guan-yu" and m1["evidence_used"] == served["chars"]
    d0, d1 = doc["drafts"]
    assert d0["manifest_sha256"] == m0["sha256"] and d1["manifest_sha256"] == m1["sha256"]
    for d in (d0, d1):
        assert sha256_hex((book.root / d["path"]).read_bytes()) == d["sha256"]
    (rep,) = doc["reports"]
    assert rep["draft_id"] == d1["id"] and rep["report"]["candidate_sha256"] == d1["text_sha256"]
    figures = rep["report"]["figures"]
    assert figures["coverage"] == 1.0 and figures["constraints"] == len(IDS_11) and figures["warnings"] >= 1
    ch = book.read_chapter(11)
    assert ch.heading == "第十一回\u3000刘皇叔北海救孔融　吕温侯濮阳破曹操" and ch.body.strip() == chapter_text(11)
    assert doc["applied"] == "chapters/0011.md"
    shown = as_json(muse("write", "show", "11", "--json", "--book", book.root).stdout)
    (row,) = shown["runs"]
    assert row["status"] == "passed" and row["applied_at"] and row["document"]["write_id"] == doc["write_id"]


def test_evidence_rounds_are_capped_at_three_and_the_budget_refuses_whole_requests(tmp_path: Path, muse: Any) -> None:
    many = [_request(t, k) for t in ("关羽", "刘备", "张飞", "曹操") for k in ("fact", "style")]
    script = {
        "writer": [
            draft(requests=many[:3]),
            draft(requests=many[3:6]),
            draft(requests=many[6:]),
            draft(requests=[_request("吕布")]),  # a 4th request: the final schema has no such field → refused
            draft(),
        ],
        "detector": [detector()],
        "extractor": [facts()],
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert [m["round"] for m in doc["manifests"]] == [0, 1, 2, 3]
    for prev, nxt in zip(doc["manifests"], doc["manifests"][1:], strict=False):
        assert nxt["previous_sha256"] == prev["sha256"]
    assert {e["round"] for e in doc["evidence"]} == {1, 2, 3} and "吕布" not in {e["target"] for e in doc["evidence"]}
    refused = [e for e in doc["evidence"] if e["status"] == "refused"]
    assert refused and all(e["chars"] == 0 and e["spans"] == [] for e in refused)
    served = sum(e["chars"] for e in doc["evidence"] if e["status"] == "served")
    assert doc["manifests"][-1]["evidence_used"] == served <= doc["manifests"][-1]["evidence_budget"] == 1800
    # writer calls: three with the request field, the fourth without it (its first answer, which still asked for
    # evidence, was refused by the schema and corrected within the call)
    calls = writer_calls(book)
    assert [c[0] for c in calls] == ["ChapterDraft"] * 3 + ["FinalChapterDraft"]
    attempts = book.db.execute(
        "SELECT attempts FROM model_calls WHERE role = 'writer' ORDER BY id DESC LIMIT 1"
    ).fetchone()[0]
    assert attempts == 2
    assert len(doc["drafts"]) == 4 and doc["drafts"][-1]["evidence_requests"] == []


def test_a_draft_the_detector_keeps_blocking_is_held_after_exactly_two_repairs(tmp_path: Path, muse: Any) -> None:
    repair = {**draft(), "match": "[R4]"}  # a repair is served only to a request naming the detector's item
    script = {
        "writer": [draft(requests=[]), repair, dict(repair)],
        "detector": [detector(fail=("R4",))] * 4,
        "extractor": [facts()] * 4,
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--apply", "--json", "--book", book.root)
    assert r.exit_code == 1, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "held_for_author" and not doc["ok"] and doc["applied"] is None
    assert [c[1] for c in writer_calls(book)] == ["ok", "ok", "ok"]  # the draft and 2 repairs, no third repair
    assert [d["purpose"] for d in doc["drafts"]] == ["draft", "repair", "repair"]
    assert len(doc["reports"]) == 3 and all(x["report"]["figures"]["blocking"] for x in doc["reports"])
    assert not (book.chapters_dir / "0011.md").exists()
    rows = book.db.execute("SELECT COUNT(*) FROM write_drafts").fetchone()[0]
    assert rows == 3 and book.db.execute("SELECT COUNT(*) FROM detector_reports").fetchone()[0] == 3
    assert "held_for_author" in r.stderr and "muse write show 11" in r.stderr


def test_a_missing_result_blocks_and_the_repair_that_writes_it_passes(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [draft(requests=[]), {**draft(), "match": "[R4]"}],
        "detector": [detector(fail=("R4",)), detector()],
        "extractor": [facts(), facts()],
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    first, second = (x["report"] for x in doc["reports"])
    assert [i["id"] for i in first["items"] if i["verdict"] != "pass" and i["severity"] == "high"] == ["R4"]
    assert second["figures"]["blocking"] is False
    # the fatigue words of the sample's rules (却说, 大喜) only warn: the passing draft still has them
    assert {i["id"] for i in second["items"] if i["check"] == "fatigue"} >= {"fatigue:却说"}


def test_a_report_missing_one_constraint_id_fails_closed(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [draft(requests=[])],
        "detector": [detector(ids=IDS_11[:-1])] * 3,
        "extractor": [facts()],
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 3, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "error" and doc["error_code"] == "DETECTOR_REPORT_INCOMPLETE"
    assert (doc["steps"][-1]["step"], doc["steps"][-1]["code"]) == ("detector", "DETECTOR_REPORT_INCOMPLETE")
    assert len(doc["drafts"]) == 1 and doc["reports"] == []  # the draft is kept; no report was made of it
    assert "error[DETECTOR_REPORT_INCOMPLETE]" in r.stderr


def test_a_report_for_another_candidate_is_refused(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [draft(requests=[])],
        "detector": [detector(sha=sha256_hex("另一章"))] * 3,
        "extractor": [facts()],
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 3 and as_json(r.stdout)["error_code"] == "DETECTOR_REPORT_MISMATCH"


def test_a_claimed_coverage_of_one_with_a_failing_item_is_recomputed(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [draft(requests=[])],
        "detector": [detector(fail=("E1",), coverage=1.0)],
        "extractor": [facts()],
    }
    book = sample_book(tmp_path / "b", script, writing="repair_rounds = 0\n")
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 1
    (rep,) = as_json(r.stdout)["reports"]
    assert rep["report"]["claimed"]["coverage"] == 1.0
    n = len(IDS_11)
    assert rep["report"]["figures"]["coverage"] == pytest.approx((n - 1) / n)
    assert rep["report"]["figures"]["high_severity"] == 1


def test_no_writer_model_is_skipped_never_passed(tmp_path: Path, muse: Any) -> None:
    script = {"detector": [detector()], "extractor": [facts()]}
    roles = 'detector = "s:scripted-model-1"\nextractor = "s:scripted-model-1"\n'
    book = sample_book(tmp_path / "b", script, roles=roles)
    r = muse("write", "11", "--arm", "C", "--apply", "--json", "--book", book.root)
    doc = as_json(r.stdout)
    assert doc["status"] == "skipped" and not doc["ok"] and doc["drafts"] == [] and doc["applied"] is None
    assert [s["status"] for s in doc["steps"]] == ["passed", "skipped"] and doc["steps"][1]["reason"]
    assert r.exit_code == exit_code("not_evaluated")
    assert not (book.chapters_dir / "0011.md").exists()


def test_no_writer_model_exits_4(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", {"detector": []}, roles='detector = "s:scripted-model-1"\n')
    assert muse("write", "11", "--arm", "C", "--book", book.root).exit_code == 4


def test_no_detector_model_leaves_the_draft_unchecked_and_unrepaired(tmp_path: Path, muse: Any) -> None:
    script = {"writer": [draft(requests=[])], "extractor": [facts()]}
    roles = 'writer = "s:scripted-model-1"\nextractor = "s:scripted-model-1"\n'
    book = sample_book(tmp_path / "b", script, roles=roles)
    r = muse("write", "11", "--arm", "C", "--apply", "--json", "--book", book.root)
    doc = as_json(r.stdout)
    assert doc["status"] == "skipped" and "detector" in doc["reason"] and len(doc["drafts"]) == 1
    (rep,) = doc["reports"]
    assert rep["report"]["semantic"]["status"] == "skipped" and rep["report"]["figures"]["coverage"] == 0.0
    assert doc["applied"] is None and r.exit_code == exit_code("not_evaluated")


def test_apply_refuses_a_chapter_file_written_while_the_run_was_going_on(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [{**draft(requests=[]), "delay_s": 1.0}],
        "detector": [detector()],
        "extractor": [facts()],
        "judge": judges(),
    }
    book = sample_book(tmp_path / "b", script)
    theirs = book.chapters_dir / "0011.md"

    def author() -> None:  # the author saves chapter 11 once the run has begun (while the writer answers)
        conn = sqlite3.connect(book.db_path)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if conn.execute("SELECT 1 FROM write_runs WHERE status = 'running'").fetchone():
                    break
            except sqlite3.OperationalError:
                pass  # the table does not exist yet
            time.sleep(0.02)
        conn.close()
        theirs.write_text("# 第十一回\n作者自己动笔写了。\n", encoding="utf-8")

    t = threading.Thread(target=author)
    t.start()
    r = muse("write", "11", "--arm", "C", "--apply", "--book", book.root)
    t.join()
    assert r.exit_code == 2 and "error[FILE_CHANGED_ON_DISK]" in r.stderr
    assert theirs.read_text(encoding="utf-8") == "# 第十一回\n作者自己动笔写了。\n"
    (row,) = as_json(muse("write", "show", "11", "--json", "--book", book.root).stdout)["runs"]
    assert row["status"] == "passed" and row["applied_at"] is None and len(row["document"]["drafts"]) == 1


def test_usage_errors(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", None)
    for args in (("11", "--review"), ("11", "--arm", "B"), ("eleven",), ("show",), ("11", "--dry-run", "--apply")):
        r = muse("write", *args, "--book", book.root)
        assert r.exit_code == 2 and r.stderr.startswith("error[USAGE"), (args, r.stderr)


def test_dry_run_prints_the_prompt_and_calls_no_model(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", {"writer": []})
    r = muse("write", "11", "--arm", "C", "--dry-run", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "dry_run" and doc["run_id"] is None and len(doc["prompts"]) == 2
    assert book.db.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0] == 0
    human = muse("write", "11", "--arm", "C", "--dry-run", "--book", book.root)
    assert "E4" in human.stdout and "关羽" in human.stdout and "--- user ---" in human.stdout


def test_review_hands_the_applied_chapter_to_the_editorial_loop(tmp_path: Path, muse: Any) -> None:
    text = chapter_text(11)
    script = {
        "writer": [draft(requests=[])],
        "detector": [detector()],
        "extractor": [facts(), facts()],  # the candidate's, then the reviewed chapter's fact card
        "reviewer": [{"output": {"issues": [], "passed": True}}],
        "editor": [{"output": editor_output(text)}],
        "judge": judges(),
    }
    book = sample_book(tmp_path / "b", script)
    r = muse("write", "11", "--arm", "C", "--apply", "--review", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "passed" and doc["applied"] == "chapters/0011.md"
    (reviewed,) = doc["review"]["chapters"]
    assert reviewed["chapter"] == 11 and reviewed["status"] == "finalized"
    assert reviewed["chapter_sha256"] == sha256_hex((book.chapters_dir / "0011.md").read_bytes())
    assert doc["review"]["run_id"] == doc["run_id"]  # one session, one run, one budget


def test_a_killed_write_is_closed_as_interrupted_by_the_next(tmp_path: Path, muse: Any) -> None:
    """kill -9 of `muse write` while its writer's request is on the way (a real subprocess): `write show` then
    says interrupted, not running, and the next write closes the row (issue 18 item 1)."""
    script = {"writer": [draft(requests=[]), draft(requests=[])], "detector": [detector()], "extractor": [facts()]}
    book = sample_book(tmp_path / "b", script)
    killed = muse_killed(["write", "11", "--arm", "C", "--book", str(book.root)], 0, "send")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    ((status, ended, pid),) = book.db.execute("SELECT status, ended_at, pid FROM write_runs").fetchall()
    assert (status, ended) == ("running", None) and not pid_alive(pid)  # what the killed process left
    (shown,) = as_json(muse("write", "show", "11", "--json", "--book", book.root).stdout)["runs"]
    assert shown["status"] == "interrupted"
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    assert "resuming the interrupted write" in r.stderr
    rows = book.db.execute("SELECT status, ended_at IS NOT NULL, pid FROM write_runs ORDER BY id").fetchall()
    assert [tuple(row) for row in rows] == [("passed", 1, os.getpid())]  # the interrupted run, resumed
