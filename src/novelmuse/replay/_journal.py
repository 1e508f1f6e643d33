"""The one issuer (seed 003: writer_gate 是唯一签发者) and the only code that opens ``.muse/gates/journal.jsonl``.

`GateIssuer.issue` takes a GateInput and the artefacts it binds, never a report: it checks that every binding
agrees with the gate input and still re-hashes, evaluates the gate itself (pure, from the pinned spec),
appends the **report** entry, and only when the report says ``passed`` appends a **receipt** entry that binds
it. A report or receipt computed anywhere else cannot enter the journal (拒绝自算 JSON).

One append is a compare-and-swap on the head:

1. outside the lock, read the head — the last line, which must end with a newline, match its own sha256 and
   carry a valid signature of the book's signer (a torn or tampered head is never extended) — check that the
   store's index (a witness) knows no entry the journal lacks or holds differently, and sign the new entry
   with ``prev_sha256`` = sha256 of that head line;
2. take an exclusive ``flock`` on ``journal.lock`` (every issuer, in every process, takes it) and swap only if
   the journal is still the same file, exactly as long as it was, and still ends with that head line; if not
   (another issuer appended meanwhile), do step 1 again under the lock, where nothing moves — once, no loop;
3. write the line with one ``write`` in append mode and check it landed right at the end (a writer that
   ignored the lock, or a short write on a full disk, is detected and never papered over);
4. release the lock, then ``fsync`` the file (and the directory when the file was created) before returning.

Signing outside the lock keeps the lock held for a compare and a write only. The fsync after the lock is a
group commit: fsync flushes every byte written before it, so an entry is durable when its ``issue`` returns,
together with all entries before it, while concurrent issuers do not queue behind each other's disk flushes.
A crash before the fsync can only lose entries whose issue never returned (power loss; a killed process loses
nothing — its write is already in the kernel).

Readers (`read_journal`) take a shared lock and see whole lines only. The store index is brought up to date
by `sync_index` after every issue, under its own lock (``index.lock``, so issuers queue there rather than in
SQLite's busy backoff); it indexes only entries whose hash, link, signature and body it checked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..book import Book
from ..errors import FailedClosed, InputError, MuseError
from ..store import connect, transaction, utc_now
from ..text import canonical_json, sha256_hex
from ._chain import GENESIS, Entry, EntryKind, LineProblem, decode_entry, encode_entry_json
from ._gates import GateName, GateReport, evaluate_gate, report_sha256
from ._index import IndexRow, index_head, insert_rows, row_of
from ._input import GateInput
from ._keys import PublicKey, SigningKey, key_path, load_signing_key
from ._receipt import (
    ArtefactReader,
    ModelsEvidence,
    ReceiptBindings,
    ReceiptBody,
    Rehasher,
    ReportBody,
    binding_problems,
    book_artefacts,
)
from ._spec import GateSpec, spec_named

_JOURNAL = "journal.jsonl"
_LOCK = "journal.lock"
_INDEX_LOCK = "index.lock"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_HEAD_CHUNK = 1 << 16


def _gates_dir(book: Book) -> Path:
    return book.state_dir / "gates"


def journal_location(book: Book) -> str:
    """The journal's path relative to the book, for messages (never a handle)."""
    return str((_gates_dir(book) / _JOURNAL).relative_to(book.root))


@contextlib.contextmanager
def _gates_dir_fd(book: Book, *, create: bool) -> Iterator[int | None]:
    """The gates directory, opened without following a symlink (None when it does not exist and create is off)."""
    folder = _gates_dir(book)
    if create:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o755)
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        if create:
            raise
        yield None
        return
    except OSError as exc:
        raise FailedClosed(
            "GATE_JOURNAL_UNSAFE",
            f"the gates directory cannot be opened safely ({exc.strerror})",
            str(folder),
            "remove whatever stands at .muse/gates (a symlink or a file) and rerun",
        ) from exc
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(dir_fd: int, mode: int, name: str = _LOCK) -> Iterator[None]:
    """Hold flock `mode` on the lock file `name` of the gates directory (released when the file is closed)."""
    try:
        lock = os.open(name, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dir_fd)
    except PermissionError:  # a read-only book: readers go on without the lock (nothing can be written anyway)
        if mode == fcntl.LOCK_SH or name == _INDEX_LOCK:
            yield
            return
        raise
    try:
        fcntl.flock(lock, mode)
        yield
    finally:
        os.close(lock)  # closing releases the flock


def _open_journal(dir_fd: int, flags: int, where: str) -> int:
    try:
        fd = os.open(_JOURNAL, flags | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FailedClosed(
            "GATE_JOURNAL_UNSAFE",
            f"the journal cannot be opened safely ({exc.strerror})",
            where,
            "the journal must be a regular file, not a symlink",
        ) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FailedClosed(
            "GATE_JOURNAL_UNSAFE", "the journal is not a regular file", where, "restore the journal file"
        )
    return fd


# ── reading ──────────────────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class JournalFile:
    """The journal's complete lines (from `start`), and the offset of a trailing line with no newline, if any."""

    location: str
    exists: bool
    lines: list[tuple[int, bytes]]  # (byte offset, line without its newline)
    torn_offset: int | None
    size: int


def read_journal(book: Book, start: int = 0) -> JournalFile:
    """Read the journal from byte `start` under a shared lock (a missing journal reads as empty)."""
    where = journal_location(book)
    with _gates_dir_fd(book, create=False) as dir_fd:
        if dir_fd is None:
            return JournalFile(where, False, [], None, 0)
        with _locked(dir_fd, fcntl.LOCK_SH):
            try:
                fd = _open_journal(dir_fd, os.O_RDONLY, where)
            except FileNotFoundError:
                return JournalFile(where, False, [], None, 0)
            try:
                size = os.fstat(fd).st_size
                data = os.pread(fd, max(size - start, 0), start) if size > start else b""
            finally:
                os.close(fd)
    lines = _split_lines(data, start)
    complete = (lines[-1][0] - start + len(lines[-1][1]) + 1) if lines else 0
    return JournalFile(where, True, lines, start + complete if complete < len(data) else None, size)


def configured_signer(book: Book) -> PublicKey:
    """The book's `[gate] signer` (GATE_SIGNER_MISSING when book.toml has none)."""
    if book.config.gate.signer is None:
        raise InputError(
            "GATE_SIGNER_MISSING",
            "book.toml has no [gate] signer, so gate entries cannot be checked",
            str(book.root / "book.toml"),
            _signer_fix(book),
        )
    return PublicKey.parse(book.config.gate.signer)


def _signer_fix(book: Book) -> str:
    """How to add the signer: the existing key's line when you have a key, else how to make one."""
    path = key_path(book.config)
    if path.is_file():
        try:
            public = load_signing_key(path).public.text
        except MuseError:
            return f'add `[gate] signer = "ed25519:…"` with the public key of your key at {path} to book.toml'
        return f'add this line under [gate] in book.toml (your key at {path}): signer = "{public}"'
    return 'run `muse gate keygen` and add the `[gate] signer = "ed25519:…"` line it prints'


def parse_body(entry: Entry) -> ReportBody | ReceiptBody | str:
    """`entry`'s body as a report or receipt body, or why it is not one."""
    model: type[ReportBody] | type[ReceiptBody] = ReportBody if entry.kind == "report" else ReceiptBody
    try:
        return model.model_validate_json(entry.body_json)
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


# ── the index (derived; only checked entries) ────────────────────────────────────────────────────────────


def _divergence(book: Book, head: IndexRow) -> FailedClosed:
    return FailedClosed(
        "GATE_JOURNAL_DIVERGED",
        f"the journal no longer holds entry seq {head.seq} as the store's index recorded it "
        "(truncated, replaced or rewritten)",
        journal_location(book),
        "restore the journal from a backup; `muse gate verify` names every entry that differs",
    )


def _split_lines(data: bytes, start: int) -> list[tuple[int, bytes]]:
    """(offset, line) of every complete line of `data` (read from byte `start`); a partial last line is left out."""
    out: list[tuple[int, bytes]] = []
    pos = 0
    while (end := data.find(b"\n", pos)) >= 0:
        out.append((start + pos, data[pos:end]))
        pos = end + 1
    return out


def _new_rows(
    lines: list[tuple[int, bytes]], head: IndexRow | None, signer: PublicKey, book: Book
) -> tuple[list[IndexRow], FailedClosed | None]:
    """Rows for the checked entries after the index's `head` (`lines` start at the head's own line), and the
    problem that stopped the walk, if any: the journal no longer holding `head`, or an entry that fails."""
    if head is not None and (not lines or lines[0][0] != head.offset or sha256_hex(lines[0][1]) != head.line_sha256):
        return [], _divergence(book, head)
    prev_seq, prev_sha = (head.seq, head.line_sha256) if head is not None else (0, GENESIS)
    rows: list[IndexRow] = []
    for offset, line in lines[1:] if head is not None else lines:
        entry = decode_entry(line, offset)
        why = _entry_problem(entry, prev_seq, prev_sha, signer)
        if why is not None:
            return rows, FailedClosed(
                "GATE_JOURNAL_CORRUPT",
                f"entry seq {prev_seq + 1}: {why}",
                journal_location(book),
                "run `muse gate verify` to see every problem; nothing is issued onto a broken chain",
            )
        assert isinstance(entry, Entry)
        rows.append(row_of(entry))
        prev_seq, prev_sha = entry.seq, entry.line_sha256
    return rows, None


def sync_index(book: Book, conn: sqlite3.Connection, signer: PublicKey) -> int:
    """Index the journal's entries after the index's head, checking each one's hash, link, signature and body;
    returns how many were added. Raises (after indexing the good prefix) on the first entry that fails."""
    with _gates_dir_fd(book, create=False) as dir_fd:
        if dir_fd is None:
            return 0
        with _locked(dir_fd, fcntl.LOCK_EX, _INDEX_LOCK), transaction(conn):  # syncs queue here, not on SQLite
            head = index_head(conn)
            journal = read_journal(book, head.offset if head is not None else 0)
            rows, problem = _new_rows(journal.lines, head, signer, book)
            insert_rows(conn, rows)
    if problem is not None:
        raise problem
    return len(rows)


def _entry_problem(entry: Entry | LineProblem, prev_seq: int, prev_sha: str, signer: PublicKey) -> str | None:
    if isinstance(entry, LineProblem):
        return entry.what
    if entry.seq != prev_seq + 1:
        return f"has seq {entry.seq} after seq {prev_seq}"
    if entry.prev_sha256 != prev_sha:
        return "does not chain to the entry before it"
    if not entry.signed_by(signer):
        return "its signature does not verify with the book's [gate] signer"
    body = parse_body(entry)
    return body if isinstance(body, str) else None


# ── the issuer ───────────────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class EntryRef:
    """Where an issued entry is: its seq and payload sha256."""

    seq: int
    sha256: str


@dataclass(frozen=True)
class Issued:
    """What one `issue` wrote: the report entry always, the receipt entry only for a passed report."""

    report: GateReport
    report_entry: EntryRef
    receipt_entry: EntryRef | None


class GateIssuer:
    """The one issuer of a book's gate journal (see the module doc). Use `GateIssuer.open(book)`."""

    def __init__(self, book: Book, key: SigningKey, *, reader: ArtefactReader | None = None):
        signer = configured_signer(book)
        if key.public != signer:
            raise InputError(
                "GATE_SIGNER_MISMATCH",
                f"the signing key (key id {key.public.key_id}) is not the book's [gate] signer (key id "
                f"{signer.key_id})",
                str(book.root / "book.toml"),
                "use the key whose public key book.toml names, or put this key's public key in [gate] signer",
            )
        self.book = book
        self._key = key
        self._signer = signer
        self._reader = reader if reader is not None else book_artefacts(book)
        self._conn = connect(book.db_path)

    @classmethod
    def open(cls, book: Book, *, reader: ArtefactReader | None = None) -> GateIssuer:
        """The issuer with the user's signing key (``[gate] key_path`` of the user config, checked)."""
        return cls(book, load_signing_key(key_path(book.config)), reader=reader)

    def close(self) -> None:
        """Close the store connection."""
        self._conn.close()

    def __enter__(self) -> GateIssuer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def issue(
        self,
        gate: GateName,
        gate_input: GateInput,
        bindings: ReceiptBindings,
        models: ModelsEvidence = "real",
        models_note: str = "",
    ) -> Issued:
        """Evaluate gate `gate` on `gate_input` and journal it: the report first (with the writer configuration it
        evaluates and whether real, probed models answered: `models`), then — only if it passed on real models — a
        signed receipt binding the report and `bindings`. A report on canned or unprobed models is journaled as such
        and never earns a receipt. Nothing is written when a binding disagrees with the
        gate input or no longer re-hashes (GATE_BINDING_MISMATCH / GATE_ARTEFACT_CHANGED, exit 3). The store's
        index is synced last; if that fails the entries stand in the journal (the truth) and the index catches
        up on the next sync. A crash between the two appends leaves a passed report without a receipt, which
        `muse gate verify` notes (GATE_RECEIPT_MISSING) and the guard never mistakes for one."""
        spec = self._bound_spec(bindings)
        problems = binding_problems(gate_input, bindings, Rehasher(self._reader))
        if problems:
            code, what = problems[0]
            raise FailedClosed(
                code,
                what + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""),
                bindings.gate_input.locator,
                "bind the artefacts the gate input was built from, as they are now",
            )
        report = evaluate_gate(gate, gate_input, spec)
        digest = report_sha256(report)
        report_body = ReportBody(
            report=report,
            report_sha256=digest,
            gate_input=bindings.gate_input,
            gate_spec=bindings.gate_spec,
            signer=self._signer.key_id,
            issued_at=utc_now(),
            run_config_sha256=bindings.run_config_sha256,
            models=models,
            models_note=models_note,
        )
        report_entry = self._append_entry("report", report_body.model_dump(mode="json"))
        receipt_entry = None
        if report.outcome == "passed" and models == "real":
            receipt = ReceiptBody(
                gate=gate,
                mode=report.mode,
                run_id=report.run_id,
                report_seq=report_entry.seq,
                report_entry_sha256=report_entry.sha256,
                report_sha256=digest,
                bindings=bindings,
                signer=self._signer.key_id,
                issued_at=utc_now(),
            )
            receipt_entry = self._append_entry("receipt", receipt.model_dump(mode="json"))
        sync_index(self.book, self._conn, self._signer)
        return Issued(report, report_entry, receipt_entry)

    def _bound_spec(self, bindings: ReceiptBindings) -> GateSpec:
        spec_id, _, version = bindings.gate_spec.locator.rpartition("@")
        spec = spec_named(spec_id, int(version)) if version.isdigit() else None
        if spec is None or spec.id != spec_id or spec.sha256 != bindings.gate_spec.sha256:
            raise FailedClosed(
                "GATE_BINDING_MISMATCH",
                f"the bound gate spec {bindings.gate_spec.locator} is not a registered spec with that sha256",
                "gate spec",
                "bind a registered gate spec (replay.spec_ref(load_gate_spec()))",
            )
        if not spec.issues:
            raise FailedClosed(
                "GATE_SPEC_RETIRED",
                f"gate spec {spec.locator} is kept only to check the reports it decided; it issues nothing new",
                "gate spec",
                "evaluate under the current gate spec (replay.spec_ref(load_gate_spec()))",
            )
        return spec

    def _append_entry(self, kind: EntryKind, body: dict[str, object]) -> EntryRef:
        """Append one entry: prepared and signed outside the lock against the head as read, swapped in under
        the lock only onto that same head — else prepared again under the lock (one retry, never a loop)."""
        where = journal_location(self.book)
        body_json = canonical_json(body).encode("utf-8")
        with _gates_dir_fd(self.book, create=True) as dir_fd:
            assert dir_fd is not None
            fd, created = _open_for_append(dir_fd, where)
            try:
                known = index_head(self._conn)  # read before the journal, which can only have grown since
                size = os.fstat(fd).st_size
                prepared = self._prepare(fd, size, known, kind, body_json, where, optimistic=True)
                with _locked(dir_fd, fcntl.LOCK_EX):
                    _same_file(dir_fd, fd, where)
                    now = os.fstat(fd).st_size
                    if prepared is None or now != size or not _still_ends_with(fd, size, prepared[0].line):
                        size = now  # the compare of the swap failed: prepare again, now that nothing moves
                        prepared = self._prepare(fd, size, known, kind, body_json, where, optimistic=False)
                    assert prepared is not None
                    head, line, digest = prepared
                    written = os.write(fd, line)
                    if written != len(line) or os.fstat(fd).st_size != size + len(line):
                        if written != len(line) and os.fstat(fd).st_size == size + written:
                            os.ftruncate(fd, size)  # a short write (disk full): take it back, nothing else moved
                        raise _conflict(where)
                os.fsync(fd)  # after the lock: see the module doc (group commit)
                if created:
                    os.fsync(dir_fd)
            finally:
                os.close(fd)
        return EntryRef(head.seq + 1, digest)

    def _prepare(
        self,
        fd: int,
        size: int,
        known: IndexRow | None,
        kind: EntryKind,
        body_json: bytes,
        where: str,
        *,
        optimistic: bool,
    ) -> tuple[_Head, bytes, str] | None:
        """(head, signed line, its sha256) for appending onto the journal's last `size` bytes. Outside the lock
        (`optimistic`) another issuer may be mid-write, so a head that does not check out there means "prepare
        again under the lock" (None), never an error; under the lock it is one."""
        try:
            head = self._head(fd, size, where)
            self._check_witness(fd, head, known)
        except FailedClosed:
            if optimistic:
                return None
            raise
        line, digest = encode_entry_json(head.seq + 1, head.line_sha256, kind, body_json, self._key)
        return head, line + b"\n", digest

    def _head(self, fd: int, size: int, where: str) -> _Head:
        """The last line, checked (complete, its own sha256, a valid signature) — or the genesis of an empty file."""
        if size == 0:
            return _Head(0, GENESIS, b"")
        chunk = _HEAD_CHUNK
        while True:
            start = max(size - chunk, 0)
            data = os.pread(fd, size - start, start)
            if not data.endswith(b"\n"):
                raise FailedClosed(
                    "GATE_JOURNAL_TORN",
                    "the journal's last line is incomplete (an append was interrupted, or the file was damaged)",
                    where,
                    "run `muse gate verify`; move the incomplete last line aside (it was never acknowledged) and rerun",
                )
            cut = data.rfind(b"\n", 0, len(data) - 1)
            if cut >= 0 or start == 0:
                line = data[cut + 1 : -1]
                break
            chunk *= 4
        entry = decode_entry(line, start + cut + 1)
        if isinstance(entry, LineProblem) or not entry.signed_by(self._signer):
            what = entry.what if isinstance(entry, LineProblem) else "its signature does not verify"
            raise FailedClosed(
                "GATE_JOURNAL_CORRUPT",
                f"the journal's last entry is not intact ({what}); nothing is issued onto it",
                where,
                "run `muse gate verify` to see every problem",
            )
        return _Head(entry.seq, entry.line_sha256, line)

    def _check_witness(self, fd: int, head: _Head, known: IndexRow | None) -> None:
        """The store's index must not know an entry the journal lacks or holds differently (it may lag)."""
        if known is None:
            return
        line = os.pread(fd, known.length, known.offset) if known.seq <= head.seq else b""
        if sha256_hex(line) != known.line_sha256:
            raise _divergence(self.book, known)


@dataclass(frozen=True)
class _Head:
    seq: int
    line_sha256: str
    line: bytes  # without its newline; empty for an empty journal


def _open_for_append(dir_fd: int, where: str) -> tuple[int, bool]:
    """The journal opened for appending, and whether this call created it."""
    while True:
        try:
            return _open_journal(dir_fd, os.O_RDWR | os.O_APPEND, where), False
        except FileNotFoundError:
            pass
        try:
            return _open_journal(dir_fd, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, where), True
        except FileExistsError:
            continue  # another issuer created it just now: open that one


def _same_file(dir_fd: int, fd: int, where: str) -> None:
    """The open journal must still be the file at the journal's name (not renamed away or replaced)."""
    try:
        named = os.stat(_JOURNAL, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise _conflict(where) from None
    held = os.fstat(fd)
    if (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino):
        raise _conflict(where)


def _still_ends_with(fd: int, size: int, line: bytes) -> bool:
    """True when the file's last bytes are `line` and its newline (the head that was read)."""
    n = len(line) + 1 if line else 0
    return os.pread(fd, n, size - n) == line + b"\n" if n else size == 0


def _conflict(where: str) -> FailedClosed:
    return FailedClosed(
        "GATE_JOURNAL_CONFLICT",
        "the journal changed under the lock (a writer that does not take the lock, or a short write)",
        where,
        "run `muse gate verify`; only novelmuse's issuer may write the journal",
    )
