"""Highlight segmentation and the character diff, against naive oracles (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from novelmuse.reports.html._diff import char_diff
from novelmuse.reports.html._marks import Mark, segment_lines, valid_marks

texts = st.text(alphabet="甲乙丙丁\n\r　a", max_size=60)


@st.composite
def text_and_marks(draw: st.DrawFn) -> tuple[str, list[Mark]]:
    text = draw(texts)
    n = len(text)
    marks = []
    for k in range(draw(st.integers(0, 6))):
        a = draw(st.integers(-2, n + 1))
        b = draw(st.integers(-2, n + 2))
        marks.append(Mark(f"m{k}", draw(st.sampled_from(["rule", "editor", "judge"])), "error", a, b, ""))
    return text, marks


@given(text_and_marks())
def test_segments_rebuild_the_text_and_every_mark_is_its_span(case: tuple[str, list[Mark]]) -> None:
    text, marks = case
    ok, bad = valid_marks(text, marks)
    assert all(0 <= m.start < m.end <= len(text) for m in ok) and len(ok) + len(bad) == len(marks)
    lines = segment_lines(text, ok, first_line=2)
    segments = [s for line in lines for s in line.segments]
    assert "".join(s.text for s in segments) == text
    assert [line.number for line in lines] == list(range(2, 2 + len(lines)))
    assert len(lines) == text.count("\n") + (0 if text.endswith("\n") else 1)
    pos = 0
    for s in segments:  # naive oracle: the marks covering each character of the segment
        for i in range(pos, pos + len(s.text)):
            assert {m.id for m in s.marks} == {m.id for m in ok if m.start <= i < m.end}
        pos += len(s.text)
    for m in ok:
        assert "".join(s.text for s in segments if m in s.marks) == text[m.start : m.end]
        assert sum(m.id in s.starts for s in segments) == 1  # one anchor, at its first segment


@given(st.text(alphabet="甲乙丙\n", max_size=80), st.text(alphabet="甲乙丙\n", max_size=80))
def test_char_diff_pieces_rebuild_both_texts(a: str, b: str) -> None:
    d = char_diff(a, b)
    changes = [h for h in d.hunks if h.kind == "change"]
    assert d.identical == (a == b) == (not changes)
    assert len(a) - d.deleted == len(b) - d.inserted  # everything not deleted or inserted is common to both
    for h in changes:
        old = "".join(p.text for p in h.pieces if p.op != "insert")
        new = "".join(p.text for p in h.pieces if p.op != "delete")
        assert old in a and new in b


def test_a_two_character_edit_in_a_long_paragraph_is_exactly_two_characters() -> None:
    para = "".join("天下大势分久必合合久必分"[i % 12] for i in range(1800))
    edited = para[:900] + "某某" + para[902:]
    base = f"\n{'前文。' * 30}\n\n{para}\n\n{'后文。' * 30}\n"
    d = char_diff(base, base.replace(para, edited), first_line=2)
    assert (d.deleted, d.inserted, d.changed_runs) == (2, 2, 1)
    (hunk,) = [h for h in d.hunks if h.kind == "change"]
    ops = [(p.op, p.text) for p in hunk.pieces if p.op != "equal"]
    assert ops == [("delete", para[900:902]), ("insert", "某某")]
    assert hunk.base_line == 5  # the paragraph's own line in the file (heading = line 1)
