-- Write-ahead receipts (issue 18 item 1): an attempt's receipt is committed as `pending` BEFORE its request is
-- sent and completed when the attempt ends; recovery turns a pending receipt whose run is gone into
-- `interrupted` (cost unknown). A pending receipt has not ended: `ended_at` becomes nullable (the table is
-- rebuilt, SQLite's way to change a column's constraint).
CREATE TABLE receipts_new (
    id                  TEXT PRIMARY KEY,
    call_id             TEXT NOT NULL REFERENCES model_calls(id),
    attempt             INTEGER NOT NULL,
    run_id              TEXT NOT NULL REFERENCES runs(id),
    role                TEXT NOT NULL,
    provider            TEXT NOT NULL,
    provider_kind       TEXT NOT NULL,
    requested_model     TEXT NOT NULL,
    resolved_model      TEXT,
    outcome             TEXT NOT NULL,            -- pending / ok / failed / refused / interrupted
    error_code          TEXT,
    request_sha256      TEXT NOT NULL,
    response_sha256     TEXT,
    prompt_sha256       TEXT,
    schema_sha256       TEXT NOT NULL,
    input_tokens        INTEGER,
    output_tokens       INTEGER,
    cache_read_tokens   INTEGER,
    cache_write_tokens  INTEGER,
    cost                REAL,                     -- NULL = unknown (pending and interrupted attempts included)
    price_table_sha256  TEXT NOT NULL,
    latency_ms          REAL,
    started_at          TEXT NOT NULL,
    ended_at            TEXT,                     -- NULL while pending
    sandbox             TEXT,
    diagnostics_json    TEXT NOT NULL DEFAULT '{}',
    UNIQUE (call_id, attempt)
);
INSERT INTO receipts_new SELECT * FROM receipts;
DROP TABLE receipts;
ALTER TABLE receipts_new RENAME TO receipts;
CREATE INDEX receipts_run ON receipts(run_id);
CREATE INDEX receipts_pending ON receipts(outcome) WHERE outcome = 'pending';

-- The process that runs a run: its pid and that process's start time (Linux: /proc/<pid>/stat field 22; NULL
-- where unknown), so recovery can tell a dead run from a live one even when no vault lease names it, and a
-- reused pid from the original process.
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN pid_started TEXT;
