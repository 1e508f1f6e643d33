"""Fine outlines (细纲): parsing, validation errors naming file and line, foreshadow declarations."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import FineOutline, line_of, load_yaml_lines, parse_outline
from novelmuse.errors import InputError

GOOD = """\
chapter: 3
goal: 张飞怒鞭督邮
hard_events:
  - {id: E1, text: 督邮索贿}
  - id: E2
    text: 张飞鞭打督邮
beats: [刘备弃官, 投奔代州]
foreshadows:
  - {op: plant, id: F-seal, description: 刘备挂印而去, payoff_chapter: 10}
  - {op: advance, id: F-old}
  - {op: resolve, id: F-older}
hook: 何进召外兵
new_settings:
  - {text: 刘备弃官, entities: [刘备]}
entities: [刘备, 张飞]
"""


def _write(tmp_path: Path, text: str, name: str = "0003.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_good_outline_parses(tmp_path: Path) -> None:
    o = parse_outline(_write(tmp_path, GOOD), expect_chapter=3)
    assert isinstance(o, FineOutline)
    assert [e.id for e in o.hard_events] == ["E1", "E2"]
    assert [p.id for p in o.plants] == ["F-seal"]
    assert o.plants[0].payoff_chapter == 10
    assert o.declares({"刘备", "玄德"}) and not o.declares({"曹操"})


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (GOOD.replace("    text: 张飞鞭打督邮\n", "    text: 张飞鞭打督邮\n    severity: high\n"), 7, "severity"),
        (GOOD.replace("description: 刘备挂印而去, ", ""), 9, "needs a description"),
        (GOOD.replace("{op: advance, id: F-old}", "{op: grow, id: F-old}"), 10, "foreshadows.1.op"),
        (GOOD.replace("chapter: 3", "chapter: -1"), 1, "chapter"),
    ],
)
def test_invalid_outline_names_file_and_line(tmp_path: Path, text: str, line: int, needle: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as ei:
        parse_outline(p, expect_chapter=3)
    assert ei.value.code == "OUTLINE_INVALID"
    assert ei.value.where == f"{p}:{line}"
    assert needle in ei.value.what


@pytest.mark.parametrize(
    ("text", "code", "line", "needle"),
    [
        (GOOD.replace("id: E2", "id: E1"), "OUTLINE_DUPLICATE_ID", 5, "used twice (also by the event at line 4)"),
        (GOOD.replace("payoff_chapter: 10", "payoff_chapter: 2"), "OUTLINE_PAYOFF_PAST", 9, "due by chapter 2"),
    ],
)
def test_outline_problems_name_their_own_line(tmp_path: Path, text: str, code: str, line: int, needle: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as ei:
        parse_outline(p, expect_chapter=3)
    assert (ei.value.code, ei.value.where) == (code, f"{p}:{line}")
    assert needle in ei.value.what


def test_syntax_error_and_duplicate_key_name_line(tmp_path: Path) -> None:
    p = _write(tmp_path, "chapter: 3\ngoal: [unclosed\n")
    with pytest.raises(InputError) as ei:
        parse_outline(p)
    assert ei.value.code == "OUTLINE_SYNTAX" and ei.value.where.startswith(f"{p}:")
    p = _write(tmp_path, "chapter: 3\ngoal: a\nhook: b\ngoal: c\n")
    with pytest.raises(InputError) as ei:
        parse_outline(p)
    assert ei.value.code == "OUTLINE_SYNTAX" and ei.value.where == f"{p}:4" and "line 2" in ei.value.what


def test_chapter_mismatch(tmp_path: Path) -> None:
    p = _write(tmp_path, GOOD, "0004.yaml")
    with pytest.raises(InputError) as ei:
        parse_outline(p, expect_chapter=4)
    assert ei.value.code == "OUTLINE_CHAPTER_MISMATCH" and ei.value.where == f"{p}:1"


def test_line_numbers_kept_on_nested_values(tmp_path: Path) -> None:
    data = load_yaml_lines(_write(tmp_path, GOOD), code_prefix="X")
    assert data.key_lines["foreshadows"] == 8
    assert data["foreshadows"].item_lines == [9, 10, 11]
    assert data["hard_events"][1].line == 5


_scalars = st.one_of(st.integers(-5, 5), st.booleans(), st.text(alphabet="甲乙ab :-#", max_size=6), st.none())
_docs = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(alphabet="abc甲", min_size=1, max_size=3), inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_docs, st.booleans())
def test_line_loader_reads_what_safe_load_reads(doc: object, flow: bool) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True, default_flow_style=flow)
    assert load_yaml_lines(Path("x.yaml"), code_prefix="X", text=text) == yaml.safe_load(text)


def test_line_of_follows_a_pydantic_location() -> None:
    text = "a: 1\nb:\n  - x: 1\n  - x: 2\n    y:\n      - 7\n"
    data = load_yaml_lines(Path("x.yaml"), code_prefix="X", text=text)
    assert line_of(data, ("b", 1, "y", 0)) == 6
    assert line_of(data, ("b", 1, "missing")) == 4
    assert line_of(data, ("nope",)) == 1


@pytest.mark.parametrize(("text", "line"), [("chapter: 3\ngoal: a\x07b\n", 2), ("chapter: 3\x00\n", 1)])
def test_a_control_character_is_one_error_line_naming_its_line(tmp_path: Path, text: str, line: int) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as ei:
        parse_outline(p)
    err = ei.value
    assert err.code == "OUTLINE_SYNTAX" and err.where == f"{p}:{line}" and "U+00" in err.what
    assert "\n" not in err.what  # PyYAML's own message spans two lines
