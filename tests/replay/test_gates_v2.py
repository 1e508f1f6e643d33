"""Gate spec v2: the gates certify only what they measured — a tie never passes Gate B, agreement on a set where
nothing fails never passes Gate A — and spec v1, which let both through, can no longer decide anything."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.replay import cohen_kappa, evaluate_gate, load_gate_spec, sign_test_p

from ._helpers import DIMS, HARD, RUBRIC, clean_doc, gate_input, honest_doc, item_ids, sample, verdict

SPEC = load_gate_spec()


def run(gate: str, doc: dict[str, Any]) -> Any:
    return evaluate_gate(gate, gate_input(doc), SPEC)  # type: ignore[arg-type]


def check(report: Any, name: str) -> Any:
    return next(c for c in report.checks if c.name == name)


def test_an_honest_run_passes_both_gates() -> None:
    doc = honest_doc()
    a, b = run("A", doc), run("B", doc)
    assert (a.outcome, b.outcome) == ("passed", "passed"), (a.summary, b.summary)
    assert check(a, "kappa").figures["kappa"] == 1.0 and check(a, "fails_each_side").figures["detector_fails"] == 4
    improvement = check(b, "improvement")
    assert improvement.figures["mean_delta"] == 1.0 and improvement.figures["better"] == 12
    assert improvement.figures["p_value"] == 1 / 4096  # all twelve items better: 2^-12


def test_identical_arms_fail_gate_b_as_no_detectable_difference() -> None:
    """Finding 1: a writer whose arms give byte-identical candidates — every mean C−A 0 — used to pass."""
    doc = honest_doc(gain=0.0)
    report = run("B", doc)
    assert report.outcome == "failed" and report.summary == "failed: improvement"
    assert "no detectable difference" in check(report, "improvement").detail
    assert evaluate_gate("B", gate_input(doc), load_gate_spec(1)).outcome == "passed"  # what v1 said


def test_a_small_or_uncertain_gain_is_not_an_improvement() -> None:
    assert run("B", honest_doc(gain=0.25)).summary == "failed: improvement"  # under the minimum effect
    doc = honest_doc(gain=1.0)
    for iid in item_ids(12)[:4]:  # 8 items better, 4 worse: mean ≥ 0.5 but p = P(X ≥ 8 | 12) = 794/4096 > 0.05
        for dim in RUBRIC.general_dimensions:
            sample(doc, iid, "C")["scores"][dim] -= 1.5
    doc_mean = check(run("B", doc), "improvement")
    assert doc_mean.figures["better"] == 8 and doc_mean.figures["worse"] == 4
    assert doc_mean.figures["p_value"] == 794 / 4096 and not doc_mean.passed


def test_trivial_agreement_with_no_fail_fails_gate_a() -> None:
    """Finding 2: 100 % agreement with not one `fail` used to pass Gate A."""
    report = run("A", clean_doc())
    assert report.outcome == "failed"
    assert not check(report, "kappa").passed and "tells nothing apart" in check(report, "kappa").detail
    assert check(report, "fails_each_side").figures == {"detector_fails": 0, "panel_fails": 0, "min": 3}
    assert evaluate_gate("A", gate_input(clean_doc()), load_gate_spec(1)).outcome == "passed"  # what v1 said


def test_gate_a_needs_fails_on_both_sides_and_chance_corrected_agreement() -> None:
    doc = honest_doc(broken=2)  # only two fails on each side
    assert run("A", doc).summary == "failed: fails_each_side"
    doc = honest_doc()
    for iid in item_ids(12)[:6]:  # the detector also fails six hooks the panel passed: 93.75 % raw agreement…
        verdict(sample(doc, iid, "C")["detector"], "hook")["verdict"] = "fail"
    report = run("A", doc)
    assert not check(report, "kappa").passed and check(report, "fails_each_side").passed  # … but κ 0.54 < 0.6
    assert check(report, "kappa").figures["agreeing"] == 90
    assert evaluate_gate("A", gate_input(doc), load_gate_spec(1)).outcome == "passed"  # v1 counted raw agreement


def test_sign_test_is_the_exact_binomial_tail() -> None:
    assert sign_test_p(0, 0) == 1
    assert sign_test_p(12, 0) == Fraction(1, 4096)
    assert sign_test_p(10, 2) == Fraction(comb(12, 10) + comb(12, 11) + 1, 4096)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from("pfu"), st.sampled_from("pfu")), min_size=1, max_size=40))
def test_kappa_equals_a_naive_recount(pairs: list[tuple[str, str]]) -> None:
    n = len(pairs)
    po = Fraction(sum(a == b for a, b in pairs), n)
    cats = {c for pair in pairs for c in pair}
    pe = sum(Fraction(sum(a == c for a, _ in pairs), n) * Fraction(sum(b == c for _, b in pairs), n) for c in cats)
    got = cohen_kappa(pairs)
    assert got == (None if pe == 1 else (po - pe) / (1 - pe))


def test_the_retired_spec_is_refused_by_the_issuer() -> None:
    assert not load_gate_spec(1).issues and load_gate_spec().issues
    assert len(DIMS) == len(RUBRIC.general_dimensions) + 1 and len(HARD) == 4
