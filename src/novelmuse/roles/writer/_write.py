"""The writer role's "write" task: the messages for one chapter, a pure function of its WriterContext.

Three role tasks share the templates (write_system.txt, write.txt): `WRITE` may ask for more evidence
(`ChapterDraft` with `evidence_requests`), `WRITE_FINAL` — the last round — may not (`FinalChapterDraft`), and
`WRITE_REPAIR` (+ write_repair.txt) writes the chapter again from the same context, the last draft and the
detector's blocking items, also without a request field. Their contract (`draft_contract`): chapter text, and
every declared fact's quote found exactly once in it.
`render_write(ctx)` returns the rendered call plus the hashes a manifest records (prompt templates, output
schema, the messages themselves). Nothing else reaches the writer: no tool, no session, no card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from ...llm import Message, TaskCall, Violation
from ...text import sha256_json
from .._quotes import quote_violation
from .._task import RoleTask
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


@dataclass(frozen=True)
class WriteRequest:
    """Write chapter `context.chapter` from its WriterContext."""

    context: WriterContext


def write_prompt_sha256() -> str:
    """The sha256 of the write task's two prompt templates together (what receipts and manifests record)."""
    return WRITE.ref.prompt_sha256


def write_schema(allow_requests: bool) -> type[BaseModel]:
    """The output schema: with an `evidence_requests` field while evidence rounds remain, without it after."""
    return ChapterDraft if allow_requests else FinalChapterDraft


def write_schema_sha256(allow_requests: bool) -> str:
    """The sha256 of the strict JSON schema the write task sends."""
    return (WRITE if allow_requests else WRITE_FINAL).ref.schema_sha256


@dataclass(frozen=True)
class RenderedWrite:
    """The write task's call for one context (what a session sends), and the hashes that pin it."""

    call: TaskCall[ChapterDraft] | TaskCall[FinalChapterDraft]
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
        "chapter_label": ctx.label,
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


def _fields(allow_requests: bool) -> Callable[[WriteRequest], Mapping[str, object]]:
    return lambda r: write_fields(r.context, allow_requests=allow_requests)


@dataclass(frozen=True)
class WriteRepairRequest:
    """Write chapter `context.chapter` again: the same context, the last draft and the detector's blocking
    items (返修环: the detector's items only, never a judge's)."""

    context: WriterContext
    draft: str
    items: Sequence[str]


def draft_contract(out: ChapterDraft | FinalChapterDraft) -> list[Violation]:
    """A draft has chapter text, and every declared fact's quote is found exactly once in it (≥ 4 characters)."""
    found: list[Violation] = []
    if not out.text.strip():  # no line that is not blank: no paragraph
        found.append(Violation("CONTRACT_DRAFT_EMPTY", "text holds no chapter text"))
    for i, fact in enumerate(out.declared_facts):
        bad = quote_violation(out.text, fact.quote, f"declared_facts[{i}].quote")
        if bad is not None:
            found.append(bad)
    return found


def _repair_fields(r: WriteRepairRequest) -> Mapping[str, object]:
    return {
        **write_fields(r.context, allow_requests=False),
        "draft": r.draft,
        "items": "\n".join(f"- {item}" for item in r.items) or _NONE,
    }


_SYSTEM, _USER = ("writer/write_system.txt",), ("writer/write.txt",)
WRITE: RoleTask[WriteRequest, ChapterDraft] = RoleTask(
    role="writer",
    name="write",
    schema=ChapterDraft,
    system=_SYSTEM,
    user=_USER,
    fields=_fields(True),
    contracts=lambda r: [draft_contract],
)
WRITE_FINAL: RoleTask[WriteRequest, FinalChapterDraft] = RoleTask(
    role="writer",
    name="write_final",
    schema=FinalChapterDraft,
    system=_SYSTEM,
    user=_USER,
    fields=_fields(False),
    contracts=lambda r: [draft_contract],
)
WRITE_REPAIR: RoleTask[WriteRepairRequest, FinalChapterDraft] = RoleTask(
    role="writer",
    name="write_repair",
    schema=FinalChapterDraft,
    system=_SYSTEM,
    user=(*_USER, "writer/write_repair.txt"),
    fields=_repair_fields,
    contracts=lambda r: [draft_contract],
)


def user_text(ctx: WriterContext, *, allow_requests: bool = True) -> str:
    """The user message: the context rendered through ``write.txt``."""
    return render_write(ctx, allow_requests=allow_requests).messages[-1].content


def render_write(ctx: WriterContext, *, allow_requests: bool = True) -> RenderedWrite:
    """The write task for `ctx` (`WRITE`, or `WRITE_FINAL` in the last round): the call (system + user messages,
    a pure function of the context) and its hashes."""
    call = (WRITE if allow_requests else WRITE_FINAL).render(WriteRequest(ctx))
    return RenderedWrite(
        call=call,
        messages=call.messages,
        prompt_sha256=call.ref.prompt_sha256,
        schema=call.schema,
        schema_sha256=call.ref.schema_sha256,
        messages_sha256=sha256_json([m.model_dump(mode="json") for m in call.messages]),
    )


def writer_visible_text(ctx: WriterContext, *, allow_requests: bool = True) -> str:
    """Everything the writer would read for `ctx`, as one string (for leak checks)."""
    return "\n".join(m.content for m in render_write(ctx, allow_requests=allow_requests).messages)
