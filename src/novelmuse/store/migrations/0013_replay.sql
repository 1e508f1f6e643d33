-- Replay experiments (issue 12): pre-registered evaluation sets, runs with their sealed order plan, samples and
-- panels. A sample's artefacts (manifests, drafts, detector reports) are the writer's rows (0007, 0011); a
-- panel's report is judging's (0005). These tables only say which of them belong to which run.

-- A pre-registered set (`muse replay register`): `body` is the canonical JSON whose sha256 is the key; the same
-- bytes are in .muse/replay/sets/<sha256>.json. Editing a set file and registering it again makes a new set.
CREATE TABLE replay_sets (
    sha256         TEXT    PRIMARY KEY,
    name           TEXT    NOT NULL,
    kind           TEXT    NOT NULL,             -- writer / fine_outline
    items          INTEGER NOT NULL,
    body           TEXT    NOT NULL,
    source         TEXT    NOT NULL,             -- the file it was registered from (as given)
    file_sha256    TEXT    NOT NULL,             -- that file's bytes (`muse replay run SET.yaml` finds the set by it)
    registered_at  TEXT    NOT NULL
);

-- One replay run of a registered set. The order plan is sealed (stored with its sha256) in the same transaction
-- that creates the row, before the first model call. `config_sha256` is the run configuration: a resumed run
-- must have exactly it (no model swap, no other prompt, rubric, gate spec or budget). `model_run_id` is the one
-- model-layer run every call of this replay run is recorded under (a resumed process joins it).
CREATE TABLE replay_runs (
    id                    TEXT    PRIMARY KEY,   -- sortable id (RR…)
    set_sha256            TEXT    NOT NULL REFERENCES replay_sets (sha256),
    kind                  TEXT    NOT NULL,      -- writer / fine_outline
    mode                  TEXT    NOT NULL,      -- offline_replay
    arms                  TEXT    NOT NULL,      -- JSON list, sorted
    seed                  TEXT    NOT NULL,
    config_sha256         TEXT    NOT NULL,
    config_json           TEXT    NOT NULL,
    writer_config_sha256  TEXT    NOT NULL,      -- what a gate receipt binds as run_config_sha256
    plan_sha256           TEXT    NOT NULL,
    plan_json             TEXT    NOT NULL,
    model_run_id          TEXT    NOT NULL,
    status                TEXT    NOT NULL,      -- running / finished
    started_at            TEXT    NOT NULL,
    ended_at              TEXT
);
CREATE INDEX replay_runs_set ON replay_runs (set_sha256, id);

-- One sample: one item written by one arm. `status`: running (started, not finished: redone on resume), done
-- (its write run ended — passed, held for the author or failed closed) or failed (it never reached the writer's
-- end, e.g. its context could not be built). `write_id` names the writer's run (write_runs), whose document holds
-- every draft, manifest version and detector report; `code` is the failure code when the sample is not ok.
CREATE TABLE replay_samples (
    run_id       TEXT    NOT NULL REFERENCES replay_runs (id),
    item_id      TEXT    NOT NULL,
    arm          TEXT    NOT NULL,
    position     INTEGER NOT NULL,               -- the arm's position for this item in the order plan
    status       TEXT    NOT NULL,
    write_id     TEXT,
    code         TEXT,
    detail       TEXT,
    started_at   TEXT    NOT NULL,
    ended_at     TEXT,
    PRIMARY KEY (run_id, item_id, arm)
);

-- One blind panel per item over all of its arms' candidates (judging's judge_panels row and sealed report), or
-- why it did not run (`code`: an arm of the item failed, so no partial panel is judged).
CREATE TABLE replay_panels (
    run_id      TEXT    NOT NULL REFERENCES replay_runs (id),
    item_id     TEXT    NOT NULL,
    status      TEXT    NOT NULL,                -- running / done / not_run / failed
    panel_id    TEXT,
    code        TEXT,
    detail      TEXT,
    started_at  TEXT    NOT NULL,
    ended_at    TEXT,
    PRIMARY KEY (run_id, item_id)
);
