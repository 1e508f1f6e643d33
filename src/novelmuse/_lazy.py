"""Packages whose public names are imported from their private modules on first use (PEP 562).

A command should import only what it uses (issue 17: `muse check` must not load the HTML report, the judges or
the model SDKs just because they share a package with what it needs). A lazy package keeps its public API
written as ordinary imports, under ``if TYPE_CHECKING:`` — what readers, mypy and editors see — and hands the
module-level ``__getattr__`` to `lazy_getattr`, which resolves a name by reading that same import block (as
scientific-python's ``lazy_loader.attach_stub`` reads a stub), so the list is written once::

    from typing import TYPE_CHECKING

    from .._lazy import lazy_getattr

    if TYPE_CHECKING:
        from ._check import render_check
        from .html import build_report

    __getattr__ = lazy_getattr(__name__, __file__)
    __all__ = ["build_report", "render_check"]

`tests/test_startup.py` imports every name of every lazy package, so a name missing from the block fails there.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path


def type_checking_imports(source: str) -> dict[str, str]:
    """Public name → relative module (``"._check"``) of every ``from .x import y`` under ``if TYPE_CHECKING:``."""
    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level:
                    module = "." * stmt.level + (stmt.module or "")
                    out.update({alias.asname or alias.name: module for alias in stmt.names})
    return out


def lazy_getattr(package: str, init_file: str) -> Callable[[str], object]:
    """The module ``__getattr__`` of lazy package `package` (whose ``__init__.py`` is `init_file`)."""
    table: dict[str, str] = {}

    def __getattr__(name: str) -> object:
        if not table:
            table.update(type_checking_imports(Path(init_file).read_text(encoding="utf-8")))
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups are plain attribute reads
        return value

    return __getattr__
