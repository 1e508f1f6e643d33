"""Chinese chapter numerals: int → numeral (a naive oracle written here) → parse gives the int back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.text import parse_chinese_numeral, parse_number

DIGITS = "零一二三四五六七八九"


def _section(n: int, *, zero: str, one_ten: bool, liang: bool, classical: bool) -> str:
    """n in 1..9999 in the standard form; `classical` writes 一百一 / 一百十 like the corpus does."""
    out: list[str] = []
    need_zero = False
    for place, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // place % 10
        if d == 0:
            need_zero = bool(out)
            continue
        if need_zero:
            out.append(zero)
            need_zero = False
        if unit == "十" and d == 1 and ((not out and not one_ten) or (out and classical)):
            out.append("十")
        else:
            out.append(("两" if liang and d == 2 and unit in ("百", "千") else DIGITS[d]) + unit)
    if classical and len(out) >= 3 and out[-2] == zero and out[-1] in DIGITS[1:]:
        del out[-2]  # 一百零一 → 一百一: a lone last digit is the ones
    return "".join(out)


def to_chinese(n: int, *, zero: str = "零", one_ten: bool = False, liang: bool = False, classical: bool = False) -> str:
    """Naive oracle: write n (0 ≤ n < 10^8) as a Chinese numeral."""
    if n == 0:
        return zero
    high, low = divmod(n, 10_000)
    if not high:
        return _section(low, zero=zero, one_ten=one_ten, liang=liang, classical=classical)
    text = _section(high, zero=zero, one_ten=one_ten, liang=liang, classical=False) + "万"
    if low:
        text += (zero if low < 1000 else "") + _section(low, zero=zero, one_ten=True, liang=liang, classical=False)
    return text


def to_digit_string(n: int) -> str:
    return "".join("〇一二三四五六七八九"[int(c)] for c in str(n))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("一", 1),
        ("十", 10),
        ("十二", 12),
        ("一十二", 12),
        ("二十", 20),
        ("九十九", 99),
        ("一百", 100),
        ("一百一", 101),  # 第一百一回 in 三国演义 and 红楼梦
        ("一百零一", 101),
        ("一百〇一", 101),
        ("一百十", 110),  # 第一百十回
        ("一百一十", 110),
        ("一百十九", 119),  # 第一百十九回
        ("一百二十", 120),
        ("两百", 200),
        ("一千零十", 1010),
        ("一千零一十", 1010),
        ("三千五百零二", 3502),
        ("一万", 10_000),
        ("十万", 100_000),
        ("一万零五十", 10_050),
        ("廿一", 21),
        ("卅", 30),
        ("壹佰贰拾叁", 123),
        ("一〇一", 101),
        ("二〇二三", 2023),
        ("零", 0),
    ],
)
def test_known_numerals(text: str, value: int) -> None:
    assert parse_chinese_numeral(text) == value
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "百",
        "千",
        "一二百",
        "一百一零",
        "十十",
        "二十十",
        "一百零",
        "零一",
        "〇一",
        "一千百",
        "万",
        "一万万",
        "第一",
        "1二",
        "abc",
    ],
)
def test_not_numerals(text: str) -> None:
    assert parse_number(text) is None


def test_arabic_and_fullwidth() -> None:
    assert parse_number("12") == 12
    assert parse_number("１２") == 12
    assert parse_number("007") == 7
    assert parse_number("1 2") is None
    assert parse_number("١٢") is None  # other scripts' digits are not accepted


@given(st.integers(min_value=0, max_value=99_999_999), st.booleans(), st.booleans(), st.sampled_from(["零", "〇"]))
def test_roundtrip_standard_forms(n: int, one_ten: bool, liang: bool, zero: str) -> None:
    assert parse_chinese_numeral(to_chinese(n, zero=zero, one_ten=one_ten, liang=liang)) == n


@given(st.integers(min_value=1, max_value=9999))
def test_roundtrip_classical_forms(n: int) -> None:
    text = to_chinese(n, classical=True)
    assert parse_chinese_numeral(text) == n, text


@given(st.integers(min_value=1, max_value=9999))
def test_roundtrip_digit_strings_and_arabic(n: int) -> None:
    assert parse_number(to_digit_string(n)) == n
    assert parse_number(str(n)) == n
    assert parse_number(str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))) == n


def test_oracle_itself_writes_what_books_write() -> None:
    assert to_chinese(119, classical=True) == "一百十九"
    assert to_chinese(101, classical=True) == "一百一"
    assert to_chinese(110, classical=True) == "一百十"
    assert to_chinese(101) == "一百零一"
    assert to_chinese(12, one_ten=True) == "一十二"
    assert to_chinese(200, liang=True) == "两百"
    assert to_chinese(10_050) == "一万零五十"
    assert to_chinese(1010) == "一千零一十"
