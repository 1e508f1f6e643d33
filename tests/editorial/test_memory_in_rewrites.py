"""Issue 14 item 8: rewrites see the story's memory (seed 004: 台账进入后续写作上下文). The forbidden-phrase rewrite,
the consistency repair and the editor's rewrite are told the card states as of the chapter before and the active
foreshadow ledger with ages, like the reviewer — on the sample book (its cards and outlines), scripted."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import find_book
from novelmuse.text import split_paragraphs

from ..conftest import SAMPLE_BOOK
from .helpers import EMPTY_FACTS, as_json, editor_output, issue, requests_of, unique_sentences


def test_every_rewrite_of_the_loop_is_told_the_story_memory(tmp_path: Path, muse: Any) -> None:
    root = tmp_path / "b"
    root.mkdir()
    for name in ("chapters", "cards", "outlines"):
        shutil.copytree(SAMPLE_BOOK / name, root / name)
    shutil.copy2(SAMPLE_BOOK / "rules.txt", root / "rules.txt")  # 禁止:后宫 — chapter 2 holds it once
    body = find_book(SAMPLE_BOOK).read_chapter(2).body
    paras = split_paragraphs(body)
    hit = next(p.index for p in paras if "后宫" in p.text)
    fixed = body.replace("后宫", "内宫")
    quote = unique_sentences(fixed, 1, skip=3)[0]
    target = next(p.index for p in split_paragraphs(fixed) if quote in p.text)
    rewritten = "\n".join(p.text.strip() for p in split_paragraphs(fixed)) + "\n"
    script = {
        "writer": [
            {"output": {"paragraphs": [{"index": hit, "text": paras[hit].text.strip().replace("后宫", "内宫")}]}},
            {
                "output": {
                    "paragraphs": [{"index": target, "text": split_paragraphs(fixed)[target].text.strip() + "（改）"}]
                }
            },
            {"output": {"text": rewritten}},
        ],
        "reviewer": [
            {"output": {"issues": [issue(quote, "major")], "passed": False}},
            {"output": {"issues": [], "passed": True}},
            {"output": {"issues": [], "passed": True}},
        ],
        "editor": [
            {"output": editor_output(fixed, scores=40, overall=40, verdict="rewrite")},
            {"output": editor_output(rewritten)},
        ],
        "extractor": [{"output": EMPTY_FACTS}] * 2,
    }
    (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    toml = (SAMPLE_BOOK / "book.toml").read_text(encoding="utf-8")
    toml += '\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\ndefault = "s:scripted-model-1"\n'
    (root / "book.toml").write_text(toml + "\n[review]\nquality_gate = false\n", encoding="utf-8")
    r = muse("review", "2", "--book", root, "--json")
    assert r.exit_code == 0, r.stderr + r.stdout[-2000:]
    kinds = [c["kind"] for c in as_json(r.stdout)["chapters"][0]["repairs"]]
    assert kinds == ["forbidden_rewrite", "consistency_repair", "rewrite"]
    requests = requests_of(root, "writer")
    assert len(requests) == 3
    for messages in requests:
        system = messages[0]["content"]
        # a card's state as of chapter 1 and the ledger with ages — what the reviewer was told
        assert "【记忆:截至第1回的人物与设定状态" in system
        assert "关羽(又名云长、关公、关云长)[character]: status=alive，weapon=青龙偃月刀" in system
        assert "F-weapons: 三人新造的双股剑、青龙偃月刀、丈八点钢矛尚未显威(第1回埋设,已 0 章,预计第5回回收)" in system
    (review,) = requests_of(root, "reviewer")[:1]
    assert "关羽(又名云长、关公、关云长)[character]" in review[1]["content"]
