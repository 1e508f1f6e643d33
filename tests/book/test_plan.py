"""The author's plan/ folder: the outline cut into chapter-scoped sections, the settings files, what chapter N
reads, and the refusals (no outline, a chapter the outline does not cover, links, two outlines)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.book import Book, find_book, heading_scope, init_book, load_plan
from novelmuse.errors import InputError

OUTLINE = """\
# 三国演义 大纲
<!-- 作者备忘：这段不给模型看 -->
天下大势，分久必合，合久必分。主线：刘备集团由弱到强。

# 第一卷 第1-10回：群雄并起

## 桃园结义（第1回）
刘关张结义。

## 讨伐董卓
十八路诸侯会盟。

# 第11-20回：徐州风云
## 北海之围
管亥围北海，太史慈求救。
```
# 第99回 这不是标题（代码块里）
```

## 第21-30回
官渡之前。

# 结局
三分归晋。
"""


def _book(tmp_path: Path, outline: str | None = OUTLINE, settings: dict[str, str] | None = None) -> Book:
    init_book(tmp_path / "b")
    plan = tmp_path / "b" / "plan"
    if outline is not None:
        (plan / "outline.md").write_text(outline, encoding="utf-8")
    for name, text in (settings or {}).items():
        (plan / "settings").mkdir(exist_ok=True)
        (plan / "settings" / name).write_text(text, encoding="utf-8")
    return find_book(tmp_path / "b")


def test_sections_scopes_and_what_a_chapter_reads(tmp_path: Path) -> None:
    plan = load_plan(_book(tmp_path))
    assert [(s.heading, s.scope, s.line) for s in plan.sections] == [
        ("三国演义 大纲", None, 1),
        ("第一卷 第1-10回：群雄并起", (1, 10), 5),
        ("桃园结义（第1回）", (1, 1), 7),
        ("讨伐董卓", (1, 10), 10),  # inherited from the volume heading
        ("第11-20回：徐州风云", (11, 20), 13),
        ("北海之围", (11, 20), 14),
        ("第21-30回", (21, 30), 20),
        ("结局", None, 23),
    ]
    assert "作者备忘" not in plan.sections[0].text and "主线" in plan.sections[0].text
    assert "这不是标题" in plan.sections[5].text  # a heading in a code block is text
    assert plan.sections[5].where == "plan/outline.md:14-19"
    parts = plan.for_chapter(11)
    assert [(p.role, p.section.heading) for p in parts] == [
        ("general", "三国演义 大纲"),
        ("current", "第11-20回：徐州风云"),
        ("current", "北海之围"),
        ("next", "第21-30回"),
        ("general", "结局"),
    ]
    assert [(p.role, p.section.heading) for p in plan.for_chapter(1) if p.role != "general"] == [
        ("current", "第一卷 第1-10回：群雄并起"),
        ("current", "桃园结义（第1回）"),
        ("current", "讨伐董卓"),
        ("next", "第11-20回：徐州风云"),
        ("next", "北海之围"),
    ]
    assert [p.role for p in plan.for_chapter(25)] == ["general", "current", "general"]  # nothing after 30
    with pytest.raises(InputError) as exc:
        plan.for_chapter(31)
    assert exc.value.code == "PLAN_CHAPTER_NOT_COVERED" and "1–10, 1, 11–20, 21–30" not in exc.value.what
    assert "21–30" in exc.value.what and exc.value.where == "plan/outline.md"


def test_an_outline_without_chapter_headings_is_read_whole_and_settings_in_name_order(tmp_path: Path) -> None:
    plan = load_plan(
        _book(
            tmp_path,
            "# 主线\n少年入山修道。\n## 门派\n青云门。\n",
            {"b-power.yaml": "境界: [炼气, 筑基]\n", "a-world.md": "# 世界\n九州。<!-- 草稿 -->\n", "x.txt": "no"},
        )
    )
    assert [p.role for p in plan.for_chapter(500)] == ["general", "general"]
    assert [f.path for f in plan.settings] == ["plan/settings/a-world.md", "plan/settings/b-power.yaml"]
    assert plan.settings[0].text == "# 世界\n九州。\n" and plan.settings[1].text == "境界: [炼气, 筑基]\n"
    assert len({f.sha256 for f in plan.files}) == 3


def test_refusals(tmp_path: Path) -> None:
    empty = _book(tmp_path, outline=None)
    with pytest.raises(InputError) as exc:
        load_plan(empty).for_chapter(1)
    assert exc.value.code == "PLAN_MISSING"
    (empty.root / "plan" / "大纲.md").write_text("# 第1章\n", encoding="utf-8")
    assert load_plan(empty).outline is not None
    (empty.root / "plan" / "outline.md").write_text("# 第1章\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_plan(empty)
    assert exc.value.code == "PLAN_AMBIGUOUS"
    (empty.root / "plan" / "大纲.md").unlink()
    (empty.root / "plan" / "outline.md").write_text("# 第20-11章\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_plan(empty)
    assert exc.value.code == "PLAN_RANGE_INVALID" and exc.value.where == "plan/outline.md:1"
    secret = tmp_path / "secret.md"
    secret.write_text("# 第1章\n机密", encoding="utf-8")
    (empty.root / "plan" / "outline.md").unlink()
    os.symlink(secret, empty.root / "plan" / "outline.md")
    with pytest.raises(InputError) as exc:
        load_plan(empty)
    assert exc.value.code == "BOOK_LINK_OUTSIDE" and "机密" not in str(exc.value)
    (empty.root / "plan" / "outline.md").unlink()
    (empty.root / "notes.md").write_text("# 第1章\n书内的链接照读", encoding="utf-8")
    os.symlink(empty.root / "notes.md", empty.root / "plan" / "outline.md")  # a link that stays in the book
    assert "书内的链接照读" in load_plan(empty).sections[0].text
    os.symlink(tmp_path, empty.root / "plan" / "settings")
    with pytest.raises(InputError) as exc:
        load_plan(empty)
    assert exc.value.code == "BOOK_LINK_OUTSIDE"
    (empty.root / "plan" / "settings").unlink()
    (empty.root / "plan" / "settings").write_text("a file", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_plan(empty)
    assert exc.value.code == "PLAN_READ"
    (empty.root / "plan" / "outline.md").unlink()
    (empty.root / "plan" / "outline.md").write_bytes(b"\xff\xfe")
    with pytest.raises(InputError) as exc:
        load_plan(empty)
    assert exc.value.code == "PLAN_ENCODING"


_ZH = "零一二三四五六七八九"


def _zh(n: int) -> str:
    """A naive oracle for 1–999 in Chinese numerals (十一, 一百零五, 二百三十)."""
    h, rest = divmod(n, 100)
    t, o = divmod(rest, 10)
    out = f"{_ZH[h]}百" if h else ""
    if t:
        out += ("" if not h and t == 1 else _ZH[t]) + "十"
    elif h and o:
        out += "零"
    return out + (_ZH[o] if o else "")


@given(
    a=st.integers(1, 999),
    span=st.integers(0, 50),
    form=st.sampled_from(
        ["第{a}章", "第{a}-{b}章", "第{za}至{zb}回", "第{a}章—第{b}章", "Chapters {a}–{b}", "第{za}回"]
    ),
    before=st.sampled_from(["", "卷二 ", "# "]),
    after=st.sampled_from(["", "：北海之围", "（草）"]),
)
def test_heading_scope_against_a_naive_oracle(a: int, span: int, form: str, before: str, after: str) -> None:
    b = min(a + span, 999)
    heading = before + form.format(a=a, b=b, za=_zh(a), zb=_zh(b)) + after
    single = "{b}" not in form and "{zb}" not in form
    assert heading_scope(heading) == ((a, a) if single else (a, b))
    assert heading_scope(before + "北海之围" + after) is None
