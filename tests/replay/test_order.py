"""Order plans: balanced (±1) over the whole set for any items and arms, deterministic, sealed."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novelmuse.errors import FailedClosed
from novelmuse.replay import ItemOrder, make_order_plan, position_counts, verify_order_plan

ITEM_IDS = st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_\-.:]{0,12}", fullmatch=True), max_size=60, unique=True)
ARMS = st.lists(st.sampled_from(["A", "B", "C", "D", "E"]), min_size=1, max_size=5, unique=True)


@given(ITEM_IDS, ARMS, st.text(min_size=1, max_size=20))
def test_every_arm_takes_every_position_equally_often_within_one(items: list[str], arms: list[str], seed: str) -> None:
    plan = make_order_plan(items, arms, seed)
    assert [o.item_id for o in plan.orders] == sorted(items)
    for o in plan.orders:
        assert sorted(o.order) == sorted(arms)  # each item runs every arm exactly once
    counts = position_counts(plan)
    for arm in arms:  # naive oracle: count each (arm, position) directly
        for pos in range(len(arms)):
            assert counts[arm][pos] == sum(1 for o in plan.orders if o.order[pos] == arm)
    flat = [n for row in counts.values() for n in row]
    assert max(flat) - min(flat) <= 1
    assert sum(flat) == len(items) * len(arms)
    verify_order_plan(plan)
    assert make_order_plan(list(reversed(items)), list(reversed(arms)), seed) == plan  # deterministic


def test_a_full_set_is_exactly_balanced_and_seeds_differ() -> None:
    items = [f"i{k:02d}" for k in range(30)]
    plan = make_order_plan(items, ["A", "B", "C"], "set-sha")
    assert position_counts(plan) == {"A": [10, 10, 10], "B": [10, 10, 10], "C": [10, 10, 10]}
    assert len({tuple(o.order) for o in plan.orders}) == 6  # not just the three rotations of one order
    assert make_order_plan(items, ["A", "B", "C"], "other-seed").sha256 != plan.sha256


def test_a_changed_plan_is_refused() -> None:
    plan = make_order_plan([f"i{k}" for k in range(6)], ["A", "C", "B"], "s")
    first = plan.orders[0]
    swapped = ItemOrder(item_id=first.item_id, order=list(reversed(first.order)))
    tampered = plan.model_copy(update={"orders": [swapped, *plan.orders[1:]]})
    with pytest.raises(FailedClosed) as exc:
        verify_order_plan(tampered)
    assert exc.value.code == "ORDER_PLAN_TAMPERED"
    from novelmuse.replay._order import _seal

    resealed = tampered.model_copy(update={"sha256": _seal(plan.schema_version, plan.seed, plan.arms, tampered.orders)})
    with pytest.raises(FailedClosed) as exc:
        verify_order_plan(resealed)
    assert exc.value.code == "ORDER_PLAN_FOREIGN"


def test_duplicates_are_refused() -> None:
    with pytest.raises(ValueError):
        make_order_plan(["a", "a"], ["A"], "s")
    with pytest.raises(ValueError):
        make_order_plan(["a"], ["A", "A"], "s")


def test_order_of() -> None:
    plan = make_order_plan(["x", "y"], ["A", "C"], "s")
    assert {tuple(plan.order_of("x")), tuple(plan.order_of("y"))} == set(itertools.permutations(["A", "C"]))
    with pytest.raises(KeyError):
        plan.order_of("z")
