"""The writer role's "write" task: the messages for one chapter, a pure function of its WriterContext.

`render_write(ctx)` returns the messages as data plus the hashes a manifest records (prompt templates,
output schema, the messages themselves). Nothing else reaches the writer: no tool, no session, no card.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel

from ...llm import Message, schema_sha256, strict_json_schema
from ...text import sha256_json
from .._prompts import PromptTemplate, load_prompt
from .context import Excerpt, WriterContext
from .schema import ChapterDraft, FinalChapterDraft

TASK = "write"
SCENE_WORDS = {
    "battle": "战斗",
    "character_dialogue": "人物对话",
    "turning_point": "转折",
    "information_reveal": "信息揭示",
    "returning_character": "角色回归",
}
_REQUESTS = (
    ', "evidence_requests": [{"kind": "fact|style", "target": "需要补充的人物或事件", "reason": "为什么需要"}]}'
    "\n（若现有材料不足以写对事实或写出人物的样子，可以在 evidence_requests 中请求补充材料；不需要时给空列表。）"
)
_NONE = "（无）"


def _templates() -> tuple[PromptTemplate, PromptTemplate]:
    return load_prompt("writer", "write_system"), load_prompt("writer", "write")


def _strip_header(text: str) -> str:
    """A template's text without its ``# version`` header line (the header is for people, not models)."""
    return text.partition("\n")[2] if text.startswith("# version") else text


def write_prompt_sha256() -> str:
    """The sha256 of the write task's two prompt templates together (what receipts and manifests record)."""
    system, user = _templates()
    return sha256_json({"system": system.sha256, "user": user.sha256})


def write_schema(allow_requests: bool) -> type[BaseModel]:
    """The output schema: with an `evidence_requests` field while evidence rounds remain, without it after."""
    return ChapterDraft if allow_requests else FinalChapterDraft


@cache
def write_schema_sha256(allow_requests: bool) -> str:
    """The sha256 of the strict JSON schema the write task sends."""
    return schema_sha256(strict_json_schema(write_schema(allow_requests)))


@dataclass(frozen=True)
class RenderedWrite:
    """The write task's messages for one context, and the hashes that pin them."""

    messages: tuple[Message, ...]
    prompt_sha256: str
    schema: type[BaseModel]
    schema_sha256: str
    messages_sha256: str


def _excerpts(items: list[Excerpt]) -> str:
    shown = [f"〔{e.purpose}〕\n{e.text}" for e in items if e.text]
    return "\n\n".join(shown) or _NONE


def _length(ctx: WriterContext) -> str:
    lo, hi = ctx.min_chars, ctx.max_chars
    if lo is not None and hi is not None:
        return f"{lo}–{hi} 字"
    if lo is not None:
        return f"不少于 {lo} 字"
    if hi is not None:
        return f"不超过 {hi} 字"
    return "不限"


def write_fields(ctx: WriterContext, *, allow_requests: bool = True) -> dict[str, object]:
    """Every placeholder of ``write.txt`` for a context (what a RoleTask's `fields` returns)."""
    prior = []
    for p in ctx.prior_chapters:
        head = f"—— {p.title or f'第 {p.chapter} 章'} ——"
        prior.append(head + ("\n（本章前面部分从略）" if p.omitted_before else "") + "\n" + p.text)
    return {
        "chapter": ctx.chapter,
        "title": ctx.title,
        "scene": ctx.scene or "未指定",
        "goal": ctx.goal or _NONE,
        "length": _length(ctx),
        "constraints": "\n".join(f"{c.id}　{c.text}" for c in ctx.constraints) or _NONE,
        "beats": "\n".join(f"{b.id}　{b.text}" for b in ctx.beats) or _NONE,
        "entities": "、".join(ctx.entities) or _NONE,
        "facts": "\n".join(f"- {f.text}〔{f.basis}〕" for f in ctx.facts) or _NONE,
        "prior": "\n\n".join(prior) or _NONE,
        "readback": _excerpts(ctx.readback),
        "style": _excerpts(ctx.style),
        "forbidden": "、".join(ctx.forbidden) or _NONE,
        "preferences": "\n".join(ctx.preferences) or _NONE,
        "requests": _REQUESTS if allow_requests else "}",
    }


def user_text(ctx: WriterContext, *, allow_requests: bool = True) -> str:
    """The user message: the context rendered through ``write.txt``."""
    return _strip_header(_templates()[1].render(**write_fields(ctx, allow_requests=allow_requests)))


def render_write(ctx: WriterContext, *, allow_requests: bool = True) -> RenderedWrite:
    """The write task for `ctx`: system + user messages (a pure function of the context) and their hashes."""
    system = _strip_header(_templates()[0].text)
    messages = (
        Message(role="system", content=system),
        Message(role="user", content=user_text(ctx, allow_requests=allow_requests)),
    )
    schema = write_schema(allow_requests)
    return RenderedWrite(
        messages=messages,
        prompt_sha256=write_prompt_sha256(),
        schema=schema,
        schema_sha256=write_schema_sha256(allow_requests),
        messages_sha256=sha256_json([m.model_dump(mode="json") for m in messages]),
    )


def writer_visible_text(ctx: WriterContext, *, allow_requests: bool = True) -> str:
    """Everything the writer would read for `ctx`, as one string (for leak checks)."""
    return "\n".join(m.content for m in render_write(ctx, allow_requests=allow_requests).messages)
