-- Editorial loop (seed 004): review records bound to the chapter sha256, step outcomes, issues,
-- editor reports (computed and model verdicts), arbiter decisions, and revisions of chapter text.

-- One row per review of one chapter (`muse review N`), bound to the sha256 of the file it reviewed.
CREATE TABLE review_records (
    id                 TEXT PRIMARY KEY,          -- sortable id
    run_id             TEXT,                      -- runs.id of the model session (NULL: no model session)
    chapter            INTEGER NOT NULL,
    chapter_sha256     TEXT NOT NULL,             -- the file's bytes as reviewed
    config_sha256      TEXT NOT NULL,             -- review-relevant config + prompts + rules (resume key)
    status             TEXT NOT NULL,             -- finalized / finalized_with_issues / not_reviewed / error
    error_code         TEXT,                      -- set when status = error
    result_sha256      TEXT NOT NULL,             -- sha256 of the resulting file bytes (= chapter_sha256 if unchanged)
    revision_id        TEXT,                      -- revisions.id when the loop changed the text
    open_issues        INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cost               REAL,                      -- NULL = unknown (never shown as 0)
    cost_known         INTEGER NOT NULL DEFAULT 1,
    report_json        TEXT NOT NULL,             -- the whole ChapterReview document (--json shape)
    started_at         TEXT NOT NULL,
    ended_at           TEXT NOT NULL
);
CREATE INDEX review_records_chapter ON review_records(chapter, ended_at);

-- Every step's outcome: exactly one of passed / failed / skipped(reason) / error(code).
CREATE TABLE review_steps (
    record_id  TEXT NOT NULL REFERENCES review_records(id),
    seq        INTEGER NOT NULL,
    step       TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped', 'error')),
    reason     TEXT,                              -- only for skipped
    code       TEXT,                              -- only for error
    detail     TEXT NOT NULL DEFAULT '',
    CHECK ((status = 'skipped') = (reason IS NOT NULL)),
    CHECK ((status = 'error') = (code IS NOT NULL)),
    PRIMARY KEY (record_id, seq)
);

-- Consistency issues per review round (0 = first review, 1 = re-review, …) with verified quote offsets.
CREATE TABLE review_issues (
    record_id    TEXT NOT NULL REFERENCES review_records(id),
    round        INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    text_sha256  TEXT NOT NULL,                   -- sha256 of the body the offsets index into
    severity     TEXT NOT NULL,
    type         TEXT NOT NULL,
    quote        TEXT NOT NULL,
    start        INTEGER NOT NULL,
    end          INTEGER NOT NULL,
    paragraph    INTEGER NOT NULL,
    explanation  TEXT NOT NULL,
    fix_hint     TEXT NOT NULL,
    open         INTEGER NOT NULL,                -- 1 = blocking and unresolved when the loop ended
    PRIMARY KEY (record_id, round, seq)
);

-- 7-dimension editor reports: scores with verified evidence, the computed and the model's verdict.
CREATE TABLE editor_reports (
    record_id         TEXT NOT NULL REFERENCES review_records(id),
    round             INTEGER NOT NULL,           -- 0 = first review, 1.. = after each rewrite
    text_sha256       TEXT NOT NULL,
    overall           INTEGER NOT NULL,
    dims_json         TEXT NOT NULL,              -- name → {score, evidence, start, end, neutral}
    computed_verdict  TEXT NOT NULL,
    model_verdict     TEXT NOT NULL,
    call_id           TEXT,
    PRIMARY KEY (record_id, round)
);

-- Arbiter decisions after a rewrite still below threshold.
CREATE TABLE arbiter_decisions (
    record_id   TEXT NOT NULL REFERENCES review_records(id),
    round       INTEGER NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('keep_rewriting', 'accept_and_continue')),
    reason      TEXT NOT NULL,
    call_id     TEXT,
    decided_at  TEXT NOT NULL,
    PRIMARY KEY (record_id, round)
);

-- Chapter text produced by the loop; the author's file changes only with --apply.
CREATE TABLE revisions (
    id           TEXT PRIMARY KEY,
    chapter      INTEGER NOT NULL,
    record_id    TEXT NOT NULL REFERENCES review_records(id),
    base_sha256  TEXT NOT NULL,                   -- the file the revision was made from
    sha256       TEXT NOT NULL,                   -- of the revision's file bytes
    text         TEXT NOT NULL,                   -- the whole file (heading line + body)
    created_at   TEXT NOT NULL,
    applied_at   TEXT
);
CREATE INDEX revisions_chapter ON revisions(chapter, created_at);
