"""JSON documents (pydantic) and terminal rendering for the story-memory commands.

Shapes (stable): `CardShowDoc` (muse cards show), `CardLintDoc` (muse cards lint), `LedgerDoc` (muse
ledger), `SearchDoc` (muse search), `MentionsDoc` (muse mentions), `SyncDoc` (muse sync), `FactsDoc`
(muse facts extract). Every value carries its source pointer. The items are memory's own types (values,
relations, sources, foreshadows, problems, hits, mentions), serialised as they are — declared once, in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.table import Table

from ..errors import Outcome
from ..memory import (
    ActiveForeshadow,
    CardProblem,
    ChapterHit,
    ChapterMentions,
    MemoryProblem,
    RelationAt,
    SearchHit,
    ValueAt,
)
from ._locations import ChapterLines
from ._spend import spend_text


class _Doc(BaseModel):
    # built on first use: a command shows one document, not the seven classes imported with it
    model_config = ConfigDict(defer_build=True)


if TYPE_CHECKING:  # only in signatures: importing them would load the extraction and sync services
    from ..memory import (
        ActiveList,
        CardState,
        ExtractionPlan,
        FactCard,
        FactCardResult,
        FactValidation,
        MentionReport,
        SearchResult,
        Source,
        SyncResult,
    )


class CardShowDoc(_Doc):
    ok: bool = True
    id: str
    type: str
    name: str
    aliases: list[str]
    as_of: int
    attributes: dict[str, ValueAt]  # each with its source and the author's note
    relations: list[RelationAt]  # each with the target card's id and name, source and note
    history: dict[str, list[ValueAt]] | None = None  # with --history: every earlier value and its source
    last_chapter: int | None = None  # the book's last chapter
    beyond_last: bool = False  # as_of is after the last chapter: the end of the book plus values dated later
    facts_stale: list[int] = []  # chapters ≤ as_of whose fact card is for an older text: their changes are not in
    facts_missing: list[int] = []  # chapters ≤ as_of never extracted: only the author's cards count there


def _facts_gaps(facts_status: Mapping[int, str] | None, as_of: int) -> tuple[list[int], list[int]]:
    """(stale, missing) chapters up to `as_of`: where the memory lacks the facts of the current text."""
    status = {n: s for n, s in (facts_status or {}).items() if n <= as_of}
    return sorted(n for n, s in status.items() if s == "stale"), sorted(n for n, s in status.items() if s == "missing")


def _print_facts_gaps(console: Console, stale: list[int], missing: list[int], what: str) -> None:
    if stale:
        console.print(
            f"fact cards STALE for chapters {_ranges(stale)}: their {what} not in this view (run `muse sync`)",
            style="yellow",
            markup=False,
        )
    if missing:
        console.print(
            f"no fact cards for chapters {_ranges(missing)}: only the author's files count there",
            style="yellow",
            markup=False,
        )


def card_show_doc(
    state: CardState,
    history: dict[str, list[ValueAt]] | None = None,
    facts_status: Mapping[int, str] | None = None,
    last_chapter: int | None = None,
) -> CardShowDoc:
    """`muse cards show` as JSON (`facts_status`: chapter → current / stale / missing, to say what is left out)."""
    stale, missing = _facts_gaps(facts_status, state.as_of)
    return CardShowDoc(
        facts_stale=stale,
        facts_missing=missing,
        last_chapter=last_chapter,
        beyond_last=last_chapter is not None and state.as_of > last_chapter,
        history=history,
        id=state.card_id,
        type=state.type,
        name=state.name,
        aliases=state.aliases,
        as_of=state.as_of,
        attributes=state.attributes,
        relations=state.relations,
    )


def _source(src: Source, lines: ChapterLines | None, stale: list[int]) -> str:
    """A value's source as a person opens it: a fact card's span as ``chapters/0077.md:40 [1234:1250]`` while the
    chapter is the text the card was extracted from (not stale), else its chapter and offsets alone."""
    if lines is None or src.chapter is None or src.start is None or src.chapter in stale:
        return src.describe()
    at = lines.at(src.chapter, src.start)
    if at is None:
        return src.describe()
    if src.kind == "author":
        return f"{src.file}:{src.line} ({at} [{src.start}:{src.end}])"
    return f"fact card {at} [{src.start}:{src.end}] receipt {src.receipt_id}"


def render_card(console: Console, doc: CardShowDoc, lines: ChapterLines | None = None) -> None:
    """A card's state as of a chapter, with the source and note of every value (located by file and line), relation
    targets by name (and, with history, earlier values), then which chapters' fact cards are stale or missing
    (their changes are not in the state); says so when the chapter asked for is after the book's last chapter."""

    def source(src: Source) -> str:
        return _source(src, lines, doc.facts_stale)

    alias = f"（{'、'.join(doc.aliases)}）" if doc.aliases else ""
    console.print(f"{doc.name}{alias} [{doc.type}, id {doc.id}] as of chapter {doc.as_of}", markup=False)
    if doc.beyond_last:
        console.print(
            f"note: chapter {doc.as_of} is after the last chapter ({doc.last_chapter}): this is the state at the end "
            "of the book plus any card values dated later",
            style="yellow",
            markup=False,
        )
    table = Table("attribute", "value", "since", "source", "note")
    for k, v in sorted(doc.attributes.items()):
        table.add_row(k, str(v.value), str(v.since), source(v.source), v.note)
    for r in doc.relations:
        target = f"{r.target_name} ({r.target})" if r.target_name else r.target
        table.add_row(f"relation {r.type}", target, str(r.since), source(r.source), r.note)
    console.print(table)
    if doc.history:
        past = Table("attribute", "value", "from chapter", "source", "note", title="history")
        for k, vs in sorted(doc.history.items()):
            for v in vs:
                past.add_row(k, str(v.value), str(v.since), source(v.source), v.note)
        console.print(past)
    _print_facts_gaps(console, doc.facts_stale, doc.facts_missing, "changes are")


class CardLintDoc(_Doc):
    ok: bool
    cards: int
    problems: list[CardProblem]


def card_lint_doc(cards: int, problems: list[CardProblem]) -> CardLintDoc:
    """`muse cards lint` as JSON."""
    return CardLintDoc(ok=not problems, cards=cards, problems=problems)


def render_card_lint(console: Console, doc: CardLintDoc) -> None:
    """One line per problem (error[CODE]: message, where (also at other))."""
    for p in doc.problems:
        also = f" (also at {p.other})" if p.other else ""
        console.print(f"error[{p.code}]: {p.message}, {p.where}{also}", markup=False)
    console.print(f"{doc.cards} cards, {len(doc.problems)} problems", markup=False)


def _print_problems(console: Console, problems: list[MemoryProblem]) -> None:
    for p in problems:
        console.print(f"error[{p.code}]: chapter {p.chapter} {p.origin} {p.item}: {p.detail}", markup=False)


class LedgerDoc(_Doc):
    ok: bool = True
    as_of: int
    overdue_only: bool
    total: int
    left_out: int
    overdue_default_age: int | None
    last_chapter: int | None = None  # the book's last chapter (or outline)
    beyond_last: bool = False  # as_of is after it: ages are counted to as_of
    facts_stale: list[int]  # chapters ≤ as_of whose fact card is for an older text: not in the ledger
    facts_missing: list[int]  # chapters ≤ as_of never extracted: only their outline operations count
    items: list[ActiveForeshadow]
    problems: list[MemoryProblem]


def ledger_doc(
    active: ActiveList,
    *,
    overdue_only: bool,
    overdue_default_age: int | None,
    problems: list[MemoryProblem],
    facts_status: Mapping[int, str] | None = None,
    last_chapter: int | None = None,
) -> LedgerDoc:
    """`muse ledger` as JSON (`total` counts the items that pass --overdue; `left_out` what --limit cut; `ok` is
    false when the ledger has problems)."""
    items = active.items
    stale, missing = _facts_gaps(facts_status, active.as_of)
    shown = [p for p in problems if p.chapter <= active.as_of]
    return LedgerDoc(
        ok=not shown,
        last_chapter=last_chapter,
        beyond_last=last_chapter is not None and active.as_of > last_chapter,
        facts_stale=stale,
        facts_missing=missing,
        as_of=active.as_of,
        overdue_only=overdue_only,
        total=active.total,
        left_out=active.left_out,
        overdue_default_age=overdue_default_age,
        items=items,
        problems=shown,
    )


def render_ledger(console: Console, doc: LedgerDoc) -> None:
    """The active foreshadows, oldest first, with overdue marked; then any ledger problems."""
    table = Table("id", "planted", "advanced", "age", "payoff by", "overdue", "description")
    for f in doc.items:
        table.add_row(
            f.id,
            str(f.planted_chapter),
            str(f.last_advanced_chapter or "-"),
            str(f.age),
            str(f.payoff_chapter or "-"),
            "OVERDUE" if f.overdue else ("-" if f.overdue_rule == "none" else "no"),
            f.description,
        )
    console.print(f"active foreshadows as of chapter {doc.as_of}: {doc.total}", markup=False)
    if doc.beyond_last:
        console.print(
            f"note: chapter {doc.as_of} is after the last chapter ({doc.last_chapter}): ages are counted to it",
            style="yellow",
            markup=False,
        )
    console.print(table)
    if doc.left_out:
        console.print(f"{doc.left_out} more not shown (--limit)", markup=False)
    _print_facts_gaps(console, doc.facts_stale, doc.facts_missing, "operations are")
    _print_problems(console, doc.problems)


class SearchDoc(_Doc):
    ok: bool = True
    query: str
    before: int | None
    isolated: bool
    tokens: list[str]
    chapters: list[ChapterHit]  # ranked by aggregate score: the episode's chapter first, with its best chunk
    hits: list[SearchHit]  # the k best chunks, by chunk score, each with its chapter's score and rank
    missing: list[str] = []  # the query's own words that are not in the book as written (only parts, or nothing)


def search_doc(r: SearchResult) -> SearchDoc:
    """`muse search` as JSON."""
    return SearchDoc(
        query=r.query,
        before=r.before,
        isolated=r.isolated,
        tokens=r.tokens,
        chapters=r.chapters,
        hits=r.hits,
        missing=r.missing,
    )


class MentionsDoc(_Doc):
    ok: bool = True
    id: str
    name: str
    names: list[str]
    before: int | None
    total: int
    by_name: dict[str, int]  # every name and alias of the card with its total (0 when never written)
    last_chapter: int | None
    chapters: list[ChapterMentions]


def mentions_doc(r: MentionReport) -> MentionsDoc:
    """`muse mentions` as JSON."""
    return MentionsDoc(
        id=r.card_id,
        name=r.name,
        names=r.names,
        before=r.before,
        total=r.total,
        by_name=r.by_name,
        last_chapter=r.last_chapter,
        chapters=r.chapters,
    )


def render_mentions(console: Console, doc: MentionsDoc) -> None:
    """The total, the per-name breakdown, per-chapter counts and the last chapter."""
    scope = f" before chapter {doc.before}" if doc.before is not None else ""
    console.print(
        f"{doc.name} ({'/'.join(doc.names)}): {doc.total} mentions in {len(doc.chapters)} chapters{scope}; "
        f"last in chapter {doc.last_chapter if doc.last_chapter is not None else '-'}",
        markup=False,
    )
    console.print("by name: " + ", ".join(f"{n} {c}" for n, c in doc.by_name.items()), markup=False)
    console.print(
        "  ".join(f"{c.chapter}:{c.count}" + ("*" if c.in_heading else "") for c in doc.chapters), markup=False
    )
    if any(c.in_heading for c in doc.chapters):
        console.print("* counts a mention in the chapter's heading (回目)", markup=False)


class PlanDoc(_Doc):
    chapters: list[int]
    calls: int  # one logical call per chapter
    provider: str
    model: str
    max_attempts: int  # requests per call at most (corrections and retries)
    input_tokens_max: int  # first attempts' input, the budget's upper-bound estimator
    max_output_tokens: int  # per request
    cost_max: float | None  # input bound + full output per call at the model's price; None: no price
    bill: dict[str, Any]  # `llm.Bill`, the whole bound: every attempt of every call (what the command asks about)


def plan_doc(p: ExtractionPlan) -> PlanDoc:
    """An extraction plan as JSON."""
    return PlanDoc(
        chapters=p.chapters,
        calls=p.calls,
        provider=p.provider,
        model=p.model,
        max_attempts=p.max_attempts,
        input_tokens_max=p.input_tokens,
        max_output_tokens=p.max_output_tokens,
        cost_max=p.max_cost,
        bill=p.bill.model_dump(mode="json"),
    )


def plan_line(p: PlanDoc) -> str:
    """One line: how many extraction calls, to which model, and what they cost at most (every attempt)."""
    b = p.bill
    cost = f"${b['cost']:.4f}" if b["cost"] is not None else f"unknown (no price for {p.model})"
    return (
        f"fact extraction: {p.calls} calls to {p.provider}:{p.model} (chapters {_ranges(p.chapters)}; up to "
        f"{p.max_attempts} requests each), ≤ {b['input_tokens']:,} input and ≤ {b['output_tokens']:,} output tokens, "
        f"cost ≤ {cost} with every correction and retry (first requests alone: input ≤ {p.input_tokens_max:,})"
    )


class SyncDoc(_Doc):
    ok: bool
    dry_run: bool = False
    extraction: PlanDoc | None = None  # the extraction made (or, with --dry-run, that would be made)
    added: list[int]
    changed: list[int]
    removed: list[int]
    relexed: list[int]
    unchanged: int
    reindexed: list[int]
    rows_written: int
    rows_deleted: int
    facts_step: str
    facts_extracted: list[int]
    facts_stale: list[int]
    facts_error: dict[str, int | str] | None
    facts_rejected: int
    run_id: str | None
    spent: dict[str, Any] | None = None  # the run's calls, tokens and cost: what `muse cost --run RUN_ID` says
    problems: list[MemoryProblem]


def sync_doc(r: SyncResult) -> SyncDoc:
    """`muse sync` as JSON."""
    return SyncDoc(
        ok=r.facts_error is None and not r.problems,
        dry_run=r.dry_run,
        extraction=plan_doc(r.plan) if r.plan is not None else None,
        added=r.index.added,
        changed=r.index.changed,
        removed=r.index.removed,
        relexed=r.index.relexed,
        unchanged=len(r.index.unchanged),
        reindexed=r.index.reindexed,
        rows_written=r.index.rows_written,
        rows_deleted=r.index.rows_deleted,
        facts_step=r.facts_step,
        facts_extracted=r.facts_extracted,
        facts_stale=r.facts_stale,
        facts_error={"chapter": r.facts_error[0], "code": r.facts_error[1]} if r.facts_error else None,
        facts_rejected=r.facts_rejected,
        run_id=r.run_id,
        spent=r.spent,
        problems=r.problems,
    )


def _ranges(ns: list[int]) -> str:
    if not ns:
        return "none"
    out, start, prev = [], ns[0], ns[0]
    for n in [*ns[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def render_sync(console: Console, doc: SyncDoc) -> None:
    """What changed, what was redone, and the fact-card step's exact outcome (stale shown, never hidden)."""
    console.print(
        f"chapters: added {_ranges(doc.added)}, changed {_ranges(doc.changed)}, removed {_ranges(doc.removed)}, "
        f"unchanged {doc.unchanged}",
        markup=False,
    )
    if doc.dry_run:
        console.print(f"dry run — would re-index: {_ranges(doc.reindexed)}; nothing was written", markup=False)
    else:
        console.print(f"re-indexed: {_ranges(doc.reindexed)} ({doc.rows_written} rows written)", markup=False)
    if doc.extraction is not None:
        console.print(plan_line(doc.extraction), markup=False)
    console.print(f"fact cards: {doc.facts_step}; extracted {_ranges(doc.facts_extracted)}", markup=False)
    if doc.spent is not None:
        console.print(f"run {doc.run_id}: {spend_text(doc.spent)}", markup=False)
    if doc.facts_stale:
        console.print(f"fact cards STALE for chapters {_ranges(doc.facts_stale)}", style="yellow", markup=False)
    _print_problems(console, doc.problems)


class FactsDoc(_Doc):
    ok: bool = True
    chapter: int
    fact_card_id: str
    chapter_sha256: str
    receipt_id: str | None
    call_id: str | None
    attempts: int | None  # None for `facts show` (the attempts are in the receipts)
    cost: float | None
    accepted: list[str]
    rejected: list[MemoryProblem]
    output: dict[str, object]
    spans: list[tuple[int, int]]


def facts_doc(r: FactCardResult) -> FactsDoc:
    """`muse facts extract` as JSON."""
    return _facts_doc(r.fact_card, r.validation, chapter=r.chapter, call_id=r.call_id, attempts=r.attempts, cost=r.cost)


def facts_show_doc(card: FactCard, validation: FactValidation) -> FactsDoc:
    """`muse facts show` as JSON."""
    return _facts_doc(card, validation, chapter=card.chapter, call_id=card.call_id, attempts=None, cost=None)


def _facts_doc(
    card: FactCard,
    validation: FactValidation,
    *,
    chapter: int,
    call_id: str | None,
    attempts: int | None,
    cost: float | None,
) -> FactsDoc:
    return FactsDoc(
        chapter=chapter,
        fact_card_id=card.id,
        chapter_sha256=card.chapter_sha256,
        receipt_id=card.receipt_id,
        call_id=call_id,
        attempts=attempts,
        cost=cost,
        accepted=validation.accepted,
        rejected=validation.rejected,
        output=card.output.model_dump(mode="json"),
        spans=card.spans,
    )


def render_facts(console: Console, doc: FactsDoc, lines: ChapterLines | None = None) -> None:
    """Accepted and rejected items of a fact card, each with its file and line (while the chapter file is the text
    the card was extracted from) beside its offsets."""
    console.print(
        f"fact card {doc.fact_card_id} for chapter {doc.chapter}: {len(doc.accepted)} accepted, "
        f"{len(doc.rejected)} rejected (receipt {doc.receipt_id}"
        + (f", {doc.attempts} attempts)" if doc.attempts is not None else ")"),
        markup=False,
    )
    rejected = {p.item: p for p in doc.rejected}
    spans = iter(doc.spans)
    for kind in ("events", "foreshadows", "relations", "states"):
        items = doc.output.get(kind)
        for i, item in enumerate(items if isinstance(items, list) else []):
            name = f"{kind}[{i}]"
            start, end = next(spans, (0, 0))
            p = rejected.get(name)
            mark = f"rejected[{p.code}]" if p else "accepted"
            at = lines.at(doc.chapter, start, sha256=doc.chapter_sha256) if lines is not None else None
            where = f"{at} " if at else ""
            console.print(f"{mark} {name} {where}[{start}:{end}] {_fact_item(kind, item)}", markup=False)
            if p:
                console.print(f"    {p.detail}", markup=False)


def _fact_item(kind: str, item: dict[str, object]) -> str:
    """One fact-card item in a few words, then its quote."""
    g = item.get
    if kind == "events":
        actors = g("actors")
        what = f"{g('summary')} (actors: {'、'.join(map(str, actors)) if isinstance(actors, list) and actors else '-'})"
    elif kind == "foreshadows":
        payoff = f", payoff by {g('payoff_chapter')}" if g("payoff_chapter") is not None else ""
        what = f"{g('op')} {g('id')} {g('description')}{payoff}"
    elif kind == "relations":
        what = f"{g('source')} → {g('target')}: {g('relation')} {g('change')}"
    else:
        what = f"{g('entity')} {g('attribute')} = {g('value')}"
    return f"{what} 「{g('quote')}」"


def sync_outcome(doc: SyncDoc) -> Outcome:
    """failed_closed: a fact extraction failed closed; findings: the replayed memory has problems (an unknown or
    duplicate foreshadow, a rejected item); not_evaluated: fact cards were left stale (no model, or --no-extract);
    ok — a dry run too: saying what a sync would do is all it was asked for."""
    if doc.facts_error is not None:
        return "failed_closed"
    if doc.problems:
        return "findings"
    return "not_evaluated" if doc.facts_step.startswith("skipped") and not doc.dry_run else "ok"


def sync_error(doc: SyncDoc, chapter_path: Callable[[int], Path]) -> str | None:
    """The one error line of a sync whose fact extraction failed closed, else None."""
    if doc.facts_error is None:
        return None
    n, code = int(doc.facts_error["chapter"]), doc.facts_error["code"]
    return (
        f"error[{code}]: fact extraction for chapter {n} failed closed, {chapter_path(n)} — "
        "see `muse calls` for the receipts; its facts stay stale"
    )


def findings_outcome(problems: int) -> Outcome:
    """findings when a check found problems (card lint problems, rejected fact-card items), else ok."""
    return "findings" if problems else "ok"
