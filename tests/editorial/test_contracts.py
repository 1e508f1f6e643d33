"""The editorial roles' contracts checked against naive oracles (hypothesis). (Their prompts' placeholders are
checked with every role task's in tests/roles/test_tasks.py.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.editorial import RuleView, splice_paragraphs
from novelmuse.roles.editor import DIMENSIONS, EditorReport, evidence_contract
from novelmuse.roles.reviewer import ConsistencyReport, quote_contract
from novelmuse.roles.writer import ParagraphEdits, paragraph_contract
from novelmuse.text import split_paragraphs

RULES = RuleView.of(["禁词"], [], "")
BODY = "　　甲乙丙丁。\n\n　　戊己庚辛。\n\n　　甲乙丙丁戊。\n禁区在此。\n"

edit = st.fixed_dictionaries(
    {
        "index": st.integers(-1, 5),
        "text": st.sampled_from(["新句子。", "", "  ", "两\n行", "含禁词的句子", "另一句。"]),
    }
)


@given(st.lists(edit, max_size=6), st.sets(st.integers(0, 3), max_size=4), st.booleans())
@settings(max_examples=300)
def test_paragraph_contract_matches_oracle(edits: list[dict[str, object]], required: set[int], open_: bool) -> None:
    count = len(split_paragraphs(BODY))
    allowed = set(range(count)) if open_ else set(required)
    out = ParagraphEdits.model_validate({"paragraphs": edits})
    got = {v.code for v in paragraph_contract(BODY, RULES.forbidden, required=required, allowed=allowed)(out)}
    indices = [e.index for e in out.paragraphs]
    want = set()
    if len(indices) != len(set(indices)):
        want.add("CONTRACT_PARAGRAPH_DUPLICATE")
    if any(i not in allowed or not 0 <= i < count for i in indices):
        want.add("CONTRACT_PARAGRAPH_UNEXPECTED")
    if any(not e.text.strip() for e in out.paragraphs):
        want.add("CONTRACT_PARAGRAPH_EMPTY")
    if any(e.text.strip() and "\n" in e.text.strip() for e in out.paragraphs):
        want.add("CONTRACT_PARAGRAPH_MULTILINE")
    if any("禁词" in e.text for e in out.paragraphs):
        want.add("CONTRACT_FORBIDDEN_PHRASE")
    if required - set(indices):
        want.add("CONTRACT_PARAGRAPH_MISSING")
    assert got == want
    if not got:  # an accepted answer always splices, changing only what was asked
        new = splice_paragraphs(BODY, {e.index: e.text for e in out.paragraphs})
        for old_p, new_p in zip(split_paragraphs(BODY), split_paragraphs(new), strict=True):
            if old_p.index not in indices:
                assert old_p.text == new_p.text


def test_quote_contracts_report_each_bad_quote_with_its_code() -> None:
    report = ConsistencyReport.model_validate(
        {
            "issues": [
                {"severity": "major", "type": "setting", "quote": q, "explanation": "", "fix_hint": ""}
                for q in ("甲乙丙丁戊", "甲乙丙丁", "不存在的句子", "甲乙", "")
            ],
            "passed": None,
        }
    )
    codes = [v.code for v in quote_contract(BODY)(report)]
    assert codes == [
        "CONTRACT_QUOTE_NOT_UNIQUE",
        "CONTRACT_QUOTE_NOT_FOUND",
        "CONTRACT_QUOTE_TOO_SHORT",
        "CONTRACT_QUOTE_EMPTY",
    ]
    # full-width/half-width and whitespace differences still locate (normalised matching)
    ok = report.model_copy(update={"issues": [report.issues[0].model_copy(update={"quote": "甲乙丙丁 戊"})]})
    assert quote_contract(BODY)(ok) == []


def test_evidence_contract_allows_empty_only_for_neutral_foreshadow() -> None:
    dims = {n: {"score": 80, "evidence": "戊己庚辛"} for n in DIMENSIONS}
    dims["伏笔健康"] = {"score": 50, "evidence": ""}
    report = EditorReport.model_validate({"overall": 80, "dims": dims, "verdict": "accept", "notes": []})
    assert evidence_contract(BODY, True)(report) == []
    assert [v.code for v in evidence_contract(BODY, False)(report)] == ["CONTRACT_QUOTE_EMPTY"]
