"""`muse init DIR`: a valid, commented scaffold; never overwrites; clear errors; nothing half-written."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from novelmuse.book import book_toml_text, find_book, init_book, load_config
from novelmuse.errors import InputError
from tests.book.readonly import read_only

SCAFFOLD = {"book.toml", "rules.txt", "chapters", "outlines", "cards", "plan", ".gitignore"}


def test_init_scaffolds_a_valid_book_with_no_model(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = tmp_path / "新书"
    r = muse("init", d)
    assert r.exit_code == 0, r.stderr
    assert {p.name for p in d.iterdir()} == SCAFFOLD
    assert all((d / name).is_dir() for name in ("chapters", "outlines", "cards"))
    assert ".muse/" in (d / ".gitignore").read_text(encoding="utf-8").splitlines()
    book = find_book(d)
    assert book.config.book.title == "新书"
    assert book.config.providers == {} and book.config.role_target("writer") is None  # model steps skip
    assert book.config.chapters.min_chars == 2000 and book.config.chapters.max_chars == 6000
    toml_text = (d / "book.toml").read_text(encoding="utf-8")
    for table in ("[book]", "[chapters]", "[providers.", "[roles]", "[prices.", "[budget]", "[calls]", "[review]"):
        assert table in toml_text, table  # every table explained (commented when optional)
    rules = (d / "rules.txt").read_text(encoding="utf-8")
    for example in ("# 禁止:", "# 疲劳词:", "≤2", "# 偏好:"):
        assert example in rules
    assert all(not line.strip() or line.startswith("#") for line in rules.splitlines())  # all commented out


def test_commented_tables_are_valid_when_uncommented(tmp_path: Path) -> None:
    """The commented examples in book.toml are real configuration: uncommented, they validate."""
    lines = []
    for line in book_toml_text("x").splitlines():
        body = line[2:] if line.startswith("# ") else line
        if body.startswith("[") or (" = " in body and not body.startswith(("#", "-"))):
            lines.append(body.split("  #")[0].rstrip())
        elif not line.startswith("#"):
            lines.append(line)
    uncommented = "\n".join(lines) + "\n"
    data = tomllib.loads(uncommented)
    assert {"providers", "roles", "prices", "budget", "calls", "review", "memory", "writing"} <= set(data)
    (tmp_path / "book.toml").write_text(uncommented, encoding="utf-8")
    config = load_config(tmp_path / "book.toml", user_config=tmp_path / "none.toml")
    assert config.role_target("judge") == ("claude", "claude-sonnet-4-5")


def test_title_option_and_odd_titles(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    title = '他说"好"\\ 😀\x7f\ttab'
    r = muse("init", tmp_path / "b", "--title", title, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and "book.toml" in doc["created"]
    assert find_book(tmp_path / "b").config.book.title == title


def test_init_refuses_an_existing_book_toml(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert muse("init", tmp_path).exit_code == 0
    (tmp_path / "book.toml").write_text('[book]\ntitle = "mine"\n', encoding="utf-8")
    r = muse("init", tmp_path, "--json")
    assert r.exit_code == 2
    assert r.stderr.startswith("error[BOOK_EXISTS]")
    assert json.loads(r.stdout)["error"]["code"] == "BOOK_EXISTS"
    assert (tmp_path / "book.toml").read_text(encoding="utf-8") == '[book]\ntitle = "mine"\n'


def test_init_in_existing_dir_keeps_the_authors_files(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "rules.txt").write_text("禁止:系统\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("*.bak\n", encoding="utf-8")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "0001.md").write_text("# 第一章\n正文\n", encoding="utf-8")
    r = muse("init", tmp_path, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc["kept"]) == {"rules.txt", ".gitignore", "chapters/"}
    assert set(doc["created"]) == {"outlines/", "cards/", "plan/", "book.toml"}
    assert any(".muse/" in n for n in doc["notes"])
    assert (tmp_path / "rules.txt").read_text(encoding="utf-8") == "禁止:系统\n"
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == "*.bak\n"
    assert (tmp_path / "chapters" / "0001.md").read_text(encoding="utf-8") == "# 第一章\n正文\n"


def test_init_on_a_file_is_a_clear_error(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "novel.txt"
    f.write_text("x", encoding="utf-8")
    r = muse("init", f)
    assert r.exit_code == 2 and r.stderr.startswith("error[BOOK_NOT_A_DIRECTORY]")


def test_init_in_a_read_only_directory_leaves_nothing(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = tmp_path / "ro"
    d.mkdir()
    (d / "notes.txt").write_text("作者的笔记", encoding="utf-8")
    with read_only(d):
        r = muse("init", d)
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith("error[BOOK_WRITE]") and "Traceback" not in r.stderr
    assert {p.name for p in d.iterdir()} == {"notes.txt"}


def test_init_partial_failure_removes_what_it_created(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A write that fails after some files exist (here: book.toml, the last one) undoes the others."""
    import novelmuse.book._init as init_mod

    real = init_mod.atomic_write_text

    def failing(path: Path, text: str, **kw: object) -> None:
        if path.name == "book.toml":
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(init_mod, "atomic_write_text", failing)
    d = tmp_path / "full"
    try:
        init_book(d)
    except Exception as exc:
        assert getattr(exc, "code", None) == "BOOK_WRITE" and "No space left" in str(exc)
    else:
        raise AssertionError("init_book should have failed")
    assert not d.exists()


def test_a_directory_without_book_toml_is_not_a_book(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What every command other than init/import gets: BOOK_NOT_FOUND, exit 2."""
    (tmp_path / "chapters").mkdir()
    for call in (lambda: find_book(tmp_path), lambda: find_book(None, start=tmp_path / "chapters")):
        try:
            call()
        except InputError as exc:
            assert exc.code == "BOOK_NOT_FOUND" and exc.exit_code == 2
        else:
            raise AssertionError("expected BOOK_NOT_FOUND")


def test_commands_other_than_init_and_import_say_book_not_found(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chapters").mkdir()
    r = muse("check", "--book", tmp_path, "--json")
    assert r.exit_code == 2 and r.stderr.startswith("error[BOOK_NOT_FOUND]")
    assert json.loads(r.stdout)["error"]["code"] == "BOOK_NOT_FOUND"
    r = muse("check", cwd=tmp_path / "chapters")
    assert r.exit_code == 2 and r.stderr.startswith("error[BOOK_NOT_FOUND]") and "Traceback" not in r.stderr


def test_a_book_toml_that_is_not_utf8_names_the_bad_byte(tmp_path: Path) -> None:
    """The byte offset counts from the start of the file, a BOM included."""
    for bom in (b"", b"\xef\xbb\xbf"):
        data = bom + b'[book]\ntitle = "' + b"\xff" + b'"\n'
        (tmp_path / "book.toml").write_bytes(data)
        bad = data.index(b"\xff")
        with pytest.raises(InputError) as info:
            find_book(tmp_path)
        assert info.value.code == "CONFIG_SYNTAX" and f"at byte {bad}" in info.value.what


def test_init_writes_a_budget_a_command_asks_above(tmp_path: Path) -> None:
    """`muse init` sets the bill a command may start on without asking (commented caps beside it)."""
    text = book_toml_text("x")
    assert "\n[budget]\nconfirm_above = 0.5" in text and "\n# max_cost = 5.0" in text
    (tmp_path / "book.toml").write_text(text, encoding="utf-8")
    config = load_config(tmp_path / "book.toml", user_config=tmp_path / "none.toml")
    assert config.budget.confirm_above == 0.5 and config.budget.max_cost is None
