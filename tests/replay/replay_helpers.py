"""Replay runs for the tests: the sample book (三国演义 1–10, outline 11 confirmed) registered as a one-item set,
and a fake provider that answers every role from what it is sent — the writer with the real chapter 11, the
detector and the extractor as in the writer's tests, each judge with a contract-valid report on exactly the
blind input it sees (its random candidate ids and targets). A fault is injected into one call by role and
call number."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import Book, find_book
from novelmuse.judging import BlindInput
from novelmuse.llm import ProviderError, ProviderRequest, ProviderResponse, Usage
from novelmuse.replay import RegisteredSet, RunDoc, register_set, resolve_set, run_replay
from novelmuse.writing import confirm_outline, read_outline

from ..judging._helpers import good_report
from ..writing.write_helpers import IDS_11, detector, draft, facts, sample_book

Fault = Callable[[ProviderRequest], ProviderResponse | ProviderError | None]


def judge_output(request: ProviderRequest, verdict: str = "pass") -> dict[str, Any]:
    """A judge report on the blind input in `request` (every target `verdict`)."""
    user = next(m.content for m in request.messages if m.role == "user")
    blind = BlindInput.model_validate_json(user.split("\n", 1)[1])
    report = good_report(blind)
    for v in report["verdicts"]:  # type: ignore[union-attr]
        v["verdict"] = verdict
    if blind.policy.profile == "fine_outline_replay" and blind.fineOutline:  # a structured evidence summary
        ref = blind.fineOutline[0].id
        for cell in report["scores"]:  # type: ignore[union-attr]
            cell["evidenceRefs"].append({"type": "fine_outline", "id": ref})
            cell["reason"] += f"（对照 {ref}）"
    return report


def respond(request: ProviderRequest, output: Any, **kw: Any) -> ProviderResponse:
    text = json.dumps(output, ensure_ascii=False)
    fields: dict[str, Any] = {
        "text": text,
        "raw": json.dumps({"text": text}, ensure_ascii=False).encode(),
        "resolved_model": request.model,
        "finish": "stop",
        "usage": Usage(100, 20),
    }
    fields.update(kw)
    return ProviderResponse(**fields)


def answer(request: ProviderRequest) -> ProviderResponse:
    """The well-behaved answer of `request.role`."""
    role = request.role
    if role == "writer":
        return respond(request, draft(requests=[])["output"])
    if role == "detector":  # on whatever candidate it is sent (its sha256 echoed)
        sha = re.search(r"candidate_sha256：([0-9a-f]{64})", "\n".join(m.content for m in request.messages))
        return respond(request, detector(sha=sha.group(1) if sha else None)["output"])
    if role == "extractor":
        return respond(request, facts()["output"])
    if role == "judge":
        return respond(request, judge_output(request))
    raise AssertionError(f"unexpected role {role}")


@dataclass
class RoleFake:
    """A provider answering by role; `faults[(role, k)]` replaces the k-th call (1-based) of that role."""

    name: str = "s"
    kind: str = "scripted"
    max_concurrency: int = 16
    delay_s: float = 0.0
    faults: dict[tuple[str, int], Fault] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (role, model) of every request
    counts: dict[str, int] = field(default_factory=dict)

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        self.calls.append((request.role, request.model))
        n = self.counts[request.role] = self.counts.get(request.role, 0) + 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        fault = self.faults.get((request.role, n))
        out = fault(request) if fault is not None else None
        if isinstance(out, ProviderError):
            raise out
        return out if out is not None else answer(request)

    async def aclose(self) -> None:
        return None


def replay_book(root: Path, *, extra_toml: str = "", **kw: Any) -> Book:
    """The sample book with outline 11 confirmed, the scripted provider `s` for every role (or as `roles` and
    `providers` say: see `sample_book`), and `extra_toml`."""
    book = sample_book(root, {"default": []}, **kw)
    if extra_toml:
        with (root / "book.toml").open("a", encoding="utf-8") as fh:
            fh.write(extra_toml)
        book = find_book(root)
    return book


def set_file(book: Book, *, assertions: int = 2, name: str = "one") -> Path:
    """A one-item writer set for chapter 11 (its confirmed outline) with `assertions` oracle assertions."""
    outline = read_outline(book, 11)
    texts = ["关羽斩管亥", "太史慈求救于刘备"][:assertions]
    item = {
        "id": "ch11",
        "chapter": 11,
        "outline_sha256": outline.sha256,
        "scene_type": outline.scene_type,
        "assertions": [{"id": f"a{k}", "text": t} for k, t in enumerate(texts, 1)],
    }
    path = book.root / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "items": [item]}, allow_unicode=True), encoding="utf-8")
    return path


def registered(book: Book, **kw: Any) -> RegisteredSet:
    doc = register_set(book, set_file(book, **kw))
    return resolve_set(book, doc.sha256)


def run(book: Book, doc: RegisteredSet, fake: RoleFake, arms: tuple[str, ...] = ("A", "B", "C"), **kw: Any) -> RunDoc:
    return asyncio.run(run_replay(book, doc, list(arms), providers={"s": fake}, **kw))  # type: ignore[arg-type]


def yaml_dump(data: Any) -> str:
    return yaml.safe_dump(data, allow_unicode=True)


def with_signer(book: Book, user_config: Path) -> Book:
    """Make the gate signing key in the user config's directory (MUSE_CONFIG must name `user_config`) and name its
    public key in book.toml [gate] signer."""
    from novelmuse.replay import default_key_path, generate_key

    user_config.parent.mkdir(parents=True, exist_ok=True)
    public = generate_key(default_key_path())
    with (book.root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[gate]\nsigner = "{public.text}"\n')
    return find_book(book.root)


_PLANT = re.compile(r"F-plant:F-xuzhou\d*")


class ManyOutlinesFake(RoleFake):
    """The fake for `many_items` books: the detector's foreshadow id is taken from the request (each outline
    plants its own)."""

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        if request.role != "detector":
            return await super().send(request)
        self.calls.append((request.role, request.model))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        text = "\n".join(m.content for m in request.messages)
        found = _PLANT.search(text)
        ids = [found.group(0) if i == "F-plant:F-xuzhou" and found else i for i in IDS_11]
        return respond(request, detector(ids=ids)["output"])


def many_items(root: Path, items: int, **kw: Any) -> tuple[Book, RegisteredSet]:
    """The sample book with `items` confirmed outlines — chapter 11's copied to chapters 11, 12, … (each planting
    its own foreshadow), every one a frozen replay from chapters 1–10 — registered as one writer set."""
    book = replay_book(root, **kw)
    source = (root / "outlines" / "0011.yaml").read_text(encoding="utf-8")
    for n in range(12, 11 + items):
        text = source.replace("chapter: 11", f"chapter: {n}").replace("F-xuzhou", f"F-xuzhou{n}")
        (root / "outlines" / f"{n:04d}.yaml").write_text(text.replace("payoff_chapter: 12", f"payoff_chapter: {n + 1}"))
    book = find_book(root)
    entries = []
    for n in range(11, 11 + items):
        if n > 11:
            confirm_outline(book, n)
        outline = read_outline(book, n)
        entries.append(
            {
                "id": f"ch{n}",
                "chapter": n,
                "outline_sha256": outline.sha256,
                "scene_type": outline.scene_type,
                "assertions": [{"id": "a1", "text": "关羽斩管亥"}],
            }
        )
    path = root / "many.yaml"
    path.write_text(yaml_dump({"name": "many", "items": entries}), encoding="utf-8")
    return book, resolve_set(book, register_set(book, path).sha256)
