"""Where a write run keeps its work, and how a new chapter is headed (sample book, chapter 11)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.book import Book, find_book
from novelmuse.text import parse_chinese_numeral, parse_heading, sha256_hex
from novelmuse.writing import (
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
