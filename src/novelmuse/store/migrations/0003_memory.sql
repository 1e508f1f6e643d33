-- Story memory (issue 4): the retrieval and mention indexes, and the fact cards of chapters.
-- Everything here except fact_cards is derived and can be rebuilt from the author's files (`muse sync`).

-- One row per chapter as last indexed: what was indexed (sha256 of the file) with which lexicon
-- (sha256 of every card name and alias), so only changed chapters are redone.
CREATE TABLE memory_chapters (
    number          INTEGER PRIMARY KEY,
    sha256          TEXT    NOT NULL,
    lexicon_sha256  TEXT    NOT NULL,
    chunks          INTEGER NOT NULL,
    indexed_at      TEXT    NOT NULL
);

-- Paragraph-based chunks of chapter bodies: [start, end) offsets into the body, and the jieba tokens.
CREATE TABLE memory_chunks (
    chapter  INTEGER NOT NULL,
    idx      INTEGER NOT NULL,
    start    INTEGER NOT NULL,
    end      INTEGER NOT NULL,
    text     TEXT    NOT NULL,
    tokens   TEXT    NOT NULL,          -- tokens joined by U+0001
    PRIMARY KEY (chapter, idx)
);

-- Mentions of cards (names and aliases, leftmost-longest, non-overlapping) per chapter.
CREATE TABLE memory_mentions (
    card_id  TEXT    NOT NULL,
    chapter  INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    offsets  TEXT    NOT NULL,          -- JSON [[start, end, "matched name"], …] into the body
    PRIMARY KEY (card_id, chapter)
);
CREATE INDEX memory_mentions_chapter ON memory_mentions (chapter);

-- Small key/value facts about the indexes (e.g. the fingerprint of the persisted BM25 model).
CREATE TABLE memory_meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- Fact cards (seed 004 事实卡): the extractor's validated-structure output for one chapter, bound to the
-- chapter's sha256 and the receipt that produced it. Append-only history: a re-extraction adds a row;
-- the current one is the newest whose chapter_sha256 equals the chapter's sha256 now.
CREATE TABLE fact_cards (
    id              TEXT    PRIMARY KEY,   -- sortable id
    chapter         INTEGER NOT NULL,
    chapter_sha256  TEXT    NOT NULL,
    run_id          TEXT,
    call_id         TEXT,
    receipt_id      TEXT,
    prompt_sha256   TEXT    NOT NULL,
    model           TEXT    NOT NULL,
    output_json     TEXT    NOT NULL,      -- FactCardOutput plus located offsets per item
    created_at      TEXT    NOT NULL
);
CREATE INDEX fact_cards_chapter ON fact_cards (chapter, id);
