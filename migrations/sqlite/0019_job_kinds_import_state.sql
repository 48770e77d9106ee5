-- The job kinds of `atlantis import` and `atlantis state rm` (`jobs::JobKind::ALL`): the
-- triggers of 0017 are made again with them.

DROP TRIGGER jobs_kind_known_insert;
DROP TRIGGER jobs_kind_known_update;

CREATE TRIGGER jobs_kind_known_insert BEFORE INSERT ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;

CREATE TRIGGER jobs_kind_known_update BEFORE UPDATE OF kind ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;

-- The audit trail records `atlantis import` and `atlantis state rm` (`locks::AuditAction`).
-- SQLite cannot change a CHECK: the table is made again with the wider one, its rows copied
-- in order (their `seq` kept), and its append-only triggers made again.

DROP TRIGGER audit_events_no_update;
DROP TRIGGER audit_events_no_delete;

CREATE TABLE audit_events_next (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    actor     TEXT    NOT NULL,
    actor_via TEXT    NOT NULL CHECK (actor_via IN ('comment', 'dashboard', 'api', 'forge', 'system')),
    action    TEXT    NOT NULL CHECK (action IN
                  ('unlock', 'pr_closed', 'apply', 'apply_switch_on', 'apply_switch_off',
                   'import', 'state_rm')),
    repo      TEXT,
    pr        INTEGER CHECK (pr IS NULL OR pr >= 0),
    target    TEXT    NOT NULL,
    detail    TEXT    NOT NULL
);

INSERT INTO audit_events_next (seq, at, actor, actor_via, action, repo, pr, target, detail)
    SELECT seq, at, actor, actor_via, action, repo, pr, target, detail FROM audit_events ORDER BY seq;

DROP TABLE audit_events;
ALTER TABLE audit_events_next RENAME TO audit_events;

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only');
END;

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only');
END;
