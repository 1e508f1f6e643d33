"""`muse status`: one screen saying where the book stands — chapters and gaps, what derived state is stale,
review and gate states, overdue foreshadows, unenforced rule lines, spend vs budget — and, for every
problem, the next command to run. Read only: nothing is re-checked into the store, no model is called.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.text import Text

from ..book import Book, read_chapter_file
from ..errors import MuseError
from ..llm import cost_summary
from ..memory import lint_cards, replay
from ..rules import CheckReport, check_book, load_book_rules
from ..writing import list_drafts
from ._records import load_reviews, review_state

STATUS_SCHEMA_VERSION = 1
Severity = Literal["error", "warning", "info"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Problem(_Doc):
    """Something to act on, with the command that acts on it."""

    area: str  # chapters / registry / index / facts / rules / check / reviews / gates / ledger / cards / spend
    severity: Severity
    what: str
    chapters: list[int] = []
    next: str  # the next command to run


class ChaptersStatus(_Doc):
    count: int
    first: int | None
    last: int | None
    gaps: list[int]  # numbers missing between the first and the last chapter


class DerivedStatus(_Doc):
    """A derived record of the chapter files (registry, index, fact cards): what matches the files now."""

    current: int
    stale: list[int]  # recorded for another text of the chapter
    missing: list[int]  # never recorded
    removed: list[int] = []  # recorded, but the chapter file is gone


class ReviewsStatus(_Doc):
    finalized: list[int]
    finalized_with_issues: list[int]
    skipped: list[int]
    not_reviewed: list[int]
    stale: list[int]
    error: list[int]
    unapplied_revisions: list[int]


class DeskStatus(_Doc):
    """The author's desk: drafts waiting for a decision, and the decisions made."""

    waiting: list[str]  # short ids of drafts that passed their checks and wait for a decision
    held: list[str]  # drafts held for the author (blocked after the repair bound), undecided
    accepted: int
    revised: int
    rejected: int
    last: list[str]  # the latest decisions, newest first: "D4KZ9QX accept (manual) 2026-12-03 18:02"


class SpendStatus(_Doc):
    total: float | None  # None = unknown (some attempt had no price), never 0
    unknown_cost_attempts: int
    runs: int
    largest_run: float | None
    budget_max_cost: float | None  # per run ([budget] max_cost)


class StatusDoc(_Doc):
    """`muse status --json`."""

    schema_version: int = STATUS_SCHEMA_VERSION
    ok: bool = True
    book: str
    title: str
    chapters: ChaptersStatus
    registry: DerivedStatus
    index: DerivedStatus
    facts: DerivedStatus | None  # None when the memory could not be replayed (see problems)
    rules_unparsed_lines: list[int]
    check_errors: int
    check_warnings: int
    chapters_with_errors: list[int]
    reviews: ReviewsStatus
    desk: DeskStatus
    gates: str
    judge_panels: dict[str, int]
    overdue_foreshadows: list[str]
    spend: SpendStatus
    problems: list[Problem]


def _ranges(numbers: list[int]) -> str:
    """1, 2, 3, 7 → "1–3, 7"."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1].split("–")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('–')[0]}–{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _derived(recorded: dict[int, str], shas: dict[int, str]) -> DerivedStatus:
    return DerivedStatus(
        current=sum(1 for n, s in shas.items() if recorded.get(n) == s),
        stale=sorted(n for n, s in shas.items() if n in recorded and recorded[n] != s),
        missing=sorted(n for n in shas if n not in recorded),
        removed=sorted(n for n in recorded if n not in shas),
    )


def _stale_problem(problems: list[Problem], area: str, severity: Severity, status: DerivedStatus, what: str) -> None:
    """One problem for a derived record that does not match the files now (fixed by `muse sync`)."""
    changed = sorted(status.stale + status.missing + status.removed)
    if changed:
        problems.append(
            Problem(
                area=area, severity=severity, what=f"{what}: {_ranges(changed)}", chapters=changed, next="muse sync"
            )
        )


def _check_problems(check: CheckReport) -> list[Problem]:
    """The check's errors as problems: one per chapter, except that chapters breaking exactly the same rules
    (say, every chapter of an imported novel under min_chars) are one problem naming all of them — a whole
    book's worth of identical lines would bury everything else on the screen."""
    groups: dict[tuple[tuple[str, str], ...], list[tuple[int, str, list[int]]]] = {}
    for ch in check.chapters:
        errors = [f for f in ch.findings if f.severity == "error"]
        if errors:
            signature: tuple[tuple[str, str], ...] = tuple((f.rule, f.target) for f in errors)
            groups.setdefault(signature, []).append((ch.number, ch.path, [f.actual for f in errors]))
    out: list[Problem] = []
    for key, members in groups.items():
        numbers = [n for n, _, _ in members]
        per_rule = [[a[i] for _, _, a in members] for i in range(len(key))]
        what = ", ".join(_error_text(rule, target, acts) for (rule, target), acts in zip(key, per_rule, strict=True))
        single = len(numbers) == 1
        where = f"chapter {numbers[0]} ({members[0][1]})" if single else f"{len(numbers)} chapters ({_ranges(numbers)})"
        out.append(
            Problem(
                area="check",
                severity="error",
                chapters=numbers,
                what=f"{where}: {what}",
                next=_check_next(numbers, {rule for rule, _ in key}),
            )
        )
    return out


def _check_next(numbers: list[int], rules: set[str]) -> str:
    """`muse review` repairs forbidden phrases, not length (no step does): for length the author decides."""
    fit = "edit the chapter(s) to fit, or change min_chars/max_chars in [chapters] of book.toml"
    if rules == {"length"}:
        return fit
    if len(numbers) == 1:
        review = f"muse review {numbers[0]}"
    elif numbers[-1] - numbers[0] + 1 == len(numbers):
        review = f"muse review --range {numbers[0]}-{numbers[-1]}"
    else:
        review = f"muse review {numbers[0]}   (then each chapter listed)"
    return review + ("   (length: " + fit + ")" if "length" in rules else "")


def _error_text(rule: str, target: str, actual: list[int]) -> str:
    """`forbidden 后宫 ×2`, `length min_chars (952 chars)`; over several chapters the range of the counts."""
    lo, hi = min(actual), max(actual)
    amount = str(lo) if lo == hi else f"{lo}–{hi}"
    return f"{rule} {target} ({amount} chars)" if rule == "length" else f"{rule} {target} ×{amount}"


def book_status(book: Book) -> StatusDoc:
    """Gather the book's status from its files and store (read only)."""
    problems: list[Problem] = []
    paths = book.chapter_paths()
    shas = {n: read_chapter_file(n, p).sha256 for n, p in paths.items()}
    numbers = sorted(shas)
    body_numbers = [n for n in numbers if n > 0]
    gaps = [n for n in range(body_numbers[0], body_numbers[-1] + 1) if n not in shas] if body_numbers else []
    if not numbers:
        problems.append(
            Problem(
                area="chapters",
                severity="error",
                what="the book has no chapter files",
                next="muse import NOVEL.txt --into .",
            )
        )
    if gaps:
        problems.append(
            Problem(
                area="chapters",
                severity="warning",
                what=f"chapter files missing: {_ranges(gaps)}",
                chapters=gaps,
                next="add the missing chapters/NNNN.md (or renumber), then `muse sync`",
            )
        )
    conn = book.db
    registry = _derived({n: r.sha256 for n, r in book.registered().items()}, shas)
    _stale_problem(problems, "registry", "info", registry, "chapter registry out of date (edited, added or removed)")
    index = _derived({row[0]: row[1] for row in conn.execute("SELECT number, sha256 FROM memory_chapters")}, shas)
    _stale_problem(problems, "index", "warning", index, "search/mention index stale")
    facts: DerivedStatus | None = None
    overdue: list[str] = []
    try:
        state = replay(book)
    except MuseError as exc:
        problems.append(
            Problem(
                area="cards",
                severity="error",
                what=f"the story memory cannot be replayed: {exc.what}",
                next="muse cards lint",
            )
        )
    else:
        status = state.facts_status
        facts = DerivedStatus(
            current=sum(1 for s in status.values() if s == "current"),
            stale=sorted(n for n, s in status.items() if s == "stale"),
            missing=sorted(n for n, s in status.items() if s == "missing"),
        )
        if facts.stale or facts.missing:
            parts = [
                f"stale (older text) for {_ranges(facts.stale)}" if facts.stale else "",
                f"missing for {_ranges(facts.missing)}" if facts.missing else "",
            ]
            extractor = book.config.role_target("extractor") is not None
            problems.append(
                Problem(
                    area="facts",
                    severity="warning",
                    chapters=facts.stale + facts.missing,
                    what="fact cards STALE: "
                    + "; ".join(p for p in parts if p)
                    + " — their facts are not in the memory",
                    next="muse sync"
                    if extractor
                    else "configure an extractor model ([roles] in book.toml), then `muse sync`",
                )
            )
        if numbers:
            items = state.active_foreshadows(numbers[-1], overdue_only=True).items
            overdue = [f"{a.id} (planted {a.planted_chapter}, due {a.payoff_chapter})" for a in items]
            if items:
                problems.append(
                    Problem(
                        area="ledger",
                        severity="warning",
                        what=f"{len(items)} overdue foreshadow(s): {', '.join(a.id for a in items)}",
                        next=f"muse ledger --overdue --as-of {numbers[-1]}",
                    )
                )
        for p in state.problems:
            problems.append(
                Problem(
                    area="memory",
                    severity="warning",
                    chapters=[p.chapter],
                    what=f"{p.code} in chapter {p.chapter} {p.item}: {p.detail}",
                    next=f"muse facts show {p.chapter}" if p.origin == "fact" else "muse ledger",
                )
            )
    _, card_problems = lint_cards(book)
    if card_problems:
        problems.append(
            Problem(
                area="cards",
                severity="error",
                what=f"{len(card_problems)} problem(s) in cards/*.yaml "
                f"(first: {card_problems[0].code} at {card_problems[0].where})",
                next="muse cards lint",
            )
        )
    unparsed: list[int] = []
    errors = warnings = 0
    with_errors: list[int] = []
    try:
        check = check_book(book, update=False) if numbers else None
    except MuseError as exc:
        check = None
        problems.append(
            Problem(
                area="rules",
                severity="error",
                what=f"rules.txt cannot be used: {exc.code} {exc.what}",
                next="muse rules lint",
            )
        )
    if check is not None:
        unparsed = check.rules.unparsed_lines
        errors, warnings = check.summary.errors, check.summary.warnings
        with_errors = [ch.number for ch in check.chapters if ch.errors]
        problems += _check_problems(check)
        if warnings:
            problems.append(
                Problem(
                    area="check",
                    severity="info",
                    what=f"{warnings} fatigue warning(s) in {check.summary.chapters_with_warnings} chapter(s)",
                    next="muse check",
                )
            )
    texts = {u.line: u.text for u in load_book_rules(book).ruleset.unparsed} if unparsed else {}
    for line in unparsed:
        problems.append(
            Problem(
                area="rules",
                severity="warning",
                what=f"rules.txt line {line} is not a rule and is NOT enforced: {texts.get(line, '')!r}",
                next="muse rules normalize   (or rewrite the line as 禁止:/疲劳词:/偏好:)",
            )
        )
    reviews = _reviews(book, shas, problems)
    desk = _desk(book, problems)
    panel_counts: dict[str, int] = dict(  # counted in SQL: the panels' report models are not loaded
        conn.execute("SELECT status, COUNT(*) FROM judge_panels WHERE report_json IS NOT NULL GROUP BY status")
    )
    bad = sum(v for k, v in panel_counts.items() if k != "stable")
    if bad:
        problems.append(
            Problem(
                area="judging",
                severity="warning",
                what=f"{bad} judge panel(s) invalid or unstable",
                next="muse judge-summary",
            )
        )
    spend = _spend(book)
    if (
        spend.budget_max_cost is not None
        and spend.largest_run is not None
        and spend.largest_run > spend.budget_max_cost
    ):
        problems.append(
            Problem(
                area="spend",
                severity="warning",
                what=f"a run cost {spend.largest_run:.4f}, above [budget] max_cost {spend.budget_max_cost}",
                next="muse cost",
            )
        )
    if spend.unknown_cost_attempts:
        problems.append(
            Problem(
                area="spend",
                severity="info",
                what=f"{spend.unknown_cost_attempts} model attempt(s) have no price: spend is unknown",
                next='add [prices."<model>"] to book.toml, then `muse cost`',
            )
        )
    order = {"error": 0, "warning": 1, "info": 2}
    problems.sort(key=lambda p: order[p.severity])
    return StatusDoc(
        book=str(book.root),
        title=book.config.book.title,
        chapters=ChaptersStatus(
            count=len(numbers), first=numbers[0] if numbers else None, last=numbers[-1] if numbers else None, gaps=gaps
        ),
        registry=registry,
        index=index,
        facts=facts,
        rules_unparsed_lines=unparsed,
        check_errors=errors,
        check_warnings=warnings,
        chapters_with_errors=with_errors,
        reviews=reviews,
        desk=desk,
        gates=_gates_line(book),
        judge_panels=panel_counts,
        overdue_foreshadows=overdue,
        spend=spend,
        problems=problems,
    )


def _reviews(book: Book, shas: dict[int, str], problems: list[Problem]) -> ReviewsStatus:
    by_state: dict[str, list[int]] = {
        k: [] for k in ("finalized", "finalized_with_issues", "skipped", "not_reviewed", "stale", "error")
    }
    unapplied: list[int] = []
    stored = load_reviews(book.db, shas)
    for n in sorted(shas):
        records = stored.get(n, [])
        latest = records[-1] if records else None
        state, _ = review_state(latest.doc if latest else None, latest.current if latest else False)
        by_state[state].append(n)
        if (
            latest is not None
            and latest.current
            and latest.doc.revision is not None
            and not latest.doc.revision.applied
        ):
            unapplied.append(n)
    hints: dict[str, tuple[Severity, str, str]] = {
        "finalized_with_issues": ("warning", "finalized with open issues", "muse review {n}   (see the issues)"),
        "error": ("error", "review failed closed", "muse review {n}"),
        "stale": ("info", "review is of an earlier text (file edited since)", "muse review {n}"),
        "skipped": (
            "warning",
            "review ran but its model steps were skipped",
            "configure [roles], then muse review {n}",
        ),
    }
    for state, (sev, what, cmd) in hints.items():
        chs = by_state[state]
        if chs:
            first = chs[0]
            more = f" --range {chs[0]}-{chs[-1]}" if len(chs) > 1 else ""
            command = cmd.format(n=first) if not more else cmd.replace(" {n}", more)
            problems.append(
                Problem(
                    area="reviews",
                    severity=sev,
                    chapters=chs,
                    what=f"{what}: chapter(s) {_ranges(chs)}",
                    next=command,
                )
            )
    return ReviewsStatus(**by_state, unapplied_revisions=unapplied)


def _desk(book: Book, problems: list[Problem]) -> DeskStatus:
    drafts = list_drafts(book, read_only=True).drafts
    undecided = [d for d in drafts if d.decision is None]
    waiting = [d for d in undecided if d.status in ("passed", "checked", "finalized", "drafted", "revised")]
    held = [d for d in undecided if d.status in ("held_for_author", "finalized_with_issues")]
    decided = sorted(
        (d for d in drafts if d.decision is not None), key=lambda d: d.decision.decided_at if d.decision else ""
    )
    if held:
        first = held[-1]
        problems.append(
            Problem(
                area="desk",
                severity="warning",
                chapters=sorted({d.chapter for d in held}),
                what=f"{len(held)} draft(s) held for you (blocked after the repair bound): "
                + ", ".join(d.short for d in held[-5:]),
                next=f"muse drafts show {first.short}   then   muse drafts revise {first.short}  (or reject)",
            )
        )
    if waiting:
        first = waiting[-1]
        problems.append(
            Problem(
                area="desk",
                severity="info",
                chapters=sorted({d.chapter for d in waiting}),
                what=f"{len(waiting)} draft(s) wait for your decision: {', '.join(d.short for d in waiting[-5:])}",
                next=f"muse drafts diff {first.short}   then   muse drafts accept|revise|reject {first.short}",
            )
        )
    run = book.db.execute(
        "SELECT first_chapter, last_chapter, mode, status, stop_chapter, stop_reason FROM stretch_runs"
        " WHERE status IN ('waiting', 'stopped', 'interrupted', 'running') ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if run is not None:  # a stretch of chapters not finished: where it stands and how to go on
        where = f" at chapter {run['stop_chapter']}" if run["stop_chapter"] is not None else ""
        why = f": {run['stop_reason']}" if run["stop_reason"] else ""
        problems.append(
            Problem(
                area="desk",
                severity="info" if run["status"] in ("waiting", "running") else "warning",
                chapters=[run["stop_chapter"]] if run["stop_chapter"] is not None else [],
                what=f"the run of chapters {run['first_chapter']}-{run['last_chapter']} ({run['mode']}) is "
                f"{run['status']}{where}{why}",
                next="muse write --status   then   muse write --continue",
            )
        )
    counts = {
        k: sum(1 for d in decided if d.decision and d.decision.decision == k) for k in ("accept", "revise", "reject")
    }
    last = [
        f"{d.short} {d.decision.decision} ({d.decision.mode}) {d.decision.decided_at[:16].replace('T', ' ')}"
        for d in reversed(decided[-3:])
        if d.decision is not None
    ]
    return DeskStatus(
        waiting=[d.short for d in waiting],
        held=[d.short for d in held],
        accepted=counts["accept"],
        revised=counts["revise"],
        rejected=counts["reject"],
        last=last,
    )


def _spend(book: Book) -> SpendStatus:
    summary = cost_summary(book.db)
    runs = [r.cost for r in summary.by_run]
    known = [c for c in runs if c is not None]
    return SpendStatus(
        total=summary.total.cost,
        unknown_cost_attempts=summary.total.unknown_cost_attempts,
        runs=len(runs),
        largest_run=max(known) if known else None,
        budget_max_cost=book.config.budget.max_cost,
    )


_MARK = {"error": ("✗", "red"), "warning": ("!", "yellow"), "info": ("·", "cyan")}


def render_status(doc: StatusDoc, console: Console) -> None:
    """One screen: a few summary lines, then every problem with its next command."""
    c = doc.chapters
    span = f"{c.first}–{c.last}" if c.count else "none"
    console.print(Text.assemble((doc.title, "bold"), f"  {doc.book}"))
    console.print(
        f"chapters   {c.count} ({span})" + (f", gaps {_ranges(c.gaps)}" if c.gaps else ", no gaps"), markup=False
    )
    console.print(
        f"check      {doc.check_errors} error(s), {doc.check_warnings} warning(s)"
        + (f" — errors in chapter(s) {_ranges(doc.chapters_with_errors)}" if doc.chapters_with_errors else ""),
        markup=False,
    )
    r = doc.reviews
    console.print(
        f"reviews    finalized {len(r.finalized)} · with issues {len(r.finalized_with_issues)} · skipped "
        f"{len(r.skipped)} · not reviewed {len(r.not_reviewed)} · stale {len(r.stale)} · error {len(r.error)}",
        markup=False,
    )
    facts = doc.facts
    fact_line = (
        f"fact cards {facts.current} current, {len(facts.stale)} stale, {len(facts.missing)} missing"
        if facts
        else "fact cards unknown (memory not replayed)"
    )
    console.print(
        f"memory     index {doc.index.current}/{c.count} current · {fact_line} · "
        f"{len(doc.overdue_foreshadows)} overdue foreshadow(s)",
        markup=False,
    )
    d = doc.desk
    console.print(
        f"desk       {len(d.waiting)} waiting · {len(d.held)} held · accepted {d.accepted} · revised {d.revised}"
        f" · rejected {d.rejected}" + (f" — last: {d.last[0]}" if d.last else ""),
        markup=False,
    )
    console.print(f"gates      {doc.gates}", markup=False)
    s = doc.spend
    total = "unknown" if s.total is None else (f"{s.total:.4f}" if s.runs else "nothing spent")
    budget = "no budget" if s.budget_max_cost is None else f"budget {s.budget_max_cost} per run"
    console.print(f"spend      {total} over {s.runs} run(s) ({budget})", markup=False)
    console.print()
    if not doc.problems:
        console.print("✓ nothing to do", style="green", markup=False)
        return
    for p in doc.problems:
        mark, style = _MARK[p.severity]
        console.print(Text.assemble((f"{mark} ", style), (f"{p.area:<9}", "bold"), p.what))
        console.print(Text.assemble("    → ", (p.next, "cyan")))


def _gates_line(book: Book) -> str:
    """The quality-gate decisions stored so far, by outcome (replay's Gate A/B come with issues 12 and 13)."""
    # counted in SQL: the judges' layer (its report models) is not loaded for one line of counts
    found = dict(book.db.execute("SELECT outcome, COUNT(*) FROM gate_decisions GROUP BY outcome").fetchall())
    total = sum(found.values())
    if not total:
        return "not evaluated: no quality gate has run (`muse review` with a judge model, or `muse judge`)"
    counts = {o: found.get(o, 0) for o in ("passed", "failed", "error")}
    return (
        f"quality gate: {total} decision(s) — {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['error']} error (see `muse judge-summary`)"
    )
