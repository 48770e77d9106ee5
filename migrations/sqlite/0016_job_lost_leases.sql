-- A job's worker can die under it (killed, out of memory); the reaper then finds its lease
-- expired while `running`. `lost_leases` counts those deaths (a graceful give-back at shutdown
-- is not one), so a job that keeps killing its worker is failed after `queue.max_attempts`
-- instead of being claimed again forever. `applying_at` is when the job first moved to
-- `applying` (it made its first change), so later identical applies can tell it already ran.
-- `jobs_by_pr` serves the runner's look at a pull request's earlier jobs.

ALTER TABLE jobs ADD COLUMN lost_leases INTEGER NOT NULL DEFAULT 0 CHECK (lost_leases >= 0);
ALTER TABLE jobs ADD COLUMN applying_at INTEGER;
CREATE INDEX jobs_by_pr ON jobs (repo, pr, seq) WHERE pr IS NOT NULL;
