"""A stretch of the book: `muse write 11-30` (or `--until N`), `muse write --continue`, `muse write --status`.

Chapter after chapter, in order, each from its confirmed fine outline: the context as of N − 1 → the writer (with its
evidence rounds) → the detector gate (repairs within the caps) → the author's decision → on accept, the chapter's
fact card is extracted, so that chapter N + 1's context sees chapter N. Two modes:

- **manual** (the default): the run stops after each chapter's draft, which waits on the author's desk (`muse
  drafts`); `muse write --continue` picks up after the decision — an accepted draft (or a chapter file the author
  wrote) is extracted and the next chapter written; a rejected draft is written again.
- **auto**: a draft that passed the detector gate is accepted automatically through the same accept preflight as
  `muse drafts accept` (the quality gate included; the decision is recorded as `automatic` with the gate results);
  the run stops at the first draft that is held, fails, or cannot be checked (no judge model: not evaluated) —
  never writing past a chapter it could not check.

The run is one record (`stretch_runs`, one `stretch_chapters` row per chapter it reached, one `stretch_sessions`
row per command that worked on it). A run whose process is gone is `interrupted`; resuming it (`--continue`, or the
same range again) derives each chapter's next step from what is stored: a chapter with a file is decided, a fact
card bound to that file's bytes is extracted, an interrupted write is resumed by the writer (its stored drafts,
reports and gate answers reused), a stored quality-gate decision on the same inputs is reused — no call is made
again for a step that finished.

Before any call, the run's bill covers every chapter still to do: the writer (first draft, every evidence round,
every repair), the detector and the writer's fact check on every checked draft, the quality gate's judges and the
extraction — the first chapter's from its real context, the later ones from the same prompts with room for a
context up to `[writing] context_chars` and their own outlines.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..book import Book, read_chapter_file
from ..errors import FailedClosed, InputError, NotEvaluated, Outcome
from ..llm import Bill
from ..processes import process_alive, process_started
from ..store import new_id, transaction, utc_now
from ._accept import AcceptOptions, accept_draft
from ._desk import DraftRef, decisions_of, settle, short_id
from ._manifest import Arm, ArmChoiceRef
from ._outlines import confirmation, read_outline

if TYPE_CHECKING:
    from ..llm import ModelSession, RoleBill

StretchMode = Literal["manual", "auto"]
StretchStatus = Literal["running", "waiting", "stopped", "finished", "interrupted", "superseded"]
STRETCH_SCHEMA_VERSION = 1
_OWN_START = process_started(os.getpid())


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StretchChapterOut(_Doc):
    """Where one chapter of the run stands."""

    chapter: int
    state: str  # todo / writing / drafted / accepted / refused / extracted
    write_id: str | None = None
    draft_id: str | None = None
    draft_short: str | None = None
    write_status: str | None = None  # passed / held_for_author / skipped / error
    decision: str = ""  # automatic / author / refused
    detail: str = ""


class SpendOut(_Doc):
    """What receipts say was spent (`muse cost --run` for each run)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0


class StretchDoc(_Doc):
    """`muse write A-B --json`, `muse write --continue --json`, `muse write --status --json`: the run."""

    schema_version: int = STRETCH_SCHEMA_VERSION
    id: str
    first: int
    last: int
    mode: StretchMode
    arm: str
    status: StretchStatus
    stop_chapter: int | None = None
    stop_reason: str = ""
    outcome: Outcome = "ok"  # how the command ends (the exit code)
    next_step: str | None = None  # what the author does now
    chapters: list[StretchChapterOut]
    run_id: str | None = None  # this command's model run
    run_ids: list[str] = []  # every command's that worked on the run
    bill: Bill | None = None  # this command's bill, shown before its first call
    spent: SpendOut = SpendOut()  # this command's run (equal to `muse cost --run RUN_ID`)
    total_spent: SpendOut = SpendOut()  # every run of the stretch
    started_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class StretchPlan:
    """Before the first call: the chapters still to do, the chapter waiting for the author (if any), the bill."""

    stretch_id: str
    first: int
    last: int
    mode: StretchMode
    todo: list[int]
    resumed: bool
    bill: Bill


Progress = Callable[[int, str], None]


@dataclass(frozen=True)
class _Run:
    """A `stretch_runs` row."""

    id: str
    first: int
    last: int
    mode: StretchMode
    arm: Arm
    arm_choice: ArmChoiceRef | None
    writer_config_sha256: str | None
    status: StretchStatus
    stop_chapter: int | None
    stop_reason: str
    pid: int | None
    started_at: str
    updated_at: str

    @classmethod
    def of(cls, row: sqlite3.Row) -> _Run:
        choice = row["arm_choice_json"]
        return cls(
            id=row["id"],
            first=row["first_chapter"],
            last=row["last_chapter"],
            mode=row["mode"],
            arm=row["arm"],
            arm_choice=ArmChoiceRef.model_validate_json(choice) if choice else None,
            writer_config_sha256=row["writer_config_sha256"],
            status=row["status"],
            stop_chapter=row["stop_chapter"],
            stop_reason=row["stop_reason"] or "",
            pid=row["pid"],
            started_at=row["started_at"],
            updated_at=row["updated_at"],
        )


def _row(book: Book, stretch_id: str) -> _Run:
    row = book.db.execute("SELECT * FROM stretch_runs WHERE id = ?", (stretch_id,)).fetchone()
    if row is None:
        raise InputError("STRETCH_NOT_FOUND", f"no run {stretch_id}", "muse write", "`muse write --status` lists runs")
    return _Run.of(row)


def _close_dead(book: Book) -> None:
    """A run left `running` by a process that is gone is `interrupted` (it resumes with `--continue`)."""
    rows = book.db.execute("SELECT id, pid, pid_started FROM stretch_runs WHERE status = 'running'").fetchall()
    dead = [r["id"] for r in rows if r["pid"] is None or not process_alive(int(r["pid"]), r["pid_started"])]
    if dead:
        with transaction(book.db) as conn:
            conn.executemany(
                "UPDATE stretch_runs SET status = 'interrupted', updated_at = ? WHERE id = ? AND status = 'running'",
                [(utc_now(), i) for i in dead],
            )


def _unfinished(book: Book) -> _Run | None:
    row = book.db.execute(
        "SELECT * FROM stretch_runs WHERE status IN ('running', 'waiting', 'stopped', 'interrupted')"
        " ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return _Run.of(row) if row is not None else None


def _check_range(book: Book, first: int, last: int) -> None:
    """Every chapter of the range has a confirmed outline and no file — all problems named at once, before any
    call (the run never skips a chapter and never replaces the author's text)."""
    problems: list[str] = []
    existing = [n for n in range(first, last + 1) if book.probe_chapter_file(n) is not None]
    for n in range(first, last + 1):
        if n in existing:
            continue
        try:
            outline = read_outline(book, n)
        except InputError as exc:
            problems.append(exc.what if f"chapter {n}" in exc.what else f"chapter {n}: {exc.what}")
            continue
        state = confirmation(book, outline).state
        if state != "confirmed":
            problems.append(
                f"chapter {n}: its outline is {'changed since it was confirmed' if state == 'changed' else state}"
            )
    if existing:
        shown = ", ".join(map(str, existing[:10])) + (" …" if len(existing) > 10 else "")
        raise InputError(
            "CHAPTER_EXISTS",
            f"chapter(s) {shown} of {first}-{last} already have a file: a stretch writes new chapters only",
            "muse write",
            f"start after them (e.g. `muse write {existing[-1] + 1}-{max(last, existing[-1] + 1)}`), or write one "
            "beside your text with `muse write N --shadow`",
        )
    if problems:
        raise InputError(
            "OUTLINE_NOT_CONFIRMED",
            f"{len(problems)} chapter(s) of {first}-{last} cannot be written: " + "; ".join(problems[:20]),
            "outlines/",
            f"draft or fix them, then `muse outline lint {first}-{last}` and `muse outline confirm {first}-{last}`",
        )


def begin_stretch(
    book: Book,
    first: int,
    last: int,
    *,
    mode: StretchMode,
    arm: Arm,
    arm_choice: ArmChoiceRef | None = None,
    writer_config_sha256: str | None = None,
) -> str:
    """The run of chapters `first`–`last`: the unfinished run of exactly this range and mode when there is one
    (it resumes), a new one otherwise — after checking the whole range up front (see `_check_range`). An
    unfinished run of another range is superseded (its drafts stay on the desk)."""
    if first > last:
        raise InputError("USAGE_RANGE", f"{first}-{last} is empty", "command line", "write it like `muse write 11-20`")
    settle(book)
    _close_dead(book)
    open_run = _unfinished(book)
    if open_run is not None and open_run.status == "running":
        raise InputError(
            "STRETCH_RUNNING",
            f"run {open_run.id} (chapters {open_run.first}-{open_run.last}) is running in process {open_run.pid}",
            "muse write",
            "wait for it, or stop it (Ctrl-C); `muse write --status` shows it",
        )
    if open_run is not None and (open_run.first, open_run.last, open_run.mode) == (
        first,
        last,
        mode,
    ):
        return open_run.id
    _check_range(book, first, last)
    stretch_id = new_id("S")
    now = utc_now()
    with transaction(book.db) as conn:
        if open_run is not None:
            conn.execute(
                "UPDATE stretch_runs SET status = 'superseded', stop_reason = ?, updated_at = ? WHERE id = ?",
                (f"superseded by run {stretch_id}", now, open_run.id),
            )
        conn.execute(
            "INSERT INTO stretch_runs (id, first_chapter, last_chapter, mode, arm, arm_choice_json,"
            " writer_config_sha256, status, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'stopped', ?, ?)",
            (
                stretch_id,
                first,
                last,
                mode,
                arm,
                arm_choice.model_dump_json() if arm_choice is not None else None,
                writer_config_sha256,
                now,
                now,
            ),
        )
    return stretch_id


def continue_stretch(book: Book) -> str:
    """The run `muse write --continue` picks up: the newest one not finished (STRETCH_NOTHING_TO_CONTINUE)."""
    settle(book)
    _close_dead(book)
    open_run = _unfinished(book)
    if open_run is None:
        raise InputError(
            "STRETCH_NOTHING_TO_CONTINUE",
            "no run of chapters is waiting, stopped or interrupted",
            "muse write --continue",
            "start one with `muse write A-B` (or `--until N`)",
        )
    if open_run.status == "running":
        raise InputError(
            "STRETCH_RUNNING",
            f"run {open_run.id} is running in process {open_run.pid}",
            "muse write --continue",
            "wait for it; `muse write --status` shows it",
        )
    return open_run.id


def _chapters(book: Book, stretch_id: str) -> dict[int, dict[str, object]]:
    rows = book.db.execute("SELECT * FROM stretch_chapters WHERE stretch_id = ? ORDER BY chapter", (stretch_id,))
    return {int(r["chapter"]): dict(r) for r in rows}


def _set_chapter(book: Book, stretch_id: str, chapter: int, state: str, **fields: object) -> None:
    old = _chapters(book, stretch_id).get(chapter, {})
    row = {
        "write_id": old.get("write_id"),
        "draft_id": old.get("draft_id"),
        "write_status": old.get("write_status"),
        "decision": old.get("decision", ""),
        "detail": "",
        **fields,
    }
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO stretch_chapters (stretch_id, chapter, state, write_id, draft_id, write_status,"
            " decision, detail, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                stretch_id,
                chapter,
                state,
                row["write_id"],
                row["draft_id"],
                row["write_status"],
                row["decision"],
                row["detail"],
                utc_now(),
            ),
        )


def _set_run(book: Book, stretch_id: str, status: StretchStatus, chapter: int | None = None, reason: str = "") -> None:
    with transaction(book.db) as conn:
        conn.execute(
            "UPDATE stretch_runs SET status = ?, stop_chapter = ?, stop_reason = ?, updated_at = ? WHERE id = ?",
            (status, chapter, reason, utc_now(), stretch_id),
        )


def _extracted(book: Book, chapters: range | list[int]) -> set[int]:
    """Those of `chapters` whose file has a fact card bound to its bytes (one listing, one read of the cards)."""
    from ..memory import current_fact_cards

    paths = book.chapter_paths()
    shas = {n: read_chapter_file(n, paths[n]).sha256 for n in chapters if n in paths}
    return set(current_fact_cards(book.db, shas))


def _todo(book: Book, run: _Run) -> list[int]:
    """The chapters of the run whose fact card is not yet extracted from their file (in order)."""
    chapters = range(run.first, run.last + 1)
    done = _extracted(book, chapters)
    return [n for n in chapters if n not in done]


def stretch_bill(book: Book, session: ModelSession, chapters: list[int], arm: Arm) -> Bill:
    """The most the run may still cost (see the module docstring): per chapter still to write, a whole write
    (`write_bill`), the quality gate's judges on the longest draft and the extraction of its fact card; a chapter
    that has its file (decided, not yet extracted) only its extraction."""
    from ..llm import total_bill
    from ..memory import extract_request, load_cards
    from ..roles.extractor import EXTRACT
    from ._build import build_context
    from ._drafts import heading_for
    from ._loop import extract_call, write_bill
    from ._quality_gate import gate_bill

    to_write = [n for n in chapters if book.probe_chapter_file(n) is None]
    cfg = book.config
    longest = "字" * (cfg.calls.max_output_tokens * 4 // 3)  # the longest draft an answer can hold, in bytes
    parts: list[RoleBill] = []
    notes: list[str] = []
    extracting = session.is_configured("extractor")
    if extracting:
        cards = load_cards(book)
        for n in chapters:
            if n not in to_write:
                parts.append(session.bill(EXTRACT.render(extract_request(book, n, cards))))
    if to_write:
        first, later = to_write[0], to_write[1:]
        build = build_context(book, first, arm=arm)

        def one_chapter(margin: int) -> list[RoleBill]:
            """A whole chapter's bound, every call `margin` input tokens larger than chapter `first`'s."""
            bill = write_bill(session, build, margin=margin).roles
            if session.is_configured("judge"):
                bill += gate_bill(
                    book, session, first, heading_for(book, first, "") + longest + "字" * (margin // 3 + 1)
                )
            if extracting:
                draft = len(longest.encode("utf-8"))
                bill.append(session.bill(extract_call(build, ""), 1, extra_input_tokens=draft + margin))
            return bill

        parts += one_chapter(0)
        if later:  # a later chapter's context up to its cap (≤ 4 bytes a character), and the largest outline
            outline = max((book.root / read_outline(book, n).path).stat().st_size for n in later)
            parts += one_chapter(cfg.writing.context_chars * 4 + outline) * len(later)
        if len(to_write) > 1:
            notes.append(
                f"chapters {to_write[1]}–{to_write[-1]} are bounded from chapter {first}'s prompts with room for a "
                f"context of up to [writing] context_chars = {cfg.writing.context_chars:,} characters and their own "
                "outlines: their contexts exist only once the chapters before them are written"
            )
    return total_bill(parts, notes)


@dataclass
class _Stop:
    """Why the run stops at a chapter, and how the command ends."""

    chapter: int
    status: StretchStatus
    reason: str
    outcome: Outcome
    next_step: str | None = None


async def _extract(book: Book, session: ModelSession, stretch_id: str, chapter: int, progress: Progress) -> None:
    """Chapter `chapter` has its file: extract its fact card unless one is bound to these bytes already."""
    if chapter not in _extracted(book, [chapter]):
        from ..memory import extract_facts

        progress(chapter, f"extracting facts · {session.spent_so_far()}")
        await extract_facts(session, book, chapter)
    _set_chapter(book, stretch_id, chapter, "extracted")


def _pending_draft(book: Book, rec: dict[str, object]) -> tuple[str | None, str]:
    """(the draft waiting for the author's decision, or None when the chapter must be written again; its last
    decision)."""
    draft_id = rec.get("draft_id")
    if not draft_id or rec.get("write_status") in (None, "error", "skipped"):
        return None, ""
    decisions = decisions_of(book, str(draft_id))
    last = decisions[-1].decision if decisions else ""
    if last == "reject":
        return None, last
    if last == "revise":
        revised = decisions[-1].revision_draft_id
        if revised is not None:
            later = decisions_of(book, revised)
            if later and later[-1].decision == "reject":
                return None, "reject"
            return revised, last
    return str(draft_id), last


def _waiting(book: Book, chapter: int, draft_id: str, why: str, outcome: Outcome) -> _Stop:
    short = short_id(draft_id)
    return _Stop(
        chapter,
        "waiting",
        why,
        outcome,
        f"decide on draft {short} (`muse drafts show {short}`, then `muse drafts accept|revise|reject {short}`), "
        "then `muse write --continue`",
    )


async def _one(book: Book, session: ModelSession, run: _Run, chapter: int, progress: Progress) -> _Stop | None:
    """Take chapter `chapter` as far as the run may (see the module docstring); a `_Stop` when the run stops."""
    from ._loop import write_chapter

    stretch_id, mode = run.id, run.mode
    if book.probe_chapter_file(chapter) is not None:  # decided: by an accept (automatic or the author's) or written
        rec = _chapters(book, stretch_id).get(chapter, {})
        decided = str(rec.get("decision") or "") if rec.get("state") in ("accepted", "extracted") else "author"
        _set_chapter(book, stretch_id, chapter, "accepted", decision=decided)
        await _extract(book, session, stretch_id, chapter, progress)
        return None
    rec = _chapters(book, stretch_id).get(chapter, {})
    pending, _ = _pending_draft(book, rec)
    if pending is not None:
        if mode == "manual" or rec.get("write_status") != "passed" or rec.get("state") == "refused":
            why = str(rec.get("detail") or "") or "the draft waits for your decision"
            return _waiting(book, chapter, pending, why, "findings" if rec.get("write_status") != "passed" else "ok")
        return await _accept(book, session, run, chapter, pending, progress)
    _set_chapter(book, stretch_id, chapter, "writing", write_id=None, draft_id=None, write_status=None, decision="")
    doc = await write_chapter(
        book,
        session,
        chapter,
        arm=run.arm,
        arm_choice=run.arm_choice,
        writer_config_sha256=run.writer_config_sha256,
        progress=lambda step: progress(chapter, f"{step} · {session.spent_so_far()}"),
    )
    detail = doc.reason or doc.error or ""
    _set_chapter(
        book,
        stretch_id,
        chapter,
        "drafted",
        write_id=doc.write_id,
        draft_id=doc.final_draft_id,
        write_status=doc.status,
        detail=detail,
    )
    if doc.status == "error":
        return _Stop(
            chapter,
            "stopped",
            f"the write failed closed: {doc.error_code} {detail}".strip(),
            "failed_closed",
            f"see `muse write show {chapter}`; fix the cause, then `muse write --continue`",
        )
    if doc.status == "skipped":
        return _Stop(
            chapter,
            "stopped",
            f"not evaluated: {detail}",
            "not_evaluated",
            "configure the missing model, then `muse write --continue`",
        )
    assert doc.final_draft_id is not None
    if doc.status == "held_for_author":
        return _waiting(book, chapter, doc.final_draft_id, f"held by the detector gate: {detail}", "findings")
    if mode == "manual":
        return _waiting(book, chapter, doc.final_draft_id, "the draft passed the detector gate", "ok")
    return await _accept(book, session, run, chapter, doc.final_draft_id, progress)


async def _accept(
    book: Book, session: ModelSession, run: _Run, chapter: int, draft_id: str, progress: Progress
) -> _Stop | None:
    """`--auto`: the same accept preflight as `muse drafts accept` (the quality gate included), recorded as an
    automatic decision; on accept the chapter's facts are extracted, otherwise the run stops for the author."""
    stretch_id = run.id
    progress(chapter, f"quality gate · {session.spent_so_far()}")
    got = await accept_draft(
        book,
        session,
        DraftRef("chapter", draft_id),
        AcceptOptions(),
        mode="automatic",
        command=f"muse write {run.first}-{run.last} --auto",
    )
    if got.status == "accepted":
        _set_chapter(book, stretch_id, chapter, "accepted", decision="automatic")
        await _extract(book, session, stretch_id, chapter, progress)
        return None
    reason = got.reason or got.status
    _set_chapter(book, stretch_id, chapter, "refused", decision="refused", detail=reason)
    outcome: Outcome = {"error": "failed_closed", "not_evaluated": "not_evaluated"}.get(got.status, "findings")  # type: ignore[assignment]
    return _waiting(book, chapter, draft_id, f"not accepted automatically: {reason}", outcome)


async def run_stretch(
    book: Book,
    session: ModelSession,
    stretch_id: str,
    *,
    progress: Progress | None = None,
    on_plan: Callable[[StretchPlan], None] | None = None,
) -> StretchDoc:
    """Work on run `stretch_id` from where it stands (see the module docstring) until it finishes or stops;
    `on_plan` hears the bill before the first call (and may refuse it by raising)."""
    run = _row(book, stretch_id)
    tell = progress or (lambda _n, _s: None)
    todo = _todo(book, run)
    if todo and not session.is_configured("extractor"):
        raise NotEvaluated(
            "STRETCH_NO_EXTRACTOR",
            "no extractor model is configured: chapter N + 1's context could not see chapter N's facts",
            "book.toml [roles]",
            "configure an extractor (or a default) model; one chapter at a time, `muse write N` needs none",
        )
    bill = stretch_bill(book, session, todo, run.arm)
    resumed = bool(_chapters(book, stretch_id))
    if on_plan is not None:
        on_plan(StretchPlan(stretch_id, run.first, run.last, run.mode, todo, resumed, bill))
    with transaction(book.db) as conn:
        conn.execute(
            "UPDATE stretch_runs SET status = 'running', pid = ?, pid_started = ?, updated_at = ? WHERE id = ?",
            (os.getpid(), _OWN_START, utc_now(), stretch_id),
        )
    stop: _Stop | None = None
    try:
        if todo:
            run_id = session.start().run_id
            with transaction(book.db) as conn:
                conn.execute("INSERT OR IGNORE INTO stretch_sessions VALUES (?, ?)", (stretch_id, run_id))
        for n in todo:
            try:
                stop = await _one(book, session, run, n, tell)
            except FailedClosed as exc:
                stop = _Stop(n, "stopped", exc.render(), "failed_closed", "fix the cause, then `muse write --continue`")
            if stop is not None:
                break
    except BaseException:
        _set_run(book, stretch_id, "interrupted", reason="the command was stopped")
        raise
    if stop is None:
        _set_run(book, stretch_id, "finished")
    else:
        _set_run(book, stretch_id, stop.status, stop.chapter, stop.reason)
    doc = stretch_status(book, stretch_id, session=session)
    outcome: Outcome = stop.outcome if stop is not None else "ok"
    return doc.model_copy(update={"bill": bill, "outcome": outcome, "next_step": stop.next_step if stop else None})


def _spend_of(book: Book, run_ids: list[str]) -> SpendOut:
    from ..llm import runs_spend

    return SpendOut.model_validate(runs_spend(book.db, run_ids).spend)


def stretch_status(
    book: Book, stretch_id: str | None = None, *, session: ModelSession | None = None, read_only: bool = False
) -> StretchDoc:
    """`muse write --status`: the run `stretch_id` (default: the newest) — its chapters, where and why it stopped,
    what it spent per command and in all. `read_only` (the HTML report): a run whose process is gone is shown
    as stored, not closed."""
    if not read_only:
        _close_dead(book)
    if stretch_id is None:
        found = book.db.execute("SELECT id FROM stretch_runs ORDER BY id DESC LIMIT 1").fetchone()
        if found is None:
            raise InputError(
                "STRETCH_NOT_FOUND", "no run of chapters yet", "muse write --status", "start one with `muse write A-B`"
            )
        stretch_id = str(found[0])
    run = _row(book, stretch_id)
    recs = _chapters(book, stretch_id)
    chapters = []
    for n in range(run.first, run.last + 1):
        rec = recs.get(n)
        if rec is None:
            chapters.append(StretchChapterOut(chapter=n, state="todo"))
            continue
        draft = str(rec["draft_id"]) if rec.get("draft_id") else None
        chapters.append(
            StretchChapterOut(
                chapter=n,
                state=str(rec["state"]),
                write_id=str(rec["write_id"]) if rec.get("write_id") else None,
                draft_id=draft,
                draft_short=short_id(draft) if draft else None,
                write_status=str(rec["write_status"]) if rec.get("write_status") else None,
                decision=str(rec.get("decision") or ""),
                detail=str(rec.get("detail") or ""),
            )
        )
    run_ids = [
        r[0]
        for r in book.db.execute(
            "SELECT run_id FROM stretch_sessions WHERE stretch_id = ? ORDER BY run_id", (stretch_id,)
        )
    ]
    mine = session.run_id if session is not None and session.started else None
    return StretchDoc(
        id=stretch_id,
        first=run.first,
        last=run.last,
        mode=run.mode,
        arm=run.arm,
        status=run.status,
        stop_chapter=run.stop_chapter,
        stop_reason=run.stop_reason,
        chapters=chapters,
        run_id=mine,
        run_ids=run_ids,
        spent=_spend_of(book, [mine]) if mine else SpendOut(),
        total_spent=_spend_of(book, run_ids),
        started_at=run.started_at,
        updated_at=run.updated_at,
    )


async def stretch_dry_run(book: Book, session: ModelSession, first: int, last: int, arm: Arm) -> Bill:
    """`muse write A-B --dry-run`: the range checked as a run would check it, and its bill; nothing recorded or
    sent."""
    _check_range(book, first, last)
    return stretch_bill(book, session, list(range(first, last + 1)), arm)


def list_stretches(book: Book) -> list[StretchDoc]:
    """Every run of chapters, newest first, as stored (the HTML report's desk page; nothing is written)."""
    ids = [r[0] for r in book.db.execute("SELECT id FROM stretch_runs ORDER BY id DESC")]
    return [stretch_status(book, i, read_only=True) for i in ids]
