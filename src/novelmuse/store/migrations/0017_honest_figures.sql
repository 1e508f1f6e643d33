-- A detector report over no hard constraint has no coverage (NULL, shown "n/a"), never a constant 1.0: the table
-- is rebuilt with `coverage` nullable (SQLite cannot relax a NOT NULL in place); rows are copied as they are.
CREATE TABLE detector_reports_0017 (
    id                TEXT    PRIMARY KEY,
    write_id          TEXT    NOT NULL REFERENCES write_runs (id),
    draft_id          TEXT    NOT NULL REFERENCES write_drafts (id),
    candidate_sha256  TEXT    NOT NULL,
    manifest_sha256   TEXT    NOT NULL,
    sha256            TEXT    NOT NULL,          -- of `body`
    outcome           TEXT    NOT NULL,          -- passed / failed / skipped / error
    coverage          REAL,                      -- NULL: no hard constraint to cover
    high_severity     INTEGER NOT NULL,
    warnings          INTEGER NOT NULL,
    body              TEXT    NOT NULL,
    created_at        TEXT    NOT NULL
);
INSERT INTO detector_reports_0017
    SELECT id, write_id, draft_id, candidate_sha256, manifest_sha256, sha256, outcome, coverage, high_severity,
           warnings, body, created_at
    FROM detector_reports;
DROP TABLE detector_reports;
ALTER TABLE detector_reports_0017 RENAME TO detector_reports;
CREATE INDEX detector_reports_write ON detector_reports (write_id, id);

-- The gate input an evaluation saw when some artefact it read was damaged (a `hash` anomaly): kept as it was, so
-- the report verifies as what it saw after the artefact is restored. Only such inputs are kept (a clean one must
-- rebuild exactly from the store), and a damaged input only ever fails its gate.
CREATE TABLE gate_input_snapshots (
    sha256      TEXT    PRIMARY KEY,             -- of `body`
    run_id      TEXT    NOT NULL REFERENCES replay_runs (id),
    body        TEXT    NOT NULL,                -- the gate input's canonical JSON
    created_at  TEXT    NOT NULL
);

-- The last deep-verified state of the gate journal (one row): `muse gate verify` and the guard still walk the whole
-- chain (every byte is covered by the last signature), but parse, type-check, recompute and index only the entries
-- after it, and re-hash the artefacts the earlier ones bound. Derived: another head, signer or verifier discards it.
CREATE TABLE gate_verified (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    through_seq   INTEGER NOT NULL,
    head_sha256   TEXT    NOT NULL,            -- line sha256 of entry `through_seq` (it fixes every line before)
    signer        TEXT    NOT NULL,            -- key id
    verifier      TEXT    NOT NULL,            -- sha256 of the verifier's code and gate specs
    body          TEXT    NOT NULL,            -- JSON: listing, notes, receipts per report, artefacts to re-hash
    created_at    TEXT    NOT NULL
);
