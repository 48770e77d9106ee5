-- Workspace locks, saved plans, the audit trail and the apply switch (owned by `locks`).
-- Times are Unix microseconds (UTC). CHECKs mirror `locks::AuditAction` and `locks::ActorVia`.

-- One holder per (repo, dir, workspace, project); `project` is '' for a project without a
-- name (a NULL would make two unnamed rows distinct and break the rule).
CREATE TABLE locks (
    id         TEXT    PRIMARY KEY,
    repo       TEXT    NOT NULL CHECK (repo <> ''),
    dir        TEXT    NOT NULL CHECK (dir <> ''),
    workspace  TEXT    NOT NULL CHECK (workspace <> ''),
    project    TEXT    NOT NULL DEFAULT '',
    pr         INTEGER NOT NULL CHECK (pr >= 0),
    pr_url     TEXT    NOT NULL,
    head_sha   TEXT    NOT NULL,
    planned_by TEXT    NOT NULL,
    job_id     TEXT,
    summary    TEXT    NOT NULL,
    locked_at  INTEGER NOT NULL,
    planned_at INTEGER NOT NULL,
    UNIQUE (repo, dir, workspace, project)
);

CREATE INDEX locks_by_pr ON locks (repo, pr);

CREATE TABLE plans (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT    NOT NULL UNIQUE,
    repo              TEXT    NOT NULL CHECK (repo <> ''),
    pr                INTEGER NOT NULL CHECK (pr >= 0),
    dir               TEXT    NOT NULL CHECK (dir <> ''),
    workspace         TEXT    NOT NULL CHECK (workspace <> ''),
    project           TEXT    NOT NULL DEFAULT '',
    job_id            TEXT,
    head_sha          TEXT    NOT NULL,
    config_hash       TEXT    NOT NULL,
    state_fingerprint TEXT    NOT NULL,
    document          TEXT    NOT NULL,
    rendered          TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    superseded_at     INTEGER
);

-- At most one current plan per project of a PR.
CREATE UNIQUE INDEX plans_current ON plans (repo, pr, dir, workspace, project)
    WHERE superseded_at IS NULL;
CREATE INDEX plans_by_pr ON plans (repo, pr, seq);

CREATE TABLE audit_events (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    actor     TEXT    NOT NULL,
    actor_via TEXT    NOT NULL CHECK (actor_via IN ('comment', 'dashboard', 'api', 'forge', 'system')),
    action    TEXT    NOT NULL CHECK (action IN
                  ('unlock', 'pr_closed', 'apply', 'apply_switch_on', 'apply_switch_off')),
    repo      TEXT,
    pr        INTEGER CHECK (pr IS NULL OR pr >= 0),
    target    TEXT    NOT NULL,
    detail    TEXT    NOT NULL
);

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only');
END;

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only');
END;

-- The global apply switch: exactly one row.
CREATE TABLE apply_switch (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    changed_by  TEXT,
    changed_via TEXT    CHECK (changed_via IS NULL OR changed_via IN
                    ('comment', 'dashboard', 'api', 'forge', 'system')),
    changed_at  INTEGER,
    reason      TEXT
);

INSERT INTO apply_switch (id, enabled) VALUES (1, 1);
