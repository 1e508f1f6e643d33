"""A stretch of the book: `muse write 11-13 --auto` / manual mode / `--continue` / `--status`, over a real loopback
OpenAI-compatible server (see stretch_models.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from novelmuse.book import Book
from novelmuse.writing import stored_manifest

from ..llm.loopback import LoopbackServer
from .stretch_models import KEY_ENV, StretchModels, as_json, stretch_book


@pytest.fixture
def models() -> StretchModels:
    return StretchModels()


@pytest.fixture
def server(models: StretchModels) -> Iterator[LoopbackServer]:
    with LoopbackServer("openai", responder=models) as srv:
        yield srv


@pytest.fixture
def book(tmp_path: Path, server: LoopbackServer, models: StretchModels, monkeypatch: pytest.MonkeyPatch) -> Book:
    monkeypatch.setenv(KEY_ENV, "sk-stretch-test-key-0123456789")
    models.root = tmp_path / "book"
    return stretch_book(tmp_path / "book", server.base_url)


def _facts_from_cards(book: Book, chapter: int) -> set[int]:
    """The chapters whose fact cards gave facts to the context chapter `chapter` was written from."""
    row = book.db.execute(
        "SELECT document FROM write_runs WHERE chapter = ? AND status = 'passed' ORDER BY started_at", (chapter,)
    ).fetchone()
    manifest = json.loads(row[0])["manifests"][0]
    stored = stored_manifest(book, manifest["sha256"])
    return {f.pointer.chapter for f in stored.facts if f.pointer.fact_card_id is not None and f.pointer.chapter}


def test_auto_writes_three_chapters_each_seeing_the_last(muse, book: Book, models: StretchModels) -> None:
    r = muse("write", "11-13", "--auto", "--yes", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr + r.stdout
    doc = as_json(r.stdout)
    assert doc["status"] == "finished"
    assert [c["state"] for c in doc["chapters"]] == ["extracted"] * 3
    assert [c["decision"] for c in doc["chapters"]] == ["automatic"] * 3
    # off a terminal, one line per step with the chapter and the spend so far
    assert "chapter 12 · detector: passed" in r.stderr and "chapter 13 · extracting facts · " in r.stderr
    assert "call(s), spent unknown" in r.stderr  # the loopback model has no price: unknown, never 0
    for n in (11, 12, 13):
        assert (book.root / "chapters" / f"{n:04d}.md").is_file()
    # each chapter's context holds what the chapter before it established (刘备's location, from its fact card)
    for n in (12, 13):
        facts = _facts_from_cards(book, n)
        assert n - 1 in facts, facts
    assert "第11回之地" in models.writer_prompts(12)[0]
    assert "第12回之地" in models.writer_prompts(13)[0]
    assert "第11回之地" not in models.writer_prompts(11)[0]


def _cost(muse, book: Book, run_id: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    r = muse("cost", "--run", run_id, "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr
    return as_json(r.stdout)  # type: ignore[no-any-return]


def test_the_run_makes_no_more_calls_than_its_bill_and_says_what_muse_cost_says(
    muse, book: Book, models: StretchModels
) -> None:
    doc = as_json(muse("write", "11-13", "--auto", "--yes", "--book", book.root, "--json").stdout)
    bill = {r["role"]: r["calls"] for r in doc["bill"]["roles"]}
    cost = _cost(muse, book, doc["run_id"])
    made = {line["key"]: line["calls"] for line in cost["by_role"]}
    assert set(made) <= set(bill)
    assert all(made[role] <= bill[role] for role in made), (made, bill)
    assert doc["bill"]["calls"] >= doc["spent"]["calls"] == cost["total"]["calls"] == len(models.seen)
    assert doc["spent"]["input_tokens"] == cost["total"]["input_tokens"]
    assert doc["spent"]["output_tokens"] == cost["total"]["output_tokens"]
    status = as_json(muse("write", "--status", "--book", book.root, "--json").stdout)
    assert status["id"] == doc["id"] and status["status"] == "finished"
    assert status["total_spent"] == doc["spent"]


def test_a_held_draft_stops_the_run_and_continue_finishes_after_the_decision(
    muse, book: Book, models: StretchModels
) -> None:
    models.break_once = {12}
    r = muse("write", "11-13", "--auto", "--yes", "--book", book.root, "--json")
    assert r.exit_code == 1, r.stderr
    doc = as_json(r.stdout)
    assert (doc["status"], doc["stop_chapter"]) == ("waiting", 12)
    states = [(c["chapter"], c["state"], c["write_status"]) for c in doc["chapters"]]
    assert states == [(11, "extracted", "passed"), (12, "drafted", "held_for_author"), (13, "todo", None)]
    assert (book.root / "chapters" / "0011.md").is_file()
    assert not (book.root / "chapters" / "0012.md").exists() and not (book.root / "chapters" / "0013.md").exists()
    assert models.writer_prompts(13) == []
    assert "muse drafts" in doc["next_step"] and "--continue" in doc["next_step"]
    status = muse("status", "--book", book.root, "--json")
    problems = [p["what"] for p in as_json(status.stdout)["problems"]]
    assert any("the run of chapters 11-13 (auto) is waiting at chapter 12" in p for p in problems), problems
    # nothing to continue until the author decides: the run says so again, and calls nothing
    before = len(models.seen)
    again = muse("write", "--continue", "--yes", "--book", book.root, "--json")
    assert again.exit_code == 1 and as_json(again.stdout)["stop_chapter"] == 12
    assert len(models.seen) == before
    held = doc["chapters"][1]["draft_short"]
    assert muse("drafts", "reject", held, "--reason", "漏了大事", "--book", book.root).exit_code == 0
    done = muse("write", "--continue", "--yes", "--book", book.root, "--json")
    assert done.exit_code == 0, done.stderr
    finished = as_json(done.stdout)
    assert finished["status"] == "finished"
    assert [c["state"] for c in finished["chapters"]] == ["extracted"] * 3
    assert len(models.writer_prompts(11)) == 1 and len(models.writer_prompts(12)) == 2
    assert len(models.writer_prompts(13)) == 1
    assert "第12回之地" in models.writer_prompts(13)[0]


def test_manual_mode_stops_after_each_draft_for_the_authors_decision(muse, book: Book, models: StretchModels) -> None:
    first = muse("write", "11-12", "--yes", "--book", book.root, "--json")
    assert first.exit_code == 0, first.stderr
    doc = as_json(first.stdout)
    assert (doc["mode"], doc["status"], doc["stop_chapter"]) == ("manual", "waiting", 11)
    assert not (book.root / "chapters" / "0011.md").exists()
    assert models.count("judge_report", 11) == 0  # the author's accept runs the quality gate, not the run
    draft = doc["chapters"][0]["draft_short"]
    assert muse("drafts", "accept", draft, "--book", book.root).exit_code == 2  # the judges' bill, unpriced: asked
    assert muse("drafts", "accept", draft, "--yes", "--book", book.root).exit_code == 0
    second = as_json(muse("write", "--continue", "--yes", "--book", book.root, "--json").stdout)
    assert (second["status"], second["stop_chapter"]) == ("waiting", 12)
    assert second["chapters"][0]["state"] == "extracted" and second["chapters"][0]["decision"] == "author"
    assert "第11回之地" in models.writer_prompts(12)[0]
    decisions = book.db.execute("SELECT mode FROM draft_decisions ORDER BY id").fetchall()
    assert [d[0] for d in decisions] == ["manual"]


def test_the_range_is_checked_whole_before_any_call(muse, book: Book, models: StretchModels) -> None:
    (book.root / "outlines" / "0013.yaml").write_text(
        (book.root / "outlines" / "0013.yaml").read_text(encoding="utf-8") + "# changed\n", encoding="utf-8"
    )
    r = muse("write", "11-15", "--auto", "--yes", "--book", book.root)
    assert r.exit_code == 2
    assert "OUTLINE_NOT_CONFIRMED" in r.stderr
    for n in (13, 14, 15):
        assert f"chapter {n}" in r.stderr
    assert "chapter 12" not in r.stderr
    (book.root / "chapters" / "0012.md").write_text("# 第十二回\n作者自己写的。\n", encoding="utf-8")
    r = muse("write", "11-12", "--auto", "--yes", "--book", book.root)
    assert r.exit_code == 2 and "CHAPTER_EXISTS" in r.stderr
    assert models.seen == []


def test_a_bill_above_confirm_above_is_refused_without_a_terminal_and_runs_with_yes(
    muse, book: Book, models: StretchModels
) -> None:
    r = muse("write", "11-12", "--auto", "--book", book.root)
    assert r.exit_code == 2, r.stderr
    assert "BILL_NOT_CONFIRMED" in r.stderr and "--yes" in r.stderr
    assert "the run's bill for 2 chapter(s): at most" in r.stdout  # the plan is printed
    assert "writer (loopback-model-1)" in r.stdout and "judge (loopback-model-1)" in r.stdout
    assert models.seen == []
    assert muse("write", "11-12", "--auto", "--yes", "--book", book.root).exit_code == 0


def test_dry_run_shows_the_bill_and_records_nothing(muse, book: Book, models: StretchModels) -> None:
    r = muse("write", "11-13", "--dry-run", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr
    bill = as_json(r.stdout)["bill"]
    assert {x["role"] for x in bill["roles"]} == {"writer", "detector", "extractor", "judge"}
    assert models.seen == []
    assert book.db.execute("SELECT COUNT(*) FROM stretch_runs").fetchone()[0] == 0


def test_a_stretch_without_an_extractor_is_not_evaluated(muse, tmp_path: Path, server: LoopbackServer) -> None:
    book = stretch_book(tmp_path / "b2", server.base_url, extra_toml="")
    toml = book.root / "book.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace('default = "s:loopback-model-1"', 'writer = "s:loopback-model-1"'),
        encoding="utf-8",
    )
    r = muse("write", "11-12", "--auto", "--yes", "--book", book.root)
    assert r.exit_code == 4 and "STRETCH_NO_EXTRACTOR" in r.stderr


@pytest.mark.parametrize(
    "step",
    [
        ("FinalChapterDraft", 12),  # the writer of chapter 12
        ("DetectorOutput", 12),  # its detector gate
        ("FactCardOutput", 12),  # its fact check
        ("judge_report", 12),  # its quality gate
        ("facts", 12),  # the fact card of the accepted chapter 12
    ],
)
def test_a_killed_run_resumes_without_writing_deciding_or_extracting_twice(
    muse, book: Book, models: StretchModels, step: tuple[str, int]
) -> None:
    held = threading.Event()
    models.hold[step] = held
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    env.update({KEY_ENV: "sk-stretch-test-key-0123456789", "MUSE_CONFIG": "/nonexistent/config.toml"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "novelmuse", "write", "11-13", "--auto", "--yes", "--book", str(book.root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert held.wait(120), "the run never reached the step"
        time.sleep(0.5)  # a call running beside the held one (the detector and the fact check) ends and is kept
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        models.hold.clear()
        models.release.set()
    finished_before = {(s, n) for s, n in models.seen if (s, n) != step}
    r = muse("write", "--continue", "--yes", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr + r.stdout
    doc = as_json(r.stdout)
    assert doc["status"] == "finished" and len(doc["run_ids"]) == 2
    assert [c["state"] for c in doc["chapters"]] == ["extracted"] * 3
    for n in (11, 12, 13):
        assert len(models.writer_prompts(n)) == (2 if step == ("FinalChapterDraft", n) else 1), n
        accepts = book.db.execute(
            "SELECT COUNT(*) FROM draft_decisions WHERE chapter = ? AND decision = 'accept'", (n,)
        ).fetchone()[0]
        assert accepts == 1, n
        cards = book.db.execute("SELECT COUNT(*) FROM fact_cards WHERE chapter = ?", (n,)).fetchone()[0]
        assert cards == 1, n
    # a call that had finished before the kill was not made again
    for s, n in finished_before:
        assert models.count(s, n) == (2 if s == "judge_report" else 1), (s, n)


def test_the_report_shows_the_run(muse, book: Book, models: StretchModels) -> None:
    models.break_once = {12}
    assert muse("write", "11-13", "--auto", "--yes", "--book", book.root).exit_code == 1
    r = muse("report", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    page = next((book.state_dir / "report").rglob("desk.html")).read_text(encoding="utf-8")
    runs = page.split('id="stretches"', 1)[1]
    assert "chapters 11–13 · auto" in runs and "waiting" in runs and "at chapter 12" in runs
    assert "held_for_author" in runs and "automatic" in runs


def test_a_step_that_fails_closed_stops_the_run_whole_and_continue_finishes(
    muse, book: Book, models: StretchModels
) -> None:
    models.fail_once = {("DetectorOutput", 12)}
    r = muse("write", "11-13", "--auto", "--yes", "--book", book.root, "--json")
    assert r.exit_code == 3, r.stderr
    doc = as_json(r.stdout)
    assert (doc["status"], doc["stop_chapter"]) == ("stopped", 12)
    assert [c["state"] for c in doc["chapters"]] == ["extracted", "drafted", "todo"]
    assert doc["chapters"][1]["write_status"] == "error" and "MODEL_AUTH" in doc["stop_reason"]
    assert not (book.root / "chapters" / "0012.md").exists()
    done = muse("write", "--continue", "--yes", "--book", book.root, "--json")
    assert done.exit_code == 0, done.stderr
    assert [c["state"] for c in as_json(done.stdout)["chapters"]] == ["extracted"] * 3
    # a write that failed closed is done (as `muse write N`): chapter 12 is written again, 11 and 13 once
    assert [len(models.writer_prompts(n)) for n in (11, 12, 13)] == [1, 2, 1]


def test_a_budget_cap_stops_the_run_before_it_sends_and_continue_goes_on(
    muse, book: Book, models: StretchModels
) -> None:
    toml = book.root / "book.toml"
    base = toml.read_text(encoding="utf-8")
    priced = base + '\n[prices."loopback-model-1"]\ninput = 1.0\noutput = 1.0\n'
    toml.write_text(priced + "\n[budget]\nmax_cost = 0.0001\n", encoding="utf-8")
    r = muse("write", "11-12", "--auto", "--yes", "--book", book.root, "--json")
    assert r.exit_code == 3, r.stderr
    doc = as_json(r.stdout)
    assert (doc["status"], doc["stop_chapter"]) == ("stopped", 11) and "BUDGET_EXCEEDED" in doc["stop_reason"]
    assert models.seen == [] and not (book.root / "chapters" / "0011.md").exists()  # nothing sent, nothing decided
    toml.write_text(priced, encoding="utf-8")
    done = muse("write", "--continue", "--yes", "--book", book.root, "--json")
    assert done.exit_code == 0, done.stderr
    assert [c["state"] for c in as_json(done.stdout)["chapters"]] == ["extracted"] * 2


def _in_a_terminal(book: Book, answer: bytes, *args: str) -> tuple[int, str]:
    """`muse ARGS` in a real pseudo-terminal (stdin and stderr are ttys), answering `answer` to its question."""
    import pty
    import select

    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    env.update({KEY_ENV: "sk-stretch-test-key-0123456789", "MUSE_CONFIG": "/nonexistent/config.toml", "TERM": "xterm"})
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "novelmuse", *args, "--book", str(book.root)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    seen = b""
    answered = False
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if not answered and b"Start? [y/N]" in seen:
                os.write(controller, answer)
                answered = True
        elif proc.poll() is not None:
            break
    code = proc.wait(60)
    os.close(controller)
    return code, seen.decode("utf-8", errors="replace")


def test_in_a_terminal_the_bill_above_the_threshold_is_asked_about(book: Book, models: StretchModels) -> None:
    code, shown = _in_a_terminal(book, b"n\n", "write", "11-11", "--auto")
    assert code == 2 and "the run's bill for 1 chapter(s)" in shown and "Start? [y/N]" in shown
    assert "BILL_NOT_CONFIRMED" in shown and "you declined" in shown and models.seen == []
    code, shown = _in_a_terminal(book, b"y\n", "write", "11-11", "--auto")
    assert code == 0, shown[-2000:]
    assert (book.root / "chapters" / "0011.md").is_file()
