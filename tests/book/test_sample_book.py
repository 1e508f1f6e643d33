"""The sample book under examples/sanguo: loads, and its chapters are exactly what `muse import` makes."""

from __future__ import annotations

import re
import subprocess
import sys

from novelmuse.book import find_book
from novelmuse.text import count_chars
from tests.conftest import ROOT, SAMPLE_BOOK, SANGUO


def test_sample_book_loads_with_sensible_limits() -> None:
    book = find_book(SAMPLE_BOOK)
    assert book.config.book.title == "三国演义（前十回）"
    assert book.config.providers == {} and book.config.roles == {}
    assert book.chapter_numbers() == list(range(1, 11))
    limits = book.config.chapters
    assert limits.min_chars is not None and limits.max_chars is not None
    lines = SANGUO.read_text(encoding="utf-8").split("\n")
    corpus_headings = [line for line in lines if re.match(r"第[一二三四五六七八九十百]+回\u3000", line)]
    for n in book.chapter_numbers():
        ch = book.read_chapter(n)
        assert ch.heading == corpus_headings[n - 1].strip()
        assert limits.min_chars <= count_chars(ch.body) <= limits.max_chars


def test_sample_rules_mention_phrases_that_occur() -> None:
    book = find_book(SAMPLE_BOOK)
    bodies = [book.read_chapter(n).body for n in book.chapter_numbers()]
    rules = book.rules_path.read_text(encoding="utf-8")
    assert "禁止:后宫" in rules and sum(b.count("后宫") for b in bodies) >= 1  # an error finding
    assert any(b.count("大怒") > 2 for b in bodies)  # a fatigue warning (大怒≤2)
    assert "偏好:" in rules


def test_sample_chapters_are_what_the_importer_makes() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_sanguo.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
