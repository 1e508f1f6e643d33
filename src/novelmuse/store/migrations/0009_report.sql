-- Texts that stored offsets index into (issue 16): the chapter texts a review round read and the candidates
-- a judge panel scored, content-addressed by the sha256 of the text's UTF-8 (the `text_sha256` of
-- review_issues and editor_reports, the candidate sha256 of judge panels). With them `muse report` shows
-- every quote at its exact offsets in the very text it was found in, long after the chapter file changed.
CREATE TABLE texts (
    sha256      TEXT PRIMARY KEY,
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
