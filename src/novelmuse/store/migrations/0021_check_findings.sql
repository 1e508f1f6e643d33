-- `muse check`'s findings per chapter text, so an unchanged chapter is not scanned again (issue "Display commands
-- fast": `muse check --json` of a 5M-character book within 1.5x a bare Aho-Corasick pass). Derived, like the memory
-- caches: a row is valid for one chapter file (its sha256) under one rules key — the sha256 of the phrase rules in
-- order with the occurrences each allows, and of the rules engine's code (rules/_check.py, rules/_match.py, the
-- automaton library's version, the encoding, the byte order). Another chapter text, another rules.txt or another
-- engine finds no row and is scanned; rows of other rules keys are dropped when the current key's rows are written.
CREATE TABLE check_findings (
    rules_key       TEXT NOT NULL,
    chapter_sha256  TEXT NOT NULL,          -- sha256 of the chapter file's bytes (the body is a function of them)
    findings        BLOB NOT NULL,          -- int64, native order: k, k rule indexes, k counts, the hits' starts, their paragraphs
    PRIMARY KEY (rules_key, chapter_sha256)
);
