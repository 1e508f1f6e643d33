"""`muse plan draft --premise …`: the plan agent (大纲+设定智能体) behind its entry guard, on the honest outliner
book (tests/replay/honest_outliner.py), its planner answered through the injected provider.

The guard needs the fine-outline agent's own receipts (exit 3 without them, nothing called; the dry run exempt and
model-free); receipts of another outliner configuration, or a planner that is the scripted provider, are refused
like none; the planner's answer is put through the plan lint inside its call (corrected, or failed closed); the draft
waits on the desk — nothing reaches plan/ or cards/ until the author accepts it, and a revise → accept writes
exactly the revised text, every replaced file kept."""

from __future__ import annotations

import asyncio
import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest

from novelmuse.book import Book, find_book
from novelmuse.errors import FailedClosed
from novelmuse.llm import ModelSession, ProviderRequest, ProviderResponse
from novelmuse.replay import (
    check_plan_entry,
    draft_plan,
    evaluate_run,
    gate_input_rebuilder,
    outline_admission_problems,
    resolve_set,
    run_replay,
)
from novelmuse.writing import accept_draft, file_history, lint_plan, list_drafts, parse_bundle, revise_draft

from .honest_outliner import KEY_ENV, HonestOutliner, honest_outliner_book, probe
from .replay_helpers import respond

PREMISE = (
    "类型：历史演义。主角：刘备，以仁义起于草莽。"
    + "核心钩子：汉室衰微，三兄弟能否匡扶天下。目标篇幅：40回。风格：半文半白。"
)
GOOD: dict[str, Any] = {
    "title": "三国演义",
    "main_line": "汉室衰微，群雄并起；刘备以仁义起于草莽。",
    "volumes": [
        {
            "title": "群雄并起",
            "first_chapter": 1,
            "last_chapter": 20,
            "summary": "桃园结义至白门楼。",
            "arcs": [
                {
                    "title": "桃园与黄巾",
                    "first_chapter": 1,
                    "last_chapter": 10,
                    "events": ["桃园结义", "破黄巾"],
                    "result": "刘备得官",
                },
                {
                    "title": "争夺徐州",
                    "first_chapter": 11,
                    "last_chapter": 20,
                    "events": ["刘备入徐州"],
                    "result": "吕布殒命白门楼",
                },
            ],
        },
        {
            "title": "官渡之前",
            "first_chapter": 21,
            "last_chapter": 40,
            "summary": "衣带诏至官渡。",
            "arcs": [
                {
                    "title": "衣带诏",
                    "first_chapter": 21,
                    "last_chapter": 40,
                    "events": ["董承受衣带诏"],
                    "result": "刘备脱离曹操",
                },
            ],
        },
    ],
    "foreshadows": [
        {"id": "F-yidai", "description": "衣带诏", "planted_chapter": 20, "resolved_chapter": 30},
        {"id": "F-seal", "description": "玉玺下落", "planted_chapter": 6, "resolved_chapter": None},
    ],
    "ending": "三分归晋。",
    "settings": [
        {
            "topic": "characters",
            "entries": [{"name": "刘备", "text": "仁义之主"}, {"name": "赵云", "text": "常山赵子龙"}],
        },
        {"topic": "world", "entries": [{"name": "汉末", "text": "群雄割据，天子蒙尘"}]},
    ],
    "cards": [{"name": "赵云", "kind": "character", "aliases": ["子龙"], "description": "常山真定人"}],
    "notes": ["前提未交代结局的时点：本稿写到三分归晋"],
}
GAP = copy.deepcopy(GOOD)
GAP["volumes"][1]["first_chapter"] = 25  # chapters 21–24 in no volume
GAP["volumes"][1]["arcs"][0]["first_chapter"] = 25


class Planner(HonestOutliner):
    """The honest outliner and judges, and a planner answering the plans queued in `plans`."""

    def __init__(self, plans: list[dict[str, Any]]) -> None:
        super().__init__(broken={9, 10, 11, 12})
        self.plans = plans

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        if request.role == "planner" and request.schema_name != "models_check":
            self.calls.append("planner")
            return respond(request, self.plans.pop(0))
        return await super().send(request)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "userconf" / "config.toml"))
    monkeypatch.setenv(KEY_ENV, "not-a-real-key")
    return tmp_path


def _book(env: Path, *, gates: bool) -> tuple[Book, Planner]:
    """The honest outliner book, every role probed; with `gates`, the outliner's Gate A and Gate B passed."""
    book, doc = honest_outliner_book(env / "b")
    models = Planner([])
    asyncio.run(probe(book, models))
    if gates:
        out = asyncio.run(run_replay(book, doc, ["A", "C"], concurrency=8, providers={"s": models}))
        assert evaluate_run(book, out.run_id, "A").receipt_seq and evaluate_run(book, out.run_id, "B").receipt_seq
    models.calls.clear()
    return book, models


def _accept(book: Book, short: str) -> Any:
    """`muse drafts accept`: the draft's admitting receipts checked again, as the desk's faces do."""
    return asyncio.run(accept_draft(book, None, short, admission=outline_admission_problems))


def _draft(book: Book, models: Planner, plans: list[dict[str, Any]], chapters: int = 40) -> Any:
    models.plans[:] = plans

    async def run() -> Any:
        async with ModelSession.open(book, "plan-draft", providers={"s": models}) as session:  # type: ignore[dict-item]
            return await draft_plan(book, session, PREMISE, chapters=chapters)

    return asyncio.run(run())


def test_without_the_outliners_receipts_the_plan_stage_is_refused_and_the_dry_run_calls_nothing(
    env: Path, muse: Any
) -> None:
    book, models = _book(env, gates=False)
    before = (book.root / "plan" / "outline.md").read_bytes()
    refused = muse("plan", "draft", "--premise", PREMISE, "--chapters", "40", "--book", book.root)
    assert refused.exit_code == 3 and "error[PLAN_GUARD]" in refused.stderr and "GUARD_NO_RECEIPT" in refused.stderr
    assert "outliner configuration" in refused.stderr
    dry = muse("plan", "draft", "--premise", PREMISE, "--chapters", "40", "--dry-run", "--book", book.root)
    assert (
        dry.exit_code == 0
        and "would refuse a real run" in dry.stdout
        and "【前提】" in dry.stdout
        and PREMISE in dry.stdout
    )
    calls = find_book(book.root).db.execute("SELECT count(*) FROM model_calls WHERE role = 'planner'").fetchone()
    assert calls[0] == 1  # the probe only: neither the refused run nor the dry run called the planner
    assert (book.root / "plan" / "outline.md").read_bytes() == before
    assert list_drafts(book).drafts == [] and models.calls == []


def test_an_admitted_draft_waits_on_the_desk_until_accepted_and_a_revision_is_written_exactly(env: Path) -> None:
    book, models = _book(env, gates=True)
    assert check_plan_entry(book, gate_inputs=gate_input_rebuilder(book)).admitted
    outline = book.root / "plan" / "outline.md"
    before = outline.read_bytes()
    doc = _draft(book, models, [GAP, GOOD])  # the gap is corrected inside the call
    assert doc.status == "drafted" and doc.draft.attempts == 2 and models.calls == ["planner", "planner"]
    assert doc.draft.admission["receipts"] == {"A": 2, "B": 4}
    assert outline.read_bytes() == before and not (book.root / "cards" / "赵云.yaml").exists()
    assert set(doc.draft.files) == {
        "plan/outline.md",
        "plan/settings/人物.md",
        "plan/settings/世界观.md",
        "cards/赵云.yaml",
    }
    listed = [d for d in list_drafts(book).drafts if d.kind == "plan"]
    assert [d.id for d in listed] == [doc.draft.draft_id]
    accepted = _accept(book, doc.draft.short)
    assert accepted.ok, accepted.reason
    assert "伏笔 F-yidai：衣带诏，埋第20回，收第30回" in outline.read_text(encoding="utf-8")
    assert (book.root / "cards" / "赵云.yaml").is_file()
    assert lint_plan(book).ok
    kept = file_history(book, "plan/outline.md")
    assert kept.revisions[-1].sha256 == hashlib.sha256(before).hexdigest()  # the author's outline kept, restorable
    # a second draft, revised by the author: the accept writes exactly the revised text
    again = _draft(book, models, [{**GOOD, "cards": [], "settings": [GOOD["settings"][1]]}])
    assert again.status == "drafted" and again.draft is not None
    row = book.db.execute("SELECT text FROM plan_drafts WHERE id = ?", (again.draft.draft_id,)).fetchone()
    text = row[0].replace("群雄割据，天子蒙尘", "群雄割据，天子蒙尘，作者改过")
    revision = revise_draft(book, again.draft.short, text)
    assert revision.ok, revision.check
    done = _accept(book, revision.revision.short)
    assert done.ok, done.reason
    world = (book.root / "plan" / "settings" / "世界观.md").read_text(encoding="utf-8")
    assert world == parse_bundle(text)["plan/settings/世界观.md"] and "作者改过" in world


def test_a_plan_that_never_passes_the_lint_fails_closed(env: Path) -> None:
    book, models = _book(env, gates=True)
    with pytest.raises(FailedClosed) as exc:
        _draft(book, models, [GAP, GAP, GAP])
    assert exc.value.code == "PLAN_VOLUME_GAP" and list_drafts(book).drafts == []


def test_receipts_of_another_outliner_or_a_scripted_planner_do_not_admit(env: Path) -> None:
    book, _ = _book(env, gates=True)
    toml = book.root / "book.toml"
    original = toml.read_text(encoding="utf-8")
    toml.write_text(original.replace("context_chars = 60000", "context_chars = 50000"), encoding="utf-8")
    other = check_plan_entry(find_book(book.root), gate_inputs=gate_input_rebuilder(find_book(book.root)))
    assert not other.admitted and [f.code for f in other.findings] == ["GUARD_NO_RECEIPT", "GUARD_NO_RECEIPT"]
    assert "the outliner changed since" in other.summary()
    scripted = original + '\n[providers.canned]\nkind = "scripted"\nscript = "script.yaml"\n'
    toml.write_text(
        scripted.replace('default = "s:loopback-model-1"', 'default = "s:loopback-model-1"\nplanner = "canned:x"'),
        encoding="utf-8",
    )
    fresh = find_book(book.root)
    canned = check_plan_entry(fresh, gate_inputs=gate_input_rebuilder(fresh))
    assert not canned.admitted and [f.code for f in canned.findings] == ["GUARD_PLANNER_UNPROBED"]
    assert "scripted provider" in canned.summary()


NEXT: dict[str, Any] = {
    **GOOD,
    "volumes": [
        {
            "title": "官渡",
            "first_chapter": 41,
            "last_chapter": 60,
            "summary": "袁曹决战。",
            "arcs": [
                {
                    "title": "官渡之战",
                    "first_chapter": 41,
                    "last_chapter": 60,
                    "events": ["袁绍起兵"],
                    "result": "曹操胜",
                }
            ],
        }
    ],
    "foreshadows": [{"id": "F-wuchao", "description": "乌巢粮草", "planted_chapter": 45, "resolved_chapter": 55}],
    "settings": [{"topic": "characters", "entries": [{"name": "袁绍", "text": "四世三公"}]}],
    "cards": [{"name": "袁绍", "kind": "character", "aliases": ["本初"], "description": "冀州牧"}],
}


def test_extend_appends_the_next_part_to_the_accepted_plan_word_for_word(env: Path, muse: Any) -> None:
    book, models = _book(env, gates=True)
    first = _draft(book, models, [GOOD])
    assert _accept(book, first.draft.short).ok
    outline = book.root / "plan" / "outline.md"
    accepted = outline.read_text(encoding="utf-8")
    dry = muse("plan", "extend", "--chapters", "20", "--dry-run", "--book", book.root)
    assert dry.exit_code == 0 and "续写规划：第41-60回" in dry.stdout and "衣带诏" in dry.stdout
    models.plans[:] = [{**NEXT, "volumes": GOOD["volumes"]}, NEXT]  # a rewrite of 1–40 is corrected

    async def run() -> Any:
        async with ModelSession.open(book, "plan-draft", providers={"s": models}) as session:  # type: ignore[dict-item]
            return await draft_plan(book, session, None, chapters=20)

    doc = asyncio.run(run())
    assert doc.status == "drafted" and doc.draft.attempts == 2 and outline.read_text(encoding="utf-8") == accepted
    assert set(doc.draft.files) == {"plan/outline.md", "plan/settings/人物（第41-60回）.md", "cards/袁绍.yaml"}
    assert _accept(book, doc.draft.short).ok
    now = outline.read_text(encoding="utf-8")
    assert now.startswith(accepted.rstrip()) and "# 第41-60回：官渡" in now
    assert (book.root / "plan" / "settings" / "人物.md").is_file()  # the first part's settings left as they were
    linted = lint_plan(book)
    assert linted.ok and len(linted.volumes) == 3, linted.problems


def test_the_command_shows_its_bill_then_drafts_through_a_loopback_endpoint(env: Path, muse: Any) -> None:
    """`muse plan draft` as a user runs it: the planner behind a real loopback OpenAI-compatible endpoint (the same
    provider kind and model id that was probed), its bill printed before the call, the draft on the desk."""
    from ..llm.loopback import LoopbackServer, Reply

    book, _ = _book(env, gates=True)
    with LoopbackServer("openai", responder=lambda _request: Reply(content=GOOD)) as server:
        toml = book.root / "book.toml"
        toml.write_text(
            toml.read_text(encoding="utf-8").replace("http://127.0.0.1:9/v1", server.base_url), encoding="utf-8"
        )
        out = muse("plan", "draft", "--premise", PREMISE, "--chapters", "40", "--yes", "--book", book.root)
    assert out.exit_code == 0, out.stderr
    bill, drafted = out.stdout.index("plan draft:"), out.stdout.index("drafted the plan")
    assert bill < drafted and "nothing written to plan/ or cards/" in out.stdout
    assert "cards/赵云.yaml" in out.stdout and not (book.root / "cards" / "赵云.yaml").exists()
    spent = find_book(book.root).db.execute("SELECT count(*) FROM model_calls WHERE role = 'planner'").fetchone()
    assert spent[0] == 2  # the probe and the one draft


def test_a_failed_evaluation_since_the_draft_revokes_its_accept(env: Path) -> None:
    """Like a fine-outline draft: the admitting receipts a plan draft's header names are checked again when it is
    accepted — a later failed Gate B of the same outliner configuration refuses it (and without a check to run,
    the accept fails closed)."""
    book, models = _book(env, gates=True)
    doc = _draft(book, models, [GOOD])
    unchecked = asyncio.run(accept_draft(book, None, doc.draft.short))
    assert unchecked.status == "error" and unchecked.error_code == "ADMISSION_UNVERIFIED"
    same = HonestOutliner({9, 10, 11, 12}, identical=True)
    doc_set = resolve_set(book, "honest-outliner")
    again = asyncio.run(run_replay(book, doc_set, ["A", "C"], concurrency=8, new=True, providers={"s": same}))
    assert evaluate_run(book, again.run_id, "B").outcome == "failed"
    refused = _accept(book, doc.draft.short)
    assert refused.status == "refused" and refused.preflight[0].step == "admission"
    assert "GUARD_LATEST_FAILED" in refused.preflight[0].detail
    assert not (book.root / "cards" / "赵云.yaml").exists()


def test_an_accept_killed_between_two_files_is_finished_by_accepting_again(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files of a plan draft are written one by one, each keeping what it replaces; a kill after the first one
    leaves it written, the others untouched and no decision — accepting again writes the rest and records one."""
    book, models = _book(env, gates=True)
    doc = _draft(book, models, [GOOD])
    written: list[str] = []
    replace = Book.replace_file

    def killed_after_one(self: Book, path: Path, *args: Any, **kwargs: Any) -> Any:
        if written:
            raise KeyboardInterrupt  # the process dies here
        written.append(path.name)
        return replace(self, path, *args, **kwargs)

    monkeypatch.setattr(Book, "replace_file", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        _accept(book, doc.draft.short)
    monkeypatch.undo()
    assert written == ["赵云.yaml"] and (book.root / "cards" / "赵云.yaml").is_file()
    assert "衣带诏" not in (book.root / "plan" / "outline.md").read_text(encoding="utf-8")
    assert list_drafts(book).drafts[0].decision is None
    again = _accept(book, doc.draft.short)
    assert again.ok, again.reason
    assert "cards/赵云.yaml" not in (again.written or "") and "plan/outline.md" in (again.written or "")
    decisions = book.db.execute("SELECT count(*) FROM draft_decisions WHERE draft_id = ?", (doc.draft.draft_id,))
    assert decisions.fetchone()[0] == 1 and lint_plan(book).ok


def test_a_premise_that_cannot_be_read_is_bad_input(tmp_path: Path, muse: Any) -> None:
    book = tmp_path / "b"
    assert muse("init", book).exit_code == 0
    (tmp_path / "latin1.md").write_bytes("前提".encode("gb18030") + b"\xff")
    (tmp_path / "folder").mkdir()
    for premise, what in (("", "empty"), (str(tmp_path / "latin1.md"), "not UTF-8"), (str(tmp_path / "folder"), "dir")):
        out = muse("plan", "draft", "--premise", premise, "--dry-run", "--book", book)
        assert out.exit_code == 2 and "error[PLAN_PREMISE_INVALID]" in out.stderr and what in out.stderr, out.stderr
    out = muse("plan", "draft", "--premise", "x" * 20_001, "--book", book)
    assert out.exit_code == 2 and "at most 20000" in out.stderr
