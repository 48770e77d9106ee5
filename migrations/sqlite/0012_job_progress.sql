-- Apply progress per job: guests finished of the guests the plan changes. Both NULL until the
-- apply job reports its total; `done` never exceeds `total`.

ALTER TABLE jobs ADD COLUMN progress_total INTEGER CHECK (progress_total >= 0);
ALTER TABLE jobs ADD COLUMN progress_done INTEGER
    CHECK (progress_done IS NULL
           OR (progress_total IS NOT NULL AND progress_done BETWEEN 0 AND progress_total));
