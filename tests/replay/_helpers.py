"""Build gate inputs for tests: a clean run of N items × arms, then change what a test is about."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from novelmuse.book import Book, find_book, init_book
from novelmuse.judging import SCENE_TYPES, load_rubric
from novelmuse.replay import (
    ArtefactRef,
    GateInput,
    GateIssuer,
    ReceiptBindings,
    RubricBinding,
    default_key_path,
    file_ref,
    gate_input_bytes,
    generate_key,
    load_gate_spec,
    rubric_ref,
    spec_ref,
    writer_config_sha256,
)
from novelmuse.text import sha256_hex

from ..conftest import SAMPLE_BOOK

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


def honest_doc(n: int = 12, *, broken: int = 4, gain: float = 1.0) -> dict[str, Any]:
    """A run that deserves both gates: arm A's drafts of the first `broken` items miss hard event E1 (the
    detector and the panel both fail it: fails exist on both sides, and they agree), and arm C scores `gain`
    more than A on every general dimension of every item."""
    doc = clean_doc(n=n)
    for iid in item_ids(n)[:broken]:
        s = sample(doc, iid, "A")
        verdict(s["detector"], "E1")["verdict"] = "fail"
        verdict(s["panel"], "E1")["verdict"] = "fail"
    for iid in item_ids(n):
        scores = sample(doc, iid, "C")["scores"]
        for dim in RUBRIC.general_dimensions:
            scores[dim] += gain
    return doc


def sample(doc: dict[str, Any], item_id: str, arm: str) -> dict[str, Any]:
    """The sample dict of (item, arm) in `doc`, for a test to change in place."""
    return next(s for s in doc["samples"] if s["item_id"] == item_id and s["arm"] == arm)


def verdict(entries: list[dict[str, Any]], tid: str) -> dict[str, Any]:
    return next(e for e in entries if e["id"] == tid)


def gate_input(doc: dict[str, Any]) -> GateInput:
    return GateInput.model_validate(doc)


def make_gate_book(root: Path, user_config: Path) -> Book:
    """A fresh book whose [gate] signer is a key made in the user config's directory (outside the book)."""
    init_book(root)
    user_config.parent.mkdir(parents=True, exist_ok=True)
    public = generate_key(default_key_path())
    with (root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[gate]\nsigner = "{public.text}"\n')
    return find_book(root)


def prepare_run(book: Book, doc: dict[str, Any], run: str = "RUN1") -> tuple[GateInput, ReceiptBindings]:
    """Write the run's artefacts into the book (manifests, set, gate-input.json) and bind them."""
    doc = {**doc, "run_id": run}
    manifests = []
    for s in doc["samples"]:
        if s.get("manifest_sha256") is None:
            continue
        rel = f".muse/manifests/{run}-{s['item_id']}-{s['arm']}.json"
        text = f"manifest {run} {s['item_id']} {s['arm']}"
        (book.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (book.root / rel).write_text(text, encoding="utf-8")
        s["manifest_sha256"] = sha(text)
        manifests.append(file_ref(book, "manifest", rel))
    (book.root / "sets").mkdir(exist_ok=True)
    (book.root / "sets" / f"{run}.yaml").write_text(f"set of {run}\n", encoding="utf-8")
    doc["set_sha256"] = sha(f"set of {run}\n")
    gi = GateInput.model_validate(doc)
    rel = f".muse/replay/{run}/gate-input.json"
    (book.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (book.root / rel).write_bytes(gate_input_bytes(gi))
    bindings = ReceiptBindings(
        gate_input=file_ref(book, "gate_input", rel),
        gate_spec=spec_ref(load_gate_spec()),
        rubric=rubric_ref(load_rubric("writer_replay")),
        eval_set=file_ref(book, "set", f"sets/{run}.yaml"),
        manifests=manifests,
        run_config_sha256=sha(f"config of {run}"),
    )
    return gi, bindings


class Store:
    """What the replay orchestrator's store would rebuild: the gate inputs of the runs it recorded."""

    def __init__(self) -> None:
        self.runs: dict[str, GateInput] = {}

    def rebuild(self, ref: ArtefactRef) -> GateInput | None:
        return self.runs.get(ref.locator)


def issue(
    book: Book, gate: str, store: Store | None, *, doc: dict | None = None, run: str = "RUN1", config: str | None = None
) -> None:
    """Issue gate `gate` for a run bound to the book's writer configuration now (or `config`); the run is recorded
    in `store` (None: a gate input no replay run produced — issued by someone holding the key)."""
    gi, bindings = prepare_run(book, doc or honest_doc(), run)
    bindings = bindings.model_copy(update={"run_config_sha256": config or writer_config_sha256(book)})
    if store is not None:
        store.runs[bindings.gate_input.locator] = gi
    with GateIssuer.open(book) as issuer:
        issuer.issue(gate, gi, bindings)  # type: ignore[arg-type]


OUTLINER_KEY_ENV = "MUSE_TEST_OUTLINER_KEY"


def sample_gate_book(tmp_path: Path, *, outliner: str | None = None) -> Book:
    """The sample book with a gate signer (its key in the user config); with `outliner` (the base URL of an
    OpenAI-compatible endpoint — a loopback server in the tests), the outliner is a model there, its key read from
    `OUTLINER_KEY_ENV`; without, only a scripted writer is configured."""
    root = tmp_path / "sanguo"
    shutil.copytree(SAMPLE_BOOK, root, ignore=shutil.ignore_patterns(".muse"))  # the sample as shipped
    public = generate_key(default_key_path())
    toml = f'\n[gate]\nsigner = "{public.text}"\n\n'
    if outliner is not None:
        toml += f'[providers.lb]\nkind = "openai"\nbase_url = "{outliner}"\napi_key_env = "{OUTLINER_KEY_ENV}"\n\n'
        toml += '[roles]\noutliner = "lb:outliner-model-1"\n'
    else:
        toml += '[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\nwriter = "s:scripted-writer-1"\n'
        (root / "script.yaml").write_text("writer: []\n", encoding="utf-8")
    with (root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(toml)
    return find_book(root)
