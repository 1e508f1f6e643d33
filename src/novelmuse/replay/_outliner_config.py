"""The outliner configuration: what a fine-outline Gate A / Gate B receipt proves something about (see `_outliner`).

The outliner's and the fine-outline judge's prompts and schemas (only those two roles' task modules loaded), their
models, the code that builds the outliner's input, lints its drafts and runs the experiment (`OUTLINER_CODE`), the
arms, the fine-outline gate spec and the book's budgets it drafts within, as one canonical document; its sha256 is
what outliner receipts bind as `run_config_sha256` and what the plan stage's guard matches. Light on purpose: it
loads neither the replay sets nor every role, so `muse gate show` can name the current configuration cheaply.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from ..book import Book
from ..text import canonical_json, sha256_hex
from ._spec import Arm, GateSpec, load_gate_spec
from ._writer_config import CodePin, ModelPin, SpecPin, TaskPin, installed_code, model_pin, task_pins

OUTLINER_CONFIG_SCHEMA: Final = "outliner-config-v1"
#: The code an outliner receipt's proof depends on: what builds the outliner's input and lints its drafts, the
#: reference lint, the orchestrator and the outliner's samples, the one GateInputBuilder and the gates.
OUTLINER_CODE: Final = (
    "writing/_outline_cover.py",
    "writing/_outline_draft.py",
    "writing/_outlines.py",
    "writing/_plan.py",
    "replay/_builder.py",
    "replay/_gates.py",
    "replay/_input.py",
    "replay/_orchestrator.py",
    "replay/_order.py",
    "replay/_outliner.py",
)
#: The roles whose models an outliner receipt's proof depends on.
OUTLINER_ROLES: Final = ("outliner", "judge")
_TASKS: Final = frozenset({("outliner", "draft"), ("judge", "fine_outline_replay")})


class OutlinerConfig(BaseModel):
    """The outliner configuration of a book (see the module doc); `sha256` is over everything else."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["outliner-config-v1"] = OUTLINER_CONFIG_SCHEMA
    tasks: list[TaskPin]
    models: list[ModelPin]
    code: list[CodePin]
    arm: Arm
    baseline_arm: Arm
    gate_spec: SpecPin
    writing: dict[str, int | float | str]
    max_plants: int

    @property
    def sha256(self) -> str:
        """sha256 of the canonical JSON of the configuration: the `run_config_sha256` outliner receipts bind."""
        return sha256_hex(canonical_json(self.model_dump(mode="json")))


def outliner_spec() -> GateSpec:
    """The fine-outline stage's gate spec in force."""
    return load_gate_spec(stage="fine_outline")


def outliner_config(book: Book) -> OutlinerConfig:
    """The book's outliner configuration now (see the module doc)."""
    spec = outliner_spec()
    return OutlinerConfig(
        tasks=task_pins(OUTLINER_ROLES, lambda role, task: (role, task) in _TASKS, "outliner"),
        models=[model_pin(book, role) for role in OUTLINER_ROLES],
        code=installed_code(OUTLINER_CODE),
        arm=spec.gate_b.candidate,
        baseline_arm=spec.gate_b.baseline,
        gate_spec=SpecPin(locator=spec.locator, sha256=spec.sha256),
        writing=book.config.writing.model_dump(mode="json"),
        max_plants=book.config.memory.max_plants_per_chapter,
    )


def outliner_config_sha256(book: Book) -> str:
    """`outliner_config(book).sha256`: the configuration an outliner receipt must carry to count for this book now."""
    return outliner_config(book).sha256
