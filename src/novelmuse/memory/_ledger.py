"""The foreshadow ledger (伏笔账本, seed 004): plant 建账 / advance 强化 / resolve 销账.

Entries come from author-declared operations in fine outlines (so the ledger works without a model) and
from accepted fact cards, replayed in chapter order. `active(as_of=N)` lists every item planted by N and
not resolved by N, with its age and overdue flag.

Overdue rule: an item with a declared payoff chapter P is overdue when N > P. An item without one is
overdue when its age (N − planted chapter) exceeds `memory.overdue_default_age`; when that setting is not
given (the default), such items are never flagged overdue — the flag is reported as ``overdue_rule:
"none"`` so a missing payoff never reads as "on time" by accident.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._asof import Source

Origin = Literal["outline", "fact"]
LedgerStatus = Literal["unknown", "active", "resolved"]


@dataclass(frozen=True)
class MemoryProblem:
    """A rejected fact-card item or a problem in an outline's foreshadow operations."""

    code: str
    chapter: int
    origin: Origin
    item: str  # e.g. "foreshadows[3]" or "outlines/0002.yaml:12"
    detail: str


@dataclass
class Foreshadow:
    """One ledger entry and its history."""

    id: str
    description: str
    planted_chapter: int
    origin: Origin
    source: Source
    payoff_chapter: int | None = None
    advanced: list[int] = field(default_factory=list)
    resolved_chapter: int | None = None
    resolved_source: Source | None = None


@dataclass(frozen=True)
class ActiveForeshadow:
    """A planted, unresolved item as of a chapter."""

    id: str
    description: str
    planted_chapter: int
    last_advanced_chapter: int | None
    age: int
    payoff_chapter: int | None
    overdue: bool
    overdue_rule: Literal["payoff", "default_age", "none"]
    origin: Origin
    source: Source


@dataclass(frozen=True)
class ActiveList:
    """The active items (possibly limited) and how many were left out — never truncated silently."""

    as_of: int
    items: list[ActiveForeshadow]
    total: int
    left_out: int


class Ledger:
    """The foreshadow ledger, built by replaying chapters in order."""

    def __init__(self) -> None:
        self.items: dict[str, Foreshadow] = {}

    def status(self, fid: str) -> LedgerStatus:
        """The item's status after everything replayed so far."""
        item = self.items.get(fid)
        if item is None:
            return "unknown"
        return "resolved" if item.resolved_chapter is not None else "active"

    def plant(self, item: Foreshadow) -> None:
        """建账: open an entry (the caller checked the id is new)."""
        self.items[item.id] = item

    def advance(self, fid: str, chapter: int) -> None:
        """强化: record the chapter that advanced an active item."""
        adv = self.items[fid].advanced
        if chapter not in adv:
            adv.append(chapter)

    def resolve(self, fid: str, chapter: int, source: Source) -> None:
        """销账: close an active item."""
        item = self.items[fid]
        item.resolved_chapter = chapter
        item.resolved_source = source

    def active(
        self,
        as_of: int,
        *,
        overdue_default_age: int | None = None,
        limit: int | None = None,
        overdue_only: bool = False,
    ) -> ActiveList:
        """Every item planted by `as_of` and unresolved at it (only overdue ones with `overdue_only`), oldest
        first; with `limit`, `left_out` says how many were not returned."""
        out: list[ActiveForeshadow] = []
        for item in self.items.values():
            if item.planted_chapter > as_of:
                continue
            if item.resolved_chapter is not None and item.resolved_chapter <= as_of:
                continue
            adv = [c for c in item.advanced if c <= as_of]
            age = as_of - item.planted_chapter
            rule: Literal["payoff", "default_age", "none"]
            if item.payoff_chapter is not None:
                rule, overdue = "payoff", as_of > item.payoff_chapter
            elif overdue_default_age is not None:
                rule, overdue = "default_age", age > overdue_default_age
            else:
                rule, overdue = "none", False
            out.append(
                ActiveForeshadow(
                    item.id,
                    item.description,
                    item.planted_chapter,
                    max(adv) if adv else None,
                    age,
                    item.payoff_chapter,
                    overdue,
                    rule,
                    item.origin,
                    item.source,
                )
            )
        if overdue_only:
            out = [a for a in out if a.overdue]
        out.sort(key=lambda a: (a.planted_chapter, a.id))
        total = len(out)
        if limit is not None and limit < total:
            out = out[:limit]
        return ActiveList(as_of, out, total, total - len(out))
