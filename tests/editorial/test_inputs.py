"""What the roles are actually sent (read back from the raw vault): memory, fatigue, preferences, the text itself."""

from __future__ import annotations

import json
from pathlib import Path

from novelmuse.text import split_paragraphs

from ..conftest import muse_subprocess
from .helpers import (
    as_json,
    body_of,
    editor_output,
    issue,
    make_book,
    paragraph_of,
    requests_of,
    unique_sentences,
)


def _vault_requests(book: Path) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in (book / ".muse" / "vault").rglob("*") if p.is_file()
    )


def test_reviewer_gets_text_and_memory_editor_gets_fatigue(tmp_path: Path, muse) -> None:
    body2 = body_of(tmp_path, 2)
    book = make_book(
        tmp_path / "b",
        chapters=2,
        rules="疲劳词:玄德≤1\n偏好:多写对话\n",
        script={"reviewer": [{"output": {"issues": [], "passed": True}}], "editor": [{"output": editor_output(body2)}]},
    )
    (book / "cards").mkdir()
    (book / "cards" / "liu-bei.yaml").write_text(
        "id: liu-bei\ntype: character\nname: 刘备\naliases: [玄德]\nattributes:\n  status:\n"
        "    - {value: alive, from: 1}\n  location:\n    - {value: 涿郡, from: 1}\n",
        encoding="utf-8",
    )
    r = muse("review", "2", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["memory"]["available"] is True and ch["memory"]["card_states"] == 1
    assert ch["rules"]["fatigue"][0]["phrase"] == "玄德" and ch["rules"]["fatigue"][0]["limit"] == 1
    assert ch["rules"]["preferences_injected"] is False  # the writer was never called
    sent = _vault_requests(book)
    decoded = json.dumps(json.loads("[" + ",".join(_json_docs(sent)) + "]"), ensure_ascii=False)
    assert "location=涿郡" in decoded and "status=alive" in decoded  # as-of card state, to the reviewer
    assert "玄德:" in decoded and "上限 1" in decoded  # the fatigue warning, to the editor as reference
    assert "多写对话" in decoded  # the book's style requirements (preferences), to the editor
    assert body2.strip().splitlines()[-1].strip()[:30] in decoded  # the chapter text itself, not a summary
    assert "accept 是最常见结果" in decoded  # the seed's calibration


def _json_docs(blob: str) -> list[str]:
    """The JSON documents among the vault files (requests and responses)."""
    docs = []
    for chunk in blob.split("\n"):
        chunk = chunk.strip()
        if chunk.startswith("{"):
            try:
                json.loads(chunk)
            except ValueError:
                continue
            docs.append(chunk)
    return docs


def test_bad_rules_are_bad_input(tmp_path: Path, muse) -> None:
    book = make_book(tmp_path / "b", rules="禁止:后宫\n疲劳词:后宫≤2\n")
    r = muse("review", "1", "--book", book)
    assert r.exit_code == 2 and "RULES_CONTRADICTION" in r.stderr


def test_range_in_a_real_subprocess_progress_on_stderr_json_on_stdout(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", chapters=3)
    r = muse_subprocess("review", "--range", "1-3", "--book", book, "--json")
    assert r.exit_code == 4, r.stderr  # not evaluated (no model): never exit 0
    doc = json.loads(r.stdout)  # exactly one JSON document on stdout
    assert [c["status"] for c in doc["chapters"]] == ["not_reviewed"] * 3
    assert doc["run_id"] is None and doc["summary"]["not_reviewed"] == 3
    for c in doc["chapters"]:
        labels = {s["step"]: s["status"] for s in c["steps"]}
        assert labels == {
            "rules": "passed",
            "consistency_review": "skipped",
            "editor_review": "skipped",
            "facts": "skipped",
        }
    r = muse_subprocess("review", "--range", "1-3", "--book", book)
    assert r.stdout.count("skipped(no model configured)") == 9
    assert "none reviewed by a model (no model configured) — 3 unchanged since their last run" in r.stdout


def _user_text(messages: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


def test_reviewer_and_editor_each_see_the_whole_current_text_and_the_editor_its_calibration(
    tmp_path: Path, muse
) -> None:
    """Seed 004: judge the chapter text itself, never a summary — every paragraph of the text as it stands
    when the role is asked (the re-review and the editor see the repaired text, not the original)."""
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    paras = split_paragraphs(body)
    repaired = paras[target].text.strip() + "(修补后的新句子)"
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [
                {"output": {"issues": [issue(quote, "major")], "passed": False}},
                {"output": {"issues": [], "passed": True}},
            ],
            "writer": [{"output": {"paragraphs": [{"index": target, "text": repaired}]}}],
            "editor": [{"output": editor_output(body)}],
        },
    )
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    reviewer = [_user_text(m) for m in requests_of(book, "reviewer")]
    editor = [m for m in requests_of(book, "editor")]
    assert len(reviewer) == 2 and len(editor) == 1
    first, second = sorted(reviewer, key=lambda t: "修补后的新句子" in t)
    for i, p in enumerate(paras):  # the first review: every paragraph of the original, verbatim
        assert p.text.strip() in first, i
    assert "修补后的新句子" not in first
    for sent in (second, _user_text(editor[0])):  # the re-review and the editor: the repaired text, whole
        assert repaired in sent
        for i, p in enumerate(paras):
            if i != target:
                assert p.text.strip() in sent, i
    system = editor[0][0]["content"]
    for calibration in (
        "必须基于章节正文本身评审,不得只看摘要下结论",
        "accept 是最常见结果,不要为了显得严格而降级",
        "证据不足不要硬凑分",
        "伏笔健康在本书前 3 章可给中性分",
        "任一维 <50 或 overall<60 → rewrite",
    ):
        assert calibration in system, calibration
    assert "必须基于下面给出的章节正文本身审查，不得只看摘要" in reviewer_system(book)


def reviewer_system(book: Path) -> str:
    return requests_of(book, "reviewer")[0][0]["content"]
