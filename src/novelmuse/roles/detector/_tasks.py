"""The detector's task: `DETECT` — a verdict for every hard constraint of one candidate chapter.

The request holds the candidate text, its sha256 and the hard constraints (id, text) — nothing else (隔离
Semantic Detector: 候选与硬约束 → 严格语义报告). The contract, checked inside the call (a violation is sent back as a
correction, and after the call's bound the call fails closed with the first violation's code):

- DETECTOR_REPORT_INCOMPLETE: a constraint id without a verdict (checked first: it is the code a report that
  stays incomplete fails with, exit 3);
- CONTRACT_UNKNOWN_ID / CONTRACT_DUPLICATE_ID: a verdict for an id that was not asked, or two for one id;
- DETECTOR_REPORT_MISMATCH: the echoed candidate_sha256 is not the candidate's (a report for another text);
- CONTRACT_QUOTE_*: a `pass` whose quote is not found exactly once in the candidate (≥ 4 characters), or a
  non-empty quote of another verdict that is not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...llm import Contract, Violation
from .._quotes import quote_violation
from .._task import RoleTask
from .schema import DetectorOutput


@dataclass(frozen=True)
class DetectRequest:
    """Check `candidate` (whose sha256 is `candidate_sha256`) against the hard constraints (id, text)."""

    candidate: str
    candidate_sha256: str
    constraints: Sequence[tuple[str, str]]


def _fields(r: DetectRequest) -> Mapping[str, object]:
    return {
        "candidate_sha256": r.candidate_sha256,
        "constraints": "\n".join(f"{cid}　{text}" for cid, text in r.constraints) or "（无）",
        "candidate": r.candidate,
    }


def report_contract(r: DetectRequest) -> Contract[DetectorOutput]:
    """Every id answered once, the candidate's sha256 echoed, every quote found (see the module docstring)."""
    asked = [cid for cid, _ in r.constraints]

    def check(out: DetectorOutput) -> list[Violation]:
        given = Counter(v.id for v in out.verdicts)
        found: list[Violation] = []
        missing = [cid for cid in asked if cid not in given]
        if missing:
            found.append(Violation("DETECTOR_REPORT_INCOMPLETE", f"no verdict for {', '.join(missing)}"))
        unknown = [cid for cid in given if cid not in asked]
        if unknown:
            found.append(Violation("CONTRACT_UNKNOWN_ID", f"ids not asked: {', '.join(unknown)}"))
        twice = [cid for cid, n in given.items() if n > 1]
        if twice:
            found.append(Violation("CONTRACT_DUPLICATE_ID", f"more than one verdict for {', '.join(twice)}"))
        if out.candidate_sha256.strip() != r.candidate_sha256:
            found.append(
                Violation("DETECTOR_REPORT_MISMATCH", "candidate_sha256 is not the one given: copy it exactly")
            )
        for v in out.verdicts:
            if v.verdict == "pass" or v.quote.strip():
                bad = quote_violation(r.candidate, v.quote, f"verdicts[{v.id}].quote")
                if bad is not None:
                    found.append(bad)
        return found

    return check


DETECT: RoleTask[DetectRequest, DetectorOutput] = RoleTask(
    role="detector",
    name="detect",
    schema=DetectorOutput,
    system=("detector/system.txt",),
    user=("detector/input.txt",),
    fields=_fields,
    contracts=lambda r: [report_contract(r)],
)
