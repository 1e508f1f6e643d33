"""How each command ended (`errors.Outcome`) and the one function that maps an outcome to its exit code."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_args

from novelmuse.editorial import ChapterReview, ReviewRun, StepOutcome
from novelmuse.errors import FailedClosed, InputError, Outcome, exit_code
from novelmuse.judging import GateDecision, JudgeOutcome, RubricRef
from novelmuse.llm import ConfigIssue, ModelsCheckReport, RoleCheck
from novelmuse.reports import (
    SyncDoc,
    judge_error,
    judge_outcome,
    review_error,
    review_outcome,
    sync_error,
    sync_outcome,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "novelmuse"


def test_every_outcome_has_its_documented_exit_code() -> None:
    codes = {o: exit_code(o) for o in get_args(Outcome)}
    assert codes == {
        "ok": 0,
        "findings": 1,
        "bad_input": 2,
        "failed_closed": 3,
        "not_evaluated": 4,  # issue 14: skip is not pass
        "internal": 70,  # EX_SOFTWARE
        "interrupted": 130,
    }
    assert InputError("X", "x").exit_code == 2 and FailedClosed("X", "x").exit_code == 3


def test_the_cli_decides_exit_codes_in_one_place() -> None:
    """No command raises typer.Exit or returns a number of its own: `finish(outcome)` and `main` map outcomes."""
    found = []
    for path in sorted((SRC / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Exit":
                found.append(f"{path.name}:{node.lineno}")
            value = node.value if isinstance(node, ast.Return) else None
            if isinstance(value, ast.Constant) and type(value.value) is int and value.value != 0:
                found.append(f"{path.name}:{node.lineno}")  # a literal exit code
    assert found == ["_common.py:" + str(_finish_exit_line())]


def _finish_exit_line() -> int:
    tree = ast.parse((SRC / "cli" / "_common.py").read_text(encoding="utf-8"))
    finish = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "finish")
    return next(n.lineno for n in ast.walk(finish) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Exit")


def _chapter(status: str, steps: list[StepOutcome], **fields: Any) -> ChapterReview:
    return ChapterReview.model_construct(
        **{"chapter": 1, "open_issues": 0, "facts": None, **fields}, status=status, steps=steps
    )


def _run(*chapters: ChapterReview) -> ReviewRun:
    return ReviewRun.model_construct(chapters=list(chapters))


def test_review_outcomes() -> None:
    passed = _chapter("finalized", [StepOutcome.passed("rules")])
    assert review_outcome(_run(passed)) == "ok" and review_error(_run(passed), Path) is None
    no_model = _chapter("not_reviewed", [StepOutcome.skipped("consistency_review", "no model configured")])
    assert review_outcome(_run(passed, no_model)) == "not_evaluated"  # never read as a pass
    left = _chapter("not_reviewed", [StepOutcome.failed("rules", "forbidden 大贤良师")], open_issues=1)
    assert review_outcome(_run(no_model, left)) == "findings"
    failed = _chapter("error", [StepOutcome.error("consistency_review", "MODEL_AUTH", "the reviewer's answer …")])
    run = _run(left, failed.model_copy(update={"chapter": 2, "error_code": "MODEL_AUTH"}))
    assert review_outcome(run) == "failed_closed"
    line = review_error(run, lambda n: Path(f"chapters/{n:04d}.md"))
    assert line == (
        "error[MODEL_AUTH]: chapter 2 consistency_review: the reviewer's answer … (the chapter file"
        " chapters/0002.md was not changed)"
    )
    facts = _chapter("finalized", [StepOutcome.error("facts", "MODEL_TIMEOUT", "no fact card stored")])
    assert review_outcome(_run(facts)) == "failed_closed"
    assert (review_error(_run(facts), Path) or "").startswith("error[MODEL_TIMEOUT]: chapter 1: the facts step")


def _judged(outcome: str, gate: list[str] = ()) -> JudgeOutcome:  # type: ignore[assignment]
    return JudgeOutcome(
        outcome=outcome,  # type: ignore[arg-type]
        reason="MODEL_AUTH" if outcome == "invalid" else None,
        rubric=RubricRef(id="r", version=1, sha256="0" * 64),
        item_ref="item_x",
        arm_map_sha256="0" * 64,
        gate=[GateDecision(candidate_id=f"c{i}", outcome=g) for i, g in enumerate(gate)],  # type: ignore[arg-type]
    )


def test_judge_outcomes() -> None:
    assert judge_outcome(_judged("stable", ["passed", "passed"])) == "ok"
    assert judge_outcome(_judged("stable", ["passed", "failed"])) == "findings"
    assert judge_outcome(_judged("skipped")) == "not_evaluated" and judge_error(_judged("skipped")) is None
    for bad in ("invalid", "invalid_unstable"):
        assert judge_outcome(_judged(bad)) == "failed_closed"
    assert judge_error(_judged("invalid")) == (
        "error[MODEL_AUTH]: the panel is invalid, item item_x — no scores were produced; see `muse calls` for the "
        "receipts"
    )


def test_sync_and_models_check_outcomes() -> None:
    base = {
        "ok": True, "added": [], "changed": [], "removed": [], "relexed": [], "unchanged": 0, "reindexed": [],
        "rows_written": 0, "rows_deleted": 0, "facts_extracted": [], "facts_stale": [], "facts_rejected": 0,
        "run_id": None, "problems": [],
    }  # fmt: skip
    assert sync_outcome(SyncDoc(**base, facts_step="passed", facts_error=None)) == "ok"
    stale = SyncDoc(**base, facts_step="skipped(no model configured)", facts_error=None)
    assert sync_outcome(stale) == "not_evaluated" and sync_error(stale, Path) is None
    failed = SyncDoc(**base, facts_step="error(MODEL_AUTH)", facts_error={"chapter": 3, "code": "MODEL_AUTH"})
    assert sync_outcome(failed) == "failed_closed"
    assert (sync_error(failed, lambda n: Path(f"c/{n}.md")) or "").startswith(
        "error[MODEL_AUTH]: fact extraction for chapter 3 failed closed, c/3.md"
    )

    def role(outcome: str) -> RoleCheck:
        return RoleCheck(role="writer", provider=None, kind=None, model=None, outcome=outcome)  # type: ignore[arg-type]

    issue = ConfigIssue(code="MODEL_KEY_MISSING", severity="error", what="w", where="x", fix="f")
    warning = issue.model_copy(update={"severity": "warning"})
    assert ModelsCheckReport.outcome_of([issue], [role("passed")]) == "bad_input"
    assert ModelsCheckReport.outcome_of([warning], [role("passed"), role("error")]) == "failed_closed"
    assert ModelsCheckReport.outcome_of([warning], [role("passed"), role("skipped")]) == "ok"
    assert ModelsCheckReport.outcome_of([], [role("skipped")]) == "not_evaluated"
