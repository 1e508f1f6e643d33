-- Memory caches and the persisted inverted index (issues 15, 17): everything here is derived and rebuilt from the
-- author's files by `muse sync`; the tokenizer changes (rjieba, names kept whole), so every chapter is re-indexed.

DELETE FROM memory_chunks;
DELETE FROM memory_chapters;
DELETE FROM memory_meta;

-- The heading line of each chapter is indexed too (it often names the episode); `build` replaces the old
-- per-chapter lexicon hash: what the chunks and tokens depend on besides the text (chunk bound, tokenizer).
-- Card names are tracked once for the whole index (memory_meta 'names'), so a new card re-tokenises only the
-- chunks that contain one of its names.
ALTER TABLE memory_chapters ADD COLUMN heading TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_chapters ADD COLUMN heading_tokens TEXT NOT NULL DEFAULT '';

-- Mentions: per-name counts beside the spans, and the spans as packed int32 triples (start, end, k), k indexing
-- the names of `by_name` in order — decoding 12,000 spans from JSON cost ~20 ms per `muse mentions`.
DROP TABLE memory_mentions;
CREATE TABLE memory_mentions (
    card_id  TEXT    NOT NULL,
    chapter  INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    by_name  TEXT    NOT NULL,          -- JSON {"关羽": 3, "云长": 2}: names as written, first mention first
    spans    BLOB    NOT NULL,          -- int32 little-endian (start, end, k) per mention, into the body
    PRIMARY KEY (card_id, chapter)
);
CREATE INDEX memory_mentions_chapter ON memory_mentions (chapter);

-- The BM25 inverted index over documents = each chapter's heading, then its chunks, in chapter order (doc ids
-- are positions in that order, so the documents of chapters before N are a prefix: --before N --isolated
-- scores with that prefix's statistics without rebuilding anything). Postings are rebuilt from the stored
-- tokens when the index generation (memory_meta) moves.
CREATE TABLE memory_postings (
    token  TEXT    PRIMARY KEY,
    df     INTEGER NOT NULL,
    docs   BLOB    NOT NULL,            -- int32 doc ids, ascending
    tfs    BLOB    NOT NULL             -- int32 term frequency per doc
);

-- The document table as packed arrays: doc → chapter, doc → chunk idx (-1 = the heading), cumulative lengths.
CREATE TABLE memory_bm25 (
    key    TEXT PRIMARY KEY,
    value  BLOB NOT NULL
);

-- What a file looked like when it was last hashed, so unchanged files are not read again: size, mtime, ctime
-- and inode must all match, and the file must have been last changed well before it was hashed (a change
-- within the same clock tick is re-hashed: the "racy" case).
CREATE TABLE memory_files (
    path        TEXT    PRIMARY KEY,    -- relative to the book root
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    ctime_ns    INTEGER NOT NULL,
    ino         INTEGER NOT NULL,
    sha256      TEXT    NOT NULL,
    checked_ns  INTEGER NOT NULL
);

-- Parsed canon cards keyed by file path and content sha256: showing one card does not re-parse 500 YAML files.
CREATE TABLE memory_card_cache (
    path     TEXT NOT NULL,
    sha256   TEXT NOT NULL,
    version  TEXT NOT NULL,             -- the parser's version: a new rule re-parses every card
    parsed   TEXT NOT NULL,             -- JSON: {"card": {...}} or {"problems": [...]}
    PRIMARY KEY (path)
);

-- The replayed memory per card (key "card:<id>", plus "names": names → ids and the facts status), valid for one
-- fingerprint of every input of a replay (card, outline and chapter file hashes, fact cards, settings, code).
CREATE TABLE memory_state (
    key          TEXT PRIMARY KEY,
    fingerprint  TEXT NOT NULL,
    value        TEXT NOT NULL
);
