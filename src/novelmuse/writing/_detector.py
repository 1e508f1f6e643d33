"""The detector's report on one candidate (seed 003 step 5: Detector 硬门核细纲、事实、证据、时间线和输出合同).

One report per candidate, bound to the candidate's sha256 and the manifest it was written from. It holds
one item per thing checked — every hard constraint of the outline (E1, R1, F-plant:x, hook, S1, T1), the
output contract, the length, every forbidden phrase found, every fatigue word over its limit, every
declared fact, every dead or absent character who acts, every new canonical fact — each with a verdict
(pass / fail / unknown), a severity (``high`` blocks unless it passes; ``warning`` never blocks: style
findings such as AI flavour and fatigue words only warn, Detector 只阻断可验证硬错误) and, where the text
has one, a verbatim quote with its offsets.

The figures are computed from the items and nothing else (统一 Detector 严格真实报告逐项计算高严重度与硬约束覆盖
率，禁止常量): hard-constraint coverage = constraints that pass / constraints; high severity = high items that
do not pass; over no hard constraint there is no coverage (n/a) and the report never passes (not evaluated).
A stored or handed-over report is recomputed when it is read (a report claiming coverage 1.0
while an item fails is corrected, never believed); the detector model's own claims are kept beside the
computed figures. A report that lacks a verdict for a constraint id is DETECTOR_REPORT_INCOMPLETE, a report
used for another candidate DETECTOR_REPORT_MISMATCH — both fail closed (exit 3).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from ..editorial import StepOutcome
from ..errors import FailedClosed
from ..roles.detector import Verdict
from ..text import canonical_json, sha256_hex

REPORT_SCHEMA_VERSION = "detector-report-v1"

Severity = Literal["high", "warning"]
Check = Literal[
    "constraint",  # a hard constraint of the outline (events, results, foreshadow operations, hook, settings, anchors)
    "contract",  # the output contract: a non-empty text of paragraphs
    "length",  # book.toml [chapters] min_chars / max_chars
    "forbidden",  # a rules.txt 禁止 phrase
    "fatigue",  # a fatigue word (rules.txt 疲劳词 or the AI-flavour defaults) over its limit: a warning
    "declared_fact",  # a declared fact's quote, found exactly once in the text
    "acts",  # a character dead or absent as of N−1 who acts or speaks
    "undeclared_fact",  # a new canonical fact the text introduces without declaring it (新增 Canonical 事实必须申报)
    "unsourced_fact",  # a new canonical fact with no reliable source (没有可靠事实来源的硬结论必须阻断)
]
Source = Literal["outline", "rules", "text", "memory", "detector", "extractor"]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DetectorItem(_M):
    """One thing the detector checked, and how it came out."""

    id: str  # the constraint id, or `contract`, `length`, `forbidden:<phrase>`, `acts:<card>`, `fact:states[0]` …
    check: Check
    source: Source  # what decided the verdict: the outline's key names, rules, memory, the detector or extractor role
    verdict: Verdict
    severity: Severity
    detail: str
    quote: str = ""
    start: int | None = None  # offsets of `quote` in the candidate text
    end: int | None = None

    @property
    def blocks(self) -> bool:
        """A high-severity item that does not pass blocks the draft (unknown is not pass: fail closed)."""
        return self.severity == "high" and self.verdict != "pass"


class Figures(_M):
    """What the report's items add up to (computed, never taken from a model)."""

    constraints: int
    constraints_passed: int
    coverage: float | None  # constraints_passed / constraints; None (n/a) when there is no hard constraint
    high_severity: int
    warnings: int
    blocking: bool


def compute_figures(constraint_ids: list[str], items: list[DetectorItem]) -> Figures:
    """Hard-constraint coverage, high-severity and warning counts and whether the draft is blocked, from items."""
    wanted = set(constraint_ids)
    passed = {i.id for i in items if i.check == "constraint" and i.id in wanted and i.verdict == "pass"}
    total = len(wanted)
    high = sum(1 for i in items if i.blocks)
    return Figures(
        constraints=total,
        constraints_passed=len(passed),
        coverage=len(passed) / total if total else None,
        high_severity=high,
        warnings=sum(1 for i in items if i.severity == "warning" and i.verdict != "pass"),
        blocking=high > 0,
    )


class Claimed(_M):
    """What the detector model said about its own report (recorded beside the computed figures, never used)."""

    coverage: float | None = None
    high_severity: int | None = None


class DetectorReport(_M):
    """The detector's report on one candidate (see the module docstring). `figures` is always recomputed."""

    schema_version: str = REPORT_SCHEMA_VERSION
    chapter: int
    candidate_sha256: str
    manifest_sha256: str
    constraint_ids: list[str]
    items: list[DetectorItem]
    semantic: StepOutcome  # the detector role's part
    facts: StepOutcome  # the fact extractor on the candidate, diffed against the as-of state and the declarations
    claimed: Claimed
    figures: Figures | None = None

    @model_validator(mode="after")
    def _recompute(self) -> Self:
        missing = [c for c in self.constraint_ids if not any(i.id == c and i.check == "constraint" for i in self.items)]
        if missing:
            raise FailedClosed(
                "DETECTOR_REPORT_INCOMPLETE",
                f"the detector report has no verdict for constraint id(s) {', '.join(missing)}",
                f"chapter {self.chapter} candidate {self.candidate_sha256[:12]}",
                "a report must give a verdict for every hard constraint; rerun `muse write`",
            )
        figures = compute_figures(self.constraint_ids, self.items)
        if self.figures != figures:
            object.__setattr__(self, "figures", figures)
        return self

    @property
    def computed(self) -> Figures:
        """The figures computed from the items."""
        assert self.figures is not None
        return self.figures

    @property
    def outcome(self) -> StepOutcome:
        """passed (no blocking item, every part ran, at least one hard constraint checked), failed (a blocking
        item), or skipped / error (a part did not run, or there was nothing to check; nothing blocked): skip is
        never pass."""
        if self.computed.blocking:
            return StepOutcome.failed("detector", f"{self.computed.high_severity} blocking item(s)")
        for part in (self.semantic, self.facts):
            if part.status == "error":
                return StepOutcome.error("detector", part.code or "DETECTOR_ERROR", part.detail)
            if part.status == "skipped":
                return StepOutcome.skipped("detector", part.reason or "not evaluated", part.detail)
        if self.computed.constraints == 0:  # nothing was measured: never a pass
            return StepOutcome.skipped("detector", "no hard constraint", "the outline gives no hard event to check")
        return StepOutcome.passed("detector")

    def canonical(self) -> str:
        """The stored, hashed body (canonical JSON)."""
        return canonical_json(self.model_dump(mode="json"))

    def sha256(self) -> str:
        """The report's content address."""
        return sha256_hex(self.canonical())

    def blocking_items(self) -> list[DetectorItem]:
        """The items that block, in report order (what a repair round is told)."""
        return [i for i in self.items if i.blocks]


def bind_report(report: DetectorReport, candidate_text: str) -> DetectorReport:
    """The report, if it was made for exactly this candidate; DETECTOR_REPORT_MISMATCH (exit 3) otherwise."""
    sha = sha256_hex(candidate_text)
    if report.candidate_sha256 != sha:
        raise FailedClosed(
            "DETECTOR_REPORT_MISMATCH",
            f"the detector report is for candidate {report.candidate_sha256[:12]}…, not for this text ({sha[:12]}…)",
            f"chapter {report.chapter}",
            "a report judges exactly one candidate: run the detector on this text",
        )
    return report
