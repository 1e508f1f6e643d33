"""The report contract: coverage counts against a naive recount, quotes, evidence, rankings, verdicts."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.judging import BlindItem, Target, build_blind_item, check_report, load_rubric
from novelmuse.roles.judge import JudgeReport

from ._helpers import corpus_candidates, good_report

RUBRIC = load_rubric("quality_gate")
ITEM: BlindItem = build_blind_item(
    item_id="contract",
    seed="s",
    rubric=RUBRIC,
    candidates=corpus_candidates(3, chars=600),
    assertions=[Target("a1", "桃园结义")],
    constraints=[Target("h1", "无现代词")],
)
BLIND = ITEM.blind


def _check(report: dict[str, Any]):  # type: ignore[no-untyped-def]
    return check_report(JudgeReport.model_validate(report), BLIND, RUBRIC)


def test_a_complete_report_passes_and_stores_quote_offsets() -> None:
    report = good_report(BLIND)
    result = _check(report)
    assert result.ok, result.findings
    assert len(result.quotes) == 3 * 8
    given = {(s["candidateId"], s["dimensionId"]): s["candidateQuote"] for s in report["scores"]}  # type: ignore[union-attr, index]
    for (cid, did), (start, end) in result.quotes.items():
        text = BLIND.text_of(cid)
        assert text[start:end] == given[(cid, did)]  # the offsets point at the quoted passage itself
    assert result.scores.expected == 24 and result.verdicts.expected == 6 and result.rankings.expected == 8


def _codes(report: dict[str, Any]) -> dict[str, int]:
    return _check(report).code_counts()


def test_quote_problems_are_named_per_entry() -> None:
    report = good_report(BLIND)
    scores: list[dict[str, Any]] = report["scores"]  # type: ignore[assignment]
    scores[0]["candidateQuote"] = "这句话并不在候选里出现过的"
    scores[1]["candidateQuote"] = "，"
    scores[2]["candidateQuote"] = "   "
    c = BLIND.candidates[0]
    scores[3]["candidateQuote"] = c.text[:3]
    codes = _codes(report)
    assert codes == {
        "CONTRACT_QUOTE_NOT_FOUND": 1,
        "CONTRACT_QUOTE_TOO_SHORT": 2,
        "CONTRACT_QUOTE_EMPTY": 1,
    }


def test_a_quote_from_another_candidate_is_not_found() -> None:
    report = good_report(BLIND)
    scores: list[dict[str, Any]] = report["scores"]  # type: ignore[assignment]
    other = next(s for s in scores if s["candidateId"] != scores[0]["candidateId"])
    scores[0]["candidateQuote"] = other["candidateQuote"]
    assert _codes(report) == {"CONTRACT_QUOTE_NOT_FOUND": 1}


def test_a_non_unique_quote_fails() -> None:
    rubric = load_rubric("quality_gate")
    from novelmuse.judging import Candidate

    item = build_blind_item(
        item_id="u",
        seed="s",
        rubric=rubric,
        candidates=[Candidate("A", "且说那人道：好。" * 3 + "末句与众不同在此处。")],
    )
    report = good_report(item.blind)
    report["scores"][0]["candidateQuote"] = "且说那人道：好。"  # type: ignore[index]
    result = check_report(JudgeReport.model_validate(report), item.blind, rubric)
    assert result.code_counts() == {"CONTRACT_QUOTE_NOT_UNIQUE": 1}


def test_evidence_refs_are_typed_and_must_exist_in_the_input() -> None:
    report = good_report(BLIND)
    scores: list[dict[str, Any]] = report["scores"]  # type: ignore[assignment]
    scores[0]["evidenceRefs"] = [{"type": "card_index", "id": "card:liubei"}]
    scores[1]["evidenceRefs"] = [{"type": "web", "id": "x"}]
    scores[2]["evidenceRefs"] = [{"type": "oracle_assertion", "id": "a9"}]
    scores[3]["evidenceRefs"] = []
    scores[4]["evidenceRefs"] = [{"type": "oracle_assertion", "id": "h1"}, {"type": "judge_inference", "id": "a1"}]
    scores[5]["evidenceRefs"] = [{"type": "fine_outline", "id": "E1"}]  # no outline in this input
    assert _codes(report) == {
        "CONTRACT_EVIDENCE_CARD_INDEX": 1,
        "CONTRACT_EVIDENCE_TYPE": 1,
        "CONTRACT_EVIDENCE_UNKNOWN_ID": 2,
        "CONTRACT_EVIDENCE_MISSING": 1,
    }


def test_scores_out_of_scale_or_off_step_and_empty_reasons() -> None:
    report = good_report(BLIND)
    scores: list[dict[str, Any]] = report["scores"]  # type: ignore[assignment]
    scores[0]["score"] = 5.5
    scores[1]["score"] = 0.5
    scores[2]["score"] = 3.25
    scores[3]["score"] = 4.5  # fine
    scores[4]["reason"] = " "
    result = _check(report)
    assert result.code_counts() == {
        "CONTRACT_SCORE_OUT_OF_RANGE": 2,
        "CONTRACT_SCORE_OFF_STEP": 1,
        "CONTRACT_REASON_EMPTY": 1,
    }
    assert result.score_value_out_of_range == 2 and result.score_off_step == 1


def test_rankings_must_be_complete_permutations_and_verdicts_pass_or_fail() -> None:
    report = good_report(BLIND)
    rankings: list[dict[str, Any]] = report["rankings"]  # type: ignore[assignment]
    rankings[0]["order"] = rankings[0]["order"][:2]
    rankings[1]["order"] = [rankings[1]["order"][0]] * 3
    verdicts: list[dict[str, Any]] = report["verdicts"]  # type: ignore[assignment]
    verdicts[0]["verdict"] = "unknown"
    result = _check(report)
    assert result.code_counts() == {"CONTRACT_RANKING_INCOMPLETE": 2, "CONTRACT_VERDICT_VALUE": 1}


def _naive(entries: list[tuple[str, ...]], expected: list[tuple[str, ...]]) -> tuple[int, int, int]:
    """Missing, duplicate, out-of-range by the plainest possible recount."""
    missing = sum(1 for e in expected if entries.count(e) == 0)
    duplicate = sum(entries.count(e) - 1 for e in expected if entries.count(e) > 1)
    out_of_range = sum(1 for e in entries if e not in expected)
    return missing, duplicate, out_of_range


_edit = st.tuples(st.sampled_from(["drop", "dup", "alien"]), st.integers(0, 1000))


def _mutate(entries: list[dict[str, Any]], edits: list[tuple[str, int]], id_fields: tuple[str, ...]) -> None:
    for kind, n in edits:
        if not entries:
            break
        i = n % len(entries)
        if kind == "drop":
            entries.pop(i)
        elif kind == "dup":
            entries.insert(n % (len(entries) + 1), copy.deepcopy(entries[i]))
        else:
            alien = copy.deepcopy(entries[i])
            alien[id_fields[n % len(id_fields)]] = f"c_alien{n}"
            entries.append(alien)


@settings(max_examples=80, deadline=None)
@given(
    score_edits=st.lists(_edit, max_size=12),
    rank_edits=st.lists(_edit, max_size=6),
    verdict_edits=st.lists(_edit, max_size=8),
)
def test_coverage_counts_equal_a_naive_recount(
    score_edits: list[tuple[str, int]], rank_edits: list[tuple[str, int]], verdict_edits: list[tuple[str, int]]
) -> None:
    report = good_report(BLIND)
    _mutate(report["scores"], score_edits, ("candidateId", "dimensionId"))  # type: ignore[arg-type]
    _mutate(report["rankings"], rank_edits, ("dimensionId",))  # type: ignore[arg-type]
    _mutate(report["verdicts"], verdict_edits, ("candidateId", "targetId"))  # type: ignore[arg-type]
    result = _check(report)
    cids, dids, tids = BLIND.candidate_ids, BLIND.dimension_ids, BLIND.target_ids
    s_entries = [(s["candidateId"], s["dimensionId"]) for s in report["scores"]]  # type: ignore[index, union-attr]
    r_entries = [(r["dimensionId"],) for r in report["rankings"]]  # type: ignore[index, union-attr]
    v_entries = [(v["candidateId"], v["targetId"]) for v in report["verdicts"]]  # type: ignore[index, union-attr]
    s = _naive(s_entries, [(c, d) for c in cids for d in dids])
    r = _naive(r_entries, [(d,) for d in dids])
    v = _naive(v_entries, [(c, t) for c in cids for t in tids])
    assert (result.scores.missing, result.scores.duplicate, result.scores.out_of_range) == s
    assert (result.scores.entries, result.rankings.entries, result.verdicts.entries) == (
        len(s_entries),
        len(r_entries),
        len(v_entries),
    )
    assert (result.rankings.missing, result.rankings.duplicate, result.rankings.out_of_range) == r
    assert (result.verdicts.missing, result.verdicts.duplicate, result.verdicts.out_of_range) == v
    codes = result.code_counts()
    assert codes.get("CONTRACT_SCORE_MISSING", 0) == s[0]
    assert codes.get("CONTRACT_SCORE_DUPLICATE", 0) == s[1]
    assert codes.get("CONTRACT_SCORE_UNKNOWN_ID", 0) == s[2]
    assert codes.get("CONTRACT_RANKING_MISSING", 0) == r[0]
    assert codes.get("CONTRACT_VERDICT_MISSING", 0) == v[0]
    assert codes.get("CONTRACT_VERDICT_DUPLICATE", 0) == v[1]
    assert codes.get("CONTRACT_VERDICT_UNKNOWN_ID", 0) == v[2]
    assert result.ok == (s == r == v == (0, 0, 0))


def test_a_respaced_full_width_quote_is_located_at_its_original_offsets() -> None:
    from novelmuse.judging import Candidate

    text = "话说　天下大势，分久必合，合久必分。\n周末七国分争，并入于秦。ABC 三人 同行。"
    item = build_blind_item(item_id="o", seed="s", rubric=RUBRIC, candidates=[Candidate("A", text)])
    report = good_report(item.blind)
    report["scores"][0]["candidateQuote"] = "天下大势 ，分久必合"  # type: ignore[index]  # spaces moved
    report["scores"][1]["candidateQuote"] = "ＡＢＣ三人同行。"  # type: ignore[index]  # full-width, no spaces
    result = check_report(JudgeReport.model_validate(report), item.blind, RUBRIC)
    assert result.ok, result.findings
    cid = item.blind.candidate_ids[0]
    dims = item.blind.dimension_ids
    a, b = result.quotes[(cid, dims[0])]
    assert text[a:b] == "天下大势，分久必合"
    a, b = result.quotes[(cid, dims[1])]
    assert text[a:b] == "ABC 三人 同行。"


def test_a_reason_naming_a_hidden_label_breaks_the_contract() -> None:
    from novelmuse.judging import LeakGuard

    guard = LeakGuard(arm_names=["A", "B", "C"], strategy_names=["卡片证据策略"], secrets=["sk-123"])
    report = good_report(BLIND)
    scores: list[dict[str, Any]] = report["scores"]  # type: ignore[assignment]
    scores[0]["reason"] = "候选 A 比 B 更贴近原著"
    scores[1]["reason"] = "看得出用了卡片证据策略"
    verdicts: list[dict[str, Any]] = report["verdicts"]  # type: ignore[assignment]
    verdicts[0]["reason"] = "同 C"
    parsed = JudgeReport.model_validate(report)
    assert check_report(parsed, BLIND, RUBRIC).ok  # without a guard, nothing is hidden
    result = check_report(parsed, BLIND, RUBRIC, guard=guard)
    assert result.code_counts() == {"CONTRACT_REPORT_LEAK": 3}
    for f in result.findings:  # the correction never repeats the hidden token to the model
        assert "卡片证据策略" not in f.detail and " A " not in f.detail


def test_non_finite_scores_break_the_contract_instead_of_crashing() -> None:
    import json

    report = good_report(BLIND)
    text = json.dumps(report, ensure_ascii=False)
    first, second = (s["score"] for s in report["scores"][:2])  # type: ignore[index]
    assert first == second == 4.0
    text = text.replace('"score": 4.0', '"score": NaN', 1).replace('"score": 4.0', '"score": Infinity', 1)
    parsed = JudgeReport.model_validate(json.loads(text))  # Python's json accepts NaN / Infinity
    result = check_report(parsed, BLIND, RUBRIC)
    assert result.code_counts() == {"CONTRACT_SCORE_OUT_OF_RANGE": 2}
