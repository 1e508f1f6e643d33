-- The plan agent's drafts (`muse plan draft`): one draft is a bundle of files — plan/outline.md, the settings under
-- plan/settings/ and card drafts under cards/ — shown, revised and decided on as one text on the author's desk. None
-- of its files is written until the author accepts it; each file it would replace is kept first (file_revisions).
CREATE TABLE plan_drafts (
    id            TEXT    PRIMARY KEY,            -- sortable id (P…)
    kind          TEXT    NOT NULL CHECK (kind IN ('draft', 'author_revision')),
    revises_id    TEXT    REFERENCES plan_drafts (id),
    text          TEXT    NOT NULL,               -- the bundle (see writing/_plan_draft.py)
    text_sha256   TEXT    NOT NULL,
    base_json     TEXT    NOT NULL,               -- {path: sha256 of the file when drafted, "" when there was none}
    premise_sha256 TEXT,                          -- the premise it was drafted from
    run_id        TEXT,
    call_id       TEXT,
    created_at    TEXT    NOT NULL
);

-- The desk's decisions now also cover plan drafts (draft_kind 'plan', chapter 0): the table is rebuilt with the wider
-- check, every row copied as it was.
CREATE TABLE draft_decisions_new (
    id                  TEXT    PRIMARY KEY,
    draft_kind          TEXT    NOT NULL CHECK (draft_kind IN ('chapter', 'review', 'outline', 'plan')),
    draft_id            TEXT    NOT NULL,
    chapter             INTEGER NOT NULL,
    text_sha256         TEXT    NOT NULL,
    decision            TEXT    NOT NULL CHECK (decision IN ('accept', 'revise', 'reject')),
    mode                TEXT    NOT NULL CHECK (mode IN ('manual', 'automatic', 'apply')),
    reason              TEXT    NOT NULL DEFAULT '',
    preflight_json      TEXT    NOT NULL DEFAULT '[]',
    overrides_json      TEXT    NOT NULL DEFAULT '[]',
    revision_draft_id   TEXT,
    revision_sha256     TEXT,
    edit_chars          INTEGER,
    file_revision_id    TEXT    REFERENCES file_revisions (id) ON DELETE CASCADE,
    run_id              TEXT,
    decided_at          TEXT    NOT NULL
);
INSERT INTO draft_decisions_new SELECT id, draft_kind, draft_id, chapter, text_sha256, decision, mode, reason,
    preflight_json, overrides_json, revision_draft_id, revision_sha256, edit_chars, file_revision_id, run_id, decided_at
    FROM draft_decisions;
DROP TABLE draft_decisions;
ALTER TABLE draft_decisions_new RENAME TO draft_decisions;
CREATE INDEX draft_decisions_draft ON draft_decisions (draft_id, id);
CREATE INDEX draft_decisions_chapter ON draft_decisions (chapter, id);
