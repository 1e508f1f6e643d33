"""The fast paths that name the current writer and outliner configurations (`muse gate show`): the same sha256 as
the full configurations, which load every role task and the context builder — receipts keep verifying."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from novelmuse.book import Book, find_book
from novelmuse.replay import (
    TaskPin,
    _writer_config,
    outliner_config,
    writer_config,
)
from novelmuse.roles import all_tasks, correction, declared_tasks
from novelmuse.roles._tasks import DECLARING_ROLES
from novelmuse.text import canonical_json, sha256_hex
from novelmuse.writing import context_versions

from ..conftest import SAMPLE_BOOK
from ..roles.test_tasks import bump, edit, prompts_copy  # noqa: F401  (prompts_copy: a fixture)

PROVIDERS = (
    '\n[providers.ds]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    '[providers.cli]\nkind = "claude-cli"\npath = "/opt/claude"\nsha256 = "' + "a" * 64 + '"\nversion = "2.1.211"\n'
    '[roles]\ndefault = "ds:deepseek-chat"\noutliner = "cli:claude-opus-4"\njudge = "cli:claude-opus-4"\n'
    "[writing]\nretrieval_chars = 5000\n"
)


def with_toml(book: Book, extra: str) -> Book:
    with (book.root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(extra)
    return find_book(book.root)


def full_writer_task_pins() -> list[TaskPin]:
    """The writer's task pins as they were computed before the fast path: from every role task."""

    def gated(role: str, task: str) -> bool:
        if role == "writer":
            return task.startswith("write")
        return role == "detector" or (role, task) in (("extractor", "extract"), ("judge", "writer_replay"))

    refs = {(t.ref.role, t.ref.task): t.ref for t in all_tasks() if t.registered_as is None}
    refs = {key: ref for key, ref in refs.items() if gated(*key)}
    return [*(TaskPin.of(ref) for _, ref in sorted(refs.items())), TaskPin.of(correction("writer").ref)]


def full_writer_sha256(book: Book) -> str:
    """`writer_config(book).sha256` with the task pins from every role task and the context versions from the
    context builder itself."""
    doc = writer_config(book).model_dump(mode="json")
    doc["tasks"] = [p.model_dump(mode="json") for p in full_writer_task_pins()]
    doc["context"] = context_versions()
    return sha256_hex(canonical_json(doc))


def test_declared_tasks_are_all_tasks_but_the_probes() -> None:
    declared = [t for role in DECLARING_ROLES for t in declared_tasks(role)]
    every = all_tasks()
    assert every[: len(declared)] == declared
    assert all(t.registered_as is not None for t in every[len(declared) :])  # the models-check probe per role
    assert {t.role for t in every if t.registered_as is None} == set(DECLARING_ROLES)
    assert declared_tasks("nobody") == []


def full_outliner_task_pins() -> list[TaskPin]:
    """The outliner configuration's task pins as the whole task registry gives them (every role loaded)."""
    wanted = {("outliner", "draft"), ("judge", "fine_outline_replay")}
    refs = {(t.ref.role, t.ref.task): t.ref for t in all_tasks() if (t.ref.role, t.ref.task) in wanted}
    return [*(TaskPin.of(ref) for _, ref in sorted(refs.items())), TaskPin.of(correction("outliner").ref)]


def test_the_context_versions_are_the_builders() -> None:
    assert _writer_config.context_versions() == context_versions()


def test_the_fast_configurations_hash_as_the_full_ones(gate_book: Book) -> None:
    for book in (gate_book, find_book(SAMPLE_BOOK), with_toml(gate_book, PROVIDERS)):
        assert writer_config(book).sha256 == full_writer_sha256(book)
        assert writer_config(book).tasks == full_writer_task_pins()
        assert outliner_config(book).tasks == full_outliner_task_pins()
    assert [m.kind for m in outliner_config(book).models] == ["claude-cli", "claude-cli"]  # the pins are not empty


def test_a_new_prompt_version_moves_both_paths_alike(gate_book: Book, prompts_copy: Path) -> None:  # noqa: F811
    before = writer_config(gate_book).sha256, outliner_config(gate_book).sha256
    for role, task, files in (
        ("detector", "detect", ["detector/system.txt", "detector/input.txt"]),
        ("outliner", "draft", ["outliner/system.txt", "outliner/input.txt"]),
    ):
        path = prompts_copy / files[-1]
        edit(path, path.read_text(encoding="utf-8") + "\n（新的一行）\n")
        bump(prompts_copy, role, task, {f: "" for f in files})
    assert writer_config(gate_book).sha256 == full_writer_sha256(gate_book) != before[0]
    assert outliner_config(gate_book).tasks == full_outliner_task_pins()
    assert outliner_config(gate_book).sha256 != before[1]


def test_gate_show_loads_neither_the_context_builder_nor_every_role(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from novelmuse.cli import main\n"
        "code = main(['gate', 'show', '--book', sys.argv[1]])\n"
        "loaded = [m for m in ('novelmuse.writing._build', 'novelmuse.replay._outliner', 'novelmuse.replay._sets',"
        " 'novelmuse.replay._guard', 'novelmuse.roles.reviewer', 'novelmuse.roles.planner',"
        " 'novelmuse.roles.common._models_check', 'novelmuse.llm._policy') if m in sys.modules]\n"
        "print(code, loaded)\n"
    )
    book = tmp_path / "sanguo"
    shutil.copytree(SAMPLE_BOOK, book, ignore=shutil.ignore_patterns(".muse"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    env["MUSE_CONFIG"] = str(tmp_path / "none.toml")
    r = subprocess.run([sys.executable, "-c", code, str(book)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[-2] == "0 []"
