"""The review document: one pydantic shape for `muse review --json`, the database and the terminal."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm import Bill
from ..rules import LengthOut
from ._outcomes import StepOutcome

SCHEMA_VERSION = 1

ChapterStatus = Literal["finalized", "finalized_with_issues", "not_reviewed", "error"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ForbiddenHit(_Doc):
    phrase: str
    count: int
    paragraphs: list[int]


class FatigueHit(_Doc):
    phrase: str
    limit: int
    actual: int


class RulesSummary(_Doc):
    """What the deterministic rules found in the text the loop started from, and what remains at the end."""

    ruleset_sha256: str
    forbidden: list[ForbiddenHit]
    fatigue: list[FatigueHit]
    forbidden_remaining: list[ForbiddenHit]  # in the resulting text
    preferences_injected: bool  # the book has preferences and the writer was called with them
    length: LengthOut | None = None  # the text reviewed, exactly as `muse check` reports it (None: older records)
    length_final: LengthOut | None = None  # the resulting text


class MemorySummary(_Doc):
    available: bool
    note: str
    card_states: int
    active_foreshadows: int
    previous_ending_chars: int


class IssueOut(_Doc):
    severity: Literal["critical", "major", "minor"]
    type: str
    quote: str
    start: int
    end: int
    paragraph: int
    explanation: str
    fix_hint: str
    open: bool


class ConsistencyRound(_Doc):
    """One consistency review: round 0 is the first review, 1.. the re-reviews after repairs."""

    round: int
    text_sha256: str
    issues: list[IssueOut]
    blocking: int
    model_passed: bool | None
    model_disagrees: bool


class DimOut(_Doc):
    name: str
    score: int
    evidence: str
    start: int
    end: int
    neutral: bool


class EditorRound(_Doc):
    round: int
    text_sha256: str
    overall: int
    dims: list[DimOut]
    computed_verdict: Literal["rewrite", "polish", "accept"]
    model_verdict: Literal["rewrite", "polish", "accept"]
    agrees: bool
    notes: list[str]


class ArbiterOut(_Doc):
    round: int
    decision: Literal["keep_rewriting", "accept_and_continue"]
    reason: str


class RepairOut(_Doc):
    """One change the loop made to the text."""

    step: str
    kind: Literal["forbidden_rewrite", "consistency_repair", "polish", "rewrite"]
    paragraphs: list[int] | None  # None = whole chapter rewritten
    before_sha256: str
    after_sha256: str


class Disagreements(_Doc):
    reviewer_pass_flag: int
    editor_verdict: int


class RoleUsage(_Doc):
    calls: int
    attempts: int
    input_tokens: int
    output_tokens: int
    cost: float | None


class UsageOut(_Doc):
    calls: int
    attempts: int
    input_tokens: int
    output_tokens: int
    cost: float | None  # None = at least one attempt's cost is unknown (never shown as 0)
    by_role: dict[str, RoleUsage]


class RevisionOut(_Doc):
    """The loop's resulting chapter file: in table `revisions` and as a file under `.muse/revisions/`."""

    id: str
    sha256: str
    path: str  # relative to the book root, e.g. .muse/revisions/0003.rev_….md
    base_path: str  # the original it was made from, byte-exact (.muse/revisions/0003.rev_….base.md)
    applied: bool


class RejectedOut(_Doc):
    """A fact-card item the deterministic validation rejected (FORESHADOW_PLANT_CAP, …): shown, never dropped."""

    code: str
    item: str  # e.g. "foreshadows[3]"
    detail: str


class FactsOut(_Doc):
    """The chapter's fact card (事实卡) the `facts` step extracted, or found already current for the file."""

    fact_card_id: str
    chapter_sha256: str  # the chapter file's bytes the card is bound to
    receipt_id: str | None  # the accepted attempt's receipt
    call_id: str | None
    run_id: str | None  # the run whose extractor call produced the card
    extracted: bool  # True: extracted by this review; False: a current card existed (not extracted again)
    accepted: list[str]
    rejected: list[RejectedOut]
    input_tokens: int  # of the extraction by this review (0 when not extracted again)
    output_tokens: int
    cost: float | None


class PreflightOut(_Doc):
    """What a `muse review` run sends first, estimated before any request (nothing here is a measured figure).

    The chapters a model reviews now (not those unchanged since their review) and, summed over their first
    requests (the consistency review, the editor, a forbidden-phrase rewrite): an upper bound of the input tokens
    (the budget's estimator: UTF-8 bytes, about 3× the real count for Chinese), the output caps, the worst-case
    cost (None when a model has no price). Repairs, rewrites and corrections come on top, within the [review] and
    [calls] bounds. `unknown_context`: "provider:model" whose context window is unknown, so not checked."""

    chapters: list[int]
    requests: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    unknown_context: list[str]
    notes: list[str]
    bill: Bill | None = None  # the whole worst case: every call the loop may make, its repairs and corrections


class ChapterReview(_Doc):
    """Everything one review of one chapter did: the `muse review --json` document per chapter."""

    schema_version: int = SCHEMA_VERSION
    record_id: str
    chapter: int
    title: str
    chapter_sha256: str
    config_sha256: str
    status: ChapterStatus
    error_code: str | None
    resumed: bool = False
    steps: list[StepOutcome]
    rules: RulesSummary
    memory: MemorySummary
    consistency: list[ConsistencyRound]
    editor: list[EditorRound]
    arbiter: list[ArbiterOut]
    repairs: list[RepairOut]
    disagreements: Disagreements
    open_issues: int
    #: what is left open, one line each (handed to the author: 带病定稿留给人); len(open_items) == open_issues
    open_items: list[str] = []
    result_sha256: str
    revision: RevisionOut | None
    facts: FactsOut | None = None  # set when the `facts` step passed or failed
    usage: UsageOut
