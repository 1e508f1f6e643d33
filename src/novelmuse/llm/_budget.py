"""Per-run budgets: cost, tokens and a wall-clock deadline, checked before every request.

Before a request is sent the policy reserves its *worst case*; a request whose worst case could
push the run past a limit is not sent (BUDGET_EXCEEDED). After the attempt the reservation is settled
to what the receipt says it used; when usage is missing the worst case stays spent (conservative).
Reserve-then-settle under one lock makes concurrent calls account atomically: the sum of in-flight
worst cases plus what was spent never exceeds a limit.

Input-token estimator (documented bound, not a guess): the UTF-8 byte length of the request's
messages and JSON schema, plus 16 tokens per message for chat framing. Byte-level BPE tokenizers
(OpenAI, DeepSeek, Qwen, Claude) never produce more tokens than bytes, so this over-estimates — about
3× for Chinese — and a request refused by it might have fitted; it can never under-estimate. Output
is bounded by the request's `max_output_tokens`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..book import Budget
from ..text import canonical_json
from ._types import Message, ProviderRequest

MESSAGE_OVERHEAD_TOKENS = 16


def estimate_input_tokens(request: ProviderRequest) -> int:
    """An upper bound of the request's input tokens (see the module docstring)."""
    return estimate_tokens(request.messages, request.json_schema)


def estimate_tokens(messages: Sequence[Message], json_schema: dict[str, Any]) -> int:
    """An upper bound of the input tokens of `messages` sent with `json_schema` (see the module docstring): what
    the budget reserves per request, and what `ModelSession.estimate` reports before anything is sent."""
    body = sum(len(m.content.encode("utf-8")) for m in messages)
    schema = len(canonical_json(json_schema).encode("utf-8"))
    return body + schema + MESSAGE_OVERHEAD_TOKENS * (len(messages) + 1)


@dataclass
class Reservation:
    """What one in-flight request holds against the budget."""

    tokens: int
    cost: float | None
    settled: bool = False


class RunBudget:
    """The limits of one run and what it has spent and reserved so far."""

    def __init__(self, limits: Budget, clock: Callable[[], float] = time.monotonic):
        self.limits = limits
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self.spent_tokens = 0
        self.spent_cost = 0.0
        self.cost_unknown = False  # some attempt's cost is unknown (then spent_cost is a lower bound)
        self.reserved_tokens = 0
        self.reserved_cost = 0.0

    @property
    def has_limits(self) -> bool:
        """Whether any limit is set (then unpriced models are refused: MODEL_COST_UNKNOWN)."""
        lim = self.limits
        return lim.max_cost is not None or lim.max_tokens is not None or lim.deadline_s is not None

    def remaining_s(self) -> float | None:
        """Seconds left before the deadline (None when there is no deadline)."""
        if self.limits.deadline_s is None:
            return None
        return self.limits.deadline_s - (self._clock() - self._started)

    def reserve(self, tokens: int, cost: float | None) -> Reservation | str:
        """Reserve a request's worst case, or return why it may not be sent (a detail, no content)."""
        with self._lock:
            remaining = self.remaining_s()
            if remaining is not None and remaining <= 0:
                return f"the run's deadline of {self.limits.deadline_s:g}s has passed"
            if self.limits.max_tokens is not None:
                total = self.spent_tokens + self.reserved_tokens + tokens
                if total > self.limits.max_tokens:
                    return (
                        f"worst case {tokens} tokens would bring the run to {total} "
                        f"> max_tokens {self.limits.max_tokens}"
                    )
            if self.limits.max_cost is not None:
                if cost is None or self.cost_unknown:
                    return "the cost of a request is unknown while max_cost is set"
                total_cost = self.spent_cost + self.reserved_cost + cost
                if total_cost > self.limits.max_cost:
                    return (
                        f"worst case cost {cost:.6f} would bring the run to {total_cost:.6f} "
                        f"> max_cost {self.limits.max_cost:g}"
                    )
            self.reserved_tokens += tokens
            self.reserved_cost += cost or 0.0
            return Reservation(tokens, cost)

    def settle(self, reservation: Reservation, tokens: int | None, cost: float | None) -> None:
        """Replace a reservation by what the attempt used; unknown usage keeps the worst case spent."""
        with self._lock:
            if reservation.settled:
                return
            reservation.settled = True
            self.reserved_tokens -= reservation.tokens
            self.reserved_cost -= reservation.cost or 0.0
            self.spent_tokens += reservation.tokens if tokens is None else tokens
            if cost is None:
                if reservation.cost is not None:
                    self.spent_cost += reservation.cost  # bounded by the worst case
                else:
                    self.cost_unknown = True
            else:
                self.spent_cost += cost


def context_refusal(model: str, tokens: int, window: int | None) -> str | None:
    """Why a request of up to `tokens` (input bound + output cap) cannot be sent to `model`, or None when it fits
    its context window or the window is unknown."""
    if window is None or tokens <= window:
        return None
    return (
        f"a request of up to {tokens:,} tokens (input bound + output cap) exceeds the {window:,}-token context "
        f"of {model}"
    )


@dataclass(frozen=True)
class CallEstimate:
    """What one call would send, known before anything is sent: the upper bound of its input tokens (the budget's
    estimator), its output cap, its worst-case cost (None: the model has no price) and the model's context window
    (None: unknown)."""

    role: str
    provider: str
    model: str
    input_tokens: int
    max_output_tokens: int
    cost: float | None
    context_window: int | None

    @property
    def tokens(self) -> int:
        """The request's worst case in tokens: what the budget reserves and the context window must hold."""
        return self.input_tokens + self.max_output_tokens

    def refusal(self, limits: Budget) -> tuple[str, str] | None:
        """(code, why) when this request could never be sent — the call policy would refuse it before sending
        at any point of any run: over the model's context window, over a budget limit on its own, or unpriced while
        a budget is set. None when it may be sent (the run's spending so far is the policy's business)."""
        if (why := context_refusal(self.model, self.tokens, self.context_window)) is not None:
            return "MODEL_CONTEXT_EXCEEDED", why
        if limits.max_tokens is not None and self.tokens > limits.max_tokens:
            return (
                "BUDGET_EXCEEDED",
                f"one request needs up to {self.tokens:,} tokens > max_tokens {limits.max_tokens:,}",
            )
        has_limits = any(v is not None for v in (limits.max_cost, limits.max_tokens, limits.deadline_s))
        if has_limits and self.cost is None:
            return (
                "MODEL_COST_UNKNOWN",
                f"model {self.model!r} has no price, so its cost is unknown while [budget] sets a limit",
            )
        if limits.max_cost is not None and self.cost is not None and self.cost > limits.max_cost:
            return "BUDGET_EXCEEDED", f"one request costs up to {self.cost:.6f} > max_cost {limits.max_cost:g}"
        return None
