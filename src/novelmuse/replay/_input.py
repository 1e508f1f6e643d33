"""GateInput: everything Gate A and Gate B decide on, as one typed, canonical document (`gate-input.json`).

Seed 003 and issue 12: per pre-registered item — its scene type, outline hash, the verdict targets it expects
(the fine outline's hard constraints and the oracle's assertions, each a (kind, id)) and its new-character
share; per sample (one item × one arm) — the candidate and manifest hashes, ok or the anomaly that made it
not ok, the detector's items (kind, id, verdict, severity), the blind panel's verdict per (kind, id), the
panel's score per rubric dimension and the model-call receipts it rests on.

The replay orchestrator's GateInputBuilder fills it from the store (re-hashing every artefact); the gates are
pure functions of it. Lists are put in canonical order on construction, so the same content always gives the
same bytes (`gate_input_bytes`) and the same sha256, whatever order the builder produced.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..book import SceneType
from ..errors import FailedClosed
from ..judging import Rubric
from ..text import canonical_json, sha256_hex
from ._spec import Arm, Severity

Verdict = Literal["pass", "fail", "unknown"]
AnomalyCategory = Literal["system", "schema", "hash", "leak", "judge"]
Mode = Literal["offline_replay", "real"]

SHA256 = r"^[0-9a-f]{64}$"
KIND = r"^[a-z][a-z_]{0,31}$"
TARGET_ID = r"^[^\x00-\x1f\x7f]{1,200}$"
ITEM_ID = r"^[A-Za-z0-9][A-Za-z0-9_\-.:]{0,127}$"
CODE = r"^[A-Z][A-Z0-9_]{0,63}$"
SCHEMA_VERSION: Final = "gate-input-v1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Target(_Strict):
    """A verdict target an item expects: a hard constraint of its outline or an oracle assertion."""

    kind: str = Field(pattern=KIND)
    id: str = Field(pattern=TARGET_ID)

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.id


class DetectorItem(_Strict):
    """One item of the detector's strict report on one candidate."""

    kind: str = Field(pattern=KIND)
    id: str = Field(pattern=TARGET_ID)
    verdict: Verdict
    severity: Severity

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.id


class PanelVerdict(_Strict):
    """The blind panel's verdict on one target of one candidate (pass only if every judge said pass)."""

    kind: str = Field(pattern=KIND)
    id: str = Field(pattern=TARGET_ID)
    verdict: Verdict

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.id


class Anomaly(_Strict):
    """Why a sample is not ok: a category the gates name and the failing step's stable code (no content)."""

    category: AnomalyCategory
    code: str = Field(pattern=CODE)
    detail: str = Field(default="", max_length=500)


class Sample(_Strict):
    """One item written by one arm, checked by the detector and judged by the blind panel."""

    item_id: str = Field(pattern=ITEM_ID)
    arm: Arm
    ok: bool
    anomaly: Anomaly | None = None
    candidate_sha256: str | None = Field(default=None, pattern=SHA256)
    manifest_sha256: str | None = Field(default=None, pattern=SHA256)
    detector: list[DetectorItem] = []
    panel: list[PanelVerdict] = []
    scores: dict[str, float] = {}
    receipts: list[str] = []

    @field_validator("detector", "panel")
    @classmethod
    def _by_key(cls, value: list[DetectorItem] | list[PanelVerdict]) -> list[DetectorItem] | list[PanelVerdict]:
        return sorted(value, key=lambda v: (v.kind, v.id, v.model_dump_json()))  # type: ignore[return-value]

    @field_validator("scores")
    @classmethod
    def _sorted_scores(cls, value: dict[str, float]) -> dict[str, float]:
        return dict(sorted(value.items()))

    @field_validator("receipts")
    @classmethod
    def _sorted_receipts(cls, value: list[str]) -> list[str]:
        return sorted(value)

    @model_validator(mode="after")
    def _ok_is_clean(self) -> Sample:
        if self.ok and self.anomaly is not None:
            raise ValueError(f"sample {self.item_id}/{self.arm}: ok but with an anomaly")
        if not self.ok and self.anomaly is None:
            raise ValueError(f"sample {self.item_id}/{self.arm}: not ok needs the anomaly that caused it")
        if self.ok and (self.candidate_sha256 is None or self.manifest_sha256 is None):
            raise ValueError(f"sample {self.item_id}/{self.arm}: an ok sample needs its candidate and manifest sha256")
        return self


class Item(_Strict):
    """One pre-registered item of the evaluation set (a frozen replay of chapter `chapter`)."""

    item_id: str = Field(pattern=ITEM_ID)
    chapter: int = Field(ge=0)
    scene_type: SceneType
    outline_sha256: str = Field(pattern=SHA256)
    targets: list[Target] = Field(min_length=1)
    new_characters: int = Field(ge=0)  # outline entities with no mention before the chapter
    outline_entities: int = Field(ge=0)

    @field_validator("targets")
    @classmethod
    def _unique_targets(cls, value: list[Target]) -> list[Target]:
        keys = [t.key for t in value]
        if len(set(keys)) != len(keys):
            raise ValueError("a target (kind, id) is listed twice")
        return sorted(value, key=lambda t: t.key)

    @model_validator(mode="after")
    def _share(self) -> Item:
        if self.new_characters > self.outline_entities:
            raise ValueError(f"item {self.item_id}: more new characters than outline entities")
        return self


class RubricBinding(_Strict):
    """The rubric the panel scored with, and which of its dimensions are general and which is per scene type."""

    id: str
    version: int = Field(ge=1)
    sha256: str = Field(pattern=SHA256)
    general_dimensions: list[str] = Field(min_length=1)
    scene_dimension: str | None  # None: a rubric scored on general dimensions only (fine_outline_replay)

    @model_validator(mode="after")
    def _distinct(self) -> RubricBinding:
        dims = [*self.general_dimensions, *self.scene_dimensions]
        if len(set(dims)) != len(dims):
            raise ValueError("rubric dimensions must be distinct")
        return self

    @property
    def scene_dimensions(self) -> list[str]:
        """The scene dimension as a list (empty when the rubric has none)."""
        return [self.scene_dimension] if self.scene_dimension is not None else []

    @property
    def dimensions(self) -> frozenset[str]:
        return frozenset((*self.general_dimensions, *self.scene_dimensions))

    @classmethod
    def of(cls, rubric: Rubric) -> RubricBinding:
        """The binding of a loaded replay rubric: at most one scene-layer dimension (writer_replay has one,
        fine_outline_replay none), the rest general."""
        scene = [d.id for d in rubric.dimensions if d.layer == "scene"]
        if len(scene) > 1:
            raise ValueError(f"rubric {rubric.id} has {len(scene)} scene dimensions; a gate takes at most one")
        general = [d.id for d in rubric.dimensions if d.layer == "general"]
        return cls(
            id=rubric.id,
            version=rubric.version,
            sha256=rubric.sha256,
            general_dimensions=general,
            scene_dimension=scene[0] if scene else None,
        )


class GateInput(_Strict):
    """The whole input of Gate A and Gate B for one replay run (see the module doc)."""

    schema_version: Literal["gate-input-v1"] = SCHEMA_VERSION
    run_id: str = Field(pattern=ITEM_ID)
    mode: Mode
    set_sha256: str = Field(pattern=SHA256)
    rubric: RubricBinding
    arms: list[Arm] = Field(min_length=1)
    items: list[Item] = Field(min_length=1)
    samples: list[Sample]

    @field_validator("arms")
    @classmethod
    def _arms(cls, value: list[Arm]) -> list[Arm]:
        if len(set(value)) != len(value):
            raise ValueError("an arm is listed twice")
        return sorted(value)

    @field_validator("items")
    @classmethod
    def _items(cls, value: list[Item]) -> list[Item]:
        ids = [i.item_id for i in value]
        if len(set(ids)) != len(ids):
            raise ValueError("an item id is listed twice")
        return sorted(value, key=lambda i: i.item_id)

    @field_validator("samples")
    @classmethod
    def _samples(cls, value: list[Sample]) -> list[Sample]:
        keys = [(s.item_id, s.arm) for s in value]
        if len(set(keys)) != len(keys):
            raise ValueError("an (item, arm) sample is listed twice")
        return sorted(value, key=lambda s: (s.item_id, s.arm))

    @model_validator(mode="after")
    def _references(self) -> GateInput:
        items = {i.item_id for i in self.items}
        for s in self.samples:
            if s.item_id not in items:
                raise ValueError(f"sample {s.item_id}/{s.arm} names an item that is not in the set")
            if s.arm not in self.arms:
                raise ValueError(f"sample {s.item_id}/{s.arm} is of an arm the run did not have")
        return self

    def item(self, item_id: str) -> Item:
        """The pre-registered item `item_id`."""
        for i in self.items:
            if i.item_id == item_id:
                return i
        raise KeyError(item_id)


def gate_input_bytes(gate_input: GateInput) -> bytes:
    """The canonical bytes of `gate-input.json`: sorted keys, no insignificant whitespace, UTF-8, a final newline."""
    return (canonical_json(gate_input.model_dump(mode="json")) + "\n").encode("utf-8")


def gate_input_sha256(gate_input: GateInput) -> str:
    """sha256 of `gate_input_bytes` (what reports and receipts bind)."""
    return sha256_hex(gate_input_bytes(gate_input))


def parse_gate_input(data: bytes, where: str = "gate-input.json") -> GateInput:
    """Parse `gate-input.json` bytes; only the canonical form is accepted, so equal content has one sha256."""
    try:
        gate_input = GateInput.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "document"
        raise FailedClosed(
            "GATE_INPUT_INVALID", f"{loc}: {first['msg']}", where, "rebuild the gate input from the run"
        ) from exc
    if gate_input_bytes(gate_input) != data:
        raise FailedClosed(
            "GATE_INPUT_NOT_CANONICAL",
            "the gate input is not in canonical form (it was not written by the GateInputBuilder)",
            where,
            "rebuild the gate input from the run; hand-written gate inputs are refused",
        )
    return gate_input
