"""The hard-rule check: compile an effective rule set once, then check any number of chapters with it.

A check's result stays compact until it is rendered (issue 17 item 3): a finding is one small object holding a
reference to its scan's offset arrays, never an object per hit; `BookCheck.to_report` builds the documented
pydantic shape (`CheckReport`) for callers that want it, and `reports.write_check_json` streams the same JSON
straight from the arrays.
"""

from __future__ import annotations

import gc
import hashlib
import operator
import sqlite3
import sys
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import chain, repeat
from pathlib import Path
from typing import Literal, TypeAlias

from ..book import Book, Chapter, read_chapter_files
from ..errors import MuseError
from ..store import ChapterRecord, StoreWriteError, cached_findings, register_chapters, store_findings, utc_now
from ..text import count_chars, count_paragraphs, sha256_json
from . import _match
from ._defaults import load_defaults
from ._effective import EffectiveRule, EffectiveRuleSet, LengthLimits, build_effective
from ._length import LENGTH_ORIGIN, check_length
from ._match import IntArray, PhraseMatcher, paragraph_indices
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

#: A finding's view of its scan's offsets: numpy arrays (a book-wide scan) or `array("q")` (one text).
Offsets: TypeAlias = "array[int] | IntArray"
_NO_OFFSETS: array[int] = array("q")


@dataclass(slots=True)
class Finding:
    """A violated rule in one text: its count and every kept occurrence (none for a length finding).

    Cheap to build (a check can make hundreds of thousands): it keeps a reference to the scan's arrays and where
    its occurrences are in them, and slices on access. Not frozen, because a frozen dataclass costs ~3x more
    to create."""

    rule: Literal["forbidden", "fatigue", "length"]
    target: str  # the phrase, or min_chars / max_chars for length
    limit: int | None
    actual: int  # occurrences, or the chapter's count_chars for length
    severity: Severity
    origin: str
    all_starts: Offsets = field(repr=False)  # the scan's arrays; this finding's part is [first, first + hit_count)
    all_paragraphs: Offsets = field(repr=False)
    first: int = field(default=0, repr=False)

    @property
    def hit_count(self) -> int:
        """Occurrences located in the text (a length finding has none)."""
        return 0 if self.rule == "length" else self.actual

    def hits(self, limit: int | None = None) -> list[tuple[int, int, int]]:
        """(paragraph, start, end) of the occurrences in text order (the first `limit` of them, if given)."""
        n = self.hit_count if limit is None else min(limit, self.hit_count)
        a, b, width = self.first, self.first + n, len(self.target)
        starts = self.all_starts[a:b].tolist()
        return list(zip(self.all_paragraphs[a:b].tolist(), starts, [s + width for s in starts], strict=True))

    def to_out(self) -> FindingOut:
        """The documented JSON shape of this finding (with every hit)."""
        return FindingOut(
            rule=self.rule,
            target=self.target,
            limit=self.limit,
            actual=self.actual,
            severity=self.severity,
            origin=self.origin,
            hits=self.hits(),
        )


def flat_hits(findings: Sequence[Finding]) -> list[int]:
    """Every hit of `findings`, in their order, as one flat list ``[paragraph, start, end, …]`` (what
    ``[x for f in findings for hit in f.hits() for x in hit]`` gives) — for writers that format a whole chapter at
    once. Findings that share a vectorised scan's arrays are gathered with numpy (loaded then), others slice by
    slice; either way without Python work per hit."""
    located = [f for f in findings if f.rule != "length"] if "length" in map(_RULE, findings) else findings
    if not located:
        return []
    paragraphs, starts = located[0].all_paragraphs, located[0].all_starts
    shared = all(map(operator.is_, map(_STARTS, located), repeat(starts))) and all(
        map(operator.is_, map(_PARAGRAPHS, located), repeat(paragraphs))
    )
    if isinstance(starts, array) or not shared:
        para_list: list[int] = []
        start_list: list[int] = []
        widths: list[int] = []
        for f in located:
            a, n = f.first, f.actual
            para_list.extend(f.all_paragraphs[a : a + n].tolist())  # not +=: numpy would add element-wise
            start_list.extend(f.all_starts[a : a + n].tolist())
            widths += [len(f.target)] * n
        flat: list[int] = [0] * (3 * len(start_list))
        flat[0::3] = para_list
        flat[1::3] = start_list
        flat[2::3] = map(operator.add, start_list, widths)
        return flat
    import numpy as np

    n = len(located)
    counts = np.fromiter(map(_ACTUAL, located), dtype=np.int64, count=n)
    firsts = np.fromiter(map(_FIRST, located), dtype=np.int64, count=n)
    widths_of = np.fromiter(map(len, map(_TARGET, located)), dtype=np.int64, count=n)
    total = int(counts.sum())
    index = np.repeat(firsts - (np.cumsum(counts) - counts), counts) + np.arange(total)
    out = np.empty(3 * total, dtype=np.int64)
    out[0::3] = paragraphs[index]
    out[1::3] = hit_starts = starts[index]
    out[2::3] = hit_starts + np.repeat(widths_of, counts)
    result: list[int] = out.tolist()
    return result


_RULE, _TARGET, _ACTUAL, _FIRST = (operator.attrgetter(a) for a in ("rule", "target", "actual", "first"))
_STARTS, _PARAGRAPHS = operator.attrgetter("all_starts"), operator.attrgetter("all_paragraphs")


#: Characters scanned at once by the vectorised path: bounds the memory of one scan (the joined text, its
#: encoding and the automaton's match list) on a very long book. Measured at 5M characters and 10,000 rules:
#: 8M per scan → 284 MB peak, 500k → 161 MB, and no slower (smaller arrays stay in cache).
BATCH_CHARS = 500_000
#: Texts are checked one by one in plain Python (`PhraseMatcher.occurrences`) when the rule set has at most
#: PLAIN_PYTHON_RULES phrase rules or the work (characters × phrase rules) is at most PLAIN_PYTHON_WORK; otherwise
#: by the vectorised scan, whose numpy import (~0.1 s) and per-scan set-up then pay off. What decides is the
#: number of matches per character, which grows with the rules. Measured (CPU, gc off): 1,000 rules over 600k
#: characters: plain 38 ms, numpy 31 ms + ~100 ms import; over 5M: plain 0.40 s, numpy 0.46 s with its import
#: (`muse check --json` as a whole: 0.80–0.86 s and 69 MB against 0.96–1.0 s and 90 MB); 10,000 rules over 600k:
#: 276 vs 111 + 100 ms, over 5M: 1.19 vs 1.10 s. Both paths give the same findings (tests/rules/test_match.py).
PLAIN_PYTHON_RULES = 2_000
PLAIN_PYTHON_WORK = 2_000_000_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a check allocates its match tuples, arrays and findings, and
    while they are rendered (none of them can form a cycle): otherwise every few hundred allocations trigger a
    collection that walks every live object — 30–40 % of a 10,000-rule check of 5M characters, and, once the
    check had returned its 200,000 findings, another 0.2 s of collections while they were counted and written.
    Nested uses are fine (the outermost restores the collector)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _one_text_arrays(findings: Sequence[Finding]) -> bool:
    """Whether `findings` share one text's `array("q")` offsets holding exactly their hits, finding after finding
    (as `CompiledRules._check_one` builds them)."""
    starts, paragraphs = findings[0].all_starts, findings[0].all_paragraphs
    if not isinstance(starts, array) or not isinstance(paragraphs, array):
        return False
    first = 0
    for f in findings:
        if f.all_starts is not starts or f.all_paragraphs is not paragraphs or f.first != first:
            return False
        first += f.actual
    return first == len(starts) == len(paragraphs)


#: The encoding of cached findings (`encode_findings`); part of every rules key, so a new encoding drops old rows.
FINDINGS_FORMAT = "check-findings-v1"


@cache
def engine_sha256() -> str | None:
    """sha256 of what turns a text and a phrase list into findings: this module's and `_match`'s source files and
    the automaton library's compiled module (hashed by path, not imported again), with FINDINGS_FORMAT and the
    byte order of the encoding. None when a file cannot be read (then nothing is cached)."""
    import ahocorasick_rs

    h = hashlib.sha256(f"{FINDINGS_FORMAT}\0{sys.byteorder}\0".encode())
    try:
        for module in (sys.modules[__name__], _match, getattr(ahocorasick_rs, "ahocorasick_rs", ahocorasick_rs)):
            path = getattr(module, "__file__", None)
            if path is None:
                return None
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    except OSError:
        return None
    return h.hexdigest()


class CompiledRules:
    """An effective rule set with its automaton built once; `check_texts` reuses it for every chapter."""

    def __init__(self, effective: EffectiveRuleSet):
        self.effective = effective
        self.rules: tuple[EffectiveRule, ...] = effective.rules
        self.matcher = PhraseMatcher([r.phrase for r in self.rules])
        # occurrences allowed per chapter: 0 for forbidden, the limit for fatigue
        self._allowed: list[int] = [r.limit or 0 for r in self.rules]
        self._meta = [(r.kind, r.phrase, r.limit, r.severity, r.origin.label) for r in self.rules]

    @cached_property
    def cache_key(self) -> str | None:
        """The key of this rule set's cached findings (`check_findings`): the sha256 of the phrase rules in order
        with the occurrences each allows — all that decides which occurrences are findings — and of the engine's
        code (`engine_sha256`). A finding's kind, limit, severity and origin are taken from the current rules when
        it is decoded. None (no caching) when two rules share a phrase or the engine's files cannot be read."""
        engine = engine_sha256()
        phrases = [r.phrase for r in self.rules]
        if engine is None or len(set(phrases)) != len(phrases):
            return None
        return sha256_json({"engine": engine, "phrases": phrases, "allowed": self._allowed})

    @cached_property
    def _phrase_index(self) -> dict[str, int]:
        return {r.phrase: i for i, r in enumerate(self.rules)}

    def encode_findings(self, findings: Sequence[Finding]) -> bytes:
        """One text's phrase findings (as `check_texts` gives them) as bytes, for `decode_findings` under this rule
        set's `cache_key`: int64 (native order) k, then the k findings' rule indexes and counts, then their hits'
        starts and their paragraphs, finding after finding."""
        index = self._phrase_index
        out = array("q", [len(findings)])
        out.extend(index[f.target] for f in findings)
        out.extend(f.actual for f in findings)
        if findings and _one_text_arrays(findings):  # the plain path: the arrays are the hits, in finding order
            out.extend(findings[0].all_starts)
            out.extend(findings[0].all_paragraphs)
            return out.tobytes()
        for f in findings:
            out.extend(f.all_starts[f.first : f.first + f.actual].tolist())
        for f in findings:
            out.extend(f.all_paragraphs[f.first : f.first + f.actual].tolist())
        return out.tobytes()

    def decode_findings(self, data: bytes) -> list[Finding] | None:
        """The findings `encode_findings` encoded, their rule's fields from this rule set; None when `data` is not
        a well-formed encoding for it (a rule index out of range, a count the rule allows): then the text is
        scanned again."""
        if len(data) % 8:
            return None
        a = array("q")
        a.frombytes(data)
        k = a[0] if a else -1
        if k < 0 or len(a) < 1 + 2 * k:
            return None
        rules, counts = a[1 : 1 + k].tolist(), a[1 + k : 1 + 2 * k].tolist()
        total = sum(counts)
        if len(a) != 1 + 2 * k + 2 * total:
            return None
        meta, allowed, n_rules = self._meta, self._allowed, len(self._meta)
        starts, paras = a[1 + 2 * k : 1 + 2 * k + total], a[1 + 2 * k + total :]
        out: list[Finding] = []
        first = 0
        for p, n in zip(rules, counts, strict=True):
            if not 0 <= p < n_rules or n <= allowed[p]:
                return None
            kind, phrase, limit, severity, origin = meta[p]
            out.append(Finding(kind, phrase, limit, n, severity, origin, starts, paras, first))
            first += n
        return out

    @cached_property
    def _allowed_vector(self) -> IntArray:
        import numpy as np

        return np.array(self._allowed, dtype=np.int64)

    def check_body(self, body: str) -> tuple[LengthOut, list[FindingOut]]:
        """Everything `muse check` reports for one chapter body (phrase rules and length), e.g. for a writer's
        draft before it is saved: the length outcome and the findings, errors first."""
        length, findings = chapter_findings(self.check_texts([body])[0], count_chars(body), self.effective.length)
        return length, [f.to_out() for f in findings]

    def check_texts(self, texts: Sequence[str]) -> list[list[Finding]]:
        """Phrase findings for each text: forbidden with ≥ 1 occurrence (error), fatigue above its limit
        (warning), in rule order. Counts have `str.count` semantics; positions index into each text,
        paragraphs are those of `text.split_paragraphs`.

        With few rules or little text (PLAIN_PYTHON_RULES, PLAIN_PYTHON_WORK), each text is checked on its own in
        plain Python; otherwise texts are scanned vectorised in batches of about BATCH_CHARS characters, so memory
        stays bounded on any book."""
        with collector_paused():
            rules = len(self.rules)
            if rules <= PLAIN_PYTHON_RULES or sum(map(len, texts)) * rules <= PLAIN_PYTHON_WORK:
                return [self._check_one(text) for text in texts]
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

    def _check_one(self, text: str) -> list[Finding]:
        allowed, meta = self._allowed, self._meta
        violated = sorted((p, s) for p, s in self.matcher.occurrences(text).items() if len(s) > allowed[p])
        if not violated:
            return []
        flat = list(chain.from_iterable(starts for _, starts in violated))
        starts, paras = array("q", flat), array("q", paragraph_indices(text, flat))
        out: list[Finding] = []
        first = 0
        for p, occ in violated:
            kind, phrase, limit, severity, origin = meta[p]
            out.append(Finding(kind, phrase, limit, len(occ), severity, origin, starts, paras, first))
            first += len(occ)
        return out

    def _check_batch(self, texts: Sequence[str]) -> list[list[Finding]]:
        import numpy as np

        scan = self.matcher.scan(texts)
        n_phr = scan.phrases
        keys = scan.keys
        sel = np.flatnonzero(scan.group_count > self._allowed_vector[keys % n_phr])
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


def cached_check(
    book: Book, compiled: CompiledRules, chapters: Sequence[Chapter], *, whole_book: bool = False
) -> list[list[Finding]]:
    """`compiled.check_texts` of the chapters' bodies, with the findings of a chapter text already checked under
    the same rules key taken from the book's store (`check_findings`) instead of scanning it again, and those of
    the others stored. The same findings either way (`tests/rules/test_check_cache.py`). The store is optional: a
    book whose database cannot be read or written (read-only) is simply checked in full. `whole_book`: the
    chapters are all of the book's, so the rows of chapter texts it no longer has are dropped."""
    key = compiled.cache_key
    if key is None or not chapters:
        return compiled.check_texts([c.body for c in chapters])
    try:
        stored = cached_findings(book.db, key, {c.sha256 for c in chapters})
    except (MuseError, sqlite3.Error, OSError):
        return compiled.check_texts([c.body for c in chapters])
    out: list[list[Finding] | None] = [
        None if (data := stored.get(c.sha256)) is None else compiled.decode_findings(data) for c in chapters
    ]
    missing = [i for i, found in enumerate(out) if found is None]
    if missing:
        scanned = compiled.check_texts([chapters[i].body for i in missing])
        fresh: dict[str, bytes] = {}
        for i, found in zip(missing, scanned, strict=True):
            out[i] = found
            if chapters[i].sha256 not in fresh:  # two chapter files with one text: one row
                fresh[chapters[i].sha256] = compiled.encode_findings(found)
        try:
            present = {c.sha256 for c in chapters} if whole_book else None
            store_findings(book.db, key, fresh, present=present)
        except (MuseError, sqlite3.Error, OSError):
            pass  # a read-only book: checked in full, its registry update says why nothing was recorded
    done = [found for found in out if found is not None]
    assert len(done) == len(chapters)  # every chapter was either decoded or scanned
    return done


def chapter_findings(
    findings: list[Finding], chars: int, limits: LengthLimits, *, prologue: bool = False
) -> tuple[LengthOut, list[Finding]]:
    """One chapter's length outcome and all its findings (length findings included), errors first, then by
    rule and target."""
    length, violated = check_length(chars, limits, prologue=prologue)
    items = [
        Finding("length", target, limit, chars, "error", LENGTH_ORIGIN, _NO_OFFSETS, _NO_OFFSETS)
        for target, limit in violated
    ]
    items += findings
    items.sort(key=lambda f: (f.severity != "error", f.rule, f.target))
    return length, items


def report_findings(
    findings: list[Finding], chars: int, limits: LengthLimits, *, prologue: bool = False
) -> tuple[LengthOut, list[FindingOut]]:
    """`chapter_findings` in report form (a FindingOut, with every hit, per finding)."""
    length, items = chapter_findings(findings, chars, limits, prologue=prologue)
    return length, [f.to_out() for f in items]


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


@dataclass(frozen=True, slots=True)
class ChapterCheck:
    """One checked chapter: `ChapterOut`'s fields, with its findings kept compact."""

    number: int
    title: str
    path: str  # relative to the book root
    sha256: str
    chars: int
    paragraphs: int
    length: LengthOut
    findings: list[Finding]  # errors first, then by rule and target
    errors: int
    warnings: int

    def to_out(self) -> ChapterOut:
        """The documented JSON shape of this chapter (every finding with every hit)."""
        return ChapterOut(
            number=self.number,
            title=self.title,
            path=self.path,
            sha256=self.sha256,
            chars=self.chars,
            paragraphs=self.paragraphs,
            length=self.length,
            findings=[f.to_out() for f in self.findings],
            errors=self.errors,
            warnings=self.warnings,
        )


@dataclass(frozen=True)
class BookCheck:
    """What `muse check` found: `CheckReport`'s fields, with the chapters' findings kept compact."""

    passed: bool
    outcome: Literal["passed", "failed", "incomplete", "skipped"]
    reason: str | None
    book: str
    rules: RulesInfo
    registry: RegistryOut
    chapters: list[ChapterCheck]
    summary: SummaryOut
    gaps: list[GapOut]
    chapter_unit: str | None

    def to_report(self) -> CheckReport:
        """The documented pydantic document (`muse check --json`'s shape), every hit included."""
        return CheckReport(
            passed=self.passed,
            outcome=self.outcome,
            reason=self.reason,
            book=self.book,
            rules=self.rules,
            registry=self.registry,
            chapters=[c.to_out() for c in self.chapters],
            summary=self.summary,
            gaps=self.gaps,
            chapter_unit=self.chapter_unit,
        )


def check_book(
    book: Book,
    *,
    chapter: int | None = None,
    span: tuple[int, int] | None = None,
    update: bool = True,
) -> CheckReport:
    """`check_chapters` as the documented pydantic document (every hit an item: for callers that want them all)."""
    return check_chapters(book, chapter=chapter, span=span, update=update).to_report()


def check_chapters(
    book: Book,
    *,
    chapter: int | None = None,
    span: tuple[int, int] | None = None,
    update: bool = True,
) -> BookCheck:
    """Check the selected chapters of a book against its effective rules and chapter length limits.

    Raises RULES_* for an unusable rules file and CHAPTER_NOT_FOUND for an unknown chapter (exit 2). With
    `update`, the chapter registry gets each checked chapter's sha256 and counts (skipped on a read-only book).
    """
    with collector_paused():
        return _check_chapters(book, chapter, span, update)


def _check_chapters(book: Book, chapter: int | None, span: tuple[int, int] | None, update: bool) -> BookCheck:
    loaded = load_book_rules(book)
    paths = book.chapter_paths()  # listed once
    numbers = book.select_chapters(chapter, span, present=list(paths))
    gaps = [] if chapter is not None else numbering_gaps(list(paths), span)
    chapters: list[Chapter] = read_chapter_files({n: paths[n] for n in numbers}, book.root)
    compiled = CompiledRules(loaded.effective)
    if update:
        whole_book = len(numbers) == len(paths)
        per_text = cached_check(book, compiled, chapters, whole_book=whole_book)
    else:
        per_text = compiled.check_texts([c.body for c in chapters])
    out: list[ChapterCheck] = []
    records: list[ChapterRecord] = []
    by_rule: Counter[str] = Counter()
    now = utc_now()
    for ch, found in zip(chapters, per_text, strict=True):
        chars = count_chars(ch.body)
        paragraphs = count_paragraphs(ch.body)
        rel = str(ch.path.relative_to(book.root))
        records.append(ChapterRecord(ch.number, rel, ch.sha256, chars, paragraphs, now))
        length, items = chapter_findings(found, chars, loaded.effective.length, prologue=ch.number == 0)
        by_rule.update(f.rule for f in items)
        errors = sum(f.severity == "error" for f in items)
        out.append(
            ChapterCheck(
                ch.number,
                ch.heading or book.chapter_label(ch.number),
                rel,
                ch.sha256,
                chars,
                paragraphs,
                length,
                items,
                errors,
                len(items) - errors,
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
    return BookCheck(
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
