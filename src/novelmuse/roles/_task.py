"""Role tasks: the one place where a chat message list is built.

A `RoleTask` is data plus one render function: its template files (``roles/<role>/*.txt``), its output schema,
how a typed request fills the templates' placeholders, and the contract checks the output must pass. `render`
turns a request into a `llm.TaskCall` (messages + contracts + `TaskRef`), a pure function of the request.

Templates are pinned like rubrics. Every template file starts with a ``# version N — what it is`` header
line, the file's own revision for people; it is never sent to a model. ``roles/prompts.yaml`` maps each
(role, task, version) to the sha256 of every file the task renders; a task's version is its highest
registered one. A template edited without registering a new version no longer matches its pin and fails to
load (PROMPT_HASH_MISMATCH, naming the file) — the whole registry is checked the first time any task is used.

Placeholders are ``$name`` / ``${name}`` (string.Template), so JSON examples with braces need no escaping.
Rendering fails on a missing value (KeyError: a bug, caught by tests) rather than sending a hole.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Generic, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..llm import Contract, Correction, Message, TaskCall, TaskRef, model_schema_sha256
from ..text import sha256_hex, sha256_json

Req = TypeVar("Req")
Out = TypeVar("Out", bound=BaseModel)

REGISTRY_FILE = "prompts.yaml"
_HEADER = re.compile(r"# version \d+\b[^\n]*\n?")
#: The registry entry of the correction every task's calls share (rendered under the calling task's role).
CORRECTION = ("common", "correction")

#: libyaml's safe loader when PyYAML was built with it (5–10× faster on the shipped data files), else the Python one.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _prompts_dir() -> Path:
    """Where the template files and the registry live (a test points this at an edited copy). Cached: every
    render and every ref asks, and `resources.files` costs more than the rest of a lookup."""
    return Path(str(resources.files("novelmuse.roles")))


@dataclass(frozen=True)
class Template:
    """One template file: the body that is sent (its `# version` header removed) and the file's sha256."""

    path: str  # relative to roles/, e.g. "writer/rewrite.txt"
    body: str
    sha256: str  # of the file's bytes, header included

    def render(self, values: Mapping[str, object]) -> str:
        """Fill every placeholder of the body; a missing one raises KeyError."""
        return string.Template(self.body).substitute({k: str(v) for k, v in values.items()})


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    task: str
    version: int = Field(ge=1)
    files: dict[str, str]  # template path → sha256 of its bytes

    @model_validator(mode="after")
    def _shas(self) -> _Entry:
        for path, sha in self.files.items():
            if not re.fullmatch(r"[0-9a-f]{64}", sha):
                raise ValueError(f"{path}: the pin must be a sha256 (64 hex digits)")
        return self


class _Registry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int
    tasks: list[_Entry]

    @model_validator(mode="after")
    def _one_pin_per_version(self) -> _Registry:
        seen: set[tuple[str, str, int]] = set()
        for e in self.tasks:
            key = (e.role, e.task, e.version)
            if key in seen:
                raise ValueError(f"{e.role}.{e.task} v{e.version} is registered twice: one version has one pin")
            seen.add(key)
        return self


@dataclass(frozen=True)
class _Registered:
    """A task's current registration: its version and its verified templates."""

    version: int
    templates: dict[str, Template]

    def prompt_sha256(self, files: Sequence[str]) -> str:
        """sha256 over the templates' sha256, in the order the task renders them (what receipts bind)."""
        return sha256_json([self.templates[f].sha256 for f in files])


def _read_template(folder: Path, path: str, pin: str, task: str, version: int) -> Template:
    """Read a template file, check its bytes against the registry's pin, then its header."""
    where = f"roles/{path}"
    try:
        data = (folder / path).read_bytes()
    except OSError as exc:
        raise InputError("PROMPT_MISSING", f"template {path} cannot be read", where, "restore the file") from exc
    digest = sha256_hex(data)
    if digest != pin:
        raise InputError(
            "PROMPT_HASH_MISMATCH",
            f"template {path} was edited without a version bump (sha256 {digest[:12]}…, "
            f"{REGISTRY_FILE} pins {pin[:12]}… for {task} v{version})",
            where,
            f"restore the file, or register {task} v{version + 1} in roles/{REGISTRY_FILE} with sha256 {digest} "
            "for it (and for every other task that renders it)",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("PROMPT_INVALID", "the template is not UTF-8", where, "save it as UTF-8") from exc
    header = _HEADER.match(text)
    if header is None:
        raise InputError(
            "PROMPT_INVALID",
            "the template does not start with a `# version N — …` header line",
            where,
            "add the header (it is never sent to a model)",
        )
    return Template(path, text[header.end() :], digest)


@cache
def _registry(folder: Path) -> dict[tuple[str, str], _Registered]:
    """Every registered task at its highest version, each template read once and checked against its pin."""
    where = f"roles/{REGISTRY_FILE}"
    try:
        raw = yaml.load((folder / REGISTRY_FILE).read_bytes().decode("utf-8"), Loader=_SAFE_LOADER)
        registry = _Registry.model_validate(raw)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError("PROMPT_REGISTRY_INVALID", f"cannot read the registry ({exc})", where, "restore it") from exc
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise InputError("PROMPT_REGISTRY_INVALID", f"invalid registry ({msg})", where, "fix prompts.yaml") from exc
    current: dict[tuple[str, str], _Entry] = {}
    for entry in registry.tasks:
        key = (entry.role, entry.task)
        if key not in current or entry.version > current[key].version:
            current[key] = entry
    templates: dict[str, Template] = {}
    out: dict[tuple[str, str], _Registered] = {}
    for (role, task), entry in current.items():
        for path, pin in entry.files.items():
            if path not in templates or templates[path].sha256 != pin:
                templates[path] = _read_template(folder, path, pin, f"{role}.{task}", entry.version)
        out[(role, task)] = _Registered(entry.version, {p: templates[p] for p in entry.files})
    return out


def _registered(role: str, task: str, files: Sequence[str]) -> _Registered:
    found = _registry(_prompts_dir()).get((role, task))
    if found is None or set(found.templates) != set(files):
        raise InputError(
            "PROMPT_NOT_REGISTERED",
            f"task {role}.{task} (templates {', '.join(files)}) has no matching entry in {REGISTRY_FILE}",
            f"roles/{REGISTRY_FILE}",
            "register the task's version with the sha256 of each of its template files",
        )
    return found


@dataclass(frozen=True)
class RoleTask(Generic[Req, Out]):
    """One task of one role: template files, output schema, placeholder values and contracts for a request.

    `system` / `user`: the template files (relative to ``roles/``) whose bodies, joined by a newline, make the
    system and the user message. `fields(request)`: every placeholder's value. `contracts(request)`: the
    deterministic checks of the output. `registered_as`: the (role, task) of its registry entry when the task's
    templates are shared by every role (the models-check probe); by default (role, name).
    """

    role: str
    name: str
    schema: type[Out]
    user: tuple[str, ...]
    fields: Callable[[Req], Mapping[str, object]]
    system: tuple[str, ...] = ()
    contracts: Callable[[Req], Sequence[Contract[Out]]] | None = None
    schema_name: str = ""
    max_output_tokens: int | None = None
    registered_as: tuple[str, str] | None = None

    @property
    def files(self) -> tuple[str, ...]:
        """Every template file the task renders, system first."""
        return (*self.system, *self.user)

    def _registration(self) -> _Registered:
        role, task = self.registered_as or (self.role, self.name)
        return _registered(role, task, self.files)

    @property
    def version(self) -> int:
        """The task's registered version (its highest entry in prompts.yaml)."""
        return self._registration().version

    @property
    def ref(self) -> TaskRef:
        """What a run records for a call of this task, known without rendering (resume keys, manifests)."""
        reg = self._registration()
        return TaskRef(
            self.role, self.name, reg.version, reg.prompt_sha256(self.files), model_schema_sha256(self.schema)
        )

    def render(self, request: Req) -> TaskCall[Out]:
        """The call for `request`: rendered messages, its contracts, this task's ref and the shared correction."""
        reg = self._registration()
        values = self.fields(request)

        def text(paths: tuple[str, ...]) -> str:
            return "\n".join(reg.templates[p].render(values) for p in paths)

        messages = ((Message(role="system", content=text(self.system)),) if self.system else ()) + (
            Message(role="user", content=text(self.user)),
        )
        return TaskCall(
            ref=self.ref,
            schema=self.schema,
            messages=messages,
            correction=correction(self.role),
            contracts=tuple(self.contracts(request)) if self.contracts is not None else (),
            schema_name=self.schema_name,
            max_output_tokens=self.max_output_tokens,
        )


CORRECTION_FILE = "common/correction.txt"


def correction(role: str) -> Correction:
    """How a call of `role` asks again after a rejected draft: the draft, then the exact reasons (common/correction)."""
    reg = _registered(*CORRECTION, [CORRECTION_FILE])
    template = reg.templates[CORRECTION_FILE]

    def messages(draft: str, reasons: Sequence[str]) -> tuple[Message, ...]:
        asked = template.render({"reasons": "\n".join(f"- {r}" for r in reasons)})
        return Message(role="assistant", content=draft), Message(role="user", content=asked)

    return Correction(TaskRef(role, CORRECTION[1], reg.version, reg.prompt_sha256([CORRECTION_FILE]), ""), messages)
