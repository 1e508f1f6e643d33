"""The quality gate before delivery (seed 000 C6: 候选交付用户前评分), where editorial and judging meet.

Seed 000 keeps the three parts apart: the rule layer computes the hard blocks (`rules.hard_blocks`), blind judges
score against the writer's evidence pack (`evidence_pack`), the adjudicator decides (`judging`). Writing sits above
both editorial and judging, so the orchestration lives here:

- `judge_files` — `muse judge`: a blind panel on candidate files; for quality_gate the chapter's evidence pack and
  each candidate's hard blocks are added to the request (`--chapter N` is then required: canon needs a chapter).
- `gate_chapter` — one chapter's final text through the gate: hard blocks, evidence pack, a one-candidate panel,
  adjudication; the decision is stored (judging) with a key over everything that decides it, so a rerun with the
  same text, pack, rules, rubric, prompt and judge model finds it instead of judging again.
- `gate_bill` — what one chapter's gate may cost at most, before anything is sent.

`muse review` (seed 004's loop, then this gate on each final text) is `_review_run.review_and_gate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..book import Book, parse_chapter_file, read_chapter_file
from ..editorial import NO_MODEL, ChapterReview
from ..errors import FailedClosed, InputError
from ..judging import (
    Candidate,
    GateDecision,
    JudgeFiles,
    JudgeOutcome,
    JudgeRequest,
    LeakGuard,
    gate_rows,
    hidden_card_ids,
    judge_item,
    load_rubric,
    panel_bill,
    request_from_files,
)
from ..llm import ModelSession, RoleBill
from ..roles.judge import TASKS as JUDGE_TASKS
from ..rules import HardBlockReport, hard_blocks, load_book_rules
from ..text import sha256_hex, sha256_json
from ._accept import JUDGE_ROLE
from ._gate_evidence import EvidencePack, evidence_pack

GATE_PROFILE = "quality_gate"
AFTER_ERROR = "an earlier quality gate failed closed"

GateStatus = Literal["passed", "failed", "error", "skipped"]


class ChapterGate(BaseModel):
    """How one chapter's quality gate ended: exactly one of passed / failed / error(code) / skipped(reason)."""

    model_config = ConfigDict(extra="forbid")

    chapter: int
    status: GateStatus
    reason: str | None = None  # skipped
    code: str | None = None  # error
    resumed: bool = False  # a decision stored for the same inputs was found; nothing was judged again
    candidate_sha256: str | None = None
    gate_key: str | None = None
    decision: GateDecision | None = None
    hard_blocks: HardBlockReport | None = None
    evidence: dict[str, object] | None = None  # the pack without its texts (source, note, sha256, item_count)
    judge: JudgeOutcome | None = None  # the panel, when it ran in this run

    @property
    def label(self) -> str:
        """``passed`` / ``failed`` / ``skipped(reason)`` / ``error(CODE)`` — never a skip that reads as a pass."""
        if self.status == "skipped":
            return f"skipped({self.reason})"
        return f"error({self.code})" if self.status == "error" else self.status


def _with_chapter_evidence(book: Book, request: JudgeRequest, chapter: int | None) -> JudgeRequest:
    """A quality_gate request gets chapter N's evidence pack and, per candidate, the rule layer's hard blocks."""
    chapter = _required_chapter(
        chapter,
        "the quality gate judges candidates against a chapter's canon (its evidence pack) and computes their hard "
        "blocks against its rules, outline and prior chapters",
    )
    pack, outline = evidence_pack(book, chapter, [c.text for c in request.candidates])
    rules = load_book_rules(book).effective
    blocks = {
        c.arm: hard_blocks(c.text, rules, prior_texts=pack.prior_texts, outline=outline) for c in request.candidates
    }
    return replace(
        request,
        outline=request.outline or outline,
        hard_blocks=blocks,
        context=pack.context_items(),
        evidence=pack.summary(),
        chapter=chapter,
    )


async def judge_files(
    book: Book, session: ModelSession, files: JudgeFiles, *, on_judge: Callable[[int, str], None] | None = None
) -> JudgeOutcome:
    """`muse judge`: the blind panel on candidate files, in the session the entry point opened (see the module
    docstring); a quality_gate item is judged against chapter `files.chapter`'s evidence with computed hard blocks."""
    request = request_from_files(book, files)
    rubric = load_rubric(files.profile)
    if rubric.hard_blocks:
        request = _with_chapter_evidence(book, request, files.chapter)
    if rubric.frozen_snapshot:
        chapter = _required_chapter(files.chapter, f"{rubric.profile} judges against a frozen snapshot as of N−1")
        future = [read_chapter_file(n, p).body for n, p in book.chapter_paths().items() if n >= chapter]
        request = replace(request, chapter=chapter, future_texts=future)
    return await judge_item(book, session, request, on_judge=on_judge)


def _required_chapter(chapter: int | None, why: str) -> int:
    if chapter is None:
        raise InputError(
            "JUDGE_CHAPTER_REQUIRED",
            f"{why}, and no chapter was given",
            "--chapter",
            "name the chapter the candidates are for, e.g. --chapter 12",
        )
    return chapter


def _gate_key(book: Book, text: str, pack: EvidencePack, blocks: HardBlockReport) -> str:
    """Everything that decides a chapter's gate: the text, the evidence, the hard blocks (with the rules, the
    meta-text list and the outline they applied), the rubric, the judge prompt, the judge model and call bound."""
    target = book.config.role_target(JUDGE_ROLE)
    return sha256_json(
        {
            "text": sha256_hex(text),
            "evidence": pack.sha256,
            "hard_blocks": blocks.model_dump(mode="json"),
            "rubric": load_rubric(GATE_PROFILE).sha256,
            "prompt": JUDGE_TASKS[GATE_PROFILE].ref.prompt_sha256,
            "judge": list(target) if target else None,
            "max_attempts": book.config.calls.max_attempts,
        }
    )


def _stored(book: Book, key: str, base: ChapterGate) -> ChapterGate | None:
    """The decision stored for these exact inputs (passed or failed; an error is judged again), if any."""
    rows = [r for r in gate_rows(book.db, key=key) if r.outcome in ("passed", "failed")]
    if not rows:
        return None
    row = rows[-1]
    decision = GateDecision(
        candidate_id=row.candidate_id,
        outcome=row.outcome,  # type: ignore[arg-type]
        code=row.code,
        reasons=row.reasons,
        hard_blocks=row.hard_blocks,
        record_id=row.id,
    )
    return base.model_copy(update={"status": row.outcome, "resumed": True, "decision": decision})


@dataclass(frozen=True)
class _Prepared:
    """A chapter's gate inputs: what decides it (`base`, keyed) and the panel request."""

    base: ChapterGate
    request: JudgeRequest


def _prepare(book: Book, chapter: int, text: str) -> _Prepared:
    pack, outline = evidence_pack(book, chapter, [text])
    blocks = hard_blocks(text, load_book_rules(book).effective, prior_texts=pack.prior_texts, outline=outline)
    key = _gate_key(book, text, pack, blocks)
    base = ChapterGate(
        chapter=chapter,
        status="error",
        candidate_sha256=sha256_hex(text),
        gate_key=key,
        hard_blocks=blocks,
        evidence=pack.brief(),
    )
    request = JudgeRequest(
        profile=GATE_PROFILE,
        candidates=[Candidate("A", text)],
        item_id=f"gate-{chapter}-{sha256_hex(text)[:16]}",
        outline=outline,
        guard=LeakGuard(card_ids=hidden_card_ids(book)),
        hard_blocks={"A": blocks},
        context=pack.context_items(),
        evidence=pack.summary(),
        sources={"A": f"chapter {chapter}: the review's final text"},
        chapter=chapter,
        origin="review",
        record_key=key,
    )
    return _Prepared(base, request)


def gate_bill(book: Book, session: ModelSession, chapter: int, text: str) -> list[RoleBill]:
    """The most chapter `chapter`'s gate on `text` may cost (the judge panel); [] when no judge model is configured
    or a decision on exactly these inputs is stored (it is reused, nothing is sent)."""
    if not session.is_configured(JUDGE_ROLE):
        return []
    prepared = _prepare(book, chapter, text)
    if _stored(book, prepared.request.record_key or "", prepared.base) is not None:
        return []
    return panel_bill(book, session, prepared.request)


async def gate_chapter(
    book: Book, session: ModelSession, chapter: int, text: str, *, resume: bool = True
) -> ChapterGate:
    """Chapter `chapter`'s final `text` through the quality gate (see the module docstring)."""
    if not session.is_configured(JUDGE_ROLE):
        return ChapterGate(chapter=chapter, status="skipped", reason=NO_MODEL, candidate_sha256=sha256_hex(text))
    prepared = _prepare(book, chapter, text)
    base = prepared.base
    if resume and (found := _stored(book, base.gate_key or "", base)) is not None:
        return found
    try:
        judged = await judge_item(book, session, prepared.request)
    except FailedClosed as exc:  # a leak refused or the vault failed: the gate failed closed (bad input: exit 2)
        return base.model_copy(update={"code": exc.code})
    decision = judged.gate[0] if judged.gate else None
    if decision is None or decision.outcome == "error":
        code = (decision.code if decision else None) or judged.reason or "JUDGE_INVALID"
        return base.model_copy(update={"code": code, "decision": decision, "judge": judged})
    return base.model_copy(update={"status": decision.outcome, "decision": decision, "judge": judged})


def final_text(book: Book, doc: ChapterReview) -> str:
    """The text a review finalised: its stored revision, or the chapter file it reviewed (unchanged since)."""
    if doc.revision is not None:
        path = book.root / doc.revision.path
        return parse_chapter_file(doc.chapter, path, path.read_bytes()).body
    chapter = book.read_chapter(doc.chapter)
    if chapter.sha256 != doc.chapter_sha256:
        raise InputError(
            "FILE_CHANGED_ON_DISK",
            f"chapter {doc.chapter} changed while it was reviewed; its quality gate would judge another text",
            str(chapter.path),
            f"rerun `muse review {doc.chapter}`",
        )
    return chapter.body
