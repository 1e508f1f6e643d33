"""Revisions: the loop's resulting chapter file, kept beside the author's original.

The author's file is the source of truth: a revision is stored in the database (table `revisions`)
and as a file `.muse/revisions/NNNN.<revision id>.md` beside the original it was made from
(`NNNN.<revision id>.base.md`, byte-exact: the original text is always kept). It is a draft on the author's
desk: it reaches `chapters/NNNN.md` only when accepted (`muse drafts accept`, or `--apply`), through the
accept preflight and the revision store.
"""

from __future__ import annotations

from pathlib import Path

from ..book import Book, Chapter


def revision_bytes(chapter: Chapter, raw: bytes, new_body: str) -> bytes:
    """The whole file for a new body: the original heading line's bytes (`raw`, a BOM included) kept exactly, then
    the body — with the file's own line endings: a chapter saved with CRLF stays all CRLF, never a mix of the
    author's CRLF and the models' LF."""
    bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
    head = bom
    if chapter.heading:
        nl = raw.find(b"\n")
        head = raw[: nl + 1] if nl >= 0 else raw + b"\n"
    body = new_body.replace("\r\n", "\n")
    if _uses_crlf(raw):
        body = body.replace("\n", "\r\n")
        if head.endswith(b"\n") and not head.endswith(b"\r\n"):
            head = head[:-1] + b"\r\n"
    return head + body.encode("utf-8")


def _uses_crlf(raw: bytes) -> bool:
    """Whether most of the file's line breaks are CRLF."""
    breaks = raw.count(b"\n")
    return breaks > 0 and raw.count(b"\r\n") * 2 > breaks


def revision_path(book: Book, number: int, revision_id: str) -> Path:
    """Where a revision's file is kept: ``.muse/revisions/NNNN.<revision id>.md``."""
    return book.state_dir / "revisions" / f"{number:04d}.{revision_id}.md"


def base_path(book: Book, number: int, revision_id: str) -> Path:
    """Where the original the revision was made from is kept (so an --apply can always be undone)."""
    return book.state_dir / "revisions" / f"{number:04d}.{revision_id}.base.md"
