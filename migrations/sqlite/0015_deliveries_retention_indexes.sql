-- Retention (`Store::prune`) deletes delivery records by age and with the jobs they queued.
-- Without these indexes each deleted job made the foreign key check scan all deliveries (a
-- pass of 2,000 jobs against 40,000 deliveries held the SQLite writer for 4.9 s).
CREATE INDEX deliveries_by_job ON deliveries (job_id);
CREATE INDEX deliveries_by_received ON deliveries (received_at);
