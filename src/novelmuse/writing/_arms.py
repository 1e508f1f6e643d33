"""The retrieval arms of seed 003 (A/C 核心比较 + B 负对照): how each slot of the plan finds raw text.

- **C** (卡索引后回读原文): the card index locates, the raw text is read back — a foreshadow's planting span,
  the source span of an entity's current state, its last mention, a mention followed by speech (voice), a
  mention in narration (action habits), a mention beside an ability value, the last paragraph of earlier
  chapters (hooks). The card's semantics never reach the writer: only the located raw text does.
- **A** (通用原文检索): generic BM25 retrieval over the same chapters (memory's index, statistics of chapters < N
  only), one query per slot of the same plan, made from the outline's own text only — its sentences that name the
  slot's entity (the name as the outline writes it), the outline's own words about a foreshadow, the hook — never
  from the cards: no alias, no card value, no ledger description. What arm C adds is exactly what the cards know.
- **B** (card-only, diagnostic): the cards' states and histories as text, no raw text at all.

Every candidate is a span of an earlier chapter's body, cut to its paragraph (at most `SPAN_MAX_CHARS`
characters around the located offset). At most `CANDIDATES_PER_SLOT` candidates are examined per slot;
the ones after are counted, never silently dropped.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from ..book import Chapter, FineOutline
from ..memory import CardSet, MemoryState, MentionMatcher, SearchIndex, mention_names
from ..text import Paragraph, chapter_label, count_chars, split_paragraphs
from ._plan import EntityPlan, RetrievalPlan, Slot, basis, value_word
from ._vocab import vocabulary

SPAN_MAX_CHARS = 400
CANDIDATES_PER_SLOT = 8
MIN_NARRATION_CHARS = 40  # a shorter paragraph (a verse line, a name) shows no habit
_SNAP = 80  # how far a long paragraph's window may move to start and end on a sentence boundary
_SENTENCE_END = re.compile(r"[。！？!?…][”’」』]*")


@dataclass(frozen=True)
class Candidate:
    """A candidate span [start, end) of chapter `chapter`'s body, and how it was located (manifest only)."""

    chapter: int
    start: int
    end: int
    located_by: str


@dataclass(frozen=True)
class SlotCandidates:
    """The candidates examined for one slot, best first; how many more were not examined, and how many lay in
    the continuous window (whose text the writer already has)."""

    candidates: list[Candidate]
    unexamined: int = 0
    in_window: int = 0


class ChapterCache:
    """The chapters before N (read once per build) and their paragraphs (split on first use).

    `readback_before` is the first chapter of the continuous window: raw text is retrieved only from the
    chapters before it (readback never spends budget on text the window already gives)."""

    def __init__(self, chapters: dict[int, Chapter], readback_before: int):
        self.paths = {n: ch.path for n, ch in chapters.items()}
        self.readback_before = readback_before
        self._chapters: dict[int, Chapter] = dict(chapters)
        self._paragraphs: dict[int, list[Paragraph]] = {}
        self._ends: dict[int, list[int]] = {}

    def chapter(self, n: int) -> Chapter:
        return self._chapters[n]

    def body(self, n: int) -> str:
        return self.chapter(n).body

    def paragraphs(self, n: int) -> list[Paragraph]:
        if n not in self._paragraphs:
            self._paragraphs[n] = split_paragraphs(self.body(n))
            self._ends[n] = [p.end for p in self._paragraphs[n]]
        return self._paragraphs[n]

    def paragraph_of(self, n: int, offset: int) -> Paragraph | None:
        """The paragraph holding `offset` (or the first one after it, for an offset on a blank line)."""
        paras = self.paragraphs(n)
        i = bisect_right(self._ends[n], offset)
        return paras[i] if i < len(paras) else None

    def span(self, n: int, offset: int, located_by: str) -> Candidate | None:
        """The candidate around `offset`: its paragraph, cut to SPAN_MAX_CHARS around the offset (None in the
        continuous window or outside the chapters before N)."""
        if n not in self.paths or n >= self.readback_before:
            return None
        p = self.paragraph_of(n, offset)
        if p is None:
            return None
        start, end = p.start, p.end
        if end - start > SPAN_MAX_CHARS:  # a window around the offset, on sentence boundaries where possible
            body = self.body(n)
            anchor = min(max(offset, start), end)
            lo = max(start, min(anchor - SPAN_MAX_CHARS // 4, end - SPAN_MAX_CHARS))
            hi = lo + SPAN_MAX_CHARS
            if lo > start:
                cut = _SENTENCE_END.search(body, lo, min(anchor, lo + _SNAP))
                lo = cut.end() if cut else lo
            if hi < end:
                ends = [m.end() for m in _SENTENCE_END.finditer(body, max(anchor, hi - _SNAP), hi)]
                hi = ends[-1] if ends else hi
            start, end = lo, hi
        return Candidate(n, start, end, located_by)


def _unique(cands: list[Candidate | None]) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[tuple[int, int, int]] = set()
    for c in cands:
        if c is not None and (c.chapter, c.start, c.end) not in seen:
            seen.add((c.chapter, c.start, c.end))
            out.append(c)
    return out


Accept = Callable[[int, int, int], str]  # (chapter, start, end) of a mention → why it fits ("" when it does not)


class CardLocator:
    """Arm C: spans located through the card index (sources, mentions) of the plan's entities."""

    def __init__(self, cache: ChapterCache, cards: CardSet):
        self.cache = cache
        self.cards = cards
        self._matcher: MentionMatcher | None = None

    def _mentions(self, e: EntityPlan, accept: Accept, *, last_only: bool = False) -> SlotCandidates:
        """Walk the entity's mentions from the most recent back (chapters before the window), keeping the spans
        `accept` approves, until CANDIDATES_PER_SLOT are found; the mentions not looked at are counted. With
        `last_only`, only each chapter's last mention is a candidate."""
        k = CANDIDATES_PER_SLOT
        before = self.cache.readback_before
        found: list[Candidate] = []
        in_window = rest = 0
        for cm in reversed(e.mentions):
            offsets = cm.offsets[-1:] if last_only else cm.offsets
            if cm.chapter >= before:
                in_window += len(offsets)
                continue
            for i, (start, end, name) in enumerate(reversed(offsets)):
                if len(found) >= k:
                    rest += len(offsets) - i
                    break
                label = accept(cm.chapter, start, end)
                if label:
                    span = self.cache.span(cm.chapter, start, f"{label} {name} ch.{cm.chapter}@{start}")
                    found = _unique([*found, span])
        return SlotCandidates(found, rest, in_window)

    def _speaks(self, chapter: int, end: int) -> bool:
        return vocabulary().speech.match(self.cache.body(chapter), end) is not None

    def _narrates(self, chapter: int, start: int, end: int) -> str:
        """A narration paragraph of some length (no dialogue): what the character does, not what it says."""
        p = self.cache.paragraph_of(chapter, start)
        if p is None or "“" in p.text or "「" in p.text or count_chars(p.text) < MIN_NARRATION_CHARS:
            return ""
        return "" if self._speaks(chapter, end) else "narration"

    def _sourced(self, e: EntityPlan, keys: Callable[[str], bool]) -> SlotCandidates:
        """Spans at the sources of the entity's values whose key `keys` approves, the most recent first."""
        located = sorted(
            (f for f in e.facts if keys(f.key) and f.source.chapter is not None and f.source.start is not None),
            key=lambda f: (-f.since, f.key),
        )
        spans = _unique(
            [
                self.cache.span(f.source.chapter, f.source.start, f"{f.key} source {f.source.describe()}")
                for f in located
                if f.source.chapter is not None and f.source.start is not None
            ]
        )
        in_window = sum(1 for f in located if (f.source.chapter or 0) >= self.cache.readback_before)
        return SlotCandidates(spans[:CANDIDATES_PER_SLOT], max(0, len(spans) - CANDIDATES_PER_SLOT), in_window)

    def locate(self, slot: Slot) -> SlotCandidates:
        """The candidates of one slot (best first)."""
        if slot.kind == "foreshadow":
            return self._foreshadow(slot)
        if slot.kind == "hook":
            return self._hooks()
        e = slot.entity
        assert e is not None
        if slot.kind == "state":
            return self._sourced(e, lambda key: True)
        if slot.kind == "last":
            return self._mentions(e, lambda c, s, t: "last mention", last_only=True)
        if slot.kind == "voice":
            return self._mentions(e, lambda c, s, t: "speech" if self._speaks(c, t) else "")
        if slot.kind == "action":
            return self._mentions(e, self._narrates)
        # ability: the ability values' own source spans first, then mentions beside a value
        abilities = vocabulary().ability_attributes
        is_ability: Callable[[str], bool] = lambda key: key.removeprefix("attr:").lower() in abilities  # noqa: E731
        sourced = self._sourced(e, is_ability)
        values = [f.raw_value for f in e.facts if is_ability(f.key) and len(f.raw_value.strip()) >= 2]

        def beside_value(c: int, s: int, t: int) -> str:
            p = self.cache.paragraph_of(c, s)
            return "beside an ability value" if p is not None and any(v in p.text for v in values) else ""

        more = self._mentions(e, beside_value) if values else SlotCandidates([])
        cands = _unique([*sourced.candidates, *more.candidates])
        left = sourced.unexamined + more.unexamined + max(0, len(cands) - CANDIDATES_PER_SLOT)
        return SlotCandidates(cands[:CANDIDATES_PER_SLOT], left, sourced.in_window + more.in_window)

    def _hooks(self) -> SlotCandidates:
        numbers = sorted(self.cache.paths, reverse=True)
        usable = [n for n in numbers if n < self.cache.readback_before]
        cands = []
        for n in usable[:CANDIDATES_PER_SLOT]:
            paras = self.cache.paragraphs(n)
            if paras:
                cands.append(self.cache.span(n, paras[-1].start, f"last paragraph of ch.{n}"))
        rest = max(0, len(usable) - CANDIDATES_PER_SLOT)
        return SlotCandidates(_unique(cands), rest, len(numbers) - len(usable))

    def _foreshadow(self, slot: Slot) -> SlotCandidates:
        f = slot.foreshadow
        assert f is not None
        src = f.source
        in_window = int(f.planted_chapter >= self.cache.readback_before)
        if src.chapter is not None and src.start is not None:
            cand = self.cache.span(src.chapter, src.start, f"ledger {src.describe()}")
            return SlotCandidates(_unique([cand]), 0, in_window)
        # planted by an outline: the planting chapter's paragraphs that name most of the description's entities
        if self._matcher is None:
            self._matcher = MentionMatcher(mention_names(self.cards))
        wanted = {m.card_id for m in self._matcher.find(f.description)}
        n = f.planted_chapter
        if not wanted or n not in self.cache.paths or in_window:
            return SlotCandidates([], 0, in_window)
        scored = []
        for p in self.cache.paragraphs(n):
            hit = {m.card_id for m in self._matcher.find(p.text)} & wanted
            if hit:
                scored.append((-len(hit), p.index, p))
        scored.sort(key=lambda t: (t[0], t[1]))
        cands = [
            self.cache.span(n, p.start, f"planting ch.{n}: paragraph names {-score} of {len(wanted)} entities")
            for score, _, p in scored[:CANDIDATES_PER_SLOT]
        ]
        return SlotCandidates(_unique(cands), max(0, len(scored) - CANDIDATES_PER_SLOT))


class SearchLocator:
    """Arm A: generic BM25 retrieval (alias-aware tokens; statistics of the chapters before N only)."""

    def __init__(self, cache: ChapterCache, index: Callable[[], SearchIndex], outline: FineOutline):
        self.cache = cache
        self._open = index
        self._index: SearchIndex | None = None
        self.outline = outline

    def query(self, slot: Slot) -> str:
        """The query text of a slot, from the outline's own text only (see the module doc)."""
        texts = outline_texts(self.outline)
        fallback = self.outline.goal or " ".join(texts[:3])
        if slot.kind == "foreshadow":
            assert slot.foreshadow is not None
            fid = slot.foreshadow.id
            own = [f"{d.description} {d.note}".strip() for d in self.outline.foreshadows if d.id == fid]
            return " ".join(t for t in own if t) or fallback
        if slot.kind == "hook":
            return self.outline.hook or fallback
        assert slot.entity is not None
        name = slot.entity.name
        naming = [t for t in texts if name in t]
        query = " ".join([name, *naming])
        return query + " 曰" if slot.kind == "voice" else query  # 曰: how speech opens in the narration

    def locate(self, slot: Slot) -> SlotCandidates:
        """The k best chunks for the slot's query among the chapters before the window, cut like any candidate."""
        return self.search(self.query(slot))

    def search(self, query: str) -> SlotCandidates:
        """The k best chunks for any query text (a slot's, or an evidence request's) before the window."""
        text = query.strip()
        before = self.cache.readback_before
        if not text or not any(n < before for n in self.cache.paths):
            return SlotCandidates([])  # nothing before the window: the index is not even opened
        if self._index is None:
            self._index = self._open()
        hits = self._index.search(text, before=before, k=CANDIDATES_PER_SLOT, isolated=True)
        return SlotCandidates(
            _unique([self.cache.span(h.chapter, h.start, f"search rank {h.rank} score {h.score:.4f}") for h in hits])
        )


def outline_texts(outline: FineOutline) -> list[str]:
    """The outline's own sentences, in its order: goal, hard events with their results, beats, new settings, time
    anchors, hook (what a generic retrieval may query with)."""
    texts = [outline.goal, *(f"{e.text} {e.result}".strip() for e in outline.hard_events)]
    texts += [b.text for b in outline.beats] + [s.text for s in outline.new_settings]
    texts += [t.text for t in outline.time_anchors] + [outline.hook]
    return [t for t in texts if t]


def card_only_lines(plan: RetrievalPlan, state: MemoryState) -> list[tuple[str, str]]:
    """Arm B: (purpose, text) per carded entity — every value it took up to N−1 and its relations, as text."""
    vocab = vocabulary()
    out: list[tuple[str, str]] = []
    for e in plan.entities:
        if e.card is None:
            continue
        lines = []
        for attr, values in sorted(state.index.history(e.card.id, plan.chapter - 1).items()):
            label = vocab.attribute_words.get(attr, attr)
            for v in values:
                if v.source.chapter is not None and v.source.chapter >= plan.chapter:
                    continue
                since = chapter_label(plan.unit, v.since)
                lines.append(
                    f"{label}：{value_word(v.value, attr, state.cards)}（{since}起，{basis(v.source, plan.unit)}）"
                )
        lines += [f.text for f in e.facts if f.key.startswith("rel:")]
        out.append((f"{e.name}的资料", "\n".join(lines)))
    return out
