"""The findings cache of `muse check` (table `check_findings`): encoded findings per (rules key, chapter sha256).

The store only keeps the bytes; `rules._check` encodes, keys and validates them. Everything here is derived: a
missing or dropped row means the chapter is scanned again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping

from ._db import transaction

#: Up to this many chapters are looked up by name (`IN (…)`); more, and the key's rows are read and filtered.
_LOOKUP_BY_NAME = 200


def cached_findings(conn: sqlite3.Connection, rules_key: str, shas: Collection[str]) -> dict[str, bytes]:
    """The stored findings of the chapter texts `shas` under `rules_key` (sha256 → bytes; absent: not cached)."""
    if not shas:
        return {}
    if len(shas) <= _LOOKUP_BY_NAME:
        marks = ",".join("?" * len(shas))
        rows = conn.execute(
            f"SELECT chapter_sha256, findings FROM check_findings WHERE rules_key = ? AND chapter_sha256 IN ({marks})",
            (rules_key, *shas),
        )
        return dict(rows)
    wanted = shas if isinstance(shas, (set, frozenset)) else set(shas)
    rows = conn.execute("SELECT chapter_sha256, findings FROM check_findings WHERE rules_key = ?", (rules_key,))
    return {sha: blob for sha, blob in rows if sha in wanted}


def store_findings(
    conn: sqlite3.Connection, rules_key: str, found: Mapping[str, bytes], *, present: Collection[str] | None = None
) -> None:
    """Store `found` (chapter sha256 → encoded findings) under `rules_key`, in one transaction, and drop the rows of
    every other rules key; with `present` (the sha256 of every chapter file of the book), also the rows of this
    key for chapter texts the book no longer has."""
    with transaction(conn):
        conn.execute("DELETE FROM check_findings WHERE rules_key != ?", (rules_key,))
        if present is not None:
            keep = present if isinstance(present, (set, frozenset)) else set(present)
            stale = [
                (rules_key, sha)
                for (sha,) in conn.execute(
                    "SELECT chapter_sha256 FROM check_findings WHERE rules_key = ?", (rules_key,)
                )
                if sha not in keep and sha not in found
            ]
            conn.executemany("DELETE FROM check_findings WHERE rules_key = ? AND chapter_sha256 = ?", stale)
        conn.executemany(
            "INSERT OR REPLACE INTO check_findings (rules_key, chapter_sha256, findings) VALUES (?, ?, ?)",
            [(rules_key, sha, blob) for sha, blob in found.items()],
        )
