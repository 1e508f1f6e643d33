"""`muse review --range`: in order, resumable, memory injected, the author's edits never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from novelmuse.book import find_book
from novelmuse.editorial import memory_context
from novelmuse.errors import InputError

from ..conftest import muse_subprocess
from .helpers import (
    EMPTY_FACTS,
    as_json,
    body_of,
    db_rows,
    editor_output,
    make_book,
    receipts_by_role,
    sanguo_chapters,
)

CLEAN = {"output": {"issues": [], "passed": True}}


def _script_for(chapters: list[int]) -> dict[str, object]:
    bodies = sanguo_chapters(max(chapters))
    return {
        "reviewer": [{**CLEAN, "match": f"【第{n}回 ·"} for n in chapters],
        "editor": [{"output": editor_output(bodies[n - 1][1]), "match": f"【第{n}回 ·"} for n in chapters],
    }


def test_range_runs_in_order_and_resumes(tmp_path: Path, muse) -> None:
    book = make_book(tmp_path / "b", chapters=3, script=_script_for([1, 2, 3, 2]))
    r = muse("review", "--range", "1-3", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert [c["chapter"] for c in doc["chapters"]] == [1, 2, 3]
    assert doc["summary"]["reviewed"] == 3 and doc["summary"]["resumed"] == 0 and doc["ok"] is True
    assert receipts_by_role(book) == {"reviewer": 3, "editor": 3, "extractor": 3}
    # a rerun changes nothing and spends nothing (the fact cards are current: not extracted again)
    r = muse("review", "--range", "1-3", "--book", book, "--json")
    doc = as_json(r.stdout)
    assert [c["resumed"] for c in doc["chapters"]] == [True, True, True]
    assert doc["summary"]["reviewed"] == 0 and doc["summary"]["resumed"] == 3
    assert doc["summary"]["input_tokens"] == 0
    assert receipts_by_role(book) == {"reviewer": 3, "editor": 3, "extractor": 3}
    # the human output says so
    r = muse("review", "--range", "1-3", "--book", book)
    assert r.stdout.count("resumed: already reviewed") == 3
    # edit chapter 2: only chapter 2 is reviewed again (chapter 3's previous-ending input changed too)
    path = book / "chapters" / "0002.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n作者新加的一段。\n", encoding="utf-8")
    r = muse("review", "--range", "1-2", "--book", book, "--json")
    doc = as_json(r.stdout)
    assert [(c["chapter"], c["resumed"], c["status"]) for c in doc["chapters"]] == [
        (1, True, "finalized"),
        (2, False, "finalized"),
    ]
    assert receipts_by_role(book) == {"reviewer": 4, "editor": 4, "extractor": 4}


def test_range_stops_at_a_failed_closed_chapter_and_resumes_there(tmp_path: Path, muse) -> None:
    script = _script_for([1, 3])
    script["reviewer"].insert(1, {"error": {"code": "MODEL_AUTH", "status": 401}, "match": "【第2回 ·"})  # type: ignore[attr-defined]
    book = make_book(tmp_path / "b", chapters=3, script=script)
    r = muse("review", "--range", "1-3", "--book", book, "--json")
    assert r.exit_code == 3
    doc = as_json(r.stdout)
    assert [c["status"] for c in doc["chapters"]] == ["finalized", "error"]
    assert doc["summary"]["not_run"] == [3] and doc["ok"] is False
    assert doc["chapters"][1]["error_code"] == "MODEL_AUTH"
    steps = {s["step"]: s for s in doc["chapters"][1]["steps"]}
    assert steps["consistency_review"]["status"] == "error"
    assert steps["editor_review"] == {
        "step": "editor_review",
        "status": "skipped",
        "reason": "an earlier step failed closed",
        "code": None,
        "detail": "",
    }
    assert "error[MODEL_AUTH]" in r.stderr
    # one line that says which step, role and model failed, and the model layer's fix for that code
    (line,) = [x for x in r.stderr.strip().splitlines() if x.startswith("error[")]
    assert line.startswith("error[MODEL_AUTH]: chapter 2 consistency_review: the reviewer's answer failed closed")
    assert "role reviewer (s:scripted-model-1)" in line and "— check the API key" in line


def test_apply_never_overwrites_a_changed_file(tmp_path: Path) -> None:
    book = find_book(make_book(tmp_path / "b"))
    chapter = book.read_chapter(1)
    chapter.path.write_text(chapter.path.read_text(encoding="utf-8") + "作者刚加的一句。\n", encoding="utf-8")
    edited = chapter.path.read_bytes()
    with pytest.raises(InputError) as exc:  # what the review read is not what the file holds now
        book.replace_file(chapter.path, b"# x\nnew", expect_sha256=chapter.sha256, kind="chapter", command="t")
    assert exc.value.code == "FILE_CHANGED_ON_DISK"
    assert chapter.path.read_bytes() == edited


def test_memory_context_reads_cards_foreshadows_and_previous_ending(tmp_path: Path) -> None:
    root = make_book(tmp_path / "b", chapters=3)
    (root / "cards").mkdir()
    (root / "cards" / "guan-yu.yaml").write_text(
        "id: guan-yu\ntype: character\nname: 关羽\naliases: [云长]\nattributes:\n  status:\n"
        "    - {value: alive, from: 1}\n",
        encoding="utf-8",
    )
    (root / "outlines").mkdir()
    (root / "outlines" / "0001.yaml").write_text(
        "chapter: 1\nforeshadows:\n  - {op: plant, id: fs-seal, description: 玉玺下落, payoff_chapter: 6}\n",
        encoding="utf-8",
    )
    book = find_book(root)
    ctx = memory_context(book, 3)
    assert ctx.available
    assert any(line.startswith("关羽") and "status=alive" in line for line in ctx.card_states)
    assert any("fs-seal" in line and "玉玺下落" in line for line in ctx.foreshadows)
    ending = body_of(root, 2).rstrip().rsplit("\n", 1)[-1].strip()
    assert ctx.previous_ending.endswith(ending[-50:])
    # a book without cards or outlines says so explicitly
    bare = find_book(make_book(tmp_path / "c", chapters=2))
    ctx = memory_context(bare, 2)
    assert not ctx.available and "no cards/ or outlines/" in ctx.note and ctx.previous_ending
    assert memory_context(bare, 1).previous_ending == ""


def test_usage_errors(tmp_path: Path, muse) -> None:
    book = make_book(tmp_path / "b")
    assert muse("review", "--book", book).exit_code == 2
    r = muse("review", "1", "--range", "1-2", "--book", book)
    assert r.exit_code == 2 and "USAGE_REVIEW" in r.stderr
    r = muse("review", "9", "--book", book, "--json")
    assert r.exit_code == 2 and as_json(r.stdout)["error"]["code"] == "CHAPTER_NOT_FOUND"


def test_empty_chapter_skips_model_steps_with_a_reason(tmp_path: Path, muse) -> None:
    book = make_book(tmp_path / "b", script={"reviewer": [CLEAN]})
    (book / "chapters" / "0001.md").write_text("# 空章\n\n", encoding="utf-8")
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 4, r.stderr  # nothing to review is not a review: not evaluated
    ch = as_json(r.stdout)["chapters"][0]
    assert [(s["step"], s["status"], s["reason"]) for s in ch["steps"]] == [
        ("rules", "passed", None),
        ("consistency_review", "skipped", "the chapter has no text"),
        ("editor_review", "skipped", "the chapter has no text"),
        ("facts", "skipped", "the chapter was not finalized"),
    ]
    assert ch["status"] == "not_reviewed" and receipts_by_role(book) == {}


def test_budget_refusal_fails_closed_before_any_request(tmp_path: Path, muse) -> None:
    book = make_book(
        tmp_path / "b", chapters=2, script={"reviewer": [CLEAN, CLEAN]}, extra_toml="[budget]\nmax_tokens = 100\n"
    )
    r = muse("review", "--range", "1-2", "--book", book, "--json")
    assert r.exit_code == 3
    error = as_json(r.stdout)["error"]  # the preflight refuses the run before its first request, naming both
    assert error["code"] == "BUDGET_EXCEEDED" and "第1回" in error["what"] and "第2回 (reviewer)" in error["what"]
    assert not (book / ".muse" / "revisions").exists()
    db = book / ".muse" / "muse.db"
    assert not db.exists() or db_rows(book, "SELECT COUNT(*) FROM receipts") == [(0,)]


def test_no_editor_leaves_the_editor_out_and_is_its_own_resume_key(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    book = make_book(tmp_path / "b", script={"reviewer": [CLEAN, CLEAN], "editor": [{"output": editor_output(body)}]})
    r = muse("review", "1", "--book", book, "--json", "--no-editor")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized"
    assert ch["steps"][-2] == {
        "step": "editor_review",
        "status": "skipped",
        "reason": "not requested (--no-editor)",
        "code": None,
        "detail": "",
    }
    assert ch["steps"][-1]["step"] == "facts" and ch["steps"][-1]["status"] == "passed"
    assert receipts_by_role(book) == {"reviewer": 1, "extractor": 1}
    # with the editor, it is a different configuration: reviewed again, not resumed
    r = muse("review", "1", "--book", book, "--json")
    doc = as_json(r.stdout)
    assert doc["chapters"][0]["resumed"] is False and doc["chapters"][0]["status"] == "finalized"
    # the file is unchanged, so its fact card is still current: not extracted again
    assert receipts_by_role(book) == {"reviewer": 2, "editor": 1, "extractor": 1}
    assert doc["chapters"][0]["facts"]["extracted"] is False
    assert doc["summary"]["disagreements"] == {"reviewer_pass_flag": 0, "editor_verdict": 0}


def test_interrupted_range_keeps_finished_chapters_and_resumes(tmp_path: Path, muse) -> None:
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    script = _script_for([1, 2, 3, 2])
    script["reviewer"][1]["delay_s"] = 60  # type: ignore[index]  # chapter 2 hangs until interrupted
    book = make_book(tmp_path / "b", chapters=3, script=script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    env["MUSE_CONFIG"] = "/nonexistent/user-config.toml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "novelmuse", "review", "--range", "1-3", "--book", str(book), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background jobs ignore SIGINT and children inherit that: restore the default for the child
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    db = book / ".muse" / "muse.db"
    deadline = time.monotonic() + 60
    recorded = 0
    while time.monotonic() < deadline and not recorded:
        time.sleep(0.2)
        if db.exists():
            try:
                conn = sqlite3.connect(db, timeout=1)
                try:
                    recorded = conn.execute("SELECT COUNT(*) FROM review_records").fetchone()[0]
                finally:
                    conn.close()
            except sqlite3.OperationalError:
                recorded = 0
    assert recorded == 1, "chapter 1 was never recorded"
    time.sleep(0.5)  # chapter 2's reviewer request is now pending
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "error[INTERRUPTED]" in err, err
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT status FROM runs WHERE kind = 'review'").fetchall() == [("interrupted",)]
    finally:
        conn.close()
    # the rerun (a fresh script cursor: without the hanging entry) resumes chapter 1 and reviews 2 and 3
    script["reviewer"][1].pop("delay_s")  # type: ignore[index]
    script["extractor"] = [{"output": EMPTY_FACTS}] * 3
    (book / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    r = muse("review", "--range", "1-3", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    assert [(c["chapter"], c["resumed"]) for c in as_json(r.stdout)["chapters"]] == [(1, True), (2, False), (3, False)]


def test_a_record_of_another_shape_is_reviewed_again_not_trusted(tmp_path: Path, muse) -> None:
    book = make_book(tmp_path / "b")
    assert muse("review", "1", "--book", book, "--json").exit_code == 4  # no model: not evaluated
    import sqlite3

    conn = sqlite3.connect(book / ".muse" / "muse.db")
    try:
        conn.execute("UPDATE review_records SET report_json = '{\"schema_version\": 0}'")
        conn.commit()
    finally:
        conn.close()
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 4 and as_json(r.stdout)["chapters"][0]["resumed"] is False


def test_outcome_labels_are_never_cut_in_a_narrow_terminal(tmp_path: Path) -> None:
    """The outcome column is what a reader scans for: error(CODE) and skipped(reason) are printed whole on one
    line even at 80 columns (the detail column wraps instead)."""
    book = make_book(tmp_path / "b", script={"reviewer": []})  # the script is exhausted at the first call
    r = muse_subprocess("review", "1", "--book", book, env={"COLUMNS": "80"})
    assert r.exit_code == 3, r.stderr
    lines = r.stdout.splitlines()
    assert any(ln.startswith("consistency_review") and "error(MODEL_SCRIPT_EXHAUSTED)" in ln for ln in lines), r.stdout
    assert any(ln.startswith("editor_review") and "skipped(an earlier step failed closed)" in ln for ln in lines)
    assert "…" not in r.stdout.split("rules:")[0]
