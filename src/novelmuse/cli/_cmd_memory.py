"""Story-memory commands: `muse cards show/lint`, `muse ledger`, `muse search`, `muse mentions`, `muse sync`,
`muse facts extract`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import memory, reports  # lazy packages: each command loads only the names it uses
from ..book import Book
from ..errors import InputError
from ._app import app
from ._common import (
    BEFORE_MAX,
    CHAPTER_MAX,
    BookOpt,
    JsonOpt,
    YesOpt,
    confirm_bill,
    console,
    emit_json,
    err_console,
    finish,
    in_session,
    name_cap,
    open_book,
    query_cap,
)

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

cards_app = typer.Typer(
    help="Canon cards: list them, create one, show a card as of a chapter, validate all cards.", no_args_is_help=True
)
facts_app = typer.Typer(help="Fact cards (事实卡) of finalised chapters.", no_args_is_help=True)
app.add_typer(cards_app, name="cards")
app.add_typer(facts_app, name="facts")

AsOfOpt = Annotated[
    int | None, typer.Option("--as-of", help="Chapter number (default: the last chapter).", min=0, max=CHAPTER_MAX)
]


def _last_chapter(numbers: list[int]) -> int:
    return max(numbers) if numbers else 0


@contextmanager
def _progress_bar() -> Iterator[Callable[[str, int, int], None]]:
    """A Rich progress bar on stderr, one task per step (`muse sync` and the first `search`/`mentions` on a
    book); off a terminal it stays off (a transient bar would leave a blank line on stderr). The bar, and Rich's
    progress module, are made only when a step reports: a warm `search` has nothing to show."""
    with ExitStack() as stack:
        bar: Progress | None = None
        tasks: dict[str, TaskID] = {}

        def progress(step: str, done: int, total: int) -> None:
            nonlocal bar
            if bar is None:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

                bar = stack.enter_context(
                    Progress(
                        TextColumn("{task.description}"),
                        BarColumn(),
                        MofNCompleteColumn(),
                        console=err_console,
                        transient=True,
                        disable=not err_console.is_terminal,
                    )
                )
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done)

        yield progress


def _cards_for_lookup(b: Book) -> memory.CardSet:
    """The valid cards, for commands that only look names up (`search`, `mentions`): a problem in one card file
    is one warning line on stderr and that file is left out, instead of failing the command. The commands that
    replay the memory (`cards show`, `ledger`, `sync`) still need every card valid."""
    cards, problems = memory.lint_cards(b, check_sources=False)
    for p in problems:
        also = f" (also at {p.other})" if p.other else ""
        err_console.print(
            f"warning[{p.code}]: {p.message}, {p.where}{also} — left out here; `muse cards lint` lists every problem",
            markup=False,
        )
    return cards


def _refresh_index(b: Book, cards: memory.CardSet) -> None:
    """Bring the search index up to date before reading it (`muse search`, `muse mentions`), with the progress
    bar `muse sync` shows; a note on stderr when chapters were re-indexed, so --json stays one document."""
    with _progress_bar() as progress:
        up = memory.update_index(b, cards, steps=progress)
    kinds = [(up.added, "added"), (up.changed, "changed"), (up.relexed, "redone for new card names")]
    parts = [f"{len(ns)} {what}" for ns, what in [*kinds, (up.removed, "removed")] if ns]
    if parts:
        err_console.print(f"index updated: chapters {', '.join(parts)}", markup=False)


def _show_facts(b: Book, doc: reports.FactsDoc, json_out: bool) -> None:
    """Print a fact card (`muse facts extract` / `show`); exit 1 when items were rejected (shown, never dropped)."""
    if json_out:
        emit_json(doc)
    else:
        reports.render_facts(console, doc, reports.ChapterLines(b))
    finish(reports.findings_outcome(len(doc.rejected)))


@cards_app.command("show")
def cards_show(
    name: Annotated[str, typer.Argument(help="A card's id, name or any alias.", callback=name_cap)],
    as_of: AsOfOpt = None,
    history: Annotated[bool, typer.Option("--history", help="Also list every earlier value and its source.")] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show a card's state at the end of a chapter, with the source of every value."""
    b = open_book(book)
    last = _last_chapter(b.chapter_numbers())
    n = as_of if as_of is not None else last
    view = memory.card_view(b, name, n, history=history)  # the replay, cached per card by the hash of every input
    doc = reports.card_show_doc(view.state, view.history, dict(view.facts_status), last)
    if json_out:
        emit_json(doc)
    else:
        reports.render_card(console, doc, reports.ChapterLines(b))


@cards_app.command("new")
def cards_new(
    name: Annotated[str, typer.Argument(help="The card's name, as the text writes it.", callback=name_cap)],
    kind: Annotated[str, typer.Option("--kind", help="character, place, item, faction or concept.")] = "character",
    card_id: Annotated[str | None, typer.Option("--id", help="The card's id (default: its name).")] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Create cards/<id>.yaml from a commented template (never over an existing card or file)."""
    if kind not in ("character", "place", "item", "faction", "concept"):
        raise InputError(
            "USAGE", f"--kind {kind!r} is not a card type", "--kind", "character, place, item, faction, concept"
        )
    b = open_book(book)
    path = memory.new_card(b, name, kind=kind, card_id=card_id)  # type: ignore[arg-type]
    rel = path.relative_to(b.root).as_posix()
    if json_out:
        emit_json({"ok": True, "path": rel, "name": name, "kind": kind})
    else:
        console.print(f"created {rel}: fill in its aliases and values, then `muse cards lint`", markup=False)


@cards_app.command("list")
def cards_list(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Every card: id, type, name, aliases, how many attributes and relations, and its file."""
    b = open_book(book)
    cards, problems = memory.lint_cards(b, check_sources=False)
    rows: list[dict[str, Any]] = [
        {
            "id": c.id,
            "type": c.type,
            "name": c.name,
            "aliases": c.aliases,
            "attributes": len(c.attributes),
            "relations": len(c.relations),
            "file": c.file,
        }
        for c in sorted(cards.cards.values(), key=lambda c: c.file)
    ]
    if json_out:
        emit_json({"ok": not problems, "cards": rows, "problems": len(problems)})
    else:
        for r in rows:
            aliases = f" ({'/'.join(r['aliases'])})" if r["aliases"] else ""
            console.print(
                f"{r['id']:<16} {r['type']:<10} {r['name']}{aliases}  {r['attributes']} attribute(s), "
                f"{r['relations']} relation(s)  {r['file']}",
                markup=False,
            )
        if not rows:
            console.print("no card yet — `muse cards new NAME` creates one", markup=False)
        if problems:
            err_console.print(f"{len(problems)} problem(s) in the cards: `muse cards lint`", markup=False)


@cards_app.command("lint")
def cards_lint(book: BookOpt = None, json_out: JsonOpt = False) -> None:
    """Validate every card: syntax, fields, overlapping ranges, unknown references, alias conflicts, sources.

    Exit 1 when a problem is found.
    """
    b = open_book(book)
    cards, problems = memory.lint_cards(b)
    doc = reports.card_lint_doc(len(cards.cards), problems)
    if json_out:
        emit_json(doc)
    else:
        reports.render_card_lint(console, doc)
    finish(reports.findings_outcome(len(problems)))


@app.command()
def ledger(
    as_of: AsOfOpt = None,
    overdue: Annotated[bool, typer.Option("--overdue", help="Only overdue items.")] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", help="At most this many items (the rest is counted).", min=0)
    ] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The foreshadow ledger (伏笔账本): planted, unresolved items as of a chapter, with age and overdue flag.

    Exit 1 when the ledger has problems (an advance or resolve of an unknown foreshadow, a duplicate plant, …).
    """
    b = open_book(book)
    state = memory.replay(b)
    last = max([_last_chapter(b.chapter_numbers()), *state.outlines.keys(), 0])
    n = as_of if as_of is not None else last
    active = state.active_foreshadows(n, limit=limit, overdue_only=overdue)
    doc = reports.ledger_doc(
        active,
        overdue_only=overdue,
        overdue_default_age=state.overdue_default_age,
        problems=state.problems,
        facts_status=dict(state.facts_status),
        last_chapter=last,
    )
    if json_out:
        emit_json(doc)
    else:
        reports.render_ledger(console, doc)
    finish(reports.findings_outcome(len(doc.problems)))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for (Chinese text).", callback=query_cap)],
    before: Annotated[
        int | None, typer.Option("--before", help="Only chapters before N.", min=1, max=BEFORE_MAX)
    ] = None,
    k: Annotated[int, typer.Option("--k", help="How many chapters (and best chunks).", min=1, max=200)] = 10,
    isolated: Annotated[
        bool,
        typer.Option("--isolated", help="Score with statistics of the chapters before N only (reproducible)."),
    ] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """BM25 search of earlier chapters: chapters ranked as whole documents (heading included), each with its best
    paragraph chunk; --json also lists the k best chunks. The index is brought up to date first."""
    b = open_book(book)
    cards = _cards_for_lookup(b)
    _refresh_index(b, cards)
    result = memory.SearchIndex(b, cards).find(query, before=before, k=k, isolated=isolated)
    if json_out:
        emit_json(reports.search_doc(result))
    else:  # the result itself: the JSON document's pydantic classes are not loaded for the terminal
        reports.render_search(console, result, reports.ChapterLines(b))


@app.command()
def mentions(
    name: Annotated[str, typer.Argument(help="A card's id, name or any alias.", callback=name_cap)],
    before: Annotated[
        int | None, typer.Option("--before", help="Only chapters before N.", min=1, max=BEFORE_MAX)
    ] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Where a card is named (any of its names), per chapter, and the last chapter before N."""
    b = open_book(book)
    cards = _cards_for_lookup(b)
    card = cards.require(name)
    _refresh_index(b, cards)
    # the spans are only in --json: the terminal shows counts (8,536 spans of 刘备 in a 5M book cost 3 ms to decode)
    matcher = memory.MentionMatcher(memory.mention_names(cards))  # the chapters' headings (回目) count too
    doc = reports.mentions_doc(memory.card_mentions(b.db, card, before=before, offsets=json_out, headings=matcher))
    if json_out:
        emit_json(doc)
    else:
        reports.render_mentions(console, doc)


@app.command()
def sync(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only say what would be re-indexed and extracted, and the cost.")
    ] = False,
    no_extract: Annotated[
        bool, typer.Option("--no-extract", help="Re-index, but call no model: stale fact cards stay stale.")
    ] = False,
    yes: YesOpt = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Bring memory up to date after manual edits: re-index changed chapters, re-extract or mark stale facts.

    With an extractor model configured it first says how many extraction calls it will make and what they
    cost at most; above [budget] confirm_above it asks first (without a terminal: needs --yes). Never rewrites a
    chapter file. Interrupted work resumes where it stopped (each chapter is
    committed on its own). Exit 3 when a fact extraction failed closed, 1 when the replayed memory has
    problems (an advance or resolve of an unknown foreshadow, a duplicate plant, a rejected fact-card item, …).
    """
    b = open_book(book)

    def fact_line(chapter: int, spent: str) -> None:  # off a terminal: one line per chapter extracted
        err_console.print(f"chapter {chapter} · fact card extracted · {spent}", markup=False, soft_wrap=True)

    def announce(plan: memory.ExtractionPlan) -> None:
        err_console.print(reports.plan_line(reports.plan_doc(plan)), markup=False)
        confirm_bill(b, plan.bill, yes=yes, json_out=json_out, command="muse sync")

    with _progress_bar() as progress:
        result = in_session(
            b,
            "sync",
            lambda session: memory.sync(
                b,
                session,
                progress=progress,
                extract=not no_extract,
                dry_run=dry_run,
                on_plan=announce,
                on_fact=None if err_console.is_terminal else fact_line,
            ),
        )
    doc = reports.sync_doc(result)
    outcome = reports.sync_outcome(doc)
    if json_out:
        emit_json(doc, outcome)
    else:
        reports.render_sync(console, doc)
    if (error := reports.sync_error(doc, b.chapter_path)) is not None:
        err_console.print(error, markup=False)
    finish(outcome)


@facts_app.command("extract")
def facts_extract(
    chapter: Annotated[int, typer.Argument(help="Chapter number.", min=0, max=CHAPTER_MAX)],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Extract the fact card of one chapter with the extractor role, store it and validate it.

    Exit 1 when items were rejected (shown, never dropped), 3 when the call failed closed, 4 when no extractor
    model is configured (nothing extracted: not evaluated).
    """
    b = open_book(book)
    b.read_chapter(chapter)
    if b.config.role_target("extractor") is None:
        from ..llm import NotConfigured  # the model layer loads only for commands that call a model

        raise NotConfigured("extractor")  # exit 4: nothing was extracted (not evaluated, never a pass)

    result = in_session(b, "facts", lambda session: memory.extract_facts(session, b, chapter))
    _show_facts(b, reports.facts_doc(result), json_out)


@facts_app.command("show")
def facts_show(
    chapter: Annotated[int, typer.Argument(help="Chapter number.", min=0, max=CHAPTER_MAX)],
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the current fact card of a chapter with its validation (accepted and rejected items).

    Exit 1 when items were rejected; a chapter without a current fact card is an error (FACTS_NOT_CURRENT)
    that says whether it is stale (the chapter changed since extraction) or missing.
    """
    b = open_book(book)
    b.read_chapter(chapter)
    state = memory.replay(b)
    card = memory.current_fact_cards(b.db, {chapter: b.read_chapter(chapter).sha256}).get(chapter)
    if card is None or chapter not in state.validations:
        status = state.facts_status.get(chapter, "missing")
        raise InputError(
            "FACTS_NOT_CURRENT",
            f"chapter {chapter} has no fact card for its current text ({status})",
            str(b.chapter_path(chapter)),
            "run `muse facts extract N` (or `muse sync` with an extractor model configured)",
        )
    doc = reports.facts_show_doc(card, state.validations[chapter])
    _show_facts(b, doc, json_out)
