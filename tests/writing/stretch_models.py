"""A book for stretch runs and the models that write it, behind a real loopback OpenAI-compatible server.

The book: chapters 1–10 of 三国演义, the sample's cards, outlines 11–13 made from the novel's own 回目 (each with one
hard event) and confirmed. The models answer every role from what they are sent: the writer answers chapter N's own
text (N read from its prompt); the detector checks the hard constraints it is sent against the candidate (failing
E1 on a draft marked `BROKEN`); the judges score the blind candidate; the extractor, on a chapter that has its file
(an accepted one), plants a foreshadow (`F-stretch-N`) and moves 刘备 to `第N回之地` (quoting a sentence of the
chapter) — so a later chapter's context can be seen to hold what an earlier accepted chapter established.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import Book, find_book
from novelmuse.judging import BlindInput
from novelmuse.writing import confirm_outline

from ..conftest import SAMPLE_BOOK
from ..judging._helpers import good_report
from ..llm.loopback import Reply
from ..replay.honest import _detector, _heading, _unique_sentence, chapter_body

KEY_ENV = "MUSE_STRETCH_TEST_KEY"
BROKEN = "（此稿漏写了本回的头一件大事。）"
CARD_NAMES = ("刘备", "关羽", "张飞", "曹操", "吕布", "董卓", "孙坚", "貂蝉")


def stretch_book(root: Path, base_url: str, *, last: int = 13, extra_toml: str = "") -> Book:
    """Chapters 1–10, outlines 11–`last` confirmed, every role served by the model at `base_url`."""
    root.mkdir(parents=True)
    shutil.copytree(SAMPLE_BOOK / "cards", root / "cards")
    (root / "chapters").mkdir()
    (root / "outlines").mkdir()
    for n in range(1, 11):
        (root / "chapters" / f"{n:04d}.md").write_text(f"# {_heading(n)}\n{chapter_body(n)}\n", encoding="utf-8")
    (root / "book.toml").write_text(
        '[book]\ntitle = "三国演义"\n\n[chapters]\nmin_chars = 500\nmax_chars = 40000\n\n'
        '[writing]\nfact_cards = "optional"\nrepair_rounds = 0\nevidence_rounds = 0\n\n'
        f'[providers.s]\nkind = "openai"\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\ntransport = "http"\n\n'
        '[roles]\ndefault = "s:loopback-model-1"\n' + extra_toml,
        encoding="utf-8",
    )
    for n in range(11, last + 1):
        title = _heading(n).split("　", 1)[1] if "　" in _heading(n) else _heading(n)
        halves = title.split("　")
        outline = {
            "version": 2,
            "chapter": n,
            "title": title,
            "scene_type": "battle",
            "goal": title,
            "hard_events": [{"id": "E1", "text": halves[0], "result": halves[-1]}],
            "hook": "且听下文分解",
            "entities": ["刘备", *(name for name in CARD_NAMES[1:] if name in chapter_body(n))][:4],
        }
        (root / "outlines" / f"{n:04d}.yaml").write_text(yaml.safe_dump(outline, allow_unicode=True), encoding="utf-8")
    book = find_book(root)
    for n in range(11, last + 1):
        confirm_outline(book, n)
    return book


@dataclass
class _Message:
    role: str
    content: str


@dataclass
class _Request:
    messages: list[_Message]


@dataclass
class StretchModels:
    """The loopback server's responder (see the module docstring). `break_once`: chapters whose first draft misses
    its hard event. `hold`: (schema, chapter) → an event set when that request arrives, which then waits on
    `release` (a test kills the process meanwhile); the schema `facts` is an accepted chapter's extraction."""

    break_once: set[int] = field(default_factory=set)
    hold: dict[tuple[str, int], threading.Event] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)
    seen: list[tuple[str, int]] = field(default_factory=list)
    prompts: list[tuple[str, int, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    fail_once: set[tuple[str, int]] = field(default_factory=set)  # answered once with 401 (MODEL_AUTH: failed closed)
    root: Path | None = None  # the book's folder: an extraction of a chapter that has its file is the fact card

    def __call__(self, body: Any) -> Reply:
        schema = body.get("response_format", {}).get("json_schema", {}).get("name", "")
        messages = [_Message(m["role"], m["content"]) for m in body["messages"]]
        text = "\n".join(m.content for m in messages)
        chapter = _chapter_of(schema, text)
        if (
            schema == "FactCardOutput"
            and self.root is not None
            and (self.root / "chapters" / f"{chapter:04d}.md").is_file()
        ):
            schema = "facts"  # the fact card of an accepted chapter (not a candidate's fact check)
        with self.lock:
            self.seen.append((schema, chapter))
            self.prompts.append((schema, chapter, text))
        with self.lock:
            failing = (schema, chapter) in self.fail_once
            self.fail_once.discard((schema, chapter))
        if failing:
            return Reply(status=401)
        if (schema, chapter) in self.hold:  # a test kills the process while this request waits
            self.hold[(schema, chapter)].set()
            self.release.wait(30)
        return Reply(content=self._answer(schema, chapter, text, messages))

    def count(self, schema: str, chapter: int) -> int:
        return self.seen.count((schema, chapter))

    def writer_prompts(self, chapter: int) -> list[str]:
        """What the writer was sent for chapter `chapter`, in order."""
        return [t for s, n, t in self.prompts if n == chapter and s in ("ChapterDraft", "FinalChapterDraft")]

    def _answer(self, schema: str, chapter: int, text: str, messages: list[_Message]) -> Any:
        if schema == "models_check":
            from novelmuse.roles.common import expected_echo

            role = "judge" if "judge" in text else "writer"
            return {"ok": True, "echo": expected_echo(role)}
        if schema in ("ChapterDraft", "FinalChapterDraft"):
            body = chapter_body(chapter)
            with self.lock:
                if chapter in self.break_once:
                    self.break_once.discard(chapter)
                    body += "\n" + BROKEN
            out: dict[str, Any] = {"text": body, "declared_facts": []}
            if schema == "ChapterDraft":
                out["evidence_requests"] = []
            return out
        if schema == "DetectorOutput":
            return _detector(text)
        if schema == "FactCardOutput":  # a candidate's fact check
            return {"events": [], "foreshadows": [], "relations": [], "states": []}
        if schema == "facts":
            quote = _unique_sentence(chapter_body(chapter))  # an accepted chapter's fact card
            return {
                "events": [],
                "foreshadows": [
                    {
                        "op": "plant",
                        "id": f"F-stretch-{chapter}",
                        "description": f"第{chapter}回埋下的伏笔",
                        "payoff_chapter": None,
                        "quote": quote,
                    }
                ],
                "relations": [],
                "states": [{"entity": "刘备", "attribute": "location", "value": f"第{chapter}回之地", "quote": quote}],
            }
        if schema == "judge_report":
            user = next(m.content for m in messages if m.role == "user")
            blind = BlindInput.model_validate_json(user.split("\n", 1)[1])
            return good_report(blind, lambda _c, _d, _i: 4.5)
        raise AssertionError(f"unexpected schema {schema!r}")


def _chapter_of(schema: str, text: str) -> int:
    """The chapter a request is about: the writer's prompt names it (【第N回); the others hold its text — the newest
    chapter whose opening they hold (evidence and earlier chapters come from before it)."""
    if schema in ("ChapterDraft", "FinalChapterDraft"):
        found = re.search(r"【第(\d+)回", text)
        return int(found.group(1)) if found else 0
    held = [n for n in range(11, 31) if chapter_body(n).split("\n", 1)[0][:40] in text]
    return max(held, default=0)


def as_json(stdout: str) -> Any:
    return json.loads(stdout)
