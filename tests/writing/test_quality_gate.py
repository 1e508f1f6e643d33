"""Issue 14 items 3, 4, 5: `muse review` ends with the quality gate on the final text — blind judges read the same
evidence pack the writer gets for that chapter (as-of card states, the ledger, prior chapters), the rule layer
computes the hard blocks, every decision is stored (listed by `muse judge-summary`) with its gate lesson, and a
rerun with the same inputs judges nothing again. On a copy of the sample book (三国演义 1–10, its cards and
outlines) with the scripted provider."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import find_book
from novelmuse.judging import Candidate, build_blind_item, load_rubric
from novelmuse.text import sha256_hex
from novelmuse.writing import confirm_outline, evidence_pack

from ..conftest import SAMPLE_BOOK
from ..editorial.helpers import EMPTY_FACTS, editor_output, requests_of
from ..judging._helpers import good_report

CLEAN = {"output": {"issues": [], "passed": True}}


def gate_report(text: str, chapter: int, canon: float = 4.5) -> dict[str, Any]:
    """What a judge of chapter `chapter`'s gate answers for `text`: every dimension 4.5, canon_compliance `canon`."""
    item = build_blind_item(
        item_id=f"gate-{chapter}-{sha256_hex(text)[:16]}",
        seed="0",
        rubric=load_rubric("quality_gate"),
        candidates=[Candidate("A", text)],
    )
    return {"output": good_report(item.blind, lambda c, d, i: canon if d == "canon_compliance" else 4.5)}


def sample_copy(root: Path, script: dict[str, Any] | None, roles: str = 'default = "s:scripted-model-1"') -> Path:
    """The sample book's author files, with the scripted provider serving `script` under [roles] `roles`."""
    root.mkdir(parents=True)
    for name in ("chapters", "cards", "outlines"):
        shutil.copytree(SAMPLE_BOOK / name, root / name)
    shutil.copy2(SAMPLE_BOOK / "rules.txt", root / "rules.txt")
    toml = (SAMPLE_BOOK / "book.toml").read_text(encoding="utf-8")
    if script is not None:
        script = {"extractor": [{"output": EMPTY_FACTS}] * 4, **script}
        (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
        toml += f'\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\n{roles}\n'
    (root / "book.toml").write_text(toml, encoding="utf-8")
    return root


def body(root: Path, n: int) -> str:
    return find_book(root).read_chapter(n).body


def _clean_review_with_gate(root: Path) -> str:
    """A copy of the sample book whose chapter 3 reviews clean and passes the gate (two judges); its text."""
    text = body(SAMPLE_BOOK, 3)
    sample_copy(
        root,
        {
            "reviewer": [CLEAN],
            "editor": [{"output": editor_output(text)}],
            "judge": [gate_report(text, 3), gate_report(text, 3)],
        },
    )
    return text


def test_review_ends_with_the_gate_judged_against_the_chapter_evidence(
    muse: Callable[..., Any], tmp_path: Path
) -> None:
    root = tmp_path / "b"
    text = _clean_review_with_gate(root)
    r = muse("review", "3", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["chapters"][0]["status"] == "finalized"
    (gate,) = doc["gates"]
    assert gate["chapter"] == 3 and gate["status"] == "passed" and gate["resumed"] is False
    assert gate["hard_blocks"]["source_safety"]["state"] == "passed"
    assert gate["evidence"]["source"] == "memory" and "OUTLINE_NOT_FOUND" in gate["evidence"]["note"]
    assert doc["exit"] == {"outcome": "ok", "code": 0}
    # the judges read the evidence pack: a character's state as of chapter 2, the ledger with ages, chapter 2's text
    (request, _) = requests_of(root, "judge")
    blind = json.loads(next(m["content"] for m in request if m["role"] == "user").split("\n", 1)[1])
    context = {c["id"]: c["text"] for c in blind["context"]}
    assert "曹操的状态：在世（自第1回起）〔作者设定〕" in context.values()
    assert any("F-outer-troops" in t and "已0章" in t for t in context.values())
    assert context["prior_chapter-2"].startswith("第2回 第二回")
    assert "context" in blind["policy"]["evidenceTypes"]
    # the decision is stored and listed, with its gate lesson
    summary = json.loads(muse("judge-summary", "--book", root, "--json").stdout)
    (row,) = summary["gates"]
    assert (row["origin"], row["chapter"], row["outcome"], row["candidate_sha256"]) == (
        "review",
        3,
        "passed",
        sha256_hex(text),
    )
    assert row["hard_blocks"] == {
        "source_safety": "passed",
        "output_compliance": "passed",
        "static_contract": "not_applicable",
    }
    assert row["lesson_id"] and row["evidence_sha256"] == gate["evidence"]["sha256"]
    with sqlite3.connect(root / ".muse" / "muse.db") as conn:
        (lesson,) = conn.execute("SELECT lesson FROM judge_lessons WHERE id = ?", (row["lesson_id"],)).fetchone()
    assert " 第3回 passed" in lesson  # the chapter named the book's way
    status = json.loads(muse("status", "--book", root, "--json").stdout)
    assert status["gates"].startswith("quality gate: 1 decision(s) — 1 passed")
    # a rerun with the same inputs finds the decision: nothing is judged again
    again = muse("review", "3", "--book", root, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["gates"][0]["resumed"] is True
    assert len(requests_of(root, "judge")) == 2
    human = muse("review", "3", "--book", root)
    assert "quality gate 第3回: passed  (resumed" in human.stdout and "evidence: memory (" in human.stdout


def test_a_failed_gate_exits_1_and_a_fired_hard_block_fails_it_whatever_the_scores(
    muse: Callable[..., Any], tmp_path: Path
) -> None:
    root = tmp_path / "b"
    text = body(SAMPLE_BOOK, 3)
    sample_copy(
        root,
        {
            "reviewer": [CLEAN, CLEAN],
            "editor": [{"output": editor_output(text)}] * 2,
            "judge": [gate_report(text, 3, canon=3.0)] * 2,
        },
    )
    r = muse("review", "3", "--book", root, "--json")
    assert r.exit_code == 1, r.stderr
    (gate,) = json.loads(r.stdout)["gates"]
    assert gate["status"] == "failed" and gate["decision"]["reasons"] == [
        "critical dimension canon_compliance scored 3.0 < 4.0"
    ]
    assert json.loads(r.stdout)["chapters"][0]["status"] == "finalized"  # the review passed; the gate did not
    # model meta-text in the chapter: the rule layer fires source_safety, best scores or not
    leaky = text.replace("却说", "作为一个AI，却说", 1)
    path = root / "chapters" / "0003.md"
    path.write_text(path.read_text(encoding="utf-8").replace(text, leaky), encoding="utf-8")
    script = yaml.safe_load((root / "script.yaml").read_text(encoding="utf-8"))
    script["judge"] = [gate_report(leaky, 3)] * 2
    script["editor"] = [{"output": editor_output(leaky)}]
    (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    r = muse("review", "3", "--book", root, "--json")
    assert r.exit_code == 1, r.stderr
    (gate,) = json.loads(r.stdout)["gates"]
    assert gate["status"] == "failed" and gate["decision"]["reasons"] == ["hard block source_safety fired (rule layer)"]
    assert [f["code"] for f in gate["hard_blocks"]["source_safety"]["findings"]] == ["HB_META_TEXT"]


def test_a_wanted_gate_without_a_judge_is_not_evaluated(muse: Callable[..., Any], tmp_path: Path) -> None:
    root = tmp_path / "b"
    text = body(SAMPLE_BOOK, 3)
    roles = "\n".join(f'{r} = "s:scripted-model-1"' for r in ("reviewer", "editor", "writer", "arbiter", "extractor"))
    sample_copy(root, {"reviewer": [CLEAN, CLEAN], "editor": [{"output": editor_output(text)}] * 2}, roles)
    r = muse("review", "3", "--book", root, "--json")
    assert r.exit_code == 4, r.stderr
    doc = json.loads(r.stdout)
    assert doc["chapters"][0]["status"] == "finalized"
    assert (doc["gates"][0]["status"], doc["gates"][0]["reason"]) == ("skipped", "no model configured")
    assert doc["exit"] == {"outcome": "not_evaluated", "code": 4}
    # --no-gate leaves it out, said so, and is not a skip of something asked for
    r = muse("review", "3", "--book", root, "--no-gate", "--json")
    assert r.exit_code == 0, r.stderr
    gate = json.loads(r.stdout)["gates"][0]
    assert gate["status"] == "skipped" and gate["reason"].startswith("not requested")


def test_a_chapter_with_a_confirmed_outline_is_judged_against_the_writers_context(tmp_path: Path) -> None:
    root = sample_copy(tmp_path / "b", None)
    book = find_book(root)
    confirm_outline(book, 2)
    text = body(root, 2)
    pack, outline = evidence_pack(book, 2, [text])
    assert pack.source == "writer_context" and outline is not None and outline.chapter == 2
    assert pack.manifest_sha256 is not None and len(pack.sha256) == 64
    kinds = {i.kind for i in pack.items}
    assert {"fact", "prior_chapter", "foreshadow"} <= kinds
    facts = [i.text for i in pack.items if i.kind == "fact"]
    assert any(t.startswith("关羽") for t in facts)  # an entity of the outline, as of chapter 1
    assert pack.prior_texts and pack.prior_texts[0][:40] in body(root, 1)  # the continuous window: chapter 1
    # nothing of chapter 2 or later: the same pack on a book that ends at chapter 1 plus chapter 2
    for n in range(3, 11):
        (root / "chapters" / f"{n:04d}.md").unlink()
    again, _ = evidence_pack(find_book(root), 2, [text])
    assert again.sha256 == pack.sha256


def test_the_review_summary_and_its_bill_count_the_gate_judges(muse: Callable[..., Any], tmp_path: Path) -> None:
    """Every call the command makes is in its summary (the judges included): what `muse cost --run` says; and its
    bill before the first call names the judges."""
    root = tmp_path / "b"
    _clean_review_with_gate(root)
    r = muse("review", "3", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    cost = json.loads(muse("cost", "--run", doc["run_id"], "--book", root, "--json").stdout)
    by_role = {line["key"]: line["calls"] for line in cost["by_role"]}
    assert by_role["judge"] == 2
    s = doc["summary"]
    assert (s["calls"], s["input_tokens"], s["output_tokens"], s["cost"]) == tuple(
        cost["total"][k] for k in ("calls", "input_tokens", "output_tokens", "cost")
    )
    bill = {x["role"]: x["calls"] for x in doc["preflight"]["bill"]["roles"]}
    assert bill["judge"] >= 2 and all(by_role[role] <= bill[role] for role in by_role), (by_role, bill)
    assert "the review's worst case: at most" in r.stderr
