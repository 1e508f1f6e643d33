"""What each page of the studio shows: one function per page, each calling the services the CLI calls and
returning the template's context. Nothing here decides anything the CLI does not (reports/ renders, services
decide): a page is a command's result, laid out for looking and clicking."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..book import (
    Book,
    FineOutline,
    kept_bytes,
    outline_paths,
    read_user_file,
    save_chapter_text,
    save_outline_text,
)
from ..errors import InputError, MuseError
from ..llm import ModelSession, cost_summary
from ..memory import SearchIndex, lint_cards, replay, update_index
from ..memory import sync as sync_memory
from ..reports import book_status, search_doc, sync_doc
from ..rules import check_book
from ..text import sha256_hex

# The report's loaders (`reports.html`) and the writer's outline services (`writing`) bring in replay, judging and
# the writer: imported by the pages that use them, so the studio's first page (the desk) is not kept waiting.

#: How a problem's next command is offered on the desk: a button running the same service (a command that
#: calls no model), or a link to the page where the author acts. The command itself is always shown too.
_BUTTONS = {"muse sync": "sync", "muse check": "check"}
_LINKS = (
    ("muse ledger", "/memory.html#ledger", "open the ledger"),
    ("muse facts show", "/memory.html", "open the memory"),
    ("muse cards lint", "/memory.html#problems", "open the memory"),
    ("muse cost", "/spend.html", "open the spend"),
    ("add [prices", "/spend.html", "open the spend"),
    ("muse judge-summary", "/judging.html", "open the panels"),
    ("muse outline", "/outlines", "open the outlines"),
)


@dataclass
class Action:
    """One thing the author can do about a problem from the desk."""

    kind: str  # button / link
    label: str
    target: str  # the action's name (button) or the page (link)


def _actions(next_command: str, chapters: list[int]) -> list[Action]:
    out: list[Action] = []
    if next_command in _BUTTONS:
        verb = _BUTTONS[next_command]
        out.append(Action("button", f"run {verb}", verb))
    for prefix, page, label in _LINKS:
        if next_command.startswith(prefix):
            out.append(Action("link", label, page))
            break
    if chapters and next_command.startswith(("muse review", "edit the chapter")):
        out.extend(Action("link", f"chapter {n}", f"/chapters/{n:04d}.html") for n in chapters[:6])
    return out


def desk(book: Book) -> dict[str, Any]:
    """The home page: `muse status`, each problem with its actions."""
    doc = book_status(book)
    order = {"error": 0, "warning": 1, "info": 2}
    ranked = sorted(doc.problems, key=lambda p: order[p.severity])
    return {"s": doc, "problems": [{"p": p, "actions": _actions(p.next, p.chapters)} for p in ranked]}


def chapters(book: Book) -> dict[str, Any]:
    """The chapter list: the report's overview (length, rule findings, review, gate, fact card, cost)."""
    from ..reports.html import section_context

    return section_context(book, "overview")


def chapter(book: Book, number: int) -> dict[str, Any]:
    """One chapter page: the report's page, every finding highlighted in the text; the file's text to edit (with
    the sha256 it was read at, which a save must still find) and every kept version of it (`muse revisions N`)."""
    from ..reports.html import chapter_context
    from ..writing import file_history

    ctx = chapter_context(book, number)
    data = book.read_chapter(number).path.read_bytes()
    history = file_history(book, str(number))
    kept = [
        (r, kept_bytes(book.state_dir, r.sha256, r.path).decode("utf-8", "replace") if r.sha256 else None)
        for r in reversed(history.revisions)
    ]
    return {
        **ctx,
        "edit": {"text": data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"), "base": sha256_hex(data)},
        "kept": kept,
    }


def save_chapter(book: Book, number: int, text: str, base: str) -> Notice:
    """Save the editor's text over the file it was opened on (FILE_CHANGED_ON_DISK when the file changed since)."""
    revision = save_chapter_text(book, number, text, expect_sha256=base, command=f"muse studio: edit chapter {number}")
    return Notice(True, f"saved; the text it replaced is kept as {revision.id} (below, restorable)")


def restore_chapter(book: Book, number: int, revision_id: str) -> Notice:
    """`muse revisions restore N REV`: the kept version back, the current text kept first."""
    from ..writing import restore_revision

    doc = restore_revision(book, str(number), revision_id)
    return Notice(True, f"restored {doc.restored.id}; the text it replaced is kept as {doc.kept.id}")


def conflict(book: Book, number: int, text: str, *, kind: str = "chapter") -> dict[str, Any]:
    """An edit refused because the file changed: the author's text (kept on the page) beside the file now."""
    if kind == "outline":
        path, back = outline_paths(book)[number], f"/outlines/{number:04d}.html"
    else:
        path, back = book.read_chapter(number).path, f"/chapters/{number:04d}.html"
    data = path.read_bytes()
    return {
        "number": number,
        "mine": text,
        "theirs": data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace"),
        "base": sha256_hex(data),
        "path": path.relative_to(book.root).as_posix(),
        "back_url": back,
    }


def save_outline(book: Book, number: int, text: str, base: str) -> Notice:
    """Save the outline editor's YAML over the file it was opened on, through the revision store (the replaced
    bytes kept; FILE_CHANGED_ON_DISK when the file changed since). A saved outline is unconfirmed until confirmed
    again; its lint is shown on the page."""
    revision = save_outline_text(book, number, text, expect_sha256=base, command=f"muse studio: edit outline {number}")
    return Notice(True, f"saved; the outline it replaced is kept as {revision.id} — confirm it again when it is right")


def drafts(book: Book) -> dict[str, Any]:
    """The author's desk of drafts (`muse drafts`): every draft with the latest decision on it, read only here."""
    from ..reports.html import section_context

    return {**section_context(book, "desk"), "draft_href": lambda short: f"/drafts/{short}"}


def outlines(book: Book) -> dict[str, Any]:
    """Every fine outline with its confirmation and lint counts (`muse outline lint`)."""
    from ..writing import lint_outlines

    paths = outline_paths(book)
    lint = lint_outlines(book) if paths else None
    return {"lint": lint, "chapters": set(book.chapter_numbers())}


_LINE = re.compile(r":(\d+)$")


def outline(book: Book, number: int) -> dict[str, Any]:
    """One fine outline as its parts, each with its constraint id and the lint problems found on its line."""
    from ..writing import lint_outlines, read_outline, show_outline

    shown = show_outline(book, number)
    parsed: FineOutline = read_outline(book, number)
    lint = lint_outlines(book, [number]).outlines[0]
    by_line: dict[int, list[Any]] = {}
    loose: list[Any] = []
    for p in [*lint.problems]:
        m = _LINE.search(p.where)
        (by_line.setdefault(int(m.group(1)), []) if m else loose).append(p)
    items = {i.id: i for i in shown.items}
    placed = {i.line for i in shown.items}
    loose += [p for line, ps in by_line.items() if line not in placed for p in ps]
    raw = read_user_file(Path(parsed.path), what="outline", kind="OUTLINE", book_root=book.root)
    return {
        "o": shown,
        "outline": parsed,
        "lint": lint,
        "items": items,
        "by_line": by_line,
        "loose": loose,
        "yaml": raw.decode("utf-8", "replace"),
        "base": sha256_hex(raw),
        "has_chapter": number in set(book.chapter_numbers()),
    }


def memory(book: Book, as_of: int | None, query: str, before: int | None) -> dict[str, Any]:
    """The report's memory page (ledger timeline, cards as of any chapter) with the active ledger as of the
    chosen chapter (`muse ledger --as-of N`: ages, overdue) and a search (`muse search`) with hits in context."""
    from ..reports.html import memory_context

    ctx = memory_context(book)
    page = ctx.get("mem")
    numbers = book.chapter_numbers()
    last = page.last if page is not None else (numbers[-1] if numbers else 0)
    n = last if as_of is None else max(min(as_of, last), numbers[0] if numbers else 0)
    ctx["as_of"] = n
    ledger = None
    if page is not None:
        ledger = replay(book).active_foreshadows(n)
    ctx["ledger"] = ledger
    ctx["query"] = query
    ctx["before"] = before
    ctx["search"] = None
    ctx["search_warnings"] = []
    if query:
        cards, problems = lint_cards(book, check_sources=False)
        ctx["search_warnings"] = [f"{p.code}: {p.message}, {p.where} — left out of the search" for p in problems]
        update_index(book, cards)
        ctx["search"] = search_doc(SearchIndex(book, cards).find(query, before=before, k=10))
    return ctx


def spend(book: Book) -> dict[str, Any]:
    """`muse cost`: calls, tokens and cost per run, role and day, as charts; a budget line when one is set."""
    from ..reports.html import cost_plot

    summary = cost_summary(book.db)
    budget = book.config.budget.max_cost
    return {
        "summary": summary,
        "budget": budget,
        "charts": [
            cost_plot("by day (UTC)", summary.by_day),
            cost_plot("by role", summary.by_role),
            cost_plot("by run", summary.by_run, label="run"),
        ],
    }


def experiments(book: Book) -> dict[str, Any]:
    """Replay runs and the gate journal: the report's page, read only."""
    from ..reports.html import section_context

    return section_context(book, "replay")


def judging(book: Book) -> dict[str, Any]:
    """Judge panels: the report's page, read only."""
    from ..reports.html import section_context

    return section_context(book, "judging")


def error_context(exc: MuseError) -> dict[str, Any]:
    return {"code": exc.code, "what": exc.what, "where": exc.where, "fix": exc.fix}


@dataclass
class Notice:
    """What an action did, shown at the top of the page it returns to."""

    ok: bool
    text: str


def confirm(book: Book, number: int) -> Notice:
    """`muse outline confirm N`: refused (OUTLINE_LINT_ERRORS) while lint finds an error."""
    from ..replay import outline_admission_problems
    from ..writing import confirm_outline

    result = confirm_outline(book, number, admission=outline_admission_problems)
    c = result.confirmation
    verb = "confirmed" if result.newly_confirmed else "already confirmed"
    return Notice(True, f"outline {c.chapter} {verb}: sha256 {c.current_sha256}")


async def _check(book: Book) -> Notice:
    """`muse check`: every chapter against the hard rules and the length limits (the registry updated)."""
    report = check_book(book, update=True)
    s = report.summary
    text = f"check {report.outcome}: {s.errors} error(s), {s.warnings} warning(s) in {s.chapters} chapter(s)"
    if report.reason:
        text += f" — {report.reason}"
    return Notice(report.outcome == "passed", text)


async def _sync(book: Book) -> Notice:
    """`muse sync --no-extract`: re-index changed chapters and mark stale fact cards; no model is called here
    (extracting fact cards is paid: `muse sync` in the terminal shows its bill first)."""
    async with ModelSession.open(book, run_kind="sync") as session:
        result = await sync_memory(book, session, extract=False)
    doc = sync_doc(result)
    changed = len(doc.added) + len(doc.changed) + len(doc.removed)
    text = f"sync: {changed} chapter(s) re-indexed, {doc.unchanged} unchanged; fact cards {doc.facts_step}"
    if doc.facts_stale:
        text += f", stale: {', '.join(map(str, doc.facts_stale))} (extracting them calls a model: `muse sync`)"
    return Notice(doc.ok, text)


#: The desk's buttons: actions that call no model, each the service its CLI command calls.
ACTIONS: dict[str, Callable[[Book], Coroutine[Any, Any, Notice]]] = {"check": _check, "sync": _sync}


def marked(text: str, tokens: list[str]) -> list[tuple[str, bool]]:
    """`text` cut into pieces, each saying whether it is one of the search's tokens (for <mark>)."""
    words = sorted({t for t in tokens if t.strip()}, key=len, reverse=True)
    if not words:
        return [(text, False)]
    pattern = re.compile("|".join(re.escape(w) for w in words))
    out: list[tuple[str, bool]] = []
    at = 0
    for m in pattern.finditer(text):
        if m.start() > at:
            out.append((text[at : m.start()], False))
        out.append((m.group(0), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def _arm_choice(book: Book, arm: str | None) -> Any:
    from ..replay import promoted_arm

    return promoted_arm(book, force=arm or None)


def write_plan(book: Book, number: int, arm: str | None) -> dict[str, Any]:
    """What `muse write N` will do, before anything is sent: the outline it writes from (confirmed), the arm and
    why, whether the chapter has the author's text (then the draft is a shadow beside it), and the bill — the
    most its calls may cost. Nothing is started and no model is asked."""
    from ..writing import build_context, require_confirmed, write_bill

    require_confirmed(book, number)
    choice = _arm_choice(book, arm)
    build = build_context(book, number, arm=choice.arm, arm_choice=choice.record())

    async def bill() -> Any:
        async with ModelSession.open(book, run_kind="write") as session:  # opening costs nothing, writes nothing
            return write_bill(session, build)

    the_bill = asyncio.run(bill())
    return {
        "number": number,
        "arm": choice.arm,
        "arm_reason": choice.record().reason,
        "forced": arm or "",
        "shadow": book.probe_chapter_file(number) is not None,
        "bill": the_bill,
        "bill_sha256": sha256_hex(the_bill.model_dump_json()),
        "manifest": build.manifest_sha256,
    }


def start_write(studio_root: Path, number: int, arm: str | None, bill_sha256: str) -> Any:
    """The work of a write job: `muse write N` (`--shadow` when the chapter has the author's text) in its own model
    session, each step reported with the spend so far. The run stops before its first call when its bill is not
    the one the author confirmed (the configuration changed meanwhile)."""
    from ..book import find_book
    from ..replay import writer_config_sha256
    from ..writing import write_and_accept

    async def work(emit: Callable[..., None]) -> dict[str, Any]:
        book = find_book(studio_root)
        choice = _arm_choice(book, arm)
        shadow = book.probe_chapter_file(number) is not None
        async with ModelSession.open(book, run_kind="write") as session:

            def spent() -> float | None:
                return cost_summary(book.db, session.run_id).total.cost if session.started else 0.0

            def on_plan(plan: Any) -> None:
                if sha256_hex(plan.bill.model_dump_json()) != bill_sha256:
                    raise InputError(
                        "STUDIO_BILL_CHANGED",
                        f"the bill of writing chapter {number} is not the one you confirmed",
                        "the Write page",
                        "open the Write page again: it shows the bill as it is now",
                    )
                emit("plan", text=f"bill confirmed: ≤ {plan.bill.calls} call(s)", resume=plan.resume is not None)

            def progress(step: str) -> None:
                emit("step", text=step, spent=spent())

            doc = await write_and_accept(
                book,
                session,
                number,
                accept=None,
                arm=choice.arm,
                progress=progress,
                arm_choice=choice.record(),
                shadow=shadow,
                writer_config_sha256=writer_config_sha256(book),
                on_plan=on_plan,
            )
            cost = spent()
        draft = doc.final_draft_id
        return {
            "text": f"chapter {number}: {doc.status}" + (f" — {doc.reason}" if doc.reason else ""),
            "status": doc.status,
            "draft": draft,
            "spent": cost,
        }

    return work


def draft(book: Book, token: str) -> dict[str, Any]:
    """One draft (`muse drafts show` and `diff`): its text with the detector's items marked where they quote it,
    beside the chapter as it is now (a character diff), its declared facts, its manifest, the decisions on it."""
    from ..reports.html import char_diff
    from ..writing import diff_draft, show_draft, stored_manifest, write_history

    shown = show_draft(book, token)
    d = shown.draft
    items: list[Any] = []
    if d.kind == "chapter":
        for run in write_history(book, d.chapter).runs:
            for out in run.document.reports if run.document is not None else []:
                if out.report.candidate_sha256 == d.text_sha256:
                    items = out.report.items
    diff = diff_draft(book, token)
    return {
        "plan_files": _bundle_files(shown.text) if d.kind == "plan" else [],
        "d": shown,
        "pieces": marked_items(shown.text, items),
        "items": [i for i in items if i.verdict != "pass" or i.quote],
        "diff": diff,
        "chardiff": None if diff.identical or not diff.old.text else char_diff(diff.old.text, diff.new.text),
        "manifest": stored_manifest(book, shown.manifest_sha256) if shown.manifest_sha256 else None,
    }


def _bundle_files(text: str) -> list[str]:
    """The files a plan draft's bundle would write ([] when the text is no bundle: its page says so)."""
    from ..writing import parse_bundle

    try:
        return list(parse_bundle(text))
    except InputError:
        return []


def marked_items(text: str, items: list[Any]) -> list[tuple[str, Any]]:
    """`text` cut into pieces, each with the detector item whose quote it is (None between them): items located
    at offsets, in order, an overlapping one left to the side panel."""
    spans = sorted((i for i in items if i.start is not None and i.end is not None), key=lambda i: (i.start, -i.end))
    out: list[tuple[str, Any]] = []
    at = 0
    for item in spans:
        if item.start < at or item.end > len(text):
            continue
        if item.start > at:
            out.append((text[at : item.start], None))
        out.append((text[item.start : item.end], item))
        at = item.end
    out.append((text[at:], None))
    return out


def reject(book: Book, token: str, reason: str) -> Notice:
    """`muse drafts reject ID --reason …`: recorded; the draft stays, the book is untouched."""
    from ..writing import reject_draft

    doc = reject_draft(book, token, reason)
    return Notice(True, f"rejected {doc.draft.short} (decision {doc.decision.id})")


def revise(book: Book, token: str, text: str) -> tuple[str, Notice]:
    """`muse drafts revise ID`: the author's text becomes a new draft (checked deterministically), the original
    is marked revised; returns the new draft's short id."""
    from ..writing import revise_draft

    doc = revise_draft(book, token, text.replace("\r\n", "\n"))
    checks = ", ".join(f"{s.step} {s.status}" for s in doc.check)
    return doc.revision.short, Notice(
        doc.ok, f"your revision is draft {doc.revision.short} ({doc.edit_chars} character(s) changed; {checks})"
    )


def accept_plan(book: Book, token: str) -> dict[str, Any]:
    """What accepting the draft may cost (the quality gate's judges; nothing is sent yet)."""
    from ..writing import accept_bill

    async def bill() -> Any:
        async with ModelSession.open(book, run_kind="accept") as session:
            return accept_bill(book, session, token)

    the_bill = asyncio.run(bill())
    return {"bill": the_bill, "bill_sha256": sha256_hex(the_bill.model_dump_json())}


def start_accept(studio_root: Path, token: str, bill_sha256: str) -> Any:
    """The work of an accept job: `muse drafts accept ID` — accept_preflight (the file unchanged since the draft,
    the context rebuilt, the detector, the rules, the quality gate) and, when it holds, the chapter confirmed."""
    from ..book import find_book
    from ..replay import outline_admission_problems
    from ..writing import accept_draft

    async def work(emit: Callable[..., None]) -> dict[str, Any]:
        book = find_book(studio_root)

        def on_bill(bill: Any) -> None:
            if sha256_hex(bill.model_dump_json()) != bill_sha256:
                raise InputError(
                    "STUDIO_BILL_CHANGED",
                    "the bill of this accept is not the one you confirmed",
                    "the draft's page",
                    "open the draft again: it shows the bill as it is now",
                )
            emit("plan", text=f"bill confirmed: ≤ {bill.calls} call(s)")

        async with ModelSession.open(book, run_kind="accept") as session:
            doc = await accept_draft(
                book,
                session,
                token,
                command=f"muse studio: accept {token}",
                on_bill=on_bill,
                admission=outline_admission_problems,  # a drafted outline's admitting receipts, checked again
            )
        for step in doc.preflight:
            emit("step", text=f"{step.step}: {step.status}" + (f" — {step.detail}" if step.detail else ""))
        where = f" → {doc.written}" if doc.written else ""
        return {"text": f"{doc.status}{where}" + (f" — {doc.reason}" if doc.reason else ""), "spent": doc.cost}

    return work
