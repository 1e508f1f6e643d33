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
