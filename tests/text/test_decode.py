"""Decoding novel files: UTF-8 (BOM or not), GB18030 detected, clear errors with byte offsets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.errors import InputError
from novelmuse.text import decode_text
from tests.conftest import SANGUO

SAMPLE = "第一回　宴桃园豪杰三结义\n\n滚滚长江东逝水，浪花淘尽英雄。😀 e\u0301　全角空格\r\n"


def test_utf8_plain_and_with_bom() -> None:
    d = decode_text(SAMPLE.encode("utf-8"))
    assert (d.text, d.encoding, d.notes) == (SAMPLE, "utf-8", [])
    d = decode_text(b"\xef\xbb\xbf" + SAMPLE.encode("utf-8"))
    assert d.text == SAMPLE and d.encoding == "utf-8-sig" and "byte-order mark" in d.notes[0]


def test_gb18030_is_detected_with_a_note() -> None:
    text = SANGUO.read_text(encoding="utf-8")[:20_000]
    d = decode_text(text.encode("gb18030"))
    assert d.text == text and d.encoding == "gb18030"
    assert "GB18030" in d.notes[0]
    gbk = "第一章 少年\n这是用GBK保存的小说。\n".encode("gbk")
    assert decode_text(gbk).text == "第一章 少年\n这是用GBK保存的小说。\n"


def _error(data: bytes) -> InputError:
    with pytest.raises(InputError) as info:
        decode_text(data, "novel.txt")
    assert info.value.where == "novel.txt"
    return info.value


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf", b"  \n\r\n\t", "　\n".encode()])
def test_empty(data: bytes) -> None:
    assert _error(data).code == "TEXT_EMPTY"


def test_binary_names_the_nul_offset() -> None:
    err = _error(b"PK\x03\x04" + b"\x00" * 10)
    assert err.code == "TEXT_BINARY" and "offset 4" in err.what


def test_utf16_is_named() -> None:
    err = _error("第一章".encode("utf-16"))
    assert err.code == "TEXT_ENCODING" and "UTF-16" in err.what


def test_damaged_utf8_reports_the_first_bad_byte_offset() -> None:
    good = SANGUO.read_text(encoding="utf-8")[:5000].encode("utf-8")
    data = good[:3001] + b"\xff\xfe" + good[3001:]  # 3001 may split a character: then that byte is first
    broken_at = next(n for n in range(len(data) + 1) if not _valid_prefix(data, n))
    first_bad = max(i for i in range(broken_at) if _complete(data[:i]))  # start of the undecodable sequence
    err = _error(data)
    assert err.code == "TEXT_ENCODING"
    assert f"byte offset {first_bad}" in err.what
    assert "otherwise UTF-8" in err.what


def _valid_prefix(data: bytes, n: int) -> bool:
    """Naive oracle: is data[:n] a valid UTF-8 prefix (possibly ending inside a character)?"""
    try:
        data[:n].decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    return True


def _complete(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_neither_encoding() -> None:
    # 0x80 alone is not a GB18030 lead byte and a lone continuation byte in UTF-8
    err = _error(b"abc\x80def")
    assert err.code == "TEXT_ENCODING" and "offset 3" in err.what


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=200).filter(lambda s: s.strip() and "\x00" not in s), st.booleans())
def test_any_utf8_text_roundtrips(text: str, bom: bool) -> None:
    data = text.encode("utf-8")
    assert decode_text(b"\xef\xbb\xbf" + data if bom else data).text == text


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5), min_size=8, max_size=200))
def test_chinese_text_in_gb18030_is_read_as_gb18030(text: str) -> None:
    data = text.encode("gb18030")
    d = decode_text(data)
    if _complete(data):  # e.g. 一一一一 is D2 BB D2 BB…, also valid UTF-8 (Cyrillic һ): UTF-8 wins, as documented
        assert d.encoding == "utf-8"
    else:
        assert d.text == text and d.encoding == "gb18030"
