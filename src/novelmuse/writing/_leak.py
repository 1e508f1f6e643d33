"""The leak guard of the writer-visible text (卡只负责定位原文，writer 不读取卡语义; 隔离 Writer 看不到卡、检索
策略或轨迹).

Checked on the exact text the writer would read, before anything could be sent: no card id (unless it is
also one of the card's names), no card file name, no path into the book's state, no strategy word of the
reviewed vocabulary (BM25, 检索, 卡索引, arm A, …). A finding fails closed (CONTEXT_LEAK) and names the kind
and count, never the token.
"""

from __future__ import annotations

import re
from functools import cache

from ..errors import FailedClosed
from ..memory import CardSet
from ._vocab import vocabulary

_WORDISH = re.compile(r"^[A-Za-z0-9_\-.]+$")
_HEX64 = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


@cache
def _words(tokens: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern finding any ASCII-ish token as a whole word (not inside a longer id or word)."""
    if not tokens:
        return None
    alternatives = "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
    return re.compile(r"(?<![A-Za-z0-9_\-])(?:" + alternatives + r")(?![A-Za-z0-9_\-])")


def _count(tokens: list[str], text: str) -> int:
    """How many distinct `tokens` occur in `text` (ASCII-ish ones as whole words, others as substrings)."""
    wordish = tuple(sorted({t for t in tokens if _WORDISH.match(t)}))
    pattern = _words(wordish)
    found = set(pattern.findall(text)) if pattern is not None else set()
    return len(found) + sum(1 for t in set(tokens) if not _WORDISH.match(t) and t in text)


def writer_text_leaks(text: str, cards: CardSet) -> dict[str, int]:
    """Kind → how many distinct hidden tokens of that kind occur in `text` (empty: clean)."""
    ids = [c.id for c in cards.cards.values() if c.id not in c.all_names]
    files = sorted({c.file for c in cards.cards.values()} | {c.file.rpartition("/")[2] for c in cards.cards.values()})
    found = {
        "card_id": _count(ids, text),
        "card_file": sum(f in text for f in files),
        "book_path": sum(p in text for p in ("cards/", "outlines/", ".muse", ".yaml")),
        "strategy_word": sum(w in text for w in vocabulary().strategy_words),
        "sha256": len(set(_HEX64.findall(text))),
    }
    return {k: v for k, v in found.items() if v}


def check_writer_text(text: str, cards: CardSet, where: str) -> None:
    """Fail closed (CONTEXT_LEAK) if the writer-visible `text` holds a card id, file name, path or strategy word."""
    found = writer_text_leaks(text, cards)
    if found:
        summary = ", ".join(f"{kind}×{n}" for kind, n in sorted(found.items()))
        raise FailedClosed(
            "CONTEXT_LEAK",
            f"the writer-visible text contains hidden tokens ({summary}); nothing was built",
            where,
            "this is a novelmuse bug: cards only locate raw text, the writer never sees them",
        )
