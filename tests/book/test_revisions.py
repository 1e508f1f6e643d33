"""The revision store: an author's file is never replaced without its old bytes kept, restorable; a kill at any
moment leaves the old file and no row, or the new file with its row."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import Book, file_revisions, find_book, kept_bytes
from novelmuse.errors import InputError
from novelmuse.iopoints import hooked
from novelmuse.text import sha256_hex

from ..conftest import SAMPLE_BOOK


class _Crash(BaseException):
    """A kill at an I/O point (nothing in novelmuse may catch it)."""


@pytest.fixture
def sample(tmp_path: Path) -> Book:
    shutil.copytree(SAMPLE_BOOK, tmp_path / "s", ignore=shutil.ignore_patterns(".muse"))
    return find_book(tmp_path / "s")


def _rows(book: Book) -> list[sqlite3.Row]:
    return book.db.execute("SELECT * FROM file_revisions ORDER BY id").fetchall()


def test_a_replacement_keeps_the_old_bytes_content_addressed(sample: Book) -> None:
    path = sample.chapters_dir / "0003.md"
    old = path.read_bytes()
    rev = sample.replace_file(
        path, "# 第三回\n新的。\n".encode(), expect_sha256=sha256_hex(old), kind="chapter", chapter=3, command="test"
    )
    assert path.read_bytes() == "# 第三回\n新的。\n".encode()
    assert rev.old_sha256 == sha256_hex(old) and rev.old_size == len(old)
    assert kept_bytes(sample.state_dir, sha256_hex(old), "x") == old
    (listed,) = file_revisions(sample.db, "chapters/0003.md")
    assert listed.id == rev.id and listed.command == "test"


def test_an_edit_made_meanwhile_is_never_overwritten(sample: Book) -> None:
    path = sample.chapters_dir / "0003.md"
    seen = sha256_hex(path.read_bytes())
    path.write_text("# 第三回\n作者刚改的。\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        sample.replace_file(path, b"x", expect_sha256=seen, kind="chapter", chapter=3, command="test")
    assert exc.value.code == "FILE_CHANGED_ON_DISK" and exc.value.exit_code == 2
    assert path.read_text(encoding="utf-8") == "# 第三回\n作者刚改的。\n" and _rows(sample) == []


def test_a_new_file_is_created_only_if_still_absent(sample: Book) -> None:
    path = sample.chapters_dir / "0012.md"
    path.write_text("# 第十二回\n作者自己写的。\n", encoding="utf-8")  # appeared after the caller looked
    with pytest.raises(InputError) as exc:
        sample.replace_file(path, b"draft", expect_sha256="", kind="chapter", chapter=12, command="test")
    assert exc.value.code == "FILE_CHANGED_ON_DISK"
    assert path.read_text(encoding="utf-8") == "# 第十二回\n作者自己写的。\n" and _rows(sample) == []
    fresh = sample.chapters_dir / "0013.md"
    rev = sample.replace_file(fresh, b"# x\ny\n", expect_sha256="", kind="chapter", chapter=13, command="test")
    assert rev.old_sha256 is None and fresh.read_bytes() == b"# x\ny\n"
    assert not [p for p in sample.chapters_dir.iterdir() if p.name.startswith(".")]  # no temp file left


def _points(book: Book, path: Path, data: bytes) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    book.db.execute("SELECT 1")  # open (and migrate) before the hook counts
    with hooked(lambda kind, target: seen.append((kind, target))):
        book.replace_file(
            path, data, expect_sha256=sha256_hex(path.read_bytes()), kind="chapter", chapter=3, command="count"
        )
    return seen


def test_a_kill_at_every_point_leaves_old_and_nothing_or_new_and_its_row(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE_BOOK, tmp_path / "count", ignore=shutil.ignore_patterns(".muse"))
    points = _points(find_book(tmp_path / "count"), tmp_path / "count" / "chapters" / "0003.md", b"# new\nnew\n")
    assert len(points) >= 6
    for index in range(len(points)):
        root = tmp_path / f"k{index}"
        shutil.copytree(SAMPLE_BOOK, root, ignore=shutil.ignore_patterns(".muse"))
        book = find_book(root)
        path = root / "chapters" / "0003.md"
        old = path.read_bytes()
        calls = 0

        def hook(kind: str, target: str, at: int = index) -> None:
            nonlocal calls
            calls += 1
            if calls - 1 == at:
                raise _Crash

        book.db.execute("SELECT 1")  # open (and migrate) before the hook counts
        with pytest.raises(_Crash), hooked(hook):
            book.replace_file(
                path, b"# new\nnew\n", expect_sha256=sha256_hex(old), kind="chapter", chapter=3, command="t"
            )
        after = find_book(root)
        after.settle()
        rows = _rows(after)
        if path.read_bytes() == old:
            assert rows == [], index
        else:
            assert path.read_bytes() == b"# new\nnew\n"
            (row,) = rows
            assert row["state"] == "done" and kept_bytes(after.state_dir, row["old_sha256"], "x") == old


@settings(max_examples=25)
@given(st.lists(st.binary(max_size=200), min_size=1, max_size=6))
def test_restoring_any_version_gives_its_bytes_back(
    tmp_path_factory: pytest.TempPathFactory, texts: list[bytes]
) -> None:
    root = tmp_path_factory.mktemp("r")
    shutil.copytree(SAMPLE_BOOK, root / "b", ignore=shutil.ignore_patterns(".muse"))
    book = find_book(root / "b")
    path = book.chapters_dir / "0002.md"
    versions = [path.read_bytes()]
    for data in texts:
        if data == versions[-1]:
            continue
        book.replace_file(path, data, expect_sha256=sha256_hex(versions[-1]), kind="chapter", chapter=2, command="t")
        versions.append(data)
    revs = file_revisions(book.db, "chapters/0002.md")
    assert [kept_bytes(book.state_dir, r.old_sha256 or "", "x") for r in revs] == versions[:-1]
    book.db.close()
