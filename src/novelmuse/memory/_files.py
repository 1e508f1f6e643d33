"""Which author files changed, without reading the unchanged ones (``memory_files``).

A file's sha256 is taken from the table when its size, mtime, ctime and inode all equal those recorded when it
was hashed, and it was last changed at least `RACY_NS` before that hashing (a write within the same clock tick
as the hashing could otherwise go unseen: git's "racy clean" problem — such a file is simply hashed again).
ctime cannot be set by a user (`touch -d`, `cp -p` and tar restore mtime, not ctime), so a file replaced by
another of the same size and mtime is still seen as changed. Everything else is read and hashed, and recorded.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from ..store import transaction
from ..text import sha256_hex

RACY_NS = 2_000_000_000

_Row = tuple[int, int, int, int, str, int]  # size, mtime_ns, ctime_ns, ino, sha256, checked_ns


class FileHashes:
    """The sha256 of files under `root`, read and hashed only when their stat says they may have changed."""

    def __init__(self, conn: sqlite3.Connection, root: Path):
        self._conn = conn
        self._root = root
        self._prefix = f"{root}{os.sep}"
        self._rows: dict[str, _Row] = {
            r[0]: (r[1], r[2], r[3], r[4], r[5], r[6]) for r in conn.execute("SELECT * FROM memory_files")
        }
        self._new: dict[str, _Row] = {}

    def _key(self, path: Path) -> str:
        text = str(path)  # string slicing: Path.relative_to cost more than the stat itself
        rel = text[len(self._prefix) :] if text.startswith(self._prefix) else path.relative_to(self._root).as_posix()
        return rel.replace(os.sep, "/")

    def known(self, path: Path) -> str | None:
        """The recorded sha256 of `path` if its stat shows it unchanged since it was hashed, else None."""
        row = self._rows.get(self._key(path))
        if row is None:
            return None
        try:
            st = path.stat()
        except OSError:
            return None
        size, mtime, ctime, ino, sha, checked = row
        unchanged = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) == (size, mtime, ctime, ino)
        return sha if unchanged and max(mtime, ctime) + RACY_NS <= checked else None

    def record(self, path: Path, st: os.stat_result, sha256: str) -> None:
        """Remember `sha256` for `path` as it was when `st` was taken (before its bytes were read)."""
        row = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, sha256, time.time_ns())
        self._rows[self._key(path)] = self._new[self._key(path)] = row

    def sha256(self, path: Path) -> str:
        """The file's sha256: from the table when unchanged, otherwise read, hashed and recorded."""
        sha = self.known(path)
        if sha is not None:
            return sha
        st = path.stat()
        sha = sha256_hex(path.read_bytes())
        self.record(path, st, sha)
        return sha

    def save(self) -> None:
        """Write the rows of the files hashed since the last save (one transaction)."""
        if not self._new:
            return
        with transaction(self._conn):
            self._conn.executemany(
                "INSERT OR REPLACE INTO memory_files VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(k, *row) for k, row in self._new.items()],
            )
        self._new.clear()
