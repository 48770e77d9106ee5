-- Each pull request's latest plan comments (owned by `runner`, stored through `LockStore`), so
-- a new plan hides the superseded ones even after a restart. Times are Unix microseconds (UTC).
CREATE TABLE plan_comments (
    repo       TEXT    NOT NULL CHECK (repo <> ''),
    pr         INTEGER NOT NULL CHECK (pr >= 0),
    comment_id INTEGER NOT NULL CHECK (comment_id >= 0),
    posted_at  INTEGER NOT NULL,
    PRIMARY KEY (repo, pr, comment_id)
);
