"""The deterministic half of the detector gate: what code can verify in a candidate without a model.

Prepared once per chapter (`HardCheck`: the rules compiled, the outline's constraints with their key names,
the characters unavailable as of N−1), then run on every draft of the chapter:

- **output contract**: the text has at least one paragraph;
- **length**: book.toml [chapters] min/max in `text.count_chars` characters (chapter 0, the prologue, is exempt);
- **forbidden phrases** (rules.txt 禁止): any occurrence blocks; **fatigue words** (疲劳词 and the AI-flavour
  defaults) over their limit only warn;
- **hard constraints located**: every hard constraint of the outline (events, results, foreshadow operations,
  hook, settings, time anchors) has *key names* — the cards it names (any name or alias; a new-setting
  declaration's own entities) and the outline's entity names written in it. A key name the candidate never
  writes (in any of its names) means the constraint cannot have happened in the text: the constraint fails,
  whatever a model says. A time anchor's `marker` must occur verbatim. These are necessary conditions only: a
  constraint passes when, in addition, the detector role gives it `pass` with a quote found exactly once in
  the candidate (the role's contract verifies the quote) — "located" means both;
- **declared facts located**: each declared fact's quote is found exactly once (after normalisation, ≥ 4
  characters);
- **dead or absent characters acting**: a character card dead as of N−1, or absent (every value of the card
  starts after N−1: not yet in the story), that the outline does not name in a new-setting declaration, must
  not speak: a mention followed by a speech verb and a quotation (the vocabulary's speech pattern) blocks,
  unless the mention is preceded by an addressee marker (谓关公曰 is someone speaking *to* 关公). Being named
  is fine. Acting beyond speech is judged from the fact extractor's events on the candidate (`_factcheck`).

Nothing here looks at beats, scene order, environment, action or dialogue of living characters: splitting or
reordering scenes and inventing what the outline leaves open never blocks (创作自由边界).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..book import FineOutline
from ..memory import CardSet, MemoryState, MentionMatcher, mention_names
from ..roles import chapter_quote
from ..roles.writer import DeclaredFact
from ..rules import CompiledRules, EffectiveRuleSet
from ..text import count_chars
from ._detector import DetectorItem
from ._plan import is_dead_value
from ._vocab import vocabulary

QUOTE_CONTEXT = 24  # characters shown around an offending occurrence


@dataclass(frozen=True)
class KeyName:
    """An entity a constraint names: the candidate must write one of `names` for the constraint to be possible."""

    label: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class ConstraintSpec:
    """One hard constraint of the outline and what the deterministic check requires of it."""

    id: str
    kind: str
    text: str
    keys: tuple[KeyName, ...]
    marker: str = ""


@dataclass(frozen=True)
class Unavailable:
    """A character card that may not act or speak in chapter N: dead or absent as of N−1."""

    card_id: str
    name: str
    why: Literal["dead", "absent"]
    since: int | None  # dead since / first appears in


def _snippet(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The occurrence with some context, cut to its line (a quote a person can find)."""
    lo = max(text.rfind("\n", 0, start) + 1, start - QUOTE_CONTEXT)
    hi = text.find("\n", end)
    hi = min(len(text) if hi < 0 else hi, end + QUOTE_CONTEXT)
    return text[lo:hi], lo, hi


def constraint_specs(
    outline: FineOutline, cards: CardSet, matcher: MentionMatcher | None = None
) -> list[ConstraintSpec]:
    """Every hard constraint of the outline with its key names (see the module docstring); `matcher` is the
    cards' mention automaton when the caller has it."""
    matcher = matcher or MentionMatcher(mention_names(cards))
    plain = [e for e in dict.fromkeys([*outline.entities, *outline.declared_entities()]) if cards.resolve(e) is None]
    specs: list[ConstraintSpec] = []
    for item in outline.items():
        if not item.hard:
            continue
        keys: dict[str, KeyName] = {}
        marker = ""
        if item.kind == "setting":
            setting = outline.new_settings[int(item.loc[1])]
            for name in setting.entities:
                card = cards.resolve(name)
                key = card.id if card is not None else f"new:{name}"
                keys.setdefault(key, KeyName(card.name, tuple(card.all_names)) if card else KeyName(name, (name,)))
        if item.kind == "anchor":
            marker = outline.time_anchors[int(item.loc[1])].marker.strip()
        for m in matcher.find(item.text):
            card = cards.cards[m.card_id]
            keys.setdefault(card.id, KeyName(card.name, tuple(card.all_names)))
        for name in plain:
            if name in item.text:
                keys.setdefault(f"new:{name}", KeyName(name, (name,)))
        specs.append(ConstraintSpec(item.id, item.kind, item.text, tuple(keys.values()), marker))
    return specs


def unavailable_characters(outline: FineOutline, cards: CardSet, state: MemoryState) -> list[Unavailable]:
    """Character cards dead or absent as of N−1 that the outline does not declare (see the module docstring)."""
    before = outline.chapter - 1
    out: list[Unavailable] = []
    for card in sorted(cards.cards.values(), key=lambda c: c.id):
        if card.type != "character" or outline.declares({card.id, *card.all_names}):
            continue
        status = state.index.value_at(card.id, "status", before)
        if status is not None and is_dead_value(status.value):
            out.append(Unavailable(card.id, card.name, "dead", status.since))
            continue
        starts = [e.start for es in card.attributes.values() for e in es]
        starts += [e.start for es in card.relations.values() for e in es]
        if starts and min(starts) > before:
            out.append(Unavailable(card.id, card.name, "absent", min(starts)))
    return out


_COMPILED: dict[str, CompiledRules] = {}
_COMPILED_MAX = 8


def compiled_rules(rules: EffectiveRuleSet) -> CompiledRules:
    """The rule set's automaton, built once per rule set (by its sha256) and shared: replay checks many drafts of
    many chapters against one book's rules."""
    found = _COMPILED.get(rules.sha256)
    if found is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        found = _COMPILED[rules.sha256] = CompiledRules(rules)
    return found


class HardCheck:
    """The deterministic detector part for one chapter, prepared once and run on each of its drafts."""

    def __init__(self, outline: FineOutline, cards: CardSet, state: MemoryState, rules: EffectiveRuleSet):
        self.chapter = outline.chapter
        self.rules = compiled_rules(rules)
        self.length = rules.length
        self.matcher = MentionMatcher(mention_names(cards))
        self.specs = constraint_specs(outline, cards, self.matcher)
        self.unavailable = {u.card_id: u for u in unavailable_characters(outline, cards, state)}
        vocab = vocabulary()
        self._speech = vocab.speech
        self._addressee = vocab.addressee_markers

    @property
    def constraint_ids(self) -> list[str]:
        """The hard constraints' ids, in outline order."""
        return [s.id for s in self.specs]

    def check(self, text: str, declared: Sequence[DeclaredFact]) -> tuple[list[DetectorItem], dict[str, DetectorItem]]:
        """The deterministic items of one candidate, and the constraints it already fails (id → item).

        A constraint not in the second result is not decided here: the detector role decides it."""
        items = self._contract(text) + self._length(text) + self._phrases(text)
        failed = self._constraints(text)
        items += self._declared(text, declared) + self._acts(text)
        return items, failed

    def _contract(self, text: str) -> list[DetectorItem]:
        ok = bool(text.strip())  # a paragraph is a line that is not blank: there is one iff the text is not blank
        return [
            DetectorItem(
                id="contract",
                check="contract",
                source="text",
                verdict="pass" if ok else "fail",
                severity="high",
                detail="the chapter text has paragraphs" if ok else "the draft has no chapter text",
            )
        ]

    def _length(self, text: str) -> list[DetectorItem]:
        lo, hi = self.length.min_chars, self.length.max_chars
        if self.chapter == 0 or (lo is None and hi is None):
            return []
        chars = count_chars(text)
        bad = (lo is not None and chars < lo) or (hi is not None and chars > hi)
        bounds = f"{lo if lo is not None else '–'}…{hi if hi is not None else '–'}"
        return [
            DetectorItem(
                id="length",
                check="length",
                source="rules",
                verdict="fail" if bad else "pass",
                severity="high",
                detail=f"{chars} characters; book.toml [chapters] allows {bounds}",
            )
        ]

    def _phrases(self, text: str) -> list[DetectorItem]:
        items = []
        for f in self.rules.check_texts([text])[0]:
            _para, start, _end = f.hits(1)[0]  # the first occurrence
            quote, lo, hi = _snippet(text, start, start + len(f.target))
            forbidden = f.rule == "forbidden"
            detail = (
                f"forbidden phrase {f.target!r} occurs {f.actual} time(s) ({f.origin})"
                if forbidden
                else f"fatigue word {f.target!r} occurs {f.actual} times, limit {f.limit} ({f.origin})"
            )
            items.append(
                DetectorItem(
                    id=f"{f.rule}:{f.target}",
                    check=f.rule,
                    source="rules",
                    verdict="fail",
                    severity="high" if forbidden else "warning",
                    detail=detail,
                    quote=quote,
                    start=lo,
                    end=hi,
                )
            )
        return items

    def _constraints(self, text: str) -> dict[str, DetectorItem]:
        failed: dict[str, DetectorItem] = {}
        for spec in self.specs:
            missing = [k.label for k in spec.keys if not any(n in text for n in k.names)]
            problems = [f"the text never names {'、'.join(missing)}"] if missing else []
            if spec.marker and spec.marker not in text:
                problems.append(f"the time marker {spec.marker!r} does not occur")
            if problems:
                failed[spec.id] = DetectorItem(
                    id=spec.id,
                    check="constraint",
                    source="outline",
                    verdict="fail",
                    severity="high",
                    detail=f"{spec.text} — {'; '.join(problems)}",
                )
        return failed

    def _declared(self, text: str, declared: Sequence[DeclaredFact]) -> list[DetectorItem]:
        if not declared:
            return []
        items = []
        for i, fact in enumerate(declared):
            m = chapter_quote(text, fact.quote)
            label = f"{fact.kind} of {fact.subject}: {fact.statement}"
            items.append(
                DetectorItem(
                    id=f"declared:{i}",
                    check="declared_fact",
                    source="text",
                    verdict="pass" if m.ok else "fail",
                    severity="high",
                    detail=label if m.ok else f"{label} — its quote is {m.status.replace('_', ' ')} in the text",
                    quote=fact.quote,
                    start=m.start if m.ok else None,
                    end=m.end if m.ok else None,
                )
            )
        return items

    def _acts(self, text: str) -> list[DetectorItem]:
        if not self.unavailable:
            return []
        hits: dict[str, list[tuple[int, int]]] = {}
        for m in self.matcher.find(text):
            if m.card_id not in self.unavailable:
                continue
            if m.start > 0 and text[m.start - 1] in self._addressee:
                continue
            if self._speech.match(text, m.end) is not None:
                hits.setdefault(m.card_id, []).append((m.start, m.end))
        items = []
        for card_id, spans in hits.items():
            u = self.unavailable[card_id]
            quote, lo, hi = _snippet(text, *spans[0])
            state = f"dead since chapter {u.since}" if u.why == "dead" else f"not in the story before chapter {u.since}"
            items.append(
                DetectorItem(
                    id=f"acts:{card_id}",
                    check="acts",
                    source="memory",
                    verdict="fail",
                    severity="high",
                    detail=f"{u.name} is {state} (as of chapter {self.chapter - 1}) but speaks {len(spans)} time(s); "
                    "the outline declares no return",
                    quote=quote,
                    start=lo,
                    end=hi,
                )
            )
        return items
