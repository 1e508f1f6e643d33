"""Fine outline v2: results, beat/setting/anchor ids, scene type, the one constraint-id space, strict values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import SCENE_TYPES, FineOutline, outline_problems, parse_outline
from novelmuse.errors import InputError

from ..conftest import SAMPLE_BOOK

V2 = """\
version: 2
chapter: 11
scene_type: battle
goal: 刘备救北海
hard_events:
  - {id: E1, text: 管亥围北海, result: 孔融退守城中}
  - id: E2
    text: 关羽战管亥
    result: 关羽斩管亥
beats:
  - {id: B1, text: 太史慈突围}
foreshadows:
  - {op: plant, id: F-xuzhou, description: 陶谦欲让徐州, payoff_chapter: 12}
  - {op: advance, id: F-weapons, note: 青龙刀劈管亥}
hook: 吕布提戟追来
new_settings:
  - {id: S1, kind: entity, text: 太史慈登场, entities: [太史慈]}
time_anchors:
  - {id: T1, text: 次日孔融登城, marker: 次日}
entities: [刘备, 关羽]
"""


def _write(tmp_path: Path, text: str, name: str = "0011.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_v2_items_form_one_constraint_id_space(tmp_path: Path) -> None:
    o = parse_outline(_write(tmp_path, V2), expect_chapter=11)
    assert [(i.id, i.kind, i.hard) for i in o.items()] == [
        ("goal", "goal", False),
        ("E1", "event", True),
        ("R1", "result", True),
        ("E2", "event", True),
        ("R2", "result", True),
        ("B1", "beat", False),
        ("F-plant:F-xuzhou", "plant", True),
        ("F-advance:F-weapons", "advance", True),
        ("hook", "hook", True),
        ("S1", "setting", True),
        ("T1", "anchor", True),
        ("entities", "entities", False),
    ]
    assert o.constraint_ids() == ["E1", "R1", "E2", "R2", "F-plant:F-xuzhou", "F-advance:F-weapons", "hook", "S1", "T1"]
    r2 = next(i for i in o.items() if i.id == "R2")
    assert (r2.text, r2.ref, o.line(r2.loc)) == ("关羽斩管亥", "E2", 9)
    assert o.declared_entities() == {"太史慈"}
    assert [p.code for p in outline_problems(o)] == []  # nothing lacking, nothing wrong


def test_v1_sample_outlines_load_and_report_what_they_lack() -> None:
    o = parse_outline(SAMPLE_BOOK / "outlines" / "0001.yaml", expect_chapter=1)
    assert o.version == 1
    ids = [i.id for i in o.items()]
    assert ids[:6] == ["goal", "E1", "E2", "E3", "E4", "B1"]  # no results; beats numbered by position
    assert "S1" in ids and "F-plant:F-weapons" in ids
    problems = outline_problems(o)
    assert [p.code for p in problems] == ["OUTLINE_VERSION_1", "OUTLINE_NO_SCENE_TYPE"]
    assert all(p.severity == "warning" for p in problems)
    assert problems[0].message == (
        "version-1 outline (add `version: 2`): 4 hard event(s) without a result; 4 beat(s)/setting(s) without an "
        "id; 1 setting(s) without a kind; no time anchors"
    )


@pytest.mark.parametrize(
    ("old", "new", "code", "line"),
    [
        ("    result: 关羽斩管亥\n", "", "OUTLINE_EVENT_NO_RESULT", 7),
        ("  - {id: B1, text: 太史慈突围}", "  - 太史慈突围", "OUTLINE_ID_MISSING", 11),
        ("{id: S1, kind: entity, ", "{id: S1, ", "OUTLINE_SETTING_KIND", 17),
        ("{id: B1, text", "{id: beat-1, text", "OUTLINE_ID_SHAPE", 11),
        ("{id: T1, text", "{id: S1, text", "OUTLINE_DUPLICATE_ID", 19),
        (
            "  - {op: advance, id: F-weapons",
            "  - {op: plant, id: F-xuzhou, description: x}\n  - {op: advance, id: F-w",
            "OUTLINE_DUPLICATE_ID",
            14,
        ),
        ("scene_type: battle", "scene_type: duel", "OUTLINE_INVALID", 3),
        ("chapter: 11", "chapter: true", "OUTLINE_INVALID", 2),
        ("chapter: 11", 'chapter: "11"', "OUTLINE_INVALID", 2),
        ("chapter: 11", "chapter: 100000000", "OUTLINE_INVALID", 2),
        ("payoff_chapter: 12", "payoff_chapter: .nan", "OUTLINE_INVALID", 13),
        ("payoff_chapter: 12", "payoff_chapter: 12.0", "OUTLINE_INVALID", 13),
        ("entities: [刘备, 关羽]", "entities: [刘备, '  ']", "OUTLINE_INVALID", 20),
        ("entities: [刘备, 关羽]", 'entities: [刘备, "关\\x07羽"]', "OUTLINE_INVALID", 20),
        ("entities: [刘备, 关羽]", f"entities: [刘备, {'关' * 65}]", "OUTLINE_INVALID", 20),
        ("id: F-xuzhou", "id: F..xuzhou", "OUTLINE_INVALID", 13),
        ("id: F-xuzhou", "id: 'F:xuzhou'", "OUTLINE_INVALID", 13),
        ("hook: 吕布提戟追来", "hook: 123", "OUTLINE_INVALID", 15),
        ("version: 2", "version: 3", "OUTLINE_INVALID", 1),
    ],
)
def test_v2_errors_name_code_and_line(tmp_path: Path, old: str, new: str, code: str, line: int) -> None:
    assert old in V2
    p = _write(tmp_path, V2.replace(old, new))
    with pytest.raises(InputError) as ei:
        parse_outline(p, expect_chapter=11)
    assert (ei.value.code, ei.value.where) == (code, f"{p}:{line}"), ei.value.render()
    assert "\n" not in ei.value.render()


def test_not_a_mapping_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as ei:
        parse_outline(_write(tmp_path, "- a\n- b\n"))
    assert ei.value.code == "OUTLINE_INVALID"


def test_sha256_is_of_the_file_bytes(tmp_path: Path) -> None:
    import hashlib

    p = _write(tmp_path, V2)
    assert parse_outline(p).sha256 == hashlib.sha256(p.read_bytes()).hexdigest()


_texts = st.text(alphabet="刘关张曹兵马城abc 、。", min_size=1, max_size=12).filter(lambda s: s.strip() != "")


@st.composite
def _outlines(draw: st.DrawFn) -> FineOutline:
    n_events = draw(st.integers(0, 4))
    return FineOutline.model_validate(
        {
            "version": 2,
            "chapter": draw(st.integers(0, 99_999)),
            "scene_type": draw(st.sampled_from(SCENE_TYPES)),
            "goal": draw(_texts),
            "hard_events": [
                {"id": f"E{i}", "text": draw(_texts), "result": draw(_texts)} for i in range(1, n_events + 1)
            ],
            "beats": [{"id": f"B{i}", "text": draw(_texts)} for i in range(1, draw(st.integers(0, 3)) + 1)],
            "hook": draw(_texts),
            "new_settings": [
                {"id": f"S{i}", "kind": draw(st.sampled_from(["entity", "state"])), "text": draw(_texts)}
                for i in range(1, draw(st.integers(0, 2)) + 1)
            ],
            "time_anchors": [{"id": "T1", "text": draw(_texts), "marker": draw(_texts)}],
            "entities": draw(st.lists(_texts, max_size=3)),
        }
    )


@settings(max_examples=60)
@given(_outlines())
def test_a_dumped_outline_parses_back_to_itself_with_unique_ids(
    tmp_path_factory: pytest.TempPathFactory, o: FineOutline
) -> None:
    text = yaml.safe_dump(o.model_dump(exclude_defaults=True), allow_unicode=True, sort_keys=False)
    p = tmp_path_factory.mktemp("o") / "x.yaml"
    p.write_text(text, encoding="utf-8")
    back = parse_outline(p)
    assert back.model_dump() == o.model_dump()
    ids = [i.id for i in back.items()]
    assert len(ids) == len(set(ids))
    assert set(back.constraint_ids()) == {i.id for i in back.items() if i.kind not in ("goal", "beat", "entities")}
