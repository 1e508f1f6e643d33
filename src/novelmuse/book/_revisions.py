"""The revision store: no author file is replaced without keeping the bytes it had.

Every command that replaces or removes an author's file — a chapter, a fine outline, a card, a plan file,
rules.txt — goes through `replace_author_file`:

1. the file's current bytes are checked against what the caller last saw (`expect_sha256`; FILE_CHANGED_ON_DISK
   otherwise: an edit made meanwhile is never overwritten) and stored content-addressed as
   ``.muse/revisions/objects/<aa>/<sha256>``;
2. a `file_revisions` row (which command, when, the old and the new sha256) is committed as ``pending``,
   together with whatever the caller records in the same transaction (a decision row);
3. the file is replaced atomically (temp file + fsync + rename; a new file by hard link, never over one that
   appeared meanwhile);
4. the row becomes ``done``.

A kill at any moment leaves either the old file and, after `settle_revisions`, no row (nor the caller's rows:
they reference the revision and are removed with it), or the new file with its row. `muse revisions N` lists a
file's versions and `muse revisions restore N REV` puts one back — itself a replacement that keeps the current
bytes first.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import InputError
from ..iopoints import point
from ..store import new_id, transaction, utc_now
from ..text import sha256_hex
from ._files import atomic_write_bytes
from ._userfile import check_write_target

RevisionKind = Literal["chapter", "outline", "card", "plan", "rules"]

#: Called inside the transaction that records a replacement, with the revision's id (e.g. to insert a decision).
AlsoRecord = Callable[[sqlite3.Connection, str], None]


@dataclass(frozen=True)
class FileRevision:
    """One replacement of an author's file: the bytes it had (`old_sha256`, None: no file) and those written."""

    id: str
    path: str  # relative to the book root
    kind: RevisionKind
    chapter: int | None
    old_sha256: str | None
    old_size: int | None
    new_sha256: str | None
    command: str
    note: str
    created_at: str

    @classmethod
    def of(cls, row: sqlite3.Row) -> FileRevision:
        return cls(
            id=row["id"],
            path=row["path"],
            kind=row["kind"],
            chapter=row["chapter"],
            old_sha256=row["old_sha256"],
            old_size=row["old_size"],
            new_sha256=row["new_sha256"],
            command=row["command"],
            note=row["note"],
            created_at=row["created_at"],
        )


def _objects(state_dir: Path) -> Path:
    return state_dir / "revisions" / "objects"


def object_path(state_dir: Path, sha256: str) -> Path:
    """Where the bytes with this sha256 are kept: ``.muse/revisions/objects/<aa>/<sha256>``."""
    return _objects(state_dir) / sha256[:2] / sha256


def _relative(root: Path, path: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        raise ValueError(f"{path} is not inside the book {root}") from None


def _current(path: Path) -> bytes | None:
    """The file's bytes now (None when there is none)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(
            "FILE_READ", f"cannot read ({exc.strerror or exc})", str(path), "check the file's permissions, then rerun"
        ) from exc


def _short(sha: str) -> str:
    return f"{sha[:12]}…" if sha else "no file"


def keep_bytes(state_dir: Path, data: bytes) -> str:
    """Store `data` content-addressed (idempotent: an intact object is not written again); its sha256."""
    sha = sha256_hex(data)
    target = object_path(state_dir, sha)
    try:
        if target.is_file() and not target.is_symlink() and sha256_hex(target.read_bytes()) == sha:
            return sha
    except OSError:
        pass
    atomic_write_bytes(target, data, mode=0o600)
    return sha


def replace_author_file(
    conn: sqlite3.Connection,
    root: Path,
    state_dir: Path,
    path: Path,
    data: bytes | None,
    *,
    expect_sha256: str,
    kind: RevisionKind,
    command: str,
    chapter: int | None = None,
    note: str = "",
    also: AlsoRecord | None = None,
) -> FileRevision:
    """Replace the author's file `path` by `data` (None: remove it), keeping the bytes it had (see the module
    docstring). `expect_sha256` is the sha256 the caller last saw ("": the file must not exist); anything else on
    disk is FILE_CHANGED_ON_DISK (exit 2) and nothing is written. `also` records the caller's rows in the
    revision's transaction. Returns the revision."""
    check_write_target(path)
    rel = _relative(root, path)
    old = _current(path)
    old_sha = sha256_hex(old) if old is not None else ""
    if old_sha != expect_sha256:
        raise InputError(
            "FILE_CHANGED_ON_DISK",
            f"{rel} changed on disk since novelmuse read it (expected {_short(expect_sha256)},"
            f" found {_short(old_sha)})",
            str(path),
            "your file was kept: look at it, then retry",
        )
    if old is not None:
        keep_bytes(state_dir, old)
    revision = FileRevision(
        id=new_id("R"),
        path=rel,
        kind=kind,
        chapter=chapter,
        old_sha256=old_sha or None,
        old_size=len(old) if old is not None else None,
        new_sha256=sha256_hex(data) if data is not None else None,
        command=command,
        note=note,
        created_at=utc_now(),
    )
    with transaction(conn):
        conn.execute(
            "INSERT INTO file_revisions (id, path, kind, chapter, old_sha256, old_size, new_sha256, command, note,"
            " state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
            (
                revision.id,
                rel,
                kind,
                chapter,
                revision.old_sha256,
                revision.old_size,
                revision.new_sha256,
                command,
                note,
                revision.created_at,
            ),
        )
        if also is not None:
            also(conn, revision.id)
    try:
        if data is None:
            point("unlink", path)
            path.unlink()
        else:
            atomic_write_bytes(path, data, expect_sha256=expect_sha256)
    except (InputError, OSError):
        _forget(conn, revision.id)  # the file was not replaced: no row may claim it was
        raise
    with transaction(conn):
        conn.execute("UPDATE file_revisions SET state = 'done' WHERE id = ?", (revision.id,))
    return revision


def _forget(conn: sqlite3.Connection, revision_id: str) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM file_revisions WHERE id = ? AND state = 'pending'", (revision_id,))


def settle_revisions(conn: sqlite3.Connection, root: Path) -> int:
    """Finish what a killed replacement left `pending`: done when the file has the new bytes, removed (with the
    rows that reference it) otherwise. Returns how many rows were settled. Cheap when nothing is pending."""
    rows = conn.execute("SELECT id, path, new_sha256 FROM file_revisions WHERE state = 'pending'").fetchall()
    for row in rows:
        now = _current(root / row["path"])
        replaced = (now is None) if row["new_sha256"] is None else (now is not None and sha256_hex(now) == row[2])
        with transaction(conn):
            if replaced:
                conn.execute("UPDATE file_revisions SET state = 'done' WHERE id = ?", (row["id"],))
            else:
                conn.execute("DELETE FROM file_revisions WHERE id = ?", (row["id"],))
    return len(rows)


def file_revisions(conn: sqlite3.Connection, path: str) -> list[FileRevision]:
    """Every finished replacement of the file at `path` (relative to the book root), oldest first."""
    rows = conn.execute(
        "SELECT * FROM file_revisions WHERE path = ? AND state = 'done' ORDER BY id", (path,)
    ).fetchall()
    return [FileRevision.of(r) for r in rows]


def find_revision(conn: sqlite3.Connection, revision_id: str) -> FileRevision | None:
    """The finished revision with this id (or None)."""
    row = conn.execute("SELECT * FROM file_revisions WHERE id = ? AND state = 'done'", (revision_id,)).fetchone()
    return FileRevision.of(row) if row is not None else None


def kept_bytes(state_dir: Path, sha256: str, where: str) -> bytes:
    """The kept bytes with this sha256, verified; REVISION_MISSING (exit 2) when the object is gone or damaged."""
    path = object_path(state_dir, sha256)
    try:
        data = path.read_bytes()
    except OSError:
        data = None
    if data is None or sha256_hex(data) != sha256:
        raise InputError(
            "REVISION_MISSING",
            f"the kept bytes {sha256[:12]}… are missing or damaged",
            where,
            f"the revision store {_objects(path.parents[2])} was changed by hand; restore it from a backup",
        )
    return data
