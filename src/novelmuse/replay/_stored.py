"""Reading a sample's artefacts back from the store, each checked against its content address.

The writer keeps what a sample made in its own rows and files (issue 11): the write run's document, the drafts
(``write_drafts`` and ``.muse/drafts/<sha256>.json``), the detector reports (``detector_reports``) and the
manifests (``context_manifests`` and ``.muse/manifests/<sha256>.json``). These functions read them and refuse
— `ArtefactProblem`, naming the artefact — one whose bytes no longer hash to the sha256 it is known by.
"""

from __future__ import annotations

from pathlib import Path

from ..book import Book
from ..text import sha256_hex
from ..writing import DetectorReport, DraftDoc, Manifest, WriteDoc, drafts_dir, manifests_dir


class ArtefactProblem(Exception):
    """A stored artefact that is missing or no longer hashes to its sha256: (code, what)."""

    def __init__(self, code: str, what: str):
        super().__init__(what)
        self.code = code
        self.what = what


def _file_is(path: Path, sha256: str) -> bool:
    return path.is_file() and not path.is_symlink() and sha256_hex(path.read_bytes()) == sha256


def write_doc(book: Book, write_id: str) -> WriteDoc:
    """The document of write run `write_id` (ArtefactProblem WRITE_RUN_MISSING when it has none)."""
    row = book.db.execute("SELECT document FROM write_runs WHERE id = ?", (write_id,)).fetchone()
    if row is None or row[0] is None:
        raise ArtefactProblem("WRITE_RUN_MISSING", f"the write run {write_id} has no recorded end")
    return WriteDoc.model_validate_json(row[0])


def final_candidate(book: Book, doc: WriteDoc, *, check: bool = True) -> tuple[DraftDoc, str]:
    """(the final draft, its text) of a write run; with `check`, its row and file must re-hash and the text must
    be the candidate its sha256 names (ArtefactProblem CANDIDATE_CHANGED otherwise)."""
    draft_id = doc.final_draft_id
    row = book.db.execute("SELECT sha256, body FROM write_drafts WHERE id = ?", (draft_id,)).fetchone()
    if row is None:
        raise ArtefactProblem("CANDIDATE_MISSING", f"the final draft {draft_id} of write run {doc.write_id} is gone")
    sha, body = str(row[0]), str(row[1])
    draft = DraftDoc.model_validate_json(body)
    if check and (
        sha256_hex(body) != sha
        or not _file_is(drafts_dir(book) / f"{sha}.json", sha)
        or sha256_hex(draft.text) != draft.text_sha256
    ):
        raise ArtefactProblem(
            "CANDIDATE_CHANGED",
            f"the draft {draft_id} (.muse/drafts/{sha[:12]}….json) no longer hashes to its sha256",
        )
    return draft, draft.text


def manifest_location(book: Book, sha256: str) -> str:
    """The manifest file `sha256`, relative to the book (what a gate receipt binds)."""
    return str((manifests_dir(book) / f"{sha256}.json").relative_to(book.root))


def manifest_of(book: Book, sha256: str) -> Manifest:
    """The manifest `sha256`: its store row and file must both re-hash (ArtefactProblem MANIFEST_CHANGED)."""
    row = book.db.execute("SELECT body FROM context_manifests WHERE sha256 = ?", (sha256,)).fetchone()
    if row is None or sha256_hex(str(row[0])) != sha256 or not _file_is(manifests_dir(book) / f"{sha256}.json", sha256):
        raise ArtefactProblem(
            "MANIFEST_CHANGED", f"the manifest .muse/manifests/{sha256[:12]}….json is gone or no longer hashes"
        )
    return Manifest.model_validate_json(str(row[0]))


def detector_report_of(book: Book, doc: WriteDoc, draft_id: str) -> DetectorReport:
    """The detector report on draft `draft_id` of a write run, from the store (its body must re-hash)."""
    out = [r for r in doc.reports if r.draft_id == draft_id]
    if not out:
        raise ArtefactProblem("DETECTOR_REPORT_MISSING", f"no detector report on draft {draft_id}")
    row = book.db.execute("SELECT sha256, body FROM detector_reports WHERE id = ?", (out[-1].id,)).fetchone()
    if row is None or sha256_hex(str(row[1])) != str(row[0]) or str(row[0]) != out[-1].sha256:
        raise ArtefactProblem(
            "DETECTOR_REPORT_CHANGED", f"the detector report {out[-1].id} no longer hashes to its sha256"
        )
    return DetectorReport.model_validate_json(str(row[1]))
