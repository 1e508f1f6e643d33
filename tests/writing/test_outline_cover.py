"""The reference lint's matcher (the fine-outline gates' deterministic side) against a naive oracle, and its
verdicts on hand-made outlines."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from novelmuse.book import FineOutline
from novelmuse.writing import char_pairs, overlap, reference_coverage

TEXT = st.text(alphabet=st.sampled_from([*"刘备关羽张飞曹操，。！ ab12", "\n", "\u3000"]), max_size=40)


def naive_overlap(reference: str, candidate: str) -> Fraction:
    """Every adjacent pair of letters and digits, counted by hand."""

    def pairs(text: str) -> set[str]:
        kept = [c for c in text if c.isalnum()]
        return {kept[i] + kept[i + 1] for i in range(len(kept) - 1)}

    ref = pairs(reference)
    return Fraction(len(ref & pairs(candidate)), len(ref)) if ref else Fraction(0)


@given(TEXT, TEXT)
def test_overlap_is_the_share_of_the_references_pairs(reference: str, candidate: str) -> None:
    assert overlap(reference, candidate) == naive_overlap(reference, candidate)
    assert overlap(reference, reference) == (1 if char_pairs(reference) else 0)


def _outline(**fields: object) -> FineOutline:
    base: dict[str, object] = {"version": 2, "chapter": 12, "title": "t", "goal": "g", "hook": "下回分解"}
    return FineOutline.model_validate({**base, **fields})


def test_verdicts_by_id_for_foreshadow_operations_and_by_text_otherwise() -> None:
    reference = _outline(
        hard_events=[{"id": "E1", "text": "陶谦三让徐州", "result": "刘备领徐州牧"}],
        foreshadows=[{"op": "resolve", "id": "F-xuzhou"}, {"op": "advance", "id": "F-seal"}],
    )
    draft = _outline(
        hard_events=[{"id": "E1", "text": "陶谦病重，三让徐州于刘备", "result": "曹操退兵"}],
        foreshadows=[{"op": "resolve", "id": "F-xuzhou"}],
        hook="吕布来投",
    )
    got = {(c.kind, c.id): c.verdict for c in reference_coverage(draft, reference)}
    assert got == {
        ("event", "E1"): "pass",  # most of its pairs are in the draft's event
        ("result", "R1"): "fail",  # none of them
        ("resolve", "F-resolve:F-xuzhou"): "pass",  # the same operation on the same foreshadow
        ("advance", "F-advance:F-seal"): "fail",
        ("hook", "hook"): "fail",
    }
    severities = {c.id: c.severity for c in reference_coverage(draft, reference)}
    assert severities["E1"] == severities["R1"] == "high" and severities["hook"] == "medium"
