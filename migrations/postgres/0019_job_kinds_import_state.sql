-- The job kinds of `atlantis import` and `atlantis state rm` (`jobs::JobKind::ALL`): the
-- check of 0017 is made again with them.

ALTER TABLE jobs DROP CONSTRAINT jobs_kind_known;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_known CHECK (kind IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock', 'import', 'state_rm')) NOT VALID;

-- The audit trail records `atlantis import` and `atlantis state rm` (`locks::AuditAction`).

ALTER TABLE audit_events DROP CONSTRAINT audit_events_action_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_action_check CHECK (action IN
    ('unlock', 'pr_closed', 'apply', 'apply_switch_on', 'apply_switch_off', 'import', 'state_rm'));
