"""`muse write N`: from a confirmed fine outline to a checked draft (seed 003 steps 4–5).

    build the context (round 0) → writer → [evidence round → writer]* (≤ evidence_rounds) →
    detector gate → [repair → detector gate]* (≤ repair_rounds) → passed | held_for_author

This module holds the run's bookkeeping shared by the dry run and the real run; the model-calling loop is in
`_loop`.
"""

from __future__ import annotations

from pathlib import Path

from ..book import Book
from ..editorial import StepOutcome
from ..text import count_chars
from ._build import ContextBuild, build_context
from ._drafts import DraftDoc, begin_write, end_write
from ._evidence import evidence_budget, evidence_used
from ._gate import DetectorGate, gate_for
from ._manifest import Arm, ArmChoiceRef
from ._store import manifests_dir
from ._write_doc import ConstraintOut, DraftOut, ManifestOut, PromptOut, WriteDoc

DRY_RUN = "dry run: no model call"


def manifest_out(book: Book, build: ContextBuild) -> ManifestOut:
    """A manifest version as the run document lists it."""
    path = manifests_dir(book) / f"{build.manifest_sha256}.json"
    return ManifestOut(
        round=build.manifest.round,
        sha256=build.manifest_sha256,
        previous_sha256=build.manifest.previous_sha256,
        path=str(path.relative_to(book.root)),
        evidence_used=evidence_used(build),
        evidence_budget=evidence_budget(build),
    )


def draft_out(draft_id: str, seq: int, doc: DraftDoc, sha: str, call_id: str | None) -> DraftOut:
    """A stored draft as the run document lists it."""
    return DraftOut(
        id=draft_id,
        seq=seq,
        purpose=doc.purpose,
        evidence_round=doc.evidence_round,
        repair_round=doc.repair_round,
        manifest_sha256=doc.manifest_sha256,
        text_sha256=doc.text_sha256,
        sha256=sha,
        path=str(Path(".muse") / "drafts" / f"{sha}.json"),
        chars=count_chars(doc.text),
        declared_facts=len(doc.declared_facts),
        evidence_requests=doc.evidence_requests,
        call_id=call_id,
    )


def describe_gate(gate: DetectorGate) -> tuple[list[ConstraintOut], list[str]]:
    """What the gate will check: each hard constraint with its key names and marker; who may not act."""
    constraints = [
        ConstraintOut(id=s.id, text=s.text, key_names=[k.label for k in s.keys], marker=s.marker)
        for s in gate.hard.specs
    ]
    unavailable = [
        f"{u.name}（{'dead' if u.why == 'dead' else 'absent'} since chapter {u.since}）"
        for u in gate.hard.unavailable.values()
    ]
    return constraints, unavailable


def write_dry_run(book: Book, chapter: int, arm: Arm = "C", *, arm_choice: ArmChoiceRef | None = None) -> WriteDoc:
    """Build chapter `chapter`'s context and the writer's prompt, record the run (status dry_run), call no model;
    `arm_choice` (how `muse write` chose the arm) is recorded in the manifest."""
    build = build_context(book, chapter, arm=arm, arm_choice=arm_choice)
    write_id, _ = begin_write(book, build, status="dry_run")
    constraints, unavailable = describe_gate(gate_for(build))
    doc = WriteDoc(
        ok=True,
        write_id=write_id,
        run_id=None,
        chapter=chapter,
        arm=arm,
        arm_choice=arm_choice,
        status="dry_run",
        reason=DRY_RUN,
        steps=[
            StepOutcome.passed("context", f"manifest {build.manifest_sha256[:12]}"),
            StepOutcome.skipped("write", DRY_RUN),
            StepOutcome.skipped("detector", DRY_RUN),
        ],
        manifests=[manifest_out(book, build)],
        evidence=[],
        drafts=[],
        reports=[],
        constraints=constraints,
        unavailable=unavailable,
        prompts=[PromptOut(role=m.role, content=m.content) for m in build.rendered.messages],
    )
    end_write(book, doc)
    return doc
