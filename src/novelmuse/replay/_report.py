"""`muse replay report RUN [--json]` (issue 12 item 6): what a replay run found, from its gate input — per rubric
dimension and per scene type the mean C−A and B−A over the items where both arms are ok, per target id how
often the detector and the panel agreed (same kind, same id only), arm B stratified by the share of new
characters, and the judges' reliability figures over the run's panels. Read-only; the gate decision itself is
`muse gate evaluate`'s (this report never says passed or failed)."""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from pydantic import BaseModel

from ..book import Book
from ..judging import Reliability, run_reliability
from ._builder import build_gate_input
from ._gates import BUCKETS, new_character_bucket
from ._input import GateInput, Sample
from ._runs import load_run
from ._spec import Arm

BASELINE: Final[Arm] = "A"


class Delta(BaseModel):
    """Mean of arm − A over the items where both are ok (None when there is none)."""

    arm: Arm
    dimension: str
    scene_type: str | None  # None: over all items
    items: int
    mean_delta: float | None


class IdAgreement(BaseModel):
    """Detector vs panel on one (kind, id) across arms A and C: pairs compared and pairs that agreed."""

    kind: str
    id: str
    pairs: int
    agreed: int


class BucketRow(BaseModel):
    """Arm B − A per new-character bucket (diagnostic only: B never enters Gate B)."""

    bucket: str
    items: int
    mean_delta: dict[str, float | None]


class ReplayReport(BaseModel):
    """`muse replay report --json`."""

    schema_version: int = 1
    run_id: str
    set_sha256: str
    mode: str
    arms: list[Arm]
    samples: int
    not_ok: list[str]
    deltas: list[Delta]
    agreement: list[IdAgreement]
    diagnostic_b: list[BucketRow]
    reliability: Reliability


def _ok(gi: GateInput) -> dict[tuple[str, Arm], Sample]:
    return {(s.item_id, s.arm): s for s in gi.samples if s.ok}


def _mean(values: list[Fraction]) -> float | None:
    return float(sum(values, Fraction(0)) / len(values)) if values else None


def _deltas(gi: GateInput, arm: Arm, item_ids: list[str], dims: list[str]) -> tuple[int, dict[str, float | None]]:
    ok = _ok(gi)
    both = [i for i in item_ids if (i, arm) in ok and (i, BASELINE) in ok]
    out = {
        d: _mean([Fraction(ok[(i, arm)].scores[d]) - Fraction(ok[(i, BASELINE)].scores[d]) for i in both]) for d in dims
    }
    return len(both), out


def replay_report(book: Book, run_id: str) -> ReplayReport:
    """The run's report (see the module doc)."""
    row = load_run(book, run_id)
    gi = build_gate_input(book, row.id)
    dims = [*gi.rubric.general_dimensions, *gi.rubric.scene_dimensions]
    deltas: list[Delta] = []
    for arm in (a for a in gi.arms if a != BASELINE):
        ids = [i.item_id for i in gi.items]
        n, means = _deltas(gi, arm, ids, dims)
        deltas += [Delta(arm=arm, dimension=d, scene_type=None, items=n, mean_delta=means[d]) for d in dims]
        for dim in gi.rubric.scene_dimensions:
            for scene in sorted({i.scene_type for i in gi.items}):
                scene_ids = [i.item_id for i in gi.items if i.scene_type == scene]
                n, means = _deltas(gi, arm, scene_ids, [dim])
                deltas.append(Delta(arm=arm, dimension=dim, scene_type=scene, items=n, mean_delta=means[dim]))
    ok = _ok(gi)
    pairs: dict[tuple[str, str], list[bool]] = {}
    for key in sorted(ok):
        if key[1] not in ("A", "C"):
            continue
        s = ok[key]
        panel = {p.key: p.verdict for p in s.panel}
        for found in s.detector:
            if found.key in panel:
                agreed = found.verdict == panel[found.key] and found.verdict != "unknown"
                pairs.setdefault(found.key, []).append(agreed)
    agreement = [IdAgreement(kind=k, id=i, pairs=len(v), agreed=sum(v)) for (k, i), v in sorted(pairs.items())]
    buckets = []
    if "B" in gi.arms:
        for bucket in BUCKETS:
            ids = [i.item_id for i in gi.items if new_character_bucket(i) == bucket]
            n, means = _deltas(gi, "B", ids, dims)
            buckets.append(BucketRow(bucket=bucket, items=n, mean_delta=means))
    return ReplayReport(
        run_id=row.id,
        set_sha256=row.set_sha256,
        mode=row.mode,
        arms=list(gi.arms),
        samples=len(gi.samples),
        not_ok=[f"{s.item_id}/{s.arm}: {s.anomaly.code}" for s in gi.samples if s.anomaly is not None],
        deltas=deltas,
        agreement=agreement,
        diagnostic_b=buckets,
        reliability=run_reliability(book, row.model_run_id),
    )
