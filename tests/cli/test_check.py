"""`muse check`: exact counts on corpus books, exit codes, bad input, the registry, read-only books."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from novelmuse.text import count_chars, paragraph_at, split_paragraphs
from tests.conftest import HONGLOU, SANGUO, Result, muse_subprocess
from tests.rules._books import make_book, split_corpus

LIMITS = '[book]\ntitle = "t"\n[chapters]\nmin_chars = 21\nmax_chars = 30\n'


def corpus_phrases(text: str, n: int, seed: int) -> list[str]:
    """`n` distinct phrases of 1–6 characters drawn from the text itself (so many of them occur)."""
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        size = rng.choice([1, 2, 2, 3, 3, 4, 5, 6])
        i = rng.randrange(len(text) - size)
        p = text[i : i + size]
        if not any(ch.isspace() or ch in "、，,；;#＃≤<＜≦⩽" for ch in p):
            out.add(p)
    return sorted(out)


def body_of(book: Path, number: int) -> str:
    text = (book / "chapters" / f"{number:04d}.md").read_text(encoding="utf-8")
    return text.split("\n", 1)[1] if text.startswith("# ") else text


def assert_exact(doc: dict[str, Any], book: Path, forbidden: list[str], fatigue0: list[str]) -> int:
    """Every finding of a generated phrase has count == body.count(phrase) in every chapter, and every
    phrase that occurs is reported (forbidden and fatigue≤0 report any occurrence). Returns #hits checked."""
    mine = set(forbidden) | set(fatigue0)
    hits = 0
    for ch in doc["chapters"]:
        body = body_of(book, ch["number"])
        paras = split_paragraphs(body)
        got = {f["target"]: f for f in ch["findings"] if f["target"] in mine}
        want = {p: body.count(p) for p in mine if p in body}
        assert {t: f["actual"] for t, f in got.items()} == want, ch["number"]
        for t, f in got.items():
            assert f["severity"] == ("error" if t in forbidden else "warning")
            assert len(f["hits"]) == f["actual"]
            prev_end = -1
            for para, start, end in f["hits"]:
                assert body[start:end] == t
                assert start >= prev_end  # non-overlapping, ascending
                prev_end = end
                assert para == paragraph_at(paras, start)
            hits += len(f["hits"])
        assert ch["chars"] == count_chars(body)
    return hits


def rules_for(phrases: list[str]) -> tuple[str, list[str], list[str]]:
    forbidden, fatigue0 = phrases[::2], phrases[1::2]
    lines = ["# 1,000 phrases drawn from the corpus"]
    lines += [f"禁止:{p}" for p in forbidden]
    lines += ["疲劳词:" + "、".join(f"{p}≤0" for p in fatigue0[i : i + 7]) for i in range(0, len(fatigue0), 7)]
    return "\n".join(lines) + "\n", forbidden, fatigue0


def test_imported_sanguo_with_1000_phrases_counts_exactly_like_str_count(muse: Any, tmp_path: Path) -> None:
    book = tmp_path / "sanguo"
    r = muse("import", SANGUO, "--into", book, "--json")
    assert r.exit_code == 0, r.stderr
    text = SANGUO.read_text(encoding="utf-8")
    rules, forbidden, fatigue0 = rules_for(corpus_phrases(text, 1000, seed=7))
    (book / "rules.txt").write_text(rules, encoding="utf-8")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr  # forbidden phrases occur: error findings
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 2 and doc["ok"] is True and doc["passed"] is False
    assert len(doc["chapters"]) == 120
    assert doc["rules"]["forbidden"] == 500 and doc["rules"]["file"] == "present"
    assert assert_exact(doc, book, forbidden, fatigue0) > 10_000


def test_hongloumeng_book_with_1000_phrases_counts_exactly(muse: Any, tmp_path: Path) -> None:
    text = HONGLOU.read_text(encoding="utf-8")
    chapters = split_corpus(text)
    assert len(chapters) == 120
    rules, forbidden, fatigue0 = rules_for(corpus_phrases(text, 1000, seed=11))
    book = make_book(tmp_path / "hlm", chapters, rules=rules)
    r = muse("check", "--book", book, "--range", "1-40", "--json")
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    assert [c["number"] for c in doc["chapters"]] == list(range(1, 41))
    assert assert_exact(doc, book, forbidden, fatigue0) > 1000


def small_book(tmp_path: Path, rules: str | bytes | None = "", toml: str = LIMITS) -> Path:
    chapters = [
        ("第一章 开端", "他不由得笑了。\n\n她嘴角勾起，眼底闪过一丝光。😀哈哈哈\n"),
        ("第二章 后宫", "后宫里一片寂静，后宫之外，系统面板亮了。\n"),
        ("第三章 平淡", "平平淡淡的一天，什么也没有发生，只是天气很好，适合出门走走。\n"),
    ]
    return make_book(tmp_path / "b", chapters, rules=rules, book_toml=toml)


def test_exit_codes_findings_and_json_shape(muse: Any, tmp_path: Path) -> None:
    book = small_book(tmp_path, "禁止:后宫、系统面板\n疲劳词:哈哈≤0\n偏好:多对话\n")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    ch1, ch2, ch3 = doc["chapters"]
    assert ch2["findings"][0] == {
        "rule": "forbidden",
        "target": "后宫",
        "limit": None,
        "actual": 2,
        "severity": "error",
        "origin": "rules.txt line 1",
        "hits": [[0, 0, 2], [0, 8, 10]],
    }
    assert [(f["rule"], f["target"], f["limit"], f["actual"]) for f in ch2["findings"]] == [
        ("forbidden", "后宫", None, 2),
        ("forbidden", "系统面板", None, 1),
        ("length", "min_chars", 21, 20),  # an error: book.toml limits are hard constraints
    ]
    assert ch2["length"]["outcome"] == "failed" and ch2["errors"] == 3
    assert {f["target"]: (f["actual"], f["severity"]) for f in ch1["findings"]} == {"哈哈": (1, "warning")}
    assert ch3["length"] == {"chars": 30, "min_chars": 21, "max_chars": 30, "outcome": "passed", "reason": None}
    assert doc["summary"]["errors"] == ch1["errors"] + ch2["errors"] + ch3["errors"]
    assert set(doc) == {
        "schema_version",
        "ok",
        "passed",
        "outcome",
        "reason",
        "book",
        "rules",
        "registry",
        "chapters",
        "summary",
        "gaps",
        "chapter_unit",
        "exit",
    }
    assert doc["gaps"] == [] and doc["summary"]["missing_chapters"] == 0
    assert (doc["outcome"], doc["reason"]) == ("failed", None)
    assert doc["exit"] == {"outcome": "findings", "code": 1}
    # only chapter 3: no error findings → exit 0
    r = muse("check", "--book", book, "--chapter", "3", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["passed"] is True
    assert json.loads(r.stdout)["outcome"] == "passed"
    # positional DIR works like --book; the human form shows the table, context and summary
    r = muse("check", book, "--chapter", "2")
    assert r.exit_code == 1
    assert "forbidden" in r.stdout and "【后宫】" in r.stdout and "FAILED" in r.stdout


def test_default_fatigue_words_apply_and_book_rules_override_them(muse: Any, tmp_path: Path) -> None:
    toml = '[book]\ntitle = "t"\n'
    book = small_book(tmp_path, "", toml)
    doc = json.loads(muse("check", "--book", book, "--chapter", "1", "--json").stdout)
    f = {x["target"]: x for x in doc["chapters"][0]["findings"]}
    # 嘴角勾起 and 眼底闪过 (limit 1) once each: within the limit; the length check is skipped, not passed
    assert f == {} and doc["chapters"][0]["length"]["outcome"] == "skipped"
    assert doc["rules"]["file"] == "empty" and doc["summary"]["length_checked"] is False
    (book / "rules.txt").write_text("禁止:不由得\n疲劳词:嘴角勾起≤0\n", encoding="utf-8")
    r = muse("check", "--book", book, "--chapter", "1", "--json")
    f = {x["target"]: x for x in json.loads(r.stdout)["chapters"][0]["findings"]}
    assert (f["不由得"]["severity"], f["不由得"]["origin"]) == ("error", "rules.txt line 1")
    assert (f["嘴角勾起"]["severity"], f["嘴角勾起"]["limit"]) == ("warning", 0)
    assert r.exit_code == 1


def test_one_character_emoji_combining_and_full_width(muse: Any, tmp_path: Path) -> None:
    body = "Ａ😀e\u0301é　哈，😀😀Ａ\n\n第二段😀e\u0301\n"
    book = make_book(tmp_path / "u", [("第一章", body)], rules="禁止:😀\n疲劳词:e\u0301≤0、Ａ≤1、é≤0\n")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    f = {x["target"]: x for x in doc["chapters"][0]["findings"]}
    assert f["😀"]["actual"] == body.count("😀") == 4
    assert [h[1] for h in f["😀"]["hits"]] == [i for i, c in enumerate(body) if c == "😀"]
    assert f["😀"]["hits"][-1][0] == 1
    assert f["e\u0301"]["actual"] == 2 and f["é"]["actual"] == 1 and f["Ａ"]["actual"] == 2
    assert [w["code"] for w in doc["rules"]["warnings"]] == ["RULES_NOT_NFC"]


def test_ten_thousand_line_rules_file_is_fast_and_exact(muse: Any, tmp_path: Path) -> None:
    text = SANGUO.read_text(encoding="utf-8")
    chapters = split_corpus(text)[:10]
    phrases = corpus_phrases(text, 10_000, seed=3)
    rules = "\n".join(f"疲劳词:{p}≤0" for p in phrases) + "\n"
    book = make_book(tmp_path / "big", chapters, rules=rules, book_toml='[book]\ntitle = "t"\n')
    t0 = time.perf_counter()
    r = muse("check", "--book", book, "--json")
    elapsed = time.perf_counter() - t0
    assert r.exit_code == 0, r.stderr  # fatigue only: warnings, no error
    assert elapsed < 30, elapsed
    doc = json.loads(r.stdout)
    assert assert_exact(doc, book, [], phrases) > 10_000
    # the terminal form is quick too: it lists a bounded number of rows (a Rich row costs ~1 ms; listing all
    # of these findings took longer than the whole JSON check) and says what it did not list
    t0 = time.perf_counter()
    r = muse("check", "--book", book)
    elapsed = time.perf_counter() - t0
    assert r.exit_code == 0 and elapsed < 15, elapsed
    assert "more finding(s) in this chapter" in r.stdout and f"{doc['summary']['warnings']} warning(s)" in r.stdout


def test_terminal_lists_a_bounded_number_of_rows_and_says_what_it_left_out(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import novelmuse.reports._check as rendering

    monkeypatch.setattr(rendering, "MAX_ROWS_PER_CHAPTER", 3)
    monkeypatch.setattr(rendering, "MAX_FINDING_ROWS", 5)
    body = "甲乙丙丁，一句话。\n"
    chapters = [(f"第{n}章", body) for n in (1, 2, 3)]
    book = make_book(tmp_path / "rows", chapters, rules="禁止:甲、乙、丙\n疲劳词:丁≤0\n")
    r = muse("check", "--book", book)
    assert r.exit_code == 1
    out = r.stdout
    # chapter 1: 3 rows (errors first), 1 left out; chapter 2: the 2 rows left in the total; chapter 3: one line
    assert "… 1 more finding(s) in this chapter (0 error(s), 1 warning(s)) not listed" in out
    assert "see `muse check --chapter 1` or --json" in out
    assert "… 2 more finding(s) in this chapter (1 error(s), 1 warning(s)) not listed" in out
    assert "0003 第3章 — 9 chars, 3 error(s), 1 warning(s): not listed (over 5 rows" in out
    assert out.count("【丙】") == 2 and out.count("【甲】") == 1 and "【丁】" not in out  # context: listed rows only
    assert "9 error(s) in 3 chapter(s), 3 warning(s) in 3 chapter(s)" in out  # the summary counts everything
    # one chapter: up to the total, so --chapter N lists it all
    r = muse("check", "--book", book, "--chapter", "3")
    assert "not listed" not in r.stdout and r.stdout.count("【") == 4
    # --json always has every finding
    doc = json.loads(muse("check", "--book", book, "--json").stdout)
    assert [len(c["findings"]) for c in doc["chapters"]] == [4, 4, 4]


@pytest.mark.parametrize(
    ("rules", "code", "needle"),
    [
        ("疲劳词:不由得\n", "RULES_SYNTAX", "has no limit"),
        ("禁止:后宫\n疲劳词:后宫≤2\n", "RULES_CONTRADICTION", "line 1"),
        ("禁止:后宫\n".encode() + b"\xc3\x28", "RULES_ENCODING", "byte offset 14"),
    ],
)
def test_unusable_rules_exit_2_with_one_line_error(
    muse: Any, tmp_path: Path, rules: str | bytes, code: str, needle: str
) -> None:
    book = small_book(tmp_path, rules)
    r = muse("check", "--book", book)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"error[{code}]:") and needle in r.stderr and "Traceback" not in r.stderr
    r = muse("check", "--book", book, "--json")
    assert json.loads(r.stdout)["error"]["code"] == code


def test_bad_selection_and_missing_book(muse: Any, tmp_path: Path) -> None:
    book = small_book(tmp_path)
    r = muse("check", "--book", book, "--chapter", "999", "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "CHAPTER_NOT_FOUND"
    assert "1–3" in r.stderr
    r = muse("check", "--book", book, "--range", "50-60")
    assert r.exit_code == 2 and "error[CHAPTER_NOT_FOUND]" in r.stderr
    r = muse("check", "--book", book, "--chapter", "1", "--range", "1-2")
    assert r.exit_code == 2 and "error[USAGE]" in r.stderr
    empty = tmp_path / "nobook"
    empty.mkdir()
    r = muse("check", "--book", empty)
    assert r.exit_code == 2 and r.stderr.startswith("error[BOOK_NOT_FOUND]")
    r = muse("check", cwd=empty)
    assert r.exit_code == 2 and r.stderr.startswith("error[BOOK_NOT_FOUND]")


def test_missing_and_empty_rules_file_mean_defaults_only(muse: Any, tmp_path: Path) -> None:
    book = small_book(tmp_path, None)
    r = muse("check", "--book", book, "--json")
    doc = json.loads(r.stdout)
    assert doc["rules"]["file"] == "missing" and "defaults only" in r.stderr
    assert doc["rules"]["forbidden"] == 0 and doc["rules"]["fatigue"] >= 38
    (book / "rules.txt").write_text("# nothing yet\n\n", encoding="utf-8")
    r = muse("check", "--book", book, "--json")
    assert json.loads(r.stdout)["rules"]["file"] == "empty" and "defaults only" in r.stderr


def test_unparsed_lines_are_reported_not_enforced(muse: Any, tmp_path: Path) -> None:
    book = small_book(tmp_path, "禁止:系统面板\n不要后宫\n")
    r = muse("check", "--book", book, "--chapter", "2", "--json")
    doc = json.loads(r.stdout)
    assert doc["rules"]["unparsed_lines"] == [2] and "not enforced" in r.stderr
    assert {f["target"] for f in doc["chapters"][0]["findings"] if f["rule"] != "length"} == {"系统面板"}


def test_registry_records_checked_chapters(muse: Any, tmp_path: Path) -> None:
    book = small_book(tmp_path)
    r = muse("check", "--book", book, "--range", "2-3", "--json")
    doc = json.loads(r.stdout)
    assert doc["registry"] == {"outcome": "updated", "chapters": 2, "reason": None, "code": None}
    with sqlite3.connect(book / ".muse" / "muse.db") as conn:
        rows = conn.execute("SELECT number, path, sha256, chars, paragraphs FROM chapters ORDER BY number").fetchall()
    assert rows == [(c["number"], c["path"], c["sha256"], c["chars"], c["paragraphs"]) for c in doc["chapters"]]


def _run_on_read_only(book: Path, *args: str) -> Result:
    """Run `muse check` on `book` made read-only for real: chmod for a normal user; for root (who ignores
    permissions) a read-only bind mount in a private mount namespace, else the immutable attribute."""
    if os.geteuid() != 0:
        for p in [book, *book.rglob("*")]:
            p.chmod(p.stat().st_mode & ~0o222)
        try:
            return muse_subprocess("check", "--book", book, *args)
        finally:
            for p in [book, *book.rglob("*")]:
                p.chmod(p.stat().st_mode | 0o200)
    if shutil.which("unshare"):
        cmd = (
            f"mount --bind '{book}' '{book}' && mount -o remount,ro,bind '{book}' '{book}' || exit 97; "
            f"exec '{sys.executable}' -m novelmuse check --book '{book}' " + " ".join(args)
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
        env["MUSE_CONFIG"] = "/nonexistent/config.toml"
        proc = subprocess.run(["unshare", "-m", "sh", "-c", cmd], capture_output=True, text=True, env=env, timeout=120)
        if proc.returncode != 97 and "unshare failed" not in proc.stderr:
            return Result(proc.returncode, proc.stdout, proc.stderr)
    targets = [book, *[p for p in book.rglob("*")]]
    subprocess.run(["chattr", "+i", *map(str, targets)], check=True, capture_output=True)
    try:
        return muse_subprocess("check", "--book", book, *args)
    finally:
        subprocess.run(["chattr", "-i", *map(str, targets)], check=True, capture_output=True)


@pytest.mark.parametrize("with_db", [False, True])
def test_read_only_book_is_still_checked_and_says_so(muse: Any, tmp_path: Path, with_db: bool) -> None:
    book = small_book(tmp_path, "禁止:后宫\n")
    if with_db:
        assert muse("check", "--book", book).exit_code == 1
        assert (book / ".muse" / "muse.db").exists()
    r = _run_on_read_only(book, "--json")
    assert r.exit_code == 1, r.stderr  # the findings, not a crash
    doc = json.loads(r.stdout)
    assert doc["registry"]["outcome"] == "skipped" and "read-only" in doc["registry"]["reason"]
    assert "registry not updated" in r.stderr and "Traceback" not in r.stderr
    assert doc["summary"]["errors"] >= 1


def test_book_without_chapters_says_nothing_was_checked(muse: Any, tmp_path: Path) -> None:
    """Nothing is wrong with an empty book, but nothing was checked: the outcome is skipped, exit 4 (not
    evaluated), and neither the JSON outcome nor the terminal verdict reads as passed."""
    book = make_book(tmp_path / "empty", [], rules="")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 4 and "nothing was checked" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["summary"]["chapters"] == 0
    assert doc["outcome"] == "skipped" and "no chapters" in doc["reason"]
    r = muse("check", "--book", book)
    assert r.exit_code == 4
    assert r.stdout.startswith("skipped (the book has no chapters") and "passed" not in r.stdout


@pytest.mark.unsettled  # the damaged database is the subject
def test_corrupt_database_is_reported_but_the_check_still_runs(muse: Any, tmp_path: Path) -> None:
    book = small_book(tmp_path, "禁止:后宫\n")
    (book / ".muse").mkdir()
    (book / ".muse" / "muse.db").write_bytes(b"this is not a database" * 100)
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 1  # decided by the findings, not by the registry
    reg = json.loads(r.stdout)["registry"]
    assert reg["outcome"] == "error" and reg["code"] == "STORE_CORRUPT"
    assert "warning[STORE_CORRUPT]: chapter registry not updated" in r.stderr


def test_prologue_is_not_held_to_chapter_length(tmp_path: Path, muse) -> None:
    src = tmp_path / "novel.txt"
    src.write_text("作者的话：短序。\n\n第一章 开端\n" + "正文。" * 40 + "\n", encoding="utf-8")
    assert muse("import", src, "--into", tmp_path / "b").exit_code == 0
    toml = tmp_path / "b" / "book.toml"
    toml.write_text('[book]\ntitle = "t"\n[chapters]\nmin_chars = 100\n', encoding="utf-8")
    r = muse("check", "--book", tmp_path / "b", "--json")
    assert r.exit_code == 0, r.stdout
    by_number = {c["number"]: c["length"] for c in json.loads(r.stdout)["chapters"]}
    assert by_number[0]["outcome"] == "skipped" and "prologue" in by_number[0]["reason"]
    assert by_number[1]["outcome"] == "passed"


# ---- issue 15 item 5: gaps in the numbering, and the book's own word for a chapter --------------------------------


def test_missing_chapter_files_are_listed_as_gaps_in_the_books_words(muse: Any, tmp_path: Path) -> None:
    """A book of 回 with chapters 3-4 and 7 missing (deleted files, or an import with --allow-gaps): check lists
    the gaps in JSON and in the terminal, naming them 第3回–第4回 — not 第3章."""
    chapters = split_corpus(SANGUO.read_text(encoding="utf-8"))[:8]
    book = make_book(tmp_path / "b", chapters, rules="")
    for n in (3, 4, 7):
        (book / "chapters" / f"{n:04d}.md").unlink()
    r = muse("check", "--book", book, "--json")
    doc = json.loads(r.stdout)
    assert doc["gaps"] == [{"missing_from": 3, "missing_to": 4}, {"missing_from": 7, "missing_to": 7}]
    assert doc["summary"]["missing_chapters"] == 3
    r = muse("check", "--book", book)
    assert "missing chapter files (gaps in the numbering): 第3回–第4回, 第7回" in r.stdout
    assert "第3章" not in r.stdout + r.stderr
    # a range lists the gaps inside it only; one chapter has none; a complete book has none
    doc = json.loads(muse("check", "--book", book, "--range", "5-8", "--json").stdout)
    assert doc["gaps"] == [{"missing_from": 7, "missing_to": 7}]
    assert json.loads(muse("check", "--book", book, "--chapter", "5", "--json").stdout)["gaps"] == []
    (book / "chapters" / "0001.md").unlink()  # a book that starts at chapter 2 misses chapter 1
    assert json.loads(muse("check", "--book", book, "--json").stdout)["gaps"][0] == {
        "missing_from": 1,
        "missing_to": 1,
    }


def test_chapter_label_follows_the_books_headings(tmp_path: Path) -> None:
    from novelmuse.book import find_book

    sanguo = make_book(tmp_path / "s", split_corpus(SANGUO.read_text(encoding="utf-8"))[:3], rules="")
    assert find_book(sanguo).chapter_label(23) == "第23回"
    web = make_book(tmp_path / "w", [("第一章 开端", "正文。\n"), ("第二章 风起", "正文。\n")], rules="")
    assert find_book(web).chapter_label(23) == "第23章"
    english = make_book(tmp_path / "e", [("Chapter 1: Home", "Text.\n")], rules="")
    assert find_book(english).chapter_label(23) == "Chapter 23"
    bare = make_book(tmp_path / "n", [("", "正文。\n")], rules="")  # no heading line: the default
    assert find_book(bare).chapter_label(2) == "第2章" and find_book(bare).chapter_label(0) == "序"


def test_terminal_locations_are_file_and_line_beside_the_offsets(muse: Any, tmp_path: Path) -> None:
    """Every hit a person reads in the terminal says `chapters/NNNN.md:LINE` (1-based, the heading line counted)
    beside ¶paragraph@offset; the JSON keeps the offsets only."""
    body = "第一段，平平无奇。\n\n第二段也无事。\n第三段却有后宫二字，\r\n又有后宫。\n"
    book = make_book(tmp_path / "b", [("第一回 甲", "开篇。"), ("第二回 乙", body)], rules="禁止:后宫\n")
    r = muse("check", "--book", book, "--chapter", "2", "--json")
    hits = json.loads(r.stdout)["chapters"][0]["findings"][0]["hits"]
    assert hits == [[2, body.index("后宫"), body.index("后宫") + 2], [3, body.rindex("后宫"), body.rindex("后宫") + 2]]
    assert "md:" not in r.stdout  # offsets only in JSON
    r = muse("check", "--book", book, "--chapter", "2")
    assert r.exit_code == 1
    flat = " ".join(r.stdout.split())
    # the file: line 1 "# 第二回 乙", 2 第一段, 3 blank, 4 第二段, 5 第三段 (CRLF), 6 又有后宫
    for (para, start, end), line in zip(hits, (5, 6), strict=True):
        assert f"后宫 chapters/0002.md:{line} ¶{para}@{start}-{end}:" in flat, r.stdout


def test_json_is_compact_and_exactly_the_documented_document_pretty_indents_it(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The streamed --json (issue 17.3) is byte for byte the `CheckReport` document with its `exit` object, compact,
    and --pretty is what --json printed before (indented by 2); both on the plain and the vectorised path."""
    from novelmuse.book import find_book
    from novelmuse.rules import RegistryOut, _check, check_book

    text = SANGUO.read_text(encoding="utf-8")
    odd_titles = [('第1回　有"引号"与\\反斜杠', "空章？"), ("第2回　百分之%d%%", "涨了%d%s成，%d又%d。")]
    chapters = [*odd_titles, *split_corpus(text)[:6]]
    rules = "禁止:玄德、黄巾、%d\n疲劳词:曰≤3\n疲劳词:不可≤0\n"  # % in a target and a title: the writer formats with %
    book = make_book(tmp_path / "json", chapters, rules=rules, book_toml=LIMITS.replace("30", "9000"))
    for work in (10**18, -1):  # the plain path, then the vectorised one
        monkeypatch.setattr(_check, "PLAIN_PYTHON_WORK", work)
        monkeypatch.setattr(_check, "PLAIN_PYTHON_RULES", work)
        r = muse("check", "--book", book, "--json")
        doc = json.loads(r.stdout)
        want = check_book(find_book(book), update=False)
        want = want.model_copy(update={"registry": RegistryOut.model_validate(doc["registry"])})
        assert r.exit_code == 1 and sum(len(f["hits"]) for c in doc["chapters"] for f in c["findings"]) > 100
        full = {**want.model_dump(mode="json"), "exit": {"outcome": "findings", "code": 1}}
        assert r.stdout == json.dumps(full, ensure_ascii=False, separators=(",", ":")) + "\n"
        pretty = muse("check", "--book", book, "--json", "--pretty").stdout
        assert pretty == json.dumps(full, ensure_ascii=False, indent=2) + "\n"
    r = muse("check", "--book", book, "--pretty")
    assert r.exit_code == 2 and r.stderr.startswith("error[USAGE]: --pretty was given without --json")
