"""The 2+1 blind judge panel.

Judge 1 sees the blind order; judge 2 the strictly reversed candidate order (dimensions, assertions and
constraints keep the rubric's order — they are policy, not candidates). If any candidate × dimension
differs by more than 0.5, exactly one fresh third judge runs, seeing the blind order rotated by one
(the first candidate moved to the end: a third order for three or more candidates). After it, a cell
whose three scores include a pair within 0.5 gets the median of three; if any cell has no such pair the
whole item is `invalid_unstable` (no scores, no winner, not in gate statistics). A judge that fails
closed never shrinks the panel: the item becomes `invalid`. For fine_outline_replay a difference above
0.5 only adds a stability warning (no third judge).

Judges run one after the other (each a fresh call with no shared context): the third depends on the
first two, and sequential calls keep scripted test runs deterministic.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from ..llm import ModelCallFailed, ModelSession, Receipt, Violation
from ..roles.judge import JudgeReport
from ..store import new_id
from ..text import count_chars, sha256_json
from ._arith import combine_three, combine_two, disagreements
from ._blind import BlindInput, BlindItem, judge_call
from ._contract import ContractResult, check_report
from ._leak import LeakGuard
from ._reports import (
    CandidateRef,
    CellScore,
    CellVerdict,
    JudgeEntry,
    JudgeScore,
    JudgeVerdict,
    PanelReport,
    QuoteSpan,
    RubricRef,
    rank,
)
from ._rubrics import Rubric, as_fraction

JUDGE_ROLE = "judge"
#: The arms of a replay experiment (seed 003 A/B/C): never shown to a judge outside a candidate's own text.
REPLAY_ARMS = ("A", "B", "C")


@dataclass
class JudgeRecord:
    """What one judge call produced: a contract-valid report, or the code it failed closed with."""

    slot: int
    blind: BlindInput
    prompt_sha256: str
    report: JudgeReport | None = None
    contract: ContractResult | None = None
    error_code: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    receipts: list[Receipt] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.report is not None and self.contract is not None and self.contract.ok

    def scores(self) -> dict[tuple[str, str], Fraction]:
        assert self.report is not None
        return {(s.candidateId, s.dimensionId): as_fraction(s.score) for s in self.report.scores}

    def verdicts(self) -> dict[tuple[str, str], str]:
        assert self.report is not None
        return {(v.candidateId, v.targetId): v.verdict for v in self.report.verdicts}


#: One judge: (slot, the blind input in that judge's order) → its record.
JudgeFn = Callable[[int, BlindInput], Awaitable[JudgeRecord]]


def session_judge(session: ModelSession, rubric: Rubric, guard: LeakGuard | None = None) -> JudgeFn:
    """A judge that calls the model layer (role `judge`) with the report contract as its check.

    The contract runs inside the call policy (a rejected draft gets a correction with the exact reasons,
    at most `calls.max_attempts` requests in all) and once more on the final value here, so the offsets
    stored come from our own check, never from the model. With `guard`, a reason naming a hidden token
    breaks the contract too (a report shows only random candidate ids before unblinding).
    """

    async def judge(slot: int, blind: BlindInput) -> JudgeRecord:
        checked: list[ContractResult] = []

        def contract(report: JudgeReport) -> list[Violation]:
            checked.append(check_report(report, blind, rubric, guard=guard))
            return [Violation(code=f.code, detail=f.detail) for f in checked[-1].findings]

        call = judge_call(blind, contract)
        record = JudgeRecord(slot=slot, blind=blind, prompt_sha256=call.ref.prompt_sha256)
        try:
            result = await session.call(call)
        except ModelCallFailed as exc:
            record.error_code = exc.code
            record.diagnostics = {**exc.diagnostics, "slot": slot}
            if checked:  # the last draft that parsed: its array counts (never its content)
                record.diagnostics["contract"] = checked[-1].count_summary()
            record.call_id = exc.call_id or None
            record.receipts = list(exc.receipts)
            return record
        record.report = result.value
        record.contract = check_report(result.value, blind, rubric, guard=guard)
        record.call_id = result.call_id
        record.receipts = list(result.receipts)
        if not record.contract.ok:  # the policy accepted what our contract rejects: never trust it
            record.error_code = "JUDGE_CONTRACT_RECHECK_FAILED"
            record.diagnostics = {"violations": record.contract.code_counts()}
        return record

    return judge


def check_item_leaks(item: BlindItem, guard: LeakGuard) -> None:
    """Leak-check every input any judge of this item could see (all three orders); raises JUDGE_INPUT_LEAK.

    Two checks: every registered hidden token anywhere in what a judge reads; and the arm labels — replay's A/B/C, the
    item's own arms and the caller's labels — in every judge-visible field other than the candidate text (seed
    000: 报告在去盲前只保留随机候选 ID，禁止出现 A/B/C), where a letter can be an ordinary word of the candidate.
    Each check runs on the decoded text of every field (where a token at the start of a line, after a tab or a
    quote stands as the judge reads it) and on the encoded messages as a second net: in JSON a line break is the
    two characters ``\\n``, whose ``n`` would hide an ASCII token after it from a whole-word match."""
    where = f"blind input of {item.blind.itemRef}"
    texts = field_texts(item.blind)
    for order in panel_orders(item.blind.candidate_ids).values():
        texts += [m.content for m in judge_call(item.blind.in_order(order)).messages]
    guard.check(texts, where)
    labels = LeakGuard(arm_names=[*REPLAY_ARMS, *item.arms, *guard.arm_names])
    outside = item.blind.outside_candidates()
    labels.check(
        [*field_texts(outside), *(m.content for m in judge_call(outside).messages)],
        f"{where} (outside the candidate texts)",
    )


def field_texts(blind: BlindInput) -> list[str]:
    """Every string a judge reads in `blind`, decoded: each field's value as it is, not as JSON encodes it."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            if value:
                found.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(blind.model_dump(mode="json"))
    return found


def panel_verdict(given: Sequence[str]) -> Literal["pass", "fail", "unknown", "split"]:
    """The panel's verdict from its judges': unanimous pass or fail; any unknown → unknown; otherwise split."""
    if all(v == "pass" for v in given):
        return "pass"
    if all(v == "fail" for v in given):
        return "fail"
    return "unknown" if "unknown" in given else "split"


def panel_orders(order: Sequence[str]) -> dict[int, list[str]]:
    """Candidate order per judge slot: 1 as given, 2 strictly reversed, 3 rotated by one."""
    first = list(order)
    return {1: first, 2: first[::-1], 3: first[1:] + first[:1]}


def _entry(rec: JudgeRecord, order: list[str]) -> JudgeEntry:
    final = rec.receipts[-1] if rec.receipts else None
    entry = JudgeEntry(
        slot=rec.slot,
        order=order,
        outcome="ok" if rec.ok else "failed",
        error_code=None if rec.ok else rec.error_code,
        diagnostics=rec.diagnostics,
        role=JUDGE_ROLE,
        provider=final.provider if final else None,
        provider_kind=final.provider_kind if final else None,
        model=(final.resolved_model or final.requested_model) if final else None,
        call_id=rec.call_id,
        receipt_ids=[r.id for r in rec.receipts],
        final_receipt_id=final.id if final is not None and rec.ok else None,
        attempts=len(rec.receipts),
        prompt_sha256=rec.prompt_sha256,
        input_sha256=rec.blind.sha256(),
    )
    if rec.ok and rec.report is not None and rec.contract is not None:
        entry.report_sha256 = sha256_json(rec.report.model_dump(mode="json"))
        entry.scores = [
            JudgeScore(
                candidate_id=s.candidateId,
                dimension_id=s.dimensionId,
                score=s.score,
                reason=s.reason,
                quote=s.candidateQuote,
            )
            for s in rec.report.scores
        ]
        entry.verdicts = [
            JudgeVerdict(candidate_id=v.candidateId, target_id=v.targetId, verdict=v.verdict)
            for v in rec.report.verdicts
        ]
        entry.rankings = {r.dimensionId: list(r.order) for r in rec.report.rankings}
        entry.quotes = [
            QuoteSpan(candidate_id=c, dimension_id=d, start=a, end=b) for (c, d), (a, b) in rec.contract.quotes.items()
        ]
    return entry


async def run_panel(
    item: BlindItem,
    rubric: Rubric,
    judge: JudgeFn,
    *,
    guard: LeakGuard,
    run_id: str,
    panel_id: str | None = None,
    on_judge: Callable[[int, str], None] | None = None,
) -> tuple[PanelReport, list[JudgeRecord]]:
    """Run the 2+1 panel on one item and return its sealed report (and the judge records).

    `on_judge(slot, state)` is told when a judge starts ("running") and ends ("ok" / its error code),
    for progress display.

    Every input a judge of this item could see (all three orders) passes the leak check before the first
    request; a leak raises JUDGE_INPUT_LEAK and nothing is sent.
    """
    blind = item.blind
    orders = panel_orders(blind.candidate_ids)
    inputs = {slot: blind.in_order(order) for slot, order in orders.items()}
    check_item_leaks(item, guard)
    records: list[JudgeRecord] = []

    async def run(slot: int) -> JudgeRecord:
        if on_judge is not None:
            on_judge(slot, "running")
        rec = await judge(slot, inputs[slot])
        records.append(rec)
        if on_judge is not None:
            on_judge(slot, "ok" if rec.ok else rec.error_code or "failed")
        return rec

    base = PanelReport(
        panel_id=panel_id or new_id("jp_"),
        run_id=run_id,
        item_ref=blind.itemRef,
        profile=rubric.profile,
        rubric=RubricRef(id=rubric.id, version=rubric.version, sha256=rubric.sha256),
        scene_type=blind.policy.sceneType,
        status="invalid",
        third_judge=False,
        disagreements=0,
        unstable_cells=0,
        candidates=[
            CandidateRef(
                candidate_id=c.candidateId, sha256=item.candidate_sha256[c.candidateId], chars=count_chars(c.text)
            )
            for c in blind.candidates
        ],
        judges=[],
        arm_map_sha256=item.arm_map.sha256,
    )

    def finish(**updates: Any) -> tuple[PanelReport, list[JudgeRecord]]:
        judges = [_entry(r, orders[r.slot]) for r in records]
        return base.model_copy(update={"judges": judges, **updates}).seal(), records

    first = await run(1)
    if not first.ok:
        return finish(status="invalid", error_code=first.error_code)
    second = await run(2)
    if not second.ok:
        return finish(status="invalid", error_code=second.error_code)
    s1, s2 = first.scores(), second.scores()
    differing = disagreements(s1, s2)
    cells = [(c, d) for c in blind.candidate_ids for d in blind.dimension_ids]
    warnings: list[str] = []
    third: JudgeRecord | None = None
    if differing and rubric.panel.disagreement == "stability_warning":
        warnings.append(f"STABILITY_WARNING: {len(differing)} of {len(cells)} scores differ by more than 0.5")
    if differing and rubric.panel.disagreement == "third_judge":
        third = await run(3)
        if not third.ok:
            return finish(status="invalid", error_code=third.error_code, third_judge=True, disagreements=len(differing))
        combined, unstable = combine_three(s1, s2, third.scores())
        if unstable:
            return finish(
                status="invalid_unstable",
                error_code="JUDGE_UNSTABLE",
                third_judge=True,
                disagreements=len(differing),
                unstable_cells=len(unstable),
            )
        method = "median_of_three"
    else:
        combined = combine_two(s1, s2)
        method = "mean_of_two"
    judged = [first, second] + ([third] if third is not None else [])
    scores = [
        CellScore(
            candidate_id=c,
            dimension_id=d,
            score=float(combined[(c, d)]),
            judge_scores=[float(r.scores()[(c, d)]) for r in judged],
            method=method,  # type: ignore[arg-type]
        )
        for c, d in cells
    ]
    rankings = []
    for d in blind.dimension_ids:
        r = rank({c: combined[(c, d)] for c in blind.candidate_ids}, blind.candidate_ids)
        rankings.append(r.model_copy(update={"dimension_id": d}))
    verdicts = []
    for c in blind.candidate_ids:
        for t in blind.target_ids:
            given = [r.verdicts()[(c, t)] for r in judged]
            verdicts.append(
                CellVerdict(candidate_id=c, target_id=t, verdict=panel_verdict(given), judge_verdicts=given)
            )
    return finish(
        status="stable",
        error_code=None,
        third_judge=third is not None,
        disagreements=len(differing),
        warnings=warnings,
        scores=scores,
        rankings=rankings,
        verdicts=verdicts,
    )
