"""The studio shows a plan draft (the plan agent's bundle) as it shows any draft: listed on the desk page without
a chapter, its page with the bundle and its diff against the files as they are, the three decisions offered."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..replay.honest_outliner import KEY_ENV
from ..replay.test_plan_stage import GOOD, _book, _draft
from .running import start


def test_a_plan_draft_has_its_page_in_the_studio(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "userconf" / "config.toml"))
    monkeypatch.setenv(KEY_ENV, "not-a-real-key")
    book, models = _book(tmp_path, gates=True)
    doc = _draft(book, models, [GOOD])
    studio = start(book.root, env={KEY_ENV: "not-a-real-key"})
    try:
        desk = studio.request("GET", "/drafts")
        assert desk.status == 200 and doc.draft.short in desk.body and "规划" in desk.body
        page = studio.request("GET", f"/drafts/{doc.draft.short}")
        assert page.status == 200, page.body[:500]
        text = html.unescape(page.body)
        assert "===== plan/outline.md =====" in text and "cards/赵云.yaml" in text
        assert "/chapters/0000.html" not in page.body  # a plan draft belongs to no chapter
        assert "What accepting writes" in text and "plan/settings/人物.md" in text and "Declared facts" not in text
    finally:
        assert "Traceback" not in studio.stop()
