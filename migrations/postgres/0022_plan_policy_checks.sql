-- A plan's policy check (`policies::PolicyCheck`: each policy set's result and the approvals it
-- got), written after the plan is saved and by `approve_policies`; NULL when no policy set was
-- configured. A new plan is a new row, so it starts with no approvals.
-- `approve_policies` is a job kind: the check of 0020 is made again with it.

ALTER TABLE plans ADD COLUMN policy_check JSONB;

ALTER TABLE jobs DROP CONSTRAINT jobs_kind_known;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_known CHECK (kind IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm', 'cancel', 'approve_policies')) NOT VALID;
