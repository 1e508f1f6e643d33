"""ModelSession: one run's access to models — config, providers, budget, concurrency, vault, receipts.

    async with ModelSession.open(book, run_kind="review") as session:
        if session.is_configured("reviewer"):
            result = await session.call(role="reviewer", schema=Review, messages=[...],
                                        contracts=[quotes_found], prompt_sha256=template.sha256)

Opening a session creates a `runs` row (or joins an existing run id), runs the vault recovery
pass, and pins the price table. Providers are built lazily per provider name; each provider's
`asyncio.Semaphore(max_concurrency)` is shared by all sessions of the book in the same event loop.
The session uses its own SQLite connection, so a caller's open transaction never interleaves with
receipt writes.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import weakref
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from ..book import Book
from ..store import connect, new_id, transaction, utc_now
from ._budget import RunBudget
from ._policy import CallContext, Contract, NotConfigured, StructuredResult, correction_template_sha256, run_call
from ._prices import PriceTable
from ._providers import create_provider
from ._types import Message, Provider
from ._vault import RecoveryReport, Vault

T = TypeVar("T", bound=BaseModel)
RunStatus = Literal["ok", "failed", "interrupted"]

#: event loop → (book root, provider name) → the provider's concurrency semaphore
_SEMAPHORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def run_is_running(conn: sqlite3.Connection, run_id: str) -> bool:
    """Whether the run's row says it is still running (a missing row counts as not running)."""
    row = conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
    return row is not None and row[0] == "running"


def recover_vault(book: Book, conn: sqlite3.Connection | None = None) -> RecoveryReport:
    """Run the vault recovery pass for a book (what session start and `muse vault recover` do).

    Besides removing orphans, the rows of what crashed are closed: its logical calls still `running`
    become `failed` with MODEL_INTERRUPTED, and runs whose lease holder process is gone become
    `interrupted` — so no crashed call or run reads as still running, or as ok.
    """
    own = conn is None
    db = connect(book.db_path) if conn is None else conn
    vault = Vault(book.vault_dir)
    try:
        report = vault.recover(lambda run_id: run_is_running(db, run_id))
        if report.recovered_calls or report.interrupted_runs:
            now = utc_now()
            with transaction(db):
                for call_id in report.recovered_calls:
                    db.execute(
                        "UPDATE model_calls SET status = 'failed', error_code = 'MODEL_INTERRUPTED', ended_at = ?"
                        " WHERE id = ? AND status = 'running'",
                        (now, call_id),
                    )
                for run_id in report.interrupted_runs:
                    db.execute(
                        "UPDATE runs SET status = 'interrupted', ended_at = ? WHERE id = ? AND status = 'running'",
                        (now, run_id),
                    )
        return report
    finally:
        vault.close()
        if own:
            db.close()


class ModelSession:
    """The model layer's entry point for one run (see the module docstring)."""

    def __init__(self, book: Book, run_id: str, conn: sqlite3.Connection, *, owns_run: bool, run_kind: str):
        self.book = book
        self.run_id = run_id
        self.run_kind = run_kind
        self.conn = conn
        self.owns_run = owns_run
        self.prices = PriceTable.load(book.config.prices)
        self.budget = RunBudget(book.config.budget)
        self.vault = Vault(book.vault_dir)
        self.recovery = RecoveryReport()
        self._providers: dict[str, Provider] = {}
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
        """Open a session: create (or join) the run row, recover the vault, pin prices and budget.

        Joining an existing `run_id` carries the run's spent tokens and cost (from its receipts) into
        this session's budget; the deadline counts from this session's start. `providers` injects
        ready provider objects by provider name (tests use it for exact transport behaviours); the
        others are built from the configuration on first use.
        """
        conn = connect(book.db_path)
        owns = True
        rid = run_id or new_id("run_")
        existing = conn.execute("SELECT status FROM runs WHERE id = ?", (rid,)).fetchone()
        session: ModelSession
        if existing is not None:
            owns = False
            session = cls(book, rid, conn, owns_run=owns, run_kind=run_kind)
            row = conn.execute(
                "SELECT COALESCE(SUM(COALESCE(input_tokens,0)+COALESCE(output_tokens,0)+COALESCE(cache_read_tokens,0)"
                "+COALESCE(cache_write_tokens,0)),0), COALESCE(SUM(cost),0), "
                "SUM(CASE WHEN cost IS NULL AND outcome != 'refused' THEN 1 ELSE 0 END) FROM receipts WHERE run_id = ?",
                (rid,),
            ).fetchone()
            session.budget.spent_tokens = int(row[0])
            session.budget.spent_cost = float(row[1])
            session.budget.cost_unknown = bool(row[2])
        else:
            session = cls(book, rid, conn, owns_run=owns, run_kind=run_kind)
            with transaction(conn):
                conn.execute(
                    "INSERT INTO runs (id, kind, started_at, status, config_json) VALUES (?, ?, ?, 'running', ?)",
                    (rid, run_kind, utc_now(), json.dumps(session._run_config(), sort_keys=True, ensure_ascii=False)),
                )
        session._providers.update(providers or {})
        try:
            session.recovery = recover_vault(book, conn)
        except Exception:
            conn.close()
            raise
        return session

    def _run_config(self) -> dict[str, Any]:
        cfg = self.book.config
        return {
            "run_kind": self.run_kind,
            "roles": dict(sorted(cfg.roles.items())),
            "providers": {name: p.kind for name, p in sorted(cfg.providers.items())},
            "max_attempts": cfg.calls.max_attempts,
            "max_output_tokens": cfg.calls.max_output_tokens,
            "budget": cfg.budget.model_dump(),
            "price_table": {"version": self.prices.version, "sha256": self.prices.sha256},
            "correction_template_sha256": correction_template_sha256(),
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

    async def call(
        self,
        role: str,
        schema: type[T],
        messages: Sequence[Message],
        contracts: Sequence[Contract[T]] = (),
        prompt_sha256: str | None = None,
        *,
        max_output_tokens: int | None = None,
        schema_name: str | None = None,
    ) -> StructuredResult[T]:
        """One logical call under the fail-closed policy; raises ModelCallFailed or NotConfigured."""
        if self._closed:
            raise RuntimeError("ModelSession is closed")
        target = self.target(role)
        if target is None:
            raise NotConfigured(role)
        provider_name, model = target
        provider = self.provider(provider_name)
        config = self.book.config.providers[provider_name]
        ctx = CallContext(
            conn=self.conn,
            run_id=self.run_id,
            role=role,
            provider=provider,
            model=model,
            semaphore=self._semaphore(provider_name, provider),
            budget=self.budget,
            prices=self.prices,
            vault=self.vault,
            max_attempts=self.book.config.calls.max_attempts,
            max_output_tokens=max_output_tokens or self.book.config.calls.max_output_tokens,
            timeout_s=config.timeout_s,
        )
        try:
            return await run_call(ctx, schema, messages, contracts, prompt_sha256, schema_name)
        except BaseException:
            self._failed = True
            raise

    async def aclose(self, status: RunStatus | None = None) -> None:
        """Close providers and end the run row (ok, or failed when a call failed; `status` overrides)."""
        if self._closed:
            return
        self._closed = True
        try:
            for provider in self._providers.values():
                await provider.aclose()
        finally:
            if self.owns_run:
                final = status or ("failed" if self._failed else "ok")
                with transaction(self.conn):
                    self.conn.execute(
                        "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?", (final, utc_now(), self.run_id)
                    )
            self.vault.close()
            self.conn.close()

    async def __aenter__(self) -> ModelSession:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        status: RunStatus | None = None
        if exc_type is not None:
            is_interrupt = issubclass(exc_type, (KeyboardInterrupt, asyncio.CancelledError))
            status = "interrupted" if is_interrupt else "failed"
        await self.aclose(status)
