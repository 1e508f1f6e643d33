"""The outliner configuration's sha256 for what only names it: `muse gate show` marks the current configurations.

`outliner_config(book).sha256` (replay/_outliner.py) loads the outliner's replay module with the replay sets and
every role task to pin two of them (~0.05 s of a display command). This builds the same canonical document from
the same parts — the two tasks' pins (only their roles loaded), the models, the code pins, the fine-outline gate
spec and the book's budgets — so the sha256 is the same; `tests/replay/test_config_pins.py` checks it against the
full configuration. The constants repeat replay/_outliner.py's (a file the configuration binds by its sha256, so
this module cannot import from it without loading it); that test fails when they part. The guard and the issuer
always use `outliner_config` itself: this one only decides which configuration a listing calls current.
"""

from __future__ import annotations

from typing import Final

from ..book import Book
from ..text import canonical_json, sha256_hex
from ._spec import load_gate_spec
from ._writer_config import installed_code, model_pin, task_pins

#: As `_outliner.OUTLINER_CONFIG_SCHEMA`, `OUTLINER_CODE`, `OUTLINER_ROLES` and `_task_pins`'s tasks.
OUTLINER_CONFIG_SCHEMA: Final = "outliner-config-v1"
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
OUTLINER_ROLES: Final = ("outliner", "judge")
OUTLINER_TASKS: Final = frozenset({("outliner", "draft"), ("judge", "fine_outline_replay")})


def outliner_config_sha256(book: Book) -> str:
    """`replay.outliner_config(book).sha256`, without loading the outliner's replay module (see the module doc)."""
    spec = load_gate_spec(stage="fine_outline")
    doc = {
        "schema_version": OUTLINER_CONFIG_SCHEMA,
        "tasks": [
            p.model_dump(mode="json")
            for p in task_pins(OUTLINER_ROLES, lambda role, task: (role, task) in OUTLINER_TASKS, "outliner")
        ],
        "models": [model_pin(book, role).model_dump(mode="json") for role in OUTLINER_ROLES],
        "code": [c.model_dump(mode="json") for c in installed_code(OUTLINER_CODE)],
        "arm": spec.gate_b.candidate,
        "baseline_arm": spec.gate_b.baseline,
        "gate_spec": {"locator": spec.locator, "sha256": spec.sha256},
        "writing": book.config.writing.model_dump(mode="json"),
        "max_plants": book.config.memory.max_plants_per_chapter,
    }
    return sha256_hex(canonical_json(doc))
