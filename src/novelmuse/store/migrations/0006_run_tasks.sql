-- Role tasks (issue 9): every call names the role task that rendered it (role, task, version and the sha256
-- of its template files and output schema). A run records each task it used once, in the order first used.
CREATE TABLE run_tasks (
    run_id         TEXT    NOT NULL REFERENCES runs(id),
    role           TEXT    NOT NULL,
    task           TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    prompt_sha256  TEXT    NOT NULL,
    schema_sha256  TEXT    NOT NULL,              -- '' for a task without an output schema (the correction)
    first_used_at  TEXT    NOT NULL,
    PRIMARY KEY (run_id, role, task, version, prompt_sha256, schema_sha256)
);

-- The role tasks one review used (JSON list of task refs): with config_sha256 and the chapter's sha256 the
-- resume key, so a prompt edit invalidates only the reviews whose tasks rendered that prompt.
ALTER TABLE review_records ADD COLUMN tasks_json TEXT NOT NULL DEFAULT '[]';
