"""The deterministic first layer of seed 004's rule syntax: one rule per line, in the author's own words.

    禁止:后宫、系统面板          forbidden phrases (error on any occurrence)
    疲劳词:不由得≤2、眼底闪过≤2   fatigue words with a per-chapter limit (warning above it)
    偏好:多对话,快节奏           a preference, kept verbatim for prompts

Accepted: full- and half-width colons (`:` `：`); item separators 、，,；; and any whitespace (including the
full-width space); limit operators ``≤``, ``<=``, ``＜＝``, ``≦``, ``⩽`` with ASCII or full-width digits and an
optional 次 (``不由得≤2次``, ``不由得 ≤ 2 次``); ``#`` or ``＃`` comments, whole-line or trailing; blank lines.
Decisions:

- A line that does not start with one of the three keys and a colon is not guessed at: it is returned as
  `unparsed` with its line number (seed 004's second layer lets a model normalise such lines), never dropped,
  never enforced.
- A line that does start with a key but is malformed is a syntax error (RULES_SYNTAX), because the author
  clearly meant a rule and guessing its missing part would be wrong: ``疲劳词:不由得`` (no limit), a limit that is
  not a whole number, ``禁止:后宫≤2`` (a forbidden phrase takes no limit), an empty ``禁止:``.
- A phrase both forbidden and fatigue-limited, or fatigue-limited with two different limits, is a contradiction
  (RULES_CONTRADICTION) naming both lines. The same rule written twice is a warning (RULES_DUPLICATE).
- A phrase or preference longer than `limits.MAX_PHRASE_CHARS` (10,000 characters) is a syntax error naming
  the cap (issue 18 item 2); matching stays linear in a phrase's length below it.
- A phrase not in Unicode NFC gets a warning (RULES_NOT_NFC): matching is exact, code point by code point
  (``str.count`` semantics), so it only matches text written in the same form.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Literal

from ..book import read_user_file
from ..errors import InputError
from ..limits import MAX_PHRASE_CHARS, MAX_RULES_BYTES
from ._model import FatigueRule, ForbiddenRule, Preference, RuleProblem, RuleSet, UnparsedLine

_KEYS: dict[str, Literal["forbidden", "fatigue", "preference"]] = {
    "禁止": "forbidden",
    "疲劳词": "fatigue",
    "偏好": "preference",
}
_HEADER = re.compile(r"^(禁止|疲劳词|偏好)\s*[:：]\s*(.*)$", re.DOTALL)
_OPS = ("<=", "＜＝", "≤", "≦", "⩽")
_OP_PATTERN = "|".join(re.escape(op) for op in _OPS)
_AROUND_OP = re.compile(rf"\s*({_OP_PATTERN})\s*")
_SEPARATORS = re.compile(r"[、，,；;\s]+")
_FATIGUE_ITEM = re.compile(rf"^(.+?)({_OP_PATTERN})(.*)$", re.DOTALL)
_LIMIT = re.compile(r"^([0-9０-９]{1,9})次?$")  # 不由得≤2次 reads naturally, so a trailing 次 is accepted
#: ``≤ 2 次`` spaced out like ``≤ 2``: the 次 belongs to the limit when it ends the item (``次≤1`` is a phrase).
_SPACED_CI = re.compile(r"([0-9０-９])\s+次(?=[、，,；;\s]|$)")
_COMMENT = re.compile(r"[#＃]")


def _strip_comment(line: str) -> str:
    m = _COMMENT.search(line)
    return line if m is None else line[: m.start()]


class _Builder:
    """Accumulates rules and problems while keeping the first occurrence of each phrase."""

    def __init__(self) -> None:
        self.forbidden: list[ForbiddenRule] = []
        self.fatigue: list[FatigueRule] = []
        self.preferences: list[Preference] = []
        self.unparsed: list[UnparsedLine] = []
        self.problems: list[RuleProblem] = []
        self._seen: dict[str, tuple[str, int | None, int]] = {}
        self._seen_pref: dict[str, int] = {}

    def problem(self, code: str, severity: Literal["error", "warning"], message: str, *lines: int) -> None:
        self.problems.append(RuleProblem(code=code, severity=severity, message=message, lines=tuple(lines)))

    def add_phrase(self, kind: Literal["forbidden", "fatigue"], phrase: str, limit: int | None, line: int) -> None:
        if unicodedata.normalize("NFC", phrase) != phrase:
            self.problem(
                "RULES_NOT_NFC",
                "warning",
                f"line {line}: phrase {phrase!r} is not in Unicode NFC; it matches only text in the same form",
                line,
            )
        first = self._seen.get(phrase)
        if first is None:
            self._seen[phrase] = (kind, limit, line)
            if kind == "forbidden":
                self.forbidden.append(ForbiddenRule(phrase=phrase, line=line))
            else:
                assert limit is not None
                self.fatigue.append(FatigueRule(phrase=phrase, limit=limit, line=line))
            return
        first_kind, first_limit, first_line = first
        if first_kind == kind and first_limit == limit:
            self.problem(
                "RULES_DUPLICATE",
                "warning",
                f"line {line} repeats the rule for {phrase!r} from line {first_line}",
                first_line,
                line,
            )
        elif first_kind != kind:
            self.problem(
                "RULES_CONTRADICTION",
                "error",
                f"{phrase!r} is {_describe(first_kind, first_limit)} on line {first_line} "
                f"but {_describe(kind, limit)} on line {line}",
                first_line,
                line,
            )
        else:
            self.problem(
                "RULES_CONTRADICTION",
                "error",
                f"{phrase!r} has limit {first_limit} on line {first_line} but limit {limit} on line {line}",
                first_line,
                line,
            )

    def add_preference(self, text: str, line: int) -> None:
        first = self._seen_pref.get(text)
        if first is not None:
            self.problem(
                "RULES_DUPLICATE", "warning", f"line {line} repeats the preference from line {first}", first, line
            )
            return
        self._seen_pref[text] = line
        self.preferences.append(Preference(text=text, line=line))

    def build(self) -> RuleSet:
        return RuleSet(
            forbidden=tuple(self.forbidden),
            fatigue=tuple(self.fatigue),
            preferences=tuple(self.preferences),
            unparsed=tuple(self.unparsed),
            problems=tuple(self.problems),
        )


def _describe(kind: str, limit: int | None) -> str:
    return "forbidden (禁止)" if kind == "forbidden" else f"a fatigue word limited to {limit} (疲劳词)"


def _within_cap(b: _Builder, text: str, n: int) -> bool:
    """False (and a RULES_SYNTAX error) when a phrase or preference is longer than `limits.MAX_PHRASE_CHARS`."""
    if len(text) <= MAX_PHRASE_CHARS:
        return True
    b.problem(
        "RULES_SYNTAX",
        "error",
        f"line {n}: {text[:12]!r}… is {len(text):,} characters, over the cap of {MAX_PHRASE_CHARS:,} for one "
        "phrase or preference",
        n,
    )
    return False


def _parse_line(b: _Builder, raw: str, n: int) -> None:
    text = _strip_comment(raw).strip()
    if not text:
        return
    m = _HEADER.match(text)
    if m is None:
        b.unparsed.append(
            UnparsedLine(text=text, line=n, reason="not a 禁止:/疲劳词:/偏好: line; not enforced until normalised")
        )
        return
    kind = _KEYS[m.group(1)]
    value = m.group(2).strip()
    if not value:
        b.problem("RULES_SYNTAX", "error", f"line {n}: {m.group(1)}: has nothing after the colon", n)
        return
    if kind == "preference":
        if not _within_cap(b, value, n):
            return
        b.add_preference(value, n)
        return
    if kind == "fatigue":
        value = _SPACED_CI.sub(r"\1次", value)
    items = [item for item in _SEPARATORS.split(_AROUND_OP.sub(r"\1", value)) if item]
    parsed: list[tuple[str, int | None]] = []
    for item in items:
        if kind == "forbidden":
            if any(op in item for op in _OPS):
                b.problem(
                    "RULES_SYNTAX",
                    "error",
                    f"line {n}: {item!r} has a limit, but 禁止 phrases take none (write it under 疲劳词:)",
                    n,
                )
                return
            parsed.append((item, None))
            continue
        if item.startswith(_OPS):
            b.problem("RULES_SYNTAX", "error", f"line {n}: the limit {item!r} has no phrase before it", n)
            return
        fm = _FATIGUE_ITEM.match(item)
        if fm is None:
            b.problem(
                "RULES_SYNTAX", "error", f"line {n}: fatigue word {item!r} has no limit (write it like {item}≤2)", n
            )
            return
        phrase, limit_text = fm.group(1), fm.group(3)
        lm = _LIMIT.match(limit_text)
        if lm is None:
            b.problem(
                "RULES_SYNTAX",
                "error",
                f"line {n}: the limit of {phrase!r} is {limit_text!r}, not a whole number ≥ 0 (write {phrase}≤2)",
                n,
            )
            return
        parsed.append((phrase, int(lm.group(1))))
    if not all(_within_cap(b, phrase, n) for phrase, _ in parsed):
        return
    for phrase, limit in parsed:
        b.add_phrase("fatigue" if limit is not None else "forbidden", phrase, limit, n)


def parse_rules(text: str) -> RuleSet:
    """Parse a rules file's text into a `RuleSet` (lines are numbered from 1, split on ``\\n``).

    Never raises for content: every problem is returned in `RuleSet.problems` and every line that is not
    clearly a rule in `RuleSet.unparsed`, so `muse rules lint` can show all of them at once.
    """
    b = _Builder()
    for n, raw in enumerate(text.split("\n"), start=1):
        _parse_line(b, raw.removesuffix("\r"), n)
    return b.build()


def decode_rules(data: bytes, where: str) -> str:
    """Decode a rules file (UTF-8, BOM tolerated); anything else is RULES_ENCODING naming the byte offset."""
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start  # offsets count from the start of the file, BOM included
        line = data[:offset].count(b"\n") + 1
        raise InputError(
            "RULES_ENCODING",
            f"the rules file is not UTF-8: invalid byte 0x{data[offset]:02x} at byte offset {offset} (line {line})",
            where,
            "save the file as UTF-8",
        ) from exc


def read_rules_file(path: Path) -> str | None:
    """The text of a rules file, or None when it does not exist (then only the built-in defaults apply).
    Only a regular file up to `limits.MAX_RULES_BYTES` is read (RULES_READ / RULES_TOO_LARGE)."""
    data = read_user_file(path, what="rules file", kind="RULES", max_bytes=MAX_RULES_BYTES, missing_ok=True)
    return None if data is None else decode_rules(data, str(path))
