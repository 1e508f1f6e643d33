"""Content-addressed manifests: ``.muse/manifests/<sha256>.json`` (0600 in a 0700 folder) and the store.

The file holds exactly the manifest's canonical JSON, so its bytes hash to its name; the store keeps the same
body (`context_manifests`) and one row per build (`context_builds`). `verify_context` rebuilds a chapter's
context and compares it with the newest build recorded for that chapter and arm, field by field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..book import Book, atomic_write_bytes
from ..errors import InputError
from ..roles.writer import WriterContext
from ..store import new_id, transaction, utc_now
from ..text import sha256_hex
from ._manifest import Arm, Manifest

if TYPE_CHECKING:
    from ._build import ContextBuild

MAX_DIFFERENCES = 50


def manifests_dir(book: Book) -> Path:
    """``.muse/manifests`` of the book."""
    return book.state_dir / "manifests"


def private_dir(path: Path) -> None:
    """Create `path` (and parents) as a private folder (0700)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def store_manifest(book: Book, build: ContextBuild) -> Path:
    """Keep the build's manifest: the content-addressed file and the store row (idempotent); the file."""
    body = build.manifest_body
    sha = build.manifest_sha256
    folder = manifests_dir(book)
    private_dir(folder)
    path = folder / f"{sha}.json"
    if not (path.is_file() and not path.is_symlink() and sha256_hex(path.read_bytes()) == sha):
        atomic_write_bytes(path, body.encode("utf-8"), mode=0o600)
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT OR IGNORE INTO context_manifests VALUES (?, ?, ?, ?, ?, ?)",
            (sha, build.chapter, build.arm, build.manifest.outline.sha256, body, utc_now()),
        )
    return path


def save_build(book: Book, build: ContextBuild) -> Path:
    """Store the manifest (file + store row) and record the build; returns the manifest's file."""
    path = store_manifest(book, build)
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO context_builds VALUES (?, ?, ?, ?, ?)",
            (new_id("CB"), build.chapter, build.arm, build.manifest_sha256, utc_now()),
        )
    return path


class Difference(BaseModel):
    """One field where the rebuilt manifest differs from the stored one (JSON path, both values)."""

    path: str
    stored: Any = None
    rebuilt: Any = None


class VerifyDoc(BaseModel):
    """`muse context verify --json`: whether a rebuild gives the stored manifest byte for byte."""

    schema_version: int = 1
    ok: bool
    chapter: int
    arm: Arm
    stored_sha256: str
    rebuilt_sha256: str
    file_ok: bool  # the file exists, hashes to its name and equals the store's body
    differences: list[Difference]
    more_differences: int = 0


def _diff(a: Any, b: Any, path: str, out: list[Difference]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            _diff(a.get(key), b.get(key), f"{path}.{key}" if path else str(key), out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(Difference(path=path, stored=a, rebuilt=b))


def verify_context(
    book: Book, chapter: int, arm: Arm = "C", *, progress: Callable[[int, int], None] | None = None
) -> VerifyDoc:
    """Rebuild chapter `chapter`'s context for `arm` and compare it with the newest recorded build
    (CONTEXT_NOT_BUILT, exit 2, when there is none)."""
    row = book.db.execute(
        "SELECT b.manifest_sha256, m.body FROM context_builds b"
        " JOIN context_manifests m ON m.sha256 = b.manifest_sha256"
        " WHERE b.chapter = ? AND b.arm = ? ORDER BY b.id DESC LIMIT 1",
        (chapter, arm),
    ).fetchone()
    if row is None:
        raise InputError(
            "CONTEXT_NOT_BUILT",
            f"no context of chapter {chapter} (arm {arm}) was built yet",
            str(manifests_dir(book)),
            f"run `muse context {chapter} --arm {arm}` first",
        )
    stored_sha, body = str(row[0]), str(row[1])
    path = manifests_dir(book) / f"{stored_sha}.json"
    file_ok = (
        sha256_hex(body) == stored_sha
        and path.is_file()
        and not path.is_symlink()
        and path.read_bytes() == body.encode("utf-8")
    )
    from ._build import build_context  # the context builder: loaded by what builds

    rebuilt = build_context(book, chapter, arm=arm, progress=progress)
    differences: list[Difference] = []
    if rebuilt.manifest_sha256 != stored_sha:
        _diff(json.loads(body), json.loads(rebuilt.manifest_body), "", differences)
    return VerifyDoc(
        ok=file_ok and rebuilt.manifest_sha256 == stored_sha,
        chapter=chapter,
        arm=arm,
        stored_sha256=stored_sha,
        rebuilt_sha256=rebuilt.manifest_sha256,
        file_ok=file_ok,
        differences=differences[:MAX_DIFFERENCES],
        more_differences=max(0, len(differences) - MAX_DIFFERENCES),
    )


class ContextDoc(BaseModel):
    """`muse context N --json`: the manifest (with its content address and file) and the WriterContext."""

    schema_version: int = 1
    ok: bool = True
    chapter: int
    arm: Arm
    manifest_sha256: str
    manifest_path: str  # relative to the book root
    manifest: Manifest
    context: WriterContext


def build_and_save(
    book: Book, chapter: int, arm: Arm = "C", *, progress: Callable[[int, int], None] | None = None
) -> ContextDoc:
    """Build chapter `chapter`'s context for `arm`, store its manifest, and return both (`muse context N`)."""
    from ._build import build_context  # the context builder: loaded by what builds

    build = build_context(book, chapter, arm=arm, progress=progress)
    path = save_build(book, build)
    return ContextDoc(
        chapter=chapter,
        arm=arm,
        manifest_sha256=build.manifest_sha256,
        manifest_path=str(path.relative_to(book.root)),
        manifest=build.manifest,
        context=build.context,
    )


def stored_manifest(book: Book, sha256: str) -> Manifest | None:
    """The stored manifest `sha256` (None when the store has none, or its body no longer hashes to it)."""
    row = book.db.execute("SELECT body FROM context_manifests WHERE sha256 = ?", (sha256,)).fetchone()
    if row is None or sha256_hex(str(row[0])) != sha256:
        return None
    return Manifest.model_validate_json(str(row[0]))
