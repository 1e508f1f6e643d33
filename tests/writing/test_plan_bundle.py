"""The plan draft's bundle: its parser against the writer (a round trip over generated files), and every way a text
is refused as no bundle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.errors import InputError
from novelmuse.writing import parse_bundle
from novelmuse.writing._plan_draft import bundle_text

LINE = st.text(alphabet=st.sampled_from([*"大纲人物设定，。-#：ab1 ", "=", "<", ">", "!"]), max_size=30)
BODY = st.lists(LINE, min_size=1, max_size=6).map("\n".join).filter(lambda b: b.strip() and "=====" not in b)
NAME = st.text(alphabet=st.sampled_from(list("人物世界地点abc")), min_size=1, max_size=6)


@given(
    BODY,
    st.dictionaries(NAME, BODY, max_size=3),
    st.dictionaries(NAME, BODY, max_size=2),
    st.lists(st.one_of(LINE, st.just("===== cards/x.yaml ====="), st.just("-->")), max_size=3),
)
def test_the_writer_and_the_parser_round_trip(
    outline: str, settings: dict[str, str], cards: dict[str, str], header: list[str]
) -> None:
    files = {"plan/outline.md": outline}
    files |= {f"plan/settings/{n}.md": b for n, b in settings.items()}
    files |= {f"cards/{n}.yaml": b for n, b in cards.items()}
    parsed = parse_bundle(bundle_text(files, header))
    assert list(parsed) == list(files)
    assert parsed == {p: b.rstrip().lstrip("\n") + "\n" for p, b in files.items()}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("# 大纲\n", "no file line"),
        ("前言\n===== plan/outline.md =====\n# x\n", "text before the first file line"),
        ("===== plan/outline.md =====\n# x\n===== plan/outline.md =====\n# y\n", "appears twice"),
        ("===== plan/outline.md =====\n\n===== cards/a.yaml =====\nid: a\n", "is empty"),
        ("===== ../etc/passwd =====\nx\n", "is not a plan file"),
        ("===== plan/settings/a.md =====\nx\n", "exactly one outline file"),
        ("===== rules.txt =====\nx\n", "is not a plan file"),
    ],
)
def test_what_is_no_bundle_is_refused_naming_why(text: str, why: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_bundle(text)
    assert exc.value.code == "PLAN_BUNDLE_INVALID" and why in exc.value.what
