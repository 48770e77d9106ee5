-- Jobs, their durable log lines, and the webhook deliveries that queued them.
-- Times are Unix microseconds (UTC). The state CHECK mirrors `store::JobState`.

CREATE TABLE jobs (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL,
    repo        TEXT    NOT NULL,
    pr          INTEGER CHECK (pr IS NULL OR pr >= 0),
    state       TEXT    NOT NULL CHECK (state IN
                    ('queued', 'running', 'applying', 'succeeded', 'failed', 'interrupted', 'cancelled')),
    payload     TEXT    NOT NULL,
    dedup_key   TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    worker      TEXT,
    lease_until INTEGER,
    error       TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER,
    -- a leased job has a holder and a deadline; nothing else has a lease
    CHECK (CASE WHEN state IN ('running', 'applying')
                THEN worker IS NOT NULL AND lease_until IS NOT NULL
                ELSE lease_until IS NULL END)
);

CREATE UNIQUE INDEX jobs_dedup_key ON jobs (dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX jobs_queued ON jobs (kind, seq) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (repo, lease_until) WHERE state IN ('running', 'applying');

CREATE TABLE deliveries (
    forge       TEXT    NOT NULL CHECK (forge IN ('github', 'gitea')),
    delivery_id TEXT    NOT NULL,
    event       TEXT    NOT NULL,
    repo        TEXT    NOT NULL,
    job_id      TEXT    REFERENCES jobs (id),
    received_at INTEGER NOT NULL,
    PRIMARY KEY (forge, delivery_id)
);

CREATE TABLE job_logs (
    job_id TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL CHECK (seq >= 1),
    line   TEXT    NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
