"""Evidence rounds (补证环, seed 003): the writer asks for more, within fixed bounds, through its own arm.

    Writer 可返回结构化 evidenceRequests；最多 3 次，累计新增上下文不超过检索预算 30%。

- A request is structured: kind (``fact`` | ``style``), target (a character, thing or event), reason.
- At most `[writing] evidence_rounds` rounds per chapter (seed cap 3); a round beyond it answers nothing: each
  of its requests is recorded as refused. Only the first `MAX_REQUESTS_PER_ROUND` requests of a round are
  considered (the rest are refused, recorded).
- Every round answers with the same arm's retrieval strategy as the first build: C locates raw text through
  the card index (the card named in the target: where its state was set and its last appearance for a fact;
  its voice, action habits and ability in use for style), A searches the same BM25 index with the target as
  the query, B gives the card-only lines of a card not yet in its context. One span (or one card's lines) per
  request, never a span already in the context, never from the continuous window or chapter N and later.
- The cumulative added context — each served request's label and text, counted exactly with
  `text.count_chars` — may not exceed the evidence reserve, ⌊evidence_fraction × retrieval_chars⌋ (seed cap
  30 %): a request that would cross it is refused whole and recorded, never half-served; later, smaller
  requests of the same round may still fit.
- Each round is a new version of the manifest: the evidence so far (served, refused, not found — with spans,
  card and text sha256), the reserve's use, round k, and `previous_sha256` = the version it extends (a hash
  chain from the first build's manifest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..memory import Card, MentionMatcher, mention_names
from ..roles.writer import EvidenceRequest, Excerpt
from ..text import count_chars, sha256_hex
from ._arms import Candidate, CardLocator, SearchLocator, card_only_lines
from ._build import ContextBuild, revise_build
from ._manifest import EvidenceRef, SpanRef
from ._plan import EntityPlan, RetrievalPlan, Section, Slot, SlotKind, entity_plan

MAX_REQUESTS_PER_ROUND = 5
Status = Literal["served", "refused", "not_found"]
_KIND_WORD = {"fact": "事实", "style": "写法"}
_SlotSpec = tuple[SlotKind, Section, str]
_FACT_SLOTS: tuple[_SlotSpec, ...] = (("state", "readback", "现状由来"), ("last", "readback", "此前出场"))
_STYLE_SLOTS: tuple[_SlotSpec, ...] = (
    ("voice", "style", "说话方式"),
    ("action", "style", "举止"),
    ("ability", "style", "能力表现"),
)


@dataclass(frozen=True)
class EvidenceRound:
    """What one evidence round did: the new version of the build (a new manifest version even when nothing was
    served: the refusals are recorded in it) and every request's outcome."""

    round: int
    build: ContextBuild
    refs: list[EvidenceRef]

    @property
    def served(self) -> int:
        """How many requests added text."""
        return sum(1 for r in self.refs if r.status == "served")


def evidence_used(build: ContextBuild) -> int:
    """Characters of evidence already added to this build's context."""
    return sum(r.chars for r in build.manifest.evidence)


def evidence_budget(build: ContextBuild) -> int:
    """The evidence reserve of the build (⌊evidence_fraction × retrieval_chars⌋, from its manifest)."""
    return next(b.budget for b in build.manifest.blocks if b.name == "evidence_reserve")


def _overlaps(c: Candidate, taken: list[tuple[int, int, int]]) -> bool:
    return any(n == c.chapter and s < c.end and c.start < e for n, s, e in taken)


class _Answerer:
    """Finds the text of one request with the build's own arm strategy."""

    def __init__(self, build: ContextBuild):
        self.build = build
        self.taken = [(s.chapter, s.start, s.end) for s in build.manifest.spans]
        self.taken += [(s.chapter, s.start, s.end) for e in build.manifest.evidence for s in e.spans]
        self._matcher: MentionMatcher | None = None

    def _target_card(self, target: str) -> Card | None:
        """The card a request's target names: the whole target as a name, else the first card named in it."""
        cards = self.build.inputs.cards
        card = cards.resolve(target)
        if card is not None:
            return card
        if self._matcher is None:
            self._matcher = MentionMatcher(mention_names(cards))
        found = self._matcher.find(target)
        return cards.cards[found[0].card_id] if found else None

    def _entity(self, card: Card) -> EntityPlan:
        inputs = self.build.inputs
        known = next((e for e in self.build.plan.entities if e.card is not None and e.card.id == card.id), None)
        return known or entity_plan(inputs.book, card, inputs.state, self.build.chapter, self.build.plan.unit)

    def _pick(self, candidates: list[Candidate]) -> Candidate | None:
        return next((c for c in candidates if not _overlaps(c, self.taken)), None)

    def answer(self, req: EvidenceRequest) -> tuple[str, list[Candidate], Card | None, str]:
        """(text, spans, card, why) — empty text when nothing was found (`why` says why)."""
        inputs = self.build.inputs
        locator = inputs.locator
        if isinstance(locator, SearchLocator):
            query = req.target + (" 曰 道" if req.kind == "style" else "")
            pick = self._pick(locator.search(query).candidates)
            if pick is None:
                return "", [], None, "the search found no span outside the context"
            return inputs.cache.body(pick.chapter)[pick.start : pick.end], [pick], None, ""
        card = self._target_card(req.target)
        if card is None:
            return "", [], None, "the target names no known character or thing"
        entity = self._entity(card)
        if isinstance(locator, CardLocator):
            slots = _FACT_SLOTS if req.kind == "fact" else _STYLE_SLOTS
            for kind, section, word in slots:
                slot = Slot(f"evidence:{kind}:{card.id}", kind, section, f"{card.name}的{word}", entity=entity)
                pick = self._pick(locator.locate(slot).candidates)
                if pick is not None:
                    return inputs.cache.body(pick.chapter)[pick.start : pick.end], [pick], card, ""
            return "", [], card, f"no span of {card.name} outside the context"
        # arm B: the card's own lines, unless its context already holds them
        if any(e.card is not None and e.card.id == card.id for e in self.build.plan.entities):
            return "", [], card, f"the context already holds {card.name}'s card"
        plan = RetrievalPlan(self.build.chapter, [entity], [], [], self.build.plan.unit)
        lines = card_only_lines(plan, inputs.state)
        text = f"{lines[0][0]}：\n{lines[0][1]}" if lines and lines[0][1] else ""
        return text, [], card, "" if text else f"{card.name}'s card has nothing as of the chapter before"


def _ref(
    round_no: int, seq: int, req: EvidenceRequest, status: Status, detail: str, card: Card | None, **served: Any
) -> EvidenceRef:
    return EvidenceRef(
        round=round_no,
        seq=seq,
        kind=req.kind,
        target=req.target,
        reason=req.reason,
        status=status,
        detail=detail,
        purpose=served.get("purpose", ""),
        chars=served.get("chars", 0),
        spans=served.get("spans", []),
        card_id=card.id if card is not None else None,
        text_sha256=served.get("text_sha256"),
    )


def answer_requests(
    build: ContextBuild, requests: Sequence[EvidenceRequest], round_no: int, *, allow_requests: bool
) -> EvidenceRound:
    """Evidence round `round_no` for a draft's `requests` (see the module docstring): the build's next version
    (rendered with the request field when `allow_requests`, i.e. when another round may follow)."""
    cfg = build.inputs.book.config.writing
    budget = evidence_budget(build)
    used = evidence_used(build)
    answerer = _Answerer(build)
    refs: list[EvidenceRef] = []
    readback = list(build.context.readback)
    style = list(build.context.style)
    for seq, req in enumerate(requests):
        refusal = ""
        if round_no > cfg.evidence_rounds:
            refusal = f"the cap of {cfg.evidence_rounds} evidence round(s) per chapter is reached"
        elif seq >= MAX_REQUESTS_PER_ROUND:
            refusal = f"only the first {MAX_REQUESTS_PER_ROUND} requests of a round are answered"
        if refusal:
            refs.append(_ref(round_no, seq, req, "refused", refusal, None))
            continue
        text, picks, card, why = answerer.answer(req)
        if not text:
            refs.append(_ref(round_no, seq, req, "not_found", why, card))
            continue
        purpose = f"补充材料 {round_no}-{seq + 1}（{_KIND_WORD[req.kind]}）"
        cost = count_chars(purpose) + count_chars(text)
        if used + cost > budget:
            over = f"{cost} characters would bring the evidence to {used + cost} > the reserve of {budget}"
            refs.append(_ref(round_no, seq, req, "refused", over, card))
            continue
        used += cost
        spans = [
            SpanRef(
                slot=f"evidence:{round_no}-{seq + 1}",
                section="readback" if req.kind == "fact" else "style",
                purpose=purpose,
                chapter=c.chapter,
                start=c.start,
                end=c.end,
                chars=count_chars(text),
                sha256=sha256_hex(text),
                located_by=c.located_by,
            )
            for c in picks
        ]
        answerer.taken += [(c.chapter, c.start, c.end) for c in picks]
        (readback if req.kind == "fact" else style).append(Excerpt(purpose=purpose, text=text))
        detail = f"{cost} characters ({used} of {budget} used)"
        refs.append(
            _ref(
                round_no,
                seq,
                req,
                "served",
                detail,
                card,
                purpose=purpose,
                chars=cost,
                spans=spans,
                text_sha256=sha256_hex(text),
            )
        )
    context = build.context.model_copy(update={"readback": readback, "style": style})
    blocks = [b.model_copy(update={"used": used}) if b.name == "evidence_reserve" else b for b in build.manifest.blocks]
    manifest = build.manifest.model_copy(
        update={
            "round": round_no,
            "previous_sha256": build.manifest_sha256,
            "evidence": [*build.manifest.evidence, *refs],
            "blocks": blocks,
        }
    )
    return EvidenceRound(round_no, revise_build(build, context, manifest, allow_requests=allow_requests), refs)
