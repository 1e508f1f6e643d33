"""Bounded numbers and lengths from outside (issue 18 item 2): chapter numbers, --before, --as-of, ranges, names
and queries have documented caps (novelmuse.limits) and a value beyond one is a clear usage error (exit 2) —
not silently accepted (--before 10^20 searched everything) nor echoed back whole in an error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from novelmuse.limits import MAX_CHAPTER_NUMBER, MAX_NAME_CHARS, MAX_QUERY_CHARS

HUGE = str(10**20)
OVER = str(MAX_CHAPTER_NUMBER + 1)


@pytest.fixture
def book(muse: Any, tmp_path: Path) -> Path:
    src = tmp_path / "n.txt"
    src.write_text("第一章 甲\n关羽来了。\n第二章 乙\n正文。\n", encoding="utf-8")
    d = tmp_path / "b"
    assert muse("import", src, "--into", d).exit_code == 0
    (d / "cards" / "gy.yaml").write_text("id: gy\ntype: character\nname: 关羽\naliases: [云长]\n", encoding="utf-8")
    return d


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--chapter", HUGE],
        ["check", "--chapter", OVER],
        ["check", "--chapter", "-5"],
        ["check", "--range", f"1-{HUGE}"],
        ["check", "--range", f"{OVER}-{OVER}"],
        ["review", OVER],
        ["review", "--range", f"1-{OVER}"],
        ["search", "关羽", "--before", HUGE],
        ["search", "关羽", "--before", str(MAX_CHAPTER_NUMBER + 2)],
        ["mentions", "关羽", "--before", HUGE],
        ["ledger", "--as-of", HUGE],
        ["cards", "show", "关羽", "--as-of", OVER],
        ["facts", "show", HUGE],
        ["facts", "extract", OVER],
        ["search", "关" * (MAX_QUERY_CHARS + 1)],
        ["mentions", "关" * (MAX_NAME_CHARS + 1)],
        ["cards", "show", "关" * (MAX_NAME_CHARS + 1)],
    ],
    ids=lambda a: " ".join(x if len(x) < 12 else f"<{len(x)} chars>" for x in a),
)
def test_values_beyond_a_cap_are_usage_errors(muse: Any, book: Path, args: list[str]) -> None:
    r = muse(*args, "--book", book, "--json")
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith(("error[USAGE]", "error[USAGE_RANGE]")), r.stderr
    assert any(w in r.stderr for w in ("over the cap", "is not in the range"))
    assert "关" * 50 not in r.stderr  # a long name is never echoed back whole


@pytest.mark.parametrize(
    "args",
    [
        ["search", "关羽", "--before", str(MAX_CHAPTER_NUMBER + 1)],
        ["check", "--range", f"1-{MAX_CHAPTER_NUMBER}"],
        ["mentions", "关羽", "--before", str(MAX_CHAPTER_NUMBER + 1)],
        ["search", "关" * MAX_QUERY_CHARS],
    ],
    ids=lambda a: " ".join(x if len(x) < 12 else f"<{len(x)} chars>" for x in a),
)
def test_values_at_a_cap_are_accepted(muse: Any, book: Path, args: list[str]) -> None:
    r = muse(*args, "--book", book, "--json")
    assert r.exit_code in (0, 1), r.stderr
    assert json.loads(r.stdout)["ok"] is True


def test_a_chapter_file_numbered_beyond_the_cap_is_named(muse: Any, book: Path) -> None:
    (book / "chapters" / f"{MAX_CHAPTER_NUMBER + 1}.md").write_text("# 第十万章\n正文。\n", encoding="utf-8")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "CHAPTER_NUMBER_TOO_LARGE" and err["where"].endswith(f"{MAX_CHAPTER_NUMBER + 1}.md")


@pytest.mark.parametrize("command", [["search"], ["mentions"], ["cards", "show"]])
def test_a_name_or_query_that_is_not_utf8_is_a_usage_error(book: Path, command: list[str]) -> None:
    """An argument with a byte the locale cannot decode reaches Python as a lone surrogate (a real process,
    real argv bytes): a usage error, not error[INTERNAL] from deep inside the matcher."""
    args = [sys.executable, "-m", "novelmuse", *command, "关羽".encode() + b"\xff", "--book", str(book)]
    r = subprocess.run(args, capture_output=True, env={**os.environ, "MUSE_CONFIG": "/nonexistent"}, timeout=120)
    assert r.returncode == 2, r.stderr
    err = r.stderr.decode("utf-8", "replace")
    assert err.startswith("error[USAGE]") and "not valid UTF-8" in err and "Traceback" not in err
