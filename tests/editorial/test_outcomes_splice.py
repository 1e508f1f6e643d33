"""Outcomes are exactly one of four; splices touch only the targeted paragraphs (byte-compared)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from novelmuse.editorial import StepOutcome, changed_paragraphs, paragraph_diff, splice_paragraphs
from novelmuse.errors import FailedClosed
from novelmuse.text import split_paragraphs

from ..conftest import SANGUO


def test_outcome_labels_are_distinct() -> None:
    assert StepOutcome.passed("review").label == "passed"
    assert StepOutcome.failed("review").label == "failed"
    assert StepOutcome.skipped("review", "no model configured").label == "skipped(no model configured)"
    assert StepOutcome.error("review", "MODEL_TIMEOUT").label == "error(MODEL_TIMEOUT)"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": "skipped"},
        {"status": "error"},
        {"status": "passed", "reason": "x"},
        {"status": "failed", "code": "X"},
        {"status": "skipped", "reason": "x", "code": "X"},
        {"status": "error", "code": "X", "reason": "x"},
        {"status": "ok"},
    ],
)
def test_outcome_shape_is_exclusive(kwargs: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        StepOutcome(step="s", **kwargs)  # type: ignore[arg-type]


def _body() -> str:
    text = SANGUO.read_text(encoding="utf-8")
    return text[: text.index("第三回")].split("\n", 1)[1]


def test_splice_keeps_every_other_paragraph_byte_identical() -> None:
    body = _body()
    paras = split_paragraphs(body)
    edits = {1: "新的第二段。", 4: "　　新的第五段。"}
    out = splice_paragraphs(body, edits)
    new = split_paragraphs(out)
    assert len(new) == len(paras)
    for old_p, new_p in zip(paras, new, strict=True):
        if old_p.index in edits:
            assert new_p.text.strip() == edits[old_p.index].strip()
        else:
            assert new_p.text.encode() == old_p.text.encode()
    # the bytes outside the edited paragraphs are identical too (line breaks, blank lines)
    assert out[: new[1].start].encode() == body[: paras[1].start].encode()
    assert out[new[4].end :].encode() == body[paras[4].end :].encode()
    assert changed_paragraphs(body, out) == {1, 4}


def test_splice_keeps_indentation_and_refuses_bad_replacements() -> None:
    body = "　　第一段。\n\n　　第二段。\n"
    assert splice_paragraphs(body, {1: "改过的。"}) == "　　第一段。\n\n　　改过的。\n"
    for bad in ("", "   ", "两\n行"):
        with pytest.raises(FailedClosed) as exc:
            splice_paragraphs(body, {0: bad})
        assert exc.value.code == "SPLICE_INVARIANT"
    with pytest.raises(FailedClosed):
        splice_paragraphs(body, {2: "没有这一段"})


def test_changed_paragraphs_detects_structure_change() -> None:
    assert changed_paragraphs("a\nb\n", "a\nb\n") == set()
    assert changed_paragraphs("a\nb\n", "a\nc\n") == {1}
    assert changed_paragraphs("a\nb\n", "a\n\nb\n") is None
    assert changed_paragraphs("a\nb\n", "a\nb\nc\n") is None


def test_paragraph_diff_shows_changed_lines() -> None:
    diff = paragraph_diff("甲\n乙\n丙\n", "甲\n乙改\n丙\n")
    assert "-乙" in diff and "+乙改" in diff and "--- before" in diff


paragraph = st.text(alphabet="甲乙 　。\t", min_size=0, max_size=6)


@given(st.lists(paragraph, min_size=1, max_size=8), st.data())
def test_splice_against_naive_oracle(lines: list[str], data: st.DataObject) -> None:
    body = "\n".join(lines) + "\n"
    paras = split_paragraphs(body)
    if not paras:
        return
    idx = data.draw(st.sets(st.integers(0, len(paras) - 1), max_size=len(paras)))
    edits = {i: f"新{i}" for i in idx}
    out = splice_paragraphs(body, edits)
    # naive oracle: rebuild line by line
    want_lines = []
    k = 0
    for line in lines:
        if line.strip():
            if k in edits:
                lead = line[: len(line) - len(line.lstrip())]
                want_lines.append(lead + edits[k])
            else:
                want_lines.append(line)
            k += 1
        else:
            want_lines.append(line)
    assert out == "\n".join(want_lines) + "\n"
