"""Start-up (issue 17 item 1): commands import only what they use, and `muse --help` lists every command from the
registry without importing any command module."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer._click import Command
from typer.core import TyperCommand, TyperGroup

from novelmuse import _lazy
from novelmuse.cli._app import COMMANDS, app
from tests.conftest import SANGUO
from tests.rules._books import make_book, split_corpus

#: What neither `muse --help` nor `muse check` may load: the model SDKs, numpy, the retrieval index's tokenizers
#: (and bm25s, gone since issue 17.2), and the service packages of other commands.
NOT_ON_THE_CHECK_PATH = (
    "openai",
    "anthropic",
    "numpy",
    "bm25s",
    "jieba",
    "rjieba",
    "novelmuse.judging",
    "novelmuse.editorial",
    "novelmuse.writing",
    "novelmuse.replay",
    "novelmuse.memory",
    "novelmuse.llm",
    "novelmuse.roles",
    "novelmuse.reports.html",
)

_PROBE = """
import json, sys
from novelmuse.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def modules_after(tmp_path: Path, *args: str, cwd: Path) -> tuple[int, set[str]]:
    """Run `muse ARGS` in a fresh interpreter; its exit code and every module it imported."""
    report = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), *args], cwd=cwd, capture_output=True, check=False, timeout=120
    )
    doc = json.loads(report.read_text(encoding="utf-8"))
    return doc["code"], set(doc["modules"])


def loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


@pytest.fixture(scope="module")
def one_chapter_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chapters = split_corpus(SANGUO.read_text(encoding="utf-8"))[:1]
    return make_book(tmp_path_factory.mktemp("startup") / "book", chapters, rules="禁止:黄巾\n疲劳词:玄德≤1\n")


@pytest.mark.parametrize("args", [("--help",), ("check",), ("check", "--json")])
def test_help_and_check_import_neither_sdks_nor_numpy_nor_other_services(
    args: tuple[str, ...], one_chapter_book: Path, tmp_path: Path
) -> None:
    code, modules = modules_after(tmp_path, *args, cwd=one_chapter_book)
    assert code == (0 if args == ("--help",) else 1)  # the book has a forbidden phrase: check ran and found it
    assert [m for m in NOT_ON_THE_CHECK_PATH if loaded(modules, m)] == []
    if args == ("--help",):  # help is listed from the registry: no command module, no book, no pydantic model
        assert not any(m.startswith("novelmuse.cli._cmd_") for m in modules)
        assert not loaded(modules, "novelmuse.book") and not loaded(modules, "pydantic")


def _real_commands() -> dict[str, Command]:
    for modules in COMMANDS.values():
        for module in modules[1:]:
            importlib.import_module(f"novelmuse.cli.{module}")
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return dict(group.commands)


def test_the_registry_names_every_command_with_its_own_one_line_help() -> None:
    real = _real_commands()
    assert set(real) == set(COMMANDS) | {"version"}
    for name, (short_help, *_modules) in COMMANDS.items():
        placeholder = TyperCommand(name, help=short_help)
        for width in (45, 59, 200, 1000):  # the help line is cut to the terminal's width
            assert placeholder.get_short_help_str(width) == real[name].get_short_help_str(width), (name, width)


def test_help_lists_the_registry_in_order(muse) -> None:
    r = muse("--help")
    listed = [line.split()[0] for line in r.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == ["version", *COMMANDS]


@pytest.mark.parametrize(
    "package",
    [
        "novelmuse.book",
        "novelmuse.reports",
        "novelmuse.reports.html",
        "novelmuse.rules",
        "novelmuse.memory",
        "novelmuse.roles",
        "novelmuse.roles.extractor",
        "novelmuse.roles.common",
        "novelmuse.roles.normalizer",
    ],
)
def test_lazy_packages_export_exactly_their_import_block(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    block = _lazy.type_checking_imports(Path(module.__file__).read_text(encoding="utf-8"))
    assert sorted(block) == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is getattr(importlib.import_module(block[name], package), name)
    with pytest.raises(AttributeError):
        _ = module.no_such_name


def test_type_checking_imports_reads_only_the_guarded_relative_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\nimport os\nfrom .a import x\n"
        "if TYPE_CHECKING:\n    from ._b import y, z as w\n    from .c.d import (\n        v,\n    )\n    import json\n"
    )
    assert _lazy.type_checking_imports(source) == {"y": "._b", "w": "._b", "v": ".c.d"}
    ast.parse(source)  # the sample is valid Python


def test_warm_search_loads_the_index_but_not_the_model_layer(one_chapter_book: Path, tmp_path: Path) -> None:
    modules_after(tmp_path, "search", "黄巾", cwd=one_chapter_book)  # builds the index (numpy, once)
    code, modules = modules_after(tmp_path, "search", "黄巾", cwd=one_chapter_book)
    assert code == 0
    assert loaded(modules, "novelmuse.memory._index") and loaded(modules, "rjieba")
    heavy = [m for m in NOT_ON_THE_CHECK_PATH if m not in ("rjieba", "novelmuse.memory")]
    assert [m for m in heavy if loaded(modules, m)] == []
    # the terminal shows the search's own result: no pydantic document classes of the memory commands
    assert not loaded(modules, "novelmuse.reports._memory")
