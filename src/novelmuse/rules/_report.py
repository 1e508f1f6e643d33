"""The JSON shapes of `muse check`, `muse rules lint` and `muse rules show` (stable; bump schema_version on change)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ._effective import EffectiveRuleSet
from ._model import FatigueRule, ForbiddenRule, Preference, RuleProblem, Severity, UnparsedLine

CHECK_SCHEMA_VERSION = 2  # 2: outcome `incomplete` (rules.txt lines not enforced), rules.unparsed
RULES_SCHEMA_VERSION = 1

RulesFileState = Literal["present", "empty", "missing"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: One occurrence as ``[paragraph, start, end]``: the paragraph index (`text.split_paragraphs` of the body) and
#: the [start, end) character offsets into the body. A triple, not an object: a check can report hundreds of
#: thousands of hits, and an object per hit costs ~10x more to build and to print.
Hit = tuple[int, int, int]


class FindingOut(_Out):
    """One violated rule in one chapter."""

    rule: Literal["forbidden", "fatigue", "length"]
    target: str  # the phrase, or min_chars / max_chars for length
    limit: int | None  # fatigue limit, or the length bound; None for forbidden
    actual: int  # occurrences (str.count semantics), or the chapter's count_chars
    severity: Severity
    origin: str  # "default v1", "rules.txt line 3", "book.toml [chapters]"
    hits: list[Hit]  # [paragraph, start, end] per occurrence, in text order


class LengthOut(_Out):
    """The length check: passed, failed, or skipped when book.toml sets no limit (a skip is not a pass)."""

    chars: int
    min_chars: int | None
    max_chars: int | None
    outcome: Literal["passed", "failed", "skipped"]
    reason: str | None = None


class ChapterOut(_Out):
    number: int
    title: str
    path: str  # relative to the book root
    sha256: str  # of the chapter file's bytes
    chars: int  # text.count_chars(body)
    paragraphs: int
    length: LengthOut
    findings: list[FindingOut]
    errors: int
    warnings: int


class RulesInfo(_Out):
    """Which rule set was enforced."""

    sha256: str  # of the effective rule set (see `muse rules show`)
    file: RulesFileState
    path: str
    enforced: int  # phrase rules
    forbidden: int
    fatigue: int
    preferences: int
    defaults_version: int
    defaults_sha256: str
    unparsed_lines: list[int]  # line numbers not enforced (see `muse rules lint`)
    unparsed: list[UnparsedLine] = []  # the same lines with their text (what the author meant, not enforced)
    warnings: list[RuleProblem]


class RegistryOut(_Out):
    """The chapter registry update: `updated`, `skipped` (read-only book directory) or `error` (with a code)."""

    outcome: Literal["updated", "skipped", "error"]
    chapters: int = 0
    reason: str | None = None
    code: str | None = None


class SummaryOut(_Out):
    chapters: int
    errors: int
    warnings: int
    chapters_with_errors: int
    chapters_with_warnings: int
    by_rule: dict[str, int]  # findings per rule kind
    length_checked: bool
    missing_chapters: int = 0  # chapter numbers in the checked span with no chapters/NNNN.md (see `gaps`)


class GapOut(_Out):
    """Chapter numbers with no chapter file, from 1 (the prologue 0 is optional) to the last chapter."""

    missing_from: int
    missing_to: int


class CheckReport(_Out):
    """`muse check --json`: one document. `passed` is false iff some finding has severity error (exit 1).

    `outcome` says what happened: ``failed`` (error findings), ``passed`` (chapters were checked against every
    rule, no error finding), ``incomplete`` (no error finding, but a rules.txt line is not enforced: it parses as
    no rule — seed 004's second layer, `muse rules normalize`, has not turned it into one yet; exit 4) or
    ``skipped`` (no chapter to check; exit 4): a skip or an unenforced line must never read as a pass."""

    schema_version: int = CHECK_SCHEMA_VERSION
    ok: bool = True  # the command ran (an error document has ok=false and an `error` object instead)
    passed: bool
    outcome: Literal["passed", "failed", "incomplete", "skipped"]
    reason: str | None = None  # why the check was skipped or is incomplete
    book: str
    rules: RulesInfo
    registry: RegistryOut
    chapters: list[ChapterOut]
    summary: SummaryOut
    gaps: list[GapOut] = []  # missing chapter files in the checked span (listed, not an error finding)
    chapter_unit: str | None = None  # the book's heading unit (章/回/节/Chapter): how the book names its chapters


class LintCounts(_Out):
    forbidden: int
    fatigue: int
    preferences: int
    unparsed: int
    errors: int
    warnings: int


class LintReport(_Out):
    """`muse rules lint --json`: what the file says, what was not understood, and its problems."""

    schema_version: int = RULES_SCHEMA_VERSION
    ok: bool = True
    passed: bool  # false iff there are error problems (exit 1)
    path: str
    file: RulesFileState
    forbidden: list[ForbiddenRule]
    fatigue: list[FatigueRule]
    preferences: list[Preference]
    unparsed: list[UnparsedLine]
    problems: list[RuleProblem]
    counts: LintCounts


class ShowReport(_Out):
    """`muse rules show --json`: the effective rule set (defaults overridden by the book) and its sha256."""

    schema_version: int = RULES_SCHEMA_VERSION
    ok: bool = True
    path: str
    file: RulesFileState
    effective: EffectiveRuleSet
