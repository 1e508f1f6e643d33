"""Rubrics: the packaged files load and match their pins; an edit without a version bump fails to load."""

from __future__ import annotations

from pathlib import Path

import pytest

from novelmuse.errors import InputError
from novelmuse.judging import list_rubrics, load_rubric
from novelmuse.judging._rubrics import SCENE_TYPES, _default_dir
from novelmuse.text import sha256_hex


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "rubrics"
    folder.mkdir()
    for item in _default_dir().iterdir():
        if item.name.endswith(".yaml"):
            (folder / item.name).write_bytes(item.read_bytes())
    return folder


def test_packaged_rubrics_load_with_their_pinned_hashes() -> None:
    rubrics = {r.profile: r for r in list_rubrics()}
    assert set(rubrics) == {"quality_gate", "fine_outline_replay", "writer_replay"}
    for r in rubrics.values():
        assert r.sha256 == sha256_hex((_default_dir() / r.file).read_bytes())
    qg = rubrics["quality_gate"]
    assert qg.critical_ids == ["canon_compliance", "character_voice", "scene_structure"]
    assert all(qg.dimension(d).threshold == 4.0 for d in qg.critical_ids)
    assert qg.dimension_ids[3:] == [
        "style_fit",
        "pacing_tension",
        "information_density",
        "emotional_continuity",
        "readability",
    ]
    assert qg.hard_blocks == ["source_safety", "output_compliance", "static_contract"]
    assert not set(qg.hard_blocks) & set(qg.dimension_ids)
    assert (qg.scale.min, qg.scale.max, qg.scale.step) == (1, 5, 0.5)
    fo = rubrics["fine_outline_replay"]
    assert fo.dimension_ids == [
        "structure_completeness",
        "direction_causality",
        "order_pacing",
        "entity_state",
        "foreshadowing_action",
        "handoff_hook",
    ]
    assert fo.panel.disagreement == "stability_warning"
    assert fo.aggregation.total_score == "forbidden"
    wr = rubrics["writer_replay"]
    assert wr.id == "writer-replay-rubric-v2" and wr.version == 2
    assert (wr.scale.min, wr.scale.max, wr.scale.step) == (0, 10, 0.5)
    assert set(wr.scene_types) == set(SCENE_TYPES)
    assert all(len(s.anchors) == 5 and s.question and s.criteria for s in wr.scene_types.values())
    assert wr.dimension("narrative_tension").layer == "scene"
    # what each profile does differently is read from its data, never from its name
    assert [(r.adjudicated, bool(r.hard_blocks), r.needs, r.needs_scene_type) for r in (qg, fo, wr)] == [
        (True, True, "nothing", False),
        (False, False, "outline_or_oracle", False),
        (False, False, "outline", True),
    ]


def test_what_an_item_needs_comes_from_the_registry(tmp_path: Path) -> None:
    """writer_replay refuses an item without a fine outline because its registry entry says it needs one."""
    from novelmuse.judging import build_blind_item

    from ._helpers import corpus_candidates

    folder = _copy(tmp_path)
    registry = folder / "registry.yaml"
    args = {"item_id": "x", "seed": "y", "candidates": corpus_candidates(1), "scene_type": "battle"}
    with pytest.raises(InputError) as info:
        build_blind_item(rubric=load_rubric("writer_replay", folder=folder), **args)
    assert info.value.code == "JUDGE_OUTLINE_REQUIRED"
    registry.write_text(registry.read_text(encoding="utf-8").replace("    needs: outline  #", "    #"), "utf-8")
    assert build_blind_item(rubric=load_rubric("writer_replay", folder=folder), **args).blind.candidates


def test_every_general_dimension_has_five_anchors_on_the_scale() -> None:
    for r in list_rubrics():
        for d in r.dimensions:
            if d.layer == "general":
                assert len(d.anchors) == 5
                assert all(r.scale.contains(a.score) and r.scale.on_step(a.score) for a in d.anchors)


def test_editing_a_rubric_without_a_version_bump_fails_to_load(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    assert load_rubric("quality_gate", folder=folder).version == 1
    path = folder / "quality_gate.v1.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("threshold: 4.0", "threshold: 3.5", 1), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_rubric("quality_gate", folder=folder)
    assert exc.value.code == "RUBRIC_HASH_MISMATCH"
    with pytest.raises(InputError) as exc2:
        list_rubrics(folder)
    assert exc2.value.code == "RUBRIC_HASH_MISMATCH"


def test_a_version_bump_must_be_registered(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "quality_gate.v1.yaml"
    text = path.read_text(encoding="utf-8").replace("version: 1", "version: 2", 1).replace("-v1", "-v2", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_rubric("quality_gate", folder=folder)
    assert exc.value.code == "RUBRIC_NOT_REGISTERED"
    # Registered properly (new file, new pin), it loads and the old version stays loadable.
    path.rename(folder / "quality_gate.v2.yaml")
    (folder / "quality_gate.v1.yaml").write_bytes((_default_dir() / "quality_gate.v1.yaml").read_bytes())
    new = folder / "quality_gate.v2.yaml"
    with (folder / "registry.yaml").open("a", encoding="utf-8") as f:
        f.write(
            "  - profile: quality_gate\n    id: quality-gate-rubric-v2\n    version: 2\n"
            f"    file: quality_gate.v2.yaml\n    sha256: {sha256_hex(new.read_bytes())}\n"
        )
    assert load_rubric("quality_gate", folder=folder).version == 2
    assert load_rubric("quality_gate", folder=folder, version=1).id == "quality-gate-rubric-v1"


def test_unknown_profile_is_a_usage_error() -> None:
    with pytest.raises(InputError) as exc:
        load_rubric("nope")
    assert exc.value.code == "JUDGE_PROFILE_UNKNOWN"


def test_an_invalid_rubric_names_the_field(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "fine_outline_replay.v1.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("  - id: handoff_hook", "  - id: Handoff"), "utf-8")
    reg = folder / "registry.yaml"
    old = sha256_hex((_default_dir() / "fine_outline_replay.v1.yaml").read_bytes())
    reg.write_text(reg.read_text(encoding="utf-8").replace(old, sha256_hex(path.read_bytes())), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_rubric("fine_outline_replay", folder=folder)
    assert exc.value.code == "RUBRIC_INVALID"
    assert "dimensions" in exc.value.what


def test_a_registry_may_not_pin_one_version_twice(tmp_path: Path) -> None:
    """Two pins for one (profile, version) would let an edited copy pass as the same yardstick."""
    folder = _copy(tmp_path)
    edited = folder / "quality_gate.v1b.yaml"
    edited.write_text(
        (folder / "quality_gate.v1.yaml").read_text(encoding="utf-8").replace("threshold: 4.0", "threshold: 3.0"),
        encoding="utf-8",
    )
    with (folder / "registry.yaml").open("a", encoding="utf-8") as f:
        f.write(
            "  - profile: quality_gate\n    id: quality-gate-rubric-v1\n    version: 1\n"
            f"    file: quality_gate.v1b.yaml\n    sha256: {sha256_hex(edited.read_bytes())}\n"
        )
    with pytest.raises(InputError) as exc:
        load_rubric("quality_gate", folder=folder)
    assert exc.value.code == "RUBRIC_REGISTRY_INVALID" and "quality_gate v1" in exc.value.what
