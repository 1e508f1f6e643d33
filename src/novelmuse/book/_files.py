"""Safe file writes: atomic replace, never over a file that changed on disk since it was read."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..errors import InputError
from ..text import sha256_hex
from ._userfile import check_write_target


def atomic_write_bytes(path: Path, data: bytes, *, expect_sha256: str | None = None, mode: int = 0o644) -> None:
    """Write `data` to `path` atomically (temp file + fsync + rename).

    With `expect_sha256`, the write is refused (FILE_CHANGED_ON_DISK) unless the file's current
    bytes still hash to it — an author's manual edit is never overwritten. A crash at any moment
    leaves either the old file or the new one, never a mix. A path inside a book is never written through a
    link that leads outside it (BOOK_LINK_OUTSIDE).
    """
    check_write_target(path)
    if expect_sha256 is not None:
        try:
            current = sha256_hex(path.read_bytes())
        except FileNotFoundError:
            current = ""
        if current != expect_sha256:
            raise InputError(
                "FILE_CHANGED_ON_DISK",
                "the file changed on disk since novelmuse read it",
                str(path),
                "run `muse sync` and retry; your edit was kept",
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(
            "FILE_WRITE", f"cannot write ({exc.strerror})", str(path), "check the directory is writable"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str, *, expect_sha256: str | None = None) -> None:
    """`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"), expect_sha256=expect_sha256)
