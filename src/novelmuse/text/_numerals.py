"""Chapter numbers as written in Chinese novels: 第一百十九回, 第一百零一章, 第１２章, 第一〇一章.

Accepted forms (all give an ``int``; anything else gives ``None``, never a guess):

- Arabic digits, ASCII or full-width: ``12``, ``１２``.
- Chinese numerals with units 十 百 千 万: ``十二``, ``一十二``, ``二十``, ``一百零一``, ``一千零十``,
  ``三万五千``; ``两`` for 2 (``两百``), ``零``/``〇`` for skipped places, ``廿``/``卅``/``卌`` for
  20/30/40, and the financial forms 壹贰叁肆伍陆柒捌玖拾佰仟.
- Digit strings without units: ``一〇一`` = 101, ``二〇二三`` = 2023 (used by some web novels).

One reading is a decision, not a fact of the language: a digit that follows 百/千/万 with no 零 and no
unit after it counts as ones, so ``一百一`` = 101. That is how 三国演义 and 红楼梦 number their chapters
(第一百回, 第一百一回, 第一百二回 … 第一百十回), although in speech ``一百一`` often means 110.
"""

from __future__ import annotations

from typing import Final

_DIGITS: Final[dict[str, int]] = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "壹": 1,
    "二": 2,
    "贰": 2,
    "两": 2,
    "三": 3,
    "叁": 3,
    "四": 4,
    "肆": 4,
    "五": 5,
    "伍": 5,
    "六": 6,
    "陆": 6,
    "七": 7,
    "柒": 7,
    "八": 8,
    "捌": 8,
    "九": 9,
    "玖": 9,
}
_SMALL_UNITS: Final[dict[str, int]] = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_TENS: Final[dict[str, int]] = {"廿": 20, "卅": 30, "卌": 40}
_WAN: Final = "万"

#: Every character that may appear in a Chinese numeral (for regular expressions elsewhere).
CHINESE_NUMERAL_CHARS: Final[str] = "".join([*_DIGITS, *_SMALL_UNITS, *_TENS, _WAN])

_FULLWIDTH_DIGITS: Final = str.maketrans("０１２３４５６７８９", "0123456789")


def parse_arabic(text: str) -> int | None:
    """Parse ASCII or full-width decimal digits (``12``, ``１２``); None for anything else."""
    ascii_digits = text.translate(_FULLWIDTH_DIGITS)
    if not ascii_digits or not all("0" <= c <= "9" for c in ascii_digits):
        return None
    return int(ascii_digits)


def _parse_section(text: str) -> int | None:
    """A number below 10,000 written with 十百千 (or none): the part between 万 markers."""
    if not text:
        return None
    if all(c in _DIGITS for c in text):
        if len(text) == 1:
            return _DIGITS[text]
        if len(text) > 4 or _DIGITS[text[0]] == 0:
            return None  # at most four places, no leading zero
        value = 0
        for c in text:
            value = value * 10 + _DIGITS[c]
        return value  # a digit string such as 一〇一
    value = 0
    digit: int | None = None
    last_unit = 10_000  # units must strictly descend inside a section
    zero_pending = False
    for i, c in enumerate(text):
        if c in _DIGITS:
            if digit is not None:
                return None  # two digits in a row inside a unit form: 一二百
            d = _DIGITS[c]
            if d == 0:
                if zero_pending or i == 0 or digit is not None:
                    return None
                zero_pending = True
            else:
                digit = d
        elif c in _SMALL_UNITS:
            unit = _SMALL_UNITS[c]
            if unit >= last_unit:
                return None
            if digit is None:
                if unit != 10:
                    return None  # a bare 百 or 千
                digit = 1  # 十二 = 12, 一百十 = 110, 一千零十 = 1010
            value += digit * unit
            digit = None
            last_unit = unit
            zero_pending = False
        elif c in _TENS:
            if i != 0 or len(text) > 2:
                return None
            value = _TENS[c]
            last_unit = 10
        else:
            return None
    if zero_pending and digit is None:
        return None  # a trailing 零: 一百零
    if digit is not None:
        value += digit  # 一百零一 = 101, and by the ordinal reading also 一百一 = 101
    return value


def parse_chinese_numeral(text: str) -> int | None:
    """Parse a Chinese numeral (see the module docstring for the forms); None when it is not one."""
    if not text or any(c not in CHINESE_NUMERAL_CHARS for c in text):
        return None
    if text.count(_WAN) > 1:
        return None
    high, sep, low = text.partition(_WAN)
    if not sep:
        return _parse_section(high)
    high_value = _parse_section(high)
    if high_value is None or high_value == 0:
        return None
    if not low:
        return high_value * 10_000
    if low[0] in "零〇":
        low = low[1:]
        if not low or low[0] in "零〇":
            return None
        low_value = _parse_section(low)
        if low_value is None or low_value >= 1000:
            return None  # 零 after 万 means the thousands place is empty
    else:
        low_value = _parse_section(low)
        if low_value is None or (low_value < 1000 and len(low) > 1):
            return None  # 一万五十 is not a number; 一万五 (= 10005 by the ordinal reading) is
    return high_value * 10_000 + low_value


def parse_number(text: str) -> int | None:
    """Parse a chapter number written in Arabic, full-width or Chinese numerals; None if it is neither."""
    text = text.strip()
    value = parse_arabic(text)
    return value if value is not None else parse_chinese_numeral(text)
