"""Build the WriterContext of chapter N and its manifest (seed 003 step 3), for arm A, B or C.

Inputs, all as of N−1: the confirmed outline of N; the cards, accepted fact cards and foreshadow ledger
replayed through N−1 (outlines of N and later never read); the mention and BM25 indexes restricted to
chapters before N; the raw text of the continuous window (the `prior_chapters` chapters before N) and of
earlier chapters for readback; rules.txt. Nothing of chapter N or later enters (FUTURE_LEAK fails closed),
so a frozen replay of N on a book that already has chapters N…M builds exactly what a book ending at N−1
builds. No model is called.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

from ..book import Book, FineOutline, load_outlines, read_chapter_file
from ..errors import FailedClosed, InputError
from ..judging import load_rubric
from ..memory import (
    STATUS_VOCABULARY,
    CardSet,
    MemoryState,
    SearchIndex,
    current_fact_cards,
    indexed_chapters,
    lexicon_sha256,
    load_cards,
    replay,
    update_index,
)
from ..roles.writer import (
    CONTEXT_SCHEMA_VERSION,
    SCENE_WORDS,
    Excerpt,
    FactLine,
    OutlineLine,
    PriorChapter,
    RenderedWrite,
    WriterContext,
    render_write,
    write_prompt_sha256,
    write_schema_sha256,
)
from ..rules import EffectiveRuleSet, load_book_rules
from ..text import chapter_label, count_chars, heading_unit, sha256_hex, sha256_json
from ._arms import Candidate, CardLocator, ChapterCache, SearchLocator, SlotCandidates, card_only_lines
from ._budget import fit_excerpts, keep_suffix
from ._leak import check_writer_text
from ._manifest import (
    MANIFEST_SCHEMA_VERSION,
    Arm,
    ArmChoiceRef,
    Block,
    CardRef,
    ChapterRef,
    Cut,
    FactCardRef,
    FactRef,
    Hashes,
    IndexRef,
    Manifest,
    OutlineRef,
    PlanEntity,
    PlanForeshadow,
    Pointer,
    PriorRef,
    SlotRef,
    SpanRef,
    Unselected,
    WithheldRef,
)
from ._outlines import require_confirmed
from ._plan import RetrievalPlan, Slot, basis, plan_chapter
from ._settings import SETTINGS_BASIS, SettingFacts, setting_facts
from ._vocab import vocabulary

_SETTING_WORDS = {"entity": "新人物或事物", "state": "状态变化", "relation": "关系", "ability": "能力"}


@dataclass(frozen=True)
class BuildInputs:
    """What a build read, kept for what comes after it (evidence rounds, the detector gate): all as of N−1."""

    book: Book
    outline: FineOutline
    cards: CardSet
    state: MemoryState
    rules: EffectiveRuleSet
    cache: ChapterCache
    locator: CardLocator | SearchLocator | None  # the arm's strategy (None for the card-only arm B)


@dataclass(frozen=True)
class ContextBuild:
    """A built context: what the writer sees, its manifest (and content address), the messages, the plan."""

    chapter: int
    arm: Arm
    context: WriterContext
    manifest: Manifest
    manifest_body: str  # the canonical JSON that `manifest_sha256` hashes (what is stored)
    manifest_sha256: str
    rendered: RenderedWrite
    plan: RetrievalPlan
    inputs: BuildInputs = field(compare=False, repr=False, kw_only=True)


def _ranges(numbers: list[int]) -> str:
    parts: list[str] = []
    for n in sorted(numbers):
        if parts and parts[-1].split("–")[-1] == str(n - 1):
            parts[-1] = parts[-1].split("–")[0] + f"–{n}"
        else:
            parts.append(str(n))
    return ", ".join(parts)


def _check_fact_cards(state: MemoryState, chapter: int, fact_cards: str) -> list[int]:
    """Chapters before N without a current fact card: stale ones always fail (CONTEXT_MEMORY_STALE), missing
    ones unless the book writes from its cards alone (`[writing] fact_cards = "optional"`)."""
    before = {n: s for n, s in state.facts_status.items() if n < chapter}
    stale = [n for n, s in before.items() if s == "stale"]
    missing = [n for n, s in before.items() if s == "missing"]
    if stale:
        raise InputError(
            "CONTEXT_MEMORY_STALE",
            f"chapter(s) {_ranges(stale)} changed after their fact cards were extracted: the memory as of "
            f"chapter {chapter - 1} would miss or misstate their facts",
            "fact cards",
            "run `muse sync` with an extractor configured (or `muse facts extract N`), then build again",
        )
    if missing and fact_cards == "required":
        raise InputError(
            "CONTEXT_MEMORY_STALE",
            f"chapter(s) {_ranges(missing)} have no fact card: the memory as of chapter {chapter - 1} has gaps",
            "fact cards",
            'extract them (`muse sync` with an extractor), or set [writing] fact_cards = "optional" to write from '
            "the cards alone",
        )
    return missing


def _outline_lines(outline: FineOutline, unit: str | None) -> tuple[list[OutlineLine], list[OutlineLine]]:
    """The hard constraints (labelled) and the adjustable beats, with their constraint ids; chapters named the
    book's way (`unit`)."""
    hard: list[OutlineLine] = []
    beats: list[OutlineLine] = []
    for item in outline.items():
        if item.kind == "beat":
            beats.append(OutlineLine(id=item.id, text=item.text))
        elif item.kind == "event":
            hard.append(OutlineLine(id=item.id, text=f"硬事件：{item.text}"))
        elif item.kind == "result":
            hard.append(OutlineLine(id=item.id, text=f"{item.ref} 的结果（不可更改）：{item.text}"))
        elif item.kind == "plant":
            f = outline.foreshadows[int(item.loc[1])]
            due = f"（应于{chapter_label(unit, f.payoff_chapter)}前回收）" if f.payoff_chapter is not None else ""
            hard.append(OutlineLine(id=item.id, text=f"埋设伏笔「{f.id}」：{item.text}{due}"))
        elif item.kind in ("advance", "resolve"):
            hard.append(OutlineLine(id=item.id, text=item.text))
        elif item.kind == "hook":
            hard.append(OutlineLine(id=item.id, text=f"章末钩子：{item.text}"))
        elif item.kind == "setting":
            s = outline.new_settings[int(item.loc[1])]
            kind = f"（{_SETTING_WORDS[s.kind]}）" if s.kind else ""
            hard.append(OutlineLine(id=item.id, text=f"新设定{kind}：{item.text}"))
        elif item.kind == "anchor":
            t = outline.time_anchors[int(item.loc[1])]
            marker = f"（正文须出现“{t.marker}”）" if t.marker.strip() else ""
            hard.append(OutlineLine(id=item.id, text=f"时间：{item.text}{marker}"))
    return hard, beats


def _fact_lines(
    plan: RetrievalPlan, outline: FineOutline, path: str, settings: SettingFacts
) -> tuple[list[FactLine], list[FactRef]]:
    """The neutral fact lines (写得对) shared by every arm, each with its writer-visible basis and its pointer: the
    author's formal settings first (正式设定, the first source of facts), then the cards' values as of N−1, the
    chapter's newcomers and last appearances, the foreshadows it advances or resolves."""
    unit = plan.unit
    lines: list[tuple[str, str, Pointer]] = [(f"设定：{t}", SETTINGS_BASIS, p) for t, p in settings.lines]
    declared_at = {
        name: outline.line(("new_settings", i))
        for i, s in enumerate(outline.new_settings)
        if s.kind == "entity"
        for name in s.entities
    }
    for e in plan.entities:
        if e.card is None:
            if e.declared:
                where = Pointer(kind="outline", file=path, line=declared_at.get(e.name))
                lines.append((f"{e.name}：本章新登场", "本章细纲", where))
            continue
        lines += [(f.text, basis(f.source, unit), Pointer.of(f.source)) for f in e.facts]
        if e.last_seen is not None:
            seen = chapter_label(unit, e.last_seen)
            lines.append((f"{e.name}此前最后一次出场：{seen}", seen, Pointer(kind="chapter", chapter=e.last_seen)))
    for f in plan.foreshadows:
        due = f"，应于{chapter_label(unit, f.payoff_chapter)}前回收" if f.payoff_chapter is not None else ""
        text = f"伏笔「{f.id}」：{f.description}（{chapter_label(unit, f.planted_chapter)}埋设{due}）"
        lines.append((text, basis(f.source, unit), Pointer.of(f.source)))
    facts = [FactLine(text=t, basis=b) for t, b, _ in lines]
    refs = [FactRef(text_sha256=sha256_hex(t), basis=b, pointer=p) for t, b, p in lines]
    return facts, refs


def _outline_chars(ctx: WriterContext) -> int:
    parts = [ctx.title, ctx.scene, ctx.goal, *ctx.entities]
    parts += [line.id + line.text for line in (*ctx.constraints, *ctx.beats)]
    return sum(count_chars(p) for p in parts)


def evidence_reserve(fraction: float, retrieval_chars: int) -> int:
    """The characters reserved for evidence requests: ⌊fraction × retrieval_chars⌋, computed exactly."""
    return math.floor(Fraction(repr(fraction)) * retrieval_chars)


def ensure_same_frame(a: WriterContext, b: WriterContext, where: str) -> None:
    """ARM_CONTEXT_DIVERGED (fail closed) unless the two contexts differ only in excerpt text — the rule that
    arms A and C share every fact line, the outline, the rules, the window and the slots (完整上下文只允许原文与
    派生 hash 不同)."""
    fa, fb = a.frame(), b.frame()
    if fa == fb:
        return
    fields = [k for k in type(fa).model_fields if getattr(fa, k) != getattr(fb, k)]
    raise FailedClosed(
        "ARM_CONTEXT_DIVERGED",
        f"the contexts differ outside their selected raw text (in {', '.join(fields)})",
        where,
        "this is a novelmuse bug or a tampered context: arms must share every constraint line and budget",
    )


class _Retrieval:
    """The filled slots of arms A and C: chosen spans, the budget's cuts, every unselected candidate."""

    def __init__(self) -> None:
        self.readback: list[Excerpt] = []
        self.style: list[Excerpt] = []
        self.slots: list[SlotRef] = []
        self.spans: list[SpanRef] = []
        self.cuts: list[Cut] = []
        self.unselected: list[Unselected] = []
        self.used = 0


def _fill(
    plan: RetrievalPlan, locate: Callable[[Slot], SlotCandidates], cache: ChapterCache, budget: int
) -> _Retrieval:
    out = _Retrieval()
    taken: list[tuple[Slot, Candidate]] = []
    picks: list[Candidate | None] = []
    for slot in plan.slots:
        found = locate(slot)
        pick: Candidate | None = None
        for cand in found.candidates:
            clash = next(
                (s for s, c in taken if c.chapter == cand.chapter and c.start < cand.end and cand.start < c.end), None
            )
            reason = f"overlaps the span of {clash.key}" if clash else "lower-ranked" if pick is not None else ""
            if reason:
                out.unselected.append(
                    Unselected(
                        slot=slot.key,
                        chapter=cand.chapter,
                        start=cand.start,
                        end=cand.end,
                        reason=reason,
                        located_by=cand.located_by,
                    )
                )
            else:
                pick = cand
        if pick is not None:
            taken.append((slot, pick))
        picks.append(pick)
        out.slots.append(
            SlotRef(
                slot=slot.key,
                section=slot.section,
                purpose=slot.purpose,
                filled=pick is not None,
                considered=len(found.candidates),
                unexamined=found.unexamined,
                in_window=found.in_window,
            )
        )
    texts = [cache.body(c.chapter)[c.start : c.end] if c is not None else "" for c in picks]
    kept = fit_excerpts(texts, budget)
    for slot, chosen, text, keep in zip(plan.slots, picks, texts, kept, strict=True):
        shown = text[:keep]
        (out.readback if slot.section == "readback" else out.style).append(Excerpt(purpose=slot.purpose, text=shown))
        if chosen is None:
            continue
        if keep < len(text):
            rest = text[keep:]
            out.cuts.append(
                Cut(
                    block="retrieval",
                    slot=slot.key,
                    chapter=chosen.chapter,
                    start=chosen.start + keep,
                    end=chosen.end,
                    chars=count_chars(rest),
                    reason="trimmed: over the retrieval budget" if keep else "dropped: over the retrieval budget",
                )
            )
        if keep:
            chars = count_chars(shown)
            out.used += chars
            out.spans.append(
                SpanRef(
                    slot=slot.key,
                    section=slot.section,
                    purpose=slot.purpose,
                    chapter=chosen.chapter,
                    start=chosen.start,
                    end=chosen.start + keep,
                    chars=chars,
                    sha256=sha256_hex(shown),
                    located_by=chosen.located_by,
                )
            )
    return out


def _card_only(plan: RetrievalPlan, state: MemoryState, budget: int) -> _Retrieval:
    out = _Retrieval()
    items = card_only_lines(plan, state)
    kept = fit_excerpts([t for _, t in items], budget)
    for (purpose, text), keep in zip(items, kept, strict=True):
        out.readback.append(Excerpt(purpose=purpose, text=text[:keep]))
        out.used += count_chars(text[:keep])
    return out


def build_context(
    book: Book,
    chapter: int,
    *,
    arm: Arm = "C",
    search: SearchIndex | None = None,
    progress: Callable[[int, int], None] | None = None,
    arm_choice: ArmChoiceRef | None = None,
) -> ContextBuild:
    """Build chapter `chapter`'s WriterContext and manifest for `arm` (C: card-located readback, the default;
    A: generic retrieval; B: card-only, diagnostic). `search` reuses an open index for arm A; `progress(done,
    total)` reports indexing when chapters before N changed since the index was built; `arm_choice` (`muse
    write`) records in the manifest how the arm was chosen."""
    cfg = book.config.writing
    outline = require_confirmed(book, chapter)
    cards: CardSet = load_cards(book)
    # every chapter before N, read once: its sha256 for the index and the fact cards, its text for the window and
    # readback; chapters N and later are never read
    chapters = {n: read_chapter_file(n, p) for n, p in book.chapter_paths().items() if n < chapter}
    shas = {n: ch.sha256 for n, ch in chapters.items()}
    lexicon = lexicon_sha256(cards, book.config.memory.chunk_max_chars)
    indexed = indexed_chapters(book.db, before=chapter)
    if {n: (sha, lexicon) for n, sha in shas.items()} != indexed:
        update_index(book, cards, progress=progress)  # only when a chapter before N or a card name changed
        indexed = indexed_chapters(book.db, before=chapter)
    outlines = load_outlines(book, before=chapter)
    state = replay(book, cards=cards, upto=chapter - 1, outlines=outlines, chapter_shas=shas)
    missing = _check_fact_cards(state, chapter, cfg.fact_cards)
    # chapters are named the way the chapters before N name themselves (第N回 in a book of 回): never from N or later
    unit = heading_unit(ch.heading for n, ch in chapters.items() if n > 0)
    plan = plan_chapter(book, outline, state, unit)
    rules = load_book_rules(book).effective

    constraints, beats = _outline_lines(outline, unit)
    outline_path = _relative(book, outline.path)
    names = [n for e in plan.entities for n in (e.name, *(e.card.aliases if e.card else ()))]
    settings = setting_facts(book, names)
    facts, fact_refs = _fact_lines(plan, outline, outline_path, settings)
    forbidden = sorted(r.phrase for r in rules.rules if r.kind == "forbidden")
    preferences = [p.text for p in rules.preferences]
    shared = WriterContext(
        chapter=chapter,
        label=chapter_label(unit, chapter),
        title=outline.title,
        scene=SCENE_WORDS.get(outline.scene_type or "", ""),
        goal=outline.goal,
        min_chars=rules.length.min_chars,
        max_chars=rules.length.max_chars,
        constraints=constraints,
        beats=beats,
        entities=list(outline.entities),
        facts=facts,
        prior_chapters=[],
        readback=[Excerpt(purpose=s.purpose, text="") for s in plan.slots if s.section == "readback"],
        style=[Excerpt(purpose=s.purpose, text="") for s in plan.slots if s.section == "style"],
        forbidden=forbidden,
        preferences=preferences,
    )
    outline_used = _outline_chars(shared)
    facts_used = sum(count_chars(f.text + f.basis) for f in facts)
    rules_used = sum(count_chars(x) for x in (*forbidden, *preferences))
    protected = outline_used + facts_used + rules_used
    retrieval = cfg.retrieval_chars
    reserve = evidence_reserve(cfg.evidence_fraction, retrieval)
    if protected + retrieval + reserve > cfg.context_chars:
        raise InputError(
            "CONTEXT_OVER_BUDGET",
            f"the protected blocks need {protected} characters (outline {outline_used}, facts {facts_used}, "
            f"rules {rules_used}); with the retrieval budget {retrieval} and the evidence reserve {reserve} that "
            f"is {protected + retrieval + reserve} > context_chars {cfg.context_chars}; nothing was cut",
            f"chapter {chapter}",
            "raise [writing] context_chars, lower retrieval_chars, or shorten the outline or rules",
        )
    prior_budget = cfg.context_chars - protected - retrieval - reserve

    numbers = sorted(chapters)
    window = numbers[len(numbers) - cfg.prior_chapters :] if cfg.prior_chapters else []
    cache = ChapterCache(chapters, window[0] if window else chapter)
    prior, prior_refs, prior_cuts, prior_used = continuous_window(cache, window, prior_budget)
    shared = shared.model_copy(update={"prior_chapters": prior})

    locator: CardLocator | SearchLocator | None = None
    if arm == "B":
        got = _card_only(plan, state, retrieval)
        ctx = shared.model_copy(update={"readback": got.readback, "style": []})
    else:
        if arm == "C":
            locator = CardLocator(cache, cards)
        else:
            index = search
            locator = SearchLocator(cache, lambda: index or SearchIndex(book, cards), outline)
        got = _fill(plan, locator.locate, cache, retrieval)
        ctx = shared.model_copy(update={"readback": got.readback, "style": got.style})
        ensure_same_frame(ctx, shared, f"chapter {chapter} arm {arm}")

    rendered = render_write(ctx, allow_requests=cfg.evidence_rounds > 0)
    visible = "\n".join(m.content for m in rendered.messages)
    check_writer_text(ctx, visible, cards, f"chapter {chapter} arm {arm}")
    fact_cards = current_fact_cards(book.db, shas)
    cards_used, withheld, entities, foreshadows = _plan_refs(plan)
    manifest = Manifest(
        chapter=chapter,
        arm=arm,
        arm_choice=arm_choice,
        outline=OutlineRef(
            path=outline_path,
            sha256=outline.sha256,
            version=outline.version,
            scene_type=outline.scene_type,
            constraint_ids=outline.constraint_ids(),
        ),
        config=cfg.model_dump(),
        hashes=_hashes(rules.sha256, cfg.evidence_rounds > 0),
        index=IndexRef(
            fingerprint=sha256_json([[n, sha, lex] for n, (sha, lex) in indexed.items()]),
            lexicon_sha256=lexicon,
            chapters=len(indexed),
        ),
        chapters_before=[ChapterRef(chapter=n, sha256=sha) for n, sha in shas.items()],
        fact_cards=[
            FactCardRef(chapter=n, fact_card_id=fc.id, chapter_sha256=fc.chapter_sha256, receipt_id=fc.receipt_id)
            for n, fc in sorted(fact_cards.items())
        ],
        facts_missing=missing,
        cards=cards_used,
        withheld=withheld,
        entities=entities,
        foreshadows=foreshadows,
        facts=fact_refs,
        settings_omitted=settings.omitted,
        blocks=[
            Block(name="outline", protected=True, budget=outline_used, used=outline_used),
            Block(name="facts", protected=True, budget=facts_used, used=facts_used),
            Block(name="rules", protected=True, budget=rules_used, used=rules_used),
            Block(name="prior_chapters", protected=False, budget=prior_budget, used=prior_used),
            Block(name="retrieval", protected=False, budget=retrieval, used=got.used),
            Block(name="evidence_reserve", protected=False, budget=reserve, used=0),
        ],
        prior_chapters=prior_refs,
        slots=got.slots,
        spans=got.spans,
        cuts=prior_cuts + got.cuts,
        unselected=got.unselected,
        context_sha256=sha256_json(ctx.model_dump(mode="json")),
        frame_sha256=sha256_json(ctx.frame().model_dump(mode="json")),
        messages_sha256=rendered.messages_sha256,
    )
    _no_future(manifest)
    body = manifest.canonical()
    inputs = BuildInputs(book, outline, cards, state, rules, cache, locator)
    return ContextBuild(chapter, arm, ctx, manifest, body, sha256_hex(body), rendered, plan, inputs=inputs)


def _no_future(manifest: Manifest) -> None:
    """FUTURE_LEAK (fail closed) if any input of the manifest points into chapter N or later."""
    chapter = manifest.chapter
    late = sorted({n for n in manifest.pointer_chapters() if n >= chapter})
    if late:
        raise FailedClosed(
            "FUTURE_LEAK",
            f"the context of chapter {chapter} would use chapter(s) {_ranges(late)}",
            f"chapter {chapter} arm {manifest.arm}",
            "this is a novelmuse bug: nothing from chapter N or later may enter chapter N's context",
        )


def revise_build(
    build: ContextBuild, context: WriterContext, manifest: Manifest, *, allow_requests: bool
) -> ContextBuild:
    """A new version of a build (an evidence round): `context` rendered for the writer (with or without the
    request field), its hashes written into `manifest`, checked like a first build (CONTEXT_LEAK,
    FUTURE_LEAK)."""
    where = f"chapter {build.chapter} arm {build.arm} round {manifest.round}"
    rendered = render_write(context, allow_requests=allow_requests)
    check_writer_text(context, "\n".join(m.content for m in rendered.messages), build.inputs.cards, where)
    hashes = manifest.hashes.model_copy(update={"schema_sha256": write_schema_sha256(allow_requests)})
    manifest = manifest.model_copy(
        update={
            "hashes": hashes,
            "context_sha256": sha256_json(context.model_dump(mode="json")),
            "frame_sha256": sha256_json(context.frame().model_dump(mode="json")),
            "messages_sha256": rendered.messages_sha256,
        }
    )
    _no_future(manifest)
    body = manifest.canonical()
    return replace(
        build,
        context=context,
        manifest=manifest,
        manifest_body=body,
        manifest_sha256=sha256_hex(body),
        rendered=rendered,
    )


def context_versions() -> dict[str, str]:
    """How a context is built, as versions and hashes of the code's reviewed data: the manifest and context
    schemas and the two vocabularies. What a writer configuration binds besides its prompts and models."""
    return {
        "manifest_schema": MANIFEST_SCHEMA_VERSION,
        "context_schema": CONTEXT_SCHEMA_VERSION,
        "context_vocabulary_sha256": vocabulary().sha256,
        "status_vocabulary_sha256": STATUS_VOCABULARY.sha256,
    }


def _hashes(rules_sha256: str, allow_requests: bool) -> Hashes:
    """The hashes of every reviewed artefact the context depends on."""
    rubric = load_rubric("writer_replay")
    return Hashes(
        rules_sha256=rules_sha256,
        prompt_sha256=write_prompt_sha256(),
        schema_sha256=write_schema_sha256(allow_requests),
        final_schema_sha256=write_schema_sha256(False),
        context_schema=CONTEXT_SCHEMA_VERSION,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        rubric_sha256=rubric.sha256,
        status_vocabulary_sha256=STATUS_VOCABULARY.sha256,
        context_vocabulary_sha256=vocabulary().sha256,
    )


def _plan_refs(
    plan: RetrievalPlan,
) -> tuple[list[CardRef], list[WithheldRef], list[PlanEntity], list[PlanForeshadow]]:
    """The plan as manifest entries: each card by the hash of its state as of N−1, withheld values, the
    entities and the foreshadows with their pointers."""
    cards = [
        CardRef(
            card_id=e.card.id,
            file=e.card.file,
            state_sha256=sha256_json(
                [[f.key, f.text, f.since, Pointer.of(f.source).model_dump()] for f in e.facts]
                + [[w.key, w.since, w.source_chapter] for w in e.withheld]
            ),
        )
        for e in plan.entities
        if e.card is not None
    ]
    withheld = [
        WithheldRef(card_id=w.card_id, key=w.key, since=w.since, source_chapter=w.source_chapter) for w in plan.withheld
    ]
    entities = [
        PlanEntity(
            name=e.name,
            card_id=e.card.id if e.card else None,
            last_seen=e.last_seen,
            last_changed=e.last_changed.since if e.last_changed else None,
            dead=e.dead,
            declared=e.declared,
        )
        for e in plan.entities
    ]
    foreshadows = [
        PlanForeshadow(
            op=f.op,
            id=f.id,
            planted_chapter=f.planted_chapter,
            payoff_chapter=f.payoff_chapter,
            pointer=Pointer.of(f.source),
        )
        for f in plan.foreshadows
    ]
    return cards, withheld, entities, foreshadows


def _relative(book: Book, path: str) -> str:
    try:
        return str(Path(path).relative_to(book.root))
    except ValueError:
        return Path(path).name


def continuous_window(
    cache: ChapterCache, window: list[int], budget: int
) -> tuple[list[PriorChapter], list[PriorRef], list[Cut], int]:
    """The continuous window under its budget: the longest run of whole paragraphs ending at N−1 that fits."""
    paras = [(n, p) for n in window for p in cache.paragraphs(n)]
    counts = [count_chars(p.text) for _, p in paras]
    first = keep_suffix(counts, budget)
    chapters: list[PriorChapter] = []
    refs: list[PriorRef] = []
    cuts: list[Cut] = []
    used = sum(counts[first:])
    for n in window:
        ch = cache.chapter(n)
        own = [(i, p) for i, (m, p) in enumerate(paras) if m == n]
        kept = [p for i, p in own if i >= first]
        dropped = [p for i, p in own if i < first]
        kept_start = kept[0].start if kept else len(ch.body)
        if dropped:
            cut_chars = sum(count_chars(p.text) for p in dropped)
            reason = (
                "leading paragraphs cut: the window is over its budget"
                if kept
                else "cut: the window is over its budget"
            )
            cuts.append(Cut(block="prior_chapters", chapter=n, start=0, end=kept_start, chars=cut_chars, reason=reason))
        if kept:
            chapters.append(
                PriorChapter(
                    chapter=n, title=ch.heading, text="\n".join(p.text for p in kept), omitted_before=bool(dropped)
                )
            )
        refs.append(
            PriorRef(
                chapter=n,
                sha256=ch.sha256,
                paragraphs=len(own),
                kept_from_paragraph=len(dropped),
                kept_start=kept_start,
                chars=sum(count_chars(p.text) for _, p in own),
                kept_chars=sum(count_chars(p.text) for p in kept),
            )
        )
    return chapters, refs, cuts, used
