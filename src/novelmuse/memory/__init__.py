"""Story memory (issue 4): canon cards as of any chapter, fact cards, the foreshadow ledger, retrieval, sync.

- `load_cards` / `lint_cards`: the author's ``cards/*.yaml`` (errors name file and line).
- `replay(book)` → `MemoryState`: as-of card states (`as_of`, `card_as_of`) with source pointers, the
  foreshadow ledger (`active_foreshadows`), validated fact cards; rebuilt from files + recorded fact cards.
- `store_fact_card` / `validate_fact_card` / `current_fact_cards`: fact cards bound to chapter sha256 and receipt.
- `update_index`, `SearchIndex`, `card_mentions`: persisted, incremental BM25 and mention indexes.
- `memory_context` / `extraction_context`: the story so far as the reviewer / extractor are told it (with
  source pointers) — built here only.
- `extract_facts(session, book, n)`: the extractor role → stored, validated fact card; `sync(book, session)`.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._asof import CardIndex, CardState, RelationAt, Source, ValueAt
    from ._bm25 import naive_scores
    from ._cards import Card, CardFile, CardProblem, CardSet, CardType, lint_cards, load_cards
    from ._chunks import Chunk, chunk_body
    from ._context import (
        ContextLine,
        ExtractionContext,
        MemoryContext,
        extraction_context,
        memory_context,
        previous_ending,
        story_memory,
    )
    from ._extract import ExtractionPlan, FactCardResult, extract_facts, extract_request, plan_extraction
    from ._facts import FactCard, current_fact_cards, latest_fact_cards, locate_items, store_fact_card
    from ._index import (
        ChapterHit,
        ChapterMentions,
        IndexUpdate,
        MentionReport,
        SearchHit,
        SearchIndex,
        SearchResult,
        card_mentions,
        indexed_chapters,
        lexicon_sha256,
        mention_names,
        update_index,
    )
    from ._ledger import ActiveForeshadow, ActiveList, Foreshadow, Ledger, MemoryProblem
    from ._mentions import Mention, MentionMatcher, naive_mentions
    from ._newcard import new_card
    from ._replay import (
        DEAD_VALUES,
        STATUS_VOCABULARY,
        FactValidation,
        MemoryCursor,
        MemoryState,
        StatusVocabulary,
        active_foreshadows,
        replay,
        validate_fact_card,
    )
    from ._statecache import CardView, card_view
    from ._sync import SyncResult, sync
    from ._tokens import Tokenizer

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "DEAD_VALUES",
    "STATUS_VOCABULARY",
    "ActiveForeshadow",
    "ActiveList",
    "Card",
    "CardFile",
    "CardIndex",
    "CardProblem",
    "CardSet",
    "CardState",
    "CardType",
    "CardView",
    "ChapterHit",
    "ChapterMentions",
    "Chunk",
    "ContextLine",
    "ExtractionContext",
    "ExtractionPlan",
    "FactCard",
    "FactCardResult",
    "FactValidation",
    "Foreshadow",
    "IndexUpdate",
    "Ledger",
    "MemoryContext",
    "MemoryCursor",
    "MemoryProblem",
    "MemoryState",
    "Mention",
    "MentionMatcher",
    "MentionReport",
    "RelationAt",
    "SearchHit",
    "SearchIndex",
    "SearchResult",
    "Source",
    "StatusVocabulary",
    "SyncResult",
    "Tokenizer",
    "ValueAt",
    "active_foreshadows",
    "card_mentions",
    "card_view",
    "chunk_body",
    "current_fact_cards",
    "extract_facts",
    "extract_request",
    "extraction_context",
    "indexed_chapters",
    "latest_fact_cards",
    "lexicon_sha256",
    "lint_cards",
    "load_cards",
    "locate_items",
    "memory_context",
    "mention_names",
    "naive_mentions",
    "naive_scores",
    "new_card",
    "plan_extraction",
    "previous_ending",
    "replay",
    "store_fact_card",
    "story_memory",
    "sync",
    "update_index",
    "validate_fact_card",
]
