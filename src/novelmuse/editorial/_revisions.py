"""Revisions: the loop's resulting chapter file, kept beside the author's original.

The author's file is the source of truth: a revision is stored in the database (table `revisions`)
and as a file `.muse/revisions/NNNN.<revision id>.md` beside the original it was made from
(`NNNN.<revision id>.base.md`, byte-exact: the original text is always kept), and written to
`chapters/NNNN.md` only with `--apply`, atomically, and only if the file still has
the bytes that were reviewed (FILE_CHANGED_ON_DISK otherwise — the author's edit is kept).
"""

from __future__ import annotations

from pathlib import Path

from ..book import Book, Chapter, atomic_write_bytes


def revision_bytes(chapter: Chapter, raw: bytes, new_body: str) -> bytes:
    """The whole file for a new body: the original heading line's bytes (`raw`) kept exactly, then the body."""
    head = b""
    if chapter.heading:
        nl = raw.find(b"\n")
        head = raw[: nl + 1] if nl >= 0 else raw + b"\n"
    return head + new_body.encode("utf-8")


def apply_revision(chapter: Chapter, data: bytes) -> None:
    """Write a revision over the chapter file, refusing if the author changed the file meanwhile."""
    atomic_write_bytes(chapter.path, data, expect_sha256=chapter.sha256)


def revision_path(book: Book, number: int, revision_id: str) -> Path:
    """Where a revision's file is kept: ``.muse/revisions/NNNN.<revision id>.md``."""
    return book.state_dir / "revisions" / f"{number:04d}.{revision_id}.md"


def base_path(book: Book, number: int, revision_id: str) -> Path:
    """Where the original the revision was made from is kept (so an --apply can always be undone)."""
    return book.state_dir / "revisions" / f"{number:04d}.{revision_id}.base.md"
