"""The fine-outline stage behind its entry guard: `muse outline draft N` (seed 003: 第二阶段才用已验签 receipt 启动细纲
real-run; dry-run 豁免).

The guard runs first and a refusal ends the stage before anything is read or called; only an admitted run
drafts — the outliner is called here and nowhere else, so no library path skips the guard — and the draft records
the receipts and the probed outliner model that admitted it. The dry run is exempt: it shows the guard's
verdict for information, renders the exact prompt a real run would send, and calls no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from ..book import Book
from ..llm import Bill, ModelSession, run_spend, total_bill
from ..writing import (
    ADMISSION_LINE,
    PLAN_ADMISSION,
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


class OutlineRangeDoc(BaseModel):
    """`muse outline draft A-B --json`: the guard's verdict and, unless refused, one stage document per chapter."""

    schema_version: int = STAGE_SCHEMA
    ok: bool
    chapters: list[int]
    status: Literal["drafted", "refused", "skipped"]
    guard: EntryGuard
    drafts: list[OutlineStageDoc]
    error: dict[str, Any] | None = None
    run_id: str | None = None  # the model run of the drafts: what `muse cost --run` reports
    spent: dict[str, Any] | None = None  # its calls, tokens and cost


async def draft_fine_outline(
    book: Book,
    session: ModelSession,
    chapter: int,
    *,
    gate_inputs: GateInputRebuilder | str | None = FROM_STORE,
    on_bill: Callable[[Bill], None] | None = None,
) -> OutlineStageDoc:
    """Draft chapter `chapter`'s fine outline if the entry guard admits the stage; otherwise `refused` (nothing
    read, nothing called). `on_bill` hears the most the call may cost before it is made (and may refuse it)."""
    out = await draft_fine_outlines(book, session, [chapter], gate_inputs=gate_inputs, on_bill=on_bill)
    if out.status == "refused":
        return OutlineStageDoc(
            ok=False, chapter=chapter, status="refused", guard=out.guard, draft=None, error=out.error
        )
    return out.drafts[0]


async def draft_fine_outlines(
    book: Book,
    session: ModelSession,
    chapters: list[int],
    *,
    gate_inputs: GateInputRebuilder | str | None = FROM_STORE,
    on_bill: Callable[[Bill], None] | None = None,
) -> OutlineRangeDoc:
    """Draft the fine outlines of `chapters`, in order, if the entry guard admits the stage (`refused` otherwise:
    nothing read, nothing called). Every chapter's input is prepared before the first call — a chapter the plan or
    the memory cannot give refuses the whole range — and the bill covers every call. Each chapter is drafted from
    the plan and the memory as of its N−1 as they are: a draft of the range is not an outline until accepted, so
    accept them in order and draft the next part again when an earlier one changed what follows."""
    guard = check_fine_outline_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    if not guard.admitted:
        error = guard_refusal(guard).to_json()
        return OutlineRangeDoc(ok=False, chapters=chapters, status="refused", guard=guard, drafts=[], error=error)
    receipts = {gate: seq for gate, seq in guard.receipts.items() if seq is not None}
    target = book.config.role_target("outliner")
    admission = Admission(guard.writer_config_sha256, receipts, f"{target[0]}:{target[1]}" if target else "")
    prepared = [prepare_draft(book, chapter) for chapter in chapters]
    if target is not None and on_bill is not None:
        on_bill(total_bill([session.bill(outline_draft_call(p)) for p in prepared]))
    drafts: list[OutlineStageDoc] = []
    for chapter, one in zip(chapters, prepared, strict=True):
        if target is None:
            draft = skipped_draft(one, admission)
        else:  # the one place the outliner is called: here, after the guard admitted the stage
            result = await session.call(outline_draft_call(one))
            draft = store_outline_draft_answer(book, one, result, admission, session.run_id)
        drafts.append(
            OutlineStageDoc(
                ok=draft.status == "drafted", chapter=chapter, status=draft.status, guard=guard, draft=draft
            )
        )
    status: Literal["drafted", "skipped"] = "skipped" if target is None else "drafted"
    spent = run_spend(book.db, session.run_id).spend if session.started else None
    return OutlineRangeDoc(
        ok=status == "drafted",
        chapters=chapters,
        status=status,
        guard=guard,
        drafts=drafts,
        run_id=session.run_id if session.started else None,
        spent=spent,
    )


_CONFIG = re.compile(r"写手配置 ([0-9a-f]{6,64})")
_OUTLINER_CONFIG = re.compile(r"细纲配置 ([0-9a-f]{6,64})")


def outline_admission_problems(
    book: Book, text: str, *, gate_inputs: GateInputRebuilder | str | None = FROM_STORE
) -> list[str]:
    """Whether the admission a drafted outline's header claims (``准入：Gate A 回执 seq N，…（写手配置 …）``) — or a
    plan draft's (its bundle header's ``准入：…（细纲配置 …）``, against the plan stage's guard) — still holds when the
    author accepts it: the writer configuration it names is the book's now, and the stage is admitted
    now — the journal verifies and the latest evaluation of each gate, on real probed models, passed (a failed
    evaluation since revokes the pass that admitted the draft). [] when it holds, or for an outline that claims no
    admission (one the author wrote)."""
    plan = next((line for line in text.splitlines() if line.startswith(PLAN_ADMISSION)), None)
    if plan is not None and text.startswith("<!--"):
        return _plan_admission_problems(book, plan, gate_inputs)
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


def _plan_admission_problems(book: Book, line: str, gate_inputs: GateInputRebuilder | str | None) -> list[str]:
    """Whether the admission a plan draft's header claims (``准入：Gate A 回执 seq N，…（细纲配置 …）``) still holds:
    the outliner configuration it names is the book's now, and the plan stage is admitted now."""
    from ._guard import check_plan_entry

    claimed = _OUTLINER_CONFIG.search(line)
    if claimed is None:
        return [f"the header claims an admission without its outliner configuration: {line}"]
    verdict = check_plan_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    now = verdict.outliner_config_sha256 or ""
    if not now.startswith(claimed.group(1)):
        return [
            f"drafted under outliner configuration {claimed.group(1)}…, and the book's is now {now[:12]}…: its "
            "admission no longer vouches for it — draft it again"
        ]
    return [f"{f.code}: {f.what}" for f in verdict.findings]
