"""Chapter and outline files are found by their number; two files with one number are refused, never guessed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import Book, find_book, outline_paths
from novelmuse.errors import InputError


def _book(tmp_path: Path) -> Book:
    (tmp_path / "book.toml").write_text('[book]\ntitle = "测试"\n', encoding="utf-8")
    return find_book(tmp_path)


def test_chapters_by_number_ignoring_other_files(tmp_path: Path) -> None:
    book = _book(tmp_path)
    assert book.chapter_paths() == {}  # no chapters/ folder yet
    book.chapters_dir.mkdir()
    for name in ("0002.md", "10.md", "0001.md", "notes.md", "0003.txt"):
        (book.chapters_dir / name).write_text("# 第一回\n正文\n", encoding="utf-8")
    (book.chapters_dir / "0004.md").mkdir()  # a folder is not a chapter
    paths = book.chapter_paths()
    assert list(paths) == [1, 2, 10]
    assert [p.name for p in paths.values()] == ["0001.md", "0002.md", "10.md"]
    assert book.read_chapter(10).body == "正文\n"


def test_two_chapter_files_with_one_number_are_refused(tmp_path: Path) -> None:
    book = _book(tmp_path)
    book.chapters_dir.mkdir()
    for name in ("0001.md", "1.md"):
        (book.chapters_dir / name).write_text("正文\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        book.chapter_paths()
    assert info.value.code == "CHAPTER_DUPLICATE"
    assert "two files for chapter 1: 0001.md and 1.md" in info.value.what
    assert info.value.where == str(book.chapters_dir)


def test_outlines_by_number_and_duplicates_refused(tmp_path: Path) -> None:
    book = _book(tmp_path)
    assert outline_paths(book) == {}
    book.outlines_dir.mkdir()
    for name in ("0003.yaml", "0001.yml", "draft.yaml"):
        (book.outlines_dir / name).write_text("chapter: 1\n", encoding="utf-8")
    assert {n: p.name for n, p in outline_paths(book).items()} == {1: "0001.yml", 3: "0003.yaml"}
    (book.outlines_dir / "3.yaml").write_text("chapter: 3\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        outline_paths(book)
    assert info.value.code == "OUTLINE_DUPLICATE"
    assert "two outline files for chapter 3: 0003.yaml and 3.yaml" in info.value.what


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["plain", "bom"])
def test_a_chapter_that_is_not_utf8_names_the_bad_byte_in_the_file(tmp_path: Path, bom: bytes) -> None:
    """The offset counts from the start of the file, BOM included (utf-8-sig's own offset leaves the BOM out)."""
    book = _book(tmp_path)
    book.chapters_dir.mkdir()
    data = bom + "# 第一回\n正文\n".encode() + b"\xff" + "后文".encode()
    (book.chapters_dir / "0001.md").write_bytes(data)
    with pytest.raises(InputError) as info:
        book.read_chapter(1)
    assert info.value.code == "CHAPTER_ENCODING"
    bad = data.index(b"\xff", len(bom))
    assert f"invalid byte 0xff at byte offset {bad} (line 3)" in info.value.what
    bom_ok = bom + "# 第一回\n正文\n".encode()
    (book.chapters_dir / "0001.md").write_bytes(bom_ok)
    assert book.read_chapter(1).body == "正文\n" and book.read_chapter(1).heading == "第一回"


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(st.integers(0, 12), st.integers(1, 6), st.booleans()),  # number, digits, is a folder
        max_size=8,
    )
)
def test_probing_a_chapter_finds_what_the_listing_finds(entries: list[tuple[int, int, bool]]) -> None:
    """`probe_chapter_file` (no listing: the search output locates its few chapters) against the listing: the
    same file when the listing has exactly one for the number, None when it has none or two."""
    with tempfile.TemporaryDirectory() as tmp:  # a fresh folder per example
        book = _book(Path(tmp))
        book.chapters_dir.mkdir()
        for n, width, folder in entries:
            path = book.chapters_dir / f"{str(n).zfill(width)}.md"
            if not path.exists():
                path.mkdir() if folder else path.write_text("正文\n", encoding="utf-8")
        files = [p for p in book.chapters_dir.iterdir() if not p.is_dir()]
        for n in range(14):
            mine = [p for p in files if int(p.stem) == n]
            assert book.probe_chapter_file(n) == (mine[0] if len(mine) == 1 else None)
