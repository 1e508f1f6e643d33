"""Gate specs as versioned data files, pinned by sha256 in a registry (like the rubrics).

``replay/specs/<name>.v<N>.yaml`` holds the thresholds and vocabularies Gate A and Gate B apply (the seed
fixes the outcomes and their order; the numbers are ours and live here, reviewable as a diff).
``specs/registry.yaml`` pins every (id, version) to the sha256 of its file's bytes: a spec edited without a
version bump no longer matches its pin and fails to load (GATE_SPEC_HASH_MISMATCH), so a gate can never
silently change its yardstick. The loaded spec carries its sha256, which every gate report and receipt binds.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..text import sha256_hex

Arm = Literal["A", "B", "C"]
#: Which agent a gate spec measures: the writer (正文智能体) or the fine-outline agent (细纲智能体).
Stage = Literal["writer", "fine_outline"]
Severity = Literal["high", "medium", "low"]
_KIND = re.compile(r"^[a-z][a-z_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SetRule(_Strict):
    """When the pre-registered set itself is too small (the only cause of `insufficient`)."""

    min_items: int = Field(ge=1)
    min_items_per_scene_type: int = Field(ge=1)
    max_outline_similarity: float | None = Field(default=None, gt=0, le=1)  # v2: near-identical items are refused


class Kinds(_Strict):
    """Verdict kinds: the fine outline's constraint-id space (hard constraints) and the oracle's assertions."""

    hard_constraint: list[str] = Field(min_length=1)
    hard_event: list[str] = Field(min_length=1)
    oracle_assertion: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Kinds:
        for kind in (*self.hard_constraint, *self.oracle_assertion):
            if not _KIND.fullmatch(kind):
                raise ValueError(f"kind {kind!r} must be lowercase letters and _")
        if not set(self.hard_event) <= set(self.hard_constraint):
            raise ValueError("every hard_event kind must also be a hard_constraint kind")
        if set(self.hard_constraint) & set(self.oracle_assertion):
            raise ValueError("a kind cannot be both a hard constraint and an oracle assertion")
        return self

    @property
    def known(self) -> frozenset[str]:
        """Every kind a pre-registered item may expect a verdict of."""
        return frozenset((*self.hard_constraint, *self.oracle_assertion))


class GateARule(_Strict):
    """Gate A (is the detector trustworthy?). Version 1 counted raw agreement (`min_agreement`); version 2 asks for
    chance-corrected agreement (`min_kappa`, Cohen's κ) and fails on both sides (`min_fails_each_side`)."""

    arms: list[Arm] = Field(min_length=1)
    min_agreement: float | None = Field(default=None, gt=0, le=1)
    min_kappa: float | None = Field(default=None, gt=0, le=1)
    min_fails_each_side: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_rule(self) -> GateARule:
        v2 = self.min_kappa is not None and self.min_fails_each_side is not None
        if (self.min_agreement is not None) == v2 or (self.min_kappa is None) != (self.min_fails_each_side is None):
            raise ValueError("gate_a needs either min_agreement (v1) or min_kappa with min_fails_each_side")
        return self


class GateBRule(_Strict):
    """Gate B (is the candidate arm better than the baseline arm?)."""

    baseline: Arm
    candidate: Arm
    diagnostic: list[Arm] = []
    min_general_mean_delta: float
    min_scene_mean_delta: float | None = None  # None: the rubric has no scene dimension (fine_outline_replay)
    min_effect: float | None = Field(default=None, gt=0)  # v2: the primary figure's floor (a tie never passes)
    max_p_value: float | None = Field(default=None, gt=0, lt=1)  # v2: the sign test's level over items

    @model_validator(mode="after")
    def _distinct(self) -> GateBRule:
        if self.baseline == self.candidate or {self.baseline, self.candidate} & set(self.diagnostic):
            raise ValueError("baseline, candidate and diagnostic arms must be distinct")
        if (self.min_effect is None) != (self.max_p_value is None):
            raise ValueError("min_effect and max_p_value go together")
        return self

    @property
    def measures_improvement(self) -> bool:
        """Whether the rule asks for a measured improvement (v2) rather than non-inferiority only (v1)."""
        return self.min_effect is not None


class GateSpec(_Strict):
    """One gate spec file as loaded; `sha256` is of the file's bytes (bound into every report and receipt)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    version: int = Field(ge=1)
    stage: Stage = "writer"
    title: str
    set: SetRule
    kinds: Kinds
    high_severity: list[Severity] = Field(min_length=1)
    gate_a: GateARule
    gate_b: GateBRule
    sha256: str = ""
    file: str = ""
    issues: bool = True  # False: kept to check what it decided, never used to issue a new report

    @property
    def locator(self) -> str:
        """``<id>@<version>``: how a report or receipt names this spec (see `gate_spec_bytes`)."""
        return f"{self.id}@{self.version}"


def exact(value: float | int | str) -> Fraction:
    """A threshold or score as an exact fraction: floats go through their shortest repr, so 0.9 is 9/10."""
    return Fraction(str(value))


class _RegistryEntry(_Strict):
    id: str
    version: int = Field(ge=1)
    stage: Stage = "writer"
    file: str = Field(pattern=r"^[A-Za-z0-9_.\-]+\.yaml$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    issues: bool = True


class _Registry(_Strict):
    version: int
    specs: list[_RegistryEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_pin_per_version(self) -> _Registry:
        versions = [(e.stage, e.version) for e in self.specs]
        if len(set(versions)) != len(versions):
            raise ValueError("a version is registered twice for one stage: one version has one pinned file")
        return self


def _default_dir() -> Traversable:
    return resources.files("novelmuse.replay") / "specs"


def _read(folder: Traversable | Path, name: str) -> bytes:
    try:
        return (folder / name).read_bytes()
    except OSError as exc:
        raise InputError(
            "GATE_SPEC_MISSING", f"gate spec file {name} cannot be read", str(folder / name), "restore the file"
        ) from exc


def _yaml(data: bytes, where: str) -> object:
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError("GATE_SPEC_INVALID", f"not valid YAML ({exc})", where, "fix the file") from exc


def _registry(folder: Traversable | Path) -> _Registry:
    where = str(folder / "registry.yaml")
    try:
        return _Registry.model_validate(_yaml(_read(folder, "registry.yaml"), where))
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise InputError("GATE_SPEC_REGISTRY_INVALID", f"invalid registry ({msg})", where, "fix registry.yaml") from exc


def _entry(folder: Traversable | Path, version: int | None, stage: Stage) -> _RegistryEntry:
    """The registered spec of `stage` at `version`, or (None) its highest version that still issues."""
    entries = [
        e
        for e in _registry(folder).specs
        if e.stage == stage and (e.version == version if version is not None else e.issues)
    ]
    if not entries:
        raise InputError(
            "GATE_SPEC_NOT_REGISTERED",
            f"no registered {stage} gate spec v{version}",
            str(folder),
            "use a registered version (see specs/registry.yaml)",
        )
    return max(entries, key=lambda e: e.version)


def _pinned_bytes(folder: Traversable | Path, entry: _RegistryEntry) -> bytes:
    where = str(folder / entry.file)
    data = _read(folder, entry.file)
    digest = sha256_hex(data)
    if digest != entry.sha256:
        raise InputError(
            "GATE_SPEC_HASH_MISMATCH",
            f"gate spec {entry.id} v{entry.version} was edited without a version bump (sha256 {digest[:12]}…, "
            f"registry pins {entry.sha256[:12]}…)",
            where,
            "restore the file, or bump `version`, save it as a new file and register its sha256 in registry.yaml",
        )
    return data


def _load(folder: Traversable | Path, entry: _RegistryEntry) -> GateSpec:
    where = str(folder / entry.file)
    data = _pinned_bytes(folder, entry)
    raw = _yaml(data, where)
    if (
        not isinstance(raw, dict)
        or raw.get("id") != entry.id
        or raw.get("version") != entry.version
        or raw.get("stage", "writer") != entry.stage
    ):
        got = (raw.get("id"), raw.get("version")) if isinstance(raw, dict) else None
        raise InputError(
            "GATE_SPEC_NOT_REGISTERED",
            f"the file says {got} but the registry pins {entry.id!r} v{entry.version} to it",
            where,
            "a changed spec is a new version: register the new (id, version) and its sha256 in registry.yaml",
        )
    try:
        return GateSpec.model_validate({**raw, "sha256": entry.sha256, "file": entry.file, "issues": entry.issues})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InputError("GATE_SPEC_INVALID", f"{loc}: {first['msg']}", where, "fix the gate spec file") from exc


def load_gate_spec(version: int | None = None, *, stage: Stage = "writer", folder: Path | None = None) -> GateSpec:
    """The gate spec of `stage` (the writer's unless said) at `version` (default: the highest registered that
    still issues), hash-checked against its pin."""
    if folder is not None:
        return _load(folder, _entry(folder, version, stage))
    return _load_default(version, stage)


@cache
def _load_default(version: int | None, stage: Stage) -> GateSpec:
    folder = _default_dir()
    return _load(folder, _entry(folder, version, stage))


def spec_named(spec_id: str, version: int) -> GateSpec | None:
    """The registered spec `spec_id` at `version`, whatever its stage (None when no such spec is registered):
    how a report or receipt that names its spec is checked."""
    entries = [e for e in _registry(_default_dir()).specs if e.id == spec_id and e.version == version]
    return load_gate_spec(version, stage=entries[0].stage) if entries else None


@cache
def spec_stage(sha256: str) -> Stage | None:
    """The stage a registered gate spec measures, by the sha256 its reports and receipts bind (None: unknown)."""
    return next((e.stage for e in _registry(_default_dir()).specs if e.sha256 == sha256), None)


def gate_spec_bytes(locator: str, *, folder: Path | None = None) -> bytes | None:
    """The pinned file bytes of the spec named ``<id>@<version>`` (None when no such spec is registered).

    Used to re-hash a spec bound by a receipt; a file edited without a version bump raises
    GATE_SPEC_HASH_MISMATCH rather than returning bytes that would merely fail to re-hash."""
    spec_id, sep, ver = locator.rpartition("@")
    if not sep or not ver.isdigit():
        return None
    base: Traversable | Path = folder if folder is not None else _default_dir()
    entries = [e for e in _registry(base).specs if e.id == spec_id and e.version == int(ver)]
    return _pinned_bytes(base, entries[0]) if entries else None
