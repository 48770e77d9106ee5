-- The apply journal: one typed row per step of an apply (an attempt at a head commit, each
-- guest it will change, and each guest step started, done or failed), read back by the
-- interrupted-apply report instead of the human log lines. Deleted with its job.
CREATE TABLE apply_journal (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id  TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    project INTEGER NOT NULL CHECK (project >= 0),
    label   TEXT    NOT NULL,
    address TEXT    NOT NULL,
    event   TEXT    NOT NULL CHECK (event IN ('attempt', 'planned', 'started', 'done', 'failed')),
    text    TEXT    NOT NULL,
    at      INTEGER NOT NULL
);
CREATE INDEX apply_journal_by_job ON apply_journal (job_id, seq);
