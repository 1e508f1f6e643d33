"""The fine-outline agent (细纲智能体, seed 003): draft chapter N's fine outline for the author to review.

What the model reads (`prepare_draft`, deterministic, no model call), all as of N−1 — nothing of chapter N
or later, not even an existing outline of N:

- the author's plan (`book.load_plan`): the outline's general sections, the sections covering N and the next
  part of the story, each labelled P1, P2, …; every settings file, labelled after them;
- the previous chapter: its title, its outline's goal and hook, its last paragraphs (label 上章);
- the goals and hooks of the outlines of the chapters just before;
- the card states as of N−1 (each value with its chapter; values whose source lies in N or later are
  withheld) of the cards the chosen plan sections, the recent outlines and the previous chapter name; every
  card's name and aliases; the open foreshadows as of N−1, overdue first; the cap on new plants.

The story memory must be current, as for the writer's context (stale fact cards: CONTEXT_MEMORY_STALE), and
the whole request must fit `[writing] context_chars` (CONTEXT_OVER_BUDGET names every block; nothing is cut).

The answer must pass the outliner's contract, which runs the book's own lint on the draft (`lint_draft`):
an error goes back to the model as a correction, and after the call's bound the call fails closed — never a
draft with an unknown entity, a fourth plant or a resolve of a foreshadow that is not open. The draft is
kept as a version-2 outline with the provenance in its header, as a shadow draft on the author's desk
(``.muse/drafts/outlines/NNNN-<sha12>.yaml`` and an ``outline_drafts`` row): ``outlines/`` is written only when
the author accepts it (`muse drafts accept`: lint clean, then confirmed), revises it or rejects it. A real run
is made by the fine-outline stage (replay) behind its entry guard, whose `Admission` the draft's header records:
nothing here calls the outliner, so no path skips the guard.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..book import (
    Book,
    Chapter,
    FineOutline,
    Plan,
    PlanPart,
    load_outlines,
    load_plan,
    outline_paths,
    parse_outline,
    read_chapter_file,
)
from ..errors import FailedClosed, InputError
from ..llm import StructuredResult, TaskCall
from ..memory import Card, CardSet, MemoryState, MentionMatcher, load_cards, mention_names, previous_ending, replay
from ..roles.outliner import DRAFT, DraftRequest, OutlineDraft
from ..text import chapter_label, count_chars, heading_unit, sha256_hex, sha256_json
from ._build import _check_fact_cards
from ._desk import short_id, store_outline_draft
from ._drafts import drafts_dir
from ._outlines import ADMISSION_LINE, LintProblem, lint_draft
from ._plan import card_facts

DRAFT_SCHEMA_VERSION = 1
#: The fine-outline gates' arms: A (baseline: plan, settings, previous chapter, names) and C (A + the story memory).
DraftArm = Literal["A", "C"]
RECENT_OUTLINES = 3
_ROLE_WORDS = {"general": "总纲", "current": "本章", "next": "之后"}
_TYPE_WORDS = {"character": "人物", "place": "地点", "item": "物品", "faction": "势力", "concept": "概念"}


@dataclass(frozen=True)
class Admission:
    """What admitted a real run: the entry guard's receipts (gate → journal seq) for a writer configuration, and the
    probed outliner model that makes the call (``kind:model``)."""

    writer_config_sha256: str
    receipts: dict[str, int]
    outliner: str = ""

    def record(self) -> dict[str, Any]:
        """As the draft document records it."""
        return {"writer_config_sha256": self.writer_config_sha256, "receipts": self.receipts, "outliner": self.outliner}


class Material(BaseModel):
    """One labelled piece of the author's plan (or the previous chapter) the model read."""

    label: str
    kind: Literal["plan", "setting", "previous"]
    role: str  # general / current / next for plan sections
    where: str  # plan/outline.md:12-30, plan/settings/world.md, chapters/0010.md
    sha256: str  # of the file it came from


class DraftInputs(BaseModel):
    """Everything the draft was made from (pointers and hashes, not the text)."""

    arm: DraftArm = "C"  # C: the whole material; A: the gates' baseline (see `prepare_draft`)
    as_of: int
    materials: list[Material]
    cards: list[str]  # the cards whose state was shown, by name
    foreshadows: list[str]  # the open foreshadows shown, overdue first
    overdue: list[str]
    recent_outlines: list[int]
    facts_missing: list[int]  # chapters before N without a fact card (allowed by [writing] fact_cards)
    chars: dict[str, int]  # characters per block, and "total"
    budget: int


class OutlineDraftDoc(BaseModel):
    """`muse outline draft --json`'s `draft`: the draft, where it went, what it was made from."""

    schema_version: int = DRAFT_SCHEMA_VERSION
    chapter: int
    status: Literal["drafted", "dry_run", "skipped"]
    reason: str = ""
    inputs: DraftInputs
    messages_sha256: str
    messages: list[dict[str, str]] | None = None  # the rendered prompt (dry run only)
    draft_id: str | None = None  # the shadow draft on the author's desk (`muse drafts accept|revise|reject`)
    short: str | None = None
    written_to: str | None = None  # .muse/drafts/outlines/NNNN-<sha12>.yaml: never outlines/ until accepted
    author_outline: str | None = None  # the author's outline of N, which an accept would replace
    file_sha256: str | None = None
    confirmed: bool = False  # never: the author confirms
    outline: dict[str, Any] | None = None
    basis: dict[str, list[str]] = {}
    notes: list[str] = []
    warnings: list[LintProblem] = []
    admission: dict[str, Any] | None = None
    run_id: str | None = None
    call_id: str | None = None
    receipts: list[str] = []
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class PreparedDraft:
    """A chapter's outliner request and the inputs behind it (no model called yet)."""

    chapter: int
    request: DraftRequest
    inputs: DraftInputs
    cards: CardSet
    outlines: dict[int, FineOutline]
    shas: dict[int, str]
    unit: str | None  # how the chapters before N name a chapter (章 / 回 / 节), for the draft file's header


def _plan_lines(parts: list[PlanPart], plan: Plan) -> tuple[list[str], list[str], list[Material]]:
    """The plan's sections and settings as the model reads them, each labelled P1, P2, …"""
    sha_of = {f.path: f.sha256 for f in plan.files}
    plan_lines: list[str] = []
    setting_lines: list[str] = []
    materials: list[Material] = []
    for part in parts:
        label = f"P{len(materials) + 1}"
        plan_lines.append(f"{label}〔{_ROLE_WORDS[part.role]}〕\n{part.section.text}")
        where, sha = part.section.where, sha_of[part.section.file]
        materials.append(Material(label=label, kind="plan", role=part.role, where=where, sha256=sha))
    for f in plan.settings:
        label = f"P{len(materials) + 1}"
        setting_lines.append(f"{label}〔设定：{Path(f.path).name}〕\n{f.text.strip()}")
        materials.append(Material(label=label, kind="setting", role="setting", where=f.path, sha256=f.sha256))
    return plan_lines, setting_lines, materials


def _selected_cards(cards: CardSet, texts: list[str], names: list[str]) -> list[str]:
    """Card ids in order of first naming: the entity names given, then the cards the texts mention."""
    ids: list[str] = []
    for name in names:
        card = cards.resolve(name)
        if card is not None and card.id not in ids:
            ids.append(card.id)
    matcher = MentionMatcher(mention_names(cards))
    for text in texts:
        for m in matcher.find(text):
            if m.card_id not in ids:
                ids.append(m.card_id)
    return ids


def _card_lines(ids: list[str], cards: CardSet, state: MemoryState, chapter: int, unit: str | None) -> list[str]:
    lines = []
    for cid in ids:
        card = cards.cards[cid]
        facts, _withheld = card_facts(card, state, cards, chapter, unit)  # as of N−1, nothing sourced in N or later
        known = "；".join(f.text for f in facts) or "（无记录）"
        about = f"：{card.description}" if card.description else ""
        lines.append(f"{card.name}〔{_TYPE_WORDS.get(card.type, card.type)}〕{about}\n  {known}")
    return lines


def _foreshadow_lines(state: MemoryState, as_of: int, unit: str | None) -> tuple[list[str], list[str], list[str]]:
    active = sorted(state.active_foreshadows(as_of).items, key=lambda f: (not f.overdue, f.planted_chapter, f.id))
    lines = []
    for f in active:
        parts = [f"{chapter_label(unit, f.planted_chapter)}埋设"]
        if f.last_advanced_chapter is not None:
            parts.append(f"最近推进：{chapter_label(unit, f.last_advanced_chapter)}")
        if f.payoff_chapter is not None:
            parts.append(f"应于{chapter_label(unit, f.payoff_chapter)}前回收")
        if f.overdue:
            parts.append("已逾期")
        lines.append(f"{f.id}：{f.description}（{'，'.join(parts)}）")
    return lines, [f.id for f in active], [f.id for f in active if f.overdue]


def _previous(
    book: Book, prev: Chapter, outlines: dict[int, FineOutline], chapter: int, unit: str | None
) -> tuple[str, Material]:
    """The previous chapter as the model reads it (title, its outline's goal and hook, its ending; label 上章)."""
    lines = [f"{chapter_label(unit, prev.number)}《{prev.title}》"]
    if prev.number < chapter - 1:
        first, last = chapter_label(unit, prev.number + 1), chapter_label(unit, chapter - 1)
        gap = first if prev.number + 1 == chapter - 1 else f"{first}至{last}"
        lines.append(f"（{gap}尚未成稿：以【近几章细纲】为准）")
    if prev.number in outlines:
        o = outlines[prev.number]
        lines.append(f"细纲目标：{o.goal}；章末钩子：{o.hook}")
    lines.append("结尾：\n" + previous_ending(book, chapter))
    material = Material(
        label="上章", kind="previous", role="previous", where=_relative(book, prev.path), sha256=prev.sha256
    )
    return "\n".join(lines), material


def _by_id(card: Card) -> str:
    return card.id


def prepare_draft(book: Book, chapter: int, *, arm: DraftArm = "C") -> PreparedDraft:
    """The outliner's request for `chapter` from the plan and the memory as of `chapter − 1` (see the module
    doc); PLAN_* / CONTEXT_* errors (exit 2) when the plan or the memory cannot give it. `arm` A is the
    fine-outline gates' baseline: the plan, the settings, the previous chapter and the cards' names only — no
    recent outlines, card states or open foreshadows (the candidate, C, is what the stage drafts with)."""
    cfg = book.config.writing
    as_of = chapter - 1
    cards = load_cards(book)
    chapters = {n: read_chapter_file(n, p) for n, p in book.chapter_paths().items() if n < chapter}
    shas = {n: ch.sha256 for n, ch in chapters.items()}
    outlines = load_outlines(book, before=chapter)
    state = replay(book, cards=cards, upto=as_of, outlines=outlines, chapter_shas=shas)
    missing = _check_fact_cards(state, chapter, cfg.fact_cards)
    plan = load_plan(book)
    parts = plan.for_chapter(chapter)
    plan_lines, setting_lines, materials = _plan_lines(parts, plan)

    memory = arm == "C"
    recent_numbers = sorted(outlines)[-RECENT_OUTLINES:] if memory else []
    unit = heading_unit(ch.heading for n, ch in chapters.items() if n > 0)  # the chapters before N name chapters
    recent = [
        f"{chapter_label(unit, n)}《{outlines[n].title}》目标：{outlines[n].goal}；钩子：{outlines[n].hook}"
        for n in recent_numbers
    ]
    previous = ""
    if chapters:
        previous, material = _previous(book, chapters[max(chapters)], outlines, chapter, unit)
        materials.append(material)

    named = [e for n in recent_numbers for e in outlines[n].entities]
    ids = _selected_cards(cards, [p.section.text for p in parts] + [previous], named) if memory else []
    card_lines = _card_lines(ids, cards, state, chapter, unit)
    names = [f"{c.name}：{'、'.join(c.aliases) or '（无别名）'}" for c in sorted(cards.cards.values(), key=_by_id)]
    foreshadow_lines, shown, overdue = _foreshadow_lines(state, as_of, unit) if memory else ([], [], [])
    labels = {m.label for m in materials} | set(shown)

    blocks = {
        "plan": plan_lines,
        "settings": setting_lines,
        "previous": [previous],
        "recent": recent,
        "cards": card_lines,
        "names": names,
        "foreshadows": foreshadow_lines,
    }
    chars = {k: sum(count_chars(x) for x in v) for k, v in blocks.items()}
    chars["total"] = sum(chars.values())
    if chars["total"] > cfg.context_chars:
        sizes = ", ".join(f"{k} {v}" for k, v in chars.items() if k != "total")
        raise InputError(
            "CONTEXT_OVER_BUDGET",
            f"the fine-outline agent's material for chapter {chapter} is {chars['total']} characters ({sizes}) > "
            f"[writing] context_chars {cfg.context_chars}; nothing was cut",
            f"chapter {chapter}",
            "shorten the plan's sections or settings for this chapter, or raise [writing] context_chars",
        )

    def check(draft: FineOutline) -> list[tuple[str, str]]:
        found = lint_draft(book, draft, cards=cards, outlines=outlines, chapter_shas=shas)
        return [(p.code, f"{p.where}: {p.message}") for p in found if p.severity == "error"]

    request = DraftRequest(
        chapter=chapter,
        as_of=as_of,
        plan=plan_lines,
        settings=setting_lines,
        previous=previous,
        recent=recent,
        cards=card_lines,
        names=names,
        foreshadows=foreshadow_lines,
        max_plants=book.config.memory.max_plants_per_chapter,
        labels=frozenset(labels),
        check=check,
        unit=unit,
    )
    inputs = DraftInputs(
        arm=arm,
        as_of=as_of,
        materials=materials,
        cards=[cards.cards[i].name for i in ids],
        foreshadows=shown,
        overdue=overdue,
        recent_outlines=recent_numbers,
        facts_missing=missing,
        chars=chars,
        budget=cfg.context_chars,
    )
    return PreparedDraft(chapter, request, inputs, cards, outlines, shas, unit)


def _messages_sha256(prepared: PreparedDraft) -> tuple[str, list[dict[str, str]]]:
    messages = [m.model_dump(mode="json") for m in DRAFT.render(prepared.request).messages]
    return sha256_json(messages), messages


def draft_dry_run(book: Book, chapter: int) -> OutlineDraftDoc:
    """What a real draft of `chapter` would send (the rendered prompt and its inputs); no model call, nothing
    written."""
    prepared = prepare_draft(book, chapter)
    digest, messages = _messages_sha256(prepared)
    return OutlineDraftDoc(
        chapter=chapter, status="dry_run", inputs=prepared.inputs, messages_sha256=digest, messages=messages
    )


# ── the draft file ───────────────────────────────────────────────────────────────────────────────────────


def _scalar(value: object) -> str:
    """A YAML scalar that reads back exactly: JSON strings are YAML double-quoted strings; the two Unicode line
    separators YAML 1.1 would fold are escaped."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _comment(text: str) -> str:
    """`text` made safe for one comment line (every line break and control character becomes a space)."""
    return "".join(" " if unicodedata.category(ch)[0] in "CZ" and ch != " " else ch for ch in text).strip()


def _flow(item: dict[str, Any]) -> str:
    inner = ", ".join(
        f"{k}: [{', '.join(_scalar(x) for x in v)}]" if isinstance(v, list) else f"{k}: {_scalar(v)}"
        for k, v in item.items()
    )
    return "{" + inner + "}"


def draft_yaml(outline: FineOutline, header: list[str], basis: dict[str, list[str]]) -> str:
    """The outline file's text: `header` as comments, then the version-2 outline, one flow mapping per list
    item (like the hand-written examples), each hard event followed by its basis as a comment."""
    data = outline.model_dump(mode="json", exclude_defaults=False)
    lines = [f"# {_comment(h)}" if h else "#" for h in header]
    for key in ("version", "chapter", "title", "scene_type", "goal"):
        lines.append(f"{key}: {_scalar(data[key])}")
    lists = ("hard_events", "beats", "foreshadows")
    later = ("new_settings", "time_anchors")
    for key in (*lists, "hook", *later, "entities"):
        value = data[key]
        if key == "hook":
            lines.append(f"hook: {_scalar(value)}")
        elif key == "entities":
            lines.append(f"entities: [{', '.join(_scalar(x) for x in value)}]")
        elif not value:
            lines.append(f"{key}: []")
        else:
            lines.append(f"{key}:")
            for item in value:
                shown = {k: v for k, v in item.items() if v not in (None, "") and not (k == "entities" and not v)}
                line = f"  - {_flow(shown)}"
                if key == "hard_events":
                    cited = basis.get(str(item["id"]), [])
                    line += f"  # 依据：{_comment('、'.join(cited)) if cited else '无（本稿补出，请核对）'}"
                lines.append(line)
    return "\n".join(lines) + "\n"


def _relative(book: Book, path: Path) -> str:
    return path.relative_to(book.root).as_posix() if path.is_relative_to(book.root) else path.name


def _header(chapter: int, prepared: PreparedDraft, admission: Admission, run_id: str) -> list[str]:
    inputs = prepared.inputs
    files = sorted({(m.where.split(":")[0], m.sha256[:12]) for m in inputs.materials if m.kind != "previous"})
    head = [
        f"{chapter_label(prepared.unit, chapter)}细纲草稿 — 细纲智能体（muse outline draft {chapter}）生成，尚未确认。",
        "这是作者案头的草稿：`muse drafts show` 审阅，`muse drafts accept` 接受（检查通过后确认），"
        "`muse drafts revise` 改后接受，`muse drafts reject` 退回；接受前写手不会使用它。",
        "依据：" + ("，".join(f"{f}（sha256 {s}…）" for f, s in files) or "无"),
        f"记忆：截至{chapter_label(prepared.unit, inputs.as_of)}；运行 {run_id}",
        ADMISSION_LINE.removeprefix("# ")
        + "，".join(f"Gate {g} 回执 seq {s}" for g, s in sorted(admission.receipts.items()))
        + f"（写手配置 {admission.writer_config_sha256[:12]}…；细纲模型 {admission.outliner or '无'}）",
    ]
    return head


def skipped_draft(prepared: PreparedDraft, admission: Admission) -> OutlineDraftDoc:
    """The draft document when no model is configured for the outliner: skipped, nothing called."""
    digest, _ = _messages_sha256(prepared)
    return OutlineDraftDoc(
        chapter=prepared.chapter,
        status="skipped",
        reason=f"no model configured for role {DRAFT.role}",
        inputs=prepared.inputs,
        messages_sha256=digest,
        admission=admission.record(),
    )


def outline_draft_call(prepared: PreparedDraft) -> TaskCall[OutlineDraft]:
    """The outliner's call for a prepared draft (the caller — the fine-outline stage, behind its entry guard — makes
    it; nothing in this package calls the outliner)."""
    return DRAFT.render(prepared.request)


def call_figures(result: StructuredResult[Any]) -> dict[str, Any]:
    """What a draft document records of the call that made it: its id, receipts, attempts, tokens and cost."""
    return {
        "call_id": result.call_id,
        "receipts": [r.id for r in result.receipts],
        "attempts": result.attempts,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cost": result.cost,
    }


def store_outline_draft_answer(
    book: Book, prepared: PreparedDraft, result: StructuredResult[OutlineDraft], admission: Admission, run_id: str
) -> OutlineDraftDoc:
    """Keep the outliner's answer as a shadow draft on the author's desk (see the module doc): its YAML with the
    provenance (plan files, memory, run, the admitting receipts and outliner model) in its header."""
    chapter = prepared.chapter
    digest, _ = _messages_sha256(prepared)
    draft: OutlineDraft = result.value
    outline = draft.to_outline(chapter)
    basis = {f"E{i + 1}": list(e.basis) for i, e in enumerate(draft.hard_events)}
    header = _header(chapter, prepared, admission, run_id)
    if draft.notes:
        header += ["给作者的说明：", *(f"  - {n}" for n in draft.notes)]
    text = draft_yaml(outline, header, basis)
    where = f"outlines/{chapter:04d}.yaml"
    reread = parse_outline(book.root / where, text=text, expect_chapter=chapter)
    if reread.model_dump() != outline.model_dump():
        raise FailedClosed(
            "OUTLINE_DRAFT_ROUNDTRIP",
            "the draft's YAML does not read back as the draft",
            where,
            "this is a novelmuse bug: nothing was written",
        )
    warnings = [
        p
        for p in lint_draft(book, outline, cards=prepared.cards, outlines=prepared.outlines, chapter_shas=prepared.shas)
        if p.severity == "warning"
    ]
    draft_id = store_outline_draft(book, chapter, text, run_id=run_id, call_id=result.call_id)
    author = outline_paths(book).get(chapter)
    return OutlineDraftDoc(
        chapter=chapter,
        status="drafted",
        inputs=prepared.inputs,
        messages_sha256=digest,
        draft_id=draft_id,
        short=short_id(draft_id),
        written_to=_relative(book, drafts_dir(book) / "outlines" / f"{chapter:04d}-{sha256_hex(text)[:12]}.yaml"),
        author_outline=_relative(book, author) if author is not None else None,
        file_sha256=sha256_hex(text),
        outline=outline.model_dump(mode="json"),
        basis=basis,
        notes=list(draft.notes),
        warnings=warnings,
        admission=admission.record(),
        run_id=run_id,
        **call_figures(result),
    )
