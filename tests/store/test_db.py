"""The SQLite store: WAL, migrations applied once, edited migrations refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from novelmuse.errors import InputError
from novelmuse.store import ChapterRecord, connect, new_id, register_chapters, registered_chapters


def test_connect_migrates_once_in_wal(tmp_path: Path) -> None:
    db = tmp_path / ".muse" / "muse.db"
    conn = connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names[0] == "0001_core"
    conn.close()
    conn = connect(db)  # reopening applies nothing new
    assert [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")] == names


def test_edited_migration_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "muse.db"
    connect(db).close()
    raw = sqlite3.connect(db)
    raw.execute("UPDATE _migrations SET sha256 = 'x' WHERE name = '0001_core'")
    raw.commit()
    raw.close()
    with pytest.raises(InputError) as info:
        connect(db)
    assert info.value.code == "STORE_MIGRATION_CHANGED"


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "muse.db"
    db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError) as info:
        connect(db)
    assert info.value.code == "STORE_CORRUPT" and "not a database" in info.value.what


def test_a_failing_migration_leaves_nothing_half_applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each migration runs in its own transaction, in name order: one that fails midway applies none of its
    statements and is not recorded, the ones before it stay; once fixed it applies on the next open."""
    import novelmuse.store._db as db_module

    good = ("0001_a", "CREATE TABLE a (x INTEGER);\n-- a comment\n")
    broken = ("0002_b", "CREATE TABLE b (x INTEGER);\nINSERT INTO no_such_table VALUES (1);\n")
    monkeypatch.setattr(db_module, "_migrations", lambda: [good, broken])
    path = tmp_path / "muse.db"
    with pytest.raises(InputError) as info:
        connect(path)
    assert info.value.code == "STORE_OPEN" and "no_such_table" in info.value.what
    raw = sqlite3.connect(path)
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "a" in tables and "b" not in tables
    assert [r[0] for r in raw.execute("SELECT name FROM _migrations")] == ["0001_a"]
    raw.close()
    fixed = ("0002_b", "CREATE TABLE b (x INTEGER);\n")
    monkeypatch.setattr(db_module, "_migrations", lambda: [good, fixed])
    conn = connect(path)
    assert [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")] == ["0001_a", "0002_b"]


def test_chapter_registry_roundtrip(tmp_path: Path) -> None:
    conn = connect(tmp_path / "muse.db")
    recs = [ChapterRecord(n, f"chapters/{n:04d}.md", "ab" * 32, 100 * n, n, "") for n in (1, 2, 3)]
    register_chapters(conn, recs, remove_others=True)
    register_chapters(conn, recs[:2], remove_others=True)
    assert sorted(registered_chapters(conn)) == [1, 2]


def test_ids_sort_in_creation_order() -> None:
    ids = [new_id("r_") for _ in range(1000)]
    assert ids == sorted(ids) and len(set(ids)) == 1000
