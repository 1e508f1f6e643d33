"""The detector gate without a model: the deterministic part, the facts diff and the report's computed figures,
on the real 三国演义 (关羽 dies in chapter 77 of the novel; the hero cards say so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from novelmuse.book import Book, FineOutline, parse_outline
from novelmuse.editorial import StepOutcome
from novelmuse.errors import FailedClosed
from novelmuse.memory import load_cards, replay
from novelmuse.roles.detector import ConstraintVerdict, DetectorOutput
from novelmuse.roles.extractor import FactCardOutput, FactEvent, FactState
from novelmuse.roles.writer import DeclaredFact
from novelmuse.rules import LengthLimits, build_effective, load_defaults, parse_rules
from novelmuse.text import sha256_hex
from novelmuse.writing import DetectorGate, DetectorReport, bind_report

from .conftest import OUTLINE_80

OUTLINE_60 = """\
version: 2
chapter: 60
title: 张永年反难杨修　庞士元议取西川
scene_type: turning_point
goal: 张松献图，刘备议取西川
hard_events:
  - {id: E1, text: 张松献西川地图于玄德, result: 刘备决意取西川}
hook: 庞统议取西川
entities: [刘备, 关羽]
"""
DEATH_ALLOWED = OUTLINE_60 + "new_settings:\n  - {id: S1, kind: state, text: 关羽身亡, entities: [关羽]}\n"
DEATH = "\n是夜，关公忽染重病，次日身亡。玄德大哭，众将皆哀。"
RAN = StepOutcome.passed("detector")
DEATH_FACTS = FactCardOutput(
    events=[],
    foreshadows=[],
    relations=[],
    states=[FactState(entity="关羽", attribute="status", value="身亡", quote="次日身亡")],
)


def _outline(text: str, chapter: int) -> FineOutline:
    return parse_outline(Path(f"outlines/{chapter:04d}.yaml"), text, expect_chapter=chapter)


def _gate(
    book: Book, outline_text: str, chapter: int, rules: str = "", limits: LengthLimits | None = None
) -> DetectorGate:
    cards = load_cards(book)
    outline = _outline(outline_text, chapter)
    state = replay(book, cards=cards, upto=chapter - 1, outlines={})
    effective = build_effective(parse_rules(rules), load_defaults(), limits or LengthLimits(), "rules.txt")
    return DetectorGate(outline, cards, state, effective, "m" * 64)


def _all_pass(gate: DetectorGate, text: str, quote: str) -> DetectorOutput:
    """A detector answer passing every constraint with a quote found exactly once."""
    verdicts = [ConstraintVerdict(id=c, verdict="pass", quote=quote, reason="ok") for c in gate.constraint_ids]
    return DetectorOutput(candidate_sha256=sha256_hex(text), verdicts=verdicts, coverage=1.0, high_severity=0)


def _no_facts() -> FactCardOutput:
    return FactCardOutput(events=[], foreshadows=[], relations=[], states=[])


def _blocking(report: DetectorReport) -> set[tuple[str, str]]:
    return {(i.check, i.id) for i in report.blocking_items()}


@pytest.fixture(scope="module")
def ch60(sanguo_full: Book) -> str:
    return sanguo_full.read_chapter(60).body


@pytest.fixture(scope="module")
def ch80(sanguo_full: Book) -> str:
    return sanguo_full.read_chapter(80).body + "\n建安二十五年冬十月，玄德在成都，誓为云长报仇，欲起兵伐吴。"


def test_guan_yu_dying_in_60_without_a_declaration_is_blocked(sanguo_full: Book, ch60: str) -> None:
    gate = _gate(sanguo_full, DEATH_ALLOWED, 60)
    text = ch60 + DEATH
    report = gate.report(text, [], _all_pass(gate, text, "庞统亦再三相劝"), RAN, DEATH_FACTS, RAN)
    assert ("undeclared_fact", "fact:states[0]") in _blocking(report)
    assert report.outcome.status == "failed"
    item = next(i for i in report.items if i.id == "fact:states[0]")
    assert text[item.start : item.end] == "次日身亡"  # type: ignore[index]


def test_the_same_death_declared_and_allowed_by_the_outline_passes(sanguo_full: Book, ch60: str) -> None:
    gate = _gate(sanguo_full, DEATH_ALLOWED, 60)
    text = ch60 + DEATH
    declared = [DeclaredFact(kind="state", subject="关公", statement="关羽病逝", quote="关公忽染重病，次日身亡")]
    report = gate.report(text, declared, _all_pass(gate, text, "庞统亦再三相劝"), RAN, DEATH_FACTS, RAN)
    assert report.blocking_items() == []
    assert report.outcome.status == "passed"
    assert report.computed.coverage == 1.0
    # … but declared without the outline's allowance it has no reliable source: blocked
    strict = _gate(sanguo_full, OUTLINE_60, 60)
    report = strict.report(text, declared, _all_pass(strict, text, "庞统亦再三相劝"), RAN, DEATH_FACTS, RAN)
    assert {c for c, _ in _blocking(report)} == {"unsourced_fact"}


def test_guan_yu_speaking_in_80_is_blocked_being_named_is_not(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80)
    assert gate.hard.unavailable["guan-yu"].why == "dead"
    clean = gate.report(ch80, [], _all_pass(gate, ch80, "建安二十五年"), RAN, _no_facts(), RAN)
    assert clean.blocking_items() == [], clean.blocking_items()  # the novel names 云长 (his death), he does not act
    spoken_to = ch80 + "\n玄德谓关公曰：“吾必报此仇。”"  # someone speaks TO him (a memory): fine
    assert (
        gate.report(spoken_to, [], _all_pass(gate, spoken_to, "建安二十五年"), RAN, _no_facts(), RAN).blocking_items()
        == []
    )
    speaks = ch80 + "\n关公曰：“兄长勿忧，吾在此。”"
    report = gate.report(speaks, [], _all_pass(gate, speaks, "建安二十五年"), RAN, _no_facts(), RAN)
    assert _blocking(report) == {("acts", "acts:guan-yu")}
    item = report.blocking_items()[0]
    assert "关公曰" in item.quote and speaks[item.start : item.end] == item.quote  # type: ignore[index]
    # the extractor's events say who acts: a dead actor blocks even without a speech verb
    acts = FactCardOutput(
        events=[FactEvent(summary="关羽挥刀", actors=["关羽"], quote="吾必报此仇")],
        foreshadows=[],
        relations=[],
        states=[],
    )
    report = gate.report(spoken_to, [], _all_pass(gate, spoken_to, "建安二十五年"), RAN, acts, RAN)
    assert _blocking(report) == {("acts", "fact:events[0]:guan-yu")}


def test_a_missing_hard_event_or_result_blocks(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80)
    # deterministic: the text never names 孔明/诸葛亮 (a key of E2), and the time marker is missing
    text = ch80.replace("孔明", "某人").replace("诸葛亮", "某人").replace("建安二十五年", "那年")
    report = gate.report(text, [], _all_pass(gate, text, "华歆"), RAN, _no_facts(), RAN)
    assert {("constraint", "E2"), ("constraint", "T1")} <= _blocking(report)
    assert report.computed.coverage < 1.0
    # semantic: the detector says R1 fails (its result did not happen) — blocked, whatever else passes
    answer = _all_pass(gate, ch80, "建安二十五年")
    answer.verdicts[1] = ConstraintVerdict(id="R1", verdict="fail", quote="", reason="献帝未降为山阳公")
    report = gate.report(ch80, [], answer, RAN, _no_facts(), RAN)
    assert _blocking(report) == {("constraint", "R1")}


def test_a_pass_without_a_located_quote_is_unknown_and_blocks(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80)
    answer = _all_pass(gate, ch80, "华歆")  # 华歆 occurs 11 times: not located exactly once
    report = gate.report(ch80, [], answer, RAN, _no_facts(), RAN)
    assert all(i.verdict == "unknown" for i in report.items if i.check == "constraint")
    assert report.computed.coverage == 0.0 and report.computed.blocking


def test_fatigue_only_warns_forbidden_blocks_invented_dialogue_never_blocks(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80, rules="禁止:系统面板\n疲劳词:不由得≤1\n")
    base = gate.report(ch80, [], _all_pass(gate, ch80, "建安二十五年"), RAN, _no_facts(), RAN)
    assert base.blocking_items() == []
    dialogue = ch80 + "\n孔明谓张飞曰：“三将军且慢。”张飞大叫：“吾兄之仇，岂可不报！”孔明不由得叹息，张飞不由得落泪。"
    report = gate.report(dialogue, [], _all_pass(gate, dialogue, "建安二十五年"), RAN, _no_facts(), RAN)
    assert report.blocking_items() == []
    fatigue = [i for i in report.items if i.check == "fatigue"]
    assert [(i.id, i.severity) for i in fatigue] == [("fatigue:不由得", "warning")]
    assert report.computed.warnings >= 1 and report.outcome.status == "passed"
    forbidden = ch80 + "\n孔明打开系统面板。"
    report = gate.report(forbidden, [], _all_pass(gate, forbidden, "建安二十五年"), RAN, _no_facts(), RAN)
    assert _blocking(report) == {("forbidden", "forbidden:系统面板")}


def test_length_contract_and_declared_quotes(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80, limits=LengthLimits(min_chars=5000, max_chars=9000))
    declared = [DeclaredFact(kind="state", subject="刘备", statement="刘备称帝", quote="此句并不在正文之中")]
    report = gate.report(ch80, declared, _all_pass(gate, ch80, "建安二十五年"), RAN, _no_facts(), RAN)
    assert _blocking(report) == {("length", "length"), ("declared_fact", "declared:0")}
    empty = gate.report("  \n", [], None, StepOutcome.skipped("detector", "no model configured"), None, RAN)
    assert ("contract", "contract") in _blocking(empty)


def test_the_report_recomputes_claims_binds_its_candidate_and_needs_every_id(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80)
    answer = _all_pass(gate, ch80, "建安二十五年")
    answer.verdicts[0] = ConstraintVerdict(id="E1", verdict="fail", quote="", reason="未写禅位")
    report = gate.report(ch80, [], answer, RAN, _no_facts(), RAN)
    assert report.claimed.coverage == 1.0  # the model's claim, recorded beside …
    n = len(gate.constraint_ids)
    assert report.computed.coverage == pytest.approx((n - 1) / n)  # … the computed figure
    tampered = report.model_dump(mode="json")
    tampered["figures"]["coverage"] = 1.0
    tampered["figures"]["blocking"] = False
    again = DetectorReport.model_validate(tampered)
    assert again.computed == report.computed and again.computed.blocking
    assert bind_report(report, ch80) is report
    with pytest.raises(FailedClosed) as exc:
        bind_report(report, ch80 + "。")
    assert exc.value.code == "DETECTOR_REPORT_MISMATCH" and exc.value.exit_code == 3
    incomplete = _all_pass(gate, ch80, "建安二十五年")
    del incomplete.verdicts[2]
    with pytest.raises(FailedClosed) as exc:
        gate.report(ch80, [], incomplete, RAN, _no_facts(), RAN)
    assert exc.value.code == "DETECTOR_REPORT_INCOMPLETE"


def test_skipped_parts_never_read_as_passed(sanguo_full: Book, ch80: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_80, 80)
    skipped = StepOutcome.skipped("facts", "no model configured")
    report = gate.report(ch80, [], _all_pass(gate, ch80, "建安二十五年"), RAN, None, skipped)
    assert report.blocking_items() == [] and report.outcome.status == "skipped"
    no_detector = gate.report(ch80, [], None, StepOutcome.skipped("detector", "no model configured"), _no_facts(), RAN)
    assert no_detector.computed.coverage == 0.0 and no_detector.outcome.status == "failed"


NEW_MAN = "\n忽有一剑客王越，自称燕赵人氏，拜玄德为主公，愿效犬马之劳。"
NEW_MAN_FACTS = FactCardOutput(
    events=[FactEvent(summary="王越投玄德", actors=["王越"], quote="自称燕赵人氏，拜玄德为主公")],
    foreshadows=[],
    relations=[],
    states=[FactState(entity="王越", attribute="title", value="玄德部将", quote="愿效犬马之劳")],
)
WALK_ON_FACTS = FactCardOutput(
    events=[FactEvent(summary="王越报信", actors=["王越"], quote="自称燕赵人氏，拜玄德为主公")],
    foreshadows=[],
    relations=[],
    states=[],
)


def test_a_new_entity_the_text_makes_canon_must_be_declared_and_allowed(sanguo_full: Book, ch60: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_60, 60)
    text = ch60 + NEW_MAN
    verdicts = _all_pass(gate, text, "庞统亦再三相劝")
    report = gate.report(text, [], verdicts, RAN, NEW_MAN_FACTS, RAN)
    assert {("undeclared_fact", "fact:states[0]"), ("unsourced_fact", "fact:states[0]:source")} <= _blocking(report)
    # declared, and introduced by the outline: the new man may join
    allowed = OUTLINE_60 + "new_settings:\n  - {id: S1, kind: entity, text: 剑客王越投奔, entities: [王越]}\n"
    declared = [DeclaredFact(kind="entity", subject="王越", statement="剑客王越投玄德", quote="忽有一剑客王越")]
    gate = _gate(sanguo_full, allowed, 60)
    report = gate.report(text, declared, _all_pass(gate, text, "庞统亦再三相劝"), RAN, NEW_MAN_FACTS, RAN)
    assert report.blocking_items() == []


def test_a_walk_on_who_only_acts_warns_and_never_blocks(sanguo_full: Book, ch60: str) -> None:
    gate = _gate(sanguo_full, OUTLINE_60, 60)
    text = ch60 + NEW_MAN
    report = gate.report(text, [], _all_pass(gate, text, "庞统亦再三相劝"), RAN, WALK_ON_FACTS, RAN)
    assert report.blocking_items() == []
    warned = [i for i in report.items if i.id == "fact:events[0]:new:王越"]
    assert len(warned) == 1 and warned[0].severity == "warning" and warned[0].verdict == "fail"


EMPTY_60 = (
    "version: 2\nchapter: 60\ntitle: 张永年反难杨修\nscene_type: turning_point\ngoal: 张松献图\nentities: [刘备]\n"
)


def test_a_report_over_no_hard_constraint_has_no_coverage_and_never_passes(sanguo_full: Book, ch60: str) -> None:
    """Nothing to check is not a pass: coverage over 0 constraints is n/a, never the constant 1.0, and the
    detector step is not evaluated."""
    gate = _gate(sanguo_full, EMPTY_60, 60)
    assert gate.constraint_ids == []
    report = gate.report(ch60, [], _all_pass(gate, ch60, "张松"), RAN, _no_facts(), RAN)
    assert report.computed.constraints == 0 and report.computed.coverage is None
    assert report.outcome.status == "skipped" and report.outcome.reason == "no hard constraint"
    assert DetectorReport.model_validate(report.model_dump(mode="json")).computed.coverage is None
