"""Review resume keys are the role tasks a review used: a prompt edit redoes only the reviews that rendered it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from novelmuse.book import find_book
from novelmuse.llm import tasks_used
from novelmuse.roles import _task
from novelmuse.roles.editor import REVIEW as EDITOR_REVIEW
from novelmuse.roles.extractor import EXTRACT
from novelmuse.roles.reviewer import REVIEW
from novelmuse.roles.writer import REWRITE
from novelmuse.text import sha256_hex, split_paragraphs

from .helpers import as_json, editor_output, make_book, receipts_by_role, requests_of, sanguo_chapters

CLEAN = {"issues": [], "passed": True}
EXTRA = "请保留原文的章末钩子。"


def _rewritten(body: str) -> str:
    paras = [p.text.strip() for p in split_paragraphs(body)]
    return "\n".join([f"重写:{paras[0]}", *paras[1:]])


def _script() -> dict[str, object]:
    """Chapter 1: the editor asks for a rewrite (the writer's `rewrite` task), then accepts; chapter 2: accepted.
    Enough for two reviews of chapter 1 and one of chapter 2."""
    (_, body1), (_, body2) = sanguo_chapters(2)
    new1 = _rewritten(body1)
    on1, on2 = {"match": "【第1回 ·"}, {"match": "【第2回 ·"}
    rewrite_round = [
        {"output": editor_output(body1, overall=40, verdict="rewrite"), **on1},
        {"output": editor_output(new1, overall=85), **on1},
    ]
    return {
        "reviewer": [{"output": CLEAN, **on1}] * 4 + [{"output": CLEAN, **on2}],
        "editor": rewrite_round * 2 + [{"output": editor_output(body2), **on2}],
        "writer": [{"output": {"text": new1}}] * 2,
    }


def test_a_prompt_edit_redoes_only_the_reviews_whose_tasks_rendered_it(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = make_book(tmp_path / "b", chapters=2, script=_script())
    r = muse("review", "--range", "1-2", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    assert [c["repairs"][0]["kind"] if c["repairs"] else None for c in doc["chapters"]] == ["rewrite", None]
    # the run recorded exactly the tasks it used, in the order of first use (chapter 2's facts last)
    assert tasks_used(find_book(book).db, doc["run_id"]) == [REVIEW.ref, EDITOR_REVIEW.ref, REWRITE.ref, EXTRACT.ref]
    assert receipts_by_role(book) == {"reviewer": 3, "editor": 3, "writer": 1, "extractor": 1}

    # the writer's rewrite prompt is tuned (a new registered version, as a prompt edit must be)
    copy = tmp_path / "roles"
    shutil.copytree(Path(_task.__file__).parent, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    template = copy / "writer" / "rewrite.txt"
    template.write_text(template.read_text(encoding="utf-8") + EXTRA + "\n", encoding="utf-8")
    registry = yaml.safe_load((copy / "prompts.yaml").read_text(encoding="utf-8"))
    files = {f: sha256_hex((copy / f).read_bytes()) for f in ("writer/system.txt", "writer/rewrite.txt")}
    bumped = REWRITE.ref.version + 1
    registry["tasks"].append({"role": "writer", "task": "rewrite", "version": bumped, "files": files})
    (copy / "prompts.yaml").write_text(yaml.safe_dump(registry, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(_task, "_prompts_dir", lambda: copy)
    assert REWRITE.ref.version == bumped

    r = muse("review", "--range", "1-2", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    doc = as_json(r.stdout)
    # chapter 2 never rewrote: resumed; chapter 1's review rendered the edited prompt: reviewed again with it
    assert [(c["chapter"], c["resumed"]) for c in doc["chapters"]] == [(1, False), (2, True)]
    assert receipts_by_role(book) == {"reviewer": 5, "editor": 5, "writer": 2, "extractor": 1}
    first, second = requests_of(book, "writer")
    assert EXTRA not in first[1]["content"] and EXTRA in second[1]["content"]
    # and with nothing changed since, both resume
    r = muse("review", "--range", "1-2", "--book", book, "--json")
    assert [c["resumed"] for c in as_json(r.stdout)["chapters"]] == [True, True]
    assert receipts_by_role(book) == {"reviewer": 5, "editor": 5, "writer": 2, "extractor": 1}
