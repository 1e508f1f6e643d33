"""The writer's context (seed 003 steps 1–3): confirmed fine outlines, the retrieval plan, the deterministic
WriterContext and its manifest, the A/B/C arms of replay.

- `confirm_outline`, `require_confirmed`, `lint_outlines`, `show_outline`: 已确认细纲.
- `build_context(book, N, arm=…)` → `ContextBuild` (WriterContext, Manifest, messages, plan); no model call.
- `save_build` / `verify_context`: the content-addressed manifest under ``.muse/manifests/`` and in the store.
- `ensure_same_frame`: arms A and C may differ only in their selected raw text (ARM_CONTEXT_DIVERGED).

Above editorial and judging, below replay.
"""

from ._budget import MIN_EXCERPT_CHARS, fit_excerpts, keep_suffix, prefix_within
from ._build import ContextBuild, build_context, ensure_same_frame, evidence_reserve
from ._leak import check_writer_text, generated_text, writer_text_leaks
from ._manifest import ARMS, MANIFEST_SCHEMA_VERSION, Arm, Manifest
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
    lint_outlines,
    read_outline,
    require_confirmed,
    show_outline,
)
from ._plan import EntityPlan, ForeshadowPlan, RetrievalPlan, Slot, plan_chapter
from ._store import ContextDoc, Difference, VerifyDoc, build_and_save, manifests_dir, save_build, verify_context

__all__ = [
    "ARMS",
    "MANIFEST_SCHEMA_VERSION",
    "MIN_EXCERPT_CHARS",
    "Arm",
    "ConfirmResult",
    "Confirmation",
    "ContextBuild",
    "ContextDoc",
    "Difference",
    "EntityPlan",
    "ForeshadowPlan",
    "LintProblem",
    "Manifest",
    "OutlineItemDoc",
    "OutlineLint",
    "OutlineLintDoc",
    "OutlineShowDoc",
    "RetrievalPlan",
    "Slot",
    "VerifyDoc",
    "build_and_save",
    "build_context",
    "check_writer_text",
    "confirm_outline",
    "confirmation",
    "ensure_same_frame",
    "evidence_reserve",
    "fit_excerpts",
    "generated_text",
    "keep_suffix",
    "lint_outlines",
    "manifests_dir",
    "plan_chapter",
    "prefix_within",
    "read_outline",
    "require_confirmed",
    "save_build",
    "show_outline",
    "verify_context",
    "writer_text_leaks",
]
