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


def _json_error(r) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The one JSON error document a failed `--json` command prints on stdout (and nothing else there)."""
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and set(doc["error"]) >= {"code", "what", "where", "fix", "exit_code", "message"}
    assert doc["error"]["exit_code"] == r.exit_code
    assert doc["error"]["message"] == r.stderr.strip()  # the same one line as on stderr
    return doc["error"]  # type: ignore[no-any-return]


def test_with_json_every_usage_error_is_a_json_document(muse, tmp_path: Path) -> None:
    """Typer/click's own errors (unknown option or command, missing argument, a bad or out-of-range number, a bad
    choice) print the JSON error document on stdout like every other error — the README's promise."""
    cases = [
        ("check", "--no-such-flag"),
        ("no-such-command",),
        ("search",),  # missing argument
        ("review", "three"),  # not an int
        ("review", "100000"),  # over the chapter cap
        ("export", "--format", "docx"),  # not a choice
        ("cards",),  # a group without its command
    ]
    for args in cases:
        r = muse(*args, "--json", cwd=tmp_path)
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        err = _json_error(r)
        assert err["code"] == "USAGE" and err["where"] == "command line", (args, err)
        assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
    r = muse("--json", cwd=tmp_path)  # --json alone: a usage error too, not a help page on stdout
    assert r.exit_code == 2 and _json_error(r)["code"] == "USAGE"


def test_with_json_an_internal_error_and_an_interruption_are_json_documents(muse, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import novelmuse.cli._cmd_models as cmd

    def boom(*_args: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cmd, "open_book", boom)
    r = muse("calls", "--json", cwd=tmp_path)
    err = _json_error(r)
    assert err["code"] == "INTERNAL" and "ZeroDivisionError" in err["what"] and r.exit_code not in (0, 1, 2, 3)

    def interrupt(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cmd, "open_book", interrupt)
    r = muse("calls", "--json", cwd=tmp_path)
    assert r.exit_code == 130 and _json_error(r)["code"] == "INTERRUPTED"


def test_a_group_without_its_subcommand_prints_its_own_subcommands(muse) -> None:  # type: ignore[no-untyped-def]
    """`muse cards` alone lists what `cards` can do (exit 2), not the 27 top-level commands."""
    for name in ("cards", "facts", "gate", "outline", "replay", "rules", "models", "vault"):
        r = muse(name)
        assert r.exit_code == 2, name
        assert f"Usage: muse {name} " in r.stdout and "Commands:" in r.stdout, name
        assert "novelmuse — an AI editorial room" not in r.stdout, name  # not the top-level help
