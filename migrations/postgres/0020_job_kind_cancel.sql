-- `atlantis cancel` runs as a job of its own kind: the check on the job kinds atoll runs
-- (`jobs::JobKind::ALL`) lists it. NOT VALID, as before: rows written earlier are not checked.

ALTER TABLE jobs DROP CONSTRAINT jobs_kind_known;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_known CHECK (kind IN ('autoplan', 'plan', 'apply', 'unlock', 'cancel', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm')) NOT VALID;
