"""One door to the models (issue 9), checked on the source itself.

- Every message sent to a model is built by a role task in `roles/`: outside `roles/`, no module constructs a
  `Message` (the providers only translate the messages they are handed into their wire format) and none builds
  a `TaskCall` or a `Correction` (only `llm`, which defines them, and `roles`, which renders them).
- The caller owns the run: `ModelSession.open` (or the constructor) is called only by the entry points — the CLI
  (`cli/`) and replay's trusted orchestrator (`replay/_orchestrator.py`, which alone holds a replay run's session)
  — so one budget and one deadline cover everything a command does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "novelmuse"
#: Where a model session may be opened: the CLI's commands, the studio's actions (the CLI's second face) and replay's
#: orchestrator (issue 12) — exactly these.
ENTRY_POINTS = ("cli/", "studio/", "replay/_orchestrator.py")
_BUILDERS = {"Message", "TaskCall", "Correction"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def _name(node: ast.expr) -> str:
    """The dotted name a call is made on: `Message`, `llm.Message`, `ModelSession.open`, …"""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _calls(tree: ast.Module) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield _name(node.func), node.lineno


def test_only_roles_build_messages_and_task_calls() -> None:
    found = []
    for rel, tree in _modules():
        if rel.startswith("roles/") or rel == "llm/_task.py":
            continue
        for name, line in _calls(tree):
            last = name.split(".")
            if last[-1] in _BUILDERS or (len(last) > 1 and last[-2] in _BUILDERS):  # Message(…), Message.model_*
                found.append(f"{rel}:{line} {name}")
    assert found == [], "messages and task calls are built only in roles/: " + ", ".join(found)


def test_only_entry_points_open_a_model_session() -> None:
    found = []
    for rel, tree in _modules():
        if rel.startswith(ENTRY_POINTS):
            continue
        for name, line in _calls(tree):
            if name.endswith(("ModelSession.open", "ModelSession")) and rel != "llm/_session.py":
                found.append(f"{rel}:{line} {name}")
    assert found == [], "only entry points open a model session: " + ", ".join(found)


def test_the_checks_see_what_they_look_for() -> None:
    """The walkers are not vacuous: they find the builders and the opener where they are allowed."""
    names = {rel: {n for n, _ in _calls(tree)} for rel, tree in _modules()}
    assert "Message" in names["roles/_task.py"] and "TaskCall" in names["roles/_task.py"]
    assert any("ModelSession.open" in n for rel, ns in names.items() if rel.startswith("cli/") for n in ns)
    assert "ModelSession.open" in names["replay/_orchestrator.py"]


def test_the_faces_use_other_packages_through_their_public_init_only() -> None:
    """The CLI and the studio are thin faces over the services: they import a package's public `__init__`, never
    one of its private modules (``from ..reports._gate import …``)."""
    found = []
    for rel, tree in _modules():
        if not rel.startswith(("cli/", "studio/")):
            continue
        for node in ast.walk(tree):
            private = isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module
            if private and any(part.startswith("_") for part in str(node.module).split(".")):
                found.append(f"{rel}:{node.lineno} from {'.' * node.level}{node.module}")  # type: ignore[attr-defined]
    assert not found, found
