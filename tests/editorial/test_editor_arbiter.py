"""The 7-dim editor's branches: polish, rewrite → re-review → arbiter, every bound honoured."""

from __future__ import annotations

import json
from pathlib import Path

from novelmuse.text import split_paragraphs

from .helpers import (
    as_json,
    body_of,
    db_rows,
    editor_output,
    make_book,
    receipts_by_role,
    requests_of,
    unique_sentences,
)

CLEAN = {"output": {"issues": [], "passed": True}}


def _rewritten(body: str, tag: str) -> dict[str, object]:
    paras = [p.text.strip() for p in split_paragraphs(body)]
    return {"text": "\n".join([f"{tag}{paras[0]}", *paras[1:]])}


def _editor_on(text_source: str, overall: int, verdict: str = "accept") -> dict[str, object]:
    return {"output": editor_output(text_source, overall=overall, verdict=verdict)}


def test_polish_changes_only_the_chosen_paragraphs(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    paras = split_paragraphs(body)
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [CLEAN],
            "editor": [_editor_on(body, 65, "accept")],  # computed: polish (overall < 70); the model said accept
            "writer": [{"output": {"paragraphs": [{"index": 3, "text": paras[3].text.strip() + "(润色)"}]}}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["editor"][0]["computed_verdict"] == "polish" and ch["editor"][0]["model_verdict"] == "accept"
    assert ch["editor"][0]["agrees"] is False and ch["disagreements"]["editor_verdict"] == 1
    assert ch["steps"][-1]["step"] == "facts" and ch["steps"][-1]["reason"] == "revision not applied"
    assert ch["steps"][-3:-1] == [
        {
            "step": "editor_review",
            "status": "failed",
            "reason": None,
            "code": None,
            "detail": "verdict polish (model said accept), overall 65",
        },
        {"step": "polish", "status": "passed", "reason": None, "code": None, "detail": "rewrote paragraphs [3]"},
    ]
    assert ch["status"] == "finalized"
    assert db_rows(book, "SELECT computed_verdict, model_verdict FROM editor_reports") == [("polish", "accept")]


def test_rewrite_then_rereview_still_below_asks_arbiter_once_and_respects_rewrite_bound(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    first = _rewritten(body, "甲")
    book = make_book(
        tmp_path / "b",
        review={"rewrite_rounds": 1, "arbiter_rounds": 1},
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 50, "rewrite"), _editor_on(body, 55, "rewrite")],
            "writer": [{"output": first}, {"output": _rewritten(body, "乙")}],
            "arbiter": [
                {"output": {"decision": "keep_rewriting", "reason": "分数在涨"}},
                {"output": {"decision": "keep_rewriting", "reason": "never asked"}},
            ],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr  # the rewrite verdict stands: finalized with issues
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized_with_issues"
    assert receipts_by_role(book) == {"reviewer": 2, "editor": 2, "writer": 1, "arbiter": 1}
    assert [(a["decision"], a["reason"]) for a in ch["arbiter"]] == [("keep_rewriting", "分数在涨")]
    assert ch["steps"][-3]["step"] == "rewrite" and ch["steps"][-3]["status"] == "failed"
    assert "bound of 1 rewrite round(s) reached" in ch["steps"][-3]["detail"]
    assert ch["steps"][-2]["step"] == "post_rewrite_review" and ch["steps"][-2]["status"] == "passed"
    assert ch["steps"][-1]["reason"] == "revision not applied"
    assert ch["repairs"] == [
        {
            "step": "rewrite",
            "kind": "rewrite",
            "paragraphs": None,
            "before_sha256": ch["repairs"][0]["before_sha256"],
            "after_sha256": ch["repairs"][0]["after_sha256"],
        }
    ]
    assert db_rows(book, "SELECT round, decision, reason FROM arbiter_decisions") == [(0, "keep_rewriting", "分数在涨")]
    # the arbiter saw every review report and the rewrite's paragraph diff
    (arbiter,) = requests_of(book, "arbiter")
    task = arbiter[1]["content"]
    first_para = split_paragraphs(body)[0].text.strip()
    assert f"-{first_para}" in task and f"+甲{first_para}" in task
    assert '"editor_round": 0' in task and '"editor_round": 1' in task and '"overall": 55' in task
    # … with the evidence of each score and the notes (its prompt says it judges by 分数、证据、意见)
    reports = [
        json.loads(line) for line in task.split("【历次评审报告】")[1].split("【重写差异")[0].split("\n") if line
    ]
    editor0 = next(r for r in reports if r.get("editor_round") == 0)
    expected = editor_output(body, overall=50)["dims"]
    assert editor0["dims"] == expected and editor0["notes"] == ["第3段节奏略慢"]
    assert [r["consistency_round"] for r in reports if "consistency_round" in r] == [0]


def test_arbiter_bound_stops_rewriting_even_with_rewrite_rounds_left(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    book = make_book(
        tmp_path / "b",
        review={"rewrite_rounds": 3, "arbiter_rounds": 1},
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 40, "rewrite"), _editor_on(body, 45, "rewrite"), _editor_on(body, 50)],
            "writer": [{"output": _rewritten(body, "甲")}, {"output": _rewritten(body, "乙")}],
            "arbiter": [{"output": {"decision": "keep_rewriting", "reason": "还能改"}}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    ch = as_json(r.stdout)["chapters"][0]
    # rewrite 1 → re-review (rewrite) → arbiter keep → rewrite 2 → re-review (rewrite) → arbiter bound reached
    assert receipts_by_role(book) == {"reviewer": 2, "editor": 3, "writer": 2, "arbiter": 1}
    assert len(ch["arbiter"]) == 1
    assert ch["steps"][-3] == {
        "step": "arbiter",
        "status": "failed",
        "reason": None,
        "code": None,
        "detail": "bound of 1 arbiter call(s) reached",
    }
    assert ch["status"] == "finalized_with_issues" and r.exit_code == 1


def test_arbiter_accept_and_continue_finalizes_with_its_issues_open(tmp_path: Path, muse) -> None:
    """Seed 004: 不行就带病定稿留给人 — the arbiter ends the rewriting; it does not make a rewrite verdict pass. The
    chapter is finalized_with_issues (exit 1) with the standing verdict listed, never a clean 0-issue finalized."""
    body = body_of(tmp_path)
    book = make_book(
        tmp_path / "b",
        review={"rewrite_rounds": 2},
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 40, "rewrite"), _editor_on(body, 45, "rewrite")],
            "writer": [{"output": _rewritten(body, "甲")}],
            "arbiter": [{"output": {"decision": "accept_and_continue", "reason": "收益递减"}}],
        },
    )
    r = muse("review", "1", "--book", book, "--json", "--apply")
    assert r.exit_code == 1, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized_with_issues" and ch["arbiter"][0]["decision"] == "accept_and_continue"
    assert ch["open_issues"] == 1 == len(ch["open_items"])
    assert ch["open_items"][0].startswith("editor: computed verdict rewrite still stands (round 1: overall 45")
    assert "the arbiter accepted and continued: 收益递减" in ch["open_items"][0]
    # the accepted text is still the chapter's (the author decides what to do with the open item)
    assert (book / "chapters" / "0001.md").read_text(encoding="utf-8").split("\n")[1].startswith("甲")
    human = muse("review", "1", "--book", book)  # resumed from the record: the same open item is shown
    assert human.exit_code == 1 and "OPEN editor: computed verdict rewrite still stands" in human.stdout
    assert "chapter 1 was finalized with 1 open issue(s)" in muse("check", "--book", book).stdout


def test_rewrite_that_passes_rereview_needs_no_arbiter(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 59, "polish"), _editor_on(body, 85)],
            "writer": [{"output": _rewritten(body, "甲")}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert [e["computed_verdict"] for e in ch["editor"]] == ["rewrite", "accept"]
    assert ch["arbiter"] == [] and "arbiter" not in receipts_by_role(book)


def test_neutral_foreshadow_in_first_chapters(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    out = editor_output(body, overall=80)
    out["dims"]["伏笔健康"] = {"score": 30, "evidence": ""}  # neutral: no evidence, low score ignored
    book = make_book(tmp_path / "b", script={"reviewer": [CLEAN], "editor": [{"output": out}]})
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ed = as_json(r.stdout)["chapters"][0]["editor"][0]
    fs = next(d for d in ed["dims"] if d["name"] == "伏笔健康")
    assert fs["neutral"] is True and ed["computed_verdict"] == "accept"
    # outside the first chapters the same answer is a contract violation (empty evidence) → fail closed
    book2 = make_book(
        tmp_path / "c",
        review={"neutral_foreshadow_chapters": 0},
        script={"reviewer": [CLEAN], "editor": [{"output": out}] * 3},
    )
    r = muse("review", "1", "--book", book2, "--json")
    assert r.exit_code == 3
    assert as_json(r.stdout)["chapters"][0]["error_code"] == "CONTRACT_QUOTE_EMPTY"


def test_the_neutral_window_is_a_permission_not_an_exemption(tmp_path: Path, muse) -> None:
    """Seed 004: 前3章伏笔健康"可给"中性分 — only when the editor gives no foreshadow evidence. An editor that does
    quote evidence for 伏笔健康 in chapter 1 has scored it: a 30 counts, and the computed verdict is rewrite."""
    body = body_of(tmp_path)
    out = editor_output(body, overall=80)
    quote = unique_sentences(body, 8)[7]  # not one of the other six dimensions' quotes
    out["dims"]["伏笔健康"] = {"score": 30, "evidence": quote}
    book = make_book(
        tmp_path / "b", script={"reviewer": [CLEAN], "editor": [{"output": out}]}, review={"rewrite_rounds": 0}
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr
    ed = as_json(r.stdout)["chapters"][0]["editor"][0]
    fs = next(d for d in ed["dims"] if d["name"] == "伏笔健康")
    assert fs["neutral"] is False and ed["computed_verdict"] == "rewrite"


def test_rewritten_chapter_gets_one_consistency_review_of_its_final_text(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    new = _rewritten(body, "甲")
    quote = "甲" + split_paragraphs(body)[0].text.strip()[:12]
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [
                CLEAN,
                {
                    "output": {
                        "issues": [
                            {
                                "severity": "critical",
                                "type": "character",
                                "quote": quote,
                                "explanation": "重写引入的矛盾",
                                "fix_hint": "改回",
                            }
                        ],
                        "passed": False,
                    }
                },
            ],
            "editor": [_editor_on(body, 40, "rewrite"), _editor_on(body, 90)],
            "writer": [{"output": new}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized_with_issues" and ch["open_issues"] == 1
    final = ch["consistency"][-1]
    assert final["round"] == 1 and final["issues"][0]["open"] is True
    assert ch["steps"][-2]["step"] == "post_rewrite_review" and ch["steps"][-2]["status"] == "failed"
    assert receipts_by_role(book) == {"reviewer": 2, "editor": 2, "writer": 1}


def test_editor_rereview_gets_the_fatigue_of_the_rewritten_text(tmp_path: Path, muse) -> None:
    """Fatigue warnings are the editor's reference for the text it is judging: after a rewrite that no longer
    overuses the phrase, the re-review is not told about the original's overuse."""
    body = body_of(tmp_path)
    phrase = "玄德"
    assert body.count(phrase) > 1
    new = body.replace(phrase, "刘备")
    book = make_book(
        tmp_path / "b",
        rules=f"疲劳词:{phrase}≤1\n",
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 40, "rewrite"), _editor_on(new, 85)],
            "writer": [{"output": {"text": new}}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    first, second = (m[1]["content"] for m in requests_of(book, "editor"))
    assert f"{phrase}:{body.count(phrase)} 次(上限 1)" in first
    assert phrase not in second.split("【伏笔健康】")[0] and "(无超限)" in second
    # the record keeps what the rules found in the author's original
    assert as_json(r.stdout)["chapters"][0]["rules"]["fatigue"][0]["actual"] == body.count(phrase)


def test_a_rewrite_whose_rereview_says_polish_is_then_polished_once(tmp_path: Path, muse) -> None:
    """The verdict of the text that remains decides (seed 004: polish → 定向打磨): a rewrite re-reviewed as
    polish gets its one targeted polish — not silently reported finalized with the polish never done."""
    body = body_of(tmp_path)
    rewritten = _rewritten(body, "甲")
    paras = split_paragraphs(str(rewritten["text"]))
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 40, "rewrite"), _editor_on(body, 65, "accept")],
            "writer": [
                {"output": rewritten},
                {"output": {"paragraphs": [{"index": 2, "text": paras[2].text.strip() + "(润色)"}]}},
            ],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert [e["computed_verdict"] for e in ch["editor"]] == ["rewrite", "polish"]
    assert [x["kind"] for x in ch["repairs"]] == ["rewrite", "polish"]
    assert [s["step"] for s in ch["steps"]] == [
        "rules",
        "consistency_review",
        "editor_review",
        "rewrite",
        "editor_rereview",
        "polish",
        "post_rewrite_review",
        "facts",
    ]
    assert ch["status"] == "finalized" and ch["arbiter"] == []
    assert receipts_by_role(book) == {"reviewer": 2, "editor": 2, "writer": 2}


def test_polish_paragraph_bound_comes_from_config(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    paras = split_paragraphs(body)

    def edits(*indices: int) -> dict[str, object]:
        return {"output": {"paragraphs": [{"index": i, "text": paras[i].text.strip() + "(润色)"} for i in indices]}}

    book = make_book(
        tmp_path / "b",
        review={"polish_max_paragraphs": 1},
        script={"reviewer": [CLEAN], "editor": [_editor_on(body, 65)], "writer": [edits(2, 3), edits(3)]},
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["repairs"][0]["kind"] == "polish" and ch["repairs"][0]["paragraphs"] == [3]
    assert ch["usage"]["by_role"]["writer"]["attempts"] == 2  # two paragraphs broke the bound of 1: corrected
    first, _ = requests_of(book, "writer")
    assert "最多 1 段" in first[1]["content"]


def test_a_crlf_chapter_stays_crlf_after_a_rewrite_is_applied(tmp_path: Path, muse) -> None:
    """A chapter saved on Windows (BOM, CRLF) keeps its BOM and one line-ending style when the writer's
    whole-chapter rewrite (which arrives with LF) is applied — never a file of mixed endings (issue 15.7)."""
    body = body_of(tmp_path)
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [CLEAN, CLEAN],
            "editor": [_editor_on(body, 59, "polish"), _editor_on(body, 85)],
            "writer": [{"output": _rewritten(body, "甲")}],
        },
    )
    path = book / "chapters" / "0001.md"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    r = muse("review", "1", "--book", book, "--json", "--apply")
    assert r.exit_code == 0, r.stderr + r.stdout[-2000:]
    assert as_json(r.stdout)["chapters"][0]["revision"]["applied"] is True
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf" + "# 第一回".encode()) and "甲".encode() in data
    assert data.count(b"\n") == data.count(b"\r\n") > 10  # every line break is CRLF
