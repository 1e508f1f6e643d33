"""The blind input builder and the leak check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import FineOutline
from novelmuse.errors import FailedClosed, InputError
from novelmuse.judging import (
    QUOTE_MIN_CHARS,
    Candidate,
    LeakGuard,
    Target,
    blind_order,
    build_blind_item,
    candidate_ids,
    judge_call,
    load_rubric,
    quote_hints,
)
from novelmuse.text import locate_quote

from ._helpers import corpus_candidates, sanguo_chapter


def test_ids_order_and_hints_are_reproducible_from_item_and_seed() -> None:
    rubric = load_rubric("quality_gate")
    cands = corpus_candidates(3)
    one = build_blind_item(item_id="ch7", seed="s1", rubric=rubric, candidates=cands)
    two = build_blind_item(item_id="ch7", seed="s1", rubric=rubric, candidates=cands)
    assert one.blind == two.blind and one.arm_map == two.arm_map
    other = build_blind_item(item_id="ch7", seed="s2", rubric=rubric, candidates=cands)
    assert set(other.blind.candidate_ids) != set(one.blind.candidate_ids)
    for cid in one.blind.candidate_ids:
        assert cid.startswith("c_") and len(cid) == 6
    # The arm map is sealed: hashed, and opens only against its own hash.
    arms = one.arm_map.open(one.arm_map.sha256)
    assert sorted(arms.values()) == ["A", "B", "C"]
    with pytest.raises(InputError) as exc:
        one.arm_map.open("0" * 64)
    assert exc.value.code == "JUDGE_ARM_MAP_TAMPERED"


def test_blind_input_has_exact_orders_counts_and_policy() -> None:
    rubric = load_rubric("writer_replay")
    cands = corpus_candidates(2)
    outline = FineOutline(chapter=1, goal="刘关张结义", hard_events=[{"id": "E1", "text": "桃园结义"}], hook="投军")
    item = build_blind_item(
        item_id="x",
        seed="y",
        rubric=rubric,
        candidates=cands,
        scene_type="turning_point",
        outline=outline,
        assertions=[Target("a1", "三人结义")],
        constraints=[Target("h1", "不得出现现代词汇"), Target("h2", "张飞不死")],
    )
    b = item.blind
    assert b.dimension_ids == rubric.dimension_ids
    assert b.target_ids == ["a1", "h1", "h2"]
    assert [t.id for t in b.fineOutline] == ["goal", "E1", "hook"]
    assert b.expected.model_dump() == {"scores": 10, "rankings": 5, "rankingLength": 2, "verdicts": 6}
    assert b.policy.rubricSha256 == rubric.sha256 and b.policy.sceneType == "turning_point"
    assert b.policy.scale.max == 10 and b.policy.quoteMinChars == QUOTE_MIN_CHARS
    tension = next(d for d in b.dimensions if d.id == "narrative_tension")
    assert tension.question == rubric.scene_types["turning_point"].question
    assert len(tension.anchors) == 5 and tension.criteria
    assert b.candidate_ids == blind_order("x", "y", candidate_ids("x", "y", 2))
    for c in b.candidates:
        assert 1 <= len(c.quoteHints) <= 3
        for hint in c.quoteHints:
            assert locate_quote(c.text, hint, min_chars=QUOTE_MIN_CHARS).ok


def test_scene_type_is_required_exactly_for_writer_replay() -> None:
    cands = corpus_candidates(1)
    with pytest.raises(InputError) as exc:
        build_blind_item(item_id="x", seed="y", rubric=load_rubric("writer_replay"), candidates=cands)
    assert exc.value.code == "JUDGE_SCENE_TYPE"
    with pytest.raises(InputError):
        build_blind_item(
            item_id="x", seed="y", rubric=load_rubric("quality_gate"), candidates=cands, scene_type="battle"
        )


def test_reordering_changes_only_the_candidate_order() -> None:
    item = build_blind_item(item_id="i", seed="s", rubric=load_rubric("quality_gate"), candidates=corpus_candidates(3))
    b = item.blind
    rev = b.in_order(list(reversed(b.candidate_ids)))
    assert rev.candidates == list(reversed(b.candidates))
    assert rev.model_dump(exclude={"candidates"}) == b.model_dump(exclude={"candidates"})
    assert rev.sha256() != b.sha256()


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, 3000), length=st.integers(20, 600), key=st.text(min_size=1, max_size=8))
def test_quote_hints_are_verbatim_and_unique(start: int, length: int, key: str) -> None:
    text = sanguo_chapter(3)[start : start + length]
    for hint in quote_hints(text, key):
        assert hint in text
        assert locate_quote(text, hint, min_chars=QUOTE_MIN_CHARS).ok


def test_repetitive_text_yields_no_non_unique_hint() -> None:
    text = "他说好的。" * 20 + "唯有此句独一无二不会重复。"
    assert quote_hints(text, "k") == ["唯有此句独一无二不会重复。"]


def test_messages_carry_no_arm_name_and_render_the_policy() -> None:
    item = build_blind_item(item_id="i", seed="s", rubric=load_rubric("quality_gate"), candidates=corpus_candidates(3))
    call = judge_call(item.blind)
    messages, prompt_sha = call.messages, call.ref.prompt_sha256
    assert len(prompt_sha) == 64 and [m.role for m in messages] == ["system", "user"]
    assert "$" not in messages[0].content and "1 到 5" in messages[0].content
    LeakGuard(arm_names=["A", "B", "C"], strategy_names=["card-evidence"]).check([m.content for m in messages], "test")


def test_leak_check_refuses_arm_strategy_card_manifest_and_secret_tokens() -> None:
    text = "话说天下大势，分久必合，合久必分。"
    assert LeakGuard(arm_names=["A"]).findings(text + "A计划") == {"arm_name": 1}
    assert LeakGuard(arm_names=["A"]).findings("Apple") == {}
    assert LeakGuard(strategy_names=["raw-readback"]).findings("via raw-readback x") == {"strategy_name": 1}
    assert LeakGuard(card_ids=["card:liubei"]).findings("见 card:liubei") == {"card_id": 1}
    assert LeakGuard(manifest=["刘备：字玄德，涿郡涿县人\n刘备"]).findings("刘备：字 玄德，涿郡涿县人") == {
        "manifest": 1
    }
    assert LeakGuard(manifest=["刘备"]).findings("刘备") == {}  # too short to be manifest content
    assert LeakGuard(secrets=["赤兔"]).findings("骑着赤兔马") == {"secret": 1}
    with pytest.raises(FailedClosed) as exc:
        LeakGuard(secrets=["sk-verysecret"]).check(["a", "key sk-verysecret"], "judge input")
    assert exc.value.code == "JUDGE_INPUT_LEAK" and "sk-verysecret" not in exc.value.render()


def test_candidates_are_validated() -> None:
    rubric = load_rubric("quality_gate")
    with pytest.raises(InputError) as e1:
        build_blind_item(item_id="i", seed="s", rubric=rubric, candidates=[])
    assert e1.value.code == "JUDGE_NO_CANDIDATES"
    with pytest.raises(InputError) as e2:
        build_blind_item(item_id="i", seed="s", rubric=rubric, candidates=[Candidate("A", "短")])
    assert e2.value.code == "JUDGE_CANDIDATE_EMPTY"
    with pytest.raises(InputError) as e3:
        build_blind_item(item_id="i", seed="s", rubric=rubric, candidates=corpus_candidates(1) * 2)
    assert e3.value.code == "JUDGE_ARM_DUPLICATE"


def _naive_word_hit(text: str, token: str) -> bool:
    """Plain scan: some occurrence of `token` not touching an ASCII letter, digit or underscore."""

    def word(ch: str) -> bool:
        return ch.isascii() and (ch.isalnum() or ch == "_")

    start = text.find(token)
    while start >= 0:
        before = text[start - 1] if start > 0 else ""
        after = text[start + len(token)] if start + len(token) < len(text) else ""
        if not (before and word(before)) and not (after and word(after)):
            return True
        start = text.find(token, start + 1)
    return False


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="AB_-1 刘备，x", max_size=30),
    token=st.text(alphabet="AB_-1x", min_size=1, max_size=3),
)
def test_leak_word_matching_agrees_with_a_naive_scan(text: str, token: str) -> None:
    found = LeakGuard(arm_names=[token]).findings(text)
    assert bool(found) == _naive_word_hit(text, token.strip())


def test_replay_profiles_refuse_to_judge_without_a_reference() -> None:
    """writer_replay scores fine_outline_fidelity against the outline; fine_outline_replay needs a standard."""
    cands = corpus_candidates(1)
    outline = FineOutline(chapter=1, goal="刘关张结义", hard_events=[{"id": "E1", "text": "桃园结义"}])
    with pytest.raises(InputError) as e1:
        build_blind_item(
            item_id="x", seed="y", rubric=load_rubric("writer_replay"), candidates=cands, scene_type="battle"
        )
    assert e1.value.code == "JUDGE_OUTLINE_REQUIRED" and e1.value.where == "--outline"
    with pytest.raises(InputError) as e2:
        build_blind_item(
            item_id="x",
            seed="y",
            rubric=load_rubric("writer_replay"),
            candidates=cands,
            scene_type="battle",
            outline=FineOutline(chapter=1),  # nothing in it to be faithful to
            assertions=[Target("a1", "三人结义")],
        )
    assert e2.value.code == "JUDGE_OUTLINE_REQUIRED"
    with pytest.raises(InputError) as e3:
        build_blind_item(item_id="x", seed="y", rubric=load_rubric("fine_outline_replay"), candidates=cands)
    assert e3.value.code == "JUDGE_OUTLINE_REQUIRED"
    fo = load_rubric("fine_outline_replay")
    assert build_blind_item(item_id="x", seed="y", rubric=fo, candidates=cands, outline=outline).blind.fineOutline
    with_oracle = build_blind_item(
        item_id="x", seed="y", rubric=fo, candidates=cands, assertions=[Target("a1", "结义")]
    )
    assert with_oracle.blind.target_ids == ["a1"]
