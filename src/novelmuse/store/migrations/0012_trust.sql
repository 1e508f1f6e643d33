-- Issue 14 (trust): every quality-gate decision is stored with its inputs, and gate lessons are told apart from
-- example lessons.

-- One row per adjudicated candidate of a quality_gate panel (`muse judge --profile quality_gate`, and the gate
-- `muse review` ends with): what was judged (candidate sha256, chapter, the evidence pack's sha256), the rule
-- layer's hard-block report, the rubric, the outcome and its reasons. `gate_key` (review gates) binds the decision
-- to everything that decides it, so a rerun with the same inputs finds it instead of judging again.
CREATE TABLE gate_decisions (
    id               TEXT PRIMARY KEY,          -- sortable id
    panel_id         TEXT NOT NULL REFERENCES judge_panels(id),
    run_id           TEXT NOT NULL,
    origin           TEXT NOT NULL,             -- judge / review
    chapter          INTEGER,
    item_ref         TEXT NOT NULL,
    candidate_id     TEXT NOT NULL,
    arm              TEXT NOT NULL,
    candidate_sha256 TEXT NOT NULL,
    rubric_id        TEXT NOT NULL,
    rubric_version   INTEGER NOT NULL,
    rubric_sha256    TEXT NOT NULL,
    outcome          TEXT NOT NULL,             -- passed / failed / error
    code             TEXT,
    reasons_json     TEXT NOT NULL,             -- JSON list of reasons
    hard_blocks_json TEXT NOT NULL,             -- JSON: block → state, and the rule layer's full report
    evidence_sha256  TEXT,                      -- the evidence pack the judges read (NULL: none)
    inputs_json      TEXT NOT NULL,             -- JSON: evidence summary, overrides, panel status
    gate_key         TEXT,
    lesson_id        TEXT,                      -- the gate lesson registered for this decision
    created_at       TEXT NOT NULL
);
CREATE INDEX gate_decisions_key ON gate_decisions(gate_key);
CREATE INDEX gate_decisions_run ON gate_decisions(run_id);

-- example (after a stable panel) or gate (a quality gate's terminal lesson, seed 000: 标题不冲突)
ALTER TABLE judge_lessons ADD COLUMN kind TEXT NOT NULL DEFAULT 'example';

-- fine_outline_replay (a structured_summary rubric): the seed's minimal report shape per candidate id,
-- {profile, scores: {dimension: {score, evidence}}}, stored beside the full report (report_json)
ALTER TABLE judge_panels ADD COLUMN minimal_json TEXT;
