-- Core tables: the chapter registry and runs.

-- One row per chapter file as last registered: lets every later step know what changed (by sha256).
CREATE TABLE chapters (
    number        INTEGER PRIMARY KEY,
    path          TEXT    NOT NULL,           -- relative to the book root
    sha256        TEXT    NOT NULL,           -- of the file's bytes
    chars         INTEGER NOT NULL,           -- count_chars: characters excluding whitespace
    paragraphs    INTEGER NOT NULL,
    registered_at TEXT    NOT NULL            -- UTC ISO-8601
);

-- One row per run of a command that does work worth recording (review, judge, sync, models check, …).
CREATE TABLE runs (
    id          TEXT PRIMARY KEY,             -- sortable id (time-ordered)
    kind        TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT,
    status      TEXT NOT NULL DEFAULT 'running',   -- running / ok / failed / interrupted
    config_json TEXT NOT NULL DEFAULT '{}'         -- exactly how the run was configured (no secrets)
);
