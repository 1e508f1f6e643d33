"""Order plans: which arm each item runs (and is judged) first, second, … — balanced over the whole set.

Seed 003 (全评测集统一分配顺序并平衡位置) and issue 12 item 2: over the whole evaluation set every arm appears in
every position equally often, ±1. The plan is a sequence of Latin squares: the items, in an order drawn from
the seed, are cut into blocks of k (the number of arms); each block gets its own random Latin square (a
seeded arm order rotated once per row, rows dealt to the block's items in a seeded order). In a full block
each arm takes each position exactly once; the last, partial block uses distinct rows of one Latin square,
so no arm takes a position twice there — hence every (arm, position) count is ⌊n/k⌋ or ⌈n/k⌉.

Everything random comes from sha256 of the seed and the names (no `random` module), so the same (items,
arms, seed) give the same plan on every Python. The plan is sealed by the sha256 of its canonical JSON;
`verify_order_plan` recomputes the seal, regenerates the plan from its own items, arms and seed, and checks
the balance — a plan changed after it was sealed, or one not made by `make_order_plan`, is refused.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import FailedClosed
from ..text import sha256_json
from ._input import ITEM_ID

ORDER_PLAN_SCHEMA: Final = "order-plan-v1"
_ARM = r"^[A-Z][A-Z0-9_]{0,15}$"


class ItemOrder(BaseModel):
    """One item's arm order (position 0 runs first)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str = Field(pattern=ITEM_ID)
    order: list[str]


class OrderPlan(BaseModel):
    """A sealed, balanced order plan for a whole evaluation set (see the module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["order-plan-v1"] = ORDER_PLAN_SCHEMA
    seed: str = Field(min_length=1, max_length=200)
    arms: list[str] = Field(min_length=1)
    orders: list[ItemOrder]
    sha256: str

    def order_of(self, item_id: str) -> list[str]:
        """The arm order of `item_id` (KeyError when the item is not in the plan)."""
        for o in self.orders:
            if o.item_id == item_id:
                return list(o.order)
        raise KeyError(item_id)


def _key(seed: str, *parts: str) -> bytes:
    return hashlib.sha256("\x1f".join((ORDER_PLAN_SCHEMA, seed, *parts)).encode("utf-8")).digest()


def _seal(schema_version: str, seed: str, arms: list[str], orders: list[ItemOrder]) -> str:
    return sha256_json(
        {
            "schema_version": schema_version,
            "seed": seed,
            "arms": arms,
            "orders": [o.model_dump() for o in orders],
        }
    )


def _refuse(code: str, what: str) -> FailedClosed:
    return FailedClosed(
        code, what, "order plan", "make the plan again with make_order_plan before the first model call"
    )


def make_order_plan(item_ids: list[str], arms: list[str], seed: str) -> OrderPlan:
    """The balanced, sealed order plan of `item_ids` × `arms` drawn from `seed` (deterministic)."""
    arm_list = sorted(arms)
    if not arm_list or len(set(arm_list)) != len(arm_list):
        raise ValueError("arms must be a non-empty list of distinct names")
    if len(set(item_ids)) != len(item_ids):
        raise ValueError("item ids must be distinct")
    k = len(arm_list)
    shuffled = sorted(item_ids, key=lambda i: _key(seed, "item", i))
    orders: list[ItemOrder] = []
    for start in range(0, len(shuffled), k):
        block = start // k
        base = sorted(arm_list, key=lambda a: _key(seed, "block", str(block), "arm", a))
        rows = sorted(shuffled[start : start + k], key=lambda i: _key(seed, "block", str(block), "row", i))
        for r, item in enumerate(rows):
            orders.append(ItemOrder(item_id=item, order=base[r:] + base[:r]))
    orders.sort(key=lambda o: o.item_id)
    return OrderPlan(seed=seed, arms=arm_list, orders=orders, sha256=_seal(ORDER_PLAN_SCHEMA, seed, arm_list, orders))


def position_counts(plan: OrderPlan) -> dict[str, list[int]]:
    """For each arm, how many items run it at position 0, 1, …"""
    counts = Counter((arm, pos) for o in plan.orders for pos, arm in enumerate(o.order))
    return {arm: [counts[(arm, p)] for p in range(len(plan.arms))] for arm in plan.arms}


def verify_order_plan(plan: OrderPlan) -> None:
    """Refuse (FailedClosed, exit 3) a plan whose seal does not match, that `make_order_plan` would not make
    from its own items, arms and seed, or that is not balanced (every arm in every position ±1)."""
    if _seal(plan.schema_version, plan.seed, plan.arms, plan.orders) != plan.sha256:
        raise _refuse("ORDER_PLAN_TAMPERED", "the order plan does not match its seal (changed after it was sealed)")
    if plan != make_order_plan([o.item_id for o in plan.orders], plan.arms, plan.seed):
        raise _refuse("ORDER_PLAN_FOREIGN", "the order plan is not the one its seed gives (not made by novelmuse)")
    counts = [n for row in position_counts(plan).values() for n in row]
    if counts and max(counts) - min(counts) > 1:
        raise _refuse("ORDER_PLAN_UNBALANCED", "an arm takes a position more than once more often than another")
