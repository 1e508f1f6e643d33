"""The quality gate's evidence pack (seed 000: 上下文=writer 基线包, 同证独立): what the writer had for chapter N,
handed to every quality-gate judge beside the candidates, so canon_compliance has something to be checked against.

- A chapter with a confirmed fine outline gets exactly the writer's context (`build_context`, arm C): the fact lines
  as of N−1 (card states and the foreshadows the outline acts on, each with its basis), the continuous window of
  prior chapters' raw text, the readback and style excerpts, the author's preferences — plus the whole active
  foreshadow ledger with ages, and the outline itself (the judges' `fineOutline`).
- Otherwise (no outline, not confirmed, or the context cannot be built — the reason is recorded in `note`) the pack
  comes from the memory's as-of state: the state as of N−1 of every card the candidates name (the writer's own
  fact lines and bases), the active foreshadow ledger with ages, and the continuous window of prior chapters
  under the same `[writing]` budget.

Nothing from chapter N or later enters either way. The pack is bound by its sha256; every item is neutral text
(card names, never card ids or file names) and passes the judges' leak guard. `prior_texts` — the raw text the
pack holds — is what the source_safety hard block compares the candidates against (no 50-character copies).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..book import Book, FineOutline, read_chapter_file
from ..errors import InputError, MuseError
from ..judging import ContextItem
from ..memory import CardSet, MemoryState, MentionMatcher, load_cards, mention_names, replay
from ..roles.writer import PriorChapter
from ..rules import load_book_rules
from ..text import chapter_label, count_chars, sha256_json
from ._arms import ChapterCache
from ._build import build_context, continuous_window
from ._outlines import require_confirmed
from ._plan import basis, card_facts

EVIDENCE_SCHEMA_VERSION = "gate-evidence-v1"
EvidenceKind = Literal["fact", "foreshadow", "prior_chapter", "readback", "style", "preference"]


class EvidenceItem(BaseModel):
    """One item of the pack: an id the judges cite it by (`context` evidence), its kind, and its text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: EvidenceKind
    text: str


class EvidencePack(BaseModel):
    """The evidence every quality-gate candidate of chapter `chapter` is judged against."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = EVIDENCE_SCHEMA_VERSION
    chapter: int
    source: Literal["writer_context", "memory"]
    note: str
    manifest_sha256: str | None = None  # the writer's manifest, when the pack is the writer's context
    items: list[EvidenceItem]
    prior_texts: list[str]  # the raw prior-chapter text the pack holds (for the copy check)
    sha256: str

    def context_items(self) -> list[ContextItem]:
        """The items as the judges' blind input carries them."""
        return [ContextItem(i.id, i.kind, i.text) for i in self.items]

    def summary(self) -> dict[str, object]:
        """What a judge report records of the pack: source, chapter, note, hashes and the items themselves."""
        return {**self.brief(), "items": [i.model_dump() for i in self.items]}

    def brief(self) -> dict[str, object]:
        """The pack without its texts (a review's gate lists it per chapter; the sha256 binds the items)."""
        return {
            "schema_version": self.schema_version,
            "chapter": self.chapter,
            "source": self.source,
            "note": self.note,
            "manifest_sha256": self.manifest_sha256,
            "sha256": self.sha256,
            "item_count": len(self.items),
        }


def _pack(
    chapter: int,
    source: Literal["writer_context", "memory"],
    note: str,
    items: list[EvidenceItem],
    prior_texts: list[str],
    manifest_sha256: str | None = None,
) -> EvidencePack:
    digest = sha256_json({"chapter": chapter, "source": source, "items": [i.model_dump() for i in items]})
    return EvidencePack(
        chapter=chapter,
        source=source,
        note=note,
        manifest_sha256=manifest_sha256,
        items=items,
        prior_texts=prior_texts,
        sha256=digest,
    )


def _numbered(kind: EvidenceKind, texts: Sequence[str]) -> list[EvidenceItem]:
    return [EvidenceItem(id=f"{kind}-{i}", kind=kind, text=t) for i, t in enumerate(texts, 1) if t.strip()]


def _ledger_lines(state: MemoryState | None, chapter: int, unit: str | None) -> list[str]:
    """The active foreshadow ledger at the end of N−1, each with its age and expected payoff (seed 004's 账龄);
    chapters named the book's way (`unit`)."""
    if state is None or chapter < 2:
        return []
    lines = []
    for f in state.active_foreshadows(chapter - 1).items:
        due = f"，应于{chapter_label(unit, f.payoff_chapter)}前回收" if f.payoff_chapter is not None else ""
        late = "，已逾期" if f.overdue else ""
        planted = chapter_label(unit, f.planted_chapter)
        lines.append(f"伏笔「{f.id}」：{f.description}（{planted}埋设，已{f.age}章{due}{late}）")
    return lines


def _memory(book: Book, chapter: int) -> tuple[CardSet | None, MemoryState | None, str]:
    """The cards and the memory replayed through N−1 (None, with why, when they cannot be loaded)."""
    try:
        cards = load_cards(book)
        return cards, replay(book, cards=cards, upto=chapter - 1), ""
    except MuseError as exc:
        return None, None, f"; the story memory could not be loaded ({exc.code})"


def _prior_items(prior: Sequence[PriorChapter], unit: str | None) -> list[EvidenceItem]:
    """The continuous window's chapters, each one item (its beginning marked when the budget cut it)."""
    return [
        EvidenceItem(
            id=f"prior_chapter-{p.chapter}",
            kind="prior_chapter",
            text=f"{chapter_label(unit, p.chapter)} {p.title}\n" + ("（前略）" if p.omitted_before else "") + p.text,
        )
        for p in prior
    ]


def evidence_pack(book: Book, chapter: int, candidates: Sequence[str]) -> tuple[EvidencePack, FineOutline | None]:
    """The evidence pack of chapter `chapter` (see the module docstring) and the chapter's fine outline (None when
    it has no confirmed one). `candidates` decide which cards a memory pack covers (the cards they name)."""
    try:
        outline = require_confirmed(book, chapter)
        built = build_context(book, chapter, arm="C")
    except InputError as exc:  # no (confirmed) outline, stale facts, over budget …: the memory's as-of state
        return _memory_pack(book, chapter, candidates, f"{exc.code}: {exc.what}"), None
    ctx = built.context
    _, state, failed = _memory(book, chapter)
    items = _numbered("fact", [f"{f.text}〔{f.basis}〕" for f in ctx.facts])
    items += _numbered("foreshadow", _ledger_lines(state, chapter, book.heading_unit))
    items += _prior_items(ctx.prior_chapters, book.heading_unit)
    items += _numbered("readback", [f"{e.purpose}：{e.text}" for e in ctx.readback if e.text])
    items += _numbered("style", [f"{e.purpose}：{e.text}" for e in ctx.style if e.text])
    items += _numbered("preference", ctx.preferences)
    texts = [p.text for p in ctx.prior_chapters] + [e.text for e in (*ctx.readback, *ctx.style) if e.text]
    note = f"the writer's context of chapter {chapter} (confirmed outline, arm C){failed}"
    return _pack(chapter, "writer_context", note, items, texts, built.manifest_sha256), outline


def _memory_pack(book: Book, chapter: int, candidates: Sequence[str], why: str) -> EvidencePack:
    cfg = book.config.writing
    cards, state, failed = _memory(book, chapter)
    facts: list[str] = []
    if cards is not None and state is not None and chapter >= 2:
        matcher = MentionMatcher(mention_names(cards))
        named = dict.fromkeys(m.card_id for text in candidates for m in matcher.find(text))
        for card_id in named:
            got, _ = card_facts(cards.cards[card_id], state, cards, chapter, book.heading_unit)  # not N or later
            facts += [f"{f.text}〔{basis(f.source, book.heading_unit)}〕" for f in got]
    ledger = _ledger_lines(state, chapter, book.heading_unit)
    chapters = {n: read_chapter_file(n, p) for n, p in book.chapter_paths().items() if n < chapter}
    numbers = sorted(chapters)
    window = numbers[len(numbers) - cfg.prior_chapters :] if cfg.prior_chapters else []
    budget = max(cfg.context_chars - sum(count_chars(t) for t in (*facts, *ledger)), 0)
    prior, _, _, _ = continuous_window(ChapterCache(chapters, window[0] if window else chapter), window, budget)
    items = _numbered("fact", facts) + _numbered("foreshadow", ledger) + _prior_items(prior, book.heading_unit)
    items += _numbered("preference", [p.text for p in load_book_rules(book).effective.preferences])
    note = f"the memory as of chapter {chapter - 1} (the cards the candidates name, the ledger, prior chapters) — {why}"
    return _pack(chapter, "memory", note + failed, items, [p.text for p in prior])
