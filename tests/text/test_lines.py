"""`LineIndex`: the file line of a character offset, against the naive count of line breaks before it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from novelmuse.text import LineIndex

TEXTS = st.text(alphabet=st.sampled_from(["甲", "乙", "\n", "\r", " ", "　", "a"]), max_size=60)


@given(TEXTS, st.integers(min_value=1, max_value=3), st.data())
def test_line_is_one_plus_the_line_breaks_before_the_offset(text: str, first_line: int, data: st.DataObject) -> None:
    offset = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert LineIndex(text, first_line).line(offset) == first_line + text.count("\n", 0, offset)


def test_a_line_break_belongs_to_the_line_it_ends() -> None:
    lines = LineIndex("第一段\r\n\n第三段", first_line=2)  # under a heading line: the body starts on line 2
    assert [lines.line(i) for i in (0, 3, 4, 5, 6)] == [2, 2, 2, 3, 4]
