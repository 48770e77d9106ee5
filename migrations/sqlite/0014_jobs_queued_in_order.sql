-- Claims take the oldest queued job of any of several kinds (`kind = ANY(...)` / `kind IN
-- (...)`). The (kind, seq) index cannot return several kinds in seq order, so each claim
-- sorted every queued job: claims slowed as the queue grew (PostgreSQL: 150 jobs/s with 2,600
-- queued, 47/s with 10,000). Scanning queued jobs in seq order and filtering by kind stops at
-- the first match.
CREATE INDEX jobs_queued_in_order ON jobs (seq) WHERE state = 'queued';
