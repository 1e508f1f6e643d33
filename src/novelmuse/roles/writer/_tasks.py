"""The writer's tasks in the editorial loop: `PARAGRAPHS` (forbidden phrases), `REPAIR` (consistency issues),
`POLISH` (the editor's notes) — targeted paragraph rewrites — and `REWRITE` (the whole chapter).

A targeted rewrite's contract: every required paragraph exactly once, no other, none blank or multi-line, none
with a forbidden phrase (and for polish between one and `max_paragraphs` of them). A whole rewrite's: not empty,
several paragraphs if the original had several, no forbidden phrase.

Every one of them is told the story's memory the reviewer reads (seed 004: 台账进入后续写作上下文): the card states
as of the chapter before and the active foreshadow ledger with ages — a repair must not contradict what it was
reviewed against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ...llm import Contract, Violation
from ...text import chapter_label, split_paragraphs
from .._reviews import EditorRoundView, IssueView, StoryMemory, editor_report_text, issues_text, memory_fields
from .._task import RoleTask
from .schema import ChapterRewrite, ParagraphEdits

_SYSTEM = ("writer/system.txt",)


class WriterRules(Protocol):
    """What every writer task is told verbatim: the book's forbidden phrases and the author's preferences."""

    @property
    def forbidden(self) -> Sequence[str]: ...
    @property
    def preferences(self) -> str: ...


@dataclass(frozen=True)
class ParagraphsRequest:
    """Rewrite paragraphs `targets` (0-based) of the chapter's current text to remove `phrases` (forbidden)."""

    chapter: int
    chapter_text: str
    rules: WriterRules
    targets: Sequence[int]
    phrases: Sequence[str]
    memory: StoryMemory
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


@dataclass(frozen=True)
class RepairRequest:
    """Rewrite paragraphs `targets` to fix `issues` (the blocking issues of the last consistency review)."""

    chapter: int
    chapter_text: str
    rules: WriterRules
    targets: Sequence[int]
    issues: Sequence[IssueView]
    memory: StoryMemory
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


@dataclass(frozen=True)
class PolishRequest:
    """Pick and polish at most `max_paragraphs` paragraphs from the editor's round `editor`."""

    chapter: int
    chapter_text: str
    rules: WriterRules
    editor: EditorRoundView
    max_paragraphs: int
    memory: StoryMemory
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


@dataclass(frozen=True)
class RewriteRequest:
    """Rewrite the whole chapter from the editor's round `editor` (verdict rewrite)."""

    chapter: int
    chapter_text: str
    rules: WriterRules
    editor: EditorRoundView
    memory: StoryMemory
    unit: str | None = None  # the book's heading unit (回, 章, …): how the prompt names the chapter


def forbidden_in(text: str, forbidden: Iterable[str]) -> list[str]:
    """The forbidden phrases occurring in `text`."""
    return [p for p in forbidden if p in text]


def numbered(body: str) -> str:
    """The chapter as ``[i] paragraph`` lines: how the writer is told which paragraph is which."""
    return "\n".join(f"[{p.index}] {p.text.strip()}" for p in split_paragraphs(body))


def _common(chapter: int, rules: WriterRules, memory: StoryMemory, unit: str | None) -> dict[str, object]:
    return {
        "chapter_label": chapter_label(unit, chapter),
        "forbidden": "、".join(rules.forbidden) if rules.forbidden else "(无)",
        "preferences": rules.preferences.strip() or "(作者没有写偏好)",
        **memory_fields(chapter, memory, unit),
    }


def paragraph_contract(
    body: str,
    forbidden: Sequence[str],
    *,
    required: set[int],
    allowed: set[int],
    min_count: int = 0,
    max_count: int | None = None,
) -> Contract[ParagraphEdits]:
    """The targeted-rewrite contract (see the module docstring)."""
    count = len(split_paragraphs(body))

    def check(out: ParagraphEdits) -> list[Violation]:
        found: list[Violation] = []
        seen: set[int] = set()
        for e in out.paragraphs:
            if e.index in seen:
                found.append(Violation(code="CONTRACT_PARAGRAPH_DUPLICATE", detail=f"paragraph {e.index} given twice"))
            seen.add(e.index)
            if e.index not in allowed or not 0 <= e.index < count:
                found.append(
                    Violation(code="CONTRACT_PARAGRAPH_UNEXPECTED", detail=f"paragraph {e.index} was not asked for")
                )
            text = e.text.strip()
            if not text:
                found.append(Violation(code="CONTRACT_PARAGRAPH_EMPTY", detail=f"paragraph {e.index} is empty"))
            elif "\n" in text or "\r" in text:
                found.append(
                    Violation(code="CONTRACT_PARAGRAPH_MULTILINE", detail=f"paragraph {e.index} must stay one line")
                )
            bad = forbidden_in(e.text, forbidden)
            if bad:
                found.append(
                    Violation(
                        code="CONTRACT_FORBIDDEN_PHRASE",
                        detail=f"paragraph {e.index} still contains forbidden: {'、'.join(bad)}",
                    )
                )
        missing = sorted(required - seen)
        if missing:
            found.append(Violation(code="CONTRACT_PARAGRAPH_MISSING", detail=f"paragraphs {missing} are missing"))
        if len(seen) < min_count:
            found.append(Violation(code="CONTRACT_PARAGRAPH_MISSING", detail=f"give at least {min_count} paragraph"))
        if max_count is not None and len(seen) > max_count:
            found.append(
                Violation(code="CONTRACT_PARAGRAPH_TOO_MANY", detail=f"at most {max_count} paragraphs, got {len(seen)}")
            )
        return found

    return check


def rewrite_contract(body: str, forbidden: Sequence[str]) -> Contract[ChapterRewrite]:
    """A whole-chapter rewrite: not empty, several paragraphs if the original had several, no forbidden phrase."""
    min_paragraphs = 2 if len(split_paragraphs(body)) >= 2 else 1

    def check(out: ChapterRewrite) -> list[Violation]:
        found: list[Violation] = []
        if len(split_paragraphs(out.text)) < min_paragraphs:
            found.append(Violation(code="CONTRACT_REWRITE_EMPTY", detail="the rewritten chapter has no paragraphs"))
        bad = forbidden_in(out.text, forbidden)
        if bad:
            found.append(Violation(code="CONTRACT_FORBIDDEN_PHRASE", detail=f"contains forbidden: {'、'.join(bad)}"))
        return found

    return check


def _targets(targets: Sequence[int]) -> str:
    return "、".join(map(str, targets))


PARAGRAPHS: RoleTask[ParagraphsRequest, ParagraphEdits] = RoleTask(
    role="writer",
    name="paragraphs",
    schema=ParagraphEdits,
    system=_SYSTEM,
    user=("writer/paragraphs.txt",),
    fields=lambda r: {
        **_common(r.chapter, r.rules, r.memory, r.unit),
        "numbered": numbered(r.chapter_text),
        "indices": _targets(r.targets),
        "phrases": "、".join(r.phrases),
    },
    contracts=lambda r: [
        paragraph_contract(r.chapter_text, r.rules.forbidden, required=set(r.targets), allowed=set(r.targets))
    ],
)

REPAIR: RoleTask[RepairRequest, ParagraphEdits] = RoleTask(
    role="writer",
    name="repair",
    schema=ParagraphEdits,
    system=_SYSTEM,
    user=("writer/repair.txt",),
    fields=lambda r: {
        **_common(r.chapter, r.rules, r.memory, r.unit),
        "numbered": numbered(r.chapter_text),
        "indices": _targets(r.targets),
        "report": issues_text(r.issues),
    },
    contracts=lambda r: [
        paragraph_contract(r.chapter_text, r.rules.forbidden, required=set(r.targets), allowed=set(r.targets))
    ],
)


def _polish_fields(r: PolishRequest) -> Mapping[str, object]:
    return {
        **_common(r.chapter, r.rules, r.memory, r.unit),
        "numbered": numbered(r.chapter_text),
        "notes": editor_report_text(r.editor),
        "max_paragraphs": r.max_paragraphs,
    }


def _polish_contracts(r: PolishRequest) -> list[Contract[ParagraphEdits]]:
    every = set(range(len(split_paragraphs(r.chapter_text))))
    contract = paragraph_contract(
        r.chapter_text, r.rules.forbidden, required=set(), allowed=every, min_count=1, max_count=r.max_paragraphs
    )
    return [contract]


POLISH: RoleTask[PolishRequest, ParagraphEdits] = RoleTask(
    role="writer",
    name="polish",
    schema=ParagraphEdits,
    system=_SYSTEM,
    user=("writer/polish.txt",),
    fields=_polish_fields,
    contracts=_polish_contracts,
)

REWRITE: RoleTask[RewriteRequest, ChapterRewrite] = RoleTask(
    role="writer",
    name="rewrite",
    schema=ChapterRewrite,
    system=_SYSTEM,
    user=("writer/rewrite.txt",),
    fields=lambda r: {
        **_common(r.chapter, r.rules, r.memory, r.unit),
        "report": editor_report_text(r.editor),
        "chapter_text": r.chapter_text,
    },
    contracts=lambda r: [rewrite_contract(r.chapter_text, r.rules.forbidden)],
)
