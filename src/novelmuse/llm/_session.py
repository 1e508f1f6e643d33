"""ModelSession: one run's access to models — config, providers, budget, concurrency, vault, receipts.

    async with ModelSession.open(book, run_kind="review") as session:     # an entry point (CLI command)
        if session.is_configured("reviewer"):
            result = await session.call(roles.reviewer.REVIEW.render(request))   # services: a TaskCall

Entry points alone open sessions; services get one passed in, so one budget and one deadline cover the
whole command. Opening is free; the run starts at the first call (or `start()`): that creates a `runs` row
(or joins an existing run id), runs the vault recovery pass and pins the price table. Every task a call used
is recorded in `run_tasks` (`tasks_used()`). Providers are built lazily per provider name; each provider's
`asyncio.Semaphore(max_concurrency)` is shared by all sessions of the book in the same event loop.
The session uses its own SQLite connection, so a caller's open transaction never interleaves with
receipt writes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sqlite3
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from ..book import Book
from ..processes import process_alive, process_started
from ..store import StoreWriteError, connect, new_id, transaction, utc_now
from ._bill import RoleBill, role_bill
from ._budget import CallEstimate, RunBudget, estimate_tokens
from ._contexts import ContextWindows
from ._policy import CallContext, NotConfigured, StructuredResult, run_call
from ._prices import PriceTable
from ._providers import create_provider
from ._receipts import interrupt_pending, run_spend, tasks_used
from ._schema import cached_strict_schema
from ._task import TaskCall, TaskRef
from ._types import Provider
from ._vault import RecoveryReport, Vault, VaultError

T = TypeVar("T", bound=BaseModel)
RunStatus = Literal["ok", "failed", "interrupted"]

#: event loop → (book root, provider name) → the provider's concurrency semaphore
_SEMAPHORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


#: This process's start time (recorded with its pid in each run it starts).
_OWN_START = process_started(os.getpid())


def run_is_running(conn: sqlite3.Connection, run_id: str) -> bool:
    """Whether the run's row says it is still running (a missing row counts as not running)."""
    row = conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
    return row is not None and row[0] == "running"


def _dead_runs(conn: sqlite3.Connection) -> list[str]:
    """The runs still `running` whose recorded process is gone (or is another process reusing its pid)."""
    rows = conn.execute("SELECT id, pid, pid_started FROM runs WHERE status = 'running' AND pid IS NOT NULL")
    return [row[0] for row in rows if not process_alive(int(row[1]), row[2])]


def _close_runs(conn: sqlite3.Connection, run_ids: list[str]) -> None:
    if run_ids:
        now = utc_now()
        with transaction(conn):
            conn.executemany(
                "UPDATE runs SET status = 'interrupted', ended_at = ? WHERE id = ? AND status = 'running'",
                [(now, run_id) for run_id in run_ids],
            )


def recover_vault(book: Book, conn: sqlite3.Connection | None = None) -> RecoveryReport:
    """Run the recovery pass for a book (what session start and `muse vault recover` do).

    Besides removing the vault's orphans, what crashed is closed: runs whose process is gone (named by a
    lease, or by the pid and process start time in their row) become `interrupted`; their pending receipts
    become `interrupted` with an unknown cost and their logical calls still `running` become `failed`
    (MODEL_INTERRUPTED) — so nothing crashed reads as running, as ok, or as free.
    """
    own = conn is None
    db = connect(book.db_path) if conn is None else conn
    vault = Vault(book.vault_dir)
    try:
        dead = _dead_runs(db)  # first: the leases of a dead run are then judged crashed in the same pass
        _close_runs(db, dead)
        try:
            report = vault.recover(lambda run_id: run_is_running(db, run_id))
        except OSError as exc:  # a full disk or an I/O error while renaming or removing: nothing is half-done
            raise VaultError(
                "VAULT_IO", f"the recovery pass could not finish ({exc.strerror or exc})", str(vault.root),
                "check that the disk has space and the book directory is writable, then rerun",
            ) from exc  # fmt: skip
        _close_runs(db, report.interrupted_runs)
        report.interrupted_runs = dead + [r for r in report.interrupted_runs if r not in dead]
        unfinished = "SELECT 1 FROM receipts WHERE outcome = 'pending' UNION ALL SELECT 1 FROM model_calls"
        if db.execute(unfinished + " WHERE status = 'running' LIMIT 1").fetchone():
            with transaction(db):
                report.interrupted_attempts = interrupt_pending(db, utc_now())  # the crashed leases' calls too
        return report
    finally:
        vault.close()
        if own:
            db.close()


@dataclass
class _Run:
    """What a started run holds: its own connection, the pinned prices, the vault, the recovery report."""

    conn: sqlite3.Connection
    prices: PriceTable
    vault: Vault
    recovery: RecoveryReport


class ModelSession:
    """One run's access to models (see the module docstring).

    Opening a session costs nothing and writes nothing: the run starts — its row, the vault recovery pass,
    the pinned price table — at the first call or at `start()`, so a command that ends up needing no model
    leaves no run behind. The budget and its deadline count from the opening: they cover the whole command.
    """

    def __init__(
        self,
        book: Book,
        run_kind: str,
        *,
        run_id: str | None = None,
        providers: Mapping[str, Provider] | None = None,
    ):
        self.book = book
        self.run_id = run_id or new_id("run_")
        self.run_kind = run_kind
        self.owns_run = True
        self._budget = RunBudget(book.config.budget)
        self.contexts = ContextWindows.load(book.config.context_windows)
        self._providers: dict[str, Provider] = dict(providers or {})
        self._run: _Run | None = None
        self._failed = False
        self._closed = False

    @classmethod
    def open(
        cls,
        book: Book,
        run_kind: str,
        *,
        run_id: str | None = None,
        providers: Mapping[str, Provider] | None = None,
    ) -> ModelSession:
        """Open a session for one command's run (called by entry points only: CLI commands, replay's orchestrator).

        `run_id` joins an existing run when it starts (its spent tokens and cost, from its receipts, count
        against this session's budget). `providers` injects ready provider objects by provider name (tests use
        it for exact transport behaviours); the others are built from the configuration on first use.
        """
        return cls(book, run_kind, run_id=run_id, providers=providers)

    @property
    def started(self) -> bool:
        """Whether the run has started (its row exists)."""
        return self._run is not None

    def start(self) -> ModelSession:
        """Start the run now (idempotent): create or join its row, recover the vault, pin the prices.

        A service calls it when the run must exist before its first model call (e.g. rows that name the run).
        """
        self._started()
        return self

    def _started(self) -> _Run:
        if self._run is None:
            if self._closed:
                raise RuntimeError("ModelSession is closed")
            self._run = self._begin()
        return self._run

    def _begin(self) -> _Run:
        prices = PriceTable.load(self.book.config.prices)
        conn = connect(self.book.db_path)
        try:
            existing = conn.execute("SELECT status FROM runs WHERE id = ?", (self.run_id,)).fetchone()
            if existing is not None:
                self.owns_run = False
                spent = run_spend(conn, self.run_id)
                self._budget.spent_tokens = (
                    spent.input_tokens + spent.output_tokens + spent.cache_read_tokens + spent.cache_write_tokens
                )
                self._budget.spent_cost = spent.known_cost
                self._budget.cost_unknown = spent.unknown_cost_attempts > 0
            else:
                config = json.dumps(self._run_config(prices), sort_keys=True, ensure_ascii=False)
                with transaction(conn):
                    conn.execute(
                        "INSERT INTO runs (id, kind, started_at, status, config_json, pid, pid_started)"
                        " VALUES (?, ?, ?, 'running', ?, ?, ?)",
                        (self.run_id, self.run_kind, utc_now(), config, os.getpid(), _OWN_START),
                    )
            recovery = recover_vault(self.book, conn)
        except Exception:
            conn.close()
            raise
        return _Run(conn, prices, Vault(self.book.vault_dir), recovery)

    @property
    def budget(self) -> RunBudget:
        """The run's budget: limits, deadline (counted from the opening) and spend, a joined run's included
        (starts the run)."""
        self._started()
        return self._budget

    @property
    def conn(self) -> sqlite3.Connection:
        """The run's own connection (starts the run)."""
        return self._started().conn

    @property
    def prices(self) -> PriceTable:
        """The price table pinned for the run (starts the run)."""
        return self._started().prices

    @property
    def recovery(self) -> RecoveryReport:
        """What the vault recovery pass at the run's start found (starts the run)."""
        return self._started().recovery

    def _run_config(self, prices: PriceTable) -> dict[str, Any]:
        cfg = self.book.config
        return {
            "run_kind": self.run_kind,
            "roles": dict(sorted(cfg.roles.items())),
            "providers": {name: p.kind for name, p in sorted(cfg.providers.items())},
            "max_attempts": cfg.calls.max_attempts,
            "max_output_tokens": cfg.calls.max_output_tokens,
            "budget": cfg.budget.model_dump(),
            "price_table": {"version": prices.version, "sha256": prices.sha256},
            "context_windows": {"version": self.contexts.version, "sha256": self.contexts.sha256},
        }

    def target(self, role: str) -> tuple[str, str] | None:
        """(provider name, full model id) for a role, or None when no model is configured."""
        return self.book.config.role_target(role)

    def is_configured(self, role: str) -> bool:
        """Whether a model is configured for `role` (else the service step is skipped: no model configured)."""
        return self.target(role) is not None

    def provider(self, name: str) -> Provider:
        """The provider named `name`, built on first use."""
        if name not in self._providers:
            config = self.book.config.providers[name]
            self._providers[name] = create_provider(name, config, self.book.root)
        return self._providers[name]

    def _semaphore(self, name: str, provider: Provider) -> asyncio.Semaphore:
        """The provider's concurrency limit, shared by every session of this book in this event loop.

        The limit protects the endpoint, so two sessions running at once (e.g. two arms of a replay)
        share it rather than each getting `max_concurrency` slots.
        """
        per_loop = _SEMAPHORES.setdefault(asyncio.get_running_loop(), {})
        key = (str(self.book.root), name)
        if key not in per_loop:
            per_loop[key] = asyncio.Semaphore(max(1, provider.max_concurrency))
        return per_loop[key]

    async def call(self, task: TaskCall[T]) -> StructuredResult[T]:
        """One logical call under the fail-closed policy; raises ModelCallFailed or NotConfigured.

        The run records `task.ref` (and the correction's ref when a correction is sent) in `run_tasks`.
        """
        if self._closed:
            raise RuntimeError("ModelSession is closed")
        target = self.target(task.role)
        if target is None:
            raise NotConfigured(task.role)
        run = self._started()
        provider_name, model = target
        provider = self.provider(provider_name)
        config = self.book.config.providers[provider_name]
        ctx = CallContext(
            conn=run.conn,
            run_id=self.run_id,
            provider=provider,
            model=model,
            semaphore=self._semaphore(provider_name, provider),
            budget=self._budget,
            prices=run.prices,
            vault=run.vault,
            max_attempts=self.book.config.calls.max_attempts,
            max_output_tokens=task.max_output_tokens or self.book.config.calls.max_output_tokens,
            timeout_s=config.timeout_s,
            context_window=self.contexts.window(provider_name, model),
        )
        try:
            return await run_call(ctx, task)
        except BaseException:
            self._failed = True
            raise

    def estimate(self, task: TaskCall[T]) -> CallEstimate:
        """What one call of `task` would send, before anything is sent (the run is not started): the upper bound of
        its input tokens the budget reserves, its output cap, its worst-case cost and its model's context window.
        `CallEstimate.refusal(book.config.budget)` says whether the policy could ever send it. NotConfigured when
        no model is configured for the task's role."""
        target = self.target(task.role)
        if target is None:
            raise NotConfigured(task.role)
        provider, model = target
        json_schema, _ = cached_strict_schema(task.schema)
        input_tokens = estimate_tokens(task.messages, json_schema)
        max_output = task.max_output_tokens or self.book.config.calls.max_output_tokens
        prices = self._run.prices if self._run is not None else PriceTable.load(self.book.config.prices)
        return CallEstimate(
            role=task.role,
            provider=provider,
            model=model,
            input_tokens=input_tokens,
            max_output_tokens=max_output,
            cost=prices.worst_case_cost(model, input_tokens, max_output),
            context_window=self.contexts.window(provider, model),
        )

    def bill(self, task: TaskCall[Any], calls: int = 1, *, extra_input_tokens: int = 0) -> RoleBill:
        """The most `calls` logical calls like `task` may use (see `llm._bill`), before anything is sent;
        `extra_input_tokens` covers input the rendered `task` does not hold yet (a draft still to be written).
        NotConfigured when no model is configured for the task's role."""
        estimate = self.estimate(task)
        if extra_input_tokens:
            estimate = dataclasses.replace(estimate, input_tokens=estimate.input_tokens + extra_input_tokens)
        prices = self._run.prices if self._run is not None else PriceTable.load(self.book.config.prices)
        return role_bill(estimate, calls, self.book.config.calls.max_attempts, prices.worst_case_cost)

    def spent_so_far(self) -> str:
        """What this run has spent so far, for a progress line: calls and cost (unknown when a model has no
        price) — the figures `muse cost --run` gives."""
        if self._run is None:
            return "0 calls, spent 0"
        line = run_spend(self._run.conn, self.run_id)
        cost = "unknown" if line.cost is None else f"{line.cost:.4f}"
        return f"{line.calls} call(s), spent {cost}"

    def tasks_used(self) -> list[TaskRef]:
        """The role tasks this run has used so far, each once, in the order of their first use."""
        return tasks_used(self._run.conn, self.run_id) if self._run is not None else []

    async def aclose(self, status: RunStatus | None = None, *, quiet: bool = False) -> None:
        """Close providers and end the run row, if the run started (ok, or failed when a call failed; `status`
        overrides; `quiet`: an exception is propagating, see `_end_run`)."""
        if self._closed:
            return
        self._closed = True
        try:
            for provider in self._providers.values():
                await provider.aclose()
        finally:
            run = self._run
            if run is not None:
                try:
                    if self.owns_run:
                        self._end_run(run.conn, status or ("failed" if self._failed else "ok"), quiet=quiet)
                finally:
                    run.vault.close()
                    run.conn.close()

    def _end_run(self, conn: sqlite3.Connection, final: RunStatus, *, quiet: bool) -> None:
        """Record the run's end, and close as interrupted any attempt an exception cut off (Ctrl-C). With `quiet`
        (an exception is already on its way out) a store that refuses the write is left for recovery: the run
        stays `running` until the next run sees its process gone."""
        now = utc_now()
        try:
            with transaction(conn):
                conn.execute("UPDATE runs SET status = ?, ended_at = ? WHERE id = ?", (final, now, self.run_id))
                interrupt_pending(conn, now)
        except (sqlite3.Error, StoreWriteError):
            if not quiet:
                raise

    async def __aenter__(self) -> ModelSession:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        status: RunStatus | None = None
        if exc_type is not None:
            is_interrupt = issubclass(exc_type, (KeyboardInterrupt, asyncio.CancelledError))
            status = "interrupted" if is_interrupt else "failed"
        await self.aclose(status, quiet=exc_type is not None)
