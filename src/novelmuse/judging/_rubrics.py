"""Rubrics as versioned data files, pinned by sha256 in a registry.

Each profile's rubric is a YAML file in ``judging/rubrics/`` (id, version, scale, dimensions with question,
critical flag, threshold and five score anchors; writer_replay also has per-scene-type questions).
``registry.yaml`` pins every (id, version) to the sha256 of its file's bytes: a rubric edited without a
version bump no longer matches its pin and fails to load (RUBRIC_HASH_MISMATCH) — the seed's rule that a
policy family may not silently change its yardstick.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..book import SCENE_TYPES as SCENE_TYPES  # the vocabulary lives with the outline (book)
from ..errors import InputError
from ..roles.judge import PROFILES as JUDGE_PROFILES
from ..text import sha256_hex

PROFILES = JUDGE_PROFILES  # one scoring task (prompt) per profile in roles/judge
HARD_BLOCKS = ("source_safety", "output_compliance", "static_contract")

#: libyaml's safe loader when PyYAML was built with it (5–10× faster on the shipped data files), else the Python one.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scale(_Strict):
    """Allowed scores: min..max inclusive, in multiples of step from min."""

    min: float
    max: float
    step: float = Field(gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> Scale:
        if self.max <= self.min:
            raise ValueError("scale max must be greater than min")
        span = (Fraction(str(self.max)) - Fraction(str(self.min))) / Fraction(str(self.step))
        if span.denominator != 1:
            raise ValueError("scale max - min must be a multiple of step")
        return self

    def contains(self, score: float) -> bool:
        """True when `score` lies within [min, max] (NaN and ±infinity never do)."""
        if not math.isfinite(score):
            return False
        return Fraction(str(self.min)) <= as_fraction(score) <= Fraction(str(self.max))

    def on_step(self, score: float) -> bool:
        """True when `score` is min plus a whole number of steps (exact arithmetic, no float slack)."""
        if not math.isfinite(score):
            return False
        units = (as_fraction(score) - Fraction(str(self.min))) / Fraction(str(self.step))
        return units.denominator == 1


class Anchor(_Strict):
    score: float
    text: str = Field(min_length=1)


class SceneType(_Strict):
    """writer_replay's narrative_tension as scored for one pre-registered scene type."""

    question: str = Field(min_length=1)
    criteria: list[str] = Field(min_length=1)
    anchors: list[Anchor] = Field(min_length=5, max_length=5)


class Dimension(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str
    layer: Literal["general", "scene"] = "general"
    critical: bool = False
    threshold: float | None = None
    question: str = Field(min_length=1)
    anchors: list[Anchor] = Field(default_factory=list)


class Panel(_Strict):
    disagreement: Literal["third_judge", "stability_warning"]


class Aggregation(_Strict):
    general: Literal["across_chapters"]
    scene: Literal["within_scene_type"]
    total_score: Literal["forbidden"] | None = None


#: What an item must bring besides its candidates: nothing, the item's fine outline (a dimension is scored against
#: it), or a structured standard (the outline, or oracle assertions / hard constraints).
Needs = Literal["nothing", "outline", "outline_or_oracle"]
#: How a judge's reason is checked: `free` (a specific reason), or `structured_summary` (seed 000 细纲回放: 分数必须有
#: 结构化证据摘要 — each score cites a reference item of the standard, and its reason names that item's id) — in
#: which case the panel also stores the seed's minimal report shape {profile, scores: {dim: {score, evidence}}}.
Evidence = Literal["free", "structured_summary"]


class Rubric(_Strict):
    """One rubric file as loaded; `sha256` is of the file's bytes (bound into every report); `needs` comes from its
    registry entry."""

    id: str
    version: int = Field(ge=1)
    profile: Literal["quality_gate", "fine_outline_replay", "writer_replay"]
    title: str
    scale: Scale
    panel: Panel
    aggregation: Aggregation
    hard_blocks: list[str] = Field(default_factory=list)
    dimensions: list[Dimension] = Field(min_length=1)
    scene_types: dict[str, SceneType] = Field(default_factory=dict)
    sha256: str = ""
    file: str = ""
    needs: Needs = "nothing"
    evidence: Evidence = "free"
    #: judged only against a frozen snapshot of the book as of N−1: nothing of chapter N or later may reach a judge
    frozen_snapshot: bool = False

    @model_validator(mode="after")
    def _check(self) -> Rubric:
        ids = [d.id for d in self.dimensions]
        if len(set(ids)) != len(ids):
            raise ValueError("dimension ids must be unique")
        for block in self.hard_blocks:
            if block not in HARD_BLOCKS:
                raise ValueError(f"unknown hard block {block!r}")
            if block in ids:
                raise ValueError(f"hard block {block!r} is a rule-layer input and may not be a judged dimension")
        anchored: list[tuple[str, list[Anchor]]] = [(d.id, d.anchors) for d in self.dimensions if d.layer == "general"]
        anchored += [(f"scene_types.{k}", v.anchors) for k, v in self.scene_types.items()]
        for where, anchors in anchored:
            if len(anchors) != 5:
                raise ValueError(f"{where}: exactly five score anchors are required")
            for a in anchors:
                if not (self.scale.contains(a.score) and self.scale.on_step(a.score)):
                    raise ValueError(f"{where}: anchor score {a.score} is not on the scale")
        has_scene = any(d.layer == "scene" for d in self.dimensions)
        if has_scene and set(self.scene_types) != set(SCENE_TYPES):
            raise ValueError(f"a rubric with a scene dimension needs exactly the scene types {', '.join(SCENE_TYPES)}")
        if not has_scene and self.scene_types:
            raise ValueError("scene_types given but no dimension has layer: scene")
        return self

    @property
    def dimension_ids(self) -> list[str]:
        return [d.id for d in self.dimensions]

    @property
    def critical_ids(self) -> list[str]:
        return [d.id for d in self.dimensions if d.critical]

    @property
    def needs_scene_type(self) -> bool:
        return any(d.layer == "scene" for d in self.dimensions)

    @property
    def adjudicated(self) -> bool:
        """Whether a stable panel is adjudicated pass/fail (seed 000: critical dimensions with a threshold, and the
        rule layer's hard blocks), rather than only scored."""
        return bool(self.hard_blocks) or any(d.critical and d.threshold is not None for d in self.dimensions)

    def dimension(self, dim_id: str) -> Dimension:
        for d in self.dimensions:
            if d.id == dim_id:
                return d
        raise KeyError(dim_id)


def as_fraction(value: float | int | str | Fraction) -> Fraction:
    """An exact value for a score: floats go through their shortest repr, so 4.5 is exactly 9/2."""
    if isinstance(value, Fraction):
        return value
    return Fraction(str(value))


class RegistryEntry(_Strict):
    profile: str
    id: str
    version: int
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    needs: Needs = "nothing"
    evidence: Evidence = "free"
    frozen_snapshot: bool = False


class Registry(_Strict):
    version: int
    rubrics: list[RegistryEntry]

    @model_validator(mode="after")
    def _one_pin_per_version(self) -> Registry:
        seen: set[tuple[str, int]] = set()
        for e in self.rubrics:
            if (e.profile, e.version) in seen:
                raise ValueError(f"{e.profile} v{e.version} is registered twice: one version has one pinned file")
            seen.add((e.profile, e.version))
        return self


def _default_dir() -> Traversable:
    return resources.files("novelmuse.judging") / "rubrics"


def _read(folder: Traversable | Path, name: str, where: str) -> bytes:
    try:
        return (folder / name).read_bytes()
    except (OSError, FileNotFoundError) as exc:
        raise InputError(
            "RUBRIC_MISSING", f"rubric file {name} cannot be read", where, "restore the rubric files"
        ) from exc


def _parse_yaml(data: bytes, where: str) -> object:
    try:
        return yaml.load(data.decode("utf-8"), Loader=_SAFE_LOADER)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError("RUBRIC_INVALID", f"not valid YAML ({exc})", where, "fix the file") from exc


def load_registry(folder: Traversable | Path | None = None) -> Registry:
    """The registry of (profile, id, version) → file and pinned sha256."""
    base = folder if folder is not None else _default_dir()
    where = str(base / "registry.yaml")
    raw = _parse_yaml(_read(base, "registry.yaml", where), where)
    try:
        return Registry.model_validate(raw)
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise InputError("RUBRIC_REGISTRY_INVALID", f"invalid registry ({msg})", where, "fix registry.yaml") from exc


def _load(folder: Traversable | Path, entry: RegistryEntry) -> Rubric:
    where = str(folder / entry.file)
    data = _read(folder, entry.file, where)
    digest = sha256_hex(data)
    raw = _parse_yaml(data, where)
    if not isinstance(raw, dict):
        raise InputError("RUBRIC_INVALID", "a rubric file must be a mapping", where, "fix the file")
    if raw.get("id") != entry.id or raw.get("version") != entry.version or raw.get("profile") != entry.profile:
        raise InputError(
            "RUBRIC_NOT_REGISTERED",
            f"the file says {raw.get('id')!r} v{raw.get('version')} ({raw.get('profile')}) but the registry pins "
            f"{entry.id!r} v{entry.version} ({entry.profile}) to it",
            where,
            "a changed rubric is a new version: register the new (id, version) and its sha256 in registry.yaml",
        )
    if digest != entry.sha256:
        raise InputError(
            "RUBRIC_HASH_MISMATCH",
            f"rubric {entry.id} v{entry.version} was edited without a version bump (sha256 {digest[:12]}…, "
            f"registry pins {entry.sha256[:12]}…)",
            where,
            "restore the file, or bump `version`, save it as a new file and register its sha256 in registry.yaml",
        )
    try:
        return Rubric.model_validate(
            {
                **raw,
                "sha256": digest,
                "file": entry.file,
                "needs": entry.needs,
                "evidence": entry.evidence,
                "frozen_snapshot": entry.frozen_snapshot,
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InputError("RUBRIC_INVALID", f"{loc}: {first['msg']}", where, "fix the rubric file") from exc


def load_rubric(profile: str, *, folder: Path | None = None, version: int | None = None) -> Rubric:
    """Load the rubric for `profile` (its highest registered version unless `version` is given), hash-checked."""
    if profile not in PROFILES:
        raise InputError(
            "JUDGE_PROFILE_UNKNOWN",
            f"unknown profile {profile!r}",
            "--profile",
            f"use one of {', '.join(PROFILES)}",
        )
    if folder is None:
        return _load_default(profile, version)
    return _load_from(folder, profile, version)


@cache
def _load_default(profile: str, version: int | None) -> Rubric:
    return _load_from(_default_dir(), profile, version)


def _load_from(folder: Traversable | Path, profile: str, version: int | None) -> Rubric:
    registry = load_registry(folder)
    entries = [e for e in registry.rubrics if e.profile == profile and (version is None or e.version == version)]
    if not entries:
        raise InputError(
            "RUBRIC_NOT_REGISTERED",
            f"no registered rubric for {profile}" + (f" v{version}" if version is not None else ""),
            str(folder),
            "register the rubric in registry.yaml",
        )
    return _load(folder, max(entries, key=lambda e: e.version))


def list_rubrics(folder: Path | None = None) -> list[Rubric]:
    """Every registered rubric, each loaded and hash-checked (a bad one raises)."""
    base: Traversable | Path = folder if folder is not None else _default_dir()
    return [_load(base, e) for e in load_registry(base).rubrics]
