-- A plan's policy check (`policies::PolicyCheck` as JSON: each policy set's result and the
-- approvals it got), written after the plan is saved and by `approve_policies`; NULL when no
-- policy set was configured. A new plan is a new row, so it starts with no approvals.
-- `approve_policies` is a job kind: the triggers of 0020 are made again with it.

ALTER TABLE plans ADD COLUMN policy_check TEXT;

DROP TRIGGER jobs_kind_known_insert;
DROP TRIGGER jobs_kind_known_update;

CREATE TRIGGER jobs_kind_known_insert BEFORE INSERT ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm', 'cancel', 'approve_policies')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;

CREATE TRIGGER jobs_kind_known_update BEFORE UPDATE OF kind ON jobs
WHEN NEW.kind NOT IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm', 'cancel', 'approve_policies')
BEGIN
    SELECT RAISE(ABORT, 'jobs.kind is not a job kind atoll runs');
END;
