"""`muse outline draft N`: the fine-outline agent behind its entry guard, on the sample book (三国演义, chapters 1–10,
outlines 1, 2 and 11, plan/), its outliner a model behind a loopback OpenAI-compatible endpoint.

The guard runs first (refused → exit 3, no model call, nothing written; dry run exempt and model-free); an outliner
never probed with its exact id, or the scripted provider, is refused like a missing receipt; the agent reads only
what is known as of N−1; a draft that fails the book's lint is corrected or fails closed; the draft waits on the
author's desk, never confirmed by itself; accepting it checks its admitting receipts again."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from novelmuse.book import Book
from novelmuse.cli import _cmd_desk, _cmd_outline_draft, _cmd_writing
from novelmuse.llm import ModelSession
from novelmuse.replay import draft_fine_outline, draft_fine_outlines, outline_admission_problems
from novelmuse.replay._chain import SIGNATURE_DOMAIN
from novelmuse.replay._keys import SigningKey
from novelmuse.roles.common import check_models, expected_echo

from ..editorial.helpers import requests_of
from ..llm.loopback import LoopbackServer, Reply
from ._helpers import OUTLINER_KEY_ENV, Store, clean_doc, issue, sample_gate_book

GOOD: dict[str, Any] = {
    "title": "陶恭祖三让徐州　曹孟德大战吕布",
    "scene_type": "turning_point",
    "goal": "陶谦临终让徐州，刘备受之；曹操用计破吕布",
    "hard_events": [
        {"text": "曹操中田氏诈降之计，濮阳城中火起", "result": "曹操火中脱身，诈称身死", "basis": ["P3"]},
        {"text": "曹操以诈死之计引吕布来攻", "result": "吕布大败；蝗灾缺粮，两家罢兵", "basis": ["P3"]},
        {"text": "陶谦病重，三让徐州", "result": "陶谦死后刘备领徐州牧", "basis": ["P3", "上章", "F-xuzhou"]},
        {"text": "张飞在酒席间讥刺吕布", "result": "刘备喝止张飞，吕布怀恨", "basis": []},
    ],
    "beats": [{"text": "糜竺、陈登劝刘备受徐州"}, {"text": "曹操与荀彧议先取吕布"}],
    "foreshadows": [
        {"op": "resolve", "id": "F-xuzhou", "description": "", "payoff_chapter": None, "note": "刘备终受徐州"},
        {"op": "advance", "id": "F-weapons", "description": "", "payoff_chapter": None, "note": ""},
        {"op": "plant", "id": "F-zhangfei-lvbu", "description": "张飞不喜吕布", "payoff_chapter": 14, "note": ""},
    ],
    "hook": "吕布兵败，引残部来投徐州",
    "new_settings": [
        {"kind": "entity", "text": "陶谦：徐州牧，临终托付徐州", "entities": ["陶谦"]},
        {"kind": "state", "text": "刘备领徐州牧", "entities": ["刘备"]},
    ],
    "time_anchors": [{"text": "蝗灾之年，陶谦病重之时", "marker": ""}, {"text": "次日陶谦亡", "marker": "次日"}],
    "entities": ["刘备", "张飞", "曹操", "吕布", "陶谦"],
    "notes": ["大纲未交代荀彧之谏在本回还是下回：本稿只作节拍", "“张飞讥刺吕布”为本稿补出，用来落实大纲的埋线要点"],
}
BAD: dict[str, Any] = {
    **GOOD,
    "hard_events": [*GOOD["hard_events"][:3], {"text": "诸葛亮献策", "result": "刘备得计", "basis": ["P9"]}],
    "foreshadows": [
        {"op": "resolve", "id": "F-nothing", "description": "", "payoff_chapter": None, "note": ""},
        *[
            {"op": "plant", "id": f"F-p{k}", "description": f"伏笔{k}", "payoff_chapter": 15, "note": ""}
            for k in range(4)
        ],
    ],
    "entities": [*GOOD["entities"], "诸葛亮"],
}


class Outliner:
    """The endpoint's answers: the probe's echo, then the outline drafts queued by `script` (none left: a 500)."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Reply:
        if "models_check" in json.dumps(request):
            return Reply(content={"ok": True, "echo": expected_echo("outliner")})
        return Reply(content=self.answers.pop(0)) if self.answers else Reply(status=500)


@pytest.fixture
def outliner() -> Outliner:
    return Outliner()


@pytest.fixture
def server(outliner: Outliner) -> Iterator[LoopbackServer]:
    with LoopbackServer("openai", responder=outliner) as srv:
        yield srv


def script(outliner: Outliner, answers: list[dict[str, Any]]) -> None:
    outliner.answers[:] = answers


def probe(book: Book) -> None:
    """`muse models check`: the outliner probed with its exact id (one receipt)."""

    async def run() -> None:
        async with ModelSession.open(book, "models-check") as session:
            await check_models(book, session)

    asyncio.run(run())


def admit(book: Book, store: Store) -> None:
    """Passed Gate A (seq 2) and Gate B (seq 4) receipts of the book's writer now, their runs in `store`, and the
    outliner probed."""
    issue(book, "A", store)
    issue(book, "B", store)
    probe(book)


@pytest.fixture
def book(tmp_path: Path, user_config: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> Book:
    monkeypatch.setenv(OUTLINER_KEY_ENV, "sk-outliner-test-key")
    return sample_gate_book(tmp_path, outliner=server.base_url)


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def cli(muse, user_config: Path, monkeypatch: pytest.MonkeyPatch, store: Store):  # type: ignore[no-untyped-def]
    """`muse` in-process, whose fine-outline stage rebuilds gate inputs from `store` (the replay orchestrator's
    store, which this version does not have)."""
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    monkeypatch.setattr(
        _cmd_outline_draft, "draft_fine_outline", functools.partial(draft_fine_outline, gate_inputs=store.rebuild)
    )
    monkeypatch.setattr(
        _cmd_outline_draft, "draft_fine_outlines", functools.partial(draft_fine_outlines, gate_inputs=store.rebuild)
    )
    admission = functools.partial(outline_admission_problems, gate_inputs=store.rebuild)
    monkeypatch.setattr(_cmd_desk, "outline_admission_problems", admission)
    monkeypatch.setattr(_cmd_writing, "outline_admission_problems", admission)
    return muse


def receipts(book: Book) -> int:
    """The outliner's drafting calls (the probe's is not counted)."""
    conn = sqlite3.connect(book.root / ".muse" / "muse.db")
    try:
        return int(
            conn.execute(
                "SELECT count(*) FROM receipts JOIN runs ON runs.id = receipts.run_id WHERE runs.kind != 'models-check'"
            ).fetchone()[0]
        )
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def _doc(r: Any) -> dict[str, Any]:
    return json.loads(r.stdout)


def test_a_dry_run_is_exempt_calls_no_model_and_reads_nothing_of_chapter_n_or_later(cli, book: Book) -> None:  # type: ignore[no-untyped-def]
    # a frozen replay: the book already has chapters 12 and 13, an outline of 13 and a card value sourced in 12
    (book.root / "chapters" / "0012.md").write_text("# 第十二回\n\n未来之事：吕布投奔徐州。\n", encoding="utf-8")
    (book.root / "chapters" / "0013.md").write_text("# 第十三回\n\n更远的未来。\n", encoding="utf-8")
    (book.root / "outlines" / "0013.yaml").write_text(
        "version: 2\nchapter: 13\nscene_type: battle\ngoal: 未来的目标\nhard_events:\n"
        "  - {id: E1, text: 天子东归, result: 曹操迎驾}\nforeshadows:\n"
        "  - {op: plant, id: F-future, description: 未来的伏笔, payoff_chapter: 20}\n"
        "hook: 未来的钩子\nentities: [曹操]\n",
        encoding="utf-8",
    )
    card = book.root / "cards" / "lv-bu.yaml"
    card.write_text(
        card.read_text(encoding="utf-8").replace(
            "attributes:\n", "attributes:\n  ally:\n    - {value: 刘备, from: 12}\n"
        ),
        encoding="utf-8",
    )
    r = cli("outline", "draft", "12", "--dry-run", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = _doc(r)
    assert doc["status"] == "dry_run" and doc["ok"] is True and not doc["guard"]["admitted"]
    draft = doc["draft"]
    assert draft["written_to"] is None and receipts(book) == 0
    assert not (book.root / "outlines" / "0012.yaml").exists()
    text = "\n".join(m["content"] for m in draft["messages"])
    user = draft["messages"][-1]["content"]
    assert "陶谦三让徐州" in text and "天子东归" in text  # the chapter's section, and what comes next (hook)
    assert "宴桃园" not in user.split("【大纲】")[1].split("【设定】")[0]  # past arcs come from memory, not the plan
    for future in ("未来之事", "更远的未来", "未来的目标", "F-future", "第12章起"):
        assert future not in text
    assert "作者备忘" not in text  # an HTML comment is the author's own
    foreshadows = user.split("【尚未回收的伏笔】")[1]
    assert foreshadows.index("F-dongzhuo") < foreshadows.index("F-xuzhou")  # overdue first
    assert draft["inputs"]["overdue"] == ["F-dongzhuo", "F-weapons", "F-outer-troops"]
    assert [m["label"] for m in draft["inputs"]["materials"]] == ["P1", "P2", "P3", "P4", "P5", "P6", "上章"]
    assert "董卓的状态：已故" in text  # dead as of N−1: the agent is told
    human = cli("outline", "draft", "12", "--dry-run", "--book", book.root)
    assert human.exit_code == 0 and "would refuse a real run" in human.stdout and "── user ──" in human.stdout


def test_a_real_run_without_receipts_is_refused_naming_what_is_missing(cli, book: Book) -> None:  # type: ignore[no-untyped-def]
    r = cli("outline", "draft", "12", "--json", "--book", book.root)
    assert r.exit_code == 3
    doc = _doc(r)
    assert doc["status"] == "refused" and doc["draft"] is None and doc["error"]["code"] == "FINE_OUTLINE_GUARD"
    assert [(f["code"], f["gate"]) for f in doc["guard"]["findings"]] == [
        ("GUARD_NO_RECEIPT", "A"),
        ("GUARD_NO_RECEIPT", "B"),
        ("GUARD_OUTLINER_UNPROBED", None),
    ]
    assert "muse models check" in doc["guard"]["findings"][2]["what"]
    assert doc["guard"]["writer_config_sha256"] in doc["guard"]["findings"][1]["what"]
    assert receipts(book) == 0 and not (book.root / "outlines" / "0012.yaml").exists()
    human = cli("outline", "draft", "12", "--book", book.root)
    assert human.exit_code == 3 and human.stderr.startswith("error[FINE_OUTLINE_GUARD]")
    assert "Gate A" in human.stderr and "Gate B" in human.stderr


def test_receipts_without_a_probed_outliner_or_with_the_scripted_provider_are_refused(  # type: ignore[no-untyped-def]
    cli, book: Book, store: Store, server: LoopbackServer
) -> None:
    issue(book, "A", store)
    issue(book, "B", store)
    r = cli("outline", "draft", "12", "--json", "--book", book.root)
    assert r.exit_code == 3 and [f["code"] for f in _doc(r)["guard"]["findings"]] == ["GUARD_OUTLINER_UNPROBED"]
    assert server.count == 0  # refused before any call
    toml = book.root / "book.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace('outliner = "lb:outliner-model-1"', 'outliner = "s:canned-1"')
        + '\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n',
        encoding="utf-8",
    )
    (book.root / "script.yaml").write_text("outliner: []\n", encoding="utf-8")
    scripted = cli("outline", "draft", "12", "--json", "--book", book.root)
    assert scripted.exit_code == 3
    (finding,) = _doc(scripted)["guard"]["findings"]
    assert finding["code"] == "GUARD_OUTLINER_UNPROBED" and "scripted provider" in finding["what"]


def test_the_shipped_command_rebuilds_gate_inputs_from_the_store_so_hand_issued_receipts_never_admit(  # type: ignore[no-untyped-def]
    muse, book: Book, user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    issue(book, "A", None)  # receipts issued from gate-input files with the key: nothing rebuilds them
    issue(book, "B", None, run="RUN2")
    r = muse("outline", "draft", "12", "--json", "--book", book.root)
    assert r.exit_code == 3
    codes = {(f["seq"], f["code"]) for f in _doc(r)["guard"]["findings"]}
    assert (2, "GATE_ARTEFACT_CHANGED") in codes and all(c != "GATE_INPUT_BUILDER_MISSING" for _, c in codes)
    whats = [f["what"] for f in _doc(r)["guard"]["findings"] if f["seq"] == 2]
    assert any("GATE_INPUT_NOT_IN_STORE" in w for w in whats), whats
    assert receipts(book) == 0


def _flip(lines: list[bytes]) -> list[bytes]:
    line = bytearray(lines[2])
    at = line.index(b'"outcome":"') + 12
    line[at] = ord("X")
    return [lines[0], lines[1], bytes(line), lines[3]]


def _forge(lines: list[bytes]) -> list[bytes]:
    entry = json.loads(lines[3])
    key = SigningKey(Ed25519PrivateKey.generate())
    entry["signature"] = base64.b64encode(key.sign(SIGNATURE_DOMAIN + entry["sha256"].encode())).decode()
    return [*lines[:3], json.dumps(entry, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode() + b"\n"]


TAMPERING = {
    "a flipped byte": (_flip, (3, "GATE_ENTRY_HASH")),
    "a deleted entry": (lambda lines: [lines[0], lines[1], lines[3]], (4, "GATE_ENTRY_SEQ")),
    "reordered entries": (lambda lines: [lines[0], lines[1], lines[3], lines[2]], (4, "GATE_ENTRY_SEQ")),
    "a forged signature": (_forge, (4, "GATE_SIGNATURE")),
    "a hand-written gate input": (None, (4, "GATE_ARTEFACT_CHANGED")),
}


@pytest.mark.parametrize("kind", list(TAMPERING))
def test_tampering_is_refused_naming_the_seq_while_a_dry_run_still_works(  # type: ignore[no-untyped-def]
    cli, book: Book, store: Store, kind: str
) -> None:
    tamper, expected = TAMPERING[kind]
    issue(book, "A", store)
    issue(book, "B", store if tamper is not None else None, run="RUN2")  # None: no replay run made this input
    journal = book.root / ".muse" / "gates" / "journal.jsonl"
    if tamper is not None:
        journal.write_bytes(b"".join(tamper(journal.read_bytes().splitlines(keepends=True))))
    r = cli("outline", "draft", "12", "--yes", "--json", "--book", book.root)
    assert r.exit_code == 3, r.stdout
    assert expected in {(f["seq"], f["code"]) for f in _doc(r)["guard"]["findings"]}
    assert f"seq {expected[0]}" in _doc(r)["error"]["what"]
    dry = cli("outline", "draft", "12", "--dry-run", "--json", "--book", book.root)
    assert dry.exit_code == 0 and _doc(dry)["status"] == "dry_run" and not _doc(dry)["guard"]["admitted"]
    assert receipts(book) == 0 and not (book.root / "outlines" / "0012.yaml").exists()  # no model was called


def test_an_admitted_run_corrects_lint_errors_and_writes_an_unconfirmed_draft(  # type: ignore[no-untyped-def]
    cli, book: Book, store: Store, outliner: Outliner
) -> None:  # type: ignore[no-untyped-def]
    admit(book, store)
    script(outliner, [BAD, GOOD])
    r = cli("outline", "draft", "12", "--yes", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    doc = _doc(r)
    draft = doc["draft"]
    assert doc["status"] == "drafted" and draft["attempts"] == 2 and draft["confirmed"] is False
    assert draft["written_to"].startswith(".muse/drafts/outlines/0012-") and draft["author_outline"] is None
    assert not (book.root / "outlines" / "0012.yaml").exists()  # a shadow draft until the author accepts it
    assert draft["admission"]["receipts"] == {"A": 2, "B": 4}
    # the correction named every lint error of the first answer
    correction = requests_of(book.root, "outliner")[-1][-1]["content"]  # the last of the two drafting calls
    for code in ("OUTLINE_UNKNOWN_ENTITY", "FORESHADOW_UNKNOWN", "FORESHADOW_PLANT_CAP", "CONTRACT_UNKNOWN_BASIS"):
        assert code in correction, code
    text = (book.root / draft["written_to"]).read_text(encoding="utf-8")
    assert text.startswith("# 第12回细纲草稿") and "尚未确认" in text and "Gate B 回执 seq 4" in text
    assert "# 记忆：截至第11回；" in text  # named the book's way (its chapters are 第N回)
    assert "# 依据：无（本稿补出，请核对）" in text and "# 依据：P3、上章、F-xuzhou" in text
    assert "大纲未交代荀彧之谏" in text
    context = cli("context", "12", "--book", book.root)
    assert context.exit_code == 2 and "OUTLINE_NOT_FOUND" in context.stderr  # never used before it is accepted
    accept = cli("drafts", "accept", draft["short"], "--json", "--book", book.root)
    assert accept.exit_code == 0, accept.stderr  # the draft passes the book's own lint as written, and is confirmed
    steps = {c["step"]: c for c in json.loads(accept.stdout)["preflight"]}
    assert list(steps) == ["file", "admission", "lint"] and steps["admission"]["status"] == "passed"
    show = json.loads(cli("outline", "show", "12", "--json", "--book", book.root).stdout)
    assert show["confirmation"]["state"] == "confirmed" and show["version"] == 2
    assert show["confirmation"]["current_sha256"] == draft["file_sha256"]
    assert show["constraint_ids"][:4] == ["E1", "R1", "E2", "R2"] and "F-resolve:F-xuzhou" in show["constraint_ids"]


def test_an_authors_outline_is_never_overwritten(cli, book: Book, store: Store, outliner: Outliner) -> None:  # type: ignore[no-untyped-def]
    admit(book, store)
    before = (book.root / "outlines" / "0011.yaml").read_bytes()
    answer = {**GOOD, "foreshadows": [], "title": "刘皇叔北海救孔融", "hook": "吕布袭取兖州"}
    answer["hard_events"] = [{"text": "太史慈突围求救", "result": "刘备发兵北海", "basis": ["P3"]}]
    answer["new_settings"] = [{"kind": "entity", "text": "太史慈登场", "entities": ["太史慈"]}]
    answer["entities"] = ["刘备", "太史慈"]
    script(outliner, [answer])
    r = cli("outline", "draft", "11", "--yes", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    assert (book.root / "outlines" / "0011.yaml").read_bytes() == before
    drafts = list((book.root / ".muse" / "drafts" / "outlines").glob("0011-*.yaml"))
    assert len(drafts) == 1 and "outlines/0011.yaml is the author's outline" in r.stdout.replace("\n", " ")
    (listed,) = json.loads(cli("drafts", "--json", "--book", book.root).stdout)["drafts"]
    assert listed["kind"] == "outline" and listed["chapter"] == 11
    refused = cli("drafts", "accept", listed["short"], "--book", book.root)
    assert refused.exit_code == 2 and "AUTHOR_TEXT_EXISTS" in refused.stderr
    assert (book.root / "outlines" / "0011.yaml").read_bytes() == before


def test_a_draft_that_stays_wrong_fails_closed_and_writes_nothing(  # type: ignore[no-untyped-def]
    cli, book: Book, store: Store, outliner: Outliner
) -> None:
    admit(book, store)
    script(outliner, [BAD, BAD, BAD])
    r = cli("outline", "draft", "12", "--yes", "--book", book.root)
    assert r.exit_code == 3 and r.stderr.startswith("error[")
    assert not (book.root / "outlines" / "0012.yaml").exists() and receipts(book) == 3


def test_without_an_outliner_model_the_draft_is_skipped(cli, tmp_path: Path, user_config: Path, store: Store) -> None:  # type: ignore[no-untyped-def]
    book = sample_gate_book(tmp_path)
    issue(book, "A", store)
    issue(book, "B", store)
    r = cli("outline", "draft", "12", "--yes", "--json", "--book", book.root)
    doc = _doc(r)
    assert doc["status"] == "skipped" and doc["ok"] is False and "outliner" in doc["draft"]["reason"]
    assert receipts(book) == 0 and not (book.root / "outlines" / "0012.yaml").exists()


def test_a_draft_whose_admission_was_revoked_since_is_not_accepted(  # type: ignore[no-untyped-def]
    cli, book: Book, store: Store, outliner: Outliner
) -> None:
    """A failed Gate B evaluated after the draft was made revokes the pass that admitted it: accepting the draft
    checks its admitting receipts again and refuses, writing nothing; so does confirming a copy of it made by hand
    — until the author removes its admission line and takes it as their own."""
    admit(book, store)
    script(outliner, [GOOD])
    r = cli("outline", "draft", "12", "--yes", "--json", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    short = _doc(r)["draft"]["short"]
    drafted = (book.root / _doc(r)["draft"]["written_to"]).read_text(encoding="utf-8")
    (book.root / "outlines" / "0012.yaml").write_text(drafted, encoding="utf-8")  # copied by hand, not accepted
    assert cli("outline", "confirm", "12", "--book", book.root).exit_code == 0  # its admission holds: confirmed
    (book.root / "outlines" / "0012.yaml").unlink()
    issue(book, "B", store, doc=clean_doc(), run="RUN2")  # the same writer, evaluated again: no improvement
    accept = cli("drafts", "accept", short, "--json", "--book", book.root)
    assert accept.exit_code == 1, accept.stdout
    steps = {c["step"]: c for c in json.loads(accept.stdout)["preflight"]}
    assert steps["admission"]["status"] == "failed" and "GUARD_LATEST_FAILED" in steps["admission"]["detail"]
    assert not (book.root / "outlines" / "0012.yaml").exists()
    (book.root / "outlines" / "0012.yaml").write_text(drafted, encoding="utf-8")
    confirm = cli("outline", "confirm", "12", "--book", book.root)
    assert confirm.exit_code == 3 and confirm.stderr.startswith("error[OUTLINE_ADMISSION_REVOKED]")
    mine = "\n".join(line for line in drafted.splitlines() if not line.startswith("# 准入：")) + "\n"
    (book.root / "outlines" / "0012.yaml").write_text(mine, encoding="utf-8")  # the author takes it as their own
    assert cli("outline", "confirm", "12", "--book", book.root).exit_code == 0


def test_a_range_is_billed_whole_then_drafted_in_order_each_on_the_desk(  # type: ignore[no-untyped-def]
    cli, book: Book, store: Store, outliner: Outliner
) -> None:
    refused = cli("outline", "draft", "12-13", "--yes", "--book", book.root)
    assert refused.exit_code == 3 and "error[FINE_OUTLINE_GUARD]" in refused.stderr and receipts(book) == 0
    admit(book, store)
    uncovered = cli("outline", "draft", "12-40", "--yes", "--book", book.root)
    assert uncovered.exit_code == 2 and "PLAN_CHAPTER_NOT_COVERED" in uncovered.stderr and receipts(book) == 0
    script(outliner, [GOOD, GOOD])
    r = cli("outline", "draft", "12-13", "--yes", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    bill = r.stdout.index("outline draft: at most 2 call(s)")
    assert bill < r.stdout.index("chapter 12: draft") < r.stdout.index("chapter 13: draft")
    assert ": 2 call(s)," in r.stdout  # what the range spent
    assert receipts(book) == 2 and not (book.root / "outlines" / "0013.yaml").exists()
    listed = json.loads(cli("drafts", "--json", "--book", book.root).stdout)["drafts"]
    assert [(d["kind"], d["chapter"]) for d in listed] == [("outline", 12), ("outline", 13)]
    # the range's own summary is what `muse cost --run` says of its run
    script(outliner, [GOOD, GOOD])
    again = _doc(cli("outline", "draft", "12-13", "--yes", "--json", "--book", book.root))
    cost = json.loads(cli("cost", "--run", again["run_id"], "--json", "--book", book.root).stdout)["total"]
    assert again["spent"] == {k: cost[k] for k in ("calls", "input_tokens", "output_tokens", "cost")}
    assert again["spent"]["calls"] == 2
