"""Safe file writes: atomic replace, never over a file that changed on disk since it was read; temp debris of a
killed writer is swept by the next command."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
from pathlib import Path

from ..errors import InputError
from ..iopoints import point
from ..processes import pid_alive
from ..text import sha256_hex
from ._userfile import check_write_target

#: A temporary file of `atomic_write_bytes`: ``.<name>.<pid>.<8 random>.tmp`` beside its target. The writer's pid
#: in the name lets the next command tell a killed writer's debris from a live writer's file.
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[a-z0-9_]{8}\.tmp$")
#: Where a book's atomic writes go (below the book root): swept of dead writers' temp files when the book opens.
SWEPT_DIRS = ("", "chapters", "outlines", "cards", ".muse/revisions", ".muse/manifests")


def atomic_write_bytes(path: Path, data: bytes, *, expect_sha256: str | None = None, mode: int = 0o644) -> None:
    """Write `data` to `path` atomically (temp file + fsync + rename + fsync of the directory).

    With `expect_sha256`, the write is refused (FILE_CHANGED_ON_DISK) unless the file's current
    bytes still hash to it — an author's manual edit is never overwritten. ``expect_sha256=""`` means the file
    must not exist: it is then published by a hard link, which never replaces a file created meanwhile. A crash
    at any moment leaves either the old file or the new one, never a mix (a killed writer's temp file is removed
    by the next command: `sweep_temp_files`). A path inside a book is never written through a link that leads outside it
    (BOOK_LINK_OUTSIDE). An I/O error (disk full, EIO) is FILE_WRITE naming the file, and the old file stays.
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
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        point("write", path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            point("fsync", path)
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        point("rename", path)
        if expect_sha256 == "":
            try:
                os.link(tmp, path)  # atomic, and never over a file that appeared since the check above
            except FileExistsError:
                raise InputError(
                    "FILE_CHANGED_ON_DISK",
                    "the file was created on disk since novelmuse looked",
                    str(path),
                    "your file was kept; compare it with what novelmuse wanted to write, then retry",
                ) from None
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
        tmp = None
        _fsync_dir(path.parent)
    except OSError as exc:
        raise InputError(
            "FILE_WRITE",
            f"cannot write ({exc.strerror or exc})",
            str(path),
            "check that the disk has space and the directory is writable, then rerun",
        ) from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a power loss right after it keeps the new name)."""
    point("fsync", folder)
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):  # a file system that cannot sync a directory
            raise
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str, *, expect_sha256: str | None = None) -> None:
    """`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"), expect_sha256=expect_sha256)


def sweep_temp_files(root: Path) -> list[Path]:
    """Remove the temp files that killed writers of `atomic_write_bytes` left in the book at `root` (those of a
    live process are left alone); returns what was removed. Never fails: a read-only book keeps its debris."""
    removed: list[Path] = []
    for rel in SWEPT_DIRS:
        folder = root / rel
        try:
            names = [n for n in os.listdir(folder) if n.startswith(".") and n.endswith(".tmp")]
        except OSError:
            continue
        for name in names:
            m = _TEMP_NAME.match(name)
            if m is None or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                (folder / name).unlink()
                removed.append(folder / name)
    return removed
