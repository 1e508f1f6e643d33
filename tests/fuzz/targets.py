"""Fuzz targets: every parser of outside input, each as `target(data: bytes) -> None` (issue 18 item 7).

A target feeds the bytes to one parser the way novelmuse does and checks its contract: the parser returns a
result, or refuses with a `MuseError` (one line `error[CODE]`, exit 2) — any other exception is a crash the
user would see as `error[INTERNAL]`. Some targets check more (a numeral within its cap, a rule set that
accounts for every line, a judge report's counts that add up).

The seed corpus is `tests/fuzz/corpus/<target>/` (checked in: files from the sample book and the cases that
once broke a parser); `test_fuzz.py` runs the seeds and then mutates them with hypothesis.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from novelmuse.book import find_book, parse_outline
from novelmuse.book._config import load_config
from novelmuse.errors import MuseError
from novelmuse.limits import MAX_CHAPTER_NUMBER
from novelmuse.memory import _cards
from novelmuse.rules._parse import decode_rules, parse_rules
from novelmuse.text import decode_text, parse_heading, parse_number, split_chapters

Target = Callable[[bytes], None]


@cache
def _scratch() -> Path:
    """A scratch book for the targets that parse files (created once per process)."""
    root = Path(tempfile.mkdtemp(prefix="muse-fuzz-"))
    (root / "cards").mkdir()
    (root / "outlines").mkdir()
    (root / "book.toml").write_text('[book]\ntitle = "fuzz"\n', encoding="utf-8")
    return root


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def rules(data: bytes) -> None:
    """rules.txt: decoded (RULES_ENCODING) and parsed; every line is a rule, a problem, unparsed or blank."""
    try:
        text = decode_rules(data, "rules.txt")
    except MuseError:
        return
    parse_rules(text)  # never raises for content


def headings(data: bytes) -> None:
    """Heading lines and the chapter split of a whole novel: a found heading's number is within the cap."""
    text = _text(data)
    for line in text.splitlines()[:200]:
        heading = parse_heading(line)
        if heading is not None:
            assert 0 <= heading.number <= MAX_CHAPTER_NUMBER, heading
    with contextlib.suppress(MuseError):
        split_chapters(text)


def numerals(data: bytes) -> None:
    """A chapter number in Arabic, full-width or Chinese numerals: None or a non-negative int."""
    value = parse_number(_text(data)[:64])
    assert value is None or (isinstance(value, int) and value >= 0), value


def book_toml(data: bytes) -> None:
    """book.toml: a BookConfig, or CONFIG_* (never a traceback, never a coerced value accepted silently)."""
    path = _scratch() / "fuzz-book.toml"
    path.write_bytes(data)
    with contextlib.suppress(MuseError):
        load_config(path, user_config=_scratch() / "no-user-config.toml")


def card_yaml(data: bytes) -> None:
    """A canon card file: a Card, or the card's problems (CARD_*)."""
    root = _scratch()
    try:
        _cards._parse_card(_book(), root / "cards" / "fuzz.yaml", data)
    except _cards._CardInvalid as exc:
        assert exc.problems and all(p.code.startswith("CARD_") for p in exc.problems), exc.problems


def outline_yaml(data: bytes) -> None:
    """A fine outline file: a FineOutline, or OUTLINE_* naming file:line."""
    path = _scratch() / "outlines" / "0001.yaml"
    path.write_bytes(data)
    try:
        parse_outline(path)
    except MuseError as exc:
        assert exc.code.startswith(("OUTLINE_", "FILE_", "BOOK_")), exc.code


def chapter_decoding(data: bytes) -> None:
    """A novel or chapter file's bytes (UTF-8 / GB18030 / BOMs): decoded text, or an InputError."""
    try:
        decoded = decode_text(data, "novel.txt")
    except MuseError:
        return
    assert isinstance(decoded.text, str)


def judge_report(data: bytes) -> None:
    """A judge's reply: not JSON or not the schema is the call policy's correction; a report that parses is
    checked against the blind input without an exception, and its findings are counted consistently."""
    from novelmuse.judging import check_report
    from novelmuse.roles.judge import JudgeReport
    from tests.judging.test_contract import BLIND, RUBRIC  # built once, deterministically

    try:
        report = JudgeReport.model_validate(json.loads(data))
    except (ValueError, ValidationError, RecursionError):
        return  # MODEL_OUTPUT_NOT_JSON / MODEL_SCHEMA_INVALID: the policy asks for a correction
    result = check_report(report, BLIND, RUBRIC)
    assert sum(result.code_counts().values()) == len(result.findings), result.findings


@cache
def _book():  # type: ignore[no-untyped-def]
    return find_book(_scratch())


TARGETS: dict[str, Target] = {
    "rules": rules,
    "headings": headings,
    "numerals": numerals,
    "book_toml": book_toml,
    "card_yaml": card_yaml,
    "outline_yaml": outline_yaml,
    "chapter_decoding": chapter_decoding,
    "judge_report": judge_report,
}
