-- The writer's context (issue 10): confirmed fine outlines and the deterministic WriterContext manifests.

-- 已确认细纲: the author confirms an outline by its sha256. Append-only: the newest row of a chapter is the
-- confirmation in force; an outline file whose sha256 differs from it is not confirmed.
CREATE TABLE outline_confirmations (
    id              TEXT    PRIMARY KEY,   -- sortable id
    chapter         INTEGER NOT NULL,
    outline_sha256  TEXT    NOT NULL,      -- sha256 of the outline file's bytes
    path            TEXT    NOT NULL,      -- relative to the book root
    confirmed_at    TEXT    NOT NULL
);
CREATE INDEX outline_confirmations_chapter ON outline_confirmations (chapter, id);

-- Content-addressed manifests: `body` is the canonical JSON whose sha256 is the key (no timestamp inside);
-- the same bytes are in .muse/manifests/<sha256>.json.
CREATE TABLE context_manifests (
    sha256          TEXT    PRIMARY KEY,
    chapter         INTEGER NOT NULL,
    arm             TEXT    NOT NULL,
    outline_sha256  TEXT    NOT NULL,
    body            TEXT    NOT NULL,
    created_at      TEXT    NOT NULL
);

-- Every build of a context (the newest per chapter and arm is what `muse context verify` compares with).
CREATE TABLE context_builds (
    id               TEXT    PRIMARY KEY,  -- sortable id
    chapter          INTEGER NOT NULL,
    arm              TEXT    NOT NULL,
    manifest_sha256  TEXT    NOT NULL REFERENCES context_manifests (sha256),
    built_at         TEXT    NOT NULL
);
CREATE INDEX context_builds_chapter ON context_builds (chapter, arm, id);
