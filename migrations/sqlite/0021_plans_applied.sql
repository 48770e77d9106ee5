-- When a saved plan was applied in full, so `depends_on` and `automerge` can tell which of a
-- PR's projects are applied. NULL: not applied (or applied only in part).
ALTER TABLE plans ADD COLUMN applied_at INTEGER;
