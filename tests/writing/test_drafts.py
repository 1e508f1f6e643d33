"""Where a write run keeps its work, and the one way a draft reaches the author's file (sample book, chapter 11)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.book import Book, find_book
from novelmuse.errors import InputError
from novelmuse.text import parse_chinese_numeral, parse_heading, sha256_hex
from novelmuse.writing import (
    apply_draft,
    chinese_numeral,
    confirm_outline,
    heading_for,
    write_dry_run,
    write_history,
)

from ..conftest import SAMPLE_BOOK


@pytest.fixture
def sample(tmp_path: Path) -> Book:
    """A copy of the sample book (ten chapters) with the outline of chapter 11 confirmed."""
    shutil.copytree(SAMPLE_BOOK, tmp_path / "s", ignore=shutil.ignore_patterns(".muse"))
    book = find_book(tmp_path / "s")
    confirm_outline(book, 11)
    return book


@given(st.integers(min_value=0, max_value=99_999))
def test_chinese_numerals_parse_back(n: int) -> None:
    assert parse_chinese_numeral(chinese_numeral(n)) == n


def test_chinese_numerals_read_as_people_write_them() -> None:
    got = [chinese_numeral(n) for n in (1, 10, 11, 20, 101, 110, 1001, 1010, 10010, 12000, 120)]
    assert got == [
        "一",
        "十",
        "十一",
        "二十",
        "一百零一",
        "一百一十",
        "一千零一",
        "一千零一十",
        "一万零一十",
        "一万二千",
        "一百二十",
    ]


def test_a_new_chapter_follows_the_books_heading_style(sample: Book) -> None:
    line = heading_for(sample, 11, "刘皇叔北海救孔融")
    assert line == "第十一回\u3000刘皇叔北海救孔融"
    h = parse_heading(line)
    assert h is not None and (h.unit, h.number, h.title) == ("回", 11, "刘皇叔北海救孔融")


def test_apply_writes_an_absent_file_and_never_one_created_meanwhile(sample: Book) -> None:
    path = apply_draft(sample, 11, "第一段。\n第二段。", "刘皇叔北海救孔融", None)
    assert path == sample.chapters_dir / "0011.md"
    ch = sample.read_chapter(11)
    assert ch.heading == "第十一回\u3000刘皇叔北海救孔融" and ch.body == "第一段。\n第二段。\n"
    # a run that began when chapter 12 was absent, while the author created it meanwhile
    theirs = sample.chapters_dir / "0012.md"
    theirs.write_text("# 第十二回\n作者自己写的。\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        apply_draft(sample, 12, "草稿。", "", None)
    assert exc.value.code == "FILE_CHANGED_ON_DISK" and exc.value.exit_code == 2
    assert theirs.read_text(encoding="utf-8") == "# 第十二回\n作者自己写的。\n"
    assert not [p for p in sample.chapters_dir.iterdir() if p.name.startswith(".")]  # no temp file left


def test_apply_replaces_an_unchanged_file_and_refuses_an_edited_one(sample: Book) -> None:
    path = sample.chapters_dir / "0011.md"
    path.write_text("# 第十一回\n旧稿。\n", encoding="utf-8")
    began = sha256_hex(path.read_bytes())
    apply_draft(sample, 11, "新稿。", "题", began)
    assert sample.read_chapter(11).body == "新稿。\n"
    began = sha256_hex(path.read_bytes())
    path.write_text("# 第十一回\n作者改过了。\n", encoding="utf-8")  # edited while the run was going on
    with pytest.raises(InputError) as exc:
        apply_draft(sample, 11, "又一稿。", "题", began)
    assert exc.value.code == "FILE_CHANGED_ON_DISK"
    assert sample.read_chapter(11).body == "作者改过了。\n"


def test_a_dry_run_builds_context_and_prompt_records_itself_and_calls_nothing(sample: Book) -> None:
    doc = write_dry_run(sample, 11)
    assert doc.status == "dry_run" and doc.ok and doc.run_id is None and doc.drafts == []
    skip = "skipped(dry run: no model call)"
    assert [s.label for s in doc.steps] == ["passed", skip, skip]
    (manifest,) = doc.manifests
    assert manifest.round == 0 and manifest.previous_sha256 is None
    assert sha256_hex((sample.root / manifest.path).read_bytes()) == manifest.sha256
    assert [p.role for p in doc.prompts] == ["system", "user"] and "关羽斩管亥" in doc.prompts[1].content
    e4 = next(c for c in doc.constraints if c.id == "E4")
    assert e4.key_names == ["关羽"]
    t1 = next(c for c in doc.constraints if c.id == "T1")
    assert t1.marker == "次日" and "太史慈" in t1.key_names
    assert not (sample.state_dir / "vault").exists()  # no model run started
    shown = write_history(sample, 11)
    (row,) = shown.runs
    assert row.write_id == doc.write_id and row.status == "dry_run" and row.document == doc
    assert row.chapter_file_sha256 is None  # chapter 11 did not exist
