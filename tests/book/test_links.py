"""The symlink and permission policy (issue 18 item 6), each case planted: author files are never read through
a link that leaves the book, the book's own directories never written through one; links inside the book work;
.muse is private (0700) whatever the umask; vault files found with looser modes are tightened again."""

from __future__ import annotations

import gc
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from novelmuse.book import atomic_write_bytes, find_book, load_outlines
from novelmuse.errors import InputError
from novelmuse.llm._vault import Vault

SECRET = "绝密：不可外传的私人笔记"


@pytest.fixture
def book(muse, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    src = tmp_path / "n.txt"
    src.write_text("".join(f"第{i}章 题{i}\n正文{i}。\n" for i in range(1, 4)), encoding="utf-8")
    d = tmp_path / "book"
    assert muse("import", src, "--into", d).exit_code == 0
    return d


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.md").write_text(f"# 第2章 外面\n{SECRET}\n", encoding="utf-8")
    (d / "secret.txt").write_text(f"禁止:{SECRET}\n", encoding="utf-8")
    return d


def _refused(r, path: str) -> None:  # type: ignore[no-untyped-def]
    assert r.exit_code == 2, (r.stdout, r.stderr)
    doc = json.loads(r.stdout)
    assert doc["error"]["code"] == "BOOK_LINK_OUTSIDE" and doc["error"]["where"].endswith(path), doc
    assert SECRET not in r.stdout + r.stderr


def test_a_chapter_linked_outside_the_book_is_never_read(muse, book: Path, outside: Path) -> None:  # type: ignore[no-untyped-def]
    chapter = book / "chapters" / "0002.md"
    chapter.unlink()
    chapter.symlink_to(outside / "secret.md")
    _refused(muse("check", "--book", book, "--json"), "chapters/0002.md")
    _refused(muse("search", "正文", "--book", book, "--json"), "chapters/0002.md")


def test_rules_txt_linked_outside_is_never_printed(muse, book: Path, outside: Path) -> None:  # type: ignore[no-untyped-def]
    (book / "rules.txt").unlink()
    (book / "rules.txt").symlink_to(outside / "secret.txt")
    for args in (["rules", "show"], ["rules", "lint"], ["check"]):
        _refused(muse(*args, "--book", book, "--json"), "rules.txt")


def test_an_outline_linked_outside_is_never_read(book: Path, outside: Path) -> None:
    (outside / "o.yaml").write_text(f"chapter: 1\ngoal: {SECRET}\n", encoding="utf-8")
    (book / "outlines" / "0001.yaml").symlink_to(outside / "o.yaml")
    with pytest.raises(InputError) as info:
        load_outlines(find_book(book))
    assert info.value.code == "BOOK_LINK_OUTSIDE" and SECRET not in str(info.value)


def test_a_card_linked_outside_is_never_read(muse, book: Path, outside: Path) -> None:  # type: ignore[no-untyped-def]
    (outside / "c.yaml").write_text(f"id: x\ntype: character\nname: {SECRET}\n", encoding="utf-8")
    (book / "cards" / "x.yaml").symlink_to(outside / "c.yaml")
    _refused(muse("cards", "lint", "--book", book, "--json"), "cards/x.yaml")


@pytest.mark.parametrize("name", ["chapters", "cards", "outlines", "plan", ".muse"])
def test_a_book_directory_linked_outside_is_refused(muse, book: Path, outside: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """Whatever the command, before anything is read or written there."""
    target = outside / name
    gc.collect()  # close the database connections the in-process import left open (their WAL files go too)
    os.rename(book / name, target)
    (book / name).symlink_to(target)
    before = sorted(p.relative_to(target) for p in target.rglob("*"))
    _refused(muse("check", "--book", book, "--json"), name)
    src = book.parent / "more.txt"
    src.write_text("第4章 题4\n正文。\n", encoding="utf-8")
    _refused(muse("import", src, "--into", book, "--json"), name)
    assert sorted(p.relative_to(target) for p in target.rglob("*")) == before  # nothing written out there


def test_revisions_linked_outside_are_refused_for_writing(book: Path, outside: Path) -> None:
    revisions = book / ".muse" / "revisions"
    revisions.symlink_to(outside)
    with pytest.raises(InputError) as info:
        find_book(book)
    assert info.value.code == "BOOK_LINK_OUTSIDE"
    with pytest.raises(InputError) as info:  # the write itself refuses too (a link made after the book opened)
        atomic_write_bytes(revisions / "0001.rev_x.md", b"text")
    assert info.value.code == "BOOK_LINK_OUTSIDE" and not (outside / "0001.rev_x.md").exists()


def test_links_that_stay_inside_the_book_are_followed(muse, book: Path) -> None:  # type: ignore[no-untyped-def]
    drafts = book / "drafts"
    drafts.mkdir()
    os.rename(book / "chapters" / "0003.md", drafts / "three.md")
    (book / "chapters" / "0003.md").symlink_to(Path("..") / "drafts" / "three.md")
    (book / "rules.txt").rename(book / "my-rules.txt")
    (book / "rules.txt").symlink_to("my-rules.txt")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code in (0, 1), r.stderr
    assert [c["number"] for c in json.loads(r.stdout)["chapters"]] == [1, 2, 3]


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("loose_umask")
def test_dot_muse_is_private_whatever_the_umask(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "n.txt"
    src.write_text("第1章 甲\n正文。\n", encoding="utf-8")
    d = tmp_path / "b"
    assert muse("import", src, "--into", d).exit_code == 0
    assert stat.S_IMODE((d / ".muse").stat().st_mode) == 0o700
    (d / ".muse").chmod(0o777)  # loosened by someone: tightened at the next command
    assert muse("check", "--book", d).exit_code in (0, 1)
    assert stat.S_IMODE((d / ".muse").stat().st_mode) == 0o700


def test_vault_files_found_with_looser_modes_are_tightened(tmp_path: Path) -> None:
    vault = Vault(tmp_path / ".muse" / "vault")
    lease = vault.lease("call_a", 1, "run_a")
    digest = lease.put(b"raw model output")
    lease.complete()
    obj = tmp_path / ".muse" / "vault" / "raw" / digest[:2] / digest
    done = next((tmp_path / ".muse" / "vault" / "leases").iterdir())
    for path in (obj, done):
        path.chmod(0o644)
    assert vault.read(digest) == b"raw model output"
    assert stat.S_IMODE(obj.stat().st_mode) == 0o600
    obj.chmod(0o666)
    again = vault.lease("call_b", 1, "run_a")
    again.put(b"raw model output")  # stored again: found, verified and tightened
    again.complete()
    assert stat.S_IMODE(obj.stat().st_mode) == 0o600
    report = vault.recover(lambda run: False)  # a recovery pass tightens every file it finds
    assert stat.S_IMODE(done.stat().st_mode) == 0o600 and report.modes_tightened >= 1
    vault.close()


def test_a_fifo_or_broken_link_listed_as_a_card_is_refused_unopened(muse, book: Path) -> None:  # type: ignore[no-untyped-def]
    """Card listing refuses what outline listing refuses: a FIFO would block whoever opens it, a broken link
    hides a card; either is CARD_READ naming the file, before anything is read (a FIFO is never opened)."""
    fifo = book / "cards" / "fifo.yaml"
    os.mkfifo(fifo)
    for args in (["cards", "lint"], ["sync", "--no-extract"], ["search", "正文"]):
        r = muse(*args, "--book", book, "--json")
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        err = json.loads(r.stdout)["error"]
        assert err["code"] == "CARD_READ" and err["where"].endswith("cards/fifo.yaml"), err
    fifo.unlink()
    (book / "cards" / "gone.yaml").symlink_to(book / "cards" / "nothing-here.yaml")
    r = muse("cards", "lint", "--book", book, "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "CARD_READ"


def test_reading_many_files_refuses_and_follows_exactly_as_reading_one(
    book: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`read_user_files` (one directory descriptor, `openat` without following links; `muse check` reads every
    chapter so) gives each file's bytes, and each refusal, exactly as `read_user_file` does: a link inside the
    book is followed, a link leaving it, a FIFO and a missing file are the same errors; and a directory swapped
    for a link leaving the book after it was opened cannot redirect the read."""
    from novelmuse.book import read_user_file, read_user_files

    chapters = book / "chapters"
    (chapters / "0004.md").symlink_to(chapters / "0001.md")  # inside: followed
    (chapters / "0005.md").symlink_to(outside / "secret.md")  # outside: refused
    os.mkfifo(chapters / "0006.md")

    def one(path: Path) -> bytes | str:
        try:
            return read_user_file(path, what="chapter file", kind="CHAPTER", book_root=book)
        except InputError as exc:
            return f"{exc.code} {exc}"

    def many(paths: list[Path]) -> list[bytes] | str:
        try:
            return read_user_files(paths, what="chapter file", kind="CHAPTER", book_root=book)
        except InputError as exc:
            return f"{exc.code} {exc}"

    good = [chapters / f"000{n}.md" for n in (1, 2, 3, 4)]
    assert many(good) == [one(p) for p in good] and one(good[3]) == one(good[0])
    for bad, code in (("0005.md", "BOOK_LINK_OUTSIDE"), ("0006.md", "CHAPTER_READ"), ("0009.md", "CHAPTER_READ")):
        got = many([good[0], chapters / bad])
        assert got == one(chapters / bad) and isinstance(got, str) and got.startswith(code), got
        assert SECRET not in got

    # the directory is checked and opened once: renaming it away and planting a link to the outside in its
    # place meanwhile changes nothing for the files still to be read
    from novelmuse.book import _userfile

    real_open_dir = _userfile._open_book_dir

    def open_then_swap(directory: Path, root: Path) -> int | None:
        fd = real_open_dir(directory, root)
        os.rename(chapters, book / "moved")
        chapters.symlink_to(outside, target_is_directory=True)
        return fd

    (outside / "0001.md").write_text(f"# 第1章 外面\n{SECRET}\n", encoding="utf-8")
    want = one(good[0])
    assert isinstance(want, bytes) and SECRET.encode() not in want
    monkeypatch.setattr(_userfile, "_open_book_dir", open_then_swap)
    assert many([good[0]]) == [want]
