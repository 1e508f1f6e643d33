"""What the memory commands say (issue 15.5, 15.6): relation targets by name and notes, --as-of beyond the last
chapter, the per-name breakdown of mentions, and ledger/sync exit 1 when the replayed memory has errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novelmuse.book import Book


def test_cards_show_prints_relation_targets_by_name_and_value_notes(
    muse, small_book: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line
    path = small_book.cards_dir / "guan-yu.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "{value: alive, from: 1, to: 76}", "{value: alive, from: 1, to: 76, note: 温酒斩华雄时仍是马弓手}"
    )
    text = text.replace(
        "{type: 结义兄弟, target: liu-bei, from: 1}", "{type: 结义兄弟, target: liu-bei, from: 1, note: 桃园}"
    )
    path.write_text(text, encoding="utf-8")
    doc = json.loads(muse("cards", "show", "关羽", "--as-of", "3", "--json", "--book", small_book.root).stdout)
    assert doc["attributes"]["status"]["note"] == "温酒斩华雄时仍是马弓手"
    rels = {r["target"]: r for r in doc["relations"]}
    assert rels["liu-bei"]["target_name"] == "刘备" and rels["liu-bei"]["note"] == "桃园"
    assert rels["zhang-fei"]["target_name"] == "张飞" and rels["zhang-fei"]["note"] == ""
    assert doc["last_chapter"] == 6 and doc["beyond_last"] is False
    human = muse("cards", "show", "关羽", "--as-of", "3", "--book", small_book.root).stdout
    assert "刘备 (liu-bei)" in human and "温酒斩华雄时仍是马弓手" in human and "桃园" in human
    assert "after the last chapter" not in human


def test_as_of_beyond_the_last_chapter_says_so(muse, small_book: Book) -> None:
    doc = json.loads(muse("cards", "show", "关羽", "--as-of", "90", "--json", "--book", small_book.root).stdout)
    assert doc["as_of"] == 90 and doc["last_chapter"] == 6 and doc["beyond_last"] is True
    assert doc["attributes"]["status"]["value"] == "dead"  # the author's card dates his death at 77
    human = muse("cards", "show", "关羽", "--as-of", "90", "--book", small_book.root).stdout
    assert "note: chapter 90 is after the last chapter (6)" in human
    ledger = muse("ledger", "--as-of", "90", "--json", "--book", small_book.root)
    assert ledger.exit_code == 0 and json.loads(ledger.stdout)["beyond_last"] is True
    assert "after the last chapter (6)" in muse("ledger", "--as-of", "90", "--book", small_book.root).stdout


def test_mentions_show_the_per_name_breakdown(muse, small_book: Book) -> None:
    doc = json.loads(muse("mentions", "刘备", "--json", "--book", small_book.root).stdout)
    assert list(doc["by_name"]) == ["刘备", "玄德", "刘玄德", "刘皇叔"]  # every name, in the card's order
    assert sum(doc["by_name"].values()) == doc["total"] and doc["by_name"]["玄德"] > doc["by_name"]["刘备"]
    headings = {n: small_book.read_chapter(n).heading for n in small_book.chapter_numbers()}
    for c in doc["chapters"]:
        assert sum(c["by_name"].values()) == c["count"] == len(c["offsets"]) + c["in_heading"]
        in_heading = {n: headings[c["chapter"]].count(n) for n in c["by_name"]}
        assert c["by_name"] == {n: sum(1 for *_, m in c["offsets"] if m == n) + in_heading[n] for n in c["by_name"]}
    human = muse("mentions", "刘备", "--book", small_book.root).stdout
    assert "by name: 刘备 " in human and f"玄德 {doc['by_name']['玄德']}" in human


def test_a_name_written_only_in_a_heading_is_a_mention(muse, small_book: Book) -> None:
    """The 回目 names the card: a mention, though the body never writes it (counted, marked, in the JSON)."""
    (small_book.root / "cards" / "zhen-ji.yaml").write_text("id: zhen-ji\ntype: character\nname: 甄姬\n", "utf-8")
    path = small_book.chapters_dir / "0002.md"
    head, _, body = path.read_text(encoding="utf-8").partition("\n")
    path.write_text(head + "　甄姬入宫\n" + body, encoding="utf-8")
    doc = json.loads(muse("mentions", "甄姬", "--json", "--book", small_book.root).stdout)
    assert doc["total"] == 1 and doc["by_name"] == {"甄姬": 1}
    [two] = doc["chapters"]
    assert (two["chapter"], two["in_heading"], two["count"], two["offsets"]) == (2, 1, 1, [])
    human = muse("mentions", "甄姬", "--book", small_book.root).stdout
    assert "2:1*" in human and "heading (回目)" in human


def test_foreshadow_errors_make_ledger_and_sync_exit_1(muse, small_book: Book) -> None:
    outlines = small_book.root / "outlines"
    outlines.mkdir()
    (outlines / "0001.yaml").write_text(
        "chapter: 1\nforeshadows:\n  - {op: plant, id: F-seal, description: 玉玺}\n", encoding="utf-8"
    )
    (outlines / "0002.yaml").write_text(
        "chapter: 2\nforeshadows:\n  - {op: resolve, id: F-ghost}\n  - {op: plant, id: F-seal, description: 又一次}\n",
        encoding="utf-8",
    )
    r = muse("ledger", "--json", "--book", small_book.root)
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["ok"] is False
    assert [p["code"] for p in doc["problems"]] == ["FORESHADOW_UNKNOWN", "FORESHADOW_DUPLICATE"]
    assert muse("ledger", "--as-of", "1", "--json", "--book", small_book.root).exit_code == 0  # before them
    s = muse("sync", "--json", "--book", small_book.root)
    assert s.exit_code == 1 and json.loads(s.stdout)["ok"] is False
    human = muse("ledger", "--book", small_book.root)
    assert human.exit_code == 1 and "error[FORESHADOW_UNKNOWN]" in human.stdout


@pytest.mark.parametrize("command", [("search", "桃园"), ("mentions", "关羽"), ("sync",)])
def test_the_first_search_or_mentions_shows_the_progress_bar_sync_shows(
    muse, small_book: Book, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    """Issue 15.4: the first search/mentions built the index silently for 12–20 s on a whole novel."""
    import io

    from rich.console import Console

    from novelmuse.cli import _cmd_memory

    screen = io.StringIO()
    monkeypatch.setattr(_cmd_memory, "err_console", Console(file=screen, force_terminal=True, width=100))
    ok = 4 if command == ("sync",) else 0  # sync with no extractor model leaves the fact cards stale: not evaluated
    assert muse(*command, "--book", small_book.root).exit_code == ok
    shown = screen.getvalue()
    assert "indexing" in shown and "6/6" in shown and "search index" in shown
    screen.truncate(0)
    screen.seek(0)
    assert muse(*command, "--book", small_book.root).exit_code == ok
    assert "indexing" not in screen.getvalue()  # nothing to redo: no bar


def test_cards_show_reads_the_cached_replay_until_any_input_changes(
    muse, small_book: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17.4: the replay is cached per card keyed by the hash of every input — a second `cards show` does
    not replay, and any change (a card, a chapter, an outline, a new fact card) replays again."""
    from novelmuse.memory import _statecache, card_view, replay, store_fact_card
    from novelmuse.roles.extractor import FactCardOutput

    replays = 0
    real = _statecache.replay

    def counting(book: Book) -> object:
        nonlocal replays
        replays += 1
        return real(book)

    monkeypatch.setattr(_statecache, "replay", counting)

    def same_as_replay(name: str, as_of: int) -> None:
        view = card_view(small_book, name, as_of, history=True)
        state = replay(small_book)
        cid = state.cards.require(name).id
        assert view.state == state.index.card_as_of(cid, as_of)
        assert view.history == state.index.history(cid, as_of) and view.facts_status == state.facts_status

    same_as_replay("关羽", 3)
    assert replays == 1
    for name, n in [("云长", 90), ("刘备", 20), ("liu-bei", 85), ("曹操", 0), ("诸葛亮", 36)]:
        same_as_replay(name, n)
    assert replays == 1  # every card from the cache
    doc = json.loads(muse("cards", "show", "玄德", "--as-of", "90", "--json", "--book", small_book.root).stdout)
    assert doc["attributes"]["status"]["value"] == "dead" and replays == 1

    card = small_book.cards_dir / "liu-bei.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("平原县令", "安喜县尉"), encoding="utf-8")
    same_as_replay("刘备", 5)
    assert replays == 2 and card_view(small_book, "刘备", 5).state.attributes["title"].value == "安喜县尉"
    empty = FactCardOutput.model_validate({"events": [], "foreshadows": [], "relations": [], "states": []})
    store_fact_card(small_book.db, small_book.read_chapter(2), empty, prompt_sha256="p" * 64, model="m")
    same_as_replay("刘备", 5)
    assert replays == 3 and card_view(small_book, "刘备", 5).facts_status[2] == "current"
    path = small_book.chapters_dir / "0002.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n补一句。\n", encoding="utf-8")
    same_as_replay("刘备", 5)
    assert replays == 4 and card_view(small_book, "刘备", 5).facts_status[2] == "stale"
    (small_book.root / "outlines").mkdir()
    (small_book.root / "outlines" / "0003.yaml").write_text("chapter: 3\n", encoding="utf-8")
    same_as_replay("刘备", 5)
    assert replays == 5


def test_search_hits_are_located_by_file_and_line(muse, small_book: Book) -> None:
    """issue 16.4: each chapter's best chunk reads `chapters/0001.md:LINE [start:end]` in the terminal; the JSON keeps
    the offsets only."""
    doc = json.loads(muse("search", "桃园", "--json", "--book", small_book.root).stdout)
    assert "md:" not in json.dumps(doc["chapters"])
    human = muse("search", "桃园", "--book", small_book.root).stdout
    for c in doc["chapters"]:
        best = c["best"]
        chapter = small_book.read_chapter(c["chapter"])
        line = chapter.first_line + chapter.body.count("\n", 0, best["start"])
        assert f"chapters/{c['chapter']:04d}.md:{line} [{best['start']}:{best['end']}]" in human, human


def test_cards_new_and_list_on_a_fresh_book(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A fresh book: mentions says how to add a card; `cards new` writes a commented template that lints clean, never
    over a card or file; `cards list` shows it."""
    root = tmp_path / "fresh"
    assert muse("init", root).exit_code == 0
    none = muse("mentions", "刘备", "--book", root)
    assert none.exit_code == 2 and "muse cards new 刘备" in none.stderr
    assert "no card yet" in muse("cards", "list", "--book", root).stdout
    made = muse("cards", "new", "刘备", "--id", "liu-bei", "--json", "--book", root)
    assert made.exit_code == 0 and json.loads(made.stdout)["path"] == "cards/liu-bei.yaml"
    before = (root / "cards" / "liu-bei.yaml").read_bytes()
    assert muse("cards", "lint", "--book", root).exit_code == 0
    again = muse("cards", "new", "刘备", "--book", root)
    assert (
        again.exit_code == 2 and again.stderr.startswith("error[CARD_EXISTS]") and "cards/liu-bei.yaml" in again.stderr
    )
    (root / "cards" / "关羽.yaml").write_text("# the author's own file\n", encoding="utf-8")
    taken = muse("cards", "new", "关羽", "--book", root)
    assert taken.exit_code == 2 and "CARD_EXISTS" in taken.stderr
    assert (root / "cards" / "关羽.yaml").read_text(encoding="utf-8") == "# the author's own file\n"
    (root / "cards" / "关羽.yaml").unlink()
    assert (root / "cards" / "liu-bei.yaml").read_bytes() == before
    listed = json.loads(muse("cards", "list", "--json", "--book", root).stdout)["cards"]
    assert [(c["id"], c["name"], c["type"]) for c in listed] == [("liu-bei", "刘备", "character")]
    assert muse("cards", "new", "con", "--book", root).exit_code == 2  # a name no system can use as a file
    assert muse("cards", "new", "洛阳", "--kind", "city", "--book", root).exit_code == 2
