"""The persisted, incremental retrieval and mention indexes over chapters (``.muse/muse.db``).

`update_index` finds the chapter files that changed (size/mtime/ctime/inode first, sha256 only of the files
whose stat moved — `FileHashes`) and redoes only those: chunks + tokens (`memory_chunks`, the heading in
`memory_chapters`) and mentions (`memory_mentions`). When card names or aliases change, it redoes the mentions,
and the tokens of the chunks, of exactly the chapters that contain a changed name (names are whole tokens, see
`_tokens`). The BM25 postings (`_bm25`) are rebuilt from the stored tokens only when some tokens changed.

`SearchIndex` reads only the query's postings: chapters before N with the whole book's statistics (fast) or,
with `isolated`, with those of the chapters before N only (reproducible as the book grows) — both without
rebuilding anything. Chapters are ranked as whole documents (`_bm25.chapter_scores`) so a query for an episode
ranks the chapter that tells it, not the chapter with the single best short chunk.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from ..book import Book, Chapter, read_chapter_file
from ..errors import InputError
from ..store import transaction, utc_now
from ..text import sha256_json
from ._bm25 import (
    HEADING,
    SEP,
    Docs,
    chapter_scores,
    fetch_postings,
    load_docs,
    rebuild_postings,
    score_postings,
    split_tokens,
)
from ._cards import Card, CardSet
from ._chunks import chunk_body
from ._files import FileHashes
from ._mentions import MentionMatcher
from ._tokens import Tokenizer, tokenizer_version

Progress = Callable[[str, int, int], None]  # (step, done, total)


def lexicon_sha256(cards: CardSet, chunk_max_chars: int) -> str:
    """What a chapter's index rows depend on besides its text: names and aliases → card ids, chunk bound,
    tokenizer (each chapter's row records the one it is current with: `indexed_chapters`)."""
    names = sorted((n, cid) for n, cid in cards.by_name.items())
    return sha256_json({"names": names, "chunk_max_chars": chunk_max_chars, "tokenizer": tokenizer_version()})


def build_sha256(chunk_max_chars: int) -> str:
    """What every chapter's index rows depend on besides its text and the card names (memory_meta 'build'):
    a change redoes every chapter."""
    return sha256_json({"chunk_max_chars": chunk_max_chars, "tokenizer": tokenizer_version()})


def mention_names(cards: CardSet) -> dict[str, str]:
    """Every name and alias (not ids) → card id: the mention automaton's dictionary (the first card to claim a
    name keeps it, as `CardSet.resolve` does)."""
    out: dict[str, str] = {}
    for c in cards.cards.values():
        for n in c.all_names:
            out.setdefault(n, c.id)
    return out


@dataclass
class IndexUpdate:
    """What `update_index` did: chapters by change kind, and the rows it wrote or deleted."""

    added: list[int] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    relexed: list[int] = field(default_factory=list)  # text unchanged, redone because names in it changed
    rows_written: int = 0
    rows_deleted: int = 0
    postings_rebuilt: bool = False

    @property
    def reindexed(self) -> list[int]:
        """Every chapter whose index rows were redone."""
        return sorted(self.added + self.changed + self.relexed)


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM memory_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO memory_meta VALUES (?, ?)", (key, value))


def _bump_generation(conn: sqlite3.Connection) -> None:
    _set_meta(conn, "generation", str(int(_meta(conn, "generation") or 0) + 1))


def _mention_rows(matcher: MentionMatcher, number: int, body: str) -> list[tuple[str, int, int, str, bytes]]:
    per_card: dict[str, tuple[dict[str, int], array[int]]] = {}
    for m in matcher.find(body):
        by_name, spans = per_card.setdefault(m.card_id, ({}, array("i")))
        k = list(by_name).index(m.name) if m.name in by_name else len(by_name)
        by_name[m.name] = by_name.get(m.name, 0) + 1
        spans.extend((m.start, m.end, k))
    return [
        (cid, number, len(spans) // 3, json.dumps(by_name, ensure_ascii=False), spans.tobytes())
        for cid, (by_name, spans) in per_card.items()
    ]


def _write_mentions(conn: sqlite3.Connection, matcher: MentionMatcher, ch: Chapter) -> tuple[int, int]:
    deleted = conn.execute("DELETE FROM memory_mentions WHERE chapter = ?", (ch.number,)).rowcount
    rows = _mention_rows(matcher, ch.number, ch.body)
    conn.executemany("INSERT INTO memory_mentions VALUES (?, ?, ?, ?, ?)", rows)
    return len(rows), deleted


def _index_chapter(
    conn: sqlite3.Connection, ch: Chapter, tok: Tokenizer, matcher: MentionMatcher, max_chars: int, lex: str
) -> tuple[int, int]:
    chunks = chunk_body(ch.body, max_chars)
    rows = [(ch.number, c.idx, c.start, c.end, c.text, SEP.join(tok.tokens(c.text))) for c in chunks]
    deleted = conn.execute("DELETE FROM memory_chunks WHERE chapter = ?", (ch.number,)).rowcount
    conn.executemany("INSERT INTO memory_chunks VALUES (?, ?, ?, ?, ?, ?)", rows)
    written, gone = _write_mentions(conn, matcher, ch)
    conn.execute(
        "INSERT OR REPLACE INTO memory_chapters VALUES (?, ?, ?, ?, ?, ?, ?)",
        (ch.number, ch.sha256, lex, len(rows), utc_now(), ch.heading, SEP.join(tok.tokens(ch.heading))),
    )
    _bump_generation(conn)
    return len(rows) + written + 1, deleted + gone


def _relex_chapter(
    conn: sqlite3.Connection, ch: Chapter, tok: Tokenizer, matcher: MentionMatcher, changed: MentionMatcher
) -> tuple[int, int]:
    """Redo the mentions of a chapter whose text did not change, and the tokens of its chunks (and heading) that
    contain a changed name — the others cannot change (names are split off before segmentation)."""
    written, deleted = _write_mentions(conn, matcher, ch)
    moved = False
    for idx, text, old in conn.execute(
        "SELECT idx, text, tokens FROM memory_chunks WHERE chapter = ?", (ch.number,)
    ).fetchall():
        if changed.find(text):
            new = SEP.join(tok.tokens(text))
            if new != old:
                conn.execute("UPDATE memory_chunks SET tokens = ? WHERE chapter = ? AND idx = ?", (new, ch.number, idx))
                written += 1
                moved = True
    if changed.find(ch.heading):
        new = SEP.join(tok.tokens(ch.heading))
        n = conn.execute(
            "UPDATE memory_chapters SET heading_tokens = ? WHERE number = ? AND heading_tokens != ?",
            (new, ch.number, new),
        ).rowcount
        written += n
        moved = moved or n > 0
    if moved:
        _bump_generation(conn)
    return written, deleted


def update_index(
    book: Book,
    cards: CardSet,
    *,
    progress: Callable[[int, int], None] | None = None,
    steps: Progress | None = None,
    dry_run: bool = False,
) -> IndexUpdate:
    """Bring the chunk/token, mention and BM25 indexes up to date with the chapter files (only what changed);
    with `dry_run`, only say what would be redone (nothing is written). `progress(done, total)` hears the
    chapters being indexed; `steps(step, done, total)` hears every step ("indexing", "search index").

    Each chapter's row records the `lexicon_sha256` it is current with (`indexed_chapters`): after an update
    every row has the current one, also when only names it does not write changed (then only the row moves)."""
    conn = book.db
    max_chars = book.config.memory.chunk_max_chars
    build = build_sha256(max_chars)
    lex = lexicon_sha256(cards, max_chars)
    names = mention_names(cards)
    names_json = json.dumps(sorted(names.items()), ensure_ascii=False)
    old_names_json = _meta(conn, "names")
    rebuild_all = _meta(conn, "build") != build  # a new tokenizer or chunk bound: every chapter is redone
    indexed = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT number, sha256, lexicon_sha256 FROM memory_chapters")}
    hashes = FileHashes(conn, book.root)
    disk = book.chapter_paths()
    up = IndexUpdate()
    todo: list[Chapter] = []
    for n, path in disk.items():
        prev = indexed.get(n)
        if prev is not None and not rebuild_all and hashes.known(path) == prev[0]:
            up.unchanged.append(n)
            continue
        st = path.stat()
        ch = read_chapter_file(n, path)
        hashes.record(path, st, ch.sha256)
        if prev is None:
            up.added.append(n)
        elif prev[0] != ch.sha256:
            up.changed.append(n)
        elif rebuild_all:
            up.relexed.append(n)
        else:
            up.unchanged.append(n)
            continue
        todo.append(ch)
    up.removed = sorted(set(indexed) - set(disk))
    relex: list[Chapter] = []
    changed_names: MentionMatcher | None = None
    if old_names_json != names_json and up.unchanged:
        old = dict(json.loads(old_names_json)) if old_names_json else {}
        diff = {n for n in set(old) | set(names) if old.get(n) != names.get(n)}
        changed_names = MentionMatcher({n: n for n in diff})
        for n in up.unchanged:
            ch = read_chapter_file(n, disk[n])
            if changed_names.find(ch.heading) or changed_names.find(ch.body):
                relex.append(ch)
        up.relexed += [ch.number for ch in relex]
        up.unchanged = sorted(set(up.unchanged) - set(up.relexed))
    if dry_run:
        return up

    def report(step: str, done: int, total: int) -> None:
        if steps is not None:
            steps(step, done, total)
        elif progress is not None and step == "indexing":
            progress(done, total)

    hashes.save()
    stale_rows = any(lx != lex for n, (_, lx) in indexed.items() if n in disk)
    if not todo and not relex and not up.removed and not stale_rows and old_names_json == names_json:
        up.postings_rebuilt = ensure_postings(conn, progress=report)
        return up
    matcher = MentionMatcher(names)
    tok = Tokenizer(cards.lexicon())

    def finish() -> None:  # once every chapter is redone (a crash before this redoes them): names, rows, build
        _set_meta(conn, "names", names_json)
        _set_meta(conn, "build", build)
        conn.execute("UPDATE memory_chapters SET lexicon_sha256 = ? WHERE lexicon_sha256 != ?", (lex, lex))

    with transaction(conn):
        for n in up.removed:
            for table, col in (
                ("memory_chunks", "chapter"),
                ("memory_mentions", "chapter"),
                ("memory_chapters", "number"),
            ):
                up.rows_deleted += conn.execute(f"DELETE FROM {table} WHERE {col} = ?", (n,)).rowcount
        if up.removed:
            _bump_generation(conn)
        if not todo and not relex:
            finish()
    total = len(todo) + len(relex)
    for i, ch in enumerate(todo + relex):
        with transaction(conn):
            if i < len(todo):
                written, deleted = _index_chapter(conn, ch, tok, matcher, max_chars, lex)
            else:
                assert changed_names is not None
                written, deleted = _relex_chapter(conn, ch, tok, matcher, changed_names)
            if i == total - 1:
                finish()
        up.rows_written += written
        up.rows_deleted += deleted
        report("indexing", i + 1, total)
    up.postings_rebuilt = ensure_postings(conn, progress=report)
    return up


def ensure_postings(conn: sqlite3.Connection, *, progress: Progress | None = None) -> bool:
    """Rebuild the BM25 postings when the stored tokens moved since they were built; True if rebuilt."""
    generation = _meta(conn, "generation") or "0"
    if _meta(conn, "postings_generation") == generation:
        return False
    rebuild_postings(conn, progress=(lambda i, n: progress("search index", i, n)) if progress else None)
    with transaction(conn):
        _set_meta(conn, "postings_generation", generation)
    return True


@dataclass(frozen=True)
class SearchHit:
    """One retrieved chunk: its rank among the k best chunks (0 for a chapter's best chunk outside them), chapter,
    [start, end) offsets into that chapter's body, BM25 score, text, and its chapter's aggregate score and rank
    among the chapters (see `ChapterHit`)."""

    rank: int
    chapter: int
    start: int
    end: int
    score: float
    text: str
    chapter_score: float = 0.0
    chapter_rank: int = 0


@dataclass(frozen=True)
class ChapterHit:
    """One chapter's aggregate: its BM25 score as one document (heading and all its chunks, see `_bm25`),
    whether its heading holds a query token, how many chunks match, and the best of them (None when only the
    heading matched)."""

    rank: int
    chapter: int
    heading: str
    score: float
    in_heading: bool
    chunks: int
    best: SearchHit | None


@dataclass(frozen=True)
class SearchResult:
    """A query's tokens, its chapters ranked by aggregate score, and its k best chunks."""

    query: str
    tokens: list[str]
    before: int | None
    isolated: bool
    chapters: list[ChapterHit]
    hits: list[SearchHit]
    missing: list[str] = field(default_factory=list)  # the query's own words that are not in the book as written


class SearchIndex:
    """BM25 over the persisted postings; reads only what a query needs."""

    def __init__(self, book: Book, cards: CardSet):
        conn = book.db
        if conn.execute("SELECT 1 FROM memory_chapters LIMIT 1").fetchone() is None:
            raise InputError(
                "MEMORY_INDEX_EMPTY",
                "the retrieval index is empty",
                str(book.db_path),
                "add chapters, then `muse sync`",
            )
        ensure_postings(conn)
        self._conn = conn
        self.docs: Docs = load_docs(conn)
        self._tok = Tokenizer(cards.lexicon())

    def _stats(self, before: int | None, isolated: bool) -> tuple[int, int]:
        """(docs whose statistics count, docs that may be hits)."""
        n_cut = self.docs.before(before)
        return (n_cut if isolated else self.docs.count), n_cut

    def _postings(self, query: str, n_stats: int) -> tuple[list[str], dict[str, tuple[array[int], array[int]]]]:
        postings: dict[str, tuple[array[int], array[int]]] = {}

        def known(words: set[str]) -> set[str]:
            postings.update(fetch_postings(self._conn, words))
            return {w for w in words if w in postings and postings[w][0] and postings[w][0][0] < n_stats}

        toks = self._tok.query_tokens(query, known)
        return toks, {t: postings[t] for t in toks}

    def tokens(self, query: str, *, before: int | None = None, isolated: bool = False) -> list[str]:
        """The query's tokens that occur in the index (in the chapters before N with `isolated`)."""
        return self._postings(query, self._stats(before, isolated)[0])[0]

    def find(self, query: str, *, before: int | None = None, k: int = 10, isolated: bool = False) -> SearchResult:
        """Chapters ranked by their BM25 score as whole documents, and the k best chunks, for `query` among the
        chapters before `before` (all when None); each chunk hit carries its chapter's score and rank.

        By default the BM25 statistics (IDF, average length) are those of the whole book and only the hits
        are restricted. With `isolated`, scores use only the chapters before `before` — as if the later
        chapters did not exist — so results for a chapter never change when the book grows (what
        reproducible context assembly needs). Both read only the query's postings.

        The query's own words the book does not write are named (`missing`); when none of them is in the book and
        the parts that are cover less than half of the query, nothing is ranked (a hit on 计算 for 量子计算机 would
        be noise; 草船借箭, every character of which the book writes, is still matched by them).
        """
        n_stats, n_cut = self._stats(before, isolated)
        toks, postings = self._postings(query, n_stats)
        missing = [w for w in self._tok.query_words(query) if w not in toks]
        if _only_noise(self._tok.query_words(query), missing, toks):
            return SearchResult(query, toks, before, isolated, [], [], missing)
        scores = score_postings(postings, self.docs, n_stats, n_cut)
        agg = chapter_scores(postings, self.docs, n_stats, n_cut)
        in_heading: set[int] = set()
        per_chapter: dict[int, list[tuple[float, int]]] = {}
        chapter_of, idx_of = self.docs.chapter, self.docs.idx
        for d, s in scores.items():
            if idx_of[d] == HEADING:
                in_heading.add(chapter_of[d])
            else:
                per_chapter.setdefault(chapter_of[d], []).append((s, d))
        ranked = sorted(agg, key=lambda c: (-agg[c], c))
        chapter_rank = {c: i for i, c in enumerate(ranked, 1)}
        top = heapq.nsmallest(k, ((-s, d) for sd in per_chapter.values() for s, d in sd))
        chunk_rank = {d: i for i, (_, d) in enumerate(top, 1)}  # a chapter's best chunk: 0 unless in the top k
        shown = ranked[:k]
        best = {c: min(per_chapter[c], key=lambda sd: (-sd[0], sd[1])) for c in shown if c in per_chapter}
        rows = self._chunks({d for _, d in top} | {d for _, d in best.values()})
        heads = self._headings(shown)

        def hit(s: float, d: int) -> SearchHit:
            c = chapter_of[d]
            start, end, text = rows[d]
            return SearchHit(chunk_rank.get(d, 0), c, start, end, s, text, agg[c], chapter_rank[c])

        chapters = [
            ChapterHit(
                chapter_rank[c],
                c,
                heads.get(c, ""),
                agg[c],
                c in in_heading,
                len(per_chapter.get(c, [])),
                hit(*best[c]) if c in best else None,
            )
            for c in shown
        ]
        return SearchResult(query, toks, before, isolated, chapters, [hit(-s, d) for s, d in top], missing)

    def search(self, query: str, *, before: int | None = None, k: int = 10, isolated: bool = False) -> list[SearchHit]:
        """The k best chunks for `query` among chapters < `before` (all chapters when None); see `find`."""
        return self.find(query, before=before, k=k, isolated=isolated).hits

    def _chunks(self, doc_ids: set[int]) -> dict[int, tuple[int, int, str]]:
        out: dict[int, tuple[int, int, str]] = {}
        for d in doc_ids:
            row = self._conn.execute(
                "SELECT start, end, text FROM memory_chunks WHERE chapter = ? AND idx = ?",
                (self.docs.chapter[d], self.docs.idx[d]),
            ).fetchone()
            out[d] = (row[0], row[1], row[2])
        return out

    def _headings(self, chapters: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(chapters))
        rows = self._conn.execute(f"SELECT number, heading FROM memory_chapters WHERE number IN ({marks})", chapters)
        return {r[0]: r[1] for r in rows}


def _only_noise(words: list[str], missing: list[str], tokens: list[str]) -> bool:
    """True when no word of the query is in the book and the parts of it that are cover less than half of its
    characters: ranking them would answer another question."""
    if not missing or len(missing) < len(words):
        return False
    asked = "".join(words)
    covered = sum(1 for ch in asked if any(ch in t for t in tokens))
    return covered * 2 < len(asked)


@dataclass(frozen=True)
class ChapterMentions:
    """Mentions of one card in one chapter: count (its heading's included), [start, end, name] spans into the body,
    count per name, and how many of them are in the chapter's heading (回目)."""

    chapter: int
    count: int
    offsets: list[tuple[int, int, str]]
    by_name: dict[str, int] = field(default_factory=dict)
    in_heading: int = 0


@dataclass(frozen=True)
class MentionReport:
    """Where a card is mentioned (chapters before `before`, or all), and when last; `by_name` totals each of
    its names as written (name first, then aliases; names never written are 0)."""

    card_id: str
    name: str
    names: list[str]
    before: int | None
    chapters: list[ChapterMentions]
    total: int
    last_chapter: int | None
    by_name: dict[str, int] = field(default_factory=dict)


def card_mentions(
    conn: sqlite3.Connection,
    card: Card,
    *,
    before: int | None = None,
    offsets: bool = True,
    headings: MentionMatcher | None = None,
) -> MentionReport:
    """Per-chapter mentions of `card` from the index (spans only with `offsets`); with `headings` (the book's mention
    matcher), the mentions its chapters' headings (回目) make are counted too, marked `in_heading`."""
    cols = "chapter, count, by_name, spans" if offsets else "chapter, count, by_name, x''"
    sql = f"SELECT {cols} FROM memory_mentions WHERE card_id = ?"
    args: tuple[object, ...] = (card.id,)
    if before is not None:
        sql += " AND chapter < ?"
        args = (card.id, before)
    chapters: list[ChapterMentions] = []
    totals = dict.fromkeys(card.all_names, 0)
    for number, count, by_name_json, blob in conn.execute(sql + " ORDER BY chapter", args):
        by_name: dict[str, int] = json.loads(by_name_json)
        for name, c in by_name.items():
            totals[name] = totals.get(name, 0) + c
        spans: list[tuple[int, int, str]] = []
        if blob:
            names = list(by_name)
            flat = array("i")
            flat.frombytes(blob)
            spans = list(zip(flat[0::3], flat[1::3], map(names.__getitem__, flat[2::3]), strict=True))
        chapters.append(ChapterMentions(number, count, spans, by_name))
    if headings is not None:
        chapters = _with_headings(conn, card, chapters, before, totals, headings)
    return MentionReport(
        card.id,
        card.name,
        card.all_names,
        before,
        chapters,
        sum(c.count for c in chapters),
        chapters[-1].chapter if chapters else None,
        totals,
    )


def _with_headings(
    conn: sqlite3.Connection,
    card: Card,
    chapters: list[ChapterMentions],
    before: int | None,
    totals: dict[str, int],
    matcher: MentionMatcher,
) -> list[ChapterMentions]:
    """`chapters` with the mentions of `card` its chapters' headings make, found as the body's are (the book's
    matcher: leftmost-longest over every card's names)."""
    sql = "SELECT number, heading FROM memory_chapters"
    args: tuple[int, ...] = ()
    if before is not None:
        sql, args = sql + " WHERE number < ?", (before,)
    by_chapter = {c.chapter: c for c in chapters}
    for number, heading in conn.execute(sql, args):
        counts: dict[str, int] = {}
        for m in matcher.find(str(heading or "")):
            if m.card_id == card.id:
                counts[m.name] = counts.get(m.name, 0) + 1
        if not counts:
            continue
        n = sum(counts.values())
        for name, c in counts.items():
            totals[name] = totals.get(name, 0) + c
        old = by_chapter.get(number)
        merged = dict(old.by_name) if old else {}
        for name, c in counts.items():
            merged[name] = merged.get(name, 0) + c
        by_chapter[number] = ChapterMentions(
            number, (old.count if old else 0) + n, old.offsets if old else [], merged, in_heading=n
        )
    return [by_chapter[k] for k in sorted(by_chapter)]


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


def stored_doc_tokens(conn: sqlite3.Connection) -> list[tuple[int, int, list[str]]]:
    """Every document as (chapter, chunk idx or -1 for the heading, tokens), in doc-id order: what the
    postings are built from (the tests' and the benchmark's reference path reads this)."""
    headings = {r[0]: split_tokens(r[1]) for r in conn.execute("SELECT number, heading_tokens FROM memory_chapters")}
    chunks: dict[int, list[tuple[int, int, list[str]]]] = {}
    for c, i, t in conn.execute("SELECT chapter, idx, tokens FROM memory_chunks ORDER BY chapter, idx"):
        chunks.setdefault(c, []).append((c, i, split_tokens(t)))
    out: list[tuple[int, int, list[str]]] = []
    for c in sorted(headings):
        out.append((c, HEADING, headings[c]))
        out.extend(chunks.get(c, []))
    return out
