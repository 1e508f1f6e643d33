"""The persisted, incremental retrieval and mention indexes over chapter bodies (``.muse/muse.db``).

`update_index` compares every chapter file's sha256 with the one it was last indexed at (and the lexicon —
card names and aliases, chunk bound, tokenizer version — it was indexed with) and redoes only what changed:
chunks + jieba tokens (table `memory_chunks`) and mentions (`memory_mentions`). The BM25 model (bm25s) is
built from the stored tokens and cached under ``.muse/index/bm25`` keyed by a fingerprint of the indexed
chapters; search restricts hits to chapters before N, with the whole book's BM25 statistics (fast) or, with
`isolated`, with those of the chapters before N only (reproducible as the book grows).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..book import Book, Chapter, read_chapter_file
from ..errors import InputError
from ..store import transaction, utc_now
from ..text import sha256_json
from ._cards import Card, CardSet
from ._chunks import chunk_body
from ._mentions import MentionMatcher

if TYPE_CHECKING:  # bm25s loads lazily: every `muse` command would pay its import otherwise
    import bm25s
from ._tokens import TOKENIZER_VERSION, Tokenizer

_SEP = "\x01"


def lexicon_sha256(cards: CardSet, chunk_max_chars: int) -> str:
    """What the indexes depend on besides the chapter text: names → card ids, chunk bound, tokenizer."""
    names = sorted((n, cid) for n, cid in cards.by_name.items())
    return sha256_json({"names": names, "chunk_max_chars": chunk_max_chars, "tokenizer": TOKENIZER_VERSION})


def mention_names(cards: CardSet) -> dict[str, str]:
    """Every name and alias (not ids) → card id: the mention automaton's dictionary."""
    return {n: c.id for c in cards.cards.values() for n in c.all_names}


@dataclass
class IndexUpdate:
    """What `update_index` did: chapters by change kind, and the rows it wrote or deleted."""

    added: list[int] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    relexed: list[int] = field(default_factory=list)  # text unchanged, redone because the lexicon changed
    rows_written: int = 0
    rows_deleted: int = 0

    @property
    def reindexed(self) -> list[int]:
        """Every chapter whose index rows were redone."""
        return sorted(self.added + self.changed + self.relexed)


def _index_chapter(
    conn: sqlite3.Connection, ch: Chapter, tok: Tokenizer, matcher: MentionMatcher, max_chars: int, lex: str
) -> tuple[int, int]:
    chunks = chunk_body(ch.body, max_chars)
    rows = [(ch.number, c.idx, c.start, c.end, c.text, _SEP.join(tok.tokens(c.text))) for c in chunks]
    per_card: dict[str, list[list[object]]] = {}
    for m in matcher.find(ch.body):
        per_card.setdefault(m.card_id, []).append([m.start, m.end, m.name])
    deleted = conn.execute("DELETE FROM memory_chunks WHERE chapter = ?", (ch.number,)).rowcount
    deleted += conn.execute("DELETE FROM memory_mentions WHERE chapter = ?", (ch.number,)).rowcount
    conn.executemany("INSERT INTO memory_chunks VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.executemany(
        "INSERT INTO memory_mentions VALUES (?, ?, ?, ?)",
        [(cid, ch.number, len(offs), json.dumps(offs, ensure_ascii=False)) for cid, offs in per_card.items()],
    )
    conn.execute(
        "INSERT OR REPLACE INTO memory_chapters VALUES (?, ?, ?, ?, ?)",
        (ch.number, ch.sha256, lex, len(rows), utc_now()),
    )
    return len(rows) + len(per_card) + 1, deleted


def update_index(book: Book, cards: CardSet, *, progress: Callable[[int, int], None] | None = None) -> IndexUpdate:
    """Bring the chunk/token and mention indexes up to date with the chapter files (only what changed)."""
    conn = book.db
    max_chars = book.config.memory.chunk_max_chars
    lex = lexicon_sha256(cards, max_chars)
    indexed = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT number, sha256, lexicon_sha256 FROM memory_chapters")}
    disk = book.chapter_paths()
    up = IndexUpdate()
    todo: list[Chapter] = []
    for n in disk:
        ch = read_chapter_file(n, disk[n])  # one directory listing for the book, not one per chapter
        prev = indexed.get(n)
        if prev is None:
            up.added.append(n)
        elif prev[0] != ch.sha256:
            up.changed.append(n)
        elif prev[1] != lex:
            up.relexed.append(n)
        else:
            up.unchanged.append(n)
            continue
        todo.append(ch)
    up.removed = sorted(set(indexed) - set(disk))
    if not todo and not up.removed:
        return up
    tok = Tokenizer(cards.lexicon()) if todo else None
    matcher = MentionMatcher(mention_names(cards))
    with transaction(conn):
        for n in up.removed:
            for table, col in (
                ("memory_chunks", "chapter"),
                ("memory_mentions", "chapter"),
                ("memory_chapters", "number"),
            ):
                up.rows_deleted += conn.execute(f"DELETE FROM {table} WHERE {col} = ?", (n,)).rowcount
    for i, ch in enumerate(todo):
        assert tok is not None
        with transaction(conn):
            written, deleted = _index_chapter(conn, ch, tok, matcher, max_chars, lex)
        up.rows_written += written
        up.rows_deleted += deleted
        if progress is not None:
            progress(i + 1, len(todo))
    return up


@dataclass(frozen=True)
class SearchHit:
    """One retrieved chunk: chapter, [start, end) offsets into that chapter's body, BM25 score, text."""

    rank: int
    chapter: int
    start: int
    end: int
    score: float
    text: str


def _fingerprint(conn: sqlite3.Connection) -> str:
    rows = conn.execute("SELECT number, sha256, lexicon_sha256 FROM memory_chapters ORDER BY number").fetchall()
    return sha256_json([list(r) for r in rows])


class SearchIndex:
    """BM25 over the stored chunk tokens (loaded from the cache when the fingerprint matches)."""

    def __init__(self, book: Book, cards: CardSet):
        conn = book.db
        self._cards = cards
        self._tok: Tokenizer | None = None
        rows = conn.execute(
            "SELECT chapter, start, end, text, tokens FROM memory_chunks ORDER BY chapter, idx"
        ).fetchall()
        if not rows:
            raise InputError(
                "MEMORY_INDEX_EMPTY",
                "the retrieval index is empty",
                str(book.db_path),
                "add chapters, then `muse sync`",
            )
        self.chapters = np.array([r[0] for r in rows], dtype=np.int32)
        self.meta = [(r[0], r[1], r[2], r[3]) for r in rows]
        self._raw_tokens = [r[4] for r in rows]
        fp = _fingerprint(conn)
        cache = book.state_dir / "index" / "bm25"
        stamp = cache / "fingerprint.txt"
        model: bm25s.BM25 | None = None
        if stamp.is_file() and stamp.read_text() == fp:
            try:
                import bm25s

                model = bm25s.BM25.load(str(cache), show_progress=False)
                if int(model.scores["num_docs"]) != len(rows):  # a cache copied from elsewhere: not this index
                    model = None
            except (OSError, ValueError, KeyError, TypeError):
                model = None
        if model is None:
            model = self._build(len(rows))
            if model is not None:
                _save(model, cache, fp)
        self.model = model
        self.vocab: dict[str, int] = dict(model.vocab_dict) if model is not None else {}
        self._prefix_models: dict[int, tuple[bm25s.BM25 | None, dict[str, int]]] = {}

    def _build(self, n_docs: int) -> bm25s.BM25 | None:
        """A BM25 model over the first `n_docs` chunks; None when they hold no word at all (chapters of
        punctuation only: bm25s cannot index an empty vocabulary, and nothing could match anyway)."""
        corpus = [t.split(_SEP) if t else [] for t in self._raw_tokens[:n_docs]]
        if not any(corpus):
            return None
        import bm25s

        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        return model

    def _model_for(self, before: int | None, isolated: bool) -> tuple[bm25s.BM25 | None, dict[str, int], int]:
        """The model to score with, its vocabulary, and how many leading chunks it covers."""
        n_all = len(self.meta)
        if before is None or not isolated:
            return self.model, self.vocab, n_all
        n = int(np.searchsorted(self.chapters, before, side="left"))  # chunks are ordered by chapter
        if n == n_all:
            return self.model, self.vocab, n_all
        if n not in self._prefix_models:
            if n == 0:
                return self.model, {}, 0
            m = self._build(n)
            self._prefix_models[n] = (m, dict(m.vocab_dict) if m is not None else {})
        m, vocab = self._prefix_models[n]
        return m, vocab, n

    def tokens(self, query: str, *, before: int | None = None, isolated: bool = False) -> list[str]:
        """The query's tokens that occur in the index (same tokenizer and lexicon as the chunks)."""
        if self._tok is None:
            self._tok = Tokenizer(self._cards.lexicon())
        return self._tok.query_tokens(query, self._model_for(before, isolated)[1])

    def search(self, query: str, *, before: int | None = None, k: int = 10, isolated: bool = False) -> list[SearchHit]:
        """The k best chunks for `query` among chapters < `before` (all chapters when None).

        By default the BM25 statistics (IDF, average length) are those of the whole book and only the hits
        are restricted, which is fast. With `isolated`, scores use only the chunks before `before` — as if
        the later chapters did not exist — so results for a chapter never change when the book grows
        (what reproducible context assembly needs); the first query per `before` builds a model.
        """
        model, _, n = self._model_for(before, isolated)
        toks = self.tokens(query, before=before, isolated=isolated)
        if not toks or n == 0 or model is None:
            return []
        scores = np.asarray(model.get_scores(toks), dtype=np.float64)
        if scores.shape[0] > n:
            scores = scores[:n]
        if before is not None:
            scores = np.where(self.chapters[:n] < before, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        hits = []
        for rank, i in enumerate(top, 1):
            if scores[i] <= 0:
                break
            ch, start, end, text = self.meta[int(i)]
            hits.append(SearchHit(rank, ch, start, end, float(scores[i]), text))
        return hits


def _save(model: bm25s.BM25, cache: Path, fp: str) -> None:
    """Write the model beside the cache, then swap it in (a concurrent writer's copy is equally good)."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="bm25.", dir=cache.parent))
    try:
        model.save(str(tmp), show_progress=False)
        (tmp / "fingerprint.txt").write_text(fp)
        shutil.rmtree(cache, ignore_errors=True)
        tmp.rename(cache)
    except OSError:
        pass  # the cache is only an optimisation: the index is rebuilt from SQLite next time
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass(frozen=True)
class ChapterMentions:
    """Mentions of one card in one chapter: count and [start, end, name] spans into the body."""

    chapter: int
    count: int
    offsets: list[tuple[int, int, str]]


@dataclass(frozen=True)
class MentionReport:
    """Where a card is mentioned (chapters before `before`, or all), and when last."""

    card_id: str
    name: str
    names: list[str]
    before: int | None
    chapters: list[ChapterMentions]
    total: int
    last_chapter: int | None


def card_mentions(
    conn: sqlite3.Connection, card: Card, *, before: int | None = None, offsets: bool = True
) -> MentionReport:
    """Per-chapter mentions of `card` from the index (spans only with `offsets`, which costs JSON parsing)."""
    cols = "chapter, count, offsets" if offsets else "chapter, count, '[]'"
    sql = f"SELECT {cols} FROM memory_mentions WHERE card_id = ?"
    args: tuple[object, ...] = (card.id,)
    if before is not None:
        sql += " AND chapter < ?"
        args = (card.id, before)
    rows = conn.execute(sql + " ORDER BY chapter", args).fetchall()
    chapters = [ChapterMentions(r[0], r[1], [(a, b, n) for a, b, n in json.loads(r[2])]) for r in rows]
    return MentionReport(
        card.id,
        card.name,
        card.all_names,
        before,
        chapters,
        sum(c.count for c in chapters),
        chapters[-1].chapter if chapters else None,
    )


def index_state(conn: sqlite3.Connection) -> dict[int, str]:
    """Chapter number → the sha256 it was last indexed at."""
    return {r[0]: r[1] for r in conn.execute("SELECT number, sha256 FROM memory_chapters")}


def indexed_chapters(conn: sqlite3.Connection, *, before: int | None = None) -> dict[int, tuple[str, str]]:
    """Chapter → (sha256 of the file, lexicon sha256) as last indexed, for chapters < `before` (all when None).

    With `update_index` run first this is the book as it is; a frozen replay of chapter N fingerprints the
    index by these rows only, so chapters N and later never change what chapter N's context records."""
    sql = "SELECT number, sha256, lexicon_sha256 FROM memory_chapters"
    args: tuple[object, ...] = ()
    if before is not None:
        sql += " WHERE number < ?"
        args = (before,)
    return {r[0]: (r[1], r[2]) for r in conn.execute(sql + " ORDER BY number", args)}
