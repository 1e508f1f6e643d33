"""Every declared role task, for what needs them all: the registry check and current refs by (role, task)."""

from __future__ import annotations

from typing import Any, Final

from ..book import ROLE_NAMES
from ..llm import TaskRef
from ._task import RoleTask, correction

#: The roles that declare tasks of their own, in the order `all_tasks` lists them.
DECLARING_ROLES: Final = (
    "reviewer",
    "editor",
    "arbiter",
    "writer",
    "detector",
    "extractor",
    "normalizer",
    "outliner",
    "planner",
    "judge",
)


def declared_tasks(role: str) -> list[RoleTask[Any, Any]]:
    """The tasks role `role` declares (not the models-check probe every role shares), importing that role's
    package only: a caller that needs a few roles' refs (the writer configuration) does not load them all."""
    if role == "reviewer":
        from . import reviewer

        return [reviewer.REVIEW]
    if role == "editor":
        from . import editor

        return [editor.REVIEW]
    if role == "arbiter":
        from . import arbiter

        return [arbiter.DECIDE]
    if role == "writer":
        from . import writer

        return [
            writer.PARAGRAPHS,
            writer.REPAIR,
            writer.POLISH,
            writer.REWRITE,
            writer.WRITE,
            writer.WRITE_FINAL,
            writer.WRITE_REPAIR,
        ]
    if role == "detector":
        from . import detector

        return [detector.DETECT]
    if role == "extractor":
        from . import extractor

        return [extractor.EXTRACT]
    if role == "normalizer":
        from . import normalizer

        return [normalizer.NORMALIZE]
    if role == "outliner":
        from . import outliner

        return [outliner.DRAFT]
    if role == "planner":
        from . import planner

        return [planner.DRAFT]
    if role == "judge":
        from . import judge

        return [*judge.TASKS.values()]
    return []


def all_tasks() -> list[RoleTask[Any, Any]]:
    """Every role task, the models-check probe once per role."""
    from .common import models_check

    tasks = [task for role in DECLARING_ROLES for task in declared_tasks(role)]
    return tasks + [models_check(role) for role in ROLE_NAMES]


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
