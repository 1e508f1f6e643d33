"""The bit-parallel edit distance against the textbook dynamic programme (a naive oracle)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from novelmuse.text import edit_distance


def _naive(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


_TEXT = st.text(alphabet="甲乙丙丁，。\n ab", max_size=80)


@given(_TEXT, _TEXT)
def test_edit_distance_equals_the_textbook_dynamic_programme(a: str, b: str) -> None:
    assert edit_distance(a, b) == _naive(a, b) == edit_distance(b, a)


def test_edit_distance_of_known_pairs() -> None:
    assert edit_distance("", "") == 0
    assert edit_distance("", "关羽") == 2
    assert edit_distance("关羽斩华雄", "关羽温酒斩华雄") == 2
    assert edit_distance("刘备", "曹操") == 2
    long = "天下大势，分久必合，合久必分。" * 400  # 6,000 characters: wider than any machine word
    assert edit_distance(long, long.replace("合", "和", 3)) == 3
