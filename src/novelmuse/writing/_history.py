"""`muse write show N`: every write run of a chapter as recorded — read from the store only (no context builder)."""

from __future__ import annotations

from pydantic import ValidationError

from ..book import Book
from ._drafts import write_process_alive
from ._write_doc import WriteDoc, WriteRunRow, WriteShowDoc


def write_history(book: Book, chapter: int) -> WriteShowDoc:
    """Every write run of chapter `chapter` (oldest first), each with its document: manifests, evidence, drafts,
    detector reports and their hashes (`muse write show N`)."""
    rows = book.db.execute("SELECT * FROM write_runs WHERE chapter = ? ORDER BY id", (chapter,)).fetchall()
    runs = []
    for row in rows:
        document = None
        if row["document"]:
            try:
                document = WriteDoc.model_validate_json(row["document"])
            except ValidationError:  # recorded by another schema version: listed without its details
                document = None
        runs.append(
            WriteRunRow(
                write_id=row["id"],
                run_id=row["run_id"],
                arm=row["arm"],
                status=row["status"] if row["ended_at"] or write_process_alive(row) else "interrupted",
                reason=row["reason"],
                error_code=row["error_code"],
                manifest_sha256=row["manifest_sha256"],
                chapter_file_sha256=row["chapter_file_sha256"],
                final_draft_id=row["final_draft_id"],
                applied_at=row["applied_at"],
                started_at=row["started_at"],
                ended_at=row["ended_at"],
                document=document,
            )
        )
    return WriteShowDoc(chapter=chapter, runs=runs)
