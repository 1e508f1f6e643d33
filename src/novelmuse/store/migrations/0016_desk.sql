-- The author's desk: every replaced version of an author's file is kept, and every decision on a draft is a row.

-- One replacement of an author's file (a chapter, an outline, a card, a plan file, rules.txt): the bytes it
-- had before are the content-addressed object .muse/revisions/objects/<sha256> (NULL: the file did not exist),
-- the bytes it has after are `new_sha256` (NULL: the file was removed). A replacement is written ahead: the row
-- is `pending` before the file is replaced and `done` after; a pending row left by a killed process is settled
-- by the next command (done when the file has the new bytes, removed when it still has the old ones).
CREATE TABLE file_revisions (
    id          TEXT    PRIMARY KEY,              -- sortable id (R…)
    path        TEXT    NOT NULL,                 -- relative to the book root (chapters/0011.md)
    kind        TEXT    NOT NULL CHECK (kind IN ('chapter', 'outline', 'card', 'plan', 'rules')),
    chapter     INTEGER,                          -- chapters and outlines
    old_sha256  TEXT,                             -- the replaced bytes (NULL: there was no file)
    old_size    INTEGER,
    new_sha256  TEXT,                             -- the bytes written (NULL: the file was removed)
    command     TEXT    NOT NULL,                 -- what replaced it: `muse drafts accept D…`, `muse review 3 --apply`
    note        TEXT    NOT NULL DEFAULT '',
    state       TEXT    NOT NULL CHECK (state IN ('pending', 'done')),
    created_at  TEXT    NOT NULL
);
CREATE INDEX file_revisions_path ON file_revisions (path, id);
CREATE INDEX file_revisions_pending ON file_revisions (state) WHERE state = 'pending';

-- A write run records the writer configuration it ran under (what gate receipts bind), so the author's
-- decisions can be counted per configuration; whether the chapter already had a file; who ran it.
ALTER TABLE write_runs ADD COLUMN writer_config_sha256 TEXT;
ALTER TABLE write_runs ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0;   -- the chapter had a file when it began
ALTER TABLE write_runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'write';  -- write (the author's) / replay (experiments)

-- The gate's model answers on a draft, kept as each call ends: an interrupted run resumed later reuses them
-- (only the calls that never finished are made again).
CREATE TABLE write_gate_calls (
    write_id    TEXT    NOT NULL REFERENCES write_runs (id),
    draft_id    TEXT    NOT NULL REFERENCES write_drafts (id),
    role        TEXT    NOT NULL,                 -- detector / extractor
    call_id     TEXT    NOT NULL,
    value_json  TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    PRIMARY KEY (draft_id, role)
);

-- Fine-outline drafts (the outliner's, and the author's revisions of them): shadows until accepted.
CREATE TABLE outline_drafts (
    id            TEXT    PRIMARY KEY,            -- sortable id (O…)
    chapter       INTEGER NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('draft', 'author_revision')),
    revises_id    TEXT    REFERENCES outline_drafts (id),
    text          TEXT    NOT NULL,               -- the YAML
    text_sha256   TEXT    NOT NULL,
    path          TEXT    NOT NULL,               -- .muse/drafts/outlines/NNNN-<sha12>.yaml
    base_sha256   TEXT,                           -- outlines/NNNN.yaml when drafted (NULL: none)
    run_id        TEXT,
    call_id       TEXT,
    created_at    TEXT    NOT NULL
);
CREATE INDEX outline_drafts_chapter ON outline_drafts (chapter, id);

-- The author's three decisions (accept / revise / reject) on drafts of chapters, review results and fine outlines.
-- An accept that replaced a file points at its file revision, written in the same transaction; when a killed
-- accept's pending revision is removed on recovery, its decision goes with it (nothing claims a file it never
-- wrote).
CREATE TABLE draft_decisions (
    id                  TEXT    PRIMARY KEY,      -- sortable id (K…)
    draft_kind          TEXT    NOT NULL CHECK (draft_kind IN ('chapter', 'review', 'outline')),
    draft_id            TEXT    NOT NULL,
    chapter             INTEGER NOT NULL,
    text_sha256         TEXT    NOT NULL,          -- the text decided on
    decision            TEXT    NOT NULL CHECK (decision IN ('accept', 'revise', 'reject')),
    mode                TEXT    NOT NULL CHECK (mode IN ('manual', 'automatic', 'apply')),
    reason              TEXT    NOT NULL DEFAULT '',
    preflight_json      TEXT    NOT NULL DEFAULT '[]',
    overrides_json      TEXT    NOT NULL DEFAULT '[]',
    revision_draft_id   TEXT,                      -- revise: the author's revision (a new draft)
    revision_sha256     TEXT,                      -- revise: its text's sha256
    edit_chars          INTEGER,                   -- revise: the character edit distance draft → revision
    file_revision_id    TEXT    REFERENCES file_revisions (id) ON DELETE CASCADE,
    run_id              TEXT,                      -- the model run of the preflight's calls, if any
    decided_at          TEXT    NOT NULL
);
CREATE INDEX draft_decisions_draft ON draft_decisions (draft_id, id);
CREATE INDEX draft_decisions_chapter ON draft_decisions (chapter, id);
