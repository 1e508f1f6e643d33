"""The outliner's task: `DRAFT` — the fine outline (细纲) of one chapter from the author's plan and the story so far.

The request carries everything the model reads, already rendered as lines by `novelmuse.writing` (the plan's
sections for the chapter, the settings, the previous chapter, the card states and the open foreshadows as of
the chapter before, overdue first), the labels a hard event may cite as its basis, and `check`: the book's
own outline lint, applied to the draft as if it were the chapter's outline file (unknown entities, plants
over the cap, advances or resolves of foreshadows that are not open, duplicate plant ids, …). The contract,
checked inside the call (a violation goes back as a correction; after the call's bound the call fails closed
with the first violation's code):

- OUTLINE_INVALID: the draft is not a valid version-2 outline (a blank text, a name over 64 characters, an
  id that is not an id, …);
- OUTLINE_INCOMPLETE: no title, goal, hard event or hook, or no entity — what the writer cannot do without;
- the lint's error codes (OUTLINE_UNKNOWN_ENTITY, FORESHADOW_UNKNOWN, FORESHADOW_RESOLVED,
  FORESHADOW_DUPLICATE, FORESHADOW_PLANT_CAP, OUTLINE_PAYOFF_PAST, …);
- CONTRACT_UNKNOWN_BASIS: a basis label that is not in the input; CONTRACT_TOO_MANY_NOTES: more than
  `MAX_NOTES` notes or a note over `MAX_NOTE_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from ...book import FineOutline
from ...llm import Contract, Violation
from ...text import chapter_label
from .._task import RoleTask
from .schema import OutlineDraft

MAX_NOTES = 5
MAX_NOTE_CHARS = 200
_NONE = "（无）"

#: The book's lint of a draft outline: (code, detail) of every error.
DraftCheck = Callable[[FineOutline], Sequence[tuple[str, str]]]


@dataclass(frozen=True)
class DraftRequest:
    """Draft the fine outline of chapter `chapter` (see the module doc); `as_of` is the chapter the memory is of."""

    chapter: int
    as_of: int
    plan: Sequence[str]
    settings: Sequence[str]
    previous: str
    recent: Sequence[str]
    cards: Sequence[str]
    names: Sequence[str]
    foreshadows: Sequence[str]
    max_plants: int
    labels: frozenset[str]
    check: DraftCheck | None = field(default=None, compare=False)
    unit: str | None = None  # the heading unit of the chapters before it: how the prompt names chapters (回, 章)


def _lines(items: Sequence[str], sep: str = "\n") -> str:
    return sep.join(items) or _NONE


def _fields(r: DraftRequest) -> Mapping[str, object]:
    return {
        "chapter_label": chapter_label(r.unit, r.chapter),
        "as_of_label": chapter_label(r.unit, r.as_of),
        "plan": _lines(r.plan, "\n\n"),
        "settings": _lines(r.settings, "\n\n"),
        "previous": r.previous or _NONE,
        "recent": _lines(r.recent),
        "cards": _lines(r.cards),
        "names": _lines(r.names),
        "foreshadows": _lines(r.foreshadows),
        "max_plants": r.max_plants,
    }


def _field_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "outline"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {first['msg']}{more}"


def notes_violations(notes: Sequence[str]) -> list[Violation]:
    """CONTRACT_TOO_MANY_NOTES when an agent's notes for the author are more than `MAX_NOTES` or one is longer than
    `MAX_NOTE_CHARS` characters (the outliner's and the planner's rule)."""
    if len(notes) > MAX_NOTES or any(len(n) > MAX_NOTE_CHARS for n in notes):
        return [
            Violation("CONTRACT_TOO_MANY_NOTES", f"at most {MAX_NOTES} notes of at most {MAX_NOTE_CHARS} characters")
        ]
    return []


def draft_contract(r: DraftRequest) -> Contract[OutlineDraft]:
    """The draft is a complete, valid version-2 outline of the chapter that passes the book's lint, cites only
    given material and keeps its notes short (see the module doc)."""

    def check(out: OutlineDraft) -> list[Violation]:
        found: list[Violation] = []
        missing = [
            name for name, value in (("title", out.title), ("goal", out.goal), ("hook", out.hook)) if not value.strip()
        ]
        missing += [name for name, value in (("hard_events", out.hard_events), ("entities", out.entities)) if not value]
        if missing:
            found.append(Violation("OUTLINE_INCOMPLETE", f"the writer needs {', '.join(missing)}: give them"))
        for i, event in enumerate(out.hard_events):
            unknown = [b for b in event.basis if b not in r.labels]
            if unknown:
                found.append(
                    Violation(
                        "CONTRACT_UNKNOWN_BASIS",
                        f"hard_events[{i}].basis cites {', '.join(unknown)}, which the input does not have "
                        f"(use {', '.join(sorted(r.labels)) or 'nothing'}, or [] for an invented event)",
                    )
                )
        found += notes_violations(out.notes)
        try:
            outline = out.to_outline(r.chapter)
        except ValidationError as exc:
            found.append(Violation("OUTLINE_INVALID", _field_error(exc)))
            return found
        if r.check is not None:
            found += [Violation(code, detail) for code, detail in r.check(outline)]
        return found

    return check


DRAFT: RoleTask[DraftRequest, OutlineDraft] = RoleTask(
    role="outliner",
    name="draft",
    schema=OutlineDraft,
    system=("outliner/system.txt",),
    user=("outliner/input.txt",),
    fields=_fields,
    contracts=lambda r: [draft_contract(r)],
    schema_name="fine_outline_draft",
)
