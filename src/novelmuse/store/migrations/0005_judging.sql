-- Judging (seed 000): blind judge panels, each judge's contract-checked report, sealed arm maps, lessons.

-- One row per judged item: the panel's report (random candidate ids only) and its sha256.
CREATE TABLE judge_panels (
    id             TEXT PRIMARY KEY,          -- sortable id
    run_id         TEXT NOT NULL,             -- runs.id of the judging run
    item_ref       TEXT NOT NULL,             -- blind item reference (derived from item_id:seed)
    profile        TEXT NOT NULL,             -- quality_gate / fine_outline_replay / writer_replay
    rubric_id      TEXT NOT NULL,
    rubric_version INTEGER NOT NULL,
    rubric_sha256  TEXT NOT NULL,
    scene_type     TEXT,
    status         TEXT NOT NULL,             -- running / stable / invalid / invalid_unstable
    error_code     TEXT,
    third_judge    INTEGER NOT NULL,
    report_json    TEXT,                      -- NULL while running
    report_sha256  TEXT,
    created_at     TEXT NOT NULL
);
CREATE INDEX judge_panels_run ON judge_panels(run_id);

-- One row per judge of a panel (slot 1, 2 and 3 when it ran), bound to its receipts.
CREATE TABLE judge_reports (
    panel_id       TEXT NOT NULL REFERENCES judge_panels(id),
    slot           INTEGER NOT NULL,
    call_id        TEXT,
    receipt_ids    TEXT NOT NULL,             -- JSON list of receipts.id
    model          TEXT,
    input_sha256   TEXT NOT NULL,
    report_sha256  TEXT,                      -- NULL when the judge failed closed
    report_json    TEXT,                      -- the contract-valid report (NULL when failed)
    error_code     TEXT,
    PRIMARY KEY (panel_id, slot)
);

-- The arm map (candidate id → arm), stored apart from the report; its sha256 is sealed into the report
-- before any judge runs, and it is opened (opened_at set) only after the panel ends.
CREATE TABLE judge_arm_maps (
    panel_id   TEXT PRIMARY KEY REFERENCES judge_panels(id),
    sha256     TEXT NOT NULL,
    payload    TEXT NOT NULL,
    sealed_at  TEXT NOT NULL,
    opened_at  TEXT
);

-- Example lessons registered after a stable report, de-duplicated by normalised content.
CREATE TABLE judge_lessons (
    id               TEXT PRIMARY KEY,
    content_sha256   TEXT NOT NULL UNIQUE,    -- sha256 of the normalised lesson text
    run_id           TEXT NOT NULL,
    panel_id         TEXT,
    rubric_id        TEXT NOT NULL,
    rubric_version   INTEGER NOT NULL,
    candidate_sha256 TEXT NOT NULL,
    lesson           TEXT NOT NULL,
    created_at       TEXT NOT NULL
);
