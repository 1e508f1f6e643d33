"""The hard-rule check: compile an effective rule set once, then check any number of chapters with it."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from ..book import Book, Chapter, read_chapter_file
from ..errors import MuseError
from ..store import ChapterRecord, StoreWriteError, register_chapters, utc_now
from ..text import count_chars, split_paragraphs
from ._defaults import load_defaults
from ._effective import EffectiveRule, EffectiveRuleSet, LengthLimits, build_effective
from ._length import LENGTH_ORIGIN, check_length
from ._match import IntArray, PhraseMatcher
from ._model import RuleSet, Severity, UnparsedLine
from ._parse import parse_rules, read_rules_file
from ._report import (
    ChapterOut,
    CheckReport,
    FindingOut,
    GapOut,
    LengthOut,
    RegistryOut,
    RulesFileState,
    RulesInfo,
    SummaryOut,
)


@dataclass(slots=True)
class Finding:
    """A violated phrase rule in one text: its count and every kept occurrence.

    Cheap to build (a check can make tens of thousands): it keeps a reference to the scan's arrays and where
    its occurrences are in them, and slices on access. Not frozen, because a frozen dataclass costs ~3x more
    to create."""

    rule: Literal["forbidden", "fatigue"]
    target: str
    limit: int | None
    actual: int
    severity: Severity
    origin: str
    all_starts: IntArray = field(repr=False)  # the scan's arrays; this finding's part is [first, first + actual)
    all_paragraphs: IntArray = field(repr=False)
    first: int = field(default=0, repr=False)

    @property
    def starts(self) -> IntArray:
        """Start offsets (into the text) of the occurrences, ascending."""
        return self.all_starts[self.first : self.first + self.actual]

    @property
    def paragraphs(self) -> IntArray:
        """Paragraph index (`text.split_paragraphs`) of each occurrence."""
        return self.all_paragraphs[self.first : self.first + self.actual]

    @property
    def ends(self) -> IntArray:
        """End offsets (exclusive) of the occurrences."""
        return self.starts + len(self.target)

    def hits(self) -> list[tuple[int, int, int]]:
        """(paragraph, start, end) of every occurrence, in text order."""
        return list(zip(self.paragraphs.tolist(), self.starts.tolist(), self.ends.tolist(), strict=True))


#: Characters scanned at once: bounds the memory of one scan (the joined text, its encoding and the match
#: lists) on a very long book, while keeping per-scan overhead negligible.
BATCH_CHARS = 8_000_000


class CompiledRules:
    """An effective rule set with its automaton built once; `check_texts` reuses it for every chapter."""

    def __init__(self, effective: EffectiveRuleSet):
        self.effective = effective
        self.rules: tuple[EffectiveRule, ...] = effective.rules
        self.matcher = PhraseMatcher([r.phrase for r in self.rules])
        # occurrences allowed per chapter: 0 for forbidden, the limit for fatigue
        self._allowed: IntArray = np.array([r.limit or 0 for r in self.rules], dtype=np.int64)
        self._meta = [(r.kind, r.phrase, r.limit, r.severity, r.origin.label) for r in self.rules]

    def check_body(self, body: str) -> tuple[LengthOut, list[FindingOut]]:
        """Everything `muse check` reports for one chapter body (phrase rules and length), e.g. for a writer's
        draft before it is saved: the length outcome and the findings, errors first."""
        return report_findings(self.check_texts([body])[0], count_chars(body), self.effective.length)

    def check_texts(self, texts: Sequence[str]) -> list[list[Finding]]:
        """Phrase findings for each text: forbidden with ≥ 1 occurrence (error), fatigue above its limit
        (warning). Counts have `str.count` semantics; positions index into each text, paragraphs are those of
        `text.split_paragraphs` (all computed vectorised in the scan; here only array views per finding).

        Texts are scanned in batches of about BATCH_CHARS characters, so memory stays bounded on any book."""
        out: list[list[Finding]] = []
        batch: list[str] = []
        size = 0
        for text in texts:
            if batch and size + len(text) > BATCH_CHARS:
                out += self._check_batch(batch)
                batch, size = [], 0
            batch.append(text)
            size += len(text)
        if batch:
            out += self._check_batch(batch)
        return out

    def _check_batch(self, texts: Sequence[str]) -> list[list[Finding]]:
        scan = self.matcher.scan(texts)
        n_phr = scan.phrases
        keys = scan.keys
        sel = np.flatnonzero(scan.group_count > self._allowed[keys % n_phr])
        out: list[list[Finding]] = [[] for _ in texts]
        if not sel.size:
            return out
        sel_keys = keys[sel]
        meta = self._meta
        starts, paras = scan.starts, scan.paragraphs
        for t, p, a, n in zip(
            (sel_keys // n_phr).tolist(),
            (sel_keys % n_phr).tolist(),
            scan.group_start[sel].tolist(),
            scan.group_count[sel].tolist(),
            strict=True,
        ):
            kind, phrase, limit, severity, origin = meta[p]
            out[t].append(Finding(kind, phrase, limit, n, severity, origin, starts, paras, a))
        return out


@dataclass(frozen=True)
class LoadedRules:
    """A book's rules: the file's state, what it says, and the effective set (defaults + book + length)."""

    path: Path
    file: RulesFileState
    ruleset: RuleSet
    effective: EffectiveRuleSet


def rules_file_state(text: str | None, ruleset: RuleSet) -> RulesFileState:
    """ "missing" (no file), "empty" (no rule, preference or unparsed line: only comments or blanks) or
    "present"."""
    if text is None:
        return "missing"
    return "present" if ruleset.forbidden or ruleset.fatigue or ruleset.preferences or ruleset.unparsed else "empty"


def load_book_rules(book: Book) -> LoadedRules:
    """Parse the book's rules.txt and merge it over the defaults; RULES_SYNTAX / RULES_CONTRADICTION raise.

    A missing rules.txt means the defaults only (`file` = "missing"); a file with no rule, preference or
    unparsed line is "empty"."""
    text = read_rules_file(book.rules_path)
    ruleset = parse_rules(text or "")
    state = rules_file_state(text, ruleset)
    limits = LengthLimits(min_chars=book.config.chapters.min_chars, max_chars=book.config.chapters.max_chars)
    effective = build_effective(ruleset, load_defaults(), limits, str(book.rules_path))
    return LoadedRules(book.rules_path, state, ruleset, effective)


def _finding_out(f: Finding) -> FindingOut:
    return FindingOut(
        rule=f.rule,
        target=f.target,
        limit=f.limit,
        actual=f.actual,
        severity=f.severity,
        origin=f.origin,
        hits=f.hits(),
    )


def report_findings(
    findings: list[Finding], chars: int, limits: LengthLimits, *, prologue: bool = False
) -> tuple[LengthOut, list[FindingOut]]:
    """One chapter's length outcome and all its findings in report form (length findings included), errors
    first, then by rule and target."""
    length, violated = check_length(chars, limits, prologue=prologue)
    items = [
        FindingOut(rule="length", target=t, limit=lim, actual=chars, severity="error", origin=LENGTH_ORIGIN, hits=[])
        for t, lim in violated
    ]
    items += [_finding_out(f) for f in findings]
    items.sort(key=lambda f: (f.severity != "error", f.rule, f.target))
    return length, items


def _is_read_only(exc: BaseException) -> bool:
    if isinstance(exc, StoreWriteError):
        return exc.read_only
    if isinstance(exc, MuseError):
        return exc.code == "STORE_OPEN"
    if isinstance(exc, PermissionError):
        return True
    if isinstance(exc, OSError):
        return exc.errno in (13, 30)  # EACCES, EROFS
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def update_registry(book: Book, records: list[ChapterRecord]) -> RegistryOut:
    """Record the checked chapters' sha256/chars/paragraphs; a read-only book is skipped (said so), not fatal."""
    try:
        register_chapters(book.db, records, remove_others=False)
    except (MuseError, sqlite3.Error, OSError) as exc:
        code = exc.code if isinstance(exc, MuseError) else type(exc).__name__
        if _is_read_only(exc):
            return RegistryOut(
                outcome="skipped",
                reason=f"the book directory or its database is read-only ({code})",
                code=code,
            )
        return RegistryOut(outcome="error", reason=str(exc), code=code)
    return RegistryOut(outcome="updated", chapters=len(records))


def numbering_gaps(present: list[int], span: tuple[int, int] | None = None) -> list[GapOut]:
    """Runs of chapter numbers with no file: every number from 1 to the last present one (0, the prologue, is
    optional) that is missing, within `span` when given."""
    if not present:
        return []
    lo, hi = (1, max(present)) if span is None else (max(1, span[0]), min(span[1], max(present)))
    have = set(present)
    gaps: list[GapOut] = []
    n = lo
    while n <= hi:
        if n in have:
            n += 1
            continue
        start = n
        while n <= hi and n not in have:
            n += 1
        gaps.append(GapOut(missing_from=start, missing_to=n - 1))
    return gaps


def _outcome(
    checked: bool, passed: bool, unparsed: list[UnparsedLine]
) -> tuple[Literal["passed", "failed", "incomplete", "skipped"], str | None]:
    """failed (an error finding) outranks incomplete (a rules.txt line parses as no rule: what it asks was not
    checked), which outranks passed; nothing checked is skipped."""
    if not checked:
        return "skipped", "the book has no chapters (chapters/NNNN.md)"
    if not passed:
        return "failed", None
    if unparsed:
        first = unparsed[0]
        more = f" (+{len(unparsed) - 1} more)" if len(unparsed) > 1 else ""
        return "incomplete", (
            f"rules.txt line {first.line} ({first.text!r}){more} is not enforced: it parses as no rule — "
            "`muse rules normalize` proposes rules for it (`muse check --normalize` shows them), `--write` applies them"
        )
    return "passed", None


def check_book(
    book: Book,
    *,
    chapter: int | None = None,
    span: tuple[int, int] | None = None,
    update: bool = True,
) -> CheckReport:
    """Check the selected chapters of a book against its effective rules and chapter length limits.

    Raises RULES_* for an unusable rules file and CHAPTER_NOT_FOUND for an unknown chapter (exit 2). With
    `update`, the chapter registry gets each checked chapter's sha256 and counts (skipped on a read-only book).
    """
    loaded = load_book_rules(book)
    numbers = book.select_chapters(chapter, span)
    gaps = [] if chapter is not None else numbering_gaps(book.chapter_numbers(), span)
    paths = book.chapter_paths()
    chapters: list[Chapter] = [read_chapter_file(n, paths[n]) for n in numbers]
    compiled = CompiledRules(loaded.effective)
    per_text = compiled.check_texts([c.body for c in chapters])
    out: list[ChapterOut] = []
    records: list[ChapterRecord] = []
    by_rule: Counter[str] = Counter()
    now = utc_now()
    for ch, findings in zip(chapters, per_text, strict=True):
        chars = count_chars(ch.body)
        paragraphs = len(split_paragraphs(ch.body))
        rel = str(ch.path.relative_to(book.root))
        records.append(ChapterRecord(ch.number, rel, ch.sha256, chars, paragraphs, now))
        length, items = report_findings(findings, chars, loaded.effective.length, prologue=ch.number == 0)
        by_rule.update(f.rule for f in items)
        out.append(
            ChapterOut(
                number=ch.number,
                title=ch.heading or book.chapter_label(ch.number),
                path=rel,
                sha256=ch.sha256,
                chars=chars,
                paragraphs=paragraphs,
                length=length,
                findings=items,
                errors=sum(f.severity == "error" for f in items),
                warnings=sum(f.severity == "warning" for f in items),
            )
        )
    registry = update_registry(book, records) if update else RegistryOut(outcome="skipped", reason="not requested")
    eff = loaded.effective
    summary = SummaryOut(
        chapters=len(out),
        errors=sum(c.errors for c in out),
        warnings=sum(c.warnings for c in out),
        chapters_with_errors=sum(c.errors > 0 for c in out),
        chapters_with_warnings=sum(c.warnings > 0 for c in out),
        by_rule=dict(sorted(by_rule.items())),
        length_checked=eff.length.configured,
        missing_chapters=sum(g.missing_to - g.missing_from + 1 for g in gaps),
    )
    passed = summary.errors == 0
    outcome, reason = _outcome(bool(out), passed, list(eff.unparsed))
    return CheckReport(
        passed=passed,
        outcome=outcome,
        reason=reason,
        book=str(book.root),
        rules=RulesInfo(
            sha256=eff.sha256,
            file=loaded.file,
            path=str(loaded.path),
            enforced=len(eff.rules),
            forbidden=sum(r.kind == "forbidden" for r in eff.rules),
            fatigue=sum(r.kind == "fatigue" for r in eff.rules),
            preferences=len(eff.preferences),
            defaults_version=eff.defaults.version,
            defaults_sha256=eff.defaults.sha256,
            unparsed_lines=[u.line for u in eff.unparsed],
            unparsed=list(eff.unparsed),
            warnings=list(loaded.ruleset.warnings),
        ),
        registry=registry,
        chapters=out,
        summary=summary,
        gaps=gaps,
        chapter_unit=book.heading_unit,
    )
