"""Chapter length against book.toml [chapters] min/max, counted with `text.count_chars` and nothing else."""

from __future__ import annotations

from ._effective import LengthLimits
from ._report import LengthOut

#: Length outside the limits is an error: the author set them in book.toml as a hard constraint (seed 003's
#: detector gate repairs it), unlike fatigue words, which are only counted for reviewers.
LENGTH_SEVERITY = "error"
LENGTH_ORIGIN = "book.toml [chapters]"


PROLOGUE_REASON = "chapter 0 is the prologue (序): length limits apply to chapters only"


def length_text(out: LengthOut) -> str:
    """The length outcome in words, the same everywhere (`muse review`'s rule step, its terminal summary):
    ``length 7241 > max_chars 6000``, ``length 5000 within max_chars 6000``, or why it was not checked."""
    if out.outcome == "skipped":
        return f"length not checked ({out.reason})"
    over = [f"> max_chars {out.max_chars}"] if out.max_chars is not None and out.chars > out.max_chars else []
    under = [f"< min_chars {out.min_chars}"] if out.min_chars is not None and out.chars < out.min_chars else []
    if over or under:
        return f"length {out.chars} " + ", ".join(under + over)
    bounds = [f"{k} {v}" for k, v in (("min_chars", out.min_chars), ("max_chars", out.max_chars)) if v is not None]
    return f"length {out.chars} within " + ", ".join(bounds)


def check_length(
    chars: int, limits: LengthLimits, *, prologue: bool = False
) -> tuple[LengthOut, list[tuple[str, int]]]:
    """The length outcome for a chapter of `chars` characters, and the violated bounds as (target, limit).

    The prologue (chapter 0, text before the first heading) is not a chapter: its length is skipped, visibly.
    """
    if prologue:
        return LengthOut(chars=chars, min_chars=None, max_chars=None, outcome="skipped", reason=PROLOGUE_REASON), []
    if not limits.configured:
        return (
            LengthOut(
                chars=chars,
                min_chars=None,
                max_chars=None,
                outcome="skipped",
                reason="no min_chars/max_chars in book.toml [chapters]",
            ),
            [],
        )
    violated: list[tuple[str, int]] = []
    if limits.min_chars is not None and chars < limits.min_chars:
        violated.append(("min_chars", limits.min_chars))
    if limits.max_chars is not None and chars > limits.max_chars:
        violated.append(("max_chars", limits.max_chars))
    out = LengthOut(
        chars=chars,
        min_chars=limits.min_chars,
        max_chars=limits.max_chars,
        outcome="failed" if violated else "passed",
    )
    return out, violated
