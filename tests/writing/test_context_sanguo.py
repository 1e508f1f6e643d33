"""The writer context on the full 三国演义 (imported in the session fixture): chapter 80, after 关羽 died in 77.

Determinism (100 builds, another process with another hash seed), the frozen-replay guarantee (a book that
ends at 79 gives the same manifest byte for byte), no text of chapter 80 or later, arms A and C sharing
everything but their raw text, the leak guard.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from novelmuse.book import Book
from novelmuse.errors import FailedClosed
from novelmuse.roles.writer import Excerpt, OutlineLine, writer_visible_text
from novelmuse.text import count_chars
from novelmuse.writing import (
    ContextBuild,
    build_context,
    check_writer_text,
    confirm_outline,
    ensure_same_frame,
    generated_text,
    writer_text_leaks,
)

from .conftest import author_copy

N = 80


@pytest.fixture(scope="module")
def builds(sanguo_full: Book) -> dict[str, ContextBuild]:
    """Chapter 80 built once per arm."""
    return {arm: build_context(sanguo_full, N, arm=arm) for arm in ("A", "B", "C")}  # type: ignore[misc]


def test_guan_yu_is_dead_as_of_80_with_his_source_pointer(sanguo_full: Book, builds: dict[str, ContextBuild]) -> None:
    c = builds["C"]
    dead = [f for f in c.context.facts if f.text.startswith("关羽的状态")]
    assert [(f.text, f.basis) for f in dead] == [("关羽的状态：已故（自第77回起）", "第77回")]
    ref = next(r for r in c.manifest.facts if r.basis == "第77回" and r.pointer.file == "cards/guan-yu.yaml")
    body = sanguo_full.read_chapter(77).body
    assert ref.pointer.chapter == 77 and body[ref.pointer.start : ref.pointer.end] == "于是关公父子皆遇害"
    assert next(e for e in c.manifest.entities if e.name == "关羽").dead
    # 曹操 (dead 78) is not in the outline; 张飞 (dies 81) is alive as of 79: the future is not visible
    zhang = [f.text for f in c.context.facts if f.text.startswith("张飞的状态")]
    assert zhang == ["张飞的状态：在世（自第1回起）"]
    # where his death is written lies in the continuous window (76–79): the writer has that raw text already,
    # so readback spends nothing on it (the slot counts it as in the window)
    ch77 = next(p for p in c.context.prior_chapters if p.chapter == 77)
    assert "于是关公父子皆遇害" in ch77.text
    state = next(s for s in c.manifest.slots if s.slot == "state:guan-yu")
    assert state.in_window >= 1 and all(s.chapter < 76 for s in c.manifest.spans if s.slot == "state:guan-yu")


def test_the_manifest_is_byte_identical_over_100_builds_and_in_another_process(
    sanguo_full: Book, builds: dict[str, ContextBuild]
) -> None:
    first = builds["C"].manifest_body
    assert first == builds["C"].manifest.canonical()
    for _ in range(100):
        again = build_context(sanguo_full, N)
        assert again.manifest_body == first
    code = (
        "import sys; from pathlib import Path; from novelmuse.book import find_book;"
        "from novelmuse.writing import build_context;"
        "sys.stdout.write(build_context(find_book(Path(sys.argv[1])), int(sys.argv[2])).manifest_sha256)"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(sanguo_full.root), str(N)], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout == builds["C"].manifest_sha256


def test_a_frozen_replay_sees_exactly_what_a_book_ending_at_79_sees(
    sanguo_full: Book, builds: dict[str, ContextBuild], tmp_path: Path
) -> None:
    """The full book has chapters 80–120 (and an index over them); the truncated one never had them."""
    assert max(sanguo_full.chapter_numbers()) == 120
    short = author_copy(sanguo_full, tmp_path / "short", before=N)
    assert max(short.chapter_numbers()) == N - 1
    confirm_outline(short, N)
    for arm in ("C", "A", "B"):
        got = build_context(short, N, arm=arm)  # type: ignore[arg-type]
        assert got.manifest_body == builds[arm].manifest_body, arm
        assert got.context == builds[arm].context
    # … and the book that ends at 80 (the chapter being replayed is there, 81–120 are not yet)
    upto80 = author_copy(sanguo_full, tmp_path / "upto80", before=N + 1)
    confirm_outline(upto80, N)
    assert build_context(upto80, N).manifest_body == builds["C"].manifest_body


def test_no_text_of_chapter_80_or_later_is_in_any_context(sanguo_full: Book, builds: dict[str, ContextBuild]) -> None:
    for arm, build in builds.items():
        visible = writer_visible_text(build.context)
        for n in range(N, 121):
            for para in sanguo_full.read_chapter(n).body.split("\n"):
                if count_chars(para) >= 16:
                    assert para.strip() not in visible, (arm, n, para[:30])
        assert all(c < N for c in build.manifest.pointer_chapters())


def test_prior_window_is_the_four_chapters_before_and_readback_stays_outside_it(
    builds: dict[str, ContextBuild],
) -> None:
    c = builds["C"]
    assert [p.chapter for p in c.manifest.prior_chapters] == [76, 77, 78, 79]
    assert [p.chapter for p in c.context.prior_chapters] == [76, 77, 78, 79]
    for build in (builds["A"], builds["C"]):
        assert build.manifest.spans and all(s.chapter < 76 for s in build.manifest.spans)
        retrieval = next(b for b in build.manifest.blocks if b.name == "retrieval")
        assert retrieval.used == sum(s.chars for s in build.manifest.spans) <= retrieval.budget


def test_arms_a_and_c_differ_only_in_selected_raw_text(builds: dict[str, ContextBuild]) -> None:
    a, c = builds["A"], builds["C"]
    ensure_same_frame(a.context, c.context, "test")
    assert a.manifest.frame_sha256 == c.manifest.frame_sha256
    assert a.context.facts == c.context.facts and a.context.constraints == c.context.constraints
    assert a.context.prior_chapters == c.context.prior_chapters
    assert [(b.name, b.budget) for b in a.manifest.blocks] == [(b.name, b.budget) for b in c.manifest.blocks]
    assert [e.purpose for e in a.context.readback + a.context.style] == [
        e.purpose for e in c.context.readback + c.context.style
    ]
    assert a.context.readback != c.context.readback  # the selected raw text differs …
    assert a.manifest_sha256 != c.manifest_sha256  # … and so do the derived hashes
    assert [s.located_by.split()[0] for s in a.manifest.spans] == ["search"] * len(a.manifest.spans)
    # B (diagnostic) shows card states as text, no raw text of earlier chapters
    b = builds["B"]
    assert b.manifest.spans == [] and b.context.style == [] and "关羽的资料" in [e.purpose for e in b.context.readback]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda ctx: ctx.model_copy(update={"constraints": [*ctx.constraints[:-1], OutlineLine(id="T1", text="改")]}),
        lambda ctx: ctx.model_copy(update={"facts": ctx.facts[1:]}),
        lambda ctx: ctx.model_copy(update={"style": [*ctx.style, Excerpt(purpose="多出来的", text="")]}),
    ],
)
def test_an_injected_difference_is_arm_context_diverged(builds: dict[str, ContextBuild], tamper: object) -> None:
    assert callable(tamper)
    with pytest.raises(FailedClosed) as ei:
        ensure_same_frame(tamper(builds["A"].context), builds["C"].context, "chapter 80")
    assert ei.value.code == "ARM_CONTEXT_DIVERGED" and ei.value.exit_code == 3


def test_a_difference_injected_into_an_arm_fails_the_build(sanguo_full: Book, monkeypatch: pytest.MonkeyPatch) -> None:
    from novelmuse.writing import _build

    real = _build._fill

    def leaky(*args: object, **kwargs: object) -> object:
        got = real(*args, **kwargs)  # type: ignore[arg-type]
        got.readback.append(Excerpt(purpose="检索来源", text="x"))
        return got

    monkeypatch.setattr(_build, "_fill", leaky)
    with pytest.raises(FailedClosed) as ei:
        build_context(sanguo_full, N)
    assert ei.value.code == "ARM_CONTEXT_DIVERGED"


_ARM_LETTER = re.compile(r"(?<![A-Za-z0-9_])[ABC](?![A-Za-z0-9_])")


def test_leak_guard_no_card_id_file_name_arm_letter_or_strategy_word(
    sanguo_full: Book, builds: dict[str, ContextBuild]
) -> None:
    from novelmuse.memory import load_cards

    cards = load_cards(sanguo_full)
    for arm, build in builds.items():
        visible = "\n".join(m.content for m in build.rendered.messages)
        assert writer_text_leaks(visible, cards) == {}, arm
        assert not _ARM_LETTER.search(visible), (arm, _ARM_LETTER.search(visible))
        for card in cards.cards.values():
            assert card.id not in visible and card.file not in visible and ".yaml" not in visible
        for word in ("检索", "BM25", "卡索引", "知识卡", "原文回读", "arm", "manifest", "card"):
            assert word not in visible, (arm, word)
        assert writer_text_leaks(visible, cards, generated_text(build.context)) == {}
    with pytest.raises(FailedClosed) as ei:
        check_writer_text(builds["C"].context, visible + "\n（据 guan-yu）", cards, "test")
    assert ei.value.code == "CONTEXT_LEAK" and "guan-yu" not in ei.value.what  # the error never repeats a token
    # novelmuse's own text is checked for strategy words; the novel's text (三国演义 says 召回) is not
    tagged = builds["C"].context.model_copy(update={"style": [Excerpt(purpose="检索结果", text="召回孔明")]})
    assert "strategy_word" in writer_text_leaks("", cards, generated_text(tagged))
    assert writer_text_leaks("召回孔明", cards, generated_text(builds["C"].context)) == {}
    assert writer_text_leaks("见 cards/guan-yu.yaml 与 BM25", cards) == {
        "card_file": 2,
        "card_id": 1,
        "book_path": 2,
        "strategy_word": 1,
    }


def test_a_pointer_into_chapter_n_fails_closed_as_future_leak(
    sanguo_full: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novelmuse.writing import _build

    real = _build._fact_lines

    def future(*args: object, **kwargs: object) -> object:
        facts, refs = real(*args, **kwargs)  # type: ignore[arg-type]
        leak = refs[0].model_copy(update={"pointer": refs[0].pointer.model_copy(update={"chapter": N})})
        return facts, [*refs, leak]

    monkeypatch.setattr(_build, "_fact_lines", future)
    with pytest.raises(FailedClosed) as ei:
        build_context(sanguo_full, N)
    assert ei.value.code == "FUTURE_LEAK" and "80" in ei.value.what


def test_fact_and_style_evidence_are_assembled_apart_each_tagged(builds: dict[str, ContextBuild]) -> None:
    c = builds["C"]
    slots = {s.slot: s for s in c.manifest.slots}
    assert {s.section for s in c.manifest.spans if s.slot.startswith(("state:", "last:"))} == {"readback"}
    assert {s.section for s in c.manifest.spans if s.slot.startswith(("voice:", "action:", "hook:"))} == {"style"}
    voice = next(s for s in c.manifest.spans if s.slot == "voice:liu-bei")
    text = next(e.text for e in c.context.style if e.purpose == "刘备的说话方式")
    assert voice.sha256 and text and re.search(r"(玄德|刘备|刘皇叔|刘玄德)[^。”]{0,8}?[曰道说问叫].{0,2}[“「]", text)
    hook = next(e.text for e in c.context.style if e.purpose.startswith("章末"))
    assert slots["hook:1"].filled and "下文分解" in hook  # the last paragraph of an earlier chapter
    # every candidate looked at is either selected or listed with its reason
    for s in c.manifest.slots:
        listed = sum(1 for u in c.manifest.unselected if u.slot == s.slot)
        assert listed + int(s.filled) == s.considered, s.slot


def test_quotes_in_the_manifest_are_the_chapter_text(sanguo_full: Book, builds: dict[str, ContextBuild]) -> None:
    from novelmuse.text import sha256_hex

    for build in (builds["A"], builds["C"]):
        for s in build.manifest.spans:
            text = sanguo_full.read_chapter(s.chapter).body[s.start : s.end]
            assert sha256_hex(text) == s.sha256 and count_chars(text) == s.chars
            assert text.strip() in writer_visible_text(build.context)


def test_the_terminal_locates_every_span_by_file_and_line(sanguo_full: Book, builds: dict[str, ContextBuild]) -> None:
    """issue 16.4: every span, cut and unselected candidate `muse context` prints reads `chapters/0062.md:LINE
    [start:end]` (the JSON keeps the offsets only)."""
    from io import StringIO

    from rich.console import Console

    from novelmuse.reports import ChapterLines, render_context
    from novelmuse.writing import ContextDoc

    c = builds["C"]
    doc = ContextDoc(
        chapter=N, arm="C", manifest_sha256="0" * 64, manifest_path="m", manifest=c.manifest, context=c.context
    )
    out = StringIO()
    render_context(Console(file=out, width=300, soft_wrap=True), doc, ChapterLines(sanguo_full))
    shown = out.getvalue()
    located = [(s.chapter, s.start, s.end) for s in c.manifest.spans]
    located += [(u.chapter, u.start, u.end) for u in c.manifest.unselected[:12]]  # the terminal lists 12
    assert located
    for chapter, start, end in located:
        ch = sanguo_full.read_chapter(chapter)
        line = ch.first_line + ch.body.count("\n", 0, start)
        assert f"chapters/{chapter:04d}.md:{line} [{start}:{end}]" in shown, (chapter, start)


def test_arm_a_queries_come_from_the_outline_text_never_from_the_cards(
    sanguo_full: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arm A is generic retrieval (通用原文检索): every query it sends is made of the outline's own words; no card
    alias, card value or ledger description reaches it, so the A/C contrast measures what the card index adds."""
    from novelmuse.memory import SearchIndex, load_cards
    from novelmuse.writing import read_outline
    from novelmuse.writing._arms import outline_texts

    sent: list[str] = []
    real = SearchIndex.search

    def spy(self: SearchIndex, text: str, **kw: object) -> object:
        sent.append(text)
        return real(self, text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchIndex, "search", spy)
    build_context(sanguo_full, N, arm="A")
    assert sent
    outline = read_outline(sanguo_full, N)
    own = set("".join([*outline_texts(outline), *outline.entities, *(f.note for f in outline.foreshadows), "曰"]))
    for query in sent:
        assert set(query.replace(" ", "")) <= own, query  # every character is one the outline itself writes
    card_words = {
        w
        for c in load_cards(sanguo_full).cards.values()
        for w in [*c.aliases]
        if w and not any(w in t for t in [*outline_texts(outline), *outline.entities])
    }
    assert card_words  # the cards know names the outline does not write …
    assert not [w for w in card_words for q in sent if w in q]  # … and none reaches arm A
