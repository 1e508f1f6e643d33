"""The writer configuration: what a passed gate says was proven, hashed as `run_config_sha256`.

A Gate A / Gate B receipt proves something about one writer — the prompts it is rendered with, the detector
that gates it, the models that answer, the context arm it writes from, the gate spec it was measured by and
its budgets. `writer_config(book)` gathers exactly that, as one canonical document; its sha256 is what the
replay orchestrator puts into every receipt's `ReceiptBindings.run_config_sha256` and what the fine-outline
entry guard and promotion match against. Change any part — a template edited and registered as a new
version, another model id, a new gate spec, a budget — and the hash changes, so receipts earned by the old
writer no longer count for the new one.

Parts (all from code and book.toml, nothing from the chapters):

- **tasks**: the ref (role, task, version, prompt sha256, schema sha256) of every role task the gated writer
  and its detector gate run — the writer's chapter-writing tasks (``write``, ``write_final`` and any later
  ``write_*`` task), every detector task, the extractor's ``extract`` (the detector gate runs it on the
  candidate), the judge's ``writer_replay`` (the panel's yardstick) and the correction message their calls
  share. Tasks are found by role and name among the tasks those roles declare (`roles.declared_tasks`, what
  `roles.all_tasks()` lists for them), so a task added to those roles is bound without editing this module.
- **models**: (provider kind, full model id) of the writer, detector, extractor and judge roles; for the
  isolated Claude CLI also the pinned binary sha256 and version (seed 003: 绝对 CLI 路径 + sha256 + 版本 +
  完整 model ID). Provider names and endpoints are not part of it (renaming a table proves nothing new).
- **arm**: the context arm the gated writer writes with — the gate spec's Gate B candidate (C), promoted over
  its baseline (A) by a passed Gate B — and `context`: how contexts are built (manifest and context schema
  versions, the context and status vocabularies' sha256).
- **gate_spec**: the locator and sha256 of the gate spec in force.
- **writing**: the book's ``[writing]`` budgets and loop bounds.
- **code**: the sha256 of the source of every module that builds contexts, runs the arms and the writer loop,
  gates drafts, orchestrates replay and evaluates the gates (`CODE_MODULES`, as installed): change one constant
  there and it is another writer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from ..book import Book, ClaudeCliProviderConfig
from ..llm import TaskRef
from ..roles import correction, declared_tasks
from ..text import canonical_json, sha256_hex
from ._spec import Arm, GateSpec, load_gate_spec

WRITER_CONFIG_SCHEMA: Final = "writer-config-v2"
#: The code a receipt's proof depends on, as installed (in this order): what builds the writer's context and its
#: arms, the writer loop with its evidence rounds, the detector gate, the replay orchestrator, the one
#: GateInputBuilder and the gates. Changing a constant in any of them is another writer: old receipts stop counting.
CODE_MODULES: Final = (
    "writing/_arms.py",
    "writing/_budget.py",
    "writing/_build.py",
    "writing/_detector.py",
    "writing/_evidence.py",
    "writing/_factcheck.py",
    "writing/_gate.py",
    "writing/_hardcheck.py",
    "writing/_leak.py",
    "writing/_loop.py",
    "writing/_manifest.py",
    "writing/_plan.py",
    "replay/_builder.py",
    "replay/_gates.py",
    "replay/_input.py",
    "replay/_orchestrator.py",
    "replay/_order.py",
)
#: The roles whose models a receipt's proof depends on.
GATED_ROLES: Final = ("writer", "detector", "extractor", "judge")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskPin(_Strict):
    """One role task as it is registered now."""

    role: str
    task: str
    version: int
    prompt_sha256: str
    schema_sha256: str

    @classmethod
    def of(cls, ref: TaskRef) -> TaskPin:
        """The pin of a task ref."""
        return cls(
            role=ref.role,
            task=ref.task,
            version=ref.version,
            prompt_sha256=ref.prompt_sha256,
            schema_sha256=ref.schema_sha256,
        )


class ModelPin(_Strict):
    """Which model answers a role: provider kind and full model id (None when the role has no model)."""

    role: str
    kind: str | None
    model: str | None
    binary_sha256: str | None = None  # claude-cli: the pinned executable
    binary_version: str | None = None


class CodePin(_Strict):
    """One module of the code a receipt binds, by the sha256 of its source as installed."""

    module: str
    sha256: str


def code_pins(root: Traversable | None = None, modules: tuple[str, ...] = CODE_MODULES) -> list[CodePin]:
    """The sha256 of every module of `modules` (the writer's `CODE_MODULES` unless said) under `root` (default: the
    installed `novelmuse` package)."""
    base = root if root is not None else resources.files("novelmuse")
    out = []
    for module in modules:
        path = base
        for part in module.split("/"):
            path = path / part
        out.append(CodePin(module=module, sha256=sha256_hex(path.read_bytes())))
    return out


@cache
def installed_code(modules: tuple[str, ...] = CODE_MODULES) -> list[CodePin]:
    """`code_pins` of the installed package, computed once per process."""
    return code_pins(modules=modules)


class SpecPin(_Strict):
    locator: str
    sha256: str


class WriterConfig(_Strict):
    """The writer configuration of a book (see the module doc); `sha256` is over everything else."""

    schema_version: Literal["writer-config-v2"] = WRITER_CONFIG_SCHEMA
    tasks: list[TaskPin]
    models: list[ModelPin]
    code: list[CodePin]
    arm: Arm
    baseline_arm: Arm
    context: dict[str, str]
    gate_spec: SpecPin
    writing: dict[str, int | float | str]

    @property
    def sha256(self) -> str:
        """sha256 of the canonical JSON of the configuration: the `run_config_sha256` receipts bind."""
        return sha256_hex(canonical_json(self.model_dump(mode="json")))


def _gated_task(role: str, task: str) -> bool:
    if role == "writer":
        return task.startswith("write")  # the chapter-writing tasks, not the editorial loop's rewrites
    return role == "detector" or (role, task) in (("extractor", "extract"), ("judge", "writer_replay"))


def model_pin(book: Book, role: str) -> ModelPin:
    """Which model answers `role` in `book` now (kind and full id; the pinned binary for the Claude CLI)."""
    target = book.config.role_target(role)
    if target is None:
        return ModelPin(role=role, kind=None, model=None)
    provider = book.config.providers[target[0]]
    if isinstance(provider, ClaudeCliProviderConfig):
        return ModelPin(
            role=role,
            kind=provider.kind,
            model=target[1],
            binary_sha256=provider.sha256,
            binary_version=provider.version,
        )
    return ModelPin(role=role, kind=provider.kind, model=target[1])


#: `MANIFEST_SCHEMA_VERSION = "…"` as `writing/_manifest.py` writes it.
_MANIFEST_SCHEMA_LINE = re.compile(r'^MANIFEST_SCHEMA_VERSION(?:: [\w\[\]]+)? = "([^"\\]+)"$', re.MULTILINE)


def context_versions() -> dict[str, str]:
    """`writing.context_versions()` — the manifest and context schema versions, the context and status
    vocabularies' sha256 — without importing the context builder it lives in (`writing._build` and the story
    memory: ~0.1 s of `muse gate show`, which only names the current configuration): the vocabularies are hashed
    from their files by path as their loaders hash them, and the manifest schema version is read from
    `writing/_manifest.py` (itself bound by its sha256 in `code`), or imported when that file does not write it as
    one plain string literal. `tests/replay/test_writer_config.py` checks it against the builder's own."""
    from ..roles.writer.context import CONTEXT_SCHEMA_VERSION

    package = resources.files("novelmuse")
    found = _MANIFEST_SCHEMA_LINE.findall((package / "writing" / "_manifest.py").read_text(encoding="utf-8"))
    if len(found) == 1:
        manifest_schema = found[0]
    else:  # not one literal: the module's own value
        from ..writing._manifest import MANIFEST_SCHEMA_VERSION as manifest_schema
    return {
        "manifest_schema": manifest_schema,
        "context_schema": CONTEXT_SCHEMA_VERSION,
        "context_vocabulary_sha256": sha256_hex(
            (package / "writing" / "data" / "vocabulary.toml").read_text(encoding="utf-8")
        ),
        "status_vocabulary_sha256": sha256_hex(
            (package / "memory" / "data" / "status.toml").read_text(encoding="utf-8")
        ),
    }


def task_pins(roles: tuple[str, ...], keep: Callable[[str, str], bool], correction_role: str) -> list[TaskPin]:
    """The pins of the tasks `roles` declare that `keep(role, task)` selects, sorted by (role, task), then the
    correction their calls share under `correction_role`: only those roles' task modules are loaded and only the
    selected tasks' schemas hashed."""
    refs = {(t.role, t.name): t.ref for role in roles for t in declared_tasks(role) if keep(t.role, t.name)}
    return [*(TaskPin.of(ref) for _, ref in sorted(refs.items())), TaskPin.of(correction(correction_role).ref)]


def writer_config(book: Book, *, spec: GateSpec | None = None) -> WriterConfig:
    """The book's writer configuration now (gate spec: `spec`, default the newest registered one)."""
    spec = spec if spec is not None else load_gate_spec()
    return WriterConfig(
        # the models-check probe (a task every role shares) proves a model answers; it is not part of the writer
        tasks=task_pins(GATED_ROLES, _gated_task, "writer"),
        models=[model_pin(book, role) for role in GATED_ROLES],
        code=installed_code(),
        arm=spec.gate_b.candidate,
        baseline_arm=spec.gate_b.baseline,
        context=context_versions(),
        gate_spec=SpecPin(locator=spec.locator, sha256=spec.sha256),
        writing=book.config.writing.model_dump(mode="json"),
    )


def writer_config_sha256(book: Book) -> str:
    """`writer_config(book).sha256`: the run configuration hash a receipt must carry to count for this book now."""
    return writer_config(book).sha256
