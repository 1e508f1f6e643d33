"""SQLite connection: WAL mode, foreign keys, append-only named migrations applied on open."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from ..errors import InputError
from ..iopoints import active as iopoints_active
from ..iopoints import point
from ..text import sha256_hex


def utc_now() -> str:
    """The current UTC time as ISO-8601 with microseconds (sortable as text)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _migrations() -> list[tuple[str, str]]:
    folder = resources.files("novelmuse.store") / "migrations"
    items = [(p.name.removesuffix(".sql"), p.read_text(encoding="utf-8")) for p in folder.iterdir()]
    return sorted((name, sql) for name, sql in items if not name.startswith("_") and name[:4].isdigit())


def _make_private_dir(folder: Path) -> None:
    """Create the database's directory 0700 whatever the umask (a directory that exists is left as it is)."""
    if folder.is_dir():
        return
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)  # mkdir's mode is masked by the umask


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database at `path` and bring its schema up to date.

    Migrations are files ``store/migrations/NNNN_name.sql`` applied in name order, each once, in its
    own transaction, recorded with its sha256. A migration that was applied and later edited is an
    error: migrations are append-only, a schema change is a new file.
    """
    try:
        _make_private_dir(path.parent)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise InputError(
            "STORE_OPEN", f"cannot open the database ({exc})", str(path), "check the directory is writable"
        ) from exc
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        _migrate(conn, path)
    except sqlite3.OperationalError as exc:
        conn.close()
        raise InputError(
            "STORE_OPEN",
            f"cannot use the database ({exc})",
            str(path),
            "check that the book directory is writable and the file is a novelmuse database",
        ) from exc
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InputError(
            "STORE_CORRUPT", f"not a usable SQLite database ({exc})", str(path), "move the file aside and rerun"
        ) from exc
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {row[0]: row[1] for row in conn.execute("SELECT name, sha256 FROM _migrations")}
    for name, sql in _migrations():
        digest = sha256_hex(sql)
        if name in applied:
            if applied[name] != digest:
                raise InputError(
                    "STORE_MIGRATION_CHANGED",
                    f"migration {name} was edited after it was applied",
                    str(path),
                    "migrations are append-only: restore the file and add a new migration",
                )
            continue
        with transaction(conn):
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue  # another process applied it while we waited for the lock
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO _migrations VALUES (?, ?, ?)", (name, digest, utc_now()))


def _statements(sql: str) -> Iterator[str]:
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                yield buf
            buf = ""
    if buf.strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()):
        yield buf


#: SQLite's result codes for a store that cannot be written (not a bug in a statement): busy or locked too long,
#: read-only, I/O error, corrupt, disk full, cannot open, not a database, no permission.
_ENVIRONMENT_CODES = frozenset({3, 5, 6, 8, 10, 11, 13, 14, 26})


class StoreWriteError(InputError):
    """A change to the store could not be made (STORE_WRITE, or STORE_CORRUPT): disk full, an I/O error, a
    read-only or locked database. The transaction was rolled back: nothing of it was written."""

    read_only: bool = False  # the database or its directory is read-only (SQLITE_READONLY)


def store_write_error(conn: sqlite3.Connection, exc: sqlite3.Error) -> StoreWriteError | None:
    """The StoreWriteError for an SQLite error that the environment caused, or None for any other (a bug)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None or code & 0xFF not in _ENVIRONMENT_CODES:
        return None
    where = _path_of(conn)
    if code & 0xFF in (11, 26):
        return StoreWriteError(
            "STORE_CORRUPT", f"the database is damaged ({exc})", where, "move the file aside and rerun"
        )
    error = StoreWriteError(
        "STORE_WRITE",
        f"cannot write the database ({exc}); the change was rolled back",
        where,
        "check that the disk has space and the book directory is writable, then rerun",
    )
    error.read_only = code & 0xFF == 8
    return error


def _path_of(conn: sqlite3.Connection) -> str:
    try:
        return next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "") or ":memory:"
    except sqlite3.Error:
        return ""


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction (BEGIN IMMEDIATE): all or nothing, even if the process is killed midway.

    An error the environment causes (disk full, I/O error, read-only, locked) rolls it back and is
    StoreWriteError (exit 2); its commit is an I/O point (`iopoints`) for the crash and fault harness.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            point("commit", _path_of(conn) if iopoints_active() else "")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with suppress(sqlite3.Error):  # a failed COMMIT leaves the transaction open: end it
                    conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        mapped = store_write_error(conn, exc)
        if mapped is None:
            raise
        raise mapped from exc
