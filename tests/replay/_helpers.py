"""Build gate inputs for tests: a clean run of N items × arms, then change what a test is about."""

from __future__ import annotations

from typing import Any

from novelmuse.judging import SCENE_TYPES, load_rubric
from novelmuse.replay import GateInput, RubricBinding
from novelmuse.text import sha256_hex

RUBRIC = RubricBinding.of(load_rubric("writer_replay"))
DIMS = [*RUBRIC.general_dimensions, RUBRIC.scene_dimension]
# One item's targets: a hard event, its result, a foreshadow plant, the hook, an oracle assertion.
TARGETS = [("event", "E1"), ("result", "R1"), ("plant", "F-plant:xuzhou"), ("hook", "hook"), ("assertion", "a1")]
HARD = [t for t in TARGETS if t[0] != "assertion"]


def sha(text: str) -> str:
    return sha256_hex(text)


def item_ids(n: int) -> list[str]:
    return [f"i{k:02d}" for k in range(n)]


def clean_doc(
    n: int = 12, arms: tuple[str, ...] = ("A", "B", "C"), scenes: list[str] | None = None, score: float = 6.0
) -> dict[str, Any]:
    """A clean run: every sample ok, detector and panel pass everything, every arm scores `score` everywhere.

    Scene types cycle over the first two of SCENE_TYPES (so 12 items give 6 + 6) unless `scenes` is given."""
    scenes = scenes or [SCENE_TYPES[k % 2] for k in range(n)]
    items = [
        {
            "item_id": iid,
            "chapter": k + 1,
            "scene_type": scenes[k],
            "outline_sha256": sha(f"outline {iid}"),
            "targets": [{"kind": kind, "id": tid} for kind, tid in TARGETS],
            "new_characters": k % 4,
            "outline_entities": 3,
        }
        for k, iid in enumerate(item_ids(n))
    ]
    samples = [
        {
            "item_id": iid,
            "arm": arm,
            "ok": True,
            "candidate_sha256": sha(f"candidate {iid} {arm}"),
            "manifest_sha256": sha(f"manifest {iid} {arm}"),
            "detector": [{"kind": k, "id": t, "verdict": "pass", "severity": "high"} for k, t in HARD],
            "panel": [{"kind": k, "id": t, "verdict": "pass"} for k, t in TARGETS],
            "scores": dict.fromkeys(DIMS, score),
            "receipts": [f"R{iid}{arm}1", f"R{iid}{arm}2"],
        }
        for iid in item_ids(n)
        for arm in arms
    ]
    return {
        "run_id": "RUN1",
        "mode": "offline_replay",
        "set_sha256": sha("set"),
        "rubric": RUBRIC.model_dump(),
        "arms": list(arms),
        "items": items,
        "samples": samples,
    }


def sample(doc: dict[str, Any], item_id: str, arm: str) -> dict[str, Any]:
    """The sample dict of (item, arm) in `doc`, for a test to change in place."""
    return next(s for s in doc["samples"] if s["item_id"] == item_id and s["arm"] == arm)


def verdict(entries: list[dict[str, Any]], tid: str) -> dict[str, Any]:
    return next(e for e in entries if e["id"] == tid)


def gate_input(doc: dict[str, Any]) -> GateInput:
    return GateInput.model_validate(doc)
