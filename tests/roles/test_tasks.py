"""Role tasks: the prompt registry (pinned like the rubrics), the rendered messages, the task refs."""

from __future__ import annotations

import hashlib
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
import yaml

from novelmuse.errors import InputError
from novelmuse.llm import model_schema_sha256
from novelmuse.memory import MemoryContext
from novelmuse.roles import RoleTask, _task, all_tasks, correction, current_ref
from novelmuse.roles.arbiter import ArbiterRequest
from novelmuse.roles.common import ProbeRequest
from novelmuse.roles.detector import DetectRequest
from novelmuse.roles.editor import EditorRequest
from novelmuse.roles.extractor import ExtractRequest
from novelmuse.roles.judge import ScoreRequest
from novelmuse.roles.normalizer import NormalizeRequest
from novelmuse.roles.outliner import DraftRequest
from novelmuse.roles.planner import PlanRequest
from novelmuse.roles.reviewer import ReviewRequest
from novelmuse.roles.writer import (
    Excerpt,
    FactLine,
    OutlineLine,
    ParagraphsRequest,
    PolishRequest,
    PriorChapter,
    RepairRequest,
    RewriteRequest,
    WriterContext,
    WriteRepairRequest,
    WriteRequest,
)
from novelmuse.rules import UnparsedLine
from novelmuse.text import sha256_json

ROLES_DIR = Path(_task.__file__).resolve().parent
BODY = "　　甲乙丙丁。\n\n　　戊己庚辛。\n"


class _Rules:
    forbidden = ("禁词",)
    preferences = "多写对话"


class _Dim:
    name, score, evidence, neutral = "设定一致性", 80, "甲乙丙丁", False


class _EditorRound:
    round, overall, computed_verdict, notes, dims = 0, 70, "polish", ["慢"], [_Dim()]


class _Issue:
    severity, type, quote, paragraph, explanation, fix_hint = "major", "setting", "甲乙丙丁", 0, "矛盾", "改"


def _writer_context() -> WriterContext:
    return WriterContext(
        chapter=2, label="第2回", title="第二回", scene="转折", goal="张飞怒鞭督邮", min_chars=3000, max_chars=6000,
        constraints=[OutlineLine(id="E1", text="硬事件：督邮索贿")], beats=[OutlineLine(id="B1", text="县尉受辱")],
        entities=["刘备", "张飞"], facts=[FactLine(text="刘备：在世", basis="作者设定")],
        prior_chapters=[PriorChapter(chapter=1, title="第一回", text="话说……", omitted_before=True)],
        readback=[Excerpt(purpose="张飞此前出场", text="飞厉声曰")], style=[],
        forbidden=["后宫"], preferences=["多对话"],
    )  # fmt: skip


NO_MEMORY = MemoryContext(False, "test")


def sample_request(task: RoleTask[Any, Any]) -> Any:
    """A request of the task's type (every field filled)."""
    memory = MemoryContext(True, "story memory as of chapter 1")
    by_name: dict[tuple[str, str], Any] = {
        ("reviewer", "review"): ReviewRequest(2, "第二回", BODY, memory),
        ("editor", "review"): EditorRequest(2, "第二回", BODY, "多写对话", [("玄德", 3, 1)], False, 3),
        ("arbiter", "decide"): ArbiterRequest(2, [], [_EditorRound()], "-a\n+b"),
        ("writer", "paragraphs"): ParagraphsRequest(2, BODY, _Rules(), [0], ["禁词"], memory),
        ("writer", "repair"): RepairRequest(2, BODY, _Rules(), [0], [_Issue()], memory),
        ("writer", "polish"): PolishRequest(2, BODY, _Rules(), _EditorRound(), 2, memory),
        ("writer", "rewrite"): RewriteRequest(2, BODY, _Rules(), _EditorRound(), memory),
        ("extractor", "extract"): ExtractRequest(2, "第二回", BODY, ["刘备：玄德"], ["F-1：天书（第1章埋设）"], 3),
        ("normalizer", "normalize"): NormalizeRequest([UnparsedLine(text="别写后宫", line=4, reason="r")]),
        ("writer", "write_repair"): WriteRepairRequest(_writer_context(), "甲乙丙丁。", ["[E1] 未写督邮索贿"]),
        ("detector", "detect"): DetectRequest("甲乙丙丁。", "0" * 64, [("E1", "督邮索贿")]),
        ("outliner", "draft"): DraftRequest(
            3,
            2,
            ["P1〔本章〕# 第3回\n三英战吕布"],
            ["P2〔设定〕方天画戟"],
            "第2回《怒鞭督邮》",
            ["第2回：弃官"],
            ["刘备：在世"],
            ["刘备：玄德"],
            ["F-1：天书（第1章埋设）"],
            3,
            frozenset({"P1", "P2", "上章"}),
        ),
        ("planner", "draft"): PlanRequest(
            "写出全书规划草稿：第1-40回，共 40 回。",
            "历史演义，主角刘备",
            "# 大纲",
            "已写到第2回",
            ["F-1：天书"],
            ["刘备：玄德"],
            1,
            40,
        ),
    }
    if task.name == "models_check":
        return ProbeRequest(task.role)
    if task.name in ("write", "write_final"):
        return WriteRequest(_writer_context())
    if task.role == "judge":
        return ScoreRequest('{"itemRef": "item_x"}', 1, 5, 0.5, 8)
    return by_name[(task.role, task.name)]


def test_every_task_renders_every_placeholder_and_never_sends_a_version_header() -> None:
    for task in all_tasks():
        registered = _task._registered(*(task.registered_as or (task.role, task.name)), task.files)
        used = {
            m[1] or m[2]
            for t in registered.templates.values()
            for m in string.Template.pattern.findall(t.body)
            if m[1] or m[2]
        }
        request = sample_request(task)
        assert used == set(task.fields(request)), (task.role, task.name)  # every value is used, every hole filled
        call = task.render(request)
        assert call.ref == task.ref and call.schema is task.schema
        assert [m.role for m in call.messages] == (["system"] if task.system else []) + ["user"]
        for m in call.messages:
            assert "# version" not in m.content and "$" not in m.content.replace("$ref", ""), (task.name, m.content)


def test_refs_bind_the_template_bytes_and_the_strict_schema() -> None:
    registry = yaml.safe_load((ROLES_DIR / "prompts.yaml").read_text(encoding="utf-8"))
    declared = {(t.registered_as or (t.role, t.name)) for t in all_tasks()}
    assert {(e["role"], e["task"]) for e in registry["tasks"]} == declared | {("common", "correction")}
    for task in all_tasks():
        shas = [hashlib.sha256((ROLES_DIR / f).read_bytes()).hexdigest() for f in task.files]
        ref = task.ref
        assert ref.prompt_sha256 == sha256_json(shas)
        assert ref.schema_sha256 == model_schema_sha256(task.schema) and ref.version >= 1
        assert current_ref(task.role, task.name) == ref
    fix = correction("writer")
    assert current_ref("writer", "correction") == fix.ref and fix.ref.schema_sha256 == ""
    draft, asked = fix.messages("{bad", ["[MODEL_OUTPUT_NOT_JSON] x", "[CONTRACT_Y] y"])
    assert (draft.role, draft.content) == ("assistant", "{bad")
    assert asked.role == "user" and "- [MODEL_OUTPUT_NOT_JSON] x\n- [CONTRACT_Y] y" in asked.content
    assert current_ref("writer", "no-such-task") is None


def test_the_judge_profiles_share_one_contract_file() -> None:
    from novelmuse.roles.judge import TASKS

    assert {t.files[1] for t in TASKS.values()} == {"judge/contract.txt"}
    rendered = [t.render(ScoreRequest("{}", 1, 5, 0.5, 8)).messages[0].content for t in TASKS.values()]
    contract = "## 输出合同（本地逐项校验"
    assert all(r.count(contract) == 1 for r in rendered)


@pytest.fixture
def prompts_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An editable copy of the templates and the registry, which the roles load instead of the package's."""
    copy = tmp_path / "roles"
    shutil.copytree(ROLES_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(_task, "_prompts_dir", lambda: copy)
    return copy


def edit(path: Path, text: str) -> None:
    """Change a template of the copy (the registry is read once per process: read it again)."""
    path.write_text(text, encoding="utf-8")
    _task._registry.cache_clear()


def bump(copy: Path, role: str, task: str, files: dict[str, str]) -> None:
    """Register the next version of `role.task` with the current sha256 of each of its files."""
    registry = yaml.safe_load((copy / "prompts.yaml").read_text(encoding="utf-8"))
    entries = [e for e in registry["tasks"] if (e["role"], e["task"]) == (role, task)]
    latest = max(entries, key=lambda e: e["version"])
    shas = {f: hashlib.sha256((copy / f).read_bytes()).hexdigest() for f in files}
    registry["tasks"].append({"role": role, "task": task, "version": latest["version"] + 1, "files": shas})
    edit(copy / "prompts.yaml", yaml.safe_dump(registry, allow_unicode=True))  # keys sorted: order is no matter


def test_a_prompt_edited_without_a_version_bump_does_not_load(prompts_copy: Path) -> None:
    from novelmuse.roles.writer import REWRITE

    before = REWRITE.ref
    path = prompts_copy / "writer" / "rewrite.txt"
    edit(path, path.read_text(encoding="utf-8") + "\n请保留原文的章末钩子。\n")
    with pytest.raises(InputError) as info:
        REWRITE.render(RewriteRequest(1, BODY, _Rules(), _EditorRound(), NO_MEMORY))
    assert info.value.code == "PROMPT_HASH_MISMATCH" and info.value.where == "roles/writer/rewrite.txt"
    assert f"writer.rewrite v{before.version + 1}" in info.value.fix  # what to register

    bump(prompts_copy, "writer", "rewrite", {"writer/system.txt": "", "writer/rewrite.txt": ""})
    after = REWRITE.ref
    assert after.version == before.version + 1 and after.prompt_sha256 != before.prompt_sha256
    assert (
        "请保留原文的章末钩子"
        in REWRITE.render(RewriteRequest(1, BODY, _Rules(), _EditorRound(), NO_MEMORY)).messages[1].content
    )
    # the other writer tasks share only writer/system.txt: unchanged
    from novelmuse.roles.writer import POLISH

    assert POLISH.ref == current_ref("writer", "polish") and POLISH.ref.version == 3


def test_a_registry_problem_names_what_to_fix(prompts_copy: Path) -> None:
    from novelmuse.roles.reviewer import REVIEW

    edit(prompts_copy / "reviewer" / "input.txt", "【第 $chapter 章】\n")
    with pytest.raises(InputError) as info:
        _ = REVIEW.ref
    assert info.value.code == "PROMPT_HASH_MISMATCH"  # pins are checked before the header
    bump(prompts_copy, "reviewer", "review", {"reviewer/system.txt": "", "reviewer/input.txt": ""})
    with pytest.raises(InputError) as info:
        _ = REVIEW.ref
    assert (info.value.code, info.value.where) == ("PROMPT_INVALID", "roles/reviewer/input.txt")  # no header
