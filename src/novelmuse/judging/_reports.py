"""Panel reports (the stable JSON shape) and aggregation across items.

A `PanelReport` names candidates only by their random ids; it binds the rubric (id, version, sha256),
each judge's identity (role, provider, model, receipt ids), the candidates' sha256, the quote offsets,
each judge's input and report sha256, and the sealed arm map's sha256. `report_sha256` is the sha256 of
the canonical JSON of everything else in the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Literal

from pydantic import Field

from ..errors import InputError
from ..text import sha256_json
from ._arith import TOLERANCE
from ._doc import JudgeDoc
from ._rubrics import Rubric

PanelStatus = Literal["stable", "invalid", "invalid_unstable"]
#: v2: snake_case keys (v1, camelCase, is still read and verified).
PANEL_SCHEMA_VERSION = "judge-panel-v2"


class RubricRef(JudgeDoc):
    id: str
    version: int
    sha256: str


class CandidateRef(JudgeDoc):
    candidate_id: str
    sha256: str
    chars: int


class QuoteSpan(JudgeDoc):
    candidate_id: str
    dimension_id: str
    start: int
    end: int


class JudgeScore(JudgeDoc):
    """One judge's score on one cell, with its reason and verbatim quote (located: see `quotes`)."""

    candidate_id: str
    dimension_id: str
    score: float
    reason: str = ""
    quote: str = ""


class JudgeVerdict(JudgeDoc):
    candidate_id: str
    target_id: str
    verdict: str


class JudgeEntry(JudgeDoc):
    """One judge of the panel: who (role/provider/model/receipts), what it saw and what it returned."""

    slot: int
    order: list[str]
    outcome: Literal["ok", "failed"]
    error_code: str | None = None
    diagnostics: dict[str, object] = Field(default_factory=dict)  # codes and counts only
    role: str
    provider: str | None = None
    provider_kind: str | None = None
    model: str | None = None
    call_id: str | None = None
    receipt_ids: list[str] = Field(default_factory=list)
    final_receipt_id: str | None = None  # the receipt of the accepted draft this report is bound to
    attempts: int = 0
    prompt_sha256: str
    input_sha256: str
    report_sha256: str | None = None
    scores: list[JudgeScore] = Field(default_factory=list)
    verdicts: list[JudgeVerdict] = Field(default_factory=list)
    rankings: dict[str, list[str]] = Field(default_factory=dict)  # the judge's own ranking (recorded, not used)
    quotes: list[QuoteSpan] = Field(default_factory=list)


class CellScore(JudgeDoc):
    candidate_id: str
    dimension_id: str
    score: float
    judge_scores: list[float]
    method: Literal["mean_of_two", "median_of_three"]


class DimensionRanking(JudgeDoc):
    """Computed from the panel's scores (best first; tied candidates share a rank)."""

    dimension_id: str
    order: list[str]
    ranks: dict[str, int]


class CellVerdict(JudgeDoc):
    """pass only if every judge said pass; fail if every judge said fail; unknown if a judge said unknown (an
    oracle panel); split otherwise. Only pass is a pass."""

    candidate_id: str
    target_id: str
    verdict: Literal["pass", "fail", "unknown", "split"]
    judge_verdicts: list[str]


class PanelReport(JudgeDoc):
    """One item's panel result. Before unblinding only random candidate ids appear."""

    schema_version: str = PANEL_SCHEMA_VERSION
    panel_id: str
    run_id: str
    item_ref: str
    profile: str
    rubric: RubricRef
    scene_type: str | None
    status: PanelStatus
    error_code: str | None = None
    third_judge: bool
    disagreements: int  # cells where judges 1 and 2 differ by more than 0.5
    unstable_cells: int
    warnings: list[str] = Field(default_factory=list)
    candidates: list[CandidateRef]
    judges: list[JudgeEntry]
    scores: list[CellScore] = Field(default_factory=list)
    rankings: list[DimensionRanking] = Field(default_factory=list)
    verdicts: list[CellVerdict] = Field(default_factory=list)
    arm_map_sha256: str
    report_sha256: str = ""

    def seal(self) -> PanelReport:
        """A copy whose report_sha256 is the sha256 of everything else."""
        return self.model_copy(update={"report_sha256": self._content_sha256()})

    def verify(self) -> bool:
        """True when report_sha256 matches the report's content (a v1 report's: over its camelCase form)."""
        return self.report_sha256 == self._content_sha256()

    def _content_sha256(self) -> str:
        v1 = self.schema_version == "judge-panel-v1"
        body = self.model_dump(mode="json", exclude={"report_sha256"}, by_alias=v1)
        return sha256_json(body)

    def score(self, candidate_id: str, dimension_id: str) -> float:
        for s in self.scores:
            if s.candidate_id == candidate_id and s.dimension_id == dimension_id:
                return s.score
        raise KeyError((candidate_id, dimension_id))


def rank(scores: Mapping[str, Fraction], order: Sequence[str]) -> DimensionRanking:
    """Candidates by score, best first (ties keep the blind order and share the higher rank)."""
    ordered = sorted(order, key=lambda c: -scores[c])
    ranks: dict[str, int] = {}
    for i, c in enumerate(ordered):
        prev = ordered[i - 1] if i else None
        ranks[c] = ranks[prev] if prev is not None and scores[prev] == scores[c] else i + 1
    return DimensionRanking(dimension_id="", order=ordered, ranks=ranks)


# ── aggregation across items ──────────────────────────────────────────────────────────────────────────


class ArmDimension(JudgeDoc):
    """Mean score of one arm on one dimension over the stable items that have it."""

    arm: str
    dimension_id: str
    scene_type: str | None  # set for scene dimensions: aggregated only within one scene type
    items: int
    mean: float


class Delta(JudgeDoc):
    """Per-dimension difference of an arm against arm A (B−A, C−A) over the items where both exist.

    `withheld` counts items left out because one of the two cells carried a stability warning (a
    warn-only profile: its two judges differed by more than 0.5 there, and seed 000 draws no utility
    conclusion from such a score); `mean_delta` is None when every item was withheld.
    """

    arm: str
    base: str
    dimension_id: str
    scene_type: str | None
    items: int
    mean_delta: float | None
    withheld: int = 0


class StructureGate(JudgeDoc):
    """结构门结果 of one arm (seed 000: the summary gives each dimension's score, the structure gate result, B−A and
    C−A): over the stable items, how its candidates fared on the item's structured standard — the oracle assertions
    and hard constraints every candidate gets a verdict on. An item counts as passed when every verdict is pass
    (all judges), failed when one is fail, split when judges disagreed and none failed; `no_standard` items had no
    assertion or constraint (nothing to gate)."""

    arm: str
    items: int
    passed: int
    failed: int
    split: int
    no_standard: int


class Aggregate(JudgeDoc):
    rubric: RubricRef
    items_total: int
    items_stable: int
    items_excluded: int  # invalid and invalid_unstable items are never counted
    means: list[ArmDimension]
    deltas: list[Delta]
    structure: list[StructureGate] = Field(default_factory=list)


def aggregate(
    rubric: Rubric, reports: Sequence[tuple[PanelReport, Mapping[str, str]]], *, base_arm: str = "A"
) -> Aggregate:
    """Aggregate stable reports (each with its opened arm map) by arm and dimension.

    General dimensions aggregate across chapters; scene dimensions only within one scene type (keyed by
    the item's pre-registered scene type), so a gain in one kind of scene cannot hide a loss in another.
    Deltas (arm − base arm) are computed per item and averaged over items where both arms were scored.
    Reports of another rubric (id, version or sha256) are refused: scores under different yardsticks are
    not comparable. Under a warn-only rubric (fine_outline_replay) a cell whose two judges differed by more
    than 0.5 still counts in its arm's mean, but no delta is drawn from it (counted as withheld).
    """
    layer = {d.id: d.layer for d in rubric.dimensions}
    warn_only = rubric.panel.disagreement == "stability_warning"
    sums: dict[tuple[str, str, str | None], list[Fraction]] = {}
    deltas: dict[tuple[str, str, str | None], list[Fraction]] = {}
    withheld: dict[tuple[str, str, str | None], int] = {}
    stable = 0
    gates: dict[str, dict[str, int]] = {}
    for report, arms in reports:
        if (report.rubric.id, report.rubric.version, report.rubric.sha256) != (
            rubric.id,
            rubric.version,
            rubric.sha256,
        ):
            raise InputError(
                "JUDGE_RUBRIC_MIXED",
                f"report {report.panel_id} was scored with {report.rubric.id} v{report.rubric.version}",
                "aggregation",
                "aggregate only reports of one rubric version",
            )
        if report.status != "stable":
            continue
        stable += 1
        for cid in dict.fromkeys(s.candidate_id for s in report.scores):  # every candidate of a stable panel
            verdicts = {v.verdict for v in report.verdicts if v.candidate_id == cid}
            state = (
                "no_standard"
                if not verdicts
                else "failed"
                if "fail" in verdicts
                else "split"
                if "split" in verdicts
                else "passed"
            )
            counts = gates.setdefault(arms[cid], dict.fromkeys(("passed", "failed", "split", "no_standard"), 0))
            counts[state] += 1
        by_arm: dict[tuple[str, str], Fraction] = {}
        unsettled: set[tuple[str, str]] = set()
        for s in report.scores:
            scene = report.scene_type if layer.get(s.dimension_id) == "scene" else None
            arm = arms[s.candidate_id]
            value = Fraction(str(s.score))
            sums.setdefault((arm, s.dimension_id, scene), []).append(value)
            by_arm[(arm, s.dimension_id)] = value
            judged = [Fraction(str(v)) for v in s.judge_scores]
            if warn_only and judged and max(judged) - min(judged) > TOLERANCE:
                unsettled.add((arm, s.dimension_id))
        for (arm, dim), value in by_arm.items():
            if arm != base_arm and (base_arm, dim) in by_arm:
                scene = report.scene_type if layer.get(dim) == "scene" else None
                if (arm, dim) in unsettled or (base_arm, dim) in unsettled:
                    withheld[(arm, dim, scene)] = withheld.get((arm, dim, scene), 0) + 1
                    deltas.setdefault((arm, dim, scene), [])
                    continue
                deltas.setdefault((arm, dim, scene), []).append(value - by_arm[(base_arm, dim)])
    order = {d: i for i, d in enumerate(rubric.dimension_ids)}

    def key(k: tuple[str, str, str | None]) -> tuple[str, int, str]:
        return (k[0], order.get(k[1], 99), k[2] or "")

    return Aggregate(
        rubric=RubricRef(id=rubric.id, version=rubric.version, sha256=rubric.sha256),
        items_total=len(reports),
        items_stable=stable,
        items_excluded=len(reports) - stable,
        means=[
            ArmDimension(arm=a, dimension_id=d, scene_type=s, items=len(v), mean=float(sum(v) / len(v)))
            for (a, d, s), v in sorted(sums.items(), key=lambda kv: key(kv[0]))
        ],
        deltas=[
            Delta(
                arm=a,
                base=base_arm,
                dimension_id=d,
                scene_type=s,
                items=len(v),
                mean_delta=float(sum(v) / len(v)) if v else None,
                withheld=withheld.get((a, d, s), 0),
            )
            for (a, d, s), v in sorted(deltas.items(), key=lambda kv: key(kv[0]))
        ],
        structure=[StructureGate(arm=a, items=sum(c.values()), **c) for a, c in sorted(gates.items())],
    )
