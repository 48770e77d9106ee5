-- `atlantis cancel` runs as a job of its own kind: the triggers holding the job kinds atoll
-- runs (`jobs::JobKind::ALL`) list it.

DROP TRIGGER jobs_kind_known_insert;
DROP TRIGGER jobs_kind_known_update;

CREATE TRIGGER jobs_kind_known_insert BEFORE INSERT ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'cancel', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;

CREATE TRIGGER jobs_kind_known_update BEFORE UPDATE OF kind ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'cancel', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;
