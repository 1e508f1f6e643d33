"""Every declared role task, for what needs them all: the registry check and current refs by (role, task)."""

from __future__ import annotations

from typing import Any

from ..book import ROLE_NAMES
from ..llm import TaskRef
from ._task import RoleTask, correction


def all_tasks() -> list[RoleTask[Any, Any]]:
    """Every role task, the models-check probe once per role."""
    from . import arbiter, common, detector, editor, extractor, judge, normalizer, outliner, planner, reviewer, writer

    tasks: list[RoleTask[Any, Any]] = [
        reviewer.REVIEW,
        editor.REVIEW,
        arbiter.DECIDE,
        writer.PARAGRAPHS,
        writer.REPAIR,
        writer.POLISH,
        writer.REWRITE,
        writer.WRITE,
        writer.WRITE_FINAL,
        writer.WRITE_REPAIR,
        detector.DETECT,
        extractor.EXTRACT,
        normalizer.NORMALIZE,
        outliner.DRAFT,
        planner.DRAFT,
        *judge.TASKS.values(),
    ]
    return tasks + [common.models_check(role) for role in ROLE_NAMES]


def current_ref(role: str, task: str) -> TaskRef | None:
    """The ref task `task` of role `role` has now (None for a task that no longer exists).

    A stored ref that differs from this one was made with other templates or another schema.
    """
    if task == "correction":
        return correction(role).ref
    for t in all_tasks():
        if (t.role, t.name) == (role, task):
            return t.ref
    return None
