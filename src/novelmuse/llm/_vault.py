"""The raw vault `.muse/vault/`: exact model requests and responses, content-addressed, private.

Layout::

    vault/               0700
      leases/            0700  one lease per attempt: <call_id>-<attempt>.lease (JSON lines; .done when complete)
      raw/ab/            0700  objects named by their sha256: raw/<first two hex>/<sha256>  (files 0600)

Protocol of one attempt (seed 003: 先写非敏感 lease，再写 0700/0600 raw):

1. the lease is created exclusively and holds only call id, attempt, run id, pid and time;
2. before each object is created, an ``{"intent": sha}`` line is appended to the lease;
3. the object is written whole to a private temporary name created with ``O_CREAT|O_EXCL|O_NOFOLLOW``
   relative to an already-opened directory (never through a path that could contain a planted
   symlink), ``fchmod``-ed to 0600 and its mode checked after writing (umask cannot loosen it), then
   hard-linked to its content address (a link never replaces an existing name, so an object is never
   seen half-written, even by another process storing the same bytes) and the temporary name removed;
4. a ``{"done": time}`` line completes the lease, which is then renamed ``*.done``.

Vault files found readable by others (a loosened mode, a restored backup) are made 0600 again when they are read
or stored again, and every file is swept by a recovery pass (`RecoveryReport.modes_tightened`).

A lease without ``done`` whose holder is gone (pid not alive, or its run no longer running) belongs
to a crashed attempt: `recover` removes the objects it intended (unless a completed lease also
references them — objects are shared by content) and renames the lease to ``*.recovered``.

Names are validated against ``^[0-9a-f]{64}$`` (objects) and ``^[A-Za-z0-9_]+-\\d+$`` (leases), so
``..``, absolute names and separators are refused before any file system call. Secrets never enter the
vault because they are never part of a request (keys live only in provider clients).
Raw files are not fsync-ed: the vault survives process crashes (what recovery handles), and the
receipts in SQLite hold the hashes that later verify any raw file.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FailedClosed
from ..iopoints import point
from ..processes import pid_alive
from ..store import utc_now
from ..text import sha256_hex

_OBJECT_NAME = re.compile(r"^[0-9a-f]{64}$")
_LEASE_NAME = re.compile(r"^[A-Za-z0-9_]+-\d+$")
_TMP_COUNTER = itertools.count()
_DIR_MODE = 0o700
_FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class VaultError(FailedClosed):
    """The vault refused an operation (unsafe path, wrong mode, corrupt object, I/O error)."""


def _unsafe(what: str, where: str) -> VaultError:
    return VaultError(
        "VAULT_UNSAFE_PATH", what, where, "remove the offending file or link inside .muse/vault and rerun"
    )


def check_object_name(name: str) -> str:
    """Return `name` if it is a content address (64 lowercase hex); refuse anything else."""
    if not isinstance(name, str) or not _OBJECT_NAME.fullmatch(name):
        raise _unsafe(f"not a vault object name: {name!r}", ".muse/vault")
    return name


def _check_component(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name or os.sep in name:
        raise _unsafe(f"refused path component {name!r}", ".muse/vault")


def _open_dir(parent_fd: int | None, name: str, where: str, *, create: bool = True) -> int:
    """Open (creating 0700 if missing) directory `name` under `parent_fd`, refusing symlinks."""
    if parent_fd is not None:
        _check_component(name)
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            raise VaultError("VAULT_IO", "no such vault directory", where) from None
        try:
            os.mkdir(name, _DIR_MODE, dir_fd=parent_fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise VaultError("VAULT_IO", f"cannot create a vault directory ({exc.strerror})", where) from exc
        fd = _open_existing_dir(parent_fd, name, where, flags)
    except OSError as exc:
        fd = _refuse_dir(exc, where)
    _check_dir_mode(fd, where)
    return fd


def _open_existing_dir(parent_fd: int | None, name: str, where: str, flags: int) -> int:
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except OSError as exc:
        return _refuse_dir(exc, where)


def _refuse_dir(exc: OSError, where: str) -> int:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        raise _unsafe("a symlink or non-directory stands where a vault directory belongs", where) from exc
    raise VaultError("VAULT_IO", f"cannot open a vault directory ({exc.strerror})", where) from exc


def _check_dir_mode(fd: int, where: str) -> None:
    """Make sure `fd` is a directory with mode 0700 (tightening it if someone loosened it)."""
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise _unsafe("not a directory", where)
    if stat.S_IMODE(st.st_mode) != _DIR_MODE:
        os.fchmod(fd, _DIR_MODE)
        if stat.S_IMODE(os.fstat(fd).st_mode) != _DIR_MODE:
            os.close(fd)
            raise VaultError("VAULT_MODE", "cannot make a vault directory private (0700)", where)


def _write_exclusive(dir_fd: int, name: str, data: bytes, where: str, *, keep_open: bool = False) -> int | None:
    """Create `name` with exactly `data`, mode 0600; None if an object of that name already exists.

    With `keep_open` the file descriptor is returned open (for appending), else it is closed and 0 returned.
    """
    _check_component(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | (os.O_APPEND if keep_open else 0)
    try:
        point("write", where)
        fd = os.open(name, flags, _FILE_MODE, dir_fd=dir_fd)
    except FileExistsError:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise _unsafe("a symlink or special file stands where a vault object belongs", where) from None
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _unsafe("a symlink stands where a vault file belongs", where) from exc
        raise VaultError("VAULT_IO", f"cannot write to the vault ({exc.strerror})", where) from exc
    try:
        os.fchmod(fd, _FILE_MODE)
        _write_all(fd, data)
        if stat.S_IMODE(os.fstat(fd).st_mode) != _FILE_MODE:
            raise VaultError("VAULT_MODE", "a vault file is not private (0600) after writing", where)
    except OSError as exc:
        os.close(fd)
        raise VaultError("VAULT_IO", f"cannot write to the vault ({exc.strerror})", where) from exc
    except BaseException:
        os.close(fd)
        raise
    if keep_open:
        return fd
    os.close(fd)
    return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_at(dir_fd: int, name: str, where: str) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _unsafe("a symlink stands where a vault file belongs", where) from exc
        raise VaultError("VAULT_IO", f"cannot read from the vault ({exc.strerror})", where) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _unsafe("not a regular file", where)
        if stat.S_IMODE(mode) & 0o077:  # loosened by someone since it was written: private again
            os.fchmod(fd, _FILE_MODE)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _tighten_files(dir_fd: int) -> int:
    """Make every regular file in the directory private (0600) again; links are not followed. Returns how many
    were looser."""
    tightened = 0
    for name in os.listdir(dir_fd):
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or not stat.S_IMODE(st.st_mode) & 0o077:
                continue
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
        except OSError:
            continue
        try:
            os.fchmod(fd, _FILE_MODE)
            tightened += 1
        finally:
            os.close(fd)
    return tightened


@dataclass
class RecoveryReport:
    """What one recovery pass found and did (counts only)."""

    leases: int = 0  # lease files scanned
    completed: int = 0
    active: int = 0  # open leases whose holder is still alive
    crashed: int = 0  # open leases of dead holders, now recovered
    orphans_removed: int = 0  # raw objects removed
    modes_tightened: int = 0  # vault files found readable by others, made 0600 again
    recovered_calls: list[str] = field(default_factory=list)  # call ids (not sensitive)
    interrupted_runs: list[str] = field(default_factory=list)  # runs whose process died
    interrupted_attempts: int = 0  # pending receipts of dead runs closed as interrupted (cost unknown)

    def to_json(self) -> dict[str, Any]:
        """The shape of `muse vault recover --json`."""
        return {
            "leases": self.leases,
            "completed": self.completed,
            "active": self.active,
            "crashed": self.crashed,
            "orphans_removed": self.orphans_removed,
            "modes_tightened": self.modes_tightened,
            "recovered_calls": self.recovered_calls,
            "interrupted_runs": self.interrupted_runs,
            "interrupted_attempts": self.interrupted_attempts,
        }


class Lease:
    """An open attempt lease: objects are `put` under it, then it is `complete`d (or `close`d unfinished)."""

    def __init__(self, vault: Vault, name: str, fd: int):
        self._vault = vault
        self._fd: int | None = fd  # the lease file, open for appending until completed or closed
        self.name = name
        self.objects: list[str] = []
        self.done = False

    def _append(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            raise VaultError("VAULT_LEASE_CLOSED", f"lease {self.name} is closed", str(self._vault.root))
        try:
            point("write", self.name)
            _write_all(self._fd, (json.dumps(record, sort_keys=True) + "\n").encode())
        except OSError as exc:
            raise VaultError("VAULT_IO", f"cannot append to a lease ({exc.strerror})", self.name) from exc

    def put(self, data: bytes) -> str:
        """Store `data` under its sha256 (recording the intent in the lease first); return the sha256."""
        digest = sha256_hex(data)
        self._append({"intent": digest})
        self._vault._store(digest, data)
        self.objects.append(digest)
        return digest

    def complete(self) -> None:
        """Mark the lease completed (a ``done`` line, then renamed ``*.done``): its objects are kept for good."""
        if not self.done:
            self._append({"done": utc_now()})
            self.done = True
            self.close()
            self._vault._finish(self.name)
        self.close()

    def close(self) -> None:
        """Release the lease file; an uncompleted lease stays open on disk for recovery to judge."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Vault:
    """The raw vault of one book (`.muse/vault`)."""

    def __init__(self, root: Path):
        self.root = root
        self._fds: tuple[int, int, int] | None = None
        self._subs: dict[str, int] = {}  # raw/<2 hex> directories opened so far
        self._lock = threading.Lock()

    def _open_handles(self) -> tuple[int, int, int]:
        parent = self.root.parent
        try:
            if not parent.is_dir():  # .muse: private whatever the umask
                parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
                parent.chmod(_DIR_MODE)
            pfd = os.open(parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise VaultError("VAULT_IO", f"cannot open {parent} ({exc.strerror})", str(parent)) from exc
        opened: list[int] = []
        try:
            opened.append(_open_dir(pfd, self.root.name, str(self.root)))
            opened.append(_open_dir(opened[0], "leases", str(self.root / "leases")))
            opened.append(_open_dir(opened[0], "raw", str(self.root / "raw")))
        except BaseException:
            for fd in opened:
                os.close(fd)
            raise
        finally:
            os.close(pfd)
        return opened[0], opened[1], opened[2]

    def _handles(self, *, recheck: bool = False) -> tuple[int, int, int]:
        """The vault's three directories, opened once (symlinks refused) and kept open.

        Holding verified directory descriptors means later file operations are relative to them and a
        symlink planted in the path afterwards cannot redirect them. `recheck` (at every new lease)
        re-verifies the modes and reopens when the directories were removed meanwhile.
        """
        with self._lock:
            if self._fds is not None and recheck:
                if any(os.fstat(fd).st_nlink == 0 for fd in self._fds) or self.root.is_symlink():
                    self._close_locked()
                else:
                    for fd, sub in zip(self._fds, ("", "leases", "raw"), strict=True):
                        _check_dir_mode(fd, str(self.root / sub))
            if self._fds is None:
                self._fds = self._open_handles()
            return self._fds

    @contextmanager
    def _dirs(self) -> Iterator[tuple[int, int, int]]:
        yield self._handles()

    def _close_locked(self) -> None:
        for fd in self._subs.values():
            os.close(fd)
        self._subs.clear()
        if self._fds is not None:
            for fd in self._fds:
                os.close(fd)
            self._fds = None

    def close(self) -> None:
        """Release the directory descriptors (the session does this when it closes)."""
        with self._lock:
            self._close_locked()

    def _store(self, digest: str, data: bytes) -> None:
        """Publish an object atomically: written whole under a private temporary name, then hard-linked to
        its content address (link never replaces an existing name), so no reader — another process storing
        the same bytes at the same moment included — ever sees a partial object under its final name."""
        check_object_name(digest)
        where = f"{self.root}/raw/{digest[:2]}/{digest}"
        sub = self._subdir(digest[:2], where)
        try:
            st = os.stat(digest, dir_fd=sub, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is None:
            tmp = f"{digest}.{os.getpid()}.{next(_TMP_COUNTER)}.tmp"
            try:
                _write_exclusive(sub, tmp, data, where)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=sub)
                raise
            try:
                point("rename", where)
                os.link(tmp, digest, src_dir_fd=sub, dst_dir_fd=sub, follow_symlinks=False)
                return
            except FileExistsError:
                pass  # stored meanwhile by someone else: verify it below
            except OSError as exc:
                raise VaultError("VAULT_IO", f"cannot publish a vault object ({exc.strerror})", where) from exc
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=sub)
            st = os.stat(digest, dir_fd=sub, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise _unsafe("a symlink or special file stands where a vault object belongs", where)
        if sha256_hex(_read_at(sub, digest, where)) != digest:
            raise VaultError("VAULT_CORRUPT", "a vault object does not match its name", where, "move the file aside")

    def _subdir(self, prefix: str, where: str) -> int:
        """The directory raw/<prefix>, opened once (symlink refused) and kept with the other handles."""
        _root, _leases, raw = self._handles()
        with self._lock:
            fd = self._subs.get(prefix)
            if fd is None:
                fd = self._subs[prefix] = _open_dir(raw, prefix, where)
            return fd

    def lease(self, call_id: str, attempt: int, run_id: str) -> Lease:
        """Write a new lease for one attempt (exclusively: a lease is never reused)."""
        name = f"{call_id}-{attempt}"
        if not _LEASE_NAME.fullmatch(name):
            raise _unsafe(f"refused lease name {name!r}", str(self.root))
        record = {"call_id": call_id, "attempt": attempt, "run_id": run_id, "pid": os.getpid(), "at": utc_now()}
        data = (json.dumps(record, sort_keys=True) + "\n").encode()
        _root, leases, _raw = self._handles(recheck=True)
        fd = _write_exclusive(leases, name + ".lease", data, str(self.root / "leases"), keep_open=True)
        if fd is None:
            raise VaultError("VAULT_LEASE_EXISTS", f"lease {name} already exists", str(self.root / "leases"))
        return Lease(self, name, fd)

    def read(self, digest: str) -> bytes:
        """The object stored under `digest` (a content address); refuses unsafe names and links."""
        check_object_name(digest)
        where = f"{self.root}/raw/{digest[:2]}/{digest}"
        with self._dirs() as (_root, _leases, raw):
            sub = _open_dir(raw, digest[:2], where, create=False)
            try:
                return _read_at(sub, digest, where)
            finally:
                os.close(sub)

    def has(self, digest: str) -> bool:
        """Whether an object with this content address exists."""
        try:
            self.read(digest)
        except VaultError as exc:
            if exc.code == "VAULT_IO":
                return False
            raise
        return True

    def _records(self, leases_fd: int, entry: str) -> list[dict[str, Any]]:
        try:
            text = _read_at(leases_fd, entry, str(self.root / "leases" / entry)).decode()
        except (VaultError, UnicodeDecodeError):
            return []
        records = []
        for line in text.splitlines():
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of a crashed writer
            if isinstance(value, dict):
                records.append(value)
        return records

    def _finish(self, name: str) -> None:
        """Rename a completed lease to ``*.done`` so recovery need not read it again."""
        _root, leases, _raw = self._handles()
        try:
            point("rename", name)
            os.rename(name + ".lease", name + ".done", src_dir_fd=leases, dst_dir_fd=leases)
        except OSError as exc:
            raise VaultError("VAULT_IO", f"cannot complete lease {name} ({exc.strerror})", str(self.root)) from exc

    def recover(self, run_running: Callable[[str], bool]) -> RecoveryReport:
        """Remove the orphans of crashed attempts (see the module docstring); return what was done.

        Only open leases (``*.lease``) are read; completed ones (``*.done``) are read only when a crashed
        lease exists, to keep objects they share with it. So a pass over a large vault stays cheap.
        """
        report = RecoveryReport()
        if not self.root.exists() and not self.root.is_symlink():
            return report
        _root, leases_fd, raw_fd = self._handles(recheck=True)

        def valid(entry: str, suffix: str) -> bool:
            return entry.endswith(suffix) and bool(_LEASE_NAME.fullmatch(entry.removesuffix(suffix)))

        report.modes_tightened = _tighten_files(leases_fd) + sum(
            _tighten_files(sub) for sub in self._raw_subdirs(raw_fd)
        )
        names = sorted(os.listdir(leases_fd))
        done_names = [n for n in names if valid(n, ".done")]
        report.completed = len(done_names)
        report.leases = len(done_names)
        crashed: list[tuple[str, list[dict[str, Any]]]] = []
        keep: set[str] = set()
        for entry in (n for n in names if valid(n, ".lease")):
            report.leases += 1
            records = self._records(leases_fd, entry)
            intents = {str(r["intent"]) for r in records if "intent" in r}
            header = records[0] if records else {}
            if any("done" in r for r in records):  # completed, but the rename to .done did not happen
                report.completed += 1
                keep |= intents
                continue
            pid, run_id = header.get("pid"), header.get("run_id")
            pid_ok = isinstance(pid, int) and pid_alive(pid)
            if pid_ok and isinstance(run_id, str) and run_running(run_id):
                report.active += 1
                keep |= intents
                continue
            crashed.append((entry, records))
            if not pid_ok and isinstance(run_id, str) and run_id not in report.interrupted_runs:
                report.interrupted_runs.append(run_id)
        if not crashed:
            return report
        for entry in done_names:
            keep |= {str(r["intent"]) for r in self._records(leases_fd, entry) if "intent" in r}
        for entry, records in crashed:
            for digest in sorted({str(r["intent"]) for r in records if "intent" in r} - keep):
                if _OBJECT_NAME.fullmatch(digest) and self._remove_object(raw_fd, digest):
                    report.orphans_removed += 1
            point("rename", entry)
            os.rename(entry, entry.removesuffix(".lease") + ".recovered", src_dir_fd=leases_fd, dst_dir_fd=leases_fd)
            report.crashed += 1
            header = records[0] if records else {}
            report.recovered_calls.append(str(header.get("call_id", entry.removesuffix(".lease"))))
        return report

    def _raw_subdirs(self, raw_fd: int) -> Iterator[int]:
        """Each raw/<2 hex> directory, opened without following links (closed after use)."""
        for name in sorted(os.listdir(raw_fd)):
            if len(name) != 2 or not all(c in "0123456789abcdef" for c in name):
                continue
            try:
                fd = _open_dir(raw_fd, name, f"{self.root}/raw/{name}", create=False)
            except VaultError:
                continue  # an unsafe entry is refused when used
            try:
                yield fd
            finally:
                os.close(fd)

    def _remove_object(self, raw_fd: int, digest: str) -> bool:
        """Remove an orphan object and any temporary file a crashed writer left for it."""
        try:
            sub = os.open(digest[:2], os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=raw_fd)
        except OSError:
            return False
        removed = False
        try:
            for name in os.listdir(sub):
                if name == digest or (name.startswith(digest + ".") and name.endswith(".tmp")):
                    with contextlib.suppress(FileNotFoundError):
                        st = os.stat(name, dir_fd=sub, follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                            point("unlink", name)
                            os.unlink(name, dir_fd=sub)
                            removed = removed or name == digest
        finally:
            os.close(sub)
        return removed
