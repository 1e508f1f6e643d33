"""The chapter registry: sha256 and counts of each chapter file as last registered."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ._db import transaction, utc_now


@dataclass(frozen=True, slots=True)
class ChapterRecord:
    """One registered chapter."""

    number: int
    path: str
    sha256: str
    chars: int
    paragraphs: int
    registered_at: str


def registered_chapters(conn: sqlite3.Connection) -> dict[int, ChapterRecord]:
    """Every registered chapter by number."""
    rows = conn.execute("SELECT number, path, sha256, chars, paragraphs, registered_at FROM chapters")
    return {row[0]: ChapterRecord(*row) for row in rows}


def register_chapters(conn: sqlite3.Connection, records: list[ChapterRecord], *, remove_others: bool) -> None:
    """Record the given chapters (replacing same-numbered rows); optionally forget every other chapter."""
    with transaction(conn):
        if remove_others:
            keep = {r.number for r in records}
            gone = [(n,) for (n,) in conn.execute("SELECT number FROM chapters") if n not in keep]
            conn.executemany("DELETE FROM chapters WHERE number = ?", gone)
        conn.executemany(
            "INSERT OR REPLACE INTO chapters VALUES (?, ?, ?, ?, ?, ?)",
            [(r.number, r.path, r.sha256, r.chars, r.paragraphs, r.registered_at or utc_now()) for r in records],
        )
