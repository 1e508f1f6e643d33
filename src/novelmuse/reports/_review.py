"""Terminal rendering of `muse review`: steps with their exact outcome, issues with quotes, scores,
both verdicts, repairs, arbiter decisions, the fact card (rejected items listed), tokens and cost.
A skipped step is shown as ``skipped(reason)`` in its own colour, never as passed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.text import Text

from ..book import Book, Chapter, parse_chapter_file
from ..editorial import NO_MODEL, ChapterReview, PreflightOut, ReviewRun, StepOutcome, facts_error
from ..errors import MuseError, Outcome, worst
from ..rules import length_text
from ..text import chapter_label, sha256_hex, split_paragraphs
from ..writing import ChapterGate, ReviewGateRun
from ._accept import accept_note, accept_outcome, render_accept
from ._diffs import diff_text
from .html._diff import char_diff

_STYLE = {"passed": "green", "failed": "red", "skipped": "yellow", "error": "bold red"}
_STATUS_STYLE = {
    "finalized": "green",
    "finalized_with_issues": "yellow",
    "not_reviewed": "yellow",
    "error": "bold red",
}


def outcome_text(outcome: StepOutcome) -> Text:
    """One step's label in its colour: passed / failed / skipped(reason) / error(CODE)."""
    return Text(outcome.label, style=_STYLE[outcome.status])


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"{cost:.4f}"


class ReviewFiles:
    """Where the texts one review read are on disk now — the chapter file, its stored revision and the original the
    revision was made from — so an offset into any of them is shown as ``path:line`` a person can open.

    A text the loop produced between two steps (e.g. after a repair, before a polish) is in no file: its offsets are
    shown alone."""

    def __init__(self, book: Book | None, doc: ChapterReview):
        self.by_body: dict[str, tuple[str, Chapter]] = {}
        self.original: tuple[str, Chapter] | None = None
        if book is None:
            return  # offsets only
        paths = [book.chapter_path(doc.chapter)]
        if doc.revision is not None:
            paths += [book.root / doc.revision.path, book.root / doc.revision.base_path]
        for path in paths:
            try:
                chapter = parse_chapter_file(doc.chapter, path, path.read_bytes())
            except (OSError, MuseError):
                continue
            rel = _relative(path, book.root)
            self.by_body.setdefault(sha256_hex(chapter.body), (rel, chapter))
            if chapter.sha256 == doc.chapter_sha256 and self.original is None:
                self.original = (rel, chapter)

    def at(self, text_sha256: str, start: int, end: int, paragraph: int | None = None) -> str:
        """``chapters/0003.md:17 ¶5@120-135`` — or ``¶5@120-135`` when no file holds that text."""
        offsets = (f"¶{paragraph}" if paragraph is not None else "") + f"@{start}-{end}"
        found = self.by_body.get(text_sha256)
        return f"{found[0]}:{found[1].file_line(start)} {offsets}" if found is not None else offsets

    def paragraphs(self, indices: list[int]) -> str:
        """The original text's paragraphs as ``chapters/0003.md:17 (¶5)``, or ``¶5`` without the file."""
        if self.original is None:
            return ", ".join(f"¶{i}" for i in indices)
        rel, chapter = self.original
        paras = split_paragraphs(chapter.body)
        return ", ".join(
            f"{rel}:{chapter.file_line(paras[i].start)} (¶{i})" if 0 <= i < len(paras) else f"¶{i}" for i in indices
        )


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def render_chapter(console: Console, doc: ChapterReview, book: Book | None = None) -> None:
    """Everything one chapter's review did; with the `book`, every location as ``path:line`` beside its offsets
    and the chapter named the book's way (第23回)."""
    files = ReviewFiles(book, doc)
    label = book.chapter_label(doc.chapter) if book is not None else chapter_label(None, doc.chapter)
    head = Text(f"{label} {doc.title}  " if doc.title != label else f"{label}  ")
    head.append(doc.status, style=_STATUS_STYLE[doc.status])
    if doc.resumed:
        head.append("  (resumed: already reviewed at this sha256 and configuration; not run again)", style="dim")
    console.print(head)
    # one line per step, never a table cell: error(CODE) / skipped(reason) and the detail are printed whole
    # at any terminal width (a narrow table cut the code to "error(MODEL_SCRIPT_EXHAUSTE…" or dropped the detail)
    step_w = max(len(s.step) for s in doc.steps) if doc.steps else 0
    label_w = max(len(s.label) for s in doc.steps) if doc.steps else 0
    for s in doc.steps:
        line = Text(s.step.ljust(step_w) + "  ")
        line.append_text(outcome_text(s))
        if s.detail:
            line.append(" " * (label_w - len(s.label)) + "  " + s.detail)
        console.print(line)
    length = doc.rules.length_final or doc.rules.length
    if doc.rules.forbidden or doc.rules.fatigue or (length is not None and length.outcome == "failed"):
        parts = [length_text(length)] if length is not None and length.outcome == "failed" else []
        parts += [f"forbidden {h.phrase}×{h.count} at {files.paragraphs(h.paragraphs)}" for h in doc.rules.forbidden]
        parts += [f"fatigue {h.phrase} {h.actual}>{h.limit}" for h in doc.rules.fatigue]
        console.print("rules: " + "; ".join(parts), markup=False)
    if not doc.memory.available:
        console.print(Text(f"memory: unavailable — {doc.memory.note}", style="yellow"))
    for rnd in doc.consistency:
        label = "review" if rnd.round == 0 else f"re-review {rnd.round}"
        flag = "" if rnd.model_passed is None else f"; model said passed={rnd.model_passed}"
        dis = " (disagrees with the severities; ignored)" if rnd.model_disagrees else ""
        console.print(
            f"consistency {label}: {len(rnd.issues)} issue(s), {rnd.blocking} blocking{flag}{dis}", markup=False
        )
        for i in rnd.issues:
            mark = "OPEN " if i.open else ""
            where = files.at(rnd.text_sha256, i.start, i.end, i.paragraph)
            console.print(
                f"  {mark}[{i.severity}/{i.type}] {where} 「{i.quote}」\n      {i.explanation} → {i.fix_hint}",
                markup=False,
            )
    for e in doc.editor:
        # one line per dimension, never a table: a narrow table folded the locations mid-path
        console.print(f"editor round {e.round}: overall {e.overall}", markup=False)
        name_w = max((len(d.name) for d in e.dims), default=0)
        for d in e.dims:
            score = f"{d.score}" + (" (neutral)" if d.neutral else "")
            where = f"  {files.at(e.text_sha256, d.start, d.end)}" if d.evidence else ""
            evidence = f"  「{d.evidence}」" if d.evidence else ""
            console.print(f"  {d.name.ljust(name_w, '　')} {score:>3}{where}{evidence}", markup=False)
        agree = "agree" if e.agrees else "DISAGREE"
        console.print(f"  verdict: computed {e.computed_verdict}, model {e.model_verdict} ({agree})", markup=False)
        for note in e.notes:
            console.print(f"  - {note}", markup=False)
    for a in doc.arbiter:
        console.print(f"arbiter round {a.round}: {a.decision} — {a.reason}", markup=False)
    for r in doc.repairs:
        where = "whole chapter" if r.paragraphs is None else f"paragraphs {r.paragraphs}"
        console.print(f"change: {r.step} ({r.kind}) {where}", markup=False)
    if doc.facts is not None:
        f = doc.facts
        how = "extracted" if f.extracted else "current, not extracted again"
        console.print(
            f"fact card {f.fact_card_id} ({how}): sha256 {f.chapter_sha256[:12]}…, receipt {f.receipt_id};"
            f" {len(f.accepted)} accepted, {len(f.rejected)} rejected",
            markup=False,
        )
        for rej in f.rejected:
            console.print(Text(f"  REJECTED [{rej.code}] {rej.item}: {rej.detail}", style="red"))
    if doc.revision is not None:
        state = "applied to the chapter file" if doc.revision.applied else "stored; run with --apply to write it"
        console.print(f"revision {doc.revision.path} sha256 {doc.revision.sha256[:12]}… — {state}", markup=False)
    for item in doc.open_items:
        console.print(Text(f"OPEN {item}", style="yellow"))
    u = doc.usage
    console.print(
        f"open issues: {doc.open_issues}; disagreements: reviewer pass flag {doc.disagreements.reviewer_pass_flag},"
        f" editor verdict {doc.disagreements.editor_verdict}; calls {u.calls} ({u.attempts} requests),"
        f" tokens {u.input_tokens} in / {u.output_tokens} out, cost {_cost(u.cost)}",
        markup=False,
    )
    console.print()


def _not_reviewed_because(docs: list[ChapterReview]) -> str:
    """Why chapters were not reviewed: the skip reasons of their review steps, each once."""
    reasons = [
        s.reason
        for d in docs
        for s in d.steps
        if s.step in ("consistency_review", "editor_review") and s.status == "skipped" and s.reason
    ]
    return "; ".join(dict.fromkeys(reasons)) or "not reviewed"


def _what_ran(run: ReviewRun) -> str:
    """What the run did, in words that cannot be misread: chapters a model reviewed now, chapters left alone
    because they were unchanged since their last run, chapters only the hard rules checked — and, when no model
    reviewed any chapter, exactly that."""
    s = run.summary
    fresh = [d for d in run.chapters if not d.resumed]
    not_reviewed = [d for d in run.chapters if d.status == "not_reviewed"]
    unchanged = f"{s.resumed} unchanged since {'its' if s.resumed == 1 else 'their'} last run (not run again)"
    if len(not_reviewed) == len(run.chapters):
        done = [f"hard rules run on {len(fresh)}"] if fresh else []
        done += [unchanged] if s.resumed else []
        return f"none reviewed by a model ({_not_reviewed_because(not_reviewed)})" + (
            " — " + ", ".join(done) if done else ""
        )
    now = sum(1 for d in fresh if d.status in ("finalized", "finalized_with_issues"))
    rules_only = [d for d in fresh if d.status == "not_reviewed"]
    failed = sum(1 for d in fresh if d.status == "error")
    parts = [f"{now} reviewed now"] if now else []
    parts += [unchanged] if s.resumed else []
    parts += [f"{len(rules_only)} hard rules only ({_not_reviewed_because(rules_only)})"] if rules_only else []
    parts += [f"{failed} failed closed"] if failed else []
    return (
        ", ".join(parts) + f"; {s.finalized} finalized, {s.finalized_with_issues} finalized with issues,"
        f" {s.not_reviewed} not reviewed, {s.error} error"
    )


_GATE_STYLE = {"passed": "green", "failed": "red", "skipped": "yellow", "error": "bold red"}


def render_gate(console: Console, gate: ChapterGate, book: Book | None = None) -> None:
    """One chapter's quality gate: its outcome, the reasons, each hard block and what the judges read."""
    label = book.chapter_label(gate.chapter) if book is not None else chapter_label(None, gate.chapter)
    line = Text(f"quality gate {label}: ")
    line.append(gate.label, style=_GATE_STYLE[gate.status])
    if gate.resumed:
        line.append("  (resumed: decided before on the same text, evidence, rules and judge; not judged again)")
    console.print(line)
    if gate.decision is not None:
        for reason in gate.decision.reasons:
            console.print(f"  - {reason}", markup=False)
    if gate.hard_blocks is not None:
        for name, state in gate.hard_blocks.states().items():
            block = gate.hard_blocks.block(name)
            why = f" ({block.reason})" if block.reason else ""
            found = "; ".join(f"{f.code} {f.detail}" for f in block.findings[:3])
            console.print(f"  hard block {name}: {state}{why}" + (f" — {found}" if found else ""), markup=False)
    if gate.evidence is not None:
        ev = gate.evidence
        digest = str(ev.get("sha256"))[:12]
        console.print(
            f"  evidence: {ev.get('source')} ({ev.get('item_count')} item(s), sha256 {digest}…) — {ev.get('note')}",
            markup=False,
        )


def render_review_run(console: Console, run: ReviewRun, book: Book | None = None) -> None:
    """The whole run: every chapter and its quality gate (located in the `book`'s files when given), then the
    summary."""
    gates = {g.chapter: g for g in run.gates} if isinstance(run, ReviewGateRun) else {}
    accepts = {a.draft.chapter: a for a in run.accepts} if isinstance(run, ReviewGateRun) else {}
    for doc in run.chapters:
        render_chapter(console, doc, book)
        if (gate := gates.get(doc.chapter)) is not None:
            render_gate(console, gate, book)
            console.print()
        if (accepted := accepts.get(doc.chapter)) is not None:
            render_accept(console, accepted)
    s = run.summary
    line = (
        f"{s.chapters} chapter(s): {_what_ran(run)}; fact cards: {s.facts_failed} with rejected items,"
        f" {s.facts_error} error;"
        f" calls {s.calls}, tokens {s.input_tokens} in / {s.output_tokens} out, cost {_cost(s.cost)};"
        f" model vs computed disagreements: pass flag {s.disagreements.reviewer_pass_flag},"
        f" editor verdict {s.disagreements.editor_verdict}"
    )
    console.print(line, markup=False)
    if s.not_run:
        console.print(Text(f"not run (a chapter failed closed): {s.not_run} — rerun to resume", style="yellow"))


def render_revision_diffs(console: Console, book: Book, run: ReviewRun) -> None:
    """Each revision against the original it was made from (both kept in .muse/revisions), character by character
    inside each changed line (`reports.html`'s diff, as the HTML report shows it): a two-character edit in an
    1,800-character paragraph shows as those two characters, with the file lines where they are."""
    for doc in run.chapters:
        if doc.revision is None:
            continue
        label = book.chapter_label(doc.chapter)
        old_path, new_path = book.root / doc.revision.base_path, book.root / doc.revision.path
        old = parse_chapter_file(doc.chapter, old_path, old_path.read_bytes())
        new = parse_chapter_file(doc.chapter, new_path, new_path.read_bytes())
        console.print(f"--- {label} {doc.revision.base_path}", markup=False)
        console.print(f"+++ {label} {doc.revision.path}", markup=False)
        diff = char_diff(old.body, new.body, first_line=old.first_line)
        for h in diff.hunks:
            if h.kind == "same":
                console.print(Text(f"  ({h.lines} unchanged line(s))", style="dim"))
                continue
            # the lines where the first change is (the context lines before it are not shown)
            first_change = next((k for k, p in enumerate(h.pieces) if p.op != "equal"), len(h.pieces))
            lead = sum(p.text.count("\n") for p in h.pieces[:first_change])
            console.print(
                Text(
                    f"@@ {doc.revision.base_path}:{h.base_line + lead} → {doc.revision.path}:{h.new_line + lead}"
                    f"  −{h.deleted} +{h.inserted} character(s)",
                    style="cyan",
                )
            )
            console.print(diff_text(h.pieces))
        if diff.identical:
            console.print("(no change)", markup=False)


def preflight_notes(plan: PreflightOut) -> list[str]:
    """What the run is about to send (before the first request): chapters, requests, token bound, worst-case cost;
    then its notes (unknown context windows, a worst case above max_cost). Nothing when nothing will be sent."""
    if not plan.chapters:
        return []  # every chapter is resumed: nothing is sent
    cost = "unknown (a model has no price)" if plan.cost is None else f"at most {plan.cost:.4f}"
    lines = [
        f"review: {len(plan.chapters)} chapter(s) for the models; first {plan.requests} request(s): up to"
        f" {plan.input_tokens:,} input tokens (an upper bound) and {plan.output_tokens:,} output, cost {cost};"
        " repairs and rewrites come on top, within [review] and [calls]"
    ]
    return lines + [f"note: {n}" for n in plan.notes]


def _chapter_outcome(c: ChapterReview) -> Outcome:
    if c.status == "error" or facts_error(c) is not None:
        return "failed_closed"
    if c.open_issues or c.status == "finalized_with_issues" or (c.facts and c.facts.rejected):
        return "findings"
    return "not_evaluated" if c.status == "not_reviewed" else "ok"


def _gate_outcome(g: ChapterGate) -> Outcome:
    if g.status == "error":
        return "failed_closed"
    if g.status == "failed":
        return "findings"
    return "not_evaluated" if g.status == "skipped" and g.reason == NO_MODEL else "ok"


def review_outcome(run: ReviewRun) -> Outcome:
    """The worst of every chapter's and every quality gate's: failed_closed when a step (the facts step and the gate
    included) failed closed; findings: open issues (finalized with issues, or a forbidden phrase left because no
    writer model ran), fact-card items rejected, or a failed quality gate; not_evaluated: a chapter not reviewed or a
    wanted gate without a judge model (no model configured); else ok."""
    gates = run.gates if isinstance(run, ReviewGateRun) else []
    accepts = run.accepts if isinstance(run, ReviewGateRun) else []
    return worst(
        *(_chapter_outcome(c) for c in run.chapters),
        *(_gate_outcome(g) for g in gates),
        *(accept_outcome(a) for a in accepts),
    )


def review_error(run: ReviewRun, chapter_path: Callable[[int], Path]) -> str | None:
    """The one error line of a run that failed closed: what, where (role, model, call) — fix; else None."""
    first = next((c for c in run.chapters if c.status == "error"), None)
    if first is not None:
        failed = next((s for s in first.steps if s.status == "error"), None)
        what = f"{failed.step}: {failed.detail}" if failed else "a model step failed closed"
        return (
            f"error[{first.error_code}]: chapter {first.chapter} {what}"
            f" (the chapter file {chapter_path(first.chapter)} was not changed)"
        )
    for c in run.chapters:
        if (step := facts_error(c)) is not None:
            return (
                f"error[{step.code}]: chapter {c.chapter}: the facts step failed closed (the review is recorded):"
                f" {step.detail}; then rerun `muse review {c.chapter}` or `muse sync` to extract the fact card"
            )
    for a in run.accepts if isinstance(run, ReviewGateRun) else []:
        if (note := accept_note(a)) is not None:
            return note
    for g in run.gates if isinstance(run, ReviewGateRun) else []:
        if g.status == "error":
            return (
                f"error[{g.code}]: chapter {g.chapter}: the quality gate failed closed (the review is recorded) — "
                f"see `muse calls` for the judges' receipts, then rerun `muse review {g.chapter}`"
            )
    return None
