"""The loop's bounds as a property: whatever the models answer, rewrites ≤ rewrite_rounds, arbiter calls ≤
arbiter_rounds, repairs ≤ repair_rounds, and every step ends as exactly one outcome.

The state machine is driven directly with an in-test Caller that answers from drawn queues (the model
layer itself is exercised by the CLI tests over the scripted provider and the loopback server).
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from novelmuse.book import ReviewConfig
from novelmuse.editorial import RuleView, chapter_status, run_loop
from novelmuse.editorial._calls import Caller
from novelmuse.editorial._state import LoopState
from novelmuse.llm import TaskCall
from novelmuse.memory import MemoryContext
from novelmuse.roles.editor import DIMENSIONS
from novelmuse.text import split_paragraphs

T = TypeVar("T", bound=BaseModel)
BODY = "".join(f"　　第{i}段,这里有独一无二的句子编号{i}号。\n" for i in range(12))
QUOTES = [f"独一无二的句子编号{i}号" for i in range(12)]


class QueueCaller(Caller):
    """Answers each role from its queue; records the calls; checks every contract holds on what it returns."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]]):
        super().__init__(None)
        self.answers = answers
        self.calls: list[str] = []

    def configured(self, role: str) -> bool:
        return True

    async def call(self, task: TaskCall[T]) -> tuple[T, str]:
        role = task.role
        self.calls.append(role)
        key = f"writer:{task.schema.__name__}" if role == "writer" else role
        value = task.schema.model_validate(self.answers[key].pop(0))
        for contract in task.contracts:
            assert contract(value) == [], (role, contract(value))
        return value, f"call-{len(self.calls)}"


def editor_answer(overall: int, dim: int) -> dict[str, Any]:
    return {
        "overall": overall,
        "dims": {d: {"score": dim, "evidence": q} for d, q in zip(DIMENSIONS, QUOTES, strict=False)},
        "verdict": "accept",
        "notes": [],
    }


def rewrite_answer(k: int) -> dict[str, Any]:
    # keeps the quoted sentences so later evidence still locates; marks the round
    return {"text": "".join(f"　　第{i}段,这里有独一无二的句子编号{i}号。重写{k}\n" for i in range(12))}


@settings(max_examples=120, deadline=None)
@given(
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 1),  # seed 004's cap: one repair, one re-review (book.ReviewConfig refuses more)
    st.lists(st.tuples(st.integers(30, 100), st.integers(30, 100)), min_size=6, max_size=6),
    st.lists(st.sampled_from(["keep_rewriting", "accept_and_continue"]), min_size=5, max_size=5),
    st.booleans(),
)
def test_bounds_hold_whatever_the_models_say(
    rewrite_rounds: int,
    arbiter_rounds: int,
    repair_rounds: int,
    scores: list[tuple[int, int]],
    decisions: list[str],
    blocking: bool,
) -> None:
    config = ReviewConfig(
        rewrite_rounds=rewrite_rounds, arbiter_rounds=arbiter_rounds, repair_rounds=repair_rounds, rereview_rounds=1
    )
    issue = {"severity": "major", "type": "setting", "quote": QUOTES[3], "explanation": "x", "fix_hint": "y"}
    para3 = split_paragraphs(BODY)[3].text
    answers: dict[str, list[dict[str, Any]]] = {
        "reviewer": [{"issues": [issue] if blocking else [], "passed": None} for _ in range(10)],
        "editor": [editor_answer(o, d) for o, d in scores],
        "arbiter": [{"decision": d, "reason": "r"} for d in decisions],
        "writer:ParagraphEdits": [{"paragraphs": [{"index": 3, "text": para3 + "改"}]} for _ in range(6)],
        "writer:ChapterRewrite": [rewrite_answer(k) for k in range(6)],
    }
    state = LoopState(
        chapter=10,
        title="t",
        original=BODY,
        text=BODY,
        rules=RuleView.of([], [], ""),
        memory=MemoryContext(False, "test"),
        config=config,
    )
    caller = QueueCaller(answers)
    asyncio.run(run_loop(state, caller))
    kinds = [r.kind for r in state.repairs]
    assert kinds.count("rewrite") <= rewrite_rounds
    assert kinds.count("consistency_repair") <= repair_rounds
    assert caller.calls.count("arbiter") <= arbiter_rounds
    assert kinds.count("polish") <= 1
    if state.editor and not state.editor_open:  # nothing left standing: the last verdict was acted on
        assert state.editor[-1].computed_verdict != "polish" or kinds[-1:] == ["polish"]
    assert caller.calls.count("editor") == 1 + kinds.count("rewrite")
    # the consistency review runs once, plus one re-review per repair, plus one after a rewrite
    assert caller.calls.count("reviewer") == 1 + kinds.count("consistency_repair") + (1 if "rewrite" in kinds else 0)
    for s in state.steps:
        assert s.status in ("passed", "failed", "skipped", "error")
        assert (s.status == "skipped") == (s.reason is not None) and (s.status == "error") == (s.code is not None)
    status = chapter_status(state)
    assert status in ("finalized", "finalized_with_issues")
    assert (status == "finalized_with_issues") == (blocking or bool(state.editor_open))
    # a rewrite verdict left standing (bounds, or the arbiter's accept_and_continue) is never finalized clean
    if state.editor and state.editor[-1].computed_verdict == "rewrite":
        assert status == "finalized_with_issues" and state.editor_open
