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
