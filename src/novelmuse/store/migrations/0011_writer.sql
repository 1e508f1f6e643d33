-- The writer (issue 11): `muse write N` runs, their drafts and detector reports. Manifests of evidence rounds
-- are content-addressed rows of context_manifests (0007), like the first build's.

-- One `muse write N` run. `chapter_file_sha256` is the chapter file when the run began (NULL: absent): `--apply`
-- writes the file only while it still is. `document` is the run's whole JSON document (what `--json` prints).
CREATE TABLE write_runs (
    id                    TEXT    PRIMARY KEY,   -- sortable id (W…)
    run_id                TEXT,                  -- the model run (runs.id); NULL when no model was called
    chapter               INTEGER NOT NULL,
    arm                   TEXT    NOT NULL,
    outline_sha256        TEXT    NOT NULL,
    manifest_sha256       TEXT    NOT NULL,      -- the first build's manifest (round 0)
    chapter_file_sha256   TEXT,
    status                TEXT    NOT NULL,      -- running / passed / held_for_author / skipped / error / dry_run
    reason                TEXT,
    error_code            TEXT,
    final_draft_id        TEXT,
    applied_at            TEXT,
    document              TEXT,
    started_at            TEXT    NOT NULL,
    ended_at              TEXT
);
CREATE INDEX write_runs_chapter ON write_runs (chapter, id);

-- Every draft the writer returned, bound to the manifest (round) it was written from. `body` is the canonical
-- JSON whose sha256 is `sha256`; the same bytes are in .muse/drafts/<sha256>.json.
CREATE TABLE write_drafts (
    id               TEXT    PRIMARY KEY,
    write_id         TEXT    NOT NULL REFERENCES write_runs (id),
    seq              INTEGER NOT NULL,           -- writer calls of the run, in order (0, 1, …)
    purpose          TEXT    NOT NULL,           -- draft / evidence / repair
    evidence_round   INTEGER NOT NULL,           -- the manifest round it was written from
    repair_round     INTEGER NOT NULL,
    manifest_sha256  TEXT    NOT NULL,
    text_sha256      TEXT    NOT NULL,           -- the candidate (what its detector report binds)
    sha256           TEXT    NOT NULL,           -- of `body`
    body             TEXT    NOT NULL,
    call_id          TEXT,
    created_at       TEXT    NOT NULL,
    UNIQUE (write_id, seq)
);

-- The detector's report on a draft: bound to the candidate's sha256; `body` is the report's canonical JSON.
-- Coverage and counts are computed from its items (the model's claim is in the body, beside them).
CREATE TABLE detector_reports (
    id                TEXT    PRIMARY KEY,
    write_id          TEXT    NOT NULL REFERENCES write_runs (id),
    draft_id          TEXT    NOT NULL REFERENCES write_drafts (id),
    candidate_sha256  TEXT    NOT NULL,
    manifest_sha256   TEXT    NOT NULL,
    sha256            TEXT    NOT NULL,          -- of `body`
    outcome           TEXT    NOT NULL,          -- passed / failed / skipped / error
    coverage          REAL    NOT NULL,
    high_severity     INTEGER NOT NULL,
    warnings          INTEGER NOT NULL,
    body              TEXT    NOT NULL,
    created_at        TEXT    NOT NULL
);
CREATE INDEX detector_reports_write ON detector_reports (write_id, id);
