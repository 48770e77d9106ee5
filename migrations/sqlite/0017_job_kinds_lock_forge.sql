-- The job kinds atoll runs (`jobs::JobKind::ALL`): a job of any other kind is refused when it
-- is written, not found unrunnable later. SQLite cannot add a CHECK to an existing table, so
-- two triggers hold the same rule; rows written before this migration are left as they are.
-- A lock records the forge of the PR that holds it, so a dashboard unlock can be told on the
-- right forge without looking for the job that took the lock.

CREATE TRIGGER jobs_kind_known_insert BEFORE INSERT ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;

CREATE TRIGGER jobs_kind_known_update BEFORE UPDATE OF kind ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;

ALTER TABLE locks ADD COLUMN forge TEXT CHECK (forge IN ('github', 'gitea'));
