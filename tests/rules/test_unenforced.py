"""Issue 14 item 2: natural-language rules are never silently unenforced (seed 004: 先行解析，模糊行交给 LLM 归一化).

A rules.txt line that parses as no rule makes `muse check` `incomplete` (exit 4), naming the line and `muse rules
normalize`; `muse check --normalize` shows the normalizer's proposals in the same step; once the normalised rules
are written the check is complete — and enforces what the line meant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

CHAPTER = "# 第一章 开局\n　　他打开了系统面板，看了一眼。\n　　然后关上了它。\n"
PLAIN = "# 第二章 平常\n　　他只是走了一段路。\n"
PROPOSAL = {
    "proposals": [
        {"line": 2, "rules": [{"kind": "forbidden", "phrase": "系统面板", "limit": None}], "note": "禁用词"},
        {"line": 3, "rules": [], "note": "作者的备忘，不是规则"},
    ]
}


def _book(root: Path, *, normalizer: bool) -> Path:
    (root / "chapters").mkdir(parents=True)
    (root / "chapters" / "0001.md").write_text(CHAPTER, encoding="utf-8")
    (root / "chapters" / "0002.md").write_text(PLAIN, encoding="utf-8")
    (root / "rules.txt").write_text("禁止:后宫\n不要写系统面板\n给自己的备忘：第三卷再收伏笔\n", encoding="utf-8")
    toml = '[book]\ntitle = "t"\n'
    if normalizer:
        (root / "script.yaml").write_text(
            yaml.safe_dump({"normalizer": [{"output": PROPOSAL}]}, allow_unicode=True), encoding="utf-8"
        )
        toml += '[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n[roles]\nnormalizer = "s:scripted-1"\n'
    (root / "book.toml").write_text(toml, encoding="utf-8")
    return root


def test_an_unparsed_line_makes_the_check_incomplete_never_passed(muse: Any, tmp_path: Path) -> None:
    book = _book(tmp_path / "b", normalizer=False)
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 4, r.stderr  # 系统面板 is in chapter 1, but nothing enforces "不要写系统面板"
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "incomplete" and doc["passed"] is True and doc["schema_version"] == 2
    assert "rules.txt line 2 ('不要写系统面板')" in doc["reason"] and "muse rules normalize" in doc["reason"]
    assert [(u["line"], u["text"]) for u in doc["rules"]["unparsed"]] == [
        (2, "不要写系统面板"),
        (3, "给自己的备忘：第三卷再收伏笔"),
    ]
    assert doc["exit"] == {"outcome": "not_evaluated", "code": 4}
    human = muse("check", "--book", book)
    assert human.exit_code == 4 and "INCOMPLETE" in human.stdout and "passed" not in human.stdout.split("INCOMPLETE")[0]
    assert "warning[RULES_NOT_ENFORCED]: rules.txt line 2 '不要写系统面板'" in human.stderr
    # a real error finding still decides the exit code: a definite error outranks an unknown
    (book / "chapters" / "0002.md").write_text(PLAIN + "　　后宫\n", encoding="utf-8")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["outcome"] == "failed"


def test_check_normalize_shows_proposals_and_write_completes_the_check(muse: Any, tmp_path: Path) -> None:
    book = _book(tmp_path / "b", normalizer=True)
    r = muse("check", "--book", book, "--normalize", "--json")
    assert r.exit_code == 4, r.stderr  # shown, not written: still incomplete
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "incomplete"
    proposals = doc["normalize"]["proposals"]
    assert [(p["line"], [x["rendered"] for x in p["rules"]]) for p in proposals] == [(2, ["禁止:系统面板"]), (3, [])]
    human = muse("check", "--book", book, "--normalize")
    assert "禁止:系统面板" in human.stdout and "INCOMPLETE" in human.stdout
    # --write applies exactly what was shown; the line the model found no rule in is kept as a comment
    w = muse("rules", "normalize", "--book", book, "--write", "--json")
    assert w.exit_code == 0 and json.loads(w.stdout)["shown_earlier"] is True
    text = (book / "rules.txt").read_text(encoding="utf-8")
    assert "# 归一化前原文: 不要写系统面板\n禁止:系统面板\n" in text
    assert "# 归一化前原文(不是规则): 给自己的备忘：第三卷再收伏笔\n" in text
    # complete now — and what the line meant is enforced: chapter 1 fails, chapter 2 passes
    r = muse("check", "--book", book, "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["outcome"] == "failed" and doc["rules"]["unparsed"] == []
    assert [f["target"] for f in doc["chapters"][0]["findings"]] == ["系统面板"]
    r = muse("check", "--book", book, "--chapter", "2", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["outcome"] == "passed"
