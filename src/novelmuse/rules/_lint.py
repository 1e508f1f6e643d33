"""`muse rules lint` / `muse rules show` as services: a rules file's lint report, a book's effective rule set."""

from __future__ import annotations

from pathlib import Path

from ..book import Book
from ..errors import InputError
from ._check import load_book_rules, rules_file_state
from ._parse import parse_rules, read_rules_file
from ._report import LintCounts, LintReport, ShowReport


def lint_rules(path: Path, *, must_exist: bool) -> LintReport:
    """Every parsed rule, unparsed line and problem of the rules file at `path` (`passed`: no error).

    A missing file is RULES_NOT_FOUND when `must_exist` (a file named on the command line), else an empty
    file in state `missing` (a book without rules.txt).
    """
    text = read_rules_file(path)
    if text is None and must_exist:
        raise InputError("RULES_NOT_FOUND", "no such rules file", str(path), "check the path")
    rs = parse_rules(text or "")
    return LintReport(
        passed=not rs.errors,
        path=str(path),
        file=rules_file_state(text, rs),
        forbidden=list(rs.forbidden),
        fatigue=list(rs.fatigue),
        preferences=list(rs.preferences),
        unparsed=list(rs.unparsed),
        problems=list(rs.problems),
        counts=LintCounts(
            forbidden=len(rs.forbidden),
            fatigue=len(rs.fatigue),
            preferences=len(rs.preferences),
            unparsed=len(rs.unparsed),
            errors=len(rs.errors),
            warnings=len(rs.warnings),
        ),
    )


def show_rules(book: Book) -> ShowReport:
    """The book's effective rule set (defaults overridden by rules.txt) with each rule's origin and the sha256."""
    loaded = load_book_rules(book)
    return ShowReport(path=str(loaded.path), file=loaded.file, effective=loaded.effective)
