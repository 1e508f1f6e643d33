"""The top-down walkthrough of docs/guide/top-down.md, as a user types it, against a loopback OpenAI-compatible
endpoint: a premise → `muse plan draft` → accept → `muse outline draft 21-22` → accept each → `muse write 21-22`
(a stretch, manual) → accept each chapter.

Bottom-up comes first, as the product enforces it: the book's first twenty chapters are its calibration — the
writer's gates and then the fine-outline agent's own gates are passed on them (honest replay experiments through
injected providers, tests/replay/honest.py and honest_outliner.py), with the same roles and model ids the
walkthrough then uses through the loopback endpoint."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from novelmuse.book import Book, find_book
from novelmuse.judging import BlindInput
from novelmuse.llm import ProviderRequest, ProviderResponse
from novelmuse.replay import evaluate_run, register_set, resolve_set, run_replay
from novelmuse.roles.common import expected_echo
from novelmuse.writing import confirm_outline, read_outline

from ..judging._helpers import good_report
from ..llm.loopback import LoopbackServer, Reply
from ..writing.write_helpers import NO_FACTS
from .honest import HonestModels, _detector, _marker, chapter_body
from .honest_outliner import KEY_ENV, HonestOutliner, honest_outliner_book, probe, reference
from .test_plan_stage import GOOD

ROLES = ("writer", "detector", "extractor", "judge", "outliner", "planner")
PREMISE = "类型：历史演义。主角：刘备，以仁义起于草莽。核心钩子：汉室衰微，三兄弟能否匡扶天下。目标篇幅：40回。"


class Calibration(HonestOutliner):
    """Both honest experiments through one provider: the writer's (HonestModels) and the outliner's."""

    def __init__(self, writer: HonestModels) -> None:
        super().__init__(broken={9, 10, 11, 12})
        self.writer = writer

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        if request.schema_name == "models_check" or request.role in ("outliner",):
            return await super().send(request)
        if request.role == "judge":
            user = next(m.content for m in request.messages if m.role == "user")
            if BlindInput.model_validate_json(user.split("\n", 1)[1]).policy.profile == "fine_outline_replay":
                return await super().send(request)
        return await self.writer.send(request)


def _walkthrough_reply(body: dict[str, Any]) -> Reply:
    """The loopback endpoint: every role answered from what it is sent (its model id names the role)."""
    role = str(body["model"]).split("-", 1)[0]
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    if "models_check" in json.dumps(body):
        return Reply(content={"ok": True, "echo": expected_echo(role)})
    if role == "planner":
        return Reply(content=GOOD)
    if role == "outliner":
        found = re.search(r"为第(\d+)回写细纲草稿", text)
        assert found
        ref = reference(int(found.group(1)))
        event = ref["hard_events"][0]
        return Reply(
            content={
                **{k: ref[k] for k in ("title", "scene_type", "goal", "hook", "entities")},
                "hard_events": [{"text": event["text"], "result": event["result"], "basis": []}],
                "beats": [],
                "foreshadows": [],
                "new_settings": [],
                "time_anchors": [],
                "notes": [],
            }
        )
    if role == "writer":
        found = re.search(r"【第(\d+)回", text)
        assert found
        answer: dict[str, Any] = {"text": chapter_body(int(found.group(1))), "declared_facts": []}
        if "evidence_requests" in json.dumps(body.get("response_format", body.get("tools", "")), ensure_ascii=False):
            answer["evidence_requests"] = []
        return Reply(content=answer)
    if role == "detector":
        return Reply(content=_detector(text))
    if role == "extractor":
        return Reply(content=NO_FACTS)
    if role == "judge":  # the quality gate before a chapter is accepted: a contract-valid report, every score 4.5
        user = next(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        return Reply(content=good_report(BlindInput.model_validate_json(user.split("\n", 1)[1]), 4.5))
    raise AssertionError(f"the walkthrough asks no {role}")


def _calibrated_book(env: Path) -> Book:
    """Chapters 1–20 with their outlines and a plan (honest_outliner_book), role-named model ids; the writer's gates
    passed on chapters 9–20, then the outliner's."""
    book, outliner_set = honest_outliner_book(env / "b")
    toml = book.root / "book.toml"
    roles = "".join(f'{r} = "s:{r}-model-1"\n' for r in ROLES)
    text = toml.read_text(encoding="utf-8").replace('default = "s:loopback-model-1"\n', roles)
    text = text.replace("[writing]\n", "[writing]\nrepair_rounds = 0\n")
    toml.write_text(text, encoding="utf-8")
    book = find_book(book.root)
    items = []
    for n in range(9, 21):
        confirm_outline(book, n)
        outline = read_outline(book, n)
        items.append({"id": f"ch{n}", "chapter": n, "outline_sha256": outline.sha256, "scene_type": outline.scene_type})
    (book.root / "writer-set.yaml").write_text(yaml.safe_dump({"name": "calibration", "items": items}), "utf-8")
    writer_set = resolve_set(book, register_set(book, book.root / "writer-set.yaml").sha256)
    models = Calibration(HonestModels({n: _marker(book, n) for n in range(9, 21)}, {9, 10, 11, 12}))
    asyncio.run(probe(book, models))  # type: ignore[arg-type]
    outliner_set = resolve_set(book, outliner_set.sha256)
    for doc in (writer_set, outliner_set):  # bottom-up: the writer first, then the fine-outline agent
        out = asyncio.run(run_replay(book, doc, ["A", "C"], concurrency=8, providers={"s": models}))
        assert out.ok, [(s.item_id, s.arm, s.code, s.detail) for s in out.samples if s.code]
        for gate in ("A", "B"):
            evaluated = evaluate_run(book, out.run_id, gate)  # type: ignore[arg-type]
            assert evaluated.receipt_seq is not None, evaluated.report.summary
    return book


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "userconf" / "config.toml"))
    monkeypatch.setenv(KEY_ENV, "not-a-real-key")
    return tmp_path


def test_the_top_down_walkthrough_runs_on_a_loopback_model(env: Path, muse: Any) -> None:
    book = _calibrated_book(env)
    root = book.root
    (root / "premise.md").write_text(PREMISE + "\n", encoding="utf-8")

    def run(*args: str) -> Any:
        out = muse(*args, "--book", root)
        assert out.exit_code == 0, f"muse {' '.join(args)} → {out.exit_code}\n{out.stdout}\n{out.stderr}"
        return out

    def decide(kind: str) -> list[str]:
        drafts = json.loads(run("drafts", "--json").stdout)["drafts"]
        return [d["short"] for d in drafts if d["kind"] == kind and d["decision"] is None]

    with LoopbackServer("openai", responder=_walkthrough_reply) as server:
        toml = root / "book.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace("http://127.0.0.1:9/v1", server.base_url), "utf-8")
        run("plan", "draft", "--premise", "premise.md", "--chapters", "40", "--yes")
        (plan,) = decide("plan")
        run("drafts", "accept", plan)
        assert "# 第21-40回：官渡之前" in (root / "plan" / "outline.md").read_text(encoding="utf-8")
        run("outline", "draft", "21-22", "--yes")
        for short in decide("outline"):
            run("drafts", "accept", short)  # lint, then written to outlines/ and confirmed
        assert all((root / "outlines" / f"{n:04d}.yaml").is_file() for n in (21, 22))
        run("write", "21-22", "--yes")  # manual: chapter 21 waits for the author
        (first,) = decide("chapter")
        run("drafts", "accept", first, "--yes")  # the quality gate's judges first
        run("write", "--continue", "--yes")  # chapter 21's facts, then chapter 22
        (second,) = decide("chapter")
        run("drafts", "accept", second, "--yes")
        run("write", "--continue", "--yes")  # chapter 22's facts: the stretch is done
        status = run("write", "--status").stdout
    assert "finished" in status, status
    for n in (21, 22):
        assert chapter_body(n)[:40] in (root / "chapters" / f"{n:04d}.md").read_text(encoding="utf-8")
