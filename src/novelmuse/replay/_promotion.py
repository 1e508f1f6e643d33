"""Promotion (seed 003: A/C 核心比较): which context arm `muse write` writes with.

Arm C (card-located readback) is the candidate and arm A (generic retrieval) the baseline of Gate B. Until the
journal verifies and the latest evaluations of Gate A and Gate B for the current writer configuration passed in one
replay run on real models, with their receipts — whose arm is the gate spec's candidate — the writer uses the
baseline, A, and says why; then it uses C and names the Gate B receipt. Gate inputs are re-hashed only as the
store rebuilds them, as for the fine-outline entry guard (the same evaluation, `receipt_verdict`), by the store's
GateInputBuilder (a hand-written gate input never promotes). `--arm A|C` forces either; the choice records
that it was forced and what promotion would have chosen.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..book import Book
from ..errors import InputError
from ..writing import ArmChoiceRef
from ._builder import FROM_STORE, rebuilder_or_store
from ._guard import EntryGuard, GateInputRebuilder, receipt_verdict
from ._spec import Arm

WRITE_ARMS: tuple[Arm, ...] = ("A", "C")


class ArmChoice(BaseModel):
    """The arm `muse write` uses, whether it was forced, why, and the evidence (the Gate B verdict)."""

    arm: Arm
    forced: bool
    promoted: Arm  # what promotion chose (equal to `arm` unless forced)
    reason: str
    receipt_seq: int | None  # the Gate B receipt that promoted the candidate arm
    evidence: EntryGuard

    def record(self) -> ArmChoiceRef:
        """What the write run's manifest records of the choice."""
        return ArmChoiceRef(
            forced=self.forced,
            promoted=self.promoted,
            receipt_seq=self.receipt_seq,
            writer_config_sha256=self.evidence.writer_config_sha256,
            reason=self.reason,
        )


def promoted_arm(
    book: Book, *, force: str | None = None, gate_inputs: GateInputRebuilder | str | None = FROM_STORE
) -> ArmChoice:
    """The arm to write with (see the module doc); `force` (A or C) overrides promotion, recorded as forced. Gate
    inputs are rebuilt by the store's GateInputBuilder unless `gate_inputs` names another rebuilder (or None)."""
    evidence = receipt_verdict(book, "promotion", ("A", "B"), rebuilder_or_store(book, gate_inputs))
    config = evidence.writer_config
    seq = evidence.receipts.get("B")
    if evidence.admitted and seq is not None:
        promoted, why = config.arm, f"promoted by Gate B receipt seq {seq}"
    else:
        promoted = config.baseline_arm
        missing = "; ".join(f.line() for f in evidence.findings)
        why = f"the baseline — arm {config.arm} is not promoted: {missing}"
    if force is None:
        return ArmChoice(arm=promoted, forced=False, promoted=promoted, reason=why, receipt_seq=seq, evidence=evidence)
    arm = force.strip().upper()
    if arm not in WRITE_ARMS:
        raise InputError(
            "USAGE",
            f"--arm {force!r} is not a writing arm",
            "--arm",
            "use C (card-located readback) or A (generic retrieval); arm B (card-only) is a diagnostic of "
            "`muse context`",
        )
    forced: Arm = "A" if arm == "A" else "C"
    reason = f"forced by --arm (promotion would use arm {promoted}, {why})"
    return ArmChoice(arm=forced, forced=True, promoted=promoted, reason=reason, receipt_seq=seq, evidence=evidence)
