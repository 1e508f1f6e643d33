"""The fine-outline stage behind its entry guard: `muse outline draft N` (seed 003: 第二阶段才用已验签 receipt 启动细纲
real-run; dry-run 豁免).

The guard runs first and a refusal ends the stage before anything is read or called; only an admitted run
drafts, and the draft records the receipts that admitted it. The dry run is exempt: it shows the guard's
verdict for information, renders the exact prompt a real run would send, and calls no model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ..book import Book
from ..llm import ModelSession
from ..writing import Admission, OutlineDraftDoc, draft_dry_run, draft_outline
from ._builder import FROM_STORE, rebuilder_or_store
from ._guard import EntryGuard, GateInputRebuilder, check_fine_outline_entry, guard_refusal

STAGE_SCHEMA = 1


class OutlineStageDoc(BaseModel):
    """`muse outline draft --json`: the guard's verdict and, unless refused, the draft (or the dry run)."""

    schema_version: int = STAGE_SCHEMA
    ok: bool
    chapter: int
    status: Literal["drafted", "dry_run", "refused", "skipped"]
    guard: EntryGuard
    draft: OutlineDraftDoc | None
    error: dict[str, Any] | None = None  # the refusal, as every --json error is shaped


def outline_draft_dry_run(
    book: Book, chapter: int, *, gate_inputs: GateInputRebuilder | str | None = FROM_STORE
) -> OutlineStageDoc:
    """The dry run of `muse outline draft N`: the guard's verdict (not enforced) and the prompt; no model call."""
    guard = check_fine_outline_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    return OutlineStageDoc(ok=True, chapter=chapter, status="dry_run", guard=guard, draft=draft_dry_run(book, chapter))


async def draft_fine_outline(
    book: Book, session: ModelSession, chapter: int, *, gate_inputs: GateInputRebuilder | str | None = FROM_STORE
) -> OutlineStageDoc:
    """Draft chapter `chapter`'s fine outline if the entry guard admits the stage; otherwise `refused` (nothing
    read, nothing called)."""
    guard = check_fine_outline_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    if not guard.admitted:
        error = guard_refusal(guard).to_json()
        return OutlineStageDoc(ok=False, chapter=chapter, status="refused", guard=guard, draft=None, error=error)
    receipts = {gate: seq for gate, seq in guard.receipts.items() if seq is not None}
    draft = await draft_outline(book, session, chapter, Admission(guard.writer_config_sha256, receipts))
    return OutlineStageDoc(ok=draft.status == "drafted", chapter=chapter, status=draft.status, guard=guard, draft=draft)
