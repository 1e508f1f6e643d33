"""The fine-outline stage behind its entry guard: `muse outline draft N` (seed 003: 第二阶段才用已验签 receipt 启动细纲
real-run; dry-run 豁免).

The guard runs first and a refusal ends the stage before anything is read or called; only an admitted run
drafts — the outliner is called here and nowhere else, so no library path skips the guard — and the draft records
the receipts and the probed outliner model that admitted it. The dry run is exempt: it shows the guard's
verdict for information, renders the exact prompt a real run would send, and calls no model.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from ..book import Book
from ..llm import ModelSession
from ..writing import (
    ADMISSION_LINE,
    Admission,
    OutlineDraftDoc,
    draft_dry_run,
    outline_draft_call,
    prepare_draft,
    skipped_draft,
    store_outline_draft_answer,
)
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
    target = book.config.role_target("outliner")
    admission = Admission(guard.writer_config_sha256, receipts, f"{target[0]}:{target[1]}" if target else "")
    prepared = prepare_draft(book, chapter)
    if target is None:
        draft = skipped_draft(prepared, admission)
    else:  # the one place the outliner is called: here, after the guard admitted the stage
        result = await session.call(outline_draft_call(prepared))
        draft = store_outline_draft_answer(book, prepared, result, admission, session.run_id)
    return OutlineStageDoc(ok=draft.status == "drafted", chapter=chapter, status=draft.status, guard=guard, draft=draft)


_CONFIG = re.compile(r"写手配置 ([0-9a-f]{6,64})")


def outline_admission_problems(
    book: Book, text: str, *, gate_inputs: GateInputRebuilder | str | None = FROM_STORE
) -> list[str]:
    """Whether the admission a drafted outline's header claims (``准入：Gate A 回执 seq N，…（写手配置 …）``) still
    holds when the author accepts it: the writer configuration it names is the book's now, and the stage is admitted
    now — the journal verifies and the latest evaluation of each gate, on real probed models, passed (a failed
    evaluation since revokes the pass that admitted the draft). [] when it holds, or for an outline that claims no
    admission (one the author wrote)."""
    line = next((line for line in text.splitlines() if line.startswith(ADMISSION_LINE)), None)
    if line is None:
        return []
    claimed = _CONFIG.search(line)
    if claimed is None:
        return [f"the header claims an admission without its writer configuration: {line.removeprefix('# ')}"]
    verdict = check_fine_outline_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    if not verdict.writer_config_sha256.startswith(claimed.group(1)):
        return [
            f"drafted under writer configuration {claimed.group(1)}…, and the book's is now "
            f"{verdict.writer_config_sha256[:12]}…: its admission no longer vouches for it — draft it again"
        ]
    return [f"{f.code}: {f.what}" for f in verdict.findings]
