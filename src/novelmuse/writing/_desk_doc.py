"""The author's desk documents: one pydantic shape each for `--json`, the terminal and the studio — the drafts a
model (or the author) made, the three decisions on them, the accept preflight, a file's kept versions."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..editorial import StepOutcome
from ..roles.writer import DeclaredFact

DESK_SCHEMA_VERSION = 1

#: chapter: a writer's draft or the author's revision of one; review: the text a `muse review` run made; outline:
#: the fine-outline agent's draft or the author's revision of one; plan: the plan agent's draft of the plan, settings
#: and cards (one bundle of files) or the author's revision of one.
DraftKind = Literal["chapter", "review", "outline", "plan"]
Decision = Literal["accept", "revise", "reject"]
#: manual: the author's command; apply: `--apply` of the run that made the draft (the same preflight);
#: automatic: an automatic run's decision on a draft both gates passed.
DecisionMode = Literal["manual", "automatic", "apply"]
#: The flags that let an accept through a failed preflight check, each recorded in the decision.
Override = Literal["without_gate", "accept_changed_memory", "replace_author_text"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DecisionOut(_Doc):
    """One decision row."""

    id: str
    draft_id: str
    decision: Decision
    mode: DecisionMode
    text_sha256: str
    reason: str = ""
    preflight: list[StepOutcome] = []
    overrides: list[Override] = []
    revision_draft_id: str | None = None  # revise: the author's revision
    revision_sha256: str | None = None
    edit_chars: int | None = None  # revise: character edit distance from the draft to the revision
    file_revision_id: str | None = None  # accept: the kept version of the file it replaced
    run_id: str | None = None
    decided_at: str


class DeskDraft(_Doc):
    """One draft as `muse drafts` lists it."""

    id: str
    short: str  # what to type: `muse drafts accept D4KZ9QX`
    kind: DraftKind
    chapter: int
    origin: str  # draft / evidence / repair / author_revision / review / outline
    write_id: str | None = None  # the write run (chapter drafts)
    run_id: str | None = None  # the model run that made it
    arm: str | None = None
    writer_config_sha256: str | None = None
    status: str  # passed / held_for_author / skipped / failed / superseded / interrupted / unchecked
    final: bool = True  # the draft the run ended with (an intermediate draft was repaired or re-asked)
    chars: int
    text_sha256: str
    revises: str | None = None  # an author revision: the draft it revises
    created_at: str
    decision: DecisionOut | None = None  # the latest decision on it


class DraftsDoc(_Doc):
    """`muse drafts [N] --json`."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    chapter: int | None = None
    drafts: list[DeskDraft]


class DetectorSummary(_Doc):
    """A draft's detector report in brief: its outcome and figures, and the items that block. For an author's
    revision the semantic detector has not run yet (it runs at accept): the constraints only it can verify are
    counted in `awaiting_semantic`, not listed as blocking, and the outcome is that skip — never a pass."""

    report_sha256: str
    outcome: StepOutcome
    coverage: float | None  # None: the outline has no hard constraint (nothing to cover)
    constraints: int
    high_severity: int
    warnings: int
    blocking: list[str]
    awaiting_semantic: int = 0


class DraftShowDoc(_Doc):
    """`muse drafts show ID --json`: the text and what it was checked against."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    draft: DeskDraft
    text: str
    declared_facts: list[DeclaredFact] = []
    detector: DetectorSummary | None = None
    manifest_sha256: str | None = None
    decisions: list[DecisionOut] = []


class DiffSide(_Doc):
    label: str  # 第11回 chapters/0011.md, or the draft's short id
    sha256: str | None  # None: no such file
    text: str


class DraftDiffDoc(_Doc):
    """`muse drafts diff ID --json`: the draft against the current chapter (or another draft)."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    draft: DeskDraft
    old: DiffSide
    new: DiffSide
    identical: bool


class AcceptDoc(_Doc):
    """`muse drafts accept ID --json` (and `--apply`): the preflight, and what was confirmed."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool
    draft: DeskDraft
    status: Literal["accepted", "refused", "not_evaluated", "error"]
    reason: str | None = None
    error_code: str | None = None
    preflight: list[StepOutcome]
    overrides: list[Override] = []
    written: str | None = None  # the file confirmed (relative to the book root; a plan draft: every file, by ", ")
    file_revision_id: str | None = None  # the kept version of what it replaced
    replaced_sha256: str | None = None
    decision: DecisionOut | None = None
    run_id: str | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0


class ReviseDoc(_Doc):
    """`muse drafts revise ID --json`: the author's revision, a new draft, and its deterministic check."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool
    original: DeskDraft
    revision: DeskDraft
    decision: DecisionOut
    edit_chars: int
    edit_share: float
    check: list[StepOutcome]  # the deterministic checks on the edited text (detector part, lint for outlines)
    dropped_declarations: list[str] = []  # declared facts whose quote the edit removed


class RejectDoc(_Doc):
    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    draft: DeskDraft
    decision: DecisionOut


class StatsRow(_Doc):
    """The author's decisions on one writer configuration and arm."""

    writer_config_sha256: str | None
    arm: str | None
    drafts: int  # final drafts made
    accepted: int
    revised: int
    rejected: int
    undecided: int
    automatic: int  # of the accepts, made by an automatic run
    mean_edit_share: float | None  # over revised drafts: edit distance / draft length
    edit_shares: list[float]


class StatsDoc(_Doc):
    """`muse drafts stats --json`: the one measure of the writer that comes from the author, not a model."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    rows: list[StatsRow]


class RevisionOut(_Doc):
    """One kept version of an author's file."""

    id: str
    path: str
    kind: str
    sha256: str | None  # the bytes kept (None: the file did not exist then)
    size: int | None
    replaced_by_sha256: str | None
    command: str
    note: str
    created_at: str


class RevisionsDoc(_Doc):
    """`muse revisions N|FILE --json`: the file now and every version replaced, oldest first."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    target: str  # as given: a chapter number or a path
    path: str
    current_sha256: str | None
    revisions: list[RevisionOut]


class RestoreDoc(_Doc):
    """`muse revisions restore N|FILE REV --json`."""

    schema_version: int = DESK_SCHEMA_VERSION
    ok: bool = True
    target: str
    path: str
    restored: RevisionOut
    kept: RevisionOut  # the text that was current, kept before the restore
