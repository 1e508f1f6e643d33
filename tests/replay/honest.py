"""An honest replay experiment for the gate chain's end-to-end tests: twelve distinct items (chapters 3–14 of
三国演义, each with its own confirmed outline made from its 回目), the models answering through an injected
provider whose configured kind is a real one (openai, probed by `muse models check`), and a writer whose drafts
depend on its context the way a real one's do:

- a draft written from a context holding the passage only arm C's card-located readback finds (the item's
  `marker`) is the chapter itself; without it (arm A's generic retrieval) it is a weaker draft (`WEAK` appended),
  and for the first `broken` items one that misses its hard event (`BROKEN`): the detector and the blind panel both
  fail E1 and R1 there, so fails exist on both sides and agree;
- the judges score a draft without `WEAK` one point higher on every general dimension.

`identical=True` makes the writer ignore its context (both arms write the same draft): Gate B must then find no
difference, and Gate A nothing that fails.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import Book, find_book
from novelmuse.judging import BlindInput
from novelmuse.llm import ModelSession, ProviderRequest, ProviderResponse
from novelmuse.replay import RegisteredSet, default_key_path, generate_key, register_set, resolve_set
from novelmuse.roles.common import check_models, expected_echo
from novelmuse.text import split_chapters
from novelmuse.writing import build_context, confirm_outline, read_outline

from ..conftest import SAMPLE_BOOK, SANGUO
from ..judging._helpers import good_report
from ..writing.write_helpers import facts
from .replay_helpers import respond

WEAK = "（此稿草草收笔。）"
BROKEN = "（此稿漏写了本回的头一件大事。）"
FIRST, ITEMS = 9, 12
KEY_ENV = "MUSE_HONEST_TEST_KEY"
#: The sample book's characters (its cards): an item's outline names those its chapter mentions.
CARD_NAMES = ("刘备", "关羽", "张飞", "曹操", "吕布", "董卓", "孙坚", "貂蝉")


@dataclass
class HonestModels:
    """The injected provider: every role answered from what it is sent (see the module docstring)."""

    markers: dict[int, str]
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
        if request.role == "writer":
            return respond(
                request,
                {"text": self._draft(text), "declared_facts": [], "evidence_requests": []}
                if "evidence_requests" in json.dumps(request.json_schema)
                else {"text": self._draft(text), "declared_facts": []},
            )
        if request.role == "detector":
            return respond(request, _detector(text))
        if request.role == "extractor":
            return respond(request, facts()["output"])
        if request.role == "judge":
            return respond(request, _judge(request))
        raise AssertionError(f"unexpected role {request.role}")

    async def aclose(self) -> None:
        return None

    def _draft(self, prompt: str) -> str:
        found = re.search(r"【第(\d+)回", prompt)
        assert found, "the writer's prompt names its chapter"
        n = int(found.group(1))
        body = chapter_body(n)
        if self.identical or self.markers[n] in prompt:
            return body
        return body + "\n" + WEAK + (BROKEN if n in self.broken else "")


def _detector(prompt: str) -> dict[str, Any]:
    """The detector on the candidate it is sent: E1 and R1 fail on a draft that misses its hard event, the rest
    pass, each pass quoting a sentence found exactly once in the candidate."""
    sha = re.search(r"candidate_sha256：([0-9a-f]{64})", prompt)
    block = prompt.split("【硬约束（逐条核查，编号原样写回）】\n", 1)[1].split("\n\n【候选正文】", 1)[0]
    candidate = prompt.split("【候选正文】\n", 1)[1].rsplit("\n\n输出 JSON", 1)[0]
    assert sha
    quote = _unique_sentence(candidate)
    broken = BROKEN in candidate
    verdicts = [
        {"id": cid, "verdict": "fail", "quote": "", "reason": "缺"}
        if broken and cid in ("E1", "R1")
        else {"id": cid, "verdict": "pass", "quote": quote, "reason": "核对"}
        for cid in (line.split("　", 1)[0] for line in block.splitlines() if line.strip())
    ]
    return {"candidate_sha256": sha.group(1), "verdicts": verdicts, "coverage": 1.0, "high_severity": 0}


def _unique_sentence(text: str) -> str:
    for sentence in re.split(r"[。！？\n]", text):
        if 8 <= len(sentence) <= 40 and text.count(sentence) == 1:
            return sentence
    raise AssertionError("no sentence of the candidate occurs exactly once")


def _judge(request: ProviderRequest) -> dict[str, Any]:
    """A contract-valid report on the blind input: a draft without WEAK scores a point more on every dimension;
    E1 and R1 fail on a draft that misses its hard event."""
    user = next(m.content for m in request.messages if m.role == "user")
    blind = BlindInput.model_validate_json(user.split("\n", 1)[1])
    texts = {c.candidateId: c.text for c in blind.candidates}

    def score(cid: str, dim: str, _i: int) -> float:
        return 6.0 if WEAK in texts[cid] else 7.0

    report = good_report(blind, score)
    for v in report["verdicts"]:  # type: ignore[union-attr]
        if BROKEN in texts[v["candidateId"]] and v["targetId"].split(":")[-1] in ("E1", "R1"):
            v["verdict"] = "fail"
    return report


@cache
def _parts() -> dict[int, tuple[str, str]]:
    source = SANGUO.read_text(encoding="utf-8")
    split = split_chapters(source)
    return {
        p.number: (source[p.heading_line.start : p.heading_line.end].strip(), p.body.strip()) for p in split.chapters
    }


def chapter_body(n: int) -> str:
    """Chapter `n` of 三国演义, its body stripped."""
    return _parts()[n][1]


def _heading(n: int) -> str:
    return _parts()[n][0]


def honest_book(root: Path, *, items: int = ITEMS) -> tuple[Book, RegisteredSet, dict[int, str]]:
    """The book, its registered set of `items` distinct items, and each item's arm-C marker (see the module doc)."""
    root.mkdir(parents=True)
    shutil.copytree(SAMPLE_BOOK / "cards", root / "cards")
    (root / "chapters").mkdir()
    (root / "outlines").mkdir()
    last = FIRST + items - 1
    for n in range(1, last + 1):
        (root / "chapters" / f"{n:04d}.md").write_text(f"# {_heading(n)}\n{chapter_body(n)}\n", encoding="utf-8")
    public = generate_key(default_key_path())
    (root / "book.toml").write_text(
        '[book]\ntitle = "三国演义"\n\n[chapters]\nmin_chars = 500\nmax_chars = 40000\n\n'
        '[writing]\nfact_cards = "optional"\nrepair_rounds = 0\n\n'
        f'[gate]\nsigner = "{public.text}"\n\n'
        f'[providers.s]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "{KEY_ENV}"\n\n'
        '[roles]\ndefault = "s:loopback-model-1"\n',
        encoding="utf-8",
    )
    entries = []
    for k, n in enumerate(range(FIRST, last + 1)):
        title = _heading(n).split("　", 1)[1] if "　" in _heading(n) else _heading(n)
        halves = title.split("　")
        scene = ("battle", "character_dialogue")[k % 2]
        outline = {
            "version": 2,
            "chapter": n,
            "title": title,
            "scene_type": scene,
            "goal": title,
            "hard_events": [{"id": "E1", "text": halves[0], "result": halves[-1]}],
            "hook": "且听下文分解",
            "entities": [name for name in CARD_NAMES if name in chapter_body(n)][:4],
        }
        (root / "outlines" / f"{n:04d}.yaml").write_text(yaml.safe_dump(outline, allow_unicode=True), encoding="utf-8")
    book = find_book(root)
    markers: dict[int, str] = {}
    for n in range(FIRST, last + 1):
        confirm_outline(book, n)
        outline = read_outline(book, n)
        entries.append(
            {
                "id": f"ch{n}",
                "chapter": n,
                "outline_sha256": outline.sha256,
                "scene_type": outline.scene_type,
                "assertions": [{"id": "a1", "text": "情节依细纲展开"}],
            }
        )
        markers[n] = _marker(book, n)
    path = root / "set.yaml"
    path.write_text(yaml.safe_dump({"name": "honest", "items": entries}, allow_unicode=True), encoding="utf-8")
    return book, resolve_set(book, register_set(book, path).sha256), markers


def _marker(book: Book, n: int) -> str:
    """A passage of arm C's context (its card-located readback) that arm A's context does not hold."""
    a = "\n".join(m.content for m in build_context(book, n, arm="A").rendered.messages)
    c = "\n".join(m.content for m in build_context(book, n, arm="C").rendered.messages)
    for line in c.splitlines():
        for start in range(0, max(1, len(line) - 16), 8):
            piece = line[start : start + 16]
            if len(piece) == 16 and piece not in a:
                return piece
    raise AssertionError(f"arms A and C give chapter {n} the same context")


async def probe(book: Book, models: HonestModels) -> None:
    """`muse models check` through the injected provider: every role probed with its exact model id."""
    async with ModelSession.open(book, "models-check", providers={"s": models}) as session:  # type: ignore[dict-item]
        await check_models(book, session)
