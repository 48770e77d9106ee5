-- Jobs, their durable log lines, and the webhook deliveries that queued them.
-- The state CHECK mirrors `store::JobState`. Times come from the database clock, so every
-- replica agrees on when a lease expires.

CREATE TABLE jobs (
    seq         BIGINT      GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          UUID        PRIMARY KEY,
    kind        TEXT        NOT NULL,
    repo        TEXT        NOT NULL,
    pr          BIGINT      CHECK (pr IS NULL OR pr >= 0),
    state       TEXT        NOT NULL CHECK (state IN
                    ('queued', 'running', 'applying', 'succeeded', 'failed', 'interrupted', 'cancelled')),
    payload     JSONB       NOT NULL,
    dedup_key   TEXT,
    attempts    INTEGER     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    worker      TEXT,
    lease_until TIMESTAMPTZ,
    error       TEXT,
    log_seq     BIGINT      NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ,
    -- a leased job has a holder and a deadline; nothing else has a lease
    CHECK (CASE WHEN state IN ('running', 'applying')
                THEN worker IS NOT NULL AND lease_until IS NOT NULL
                ELSE lease_until IS NULL END)
);

CREATE UNIQUE INDEX jobs_dedup_key ON jobs (dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX jobs_queued ON jobs (kind, seq) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (repo, lease_until) WHERE state IN ('running', 'applying');

CREATE TABLE deliveries (
    forge       TEXT        NOT NULL CHECK (forge IN ('github', 'gitea')),
    delivery_id TEXT        NOT NULL,
    event       TEXT        NOT NULL,
    repo        TEXT        NOT NULL,
    job_id      UUID        REFERENCES jobs (id),
    received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (forge, delivery_id)
);

CREATE TABLE job_logs (
    job_id UUID        NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq    BIGINT      NOT NULL CHECK (seq >= 1),
    line   TEXT        NOT NULL,
    at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, seq)
);
