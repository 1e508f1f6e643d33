"""The store side of replay runs (migration 0013): the run row with its sealed plan and configuration, one row
per sample and per panel, and the documents `muse replay status` shows. Plain reads and writes; what they mean
is the orchestrator's (`_orchestrator`) and the GateInputBuilder's (`_builder`)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ..book import Book
from ..errors import FailedClosed, InputError
from ..store import transaction, utc_now
from ._order import OrderPlan, verify_order_plan
from ._spec import Arm

SampleStatus = Literal["running", "done", "failed"]
PanelStatus = Literal["running", "done", "not_run", "failed"]
RunStatus = Literal["running", "finished", "abandoned"]


@dataclass(frozen=True)
class RunRow:
    """One replay run as stored."""

    id: str
    set_sha256: str
    kind: str
    mode: Literal["offline_replay", "real"]
    arms: list[Arm]
    seed: str
    config_sha256: str
    config: dict[str, Any]
    writer_config_sha256: str
    plan_sha256: str
    plan_json: str
    model_run_id: str
    status: RunStatus
    started_at: str
    ended_at: str | None

    def plan(self) -> OrderPlan:
        """The sealed order plan, verified: its seal, that its seed makes it, its balance, and that it is the plan
        sealed with this run (ORDER_PLAN_TAMPERED / _FOREIGN / _UNBALANCED, exit 3)."""
        plan = OrderPlan.model_validate_json(self.plan_json)
        verify_order_plan(plan)
        if plan.sha256 != self.plan_sha256:
            raise FailedClosed(
                "ORDER_PLAN_TAMPERED",
                f"the order plan of run {self.id} is not the one sealed when it started",
                "replay_runs",
                "the store was edited: start a new run (`muse replay run SET --new`)",
            )
        return plan


@dataclass(frozen=True)
class SampleRow:
    run_id: str
    item_id: str
    arm: Arm
    position: int
    status: SampleStatus
    write_id: str | None
    code: str | None
    detail: str | None


@dataclass(frozen=True)
class PanelRow:
    run_id: str
    item_id: str
    status: PanelStatus
    panel_id: str | None
    code: str | None
    detail: str | None


def _run(r: sqlite3.Row) -> RunRow:
    return RunRow(
        id=r["id"],
        set_sha256=r["set_sha256"],
        kind=r["kind"],
        mode=r["mode"],
        arms=json.loads(r["arms"]),
        seed=r["seed"],
        config_sha256=r["config_sha256"],
        config=json.loads(r["config_json"]),
        writer_config_sha256=r["writer_config_sha256"],
        plan_sha256=r["plan_sha256"],
        plan_json=r["plan_json"],
        model_run_id=r["model_run_id"],
        status=r["status"],
        started_at=r["started_at"],
        ended_at=r["ended_at"],
    )


def insert_run(conn: sqlite3.Connection, run: RunRow) -> None:
    """Create the run row — the sealed plan and the configuration with it — in one transaction."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO replay_runs (id, set_sha256, kind, mode, arms, seed, config_sha256, config_json,"
            " writer_config_sha256, plan_sha256, plan_json, model_run_id, status, started_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.id,
                run.set_sha256,
                run.kind,
                run.mode,
                json.dumps(run.arms),
                run.seed,
                run.config_sha256,
                json.dumps(run.config, sort_keys=True, ensure_ascii=False),
                run.writer_config_sha256,
                run.plan_sha256,
                run.plan_json,
                run.model_run_id,
                run.status,
                run.started_at,
            ),
        )


def load_run(book: Book, run_id: str) -> RunRow:
    """The replay run `run_id` (REPLAY_RUN_NOT_FOUND, exit 2, when there is none)."""
    row = book.db.execute("SELECT * FROM replay_runs WHERE id = ?", (run_id.strip(),)).fetchone()
    if row is None:
        raise InputError(
            "REPLAY_RUN_NOT_FOUND",
            f"no replay run {run_id!r}",
            "replay_runs",
            "list the runs with `muse replay runs`",
        )
    return _run(row)


def open_run_of(conn: sqlite3.Connection, set_sha256: str) -> RunRow | None:
    """The newest unfinished run of a set (what `muse replay run SET` resumes), if any."""
    row = conn.execute(
        "SELECT * FROM replay_runs WHERE set_sha256 = ? AND status = 'running' ORDER BY id DESC LIMIT 1",
        (set_sha256,),
    ).fetchone()
    return None if row is None else _run(row)


def runs_of(conn: sqlite3.Connection) -> list[RunRow]:
    """Every replay run, oldest first."""
    return [_run(r) for r in conn.execute("SELECT * FROM replay_runs ORDER BY id")]


def set_run_status(conn: sqlite3.Connection, run_id: str, status: RunStatus) -> None:
    with transaction(conn):
        conn.execute(
            "UPDATE replay_runs SET status = ?, ended_at = CASE WHEN ? = 'running' THEN NULL ELSE ? END WHERE id = ?",
            (status, status, utc_now(), run_id),
        )


def samples_of(conn: sqlite3.Connection, run_id: str) -> dict[tuple[str, Arm], SampleRow]:
    """The run's sample rows by (item, arm)."""
    rows = conn.execute(
        "SELECT run_id, item_id, arm, position, status, write_id, code, detail FROM replay_samples WHERE run_id = ?",
        (run_id,),
    ).fetchall()
    return {(r[1], r[2]): SampleRow(*tuple(r)) for r in rows}


def panels_of(conn: sqlite3.Connection, run_id: str) -> dict[str, PanelRow]:
    """The run's panel rows by item."""
    rows = conn.execute(
        "SELECT run_id, item_id, status, panel_id, code, detail FROM replay_panels WHERE run_id = ?", (run_id,)
    ).fetchall()
    return {r[1]: PanelRow(*tuple(r)) for r in rows}


def forget_unfinished(conn: sqlite3.Connection, run_id: str) -> int:
    """Drop the rows of samples and panels an interrupted process left `running` (they are redone); how many."""
    with transaction(conn):
        n = conn.execute("DELETE FROM replay_samples WHERE run_id = ? AND status = 'running'", (run_id,)).rowcount
        n += conn.execute("DELETE FROM replay_panels WHERE run_id = ? AND status = 'running'", (run_id,)).rowcount
    return n


def start_sample(conn: sqlite3.Connection, run_id: str, item_id: str, arm: Arm, position: int) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO replay_samples (run_id, item_id, arm, position, status, started_at)"
            " VALUES (?, ?, ?, ?, 'running', ?)",
            (run_id, item_id, arm, position, utc_now()),
        )


def end_sample(
    conn: sqlite3.Connection,
    run_id: str,
    item_id: str,
    arm: Arm,
    status: SampleStatus,
    *,
    write_id: str | None = None,
    code: str | None = None,
    detail: str | None = None,
) -> None:
    with transaction(conn):
        conn.execute(
            "UPDATE replay_samples SET status = ?, write_id = ?, code = ?, detail = ?, ended_at = ?"
            " WHERE run_id = ? AND item_id = ? AND arm = ?",
            (status, write_id, code, detail, utc_now(), run_id, item_id, arm),
        )


def start_panel(conn: sqlite3.Connection, run_id: str, item_id: str) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO replay_panels (run_id, item_id, status, started_at) VALUES (?, ?, 'running', ?)",
            (run_id, item_id, utc_now()),
        )


def end_panel(
    conn: sqlite3.Connection,
    run_id: str,
    item_id: str,
    status: PanelStatus,
    *,
    panel_id: str | None = None,
    code: str | None = None,
    detail: str | None = None,
) -> None:
    with transaction(conn):
        conn.execute(
            "UPDATE replay_panels SET status = ?, panel_id = ?, code = ?, detail = ?, ended_at = ?"
            " WHERE run_id = ? AND item_id = ?",
            (status, panel_id, code, detail, utc_now(), run_id, item_id),
        )


class SampleOut(BaseModel):
    """One sample in `muse replay run/status --json`."""

    item_id: str
    chapter: int
    arm: Arm
    position: int
    status: str  # pending / running / done / failed
    write_status: str | None = None  # the writer's end: passed / held_for_author / error / skipped
    write_id: str | None = None
    code: str | None = None
    detail: str | None = None
    candidate_sha256: str | None = None
    manifest_sha256: str | None = None


class PanelOut(BaseModel):
    """One item's panel in `muse replay run/status --json`."""

    item_id: str
    status: str  # pending / running / done / not_run / failed
    panel_id: str | None = None
    panel_status: str | None = None  # stable / invalid / invalid_unstable
    code: str | None = None
    detail: str | None = None


class RunListing(BaseModel):
    """One replay run as `muse replay runs` lists it."""

    id: str
    set_name: str
    set_sha256: str
    kind: str
    mode: str
    arms: list[str]
    status: str
    started_at: str
    ended_at: str | None
    samples: int  # samples that ended (done or failed)
    planned: int  # samples the plan holds (items × arms)
    writer_config_sha256: str


class RunsDoc(BaseModel):
    """`muse replay runs --json`: every replay run, newest first."""

    ok: bool = True
    runs: list[RunListing]


def list_runs(book: Book) -> RunsDoc:
    """Every replay run of the book, newest first, with its set, status and how far its samples got."""
    names = {str(r[0]): str(r[1]) for r in book.db.execute("SELECT sha256, name FROM replay_sets")}
    ended = {
        str(r[0]): int(r[1])
        for r in book.db.execute(
            "SELECT run_id, count(*) FROM replay_samples WHERE status != 'running' GROUP BY run_id"
        )
    }
    out = []
    for row in reversed(runs_of(book.db)):
        items = book.db.execute("SELECT items FROM replay_sets WHERE sha256 = ?", (row.set_sha256,)).fetchone()
        out.append(
            RunListing(
                id=row.id,
                set_name=names.get(row.set_sha256, "?"),
                set_sha256=row.set_sha256,
                kind=row.kind,
                mode=row.mode,
                arms=list(row.arms),
                status=row.status,
                started_at=row.started_at,
                ended_at=row.ended_at,
                samples=ended.get(row.id, 0),
                planned=(int(items[0]) if items else 0) * len(row.arms),
                writer_config_sha256=row.writer_config_sha256,
            )
        )
    return RunsDoc(runs=out)
