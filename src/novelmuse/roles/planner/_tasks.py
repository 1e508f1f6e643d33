"""The planner's task: `DRAFT` — a draft of the book's plan (大纲 and 设定) from a premise, or of its next part from
the accepted plan and the story so far (`muse plan draft`, `muse plan extend`).

The request carries everything the model reads, already rendered by `novelmuse.writing` (the premise, the accepted
plan, how far the book is written, the open foreshadows, the cards' names), the chapter range the draft must cover,
and `check`: the draft rendered as the plan's files and put through the book's own plan lint (volumes cover the range
without a gap or overlap, foreshadows resolved inside the plan or marked open, every character the settings name has
a card or a card draft) and the card checks. The contract, checked inside the call (a violation goes back as a
correction; after the call's bound the call fails closed with the first violation's code):

- PLAN_DRAFT_INCOMPLETE: no title, volume, arc or event;
- the plan lint's error codes (PLAN_VOLUME_GAP, PLAN_VOLUME_OVERLAP, PLAN_SECTION_OUTSIDE, PLAN_FORESHADOW_*,
  PLAN_CHARACTER_NO_CARD) and CARD_INVALID / CARD_EXISTS for a card draft;
- CONTRACT_TOO_MANY_NOTES: more notes, or longer ones, than the outliner's rule allows (`notes_violations`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...llm import Contract, Violation
from .._task import RoleTask
from ..outliner import notes_violations
from .schema import PlanDraft

_NONE = "（无）"

#: The book's checks of a plan draft: (code, detail) of every error.
PlanCheck = Callable[[PlanDraft], Sequence[tuple[str, str]]]


@dataclass(frozen=True)
class PlanRequest:
    """Draft the plan of chapters `first_chapter`–`last_chapter` (see the module doc)."""

    task: str
    premise: str
    plan: str
    progress: str
    foreshadows: Sequence[str]
    names: Sequence[str]
    first_chapter: int
    last_chapter: int
    check: PlanCheck | None = field(default=None, compare=False)


def _fields(r: PlanRequest) -> Mapping[str, object]:
    return {
        "task": r.task,
        "premise": r.premise or _NONE,
        "plan": r.plan or _NONE,
        "progress": r.progress or _NONE,
        "foreshadows": "\n".join(r.foreshadows) or _NONE,
        "names": "\n".join(r.names) or _NONE,
        "first_chapter": r.first_chapter,
        "last_chapter": r.last_chapter,
    }


def plan_contract(r: PlanRequest) -> Contract[PlanDraft]:
    """The draft is a complete plan of the range that passes the book's plan lint and card checks, with short
    notes (see the module doc)."""

    def check(out: PlanDraft) -> list[Violation]:
        found: list[Violation] = []
        missing = ["title"] if not out.title.strip() else []
        if not out.volumes:
            missing.append("volumes")
        elif any(not v.arcs for v in out.volumes):
            missing.append("arcs (every volume needs at least one)")
        elif any(not a.events for v in out.volumes for a in v.arcs):
            missing.append("events (every arc needs at least one)")
        if missing:
            found.append(Violation("PLAN_DRAFT_INCOMPLETE", f"the plan needs {', '.join(missing)}: give them"))
            return found
        found += notes_violations(out.notes)
        if r.check is not None:
            found += [Violation(code, detail) for code, detail in r.check(out)]
        return found

    return check


DRAFT: RoleTask[PlanRequest, PlanDraft] = RoleTask(
    role="planner",
    name="draft",
    schema=PlanDraft,
    system=("planner/system.txt",),
    user=("planner/input.txt",),
    fields=_fields,
    contracts=lambda r: [plan_contract(r)],
    schema_name="plan_draft",
)
