"""Confirmed fine outlines (已确认细纲): confirm, check, lint against the cards and ledger as of the chapter.

An outline is confirmed by its sha256 (the file's bytes), recorded in the store; any edit after confirming
makes it unconfirmed again, and the writer (and its context) refuse it: OUTLINE_NOT_CONFIRMED names the
confirmed and the current sha256.

Lint checks every outline against the canon cards and the foreshadow ledger as of the chapter before it:
an entity that is no card (unless a declaration of kind ``entity`` introduces it), an advance or resolve of
an unknown or already resolved foreshadow, a plant of an existing id, more plants than the cap (3, or less
by configuration), duplicate ids, a hard event without a result (version 2); warnings for what a version-1
outline lacks and for a dead character listed without a declaration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel

from ..book import Book, FineOutline, outline_paths, outline_problems, parse_outline
from ..errors import FailedClosed, InputError, MuseError
from ..memory import DEAD_VALUES, CardSet, MemoryState, load_cards, replay
from ..store import new_id, transaction, utc_now

LINT_SCHEMA_VERSION = 1
ConfirmState = Literal["confirmed", "unconfirmed", "changed"]


class Confirmation(BaseModel):
    """Whether an outline file is confirmed: the sha256 confirmed last and the file's sha256 now."""

    chapter: int
    state: ConfirmState
    current_sha256: str
    confirmed_sha256: str | None = None
    confirmed_at: str | None = None


def _rel(book: Book, path: Path | str) -> str:
    try:
        return str(Path(path).relative_to(book.root))
    except ValueError:
        return str(path)


def _last_confirmed(book: Book, chapter: int) -> tuple[str, str] | None:
    row = book.db.execute(
        "SELECT outline_sha256, confirmed_at FROM outline_confirmations WHERE chapter = ? ORDER BY id DESC LIMIT 1",
        (chapter,),
    ).fetchone()
    return None if row is None else (row[0], row[1])


def confirmation(book: Book, outline: FineOutline) -> Confirmation:
    """The confirmation state of an outline as it is on disk now."""
    last = _last_confirmed(book, outline.chapter)
    if last is None:
        return Confirmation(chapter=outline.chapter, state="unconfirmed", current_sha256=outline.sha256)
    state: ConfirmState = "confirmed" if last[0] == outline.sha256 else "changed"
    return Confirmation(
        chapter=outline.chapter,
        state=state,
        current_sha256=outline.sha256,
        confirmed_sha256=last[0],
        confirmed_at=last[1],
    )


def read_outline(book: Book, chapter: int) -> FineOutline:
    """The outline of `chapter`; OUTLINE_NOT_FOUND (exit 2) when there is none."""
    path = outline_paths(book).get(chapter)
    if path is None:
        raise InputError(
            "OUTLINE_NOT_FOUND",
            f"chapter {chapter} has no fine outline",
            str(book.outlines_dir / f"{chapter:04d}.yaml"),
            "write the chapter's fine outline (see docs/guide/outlines.md#fine-outlines)",
        )
    return parse_outline(path, expect_chapter=chapter)


def require_confirmed(book: Book, chapter: int) -> FineOutline:
    """The outline of `chapter` if the author confirmed exactly these bytes; OUTLINE_NOT_CONFIRMED (exit 2)
    otherwise, naming the sha256 confirmed and the one on disk now."""
    outline = read_outline(book, chapter)
    state = confirmation(book, outline)
    if state.state == "confirmed":
        return outline
    where = _rel(book, outline.path)
    if state.state == "unconfirmed":
        what = f"the outline of chapter {chapter} (sha256 {outline.sha256}) was never confirmed"
    else:
        what = (
            f"the outline of chapter {chapter} changed after it was confirmed: sha256 now {outline.sha256}, "
            f"confirmed {state.confirmed_sha256}"
        )
    raise InputError("OUTLINE_NOT_CONFIRMED", what, where, f"review it, then `muse outline confirm {chapter}`")


class LintProblem(BaseModel):
    """One lint finding: severity, stable code, message, file:line."""

    severity: Literal["error", "warning"]
    code: str
    message: str
    where: str


class OutlineLint(BaseModel):
    """The lint of one outline file."""

    chapter: int
    path: str
    sha256: str | None = None  # None when the file does not parse
    version: int | None = None
    confirmation: ConfirmState | None = None
    errors: int = 0
    warnings: int = 0
    problems: list[LintProblem] = []


class OutlineLintDoc(BaseModel):
    """`muse outline lint --json`."""

    schema_version: int = LINT_SCHEMA_VERSION
    ok: bool
    outlines: list[OutlineLint]
    errors: int
    warnings: int


_Found = tuple[Literal["error", "warning"], str, str, tuple[int | str, ...]]


def _entity_problems(outline: FineOutline, cards: CardSet, state: MemoryState, earlier: set[str]) -> list[_Found]:
    """(severity, code, message, loc) for entities that are no card or are dead as of the chapter before."""
    out: list[_Found] = []
    declared = outline.declared_entities()
    named: list[tuple[str, tuple[int | str, ...]]] = [(e, ("entities", i)) for i, e in enumerate(outline.entities)]
    for i, s in enumerate(outline.new_settings):
        if s.kind != "entity":
            named += [(e, ("new_settings", i, "entities", j)) for j, e in enumerate(s.entities)]
    for name, loc in named:
        card = cards.resolve(name)
        if card is None:
            if name in declared:
                continue
            if name in earlier:
                out.append(
                    ("warning", "OUTLINE_ENTITY_NO_CARD", f"{name!r} was introduced earlier but has no card", loc)
                )
            else:
                out.append(
                    (
                        "error",
                        "OUTLINE_UNKNOWN_ENTITY",
                        f"{name!r} is no card's name, alias or id (declare it with kind: entity if it is new)",
                        loc,
                    )
                )
            continue
        if outline.chapter < 1 or loc[0] != "entities":
            continue
        status = state.index.value_at(card.id, "status", outline.chapter - 1)
        dead = status is not None and str(status.value).strip().lower() in DEAD_VALUES
        if status is not None and dead and not outline.declares({card.id, *card.all_names}):
            out.append(
                (
                    "warning",
                    "OUTLINE_ENTITY_DEAD",
                    f"{card.name} is dead as of chapter {outline.chapter - 1} (since chapter {status.since}): "
                    "named only, or declare the return in new_settings",
                    loc,
                )
            )
    return out


NO_HARD_EVENT: Final = "OUTLINE_NO_HARD_EVENT"
ADMISSION_LINE: Final = "# 准入："  # how a drafted outline's header starts the line naming its admitting receipts
AdmissionCheck = Callable[[Book, str], list[str]]  # why an outline's claimed admission no longer holds ([]: it does)


def _own_problems(
    outline: FineOutline,
    cards: CardSet,
    state: MemoryState,
    introduced: set[str],
    where: Callable[[tuple[int | str, ...]], str],
) -> list[LintProblem]:
    """The outline's own problems and its entities' problems against the cards as of the chapter before. An
    outline without a hard event reads (a warning where it is only parsed) but is a lint error here, so it cannot be
    confirmed: nothing in it would bind the writer, and the detector and the gates would measure nothing."""
    found = [
        LintProblem(
            severity="error" if p.code == NO_HARD_EVENT else p.severity,
            code=p.code,
            message=p.message,
            where=where(p.loc),
        )
        for p in outline_problems(outline)
    ]
    found += [
        LintProblem(severity=sev, code=code, message=msg, where=where(loc))
        for sev, code, msg, loc in _entity_problems(outline, cards, state, introduced)
    ]
    return found


def _at_line(outline: FineOutline, rel: str) -> Callable[[tuple[int | str, ...]], str]:
    """Where a field of an outline file is written: ``outlines/0011.yaml:12``."""
    return lambda loc: f"{rel}:{outline.line(loc)}"


def _field(loc: tuple[int | str, ...]) -> str:
    """``("hard_events", 2, "result")`` → ``hard_events[2].result``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def lint_draft(
    book: Book,
    draft: FineOutline,
    *,
    cards: CardSet,
    outlines: dict[int, FineOutline],
    chapter_shas: dict[int, str],
) -> list[LintProblem]:
    """Lint an outline that is not a file yet (a draft of chapter `draft.chapter`) exactly as `lint_outlines`
    lints the chapter's file — its own problems, its entities against the cards, the ledger's rules — against
    the outlines and the chapters (their fact cards) before it only. `where` is the field (``foreshadows[1]``)."""
    n = draft.chapter
    before = {c: o for c, o in outlines.items() if c < n}
    shas = {c: sha for c, sha in chapter_shas.items() if c < n}
    state = replay(book, cards=cards, upto=n, outlines={**before, n: draft}, chapter_shas=shas)
    introduced = {name for o in before.values() for name in o.declared_entities()}
    found = _own_problems(draft, cards, state, introduced, _field)
    found += [
        LintProblem(severity="error", code=p.code, message=p.detail, where="foreshadows")
        for p in state.problems
        if p.origin == "outline" and p.chapter == n
    ]
    return found


def lint_outlines(book: Book, chapters: list[int] | None = None) -> OutlineLintDoc:
    """Lint the outlines of `chapters` (all when None) against the cards and the ledger as of each chapter."""
    paths = outline_paths(book)
    if chapters is not None:
        missing = [c for c in chapters if c not in paths]
        if missing:
            read_outline(book, missing[0])  # raises OUTLINE_NOT_FOUND
    cards = load_cards(book)
    parsed: dict[int, FineOutline] = {}
    failed: dict[int, MuseError] = {}
    for n, p in paths.items():
        try:
            parsed[n] = parse_outline(p, expect_chapter=n)
        except MuseError as exc:
            failed[n] = exc
    state = replay(book, cards=cards, outlines=parsed)
    ledger_problems: dict[int, list[LintProblem]] = {}
    for mp in state.problems:
        if mp.origin == "outline":
            ledger_problems.setdefault(mp.chapter, []).append(
                LintProblem(severity="error", code=mp.code, message=mp.detail, where=mp.item)
            )
    introduced: set[str] = set()
    docs: list[OutlineLint] = []
    for n, path in paths.items():
        rel = _rel(book, path)
        if n in failed:
            err = failed[n]
            problem = LintProblem(severity="error", code=err.code, message=err.what, where=err.where or rel)
            if chapters is None or n in chapters:
                docs.append(OutlineLint(chapter=n, path=rel, errors=1, problems=[problem]))
            continue
        outline = parsed[n]
        found = _own_problems(outline, cards, state, introduced, _at_line(outline, rel))
        found += ledger_problems.get(n, [])
        introduced |= outline.declared_entities()
        if chapters is not None and n not in chapters:
            continue
        found.sort(key=lambda p: (p.severity != "error", _line(p.where), p.code))
        docs.append(
            OutlineLint(
                chapter=n,
                path=rel,
                sha256=outline.sha256,
                version=outline.version,
                confirmation=confirmation(book, outline).state,
                errors=sum(p.severity == "error" for p in found),
                warnings=sum(p.severity == "warning" for p in found),
                problems=found,
            )
        )
    errors = sum(d.errors for d in docs)
    return OutlineLintDoc(ok=errors == 0, outlines=docs, errors=errors, warnings=sum(d.warnings for d in docs))


def _line(where: str) -> int:
    tail = where.rpartition(":")[2]
    return int(tail) if tail.isdigit() else 0


@dataclass(frozen=True)
class ConfirmResult:
    """What `muse outline confirm` did: the confirmation now in force, whether it was new, the lint."""

    confirmation: Confirmation
    newly_confirmed: bool
    lint: OutlineLint


def confirm_outline(book: Book, chapter: int, *, admission: AdmissionCheck | None = None) -> ConfirmResult:
    """Record the outline's sha256 as confirmed (已确认细纲). Refused (OUTLINE_LINT_ERRORS, exit 2, nothing
    recorded) while lint finds an error; confirming the same bytes again records nothing new. An outline whose
    header claims the admission of the fine-outline stage that drafted it (``# 准入：…``) is confirmed only when
    `admission` — the stage's own check — finds that it still holds (OUTLINE_ADMISSION_REVOKED, exit 3;
    ADMISSION_UNVERIFIED without a check)."""
    outline = read_outline(book, chapter)
    lint = lint_outlines(book, [chapter]).outlines[0]
    if lint.errors:
        first = next(p for p in lint.problems if p.severity == "error")
        raise InputError(
            "OUTLINE_LINT_ERRORS",
            f"the outline has {lint.errors} lint error(s), first {first.code}: {first.message}",
            first.where,
            f"fix them (`muse outline lint {chapter}` lists all), then confirm again",
        )
    _check_admission(book, outline, admission)
    before = confirmation(book, outline)
    if before.state == "confirmed":
        return ConfirmResult(before, False, lint)
    rel = _rel(book, outline.path)
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO outline_confirmations VALUES (?, ?, ?, ?, ?)",
            (new_id("OC"), chapter, outline.sha256, rel, utc_now()),
        )
    lint = lint.model_copy(update={"confirmation": "confirmed"})
    return ConfirmResult(confirmation(book, outline), True, lint)


def _check_admission(book: Book, outline: FineOutline, admission: AdmissionCheck | None) -> None:
    text = Path(outline.path).read_text(encoding="utf-8-sig") if outline.path else ""
    if not any(line.startswith(ADMISSION_LINE) for line in text.splitlines()):
        return
    where = _rel(book, outline.path)
    if admission is None:
        raise FailedClosed(
            "ADMISSION_UNVERIFIED",
            "the outline claims the admission of the run that drafted it, and no check of it was given",
            where,
            "confirm it with `muse outline confirm`, which checks it",
        )
    problems = admission(book, text)
    if problems:
        raise FailedClosed(
            "OUTLINE_ADMISSION_REVOKED",
            f"the outline was drafted by a run whose admission no longer holds: {'; '.join(problems[:3])}",
            where,
            "draft it again behind the current receipts, or remove its 准入 header line if it is now your own outline",
        )


class OutlineItemDoc(BaseModel):
    """One item of `muse outline show`: its constraint id, kind, whether it is a hard constraint, text, line."""

    id: str
    kind: str
    hard: bool
    text: str
    line: int


class OutlineShowDoc(BaseModel):
    """`muse outline show --json`: the outline's items with their ids, its confirmation and its own problems."""

    schema_version: int = LINT_SCHEMA_VERSION
    ok: bool = True
    chapter: int
    path: str
    sha256: str
    version: int
    title: str
    goal: str
    scene_type: str | None
    confirmation: Confirmation
    items: list[OutlineItemDoc]
    constraint_ids: list[str]
    problems: list[LintProblem]


def show_outline(book: Book, chapter: int) -> OutlineShowDoc:
    """The outline of `chapter` with every item's constraint id (what the writer, detector and judges use)."""
    outline = read_outline(book, chapter)
    rel = _rel(book, outline.path)
    return OutlineShowDoc(
        chapter=chapter,
        path=rel,
        sha256=outline.sha256,
        version=outline.version,
        title=outline.title,
        goal=outline.goal,
        scene_type=outline.scene_type,
        confirmation=confirmation(book, outline),
        items=[
            OutlineItemDoc(id=i.id, kind=i.kind, hard=i.hard, text=i.text, line=outline.line(i.loc))
            for i in outline.items()
        ],
        constraint_ids=outline.constraint_ids(),
        problems=[
            LintProblem(severity=p.severity, code=p.code, message=p.message, where=f"{rel}:{outline.line(p.loc)}")
            for p in outline_problems(outline)
        ],
    )
