"""The matcher counts every phrase exactly like `str.count` (non-overlapping, leftmost), hypothesis-proven — both
its vectorised scan of many texts and its plain-Python path for one text."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from novelmuse.rules import (
    CompiledRules,
    Finding,
    LengthLimits,
    PhraseMatcher,
    build_effective,
    chapter_findings,
    flat_hits,
    load_defaults,
    parse_rules,
)
from novelmuse.rules._match import paragraph_indices
from novelmuse.text import paragraph_at, split_paragraphs
from tests.conftest import SANGUO

# Small alphabets make overlaps likely; they include emoji (astral), combining marks, full-width space and
# characters, and a line break so paragraphs vary.
ALPHABET = ["a", "b", "哈", "😀", "e", "\u0301", "é", "\u3000", "Ａ", "\n", "\r", " ", "👍🏽"[0], "👍🏽"[1]]
small_text = st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join)
# phrases may hold the full-width space, a space or CR at the matcher level (rules.txt cannot express them)
phrase = st.lists(st.sampled_from([c for c in ALPHABET if c != "\n"]), min_size=1, max_size=4).map("".join)


def naive_starts(text: str, p: str) -> list[int]:
    """Where `str.count` counts `p`: leftmost, each search starting at the end of the previous match."""
    out, pos = [], 0
    while (i := text.find(p, pos)) >= 0:
        out.append(i)
        pos = i + len(p)
    return out


def check_against_oracle(texts: list[str], phrases: list[str]) -> None:
    m = PhraseMatcher(phrases)
    r = m.scan(texts)
    for t, text in enumerate(texts):
        counts = r.counts(t)
        paras = split_paragraphs(text)
        for i, p in enumerate(phrases):
            assert r.count(t, i) == text.count(p), (text, p)
            assert counts.get(i, 0) == text.count(p)
            starts = naive_starts(text, p)
            assert r.match_starts(t, i).tolist() == starts
            if not any(ch.isspace() for ch in p):  # rule phrases never hold whitespace
                assert r.match_paragraphs(t, i).tolist() == [paragraph_at(paras, s) for s in starts]
        # the plain-Python path for one text: the same occurrences, the same paragraphs
        plain = m.occurrences(text)
        assert plain == {i: naive_starts(text, p) for i, p in enumerate(phrases) if p in text}
        flat = [s for i, starts in plain.items() if not any(ch.isspace() for ch in phrases[i]) for s in starts]
        assert paragraph_indices(text, flat) == [paragraph_at(paras, s) for s in flat]


@settings(max_examples=400, deadline=None)
@given(st.lists(small_text, min_size=1, max_size=4), st.lists(phrase, min_size=1, max_size=8, unique=True))
def test_counts_and_positions_equal_str_count(texts: list[str], phrases: list[str]) -> None:
    check_against_oracle(texts, phrases)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=40), min_size=1, max_size=3),
    st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=6, unique=True),
)
def test_arbitrary_unicode_including_lone_surrogates(texts: list[str], phrases: list[str]) -> None:
    check_against_oracle(texts, phrases)


def test_known_cases() -> None:
    check_against_oracle(["哈哈哈", "哈哈哈哈", "aaaa", "abab", ""], ["哈哈", "哈", "aa", "aba", "😀"])
    m = PhraseMatcher(["哈哈"])
    assert m.scan(["哈哈哈"]).count(0, 0) == 1  # the example


def test_matches_never_cross_from_one_text_into_the_next() -> None:
    # "ab" would straddle the join of the two texts, and "\n" is the separator character itself
    check_against_oracle(["xa", "by", "a", "b"], ["ab", "a\nb", "\n", "ya"])


def test_rejects_duplicate_and_empty_phrases() -> None:
    with pytest.raises(ValueError):
        PhraseMatcher(["a", "a"])
    with pytest.raises(ValueError):
        PhraseMatcher([""])


@settings(max_examples=100, deadline=None)
@given(small_text, phrase)
def test_vectorised_paragraph_index_equals_paragraph_at(text: str, p: str) -> None:
    assume(not any(ch.isspace() for ch in p))  # rules.txt phrases never hold whitespace
    eff = build_effective(parse_rules(f"禁止:{p}"), load_defaults(), LengthLimits(), "rules.txt")
    paras = split_paragraphs(text)
    for f in CompiledRules(eff).check_texts([text])[0]:
        for para, start, end in f.hits():
            assert para == paragraph_at(paras, start)
            assert text[start:end] == f.target


def test_corpus_counts_for_many_phrases() -> None:
    text = SANGUO.read_text(encoding="utf-8")[:200_000]
    starts = range(0, 190_000, 397)
    phrases = sorted({text[i : i + 1 + k % 6] for k, i in enumerate(starts)})
    phrases = [p for p in phrases if p.strip() == p]
    check_against_oracle([text[:100_000], text[100_000:]], phrases)


# ---- issue 18 item 5: compile and match in time linear in the phrase length --------------------------------------


def naive_self_overlaps(phrase: str) -> bool:
    return any(phrase[:k] == phrase[-k:] for k in range(1, len(phrase)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "哈"]), min_size=1, max_size=12).map("".join))
def test_self_overlap_equals_the_naive_border_test(p: str) -> None:
    from novelmuse.rules._match import _self_overlaps

    assert _self_overlaps(p) == naive_self_overlaps(p)


@pytest.mark.timeout(120)
def test_a_long_repeated_character_phrase_compiles_and_matches_in_linear_time() -> None:
    """One forbidden phrase of 100,000 哈 (or 哈…哈嘿, which has no border) took over 300 s to compile: the
    automaton library's DFA construction is quadratic in a phrase's length. Now the DFA is only used for small
    phrase sets; counts stay exactly str.count's."""
    import time

    for phrase in ("哈" * 100_000, "哈" * 99_999 + "嘿"):
        text = "前言" + phrase + "哈" * 150_000 + phrase
        t0 = time.perf_counter()
        r = PhraseMatcher([phrase, "哈哈", "不由得"]).scan([text, SANGUO.read_text(encoding="utf-8")[:50_000]])
        elapsed = time.perf_counter() - t0
        assert r.count(0, 0) == text.count(phrase) and r.count(0, 1) == text.count("哈哈")
        assert r.match_starts(0, 0).tolist() == naive_starts(text, phrase)
        assert elapsed < 10, f"{len(phrase)} characters took {elapsed:.1f}s"


def _findings(found: list[list[Finding]]) -> list[list[tuple[object, ...]]]:
    return [[(f.rule, f.target, f.limit, f.actual, f.severity, f.origin, f.hits()) for f in fs] for fs in found]


def _flat_hits_are_the_hits(found: list[list[Finding]]) -> None:
    """`flat_hits` (what --json formats) is every hit of the findings in their order, also in the order
    `chapter_findings` puts them (errors first, a length finding without hits among them)."""
    every = [f for fs in found for f in fs]  # findings of several texts together: several arrays
    for findings in (every, *found, *(chapter_findings(fs, 1, LengthLimits(min_chars=2))[1] for fs in found)):
        assert flat_hits(findings) == [x for f in findings for hit in f.hits() for x in hit]


def both_paths(texts: list[str], rules: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """`check_texts` gives the same findings checking each text in plain Python and scanning all with numpy."""
    from novelmuse.rules import _check

    compiled = CompiledRules(build_effective(parse_rules(rules), load_defaults(), LengthLimits(), "rules.txt"))
    monkeypatch.setattr(_check, "PLAIN_PYTHON_WORK", 10**18)
    plain_found = compiled.check_texts(texts)
    plain = _findings(plain_found)
    monkeypatch.setattr(_check, "PLAIN_PYTHON_WORK", -1)
    monkeypatch.setattr(_check, "PLAIN_PYTHON_RULES", -1)
    vectorised_found = compiled.check_texts(texts)
    assert plain == _findings(vectorised_found)
    monkeypatch.setattr(_check, "BATCH_CHARS", 1)  # a scan per text: findings of several texts, several arrays
    one_by_one = compiled.check_texts(texts)
    assert plain == _findings(one_by_one)
    for found in (plain_found, vectorised_found, one_by_one):
        _flat_hits_are_the_hits(found)
    return sum(len(fs) for fs in plain)


rule_phrase = st.lists(st.sampled_from([c for c in ALPHABET if not c.isspace()]), min_size=1, max_size=3).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(small_text, min_size=1, max_size=4), st.lists(rule_phrase, min_size=1, max_size=6, unique=True))
def test_plain_and_vectorised_checks_agree(texts: list[str], phrases: list[str]) -> None:
    rules = "\n".join(f"禁止:{p}" if i % 2 else f"疲劳词:{p}≤1" for i, p in enumerate(phrases))
    with pytest.MonkeyPatch.context() as mp:
        both_paths(texts, rules, mp)


def test_plain_and_vectorised_checks_agree_on_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    text = SANGUO.read_text(encoding="utf-8")[:150_000]
    chapters = [text[i : i + 15_000] for i in range(0, len(text), 15_000)]
    phrases = sorted({text[i : i + 2 + i % 3] for i in range(0, 140_000, 700)} - {""})
    phrases = [p for p in phrases if not any(ch.isspace() or ch in "、，,；;#＃≤<" for ch in p)]
    rules = "\n".join(f"禁止:{p}" if i % 2 else f"疲劳词:{p}≤2" for i, p in enumerate(phrases))
    assert both_paths(chapters, rules, monkeypatch) > 100
