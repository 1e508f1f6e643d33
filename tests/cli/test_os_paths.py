"""Paths the operating system refuses — too long, through a file, a user that does not exist — are refusals with
their own codes, the path shortened, exit 2, for every command that takes a path; never error[INTERNAL]."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

LONG_NAME = "长" * 100  # 300 bytes in UTF-8: over the usual 255-byte name limit


def _paths(tmp: Path) -> dict[str, tuple[str, str]]:
    afile = tmp / "a-file.txt"
    afile.write_text("x", encoding="utf-8")
    return {
        "a name too long": (str(tmp / LONG_NAME), "PATH_TOO_LONG"),
        "a path too long": (str(tmp / "/".join(["abcdefgh"] * 600)), "PATH_TOO_LONG"),
        "through a file": (str(afile / "book"), "BOOK_NOT_FOUND"),
        "an unknown user": ("~no-such-user-novelmuse/book", "PATH_UNKNOWN_USER"),
    }


COMMANDS = {
    "status": lambda p: ["status", "--book", p],
    "check": lambda p: ["check", "--book", p],
    "init": lambda p: ["init", p],
    "import": lambda p: ["import", p + ".txt", "--into", p],
    "export": lambda p: ["export", "--book", p],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", ["a name too long", "a path too long", "through a file", "an unknown user"])
def test_a_path_the_system_refuses_is_a_refusal_naming_it(muse, tmp_path: Path, command: str, case: str) -> None:  # type: ignore[no-untyped-def]
    path, _expected = _paths(tmp_path)[case]
    r = muse(*COMMANDS[command](path))
    assert r.exit_code == 2, (r.stdout, r.stderr)
    first = r.stderr.splitlines()[0]
    assert first.startswith("error[") and "INTERNAL" not in first
    assert len(first) < 600  # the path is shortened, never thousands of characters


@settings(max_examples=40, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["a" * 200, "长" * 90, "x", "..", "~", "~nobody-x", "/"]), min_size=1, max_size=30)
)
def test_no_book_path_is_an_internal_error(parts: list[str]) -> None:
    """Any --book path, however long or odd: exit 2 (no book there, or a path refused), never 70."""
    from novelmuse.cli import main

    joined = "/".join(parts)
    path = joined if joined.startswith("~") else str(Path(tempfile.gettempdir()) / "novelmuse-no-book" / joined)
    assert main(["status", "--book", path]) == 2
