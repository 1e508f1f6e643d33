"""The bill before a run: how many calls a command may make, per role, and an upper bound of their tokens and cost
— shown before the first request is sent.

Each logical call is bounded by `[calls] max_attempts` requests (format corrections and transient resends share
that bound). Its first request is sized by the budget's estimator (`ModelSession.estimate`, an upper bound of the
input tokens); a correction resends the input with the previous answer and the reasons, so attempt k (0-based)
is bounded by the first request plus k answers of at most `max_output_tokens` each — counted at
`BYTES_PER_OUTPUT_TOKEN` bytes per token, since the estimator counts bytes — plus `CORRECTION_OVERHEAD_TOKENS`
for the reasons. Output is `max_output_tokens` per request. Cost is the price table's worst case (input at the
highest input-side rate); unknown when a model has no price.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict

from ._budget import CallEstimate

#: A token of a model's answer counted as this many bytes when the answer is sent back in a correction (the
#: input estimator counts bytes): UTF-8 Chinese is 3 bytes a character, and a token rarely spans more.
BYTES_PER_OUTPUT_TOKEN = 4
#: The reasons and framing a correction message adds, in tokens (an upper bound of the templates' size).
CORRECTION_OVERHEAD_TOKENS = 2048


#: The worst-case cost of (model, input tokens, output tokens): `PriceTable.worst_case_cost`.
CostOf = Callable[[str, int, int], float | None]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RoleBill(_M):
    """The most one role may be asked in a run."""

    role: str
    model: str
    calls: int  # logical calls, at most
    requests: int  # calls × max_attempts
    input_tokens: int  # upper bound
    output_tokens: int  # upper bound
    cost: float | None  # upper bound; None: the model has no price


class Bill(_M):
    """A command's bill before its first request: per role and in total; `notes` say what it assumes."""

    roles: list[RoleBill] = []
    calls: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    notes: list[str] = []

    @property
    def empty(self) -> bool:
        """No model call is planned."""
        return self.calls == 0


def role_bill(estimate: CallEstimate, calls: int, max_attempts: int, cost_of: CostOf) -> RoleBill:
    """The bound of `calls` logical calls whose first request is `estimate` (see the module docstring)."""
    growth = estimate.max_output_tokens * BYTES_PER_OUTPUT_TOKEN + CORRECTION_OVERHEAD_TOKENS
    per_call_in = sum(estimate.input_tokens + k * growth for k in range(max_attempts))
    per_call_out = max_attempts * estimate.max_output_tokens
    cost = cost_of(estimate.model, per_call_in, per_call_out)
    return RoleBill(
        role=estimate.role,
        model=estimate.model,
        calls=calls,
        requests=calls * max_attempts,
        input_tokens=calls * per_call_in,
        output_tokens=calls * per_call_out,
        cost=None if cost is None else calls * cost,
    )


def total_bill(parts: Iterable[RoleBill], notes: Iterable[str] = ()) -> Bill:
    """The bill of these role bounds: one row per role (calls of one role summed), and the totals."""
    by_role: dict[str, RoleBill] = {}
    for part in parts:
        if part.calls == 0:
            continue
        seen = by_role.get(part.role)
        if seen is None:
            by_role[part.role] = part
            continue
        by_role[part.role] = RoleBill(
            role=part.role,
            model=part.model,
            calls=seen.calls + part.calls,
            requests=seen.requests + part.requests,
            input_tokens=seen.input_tokens + part.input_tokens,
            output_tokens=seen.output_tokens + part.output_tokens,
            cost=None if seen.cost is None or part.cost is None else seen.cost + part.cost,
        )
    roles = list(by_role.values())
    cost: float | None = 0.0
    for r in roles:
        cost = None if cost is None or r.cost is None else cost + r.cost
    return Bill(
        roles=roles,
        calls=sum(r.calls for r in roles),
        requests=sum(r.requests for r in roles),
        input_tokens=sum(r.input_tokens for r in roles),
        output_tokens=sum(r.output_tokens for r in roles),
        cost=cost,
        notes=list(notes),
    )


def cost_to_confirm(bill: Bill, costs_nothing: Callable[[str], bool]) -> float | None:
    """The part of `bill`'s worst case that may be charged: its roles' costs except those whose model
    `costs_nothing` (canned or local); None when a charged role has no price (unknown, never 0)."""
    total: float | None = 0.0
    for r in bill.roles:
        if costs_nothing(r.role):
            continue
        total = None if total is None or r.cost is None else total + r.cost
    return total
