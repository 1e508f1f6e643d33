"""The writer's context (seed 003 steps 1–3): confirmed fine outlines, the retrieval plan, the deterministic
WriterContext and its manifest, the A/B/C arms of replay.

Above editorial and judging, below replay. No model is called here.
"""

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

__all__ = [
    "ConfirmResult",
    "Confirmation",
    "LintProblem",
    "OutlineItemDoc",
    "OutlineLint",
    "OutlineLintDoc",
    "OutlineShowDoc",
    "confirm_outline",
    "confirmation",
    "lint_outlines",
    "read_outline",
    "require_confirmed",
    "show_outline",
]
