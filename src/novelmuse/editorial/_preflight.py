"""Before any model call: what review will send, and a refusal of what can never be sent (issue 15 item 2).

A chapter is sent whole to the reviewer and the editor (and its paragraphs with a forbidden phrase to the writer),
so before the first request of a run every chapter to review is checked the way the call policy would check its
requests — with the same estimator (`ModelSession.estimate`: the budget's upper bound of input tokens, the output
cap, the worst-case cost, the model's known context window):

- a chapter over the book's max_chars is refused (CHAPTER_TOO_LONG, exit 2): `muse check` fails it, and a
  152,000-character chapter was once sent whole;
- a request the model's context window cannot hold (MODEL_CONTEXT_EXCEEDED), or the budget could never allow
  (BUDGET_EXCEEDED, MODEL_COST_UNKNOWN), is refused with the policy's own code and exit 3 — up front, instead of
  after the earlier chapters of a range were paid for.

Every chapter that cannot be sent is named at once. The first requests' sizes and worst-case cost are summed for
the run's plan (`PreflightOut`); repairs, rewrites and corrections come on top, each still checked by the policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..book import Book, Chapter, read_chapter_file
from ..errors import FailedClosed, InputError
from ..llm import Bill, CallEstimate, ModelSession
from ..roles.editor import REVIEW as EDITOR_REVIEW
from ..roles.reviewer import REVIEW
from ..roles.writer import PARAGRAPHS
from ..rules import LengthOut, length_text
from ..store import latest_reviews
from ..text import split_paragraphs
from ._consistency import review_request
from ._editor import editor_request
from ._models import PreflightOut
from ._repair import forbidden_request
from ._rules_step import forbidden_hits, length_outcome
from ._state import LoopState

_REFUSAL_FIXES = {
    "MODEL_CONTEXT_EXCEEDED": "shorten or split the chapter, lower [calls] max_output_tokens, or use a model with a "
    "larger context (book.toml [context_windows] if this endpoint's window is larger than the one known)",
    "BUDGET_EXCEEDED": "raise the [budget] limits in book.toml",
    "MODEL_COST_UNKNOWN": 'add [prices."<model>"] input/output per million tokens to book.toml, or remove [budget]',
}


@dataclass(frozen=True)
class ChapterPlan:
    """One chapter about to be reviewed: its length (as `muse check` says it) and its first requests, estimated."""

    chapter: int
    label: str  # 第23回 / 第23章 …
    path: str  # relative to the book root
    length: LengthOut
    estimates: list[CallEstimate]


def first_requests(session: ModelSession, state: LoopState) -> list[CallEstimate]:
    """The requests the loop sends for the chapter's text as it is (before any step changes it), estimated: the
    writer's rewrite of forbidden phrases, the consistency review, the 7-dimension editor — each when its role has
    a model."""
    if not split_paragraphs(state.text):
        return []  # an empty chapter: the loop sends nothing
    out: list[CallEstimate] = []
    if (hits := forbidden_hits(state.text, state.rules)) and session.is_configured("writer"):
        out.append(session.estimate(PARAGRAPHS.render(forbidden_request(state, hits))))
    if session.is_configured("reviewer"):
        out.append(session.estimate(REVIEW.render(review_request(state))))
    if state.editor_enabled and session.is_configured("editor"):
        out.append(session.estimate(EDITOR_REVIEW.render(editor_request(state))))
    return out


def plan_chapter(book: Book, session: ModelSession, state: LoopState, chapter: Chapter) -> ChapterPlan:
    """The chapter's length and its first requests as the call policy would size them (nothing is sent)."""
    return ChapterPlan(
        chapter=chapter.number,
        label=book.chapter_label(chapter.number),
        path=_relative(book, chapter),
        length=length_outcome(state.text, state.rules, chapter.number),
        estimates=first_requests(session, state),
    )


def _relative(book: Book, chapter: Chapter) -> str:
    try:
        return str(chapter.path.relative_to(book.root))
    except ValueError:
        return str(chapter.path)


def refuse_unsendable(book: Book, plans: list[ChapterPlan]) -> None:
    """Raise for every chapter that cannot be sent, named at once (see the module docstring); return when all can."""
    too_long = [
        p for p in plans if p.estimates and p.length.max_chars is not None and p.length.chars > p.length.max_chars
    ]
    if too_long:
        first = too_long[0]
        what = ", ".join(f"{p.label} {length_text(p.length)}" for p in too_long[:20])
        more = f" (+{len(too_long) - 20} more)" if len(too_long) > 20 else ""
        raise InputError(
            "CHAPTER_TOO_LONG",
            f"{what}{more}: review sends no chapter over the book's max length to a model (nothing was sent)",
            first.path + (f" and {len(too_long) - 1} more chapter file(s)" if len(too_long) > 1 else ""),
            "shorten or split the chapter (`muse check` shows its length), raise [chapters] max_chars in book.toml, "
            "or review the other chapters (--range)",
        )
    refused = [(p, e, r) for p in plans for e in p.estimates if (r := e.refusal(book.config.budget)) is not None]
    if refused:
        plan, est, (code, why) = refused[0]
        same = [f"{p.label} ({e.role})" for p, e, (c, _) in refused[1:] if c == code]
        others = f"; also {', '.join(same[:20])}" + (" …" if len(same) > 20 else "") if same else ""
        raise FailedClosed(
            code,
            f"{plan.label}: the {est.role}'s request cannot be sent — {why}{others} (nothing was sent)",
            f"role {est.role} ({est.provider}:{est.model}), {plan.path}",
            _REFUSAL_FIXES[code].replace("<model>", est.model),
        )


def refuse_review_before_apply(book: Book, numbers: list[int]) -> None:
    """`--apply` applies what a chapter's review produced. A chapter edited since its latest review has no such
    result for its bytes: applying would first run a new, paid review. Raise CHAPTER_EDITED_SINCE_REVIEW (exit 2,
    nothing sent) naming every such chapter; `--rerun` (or `--force`) asks for the new review."""
    paths = book.chapter_paths()
    current = {n: read_chapter_file(n, paths[n]).sha256 for n in numbers}
    edited = [r for n, r in sorted(latest_reviews(book.db, current).items()) if n in current and not r.current]
    if not edited:
        return
    labels = ", ".join(book.chapter_label(r.chapter) for r in edited[:20]) + (" …" if len(edited) > 20 else "")
    first = edited[0]
    again = f"{first.chapter}" if len(numbers) == 1 else f"--range {numbers[0]}-{numbers[-1]}"
    raise InputError(
        "CHAPTER_EDITED_SINCE_REVIEW",
        f"{labels} {'was' if len(edited) == 1 else 'were'} edited since {'its' if len(edited) == 1 else 'their'} "
        f"review (record {first.record_id}{', …' if len(edited) > 1 else ''}): --apply would first run a new review, "
        "which calls the models — nothing was sent",
        _relative(book, book.read_chapter(first.chapter)),
        f"review again and apply the new result: `muse review {again} --apply --rerun`, or see the new review "
        f"first: `muse review {again}`",
    )


def plan_doc(book: Book, plans: list[ChapterPlan]) -> PreflightOut:
    """What the run will send first, summed: the `preflight` of `muse review --json`, with its notes."""
    estimates = [e for p in plans for e in p.estimates]
    cost: float | None = 0.0
    for e in estimates:
        cost = None if cost is None or e.cost is None else cost + e.cost
    unknown = sorted({f"{e.provider}:{e.model}" for e in estimates if e.context_window is None})
    notes = [
        f"the context window of {m} is unknown: its requests are not checked against one"
        f' (add "{m}" = tokens under [context_windows] in book.toml)'
        for m in unknown
    ]
    limit = book.config.budget.max_cost
    if limit is not None and cost is not None and cost > limit:
        notes.append(
            f"the first requests' worst case ({cost:.4f}) is above max_cost {limit:g}: the run may stop with "
            "BUDGET_EXCEEDED partway (the chapters reviewed by then stay recorded; a rerun resumes)"
        )
    return PreflightOut(
        chapters=[p.chapter for p in plans if p.estimates],
        requests=len(estimates),
        input_tokens=sum(e.input_tokens for e in estimates),
        output_tokens=sum(e.max_output_tokens for e in estimates),
        cost=cost,
        unknown_context=unknown,
        notes=notes,
        bill=review_bill(book, plans),
    )


def _loop_calls(book: Book) -> dict[str, int]:
    """The most calls of each role the loop may make on one chapter (see `_loop`'s diagram): the forbidden-phrase
    rewrite, the consistency review, its repairs and re-reviews, the editor, its rewrites, re-reviews, arbiter calls
    and the polish, the review of a rewritten text, and the fact card."""
    r = book.config.review
    return {
        "writer": 1 + r.repair_rounds + r.rewrite_rounds + 1,
        "reviewer": 1 + r.rereview_rounds + 1,
        "editor": 1 + r.rewrite_rounds,
        "arbiter": r.arbiter_rounds,
        "extractor": 1,
    }


def review_bill(book: Book, plans: list[ChapterPlan]) -> Bill:
    """The worst case of reviewing `plans`: per chapter, every call `_loop_calls` allows of each role that has a
    model, each sized as the chapter's largest first request plus room for a rewritten chapter (the output cap,
    at most 4 bytes a token), each within `[calls] max_attempts` requests (`llm.role_bill`)."""
    from ..llm import BYTES_PER_OUTPUT_TOKEN, PriceTable, role_bill, total_bill

    prices = PriceTable.load(book.config.prices)
    out = book.config.calls.max_output_tokens
    parts = []
    for plan in plans:
        if not plan.estimates:
            continue
        base = max(e.input_tokens for e in plan.estimates)
        for role, calls in _loop_calls(book).items():
            target = book.config.role_target(role)
            if target is None or calls == 0:
                continue
            tokens = base + out * BYTES_PER_OUTPUT_TOKEN
            estimate = CallEstimate(role, target[0], target[1], tokens, out, None, None)
            parts.append(role_bill(estimate, calls, book.config.calls.max_attempts, prices.worst_case_cost))
    notes = [
        "each chapter's worst case: every repair, re-review, rewrite, arbiter call and polish [review] allows, "
        "each call sized as the chapter's largest request plus a rewritten chapter"
    ]
    return total_bill(parts, notes if parts else [])
