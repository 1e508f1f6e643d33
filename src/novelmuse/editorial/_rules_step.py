"""Hard rules in the loop (seed 004 硬规则引擎): deterministic, run whether or not a model is configured.

length outside book.toml [chapters] = error, reported exactly as `muse check` reports it (the same function);
no step repairs it, so it stays an open issue;
forbidden (禁止) = error → a targeted rewrite of only the paragraphs containing the phrase;
fatigue (疲劳词) over its limit = warning → handed to the editor as reference;
preferences (偏好) → injected verbatim into the writer's prompt.

Counting has `str.count` semantics (non-overlapping, leftmost), the rules engine's definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..book import Book
from ..rules import EffectiveRuleSet, LengthLimits, LengthOut, check_length, load_book_rules, preferences_block
from ..text import count_chars, sha256_json, split_paragraphs
from ._models import FatigueHit, ForbiddenHit


@dataclass(frozen=True)
class RuleView:
    """The part of the effective rule set the loop needs, and the rule set's sha256."""

    forbidden: tuple[str, ...]
    fatigue: tuple[tuple[str, int], ...]
    preferences: str
    sha256: str
    length: LengthLimits = field(default_factory=LengthLimits)  # book.toml [chapters]: in the set's sha256

    @classmethod
    def of(cls, forbidden: list[str], fatigue: list[tuple[str, int]], preferences: str) -> RuleView:
        """A view built from plain lists (its sha256 covers exactly these rules)."""
        digest = sha256_json({"forbidden": forbidden, "fatigue": [list(f) for f in fatigue], "pref": preferences})
        return cls(tuple(forbidden), tuple(fatigue), preferences, digest)


def forbidden_hits(body: str, rules: RuleView) -> list[ForbiddenHit]:
    """Every forbidden phrase present in `body`, with its count and the paragraphs that contain it."""
    out: list[ForbiddenHit] = []
    paragraphs = split_paragraphs(body)
    for phrase in rules.forbidden:
        n = body.count(phrase)
        if n:
            where = [p.index for p in paragraphs if phrase in p.text]
            out.append(ForbiddenHit(phrase=phrase, count=n, paragraphs=where))
    return out


def fatigue_hits(body: str, rules: RuleView) -> list[FatigueHit]:
    """Fatigue phrases used more often than their limit (warnings: recorded, shown to the editor)."""
    out: list[FatigueHit] = []
    for phrase, limit in rules.fatigue:
        n = body.count(phrase)
        if n > limit:
            out.append(FatigueHit(phrase=phrase, limit=limit, actual=n))
    return out


def rule_view(effective: EffectiveRuleSet) -> RuleView:
    """The loop's view of the rules engine's effective set (defaults + rules.txt); same sha256."""
    return RuleView(
        forbidden=tuple(r.phrase for r in effective.rules if r.kind == "forbidden"),
        fatigue=tuple((r.phrase, r.limit) for r in effective.rules if r.kind == "fatigue" and r.limit is not None),
        preferences=preferences_block(effective),
        sha256=effective.sha256,
        length=effective.length,
    )


def length_outcome(text: str, rules: RuleView, chapter: int) -> LengthOut:
    """The chapter's length against book.toml [chapters], exactly as `muse check` computes it (`rules.check_length`
    over `text.count_chars`; the prologue, chapter 0, is not held to chapter limits)."""
    return check_length(count_chars(text), rules.length, prologue=chapter == 0)[0]


def load_rule_view(book: Book) -> RuleView:
    """The book's effective rules (RULES_SYNTAX / RULES_CONTRADICTION raise, exit 2, as in `muse check`)."""
    return rule_view(load_book_rules(book).effective)
