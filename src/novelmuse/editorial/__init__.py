"""The editorial loop (seed 004): consistency review with bounded repair, the 7-dimension editor, the arbiter.

Hard rules run in the loop (forbidden phrases → targeted paragraph rewrite; fatigue → editor reference;
preferences → writer prompt). Every step ends as exactly one `StepOutcome`.
"""

from ._outcomes import NO_MODEL, StepOutcome
from ._splice import assert_only_changed, changed_paragraphs, paragraph_diff, splice_paragraphs
from ._verdict import Verdict, compute_verdict

__all__ = [
    "NO_MODEL",
    "StepOutcome",
    "Verdict",
    "assert_only_changed",
    "changed_paragraphs",
    "compute_verdict",
    "paragraph_diff",
    "splice_paragraphs",
]
