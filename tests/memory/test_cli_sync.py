"""`muse sync` / `muse cards` / `muse mentions` / `muse search` through the CLI, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novelmuse.book import Book

from ..conftest import muse_subprocess


def test_sync_redoes_only_the_edited_chapter_and_is_idempotent(muse, small_book: Book) -> None:
    d = small_book.root
    first = json.loads(muse("sync", "--book", d, "--json").stdout)
    assert first["added"] == [1, 2, 3, 4, 5, 6] and first["reindexed"] == [1, 2, 3, 4, 5, 6]
    assert first["facts_step"] == "skipped(no model configured)" and first["facts_stale"] == [1, 2, 3, 4, 5, 6]
    second = json.loads(muse("sync", "--book", d, "--json").stdout)
    assert second["reindexed"] == [] and second["rows_written"] == 0 and second["rows_deleted"] == 0
    assert second["unchanged"] == 6

    path = d / "chapters" / "0003.md"
    before = path.read_bytes()
    path.write_text(path.read_text(encoding="utf-8") + "\n张飞大笑，翼德曰：“再来！”\n", encoding="utf-8")
    edited = path.read_bytes()
    other_mtimes = {p.name: p.stat().st_mtime_ns for p in (d / "chapters").iterdir() if p.name != "0003.md"}
    third = json.loads(muse("sync", "--book", d, "--json").stdout)
    assert third["changed"] == [3] and third["reindexed"] == [3] and third["added"] == []
    n_chunks = small_book.db.execute("SELECT chunks FROM memory_chapters WHERE number = 3").fetchone()[0]
    n_ment = small_book.db.execute("SELECT count(*) FROM memory_mentions WHERE chapter = 3").fetchone()[0]
    assert third["rows_written"] == n_chunks + n_ment + 1  # exactly chapter 3's rows
    assert path.read_bytes() == edited != before  # sync never rewrites the author's file
    assert {p.name: p.stat().st_mtime_ns for p in (d / "chapters").iterdir() if p.name != "0003.md"} == other_mtimes
    registry = small_book.db.execute("SELECT sha256 FROM chapters WHERE number = 3").fetchone()[0]
    assert registry == small_book.read_chapter(3).sha256

    (d / "chapters" / "0006.md").unlink()
    fourth = json.loads(muse("sync", "--book", d, "--json").stdout)
    assert fourth["removed"] == [6] and fourth["reindexed"] == []
    assert small_book.db.execute("SELECT count(*) FROM memory_chunks WHERE chapter = 6").fetchone()[0] == 0


def test_human_sync_shows_stale_visibly(muse, small_book: Book) -> None:
    r = muse("sync", "--book", small_book.root)
    assert r.exit_code == 4  # the fact cards were left stale: not evaluated
    assert "skipped(no model configured)" in r.stdout and "STALE" in r.stdout


def test_cards_show_by_alias_with_sources(muse, small_book: Book) -> None:
    r = muse("cards", "show", "云长", "--as-of", "3", "--book", small_book.root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["id"] == "guan-yu" and doc["attributes"]["status"]["value"] == "alive"
    assert doc["attributes"]["status"]["source"] == {
        "kind": "author",
        "file": "cards/guan-yu.yaml",
        "line": 7,
        "chapter": None,
        "start": None,
        "end": None,
        "receipt_id": None,
        "fact_card_id": None,
    }
    assert {(r["type"], r["target"]) for r in doc["relations"]} == {("结义兄弟", "liu-bei"), ("结义兄弟", "zhang-fei")}
    human = muse("cards", "show", "关公", "--as-of", "3", "--book", small_book.root)
    assert "cards/guan-yu.yaml:7" in human.stdout
    assert doc["history"] is None
    hist = json.loads(
        muse("cards", "show", "玄德", "--as-of", "90", "--history", "--json", "--book", small_book.root).stdout
    )
    assert hist["attributes"]["status"]["value"] == "dead" and "title" not in hist["attributes"]  # title ended at 20
    assert [(v["value"], v["since"]) for v in hist["history"]["status"]] == [("alive", 1), ("dead", 85)]
    assert [(v["value"], v["since"]) for v in hist["history"]["title"]] == [("平原县令", 1)]
    missing = muse("cards", "show", "吕布", "--book", small_book.root, "--json")
    assert missing.exit_code == 2 and json.loads(missing.stdout)["error"]["code"] == "CARD_NOT_FOUND"


def test_cards_lint_reports_both_places(muse, small_book: Book) -> None:
    (small_book.cards_dir / "other.yaml").write_text(
        "id: other\ntype: character\nname: 关平\naliases: [云长]\n", encoding="utf-8"
    )
    r = muse("cards", "lint", "--book", small_book.root, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert [p["code"] for p in doc["problems"]] == ["CARD_ALIAS_CONFLICT"]
    p = doc["problems"][0]
    assert {p["where"], p["other"]} == {"cards/other.yaml:4", "cards/guan-yu.yaml:4"}  # where 云长 is written
    show = muse("cards", "show", "关羽", "--book", small_book.root)
    assert show.exit_code == 2 and "CARD_ALIAS_CONFLICT" in show.stderr


def test_mentions_and_search_cli_subprocess(small_book: Book) -> None:
    r = muse_subprocess("mentions", "玄德", "--before", "4", "--json", cwd=small_book.root)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (
        doc["id"] == "liu-bei"
        and doc["last_chapter"] == doc["chapters"][-1]["chapter"] == 2
        and all(c["chapter"] < 4 for c in doc["chapters"])
    )
    body = small_book.read_chapter(1).body
    first = doc["chapters"][0]
    assert first["chapter"] == 1 and all(body[a:b] == n for a, b, n in first["offsets"])
    s = muse_subprocess("search", "桃园结义", "--before", "6", "--json", cwd=small_book.root)
    assert s.exit_code == 0, s.stderr
    hits = json.loads(s.stdout)["hits"]
    assert hits[0]["chapter"] == 1
    assert "Building prefix dict" not in s.stderr  # jieba is silenced


def test_bad_card_file_names_file_and_line(muse, tmp_path: Path, small_book: Book) -> None:
    (small_book.cards_dir / "bad.yaml").write_text("id: bad\ntype: person\nname: 某\n", encoding="utf-8")
    r = muse("cards", "lint", "--book", small_book.root, "--json")
    p = json.loads(r.stdout)["problems"][0]
    assert p["code"] == "CARD_INVALID" and p["where"] == "cards/bad.yaml:2" and "type" in p["message"]


def test_isolated_search_does_not_change_when_the_book_grows(muse, tmp_path: Path) -> None:
    from novelmuse.memory import SearchIndex, load_cards, update_index

    from .conftest import write_book

    def results(book: Book, isolated: bool) -> list[tuple[int, int, float]]:
        cards = load_cards(book)
        update_index(book, cards)
        hits = SearchIndex(book, cards).search("玄德引兵", before=4, k=8, isolated=isolated)
        return [(h.chapter, h.start, round(h.score, 6)) for h in hits]

    short, long = write_book(tmp_path / "short", chapters=3), write_book(tmp_path / "long", chapters=12)
    assert results(short, True) == results(long, True) == results(short, False)
    assert results(long, False) != results(long, True)  # whole-book statistics move as the book grows
    doc = json.loads(
        muse("search", "玄德引兵", "--before", "4", "--isolated", "--k", "8", "--json", "--book", long.root).stdout
    )
    assert doc["isolated"] is True and [(h["chapter"], h["start"]) for h in doc["hits"]] == [
        (c, s) for c, s, _ in results(short, True)
    ]


def test_search_follows_edits_and_rebuilds_postings_only_when_tokens_move(muse, small_book: Book) -> None:
    d = small_book.root
    before = json.loads(muse("search", "乌龙茶", "--json", "--book", d).stdout)
    assert "乌龙茶" not in before["tokens"] and all(h["chapter"] != 4 for h in before["hits"])

    def generations() -> tuple[str, str]:
        rows = dict(small_book.db.execute("SELECT key, value FROM memory_meta").fetchall())
        return rows["generation"], rows["postings_generation"]

    first = generations()
    assert first[0] == first[1]
    muse("search", "桃园", "--json", "--book", d)
    assert generations() == first  # nothing changed: nothing rebuilt
    path = d / "chapters" / "0004.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n曹操独饮乌龙茶。\n", encoding="utf-8")
    r = muse("search", "乌龙茶", "--json", "--book", d)  # re-indexes the edited chapter first
    doc = json.loads(r.stdout)
    hits = doc["hits"]
    assert r.stderr == "index updated: chapters 1 changed\n" and doc["tokens"] == ["乌龙茶"]
    assert hits and hits[0]["chapter"] == 4 and "乌龙茶" in hits[0]["text"]
    assert doc["chapters"][0]["chapter"] == 4 and doc["chapters"][0]["best"] == hits[0]
    second = generations()
    assert second[0] == second[1] != first[0]


def test_search_over_chapters_without_words_finds_nothing_instead_of_crashing(muse, small_book: Book) -> None:
    """A book whose indexed chunks hold only punctuation has an empty BM25 vocabulary: no hit, exit 0
    (an empty vocabulary used to end in an internal error)."""
    d = small_book.root
    for p in (d / "chapters").iterdir():
        p.unlink()
    (d / "chapters" / "0001.md").write_text("# 第一章\n……\n！！\n", encoding="utf-8")
    r = muse("search", "桃园", "--json", "--book", d)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["hits"] == [] and doc["tokens"] == []
    r = muse("search", "桃园", "--before", "2", "--isolated", "--json", "--book", d)
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"] == []
    # words in a later chapter: the whole-book model exists, the isolated one before it has no words
    (d / "chapters" / "0002.md").write_text("# 第二章\n桃园结义。\n", encoding="utf-8")
    r = muse("search", "桃园", "--json", "--book", d)
    assert [h["chapter"] for h in json.loads(r.stdout)["hits"]] == [2]
    r = muse("search", "桃园", "--before", "2", "--isolated", "--json", "--book", d)
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"] == []


def test_sync_subprocess_stderr_is_empty_or_one_error_line(small_book: Book) -> None:
    """Off a terminal the progress bar is off: a clean sync writes nothing to stderr, a failing one exactly
    the one error line (a transient bar used to leave a blank line first)."""
    ok = muse_subprocess("sync", "--book", small_book.root)
    assert ok.exit_code == 4 and ok.stderr == "" and "STALE" in ok.stdout  # stale fact cards: not evaluated
    (small_book.root / "outlines").mkdir(exist_ok=True)
    (small_book.root / "outlines" / "0002.yaml").write_text("chapter: 2\nfoo: 1\n", encoding="utf-8")
    bad = muse_subprocess("sync", "--book", small_book.root)
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("error[OUTLINE_INVALID]: "), bad.stderr


def test_a_new_card_redoes_only_the_chapters_naming_it_and_mentions_stay_exact(
    muse, small_book: Book, tmp_path: Path
) -> None:
    import shutil

    from novelmuse.book import find_book
    from novelmuse.memory import (
        indexed_chapters,
        lexicon_sha256,
        load_cards,
        mention_names,
        naive_mentions,
        update_index,
    )

    d = small_book.root
    assert json.loads(muse("sync", "--book", d, "--json").stdout)["added"] == [1, 2, 3, 4, 5, 6]
    (d / "cards" / "zhang-jiao.yaml").write_text(
        "id: zhang-jiao\ntype: character\nname: 张角\naliases: [天公将军]\n", encoding="utf-8"
    )
    doc = json.loads(muse("sync", "--book", d, "--json").stdout)
    holding = [  # the chapters that write one of the new names: only those are redone (names are whole tokens)
        n
        for n in small_book.chapter_numbers()
        if any(w in small_book.read_chapter(n).body + small_book.read_chapter(n).heading for w in ("张角", "天公将军"))
    ]
    assert holding == [1, 2] and doc["relexed"] == holding and doc["changed"] == [] and doc["reindexed"] == holding
    names = mention_names(load_cards(small_book))
    got = json.loads(muse("mentions", "天公将军", "--json", "--book", d).stdout)
    expected = {}
    for n in small_book.chapter_numbers():
        count = sum(1 for m in naive_mentions(small_book.read_chapter(n).body, names) if m.card_id == "zhang-jiao")
        if count:
            expected[n] = count
    assert expected and {c["chapter"]: c["count"] for c in got["chapters"]} == expected
    assert json.loads(muse("sync", "--book", d, "--json").stdout)["reindexed"] == []  # and then nothing again
    # every chapter's row says it is current with the new lexicon (the writer's context fingerprints these)
    lex = lexicon_sha256(load_cards(small_book), small_book.config.memory.chunk_max_chars)
    assert {lx for _, lx in indexed_chapters(small_book.db).values()} == {lex}
    # the incremental index equals one built from scratch with the new card: tokens, postings, mentions
    fresh_root = tmp_path / "fresh"
    shutil.copytree(d, fresh_root, ignore=shutil.ignore_patterns(".muse"))
    fresh = find_book(fresh_root)
    update_index(fresh, load_cards(fresh))
    for sql in (
        "SELECT chapter, idx, tokens FROM memory_chunks ORDER BY chapter, idx",
        "SELECT number, heading_tokens FROM memory_chapters ORDER BY number",
        "SELECT token, docs, tfs FROM memory_postings ORDER BY token",
        "SELECT card_id, chapter, count, by_name, spans FROM memory_mentions ORDER BY card_id, chapter",
    ):
        assert small_book.db.execute(sql).fetchall() == fresh.db.execute(sql).fetchall(), sql


def test_sync_lists_the_chapters_a_fixed_number_of_times(small_book: Book, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading chapter N through Book.read_chapter lists the directory each time: over a 1,000-chapter book the
    memory spent most of its time listing (replay took 20 s for 1,000 chapters × 500 cards, now ~2 s)."""
    import asyncio

    from novelmuse.llm import ModelSession
    from novelmuse.memory import SyncResult, sync

    calls = 0
    listing = Book.chapter_paths

    def counting(self: Book) -> dict[int, Path]:
        nonlocal calls
        calls += 1
        return listing(self)

    monkeypatch.setattr(Book, "chapter_paths", counting)

    async def go() -> SyncResult:
        async with ModelSession.open(small_book, run_kind="sync") as session:
            return await sync(small_book, session)

    result = asyncio.run(go())
    assert result.index.added == [1, 2, 3, 4, 5, 6]
    assert calls <= 4, calls  # index, registry, replay (+ lint): independent of the number of chapters


def test_yaml_author_files_use_libyaml_when_available() -> None:
    import yaml

    from novelmuse.book import _yamlfile

    assert issubclass(_yamlfile._LineLoader, yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


def test_one_invalid_card_file_is_named_and_skipped_by_search_and_mentions(muse, small_book: Book) -> None:
    """Issue 15.6: every memory command exited 2 on one bad card file; search and mentions of other names
    now name it on stderr and go on, while the commands that replay the memory still refuse it."""
    d = small_book.root
    (d / "cards" / "bad.yaml").write_text("id: bad\ntype: person\nname: 董卓\n", encoding="utf-8")
    s = muse("search", "桃园结义", "--json", "--book", d)
    assert s.exit_code == 0 and json.loads(s.stdout)["chapters"][0]["chapter"] == 1
    assert "warning[CARD_INVALID]" in s.stderr and "cards/bad.yaml:2" in s.stderr
    m = muse("mentions", "关羽", "--json", "--book", d)
    assert m.exit_code == 0 and json.loads(m.stdout)["total"] > 0 and "cards/bad.yaml:2" in m.stderr
    gone = muse("mentions", "董卓", "--json", "--book", d)
    assert gone.exit_code == 2 and json.loads(gone.stdout)["error"]["code"] == "CARD_NOT_FOUND"
    assert "cards/bad.yaml" in json.loads(gone.stdout)["error"]["what"]
    for args in (("cards", "show", "关羽"), ("ledger",), ("sync",)):
        r = muse(*args, "--json", "--book", d)
        assert r.exit_code == 2 and json.loads(r.stdout)["error"]["where"] == "cards/bad.yaml:2", args
