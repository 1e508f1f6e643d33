"""The detector role's task and contract, and the writer's draft contract."""

from __future__ import annotations

from novelmuse.roles.detector import DETECT, ConstraintVerdict, DetectorOutput, DetectRequest, report_contract
from novelmuse.roles.writer import ChapterDraft, DeclaredFact, FinalChapterDraft, draft_contract
from novelmuse.text import sha256_hex

TEXT = "次日，孔融登城。关公青龙刀起，劈管亥于马下。众军大喊。"
REQ = DetectRequest(TEXT, sha256_hex(TEXT), [("E1", "关羽斩管亥"), ("T1", "次日")])


def _out(*verdicts: tuple[str, str, str], sha: str | None = None) -> DetectorOutput:
    return DetectorOutput(
        candidate_sha256=sha or sha256_hex(TEXT),
        verdicts=[ConstraintVerdict(id=i, verdict=v, quote=q, reason="r") for i, v, q in verdicts],  # type: ignore[arg-type]
        coverage=1.0,
        high_severity=0,
    )


def _codes(out: DetectorOutput) -> list[str]:
    return [v.code for v in report_contract(REQ)(out)]


def test_a_complete_report_with_located_quotes_is_accepted() -> None:
    assert _codes(_out(("E1", "pass", "劈管亥于马下"), ("T1", "unknown", ""))) == []
    assert _codes(_out(("E1", "fail", ""), ("T1", "pass", "次日，孔融登城"))) == []


def test_incompleteness_comes_first_then_ids_sha_and_quotes() -> None:
    assert _codes(_out(("E1", "pass", "劈管亥于马下"))) == ["DETECTOR_REPORT_INCOMPLETE"]
    codes = _codes(_out(("E1", "pass", "劈管亥"), ("E9", "fail", ""), ("E1", "pass", "不在正文里的句子"), sha="0" * 64))
    assert codes[0] == "DETECTOR_REPORT_INCOMPLETE"
    assert set(codes) == {
        "DETECTOR_REPORT_INCOMPLETE",
        "CONTRACT_UNKNOWN_ID",
        "CONTRACT_DUPLICATE_ID",
        "DETECTOR_REPORT_MISMATCH",
        "CONTRACT_QUOTE_TOO_SHORT",
        "CONTRACT_QUOTE_NOT_FOUND",
    }


def test_the_detector_is_told_the_candidate_and_the_constraints_only() -> None:
    call = DETECT.render(REQ)
    assert call.role == "detector" and call.schema is DetectorOutput
    user = call.messages[-1].content
    assert TEXT in user and "E1　关羽斩管亥" in user and sha256_hex(TEXT) in user
    assert set(DetectRequest.__dataclass_fields__) == {"candidate", "candidate_sha256", "constraints"}


def test_a_draft_needs_text_and_located_declarations() -> None:
    ok = FinalChapterDraft(
        text=TEXT, declared_facts=[DeclaredFact(kind="state", subject="管亥", statement="管亥死", quote="劈管亥于马下")]
    )
    assert draft_contract(ok) == []
    bad = ChapterDraft(
        text="  ",
        declared_facts=[DeclaredFact(kind="entity", subject="甲", statement="甲登场", quote="甲登场了")],
        evidence_requests=[],
    )
    assert [v.code for v in draft_contract(bad)] == ["CONTRACT_DRAFT_EMPTY", "CONTRACT_QUOTE_NOT_FOUND"]
