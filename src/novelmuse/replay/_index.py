"""The derived index of the gate journal in the store (table ``gate_entries``, migration 0010).

Rows are made only from entries whose hash, link and signature were checked (by the journal module), so the
index is a fast, trustworthy lookup (the guard asks "a verified passed receipt of gate B for this run
configuration?") and a witness: an entry the index holds must still be in the journal, byte for byte.
"""

from __future__ import annotations

import sqlite3
from dataclasses import astuple, dataclass
from typing import Any

from ._chain import Entry

_COLUMNS = (
    "seq, kind, gate, outcome, run_id, mode, report_seq, report_sha256, gate_input_sha256, gate_spec_sha256, "
    "run_config_sha256, sha256, line_sha256, prev_sha256, byte_offset, byte_length, signer, issued_at"
)


@dataclass(frozen=True)
class IndexRow:
    """One indexed journal entry."""

    seq: int
    kind: str
    gate: str
    outcome: str
    run_id: str
    mode: str
    report_seq: int | None
    report_sha256: str
    gate_input_sha256: str
    gate_spec_sha256: str
    run_config_sha256: str | None
    sha256: str
    line_sha256: str
    prev_sha256: str
    offset: int
    length: int
    signer: str
    issued_at: str


def row_of(entry: Entry) -> IndexRow:
    """The index row of a checked entry (its body already validated as a report or receipt body)."""
    body: dict[str, Any] = entry.body()
    if entry.kind == "report":
        report = body["report"]
        gate, outcome, run_id, mode = report["gate"], report["outcome"], report["run_id"], report["mode"]
        report_seq, gate_input, spec, config = None, report["gate_input_sha256"], report["gate_spec"]["sha256"], None
    else:
        bindings = body["bindings"]
        gate, outcome, run_id, mode = body["gate"], body["outcome"], body["run_id"], body["mode"]
        report_seq, gate_input = body["report_seq"], bindings["gate_input"]["sha256"]
        spec, config = bindings["gate_spec"]["sha256"], bindings["run_config_sha256"]
    return IndexRow(
        seq=entry.seq,
        kind=entry.kind,
        gate=gate,
        outcome=outcome,
        run_id=run_id,
        mode=mode,
        report_seq=report_seq,
        report_sha256=body["report_sha256"],
        gate_input_sha256=gate_input,
        gate_spec_sha256=spec,
        run_config_sha256=config,
        sha256=entry.sha256,
        line_sha256=entry.line_sha256,
        prev_sha256=entry.prev_sha256,
        offset=entry.offset,
        length=entry.length,
        signer=body["signer"],
        issued_at=body["issued_at"],
    )


def _row(r: sqlite3.Row) -> IndexRow:
    return IndexRow(*tuple(r))


def index_head(conn: sqlite3.Connection) -> IndexRow | None:
    """The last indexed entry (None when the index is empty)."""
    r = conn.execute(f"SELECT {_COLUMNS} FROM gate_entries ORDER BY seq DESC LIMIT 1").fetchone()
    return None if r is None else _row(r)


def index_rows(conn: sqlite3.Connection) -> list[IndexRow]:
    """Every indexed entry, in chain order."""
    return [_row(r) for r in conn.execute(f"SELECT {_COLUMNS} FROM gate_entries ORDER BY seq")]


def insert_rows(conn: sqlite3.Connection, rows: list[IndexRow]) -> None:
    """Add rows (inside the caller's transaction)."""
    marks = ", ".join("?" * len(_COLUMNS.split(", ")))
    conn.executemany(f"INSERT INTO gate_entries ({_COLUMNS}) VALUES ({marks})", [astuple(r) for r in rows])


def clear_index(conn: sqlite3.Connection) -> None:
    """Remove every row (inside the caller's transaction), before a rebuild."""
    conn.execute("DELETE FROM gate_entries")
