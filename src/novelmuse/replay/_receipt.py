"""What gate reports and receipts bind, and how a bound artefact is found again to be re-hashed.

A receipt binds, each by sha256 and with a locator to find it again: the report (by its journal entry), the
gate input, the gate spec, the rubric, the pre-registered set and every manifest — a typed
`ReceiptBindings` the replay orchestrator fills from real artefacts — plus the hash of the run's whole
configuration (models, prompts, rubric, gate spec, budgets), which the fine-outline entry guard matches.

An `ArtefactReader` returns an artefact's current bytes (None when it is gone); the journal's issuer and
verifier re-hash through it. `book_artefacts(book)` is the default: files by a path relative to the book
(never outside it, never through a symlink), and the registered gate specs and rubrics by ``<id>@<version>``.
The replay orchestrator wraps it so that a gate input is rebuilt from the store rather than read from a
file — a hand-written gate-input.json then never re-hashes (拒绝自算 JSON).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..book import Book
from ..errors import FailedClosed, MuseError
from ..judging import Rubric, list_rubrics
from ..text import sha256_hex
from ._gates import GateName, GateReport
from ._input import SHA256, GateInput, Mode, gate_input_sha256
from ._spec import GateSpec, gate_spec_bytes

ArtefactKind = Literal["gate_input", "gate_spec", "rubric", "set", "manifest"]
ArtefactReader = Callable[["ArtefactRef"], bytes | None]
REPORT_ENTRY_SCHEMA: Final = "gate-report-entry-v2"
#: real: every gated role was answered by a model with a successful probe of its exact id; canned: a role was
#: answered by the scripted provider (not a model); unprobed: a model was never probed. Only `real` earns a receipt.
ModelsEvidence = Literal["real", "canned", "unprobed"]
RECEIPT_SCHEMA: Final = "gate-receipt-v1"
_FILE_KINDS = ("gate_input", "set", "manifest")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArtefactRef(_Strict):
    """One bound artefact: its kind, where to find it again, and its sha256 when it was bound."""

    kind: ArtefactKind
    locator: str = Field(min_length=1, max_length=500)
    sha256: str = Field(pattern=SHA256)

    @model_validator(mode="after")
    def _locator_shape(self) -> ArtefactRef:
        loc = self.locator
        if self.kind in _FILE_KINDS:
            if loc.startswith("/") or "\\" in loc or "\x00" in loc or ".." in loc.split("/"):
                raise ValueError(f"a {self.kind} locator is a path inside the book (relative, no ..)")
        elif "@" not in loc:
            raise ValueError(f"a {self.kind} locator is <id>@<version>")
        return self


def file_ref(book: Book, kind: ArtefactKind, relative: str) -> ArtefactRef:
    """Bind the file at `relative` (a path inside the book) as it is now."""
    ref = ArtefactRef(kind=kind, locator=relative, sha256="0" * 64)
    data = book_artefacts(book)(ref)
    if data is None:
        raise FailedClosed(
            "GATE_ARTEFACT_MISSING",
            f"no {kind} to bind (missing, not a regular file, or reached through a symlink)",
            relative,
            "bind a file inside the book",
        )
    return ref.model_copy(update={"sha256": sha256_hex(data)})


def spec_ref(spec: GateSpec) -> ArtefactRef:
    """Bind a loaded gate spec."""
    return ArtefactRef(kind="gate_spec", locator=spec.locator, sha256=spec.sha256)


def rubric_ref(rubric: Rubric) -> ArtefactRef:
    """Bind a loaded rubric."""
    return ArtefactRef(kind="rubric", locator=f"{rubric.id}@{rubric.version}", sha256=rubric.sha256)


class ReceiptBindings(_Strict):
    """Everything a receipt binds besides its report (see the module doc)."""

    gate_input: ArtefactRef
    gate_spec: ArtefactRef
    rubric: ArtefactRef
    eval_set: ArtefactRef
    manifests: list[ArtefactRef]
    run_config_sha256: str = Field(pattern=SHA256)

    @field_validator("manifests")
    @classmethod
    def _manifests(cls, value: list[ArtefactRef]) -> list[ArtefactRef]:
        if len({m.sha256 for m in value}) != len(value):
            raise ValueError("a manifest is bound twice")
        return sorted(value, key=lambda m: (m.sha256, m.locator))

    @model_validator(mode="after")
    def _kinds(self) -> ReceiptBindings:
        named = {"gate_input": self.gate_input, "gate_spec": self.gate_spec, "rubric": self.rubric}
        named["set"] = self.eval_set
        for kind, ref in named.items():
            if ref.kind != kind:
                raise ValueError(f"the {kind} binding is of kind {ref.kind}")
        if any(m.kind != "manifest" for m in self.manifests):
            raise ValueError("every manifest binding must be of kind manifest")
        return self

    def all(self) -> list[ArtefactRef]:
        """Every bound artefact, in a fixed order."""
        return [self.gate_input, self.gate_spec, self.rubric, self.eval_set, *self.manifests]


class ReportBody(_Strict):
    """The body of a journal ``report`` entry: the gate report, its sha256, and what it was computed from."""

    schema_version: Literal["gate-report-entry-v1", "gate-report-entry-v2"] = REPORT_ENTRY_SCHEMA
    report: GateReport
    report_sha256: str = Field(pattern=SHA256)
    gate_input: ArtefactRef
    gate_spec: ArtefactRef
    signer: str  # key id of the signing key
    issued_at: str
    # v2: whose evaluation this is (a later failed evaluation of the same configuration revokes an earlier pass)
    # and whether real, probed models answered (only then may a passed report earn a receipt)
    run_config_sha256: str | None = Field(default=None, pattern=SHA256)
    models: ModelsEvidence | None = None
    models_note: str = ""


class ReceiptBody(_Strict):
    """The body of a journal ``receipt`` entry: only ever after a ``passed`` report, binding it and its artefacts."""

    schema_version: Literal["gate-receipt-v1"] = RECEIPT_SCHEMA
    gate: GateName
    outcome: Literal["passed"] = "passed"
    mode: Mode
    run_id: str
    report_seq: int = Field(ge=1)
    report_entry_sha256: str = Field(pattern=SHA256)
    report_sha256: str = Field(pattern=SHA256)
    bindings: ReceiptBindings
    signer: str
    issued_at: str


def _rubric_bytes(locator: str) -> bytes | None:
    for rubric in list_rubrics():
        if f"{rubric.id}@{rubric.version}" == locator:
            return (resources.files("novelmuse.judging") / "rubrics" / rubric.file).read_bytes()
    return None


def _book_file(root: Path, relative: str) -> bytes | None:
    """The bytes of `relative` under `root`, or None when missing; no symlink is followed on the way."""
    fd = os.open(root, os.O_RDONLY | _CLOEXEC)
    try:
        for part in PurePosixPath(relative).parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_DIRECTORY", 0), dir_fd=fd)
            except OSError:
                return None
            os.close(fd)
            fd = nxt
        try:
            ffd = os.open(PurePosixPath(relative).name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(ffd).st_mode):
                return None
            chunks = []
            while chunk := os.read(ffd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(ffd)
    finally:
        os.close(fd)


def book_artefacts(book: Book) -> ArtefactReader:
    """The default artefact reader: book files by relative path, registered gate specs and rubrics by locator."""

    def read(ref: ArtefactRef) -> bytes | None:
        if ref.kind == "gate_spec":
            return gate_spec_bytes(ref.locator)
        if ref.kind == "rubric":
            return _rubric_bytes(ref.locator)
        return _book_file(book.root, ref.locator)

    return read


class Rehasher:
    """The current sha256 of bound artefacts through an `ArtefactReader`, each read and hashed once."""

    def __init__(self, reader: ArtefactReader):
        self._reader = reader
        self._data: dict[tuple[str, str], bytes | MuseError | None] = {}
        self._digests: dict[tuple[str, str], str | None] = {}

    def read(self, ref: ArtefactRef) -> bytes | None:
        """The artefact's current bytes (None when gone); a reader's refusal is raised again on every call."""
        key = (ref.kind, ref.locator)
        if key not in self._data:
            try:
                self._data[key] = self._reader(ref)
            except MuseError as exc:
                self._data[key] = exc
        data = self._data[key]
        if isinstance(data, MuseError):
            raise data
        return data

    def problem(self, ref: ArtefactRef) -> tuple[str, str] | None:
        """(code, what) when `ref` no longer re-hashes (missing, changed, unreadable), else None."""
        key = (ref.kind, ref.locator)
        try:
            if key not in self._digests:
                data = self.read(ref)
                self._digests[key] = None if data is None else sha256_hex(data)
        except MuseError as exc:
            return "GATE_ARTEFACT_CHANGED", f"the bound {ref.kind} {ref.locator} cannot be re-hashed ({exc.code})"
        digest = self._digests[key]
        if digest is None:
            return "GATE_ARTEFACT_MISSING", f"the bound {ref.kind} {ref.locator} is gone"
        if digest != ref.sha256:
            return (
                "GATE_ARTEFACT_CHANGED",
                f"the bound {ref.kind} {ref.locator} no longer has the sha256 it was bound with",
            )
        return None


def binding_problems(
    gate_input: GateInput, bindings: ReceiptBindings, rehasher: Rehasher, *, gate_input_digest: str | None = None
) -> list[tuple[str, str]]:
    """Every way `bindings` disagree with `gate_input` or no longer re-hash (empty when they bind it exactly).
    `gate_input_digest` is the gate input's sha256 when the caller already has it."""
    found: list[tuple[str, str]] = []

    def mismatch(what: str) -> None:
        found.append(("GATE_BINDING_MISMATCH", what))

    if bindings.gate_input.sha256 != (gate_input_digest or gate_input_sha256(gate_input)):
        mismatch("the bound gate input is not this gate input")
    rubric = gate_input.rubric
    if (bindings.rubric.locator, bindings.rubric.sha256) != (f"{rubric.id}@{rubric.version}", rubric.sha256):
        mismatch("the bound rubric is not the gate input's rubric")
    if bindings.eval_set.sha256 != gate_input.set_sha256:
        mismatch("the bound set is not the gate input's set")
    manifests = {s.manifest_sha256 for s in gate_input.samples if s.manifest_sha256 is not None}
    if {m.sha256 for m in bindings.manifests} != manifests:
        mismatch("the bound manifests are not exactly the gate input's manifests")
    for ref in bindings.all():
        problem = rehasher.problem(ref)
        if problem is not None:
            found.append(problem)
    return found
