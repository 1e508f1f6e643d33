"""Reading files that come from outside, safely: the one place for file-level input errors (issue 18 items 3, 6).

Every file a user names or an author writes (the novel to import, book.toml, the user config, rules.txt,
chapters, cards, outlines, scripts, judge candidates) is read by `read_user_file`, which

- reads only a **regular file**: a directory, FIFO, socket or device (``/dev/zero``) is refused before a
  byte is read — the file is opened non-blocking, so a FIFO without a writer cannot hang the command;
- reads at most a **size cap** (`novelmuse.limits`), checked before reading and again while reading (a file
  that grows meanwhile cannot exhaust memory);
- follows no **symbolic link out of a book**: a path lexically inside a book (below a directory holding
  book.toml) must resolve inside that same book. A linked ``chapters/0002.md`` or ``rules.txt`` that points
  elsewhere (``~/.ssh/…``) is refused (BOOK_LINK_OUTSIDE), so it is never printed or sent to a model. Links
  that stay inside the book are followed. The same rule guards writes (`check_write_target`).
- maps every ``OSError`` (missing, permission, name too long, link loop, not a regular file) to one
  `InputError` whose code is ``<KIND>_READ`` (the message says why) or ``<KIND>_TOO_LARGE``; and
  `parsing_user_file` maps what parsers raise on hostile content (``RecursionError`` from deep nesting,
  ``MemoryError``, ``ValueError``) to ``<KIND>_SYNTAX``-style codes, so no user file ends in error[INTERNAL].

Residual race (documented, accepted): the path is resolved, checked, then opened with ``O_NOFOLLOW``; the last
component cannot be swapped for a link in between, a directory above it could (by someone who can already write
inside the book).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal, overload

from ..errors import InputError
from ..limits import MAX_FILE_BYTES

BOOK_FILE = "book.toml"
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n:,} bytes" if n < 10 * 1024 * 1024 else f"{n / (1024 * 1024):,.0f} MiB"


def book_root_of(path: Path) -> Path | None:
    """The book `path` lies in: the nearest directory above it holding book.toml, found lexically (``..`` is
    resolved by name, links are not followed), or None when the path is in no book."""
    here = Path(os.path.abspath(path))
    for parent in here.parents:
        if (parent / BOOK_FILE).is_file():
            return parent
    return None


def _inside(real: str, root: Path) -> bool:
    real_root = os.path.realpath(root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def link_outside_error(path: Path, real: str, root: Path, *, action: str) -> InputError:
    """BOOK_LINK_OUTSIDE: `path` (inside the book at `root`) resolves to `real`, outside the book."""
    return InputError(
        "BOOK_LINK_OUTSIDE",
        f"refused to {action} a symbolic link that leaves the book (it leads to {real}; book {root})",
        str(path),
        "replace the link with the file or directory itself (copy it into the book)",
    )


#: The book's own directories: none may be a link that leaves the book (checked when a book is opened). The
#: vault (.muse/vault) refuses any link at all itself, when it is used (VAULT_UNSAFE_PATH).
BOOK_DIRS = (".muse", ".muse/revisions", "chapters", "outlines", "cards", "plan")
STATE_DIR_MODE = 0o700


def check_book_dirs(root: Path) -> None:
    """Refuse (BOOK_LINK_OUTSIDE) a book whose ``.muse``, ``.muse/revisions``, ``chapters``, ``outlines``,
    ``cards`` or ``plan`` is a link leading outside it — before anything is read or written there — and make
    ``.muse`` private again (0700) if someone loosened it."""
    for rel in BOOK_DIRS:
        p = root / rel
        if os.path.lexists(p) and not _inside(real := os.path.realpath(p), root):
            raise link_outside_error(p, real, root, action="use")
    state = root / ".muse"
    with contextlib.suppress(OSError):  # a read-only book stays as it is; nothing is written into it anyway
        if stat.S_IMODE(state.stat().st_mode) & 0o077:
            state.chmod(STATE_DIR_MODE)


def os_error(
    exc: OSError | ValueError, path: Path, what: str, kind: str, *, missing_code: str | None = None
) -> InputError:
    """The InputError for an OSError (or a ValueError such as a NUL in the name) met while opening or reading
    `path`, the `what` of a command (e.g. "rules file"): code ``<kind>_READ`` saying why, or `missing_code`
    (default ``<kind>_READ`` too) for a file that does not exist."""
    where = str(path)
    if isinstance(exc, ValueError):
        return InputError(f"{kind}_READ", f"cannot read the {what} (invalid file name: {exc})", where, "fix the path")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) or isinstance(exc, FileNotFoundError):
        return InputError(missing_code or f"{kind}_READ", f"no such {what}", where, "check the path")
    reason = {
        errno.ENAMETOOLONG: "the file name is too long",
        errno.ELOOP: "too many levels of symbolic links",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "it is a directory, not a regular file",
        errno.ENXIO: "it is a socket or device, not a regular file",
    }.get(exc.errno or 0, exc.strerror or str(exc))
    return InputError(f"{kind}_READ", f"cannot read the {what} ({reason})", where, "pass a readable regular file")


@overload
def read_user_file(
    path: Path,
    *,
    what: str,
    kind: str,
    max_bytes: int = ...,
    book_root: Path | None = ...,
    missing_ok: Literal[False] = ...,
    missing_code: str | None = ...,
    contained: bool = ...,
) -> bytes: ...


@overload
def read_user_file(
    path: Path,
    *,
    what: str,
    kind: str,
    max_bytes: int = ...,
    book_root: Path | None = ...,
    missing_ok: Literal[True],
    missing_code: str | None = ...,
    contained: bool = ...,
) -> bytes | None: ...


def read_user_file(
    path: Path,
    *,
    what: str,
    kind: str,
    max_bytes: int = MAX_FILE_BYTES,
    book_root: Path | None = None,
    missing_ok: bool = False,
    missing_code: str | None = None,
    contained: bool = True,
) -> bytes | None:
    """The bytes of the regular file at `path` (see the module docstring for every refusal).

    `what` names the file in messages ("rules file"), `kind` prefixes the error codes ("RULES" → RULES_READ,
    RULES_TOO_LARGE; a missing file is `missing_code`, default RULES_READ too, or None with `missing_ok`).
    `book_root` is the book the file belongs to, when the caller knows it; otherwise the book (if any) is found
    above the path. `contained=False` lets a link lead out of the book (book.toml: a shared configuration).
    """
    root = None if not contained else book_root if book_root is not None else book_root_of(path)
    try:
        real = os.path.realpath(path)
        if root is not None and not _inside(real, root):
            raise link_outside_error(path, real, root, action="read")
        fd = os.open(real, _FLAGS)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise os_error(
            FileNotFoundError(errno.ENOENT, "no such file"), path, what, kind, missing_code=missing_code
        ) from None
    except (OSError, ValueError) as exc:
        raise os_error(exc, path, what, kind) from exc
    try:
        return _read_capped(fd, path, what, kind, max_bytes)
    finally:
        os.close(fd)


def read_user_files(
    paths: Sequence[Path], *, what: str, kind: str, book_root: Path, max_bytes: int = MAX_FILE_BYTES
) -> list[bytes]:
    """`read_user_file` of many files of the book at `book_root` (a check's chapters), each with the same
    refusals and errors, at a fraction of the cost: each directory is resolved, checked to lie inside the book
    and opened once, and every file in it is opened relative to that descriptor without following a link
    (``openat`` with ``O_NOFOLLOW``) — so swapping a directory above a file for a link after that cannot
    redirect the read (stronger than resolving every path anew). A file that cannot be opened so (a link, a
    missing file, a FIFO…) goes through `read_user_file`, which resolves and checks it or raises its error."""
    dirs: dict[Path, int | None] = {}
    out: list[bytes] = []
    try:
        for path in paths:
            parent = path.parent
            if parent not in dirs:
                dirs[parent] = _open_book_dir(parent, book_root)
            dir_fd = dirs[parent]
            try:
                if dir_fd is None:
                    raise OSError(errno.ENOTSUP, "no directory descriptor")
                fd = os.open(path.name, _FLAGS, dir_fd=dir_fd)
            except OSError:
                out.append(read_user_file(path, what=what, kind=kind, max_bytes=max_bytes, book_root=book_root))
                continue
            try:
                out.append(_read_capped(fd, path, what, kind, max_bytes))
            finally:
                os.close(fd)
    finally:
        for dir_fd in dirs.values():
            if dir_fd is not None:
                os.close(dir_fd)
    return out


def _open_book_dir(directory: Path, book_root: Path) -> int | None:
    """A descriptor of `directory` when it resolves inside the book (checked, then opened by its resolved path
    without following a link, so what was checked is what is opened); None otherwise, or where ``openat`` is
    missing — the caller then reads file by file (`read_user_file`)."""
    if os.open not in os.supports_dir_fd:
        return None
    try:
        real = os.path.realpath(directory)
        if not _inside(real, book_root):
            return None
        return os.open(real, os.O_RDONLY | _DIR_FLAGS)
    except (OSError, ValueError):
        return None


def _read_capped(fd: int, path: Path, what: str, kind: str, max_bytes: int) -> bytes:
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                f"{kind}_READ",
                f"the {what} is {_file_kind(st.st_mode)}, not a regular file",
                str(path),
                "pass a regular file",
            )
        if st.st_size > max_bytes:
            raise too_large(path, what, kind, st.st_size, max_bytes)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise too_large(path, what, kind, total, max_bytes)
        return b"".join(chunks)
    except OSError as exc:
        raise os_error(exc, path, what, kind) from exc


def too_large(path: Path, what: str, kind: str, size: int, max_bytes: int) -> InputError:
    """``<kind>_TOO_LARGE``: the file is over its cap (caps live in `novelmuse.limits`)."""
    shown = f"at least {_size(size)}" if size == max_bytes + 1 else _size(size)
    return InputError(
        f"{kind}_TOO_LARGE",
        f"the {what} is {shown}, over the cap of {_size(max_bytes)}",
        str(path),
        "split it or pass a smaller file (see docs/reference/files.md#limits)",
    )


@contextlib.contextmanager
def parsing_user_file(code: str, where: str, what: str) -> Iterator[None]:
    """Turn what a parser raises on hostile content into `code` (e.g. CONFIG_SYNTAX) naming `where`:
    RecursionError (nesting thousands deep), MemoryError, and ValueError (e.g. an integer with too many
    digits). InputErrors pass through unchanged."""
    try:
        yield
    except (InputError, UnicodeError):  # a decoding error is the caller's to name (with its byte offset)
        raise
    except RecursionError as exc:
        raise InputError(code, f"the {what} is nested too deeply to read", where, "flatten the structure") from exc
    except MemoryError as exc:
        raise InputError(code, f"the {what} is too large to parse", where, "pass a smaller file") from exc
    except ValueError as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(code, f"the {what} cannot be read ({first})", where, "fix the file") from exc


def listed_files(
    folder: Path, wanted: Callable[[str], bool], kind: str, *, book_root: Path | None = None
) -> list[Path]:
    """The files of `folder` whose names `wanted` accepts, sorted by name, for a listing of a book's directory
    (chapters, outlines, cards); directories, and links to them, are ignored. Nothing is opened (a FIFO would
    block): anything but a regular file — a FIFO, socket, device or broken link — is refused as ``<kind>_READ``,
    and, given `book_root`, a link that leads outside the book (BOOK_LINK_OUTSIDE) — for listings whose files
    may be served from a cache without being read again. One directory read: a regular file's type comes with
    its directory entry, so only links and special files cost a stat."""
    with os.scandir(folder) as listing:
        entries = sorted((e for e in listing if wanted(e.name)), key=lambda e: e.name)
    out: list[Path] = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            continue
        path = folder / entry.name
        if not entry.is_file(follow_symlinks=False):
            if path.is_dir():
                continue
            _require_regular(path, kind, book_root)
        out.append(path)
    return out


def _require_regular(path: Path, kind: str, book_root: Path | None) -> None:
    if book_root is not None and path.is_symlink() and not _inside(real := os.path.realpath(path), book_root):
        raise link_outside_error(path, real, book_root, action="read")
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise os_error(exc, path, "file", kind) from exc
    if not stat.S_ISREG(mode):
        raise InputError(f"{kind}_READ", "not a regular file (a FIFO, socket or device)", str(path), "remove it")


def check_write_target(path: Path) -> None:
    """Refuse (BOOK_LINK_OUTSIDE) to write `path` when it lies in a book but its directory, or the file itself
    when it is a link, resolves outside that book (``chapters/``, ``.muse``, ``.muse/revisions`` linked
    elsewhere). A path in no book is not restricted."""
    root = book_root_of(path)
    if root is None:
        return
    target = Path(os.path.abspath(path))
    real = os.path.realpath(target if target.is_symlink() else target.parent)
    if not _inside(real, root):
        raise link_outside_error(path, real, root, action="write through")
