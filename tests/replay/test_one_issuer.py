"""One issuer (seed 003: writer_gate 是唯一签发者): no module but replay/_journal.py can open the journal for
writing — proven statically over the whole package, and watched at run time with an audit hook."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

from novelmuse.book import Book

from ._helpers import Store, honest_doc, prepare_run

SRC = Path(__file__).resolve().parents[2] / "src" / "novelmuse"
JOURNAL_MODULE = SRC / "replay" / "_journal.py"
PRIVATE = {
    "_JOURNAL",
    "_LOCK",
    "_gates_dir",
    "_gates_dir_fd",
    "_open_journal",
    "_open_for_append",
    "_locked",
    "_append_entry",
}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_APPEND", "O_CREAT", "O_TRUNC"}
WRITERS = {"write", "ftruncate", "truncate", "pwrite", "replace", "rename", "unlink", "remove"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def test_only_the_journal_module_names_the_journal_file() -> None:
    for path, tree in _modules():
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and ("journal.jsonl" in node.value or "journal.lock" in node.value)
            ):
                assert path == JOURNAL_MODULE, f"{path}:{node.lineno} names the journal file"


def test_no_other_module_reaches_the_journal_modules_file_handling() -> None:
    for path, tree in _modules():
        if path == JOURNAL_MODULE:
            continue
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.ImportFrom)
                else [node.attr]
                if isinstance(node, ast.Attribute)
                else [node.id]
                if isinstance(node, ast.Name)
                else []
            )
            assert not PRIVATE & set(names), f"{path}:{node.lineno} uses the journal module's file handling"


def _enclosing(tree: ast.Module) -> dict[int, str]:
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef) else name
            owner[id(child)] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return owner


def test_inside_the_journal_module_only_append_writes() -> None:
    tree = ast.parse(JOURNAL_MODULE.read_text(encoding="utf-8"))
    owner = _enclosing(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            if node.attr in WRITE_FLAGS:
                assert owner[id(node)] in ("_open_for_append", "_locked"), f"line {node.lineno}: {node.attr} outside"
            if node.attr in WRITERS:
                assert owner[id(node)] == "_append_entry", f"line {node.lineno}: os.{node.attr} outside _append_entry"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
            pytest.fail(f"line {node.lineno}: builtin open() in the journal module")
        is_os = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
        if isinstance(node, ast.Attribute) and node.attr in ("write_bytes", "write_text", "open") and not is_os:
            pytest.fail(f"line {node.lineno}: Path.{node.attr} in the journal module")


_WATCH: list[tuple[str, list[str]]] = []
_ACTIVE = [False]


def _hook(event: str, args: tuple[object, ...]) -> None:
    if not _ACTIVE[0] or event != "open" or not isinstance(args[0], str) or not args[0].endswith("journal.jsonl"):
        return
    flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
    mode = args[1] if isinstance(args[1], str) else ""
    writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC) or any(
        c in mode for c in "wax+"
    )
    if writing:
        frame, stack = sys._getframe(1), []
        while frame is not None:
            stack.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
            frame = frame.f_back
        _WATCH.append((args[0], stack))


sys.addaudithook(_hook)


def test_at_run_time_every_write_open_of_the_journal_comes_from_append(
    muse, gate_book: Book, user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from novelmuse.replay import GateIssuer

    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    recorded = Store()  # the runs the orchestrator would have recorded: verify rebuilds gate inputs from the store
    monkeypatch.setattr("novelmuse.cli._cmd_gate.gate_input_rebuilder", lambda book: recorded.rebuild)
    _WATCH.clear()
    _ACTIVE[0] = True
    try:
        with GateIssuer.open(gate_book) as issuer:
            for doc, run in ((honest_doc(), "RUN1"), (honest_doc(n=3), "RUN2")):
                gi, bindings = prepare_run(gate_book, doc, run=run)
                recorded.runs[bindings.gate_input.locator] = gi
                issuer.issue("A", gi, bindings)
        for args in (["verify"], ["show", "--json"], ["reindex"]):
            assert muse("gate", *args, "--book", gate_book.root).exit_code == 0
    finally:
        _ACTIVE[0] = False
    assert len(_WATCH) == 4  # the first append tries to open, then creates; the receipt; the second report
    for _path, stack in _WATCH:
        assert stack[:3] == [
            f"{JOURNAL_MODULE}:_open_journal",
            f"{JOURNAL_MODULE}:_open_for_append",
            f"{JOURNAL_MODULE}:_append_entry",
        ], stack[:4]
