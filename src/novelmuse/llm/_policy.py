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
* **resend** — a ProviderError with ``transient and cost_known``: the same request again, no correction.
* **stop** (never retried) — any other ProviderError (MODEL_AUTH, MODEL_INVALID_REQUEST, MODEL_KEY_MISSING,
  MODEL_SCRIPT_EXHAUSTED, a transient error of unknown cost…), MODEL_ERROR_FLAG, MODEL_MISMATCH,
  MODEL_USAGE_MISSING (the attempt's cost cannot be accounted: 成本未知不重试), MODEL_FILTERED (the
  provider's policy, not a format problem), any other finish (MODEL_BAD_FINISH), and refusals before
  sending: MODEL_COST_UNKNOWN, BUDGET_EXCEEDED.

Corrections and resends share one bound; reaching it, or a stop, raises `ModelCallFailed` carrying
the receipts and failure-safe diagnostics (codes and counts only). Never a default value.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import string
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import FailedClosed, InputError
from ..store import new_id, utc_now
from ..text import canonical_json, sha256_hex, sha256_json
from ._budget import Reservation, RunBudget, estimate_input_tokens
from ._prices import PriceTable
from ._receipts import CallEnd, CallStart, Outcome, Receipt, end_call, write_receipt
from ._schema import cached_strict_schema
from ._types import Message, Provider, ProviderError, ProviderRequest, ProviderResponse, Usage
from ._vault import Lease, Vault, VaultError

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Violation:
    """A contract check's finding: a stable code and a detail.

    The detail goes into the correction message (and so the raw vault) only — never into receipts or
    diagnostics, which keep codes and counts.
    """

    code: str
    detail: str = ""


Contract = Callable[[T], list[Violation]]


class ModelCallFailed(FailedClosed):
    """A logical call failed closed (exit 3): `.code`, `.diagnostics` (codes and counts), `.receipts`."""

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
    ):
        super().__init__(code, what, where, fix)
        self.diagnostics: dict[str, Any] = diagnostics or {}
        self.receipts: list[Receipt] = list(receipts)
        self.call_id = call_id


class NotConfigured(InputError):
    """The role has no model configured (code MODEL_NOT_CONFIGURED); services skip instead of calling."""

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
    """An accepted structured output and the receipts of every attempt that led to it."""

    value: T
    receipts: list[Receipt]
    call_id: str
    input_tokens: int
    output_tokens: int
    cost: float | None  # None when any attempt's cost is unknown
    output_sha256: str = ""

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


@cache
def _correction_template() -> tuple[str, str]:
    text = (resources.files("novelmuse.llm") / "data" / "correction.txt").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# version:"))
    return body, sha256_hex(text)


def correction_template_sha256() -> str:
    """The sha256 of `llm/data/correction.txt` (recorded in each run's configuration)."""
    return _correction_template()[1]


def correction_message(reasons: Sequence[str]) -> str:
    """The user message that asks for a corrected draft, listing the exact reasons."""
    body, _ = _correction_template()
    return string.Template(body).substitute(reasons="\n".join(f"- {r}" for r in reasons))


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
    role: str
    provider: Provider
    model: str
    semaphore: asyncio.Semaphore
    budget: RunBudget
    prices: PriceTable
    vault: Vault
    max_attempts: int
    max_output_tokens: int
    timeout_s: float


async def run_call(
    ctx: CallContext,
    schema: type[T],
    messages: Sequence[Message],
    contracts: Sequence[Contract[T]],
    prompt_sha256: str | None,
    schema_name: str | None = None,
) -> StructuredResult[T]:
    """Run one logical call under the policy; return the accepted value or raise ModelCallFailed."""
    if not messages:
        raise InputError("MODEL_NO_MESSAGES", "a model call needs at least one message", f"role {ctx.role}")
    json_schema, s_sha = cached_strict_schema(schema)  # shared read-only: providers copy before changing it
    name = schema_name or schema.__name__
    call_id = new_id("call_")
    provider = ctx.provider
    call_start: CallStart | None = CallStart(  # inserted with the first receipt (one transaction)
        call_id=call_id,
        run_id=ctx.run_id,
        role=ctx.role,
        provider=provider.name,
        provider_kind=provider.kind,
        requested_model=ctx.model,
        schema_name=name,
        schema_sha256=s_sha,
        prompt_sha256=prompt_sha256,
        started_at=utc_now(),
    )
    receipts: list[Receipt] = []
    codes: Counter[str] = Counter()
    violation_counts: Counter[str] = Counter()
    detail_counts: Counter[str] = Counter()
    history: list[Message] = list(messages)

    def diagnostics(bound_reached: bool) -> dict[str, Any]:
        return {
            "attempts": len(receipts),
            "max_attempts": ctx.max_attempts,
            "codes": dict(sorted(codes.items())),
            "violations": dict(sorted(violation_counts.items())),
            "counts": dict(sorted(detail_counts.items())),
            "bound_reached": bound_reached,
        }

    def receipt(
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
    ) -> Receipt:
        nonlocal call_start
        usage = response.usage if response is not None else None
        if outcome == "refused":  # never sent: nothing used, a known zero cost
            usage, cost = Usage(0, 0), 0.0
        rec = Receipt(
            id=new_id("rcpt_"),
            call_id=call_id,
            attempt=attempt,
            run_id=ctx.run_id,
            role=ctx.role,
            provider=provider.name,
            provider_kind=provider.kind,
            requested_model=ctx.model,
            resolved_model=response.resolved_model if response is not None else None,
            outcome=outcome,
            error_code=code,
            request_sha256=request_sha,
            response_sha256=response_sha,
            prompt_sha256=prompt_sha256,
            schema_sha256=s_sha,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
            cache_read_tokens=usage.cache_read_tokens if usage else None,
            cache_write_tokens=usage.cache_write_tokens if usage else None,
            cost=cost,
            price_table_sha256=ctx.prices.sha256,
            latency_ms=latency_ms,
            started_at=started,
            ended_at=utc_now(),
            sandbox=response.sandbox if response is not None else None,
            diagnostics=diag or {},
        )
        receipts.append(rec)
        if code:
            codes[code] += 1
        end = None
        if accepted_sha is not None:  # the accepted attempt: the call's outcome goes in the same transaction
            end = CallEnd("ok", None, len(receipts), rec.id, accepted_sha, diagnostics(False), rec.ended_at)
        write_receipt(ctx.conn, rec, start=call_start, end=end)
        call_start = None
        return rec

    def fail(code: str, what: str, fix: str, *, bound_reached: bool = False) -> ModelCallFailed:
        diag = diagnostics(bound_reached)
        end_call(ctx.conn, call_id, CallEnd("failed", code, len(receipts), None, None, diag, utc_now()))
        return ModelCallFailed(
            code,
            what,
            f"role {ctx.role} ({provider.name}:{ctx.model}), call {call_id}",
            fix,
            diagnostics=diag,
            receipts=receipts,
            call_id=call_id,
        )

    for attempt in range(1, ctx.max_attempts + 1):
        request = ProviderRequest(
            provider=provider.name,
            model=ctx.model,
            messages=list(history),
            schema_name=name,
            json_schema=json_schema,
            max_output_tokens=ctx.max_output_tokens,
            timeout_s=ctx.timeout_s,
            role=ctx.role,
        )
        request_bytes = canonical_json(request.canonical()).encode("utf-8")
        request_sha = sha256_hex(request_bytes)
        started = utc_now()
        if ctx.budget.has_limits and ctx.prices.price(ctx.model) is None:
            receipt(attempt, "refused", "MODEL_COST_UNKNOWN", request_sha, started)
            raise fail(
                "MODEL_COST_UNKNOWN",
                f"model {ctx.model!r} has no price, so its cost is unknown while the run has a budget",
                f'add [prices."{ctx.model}"] input/output per million tokens to book.toml, or remove [budget]',
            )
        async with ctx.semaphore:
            est_in = estimate_input_tokens(request)
            worst_cost = ctx.prices.worst_case_cost(ctx.model, est_in, ctx.max_output_tokens)
            reservation = ctx.budget.reserve(est_in + ctx.max_output_tokens, worst_cost)
            if isinstance(reservation, str):
                receipt(attempt, "refused", "BUDGET_EXCEEDED", request_sha, started)
                raise fail(
                    "BUDGET_EXCEEDED",
                    f"the request was not sent: {reservation}",
                    "raise the [budget] limits in book.toml or run on fewer chapters",
                )
            remaining = ctx.budget.remaining_s()
            if remaining is not None and remaining < request.timeout_s:
                request = replace(request, timeout_s=max(remaining, 0.001))
            try:
                lease = ctx.vault.lease(call_id, attempt, ctx.run_id)
            except VaultError as exc:
                ctx.budget.settle(reservation, 0, 0.0)
                receipt(attempt, "refused", exc.code, request_sha, started)
                raise fail(exc.code, f"the raw vault refused the lease: {exc.what}", exc.fix) from exc
            try:
                response, error, response_sha, latency = await _send_attempt(
                    ctx, lease, request, request_bytes, reservation, attempt, request_sha, started, receipt, fail
                )
            finally:
                lease.close()

        if error is not None:
            # a failed request whose cost is known was not billed (0); otherwise the worst case stays spent
            err_cost = 0.0 if error.cost_known and ctx.prices.price(ctx.model) is not None else None
            ctx.budget.settle(reservation, 0 if error.cost_known else None, err_cost)
            diag: dict[str, Any] = {"status": error.status} if error.status is not None else {}
            receipt(
                attempt,
                "failed",
                error.code,
                request_sha,
                started,
                response_sha=response_sha,
                cost=err_cost,
                latency_ms=latency,
                diag=diag,
            )
            if error.transient and error.cost_known:
                if attempt < ctx.max_attempts:
                    continue  # resend the same input
                raise fail(
                    error.code,
                    f"transient provider errors until the bound of {ctx.max_attempts} requests",
                    "retry later; check the provider's status",
                    bound_reached=True,
                )
            # the provider's message is novelmuse's own text (status, path, pin): never a body, content or key
            raise fail(error.code, f"the provider failed ({error}); not retried", _fix_for(error.code))

        assert response is not None
        usage = response.usage
        cost = ctx.prices.cost(response.resolved_model or ctx.model, usage)
        tokens = (
            None
            if usage is None
            else usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        )
        ctx.budget.settle(reservation, tokens, cost)
        try:
            judgement = judge_response(response, ctx.model, schema, contracts, ctx.max_output_tokens)
        except Exception:
            receipt(
                attempt, "failed", "CONTRACT_ERROR", request_sha, started,
                response=response, response_sha=response_sha, cost=cost, latency_ms=latency,
            )  # fmt: skip
            fail("CONTRACT_ERROR", "a contract check raised an exception", "this is a bug in novelmuse")
            raise
        if judgement.action == "accept":
            assert judgement.value is not None
            value: T = judgement.value  # type: ignore[assignment]
            out_sha = sha256_json(value.model_dump(mode="json"))
            receipt(
                attempt, "ok", None, request_sha, started,
                response=response, response_sha=response_sha, cost=cost, latency_ms=latency, accepted_sha=out_sha,
            )  # fmt: skip
            costs = [r.cost for r in receipts]
            return StructuredResult(
                value=value,
                receipts=list(receipts),
                call_id=call_id,
                input_tokens=sum(r.input_tokens or 0 for r in receipts),
                output_tokens=sum(r.output_tokens or 0 for r in receipts),
                cost=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
                output_sha256=out_sha,
            )
        vcounts = Counter(v.code for v in judgement.violations)
        violation_counts.update(vcounts)
        detail_counts.update(judgement.detail_counts)
        diag = {"violations": dict(sorted(vcounts.items()))} if vcounts else {}
        diag.update(judgement.detail_counts)
        assert judgement.code is not None
        receipt(
            attempt, "failed", judgement.code, request_sha, started,
            response=response, response_sha=response_sha, cost=cost, latency_ms=latency, diag=diag,
        )  # fmt: skip
        if judgement.action == "stop":
            raise fail(judgement.code, f"the model's response was not acceptable ({judgement.code}); not retried",
                       _fix_for(judgement.code))  # fmt: skip
        if attempt < ctx.max_attempts:
            history = [
                *messages,
                Message(role="assistant", content=judgement.draft),
                Message(role="user", content=correction_message(judgement.reasons)),
            ]
            continue
        raise fail(
            judgement.code,
            f"the output still failed its checks after {ctx.max_attempts} requests",
            "see `muse calls` for the attempts; the raw drafts are in .muse/vault",
            bound_reached=True,
        )
    raise AssertionError("unreachable: the attempt loop always returns or raises")


async def _send_attempt(
    ctx: CallContext,
    lease: Lease,
    request: ProviderRequest,
    request_bytes: bytes,
    reservation: Reservation,
    attempt: int,
    request_sha: str,
    started: str,
    receipt: Callable[..., Receipt],
    fail: Callable[..., ModelCallFailed],
) -> tuple[ProviderResponse | None, ProviderError | None, str, float]:
    """Vault the request, send it once, vault the raw response: (response, error, response sha, latency ms)."""
    try:
        lease.put(request_bytes)
    except VaultError as exc:
        ctx.budget.settle(reservation, 0, 0.0)
        receipt(attempt, "refused", exc.code, request_sha, started)
        raise fail(exc.code, f"the raw vault refused the request: {exc.what}", exc.fix) from exc
    t0 = time.perf_counter()
    response: ProviderResponse | None = None
    error: ProviderError | None = None
    try:
        response = await ctx.provider.send(request)
    except ProviderError as exc:
        error = exc
    except asyncio.CancelledError:
        latency = (time.perf_counter() - t0) * 1000
        ctx.budget.settle(reservation, None, None)
        with contextlib.suppress(VaultError):
            lease.complete()
        receipt(attempt, "failed", "MODEL_CANCELLED", request_sha, started, latency_ms=latency)
        fail("MODEL_CANCELLED", "the call was cancelled", "")
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
        receipt(attempt, "failed", exc.code, request_sha, started, latency_ms=latency)
        raise fail(exc.code, f"the raw vault refused the response: {exc.what}", exc.fix) from exc
    return response, error, response_sha, latency


_FIXES = {
    "MODEL_AUTH": "check the API key in the environment variable named by api_key_env",
    "MODEL_KEY_MISSING": "export the API key in the environment variable named by api_key_env",
    "MODEL_INVALID_REQUEST": "check the model id and the provider's structured-output support",
    "MODEL_MISMATCH": "use the provider's full model id in [roles] (the endpoint answered with another model)",
    "MODEL_USAGE_MISSING": "use an endpoint that reports token usage",
    "MODEL_SCRIPT_EXHAUSTED": "add entries to the scripted provider's script",
    "MODEL_FILTERED": "the provider filtered the output; rephrase the input or use another model",
}


def _fix_for(code: str) -> str:
    return _FIXES.get(code, "see `muse calls` for the receipts of this call")
