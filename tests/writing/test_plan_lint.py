"""`muse plan lint`: the plan's volumes, planned foreshadows and characters checked, every finding at its file:line;
a property test of the volume coverage against a naive oracle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import find_book
from novelmuse.writing import lint_plan

from ..conftest import SAMPLE_BOOK

BROKEN = """# 大纲

# 第1-10回：起
## 第12回：越界的小节

# 第8-20回：叠
- 伏笔 F-sword：宝剑的来历 · 埋第9回 · 收第15回
- 伏笔 F-seal：玉玺下落 · 埋第10回
- 伏笔 F-open：天书 · 埋第11回 · 未收
- 伏笔 F-back：倒叙 · 埋第18回 · 收第12回
- 伏笔 F-far：远方 · 埋第19回 · 收第99回
- 伏笔 F-sword：重复的宝剑

# 第25-30回：缺了二十一到二十四
"""

PEOPLE = "# 人物设定\n\n- 刘备：仁德\n- 诸葛亮：卧龙\n\n# 地理\n\n- 荆州：四战之地\n"


def _book(root: Path, outline: str | None = None, people: str | None = None) -> Path:
    shutil.copytree(SAMPLE_BOOK, root, ignore=shutil.ignore_patterns(".muse"))
    if outline is not None:
        (root / "plan" / "outline.md").write_text(outline, encoding="utf-8")
    if people is not None:  # a settings file not named for characters: its 人物 section is
        (root / "plan" / "settings" / "设定.md").write_text(people, encoding="utf-8")
    return root


def test_the_sample_plan_is_clean(muse: Any, tmp_path: Path) -> None:
    root = _book(tmp_path / "b")
    r = muse("plan", "lint", "--book", root, "--json")
    assert r.exit_code == 0, r.stdout
    doc = json.loads(r.stdout)
    assert [v.split(" ")[0] for v in doc["volumes"]] == ["1–10", "11–20", "21–30"]
    assert doc["characters"] == 4 and doc["problems"] == []


def test_every_broken_rule_is_named_at_its_line(muse: Any, tmp_path: Path) -> None:
    root = _book(tmp_path / "b", BROKEN, PEOPLE)
    r = muse("plan", "lint", "--book", root, "--json")
    assert r.exit_code == 1
    found = {(p["code"], p["where"]) for p in json.loads(r.stdout)["problems"]}
    assert found == {
        ("PLAN_SECTION_OUTSIDE", "plan/outline.md:4"),
        ("PLAN_VOLUME_OVERLAP", "plan/outline.md:6"),
        ("PLAN_FORESHADOW_UNRESOLVED", "plan/outline.md:8"),
        ("PLAN_FORESHADOW_ORDER", "plan/outline.md:10"),
        ("PLAN_FORESHADOW_OUTSIDE", "plan/outline.md:11"),
        ("PLAN_FORESHADOW_DUPLICATE", "plan/outline.md:12"),
        ("PLAN_VOLUME_GAP", "plan/outline.md:14"),
        ("PLAN_CHARACTER_NO_CARD", "plan/settings/设定.md:4"),
    }
    human = muse("plan", "lint", "--book", root)
    assert "error PLAN_CHARACTER_NO_CARD: the settings name the character '诸葛亮'" in human.stdout
    assert "muse cards new 诸葛亮 --kind character" in human.stdout
    assert "no volume covers chapter(s) 21–24" in human.stdout  # the gap named, not just flagged


def test_written_chapters_beyond_the_plan_and_a_missing_plan(muse: Any, tmp_path: Path) -> None:
    root = _book(tmp_path / "b", "# 大纲\n\n# 第1-8回：前八回\n")
    r = muse("plan", "lint", "--book", root, "--json")
    assert r.exit_code == 1
    (problem,) = json.loads(r.stdout)["problems"]
    assert problem["code"] == "PLAN_CHAPTERS_UNPLANNED" and "9–10" in problem["message"]
    (root / "plan" / "outline.md").unlink()
    r = muse("plan", "lint", "--book", root)
    assert r.exit_code == 2 and "error[PLAN_MISSING]" in r.stderr


def _oracle(ranges: list[tuple[int, int]]) -> tuple[bool, bool]:
    """(a gap, an overlap) by counting every chapter 1..the last one covered."""
    last = max(b for _, b in ranges)
    counts = [sum(1 for a, b in ranges if a <= n <= b) for n in range(1, last + 1)]
    return any(c == 0 for c in counts), any(c > 1 for c in counts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(0, 12)), min_size=1, max_size=6))
def test_volume_coverage_matches_a_naive_count(tmp_path_factory: Any, spans: list[tuple[int, int]]) -> None:
    ranges = [(a, a + n) for a, n in spans]
    root = tmp_path_factory.mktemp("plan") / "b"
    heads = "\n\n".join(f"# 第{a}-{b}回：卷\n正文。" for a, b in ranges)
    _book(root, "# 大纲\n\n" + heads + "\n")
    for n in range(1, 11):  # chapters are the book's, not the plan's: keep every written chapter inside it
        if n > max(b for _, b in ranges):
            (root / "chapters" / f"{n:04d}.md").unlink()
    doc = lint_plan(find_book(root))
    codes = {p.code for p in doc.problems}
    assert (("PLAN_VOLUME_GAP" in codes), ("PLAN_VOLUME_OVERLAP" in codes)) == _oracle(ranges)


def test_a_character_section_ends_at_the_next_heading_of_its_level(tmp_path: Path) -> None:
    settings = "# 设定\n\n## 主要人物\n\n### 刘备\n- 诸葛亮：卧龙\n\n## 地理\n\n- 荆州：四战之地\n### 襄阳\n"
    root = _book(tmp_path / "b", people=settings)
    doc = lint_plan(find_book(root))
    named = [(p.code, p.where) for p in doc.problems]
    assert named == [("PLAN_CHARACTER_NO_CARD", "plan/settings/设定.md:6")]  # 诸葛亮; not 荆州 nor 襄阳
    assert doc.characters == 2 + 4  # 刘备 and 诸葛亮 here, and the four of 人物言行.md
