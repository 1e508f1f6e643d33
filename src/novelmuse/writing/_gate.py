"""The detector gate of one chapter: the deterministic part, the detector role and the fact extractor on the
candidate, assembled into one `DetectorReport` (pure: the model answers come in as values).

A hard constraint's verdict: `fail` when the deterministic part fails it (a key name never written, a time
marker missing), otherwise the detector role's verdict — whose quote must be found exactly once in the
candidate, or the verdict counts as `unknown` —, and `unknown` when the detector role did not run. Unknown
blocks like fail: a hard constraint passes only when it was verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..book import FineOutline
from ..editorial import StepOutcome
from ..memory import CardSet, MemoryState
from ..roles import chapter_quote
from ..roles.detector import DetectorOutput
from ..roles.extractor import FactCardOutput
from ..roles.writer import DeclaredFact
from ..rules import EffectiveRuleSet
from ..text import sha256_hex
from ._detector import Claimed, DetectorItem, DetectorReport
from ._factcheck import declaration_items, extracted_items
from ._hardcheck import HardCheck

if TYPE_CHECKING:
    from ._build import ContextBuild


class DetectorGate:
    """Everything the gate needs for one chapter, prepared once (rules compiled, constraints keyed)."""

    def __init__(
        self, outline: FineOutline, cards: CardSet, state: MemoryState, rules: EffectiveRuleSet, manifest_sha256: str
    ):
        self.outline = outline
        self.cards = cards
        self.state = state
        self.hard = HardCheck(outline, cards, state, rules)
        self.manifest_sha256 = manifest_sha256

    @property
    def constraint_ids(self) -> list[str]:
        """The hard constraints every report gives a verdict on."""
        return self.hard.constraint_ids

    def constraint_lines(self) -> list[tuple[str, str]]:
        """(id, text) of every hard constraint: all the detector role is told besides the candidate."""
        return [(s.id, s.text) for s in self.hard.specs]

    def report(
        self,
        text: str,
        declared: Sequence[DeclaredFact],
        semantic: DetectorOutput | None,
        semantic_outcome: StepOutcome,
        extracted: FactCardOutput | None,
        facts_outcome: StepOutcome,
    ) -> DetectorReport:
        """Assemble the report of the candidate `text` (declaring `declared`) from the deterministic part and the
        two model answers (None when that part did not run; its outcome says why)."""
        items, failed = self.hard.check(text, declared)
        items += self._constraints(text, failed, semantic, semantic_outcome)
        items += declaration_items(text, declared, self.outline, self.cards)
        if extracted is not None:
            items += extracted_items(
                text, extracted, declared, self.outline, self.cards, self.state, self.hard.unavailable
            )
        return DetectorReport(
            chapter=self.outline.chapter,
            candidate_sha256=sha256_hex(text),
            manifest_sha256=self.manifest_sha256,
            constraint_ids=self.constraint_ids,
            items=items,
            semantic=semantic_outcome,
            facts=facts_outcome,
            claimed=Claimed(
                coverage=semantic.coverage if semantic else None,
                high_severity=semantic.high_severity if semantic else None,
            ),
        )

    def _constraints(
        self,
        text: str,
        failed: dict[str, DetectorItem],
        semantic: DetectorOutput | None,
        outcome: StepOutcome,
    ) -> list[DetectorItem]:
        given = {v.id: v for v in semantic.verdicts} if semantic is not None else {}
        items: list[DetectorItem] = []
        for spec in self.hard.specs:
            if spec.id in failed:
                items.append(failed[spec.id])
                continue
            if semantic is None:
                items.append(
                    DetectorItem(
                        id=spec.id,
                        check="constraint",
                        source="detector",
                        verdict="unknown",
                        severity="high",
                        detail=f"{spec.text} — not verified: the detector {outcome.label}",
                    )
                )
                continue
            v = given.get(spec.id)
            if v is None:
                continue  # the report is incomplete: DetectorReport refuses it (DETECTOR_REPORT_INCOMPLETE)
            m = chapter_quote(text, v.quote) if v.quote.strip() else None
            verdict = v.verdict
            detail = f"{spec.text} — {v.reason}"
            if verdict == "pass" and (m is None or not m.ok):
                verdict = "unknown"
                detail += " (its quote is not found exactly once in the text: not verified)"
            items.append(
                DetectorItem(
                    id=spec.id,
                    check="constraint",
                    source="detector",
                    verdict=verdict,
                    severity="high",
                    detail=detail,
                    quote=v.quote if m is not None and m.ok else "",
                    start=m.start if m is not None and m.ok else None,
                    end=m.end if m is not None and m.ok else None,
                )
            )
        return items


def gate_for(build: ContextBuild) -> DetectorGate:
    """The detector gate of a build's chapter (prepared once per run: rules compiled, constraints keyed)."""
    inputs = build.inputs
    return DetectorGate(inputs.outline, inputs.cards, inputs.state, inputs.rules, build.manifest_sha256)
