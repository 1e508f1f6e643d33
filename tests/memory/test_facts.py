"""Fact cards: deterministic validation (plant cap, unknown foreshadows, dead cards acting), the ledger
with outline-declared plants and overdue flags, as-of with fact sources, and extraction through the
scripted provider (correction, then fail closed after the call budget)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from novelmuse.book import Book, find_book
from novelmuse.errors import FailedClosed
from novelmuse.llm import Message, ModelSession
from novelmuse.memory import CardSet, active_foreshadows, extract_facts, replay, store_fact_card
from novelmuse.roles.extractor import FactCardOutput

from .conftest import BOOK_TOML, write_book

Q1 = [  # sentences found exactly once in chapter 1, in text order
    "话说天下大势，分久必合，合久必分。",
    "光和元年，雌鸡化雄。",
    "帝尊信张让，呼为阿父。",
    "角遣其党马元义暗赍金帛，结交中涓封谞以为内应。",
    "刘焉然其说，随即出榜招募义兵。",
]
Q2 = ["儁令玄德为其先锋，与贼对敌。", "玄德连忙回军，军中大乱，败阵而归。", "发张角之棺，戮尸枭首，送往京师。"]
Q3 = ["进乃暗差使命赍密诏，星夜往各镇去。", "望娘娘宣大将军入宫谕止之。", "汝言我等甚浊，其清者是谁？"]


def out(**lists: list[dict[str, Any]]) -> FactCardOutput:
    return FactCardOutput.model_validate({"events": [], "foreshadows": [], "relations": [], "states": [], **lists})


def plant(fid: str, quote: str, payoff: int | None = None) -> dict[str, Any]:
    return {"op": "plant", "id": fid, "description": f"伏笔{fid}", "payoff_chapter": payoff, "quote": quote}


def op(kind: str, fid: str, quote: str) -> dict[str, Any]:
    return {"op": kind, "id": fid, "description": "", "payoff_chapter": None, "quote": quote}


def store(book: Book, n: int, output: FactCardOutput, receipt: str = "R-test") -> None:
    store_fact_card(book.db, book.read_chapter(n), output, prompt_sha256="p" * 64, model="m", receipt_id=receipt)


def test_four_plants_reject_the_fourth_with_plant_cap(small_book: Book) -> None:
    # given in a shuffled order: the cap keeps the first three *in the text*
    store(
        small_book, 1, out(foreshadows=[plant("F4", Q1[3]), plant("F1", Q1[0]), plant("F3", Q1[2]), plant("F2", Q1[1])])
    )
    state = replay(small_book)
    v = state.validations[1]
    assert [(p.code, p.item) for p in v.rejected] == [("FORESHADOW_PLANT_CAP", "foreshadows[0]")]
    assert "F4" in v.rejected[0].detail
    assert [a.id for a in state.active_foreshadows(1).items] == ["F1", "F2", "F3"]
    assert [p.code for p in state.problems] == ["FORESHADOW_PLANT_CAP"]  # shown, never silently dropped


def test_cap_is_configurable_and_outline_plants_count_first(tmp_path: Path) -> None:
    book = write_book(tmp_path / "b", chapters=2, toml=BOOK_TOML + "max_plants_per_chapter = 1\n")
    (book.root / "outlines").mkdir()
    (book.root / "outlines" / "0001.yaml").write_text(
        "chapter: 1\nforeshadows:\n  - {op: plant, id: F-outline, description: 天书三卷}\n", encoding="utf-8"
    )
    store(book, 1, out(foreshadows=[plant("F-outline", Q1[1]), plant("F-new", Q1[2])]))
    state = replay(book)
    assert [p.code for p in state.validations[1].rejected] == ["FORESHADOW_PLANT_CAP"]
    assert state.validations[1].accepted == ["foreshadows[0]"]  # the outline's own plant, confirmed
    assert [a.id for a in state.active_foreshadows(2).items] == ["F-outline"]


def test_advance_or_resolve_unknown_or_resolved_is_an_error(small_book: Book) -> None:
    store(small_book, 1, out(foreshadows=[plant("F1", Q1[0])]))
    store(
        small_book,
        2,
        out(foreshadows=[op("advance", "F1", Q2[0]), op("resolve", "F-nope", Q2[1]), op("resolve", "F1", Q2[2])]),
    )
    store(small_book, 3, out(foreshadows=[op("advance", "F1", Q3[0])]))
    state = replay(small_book)
    assert [(p.code, p.item) for p in state.validations[2].rejected] == [("FORESHADOW_UNKNOWN", "foreshadows[1]")]
    assert [p.code for p in state.validations[3].rejected] == ["FORESHADOW_RESOLVED"]
    f1 = state.ledger.items["F1"]
    assert f1.advanced == [2] and f1.resolved_chapter == 2 and f1.resolved_source is not None
    assert f1.resolved_source.receipt_id == "R-test"
    assert [a.id for a in state.active_foreshadows(1).items] == ["F1"]
    assert state.active_foreshadows(2).items == []


def _outlines(book: Book, docs: dict[int, str]) -> None:
    (book.root / "outlines").mkdir(exist_ok=True)
    for n, text in docs.items():
        (book.root / "outlines" / f"{n:04d}.yaml").write_text(text, encoding="utf-8")


def test_ledger_from_outlines_alone_and_overdue_follows_payoff(small_book: Book) -> None:
    _outlines(
        small_book,
        {
            1: "chapter: 1\nforeshadows:\n"
            "  - {op: plant, id: F-sword, description: 张飞许诺打造兵器, payoff_chapter: 3}\n"
            "  - {op: plant, id: F-free, description: 没有回收期限的伏笔}\n",
            2: "chapter: 2\nforeshadows:\n  - {op: advance, id: F-sword}\n",
            5: "chapter: 5\nforeshadows:\n  - {op: resolve, id: F-sword}\n  - {op: resolve, id: F-ghost}\n",
        },
    )
    state = replay(small_book)  # no model, no fact card: the ledger still works
    at3 = {a.id: a for a in state.active_foreshadows(3).items}
    assert at3["F-sword"].overdue is False and at3["F-sword"].last_advanced_chapter == 2 and at3["F-sword"].age == 2
    at4 = {a.id: a for a in state.active_foreshadows(4).items}
    assert at4["F-sword"].overdue is True and at4["F-sword"].overdue_rule == "payoff"
    assert at4["F-free"].overdue is False and at4["F-free"].overdue_rule == "none"
    assert at4["F-sword"].source.file == "outlines/0001.yaml" and at4["F-sword"].source.line == 3
    assert [a.id for a in state.active_foreshadows(5).items] == ["F-free"]
    assert [(p.code, p.item) for p in state.problems] == [("FORESHADOW_UNKNOWN", "outlines/0005.yaml:4")]
    limited = active_foreshadows(small_book, as_of=4, limit=1)
    assert len(limited.items) == 1 and limited.total == 2 and limited.left_out == 1


def test_overdue_default_age_rule(tmp_path: Path) -> None:
    book = write_book(tmp_path / "b", chapters=1, toml=BOOK_TOML + "overdue_default_age = 10\n")
    _outlines(book, {1: "chapter: 1\nforeshadows:\n  - {op: plant, id: F, description: x}\n"})
    state = replay(book)
    assert state.active_foreshadows(11).items[0].overdue is False
    a = state.active_foreshadows(12).items[0]
    assert a.overdue is True and a.overdue_rule == "default_age" and a.age == 11


def test_ledger_cli_overdue_and_limit(muse, small_book: Book) -> None:
    _outlines(
        small_book,
        {
            1: "chapter: 1\nforeshadows:\n  - {op: plant, id: A, description: a, payoff_chapter: 2}\n"
            "  - {op: plant, id: B, description: b, payoff_chapter: 9}\n"
            "  - {op: plant, id: C, description: c, payoff_chapter: 3}\n"
        },
    )
    doc = json.loads(muse("ledger", "--as-of", "4", "--overdue", "--json", "--book", small_book.root).stdout)
    assert [i["id"] for i in doc["items"]] == ["A", "C"] and doc["total"] == 2 and doc["left_out"] == 0
    doc = json.loads(muse("ledger", "--as-of", "4", "--limit", "1", "--json", "--book", small_book.root).stdout)
    assert [i["id"] for i in doc["items"]] == ["A"] and doc["total"] == 3 and doc["left_out"] == 2
    assert doc["facts_missing"] == [1, 2, 3, 4] and doc["facts_stale"] == []
    human = muse("ledger", "--as-of", "4", "--limit", "1", "--book", small_book.root).stdout
    assert "OVERDUE" in human and "2 more not shown" in human
    assert "no fact cards for chapters 1-4" in human


def _kill_guan_yu_at(book: Book, chapter: int, word: str = "dead") -> None:
    text = (book.cards_dir / "guan-yu.yaml").read_text(encoding="utf-8")
    text = text.replace("{value: alive, from: 1, to: 76}", f"{{value: alive, from: 1, to: {chapter - 1}}}")
    text = text.replace("{value: dead, from: 77}", f"{{value: {word}, from: {chapter}}}")
    (book.cards_dir / "guan-yu.yaml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("word", ["dead", "阵亡", "Dead"])
def test_dead_card_acting_is_rejected_unless_declared(small_book: Book, word: str) -> None:
    _kill_guan_yu_at(small_book, 2, word)
    ev_acts = {"summary": "云长显圣", "actors": ["云长"], "quote": Q3[0]}
    ev_named = {"summary": "众人忆关公", "actors": ["曹操"], "quote": Q3[1]}
    ev_same_chapter = {"summary": "关羽斩将", "actors": ["关羽"], "quote": Q2[0]}
    store(small_book, 2, out(events=[ev_same_chapter]))  # dead from 2: acting in chapter 2 itself is fine
    store(small_book, 3, out(events=[ev_acts, ev_named]))
    state = replay(small_book)
    assert state.validations[2].rejected == []
    assert [(p.code, p.item) for p in state.validations[3].rejected] == [("CARD_DEAD_ACTS", "events[0]")]
    assert state.validations[3].accepted == ["events[1]"]  # being named or remembered is fine
    _outlines(small_book, {3: "chapter: 3\nnew_settings:\n  - {text: 关公显圣, entities: [关公]}\n"})
    assert replay(small_book).validations[3].rejected == []


def test_a_dead_card_is_not_revived_without_a_declaration(small_book: Book) -> None:
    _kill_guan_yu_at(small_book, 2)
    revive = {"entity": "云长", "attribute": "status", "value": "alive", "quote": Q3[0]}
    store(small_book, 3, out(states=[revive]))
    state = replay(small_book)
    assert [p.code for p in state.validations[3].rejected] == ["CARD_DEAD_REVIVED"]
    assert state.card_as_of("关羽", 3).attributes["status"].value == "dead"
    _outlines(small_book, {3: "chapter: 3\nnew_settings:\n  - {text: 关羽复生, entities: [guan-yu]}\n"})
    state = replay(small_book)
    assert state.validations[3].rejected == [] and state.card_as_of("关羽", 3).attributes["status"].value == "alive"


def test_fact_state_changes_feed_as_of_with_sources_and_go_stale_on_edit(small_book: Book) -> None:
    state_item = {"entity": "玄德", "attribute": "location", "value": "阳城", "quote": Q2[1]}
    unknown = {"entity": "路人甲", "attribute": "status", "value": "dead", "quote": Q2[2]}
    rel = {"source": "刘备", "target": "诸葛亮", "relation": "君臣", "change": "start", "quote": Q2[0]}
    store(small_book, 2, out(states=[state_item, unknown], relations=[rel]), receipt="R-2")
    state = replay(small_book)
    assert [p.code for p in state.validations[2].rejected] == ["FACT_UNKNOWN_ENTITY"]
    assert "location" not in state.card_as_of("刘备", 1).attributes
    loc = state.card_as_of("刘皇叔", 2).attributes["location"]
    body = small_book.read_chapter(2).body
    assert loc.value == "阳城" and loc.since == 2 and loc.source.kind == "fact" and loc.source.receipt_id == "R-2"
    assert loc.source.start is not None and body[loc.source.start : loc.source.end] == Q2[1]
    rels = {(r.type, r.target) for r in state.card_as_of("刘备", 3).relations}
    assert ("君臣", "zhuge-liang") in rels
    # the author's card value at the same chapter wins over the fact card
    assert state.card_as_of("刘备", 2).attributes["title"].source.kind == "author"
    assert state.facts_status[2] == "current" and state.facts_status[1] == "missing"
    path = small_book.chapter_path(2)
    path.write_text(path.read_text(encoding="utf-8") + "\n补一句。\n", encoding="utf-8")
    state = replay(small_book)
    assert state.facts_status[2] == "stale" and "location" not in state.card_as_of("刘备", 2).attributes


def test_cards_show_says_which_fact_cards_are_left_out(muse, small_book: Book) -> None:
    state_item = {"entity": "玄德", "attribute": "location", "value": "阳城", "quote": Q2[1]}
    store(small_book, 2, out(states=[state_item]))
    d = small_book.root
    doc = json.loads(muse("cards", "show", "刘备", "--as-of", "3", "--json", "--book", d).stdout)
    assert doc["attributes"]["location"]["value"] == "阳城"
    assert doc["facts_stale"] == [] and doc["facts_missing"] == [1, 3]  # chapters ≤ 3 only
    path = small_book.chapter_path(2)
    path.write_text(path.read_text(encoding="utf-8") + "\n补一句。\n", encoding="utf-8")
    doc = json.loads(muse("cards", "show", "刘备", "--as-of", "3", "--json", "--book", d).stdout)
    assert "location" not in doc["attributes"] and doc["facts_stale"] == [2] and doc["facts_missing"] == [1, 3]
    human = muse("cards", "show", "刘备", "--as-of", "3", "--book", d).stdout
    assert "fact cards STALE for chapters 2" in human and "no fact cards for chapters 1,3" in human


def test_store_refuses_a_quote_not_found(small_book: Book) -> None:
    with pytest.raises(FailedClosed) as ei:
        store(small_book, 1, out(events=[{"summary": "x", "actors": [], "quote": "这句话不在正文里面"}]))
    assert ei.value.code == "CONTRACT_QUOTE_NOT_FOUND"
    assert small_book.db.execute("SELECT count(*) FROM fact_cards").fetchone()[0] == 0


# ── extraction through the scripted provider ────────────────────────────────────────────────────


def scripted_book(root: Path, script: dict[str, Any], *, chapters: int = 2) -> Book:
    toml = (
        BOOK_TOML
        + '\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\ndefault = "s:scripted-model-1"\n'
    )
    write_book(root, chapters=chapters, toml=toml)
    (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    return find_book(root)


GOOD_1 = {
    "events": [{"summary": "刘焉招兵", "actors": ["刘焉"], "quote": Q1[4]}],
    "foreshadows": [plant("F-tianshu", Q1[3], 5)],
    "relations": [],
    "states": [],
}
BAD_1 = {**GOOD_1, "events": [{"summary": "虚构", "actors": [], "quote": "桃园三结义天下无双"}]}


async def _extract(book: Book, n: int) -> Any:
    async with ModelSession.open(book, run_kind="test") as session:
        return await extract_facts(session, book, n)


def test_extraction_corrects_a_quote_not_in_the_text(tmp_path: Path) -> None:
    book = scripted_book(tmp_path / "b", {"extractor": [{"output": BAD_1}, {"output": GOOD_1}]})
    result = asyncio.run(_extract(book, 1))
    assert result.attempts == 2 and len(result.receipt_ids) == 2
    fc = result.fact_card
    assert fc.chapter_sha256 == book.read_chapter(1).sha256 and fc.receipt_id == result.receipt_ids[-1]
    assert result.validation.rejected == [] and result.validation.accepted == ["foreshadows[0]", "events[0]"]
    rows = book.db.execute("SELECT error_code, provider_kind FROM receipts ORDER BY attempt").fetchall()
    assert [r[0] for r in rows] == ["CONTRACT_QUOTE_NOT_FOUND", None] and {r[1] for r in rows} == {"scripted"}
    state = replay(book)
    assert [a.id for a in state.active_foreshadows(1).items] == ["F-tianshu"]
    assert state.active_foreshadows(1).items[0].source.receipt_id == fc.receipt_id


def test_extraction_fails_closed_after_the_call_budget(tmp_path: Path) -> None:
    book = scripted_book(tmp_path / "b", {"extractor": [{"output": BAD_1}] * 3 + [{"output": GOOD_1}]})
    with pytest.raises(FailedClosed) as ei:
        asyncio.run(_extract(book, 1))
    assert ei.value.exit_code == 3
    assert book.db.execute("SELECT count(*) FROM fact_cards").fetchone()[0] == 0
    assert book.db.execute("SELECT count(*) FROM receipts").fetchone()[0] == 3


def test_sync_extracts_with_a_model_and_cli_shows_rejections(muse, tmp_path: Path) -> None:
    four = {**GOOD_1, "foreshadows": [plant(f"F{i}", q) for i, q in enumerate(Q1[:4])]}
    script = {
        "extractor": [
            {"output": four, "match": "第1回 · 事实提取输入"},
            {
                "output": {**GOOD_1, "events": [], "foreshadows": [op("resolve", "F-unknown", Q2[0])]},
                "match": "第2回 · 事实提取输入",
            },
            {"output": GOOD_1, "match": "第1回 · 事实提取输入"},
        ]
    }
    book = scripted_book(tmp_path / "b", script)
    r = muse("sync", "--book", book.root, "--json")
    assert r.exit_code == 1, r.stderr  # issue 15.6: the replayed memory has errors (exit 0 hid them)
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert doc["facts_extracted"] == [1, 2] and doc["facts_stale"] == [] and doc["facts_step"] == "passed"
    assert doc["facts_rejected"] == 2
    assert sorted(p["code"] for p in doc["problems"]) == ["FORESHADOW_PLANT_CAP", "FORESHADOW_UNKNOWN"]
    again = json.loads(muse("sync", "--book", book.root, "--json").stdout)
    assert again["facts_extracted"] == [] and again["reindexed"] == []  # idempotent: nothing redone
    show = muse("facts", "show", "1", "--book", book.root, "--json")
    assert show.exit_code == 1  # an item was rejected: shown to the author
    shown = json.loads(show.stdout)
    assert [p["code"] for p in shown["rejected"]] == ["FORESHADOW_PLANT_CAP"] and len(shown["accepted"]) == 4
    assert shown["receipt_id"] and shown["chapter_sha256"] == book.read_chapter(1).sha256
    human = muse("facts", "show", "1", "--book", book.root)
    assert human.exit_code == 1
    lines = human.stdout.splitlines()
    # every item is listed with its verdict, location (file:line beside the offsets) and quote — not only the
    # rejected ones
    (e0, e1), (a, b), (a3, b3) = shown["spans"][0], shown["spans"][1], shown["spans"][4]
    ch1 = book.read_chapter(1)

    def at(start: int) -> str:
        return f"chapters/0001.md:{ch1.first_line + ch1.body.count(chr(10), 0, start)}"

    assert f"accepted foreshadows[0] {at(a)} [{a}:{b}] plant F0 伏笔F0 「{Q1[0]}」" in lines
    assert f"rejected[FORESHADOW_PLANT_CAP] foreshadows[3] {at(a3)} [{a3}:{b3}] plant F3 伏笔F3 「{Q1[3]}」" in lines
    assert f"accepted events[0] {at(e0)} [{e0}:{e1}] 刘焉招兵 (actors: 刘焉) 「{Q1[4]}」" in lines
    # the scripted provider replays its script from the top in every new session: give the next one its own
    (book.root / "script.yaml").write_text(yaml.safe_dump({"extractor": [{"output": GOOD_1}]}, allow_unicode=True))
    ex = muse("facts", "extract", "1", "--book", book.root, "--json")
    assert ex.exit_code == 0, ex.stderr
    assert json.loads(ex.stdout)["rejected"] == [] and json.loads(ex.stdout)["accepted"] == [
        "foreshadows[0]",
        "events[0]",
    ]
    (book.root / "script.yaml").write_text(yaml.safe_dump({"extractor": [{"output": BAD_1}] * 3}, allow_unicode=True))
    failed = muse("facts", "extract", "2", "--book", book.root, "--json")
    assert failed.exit_code == 3
    assert json.loads(failed.stdout)["error"]["code"].startswith("CONTRACT_QUOTE")


def test_sync_fails_closed_and_leaves_the_rest_stale(muse, tmp_path: Path) -> None:
    book = scripted_book(tmp_path / "b", {"extractor": [{"output": BAD_1}] * 3}, chapters=3)
    r = muse("sync", "--book", book.root, "--json")
    assert r.exit_code == 3
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["facts_error"] == {"chapter": 1, "code": "CONTRACT_QUOTE_NOT_FOUND"}
    assert doc["facts_step"] == "error(CONTRACT_QUOTE_NOT_FOUND)" and doc["facts_stale"] == [1, 2, 3]
    assert doc["reindexed"] == [1, 2, 3]  # the deterministic steps still ran
    assert "error[CONTRACT_QUOTE_NOT_FOUND]" in r.stderr
    status = book.db.execute("SELECT status FROM runs WHERE kind = 'sync'").fetchone()[0]
    assert status == "failed"


def test_facts_extract_without_a_model_is_not_evaluated(muse, small_book: Book) -> None:
    r = muse("facts", "extract", "1", "--book", small_book.root, "--json")
    assert r.exit_code == 4 and json.loads(r.stdout)["error"]["code"] == "MODEL_NOT_CONFIGURED"
    r = muse("facts", "show", "1", "--book", small_book.root, "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "FACTS_NOT_CURRENT"
    assert "missing" in json.loads(r.stdout)["error"]["what"]


def test_extractor_prompt_is_deterministic_and_names_cards_and_cap(tmp_path: Path) -> None:
    from novelmuse.memory import extract_request, load_cards
    from novelmuse.roles.extractor import EXTRACT

    def build_messages(book: Book, n: int, cards: CardSet) -> tuple[Message, ...]:
        return EXTRACT.render(extract_request(book, n, cards)).messages

    book = write_book(tmp_path / "b", chapters=2)
    _outlines(
        book,
        {
            1: "chapter: 1\nforeshadows:\n  - {op: plant, id: F-x, description: 天书三卷}\n",
            2: "chapter: 2\nforeshadows:\n  - {op: plant, id: F-y, description: 督邮索贿}\n",
        },
    )
    cards = load_cards(book)
    m1 = build_messages(book, 2, cards)
    assert m1 == build_messages(book, 2, cards)
    user = m1[1].content
    assert "关羽：云长、关公、关云长" in user and "F-x：天书三卷（第1回埋设）" in user and "上限】3 条" in user
    assert "F-y：督邮索贿（本章细纲埋设）" in user  # so the model confirms the author's id instead of a new one
    assert "F-y" not in build_messages(book, 1, cards)[1].content
    assert book.read_chapter(2).body in user


def test_a_prologue_chapter_0_has_memory_like_any_chapter(muse, small_book: Book) -> None:
    """`muse import` puts text before the first heading into chapters/0000.md (序): its outline, card ranges
    and source pointers may name chapter 0 (they used to be refused as OUTLINE_INVALID / CARD_INVALID)."""
    d = small_book.root
    (d / "chapters" / "0000.md").write_text("# 序\n滚滚长江东逝水，浪花淘尽英雄。\n", encoding="utf-8")
    plant_river = "  - {op: plant, id: F-river, description: 长江, payoff_chapter: 2}\n"
    _outlines(small_book, {0: "chapter: 0\nforeshadows:\n" + plant_river})
    (d / "cards" / "river.yaml").write_text(
        "id: river\ntype: place\nname: 长江\nattributes:\n"
        "  state:\n    - {value: 东流, from: 0, to: 0, source: {chapter: 0, start: 2, end: 7}}\n"
        "    - {value: 赤壁, from: 1}\n",
        encoding="utf-8",
    )
    lint = muse("cards", "lint", "--json", "--book", d)
    assert lint.exit_code == 0, lint.stdout
    doc = json.loads(muse("cards", "show", "长江", "--as-of", "0", "--json", "--book", d).stdout)
    assert doc["attributes"]["state"]["value"] == "东流" and doc["attributes"]["state"]["source"]["chapter"] == 0
    assert (
        json.loads(muse("cards", "show", "长江", "--as-of", "1", "--json", "--book", d).stdout)["attributes"]["state"][
            "value"
        ]
        == "赤壁"
    )
    ledger = json.loads(muse("ledger", "--as-of", "0", "--json", "--book", d).stdout)
    assert [(i["id"], i["planted_chapter"], i["age"]) for i in ledger["items"]] == [("F-river", 0, 0)]
    assert json.loads(muse("ledger", "--as-of", "3", "--json", "--book", d).stdout)["items"][0]["overdue"] is True


def test_sync_with_a_model_reextracts_only_the_edited_chapter(muse, tmp_path: Path) -> None:
    good_2 = {"events": [{"summary": "玄德为先锋", "actors": ["玄德"], "quote": Q2[0]}]}
    script = {
        "extractor": [
            {"output": GOOD_1, "match": "第1回 · 事实提取输入"},
            {"output": {**out().model_dump(), **good_2}, "match": "第2回 · 事实提取输入"},
            {"output": {**out().model_dump(), **good_2}, "match": "第2回 · 事实提取输入"},
        ]
    }
    book = scripted_book(tmp_path / "b", script)
    first = json.loads(muse("sync", "--book", book.root, "--json").stdout)
    assert first["facts_extracted"] == [1, 2]
    ids = {n: c for n, c in book.db.execute("SELECT chapter, id FROM fact_cards")}
    path = book.chapter_path(2)
    path.write_text(path.read_text(encoding="utf-8") + "\n玄德叹曰：“吾不忍也。”\n", encoding="utf-8")
    show = muse("facts", "show", "2", "--json", "--book", book.root)
    assert show.exit_code == 2 and "(stale)" in json.loads(show.stdout)["error"]["what"]
    second = muse("sync", "--book", book.root, "--json")
    assert second.exit_code == 0, second.stderr
    doc = json.loads(second.stdout)
    assert doc["changed"] == [2] and doc["reindexed"] == [2] and doc["facts_extracted"] == [2]
    rows = book.db.execute("SELECT chapter, id, chapter_sha256 FROM fact_cards ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [1, 2, 2] and rows[0][1] == ids[1]  # chapter 1's card was not redone
    assert rows[2][2] == book.read_chapter(2).sha256 != rows[1][2]
    assert muse("facts", "show", "2", "--json", "--book", book.root).exit_code == 0


def test_a_second_plant_of_an_existing_foreshadow_is_rejected(small_book: Book) -> None:
    store(small_book, 1, out(foreshadows=[plant("F1", Q1[0], 9)]))
    store(small_book, 2, out(foreshadows=[plant("F1", Q2[0], 3), plant("F2", Q2[1], 1)]))
    state = replay(small_book)
    assert [(p.code, p.item) for p in state.validations[2].rejected] == [
        ("FORESHADOW_DUPLICATE", "foreshadows[0]"),
        ("FORESHADOW_PAYOFF_PAST", "foreshadows[1]"),  # due by chapter 1, planted in chapter 2
    ]
    [item] = state.active_foreshadows(2).items
    assert (item.planted_chapter, item.payoff_chapter) == (1, 9)  # the first plant stands


def test_sync_extraction_replays_the_memory_a_fixed_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17.4: each extracted chapter replayed (and re-hashed) every chapter twice — quadratic bookkeeping
    (65 s for 5M characters). One cursor now serves every extraction of a sync."""
    from novelmuse.memory import _replay, sync

    empty = {"events": [], "foreshadows": [], "relations": [], "states": []}
    script = {"extractor": [{"output": {**empty, "foreshadows": [plant("F-q", Q1[0])]}, "match": "第1回 ·"}]}
    script["extractor"] += [{"output": empty}] * 7
    book = scripted_book(tmp_path / "b", script, chapters=8)
    made = 0
    real = _replay.MemoryCursor.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal made
        made += 1
        real(self, *args, **kwargs)

    monkeypatch.setattr(_replay.MemoryCursor, "__init__", counting)

    async def go() -> Any:
        async with ModelSession.open(book, run_kind="sync") as session:
            return await sync(book, session)

    result = asyncio.run(go())
    assert result.facts_extracted == list(range(1, 9)) and result.facts_step == "passed"
    # the replay that finds the stale chapters, the cost plan, the extraction cursor, the final replay
    assert made == 4
    state = replay(book)
    assert [a.id for a in state.active_foreshadows(8).items] == ["F-q"]
    assert set(state.validations) == set(range(1, 9)) and state.problems == result.problems == []


def test_sync_says_the_calls_and_their_cost_first_and_has_dry_run_and_no_extract(muse, tmp_path: Path) -> None:
    """Issue 15.7: no surprise bills — the plan is printed before the first call; --dry-run calls nothing and
    writes no index row; --no-extract re-indexes and leaves the facts stale."""
    empty = {"events": [], "foreshadows": [], "relations": [], "states": []}
    script = {"extractor": [{"output": GOOD_1, "match": "第1回 ·"}, {"output": empty}]}
    book = scripted_book(tmp_path / "b", script)
    with open(book.root / "book.toml", "a", encoding="utf-8") as f:
        f.write('\n[prices."scripted-model-1"]\ninput = 1.0\noutput = 2.0\n')
    dry = muse("sync", "--dry-run", "--json", "--book", book.root)
    assert dry.exit_code == 0, dry.stderr
    doc = json.loads(dry.stdout)
    plan = doc["extraction"]
    assert doc["dry_run"] is True and doc["facts_step"] == "skipped(--dry-run)" and doc["added"] == [1, 2]
    assert plan["calls"] == 2 and plan["chapters"] == [1, 2] and plan["model"] == "scripted-model-1"
    bodies = sum(len(book.read_chapter(n).body.encode("utf-8")) for n in (1, 2))
    assert plan["input_tokens_max"] > bodies  # the chapter text is in every request: an upper bound
    expected = (plan["input_tokens_max"] * 1.0 + 2 * plan["max_output_tokens"] * 2.0) / 1_000_000
    assert abs(plan["cost_max"] - expected) < 1e-9
    assert book.db.execute("SELECT count(*) FROM memory_chapters").fetchone()[0] == 0
    assert book.db.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0
    human = muse("sync", "--dry-run", "--book", book.root)
    assert "dry run — would re-index: 1-2" in human.stdout and "fact extraction: 2 calls" in human.stdout

    skipped = muse("sync", "--no-extract", "--json", "--book", book.root)
    assert skipped.exit_code == 4, skipped.stderr  # asked to skip: the cards stay stale, not evaluated
    no = json.loads(skipped.stdout)
    assert no["facts_step"] == "skipped(--no-extract)" and no["facts_stale"] == [1, 2] and no["reindexed"] == [1, 2]
    assert no["extraction"] is None and book.db.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0

    real = muse("sync", "--json", "--book", book.root)
    assert real.exit_code == 0, real.stderr
    assert real.stderr.startswith("fact extraction: 2 calls to s:scripted-model-1 (chapters 1-2;")
    assert "cost ≤ $" in real.stderr and json.loads(real.stdout)["facts_extracted"] == [1, 2]
