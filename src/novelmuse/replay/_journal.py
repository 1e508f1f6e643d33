"""The one issuer (seed 003: writer_gate 是唯一签发者) and the only code that opens ``.muse/gates/journal.jsonl``.

`GateIssuer.issue` takes a GateInput and the artefacts it binds, never a report: it checks that every binding
agrees with the gate input and still re-hashes, evaluates the gate itself (pure, from the pinned spec),
appends the **report** entry, and only when the report says ``passed`` appends a **receipt** entry that binds
it. A report or receipt computed anywhere else cannot enter the journal (拒绝自算 JSON).

One append, compare-and-swap on the head under a lock:

1. take an exclusive ``flock`` on ``journal.lock`` (every issuer, in every process, takes it);
2. read the head: the last line, which must end with a newline, match its own sha256 and carry a valid
   signature of the book's signer — a torn or tampered head is never extended;
3. check the store's index (a witness) does not know more than the journal: an entry it holds must still be
   there, byte for byte (a truncated or rewritten journal is refused);
4. sign the new entry with ``prev_sha256`` = sha256 of the head line, and write it with one ``write`` in
   append mode only if the file is still exactly as long as the head said (the swap), checking after the
   write that it landed right there (a writer that ignored the lock is detected, never papered over);
5. release the lock, then ``fsync`` the file (and the directory when the file was created) before returning.

The fsync after the lock is a group commit: fsync flushes every byte written before it, so an entry is
durable when its ``issue`` returns together with all entries before it, while concurrent issuers do not
queue behind each other's disk flushes. A crash before the fsync can only lose entries whose issue never
returned (power loss; a killed process loses nothing — its write is already in the kernel).

Readers (`read_journal`) take a shared lock and see whole lines only. The store index is kept in step by
`sync_index` (before and after every issue), which indexes only entries whose hash, link and signature it
checked.
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
from ..errors import FailedClosed, InputError
from ..store import connect, transaction, utc_now
from ..text import sha256_hex
from ._chain import GENESIS, Entry, EntryKind, LineProblem, decode_entry, encode_entry
from ._gates import GateName, GateReport, evaluate_gate, report_sha256
from ._index import IndexRow, index_head, insert_rows, row_of
from ._input import GateInput
from ._keys import PublicKey, SigningKey, key_path, load_signing_key
from ._receipt import ArtefactReader, ReceiptBindings, ReceiptBody, ReportBody, binding_problems, book_artefacts
from ._spec import GateSpec, load_gate_spec

_JOURNAL = "journal.jsonl"
_LOCK = "journal.lock"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_HEAD_CHUNK = 1 << 16


def _gates_dir(book: Book) -> Path:
    return book.state_dir / "gates"


def journal_location(book: Book) -> str:
    """The journal's path relative to the book, for messages (never a handle)."""
    return str((_gates_dir(book) / _JOURNAL).relative_to(book.root))


def _fail(code: str, what: str, where: str, fix: str) -> FailedClosed:
    return FailedClosed(code, what, where, fix)


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
        raise _fail(
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
def _locked(dir_fd: int, mode: int) -> Iterator[None]:
    try:
        lock = os.open(_LOCK, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dir_fd)
    except PermissionError:  # a read-only book: readers go on without the lock
        if mode == fcntl.LOCK_SH:
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
        raise _fail(
            "GATE_JOURNAL_UNSAFE",
            f"the journal cannot be opened safely ({exc.strerror})",
            where,
            "the journal must be a regular file, not a symlink",
        ) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _fail("GATE_JOURNAL_UNSAFE", "the journal is not a regular file", where, "restore the journal file")
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
            'run `muse gate keygen` and add the `[gate] signer = "ed25519:…"` line it prints',
        )
    return PublicKey.parse(book.config.gate.signer)


def parse_body(entry: Entry) -> ReportBody | ReceiptBody | str:
    """`entry`'s body as a report or receipt body, or why it is not one."""
    model: type[ReportBody] | type[ReceiptBody] = ReportBody if entry.kind == "report" else ReceiptBody
    try:
        return model.model_validate(entry.body)
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


# ── the index (derived; only checked entries) ────────────────────────────────────────────────────────────


def _divergence(book: Book, head: IndexRow) -> FailedClosed:
    return _fail(
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
            return rows, _fail(
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
    with transaction(conn):
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

    def issue(self, gate: GateName, gate_input: GateInput, bindings: ReceiptBindings) -> Issued:
        """Evaluate gate `gate` on `gate_input` and journal it: the report first, then — only if it passed — a
        signed receipt binding the report and `bindings`. Nothing is written when a binding disagrees with the
        gate input or no longer re-hashes (GATE_BINDING_MISMATCH / GATE_ARTEFACT_CHANGED, exit 3)."""
        spec = self._bound_spec(bindings)
        problems = binding_problems(gate_input, bindings, self._reader)
        if problems:
            code, what = problems[0]
            raise _fail(
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
        )
        report_entry = self._append_entry("report", report_body.model_dump(mode="json"))
        receipt_entry = None
        if report.outcome == "passed":
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
        return Issued(report, report_entry, receipt_entry)

    def _bound_spec(self, bindings: ReceiptBindings) -> GateSpec:
        spec_id, _, version = bindings.gate_spec.locator.rpartition("@")
        spec = load_gate_spec(int(version)) if version.isdigit() else None
        if spec is None or spec.id != spec_id or spec.sha256 != bindings.gate_spec.sha256:
            raise _fail(
                "GATE_BINDING_MISMATCH",
                f"the bound gate spec {bindings.gate_spec.locator} is not a registered spec with that sha256",
                "gate spec",
                "bind a registered gate spec (replay.spec_ref(load_gate_spec()))",
            )
        return spec

    def _append_entry(self, kind: EntryKind, body: dict[str, object]) -> EntryRef:
        where = journal_location(self.book)
        with _gates_dir_fd(self.book, create=True) as dir_fd:
            assert dir_fd is not None
            created = False
            with _locked(dir_fd, fcntl.LOCK_EX):
                try:
                    fd = _open_journal(dir_fd, os.O_RDWR | os.O_APPEND, where)
                except FileNotFoundError:
                    fd = _open_journal(dir_fd, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, where)
                    created = True
                try:
                    size = os.fstat(fd).st_size
                    seq, prev = self._head(fd, size, where)
                    with transaction(self._conn):  # issuers never wait on each other here: they hold the flock
                        self._catch_up(fd, size, seq)
                        signed, digest = encode_entry(seq + 1, prev, kind, body, self._key)
                        line = signed + b"\n"
                        if os.fstat(fd).st_size != size:  # the swap: only onto the head just read
                            raise _conflict(where)
                        written = os.write(fd, line)
                        if written != len(line) or os.fstat(fd).st_size != size + len(line):
                            if written != len(line) and os.fstat(fd).st_size == size + written:
                                os.ftruncate(fd, size)  # a short write (disk full): take it back, nothing else moved
                            raise _conflict(where)
                        entry = decode_entry(signed, size)
                        assert isinstance(entry, Entry)
                        insert_rows(self._conn, [row_of(entry)])
                except BaseException:
                    os.close(fd)
                    raise
            try:
                os.fsync(fd)  # after the lock: see the module doc (group commit)
                if created:
                    os.fsync(dir_fd)
            finally:
                os.close(fd)
        return EntryRef(seq + 1, digest)

    def _catch_up(self, fd: int, size: int, head_seq: int) -> None:
        """Inside the lock: the index must agree with the journal (a witness: an entry it holds must still be
        there, byte for byte), and entries it lacks (an issuer killed before it indexed) are checked and added."""
        known = index_head(self._conn)
        if known is not None and known.seq > head_seq:
            raise _divergence(self.book, known)
        start = known.offset if known is not None else 0
        rows, problem = _new_rows(
            _split_lines(os.pread(fd, size - start, start), start), known, self._signer, self.book
        )
        if problem is not None:
            raise problem
        insert_rows(self._conn, rows)

    def _head(self, fd: int, size: int, where: str) -> tuple[int, str]:
        """(seq, line sha256) of the last line — checked — or (0, GENESIS) for an empty journal."""
        if size == 0:
            return 0, GENESIS
        chunk = _HEAD_CHUNK
        while True:
            start = max(size - chunk, 0)
            data = os.pread(fd, size - start, start)
            if not data.endswith(b"\n"):
                raise _fail(
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
            raise _fail(
                "GATE_JOURNAL_CORRUPT",
                f"the journal's last entry is not intact ({what}); nothing is issued onto it",
                where,
                "run `muse gate verify` to see every problem",
            )
        return entry.seq, entry.line_sha256


def _conflict(where: str) -> FailedClosed:
    return _fail(
        "GATE_JOURNAL_CONFLICT",
        "the journal changed under the lock (a writer that does not take the lock, or a short write)",
        where,
        "run `muse gate verify`; only novelmuse's issuer may write the journal",
    )
