"""Content-addressed texts (migration 0009): the exact texts that stored quote offsets index into."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ..text import sha256_hex
from ._db import utc_now


def put_texts(conn: sqlite3.Connection, texts: Iterable[str]) -> list[str]:
    """Store each text under the sha256 of its UTF-8 (once; a known text is not written again) and return
    the hashes in order. Runs in the caller's transaction, so a text is stored with the rows that cite it."""
    now = utc_now()
    shas: list[str] = []
    for text in texts:
        sha = sha256_hex(text)
        conn.execute("INSERT OR IGNORE INTO texts (sha256, text, created_at) VALUES (?, ?, ?)", (sha, text, now))
        shas.append(sha)
    return shas


def get_texts(conn: sqlite3.Connection, shas: Iterable[str]) -> dict[str, str]:
    """The stored texts among `shas` (sha256 → text), each verified against its hash: a row that does not
    hash to its key is left out (its offsets could not be trusted), never returned."""
    wanted = sorted(set(shas))
    out: dict[str, str] = {}
    for i in range(0, len(wanted), 500):  # SQLite's bound-parameter limit
        chunk = wanted[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for sha, text in conn.execute(f"SELECT sha256, text FROM texts WHERE sha256 IN ({marks})", chunk):
            if sha256_hex(text) == sha:
                out[sha] = text
    return out
