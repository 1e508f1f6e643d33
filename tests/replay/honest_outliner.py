"""An honest experiment for the fine-outline gates: twelve distinct target chapters (9–20 of 三国演义), each with a
reference scaffold made from its 回目 (the book's own outline of that chapter), a plan covering chapters 1–20, the
sample book's cards — and an outliner whose drafts depend on what it reads the way a real one's do:

- given the story memory as of N−1 (arm C: its prompt lists the recent outlines), the draft follows the reference
  scaffold (its hard event, result and hook);
- without it (arm A), the draft is weaker (`WEAK` in its goal) and, for the first `broken` items, it misses the
  chapter's hard event (an unrelated one instead): the reference lint and the blind panel both fail E1 and R1 there,
  so fails exist on both sides and agree;
- the judges score a draft without `WEAK` one point higher on every dimension, citing the reference item they
  compared it with.

`identical=True` makes the outliner ignore what it reads (both arms draft the same outline): Gate B must then find
no difference.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import Book, find_book
from novelmuse.judging import BlindInput
from novelmuse.llm import ModelSession, ProviderRequest, ProviderResponse
from novelmuse.replay import RegisteredSet, default_key_path, generate_key, register_set, resolve_set
from novelmuse.roles.common import check_models, expected_echo

from ..conftest import SAMPLE_BOOK
from ..judging._helpers import good_report
from .honest import CARD_NAMES, KEY_ENV, _heading, chapter_body
from .replay_helpers import respond

WEAK = "（草草）"
FIRST, ITEMS, LAST = 9, 12, 20


def _halves(n: int) -> tuple[str, str, str]:
    """(title, first half, second half) of chapter n's 回目."""
    heading = _heading(n)
    title = heading.split("　", 1)[1] if "　" in heading else heading
    halves = title.split("　")
    return title, halves[0], halves[-1]


def reference(n: int) -> dict[str, Any]:
    """Chapter n's reference scaffold (and the book's outline of n)."""
    title, first, second = _halves(n)
    return {
        "version": 2,
        "chapter": n,
        "title": title,
        "scene_type": ("battle", "character_dialogue")[n % 2],
        "goal": title,
        "hard_events": [{"id": "E1", "text": first, "result": second}],
        "hook": "且听下文分解",
        "entities": [name for name in CARD_NAMES if name in chapter_body(n)][:4],
    }


@dataclass
class HonestOutliner:
    """The injected provider: the outliner and the judges answered from what they are sent (see the module doc)."""

    broken: set[int]
    identical: bool = False
    name: str = "s"
    kind: str = "openai"
    max_concurrency: int = 16
    calls: list[str] = field(default_factory=list)

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        self.calls.append(request.role)
        text = "\n".join(m.content for m in request.messages)
        if request.schema_name == "models_check":
            return respond(request, {"ok": True, "echo": expected_echo(request.role)})
        if request.role == "outliner":
            return respond(request, self._draft(text))
        if request.role == "judge":
            return respond(request, _judge(request))
        raise AssertionError(f"unexpected role {request.role}")

    async def aclose(self) -> None:
        return None

    def _draft(self, prompt: str) -> dict[str, Any]:
        found = re.search(r"为第(\d+)回写细纲草稿", prompt)
        assert found, "the outliner's prompt names its chapter"
        n = int(found.group(1))
        ref = reference(n)
        memory = "【近几章细纲】\n（无" not in prompt
        weak = not (self.identical or memory)
        event = ref["hard_events"][0]
        if weak and n in self.broken:
            event = {"text": "众人饮酒闲谈", "result": "各自散去"}
        return {
            "title": ref["title"],
            "scene_type": ref["scene_type"],
            "goal": ref["goal"] + (WEAK if weak else ""),
            "hard_events": [{"text": event["text"], "result": event["result"], "basis": []}],
            "beats": [],
            "foreshadows": [],
            "hook": ref["hook"],
            "new_settings": [],
            "time_anchors": [],
            "entities": ref["entities"],
            "notes": [],
        }


def _judge(request: ProviderRequest) -> dict[str, Any]:
    """A contract-valid fine-outline report: a draft without WEAK scores a point more; E1 and R1 fail on a draft
    that does not hold the reference's hard event; every score cites the reference item it compared."""
    user = next(m.content for m in request.messages if m.role == "user")
    blind = BlindInput.model_validate_json(user.split("\n", 1)[1])
    texts = {c.candidateId: c.text for c in blind.candidates}
    event = next(i for i in blind.fineOutline if i.id == "E1")

    def score(cid: str, _dim: str, _i: int) -> float:
        return 3.0 if WEAK in texts[cid] else 4.0

    report = good_report(blind, score)
    for cell in report["scores"]:  # type: ignore[union-attr]
        cell["evidenceRefs"].append({"type": "fine_outline", "id": "E1"})
        cell["reason"] += "（对照 E1）"
    for v in report["verdicts"]:  # type: ignore[union-attr]
        held = f'text: "{event.text}"' in texts[v["candidateId"]]  # as the draft's hard event, not in its goal
        if not held and v["targetId"].split(":")[-1] in ("E1", "R1"):
            v["verdict"] = "fail"
    return report


def honest_outliner_book(root: Path, *, items: int = ITEMS) -> tuple[Book, RegisteredSet]:
    """The book (chapters and outlines 1–20, a plan, the sample book's cards) and its registered outliner set of
    `items` distinct target chapters from chapter 9 on, each pinning its reference scaffold (see the module doc)."""
    root.mkdir(parents=True)
    shutil.copytree(SAMPLE_BOOK / "cards", root / "cards")
    (root / "plan").mkdir()
    shutil.copytree(SAMPLE_BOOK / "plan" / "settings", root / "plan" / "settings")
    for folder in ("chapters", "outlines", "refs"):
        (root / folder).mkdir()
    sections = ["# 三国演义 大纲\n", "全书主线：汉室衰微，群雄并起。\n", f"# 第1-{LAST}回：群雄并起\n"]
    for n in range(1, LAST + 1):
        (root / "chapters" / f"{n:04d}.md").write_text(f"# {_heading(n)}\n{chapter_body(n)}\n", encoding="utf-8")
        (root / "outlines" / f"{n:04d}.yaml").write_text(
            yaml.safe_dump(reference(n), allow_unicode=True), encoding="utf-8"
        )
        title, first, second = _halves(n)
        sections.append(f"## 第{n}回：{title}\n- {first}\n- {second}\n")
    (root / "plan" / "outline.md").write_text("\n".join(sections), encoding="utf-8")
    public = generate_key(default_key_path())
    (root / "book.toml").write_text(
        '[book]\ntitle = "三国演义"\n\n[chapters]\nmin_chars = 500\nmax_chars = 40000\n\n'
        '[writing]\nfact_cards = "optional"\ncontext_chars = 60000\n\n'
        f'[gate]\nsigner = "{public.text}"\n\n'
        f'[providers.s]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "{KEY_ENV}"\n\n'
        '[roles]\ndefault = "s:loopback-model-1"\n',
        encoding="utf-8",
    )
    book = find_book(root)
    entries = []
    for n in range(FIRST, FIRST + items):
        path = root / "outlines" / f"{n:04d}.yaml"
        entries.append(
            {
                "id": f"ol{n}",
                "chapter": n,
                "reference": {
                    "path": f"outlines/{n:04d}.yaml",
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                },
            }
        )
    path = root / "set.yaml"
    path.write_text(
        yaml.safe_dump({"name": "honest-outliner", "kind": "outliner", "items": entries}, allow_unicode=True),
        encoding="utf-8",
    )
    return book, resolve_set(book, register_set(book, path).sha256)


async def probe(book: Book, models: HonestOutliner) -> None:
    """`muse models check` through the injected provider: every role probed with its exact model id."""
    async with ModelSession.open(book, "models-check", providers={"s": models}) as session:  # type: ignore[dict-item]
        await check_models(book, session)
