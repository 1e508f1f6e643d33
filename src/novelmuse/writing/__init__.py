"""The writer's context (seed 003 steps 1–3): confirmed fine outlines, the retrieval plan, the deterministic
WriterContext and its manifest, the A/B/C arms of replay.

- `confirm_outline`, `require_confirmed`, `lint_outlines`, `show_outline`: 已确认细纲.
- `prepare_draft`, `draft_outline`, `draft_dry_run`: the fine-outline agent's drafts (细纲智能体), never confirmed.
- `build_context(book, N, arm=…)` → `ContextBuild` (WriterContext, Manifest, messages, plan); no model call.
- `save_build` / `verify_context`: the content-addressed manifest under ``.muse/manifests/`` and in the store.
- `ensure_same_frame`: arms A and C may differ only in their selected raw text (ARM_CONTEXT_DIVERGED).
- `evidence_pack`, `gate_chapter`, `judge_files`, `review_and_gate`: the quality gate before delivery (seed 000),
  judged against the writer's evidence pack with the rule layer's hard blocks — `muse judge` and `muse review`.

Above editorial and judging, below replay.
"""

from ._budget import MIN_EXCERPT_CHARS, fit_excerpts, keep_suffix, prefix_within
from ._build import ContextBuild, build_context, context_versions, ensure_same_frame, evidence_reserve
from ._detector import DetectorItem, DetectorReport, Figures, bind_report, compute_figures
from ._drafts import DraftDoc, apply_draft, chinese_numeral, drafts_dir, heading_for
from ._evidence import MAX_REQUESTS_PER_ROUND, EvidenceRound, answer_requests, evidence_budget, evidence_used
from ._gate import DetectorGate
from ._gate_evidence import EVIDENCE_SCHEMA_VERSION, EvidenceItem, EvidencePack, evidence_pack
from ._hardcheck import HardCheck
from ._leak import check_writer_text, generated_text, writer_text_leaks
from ._loop import repair_items, require_tool_less, write_chapter
from ._manifest import ARMS, MANIFEST_SCHEMA_VERSION, Arm, ArmChoiceRef, EvidenceRef, Manifest
from ._outline_draft import (
    Admission,
    DraftInputs,
    Material,
    OutlineDraftDoc,
    PreparedDraft,
    draft_dry_run,
    draft_outline,
    draft_yaml,
    prepare_draft,
)
from ._outlines import (
    Confirmation,
    ConfirmResult,
    LintProblem,
    OutlineItemDoc,
    OutlineLint,
    OutlineLintDoc,
    OutlineShowDoc,
    confirm_outline,
    confirmation,
    lint_draft,
    lint_outlines,
    read_outline,
    require_confirmed,
    show_outline,
)
from ._plan import EntityPlan, ForeshadowPlan, RetrievalPlan, Slot, plan_chapter
from ._quality_gate import ChapterGate, ReviewGateRun, final_text, gate_chapter, judge_files, review_and_gate
from ._store import ContextDoc, Difference, VerifyDoc, build_and_save, manifests_dir, save_build, verify_context
from ._vocab import Vocabulary, vocabulary
from ._write_doc import (
    WRITE_SCHEMA_VERSION,
    ConstraintOut,
    DraftOut,
    ManifestOut,
    PromptOut,
    ReportOut,
    UsageOut,
    WriteDoc,
    WriteRunRow,
    WriteShowDoc,
    WriteStatus,
)
from ._writer import write_dry_run, write_history

__all__ = [
    "ARMS",
    "EVIDENCE_SCHEMA_VERSION",
    "MANIFEST_SCHEMA_VERSION",
    "MAX_REQUESTS_PER_ROUND",
    "MIN_EXCERPT_CHARS",
    "WRITE_SCHEMA_VERSION",
    "Admission",
    "Arm",
    "ArmChoiceRef",
    "ChapterGate",
    "ConfirmResult",
    "Confirmation",
    "ConstraintOut",
    "ContextBuild",
    "ContextDoc",
    "DetectorGate",
    "DetectorItem",
    "DetectorReport",
    "Difference",
    "DraftDoc",
    "DraftInputs",
    "DraftOut",
    "EntityPlan",
    "EvidenceItem",
    "EvidencePack",
    "EvidenceRef",
    "EvidenceRound",
    "Figures",
    "ForeshadowPlan",
    "HardCheck",
    "LintProblem",
    "Manifest",
    "ManifestOut",
    "Material",
    "OutlineDraftDoc",
    "OutlineItemDoc",
    "OutlineLint",
    "OutlineLintDoc",
    "OutlineShowDoc",
    "PreparedDraft",
    "PromptOut",
    "ReportOut",
    "RetrievalPlan",
    "ReviewGateRun",
    "Slot",
    "UsageOut",
    "VerifyDoc",
    "Vocabulary",
    "WriteDoc",
    "WriteRunRow",
    "WriteShowDoc",
    "WriteStatus",
    "answer_requests",
    "apply_draft",
    "bind_report",
    "build_and_save",
    "build_context",
    "check_writer_text",
    "chinese_numeral",
    "compute_figures",
    "confirm_outline",
    "confirmation",
    "context_versions",
    "draft_dry_run",
    "draft_outline",
    "draft_yaml",
    "drafts_dir",
    "ensure_same_frame",
    "evidence_budget",
    "evidence_pack",
    "evidence_reserve",
    "evidence_used",
    "final_text",
    "fit_excerpts",
    "gate_chapter",
    "generated_text",
    "heading_for",
    "judge_files",
    "keep_suffix",
    "lint_draft",
    "lint_outlines",
    "manifests_dir",
    "plan_chapter",
    "prefix_within",
    "prepare_draft",
    "read_outline",
    "repair_items",
    "require_confirmed",
    "require_tool_less",
    "review_and_gate",
    "save_build",
    "show_outline",
    "verify_context",
    "vocabulary",
    "write_chapter",
    "write_dry_run",
    "write_history",
    "writer_text_leaks",
]
