"""The writer's context (seed 003 steps 1–3): confirmed fine outlines, the retrieval plan, the deterministic
WriterContext and its manifest, the A/B/C arms of replay.

- `confirm_outline`, `require_confirmed`, `lint_outlines`, `show_outline`: 已确认细纲.
- `prepare_draft`, `outline_draft_call`, `store_outline_draft_answer`, `draft_dry_run`: the fine-outline agent's
  drafts (细纲智能体) — called only by the replay stage behind its entry guard — never confirmed by themselves;
  `reference_coverage`: the fine-outline gates' deterministic lint of a draft against a reference scaffold.
- `build_context(book, N, arm=…)` → `ContextBuild` (WriterContext, Manifest, messages, plan); no model call.
- `save_build` / `verify_context`: the content-addressed manifest under ``.muse/manifests/`` and in the store.
- `ensure_same_frame`: arms A and C may differ only in their selected raw text (ARM_CONTEXT_DIVERGED).
- `evidence_pack`, `gate_chapter`, `judge_files`, `review_and_gate`: the quality gate before delivery (seed 000),
  judged against the writer's evidence pack with the rule layer's hard blocks — `muse judge` and `muse review`.
- The author's desk (seed 003 step 6): `list_drafts`, `show_draft`, `diff_draft`, `accept_draft` (accept_preflight
  → confirm), `revise_draft`, `reject_draft`, `drafts_stats`; `file_history` / `restore_revision` for the
  kept versions of replaced files; `write_and_accept` for `muse write N --apply`.
- `lint_plan`: the plan (大纲 and 设定) checked — volumes, planned foreshadows, characters (`muse plan lint`).
- The plan agent's drafts (大纲+设定智能体): `prepare_plan_draft`, `plan_draft_call`, `store_plan_draft_answer`,
  `plan_dry_run` — a bundle of plan, settings and card files on the desk, written only when the author accepts it.
- A stretch of the book (`muse write A-B`, `--continue`, `--status`): `begin_stretch`, `continue_stretch`,
  `run_stretch`, `stretch_status` — chapter after chapter with the memory kept current, manual or automatic.

Above editorial and judging, below replay.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._accept import AcceptOptions, accept_bill, accept_draft
    from ._budget import MIN_EXCERPT_CHARS, fit_excerpts, keep_suffix, prefix_within
    from ._build import ContextBuild, build_context, context_versions, ensure_same_frame, evidence_reserve
    from ._desk import (
        diff_draft,
        drafts_stats,
        file_history,
        list_drafts,
        reject_draft,
        restore_revision,
        revise_draft,
        short_id,
        show_draft,
    )
    from ._desk_doc import (
        AcceptDoc,
        DecisionOut,
        DeskDraft,
        DraftDiffDoc,
        DraftsDoc,
        DraftShowDoc,
        RejectDoc,
        RestoreDoc,
        ReviseDoc,
        RevisionsDoc,
        StatsDoc,
    )
    from ._detector import DetectorItem, DetectorReport, Figures, bind_report, compute_figures
    from ._drafts import DraftDoc, chinese_numeral, drafts_dir, heading_for
    from ._evidence import MAX_REQUESTS_PER_ROUND, EvidenceRound, answer_requests, evidence_budget, evidence_used
    from ._gate import DetectorGate
    from ._gate_evidence import EVIDENCE_SCHEMA_VERSION, EvidenceItem, EvidencePack, evidence_pack
    from ._hardcheck import HardCheck
    from ._history import write_history
    from ._leak import check_writer_text, generated_text, writer_text_leaks
    from ._loop import repair_items, require_tool_less, write_bill, write_chapter
    from ._manifest import ARMS, MANIFEST_SCHEMA_VERSION, Arm, ArmChoiceRef, EvidenceRef, Manifest
    from ._outline_cover import CoverItem, char_pairs, overlap, reference_coverage
    from ._outline_draft import (
        Admission,
        DraftArm,
        DraftInputs,
        Material,
        OutlineDraftDoc,
        PreparedDraft,
        draft_dry_run,
        draft_yaml,
        outline_draft_call,
        prepare_draft,
        skipped_draft,
        store_outline_draft_answer,
    )
    from ._outlines import (
        ADMISSION_LINE,
        AdmissionCheck,
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
    from ._plan_draft import (
        PLAN_ADMISSION,
        PlanDraftDoc,
        PreparedPlan,
        check_chapters,
        check_plan_files,
        parse_bundle,
        plan_draft_call,
        plan_dry_run,
        plan_files,
        prepare_plan_draft,
        prepare_plan_extend,
        read_premise,
        store_plan_draft_answer,
    )
    from ._plan_lint import PlanLintDoc, lint_plan
    from ._quality_gate import ChapterGate, final_text, gate_chapter, judge_files
    from ._review_run import ReviewGateRun, review_and_gate, write_and_accept
    from ._store import (
        ContextDoc,
        Difference,
        VerifyDoc,
        build_and_save,
        manifests_dir,
        save_build,
        stored_manifest,
        verify_context,
    )
    from ._stretch import (
        StretchChapterOut,
        StretchDoc,
        StretchPlan,
        begin_stretch,
        continue_stretch,
        list_stretches,
        run_stretch,
        stretch_dry_run,
        stretch_status,
    )
    from ._vocab import Vocabulary, vocabulary
    from ._write_doc import (
        WRITE_SCHEMA_VERSION,
        ConstraintOut,
        DraftOut,
        ManifestOut,
        PromptOut,
        ReportOut,
        ResumeOut,
        UsageOut,
        WriteDoc,
        WritePlan,
        WriteRunRow,
        WriteShowDoc,
        WriteStatus,
    )
    from ._writer import write_dry_run

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "ADMISSION_LINE",
    "ARMS",
    "EVIDENCE_SCHEMA_VERSION",
    "MANIFEST_SCHEMA_VERSION",
    "MAX_REQUESTS_PER_ROUND",
    "MIN_EXCERPT_CHARS",
    "PLAN_ADMISSION",
    "WRITE_SCHEMA_VERSION",
    "AcceptDoc",
    "AcceptOptions",
    "Admission",
    "AdmissionCheck",
    "Arm",
    "ArmChoiceRef",
    "ChapterGate",
    "ConfirmResult",
    "Confirmation",
    "ConstraintOut",
    "ContextBuild",
    "ContextDoc",
    "CoverItem",
    "DecisionOut",
    "DeskDraft",
    "DetectorGate",
    "DetectorItem",
    "DetectorReport",
    "Difference",
    "DraftArm",
    "DraftDiffDoc",
    "DraftDoc",
    "DraftInputs",
    "DraftOut",
    "DraftShowDoc",
    "DraftsDoc",
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
    "PlanDraftDoc",
    "PlanLintDoc",
    "PreparedDraft",
    "PreparedPlan",
    "PromptOut",
    "RejectDoc",
    "ReportOut",
    "RestoreDoc",
    "ResumeOut",
    "RetrievalPlan",
    "ReviewGateRun",
    "ReviseDoc",
    "RevisionsDoc",
    "Slot",
    "StatsDoc",
    "StretchChapterOut",
    "StretchDoc",
    "StretchPlan",
    "UsageOut",
    "VerifyDoc",
    "Vocabulary",
    "WriteDoc",
    "WritePlan",
    "WriteRunRow",
    "WriteShowDoc",
    "WriteStatus",
    "accept_bill",
    "accept_draft",
    "answer_requests",
    "begin_stretch",
    "bind_report",
    "build_and_save",
    "build_context",
    "char_pairs",
    "check_chapters",
    "check_plan_files",
    "check_writer_text",
    "chinese_numeral",
    "compute_figures",
    "confirm_outline",
    "confirmation",
    "context_versions",
    "continue_stretch",
    "diff_draft",
    "draft_dry_run",
    "draft_yaml",
    "drafts_dir",
    "drafts_stats",
    "ensure_same_frame",
    "evidence_budget",
    "evidence_pack",
    "evidence_reserve",
    "evidence_used",
    "file_history",
    "final_text",
    "fit_excerpts",
    "gate_chapter",
    "generated_text",
    "heading_for",
    "judge_files",
    "keep_suffix",
    "lint_draft",
    "lint_outlines",
    "lint_plan",
    "list_drafts",
    "list_stretches",
    "manifests_dir",
    "outline_draft_call",
    "overlap",
    "parse_bundle",
    "plan_chapter",
    "plan_draft_call",
    "plan_dry_run",
    "plan_files",
    "prefix_within",
    "prepare_draft",
    "prepare_plan_draft",
    "prepare_plan_extend",
    "read_outline",
    "read_premise",
    "reference_coverage",
    "reject_draft",
    "repair_items",
    "require_confirmed",
    "require_tool_less",
    "restore_revision",
    "review_and_gate",
    "revise_draft",
    "run_stretch",
    "save_build",
    "short_id",
    "show_draft",
    "show_outline",
    "skipped_draft",
    "store_outline_draft_answer",
    "store_plan_draft_answer",
    "stored_manifest",
    "stretch_dry_run",
    "stretch_status",
    "verify_context",
    "vocabulary",
    "write_and_accept",
    "write_bill",
    "write_chapter",
    "write_dry_run",
    "write_history",
    "writer_text_leaks",
]
