"""`muse write` on the whole 三国演义 (关羽 dies in chapter 77): a death the outline allows passes only when the
draft declares it; a dead 关羽 who speaks in chapter 80 is blocked — scripted writer, detector and extractor."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import yaml

from novelmuse.book import Book, find_book
from novelmuse.writing import confirm_outline

from .conftest import write_outline
from .test_gate import DEATH, DEATH_ALLOWED
from .write_helpers import SCRIPTED_TOML, as_json, chapter_text, detector, draft, facts

IDS_60 = ["E1", "R1", "hook", "S1"]
IDS_80 = ["E1", "R1", "E2", "R2", "F-plant:F-revenge", "hook", "S1", "T1"]
DEATH_STATE = {"entity": "关羽", "attribute": "status", "value": "身亡", "quote": "次日身亡"}
DECLARED = [{"kind": "state", "subject": "关公", "statement": "关羽病逝", "quote": "关公忽染重病，次日身亡"}]


@pytest.fixture(scope="module")
def book(sanguo_full: Book, tmp_path_factory: pytest.TempPathFactory) -> Book:
    """A copy of the full book (index included) with the scripted provider and outline 60 confirmed."""
    root = tmp_path_factory.mktemp("sanguo-write") / "book"
    shutil.copytree(sanguo_full.root, root)
    with (root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(SCRIPTED_TOML + '\n[roles]\ndefault = "s:scripted-model-1"\n')
    b = find_book(root)
    write_outline(b, 60, DEATH_ALLOWED)
    confirm_outline(b, 60)
    return b


def _script(book: Book, script: dict[str, Any]) -> None:
    (book.root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")


def _blocking(doc: Any) -> list[tuple[str, str]]:
    return [
        (i["check"], i["id"])
        for i in doc["reports"][-1]["report"]["items"]
        if i["severity"] == "high" and i["verdict"] != "pass"
    ]


def test_guan_yu_dying_in_chapter_60_undeclared_is_blocked(book: Book, muse: Any) -> None:
    text = chapter_text(60) + DEATH
    _script(
        book,
        {
            "writer": [draft(text, declared=[], requests=[]), draft(text, declared=[]), draft(text, declared=[])],
            "detector": [detector(text, ids=IDS_60, quote="庞统亦再三相劝")] * 3,
            "extractor": [facts(states=[DEATH_STATE])] * 3,
        },
    )
    r = muse("write", "60", "--arm", "C", "--shadow", "--json", "--book", book.root)
    assert r.exit_code == 1, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "held_for_author"
    assert _blocking(doc) == [("undeclared_fact", "fact:states[0]")]


def test_the_same_death_declared_and_allowed_by_the_outline_passes(book: Book, muse: Any) -> None:
    text = chapter_text(60) + DEATH
    _script(
        book,
        {
            "writer": [draft(text, declared=DECLARED, requests=[])],
            "detector": [detector(text, ids=IDS_60, quote="庞统亦再三相劝")],
            "extractor": [facts(states=[DEATH_STATE])],
        },
    )
    r = muse("write", "60", "--arm", "C", "--shadow", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "passed" and _blocking(doc) == []


def test_guan_yu_speaking_in_chapter_80_is_blocked(book: Book, muse: Any) -> None:
    text = (
        chapter_text(80) + "\n建安二十五年冬十月，玄德在成都，誓为云长报仇，欲起兵伐吴。\n关公曰：“兄长勿忧，吾在此。”"
    )
    _script(
        book,
        {
            "writer": [draft(text, declared=[], requests=[]), draft(text, declared=[]), draft(text, declared=[])],
            "detector": [detector(text, ids=IDS_80, quote="建安二十五年冬十月")] * 3,
            "extractor": [facts()] * 3,
        },
    )
    r = muse("write", "80", "--arm", "C", "--shadow", "--json", "--book", book.root)
    assert r.exit_code == 1, r.stderr
    doc = as_json(r.stdout)
    assert doc["status"] == "held_for_author" and _blocking(doc) == [("acts", "acts:guan-yu")]
    assert [d["purpose"] for d in doc["drafts"]] == ["draft", "repair", "repair"]
