-- The job kinds atoll runs (`jobs::JobKind::ALL`): a job of any other kind is refused when it
-- is written. NOT VALID: rows written before this migration are not checked (the SQLite
-- triggers do the same).
-- A lock records the forge of the PR that holds it, so a dashboard unlock can be told on the
-- right forge without looking for the job that took the lock.

ALTER TABLE jobs ADD CONSTRAINT jobs_kind_known CHECK (kind IN ('autoplan', 'plan', 'apply', 'unlock', 'help', 'version', 'reply', 'pr_closed', 'apply_interrupted', 'apply_coalesced', 'job_gave_up', 'announce_unlock')) NOT VALID;

ALTER TABLE locks ADD COLUMN forge TEXT CHECK (forge IN ('github', 'gitea'));
