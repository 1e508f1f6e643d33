"""Earlier reviews, and the story's memory, as the writer, the reviewer and the arbiter are told about them.

The editorial loop's records (consistency rounds with issues, editor rounds with dimensions) are handed to the
writer's and arbiter's tasks as they are: these protocols name the fields the prompts read, and the functions
below are the one place that turns them into prompt text. The story memory (card states as of the chapter before,
the active foreshadow ledger with ages, the previous chapter's ending) reaches the reviewer and every rewrite of
the loop through `memory_fields` (seed 004: 台账进入后续写作上下文).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from ..text import chapter_label


class IssueView(Protocol):
    """One consistency issue: severity, type, the verbatim quote and its paragraph, why, and a fix hint."""

    @property
    def severity(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def quote(self) -> str: ...
    @property
    def paragraph(self) -> int: ...
    @property
    def explanation(self) -> str: ...
    @property
    def fix_hint(self) -> str: ...


class ConsistencyRoundView(Protocol):
    """One consistency review round."""

    @property
    def round(self) -> int: ...
    @property
    def blocking(self) -> int: ...
    @property
    def issues(self) -> Sequence[IssueView]: ...


class DimView(Protocol):
    """One editor dimension: score and evidence (`neutral`: scored neutrally, not counted)."""

    @property
    def name(self) -> str: ...
    @property
    def score(self) -> int: ...
    @property
    def evidence(self) -> str: ...
    @property
    def neutral(self) -> bool: ...


class EditorRoundView(Protocol):
    """One editor review round: overall score, dimensions, the computed verdict and the editor's notes."""

    @property
    def round(self) -> int: ...
    @property
    def overall(self) -> int: ...
    @property
    def dims(self) -> Sequence[DimView]: ...
    @property
    def computed_verdict(self) -> str: ...
    @property
    def notes(self) -> Sequence[str]: ...


def editor_report_text(rnd: EditorRoundView) -> str:
    """An editor round as the writer reads it (polish notes, rewrite report)."""
    dims = "\n".join(f"- {d.name}: {d.score}" + (" (中性)" if d.neutral else f"「{d.evidence}」") for d in rnd.dims)
    notes = "\n".join(f"- {n}" for n in rnd.notes) or "(无)"
    return f"overall {rnd.overall},裁决 {rnd.computed_verdict}\n{dims}\n意见:\n{notes}"


def issues_text(issues: Sequence[IssueView]) -> str:
    """Numbered issues with their paragraph, quote, explanation and fix hint (what a repair is asked to fix)."""
    lines = []
    for n, i in enumerate(issues):
        lines.append(f"{n + 1}. [{i.severity}/{i.type}] 第{i.paragraph}段「{i.quote}」")
        lines.append(f"   问题:{i.explanation}\n   建议:{i.fix_hint}")
    return "\n".join(lines)


def reviews_json_lines(consistency: Sequence[ConsistencyRoundView], editor: Sequence[EditorRoundView]) -> str:
    """Every review so far, as compact JSON lines: consistency issues (severity, type, quote, explanation) and
    editor reports (scores with their evidence, computed verdict, notes) — what the arbiter's prompt promises."""
    lines = []
    for c in consistency:
        issues = [
            {"severity": i.severity, "type": i.type, "quote": i.quote, "explanation": i.explanation} for i in c.issues
        ]
        lines.append(
            json.dumps({"consistency_round": c.round, "blocking": c.blocking, "issues": issues}, ensure_ascii=False)
        )
    for e in editor:
        lines.append(
            json.dumps(
                {
                    "editor_round": e.round,
                    "overall": e.overall,
                    "dims": {d.name: {"score": d.score, "evidence": d.evidence} for d in e.dims},
                    "verdict": e.computed_verdict,
                    "notes": list(e.notes),
                },
                ensure_ascii=False,
            )
        )
    return "\n".join(lines)


class StoryMemory(Protocol):
    """What a role is told about the story so far (built by `memory.memory_context`)."""

    @property
    def available(self) -> bool: ...
    @property
    def note(self) -> str: ...
    @property
    def card_states(self) -> Sequence[str]: ...
    @property
    def foreshadows(self) -> Sequence[str]: ...
    @property
    def previous_ending(self) -> str: ...


def _lines(lines: Sequence[str], empty: str) -> str:
    return "\n".join(lines) if lines else empty


def memory_fields(chapter: int, memory: StoryMemory, unit: str | None = None) -> dict[str, object]:
    """The placeholders of a memory block: the chapter before, the card states and the active foreshadows as of
    it (with ages), the previous chapter's ending — each says so when it is empty or the memory is unavailable."""
    empty = "(无)" if memory.available else f"(无:{memory.note})"
    return {
        "prev_label": chapter_label(unit, max(chapter - 1, 0)),
        "card_states": _lines(memory.card_states, empty),
        "foreshadows": _lines(memory.foreshadows, empty),
        "previous_ending": memory.previous_ending or "(无:没有上一章)",
    }
