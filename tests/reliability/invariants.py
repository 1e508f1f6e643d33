"""What must hold of a book after any command, a crash or an I/O fault (issue 18 item 7).

`check_book` returns the violations (empty: all hold):

* the database passes `PRAGMA integrity_check` and `PRAGMA foreign_key_check`;
* every completed receipt's request and response are in the vault, and every vault object matches its name;
* no run is left `running` and no receipt `pending` (checked once recovery has run: `settled=True`);
* no temp debris: no `.*.tmp` of an atomic write in the book's folders, none in the vault's object folders;
* the author's files are unchanged (`before`, a `snapshot`), except those the command's job is to write
  (`may_write`), which must each be absent or whole (`whole`: the bytes a clean run writes).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

from novelmuse.book._files import SWEPT_DIRS

#: What belongs to novelmuse, not to the author (everything else in a book directory is the author's).
_DERIVED = (".muse",)


def snapshot(root: Path) -> dict[str, bytes]:
    """The author's files of the book at `root` (relative path → bytes); `.muse` and temp files excluded."""
    out: dict[str, bytes] = {}
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] in _DERIVED or path.name.endswith(".tmp") or not path.is_file():
            continue
        out[rel] = path.read_bytes()
    return out


def check_book(
    root: Path,
    *,
    settled: bool = True,
    before: Mapping[str, bytes] | None = None,
    may_write: Callable[[str], bool] = lambda rel: False,
    whole: Mapping[str, bytes] | None = None,
) -> list[str]:
    """The invariants the book at `root` violates (see the module docstring)."""
    problems: list[str] = []
    db_path = root / ".muse" / "muse.db"
    if db_path.exists():
        problems += _check_db(db_path, root / ".muse" / "vault", settled=settled)
    problems += _check_debris(root)
    if before is not None:
        problems += _check_author_files(root, before, may_write, whole or {})
    return problems


def _check_db(db_path: Path, vault: Path, *, settled: bool) -> list[str]:
    problems: list[str] = []
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if integrity != ["ok"]:
            return [f"integrity_check: {integrity[:3]}"]
        if conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
            problems.append("foreign_key_check: a dangling reference")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if settled and "runs" in tables:
            running = conn.execute("SELECT COUNT(*) FROM runs WHERE status = 'running'").fetchone()[0]
            if running:
                problems.append(f"{running} run(s) left running")
        if "receipts" in tables:
            if settled:
                pending = conn.execute("SELECT COUNT(*) FROM receipts WHERE outcome = 'pending'").fetchone()[0]
                if pending:
                    problems.append(f"{pending} receipt(s) left pending")
            rows = conn.execute(
                "SELECT id, request_sha256, response_sha256 FROM receipts WHERE outcome IN ('ok', 'failed')"
            )
            for rid, request, response in rows:
                for digest in (request, response):
                    if digest and not _object_ok(vault, digest):
                        problems.append(f"receipt {rid}: vault object {digest[:12]}… missing or damaged")
    finally:
        conn.close()
    raw = vault / "raw"
    if raw.is_dir():
        for obj in raw.glob("*/*"):
            if len(obj.name) == 64 and hashlib.sha256(obj.read_bytes()).hexdigest() != obj.name:
                problems.append(f"vault object {obj.name[:12]}… does not match its name")
    return problems


def _object_ok(vault: Path, digest: str) -> bool:
    path = vault / "raw" / digest[:2] / digest
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == digest


def _check_debris(root: Path) -> list[str]:
    found = [root / rel / name for rel in SWEPT_DIRS if (root / rel).is_dir() for name in _temp_names(root / rel)]
    raw = root / ".muse" / "vault" / "raw"
    if raw.is_dir():
        found += [p for p in raw.glob("*/*.tmp")]
    return [f"temp debris: {p.relative_to(root)}" for p in found]


def _temp_names(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def _check_author_files(
    root: Path, before: Mapping[str, bytes], may_write: Callable[[str], bool], whole: Mapping[str, bytes]
) -> list[str]:
    problems: list[str] = []
    now = snapshot(root)
    for rel in sorted(set(before) | set(now)):
        old, new = before.get(rel), now.get(rel)
        if old == new:
            continue
        if not may_write(rel):
            problems.append(f"author file {rel} " + ("removed" if new is None else "changed"))
        elif new is not None and rel in whole and new != whole[rel]:
            problems.append(f"{rel} is neither the old file nor the new one (a partial write)")
    return problems
