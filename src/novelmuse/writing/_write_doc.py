"""The `muse write` documents: one pydantic shape for `--json`, the database (write_runs.document) and the
terminal — a run's steps, manifest versions, evidence, drafts and detector reports, with every hash."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..editorial import ReviewRun, StepOutcome
from ..llm import Bill
from ..roles.writer import EvidenceRequest
from ._desk_doc import AcceptDoc
from ._detector import DetectorReport
from ._manifest import Arm, ArmChoiceRef, EvidenceRef

WRITE_SCHEMA_VERSION = 1

#: passed: the detector gate passed (the draft may be applied); held_for_author: still blocked after the repair
#: bound (every draft and report kept); skipped: a model step did not run (no model configured) — not
#: evaluated, never passed; error: a step failed closed; dry_run: context and prompts only, no model call.
WriteStatus = Literal["passed", "held_for_author", "skipped", "error", "dry_run"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ManifestOut(_Doc):
    """One version of the run's manifest: round 0 is the build, each evidence round a new version."""

    round: int
    sha256: str
    previous_sha256: str | None
    path: str  # relative to the book root
    evidence_used: int
    evidence_budget: int


class DraftOut(_Doc):
    """One draft the writer returned (the text itself is in the file and the store)."""

    id: str
    seq: int
    purpose: Literal["draft", "evidence", "repair", "author_revision"]
    evidence_round: int
    repair_round: int
    manifest_sha256: str
    text_sha256: str
    sha256: str  # of the stored draft document
    path: str  # .muse/drafts/<sha256>.json, relative to the book root
    chars: int
    declared_facts: int
    evidence_requests: list[EvidenceRequest]
    call_id: str | None


class ReportOut(_Doc):
    """A detector report on one draft."""

    id: str
    draft_id: str
    sha256: str
    report: DetectorReport
    call_ids: list[str] = []  # the detector's and the extractor's calls on the draft (their receipts)


class UsageOut(_Doc):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0


class PromptOut(_Doc):
    """A message as the writer would receive it (dry run)."""

    role: str
    content: str


class ConstraintOut(_Doc):
    """A hard constraint the gate checks, with the names the text must write (dry run)."""

    id: str
    text: str
    key_names: list[str]
    marker: str


#: auto: an interrupted run of the same chapter, arm, first manifest and writer configuration is resumed;
#: require: fail when there is none; never: always a new run.
ResumeMode = Literal["auto", "require", "never"]


class ResumeOut(_Doc):
    """An interrupted write run taken over: what it had stored, and what was reused of it."""

    write_id: str
    stored_drafts: int
    drafts: int = 0  # drafts reused (their writer calls not made again)
    reports: int = 0  # detector reports reused
    calls: int = 0  # single gate answers reused (a report that was not finished)


class WritePlan(_Doc):
    """What `muse write N` is about to do, before its first call: the bill, and the run it resumes."""

    chapter: int
    arm: Arm
    shadow: bool
    bill: Bill
    resume: ResumeOut | None = None


class WriteDoc(_Doc):
    """`muse write N --json`: one write run of one chapter."""

    schema_version: int = WRITE_SCHEMA_VERSION
    ok: bool
    write_id: str
    run_id: str | None
    chapter: int
    arm: Arm
    arm_choice: ArmChoiceRef | None = None  # how `muse write` chose the arm (promoted, baseline, forced)
    status: WriteStatus
    reason: str | None = None
    error_code: str | None = None
    error: str | None = None
    steps: list[StepOutcome]
    manifests: list[ManifestOut]
    evidence: list[EvidenceRef]
    drafts: list[DraftOut]
    reports: list[ReportOut]
    final_draft_id: str | None = None
    shadow: bool = False  # the chapter had a file when the run began: the draft is a comparison
    bill: Bill | None = None  # what the run could cost at most, shown before its first call
    resumed: ResumeOut | None = None  # the interrupted run this one took over
    accept: AcceptDoc | None = None  # `--apply`: the accept of the final draft (preflight, decision, file)
    applied: str | None = None  # the chapter file written (relative to the book root)
    review: ReviewRun | None = None  # `--review`: the editorial loop on the accepted chapter
    constraints: list[ConstraintOut] = []
    unavailable: list[str] = []  # characters dead or absent as of N−1 (who may not act)
    prompts: list[PromptOut] = []
    usage: UsageOut = UsageOut()


class WriteRunRow(_Doc):
    """One run in `muse write show N`."""

    write_id: str
    run_id: str | None
    arm: str
    status: str
    reason: str | None
    error_code: str | None
    manifest_sha256: str
    chapter_file_sha256: str | None
    final_draft_id: str | None
    applied_at: str | None
    started_at: str
    ended_at: str | None
    document: WriteDoc | None  # None for a run that never ended (interrupted)


class WriteShowDoc(_Doc):
    """`muse write show N --json`: every write run of the chapter, newest last."""

    schema_version: int = WRITE_SCHEMA_VERSION
    ok: bool = True
    chapter: int
    runs: list[WriteRunRow]
