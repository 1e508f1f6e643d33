"""Gate A / Gate B: the seed's order (anomaly → failed, small set → insufficient, thresholds), each threshold at
and beside its boundary, verdicts never from scores, arm B only in the diagnostic strata, canonical bytes."""

from __future__ import annotations

import copy
import json
import random

import pytest

from novelmuse.errors import FailedClosed
from novelmuse.replay import (
    GateInput,
    evaluate_gate,
    gate_input_bytes,
    gate_input_sha256,
    load_gate_spec,
    new_character_bucket,
    parse_gate_input,
    report_sha256,
)

from ._helpers import DIMS, HARD, RUBRIC, clean_doc, gate_input, item_ids, sample, verdict

# The mechanics every spec version shares, on version 1's thresholds (its reports stay checkable); version 2's
# own checks (κ, fails on both sides, a measured improvement) are in test_gates_v2.py.
SPEC = load_gate_spec(1)


def run(gate: str, doc: dict) -> object:
    return evaluate_gate(gate, gate_input(doc), SPEC)  # type: ignore[arg-type]


def check(report, name: str):  # type: ignore[no-untyped-def]
    return next(c for c in report.checks if c.name == name)


def test_a_clean_run_with_equal_arms_passes_both_gates() -> None:
    doc = clean_doc()
    for gate in ("A", "B"):
        report = run(gate, doc)
        assert report.outcome == "passed", report.summary
        assert report.anomalies == [] and report.set.problems == []
        assert all(c.passed for c in report.checks)
    a = run("A", doc)
    assert check(a, "agreement").figures["pairs"] == 12 * 2 * len(HARD)  # arms A and C, hard constraints only


@pytest.mark.parametrize(
    ("category", "code"),
    [
        ("system", "MODEL_TIMEOUT"),
        ("system", "MODEL_NONZERO_EXIT"),
        ("schema", "CONTRACT_SCHEMA"),
        ("system", "BUDGET_EXCEEDED"),
        ("system", "MODEL_MISMATCH"),
        ("judge", "JUDGE_INVALID"),
        ("judge", "JUDGE_UNSTABLE"),
        ("leak", "JUDGE_INPUT_LEAK"),
        ("hash", "MANIFEST_HASH_MISMATCH"),
    ],
)
def test_any_anomaly_fails_both_gates_and_is_named(category: str, code: str) -> None:
    doc = clean_doc()
    s = sample(doc, "i03", "C")
    s.update(ok=False, anomaly={"category": category, "code": code}, candidate_sha256=None)
    for gate in ("A", "B"):
        report = run(gate, doc)
        assert report.outcome == "failed"
        assert [(a.item_id, a.arm, a.category, a.code) for a in report.anomalies] == [("i03", "C", category, code)]
        assert report.checks == []  # thresholds are not evaluated on a compromised run
        assert f"item i03 arm C: {category}/{code}" in report.summary


def test_an_anomaly_fails_even_when_the_set_is_also_too_small() -> None:
    doc = clean_doc(n=4)
    assert run("B", doc).outcome == "insufficient"
    sample(doc, "i01", "A").update(ok=False, anomaly={"category": "leak", "code": "JUDGE_INPUT_LEAK"})
    report = run("B", doc)
    assert report.outcome == "failed" and report.anomalies[0].code == "JUDGE_INPUT_LEAK"
    assert report.set.problems == ["4 items < 12"]  # the small set is still reported, but it does not decide


def test_an_anomaly_in_the_diagnostic_arm_fails_the_run_too() -> None:
    doc = clean_doc()
    sample(doc, "i05", "B").update(ok=False, anomaly={"category": "judge", "code": "JUDGE_UNSTABLE"})
    assert run("B", doc).outcome == "failed"


def test_a_skipped_arm_and_a_missing_gate_arm_are_anomalies() -> None:
    doc = clean_doc()
    doc["samples"].remove(sample(doc, "i07", "A"))
    report = run("A", doc)
    assert [(a.item_id, a.arm, a.code) for a in report.anomalies] == [("i07", "A", "ARM_SKIPPED")]
    doc = clean_doc(arms=("A", "B"))
    doc["samples"] = [s for s in doc["samples"] if s["arm"] != "C"]
    report = run("B", doc)
    assert report.outcome == "failed" and report.anomalies[0].code == "ARM_NOT_RUN"


def test_incomplete_or_inconsistent_ok_samples_are_schema_anomalies() -> None:
    doc = clean_doc()
    del sample(doc, "i00", "A")["scores"][DIMS[0]]
    sample(doc, "i01", "A")["receipts"] = []
    sample(doc, "i02", "A")["panel"].append({"kind": "event", "id": "E1", "verdict": "fail"})
    sample(doc, "i03", "A")["panel"].append({"kind": "event", "id": "E9", "verdict": "pass"})
    sample(doc, "i04", "A")["detector"].append({"kind": "assertion", "id": "a1", "verdict": "pass", "severity": "low"})
    codes = {(a.item_id, a.category, a.code) for a in run("A", doc).anomalies}
    assert codes == {
        ("i00", "schema", "SCORES_INCOMPLETE"),
        ("i01", "schema", "RECEIPTS_MISSING"),
        ("i02", "schema", "DUPLICATE_VERDICT"),
        ("i03", "schema", "UNEXPECTED_VERDICT"),
        ("i04", "leak", "DETECTOR_SAW_ORACLE"),  # the detector must never see the oracle
    }


def test_detector_findings_outside_the_constraint_space_are_allowed() -> None:
    doc = clean_doc()
    sample(doc, "i00", "A")["detector"].append(
        {"kind": "timeline", "id": "T-order", "verdict": "fail", "severity": "low"}
    )
    assert run("A", doc).outcome == "passed"


@pytest.mark.parametrize("n", [11, 1])
def test_a_clean_run_on_too_few_items_is_insufficient(n: int) -> None:
    report = run("A", clean_doc(n=n))
    assert report.outcome == "insufficient"
    assert f"{n} items < 12" in report.summary and report.checks == []


def test_a_scene_type_with_one_item_is_insufficient() -> None:
    scenes = ["battle"] * 12 + ["turning_point"]
    report = run("B", clean_doc(n=13, scenes=scenes))
    assert report.outcome == "insufficient"
    assert report.set.problems == ["1 item of scene type turning_point < 2"]
    assert run("B", clean_doc(n=14, scenes=[*scenes, "turning_point"])).outcome == "passed"


def _disagree(doc: dict, count: int, arm: str = "A", tid: str = "F-plant:xuzhou") -> None:
    """Make the detector fail `tid` (the panel keeps pass) on the first `count` items."""
    for iid in item_ids(12)[:count]:
        verdict(sample(doc, iid, arm)["detector"], tid)["verdict"] = "fail"


def test_gate_a_agreement_threshold_is_exact() -> None:
    # 96 pairs; 90 % is 86.4, so 9 disagreements (87/96 = 90.6 %) pass and 10 (86/96 = 89.6 %) fail.
    doc = clean_doc()
    _disagree(doc, 9)
    assert run("A", doc).outcome == "passed"
    _disagree(doc, 1, arm="C")
    report = run("A", doc)
    assert report.outcome == "failed" and report.summary == "failed: agreement"
    assert check(report, "agreement").figures["agreeing"] == 86


def test_gate_a_counts_unknown_and_missing_verdicts_as_disagreement() -> None:
    doc = clean_doc()
    for iid in item_ids(12)[:10]:
        verdict(sample(doc, iid, "A")["detector"], "hook")["verdict"] = "unknown"
        verdict(sample(doc, iid, "A")["panel"], "hook")["verdict"] = "unknown"
    assert check(run("A", doc), "agreement").figures["agreeing"] == 86
    doc = clean_doc()
    for iid in item_ids(12)[:10]:
        s = sample(doc, iid, "C")
        s["detector"] = [d for d in s["detector"] if d["id"] != "hook"]
    assert run("A", doc).outcome == "failed"


def test_gate_a_fails_on_one_hard_event_the_panel_failed_and_the_detector_passed() -> None:
    doc = clean_doc()
    verdict(sample(doc, "i04", "C")["panel"], "R1")["verdict"] = "fail"
    report = run("A", doc)
    assert report.outcome == "failed" and check(report, "agreement").passed
    assert "i04/C result:R1" in check(report, "hard_events").detail
    doc = clean_doc()  # the other way round (detector stricter than the panel) is only a disagreement
    verdict(sample(doc, "i04", "C")["detector"], "R1")["verdict"] = "fail"
    assert run("A", doc).outcome == "passed"


def test_gate_a_ignores_arm_b() -> None:
    doc = clean_doc()
    for iid in item_ids(12):
        for d in sample(doc, iid, "B")["detector"]:
            d["verdict"] = "fail"
    assert run("A", doc).outcome == "passed"


def test_gate_b_coverage_high_severity_and_oracle() -> None:
    doc = clean_doc()
    verdict(sample(doc, "i00", "C")["detector"], "E1")["verdict"] = "fail"
    report = run("B", doc)
    assert not check(report, "hard_constraint_coverage").passed
    assert not check(report, "high_severity_per_chapter").passed  # a failed high-severity item is a finding
    assert check(report, "oracle_pass_rate").passed  # detector verdicts never move the oracle's figures
    verdict(sample(doc, "i01", "A")["detector"], "E1")["verdict"] = "fail"
    report = run("B", doc)
    assert check(report, "hard_constraint_coverage").passed and check(report, "high_severity_per_chapter").passed


def test_gate_b_oracle_fails_a_sample_on_unknown_or_a_missing_id() -> None:
    doc = clean_doc()
    verdict(sample(doc, "i00", "C")["panel"], "a1")["verdict"] = "unknown"
    report = run("B", doc)
    assert report.outcome == "failed" and not check(report, "oracle_pass_rate").passed
    assert report.anomalies == []  # unknown is an allowed answer: it fails the sample, it is not an anomaly
    doc = clean_doc()
    s = sample(doc, "i00", "C")
    s["panel"] = [p for p in s["panel"] if p["id"] != "a1"]
    assert not check(run("B", doc), "oracle_pass_rate").passed
    s = sample(doc, "i01", "A")
    s["panel"] = [p for p in s["panel"] if p["id"] != "E1"]
    assert check(run("B", doc), "oracle_pass_rate").passed  # 11/12 each


def test_gate_b_general_dimension_means() -> None:
    doc = clean_doc()
    sample(doc, "i00", "C")["scores"]["style_consistency"] = 5.5
    report = run("B", doc)
    assert report.summary == "failed: general:style_consistency"
    sample(doc, "i01", "C")["scores"]["style_consistency"] = 6.5  # mean C−A back to exactly 0
    assert run("B", doc).outcome == "passed"


def test_gate_b_scene_floor_is_per_scene_type_and_exact() -> None:
    doc = clean_doc()  # 6 battle, 6 character_dialogue items
    battle = [iid for iid, s in zip(item_ids(12), [0, 1] * 6, strict=True) if s == 0]
    for iid in battle[:3]:
        sample(doc, iid, "C")["scores"]["narrative_tension"] = 5.0  # mean −0.5: allowed
    for iid in battle[3:]:
        sample(doc, iid, "C")["scores"]["narrative_tension"] = 6.0
    # general dimensions unchanged; narrative_tension is the scene dimension only
    report = run("B", doc)
    assert check(report, "scene:battle").passed and check(report, "scene:battle").figures["mean_delta"] == -0.5
    sample(doc, battle[3], "C")["scores"]["narrative_tension"] = 5.5
    report = run("B", doc)
    assert report.summary == "failed: scene:battle"
    assert check(report, "scene:character_dialogue").passed


def test_a_gain_in_one_scene_type_does_not_hide_a_loss_in_another() -> None:
    doc = clean_doc()
    for k, iid in enumerate(item_ids(12)):
        sample(doc, iid, "C")["scores"]["narrative_tension"] = 9.0 if k % 2 else 5.0  # dialogue +3, battle −1
    assert run("B", doc).summary == "failed: scene:battle"


def test_arm_b_never_enters_gate_b_and_is_reported_by_new_character_share() -> None:
    doc = clean_doc()
    report = run("B", doc)
    for iid in item_ids(12):
        s = sample(doc, iid, "B")
        s["scores"] = dict.fromkeys(DIMS, 0.0)
        for d in s["detector"]:
            d["verdict"] = "fail"
        for p in s["panel"]:
            p["verdict"] = "fail"
    worse = run("B", doc)
    assert worse.outcome == "passed" and worse.checks == report.checks
    assert [(s.arm, s.bucket, s.items) for s in worse.diagnostic] == [
        ("B", "0", 3),
        ("B", "<=1/3", 3),
        ("B", ">1/3", 6),
    ]
    assert worse.diagnostic[0].mean_delta["style_consistency"] == -6.0
    assert worse.diagnostic[0].oracle_pass_rate == {"B": 0.0, "A": 1.0}
    assert run("A", doc).diagnostic == []


def test_new_character_buckets_are_exact() -> None:
    item = gate_input(clean_doc()).items[0]
    for new, total, bucket in [
        (0, 0, "0"),
        (0, 5, "0"),
        (1, 3, "<=1/3"),
        (2, 6, "<=1/3"),
        (2, 5, ">1/3"),
        (3, 3, ">1/3"),
    ]:
        assert (
            new_character_bucket(item.model_copy(update={"new_characters": new, "outline_entities": total})) == bucket
        )


def test_same_content_in_any_order_gives_identical_bytes_and_report() -> None:
    doc = clean_doc()
    shuffled = copy.deepcopy(doc)
    rng = random.Random(7)
    for key in ("items", "samples", "arms"):
        rng.shuffle(shuffled[key])
    for s in shuffled["samples"]:
        rng.shuffle(s["detector"])
        rng.shuffle(s["panel"])
        s["scores"] = dict(reversed(list(s["scores"].items())))
    a, b = gate_input(doc), gate_input(shuffled)
    assert gate_input_bytes(a) == gate_input_bytes(b)
    assert report_sha256(evaluate_gate("B", a, SPEC)) == report_sha256(evaluate_gate("B", b, SPEC))
    assert parse_gate_input(gate_input_bytes(a)) == a


def test_a_hand_written_gate_input_is_refused() -> None:
    gi = gate_input(clean_doc(n=2))
    pretty = json.dumps(gi.model_dump(mode="json"), indent=2).encode()
    with pytest.raises(FailedClosed) as exc:
        parse_gate_input(pretty)
    assert exc.value.code == "GATE_INPUT_NOT_CANONICAL"
    with pytest.raises(FailedClosed) as exc:
        parse_gate_input(b'{"schema_version": "gate-input-v1"}')
    assert exc.value.code == "GATE_INPUT_INVALID"


def test_structural_errors_are_refused_at_construction() -> None:
    doc = clean_doc(n=2)
    bad = copy.deepcopy(doc)
    bad["samples"].append(copy.deepcopy(bad["samples"][0]))
    with pytest.raises(ValueError, match="listed twice"):
        gate_input(bad)
    bad = copy.deepcopy(doc)
    bad["samples"][0]["ok"] = False
    with pytest.raises(ValueError, match="needs the anomaly"):
        gate_input(bad)
    bad = copy.deepcopy(doc)
    bad["samples"][0]["scores"][DIMS[0]] = float("nan")
    with pytest.raises(ValueError):
        gate_input(bad)


def test_report_binds_the_input_spec_and_rubric() -> None:
    gi: GateInput = gate_input(clean_doc())
    report = evaluate_gate("A", gi, SPEC)
    assert report.gate_input_sha256 == gate_input_sha256(gi)
    assert (report.gate_spec.id, report.gate_spec.sha256) == (SPEC.id, SPEC.sha256)
    assert report.rubric.sha256 == RUBRIC.sha256 and report.mode == "offline_replay"
