-- A stretch of chapters written in one run (`muse write 11-30`, `--until N`, `--continue`): the run is one record —
-- its range, its mode, the process running it, where and why it stopped — and one row per chapter it reached,
-- naming the write, the draft, the decision and the fact-card extraction of that chapter. A killed run is resumed
-- from these rows (and the write, decision and fact-card records they point to): no finished step is made again.
CREATE TABLE stretch_runs (
    id              TEXT    PRIMARY KEY,              -- sortable id (S…)
    first_chapter   INTEGER NOT NULL,
    last_chapter    INTEGER NOT NULL,
    mode            TEXT    NOT NULL CHECK (mode IN ('manual', 'auto')),
    arm             TEXT    NOT NULL,
    arm_choice_json TEXT,                             -- how the arm was chosen (promoted, baseline, forced)
    writer_config_sha256 TEXT,
    status          TEXT    NOT NULL CHECK (status IN ('running', 'waiting', 'stopped', 'finished', 'interrupted',
                                                        'superseded')),
    stop_chapter    INTEGER,
    stop_reason     TEXT    NOT NULL DEFAULT '',
    pid             INTEGER,
    pid_started     TEXT,
    started_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);

CREATE TABLE stretch_chapters (
    stretch_id   TEXT    NOT NULL REFERENCES stretch_runs (id),
    chapter      INTEGER NOT NULL,
    state        TEXT    NOT NULL,                    -- writing / drafted / accepted / refused / extracted / stopped
    write_id     TEXT,                                -- the write run of its current draft
    draft_id     TEXT,                                -- that run's final draft
    write_status TEXT,                                -- passed / held_for_author / skipped / error
    decision     TEXT    NOT NULL DEFAULT '',         -- automatic / author / refused: how the chapter was decided
    detail       TEXT    NOT NULL DEFAULT '',
    updated_at   TEXT    NOT NULL,
    PRIMARY KEY (stretch_id, chapter)
);

-- Each command that worked on the stretch is one model run (`muse cost --run` per invocation).
CREATE TABLE stretch_sessions (
    stretch_id TEXT NOT NULL REFERENCES stretch_runs (id),
    run_id     TEXT NOT NULL,
    PRIMARY KEY (stretch_id, run_id)
);
