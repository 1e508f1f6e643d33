"""Issue 14 item 4: the quality gate's hard blocks are computed by the rule layer (source_safety,
output_compliance, static_contract), on real 三国演义 text, with the copy matcher checked against a naive oracle."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import parse_outline
from novelmuse.rules import (
    COPY_RUN_CHARS,
    LengthLimits,
    RuleSet,
    build_effective,
    copied_runs,
    hard_blocks,
    load_defaults,
    load_meta_text,
    output_compliance,
    parse_rules,
    source_safety,
    static_contract,
)

from ..editorial.helpers import sanguo_chapters

CHAPTERS = sanguo_chapters(6)


def _rules(text: str = "禁止:后宫、系统面板\n疲劳词:大怒≤0\n", limits: LengthLimits | None = None):  # type: ignore[no-untyped-def]
    return build_effective(parse_rules(text), load_defaults(), limits or LengthLimits(), "rules.txt")


def test_real_chapters_pass_all_three_blocks() -> None:
    """No false alarm on the novel itself: chapters 2–6 of 三国演义, each against the chapters before it."""
    rules = _rules("禁止:系统面板\n", limits=LengthLimits(min_chars=3000, max_chars=8000))
    for i in range(1, 6):
        body = CHAPTERS[i][1]
        report = hard_blocks(body, rules, prior_texts=[b for _, b in CHAPTERS[:i]])
        assert report.fired == [], (i + 1, report)
        assert report.states() == {
            "source_safety": "passed",
            "output_compliance": "passed",
            "static_contract": "not_applicable",  # no outline: nothing to check, never "passed"
        }
        assert report.prior_texts == i and report.rules_sha256 == rules.sha256


def test_source_safety_fires_on_a_forbidden_phrase_with_its_offsets() -> None:
    body = CHAPTERS[1][1]  # chapter 2 holds 后宫 once (董太后 … 宫中 is not it; the real hit)
    result = source_safety(body, _rules())
    assert result.state == "fired"
    hits = [f for f in result.findings if f.code == "HB_FORBIDDEN_PHRASE"]
    assert hits and all(body[f.start : f.end] == "后宫" for f in hits if f.start is not None)
    # a fatigue word over its limit only warns (seed 004): it never fires a hard block
    assert not any("大怒" in f.detail for f in result.findings)


def test_source_safety_fires_on_model_meta_text() -> None:
    body = CHAPTERS[0][1]
    for leak in ("作为一个AI，我无法描写这场战斗。", "以下是改写后的正文：", "【编辑评审】\n", "[12] 却说张飞"):
        text = body[:300] + "\n" + leak + "\n" + body[300:]
        result = source_safety(text, _rules())
        assert [f.code for f in result.findings] == ["HB_META_TEXT"], leak
    meta = load_meta_text()
    assert meta.version == 1 and len(meta.sha256) == 64


def test_source_safety_fires_on_fifty_characters_copied_from_a_prior_chapter() -> None:
    prior = CHAPTERS[0][1]
    own = CHAPTERS[1][1]
    copied = "".join(prior.split())[1000 : 1000 + COPY_RUN_CHARS]
    text = own[:500] + copied + own[500:]
    result = source_safety(text, _rules(""), [prior])
    assert [f.code for f in result.findings] == ["HB_COPIED_RUN"]
    f = result.findings[0]
    assert f.start is not None and f.end is not None and "".join(text[f.start : f.end].split()).count(copied) == 1
    shorter = own[:500] + copied[:-1] + own[500:]  # 49 characters: a coincidence, not a copy
    assert source_safety(shorter, _rules(""), [prior]).state == "passed"
    # whitespace does not hide a copy
    spaced = own[:500] + "\n".join(copied[k : k + 10] for k in range(0, COPY_RUN_CHARS, 10)) + own[500:]
    assert source_safety(spaced, _rules(""), [prior]).state == "fired"


def _naive_covered(text: str, sources: list[str], k: int) -> set[int]:
    """Oracle: every whitespace-free position inside some k-window of the text found verbatim in a source."""
    flat = [(i, ch) for i, ch in enumerate(text) if not ch.isspace()]
    chars = "".join(ch for _, ch in flat)
    srcs = ["".join(ch for ch in s if not ch.isspace()) for s in sources]
    out: set[int] = set()
    for a in range(len(chars) - k + 1):
        if any(chars[a : a + k] in s for s in srcs):
            out.update(flat[p][0] for p in range(a, a + k))
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="甲乙丙丁 \n", max_size=60),
    st.lists(st.text(alphabet="甲乙丙丁 \n", max_size=60), max_size=3),
    st.integers(2, 8),
)
def test_copied_runs_agree_with_a_naive_oracle(text: str, sources: list[str], k: int) -> None:
    got = {i for start, end in copied_runs(text, sources, k) for i in range(start, end) if not text[i].isspace()}
    assert got == _naive_covered(text, sources, k)


def test_output_compliance_length_ending_and_artefacts() -> None:
    body = CHAPTERS[0][1].strip()
    limits = LengthLimits(min_chars=100, max_chars=200)
    result = output_compliance(body, limits)
    assert [f.code for f in result.findings] == ["HB_LENGTH"]
    assert output_compliance(body, LengthLimits()).notes == [
        "length: not checked (no min_chars/max_chars in book.toml [chapters])"
    ]
    cut = body[: body.rindex("。") - 3]
    assert [f.code for f in output_compliance(cut, LengthLimits()).findings] == ["HB_TRUNCATED"]
    for artefact in ("## 第一节", "```json", "**大喜**", "<br/>", '{"text": "x"}', "- 第一点", "第十二回 关羽斩颜良"):
        text = body[:200] + "\n" + artefact + "\n" + body[200:]
        codes = {f.code for f in output_compliance(text, LengthLimits()).findings}
        assert codes & {"HB_MARKUP", "HB_HEADING"}, artefact
    assert output_compliance("", LengthLimits()).findings[0].code == "HB_EMPTY"


def test_static_contract_checks_time_anchor_markers(tmp_path: Path) -> None:
    path = tmp_path / "0002.yaml"
    path.write_text(
        "version: 2\nchapter: 2\ngoal: 张飞鞭督邮\nhard_events:\n  - {id: E1, text: 张飞鞭打督邮, result: 督邮受辱}\n"
        "time_anchors:\n  - {id: T1, text: 次日督邮来县, marker: 次日}\n  - {id: T2, text: 当夜, marker: 三更}\n",
        encoding="utf-8",
    )
    outline = parse_outline(path)
    text = "次日，督邮到县。张飞大怒。"
    result = static_contract(text, outline)
    assert result.state == "fired"
    assert [(f.code, f.detail) for f in result.findings] == [
        ("HB_ANCHOR_MARKER_MISSING", "time anchor T2: the text never says '三更'")
    ]
    assert static_contract(text + "三更时分。", outline).state == "passed"
    assert static_contract(text, None).state == "not_applicable"
    no_marker = tmp_path / "0003.yaml"
    no_marker.write_text("chapter: 3\ngoal: x\n", encoding="utf-8")
    blank = static_contract(text, parse_outline(no_marker))
    assert blank.state == "not_applicable" and blank.reason == "the outline has no time-anchor marker to check"


def test_the_report_binds_its_inputs(tmp_path: Path) -> None:
    rules = build_effective(RuleSet(), load_defaults(), LengthLimits(), "x")
    report = hard_blocks("作为AI，" + CHAPTERS[0][1], rules)
    assert report.fired == ["source_safety"] and report.outline_sha256 is None
    assert report.model_dump()["source_safety"]["state"] == "fired"
    assert report.meta_text_sha256 == load_meta_text().sha256
