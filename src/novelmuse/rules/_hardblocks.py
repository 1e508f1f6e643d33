"""The quality gate's three hard blocks (seed 000: 硬阻断三维是规则层检查, 不在评委职权) — deterministic, computed here
from the candidate text and what the caller hands in, never taken from the caller's word:

- **source_safety** — nothing the text must never hold: no rules.txt forbidden phrase (禁止); no model meta-text (a
  model's self-reference or a leftover of its instructions, listed in the versioned data file
  `data/meta_text.toml`); no run of ≥ `COPY_RUN_CHARS` (50) characters copied verbatim (whitespace ignored) from
  the prior chapters the writer's context held.
- **output_compliance** — the text is a finished chapter body: its length (`text.count_chars`) within book.toml's
  [chapters] limits; not truncated (it ends like a sentence, `SENTENCE_ENDS`); no markup or heading artefact (a
  Markdown heading, fence, bold, list or HTML tag, a chapter heading line, a JSON fragment).
- **static_contract** — the fine outline's deterministic constraints: every time anchor's `marker` phrase occurs in
  the text (the only part of an outline a program can check without judging meaning; events, results,
  foreshadow operations and settings are for the detector's and the judges' semantic verdicts). With no outline,
  or an outline without a marker, there is nothing to check: `not_applicable`, said so, never `passed`.

Each block ends as exactly one of ``passed`` / ``fired`` / ``not_applicable`` with its findings (code, detail,
offsets into the text). `hard_blocks` computes all three; the single-block functions are public so the writer's
deterministic detector checks the same things with the same code.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..book import FineOutline
from ..errors import InputError
from ..text import count_chars, find_headings, sha256_hex
from ._check import CompiledRules
from ._effective import EffectiveRuleSet, LengthLimits
from ._length import check_length

HARD_BLOCK_SCHEMA_VERSION = 1
HardBlockName = Literal["source_safety", "output_compliance", "static_contract"]
BlockState = Literal["passed", "fired", "not_applicable"]
HARD_BLOCK_NAMES: tuple[HardBlockName, ...] = ("source_safety", "output_compliance", "static_contract")

#: A run of this many characters (whitespace ignored) shared with a prior chapter is a copy, not a coincidence.
COPY_RUN_CHARS = 50
#: How a finished chapter ends: a sentence end, a closing quote or bracket, an ellipsis or a dash.
SENTENCE_ENDS = frozenset("。！？!?…”」』）)》—～~.\"'")
META_TEXT_FILE = "meta_text.toml"
_SPACE = re.compile(r"\s+")

_MARKUP_LINES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a Markdown heading", re.compile(r"#{1,6}\s")),
    ("a code fence", re.compile(r"```|~~~")),
    ("a Markdown list item", re.compile(r"[-*+]\s\S")),
    ("a Markdown quote", re.compile(r">\s")),
    ("a JSON fragment", re.compile(r"[{\[]\s*\"|\"\w+\"\s*:")),
)
_MARKUP_ANYWHERE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Markdown bold", re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")),
    ("an HTML tag", re.compile(r"</?[A-Za-z][A-Za-z0-9]*(\s[^<>\n]*)?/?>")),
)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlockFinding(_Frozen):
    """Why a block fired: a stable code, a detail, and where in the text ([start, end) character offsets)."""

    code: str
    detail: str
    start: int | None = None
    end: int | None = None


class BlockResult(_Frozen):
    """One hard block: fired iff it has findings; not_applicable (with its reason) when there was nothing to check."""

    state: BlockState
    reason: str | None = None  # why not_applicable
    findings: list[BlockFinding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # sub-checks that had nothing to check (e.g. no length limits)


class HardBlockReport(_Frozen):
    """The three hard blocks of one text, bound to that text's sha256 and the rules and data they applied."""

    schema_version: int = HARD_BLOCK_SCHEMA_VERSION
    text_sha256: str
    rules_sha256: str
    meta_text_version: int
    meta_text_sha256: str
    prior_texts: int  # how many prior-chapter texts the copy check compared against
    outline_sha256: str | None
    source_safety: BlockResult
    output_compliance: BlockResult
    static_contract: BlockResult

    def states(self) -> dict[str, BlockState]:
        """Block name → passed / fired / not_applicable, in the rubric's order."""
        return {name: self.block(name).state for name in HARD_BLOCK_NAMES}

    def block(self, name: str) -> BlockResult:
        """One block's result by name."""
        result: BlockResult = getattr(self, name)
        return result

    @property
    def fired(self) -> list[str]:
        """The names of the blocks that fired."""
        return [name for name, state in self.states().items() if state == "fired"]


def _result(findings: list[BlockFinding], notes: list[str] | None = None) -> BlockResult:
    return BlockResult(state="fired" if findings else "passed", findings=findings, notes=notes or [])


# ── source_safety ────────────────────────────────────────────────────────────────────────────────────────


class _MetaTextFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1)
    phrases: list[str]
    line_patterns: list[str]


@dataclass(frozen=True)
class MetaText:
    """The meta-text list: its version and sha256, phrases (substrings) and line patterns (compiled)."""

    version: int
    sha256: str
    phrases: tuple[str, ...]
    line_patterns: tuple[re.Pattern[str], ...]


@cache
def load_meta_text() -> MetaText:
    """The packaged meta-text list (read and validated once per process)."""
    data = (resources.files("novelmuse.rules") / "data" / META_TEXT_FILE).read_bytes()
    try:
        raw = _MetaTextFile.model_validate(tomllib.loads(data.decode("utf-8")))
        patterns = tuple(re.compile(p) for p in raw.line_patterns)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError, re.error) as exc:
        raise InputError(
            "RULES_DEFAULTS_INVALID", f"the built-in meta-text list is invalid ({exc})", META_TEXT_FILE, "reinstall"
        ) from exc
    return MetaText(raw.version, sha256_hex(data), tuple(p for p in raw.phrases if p), patterns)


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset of the line's first non-space character, the line from there) for every non-blank line."""
    out: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.strip():
            out.append((pos + len(line) - len(stripped), stripped.rstrip("\r")))
        pos += len(line) + 1
    return out


def _squeezed(text: str) -> tuple[str, list[int]]:
    """`text` without whitespace, and for each kept character its offset in `text`."""
    keep = [i for i, ch in enumerate(text) if not ch.isspace()]
    return "".join(text[i] for i in keep), keep


def copied_runs(text: str, sources: Sequence[str], min_chars: int = COPY_RUN_CHARS) -> list[tuple[int, int]]:
    """Maximal runs of ≥ `min_chars` characters of `text` (whitespace ignored) that occur verbatim in a source, as
    [start, end) offsets into `text`, in text order.

    Exact, and fast enough for every draft: each source is sampled every `step` characters with windows of
    `min_chars − step + 1` characters (any common run of `min_chars` holds one of them whole), the text's windows
    are looked up at every position, and each hit is extended both ways to the whole common run, which counts only
    when it is ≥ `min_chars` long."""
    flat, where = _squeezed(text)
    if len(flat) < min_chars or not sources:
        return []
    step = max(1, min_chars // 5)
    width = min_chars - step + 1
    srcs = [_SPACE.sub("", source) for source in sources]
    anchors: dict[str, list[tuple[str, int]]] = {}
    for src in srcs:
        for j in range(0, len(src) - width + 1, step):
            anchors.setdefault(src[j : j + width], []).append((src, j))
    covered = [False] * len(flat)
    for i in range(len(flat) - width + 1):
        for src, j in anchors.get(flat[i : i + width], ()):
            lo = 0
            while i - lo > 0 and j - lo > 0 and flat[i - lo - 1] == src[j - lo - 1]:
                lo += 1
            hi = width
            while i + hi < len(flat) and j + hi < len(src) and flat[i + hi] == src[j + hi]:
                hi += 1
            if lo + hi >= min_chars:
                covered[i - lo : i + hi] = [True] * (lo + hi)
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(flat):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j < len(flat) and covered[j]:
            j += 1
        runs.append((where[i], where[j - 1] + 1))
        i = j
    return runs


def source_safety(text: str, rules: EffectiveRuleSet, prior_texts: Sequence[str] = ()) -> BlockResult:
    """Forbidden phrases, model meta-text and runs copied from the prior chapters (see the module docstring)."""
    findings: list[BlockFinding] = []
    for f in CompiledRules(rules).check_texts([text])[0]:
        if f.rule != "forbidden":
            continue  # fatigue words only warn (seed 004), never block
        findings += [
            BlockFinding(code="HB_FORBIDDEN_PHRASE", detail=f"forbidden {f.target} ({f.origin})", start=s, end=e)
            for _, s, e in f.hits()
        ]
    meta = load_meta_text()
    for phrase in meta.phrases:
        start = text.find(phrase)
        while start != -1:
            findings.append(
                BlockFinding(
                    code="HB_META_TEXT", detail=f"model meta-text {phrase!r}", start=start, end=start + len(phrase)
                )
            )
            start = text.find(phrase, start + len(phrase))
    for offset, line in _lines(text):
        for pattern in meta.line_patterns:
            if (m := pattern.match(line)) is not None:
                findings.append(
                    BlockFinding(
                        code="HB_META_TEXT",
                        detail=f"a line starts like the model's instructions ({m.group(0)!r})",
                        start=offset,
                        end=offset + m.end(),
                    )
                )
    for start, end in copied_runs(text, prior_texts):
        chars = count_chars(text[start:end])
        findings.append(
            BlockFinding(
                code="HB_COPIED_RUN",
                detail=f"{chars} characters copied verbatim from a prior chapter (≥ {COPY_RUN_CHARS})",
                start=start,
                end=end,
            )
        )
    findings.sort(key=lambda f: (f.start or 0, f.code))
    return _result(findings)


# ── output_compliance ────────────────────────────────────────────────────────────────────────────────────


def output_compliance(text: str, limits: LengthLimits) -> BlockResult:
    """Length within the limits, a finished ending, no markup or heading artefact (see the module docstring)."""
    findings: list[BlockFinding] = []
    notes: list[str] = []
    length, violated = check_length(count_chars(text), limits)
    if length.outcome == "skipped":
        notes.append(f"length: not checked ({length.reason})")
    findings += [
        BlockFinding(code="HB_LENGTH", detail=f"{length.chars} characters, {target} is {bound}")
        for target, bound in violated
    ]
    body = text.rstrip()
    if not body:
        findings.append(BlockFinding(code="HB_EMPTY", detail="the text is empty"))
    elif body[-1] not in SENTENCE_ENDS:
        findings.append(
            BlockFinding(
                code="HB_TRUNCATED",
                detail=f"the text ends in the middle of a sentence ({body[-12:]!r})",
                start=len(body) - 1,
                end=len(body),
            )
        )
    for offset, line in _lines(text):
        for what, pattern in _MARKUP_LINES:
            if pattern.match(line):
                findings.append(
                    BlockFinding(
                        code="HB_MARKUP", detail=f"{what}: {line[:20]!r}", start=offset, end=offset + len(line)
                    )
                )
    for what, pattern in _MARKUP_ANYWHERE:
        findings += [
            BlockFinding(code="HB_MARKUP", detail=f"{what}: {m.group(0)[:20]!r}", start=m.start(), end=m.end())
            for m in pattern.finditer(text)
        ]
    for h in find_headings(text):
        if not h.heading.is_volume:
            line = h.raw(text).strip()
            findings.append(
                BlockFinding(
                    code="HB_HEADING",
                    detail=f"a chapter heading line inside the text: {line[:30]!r}",
                    start=h.start,
                    end=h.end,
                )
            )
    findings.sort(key=lambda f: (f.start if f.start is not None else -1, f.code))
    return _result(findings, notes)


# ── static_contract ──────────────────────────────────────────────────────────────────────────────────────


def static_contract(text: str, outline: FineOutline | None) -> BlockResult:
    """The outline's time-anchor markers, each found in the text; not_applicable without an outline or a marker."""
    if outline is None:
        return BlockResult(state="not_applicable", reason="no fine outline for this chapter")
    anchors = [(a.id, a.marker.strip()) for a in outline.time_anchors if a.marker.strip()]
    if not anchors:
        return BlockResult(state="not_applicable", reason="the outline has no time-anchor marker to check")
    findings = [
        BlockFinding(code="HB_ANCHOR_MARKER_MISSING", detail=f"time anchor {aid}: the text never says {marker!r}")
        for aid, marker in anchors
        if marker not in text
    ]
    return _result(findings)


def hard_blocks(
    text: str, rules: EffectiveRuleSet, *, prior_texts: Sequence[str] = (), outline: FineOutline | None = None
) -> HardBlockReport:
    """All three hard blocks of `text` (a chapter body) under `rules` (the book's effective rule set, with its
    length limits), against `prior_texts` (the raw text of the chapters the writer's context held before this one)
    and the chapter's fine `outline` (None when it has none)."""
    meta = load_meta_text()
    return HardBlockReport(
        text_sha256=sha256_hex(text),
        rules_sha256=rules.sha256,
        meta_text_version=meta.version,
        meta_text_sha256=meta.sha256,
        prior_texts=len(prior_texts),
        outline_sha256=outline.sha256 if outline is not None else None,
        source_safety=source_safety(text, rules, prior_texts),
        output_compliance=output_compliance(text, rules.length),
        static_contract=static_contract(text, outline),
    )
