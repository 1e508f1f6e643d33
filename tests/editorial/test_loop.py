"""The editorial loop end to end through `muse review`, served by the scripted provider (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novelmuse.rules import CheckReport
from novelmuse.text import sha256_hex, split_paragraphs

from .helpers import (
    as_json,
    body_of,
    db_rows,
    editor_output,
    issue,
    make_book,
    paragraph_of,
    receipts_by_role,
    requests_of,
    unique_sentences,
)


def _edits(body: str, indices: list[int], suffix: str = "(改)") -> dict[str, object]:
    paras = split_paragraphs(body)
    return {"paragraphs": [{"index": i, "text": paras[i].text.strip() + suffix} for i in indices]}


def test_no_issues_is_finalized_without_revision(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    book = make_book(
        tmp_path / "b",
        script={"reviewer": [{"output": {"issues": [], "passed": True}}], "editor": [{"output": editor_output(body)}]},
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    ch = doc["chapters"][0]
    assert ch["status"] == "finalized"
    assert [(s["step"], s["status"]) for s in ch["steps"]] == [
        ("rules", "passed"),
        ("consistency_review", "passed"),
        ("editor_review", "passed"),
        ("facts", "passed"),  # the file is the finalised text: its (empty) fact card is extracted
    ]
    assert ch["revision"] is None and ch["repairs"] == []
    assert ch["editor"][0]["computed_verdict"] == "accept" and ch["editor"][0]["model_verdict"] == "accept"
    assert ch["usage"]["calls"] == 3 and ch["usage"]["input_tokens"] > 0
    assert receipts_by_role(book) == {"reviewer": 1, "editor": 1, "extractor": 1}
    # the record is bound to the file's sha256 and stored with its steps
    rows = db_rows(book, "SELECT chapter, chapter_sha256, status FROM review_records")
    assert rows == [(1, ch["chapter_sha256"], "finalized")]
    assert len(db_rows(book, "SELECT * FROM review_steps")) == 4


def test_major_issue_one_repair_then_rereview_passes(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [
                {
                    "output": {
                        "issues": [issue(quote, "major"), issue(unique_sentences(body, 1)[0], "minor")],
                        "passed": False,
                    }
                },
                {"output": {"issues": [], "passed": True}},
            ],
            "writer": [{"output": _edits(body, [target])}],
            "editor": [{"output": editor_output(body)}],
        },
    )
    original = (book / "chapters" / "0001.md").read_bytes()
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized"
    steps = [(s["step"], s["status"]) for s in ch["steps"]]
    assert steps[:4] == [
        ("rules", "passed"),
        ("consistency_review", "failed"),
        ("repair", "passed"),
        ("re_review", "passed"),
    ]
    assert ch["repairs"][0]["paragraphs"] == [target]
    first = ch["consistency"][0]
    assert first["blocking"] == 1 and len(first["issues"]) == 2
    located = first["issues"][0]
    assert body[located["start"] : located["end"]] == quote and located["paragraph"] == target
    assert receipts_by_role(book) == {"reviewer": 2, "writer": 1, "editor": 1}
    # the author's file is untouched without --apply; the revision is stored
    assert (book / "chapters" / "0001.md").read_bytes() == original
    assert ch["revision"] is not None and ch["revision"]["applied"] is False
    (text,) = db_rows(book, "SELECT text FROM revisions")[0]
    assert "(改)" in text and text.startswith("# 第一回")
    kept = book / ch["revision"]["path"]
    assert kept.parent == book / ".muse" / "revisions" and kept.read_text(encoding="utf-8") == text
    assert sha256_hex(kept.read_bytes()) == ch["revision"]["sha256"] == ch["result_sha256"]
    # --diff shows the revision against the original, character by character: only the inserted (改), once
    r = muse("review", "1", "--book", book, "--diff")
    changed = split_paragraphs(body)[target].text.strip()
    assert changed[-10:] + "{+(改)+}" in r.stdout and r.stdout.count("{+") == 1 and "[-" not in r.stdout
    # a later --apply resumes the stored review and writes its revision: no new review calls, then the
    # facts step (skipped while the revision was not applied) extracts the fact card of the new file
    r = muse("review", "1", "--book", book, "--apply", "--json")
    assert r.exit_code == 0, r.stderr
    resumed = as_json(r.stdout)["chapters"][0]
    assert resumed["resumed"] is True and resumed["revision"]["applied"] is True
    assert (book / "chapters" / "0001.md").read_bytes() == kept.read_bytes()
    assert receipts_by_role(book) == {"reviewer": 2, "writer": 1, "editor": 1, "extractor": 1}
    assert [s["status"] for s in resumed["steps"] if s["step"] == "facts"] == ["passed"]


def test_repair_that_fails_is_finalized_with_issues_after_one_repair_and_one_rereview(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    q1, q2 = unique_sentences(body, 2, skip=8)
    target = paragraph_of(body, q1)
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [
                {"output": {"issues": [issue(q1, "major")], "passed": False}},
                {"output": {"issues": [issue(q2, "critical", "timeline")], "passed": False}},
                {"output": {"issues": [], "passed": True}},  # must never be consumed: the bound is one re-review
            ],
            "writer": [{"output": _edits(body, [target])}, {"output": _edits(body, [target], "(再改)")}],
            "editor": [{"output": editor_output(body)}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized_with_issues"
    assert receipts_by_role(book) == {"reviewer": 2, "writer": 1, "editor": 1}
    assert [s["step"] for s in ch["steps"]].count("repair") == 1
    assert [s["step"] for s in ch["steps"]].count("re_review") == 1
    last = ch["consistency"][-1]
    assert last["round"] == 1 and last["issues"][0]["open"] is True and ch["open_issues"] == 1
    assert ch["consistency"][0]["issues"][0]["open"] is False
    assert db_rows(book, "SELECT round, severity, open FROM review_issues ORDER BY round") == [
        (0, "major", 0),
        (1, "critical", 1),
    ]
    # `muse review` (resumed from the record) and `muse check` show it
    r = muse("review", "1", "--book", book)
    assert r.exit_code == 1 and "finalized_with_issues" in r.stdout and "OPEN [critical/timeline]" in r.stdout
    assert q2 in r.stdout and "resumed" in r.stdout
    r = muse("check", "--book", book)
    assert "chapter 1 was finalized with 1 open issue(s)" in r.stdout
    r = muse("check", "--book", book, "--json")
    assert "chapter 1 was finalized with 1 open issue(s)" in r.stderr
    assert set(as_json(r.stdout)) == {*CheckReport.model_fields, "exit"}  # the note leaves check's JSON shape alone
    # once the author edits the chapter, the record no longer describes the file: no note
    path = book / "chapters" / "0001.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n作者补的一段。\n", encoding="utf-8")
    assert "open issue" not in muse("check", "--book", book).stdout


def test_model_says_pass_but_lists_critical_issue_repair_happens(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=10)[0]
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [
                {"output": {"issues": [issue(quote, "critical", "character")], "passed": True}},
                {"output": {"issues": [], "passed": True}},
            ],
            "writer": [{"output": _edits(body, [paragraph_of(body, quote)])}],
            "editor": [{"output": editor_output(body)}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["consistency"][0]["model_passed"] is True and ch["consistency"][0]["model_disagrees"] is True
    assert ch["disagreements"]["reviewer_pass_flag"] == 1
    assert any(s["step"] == "repair" and s["status"] == "passed" for s in ch["steps"])
    assert receipts_by_role(book)["writer"] == 1


def test_evidence_not_in_text_is_corrected_then_fails_closed_after_call_budget(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    bad = editor_output(body)
    bad["dims"]["审美品质"]["evidence"] = "这句话根本不在正文里出现过"
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [{"output": {"issues": [], "passed": True}}],
            "editor": [{"output": bad}, {"output": bad}, {"output": bad}, {"output": editor_output(body)}],
        },
    )
    original = (book / "chapters" / "0001.md").read_bytes()
    r = muse("review", "1", "--book", book, "--json", "--apply")
    assert r.exit_code == 3
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "error" and ch["error_code"] == "CONTRACT_QUOTE_NOT_FOUND"
    assert ch["steps"][-1] == {
        "step": "facts",
        "status": "skipped",
        "reason": "an earlier step failed closed",
        "code": None,
        "detail": "",
    }
    assert ch["steps"][-2] == {
        "step": "editor_review",
        "status": "error",
        "reason": None,
        "code": "CONTRACT_QUOTE_NOT_FOUND",
        "detail": ch["steps"][-2]["detail"],
    }
    detail = ch["steps"][-2]["detail"]
    assert detail.startswith("the editor's answer failed closed: ") and "role editor (s:scripted-model-1)" in detail
    assert receipts_by_role(book)["editor"] == 3  # the call budget (calls.max_attempts = 3), then fail closed
    assert "error[CONTRACT_QUOTE_NOT_FOUND]" in r.stderr
    assert (book / "chapters" / "0001.md").read_bytes() == original
    # the correction message carried the violation: a corrected answer within the budget is accepted
    book2 = make_book(
        tmp_path / "c",
        script={
            "reviewer": [{"output": {"issues": [], "passed": True}}],
            "editor": [{"output": bad}, {"output": editor_output(body)}],
        },
    )
    r = muse("review", "1", "--book", book2, "--json")
    assert r.exit_code == 0, r.stderr
    assert as_json(r.stdout)["chapters"][0]["usage"]["by_role"]["editor"]["attempts"] == 2
    # the budget is the configured one: with calls.max_attempts = 2 the same answers fail closed after 2
    book3 = make_book(
        tmp_path / "d",
        script={
            "reviewer": [{"output": {"issues": [], "passed": True}}],
            "editor": [{"output": bad}, {"output": bad}, {"output": editor_output(body)}],
        },
        extra_toml="[calls]\nmax_attempts = 2\n",
    )
    r = muse("review", "1", "--book", book3, "--json")
    assert r.exit_code == 3 and as_json(r.stdout)["chapters"][0]["error_code"] == "CONTRACT_QUOTE_NOT_FOUND"
    assert receipts_by_role(book3)["editor"] == 2


def test_forbidden_phrase_rewrites_only_its_paragraphs(tmp_path: Path, muse) -> None:
    body = body_of(tmp_path)
    paras = split_paragraphs(body)
    phrase = "大贤良师"
    targets = [p.index for p in paras if phrase in p.text]
    assert 1 <= len(targets) < len(paras) - 3
    good = {"paragraphs": [{"index": i, "text": paras[i].text.replace(phrase, "天师")} for i in targets]}
    still_bad = {"paragraphs": [{"index": i, "text": paras[i].text} for i in targets]}
    book = make_book(
        tmp_path / "b",
        rules=f"禁止:{phrase}\n偏好:多对话,快节奏\n",
        script={
            "writer": [{"output": still_bad}, {"output": good}],
            "reviewer": [{"output": {"issues": [], "passed": True}}],
            "editor": [{"output": editor_output(body)}],
        },
    )
    path = book / "chapters" / "0001.md"
    before = path.read_bytes()
    r = muse("review", "1", "--book", book, "--json", "--apply")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["steps"][0]["step"] == "rules" and ch["steps"][0]["status"] == "failed"
    assert ch["steps"][1] == {
        "step": "forbidden_rewrite",
        "status": "passed",
        "reason": None,
        "code": None,
        "detail": f"rewrote paragraphs {targets}",
    }
    assert ch["rules"]["forbidden"][0]["paragraphs"] == targets and ch["rules"]["forbidden_remaining"] == []
    assert ch["rules"]["preferences_injected"] is True
    assert ch["revision"]["applied"] is True
    after = path.read_bytes()
    assert (book / ch["revision"]["base_path"]).read_bytes() == before  # the original is kept, byte-exact
    assert (book / ch["revision"]["path"]).read_bytes() == after
    assert phrase.encode() not in after
    old_lines, new_lines = before.split(b"\n"), after.split(b"\n")
    assert len(old_lines) == len(new_lines)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    # byte-compare every line: only the lines of the targeted paragraphs differ (line 0 is the heading)
    line_of = {p.index: body[: p.start].count("\n") + 1 for p in paras}
    assert changed == [line_of[i] for i in targets]
    # the writer got the preferences verbatim, and the contract's correction (2 requests in one call)
    assert receipts_by_role(book)["writer"] == 2
    writer = requests_of(book, "writer")
    assert len(writer) == 2
    assert "多对话,快节奏" in writer[0][0]["content"] and phrase in writer[0][0]["content"]
    assert f"需要重写的段落编号:{'、'.join(map(str, targets))}" in writer[0][1]["content"]
    assert (
        "CONTRACT_FORBIDDEN_PHRASE" in json.dumps(writer[1], ensure_ascii=False) or phrase in writer[1][-1]["content"]
    )


def test_no_model_configured_skips_model_steps_never_passes(tmp_path: Path, muse) -> None:
    book = make_book(tmp_path / "b", rules="禁止:大贤良师\n")
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr  # the rule step found an error finding nobody fixed: not exit 0
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "not_reviewed"
    got = {s["step"]: (s["status"], s["reason"]) for s in ch["steps"]}
    assert got == {
        "rules": ("failed", None),
        "forbidden_rewrite": ("skipped", "no model configured"),
        "consistency_review": ("skipped", "no model configured"),
        "editor_review": ("skipped", "no model configured"),
        "facts": ("skipped", "no model configured"),
    }
    assert ch["rules"]["forbidden_remaining"][0]["phrase"] == "大贤良师"
    # the database says skipped too, with the reason
    assert ("consistency_review", "skipped", "no model configured") in db_rows(
        book, "SELECT step, status, reason FROM review_steps"
    )
    # the terminal rendering never shows a skipped step as passed
    r = muse("review", "1", "--book", book, "--force")
    assert r.exit_code == 1
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("consistency_review", "editor_review"))]
    assert len(lines) == 2
    for ln in lines:
        assert "skipped(no model configured)" in ln and "passed" not in ln
    assert "not_reviewed" in r.stdout and "open issues: 1" in r.stdout
    # without the forbidden phrase, a no-model review has nothing open, but it was not reviewed: exit 4
    (book / "rules.txt").write_text("禁止:不在正文里的词\n", encoding="utf-8")
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 4 and as_json(r.stdout)["chapters"][0]["status"] == "not_reviewed"


WITHOUT_WRITER = '[roles]\nreviewer = "s:scripted-model-1"\neditor = "s:scripted-model-1"\n'


@pytest.mark.parametrize(
    ("blocking", "overall", "step"),
    [(True, 90, "repair"), (False, 65, "polish"), (False, 40, "rewrite")],
)
def test_a_writer_step_skipped_leaves_the_chapter_open_never_finalized(
    tmp_path: Path, muse, blocking: bool, overall: int, step: str
) -> None:
    """Reviewer and editor configured, no writer: the fix the loop asked for is skipped(no model configured),
    so what it was to fix stays open — the chapter is not reported `finalized` (skip is not pass)."""
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    issues = [issue(quote, "major")] if blocking else []
    book = make_book(
        tmp_path / "b",
        roles=False,
        extra_toml=WITHOUT_WRITER,
        script={
            "reviewer": [{"output": {"issues": issues, "passed": not blocking}}],
            "editor": [{"output": editor_output(body, scores=80, overall=overall)}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    got = {s["step"]: (s["status"], s["reason"]) for s in ch["steps"]}
    assert got[step] == ("skipped", "no model configured")
    assert ch["status"] == "finalized_with_issues" and ch["open_issues"] == 1
    assert ch["repairs"] == [] and ch["revision"] is None
    assert receipts_by_role(book) == {"reviewer": 1, "editor": 1}
    r = muse("review", "1", "--book", book)
    assert f"{step}" in r.stdout and "skipped(no model configured)" in r.stdout
    assert "finalized_with_issues" in r.stdout and r.exit_code == 1


def test_a_reviewer_answer_without_a_pass_flag_is_valid(tmp_path: Path, muse) -> None:
    """The pass flag is optional (seed 004: recorded *if* the model gives one; the prompt says it may be left
    out): an answer without it is accepted at the first request, recorded as None, not a disagreement."""
    body = body_of(tmp_path)
    book = make_book(
        tmp_path / "b",
        script={"reviewer": [{"output": {"issues": []}}], "editor": [{"output": editor_output(body)}]},
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized" and ch["usage"]["by_role"]["reviewer"]["attempts"] == 1
    assert ch["consistency"][0]["model_passed"] is None and ch["disagreements"]["reviewer_pass_flag"] == 0
