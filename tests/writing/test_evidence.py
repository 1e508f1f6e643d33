"""Evidence rounds (补证环) on chapter 80 of 三国演义: the arm's own strategy, the exact 30 % budget with
whole-request refusal, the round cap, and the hash chain of manifest versions."""

from __future__ import annotations

import itertools

import pytest

from novelmuse.book import Book
from novelmuse.roles.writer import EvidenceRequest
from novelmuse.text import count_chars, sha256_hex
from novelmuse.writing import (
    ContextBuild,
    answer_requests,
    build_context,
    evidence_budget,
    evidence_used,
    writer_text_leaks,
)

N = 80


@pytest.fixture(scope="module")
def builds(sanguo_full: Book) -> dict[str, ContextBuild]:
    return {arm: build_context(sanguo_full, N, arm=arm) for arm in ("A", "B", "C")}  # type: ignore[misc]


def _req(target: str, kind: str = "fact") -> EvidenceRequest:
    return EvidenceRequest(kind=kind, target=target, reason="核对")  # type: ignore[arg-type]


def test_each_arm_answers_with_its_own_strategy(builds: dict[str, ContextBuild], sanguo_full: Book) -> None:
    c = answer_requests(builds["C"], [_req("张飞"), _req("张飞", "style")], 1, allow_requests=True)
    assert [r.status for r in c.refs] == ["served", "served"]
    assert all(r.card_id == "zhang-fei" for r in c.refs)
    for ref in c.refs:
        (span,) = ref.spans
        assert span.chapter < 76  # never from the continuous window (76–79) or chapter 80 and later
        body = sanguo_full.read_chapter(span.chapter).body
        assert sha256_hex(body[span.start : span.end]) == ref.text_sha256 == span.sha256
    taken = {(s.chapter, s.start) for s in builds["C"].manifest.spans}
    assert not taken & {(s.chapter, s.start) for r in c.refs for s in r.spans}  # never a span already given
    assert c.build.context.readback[-1].purpose == "补充材料 1-1（事实）"
    assert c.build.context.style[-1].purpose == "补充材料 1-2（写法）"
    a = answer_requests(builds["A"], [_req("张飞")], 1, allow_requests=True)
    assert a.refs[0].status == "served" and a.refs[0].spans[0].located_by.startswith("search rank")
    b = answer_requests(builds["B"], [_req("张飞"), _req("曹操")], 1, allow_requests=True)
    # arm B: 张飞's card is already in its context; 曹操's is not (no raw text at all, card lines only)
    assert [r.status for r in b.refs] == ["not_found", "served"] and b.refs[1].spans == []
    assert "曹操" in b.build.context.readback[-1].text
    none = answer_requests(builds["C"], [_req("某个无名小卒")], 1, allow_requests=True)
    assert none.refs[0].status == "not_found"
    for r in (a, b, c):
        text = "\n".join(m.content for m in r.build.rendered.messages)
        assert writer_text_leaks(text, builds["C"].inputs.cards) == {}


def test_the_budget_is_exact_and_a_request_that_would_cross_it_is_refused_whole(
    builds: dict[str, ContextBuild],
) -> None:
    build = builds["C"]
    budget = evidence_budget(build)
    assert budget == 1800  # ⌊0.30 × 6000⌋
    targets = ["张飞", "刘备", "诸葛亮", "曹操", "关羽"]
    requests = [_req(t, k) for t in targets for k in ("fact", "style")]
    used = 0
    rounds = []
    current = build
    for k in (1, 2, 3):
        got = answer_requests(current, requests[(k - 1) * 4 : k * 4], k, allow_requests=k < 3)
        rounds.append(got)
        for ref in got.refs:
            if ref.status == "served":
                assert ref.chars == count_chars(ref.purpose) + count_chars(
                    next(
                        e.text
                        for e in (*got.build.context.readback, *got.build.context.style)
                        if e.purpose == ref.purpose
                    )
                )
                used += ref.chars
        current = got.build
    assert evidence_used(current) == used <= budget
    refused = [r for g in rounds for r in g.refs if r.status == "refused"]
    assert refused, "the 1,800-character reserve cannot hold twelve ~400-character spans"
    for r in refused:
        assert r.chars == 0 and r.spans == [] and r.purpose == ""
        # refused because it would cross the reserve: its own size added to what was used before it is > budget
        assert "> the reserve of 1800" in r.detail
    reserve = next(b for b in current.manifest.blocks if b.name == "evidence_reserve")
    assert reserve.used == used and reserve.budget == budget


def test_a_fourth_round_is_refused_and_the_last_allowed_round_renders_without_a_request_field(
    builds: dict[str, ContextBuild],
) -> None:
    current = builds["C"]
    versions = [current]
    for k in (1, 2, 3):
        current = answer_requests(current, [_req("张飞", "style")], k, allow_requests=k < 3).build
        versions.append(current)
    assert "evidence_requests" in versions[2].rendered.messages[-1].content
    assert "evidence_requests" not in versions[3].rendered.messages[-1].content
    assert "evidence_requests" not in versions[3].rendered.schema.model_fields
    assert versions[3].manifest.hashes.schema_sha256 == versions[3].manifest.hashes.final_schema_sha256
    fourth = answer_requests(current, [_req("刘备")], 4, allow_requests=False)
    assert [r.status for r in fourth.refs] == ["refused"] and "cap of 3" in fourth.refs[0].detail
    assert fourth.build.context == current.context  # nothing was added
    # the manifests of the rounds form a hash chain back to the first build's
    for prev, nxt in itertools.pairwise(versions):
        assert nxt.manifest.previous_sha256 == prev.manifest_sha256
        assert nxt.manifest_sha256 == sha256_hex(nxt.manifest_body) == sha256_hex(nxt.manifest.canonical())
        assert nxt.manifest.round == prev.manifest.round + 1
        assert nxt.manifest.evidence[: len(prev.manifest.evidence)] == prev.manifest.evidence
    assert versions[0].manifest.previous_sha256 is None and versions[0].manifest.round == 0


def test_only_five_requests_of_a_round_are_answered(builds: dict[str, ContextBuild]) -> None:
    got = answer_requests(builds["C"], [_req("某甲")] * 7, 1, allow_requests=True)
    assert [r.status for r in got.refs] == ["not_found"] * 5 + ["refused"] * 2
