"""Quality-gate adjudication and aggregation across items (pure functions over panel reports)."""

from __future__ import annotations

import json

import pytest

from novelmuse.errors import InputError
from novelmuse.judging import (
    CellScore,
    PanelReport,
    Rubric,
    RubricRef,
    adjudicate_quality_gate,
    aggregate,
    load_rubric,
)
from novelmuse.text import sha256_json

QG = load_rubric("quality_gate")
WR = load_rubric("writer_replay")


def report(rubric: Rubric, scores: dict[str, dict[str, float]], *, status: str = "stable", scene: str | None = None):  # type: ignore[no-untyped-def]
    cells = [
        CellScore(candidate_id=c, dimension_id=d, score=v, judge_scores=[v, v], method="mean_of_two")
        for c, dims in scores.items()
        for d, v in dims.items()
    ]
    return PanelReport(
        panel_id="jp_x",
        run_id="r",
        item_ref="item_x",
        profile=rubric.profile,
        rubric=RubricRef(id=rubric.id, version=rubric.version, sha256=rubric.sha256),
        scene_type=scene,
        status=status,  # type: ignore[arg-type]
        error_code=None if status == "stable" else "JUDGE_UNSTABLE",
        third_judge=False,
        disagreements=0,
        unstable_cells=0,
        candidates=[],
        judges=[],
        scores=cells if status == "stable" else [],
        arm_map_sha256="0" * 64,
    ).seal()


def qg_scores(**over: float) -> dict[str, float]:
    return {d: over.get(d, 4.0) for d in QG.dimension_ids}


ALL_PASSED = {"source_safety": "passed", "output_compliance": "passed", "static_contract": "passed"}


def test_passes_only_when_all_critical_dimensions_reach_four_and_no_hard_block_fired() -> None:
    ok = adjudicate_quality_gate(report(QG, {"c1": qg_scores()}), QG, "c1", ALL_PASSED)  # type: ignore[arg-type]
    assert ok.outcome == "passed" and ok.reasons == [] and ok.code is None
    low = adjudicate_quality_gate(report(QG, {"c1": qg_scores(scene_structure=3.5)}), QG, "c1", ALL_PASSED)  # type: ignore[arg-type]
    assert low.outcome == "failed" and low.code == "GATE_FAILED"
    assert low.reasons == ["critical dimension scene_structure scored 3.5 < 4.0"]
    boundary = adjudicate_quality_gate(report(QG, {"c1": qg_scores(canon_compliance=4.0)}), QG, "c1", ALL_PASSED)  # type: ignore[arg-type]
    assert boundary.outcome == "passed"  # ≥ 4.0, exactly


def test_a_fired_or_unevaluated_hard_block_fails_the_gate() -> None:
    r = report(QG, {"c1": qg_scores(canon_compliance=5.0)})
    fired = adjudicate_quality_gate(r, QG, "c1", {**ALL_PASSED, "source_safety": "fired"})  # type: ignore[dict-item]
    assert fired.outcome == "failed" and fired.reasons == ["hard block source_safety fired (rule layer)"]
    missing = adjudicate_quality_gate(r, QG, "c1", None)
    assert missing.outcome == "failed" and len(missing.reasons) == 3
    assert missing.hard_blocks == dict.fromkeys(QG.hard_blocks, "not evaluated")


def test_non_critical_dimensions_only_suggest() -> None:
    r = report(QG, {"c1": qg_scores(readability=2.0, style_fit=3.5)})
    d = adjudicate_quality_gate(r, QG, "c1", ALL_PASSED)  # type: ignore[arg-type]
    assert d.outcome == "passed"
    assert [(s.dimension_id, s.score) for s in d.suggestions] == [("style_fit", 3.5), ("readability", 2.0)]


def test_an_unstable_panel_cannot_be_adjudicated() -> None:
    d = adjudicate_quality_gate(report(QG, {}, status="invalid_unstable"), QG, "c1", ALL_PASSED)  # type: ignore[arg-type]
    assert d.outcome == "error" and d.code == "JUDGE_UNSTABLE"


def test_aggregation_gives_b_minus_a_and_keeps_scene_dimensions_within_their_scene_type() -> None:
    def wr(a: float, b: float, tension_a: float, tension_b: float) -> dict[str, dict[str, float]]:
        base = dict.fromkeys(WR.dimension_ids[:4], a)
        other = dict.fromkeys(WR.dimension_ids[:4], b)
        return {"c1": {**base, "narrative_tension": tension_a}, "c2": {**other, "narrative_tension": tension_b}}

    items = [
        (report(WR, wr(6.0, 7.0, 5.0, 8.0), scene="battle"), {"c1": "A", "c2": "B"}),
        (report(WR, wr(6.0, 6.5, 7.0, 5.0), scene="character_dialogue"), {"c1": "A", "c2": "B"}),
        (report(WR, wr(1.0, 9.0, 1.0, 9.0), status="invalid_unstable", scene="battle"), {"c1": "A", "c2": "B"}),
    ]
    agg = aggregate(WR, items)
    assert (agg.items_total, agg.items_stable, agg.items_excluded) == (3, 2, 1)
    deltas = {(d.arm, d.dimension_id, d.scene_type): (d.items, d.mean_delta) for d in agg.deltas}
    assert deltas[("B", "style_consistency", None)] == (2, 0.75)  # general: across chapters
    assert deltas[("B", "narrative_tension", "battle")] == (1, 3.0)  # scene: within one scene type only
    assert deltas[("B", "narrative_tension", "character_dialogue")] == (1, -2.0)
    assert ("B", "narrative_tension", None) not in deltas


def test_aggregation_refuses_mixed_rubric_versions() -> None:
    other = report(QG, {"c1": qg_scores()})
    with pytest.raises(InputError) as exc:
        aggregate(WR, [(other, {"c1": "A"})])
    assert exc.value.code == "JUDGE_RUBRIC_MIXED"


FO = load_rubric("fine_outline_replay")


def test_fine_outline_deltas_leave_out_dimensions_with_a_stability_warning() -> None:
    """Seed 000: a difference above 0.5 only warns, and no card-utility conclusion (B−A) is drawn from it."""

    def fo_report(b_judges: dict[str, list[float]]) -> PanelReport:
        cells = []
        for d in FO.dimension_ids:
            cells.append(
                CellScore(candidate_id="c1", dimension_id=d, score=3.0, judge_scores=[3.0, 3.0], method="mean_of_two")
            )
            js = b_judges.get(d, [4.0, 4.0])
            cells.append(
                CellScore(candidate_id="c2", dimension_id=d, score=sum(js) / 2, judge_scores=js, method="mean_of_two")
            )
        base = report(FO, {})
        return base.model_copy(update={"scores": cells, "warnings": ["STABILITY_WARNING: …"]}).seal()

    items = [
        (fo_report({"entity_state": [2.0, 5.0]}), {"c1": "A", "c2": "B"}),  # B's entity_state is unstable here
        (fo_report({}), {"c1": "A", "c2": "B"}),
    ]
    agg = aggregate(FO, items)
    deltas = {d.dimension_id: d for d in agg.deltas if d.arm == "B"}
    assert (deltas["handoff_hook"].items, deltas["handoff_hook"].mean_delta, deltas["handoff_hook"].withheld) == (
        2,
        1.0,
        0,
    )
    assert (deltas["entity_state"].items, deltas["entity_state"].mean_delta, deltas["entity_state"].withheld) == (
        1,
        1.0,
        1,
    )
    means = {(m.arm, m.dimension_id): (m.items, m.mean) for m in agg.means}
    assert means[("B", "entity_state")] == (2, 3.75)  # the scores are still reported, per dimension
    # A third-judge profile never withholds: its disagreements were settled by the third judge.
    assert all(
        d.withheld == 0
        for d in aggregate(QG, [(report(QG, {"c1": qg_scores(), "c2": qg_scores()}), {"c1": "A", "c2": "B"})]).deltas
    )


def test_a_v1_panel_report_in_camel_case_is_still_read_and_verified() -> None:
    """Reports stored before the JSON became snake_case (schema judge-panel-v1) stay readable and checkable."""
    new = report(QG, {"c1": qg_scores(), "c2": qg_scores(style_fit=3.0)})
    assert new.schema_version == "judge-panel-v2" and new.verify()
    body = new.model_copy(update={"schema_version": "judge-panel-v1"}).model_dump(
        mode="json", by_alias=True, exclude={"report_sha256"}
    )
    assert {"panelId", "armMapSha256", "schemaVersion"} <= set(body) and "candidateId" in body["scores"][0]
    old = PanelReport.model_validate_json(json.dumps({**body, "reportSha256": sha256_json(body)}))
    assert old.verify() and (old.panel_id, old.scores, old.arm_map_sha256) == (new.panel_id, new.scores, "0" * 64)
    assert not old.model_copy(update={"third_judge": True}).verify()  # its sha256 still binds its content
    assert aggregate(QG, [(old, {"c1": "A", "c2": "B"})]).items_stable == 1


def test_the_summary_gives_each_arms_structure_gate_result() -> None:
    """Seed 000: the summary gives each dimension's score, the structure gate result (结构门结果), B−A and C−A. Per
    arm: items whose every assertion/constraint verdict passed, failed (one fail), split, or had no standard."""
    from novelmuse.judging import CellVerdict

    def with_verdicts(verdicts: dict[str, list[str]]) -> PanelReport:
        cells = [
            CellVerdict(candidate_id=c, target_id=f"a{i}", verdict=v, judge_verdicts=[v, v])  # type: ignore[arg-type]
            for c, vs in verdicts.items()
            for i, v in enumerate(vs)
        ]
        scores = [
            CellScore(candidate_id=c, dimension_id=d, score=3.0, judge_scores=[3.0, 3.0], method="mean_of_two")
            for c in ("c1", "c2")
            for d in FO.dimension_ids
        ]
        return report(FO, {}).model_copy(update={"scores": scores, "verdicts": cells}).seal()

    arms = {"c1": "A", "c2": "B"}
    agg = aggregate(
        FO,
        [
            (with_verdicts({"c1": ["pass", "pass"], "c2": ["pass", "fail"]}), arms),
            (with_verdicts({"c1": ["pass", "split"], "c2": ["pass", "pass"]}), arms),
            (with_verdicts({}), arms),
        ],
    )
    gates = {g.arm: (g.items, g.passed, g.failed, g.split, g.no_standard) for g in agg.structure}
    assert gates == {"A": (3, 1, 0, 1, 1), "B": (3, 1, 1, 0, 1)}
