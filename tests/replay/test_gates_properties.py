"""Property tests of the gates (hypothesis): scores never move a verdict-based outcome, an anomaly always
fails, and Gate A's agreement equals a naive recount of the raw document."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.replay import evaluate_gate, load_gate_spec

from ._helpers import DIMS, HARD, TARGETS, clean_doc, gate_input

# The mechanics every spec version shares, on version 1's thresholds (its reports stay checkable); version 2's
# own checks (κ, fails on both sides, a measured improvement) are in test_gates_v2.py.
SPEC = load_gate_spec(1)
VERDICTS = st.sampled_from(["pass", "fail", "unknown"])
SCORES = st.integers(min_value=0, max_value=20).map(lambda k: k / 2)
VERDICT_CHECKS = ("hard_constraint_coverage", "high_severity_per_chapter", "oracle_pass_rate")


@st.composite
def runs(draw: st.DrawFn, min_items: int = 1) -> dict[str, Any]:
    """A clean run of `min_items`–14 items whose detector and panel verdicts, severities and scores vary."""
    n = draw(st.integers(min_value=min_items, max_value=14))
    doc = clean_doc(n=n)
    for s in doc["samples"]:
        for d in s["detector"]:
            d["verdict"] = draw(VERDICTS)
            d["severity"] = draw(st.sampled_from(["high", "medium", "low"]))
        for p in s["panel"]:
            p["verdict"] = draw(VERDICTS)
        s["scores"] = {dim: draw(SCORES) for dim in DIMS}
    return doc


@settings(max_examples=30)
@given(runs(), st.data())
def test_changing_any_score_never_changes_a_verdict_based_outcome(doc: dict[str, Any], data: st.DataObject) -> None:
    before_a, before_b = evaluate_gate("A", gate_input(doc), SPEC), evaluate_gate("B", gate_input(doc), SPEC)
    changed = copy.deepcopy(doc)
    for s in changed["samples"]:
        for dim in DIMS:
            if data.draw(st.booleans()):
                s["scores"][dim] = data.draw(SCORES)
    after_a, after_b = evaluate_gate("A", gate_input(changed), SPEC), evaluate_gate("B", gate_input(changed), SPEC)
    assert after_a.model_dump(exclude={"gate_input_sha256"}) == before_a.model_dump(exclude={"gate_input_sha256"})
    assert after_b.anomalies == before_b.anomalies
    assert [c for c in after_b.checks if c.name in VERDICT_CHECKS] == [
        c for c in before_b.checks if c.name in VERDICT_CHECKS
    ]


@settings(max_examples=40)
@given(
    runs(),
    st.data(),
    st.sampled_from(["system", "schema", "hash", "leak", "judge"]),
    st.sampled_from(["A", "B"]),
)
def test_an_anomaly_always_fails_even_on_a_too_small_set(
    doc: dict[str, Any], data: st.DataObject, category: str, gate: str
) -> None:
    s = data.draw(st.sampled_from(doc["samples"]))
    s.update(ok=False, anomaly={"category": category, "code": "INJECTED"})
    report = evaluate_gate(gate, gate_input(doc), SPEC)  # type: ignore[arg-type]
    assert report.outcome == "failed"
    assert any(a.code == "INJECTED" and a.item_id == s["item_id"] and a.arm == s["arm"] for a in report.anomalies)


@settings(max_examples=25)
@given(runs(min_items=12))
def test_gate_a_agreement_equals_a_naive_recount(doc: dict[str, Any]) -> None:
    pairs = agreeing = 0
    for item in doc["items"]:
        for arm in ("A", "C"):
            s = next(x for x in doc["samples"] if x["item_id"] == item["item_id"] and x["arm"] == arm)
            for kind, tid in HARD:
                d = next((x["verdict"] for x in s["detector"] if (x["kind"], x["id"]) == (kind, tid)), None)
                p = next((x["verdict"] for x in s["panel"] if (x["kind"], x["id"]) == (kind, tid)), None)
                pairs += 1
                agreeing += d == p and d in ("pass", "fail")
    report = evaluate_gate("A", gate_input(doc), SPEC)
    agreement = next(c for c in report.checks if c.name == "agreement")
    assert (agreement.figures["pairs"], agreement.figures["agreeing"]) == (pairs, agreeing)
    assert agreement.passed == (agreeing * 10 >= pairs * 9)
    assert len(TARGETS) - len(HARD) == 1  # the assertion is never paired (the detector never sees the oracle)
