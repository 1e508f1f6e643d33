"""The CLI's error contract: one `error[CODE]: …` line, documented exit codes, JSON error documents."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import muse_subprocess


def test_usage_error_is_one_line_exit_2(muse, tmp_path: Path) -> None:
    r = muse("check", "--no-such-flag")
    assert r.exit_code == 2
    assert r.stderr.startswith("error[USAGE]: ") and r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


def test_unknown_command_is_a_usage_error(muse) -> None:
    r = muse("no-such-command")
    assert r.exit_code == 2 and "error[USAGE]" in r.stderr


def test_missing_book_gives_code_where_and_fix(muse, tmp_path: Path) -> None:
    r = muse("check", cwd=tmp_path)
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert line.startswith("error[BOOK_NOT_FOUND]: ") and str(tmp_path) in line and " — " in line


def test_json_error_document_on_stdout(muse, tmp_path: Path) -> None:
    r = muse("check", "--book", tmp_path, "--json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["error"]["code"] == "BOOK_NOT_FOUND" and doc["error"]["exit_code"] == 2
    assert r.stderr.startswith("error[BOOK_NOT_FOUND]")


def test_version_in_a_real_subprocess(tmp_path: Path) -> None:
    r = muse_subprocess("version", cwd=tmp_path)
    assert r.exit_code == 0 and r.stdout.strip()


def test_dash_dash_version_prints_the_version(muse, tmp_path: Path) -> None:
    """`muse --version` (and -V) works like every other CLI's: the version on stdout, exit 0, no book needed."""
    from novelmuse import __version__

    for flag in ("--version", "-V"):
        r = muse(flag, cwd=tmp_path)
        assert (r.exit_code, r.stdout, r.stderr) == (0, f"muse {__version__}\n", ""), flag


def test_an_ascii_only_terminal_gets_escapes_not_a_crash(tmp_path: Path) -> None:
    from tests.conftest import SAMPLE_BOOK

    r = muse_subprocess("check", "--book", SAMPLE_BOOK, "--chapter", "2", "--json", env={"PYTHONIOENCODING": "ascii"})
    assert r.exit_code == 1, r.stderr  # the forbidden phrase in chapter 2, not an internal error
    doc = json.loads(r.stdout)
    assert doc["chapters"][0]["findings"][0]["target"] == "后宫"
    r = muse_subprocess("check", "--book", SAMPLE_BOOK, "--chapter", "2", env={"PYTHONIOENCODING": "ascii"})
    assert r.exit_code == 1 and "INTERNAL" not in r.stderr
