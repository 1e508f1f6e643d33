"""The 2+1 panel end to end through the model layer with scripted judges (no network)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from novelmuse.errors import FailedClosed
from novelmuse.judging import (
    BlindInput,
    Candidate,
    JudgeOutcome,
    JudgeRequest,
    LeakGuard,
    Target,
    judge_item,
    open_arm_map,
)
from novelmuse.llm import ModelSession, list_receipts, tasks_used
from novelmuse.roles import correction as correction_for
from novelmuse.roles.judge import TASKS as JUDGE_TASKS

from ._helpers import corpus_candidates, good_report
from .conftest import Panel, output


def run(panel: Panel, **kw: Any) -> JudgeOutcome:
    request = JudgeRequest(
        profile=panel.profile,
        candidates=panel.candidates,
        item_id=panel.item_id,
        seed=panel.seed,
        **kw,
    )

    async def go() -> JudgeOutcome:
        async with ModelSession.open(panel.book, run_kind="judge") as session:
            return await judge_item(panel.book, session, request)

    return asyncio.run(go())


def scores_by_id(table: dict[str, float], default: float = 4.0) -> Callable[[BlindInput], dict[str, Any]]:
    """A judge giving fixed scores per candidate id (any dimension)."""
    return lambda blind: good_report(blind, lambda c, d, i: table.get(c, default))


def first_seen(high: float, low: float) -> Callable[[BlindInput], dict[str, Any]]:
    """A position-biased judge: whatever candidate it sees first gets `high`, the rest `low`."""
    return lambda blind: good_report(blind, lambda c, d, i: high if i == 0 else low)


def test_second_judge_sees_the_exact_reverse_and_a_fresh_context(make_panel: Callable[..., Panel]) -> None:
    cands = corpus_candidates(3)
    panel = make_panel(cands, [[output(scores_by_id({}))], [output(scores_by_id({}))]])
    doc = run(panel)
    assert doc.outcome == "stable" and doc.report is not None and not doc.report.third_judge
    first, second = panel.seen_inputs()
    assert second.candidates == list(reversed(first.candidates))
    assert second.model_dump(exclude={"candidates"}) == first.model_dump(exclude={"candidates"})
    req1, req2 = panel.requests()
    assert len(req1["messages"]) == len(req2["messages"]) == 2  # no shared context: system + user only
    assert req1["messages"][0] == req2["messages"][0]
    assert [j.order for j in doc.report.judges] == [first.candidate_ids, second.candidate_ids]
    assert doc.report.judges[1].order == list(reversed(doc.report.judges[0].order))


def _two_candidate_panel(make_panel: Callable[..., Panel], j1: float, j2: float, j3: float | None) -> Panel:
    cands = corpus_candidates(2)
    panel = make_panel(cands, None)
    target = panel.item.blind.candidate_ids[0]
    slots = [[output(scores_by_id({target: j1}))], [output(scores_by_id({target: j2}))]]
    slots.append([output(scores_by_id({target: j3 if j3 is not None else 4.0}))])
    return make_panel(cands, slots)


def test_a_difference_of_exactly_half_a_point_runs_no_third_judge(make_panel: Callable[..., Panel]) -> None:
    panel = _two_candidate_panel(make_panel, 4.0, 4.5, None)
    doc = run(panel)
    assert doc.report is not None
    assert doc.outcome == "stable" and not doc.report.third_judge and doc.report.disagreements == 0
    assert len(list_receipts(panel.book.db)) == 2
    target = panel.item.blind.candidate_ids[0]
    cell = next(s for s in doc.report.scores if s.candidate_id == target)
    assert cell.score == 4.25 and cell.method == "mean_of_two" and cell.judge_scores == [4.0, 4.5]


def test_a_difference_of_one_point_runs_exactly_one_third_judge(make_panel: Callable[..., Panel]) -> None:
    panel = _two_candidate_panel(make_panel, 3.0, 4.0, 3.5)
    doc = run(panel)
    assert doc.report is not None and doc.outcome == "stable"
    assert doc.report.third_judge and len(doc.report.judges) == 3
    assert len(list_receipts(panel.book.db)) == 3
    target = panel.item.blind.candidate_ids[0]
    cell = next(s for s in doc.report.scores if s.candidate_id == target)
    assert cell.score == 3.5 and cell.method == "median_of_three" and cell.judge_scores == [3.0, 4.0, 3.5]
    # judge 3 sees the blind order rotated by one
    third = panel.seen_inputs()[2]
    first = panel.seen_inputs()[0]
    assert third.candidate_ids == first.candidate_ids[1:] + first.candidate_ids[:1]


def test_third_judge_within_half_of_one_judge_gives_the_median(make_panel: Callable[..., Panel]) -> None:
    doc = run(_two_candidate_panel(make_panel, 2.0, 4.0, 4.5))
    assert doc.outcome == "stable" and doc.report is not None
    assert sorted(s.score for s in doc.report.scores) == [4.0] * 8 + [4.0] * 8


def test_no_pair_within_half_a_point_makes_the_item_invalid_unstable(make_panel: Callable[..., Panel]) -> None:
    panel = _two_candidate_panel(make_panel, 2.0, 4.0, 3.0)  # 2, 3, 4: every pair differs by ≥ 1
    doc = run(panel)
    assert doc.outcome == "invalid_unstable" and doc.report is not None
    assert doc.report.scores == [] and doc.report.rankings == [] and doc.report.verdicts == []
    assert doc.report.unstable_cells == 8 and doc.lessons == []
    row = panel.book.db.execute("SELECT status, third_judge FROM judge_panels").fetchone()
    assert tuple(row) == ("invalid_unstable", 1)


def test_a_leaking_input_is_refused_before_any_request(make_panel: Callable[..., Panel]) -> None:
    cands = [Candidate("A", corpus_candidates(1)[0].text + "此法乃卡片证据策略所得。")]
    panel = make_panel(cands, [[output(scores_by_id({}))], [output(scores_by_id({}))]])
    with pytest.raises(FailedClosed) as exc:
        run(panel, guard=LeakGuard(strategy_names=["卡片证据策略"]))
    assert exc.value.code == "JUDGE_INPUT_LEAK"
    assert panel.book.db.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0
    assert panel.book.db.execute("SELECT count(*) FROM judge_panels").fetchone()[0] == 0
    assert not (panel.book.vault_dir / "raw").exists() or not any((panel.book.vault_dir / "raw").rglob("*"))


@pytest.mark.parametrize("before", ["\n", "\t", "\r\n", "“", '"'])
@pytest.mark.parametrize(
    "token", [("card_ids", "guan-yu"), ("secrets", "run-7f3a9c"), ("secrets", "seed1234"), ("strategy_names", "cards")]
)
def test_an_ascii_token_after_a_line_break_tab_or_quote_is_found_where_json_would_hide_it(
    make_panel: Callable[..., Panel], before: str, token: tuple[str, str]
) -> None:
    """In the encoded message a line break is the two characters `\\n`: a whole-word match there sees `nguan-yu`.
    The guard checks every field decoded, as the judge reads it."""
    kind, value = token
    text = corpus_candidates(1)[0].text + before + value + " 引兵来迎。"
    assert LeakGuard(**{kind: [value]}).findings(text)  # type: ignore[arg-type]
    if before.isspace():  # the escapes JSON writes as a backslash and a letter
        assert not LeakGuard(**{kind: [value]}).findings(json.dumps(text, ensure_ascii=False))  # type: ignore[arg-type]
    panel = make_panel([Candidate("A", text)], [[output(scores_by_id({}))], [output(scores_by_id({}))]])
    with pytest.raises(FailedClosed) as exc:
        run(panel, guard=LeakGuard(**{kind: [value]}))  # type: ignore[arg-type]
    assert exc.value.code == "JUDGE_INPUT_LEAK" and value not in exc.value.what
    assert panel.book.db.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0


def _bad_quote(kind: str) -> Callable[[BlindInput], dict[str, Any]]:
    def make(blind: BlindInput) -> dict[str, Any]:
        report = good_report(blind)
        if kind == "missing":
            report["scores"][0]["candidateQuote"] = "此句从未在候选正文里出现过呢"  # type: ignore[index]
        else:
            report["scores"][0]["candidateQuote"] = "玄德曰：「善。」"  # type: ignore[index]  # three times in the text
        return report

    return make


@pytest.mark.parametrize("kind", ["missing", "not_unique"])
def test_a_bad_quote_gets_corrections_then_fails_closed_after_three_calls(
    make_panel: Callable[..., Panel], kind: str
) -> None:
    text = "玄德曰：「善。」" * 3 + corpus_candidates(1)[0].text
    panel = make_panel([Candidate("A", text)], [[output(_bad_quote(kind))] * 3, [output(scores_by_id({}))]])
    doc = run(panel)
    assert doc.outcome == "invalid" and doc.report is not None
    judge1 = doc.report.judges[0]
    assert judge1.outcome == "failed" and judge1.attempts == 3 and len(doc.report.judges) == 1
    receipts = list_receipts(panel.book.db)
    assert len(receipts) == 3  # judge 2 never ran: a failed judge never shrinks the panel, the item is invalid
    requests = panel.requests()
    # attempts 2 and 3 carry the draft and the exact reason (a correction)
    assert len(requests[1]["messages"]) > 2 and len(requests[2]["messages"]) > 2
    code = "CONTRACT_QUOTE_NOT_FOUND" if kind == "missing" else "CONTRACT_QUOTE_NOT_UNIQUE"
    assert code in requests[1]["messages"][-1]["content"] and code in requests[2]["messages"][-1]["content"]
    assert judge1.error_code == code and judge1.diagnostics["codes"] == {code: 3}
    assert doc.report.scores == [] and doc.lessons == []
    diag = judge1.diagnostics
    assert diag["slot"] == 1 and diag["attempts"] == 3
    assert diag["contract"]["scores"] == {"expected": 8, "entries": 8, "missing": 0, "duplicate": 0, "out_of_range": 0}
    assert "玄德" not in json.dumps(diag, ensure_ascii=False)  # codes and counts only, never content
    assert judge1.final_receipt_id is None


def test_a_correction_that_fixes_the_quote_is_accepted(make_panel: Callable[..., Panel]) -> None:
    cands = corpus_candidates(1)
    panel = make_panel(cands, [[output(_bad_quote("missing")), output(scores_by_id({}))], [output(scores_by_id({}))]])
    doc = run(panel)
    assert doc.outcome == "stable" and doc.report is not None
    assert [j.attempts for j in doc.report.judges] == [2, 1]
    for j in doc.report.judges:
        assert j.provider_kind == "scripted" and j.model == "scripted-model-1" and len(j.receipt_ids) == j.attempts
        assert len(j.quotes) == 8
        assert j.final_receipt_id == j.receipt_ids[-1]


def test_a_first_position_biased_judge_is_exposed(make_panel: Callable[..., Panel]) -> None:
    cands = corpus_candidates(3)
    biased = output(first_seen(5.0, 3.0))
    panel = make_panel(cands, [[biased], [biased], [biased]])
    doc = run(panel)
    assert doc.report is not None and doc.reliability is not None
    assert doc.report.third_judge and doc.report.disagreements == 2 * 8
    # Each candidate got a 5 only from the judge that saw it first: the median removes the bias entirely.
    assert doc.outcome == "stable"
    assert {s.score for s in doc.report.scores} == {3.0}
    assert all(set(r.ranks.values()) == {1} for r in doc.report.rankings)  # no winner emerges
    rel = doc.reliability
    assert rel.third_judge_rate == 1.0 and rel.mean_abs_diff == pytest.approx(2 * 16 / 24)
    assert rel.alpha_interval is not None and rel.alpha_interval < 0


def test_the_report_binds_hashes_and_unblinds_only_after_the_panel(make_panel: Callable[..., Panel]) -> None:
    cands = corpus_candidates(2)
    panel = make_panel(
        cands,
        [[output(scores_by_id({}))], [output(scores_by_id({}))]],
        assertions=[Target("a1", "有人物出场")],
        constraints=[Target("h1", "不得出现现代词汇")],
    )
    doc = run(panel, assertions=[Target("a1", "有人物出场")], constraints=[Target("h1", "不得出现现代词汇")])
    report = doc.report
    assert report is not None and report.verify()
    assert report.rubric.sha256 == panel.item.blind.policy.rubricSha256
    assert {c.sha256 for c in report.candidates} == set(panel.item.candidate_sha256.values())
    assert report.arm_map_sha256 == panel.item.arm_map.sha256
    dumped = report.model_dump_json()
    assert '"A"' not in dumped and '"B"' not in dumped  # only random ids before unblinding
    assert doc.unblinded == panel.item.arm_map.open(panel.item.arm_map.sha256)
    assert sorted(doc.unblinded.values()) == ["A", "B"]
    assert [v.verdict for v in report.verdicts] == ["pass"] * 4
    for j in report.judges:
        assert len(j.input_sha256) == 64 and j.report_sha256 and j.receipt_ids and j.role == "judge"
        for q in j.quotes:
            text = next(c.text for c in panel.item.blind.candidates if c.candidateId == q.candidate_id)
            assert 0 <= q.start < q.end <= len(text)
    receipts = {r.id: r for r in list_receipts(panel.book.db)}
    stored = panel.book.db.execute("SELECT slot, call_id, receipt_ids, input_sha256 FROM judge_reports ORDER BY slot")
    for j, (slot, call_id, receipt_ids, input_sha) in zip(report.judges, stored, strict=True):
        assert (slot, call_id, json.loads(receipt_ids), input_sha) == (j.slot, j.call_id, j.receipt_ids, j.input_sha256)
        assert all(receipts[r].call_id == j.call_id for r in j.receipt_ids)
        final = receipts[j.final_receipt_id or ""]
        assert final.outcome == "ok" and final.prompt_sha256 == j.prompt_sha256
    row = panel.book.db.execute(
        "SELECT report_sha256, opened_at FROM judge_panels p JOIN judge_arm_maps m ON m.panel_id = p.id"
    ).fetchone()
    assert row[0] == report.report_sha256 and row[1] is not None
    assert open_arm_map(panel.book, report) == doc.unblinded
    tampered = report.model_copy(update={"arm_map_sha256": "0" * 64})
    with pytest.raises(Exception) as exc:
        open_arm_map(panel.book, tampered)
    assert getattr(exc.value, "code", "") == "JUDGE_ARM_MAP_TAMPERED"


def test_no_model_configured_is_skipped_never_passed(make_panel: Callable[..., Panel]) -> None:
    panel = make_panel(corpus_candidates(1), None)
    doc = run(panel)
    assert doc.outcome == "skipped" and doc.reason == "no model configured"
    assert doc.report is None and doc.gate == [] and doc.run_id is None


def test_fine_outline_replay_only_warns_on_instability(make_panel: Callable[..., Panel]) -> None:
    from novelmuse.book import FineOutline

    cands = corpus_candidates(2)
    outline = FineOutline(chapter=1, goal="刘关张结义", hard_events=[{"id": "E1", "text": "桃园结义"}])
    probe = make_panel(cands, None, profile="fine_outline_replay", outline=outline)
    target = probe.item.blind.candidate_ids[0]
    panel = make_panel(
        cands,
        [[output(structured({target: 2.0}))], [output(structured({target: 4.0}))]],
        profile="fine_outline_replay",
        outline=outline,
    )
    doc = run(panel, outline=outline)
    assert doc.outcome == "stable" and doc.report is not None
    assert not doc.report.third_judge and len(list_receipts(panel.book.db)) == 2
    assert doc.report.warnings and doc.report.warnings[0].startswith("STABILITY_WARNING: 6 of 12")
    assert next(s for s in doc.report.scores if s.candidate_id == target).score == 3.0
    assert panel.seen_inputs()[0].fineOutline[0].id == "goal"
    # the seed's minimal report shape, stored beside the full report
    assert doc.minimal is not None and doc.minimal[target]["profile"] == "fine_outline_replay"
    cell = doc.minimal[target]["scores"]["direction_causality"]
    assert cell["score"] == 3.0 and cell["evidence"].startswith("对照事件 E1")
    stored = panel.book.db.execute("SELECT minimal_json FROM judge_panels").fetchone()[0]
    assert json.loads(stored) == doc.minimal


def structured(table: dict[str, float]) -> Callable[[BlindInput], dict[str, Any]]:
    """A fine-outline judge whose every score is a structured evidence summary: it cites the outline's event E1
    and names it in its reason."""

    def report(blind: BlindInput) -> dict[str, Any]:
        out = good_report(blind, lambda c, d, i: table.get(c, 4.0))
        for s in out["scores"]:  # type: ignore[attr-defined]
            s["reason"] = f"对照事件 E1：{s['dimensionId']} 命中"
            s["evidenceRefs"] = [{"type": "fine_outline", "id": "E1"}]
        return out

    return report


def test_a_fine_outline_reason_without_its_reference_is_corrected(make_panel: Callable[..., Panel]) -> None:
    """Each dimension's structured evidence summary is checked: a score citing no reference item, or a reason not
    naming the item it cites, breaks the contract and is sent back for correction."""
    from novelmuse.book import FineOutline

    cands = corpus_candidates(1)
    outline = FineOutline(chapter=1, goal="刘关张结义", hard_events=[{"id": "E1", "text": "桃园结义"}])
    loose = output(scores_by_id({}))  # reasons like "direction_causality 的理由", candidate evidence only
    panel = make_panel(
        cands,
        [[loose, output(structured({}))], [output(structured({}))]],
        profile="fine_outline_replay",
        outline=outline,
    )
    doc = run(panel, outline=outline)
    assert doc.outcome == "stable"
    codes = [r.error_code for r in list_receipts(panel.book.db)]
    assert codes == ["CONTRACT_EVIDENCE_SUMMARY", None, None]


def test_lessons_are_registered_once_and_can_be_switched_off(make_panel: Callable[..., Panel]) -> None:
    cands = corpus_candidates(1)
    judge = output(scores_by_id({}))
    panel = make_panel(cands, [[judge], [judge], [judge], [judge], [judge], [judge]])
    first = run(panel)
    assert [lesson.created for lesson in first.lessons] == [True]
    second = run(panel)
    assert [lesson.created for lesson in second.lessons] == [False]
    assert second.lessons[0].id == first.lessons[0].id
    third = run(panel, persist_lessons=False)
    assert third.lessons == []
    rows = panel.book.db.execute(
        "SELECT run_id, rubric_id, rubric_version, candidate_sha256 FROM judge_lessons WHERE kind = 'example'"
    ).fetchall()
    assert len(rows) == 1
    # the gate's terminal lesson is registered apart (kind gate, 【门终态】), de-duplicated the same way
    gate = panel.book.db.execute("SELECT lesson FROM judge_lessons WHERE kind = 'gate'").fetchall()
    assert len(gate) == 1 and gate[0][0].startswith("【门终态】[quality-gate-rubric-v1 v1] ")
    assert tuple(rows[0])[1:] == (
        "quality-gate-rubric-v1",
        1,
        panel.item.candidate_sha256[panel.item.blind.candidate_ids[0]],
    )


def test_a_transient_error_is_resent_within_the_same_three_calls(make_panel: Callable[..., Panel]) -> None:
    transient = {"error": {"code": "MODEL_TRANSIENT", "status": 500}}
    panel = make_panel(corpus_candidates(1), [[transient, output(scores_by_id({}))], [output(scores_by_id({}))]])
    doc = run(panel)
    assert doc.outcome == "stable" and doc.report is not None
    assert [j.attempts for j in doc.report.judges] == [2, 1]
    first, second = panel.requests()[:2]
    assert first == second  # resent unchanged: no correction for a transient failure


def test_more_than_three_calls_per_judge_is_refused(make_panel: Callable[..., Panel]) -> None:
    """book.toml itself refuses a call bound above the seeds' 3 (CONFIG_INVALID, before any judge runs)."""
    panel = make_panel(corpus_candidates(1), [[output(scores_by_id({}))]])
    toml = panel.book.root / "book.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[calls]\nmax_attempts = 5\n", encoding="utf-8")
    from novelmuse.book import find_book
    from novelmuse.errors import InputError

    with pytest.raises(InputError) as exc:
        panel.book = find_book(panel.book.root)
    assert exc.value.code == "CONFIG_INVALID" and "calls.max_attempts" in exc.value.what


def test_run_reliability_is_computed_from_the_stored_reports(make_panel: Callable[..., Panel]) -> None:
    from novelmuse.judging import run_reliability

    cands = corpus_candidates(2)
    probe = make_panel(cands, None)
    target = probe.item.blind.candidate_ids[0]
    panel = make_panel(
        cands,
        [[output(scores_by_id({target: 3.0}))], [output(scores_by_id({target: 4.0}))], [output(scores_by_id({}))]],
    )
    doc = run(panel)
    assert doc.run_id is not None and doc.reliability is not None
    stored = run_reliability(panel.book, doc.run_id)
    assert stored == doc.reliability
    assert stored.items == 1 and stored.third_judge_rate == 1.0
    d = next(x for x in stored.dimensions if x.dimension_id == "canon_compliance")
    assert d.cells == 2 and d.mean_abs_diff == 0.5  # |3−4| on one candidate, 0 on the other


def test_the_arm_map_does_not_open_while_its_panel_runs(make_panel: Callable[..., Panel]) -> None:
    from novelmuse.errors import InputError
    from novelmuse.judging import load_rubric
    from novelmuse.judging._service import _seal_arm_map

    panel = make_panel(corpus_candidates(2), None)
    _seal_arm_map(panel.book, "jp_running", "run-x", panel.item, load_rubric("quality_gate"))
    stub = type("R", (), {"panel_id": "jp_running", "arm_map_sha256": panel.item.arm_map.sha256})()
    with pytest.raises(InputError) as exc:
        open_arm_map(panel.book, stub)  # type: ignore[arg-type]
    assert exc.value.code == "JUDGE_ARM_MAP_UNAVAILABLE"
    row = panel.book.db.execute("SELECT sha256, opened_at FROM judge_arm_maps").fetchone()
    assert row[0] == panel.item.arm_map.sha256 and row[1] is None


def test_a_report_naming_an_arm_gets_a_correction_and_is_never_stored(make_panel: Callable[..., Panel]) -> None:
    def leaky(blind: BlindInput) -> dict[str, Any]:
        report = good_report(blind)
        report["scores"][0]["reason"] = "这一稿显然出自 arm_cards"  # type: ignore[index]
        return report

    panel = make_panel(corpus_candidates(1), [[output(leaky), output(scores_by_id({}))], [output(scores_by_id({}))]])
    doc = run(panel, guard=LeakGuard(strategy_names=["arm_cards"]))
    assert doc.outcome == "stable" and doc.report is not None
    assert [j.attempts for j in doc.report.judges] == [2, 1]
    correction = panel.requests()[1]["messages"][-1]["content"]
    assert "CONTRACT_REPORT_LEAK" in correction and "arm_cards" not in correction
    assert "arm_cards" not in doc.report.model_dump_json()
    # the run recorded exactly the tasks it used: the profile's judge task, then the correction it sent
    assert doc.run_id is not None
    assert tasks_used(panel.book.db, doc.run_id) == [JUDGE_TASKS["quality_gate"].ref, correction_for("judge").ref]


def test_transient_retries_and_corrections_share_three_calls(make_panel: Callable[..., Panel]) -> None:
    transient = {"error": {"code": "MODEL_TRANSIENT", "status": 503}}
    bad = output(_bad_quote("missing"))
    panel = make_panel(corpus_candidates(1), [[transient, bad, bad, output(scores_by_id({}))]])
    doc = run(panel)
    assert doc.outcome == "invalid" and doc.report is not None
    (judge1,) = doc.report.judges  # judge 2 never ran
    assert judge1.attempts == 3 and judge1.error_code == "CONTRACT_QUOTE_NOT_FOUND"
    assert judge1.diagnostics["codes"] == {"MODEL_TRANSIENT": 1, "CONTRACT_QUOTE_NOT_FOUND": 2}
    assert len(list_receipts(panel.book.db)) == 3


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ({"error": {"code": "MODEL_TRANSIENT", "status": 500, "cost_known": False}}, "MODEL_TRANSIENT"),
        ({"error": {"code": "MODEL_AUTH", "status": 401}}, "MODEL_AUTH"),
        ({"usage": None}, "MODEL_USAGE_MISSING"),
        ({"model": "other-model"}, "MODEL_MISMATCH"),
    ],
)
def test_untrusted_failures_are_never_retried_and_make_the_item_invalid(
    make_panel: Callable[..., Panel], entry: dict[str, Any], code: str
) -> None:
    """Seed 000: auth, unknown-cost, missing-usage and model-mismatch failures are not retried; the panel
    does not shrink to one judge — the item is invalid."""
    good = output(scores_by_id({}))
    second = (lambda blind: {**good(blind), **entry}) if "error" not in entry else entry  # type: ignore[operator]
    panel = make_panel(corpus_candidates(1), [[good], [second, good, good]])
    doc = run(panel)
    assert doc.outcome == "invalid" and doc.reason == code and doc.report is not None
    assert [j.outcome for j in doc.report.judges] == ["ok", "failed"]
    assert doc.report.judges[1].attempts == 1 and doc.report.scores == []
    assert len(list_receipts(panel.book.db)) == 2
    assert doc.gate and all(g.outcome == "error" for g in doc.gate)


def test_a_nan_score_gets_a_correction_not_a_traceback(make_panel: Callable[..., Panel]) -> None:
    def nan_draft(blind: BlindInput) -> dict[str, Any]:
        text = json.dumps(good_report(blind), ensure_ascii=False).replace('"score": 4.0', '"score": NaN', 1)
        return {"raw_text": text}

    panel = make_panel(corpus_candidates(1), [[nan_draft, output(scores_by_id({}))], [output(scores_by_id({}))]])
    doc = run(panel)
    assert doc.outcome == "stable" and doc.report is not None
    assert [j.attempts for j in doc.report.judges] == [2, 1]
    assert "CONTRACT_SCORE_OUT_OF_RANGE" in panel.requests()[1]["messages"][-1]["content"]


def _verdicts(value: str) -> Callable[[BlindInput], dict[str, Any]]:
    """A judge whose every verdict is `value` (scores all 4)."""

    def make(blind: BlindInput) -> dict[str, Any]:
        report = good_report(blind)
        for v in report["verdicts"]:  # type: ignore[attr-defined]
            v["verdict"] = value
        return report

    return make


ORACLE = [Target("a1", "孙坚仍然在世")]


def test_an_oracle_panel_takes_unknown_without_a_correction_and_never_as_a_pass(
    make_panel: Callable[..., Panel],
) -> None:
    """Seed 003: pass / fail / unknown per assertion id; unknown is an answer (no correction), not a pass."""
    cands = corpus_candidates(2)
    panel = make_panel(
        cands,
        [[output(_verdicts("unknown"))], [output(_verdicts("pass"))]],
        profile="writer_replay",
        scene_type="battle",
        outline=_outline(),
        assertions=ORACLE,
        unknown_verdicts=True,
    )
    doc = run(panel, scene_type="battle", assertions=ORACLE, unknown_verdicts=True, outline=_outline())
    assert doc.outcome == "stable" and doc.report is not None
    assert [j.attempts for j in doc.report.judges] == [1, 1]  # no correction call
    assert {v.verdict for v in doc.report.verdicts} == {"unknown"}
    assert all(v.judge_verdicts == ["unknown", "pass"] for v in doc.report.verdicts)
    assert json.loads(panel.requests()[0]["messages"][-1]["content"].split("\n", 1)[1])["policy"]["verdictValues"] == [
        "pass",
        "fail",
        "unknown",
    ]


def test_outside_an_oracle_panel_unknown_is_corrected(make_panel: Callable[..., Panel]) -> None:
    cands = corpus_candidates(2)
    panel = make_panel(
        cands,
        [[output(_verdicts("unknown")), output(_verdicts("pass"))], [output(_verdicts("pass"))]],
        profile="writer_replay",
        scene_type="battle",
        outline=_outline(),
        assertions=ORACLE,
    )
    doc = run(panel, scene_type="battle", assertions=ORACLE, outline=_outline())
    assert doc.outcome == "stable" and doc.report is not None
    assert [j.attempts for j in doc.report.judges] == [2, 1]
    assert "CONTRACT_VERDICT_VALUE" in panel.requests()[1]["messages"][-1]["content"]


def test_a_given_order_is_what_judge_one_sees(make_panel: Callable[..., Panel]) -> None:
    """A replay's balanced order plan decides the first judge's order (the second sees it reversed)."""
    cands = corpus_candidates(3)
    for order in (cands, cands[::-1], [cands[1], cands[2], cands[0]]):
        panel = make_panel(order, None, given_order=True)
        seen = [panel.item.blind.text_of(c) for c in panel.item.blind.candidate_ids]
        assert seen == [c.text for c in order]


def _outline() -> Any:
    from novelmuse.book import FineOutline

    event = {"id": "E1", "text": "张飞鞭督邮", "result": "督邮受辱"}
    return FineOutline.model_validate({"version": 2, "chapter": 2, "scene_type": "battle", "hard_events": [event]})
