"""Receipts: one row per attempt in table `receipts`, one row per logical call in `model_calls`.

A receipt binds what was asked (request, prompt template and schema hashes) to what came back
(response hash, resolved model, usage, cost from a pinned price table). It never holds content:
raw requests and responses live in the vault under their sha256, and diagnostics hold only codes
and counts.

Write-ahead (issue 18 item 1): an attempt that will be sent is committed as `pending` — with its call's row on
the first — BEFORE its request leaves, and the same row is completed when the attempt ends, each in its own
transaction. A crash at any moment therefore leaves either a completed receipt or a pending one; recovery
(`interrupt_pending`) turns the pending receipts of a run that is no longer running into `interrupted` with an
unknown cost — the provider may have billed the request — so `muse cost` never under-reports.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from ..errors import FailedClosed, InputError
from ..limits import MAX_ATTEMPT_COST, MAX_USAGE_TOKENS
from ..store import StoreWriteError, transaction
from ._task import TaskRef

Outcome = Literal["pending", "ok", "failed", "refused", "interrupted"]


@dataclass(frozen=True)
class Receipt:
    """One attempt: sent (`ok` / `failed`), refused before sending (`refused`, e.g. BUDGET_EXCEEDED), in flight
    (`pending`), or cut off by a crash while in flight (`interrupted`, cost unknown)."""

    id: str
    call_id: str
    attempt: int
    run_id: str
    role: str
    provider: str
    provider_kind: str
    requested_model: str
    resolved_model: str | None
    outcome: Outcome
    error_code: str | None
    request_sha256: str
    response_sha256: str | None
    prompt_sha256: str | None
    schema_sha256: str
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    cost: float | None  # None = unknown (never shown as 0)
    price_table_sha256: str
    latency_ms: float | None
    started_at: str
    ended_at: str | None  # None while pending
    sandbox: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form (the shape of `muse calls --json` rows)."""
        return asdict(self)


_COLUMNS = [f.name for f in fields(Receipt) if f.name != "diagnostics"] + ["diagnostics_json"]


@dataclass(frozen=True)
class CallStart:
    """The `model_calls` row of a logical call, inserted with its first receipt."""

    call_id: str
    run_id: str
    role: str
    provider: str
    provider_kind: str
    requested_model: str
    schema_name: str
    schema_sha256: str
    prompt_sha256: str | None
    started_at: str


@dataclass(frozen=True)
class CallEnd:
    """A logical call's final outcome, written with its last receipt (or alone)."""

    status: Literal["ok", "failed"]
    error_code: str | None
    attempts: int
    final_receipt_id: str | None
    output_sha256: str | None
    diagnostics: dict[str, Any]
    ended_at: str


def _insert_call(conn: sqlite3.Connection, start: CallStart) -> None:
    conn.execute(
        "INSERT INTO model_calls (id, run_id, role, provider, provider_kind, requested_model, schema_name,"
        " schema_sha256, prompt_sha256, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            start.call_id,
            start.run_id,
            start.role,
            start.provider,
            start.provider_kind,
            start.requested_model,
            start.schema_name,
            start.schema_sha256,
            start.prompt_sha256,
            start.started_at,
        ),
    )


def _update_call(conn: sqlite3.Connection, call_id: str, end: CallEnd) -> None:
    conn.execute(
        "UPDATE model_calls SET status = ?, error_code = ?, attempts = ?, final_receipt_id = ?,"
        " output_sha256 = ?, diagnostics_json = ?, ended_at = ? WHERE id = ?",
        (
            end.status,
            end.error_code,
            end.attempts,
            end.final_receipt_id,
            end.output_sha256,
            json.dumps(end.diagnostics, sort_keys=True),
            end.ended_at,
            call_id,
        ),
    )


def write_receipt(
    conn: sqlite3.Connection,
    receipt: Receipt,
    *,
    start: CallStart | None = None,
    end: CallEnd | None = None,
    tasks: Sequence[TaskRef] = (),
    completes_pending: bool = False,
) -> None:
    """Insert one receipt in its own transaction (with its call's row on the first, its outcome on the last,
    and the run's first use of each of `tasks`); with `completes_pending`, complete the pending receipt of the
    same id instead (RECEIPT_WRITE_FAILED if recovery has closed it meanwhile)."""
    values = [getattr(receipt, c) for c in _COLUMNS[:-1]]
    values.append(json.dumps(receipt.diagnostics, sort_keys=True))
    placeholders = ", ".join("?" for _ in _COLUMNS)
    if completes_pending:
        sql = f"UPDATE receipts SET ({', '.join(_COLUMNS)}) = ({placeholders}) WHERE id = ? AND outcome = 'pending'"
        values.append(receipt.id)
    else:
        sql = f"INSERT INTO receipts ({', '.join(_COLUMNS)}) VALUES ({placeholders})"
    try:
        with transaction(conn):
            if start is not None:
                _insert_call(conn, start)
            for ref in tasks:
                conn.execute(
                    "INSERT OR IGNORE INTO run_tasks (run_id, role, task, version, prompt_sha256, schema_sha256,"
                    " first_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        receipt.run_id,
                        ref.role,
                        ref.task,
                        ref.version,
                        ref.prompt_sha256,
                        ref.schema_sha256,
                        receipt.started_at,
                    ),
                )
            if conn.execute(sql, values).rowcount != 1:
                raise sqlite3.IntegrityError(f"receipt {receipt.id} is no longer pending")
            if end is not None:
                _update_call(conn, receipt.call_id, end)
    except (sqlite3.Error, StoreWriteError) as exc:
        raise _store_failed(exc) from exc


def interrupt_pending(conn: sqlite3.Connection, now: str) -> int:
    """Close what a dead run left in flight (inside the caller's transaction): the pending receipts of every run
    that is not running become `interrupted` (MODEL_INTERRUPTED, cost unknown) and its logical calls still
    `running` become `failed` (MODEL_INTERRUPTED). Returns how many attempts were interrupted."""
    gone = "run_id IN (SELECT id FROM runs WHERE status != 'running')"
    interrupted = conn.execute(
        "UPDATE receipts SET outcome = 'interrupted', error_code = 'MODEL_INTERRUPTED', cost = NULL, ended_at = ?"
        f" WHERE outcome = 'pending' AND {gone}",
        (now,),
    ).rowcount
    conn.execute(
        "UPDATE model_calls SET status = 'failed', error_code = 'MODEL_INTERRUPTED', ended_at = ?,"
        " attempts = (SELECT COUNT(*) FROM receipts r WHERE r.call_id = model_calls.id)"
        f" WHERE status = 'running' AND {gone}",
        (now,),
    )
    return int(interrupted)


def end_call(conn: sqlite3.Connection, call_id: str, end: CallEnd) -> None:
    """Record a logical call's final outcome on its own (when the last receipt is already written)."""
    try:
        with transaction(conn):
            _update_call(conn, call_id, end)
    except (sqlite3.Error, StoreWriteError) as exc:
        raise _store_failed(exc) from exc


def _store_failed(exc: sqlite3.Error | StoreWriteError) -> FailedClosed:
    """A receipt that cannot be recorded fails the call closed: no unreceipted model output is ever used."""
    return FailedClosed(
        "RECEIPT_WRITE_FAILED",
        f"cannot record a model-call receipt ({exc})",
        ".muse/muse.db",
        "check that the book directory is writable and not full, then rerun",
    )


def _row_to_receipt(row: sqlite3.Row) -> Receipt:
    data = {c: row[c] for c in _COLUMNS[:-1]}
    return Receipt(**data, diagnostics=json.loads(row["diagnostics_json"]))


def require_run(conn: sqlite3.Connection, run_id: str) -> None:
    """Refuse a run id the store has never seen (RUN_NOT_FOUND): a mistyped `--run` must not read as a run that
    made no calls."""
    if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        raise InputError(
            "RUN_NOT_FOUND",
            f"no run with id {run_id!r} is recorded",
            "--run (the runs recorded in .muse/muse.db)",
            "see `muse calls` or `muse cost` without --run for the recorded run ids",
        )


def list_receipts(conn: sqlite3.Connection, run_id: str | None = None, *, call_id: str | None = None) -> list[Receipt]:
    """Receipts in the order they happened, optionally of one run or one logical call."""
    sql = f"SELECT {', '.join(_COLUMNS)} FROM receipts"
    where: list[str] = []
    args: list[str] = []
    if run_id is not None:
        where.append("run_id = ?")
        args.append(run_id)
    if call_id is not None:
        where.append("call_id = ?")
        args.append(call_id)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id"
    conn.row_factory = sqlite3.Row
    return [_row_to_receipt(r) for r in conn.execute(sql, args)]


@dataclass(frozen=True)
class CallRecord:
    """One logical call as recorded in `model_calls`: its outcome and failure-safe diagnostics."""

    id: str
    run_id: str
    role: str
    provider: str
    provider_kind: str
    requested_model: str
    schema_name: str
    schema_sha256: str
    prompt_sha256: str | None
    status: str  # running / ok / failed
    error_code: str | None
    attempts: int
    final_receipt_id: str | None
    output_sha256: str | None
    diagnostics: dict[str, Any]
    started_at: str
    ended_at: str | None


def list_calls(conn: sqlite3.Connection, run_id: str | None = None) -> list[CallRecord]:
    """Logical calls in the order they started, optionally of one run."""
    cols = [f.name for f in fields(CallRecord) if f.name != "diagnostics"]
    sql = f"SELECT {', '.join(cols)}, diagnostics_json FROM model_calls"
    args: list[str] = []
    if run_id is not None:
        sql += " WHERE run_id = ?"
        args.append(run_id)
    rows = conn.execute(sql + " ORDER BY id", args).fetchall()
    return [
        CallRecord(**{c: row[i] for i, c in enumerate(cols)}, diagnostics=json.loads(row[len(cols)])) for row in rows
    ]


@dataclass(frozen=True)
class CostLine:
    """Summed usage of a group of receipts (a role, a run, or everything).

    `cost` is None (unknown) as soon as one sent attempt of the group has an unknown cost: an unknown
    is never summed as 0. `unknown_cost_attempts` says how many (an attempt with no price, no usage, invalid usage,
    or one interrupted in flight).
    """

    key: str
    calls: int
    attempts: int
    failed_attempts: int  # failed, or interrupted in flight
    refused_attempts: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float | None
    unknown_cost_attempts: int
    known_cost: float = 0.0  # the sum of the known costs: all of `cost`, or a lower bound when some are unknown
    kind: str | None = None  # runs: the run kind
    status: str | None = None  # runs: the run status
    started_at: str | None = None  # runs: when the run started

    @property
    def spend(self) -> dict[str, int | float | None]:
        """What a command's summary says it spent: calls, input and output tokens, cost (None: unknown)."""
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
        }


@dataclass(frozen=True)
class CostSummary:
    """`muse cost`: totals, by role and by run (and by UTC day, for the studio's spend chart)."""

    total: CostLine
    by_role: list[CostLine]
    by_run: list[CostLine]
    by_day: list[CostLine] = field(default_factory=list)  # key: YYYY-MM-DD (UTC) the attempt started


#: An attempt's usage and cost count only when every token count is a possible one and the cost finite and in
#: range (rows stored before usage was bounded may hold 2^63−1 or 1e300): otherwise the attempt's cost is unknown
#: and its tokens are left out — SUM never overflows and an absurd row never reads as spend.
_TOKENS_OK = " AND ".join(
    f"(r.{c} IS NULL OR r.{c} BETWEEN 0 AND {MAX_USAGE_TOKENS})"
    for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
)
_KNOWN = f"(r.cost BETWEEN 0 AND {MAX_ATTEMPT_COST!r} AND {_TOKENS_OK})"


def _sum_tokens(column: str) -> str:
    return f"COALESCE(SUM(CASE WHEN {_TOKENS_OK} THEN r.{column} END), 0)"


_SUMS = (
    "COUNT(DISTINCT r.call_id), COUNT(*), SUM(r.outcome IN ('failed', 'interrupted')), SUM(r.outcome = 'refused'), "
    + ", ".join(_sum_tokens(c) for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
    + f", COALESCE(SUM(CASE WHEN {_KNOWN} THEN r.cost END), 0), SUM(NOT COALESCE({_KNOWN}, 0))"
)


def _line(key: str, row: sqlite3.Row | tuple[Any, ...], extra: dict[str, Any] | None = None) -> CostLine:
    calls, attempts, failed, refused, tin, tout, cread, cwrite, cost, unknown = row[:10]
    return CostLine(
        key=key,
        calls=int(calls or 0),
        attempts=int(attempts or 0),
        failed_attempts=int(failed or 0),
        refused_attempts=int(refused or 0),
        input_tokens=int(tin),
        output_tokens=int(tout),
        cache_read_tokens=int(cread),
        cache_write_tokens=int(cwrite),
        cost=None if unknown else float(cost),
        unknown_cost_attempts=int(unknown or 0),
        known_cost=float(cost),
        **(extra or {}),
    )


def run_spend(conn: sqlite3.Connection, run_id: str) -> CostLine:
    """What one run's receipts say it spent (a joined run's budget starts from it)."""
    return _line(run_id, conn.execute(f"SELECT {_SUMS} FROM receipts r WHERE r.run_id = ?", (run_id,)).fetchone())


def runs_spend(conn: sqlite3.Connection, run_ids: list[str]) -> CostLine:
    """What the receipts of these runs say they spent together (the commands of one stretch of chapters)."""
    marks = ", ".join("?" for _ in run_ids) or "NULL"
    row = conn.execute(f"SELECT {_SUMS} FROM receipts r WHERE r.run_id IN ({marks})", run_ids).fetchone()
    return _line("runs", row)


def cost_summary(conn: sqlite3.Connection, run_id: str | None = None) -> CostSummary:
    """Sum tokens and cost over all receipts (or one run's), by role and by run."""
    where, args = ("WHERE r.run_id = ?", [run_id]) if run_id else ("", [])
    total = conn.execute(f"SELECT {_SUMS} FROM receipts r {where}", args).fetchone()
    roles = conn.execute(f"SELECT {_SUMS}, r.role FROM receipts r {where} GROUP BY r.role ORDER BY r.role", args)
    runs = conn.execute(
        f"SELECT {_SUMS}, r.run_id, u.kind, u.status, u.started_at FROM receipts r JOIN runs u ON u.id = r.run_id"
        f" {where} GROUP BY r.run_id ORDER BY r.run_id",
        args,
    )
    days = conn.execute(
        f"SELECT {_SUMS}, substr(r.started_at, 1, 10) AS day FROM receipts r {where} GROUP BY day ORDER BY day", args
    )
    return CostSummary(
        total=_line("total", total),
        by_role=[_line(row[10], row) for row in roles],
        by_run=[_line(row[10], row, {"kind": row[11], "status": row[12], "started_at": row[13]}) for row in runs],
        by_day=[_line(row[10], row) for row in days],
    )


def tasks_used(conn: sqlite3.Connection, run_id: str) -> list[TaskRef]:
    """The role tasks a run used, each once, in the order of their first use."""
    rows = conn.execute(
        "SELECT role, task, version, prompt_sha256, schema_sha256 FROM run_tasks WHERE run_id = ? ORDER BY rowid",
        (run_id,),
    )
    return [TaskRef(*row) for row in rows]
