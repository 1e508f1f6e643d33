"""`muse rules lint` and `muse rules show`: exit codes, JSON shapes, origins and the sha256."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novelmuse.rules import load_defaults
from tests.conftest import SAMPLE_BOOK, muse_subprocess
from tests.rules._books import make_book


def book_with(tmp_path: Path, rules: str | bytes | None) -> Path:
    return make_book(tmp_path / "b", [("第一章", "正文。\n")], rules=rules)


def test_lint_lists_rules_unparsed_lines_and_problems(muse: Any, tmp_path: Path) -> None:
    book = book_with(tmp_path, "禁止:后宫\n疲劳词:一丝≤2\n偏好:多对话\n随便写写\n禁止:后宫\n")
    r = muse("rules", "lint", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr  # warnings and unparsed lines do not fail the lint
    doc = json.loads(r.stdout)
    assert doc["passed"] is True and doc["file"] == "present"
    assert doc["forbidden"] == [{"phrase": "后宫", "line": 1}]
    assert doc["fatigue"] == [{"phrase": "一丝", "limit": 2, "line": 2}]
    assert doc["preferences"] == [{"text": "多对话", "line": 3}]
    assert [(u["line"], u["text"]) for u in doc["unparsed"]] == [(4, "随便写写")]
    assert [(p["code"], p["lines"]) for p in doc["problems"]] == [("RULES_DUPLICATE", [1, 5])]
    assert doc["counts"] == {"forbidden": 1, "fatigue": 1, "preferences": 1, "unparsed": 1, "errors": 0, "warnings": 1}
    r = muse("rules", "lint", "--book", book)
    assert r.exit_code == 0 and "unparsed line 4" in r.stdout and "RULES_DUPLICATE" in r.stdout


def test_lint_exits_1_on_errors_and_lints_a_loose_file(muse: Any, tmp_path: Path) -> None:
    f = tmp_path / "rules.txt"
    f.write_text("禁止:后宫\n疲劳词:后宫≤1\n疲劳词:不由得\n", encoding="utf-8")
    r = muse("rules", "lint", "--file", f, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["passed"] is False
    assert sorted((p["code"], p["lines"]) for p in doc["problems"]) == [
        ("RULES_CONTRADICTION", [1, 2]),
        ("RULES_SYNTAX", [3]),
    ]
    r = muse("rules", "lint", "--file", tmp_path / "nope.txt")
    assert r.exit_code == 2 and r.stderr.startswith("error[RULES_NOT_FOUND]")
    f.write_bytes(b"\xef\xbb\xbf" + "禁止:a\n".encode() + b"\x80")
    r = muse("rules", "lint", "--file", f)
    assert r.exit_code == 2 and "error[RULES_ENCODING]" in r.stderr and "byte offset 12" in r.stderr


def test_lint_of_a_book_without_rules_file(muse: Any, tmp_path: Path) -> None:
    r = muse("rules", "lint", "--book", book_with(tmp_path, None), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["file"] == "missing" and "defaults apply" in r.stderr


def test_show_gives_origins_and_a_stable_sha256(muse: Any, tmp_path: Path) -> None:
    book = book_with(tmp_path, "禁止:不由得\n疲劳词:一丝≤5\n偏好:多对话\n")
    r = muse("rules", "show", "--book", book, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    eff = doc["effective"]
    rules = {x["phrase"]: x for x in eff["rules"]}
    assert rules["不由得"]["kind"] == "forbidden" and rules["不由得"]["origin"] == {
        "source": "book",
        "version": None,
        "line": 1,
    }
    assert rules["一丝"]["limit"] == 5
    d = load_defaults()
    assert rules["仿佛"]["origin"] == {"source": "default", "version": d.version, "line": None}
    assert eff["defaults"] == {"version": d.version, "sha256": d.sha256, "rules": len(d.fatigue)}
    assert eff["preferences"] == [{"text": "多对话", "line": 3}]
    sha = eff["sha256"]
    assert len(sha) == 64
    # the same rules laid out differently: same hash; a changed limit: another hash
    (book / "rules.txt").write_text("# x\n\n禁止：不由得\n疲劳词:一丝<=5 # y\n偏好:多对话\n", encoding="utf-8")
    assert json.loads(muse("rules", "show", "--book", book, "--json").stdout)["effective"]["sha256"] == sha
    (book / "rules.txt").write_text("禁止:不由得\n疲劳词:一丝≤4\n偏好:多对话\n", encoding="utf-8")
    assert json.loads(muse("rules", "show", "--book", book, "--json").stdout)["effective"]["sha256"] != sha
    r = muse("rules", "show", "--book", book)
    assert "default v1" in r.stdout and "rules.txt line 1" in r.stdout and "sha256:" in r.stdout


def test_show_refuses_unusable_rules(muse: Any, tmp_path: Path) -> None:
    r = muse("rules", "show", "--book", book_with(tmp_path, "禁止:后宫\n疲劳词:后宫≤1\n"))
    assert r.exit_code == 2 and r.stderr.startswith("error[RULES_CONTRADICTION]")


def test_sample_book_as_a_real_subprocess() -> None:
    r = muse_subprocess("rules", "show", "--book", SAMPLE_BOOK, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["effective"]["sha256"]
    r = muse_subprocess("check", "--book", SAMPLE_BOOK, "--chapter", "2")
    assert r.exit_code == 1 and "后宫" in r.stdout and "Traceback" not in r.stderr


@pytest.mark.timeout(120)
def test_check_with_a_ten_thousand_character_phrase_is_fast(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 18 item 5: `muse check` with a forbidden phrase of 10,000 repeated characters took 37 s."""
    import time

    phrase = "哈" * 10_000
    d = make_book(
        tmp_path / "b", [("第一回 甲", f"开头{phrase}结尾\n"), ("第二回 乙", "没有。\n")], rules=f"禁止:{phrase}\n"
    )
    t0 = time.perf_counter()
    r = muse("check", "--book", d, "--json")
    assert time.perf_counter() - t0 < 15
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert [(f["rule"], f["actual"], f["hits"]) for f in doc["chapters"][0]["findings"]] == [
        ("forbidden", 1, [[0, 2, 10_002]])
    ]


@pytest.fixture(scope="module")
def hundred_thousand_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A book whose rules.txt has 100,000 lines: rules of each kind, unparsed lines and 5,000 duplicates."""
    lines = []
    for i in range(100_000):
        kind = i % 5
        lines.append(
            f"禁止:词{i}"
            if kind == 0
            else f"疲劳词:字{i}≤{i % 7}"
            if kind == 1
            else f"偏好:多对话{i}"
            if kind == 2
            else f"随便写写{i}"
            if kind == 3
            else f"禁止:词{i - 4}"  # repeats the 禁止 line four lines up: a RULES_DUPLICATE warning
        )
    root = tmp_path_factory.mktemp("big-rules")
    return make_book(root / "b", [("第一回 甲", "词0出现了。\n")], rules="\n".join(lines) + "\n")


@pytest.mark.parametrize("command", ["lint", "show", "check"])
def test_a_hundred_thousand_line_rules_file_prints_within_seconds(
    muse: Any, hundred_thousand_lines: Path, command: str
) -> None:
    """Issue 18 item 5: `rules lint/show` printed one Rich table row per rule (~50 s for 100,000 lines); the
    terminal now lists at most MAX_ROWS_TOTAL rows per table, says what was left out, and --json has all."""
    import time

    from novelmuse.reports._check import MAX_ROWS_TOTAL

    args = ["rules", command] if command != "check" else ["check"]
    t0 = time.perf_counter()
    r = muse(*args, "--book", hundred_thousand_lines)
    elapsed = time.perf_counter() - t0
    assert r.exit_code == (1 if command == "check" else 0), r.stderr
    assert elapsed < 15, f"{command} took {elapsed:.1f}s"
    shown = (r.stdout + r.stderr).count("\n")
    assert shown < 3 * MAX_ROWS_TOTAL, shown
    if command == "lint":
        assert "not listed" in r.stdout and "see --json" in r.stdout
        doc = json.loads(muse(*args, "--book", hundred_thousand_lines, "--json").stdout)
        assert doc["counts"] == {
            "forbidden": 20_000,
            "fatigue": 20_000,
            "preferences": 20_000,
            "unparsed": 20_000,
            "errors": 0,
            "warnings": 20_000,
        }
    elif command == "show":
        assert "not listed" in r.stdout and "see --json" in r.stdout
    else:
        assert "more warning(s) about rules.txt" in r.stderr
