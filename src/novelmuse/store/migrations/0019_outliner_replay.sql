-- The fine-outline gates' samples: in a replay of an outliner set, each (item, arm) drafts the item's fine outline
-- with the outliner from the book as of N−1. The draft is kept here (never on the author's desk: it is an
-- experiment), with the sha256 of the prompt it was drafted from, the model call that made it, and the reference
-- lint's verdicts on it (what the gate input's deterministic side is rebuilt from), each pinned by its sha256.
CREATE TABLE replay_outline_drafts (
    run_id          TEXT    NOT NULL REFERENCES replay_runs (id),
    item_id         TEXT    NOT NULL,
    arm             TEXT    NOT NULL,
    text            TEXT    NOT NULL,             -- the draft's YAML (version-2 outline)
    text_sha256     TEXT    NOT NULL,
    messages_sha256 TEXT    NOT NULL,             -- the rendered prompt (the sample's manifest)
    call_id         TEXT    NOT NULL,
    lint_json       TEXT    NOT NULL,             -- the reference lint's verdicts, canonical JSON
    lint_sha256     TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    PRIMARY KEY (run_id, item_id, arm)
);
