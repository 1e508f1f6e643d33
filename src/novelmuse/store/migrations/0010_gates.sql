-- Gates (seed 003, issues 12–13): a derived index of the CAS journal .muse/gates/journal.jsonl.
-- The journal is the truth; this table can be rebuilt from it at any time (`muse gate reindex`). It holds only
-- entries whose hash, link and signature were checked when they were indexed, and it doubles as a witness:
-- a journal that no longer holds an indexed entry (truncated, rewritten) is named by `muse gate verify`.
CREATE TABLE gate_entries (
    seq               INTEGER PRIMARY KEY,      -- position in the chain, from 1
    kind              TEXT NOT NULL,            -- report / receipt
    gate              TEXT NOT NULL,            -- A / B
    outcome           TEXT NOT NULL,            -- passed / failed / insufficient (a receipt: passed)
    run_id            TEXT NOT NULL,
    mode              TEXT NOT NULL,            -- offline_replay / real
    report_seq        INTEGER,                  -- receipts: the report entry they follow
    report_sha256     TEXT NOT NULL,            -- sha256 of the gate report (canonical JSON)
    gate_input_sha256 TEXT NOT NULL,
    gate_spec_sha256  TEXT NOT NULL,
    run_config_sha256 TEXT,                     -- receipts: the run configuration they were issued for
    sha256            TEXT NOT NULL,            -- the entry's payload sha256 (what its signature signs)
    line_sha256       TEXT NOT NULL UNIQUE,     -- sha256 of the whole line (the next entry's prev_sha256)
    prev_sha256       TEXT NOT NULL,
    byte_offset       INTEGER NOT NULL,
    byte_length       INTEGER NOT NULL,
    signer            TEXT NOT NULL,            -- key id
    issued_at         TEXT NOT NULL
);
CREATE INDEX gate_entries_receipts ON gate_entries(kind, gate, run_config_sha256);
