"""The author's desk: drafts are shadows until the author decides (accept / revise / reject), accept runs its
preflight on exactly the draft's bytes and keeps the text it replaces; nothing of the author's is ever lost.

The sample book (三国演义 1–10, outline 11 confirmed) with the scripted provider; chapter 11 is the novel's own."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from novelmuse.errors import exit_code
from novelmuse.text import sha256_hex

from .write_helpers import as_json, chapter_text, detector, draft, facts, judges, sample_book, writer_calls

NO_JUDGE = 'writer = "s:scripted-model-1"\ndetector = "s:scripted-model-1"\nextractor = "s:scripted-model-1"\n'


def _passing(**extra: Any) -> dict[str, Any]:
    return {"writer": [draft(requests=[])], "detector": [detector()], "extractor": [facts()], **extra}


def _write(muse: Any, book: Any, *args: str) -> dict[str, Any]:
    r = muse("write", "11", "--arm", "C", *args, "--json", "--book", book.root)
    assert r.exit_code in (0, 1), r.stderr
    return as_json(r.stdout)


def _short(doc: dict[str, Any]) -> str:
    from novelmuse.writing import short_id

    return short_id(doc["final_draft_id"])


def _decisions(book: Any) -> list[tuple[str, str, str]]:
    rows = book.db.execute("SELECT draft_id, decision, mode FROM draft_decisions ORDER BY id").fetchall()
    return [tuple(r) for r in rows]


def test_write_leaves_the_book_alone_and_accept_writes_exactly_the_shown_text_with_no_writer_call(
    tmp_path: Path, muse: Any
) -> None:
    book = sample_book(tmp_path / "b", _passing(judge=judges()))
    doc = _write(muse, book)
    assert doc["status"] == "passed" and not (book.chapters_dir / "0011.md").exists()  # a shadow: nothing written
    short = _short(doc)
    listed = as_json(muse("drafts", "--json", "--book", book.root).stdout)["drafts"]
    assert [(d["short"], d["status"], d["decision"]) for d in listed] == [(short, "passed", None)]
    shown = as_json(muse("drafts", "show", short, "--json", "--book", book.root).stdout)
    assert shown["text"] == chapter_text(11) and shown["detector"]["outcome"]["status"] == "passed"
    assert shown["manifest_sha256"] == doc["manifests"][0]["sha256"]
    calls_before = writer_calls(book)
    r = muse("drafts", "accept", short, "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    accepted = as_json(r.stdout)
    assert writer_calls(book) == calls_before  # zero writer calls: the draft the author read, never a new one
    chapter = book.read_chapter(11)
    assert (
        chapter.body == shown["text"] + "\n" and chapter.heading == "第十一回\u3000刘皇叔北海救孔融　吕温侯濮阳破曹操"
    )
    assert accepted["status"] == "accepted" and accepted["written"] == "chapters/0011.md"
    assert _decisions(book) == [(doc["final_draft_id"], "accept", "manual")]
    judge_calls = book.db.execute("SELECT COUNT(*) FROM model_calls WHERE role = 'judge'").fetchone()[0]
    assert accepted["calls"] == judge_calls == 2  # the quality gate's judges, and the accept says so
    again = muse("drafts", "accept", short, "--book", book.root)
    assert again.exit_code == 2 and "error[DRAFT_ALREADY_ACCEPTED]" in again.stderr


def test_an_edited_chapter_is_never_replaced_without_consent_and_its_bytes_come_back(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", _passing(judge=judges()))
    path = book.chapters_dir / "0011.md"
    mine = "# 第十一回　刘皇叔北海救孔融\n作者亲手写的第十一回。\n".encode()
    path.write_bytes(mine)
    refused = muse("write", "11", "--arm", "C", "--book", book.root)
    assert refused.exit_code == 2 and "error[CHAPTER_EXISTS]" in refused.stderr and "--shadow" in refused.stderr
    doc = _write(muse, book, "--shadow")
    short = _short(doc)
    path.write_bytes(mine + "又加了一句。\n".encode())  # the author edits after the draft was made
    edited = path.read_bytes()
    r = muse("drafts", "accept", short, "--book", book.root)
    assert r.exit_code == 2 and "error[FILE_CHANGED_ON_DISK]" in r.stderr
    assert sha256_hex(mine)[:12] in r.stderr and sha256_hex(edited)[:12] in r.stderr  # both hashes named
    assert path.read_bytes() == edited and _decisions(book) == []
    ok = muse("drafts", "accept", short, "--replace-author-text", "--json", "--book", book.root)
    assert ok.exit_code == 0, ok.stderr
    got = as_json(ok.stdout)
    assert got["overrides"] == ["replace_author_text"] and got["replaced_sha256"] == sha256_hex(edited)
    assert book.read_chapter(11).heading == "第十一回　刘皇叔北海救孔融"  # the author's title line is kept
    listed = as_json(muse("revisions", "11", "--json", "--book", book.root).stdout)
    (kept,) = listed["revisions"]
    assert kept["sha256"] == sha256_hex(edited) and "drafts accept" in kept["command"]
    back = muse("revisions", "restore", "11", kept["id"], "--json", "--book", book.root)
    assert back.exit_code == 0, back.stderr
    assert path.read_bytes() == edited  # byte-exact
    after = as_json(muse("revisions", "11", "--json", "--book", book.root).stdout)["revisions"]
    assert (len(after) == 2 and after[-1]["sha256"] == got["decision"]["text_sha256"]) or after[-1][
        "command"
    ].startswith("muse revisions restore")


def test_a_held_draft_is_taken_over_by_revise_then_accept(tmp_path: Path, muse: Any) -> None:
    text = chapter_text(11).replace("青龙刀起，劈管亥于马下", "青龙刀起，斩管亥于马下", 1)
    blocked = {**detector(fail=("R4",)), "match": "刀起，劈管亥"}  # each command is a new process: answers by text
    script = {
        "writer": [draft(requests=[]), draft(), draft()],
        "detector": [
            blocked,
            blocked,
            blocked,
            {**detector(text, quote="青龙刀起，斩管亥于马下"), "match": "刀起，斩管亥"},
        ],
        "extractor": [facts(), facts(), facts()],
        "judge": judges(text),
    }
    book = sample_book(tmp_path / "b", script)
    doc = _write(muse, book)
    assert doc["status"] == "held_for_author"
    short = _short(doc)
    refused = muse("drafts", "accept", short, "--json", "--book", book.root)
    assert refused.exit_code == 1 and "detector" in refused.stderr and not (book.chapters_dir / "0011.md").exists()
    fixed = tmp_path / "fixed.md"
    fixed.write_text(text, encoding="utf-8")  # the author's edit of one word
    r = muse("drafts", "revise", short, "--from", fixed, "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    rev = as_json(r.stdout)
    assert rev["edit_chars"] == 1 and rev["revision"]["origin"] == "author_revision"
    assert [c["status"] for c in rev["check"]] == ["passed", "skipped"]  # deterministic checks ran; semantic not
    new = rev["revision"]["short"]
    ok = muse("drafts", "accept", new, "--json", "--book", book.root)
    assert ok.exit_code == 0, ok.stderr
    assert book.read_chapter(11).body == text + "\n"
    assert [d[1] for d in _decisions(book)] == ["revise", "accept"]
    (detector_check,) = [c for c in as_json(ok.stdout)["preflight"] if c["step"] == "detector"]
    assert "semantic detector hold" in detector_check["detail"]  # a detector model is configured: it ran on the edit


def test_a_rejected_draft_can_never_be_accepted(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", _passing(judge=judges()))
    short = _short(_write(muse, book))
    r = muse("drafts", "reject", short, "--reason", "节奏太平", "--json", "--book", book.root)
    assert r.exit_code == 0 and as_json(r.stdout)["decision"]["reason"] == "节奏太平"
    again = muse("drafts", "accept", short, "--book", book.root)
    assert again.exit_code == 2 and "error[DRAFT_REJECTED]" in again.stderr and "节奏太平" in again.stderr
    assert not (book.chapters_dir / "0011.md").exists()


def test_a_draft_whose_memory_changed_is_refused_naming_it_and_accepted_only_on_request(
    tmp_path: Path, muse: Any
) -> None:
    book = sample_book(tmp_path / "b", _passing(judge=judges()))
    short = _short(_write(muse, book))
    ten = book.chapters_dir / "0010.md"
    ten.write_text(ten.read_text(encoding="utf-8") + "作者后来补写的一段。\n", encoding="utf-8")
    r = muse("drafts", "accept", short, "--json", "--book", book.root)
    assert r.exit_code == 1 and "memory changed" in r.stderr and "--accept-changed-memory" in r.stderr
    doc = as_json(r.stdout)
    (manifest,) = [c for c in doc["preflight"] if c["step"] == "manifest"]
    assert manifest["status"] == "failed" and "changed:" in manifest["detail"]
    assert not (book.chapters_dir / "0011.md").exists()
    ok = muse("drafts", "accept", short, "--accept-changed-memory", "--json", "--book", book.root)
    assert ok.exit_code == 0, ok.stderr
    assert as_json(ok.stdout)["decision"]["overrides"] == ["accept_changed_memory"]


def test_no_judge_model_is_not_evaluated_and_without_gate_is_recorded(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", _passing(), roles=NO_JUDGE)
    short = _short(_write(muse, book))
    r = muse("drafts", "accept", short, "--json", "--book", book.root)
    assert r.exit_code == exit_code("not_evaluated") == 4
    assert as_json(r.stdout)["status"] == "not_evaluated" and not (book.chapters_dir / "0011.md").exists()
    assert _decisions(book) == []
    ok = muse("drafts", "accept", short, "--without-gate", "--json", "--book", book.root)
    assert ok.exit_code == 0, ok.stderr
    got = as_json(ok.stdout)
    gate = [c for c in got["preflight"] if c["step"] == "quality_gate"]
    assert gate[0]["status"] == "skipped" and got["decision"]["overrides"] == ["without_gate"]
    assert (book.chapters_dir / "0011.md").exists()


def test_drafts_stats_counts_each_decision_and_the_share_the_author_changed(tmp_path: Path, muse: Any) -> None:
    script = {
        "writer": [draft(requests=[])] * 4,
        "detector": [detector()] * 4,
        "extractor": [facts()] * 4,
    }
    book = sample_book(tmp_path / "b", script, roles=NO_JUDGE)
    shorts = [_short(_write(muse, book, "--new")) for _ in range(4)]
    text = chapter_text(11)
    edited = tmp_path / "edited.md"
    edited.write_text(text[: len(text) // 2] + "改" * 10 + text[len(text) // 2 + 10 :], encoding="utf-8")
    assert muse("drafts", "revise", shorts[0], "--from", edited, "--book", book.root).exit_code == 0
    assert muse("drafts", "reject", shorts[1], "--book", book.root).exit_code == 0
    assert muse("drafts", "accept", shorts[2], "--without-gate", "--book", book.root).exit_code == 0
    stats = as_json(muse("drafts", "stats", "--json", "--book", book.root).stdout)
    (row,) = stats["rows"]
    assert row["arm"] == "C" and row["writer_config_sha256"]
    counts = (row["drafts"], row["accepted"], row["revised"], row["rejected"], row["undecided"])
    assert counts == (4, 1, 1, 1, 1)
    from novelmuse.text import edit_distance

    share = edit_distance(text, edited.read_text(encoding="utf-8")) / len(text)
    assert row["edit_shares"] == [round(share, 6)] and share > 0


def test_an_interrupted_write_resumes_with_only_the_missing_calls(tmp_path: Path, muse: Any) -> None:
    from ..reliability.harness import muse_killed

    script = _passing()
    script["writer"] = [draft(requests=[])] * 2
    script["detector"] = [detector()] * 2
    book = sample_book(tmp_path / "b", script, roles=NO_JUDGE)
    # killed as the detector's request is sent: the draft is stored, the gate never answered
    killed = muse_killed(["write", "11", "--arm", "C", "--book", str(book.root)], 1, "send")
    assert killed.returncode != 0
    assert len(writer_calls(book)) == 1
    r = muse("write", "11", "--arm", "C", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert doc["resumed"]["drafts"] == 1 and len(writer_calls(book)) == 1  # the writer was not asked again
    assert doc["usage"]["calls"] == 2  # only the detector and the extractor


def _author_files(root: Path) -> dict[str, bytes]:
    files = [root / "rules.txt", *(p for d in ("chapters", "outlines", "cards", "plan") for p in (root / d).rglob("*"))]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files if p.is_file()}


def test_every_command_walked_never_replaces_an_author_file_without_a_revision(tmp_path: Path, muse: Any) -> None:
    """Every command of the registry runs on a book the author edited by hand (the demo's scripted copy), those that
    write the book's files included (review --apply, write --apply, rules normalize --write, revisions restore);
    afterwards every author file whose bytes changed has its old bytes among its kept revisions."""
    from novelmuse.cli._app import COMMANDS

    from ..reliability.harness import _sample_book

    root = tmp_path / "book"
    root.mkdir()
    _sample_book(root)
    for n in (1, 3):  # edits by hand, never seen by muse
        path = root / "chapters" / f"{n:04d}.md"
        path.write_text(path.read_text(encoding="utf-8") + "作者亲手加的一句。\n", encoding="utf-8")
    before = _author_files(root)
    book = ("--book", str(root))
    walk: list[tuple[str, ...]] = [
        ("version",),
        ("init", str(tmp_path / "other")),
        ("import", str(root / "chapters" / "0001.md"), "--into", str(root)),
        ("check", *book),
        ("rules", "lint", *book),
        ("rules", "normalize", *book),
        ("rules", "normalize", "--write", *book),
        ("sync", *book),
        ("ledger", *book),
        ("search", "桃园结义", "--before", "5", *book),
        ("mentions", "曹操", *book),
        ("cards", "lint", *book),
        ("facts", "show", "2", *book),
        ("review", "2", "--apply", *book),
        ("outline", "lint", *book),
        ("plan", "lint", *book),
        ("outline", "confirm", "11", *book),
        ("context", "11", "--arm", "C", *book),
        ("write", "11", "--arm", "C", "--apply", *book),
        ("drafts", *book),
        ("revisions", "2", *book),
        ("judge-summary", *book),
        ("rubrics", *book),
        ("judge", "--profile", "quality_gate", "--chapter", "3", str(root / "chapters" / "0003.md"), *book),
        ("replay", "status", "no-such-run", *book),
        ("gate", "show", *book),
        ("calls", *book),
        ("cost", *book),
        ("vault", "recover", *book),
        ("models", "check", *book),
        ("status", *book),
        ("report", "--out", str(tmp_path / "report"), *book),
        ("export", "--format", "txt", "--out", str(tmp_path / "book.txt"), *book),
    ]
    served = {"studio": "a local web server (tests/studio): what it changes goes through the same services"}
    assert {w[0] for w in walk} | set(served) == set(COMMANDS) | {"version"}, "a command is missing from the walk"
    for args in walk:
        r = muse(*args)
        assert r.exit_code != 70 and "Traceback" not in r.stderr, (args, r.stderr)
    book_revisions = (
        sqlite3.connect(root / ".muse" / "muse.db")
        .execute("SELECT path, old_sha256 FROM file_revisions WHERE state = 'done'")
        .fetchall()
    )
    by_path: dict[str, set[str]] = {}
    for path, sha in book_revisions:
        by_path.setdefault(path, set()).add(sha)
    after = _author_files(root)
    changed = [rel for rel, data in before.items() if after.get(rel) != data]
    assert {"chapters/0002.md", "rules.txt"} <= set(changed), changed  # the walk did replace author files
    for rel in changed:
        assert sha256_hex(before[rel]) in by_path.get(rel, set()), f"{rel} was replaced without a revision"


@pytest.mark.parametrize("step", ["every"])
def test_a_kill_at_every_step_of_accept_leaves_old_and_no_decision_or_new_and_both(
    tmp_path: Path, muse: Any, step: str
) -> None:
    from novelmuse.iopoints import hooked

    from ..reliability.harness import muse_killed

    base = sample_book(tmp_path / "count", _passing(), roles=NO_JUDGE)
    short = _short(_write(muse, base))
    points: list[tuple[str, str]] = []
    with hooked(lambda kind, target: points.append((kind, target))):
        assert muse("drafts", "accept", short, "--without-gate", "--book", base.root).exit_code == 0
    assert len(points) >= 5
    for index in range(len(points)):
        book = sample_book(tmp_path / f"k{index}", _passing(), roles=NO_JUDGE)
        s = _short(_write(muse, book))
        killed = muse_killed(["drafts", "accept", s, "--without-gate", "--book", str(book.root)], index)
        assert killed.returncode != 0, (index, killed.stderr)
        listed = as_json(muse("drafts", "--json", "--book", book.root).stdout)["drafts"]  # settles the desk
        (d,) = listed
        path = book.chapters_dir / "0011.md"
        rows = sqlite3.connect(book.db_path).execute("SELECT COUNT(*) FROM draft_decisions").fetchone()[0]
        if path.exists():
            assert path.read_text(encoding="utf-8").endswith(chapter_text(11) + "\n"), index  # never half a file
            assert d["decision"]["decision"] == "accept" and rows == 1, index
            kept = as_json(muse("revisions", "11", "--json", "--book", book.root).stdout)["revisions"]
            assert len(kept) == 1 and kept[0]["sha256"] is None, index
        else:
            assert d["decision"] is None and rows == 0, index
