"""Bytes of a novel file → text: UTF-8 (with or without BOM), else GB18030, else a clear error.

The decision, in order:

1. Empty input (no bytes, a lone BOM, or only whitespace) → ``TEXT_EMPTY``.
2. A UTF-16/UTF-32 byte-order mark → ``TEXT_ENCODING`` (say which; save as UTF-8).
3. A NUL byte → ``TEXT_BINARY`` naming its offset: no Chinese text encoding produces NUL.
4. Valid UTF-8 → used (a leading BOM is dropped and noted). Valid UTF-8 always wins: a very short GBK
   text can happen to be valid UTF-8 too (一一 is D2 BB D2 BB, also "һһ"); real novels are not.
5. Not valid UTF-8: is it UTF-8 with a few damaged bytes, or a GB18030/GBK file? Chinese text in
   GBK almost never forms valid multi-byte UTF-8 sequences, while a damaged UTF-8 file is mostly
   valid ones. So if at least `UTF8_MAJORITY` of the non-ASCII bytes belong to valid UTF-8 sequences,
   the file is UTF-8 and the error ``TEXT_ENCODING`` names the byte offset of the first bad byte.
   (GB18030 would "decode" such a file into mojibake without complaint: reading it silently is worse
   than an error.)
6. Otherwise GB18030 (a superset of GBK and GB2312) is tried strictly; success is used with a note
   saying it was detected. Failure → ``TEXT_ENCODING`` naming the first byte neither encoding accepts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from ..errors import InputError

Encoding = Literal["utf-8", "utf-8-sig", "gb18030"]

#: Share of non-ASCII bytes that must form valid UTF-8 sequences for a file to count as damaged UTF-8.
UTF8_MAJORITY: Final = 0.8

_ASCII: Final = bytes(range(128))
_BOMS: Final = (
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
)


@dataclass(frozen=True)
class DecodedText:
    """Decoded text, the encoding it was read as, and notes worth telling the user."""

    text: str
    encoding: Encoding
    notes: list[str] = field(default_factory=list)


def _context(data: bytes, offset: int) -> str:
    return data[max(0, offset - 8) : offset + 8].hex(" ")


def _require_text(text: str, where: str) -> None:
    if not text.strip():
        raise InputError("TEXT_EMPTY", "the file holds no text (only whitespace)", where, "pass the novel's text file")


def decode_text(data: bytes, where: str = "") -> DecodedText:
    """Decode a novel file's bytes (see the module docstring); raises InputError with a stable code."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not body.strip():
        raise InputError(
            "TEXT_EMPTY",
            "the file is empty" if not data else "the file holds no text (only whitespace or a byte-order mark)",
            where,
            "pass the novel's text file",
        )
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise InputError(
                "TEXT_ENCODING",
                f"the file is {name}, which novelmuse does not read",
                where,
                "save it as UTF-8 (or GB18030) and retry",
            )
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(
            "TEXT_BINARY",
            f"this is a binary file, not text (NUL byte at byte offset {nul}; UTF-16 without a byte-order "
            "mark looks like this too)",
            where,
            "pass a plain-text novel file (.txt in UTF-8 or GB18030)",
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    else:
        _require_text(text, where)
        if body is data:
            return DecodedText(text, "utf-8")
        return DecodedText(text, "utf-8-sig", ["a UTF-8 byte-order mark at the start was dropped"])

    bad_offset = utf8_error.start + (len(data) - len(body))
    bad_bytes = len(body) - len(body.decode("utf-8", errors="ignore").encode("utf-8"))
    non_ascii = len(body.translate(None, _ASCII))
    if non_ascii - bad_bytes >= UTF8_MAJORITY * non_ascii:
        raise InputError(
            "TEXT_ENCODING",
            f"invalid UTF-8 at byte offset {bad_offset} (bytes around it: {_context(data, bad_offset)}); "
            f"{bad_bytes} bad byte(s) in a file that is otherwise UTF-8",
            where,
            "repair or remove the damaged bytes (e.g. re-export the file as UTF-8)",
        )
    try:
        text = body.decode("gb18030")
    except UnicodeDecodeError as exc:
        gb_offset = exc.start + (len(data) - len(body))
        raise InputError(
            "TEXT_ENCODING",
            f"neither UTF-8 (first bad byte at offset {bad_offset}) nor GB18030 (first bad byte at offset "
            f"{gb_offset}, bytes around it: {_context(data, gb_offset)})",
            where,
            "save the file as UTF-8 and retry",
        ) from exc
    _require_text(text, where)
    notes = [
        "not UTF-8: detected and decoded as GB18030 (a superset of GBK/GB2312); chapter files are written as UTF-8"
    ]
    return DecodedText(text, "gb18030", notes)
