"""`muse check`'s findings cache (`check_findings`): the same output, byte for byte, as a check without it, and a
chapter is scanned again exactly when its file, the phrase rules or the rules engine's code changed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from novelmuse.book import find_book
from novelmuse.rules import _check
from novelmuse.rules._check import CompiledRules, check_chapters, engine_sha256, load_book_rules
from tests.conftest import SANGUO
from tests.rules._books import make_book, split_corpus

RULES = "禁止:玄德\n禁止:不题\n疲劳词:曹操≤3\n疲劳词:却说≤0\n疲劳词:孔明≤5\n"


def corpus_book(root: Path, rules: str = RULES) -> Path:
    chapters = split_corpus(SANGUO.read_text(encoding="utf-8")[:120_000])
    assert len(chapters) >= 8
    chapters.append(chapters[1])  # two chapter files with the same text share one row
    return make_book(root, chapters, rules=rules)


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many texts each `CompiledRules.check_texts` call scanned, in order."""
    calls: list[int] = []
    real = CompiledRules.check_texts

    def counting(self: CompiledRules, texts: Any) -> Any:
        calls.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(CompiledRules, "check_texts", counting)
    return calls


def uncached(muse: Any, book: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    """`muse check ARGS` with the cache off (no rules key), stdout."""
    with monkeypatch.context() as m:
        m.setattr(CompiledRules, "cache_key", property(lambda self: None))
        r = muse("check", "--book", book, *args)
    assert r.exit_code == 1, r.stderr
    return str(r.stdout)


def checked(muse: Any, book: Path, *args: str) -> str:
    r = muse("check", "--book", book, *args)
    assert r.exit_code == 1, r.stderr
    return str(r.stdout)


def rows(book: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(book / ".muse" / "muse.db") as conn:
        return sorted(conn.execute("SELECT rules_key, chapter_sha256 FROM check_findings"))


def test_a_second_check_scans_nothing_and_prints_the_same_bytes(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    book = corpus_book(tmp_path / "b")
    n = len(list((book / "chapters").iterdir()))
    first = checked(muse, book, "--json")
    assert scanned == [n]  # every chapter scanned (the duplicate too: it was not cached yet)
    assert len(rows(book)) == n - 1  # one row per distinct chapter text
    second = checked(muse, book, "--json")
    assert scanned == [n]  # nothing scanned again
    assert second == first == uncached(muse, book, monkeypatch, "--json")
    assert checked(muse, book, "--json", "--pretty") == uncached(muse, book, monkeypatch, "--json", "--pretty")
    assert checked(muse, book) == uncached(muse, book, monkeypatch)  # the terminal rendering too
    assert json.loads(first)["summary"]["errors"] > 0


def test_a_changed_chapter_is_scanned_again_alone(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    book = corpus_book(tmp_path / "b")
    checked(muse, book, "--json")
    before = rows(book)
    path = book / "chapters" / "0003.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n玄德不题。\n", encoding="utf-8")
    scanned.clear()
    out = checked(muse, book, "--json")
    assert scanned == [1]
    assert out == uncached(muse, book, monkeypatch, "--json")
    after = rows(book)
    assert len(after) == len(before)  # the old text's row is dropped with the whole-book check, the new one added
    assert set(after) != set(before)


def test_a_check_of_one_chapter_uses_and_keeps_the_rows(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    book = corpus_book(tmp_path / "b")
    checked(muse, book, "--json")
    before = rows(book)
    scanned.clear()
    out = checked(muse, book, "--json", "--chapter", "2")
    assert scanned == []
    assert out == uncached(muse, book, monkeypatch, "--json", "--chapter", "2")
    assert rows(book) == before


def test_a_changed_rule_is_a_new_key_and_drops_the_old_rows(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    book = corpus_book(tmp_path / "b")
    checked(muse, book, "--json")
    old_keys = {k for k, _ in rows(book)}
    n = len(list((book / "chapters").iterdir()))
    for rules in (RULES.replace("曹操≤3", "曹操≤4"), RULES + "禁止:关公\n", RULES.replace("禁止:不题\n", "")):
        (book / "rules.txt").write_text(rules, encoding="utf-8")
        scanned.clear()
        out = checked(muse, book, "--json")
        assert scanned == [n], rules
        assert out == uncached(muse, book, monkeypatch, "--json")
        keys = {k for k, _ in rows(book)}
        assert len(keys) == 1 and not keys & old_keys
        old_keys |= keys


def test_a_comment_in_rules_txt_keeps_the_rows_and_the_origins_follow_the_file(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """What decides the findings is the phrase rules (phrase and occurrences allowed, in order); a finding's rule
    fields (origin with its line, severity, limit) come from the current rules.txt when it is decoded."""
    book = corpus_book(tmp_path / "b")
    first = checked(muse, book, "--json")
    (book / "rules.txt").write_text("# 三国\n\n" + RULES, encoding="utf-8")
    scanned.clear()
    out = checked(muse, book, "--json")
    assert scanned == []
    assert out == uncached(muse, book, monkeypatch, "--json")
    assert out != first  # the origins name the rules' new lines


def test_another_engine_is_another_key(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    book = corpus_book(tmp_path / "b")
    first = checked(muse, book, "--json")
    n = len(list((book / "chapters").iterdir()))
    monkeypatch.setattr(_check, "engine_sha256", lambda: "0" * 64)  # as after an upgrade of the engine's code
    scanned.clear()
    assert checked(muse, book, "--json") == first
    assert scanned == [n]
    assert len({k for k, _ in rows(book)}) == 1


def test_the_engine_hash_covers_its_source_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from novelmuse.rules import _match

    now = engine_sha256()
    assert now is not None and len(now) == 64
    changed = tmp_path / "_match.py"
    changed.write_bytes(Path(_match.__file__).read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(_match, "__file__", str(changed))
    engine_sha256.cache_clear()
    try:
        assert engine_sha256() not in (None, now)
        monkeypatch.setattr(_match, "__file__", str(tmp_path / "gone.py"))
        engine_sha256.cache_clear()
        assert engine_sha256() is None  # unreadable: no key, nothing cached
    finally:
        engine_sha256.cache_clear()


def test_a_damaged_row_is_scanned_again(
    muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    book = corpus_book(tmp_path / "b")
    first = checked(muse, book, "--json")
    with sqlite3.connect(book / ".muse" / "muse.db") as conn:
        (sha,) = conn.execute("SELECT chapter_sha256 FROM check_findings LIMIT 1").fetchone()
        blob = conn.execute("SELECT findings FROM check_findings WHERE chapter_sha256 = ?", (sha,)).fetchone()[0]
        for bad in (blob[:-8], blob[:-3], b"", (10**6).to_bytes(8, sys.byteorder) + blob[8:]):
            conn.execute("UPDATE check_findings SET findings = ? WHERE chapter_sha256 = ?", (bad, sha))
            conn.commit()
            scanned.clear()
            assert checked(muse, book, "--json") == first
            assert scanned == [1]
    conn.close()


def test_a_killed_check_leaves_no_row_and_the_next_one_is_right(tmp_path: Path) -> None:
    book = corpus_book(tmp_path / "b")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    env["MUSE_CONFIG"] = "/nonexistent/novelmuse-user-config.toml"
    run = [sys.executable, "-m", "novelmuse", "check", "--json", "--book", str(book)]
    reference = subprocess.run(run, env=env, capture_output=True, timeout=300)
    assert reference.returncode == 1, reference.stderr
    with sqlite3.connect(book / ".muse" / "muse.db") as conn:
        conn.execute("DELETE FROM check_findings")
        conn.commit()
    conn.close()
    # killed (os._exit, as kill -9: no cleanup) just before the findings' transaction commits
    dying = (
        "import os, sys\n"
        "from novelmuse import iopoints\n"
        "from novelmuse.cli import main\n"
        "from novelmuse.rules import _check\n"
        "store = _check.store_findings\n"
        "def killed(*args, **kwargs):\n"
        "    with iopoints.hooked(lambda kind, target: os._exit(137) if kind == 'commit' else None):\n"
        "        store(*args, **kwargs)\n"
        "_check.store_findings = killed\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    died = subprocess.run([sys.executable, "-c", dying, *run[3:]], env=env, capture_output=True, timeout=300)
    assert died.returncode == 137, died.stderr
    assert rows(book) == []
    again = subprocess.run(run, env=env, capture_output=True, timeout=300)
    assert again.returncode == 1 and again.stdout == reference.stdout
    assert len(rows(book)) == len(list((book / "chapters").iterdir())) - 1


def test_encoded_findings_decode_to_the_same_findings_from_either_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = find_book(corpus_book(tmp_path / "b"))
    compiled = CompiledRules(load_book_rules(book).effective)
    texts = [body for _, body in split_corpus(SANGUO.read_text(encoding="utf-8")[:120_000])]
    plain = compiled.check_texts(texts)
    monkeypatch.setattr(_check, "PLAIN_PYTHON_RULES", 0)
    monkeypatch.setattr(_check, "PLAIN_PYTHON_WORK", 0)
    vectorised = compiled.check_texts(texts)  # numpy arrays shared by every text of a batch

    def shown(findings: list[Any]) -> list[tuple[Any, ...]]:
        return [(f.rule, f.target, f.limit, f.actual, f.severity, f.origin, f.hits()) for f in findings]

    assert any(plain)
    for p, v in zip(plain, vectorised, strict=True):
        data = compiled.encode_findings(p)
        assert compiled.encode_findings(v) == data
        decoded = compiled.decode_findings(data)
        assert decoded is not None and shown(decoded) == shown(p) == shown(v)


def test_a_check_without_update_does_not_use_the_store(tmp_path: Path, scanned: list[int]) -> None:
    book = find_book(corpus_book(tmp_path / "b"))
    check_chapters(book, update=False)
    check_chapters(book, update=False)
    assert scanned == [len(book.chapter_paths())] * 2
    assert not (book.root / ".muse" / "muse.db").exists()
