"""The plan stage behind its entry guard: `muse plan draft --premise …` (the third agent, 大纲+设定智能体).

Bottom-up, each agent is let loose only once the one below it passed its gates: the writer's receipts admit the
fine-outline agent (`_outline_stage`), and the fine-outline agent's own receipts — Gate A and Gate B of the current
outliner configuration (`_outliner`) — admit this one. The guard (`check_plan_entry`) runs first and a refusal ends
the stage before anything is called; only an admitted run drafts — the planner is called here and nowhere else — and
the draft records the receipts and the probed planner model that admitted it. The dry run is exempt: it shows the
guard's verdict for information and renders the exact prompt a real run would send, calling no model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from ..book import Book
from ..llm import Bill, ModelSession, total_bill
from ..writing import (
    PlanDraftDoc,
    PreparedPlan,
    check_chapters,
    plan_draft_call,
    plan_dry_run,
    prepare_plan_draft,
    prepare_plan_extend,
    store_plan_draft_answer,
)
from ._builder import FROM_STORE, rebuilder_or_store
from ._guard import EntryGuard, GateInputRebuilder, check_plan_entry, guard_refusal

STAGE_SCHEMA = 1


class PlanStageDoc(BaseModel):
    """`muse plan draft --json`: the guard's verdict and, unless refused, the draft (or the dry run)."""

    schema_version: int = STAGE_SCHEMA
    ok: bool
    status: Literal["drafted", "dry_run", "refused", "skipped"]
    guard: EntryGuard
    draft: PlanDraftDoc | None
    error: dict[str, Any] | None = None  # the refusal, as every --json error is shaped


def _prepare(book: Book, premise: str | None, chapters: int) -> PreparedPlan:
    """A whole-book draft from `premise`, or (None) the plan's next `chapters` chapters (`muse plan extend`)."""
    if premise is None:
        return prepare_plan_extend(book, chapters=chapters)
    return prepare_plan_draft(book, premise, chapters=chapters)


def plan_draft_dry_run(
    book: Book, premise: str | None, *, chapters: int, gate_inputs: GateInputRebuilder | str | None = FROM_STORE
) -> PlanStageDoc:
    """The dry run of `muse plan draft` (or, `premise` None, `muse plan extend`): the guard's verdict (not
    enforced) and the prompt; no model call."""
    guard = check_plan_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    draft = plan_dry_run(_prepare(book, premise, chapters))
    return PlanStageDoc(ok=True, status="dry_run", guard=guard, draft=draft)


async def draft_plan(
    book: Book,
    session: ModelSession,
    premise: str | None,
    *,
    chapters: int,
    gate_inputs: GateInputRebuilder | str | None = FROM_STORE,
    on_bill: Callable[[Bill], None] | None = None,
) -> PlanStageDoc:
    """Draft the book's plan from `premise` — or, `premise` None, its next `chapters` chapters from the accepted
    plan and the story so far (`muse plan extend`) — if the entry guard admits the stage; otherwise `refused`
    (nothing called). `on_bill` hears the most the call may cost before it is made (and may refuse it by raising)."""
    check_chapters(chapters)  # bad input is refused as such, before the guard
    guard = check_plan_entry(book, gate_inputs=rebuilder_or_store(book, gate_inputs))
    if not guard.admitted:
        error = guard_refusal(guard).to_json()
        return PlanStageDoc(ok=False, status="refused", guard=guard, draft=None, error=error)
    prepared = _prepare(book, premise, chapters)
    target = book.config.role_target("planner")
    if target is None:
        skipped = plan_dry_run(prepared).model_copy(
            update={"status": "skipped", "reason": "no model configured for role planner", "messages": None}
        )
        return PlanStageDoc(ok=False, status="skipped", guard=guard, draft=skipped)
    call = plan_draft_call(prepared)
    if on_bill is not None:
        on_bill(total_bill([session.bill(call)]))
    admission = {
        "outliner_config_sha256": guard.outliner_config_sha256,
        "receipts": {gate: seq for gate, seq in guard.receipts.items() if seq is not None},
        "planner": f"{target[0]}:{target[1]}",
    }
    result = await session.call(call)  # the one place the planner is called: here, after the guard admitted it
    draft = store_plan_draft_answer(book, prepared, result, admission, session.run_id)
    return PlanStageDoc(ok=True, status="drafted", guard=guard, draft=draft)
