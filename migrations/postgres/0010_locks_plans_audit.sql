-- Workspace locks, saved plans, the audit trail and the apply switch (owned by `locks`).
-- CHECKs mirror `locks::AuditAction` and `locks::ActorVia`.

-- One holder per (repo, dir, workspace, project); `project` is '' for a project without a
-- name (a NULL would make two unnamed rows distinct and break the rule).
CREATE TABLE locks (
    id         UUID        PRIMARY KEY,
    repo       TEXT        NOT NULL CHECK (repo <> ''),
    dir        TEXT        NOT NULL CHECK (dir <> ''),
    workspace  TEXT        NOT NULL CHECK (workspace <> ''),
    project    TEXT        NOT NULL DEFAULT '',
    pr         BIGINT      NOT NULL CHECK (pr >= 0),
    pr_url     TEXT        NOT NULL,
    head_sha   TEXT        NOT NULL,
    planned_by TEXT        NOT NULL,
    job_id     UUID,
    summary    TEXT        NOT NULL,
    locked_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    planned_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (repo, dir, workspace, project)
);

CREATE INDEX locks_by_pr ON locks (repo, pr);

CREATE TABLE plans (
    seq               BIGINT      GENERATED ALWAYS AS IDENTITY UNIQUE,
    id                UUID        PRIMARY KEY,
    repo              TEXT        NOT NULL CHECK (repo <> ''),
    pr                BIGINT      NOT NULL CHECK (pr >= 0),
    dir               TEXT        NOT NULL CHECK (dir <> ''),
    workspace         TEXT        NOT NULL CHECK (workspace <> ''),
    project           TEXT        NOT NULL DEFAULT '',
    job_id            UUID,
    head_sha          TEXT        NOT NULL,
    config_hash       TEXT        NOT NULL,
    state_fingerprint TEXT        NOT NULL,
    document          JSONB       NOT NULL,
    rendered          TEXT        NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    superseded_at     TIMESTAMPTZ
);

-- At most one current plan per project of a PR.
CREATE UNIQUE INDEX plans_current ON plans (repo, pr, dir, workspace, project)
    WHERE superseded_at IS NULL;
CREATE INDEX plans_by_pr ON plans (repo, pr, seq);

CREATE TABLE audit_events (
    seq       BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    actor     TEXT        NOT NULL,
    actor_via TEXT        NOT NULL CHECK (actor_via IN ('comment', 'dashboard', 'api', 'forge', 'system')),
    action    TEXT        NOT NULL CHECK (action IN
                  ('unlock', 'pr_closed', 'apply', 'apply_switch_on', 'apply_switch_off')),
    repo      TEXT,
    pr        BIGINT      CHECK (pr IS NULL OR pr >= 0),
    target    TEXT        NOT NULL,
    detail    TEXT        NOT NULL
);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit events are append-only';
END;
$$;

CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

-- The global apply switch: exactly one row.
CREATE TABLE apply_switch (
    id          INTEGER     PRIMARY KEY CHECK (id = 1),
    enabled     BOOLEAN     NOT NULL,
    changed_by  TEXT,
    changed_via TEXT        CHECK (changed_via IS NULL OR changed_via IN
                    ('comment', 'dashboard', 'api', 'forge', 'system')),
    changed_at  TIMESTAMPTZ,
    reason      TEXT
);

INSERT INTO apply_switch (id, enabled) VALUES (1, TRUE);
