"""The line-syntax parser: every accepted syntax, unparsed lines kept, errors and warnings with line numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.errors import InputError
from novelmuse.rules import decode_rules, parse_rules, preferences_block


def test_seed_examples() -> None:
    rs = parse_rules("禁止:后宫、系统面板\n疲劳词:不由得≤2、眼底闪过≤2\n偏好:多对话,快节奏\n")
    assert [(r.phrase, r.line) for r in rs.forbidden] == [("后宫", 1), ("系统面板", 1)]
    assert [(r.phrase, r.limit, r.line) for r in rs.fatigue] == [("不由得", 2, 2), ("眼底闪过", 2, 2)]
    assert [(p.text, p.line) for p in rs.preferences] == [("多对话,快节奏", 3)]
    assert rs.problems == () and rs.unparsed == ()


def test_syntax_variants() -> None:
    text = (
        "# a whole-line comment\n"
        "\n"
        "禁止：后宫，系统面板;金手指；签到 逆袭\u3000打脸  # trailing comment\n"
        "疲劳词 ： 不由得 <= 2 , 一丝＜＝１０ 、仿佛≦3次；竟然⩽0\r\n"
        "偏好：  多对话，快节奏  ＃ full-width comment\n"
        "   \t\n"
    )
    rs = parse_rules(text)
    assert [r.phrase for r in rs.forbidden] == ["后宫", "系统面板", "金手指", "签到", "逆袭", "打脸"]
    assert [(r.phrase, r.limit) for r in rs.fatigue] == [("不由得", 2), ("一丝", 10), ("仿佛", 3), ("竟然", 0)]
    assert all(r.line == 4 for r in rs.fatigue)
    assert [p.text for p in rs.preferences] == ["多对话，快节奏"]
    assert rs.problems == () and rs.unparsed == ()


def test_spaced_limit_with_ci() -> None:
    """``≤ 2 次`` is written like ``≤ 2``: the 次 is part of the limit, not a fatigue word without a limit."""
    rs = parse_rules("疲劳词:不由得 ≤ 2 次、一丝≤1\n疲劳词:仿佛 <= 3 次 竟然 ≤ ０ 次\n疲劳词:缓缓≤2 次≤1\n")
    assert [(r.phrase, r.limit, r.line) for r in rs.fatigue] == [
        ("不由得", 2, 1),
        ("一丝", 1, 1),
        ("仿佛", 3, 2),
        ("竟然", 0, 2),
        ("缓缓", 2, 3),
        ("次", 1, 3),  # 次 followed by a limit is a phrase of its own
    ]
    assert rs.problems == ()


def test_unclear_lines_come_back_unparsed_with_line_numbers() -> None:
    rs = parse_rules("禁止:后宫\n不要写得太水\n禁止 系统面板\n主角不能死 # 注释\n")
    assert [(u.line, u.text) for u in rs.unparsed] == [(2, "不要写得太水"), (3, "禁止 系统面板"), (4, "主角不能死")]
    assert rs.problems == ()


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("疲劳词:不由得", "has no limit"),
        ("疲劳词:不由得≤2、一丝", "'一丝' has no limit"),
        ("疲劳词:不由得≤两", "not a whole number"),
        ("疲劳词:不由得≤-1", "not a whole number"),
        ("疲劳词:不由得≤2回", "not a whole number"),
        ("疲劳词:不由得≤", "not a whole number"),
        ("疲劳词:不由得≤1、\u3000≤0", "'≤0' has no phrase before it"),
        ("禁止:后宫≤2", "禁止 phrases take none"),
        ("禁止:", "nothing after the colon"),
        ("偏好：  ", "nothing after the colon"),
        ("禁止:后宫、" + "哈" * 10_001, "10,001 characters, over the cap of 10,000"),
        ("疲劳词:" + "哈" * 10_001 + "≤2", "10,001 characters, over the cap of 10,000"),
        ("偏好:" + "快" * 10_001, "10,001 characters, over the cap of 10,000"),
    ],
)
def test_malformed_rule_lines_are_syntax_errors(line: str, needle: str) -> None:
    rs = parse_rules("# header\n" + line)
    assert [(p.code, p.severity, p.lines) for p in rs.problems] == [("RULES_SYNTAX", "error", (2,))]
    assert needle in rs.problems[0].message
    assert rs.forbidden == () and rs.fatigue == ()


def test_contradictions_name_both_lines() -> None:
    rs = parse_rules("禁止:后宫\n疲劳词:后宫≤2\n疲劳词:一丝≤1\n\n疲劳词:一丝≤3\n")
    assert [(p.code, p.lines) for p in rs.errors] == [("RULES_CONTRADICTION", (1, 2)), ("RULES_CONTRADICTION", (3, 5))]
    assert "line 1" in rs.errors[0].message and "line 2" in rs.errors[0].message


def test_identical_duplicates_are_warnings() -> None:
    rs = parse_rules("禁止:后宫、后宫\n疲劳词:一丝≤1\n疲劳词:一丝<=1\n偏好:快\n偏好:快\n")
    assert rs.errors == ()
    assert [(p.code, p.lines) for p in rs.warnings] == [
        ("RULES_DUPLICATE", (1, 1)),
        ("RULES_DUPLICATE", (2, 3)),
        ("RULES_DUPLICATE", (4, 5)),
    ]
    assert len(rs.forbidden) == 1 and len(rs.fatigue) == 1 and len(rs.preferences) == 1


def test_one_character_emoji_combining_and_full_width_phrases() -> None:
    rs = parse_rules("禁止:哈、😀、e\u0301、ＡＢＣ\n")
    assert [r.phrase for r in rs.forbidden] == ["哈", "😀", "e\u0301", "ＡＢＣ"]
    assert [p.code for p in rs.warnings] == ["RULES_NOT_NFC"]  # e + combining acute is not NFC


def test_preferences_block_is_verbatim_in_order() -> None:
    rs = parse_rules('偏好:多对话,快节奏\n禁止:后宫\n偏好： 少用比喻（尤其是"像"） \n')
    assert preferences_block(rs) == '多对话,快节奏\n少用比喻（尤其是"像"）'
    assert preferences_block(parse_rules("")) == ""


def test_invalid_utf8_names_the_byte_offset_and_line() -> None:
    data = "禁止:后宫\n疲劳词:一丝≤2\n".encode() + b"\xff\xfe" + "禁止:x".encode()
    with pytest.raises(InputError) as exc:
        decode_rules(data, "rules.txt")
    assert exc.value.code == "RULES_ENCODING"
    offset = data.index(b"\xff")
    assert f"byte offset {offset}" in exc.value.what and "line 3" in exc.value.what
    assert decode_rules(b"\xef\xbb\xbf" + "禁止:a".encode(), "r") == "禁止:a"


def test_parsing_is_linear_in_the_number_of_lines() -> None:
    """4x the lines take about 4x the time (best of 3 each, so a busy machine does not make it flaky)."""
    import time

    def best(n: int) -> float:
        text = "\n".join(f"禁止:词{i}" if i % 2 else f"疲劳词:字{i}≤{i % 7}" for i in range(n))
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            rs = parse_rules(text)
            times.append(time.perf_counter() - t0)
        assert len(rs.forbidden) == n // 2 and len(rs.fatigue) == n // 2 and rs.problems == ()
        return min(times)

    small, big = best(5_000), best(20_000)
    assert big < 8 * small, (small, big)


def test_a_phrase_at_the_cap_is_accepted() -> None:
    rs = parse_rules("禁止:" + "哈" * 10_000)
    assert rs.errors == () and len(rs.forbidden[0].phrase) == 10_000


# ---- hypothesis: render generated rules in random allowed syntaxes, parse back --------------------------------

PHRASE_CHARS = st.sampled_from([*"后宫系统面板不由得一丝眼底闪过哈abc😀Ａ", "e\u0301", ":", "："])
phrases = st.lists(PHRASE_CHARS, min_size=1, max_size=5).map("".join)
COLONS = [":", "："]
SEPS = ["、", "，", ",", "；", ";", " ", "\u3000", " 、 ", "\t"]
OPS = ["≤", "<=", "＜＝", "≦", "⩽"]
FULL = str.maketrans("0123456789", "０１２３４５６７８９")


@st.composite
def rule_file(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, int | None, int]], list[tuple[str, int]]]:
    """A rules file and the oracle: (kind, phrase, limit, line) per rule and (text, line) per preference."""
    names = draw(st.lists(phrases, min_size=1, max_size=12, unique=True))
    lines: list[str] = []
    expected: list[tuple[str, str, int | None, int]] = []
    prefs: list[tuple[str, int]] = []
    i = 0
    while i < len(names):
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# 注释", "  ＃ comment", "\t"])))
        kind = draw(st.sampled_from(["forbidden", "fatigue", "preference"]))
        n_items = draw(st.integers(1, 3))
        chunk, i = names[i : i + n_items], i + n_items
        colon = draw(st.sampled_from(COLONS))
        pad = draw(st.sampled_from(["", " ", "\u3000"]))
        line_no = len(lines) + 1
        if kind == "preference":
            text = draw(st.sampled_from(SEPS)).strip().join(chunk) or chunk[0]
            lines.append(f"偏好{pad}{colon}{pad}{text}")
            prefs.append((text, line_no))
            continue
        rendered = []
        for ph in chunk:
            if kind == "fatigue":
                limit = draw(st.integers(0, 99))
                digits = str(limit).translate(FULL) if draw(st.booleans()) else str(limit)
                sp = draw(st.sampled_from(["", " "]))
                suffix = draw(st.sampled_from(["", "次"]))
                rendered.append(f"{ph}{sp}{draw(st.sampled_from(OPS))}{sp}{digits}{suffix}")
                expected.append(("fatigue", ph, limit, line_no))
            else:
                rendered.append(ph)
                expected.append(("forbidden", ph, None, line_no))
        body = rendered[0]
        for item in rendered[1:]:
            body += draw(st.sampled_from(SEPS)) + item
        trailer = draw(st.sampled_from(["", " # tail", "＃尾注", " "]))
        key = "禁止" if kind == "forbidden" else "疲劳词"
        lines.append(f"{key}{pad}{colon}{pad}{body}{trailer}")
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return eol.join(lines), expected, prefs


@settings(max_examples=300, deadline=None)
@given(rule_file())
def test_parse_back_generated_rules(
    case: tuple[str, list[tuple[str, str, int | None, int]], list[tuple[str, int]]],
) -> None:
    text, expected, prefs = case
    rs = parse_rules(text)
    got = [("forbidden", r.phrase, None, r.line) for r in rs.forbidden] + [
        ("fatigue", r.phrase, r.limit, r.line) for r in rs.fatigue
    ]
    assert sorted(got, key=lambda x: (x[3], x[1])) == sorted(expected, key=lambda x: (x[3], x[1]))
    assert [(p.text, p.line) for p in rs.preferences] == prefs
    assert rs.errors == () and rs.unparsed == ()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30), st.booleans(), st.sampled_from([b"\xff", b"\x80", b"\xc3("]))
def test_encoding_error_offset_is_the_bad_byte_in_the_file(head: str, tail: str, bom: bool, bad: bytes) -> None:
    prefix = (b"\xef\xbb\xbf" if bom else b"") + head.encode("utf-8")
    data = prefix + bad + tail.encode("utf-8")
    with pytest.raises(InputError) as exc:
        decode_rules(data, "rules.txt")
    assert f"byte offset {len(prefix)} " in exc.value.what
    line = prefix.count(b"\n") + 1
    assert f"(line {line})" in exc.value.what
