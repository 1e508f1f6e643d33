"""Issue 14 item 1: skip is not pass, in exit codes too — `not_evaluated` exits 4, a bug exits 70, and every JSON
document of a command that can end not evaluated says how it ended (`exit: {outcome, code}`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novelmuse.cli import main
from novelmuse.errors import exit_code, worst

from ..editorial.helpers import make_book, sanguo_chapters


def _exit(stdout: str) -> tuple[str, int]:
    doc = json.loads(stdout)
    return doc["exit"]["outcome"], doc["exit"]["code"]


def test_the_mapping_keeps_skip_apart_from_pass_and_bugs_apart_from_skips() -> None:
    codes = {o: exit_code(o) for o in ("ok", "findings", "bad_input", "failed_closed", "not_evaluated", "internal")}
    assert codes == {"ok": 0, "findings": 1, "bad_input": 2, "failed_closed": 3, "not_evaluated": 4, "internal": 70}
    assert exit_code("interrupted") == 130
    # a definite finding outranks an unknown; an unknown outranks ok
    assert worst("ok", "not_evaluated") == "not_evaluated"
    assert worst("not_evaluated", "findings", "ok") == "findings"
    assert worst("findings", "failed_closed") == "failed_closed"
    assert worst() == "ok"


def test_review_with_no_model_exits_4_and_says_not_evaluated(muse: Any, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b")
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 4, r.stderr
    doc = json.loads(r.stdout)
    assert doc["chapters"][0]["status"] == "not_reviewed"
    assert _exit(r.stdout) == ("not_evaluated", 4)


def test_judge_with_no_judge_model_exits_4(muse: Any, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", chapters=2)
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    (_, body1), (_, body2) = sanguo_chapters(2)
    a.write_text(body1, encoding="utf-8")
    b.write_text(body2, encoding="utf-8")
    r = muse("judge", "--profile", "quality_gate", "--chapter", "2", a, b, "--book", book, "--json")
    assert r.exit_code == 4, r.stderr
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "skipped" and doc["reason"] == "no model configured"
    assert _exit(r.stdout) == ("not_evaluated", 4)


def test_rules_normalize_without_a_model_exits_4_only_when_lines_stay_unread(muse: Any, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", rules="禁止:后宫\n写得更有古典味道一些\n")
    r = muse("rules", "normalize", "--book", book, "--json")
    assert r.exit_code == 4 and _exit(r.stdout) == ("not_evaluated", 4)
    (book / "rules.txt").write_text("禁止:后宫\n", encoding="utf-8")
    r = muse("rules", "normalize", "--book", book, "--json")  # nothing to normalise: done
    assert r.exit_code == 0 and _exit(r.stdout) == ("ok", 0)


def test_check_of_a_book_without_chapters_is_not_evaluated(muse: Any, tmp_path: Path) -> None:
    book = tmp_path / "empty"
    book.mkdir()
    (book / "book.toml").write_text('[book]\ntitle = "t"\n', encoding="utf-8")
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 4
    assert json.loads(r.stdout)["outcome"] == "skipped" and _exit(r.stdout) == ("not_evaluated", 4)


def test_facts_extract_without_an_extractor_is_not_evaluated(muse: Any, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b")
    r = muse("facts", "extract", "1", "--book", book, "--json")
    assert r.exit_code == 4 and json.loads(r.stdout)["error"]["code"] == "MODEL_NOT_CONFIGURED"


def test_a_bug_exits_70_not_4(muse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from novelmuse.cli import _cmd_check

    def broken(*_: object, **__: object) -> None:
        raise ZeroDivisionError("planted bug")

    monkeypatch.setattr(_cmd_check, "check_chapters", broken)
    book = make_book(tmp_path / "b")
    r = muse("check", "--book", book)
    assert r.exit_code == 70 and r.stderr.startswith("error[INTERNAL]: ZeroDivisionError")


def test_help_documents_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--help"])
    out = capsys.readouterr().out
    codes = ("0    done", "1    a check", "2    bad input", "3    a model", "4    not evaluated", "70   a novelmuse")
    assert all(line in out for line in codes)
