"""The leak guard of the writer-visible text (卡只负责定位原文，writer 不读取卡语义; 隔离 Writer 看不到卡、检索
策略或轨迹).

Checked before anything could be sent. On the exact text the writer would read: no card id (unless it is
also one of the card's names), no card file name, no path into the book's state, no sha256. On the text
novelmuse itself adds (the template, labels, purposes, pointers — `generated_text`): no strategy word of the
reviewed vocabulary (BM25, 检索, 卡索引, arm A, …); the author's outline and the novel's own sentences may use
any word. A finding fails closed (CONTEXT_LEAK) and names the kind and count, never the token.
"""

from __future__ import annotations

import re
from functools import cache

from ..errors import FailedClosed
from ..memory import CardSet
from ..roles.writer import WRITE, Excerpt, FactLine, OutlineLine, PriorChapter, WriterContext, WriteRequest
from ._vocab import vocabulary

_WORDISH = re.compile(r"^[A-Za-z0-9_\-.]+$")
_HEX64 = re.compile(rb"[0-9a-f]{64}")  # scanned over the text's ASCII characters only (fast on Chinese text)


@cache
def _words(tokens: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern finding any ASCII-ish token as a whole word (not inside a longer id or word)."""
    if not tokens:
        return None
    alternatives = "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
    return re.compile(r"(?<![A-Za-z0-9_\-])(?:" + alternatives + r")(?![A-Za-z0-9_\-])")


def _count(tokens: list[str], text: str) -> int:
    """How many distinct `tokens` occur in `text` (ASCII-ish ones as whole words, others as substrings)."""
    # only the tokens that occur at all (a substring test, fast) go into the whole-word pattern
    wordish = tuple(sorted({t for t in tokens if _WORDISH.match(t) and t in text}))
    pattern = _words(wordish)
    found = set(pattern.findall(text)) if pattern is not None else set()
    return len(found) + sum(1 for t in set(tokens) if not _WORDISH.match(t) and t in text)


def generated_text(ctx: WriterContext) -> str:
    """What novelmuse itself adds to the writer's messages: the context rendered with every author- or
    novel-provided text blanked (titles, outline texts, fact sentences, chapter and excerpt text, rules)."""
    dot = "·"
    # model_construct: these are copies of validated values with some texts blanked (no validation needed; a
    # model_copy per line cost milliseconds on a large context, in every evidence round)
    blank = ctx.model_copy(
        update={
            "title": "",
            "goal": "",
            "entities": [],
            "forbidden": [],
            "preferences": [],
            "constraints": [OutlineLine.model_construct(id=c.id, text="") for c in ctx.constraints],
            "beats": [OutlineLine.model_construct(id=b.id, text="") for b in ctx.beats],
            "facts": [FactLine.model_construct(text="", basis=f.basis) for f in ctx.facts],
            "prior_chapters": [
                PriorChapter.model_construct(chapter=p.chapter, title="", text="", omitted_before=p.omitted_before)
                for p in ctx.prior_chapters
            ],
            "readback": [Excerpt.model_construct(purpose=e.purpose, text=dot) for e in ctx.readback],
            "style": [Excerpt.model_construct(purpose=e.purpose, text=dot) for e in ctx.style],
        }
    )
    return "\n".join(m.content for m in WRITE.render(WriteRequest(blank)).messages)  # the text only, no hashes


def writer_text_leaks(text: str, cards: CardSet, generated: str | None = None) -> dict[str, int]:
    """Kind → how many distinct hidden tokens of that kind occur (empty: clean): card ids, card files, book
    paths and sha256 values in `text`; strategy words in `generated` (novelmuse's own text; `text` when None)."""
    ids = [c.id for c in cards.cards.values() if c.id not in c.all_names]
    files = sorted({c.file for c in cards.cards.values()} | {c.file.rpartition("/")[2] for c in cards.cards.values()})
    own = text if generated is None else generated
    found = {
        "card_id": _count(ids, text),
        "card_file": sum(f in text for f in files),
        "book_path": sum(p in text for p in ("cards/", "outlines/", ".muse", ".yaml")),
        "strategy_word": sum(w in own for w in vocabulary().strategy_words),
        "sha256": len(set(_HEX64.findall(text.encode("ascii", "ignore")))),
    }
    return {k: v for k, v in found.items() if v}


def check_writer_text(ctx: WriterContext, text: str, cards: CardSet, where: str) -> None:
    """Fail closed (CONTEXT_LEAK) if the writer-visible `text` of `ctx` holds a card id, file name, path or
    sha256, or novelmuse's own part of it a strategy word."""
    found = writer_text_leaks(text, cards, generated_text(ctx))
    if found:
        summary = ", ".join(f"{kind}×{n}" for kind, n in sorted(found.items()))
        raise FailedClosed(
            "CONTEXT_LEAK",
            f"the writer-visible text contains hidden tokens ({summary}); nothing was built",
            where,
            "this is a novelmuse bug: cards only locate raw text, the writer never sees them",
        )
