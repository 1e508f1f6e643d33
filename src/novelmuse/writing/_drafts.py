"""Where a write run keeps what it made: the run row, every draft, every detector report, every manifest
version, and each gate call's answer as it ends (what an interrupted run resumes from).

- Drafts are content-addressed: ``.muse/drafts/<sha256>.json`` (0600 in a 0700 folder) holds exactly the
  draft's canonical JSON — the text, the declared facts, the evidence requests and the sha256 of the manifest
  it was written from — and `write_drafts` holds the same body. Nothing is deleted: a held draft stays.
- Manifest versions of evidence rounds go where the first build's manifest goes (`store_manifest`).
- A draft never reaches the author's chapter file from here: it is a shadow until the author accepts it at the
  desk (`_accept`), which writes the file through the revision store.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..book import Book, atomic_write_bytes, read_chapter_file
from ..processes import process_alive, process_started
from ..roles.writer import DeclaredFact, EvidenceRequest
from ..store import new_id, transaction, utc_now
from ..text import canonical_json, parse_heading, sha256_hex
from ._detector import DetectorReport
from ._store import private_dir, store_manifest

if TYPE_CHECKING:  # only annotated: the run document imports the editorial loop's models
    from ._build import ContextBuild
    from ._write_doc import WriteDoc

DRAFT_SCHEMA_VERSION = "writer-draft-v1"
DraftPurpose = Literal["draft", "evidence", "repair", "author_revision"]


class DraftDoc(BaseModel):
    """One draft as stored (the hashed body): bound to the manifest it was written from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = DRAFT_SCHEMA_VERSION
    chapter: int
    arm: str
    purpose: DraftPurpose  # the first draft, a draft after an evidence round, a repair, the author's revision
    evidence_round: int
    repair_round: int
    manifest_sha256: str
    text: str
    text_sha256: str
    declared_facts: list[DeclaredFact]
    evidence_requests: list[EvidenceRequest]

    def canonical(self) -> str:
        """The stored, hashed body."""
        return canonical_json(self.model_dump(mode="json"))


def drafts_dir(book: Book) -> Path:
    """``.muse/drafts`` of the book."""
    return book.state_dir / "drafts"


def chapter_file_sha256(book: Book, chapter: int) -> str | None:
    """The sha256 of chapter `chapter`'s file now (None when there is none)."""
    path = book.chapter_paths().get(chapter)
    return None if path is None else read_chapter_file(chapter, path).sha256


_OWN_START = process_started(os.getpid())


def begin_write(
    book: Book,
    build: ContextBuild,
    *,
    status: str = "running",
    writer_config_sha256: str | None = None,
    origin: str = "write",
) -> tuple[str, str | None]:
    """Record the start of a write run (its first manifest, its chapter file's state now — the file an accept
    may replace —, the writer configuration, the process running it); (its id, the chapter file's sha256 now —
    None when there is none). Write runs left `running` by a process that is gone (a killed `muse write`) are
    closed as `interrupted` first."""
    store_manifest(book, build)
    write_id = new_id("W")
    began = chapter_file_sha256(book, build.chapter)
    close_dead_writes(book.db)
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO write_runs (id, chapter, arm, outline_sha256, manifest_sha256, chapter_file_sha256, status,"
            " started_at, pid, pid_started, writer_config_sha256, shadow, origin)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                write_id,
                build.chapter,
                build.arm,
                build.manifest.outline.sha256,
                build.manifest_sha256,
                began,
                status,
                utc_now(),
                os.getpid(),
                _OWN_START,
                writer_config_sha256,
                int(began is not None),
                origin,
            ),
        )
    return write_id, began


def resume_write(book: Book, write_id: str) -> None:
    """Take an interrupted write run over: it is `running` again, by this process (its drafts and reports stay)."""
    with transaction(book.db) as conn:
        conn.execute(
            "UPDATE write_runs SET status = 'running', ended_at = NULL, pid = ?, pid_started = ? WHERE id = ?",
            (os.getpid(), _OWN_START, write_id),
        )


def store_gate_call(book: Book, write_id: str, draft_id: str, role: str, call_id: str, value_json: str) -> None:
    """Keep one gate call's answer on a draft as soon as the call ends (a resumed run reuses it)."""
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO write_gate_calls VALUES (?, ?, ?, ?, ?, ?)",
            (write_id, draft_id, role, call_id, value_json, utc_now()),
        )


def write_process_alive(row: sqlite3.Row) -> bool:
    """Whether the process that runs write run `row` (a `write_runs` row) is still running it."""
    return row["pid"] is not None and process_alive(int(row["pid"]), row["pid_started"])


def close_dead_writes(conn: sqlite3.Connection) -> list[str]:
    """Mark every write run still `running` whose process is gone as `interrupted` (its drafts and reports stay);
    returns their ids."""
    rows = conn.execute("SELECT id, pid, pid_started FROM write_runs WHERE status = 'running'").fetchall()
    dead = [row["id"] for row in rows if not write_process_alive(row)]
    if dead:
        now = utc_now()
        with transaction(conn):
            conn.executemany(
                "UPDATE write_runs SET status = 'interrupted', ended_at = ? WHERE id = ? AND status = 'running'",
                [(now, write_id) for write_id in dead],
            )
    return dead


def end_write(book: Book, doc: WriteDoc) -> None:
    """Record how a write run ended, with its whole document (again after an --apply or a review)."""
    now = utc_now()
    with transaction(book.db) as conn:
        conn.execute(
            "UPDATE write_runs SET status = ?, reason = ?, error_code = ?, final_draft_id = ?, document = ?,"
            " run_id = ?, ended_at = ?, applied_at = COALESCE(applied_at, ?) WHERE id = ?",
            (
                doc.status,
                doc.reason,
                doc.error_code,
                doc.final_draft_id,
                doc.model_dump_json(),
                doc.run_id,
                now,
                now if doc.applied else None,
                doc.write_id,
            ),
        )


def store_draft(book: Book, write_id: str, seq: int, doc: DraftDoc, call_id: str | None) -> tuple[str, str]:
    """Keep one draft (file + row); (draft id, sha256 of its body)."""
    body = doc.canonical()
    sha = sha256_hex(body)
    folder = drafts_dir(book)
    private_dir(folder)
    path = folder / f"{sha}.json"
    if not (path.is_file() and not path.is_symlink() and sha256_hex(path.read_bytes()) == sha):
        atomic_write_bytes(path, body.encode("utf-8"), mode=0o600)
    draft_id = new_id("D")
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO write_drafts (id, write_id, seq, purpose, evidence_round, repair_round, manifest_sha256,"
            " text_sha256, sha256, body, call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                draft_id,
                write_id,
                seq,
                doc.purpose,
                doc.evidence_round,
                doc.repair_round,
                doc.manifest_sha256,
                doc.text_sha256,
                sha,
                body,
                call_id,
                utc_now(),
            ),
        )
    return draft_id, sha


def store_report(book: Book, write_id: str, draft_id: str, report: DetectorReport) -> tuple[str, str]:
    """Keep one detector report, bound to its draft and candidate; (its id, the sha256 of its body)."""
    report_id = new_id("DR")
    figures = report.computed
    body = report.canonical()
    sha = sha256_hex(body)
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO detector_reports (id, write_id, draft_id, candidate_sha256, manifest_sha256, sha256, outcome,"
            " coverage, high_severity, warnings, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                report_id,
                write_id,
                draft_id,
                report.candidate_sha256,
                report.manifest_sha256,
                sha,
                report.outcome.status,
                figures.coverage,
                figures.high_severity,
                figures.warnings,
                body,
                utc_now(),
            ),
        )
    return report_id, sha


_DIGITS = "零一二三四五六七八九"


def chinese_numeral(n: int) -> str:
    """``11`` → ``十一``, ``101`` → ``一百零一``, ``2024`` → ``二千零二十四`` (0 ≤ n < 100,000,000)."""
    if n == 0:
        return _DIGITS[0]
    if n >= 10_000:
        high, low = divmod(n, 10_000)
        rest = chinese_numeral(low) if low else ""
        rest = "一" + rest if rest.startswith("十") else rest  # 一万零一十, not 一万零十
        return chinese_numeral(high) + "万" + ("零" if 0 < low < 1000 else "") + rest
    out = ""
    zero = False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value % 10
        if digit:
            if zero and out:
                out += _DIGITS[0]
            out += ("" if unit == "十" and digit == 1 and not out else _DIGITS[digit]) + unit
            zero = False
        else:
            zero = True
    return out


def heading_for(book: Book, chapter: int, title: str) -> str:
    """The heading line of a new chapter file, in the style of the chapter before it (unit 回/章, Chinese or
    Arabic numeral, full-width space before the title): ``第十一回　刘皇叔北海救孔融``; ``第11章 title`` when the
    book has no earlier heading to follow."""
    before = [n for n in book.chapter_paths() if n < chapter]
    heading = parse_heading(read_chapter_file(before[-1], book.chapter_paths()[before[-1]]).heading) if before else None
    if heading is None or heading.unit not in ("章", "回"):
        return f"第{chapter}章" + (f" {title}" if title else "")
    numeral = str(chapter) if heading.numeral.isdigit() else chinese_numeral(chapter)
    return f"第{numeral}{heading.unit}" + (f"\u3000{title}" if title else "")
