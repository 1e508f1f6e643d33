"""The verification checkpoint: what a deep walk of the gate journal established, so the next walk need not redo it.

A deep `verify_journal` parses every body, type-checks it and recomputes every report from its gate input — work
that grows with the journal (a 10,000-entry chain: seconds; a chain of distinct runs: minutes). After a walk that
found nothing wrong, the store keeps (table ``gate_verified``): the last entry's seq and line sha256, the signer and
a fingerprint of the verifier (its code and the gate specs), the listing and notes, which receipts follow which
report, and every artefact the entries bound.

The next walk still checks the **whole chain** — every line's hash, seq and link, and the last signature, which
covers every byte (so the journal is never taken on the store's word) — and the store's index. If the line at the
checkpoint's seq still has the checkpoint's sha256, every line up to it is byte for byte what was verified (each
line hashes the one before it); then only the entries after it are parsed and rechecked, and the artefacts the
earlier entries bound are re-hashed (each distinct artefact once): a manifest damaged or a gate input that no
longer rebuilds after a clean evaluation still shows. Anything else — another head, signer or verifier, a problem
anywhere — and the walk is the full one. The checkpoint is derived data: deleting the row costs one full walk.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Final

from ..book import Book
from ..store import transaction, utc_now

#: What a recomputation depends on besides the bound bytes: the verifier's modules and the gate specs.
_VERIFIER_MODULES: Final = ("_verify.py", "_verified.py", "_gates.py", "_chain.py", "_receipt.py", "_input.py")


@cache
def verifier_sha256() -> str:
    """sha256 over the verifier's source and every registered gate spec file, in a fixed order."""
    digest = hashlib.sha256()
    package = resources.files("novelmuse.replay")
    for name in _VERIFIER_MODULES:
        digest.update(name.encode() + b"\0" + (package / name).read_bytes() + b"\0")
    specs = package / "specs"
    for entry in sorted(specs.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".yaml"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class Bound:
    """The artefacts one or more entries bound: `refs` as (kind, locator, sha256); `soft` for a report with no
    receipt, whose gate input may be gone (a note, not a problem)."""

    refs: list[tuple[str, str, str]]
    seqs: list[int]
    soft: bool = False


@dataclass
class Checkpoint:
    """A deep walk's result through entry `through_seq` (see the module docstring)."""

    through_seq: int
    head_sha256: str
    listing: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    receipts_of: dict[int, list[int]] = field(default_factory=dict)
    bound: list[Bound] = field(default_factory=list)


def load_checkpoint(book: Book, signer: str) -> Checkpoint | None:
    """The store's checkpoint when it was made under `signer` by this verifier (None otherwise)."""
    row = book.db.execute(
        "SELECT through_seq, head_sha256, signer, verifier, body FROM gate_verified WHERE id = 1"
    ).fetchone()
    if row is None or row[2] != signer or row[3] != verifier_sha256():
        return None
    try:
        body = json.loads(str(row[4]))
        return Checkpoint(
            through_seq=int(row[0]),
            head_sha256=str(row[1]),
            listing=list(body["listing"]),
            notes=list(body["notes"]),
            receipts_of={int(k): [int(s) for s in v] for k, v in body["receipts_of"].items()},
            bound=[Bound([_ref(r) for r in b["refs"]], list(b["seqs"]), bool(b["soft"])) for b in body["bound"]],
        )
    except (ValueError, KeyError, TypeError):
        return None  # a damaged checkpoint is no checkpoint: the walk is the full one


def _ref(row: Any) -> tuple[str, str, str]:
    kind, locator, sha = row
    return str(kind), str(locator), str(sha)


def save_checkpoint(book: Book, signer: str, point: Checkpoint) -> None:
    """Keep `point` as the store's checkpoint (replacing the previous one); entries with the same artefacts are
    grouped, so a long chain of one run's evaluations stays small."""
    groups: dict[tuple[tuple[tuple[str, str, str], ...], bool], list[int]] = {}
    for b in point.bound:
        groups.setdefault((tuple(b.refs), b.soft), []).extend(b.seqs)
    body = {
        "listing": point.listing,
        "notes": point.notes,
        "receipts_of": {str(k): v for k, v in point.receipts_of.items()},
        "bound": [
            {"refs": [list(r) for r in refs], "seqs": seqs, "soft": soft} for (refs, soft), seqs in groups.items()
        ],
    }
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO gate_verified VALUES (1, ?, ?, ?, ?, ?, ?)",
            (point.through_seq, point.head_sha256, signer, verifier_sha256(), text, utc_now()),
        )


def drop_checkpoint(book: Book) -> None:
    """Forget the checkpoint (the next walk is the full one)."""
    book.db.execute("DELETE FROM gate_verified")
