"""The draft outline file reads back exactly as the draft, whatever its texts and header notes hold (quotes, colons,
#, line breaks, Unicode line separators, YAML keywords), against the outline parser as the oracle."""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from novelmuse.book import outline_problems, parse_outline
from novelmuse.roles.outliner import OutlineDraft
from novelmuse.writing import draft_yaml

_ALPHABET = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co"), blacklist_characters="\x85") | st.sampled_from(
    ["\n", "\t", ":", "#", '"', "'", "{", "}", "[", "]", ",", "-", " ", "\u2028", "\u2029", "\\", "，"]
)
TEXT = st.one_of(
    st.text(_ALPHABET, min_size=1, max_size=40),
    st.sampled_from(["yes", "null", "~", "12", "0x1F", "- a", "&anchor", "*ref", "!tag", "@", "`x`", "| block"]),
)
NAME = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Zl", "Zp")), min_size=1, max_size=12)
NOTE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=150)
@given(
    texts=st.lists(TEXT, min_size=9, max_size=9),
    names=st.lists(NAME, min_size=1, max_size=3),
    notes=st.lists(NOTE, max_size=3),
)
def test_a_draft_file_reads_back_as_the_draft(texts: list[str], names: list[str], notes: list[str]) -> None:
    draft = OutlineDraft.model_validate(
        {
            "title": texts[0],
            "scene_type": "battle",
            "goal": texts[1],
            "hard_events": [{"text": texts[2], "result": texts[3], "basis": ["P1"]}],
            "beats": [{"text": texts[4]}],
            "foreshadows": [
                {"op": "plant", "id": "F-x", "description": texts[5], "payoff_chapter": 14, "note": ""},
                {"op": "advance", "id": "F-y", "description": "", "payoff_chapter": None, "note": texts[6]},
            ],
            "hook": texts[7],
            "new_settings": [{"kind": "entity", "text": texts[8], "entities": names}],
            "time_anchors": [{"text": texts[8], "marker": texts[0]}],
            "entities": names,
            "notes": notes,
        }
    )
    try:
        outline = draft.to_outline(12)
    except ValidationError:
        assume(False)  # a blank text or a name the outline refuses: the contract sends those back
        raise
    assume(not [p for p in outline_problems(outline) if p.severity == "error"])  # (a blank result): likewise
    header = ["草稿", *notes, "version: 3\nchapter: 99"]
    text = draft_yaml(outline, header, {"E1": ["P1", *notes]})
    reread = parse_outline(Path("outlines/0012.yaml"), text=text, expect_chapter=12)
    assert reread.model_dump() == outline.model_dump()
