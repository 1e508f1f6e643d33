"""Files from outside (issue 18 item 3): only regular files below a size cap; one mapping of OSError and of
what parsers raise on hostile content to an InputError with a code — never a hang, never error[INTERNAL]."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from novelmuse.book import read_user_file
from novelmuse.book._userfile import os_error
from novelmuse.errors import InputError
from novelmuse.limits import MAX_CONFIG_BYTES, MAX_RULES_BYTES


def _err(r) -> dict:  # type: ignore[no-untyped-def,type-arg]
    assert r.stdout, r.stderr
    assert "Traceback" not in r.stderr and "INTERNAL" not in r.stderr, r.stderr
    return json.loads(r.stdout)["error"]  # type: ignore[no-any-return]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)
    return path


@pytest.fixture
def book(muse, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    d = tmp_path / "book"
    src = tmp_path / "n.txt"
    src.write_text("第一章 甲\n正文。\n第二章 乙\n正文。\n", encoding="utf-8")
    assert muse("import", src, "--into", d).exit_code == 0
    return d


@pytest.mark.timeout(60)
def test_a_fifo_never_hangs_a_command(muse, tmp_path: Path, fifo: Path, book: Path) -> None:  # type: ignore[no-untyped-def]
    """A FIFO with no writer blocks a plain open() for ever: every file the user names is refused instead."""
    err = _err(muse("import", fifo, "--into", tmp_path / "b", "--json"))
    assert err["code"] == "IMPORT_SOURCE_READ" and "FIFO" in err["what"] and err["where"] == str(fifo)
    err = _err(muse("rules", "lint", "--file", fifo, "--json"))
    assert err["code"] == "RULES_READ" and "FIFO" in err["what"]
    (book / "rules.txt").unlink()
    os.mkfifo(book / "rules.txt")
    assert _err(muse("check", "--book", book, "--json"))["code"] == "RULES_READ"
    (book / "rules.txt").unlink()
    (book / "chapters" / "0002.md").unlink()
    os.mkfifo(book / "chapters" / "0002.md")
    err = _err(muse("check", "--book", book, "--json"))
    assert err["code"] == "CHAPTER_READ" and err["where"].endswith("0002.md")
    err = _err(muse("judge", "--book", book, "--profile", "quality_gate", fifo, fifo, "--json"))
    assert err["code"] == "JUDGE_FILE_READ" and "FIFO" in err["what"]


@pytest.mark.timeout(60)
def test_a_device_is_not_read(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """/dev/zero never ends: reading it would exhaust memory."""
    err = _err(muse("import", "/dev/zero", "--into", tmp_path / "b", "--json"))
    assert err["code"] == "IMPORT_SOURCE_READ" and "device" in err["what"]
    assert not (tmp_path / "b").exists()
    err = _err(muse("rules", "lint", "--file", "/dev/zero", "--json"))
    assert err["code"] == "RULES_READ"


def test_directories_and_long_names_are_clear_errors(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    err = _err(muse("import", tmp_path, "--into", tmp_path / "b", "--json"))
    assert err["code"] == "IMPORT_SOURCE_READ" and "directory" in err["what"]
    long_name = tmp_path / ("长" * 200 + ".txt")  # 600 bytes: over NAME_MAX
    err = _err(muse("import", long_name, "--into", tmp_path / "b", "--json"))
    assert err["code"] == "IMPORT_SOURCE_READ" and "name is too long" in err["what"]
    err = _err(muse("rules", "lint", "--file", long_name, "--json"))
    assert err["code"] == "RULES_READ" and "name is too long" in err["what"]


def test_files_over_their_cap_are_refused_before_parsing(muse, tmp_path: Path, book: Path) -> None:  # type: ignore[no-untyped-def]
    toml = book / "book.toml"
    toml.write_bytes(toml.read_bytes() + b"#" * MAX_CONFIG_BYTES + b"\n")
    err = _err(muse("check", "--book", book, "--json"))
    assert err["code"] == "CONFIG_TOO_LARGE" and "over the cap of 1,048,576 bytes" in err["what"]
    big_rules = tmp_path / "rules.txt"
    big_rules.write_bytes(b"# " + b"x" * MAX_RULES_BYTES)
    err = _err(muse("rules", "lint", "--file", big_rules, "--json"))
    assert err["code"] == "RULES_TOO_LARGE"


def test_read_user_file_caps_a_file_that_grows_while_read(tmp_path: Path) -> None:
    """The size is checked before reading and again while reading: at most cap + 1 bytes are ever read."""
    p = tmp_path / "f.txt"
    p.write_bytes(b"x" * 100)
    assert read_user_file(p, what="file", kind="X", max_bytes=100) == b"x" * 100
    with pytest.raises(InputError) as info:
        read_user_file(p, what="file", kind="X", max_bytes=99)
    assert info.value.code == "X_TOO_LARGE"
    assert read_user_file(tmp_path / "none", what="file", kind="X", missing_ok=True) is None
    with pytest.raises(InputError) as info:
        read_user_file(tmp_path / "none", what="file", kind="X")
    assert info.value.code == "X_READ" and "no such file" in info.value.what


@pytest.mark.parametrize(
    ("exc", "code", "text"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "K_READ", "permission denied"),
        (OSError(errno.ENAMETOOLONG, "File name too long"), "K_READ", "name is too long"),
        (OSError(errno.ELOOP, "Too many levels of symbolic links"), "K_READ", "symbolic links"),
        (FileNotFoundError(errno.ENOENT, "No such file"), "K_READ", "no such"),
        (ValueError("embedded null byte"), "K_READ", "invalid file name"),
        (OSError(errno.EIO, "Input/output error"), "K_READ", "Input/output error"),
    ],
)
def test_one_mapping_of_os_errors(exc: OSError | ValueError, code: str, text: str) -> None:
    """Permission is mapped here rather than planted: the suite runs as root in CI, which ignores modes."""
    err = os_error(exc, Path("x.txt"), "thing", "K")
    assert (err.code, err.where) == (code, "x.txt") and text in err.what and err.exit_code == 2


def test_deep_nesting_is_a_syntax_error_not_a_crash(muse, tmp_path: Path, book: Path) -> None:  # type: ignore[no-untyped-def]
    """tomllib and the YAML loader recurse per level: 100,000 levels raise RecursionError, which must read as
    the file's syntax error."""
    toml = book / "book.toml"
    original = toml.read_text(encoding="utf-8")
    toml.write_text(original + "\ndeep = " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    err = _err(muse("check", "--book", book, "--json"))
    assert err["code"] == "CONFIG_SYNTAX" and "nested too deeply" in err["what"]
    toml.write_text(original, encoding="utf-8")
    (book / "outlines" / "0001.yaml").write_text("chapter: " + "[" * 100_000 + "]" * 100_000 + "\n", "utf-8")
    r = muse(
        "judge",
        "--book",
        book,
        "--profile",
        "writer_replay",
        "--outline",
        book / "outlines" / "0001.yaml",
        book / "chapters" / "0001.md",
        book / "chapters" / "0002.md",
        "--scene-type",
        "battle",
        "--json",
    )
    assert _err(r)["code"] == "OUTLINE_SYNTAX"


@pytest.mark.timeout(60)
def test_a_fifo_or_broken_link_named_like_an_outline_is_named_not_opened(book: Path) -> None:
    """Outline files are listed by the same function as chapters: a FIFO there is refused at listing, before any
    reader could open it and hang; a broken link is named too (both used to be skipped silently)."""
    from novelmuse.book import find_book, load_outlines

    os.mkfifo(book / "outlines" / "0001.yaml")
    with pytest.raises(InputError) as info:
        load_outlines(find_book(book))
    assert info.value.code == "OUTLINE_READ" and info.value.where.endswith("0001.yaml")
    (book / "outlines" / "0001.yaml").unlink()
    (book / "outlines" / "0001.yaml").symlink_to(book / "outlines" / "missing.yaml")
    with pytest.raises(InputError) as info:
        load_outlines(find_book(book))
    assert info.value.code == "OUTLINE_READ" and "no such" in info.value.what
