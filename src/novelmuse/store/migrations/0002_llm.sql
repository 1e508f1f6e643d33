-- Model layer: one receipt per attempt, one row per logical call (issue 3).

-- One row per logical call: its final outcome and failure-safe diagnostics (codes and counts only).
CREATE TABLE model_calls (
    id                TEXT PRIMARY KEY,           -- logical call id (sortable)
    run_id            TEXT NOT NULL REFERENCES runs(id),
    role              TEXT NOT NULL,
    provider          TEXT NOT NULL,
    provider_kind     TEXT NOT NULL,
    requested_model   TEXT NOT NULL,
    schema_name       TEXT NOT NULL,
    schema_sha256     TEXT NOT NULL,
    prompt_sha256     TEXT,
    status            TEXT NOT NULL DEFAULT 'running',  -- running / ok / failed
    error_code        TEXT,
    attempts          INTEGER NOT NULL DEFAULT 0,
    final_receipt_id  TEXT,                       -- the receipt whose output was accepted
    output_sha256     TEXT,                       -- sha256 of the accepted output (canonical JSON)
    diagnostics_json  TEXT NOT NULL DEFAULT '{}', -- codes and counts only, never content
    started_at        TEXT NOT NULL,
    ended_at          TEXT
);
CREATE INDEX model_calls_run ON model_calls(run_id);

-- One row per attempt (sent, or refused before sending), written in its own transaction as it ends.
CREATE TABLE receipts (
    id                  TEXT PRIMARY KEY,         -- sortable id
    call_id             TEXT NOT NULL REFERENCES model_calls(id),
    attempt             INTEGER NOT NULL,         -- 1-based
    run_id              TEXT NOT NULL REFERENCES runs(id),
    role                TEXT NOT NULL,
    provider            TEXT NOT NULL,            -- the provider's name in [providers]
    provider_kind       TEXT NOT NULL,            -- openai / anthropic / claude-cli / scripted
    requested_model     TEXT NOT NULL,
    resolved_model      TEXT,
    outcome             TEXT NOT NULL,            -- ok / failed / refused (refused = never sent)
    error_code          TEXT,
    request_sha256      TEXT NOT NULL,            -- sha256_json(ProviderRequest.canonical())
    response_sha256     TEXT,                     -- sha256 of the raw response bytes
    prompt_sha256       TEXT,
    schema_sha256       TEXT NOT NULL,
    input_tokens        INTEGER,
    output_tokens       INTEGER,
    cache_read_tokens   INTEGER,
    cache_write_tokens  INTEGER,
    cost                REAL,                     -- NULL = unknown, never 0 for unknown
    price_table_sha256  TEXT NOT NULL,
    latency_ms          REAL,
    started_at          TEXT NOT NULL,
    ended_at            TEXT NOT NULL,
    sandbox             TEXT,                     -- claude-cli: bwrap / sandbox-exec / none
    diagnostics_json    TEXT NOT NULL DEFAULT '{}',
    UNIQUE (call_id, attempt)
);
CREATE INDEX receipts_run ON receipts(run_id);
