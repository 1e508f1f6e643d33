"""`muse status` on the sample book: every problem named, each with the next command to run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .books import run_muse

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sanguo"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo book (examples/sanguo), synced once (no model: fact cards stay stale)."""
    root = tmp_path_factory.mktemp("status") / "sanguo"
    root.mkdir()
    for name in ("chapters", "cards", "outlines"):
        shutil.copytree(SAMPLE / name, root / name)
    for name in ("book.toml", "rules.txt"):
        shutil.copy2(SAMPLE / name, root / name)
    assert run_muse(root, "sync", "--book", root).code == 4  # fact cards left stale: not evaluated
    return root


def _status(book: Path) -> dict[str, Any]:
    r = run_muse(book, "status", "--book", book, "--json")
    assert r.code == 0, r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def test_status_of_the_demo_book_names_each_problem_and_its_next_command(sample: Path) -> None:
    doc = _status(sample)
    assert doc["chapters"] == {"count": 10, "first": 1, "last": 10, "gaps": []}
    problems = doc["problems"]
    assert all(p["next"] for p in problems)
    forbidden = [p for p in problems if p["area"] == "check" and p["severity"] == "error"]
    assert [p["chapters"] for p in forbidden] == [[2]] and "后宫" in forbidden[0]["what"]
    assert forbidden[0]["next"] == "muse review 2"
    facts = next(p for p in problems if p["area"] == "facts")
    assert "STALE" in facts["what"] and facts["chapters"] == list(range(1, 11))
    assert doc["facts"]["missing"] == list(range(1, 11))
    unparsed = next(p for p in problems if p["area"] == "rules")
    assert "line 8" in unparsed["what"] and "写得更有古典味道一些" in unparsed["what"]
    assert unparsed["next"].startswith("muse rules normalize")
    assert doc["rules_unparsed_lines"] == [8]
    assert doc["index"]["current"] == 10 and doc["registry"]["current"] == 10
    assert doc["gates"].startswith("not evaluated")
    assert doc["reviews"]["not_reviewed"] == list(range(1, 11))
    overdue = next(p for p in problems if p["area"] == "ledger")
    assert overdue["next"] == "muse ledger --overdue --as-of 10" and doc["overdue_foreshadows"]
    # the terminal screen says the same, with the commands
    text = run_muse(sample, "status", "--book", sample).stdout
    for needle in (
        "chapter 2 (chapters/0002.md): forbidden 后宫",
        "fact cards STALE",
        "rules.txt line 8",
        "→ muse review 2",
        "→ muse rules normalize",
        "gates      not evaluated",
    ):
        assert needle in text, needle


def test_status_sees_edits_gaps_and_skipped_reviews(sample: Path, tmp_path: Path) -> None:
    book = tmp_path / "b"
    shutil.copytree(sample, book)
    (book / "chapters" / "0005.md").unlink()
    ch3 = book / "chapters" / "0003.md"
    ch3.write_text(ch3.read_text(encoding="utf-8") + "\n补一句。\n", encoding="utf-8")
    assert run_muse(book, "review", "4", "--book", book).code in (0, 1, 4)
    doc = _status(book)
    assert doc["chapters"]["gaps"] == [5]
    assert doc["registry"]["stale"] == [3] and doc["registry"]["removed"] == [5]
    assert doc["index"]["stale"] == [3] and doc["index"]["removed"] == [5]
    assert doc["reviews"]["skipped"] == [4]
    by_area = {p["area"]: p for p in doc["problems"]}
    assert by_area["chapters"]["chapters"] == [5]
    assert by_area["index"]["next"] == "muse sync"
    skipped = next(p for p in doc["problems"] if p["area"] == "reviews")
    assert skipped["chapters"] == [4] and "skipped" in skipped["what"]


def test_chapters_breaking_the_same_rules_are_one_problem(tmp_path: Path) -> None:
    """A novel imported under limits none of its chapters meets is one line naming all of them, not one per
    chapter (1,000 lines would bury the rest of the screen); other error signatures stay apart, and a chapter
    alone keeps its file. Length is never sent to `muse review`, which repairs forbidden phrases only."""
    book = tmp_path / "b"
    assert run_muse(tmp_path, "init", book).code == 0
    toml = book / "book.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("min_chars = 2000", "min_chars = 50", 1), encoding="utf-8")
    (book / "rules.txt").write_text("禁止:后宫\n", encoding="utf-8")
    short = "　　林凡深吸一口气。\n"
    bodies = {n: short for n in range(1, 31)}
    bodies[30] = short + "　　又一句。\n"
    bodies[7] = short + "　　后宫之中。\n"  # short and forbidden
    bodies[9] = short + "　　后宫之中。\n"
    bodies[12] = "　　" + "后宫佳丽三千人。" * 10 + "\n"  # long enough, forbidden
    for n, body in bodies.items():
        (book / "chapters" / f"{n:04d}.md").write_text(f"# 第{n}章\n{body}", encoding="utf-8")
    doc = _status(book)
    check = [p for p in doc["problems"] if p["area"] == "check" and p["severity"] == "error"]
    assert [p["chapters"] for p in check] == [[n for n in range(1, 31) if n not in (7, 9, 12)], [7, 9], [12]]
    short_only, both, forbidden = check
    assert short_only["what"] == "27 chapters (1–6, 8, 10–11, 13–30): length min_chars (8–12 chars)"
    assert "muse review" not in short_only["next"] and "min_chars" in short_only["next"]
    assert both["what"] == "2 chapters (7, 9): forbidden 后宫 ×1, length min_chars (13 chars)"
    assert both["next"].startswith("muse review 7   (then each chapter listed)") and "length" in both["next"]
    assert forbidden["what"] == "chapter 12 (chapters/0012.md): forbidden 后宫 ×10"
    assert forbidden["next"] == "muse review 12"
    assert doc["chapters_with_errors"] == list(range(1, 31))
    text = run_muse(book, "status", "--book", book).stdout
    assert text.count("✗ check") == 3
