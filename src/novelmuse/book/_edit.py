"""Saving an author's chapter or fine outline edited outside its file (the studio's editors): through the revision
store, only over the exact bytes the editor was opened on, keeping the file's line-ending style and byte-order
mark."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..limits import MAX_FILE_BYTES
from ._outline import outline_paths, parse_outline
from ._project import Book, parse_chapter_file
from ._revisions import FileRevision


def _in_file_style(old: bytes, text: str, path: Path, what: str, fix: str) -> bytes:
    """`text` as the bytes of the file it replaces would have it: that file's line breaks (a browser sends CRLF) and
    byte-order mark kept; <WHAT>_TOO_LARGE over the file cap."""
    unified = text.replace("\r\n", "\n").replace("\r", "\n")
    if b"\r\n" in old:
        unified = unified.replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if old.startswith(b"\xef\xbb\xbf") else b"") + unified.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise InputError(
            f"{what.upper()}_TOO_LARGE",
            f"the edited {what} is {len(data):,} bytes, over the cap of {MAX_FILE_BYTES:,}",
            str(path),
            fix,
        )
    return data


def save_chapter_text(book: Book, number: int, text: str, *, expect_sha256: str, command: str) -> FileRevision:
    """Replace chapter `number`'s file by `text` (heading line and body, as the author edited them), keeping the
    bytes it had as a revision (`muse revisions N`). Refused with FILE_CHANGED_ON_DISK when the file is no longer
    `expect_sha256` — an edit made meanwhile (in an editor, by `muse`) is never overwritten. Line breaks come back
    in the file's own style (a browser sends CRLF), its UTF-8 byte-order mark is kept; the new bytes must still
    read as a chapter file (CHAPTER_ENCODING, CHAPTER_TOO_LARGE otherwise)."""
    path = book.chapter_path(number)
    data = _in_file_style(book.read_chapter(number).path.read_bytes(), text, path, "chapter", "split the chapter")
    parse_chapter_file(number, path, data)
    return book.replace_file(
        path, data, expect_sha256=expect_sha256, kind="chapter", chapter=number, command=command, note="edited"
    )


def save_outline_text(book: Book, number: int, text: str, *, expect_sha256: str, command: str) -> FileRevision:
    """Replace chapter `number`'s fine outline by `text` (its YAML as the author edited it), keeping the bytes it
    had as a revision (`muse revisions`). Refused with FILE_CHANGED_ON_DISK when the file is no longer
    `expect_sha256`, and when the new text does not read as a fine outline (OUTLINE_SYNTAX / OUTLINE_INVALID: an
    outline that reads but fails lint is saved — the lint then says what to fix before it can be confirmed)."""
    path = outline_paths(book).get(number)
    if path is None:
        raise InputError(
            "OUTLINE_NOT_FOUND", f"chapter {number} has no fine outline", f"outlines/{number:04d}.yaml", "create it"
        )
    data = _in_file_style(path.read_bytes(), text, path, "outline", "shorten it")
    parse_outline(path, data.decode("utf-8-sig"), expect_chapter=number)
    return book.replace_file(
        path, data, expect_sha256=expect_sha256, kind="outline", chapter=number, command=command, note="edited"
    )
