"""The deterministic manifest (确定性 manifest) of one WriterContext.

Everything the context was built from, each with its sha256 and pointer (chapter, offsets, file:line,
receipt id); the budget and use of every block; every cut and every candidate span not selected; the
rules / prompt / schema / rubric / vocabulary hashes; the index fingerprint; the arm. No timestamp and no
absolute path inside: the canonical JSON of the body is what `sha256` hashes, so building the same chapter
from the same inputs gives the same bytes on any machine, and a book with chapters N…M gives chapter N
exactly the manifest a book ending at N−1 gives.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from ..memory import Source
from ..text import canonical_json, sha256_hex

MANIFEST_SCHEMA_VERSION = "context-manifest-v2"
Arm = Literal["A", "B", "C"]
ARMS: tuple[Arm, ...] = ("A", "B", "C")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Pointer(_M):
    """Where an input came from: an author's file (file:line), a chapter span, a fact card and its receipt."""

    kind: Literal["author", "fact", "chapter", "outline"]
    file: str | None = None
    line: int | None = None
    chapter: int | None = None
    start: int | None = None
    end: int | None = None
    receipt_id: str | None = None
    fact_card_id: str | None = None

    @classmethod
    def of(cls, source: Source) -> Pointer:
        """The pointer of a memory source."""
        return cls(
            kind=source.kind,
            file=source.file or None,
            line=source.line or None,
            chapter=source.chapter,
            start=source.start,
            end=source.end,
            receipt_id=source.receipt_id,
            fact_card_id=source.fact_card_id,
        )


class OutlineRef(_M):
    path: str
    sha256: str  # the file's bytes, equal to the confirmed sha256
    version: int
    scene_type: str | None
    constraint_ids: list[str]


class ChapterRef(_M):
    chapter: int
    sha256: str  # of the chapter file's bytes


class FactCardRef(_M):
    chapter: int
    fact_card_id: str
    chapter_sha256: str
    receipt_id: str | None


class CardRef(_M):
    """A card the outline concerns, by the sha256 of its state as of N−1 (values, relations, sources)."""

    card_id: str
    file: str
    state_sha256: str


class FactRef(_M):
    """One neutral fact line given to the writer: its text's sha256 and the pointer behind it."""

    text_sha256: str
    basis: str
    pointer: Pointer


class WithheldRef(_M):
    """A card value left out because its source lies in chapter ≥ N (never shown to the writer)."""

    card_id: str
    key: str
    since: int
    source_chapter: int


class PlanEntity(_M):
    name: str
    card_id: str | None
    last_seen: int | None
    last_changed: int | None
    dead: bool
    declared: bool


class PlanForeshadow(_M):
    op: str
    id: str
    planted_chapter: int
    payoff_chapter: int | None
    pointer: Pointer


class Block(_M):
    """A block of the context: protected (never cut: over budget is an error) or reducible, its budget and use."""

    name: Literal["outline", "facts", "rules", "prior_chapters", "retrieval", "evidence_reserve"]
    protected: bool
    budget: int
    used: int


class PriorRef(_M):
    """A chapter of the continuous window: how much of it was kept (its last paragraphs)."""

    chapter: int
    sha256: str
    paragraphs: int
    kept_from_paragraph: int  # == paragraphs when the chapter was cut entirely
    kept_start: int  # offset into the body where the kept text starts
    chars: int
    kept_chars: int


class SpanRef(_M):
    """A selected raw-text span: its slot, purpose, where it is, what it cost and how it was located."""

    slot: str
    section: Literal["readback", "style"]
    purpose: str
    chapter: int
    start: int
    end: int
    chars: int
    sha256: str
    located_by: str


class SlotRef(_M):
    """A slot of the plan and what became of it."""

    slot: str
    section: Literal["readback", "style"]
    purpose: str
    filled: bool
    considered: int  # candidate spans looked at (each selected or listed in `unselected`)
    unexamined: int  # further candidates counted but not looked at (e.g. older mentions)
    in_window: int  # candidates in the continuous window (the writer has that text already)


class Cut(_M):
    """Text the budget removed: a prior chapter's leading paragraphs, a trimmed or dropped excerpt."""

    block: Literal["prior_chapters", "retrieval"]
    slot: str | None = None
    chapter: int
    start: int
    end: int
    chars: int
    reason: str


class Unselected(_M):
    """A candidate span not selected, and why."""

    slot: str
    chapter: int
    start: int
    end: int
    reason: str
    located_by: str


class Hashes(_M):
    rules_sha256: str
    prompt_sha256: str
    schema_sha256: str
    final_schema_sha256: str
    context_schema: str
    rubric_id: str
    rubric_version: int
    rubric_sha256: str
    status_vocabulary_sha256: str
    context_vocabulary_sha256: str


class IndexRef(_M):
    """The retrieval and mention indexes as the context saw them: chapters < N only."""

    fingerprint: str
    lexicon_sha256: str
    chapters: int


class EvidenceRef(_M):
    """One evidence request of the writer (补证) and what became of it: served (the text added, where it came
    from), refused (it would have crossed the evidence budget: nothing of it was added) or not found."""

    round: int  # the evidence round that answered it (1…)
    seq: int  # its position in the draft's request list
    kind: Literal["fact", "style"]
    target: str
    reason: str
    status: Literal["served", "refused", "not_found"]
    detail: str
    purpose: str  # the label the writer reads above the added text ("" unless served)
    chars: int  # characters added to the context (label + text; 0 unless served)
    spans: list[SpanRef]  # the raw text served (arms A and C)
    card_id: str | None = None  # the card the request was located through (arms C and B)
    text_sha256: str | None = None  # of the text added


class ArmChoiceRef(_M):
    """How `muse write` chose the context arm: promoted by a Gate B receipt of the writer configuration, the
    baseline because none promotes the candidate, or forced by ``--arm`` (recorded in the manifest, seed 003)."""

    forced: bool
    promoted: Arm  # what promotion chose (equal to the arm unless forced)
    receipt_seq: int | None  # the Gate B receipt that promoted the candidate arm
    writer_config_sha256: str
    reason: str


class Manifest(_M):
    """The manifest of one chapter's context for one arm (the hashed body; see `manifest_sha256`).

    Round 0 is the context as built; each evidence round (补证) is a new version of the manifest: the same
    inputs plus the evidence served so far, `previous_sha256` naming the version it extends (a hash chain)."""

    schema_version: str = MANIFEST_SCHEMA_VERSION
    chapter: int
    arm: Arm
    outline: OutlineRef
    config: dict[str, int | float | str]
    hashes: Hashes
    index: IndexRef
    chapters_before: list[ChapterRef]
    fact_cards: list[FactCardRef]
    facts_missing: list[int]
    cards: list[CardRef]
    withheld: list[WithheldRef]
    entities: list[PlanEntity]
    foreshadows: list[PlanForeshadow]
    facts: list[FactRef]
    settings_omitted: int = 0  # settings lines naming the chapter's characters left out by the cap (absent when 0)
    blocks: list[Block]
    prior_chapters: list[PriorRef]
    slots: list[SlotRef]
    spans: list[SpanRef]
    cuts: list[Cut]
    unselected: list[Unselected]
    context_sha256: str
    frame_sha256: str  # equal for arms A and C: their contexts differ only in excerpt text
    messages_sha256: str
    round: int = 0  # 0: as built; k: after evidence round k
    previous_sha256: str | None = None  # the manifest of round k − 1
    evidence: list[EvidenceRef] = []
    arm_choice: ArmChoiceRef | None = None  # `muse write` only: why this arm (absent from the body when None)

    @model_serializer(mode="wrap")
    def _without_absent_choice(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A build that chose no arm (every context but `muse write`'s) has no `arm_choice` key at all, and one
        that left no settings line out no `settings_omitted`, so its body and sha256 are what they always were."""
        body: dict[str, Any] = handler(self)
        if body.get("arm_choice") is None:
            body.pop("arm_choice", None)
        if not body.get("settings_omitted"):
            body.pop("settings_omitted", None)
        return body

    def canonical(self) -> str:
        """The hashed body: canonical JSON (sorted keys, no whitespace, UTF-8)."""
        return canonical_json(self.model_dump(mode="json"))

    def sha256(self) -> str:
        """The manifest's content address."""
        return sha256_hex(self.canonical())

    def pointer_chapters(self) -> list[int]:
        """Every chapter any input of this manifest points into (the FUTURE_LEAK guard checks them)."""
        out = [c.chapter for c in self.chapters_before] + [f.chapter for f in self.fact_cards]
        out += [p.chapter for p in self.prior_chapters] + [s.chapter for s in self.spans]
        out += [f.pointer.chapter for f in self.facts if f.pointer.chapter is not None]
        out += [f.planted_chapter for f in self.foreshadows]
        out += [s.chapter for e in self.evidence for s in e.spans]
        return out
