"""The fail-closed call policy: one logical call = at most `calls.max_attempts` requests.

How each attempt ends (seed 000, 正文回放; seed 003, 任一异常失败关闭):

* **accepted** — all of: no ProviderError; `is_error` false; the resolved model equals the requested
  full id; usage present; finish == "stop"; the text parses as JSON, validates against the schema and
  passes every contract.
* **correct** (a returned draft rejected by a local, stable check; its cost is known) — the next
  attempt carries the original messages, the draft as an assistant message and the exact reasons as a
  user message: MODEL_OUTPUT_NOT_JSON, MODEL_SCHEMA_INVALID, contract Violation codes, and
  MODEL_TRUNCATED (a truncated draft is a returned draft with known cost that failed a local check;
  the correction asks for a complete, more concise object — resending the same input would just be
  truncated again). Only the latest draft is carried, so the input does not grow per round.
* **resend** — a ProviderError with ``transient and cost_known``: the same request again, no correction. Its
  receipt's cost is 0 (an error response bills no tokens) whatever the price table says; a failure whose cost is
  unknown (a timeout or a connection lost after sending) is never resent.
* **stop** (never retried) — any other ProviderError (MODEL_AUTH, MODEL_INVALID_REQUEST, MODEL_KEY_MISSING,
  MODEL_SCRIPT_EXHAUSTED, a transient error of unknown cost…), MODEL_ERROR_FLAG, MODEL_MISMATCH,
  MODEL_USAGE_MISSING (the attempt's cost cannot be accounted: 成本未知不重试), MODEL_USAGE_INVALID (a token
  count that is negative or over `limits.MAX_USAGE_TOKENS`: its cost is unknown too), MODEL_FILTERED (the
  provider's policy, not a format problem), any other finish (MODEL_BAD_FINISH), and refusals before
  sending: MODEL_COST_UNKNOWN, BUDGET_EXCEEDED.

Corrections and resends share one bound; reaching it, or a stop, raises `ModelCallFailed` carrying
the receipts and failure-safe diagnostics (codes and counts only). Never a default value.

Write-ahead: an attempt that passed the budget is committed as a `pending` receipt (with the call's row on the
first attempt) before its lease, its request and its send; its end completes that same row. A crash in between
leaves the pending receipt for recovery to close as interrupted (cost unknown).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import FailedClosed, InputError
from ..errors import Outcome as CommandOutcome
from ..iopoints import point
from ..limits import MAX_USAGE_TOKENS
from ..store import new_id, utc_now
from ..text import canonical_json, sha256_hex, sha256_json
from ._budget import Reservation, RunBudget, context_refusal, estimate_input_tokens
from ._prices import PriceTable
from ._receipts import CallEnd, CallStart, Outcome, Receipt, end_call, write_receipt
from ._schema import cached_strict_schema
from ._task import TaskCall, TaskRef
from ._types import Contract, Provider, ProviderError, ProviderRequest, ProviderResponse, Usage, Violation
from ._usage import invalid_counts
from ._vault import Lease, Vault, VaultError

T = TypeVar("T", bound=BaseModel)


class ModelCallFailed(FailedClosed):
    """A logical call failed closed (exit 3): `.code`, `.diagnostics` (codes and counts), `.receipts`, and `.tasks`
    (the role tasks the call rendered: its own, and the correction when one was sent)."""

    def __init__(
        self,
        code: str,
        what: str,
        where: str = "",
        fix: str = "",
        *,
        diagnostics: dict[str, Any] | None = None,
        receipts: Sequence[Receipt] = (),
        call_id: str = "",
        tasks: Sequence[TaskRef] = (),
    ):
        super().__init__(code, what, where, fix)
        self.diagnostics: dict[str, Any] = diagnostics or {}
        self.receipts: list[Receipt] = list(receipts)
        self.call_id = call_id
        self.tasks: list[TaskRef] = list(tasks)


class NotConfigured(InputError):
    """The role has no model configured (code MODEL_NOT_CONFIGURED, exit 4: not evaluated — skip is not pass);
    services skip instead of calling."""

    outcome: CommandOutcome = "not_evaluated"

    def __init__(self, role: str):
        super().__init__(
            "MODEL_NOT_CONFIGURED",
            f"no model is configured for role {role!r}",
            "book.toml [roles]",
            f'add `{role} = "provider:full-model-id"` or a `default` role',
        )
        self.role = role


@dataclass
class StructuredResult(Generic[T]):
    """An accepted structured output, the receipts of every attempt that led to it, and the role tasks it used
    (its own, and the correction when one was sent)."""

    value: T
    receipts: list[Receipt]
    call_id: str
    input_tokens: int
    output_tokens: int
    cost: float | None  # None when any attempt's cost is unknown
    output_sha256: str = ""
    tasks: list[TaskRef] = field(default_factory=list)

    @property
    def attempts(self) -> int:
        """How many attempts the call took (including refused ones)."""
        return len(self.receipts)

    @property
    def final_receipt(self) -> Receipt:
        """The receipt of the attempt whose output was accepted."""
        return self.receipts[-1]


Action = Literal["accept", "correct", "resend", "stop"]


@dataclass
class _Judgement:
    action: Action
    code: str | None = None
    reasons: list[str] = field(default_factory=list)  # exact reasons for the correction message
    draft: str = ""
    violations: list[Violation] = field(default_factory=list)
    detail_counts: dict[str, int] = field(default_factory=dict)
    value: BaseModel | None = None


def _strip_fence(text: str) -> str:
    """Remove one Markdown code fence wrapping the whole reply (```json … ```), nothing else."""
    stripped = text.strip()
    if len(stripped) >= 6 and stripped.startswith("```") and stripped.endswith("```"):
        inner = stripped[3:-3]
        first, sep, rest = inner.partition("\n")
        if sep and first.strip().isalnum():  # a language tag such as ```json
            return rest
        return inner
    return text


def judge_response(
    response: ProviderResponse,
    requested_model: str,
    schema: type[T],
    contracts: Sequence[Contract[T]],
    max_output_tokens: int,
) -> _Judgement:
    """Decide what one returned response means (accept / correct / stop) — see the module docstring."""
    draft = response.text or ""
    if response.is_error:
        return _Judgement("stop", "MODEL_ERROR_FLAG")
    if response.resolved_model != requested_model:
        return _Judgement("stop", "MODEL_MISMATCH")
    if response.usage is None:
        return _Judgement("stop", "MODEL_USAGE_MISSING")
    if response.finish == "length":
        reason = (
            f"[MODEL_TRUNCATED] 输出在 max_output_tokens={max_output_tokens} 处被截断 / the output was cut at the "
            "token limit: reply with a complete, more concise JSON object"
        )
        return _Judgement("correct", "MODEL_TRUNCATED", [reason], draft)
    if response.finish == "filtered":
        return _Judgement("stop", "MODEL_FILTERED")
    if response.finish != "stop":
        return _Judgement("stop", "MODEL_BAD_FINISH")
    try:
        data = json.loads(_strip_fence(draft))
    except json.JSONDecodeError as exc:
        reason = (
            f"[MODEL_OUTPUT_NOT_JSON] 不是合法 JSON / not valid JSON: {exc.msg} (line {exc.lineno}, col {exc.colno})"
        )
        return _Judgement("correct", "MODEL_OUTPUT_NOT_JSON", [reason], draft)
    try:
        value = schema.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        reasons = [
            f"[MODEL_SCHEMA_INVALID] {'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in errors[:30]
        ]
        if len(errors) > 30:
            reasons.append(f"[MODEL_SCHEMA_INVALID] … and {len(errors) - 30} more schema errors")
        return _Judgement(
            "correct", "MODEL_SCHEMA_INVALID", reasons, draft, detail_counts={"schema_errors": len(errors)}
        )
    violations: list[Violation] = []
    for check in contracts:
        violations.extend(check(value))
    if violations:
        reasons = [f"[{v.code}] {v.detail}" if v.detail else f"[{v.code}]" for v in violations]
        return _Judgement("correct", violations[0].code, reasons, draft, violations)
    return _Judgement("accept", value=value)


@dataclass
class CallContext:
    """Everything one logical call needs from its session."""

    conn: sqlite3.Connection
    run_id: str
    provider: Provider
    model: str
    semaphore: asyncio.Semaphore
    budget: RunBudget
    prices: PriceTable
    vault: Vault
    max_attempts: int
    max_output_tokens: int
    timeout_s: float
    context_window: int | None = None  # tokens (input + output) one request may hold; None = unknown


@dataclass
class _Sent:
    """What one sent attempt got: a response or a classified error, the raw response's sha256, the latency, and
    the response's cost (None: unknown)."""

    response: ProviderResponse | None
    error: ProviderError | None
    response_sha256: str
    latency_ms: float
    cost: float | None = None


class _Attempts:
    """The record of one logical call: a receipt per attempt, the call's row, and its failure-safe diagnostics.

    The call's row and the run's first use of its task go in with the first receipt (pending or refused); the
    task refs queued with `uses` (the correction) with the next one. `begin` commits an attempt's pending receipt
    before it is sent; `record` completes it (or inserts a refused one). `failed` ends the call row and returns
    the exception to raise.
    """

    def __init__(self, ctx: CallContext, call: TaskCall[Any], call_id: str, schema_sha256: str):
        self.ctx = ctx
        self.call_id = call_id
        self.role = call.role
        self.prompt_sha256 = call.ref.prompt_sha256
        self.schema_sha256 = schema_sha256
        self.receipts: list[Receipt] = []
        self.codes: Counter[str] = Counter()
        self.violations: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self._start: CallStart | None = CallStart(
            call_id=call_id,
            run_id=ctx.run_id,
            role=call.role,
            provider=ctx.provider.name,
            provider_kind=ctx.provider.kind,
            requested_model=ctx.model,
            schema_name=call.wire_schema_name,
            schema_sha256=schema_sha256,
            prompt_sha256=call.ref.prompt_sha256,
            started_at=utc_now(),
        )
        self._unwritten: list[TaskRef] = [call.ref]  # not yet in run_tasks
        self.tasks: list[TaskRef] = [call.ref]  # every task the call used
        self._pending: dict[int, Receipt] = {}  # attempt → its pending receipt, committed before sending

    def uses(self, ref: TaskRef) -> None:
        """Record the call's (and the run's) use of `ref`, with the next receipt."""
        if ref not in self.tasks:
            self.tasks.append(ref)
            self._unwritten.append(ref)

    def diagnostics(self, bound_reached: bool) -> dict[str, Any]:
        """Codes and counts only (never content): what a receipt-reader may see of the whole call."""
        return {
            "attempts": len(self.receipts),
            "max_attempts": self.ctx.max_attempts,
            "codes": dict(sorted(self.codes.items())),
            "violations": dict(sorted(self.violations.items())),
            "counts": dict(sorted(self.counts.items())),
            "bound_reached": bound_reached,
        }

    def begin(self, attempt: int, request_sha: str, started: str) -> None:
        """Commit the attempt's `pending` receipt (write-ahead: before its lease, request and send)."""
        ctx = self.ctx
        rec = Receipt(
            id=new_id("rcpt_"), call_id=self.call_id, attempt=attempt, run_id=ctx.run_id, role=self.role,
            provider=ctx.provider.name, provider_kind=ctx.provider.kind, requested_model=ctx.model,
            resolved_model=None, outcome="pending", error_code=None, request_sha256=request_sha,
            response_sha256=None, prompt_sha256=self.prompt_sha256, schema_sha256=self.schema_sha256,
            input_tokens=None, output_tokens=None, cache_read_tokens=None, cache_write_tokens=None, cost=None,
            price_table_sha256=ctx.prices.sha256, latency_ms=None, started_at=started, ended_at=None,
        )  # fmt: skip
        write_receipt(ctx.conn, rec, start=self._start, tasks=self._unwritten)
        self._start, self._unwritten = None, []
        self._pending[attempt] = rec

    def record(
        self,
        attempt: int,
        outcome: Outcome,
        code: str | None,
        request_sha: str,
        started: str,
        *,
        response: ProviderResponse | None = None,
        response_sha: str | None = None,
        cost: float | None = None,
        latency_ms: float | None = None,
        diag: dict[str, Any] | None = None,
        accepted_sha: str | None = None,
        sandbox: str | None = None,
    ) -> Receipt:
        """Write the receipt of one attempt — completing its pending receipt when it was sent — and, for the
        accepted one, the call's outcome in the same transaction."""
        ctx = self.ctx
        pending = self._pending.pop(attempt, None)
        usage = response.usage if response is not None else None
        if outcome == "refused":  # never sent: nothing used, a known zero cost
            usage, cost = Usage(0, 0), 0.0
        rec = Receipt(
            id=pending.id if pending is not None else new_id("rcpt_"),
            call_id=self.call_id,
            attempt=attempt,
            run_id=ctx.run_id,
            role=self.role,
            provider=ctx.provider.name,
            provider_kind=ctx.provider.kind,
            requested_model=ctx.model,
            resolved_model=response.resolved_model if response is not None else None,
            outcome=outcome,
            error_code=code,
            request_sha256=request_sha,
            response_sha256=response_sha,
            prompt_sha256=self.prompt_sha256,
            schema_sha256=self.schema_sha256,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
            cache_read_tokens=usage.cache_read_tokens if usage else None,
            cache_write_tokens=usage.cache_write_tokens if usage else None,
            cost=cost,
            price_table_sha256=ctx.prices.sha256,
            latency_ms=latency_ms,
            started_at=pending.started_at if pending is not None else started,
            ended_at=utc_now(),
            sandbox=response.sandbox if response is not None else sandbox,
            diagnostics=diag or {},
        )
        self.receipts.append(rec)
        if code:
            self.codes[code] += 1
        end = None
        if accepted_sha is not None:
            ended = rec.ended_at or utc_now()
            end = CallEnd("ok", None, len(self.receipts), rec.id, accepted_sha, self.diagnostics(False), ended)
        write_receipt(
            ctx.conn, rec, start=self._start, end=end, tasks=self._unwritten, completes_pending=pending is not None
        )
        self._start, self._unwritten = None, []
        return rec

    def failed(self, code: str, what: str, fix: str, *, bound_reached: bool = False) -> ModelCallFailed:
        """End the call's row as failed; the exception to raise (with the receipts and the diagnostics)."""
        diag = self.diagnostics(bound_reached)
        end_call(self.ctx.conn, self.call_id, CallEnd("failed", code, len(self.receipts), None, None, diag, utc_now()))
        return ModelCallFailed(
            code,
            what,
            f"role {self.role} ({self.ctx.provider.name}:{self.ctx.model}), call {self.call_id}",
            fix,
            diagnostics=diag,
            receipts=self.receipts,
            call_id=self.call_id,
            tasks=self.tasks,
        )


async def run_call(ctx: CallContext, call: TaskCall[T]) -> StructuredResult[T]:
    """Run one logical call under the policy; return the accepted value or raise ModelCallFailed.

    Each attempt ends in exactly one of: refused (raise), a provider error (resend or raise), accepted
    (return), or a rejected draft (correct or raise) — see the module docstring.
    """
    if not call.messages:
        raise InputError("MODEL_NO_MESSAGES", "a model call needs at least one message", f"role {call.role}")
    json_schema, schema_sha = cached_strict_schema(call.schema)  # shared read-only: providers copy before changing it
    record = _Attempts(ctx, call, new_id("call_"), schema_sha)
    messages = call.messages
    for attempt in range(1, ctx.max_attempts + 1):
        request = ProviderRequest(
            provider=ctx.provider.name,
            model=ctx.model,
            messages=list(messages),
            schema_name=call.wire_schema_name,
            json_schema=json_schema,
            max_output_tokens=ctx.max_output_tokens,
            timeout_s=ctx.timeout_s,
            role=call.role,
        )
        request_bytes = canonical_json(request.canonical()).encode("utf-8")
        request_sha = sha256_hex(request_bytes)
        started = utc_now()
        if ctx.budget.has_limits and ctx.prices.price(ctx.model) is None:
            record.record(attempt, "refused", "MODEL_COST_UNKNOWN", request_sha, started)
            raise record.failed(
                "MODEL_COST_UNKNOWN",
                f"model {ctx.model!r} has no price, so its cost is unknown while the run has a budget",
                f'add [prices."{ctx.model}"] input/output per million tokens to book.toml, or remove [budget]',
            )
        sent = await _send_attempt(ctx, record, request, request_bytes, attempt, request_sha, started)
        if isinstance(sent, ModelCallFailed):  # refused before sending (budget, vault), or the vault lost the response
            raise sent
        if sent.error is not None:
            error = sent.error
            if error.transient and error.cost_known and attempt < ctx.max_attempts:
                continue  # resend the same input
            # the provider's message is novelmuse's own text (status, URL, path, pin): never a body, content or key
            if error.transient and error.cost_known:
                raise record.failed(
                    error.code,
                    f"{error}; still failing after the bound of {ctx.max_attempts} requests",
                    error.fix or "retry later; check the provider's status",
                    bound_reached=True,
                )
            fix = error.fix or _fix_for(error.code)
            raise record.failed(error.code, f"the provider failed ({error}); not retried", fix)
        assert sent.response is not None
        response, cost = sent.response, sent.cost
        try:
            judgement = judge_response(response, ctx.model, call.schema, call.contracts, ctx.max_output_tokens)
        except Exception:
            record.record(
                attempt, "failed", "CONTRACT_ERROR", request_sha, started,
                response=response, response_sha=sent.response_sha256, cost=cost, latency_ms=sent.latency_ms,
            )  # fmt: skip
            record.failed("CONTRACT_ERROR", "a contract check raised an exception", "this is a bug in novelmuse")
            raise
        if judgement.action == "accept":
            assert judgement.value is not None
            value: T = judgement.value  # type: ignore[assignment]
            out_sha = sha256_json(value.model_dump(mode="json"))
            record.record(
                attempt, "ok", None, request_sha, started, response=response, response_sha=sent.response_sha256,
                cost=cost, latency_ms=sent.latency_ms, accepted_sha=out_sha,
            )  # fmt: skip
            return _result(value, record, out_sha)
        vcounts = Counter(v.code for v in judgement.violations)
        record.violations.update(vcounts)
        record.counts.update(judgement.detail_counts)
        diag: dict[str, Any] = {"violations": dict(sorted(vcounts.items()))} if vcounts else {}
        diag.update(judgement.detail_counts)
        assert judgement.code is not None
        record.record(
            attempt, "failed", judgement.code, request_sha, started, response=response,
            response_sha=sent.response_sha256, cost=cost, latency_ms=sent.latency_ms, diag=diag,
        )  # fmt: skip
        if judgement.action == "stop":
            what = f"the model's response was not acceptable ({judgement.code}); not retried"
            raise record.failed(judgement.code, what, _fix_for(judgement.code))
        if attempt == ctx.max_attempts:
            raise record.failed(
                judgement.code,
                f"the output still failed its checks after {ctx.max_attempts} requests",
                "`muse calls show --last` prints each attempt and the model's raw answer",
                bound_reached=True,
            )
        # correct: the original messages, the latest draft and the exact reasons (the input does not grow per round)
        messages = (*call.messages, *call.correction.messages(judgement.draft, judgement.reasons))
        record.uses(call.correction.ref)
    raise AssertionError("unreachable: the last attempt always returns or raises")


def _result(value: T, record: _Attempts, output_sha256: str) -> StructuredResult[T]:
    receipts = record.receipts
    costs = [r.cost for r in receipts]
    return StructuredResult(
        value=value,
        receipts=list(receipts),
        call_id=record.call_id,
        input_tokens=sum(r.input_tokens or 0 for r in receipts),
        output_tokens=sum(r.output_tokens or 0 for r in receipts),
        cost=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
        output_sha256=output_sha256,
        tasks=list(record.tasks),
    )


async def _send_attempt(
    ctx: CallContext,
    record: _Attempts,
    request: ProviderRequest,
    request_bytes: bytes,
    attempt: int,
    request_sha: str,
    started: str,
) -> _Sent | ModelCallFailed:
    """Reserve the budget, vault the request, send it once, vault the raw response, settle the budget.

    A provider error's receipt is written here. A refusal (budget, vault) is recorded here and returned as the
    failure for the loop to raise.
    """
    async with ctx.semaphore:
        est_in = estimate_input_tokens(request)
        too_big = context_refusal(ctx.model, est_in + ctx.max_output_tokens, ctx.context_window)
        if too_big is not None:  # the endpoint would refuse it (or cut it): never sent
            record.record(attempt, "refused", "MODEL_CONTEXT_EXCEEDED", request_sha, started)
            return record.failed(
                "MODEL_CONTEXT_EXCEEDED",
                f"the request was not sent: {too_big}",
                "shorten the chapter (or what the request carries), lower calls.max_output_tokens, or use a model "
                "with a larger context ([context_windows] in book.toml if the endpoint's window is larger)",
            )
        worst_cost = ctx.prices.worst_case_cost(ctx.model, est_in, ctx.max_output_tokens)
        reservation = ctx.budget.reserve(est_in + ctx.max_output_tokens, worst_cost)
        if isinstance(reservation, str):
            record.record(attempt, "refused", "BUDGET_EXCEEDED", request_sha, started)
            return record.failed(
                "BUDGET_EXCEEDED",
                f"the request was not sent: {reservation}",
                "raise the [budget] limits in book.toml or run on fewer chapters",
            )
        remaining = ctx.budget.remaining_s()
        if remaining is not None and remaining < request.timeout_s:
            request = replace(request, timeout_s=max(remaining, 0.001))
        try:
            record.begin(attempt, request_sha, started)
        except FailedClosed:
            ctx.budget.settle(reservation, 0, 0.0)  # nothing was sent
            raise
        try:
            lease = ctx.vault.lease(record.call_id, attempt, ctx.run_id)
        except VaultError as exc:
            ctx.budget.settle(reservation, 0, 0.0)
            record.record(attempt, "refused", exc.code, request_sha, started)
            return _caused(record.failed(exc.code, f"the raw vault refused the lease: {exc.what}", exc.fix), exc)
        try:
            sending = (request, request_bytes, request_sha)
            sent = await _exchange(ctx, record, lease, sending, reservation, attempt, started)
        finally:
            lease.close()
    if isinstance(sent, ModelCallFailed):
        return sent
    if sent.response is not None and sent.response.usage is not None and (bad := invalid_counts(sent.response.usage)):
        # a count no attempt can have: the usage, and so the cost, is unknown; never stored as a count, never resent
        what = f"token usage outside 0–{MAX_USAGE_TOKENS:,} ({', '.join(bad)})"
        sent.error = ProviderError("MODEL_USAGE_INVALID", what, transient=False, cost_known=False)
        sent.response = None
    if sent.error is not None:
        error = sent.error
        # a failed request whose cost is known billed no tokens: its cost is 0 whatever the price table says (seed
        # 000: only such a trusted-cost failure is resent); otherwise the worst case stays spent and the cost unknown
        err_cost = 0.0 if error.cost_known else None
        ctx.budget.settle(reservation, 0 if error.cost_known else None, err_cost)
        diag: dict[str, Any] = {"status": error.status} if error.status is not None else {}
        record.record(
            attempt, "failed", error.code, request_sha, started, response_sha=sent.response_sha256,
            cost=err_cost, latency_ms=sent.latency_ms, diag=diag, sandbox=error.sandbox,
        )  # fmt: skip
        return sent
    assert sent.response is not None
    usage = sent.response.usage
    sent.cost = ctx.prices.cost(sent.response.resolved_model or ctx.model, usage)
    tokens = (
        None
        if usage is None
        else usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    )
    ctx.budget.settle(reservation, tokens, sent.cost)
    return sent


async def _exchange(
    ctx: CallContext,
    record: _Attempts,
    lease: Lease,
    sending: tuple[ProviderRequest, bytes, str],
    reservation: Reservation,
    attempt: int,
    started: str,
) -> _Sent | ModelCallFailed:
    """Vault the request, send it once, vault the raw response (a vault refusal is recorded and returned).

    `sending`: the request, its canonical bytes (what the vault keeps) and their sha256.
    """
    request, request_bytes, request_sha = sending
    try:
        lease.put(request_bytes)
    except VaultError as exc:
        ctx.budget.settle(reservation, 0, 0.0)
        record.record(attempt, "refused", exc.code, request_sha, started)
        return _caused(record.failed(exc.code, f"the raw vault refused the request: {exc.what}", exc.fix), exc)
    t0 = time.perf_counter()
    response: ProviderResponse | None = None
    error: ProviderError | None = None
    try:
        point("send", f"{ctx.provider.name}:{ctx.model} {request_sha}")
        response = await ctx.provider.send(request)
    except ProviderError as exc:
        error = exc
    except asyncio.CancelledError:
        latency = (time.perf_counter() - t0) * 1000
        ctx.budget.settle(reservation, None, None)
        with contextlib.suppress(VaultError):
            lease.complete()
        record.record(attempt, "failed", "MODEL_CANCELLED", request_sha, started, latency_ms=latency)
        record.failed("MODEL_CANCELLED", "the call was cancelled", "")
        raise
    except Exception as exc:  # an unclassified provider failure: never retried
        error = ProviderError("MODEL_PROVIDER_ERROR", type(exc).__name__, transient=False, cost_known=False)
    latency = (time.perf_counter() - t0) * 1000
    try:
        raw = error.raw if error is not None else response.raw if response is not None else b""
        response_sha = lease.put(raw)
        lease.complete()
    except VaultError as exc:
        ctx.budget.settle(reservation, None, None)
        with contextlib.suppress(VaultError):
            lease.complete()  # the request was sent and its receipt names it: kept, not taken for a crash's orphan
        record.record(attempt, "failed", exc.code, request_sha, started, latency_ms=latency)
        return _caused(record.failed(exc.code, f"the raw vault refused the response: {exc.what}", exc.fix), exc)
    return _Sent(response, error, response_sha, latency)


def _caused(failure: ModelCallFailed, cause: BaseException) -> ModelCallFailed:
    failure.__cause__ = cause
    return failure


_FIXES = {
    "MODEL_AUTH": "check the API key in the environment variable named by api_key_env",
    "MODEL_KEY_MISSING": "export the API key in the environment variable named by api_key_env",
    "MODEL_INVALID_REQUEST": "check the model id and the provider's structured-output support",
    "MODEL_MISMATCH": "use the provider's full model id in [roles] (the endpoint answered with another model)",
    "MODEL_USAGE_MISSING": "use an endpoint that reports token usage",
    "MODEL_USAGE_INVALID": "the endpoint reported impossible token counts (its raw response is in .muse/vault): "
    "check the provider or gateway",
    "MODEL_SCRIPT_EXHAUSTED": "add entries to the scripted provider's script",
    "MODEL_FILTERED": "the provider filtered the output; rephrase the input or use another model",
}


def _fix_for(code: str) -> str:
    return _FIXES.get(code, "`muse calls show --last` prints the call's attempts and the model's raw answers")
